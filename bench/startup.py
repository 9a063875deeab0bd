"""Benchmark: how long the ``icefloe`` command and ``import icefloe`` take to start, against the
floor of the same run.

Measured, each in a fresh process, in alternating rounds (best and median of ``--rounds``):

- the floor: ``python -c pass`` (the interpreter); ``python -c 'import pyarrow'`` (the
  library every read and write needs); a Typer application of one command run with an
  argument (what any Typer command line costs: Typer, Click, and Pydantic, which Typer 0.2x
  uses to convert arguments); ``import sqlalchemy`` (what the embedded, SQL, catalog needs);
- ``python -c 'import icefloe'``;
- ``icefloe --help``;
- ``icefloe list``, ``icefloe list db`` and ``icefloe describe db.t`` on a fresh embedded
  catalog (SQLite in ``./warehouse`` of a temporary folder) holding one table with one
  snapshot.

Printed per command: best and median wall time, the best CPU time (user + system: what the
process itself spent, which the machine's load moves less than the wall time), the best wall
time minus the interpreter's best (what the command itself costs), and that as a multiple of
``import pyarrow``'s own cost. The machine's load moves every figure; compare commands within
one run.

``--baseline SRC`` runs the icefloe commands a second time with ``SRC`` (another checkout's
``src`` folder, e.g. ``git archive main src | tar -x -C /tmp/main``) first on ``PYTHONPATH``,
in the same rounds, labelled ``(baseline)``. ``--importtime N`` also prints the N slowest
imports (cumulative, ``python -X importtime``) of ``import icefloe`` and of each command.

Usage: ``python bench/startup.py [--rounds 15] [--baseline SRC] [--importtime 15]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SETUP = """
import pyarrow as pa
import icefloe
catalog = icefloe.load_catalog()
catalog.create_namespace("db")
table = catalog.create_table("db.t", pa.schema([("id", pa.int64()), ("name", pa.string())]))
table.append(pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"]}))
"""

TYPER_APP = """
from typing import Annotated
import typer
app = typer.Typer()
@app.command()
def main(name: Annotated[str, typer.Argument(help="A name.")]) -> None:
    print(name)
app()
"""

Command = tuple[list[str], dict[str, str]]  # argv, environment


def _icefloe_command() -> list[str]:
    """The console script next to this interpreter, else ``python -m icefloe.cli``."""
    script = Path(sys.executable).with_name("icefloe")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "icefloe.cli"]


def _environment() -> dict[str, str]:
    """This environment without icefloe catalog settings, so the embedded default is used."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ICEFLOE_CATALOG")}
    env["ICEFLOE_CONFIG"] = os.devnull  # no ~/.icefloe.yaml
    env.pop("ICEFLOE_CLI_CATALOG", None)
    return env


def _commands(baseline: str | None) -> dict[str, Command]:
    cli = _icefloe_command()
    env = _environment()
    icefloe = {
        "import icefloe": [sys.executable, "-c", "import icefloe"],
        "icefloe --help": [*cli, "--help"],
        "icefloe list": [*cli, "list"],
        "icefloe list db": [*cli, "list", "db"],
        "icefloe describe db.t": [*cli, "describe", "db.t"],
    }
    commands: dict[str, Command] = {
        "python -c pass": ([sys.executable, "-c", "pass"], env),
        "import pyarrow": ([sys.executable, "-c", "import pyarrow"], env),
        "a Typer app": ([sys.executable, "-c", TYPER_APP, "x"], env),
        "import sqlalchemy": ([sys.executable, "-c", "import sqlalchemy"], env),
        **{name: (argv, env) for name, argv in icefloe.items()},
    }
    if baseline is not None:
        path = os.pathsep.join(filter(None, [str(Path(baseline).resolve()), env.get("PYTHONPATH")]))
        for name, argv in icefloe.items():
            commands[f"{name} (baseline)"] = (argv, {**env, "PYTHONPATH": path})
    return commands


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(command: Command, cwd: Path) -> tuple[float, float]:
    """The wall and CPU seconds of one run (the runs are sequential: the children's CPU time
    grows by this one's)."""
    argv, env = command
    cpu = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr}")
    return elapsed, _children_cpu() - cpu


def _slowest_imports(command: Command, cwd: Path, count: int) -> list[str]:
    """The ``count`` slowest imports of a run, by cumulative time (``PYTHONPROFILEIMPORTTIME``
    is ``-X importtime`` for the console script too)."""
    argv, env = command
    done = subprocess.run(
        argv, cwd=cwd, env={**env, "PYTHONPROFILEIMPORTTIME": "1"}, capture_output=True, text=True
    )
    rows = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line[len("import time:") :].split("|", 2)
        if cumulative.strip().isdigit():
            rows.append((int(cumulative), name.rstrip()))
    rows.sort(reverse=True)
    return [f"{us / 1000:8.1f} ms {name}" for us, name in rows[:count]]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=15, help="runs of every command (alternating)")
    parser.add_argument("--baseline", metavar="SRC", help="another checkout's src folder to compare with")
    parser.add_argument(
        "--importtime", type=int, default=0, metavar="N", help="also show the N slowest imports"
    )
    args = parser.parse_args()

    commands = _commands(args.baseline)
    with tempfile.TemporaryDirectory(prefix="icefloe-startup-") as folder:
        cwd = Path(folder)
        subprocess.run([sys.executable, "-c", SETUP], cwd=cwd, env=_environment(), check=True)
        times: dict[str, list[float]] = {name: [] for name in commands}
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        for command in commands.values():  # warm the file cache and the bytecode
            _run(command, cwd)
        for _ in range(args.rounds):
            for name, command in commands.items():
                wall, used = _run(command, cwd)
                times[name].append(wall)
                cpu[name].append(used)

        floor = min(times["python -c pass"])
        arrow = min(times["import pyarrow"]) - floor
        print(f"{args.rounds} rounds, alternating; load average {os.getloadavg()[0]:.2f} at the end")
        print(f"{'command':<36}{'best':>9}{'median':>9}{'cpu':>9}{'- python':>10}{'x pyarrow':>11}")
        for name, values in times.items():
            best = min(values)
            own = best - floor
            ratio = f"{own / arrow:10.2f}x" if arrow > 0 and name != "python -c pass" else ""
            print(
                f"{name:<36}{best:8.3f}s{statistics.median(values):8.3f}s{min(cpu[name]):8.3f}s"
                f"{own:9.3f}s {ratio}"
            )

        if args.importtime:
            for name in commands:
                if name.startswith(("import icefloe", "icefloe")):
                    print(f"\nslowest imports of {name} (cumulative):")
                    print("\n".join(_slowest_imports(commands[name], cwd, args.importtime)))


if __name__ == "__main__":
    main()
