"""Benchmark: many small sequential appends, icefloe vs PyIceberg 0.12, in the same run.

Each variant appends 200 batches of 1,000 rows (id long, ts timestamp, country string,
amount double, qty int) one after the other into a fresh table of a SQL catalog on SQLite,
unpartitioned and partitioned by ``day(ts)``. icefloe runs in this process; PyIceberg runs in
its engine environment (``tests/interop/engines.py``, built on first use) as a subprocess
(``bench/_pyiceberg_appends.py``). Both read the same batches from one Parquet file written
here from a fixed seed, and both time only ``table.append(batch)``. PyIceberg needs its Rust
extension pyiceberg-core for the ``day(ts)`` transform; the bench installs it once into
``~/.cache/icefloe/bench/pyiceberg-core`` (next to, never into, the harness's environment).

Usage, from the repository with the project venv::

    python bench/appends.py                       # 200 x 1,000 rows, both variants
    python bench/appends.py --appends 50 --variant day
    python bench/appends.py --profile             # also cProfile icefloe's appends

Reported per variant and engine: total time of the append loop, mean latency per append, the
mean and max latency of the last 10 commits (a growing table must not make commits slower),
the number of manifests in the final snapshot, and the ratios icefloe / PyIceberg (below 1:
icefloe is faster or smaller).
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import functools
import importlib.util
import io
import json
import os
import platform
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import icefloe

REPO = Path(__file__).resolve().parent.parent
PYICEBERG_SCRIPT = Path(__file__).resolve().parent / "_pyiceberg_appends.py"
VARIANTS = {"unpartitioned": None, "day": ["day(ts)"]}
SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("ts", pa.timestamp("us")),
        ("country", pa.string()),
        ("amount", pa.float64()),
        ("qty", pa.int32()),
    ]
)
COUNTRIES = np.array(["US", "DE", "FR", "GB", "BR", "IN", "JP", "CN", "ID", "VN", "TH", "SG", "MY", "PH"])
COUNTRY_WEIGHTS = np.array([20, 10, 8, 8, 7, 9, 6, 9, 6, 5, 4, 3, 3, 2], dtype=float)
DAY_US = 86_400_000_000
START_US = 1_704_067_200_000_000  # 2024-01-01T00:00:00


# ---- data ----------------------------------------------------------------------------------


def generate_batches(appends: int, rows: int, seed: int) -> list[pa.Table]:
    """Deterministic batches: a stream of events where batch i covers three consecutive days
    starting at day i // 8 (so each day-partitioned append touches about three partitions,
    some of which earlier appends touched too, as late data does)."""
    rng = np.random.default_rng(seed)
    weights = COUNTRY_WEIGHTS / COUNTRY_WEIGHTS.sum()
    batches = []
    for i in range(appends):
        first_day = START_US + (i // 8) * DAY_US
        ts = np.sort(first_day + rng.integers(0, 3 * DAY_US, rows))
        batches.append(
            pa.table(
                {
                    "id": pa.array(np.arange(i * rows, (i + 1) * rows, dtype=np.int64)),
                    "ts": pa.array(ts.astype("datetime64[us]"), pa.timestamp("us")),
                    "country": pa.array(rng.choice(COUNTRIES, rows, p=weights)),
                    "amount": pa.array(np.round(rng.gamma(2.0, 25.0, rows), 2)),
                    "qty": pa.array(rng.integers(1, 20, rows, dtype=np.int32)),
                },
                schema=SCHEMA,
            )
        )
    return batches


def write_batches(batches: list[pa.Table], path: Path) -> None:
    """One row group per batch, so the other process reads back exactly the same batches."""
    with pq.ParquetWriter(path, SCHEMA) as writer:
        for batch in batches:
            writer.write_table(batch, row_group_size=batch.num_rows)


# ---- runs ----------------------------------------------------------------------------------


@dataclass
class Run:
    engine: str
    variant: str
    latencies_ms: list[float]
    total_s: float
    manifests: int
    data_files: int
    records: int
    data_bytes: int

    @property
    def mean_ms(self) -> float:
        return statistics.fmean(self.latencies_ms)

    @property
    def last10_mean_ms(self) -> float:
        return statistics.fmean(self.latencies_ms[-10:])

    @property
    def last10_max_ms(self) -> float:
        return max(self.latencies_ms[-10:])

    @property
    def first10_mean_ms(self) -> float:
        return statistics.fmean(self.latencies_ms[:10])

    @property
    def flatness(self) -> float:
        """Mean latency of the last tenth of the appends over the first tenth's (the issue's
        "last 100 of 1,000 within 1.3x of the first 100"): 1.0 is perfectly flat."""
        tenth = max(1, len(self.latencies_ms) // 10)
        return statistics.fmean(self.latencies_ms[-tenth:]) / statistics.fmean(self.latencies_ms[:tenth])


def run_icefloe(
    batches: list[pa.Table], warehouse: Path, variant: str, *, profile: cProfile.Profile | None
) -> Run:
    catalog = icefloe.load_catalog(
        "bench", type="sql", uri=f"sqlite:///{warehouse / 'catalog.db'}", warehouse=str(warehouse)
    )
    catalog.create_namespace("bench")
    table = catalog.create_table(f"bench.events_{variant}", SCHEMA, partition_by=VARIANTS[variant])
    latencies = []
    started = time.perf_counter()
    for batch in batches:
        t0 = time.perf_counter()
        if profile is not None:
            profile.enable()
        table.append(batch)
        if profile is not None:
            profile.disable()
        latencies.append((time.perf_counter() - t0) * 1000)
    total = time.perf_counter() - started
    snapshot = table.current_snapshot()
    assert snapshot is not None
    return Run(
        "icefloe",
        variant,
        latencies,
        total,
        manifests=len(snapshot.all_manifests(table.io())),
        data_files=int(snapshot.summary["total-data-files"]),
        records=int(snapshot.summary["total-records"]),
        data_bytes=int(snapshot.summary["total-files-size"]),
    )


def pyiceberg_python(explicit: str | None) -> Path:
    """The PyIceberg 0.12 interpreter of the project's engine harness (built on first use)."""
    if explicit:
        return Path(explicit)
    engines = _load_engines_module()
    return Path(engines.ensure_environment("py", log=sys.stderr))


# PyIceberg computes partition transforms such as day(ts) with its Rust extension
# pyiceberg-core (the "pyiceberg-core" extra), which the harness's environment does not
# install; without it a partitioned append fails. The bench installs it next to that
# environment (never into it) and puts it on the subprocess's PYTHONPATH.
PYICEBERG_CORE = "pyiceberg-core>=0.10.1,<0.11.0"  # the range pyiceberg 0.12's extra pins


def pyiceberg_core_dir(python: Path) -> Path:
    """A directory holding pyiceberg-core for ``python``, installed on first use."""
    target = Path(_load_engines_module().engines_home()).parent / "bench" / "pyiceberg-core"
    stamp = target / ".ready"
    if stamp.is_file() and stamp.read_text() == PYICEBERG_CORE:
        return target
    print(f"installing {PYICEBERG_CORE} into {target} ...", file=sys.stderr, flush=True)
    shutil.rmtree(target, ignore_errors=True)
    cmd = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "--quiet", "--no-deps"]
    proc = subprocess.run([*cmd, "--target", str(target), PYICEBERG_CORE], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"could not install {PYICEBERG_CORE}:\n{proc.stderr[-2000:]}")
    stamp.write_text(PYICEBERG_CORE)
    return target


@functools.cache
def _load_engines_module() -> ModuleType:
    # tests/interop/engines.py is a standalone script (stdlib only), not an installed module.
    path = REPO / "tests" / "interop" / "engines.py"
    spec = importlib.util.spec_from_file_location("icefloe_bench_engines", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load the engine harness {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being created
    spec.loader.exec_module(module)
    return module


def run_pyiceberg(
    python: Path, extra_path: Path, data: Path, warehouse: Path, variant: str, appends: int
) -> Run:
    cmd = [str(python), str(PYICEBERG_SCRIPT), "--data", str(data), "--warehouse", str(warehouse)]
    cmd += ["--variant", variant, "--appends", str(appends)]
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"}}
    env["PYTHONPATH"] = str(extra_path)
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"the PyIceberg run failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return Run(
        "pyiceberg",
        variant,
        result["latencies_ms"],
        result["total_s"],
        result["manifests"],
        result["data_files"],
        result["records"],
        result["data_bytes"],
    )


def pyiceberg_version(python: Path, extra_path: Path) -> str:
    """``0.12.0 (pyiceberg-core 0.10.1)``, as the subprocess will see them."""
    code = "import importlib.metadata as m; print(m.version('pyiceberg'), m.version('pyiceberg-core'))"
    env = {**os.environ, "PYTHONPATH": str(extra_path)}
    proc = subprocess.run([str(python), "-c", code], capture_output=True, text=True, env=env, check=False)
    parts = proc.stdout.split()
    return f"{parts[0]} (pyiceberg-core {parts[1]})" if len(parts) == 2 else "?"


# ---- report --------------------------------------------------------------------------------

COLUMNS: list[tuple[str, Callable[[Run], float], str]] = [
    ("total s", lambda r: r.total_s, "{:.2f}"),
    ("mean ms", lambda r: r.mean_ms, "{:.1f}"),
    ("first10 mean ms", lambda r: r.first10_mean_ms, "{:.1f}"),
    ("last10 mean ms", lambda r: r.last10_mean_ms, "{:.1f}"),
    ("last10 max ms", lambda r: r.last10_max_ms, "{:.1f}"),
    ("last/first tenth", lambda r: r.flatness, "{:.2f}"),
    ("manifests", lambda r: r.manifests, "{:d}"),
    ("data files", lambda r: r.data_files, "{:d}"),
    ("rows", lambda r: r.records, "{:,d}"),
    ("data MiB", lambda r: r.data_bytes / 2**20, "{:.2f}"),
]


def render(results: list[tuple[Run, Run]]) -> str:
    header = ["variant", "engine", *(name for name, _, _ in COLUMNS)]
    rows: list[list[str]] = []
    for ice, pyi in results:
        for label, run in (("icefloe", ice), ("pyiceberg", pyi)):
            rows.append(
                [run.variant if label == "icefloe" else "", label]
                + [fmt.format(get(run)) for _, get, fmt in COLUMNS]
            )
        ratio = ["", "icefloe/pyiceberg"]
        for _, get, _ in COLUMNS:
            a, b = get(ice), get(pyi)
            ratio.append(f"{a / b:.2f}x" if b else "-")
        rows.append(ratio)
        rows.append([])
    widths = [max(len(r[i]) for r in [header, *rows] if r) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        first = [cells[0].ljust(widths[0]), cells[1].ljust(widths[1])]
        rest = [c.rjust(w) for c, w in zip(cells[2:], widths[2:])]
        return "  ".join(first + rest).rstrip()

    out = [line(header), "  ".join("-" * w for w in widths)]
    out += [line(r) if r else "" for r in rows]
    return "\n".join(out).rstrip()


def print_profile(profile: cProfile.Profile, limit: int) -> None:
    stream = io.StringIO()
    stats = pstats.Stats(profile, stream=stream)
    total = sum(entry[2] for entry in stats.stats.values())  # type: ignore[attr-defined]
    print(f"\nicefloe appends under cProfile: {total:.2f} s of own time in Python functions")
    by_file: dict[str, float] = {}
    for (filename, _, _), entry in stats.stats.items():  # type: ignore[attr-defined]
        by_file[_short(filename)] = by_file.get(_short(filename), 0.0) + entry[2]
    print("\nown time by file (top 15):")
    for name, seconds in sorted(by_file.items(), key=lambda kv: -kv[1])[:15]:
        print(f"  {seconds:7.3f} s  {seconds / total:6.1%}  {name}")
    stats.sort_stats("cumulative").print_stats(limit)
    print(stream.getvalue())


def _short(filename: str) -> str:
    for marker in ("/src/icefloe/", "/site-packages/", "/lib/python3"):
        if marker in filename:
            return filename.split(marker, 1)[1]
    return filename


# ---- main ----------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="icefloe vs PyIceberg: sequential small appends")
    parser.add_argument("--appends", type=int, default=200)
    parser.add_argument("--rows", type=int, default=1000, help="rows per append")
    parser.add_argument("--variant", choices=[*VARIANTS, "all"], default="all")
    parser.add_argument("--seed", type=int, default=20240101)
    parser.add_argument("--pyiceberg-python", help="interpreter with pyiceberg 0.12 (default: the harness's)")
    parser.add_argument(
        "--profile", action="store_true", help="cProfile icefloe's appends and print where time goes"
    )
    parser.add_argument("--json", type=Path, help="also write every run's latencies to this JSON file")
    parser.add_argument("--keep", action="store_true", help="keep the warehouses (their path is printed)")
    parser.add_argument(
        "--no-pyiceberg",
        action="store_true",
        help="icefloe alone (its flatness); PyIceberg's appends slow down with the table, so 1,000 take long",
    )
    args = parser.parse_args(argv)

    python = pyiceberg_python(args.pyiceberg_python)
    core = pyiceberg_core_dir(python)
    variants = list(VARIANTS) if args.variant == "all" else [args.variant]
    print(
        f"icefloe {icefloe.__version__} vs PyIceberg {pyiceberg_version(python, core)}: "
        f"{args.appends} sequential appends of {args.rows:,} rows, SQL catalog on SQLite\n"
        f"python {platform.python_version()}, pyarrow {pa.__version__}, {os.cpu_count()} cpus, seed {args.seed}",
        flush=True,
    )
    workdir = Path(tempfile.mkdtemp(prefix="icefloe-bench-"))
    batches = generate_batches(args.appends, args.rows, args.seed)
    data = workdir / "batches.parquet"
    write_batches(batches, data)
    # Both sides read the batches from the same file, so both append identical Arrow data.
    batches = [pq.ParquetFile(data).read_row_group(i) for i in range(args.appends)]

    profile = cProfile.Profile() if args.profile else None
    results = []
    all_runs: list[Run] = []
    for variant in variants:
        print(f"  {variant}: icefloe ...", end="", flush=True)
        ice = run_icefloe(batches, workdir / f"icefloe-{variant}", variant, profile=profile)
        all_runs.append(ice)
        print(
            f" {ice.total_s:.1f} s (last/first tenth of the appends {ice.flatness:.2f}x)", end="", flush=True
        )
        if args.no_pyiceberg:
            print(flush=True)
            continue
        print("; pyiceberg ...", end="", flush=True)
        pyi = run_pyiceberg(python, core, data, workdir / f"pyiceberg-{variant}", variant, args.appends)
        print(f" {pyi.total_s:.1f} s", flush=True)
        all_runs.append(pyi)
        expected = args.appends * args.rows
        for run in (ice, pyi):
            if run.records != expected:
                raise SystemExit(f"{run.engine} {variant}: {run.records} rows committed, expected {expected}")
        results.append((ice, pyi))

    if results:
        print()
        print(render(results))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        runs = [dataclasses.asdict(run) for run in all_runs]
        args.json.write_text(json.dumps({"appends": args.appends, "rows": args.rows, "runs": runs}, indent=1))
    if profile is not None:
        print_profile(profile, limit=30)
    if args.keep:
        print(f"\nwarehouses kept in {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
