"""The Connect column of ``spark_io.py``: icefloe.spark on Spark Connect against the same on
classic PySpark (run it as ``python bench/spark_io.py --connect``; this module does the work).

The same work on two session kinds of one machine, in one run: a classic ``local[2]`` session
(``isp.local_session``) and a Spark Connect session on a local Connect server over ``local[2]``
(``isp.local_session(connect=True)``). A process cannot hold both, so each session runs in a
fresh subprocess, the kinds taking turns (``classic, connect, connect, classic, ...``).

Per session, each case once (the first Spark job of the session, a tiny one, is not timed):

- **fixed write / fixed read**: ``isp.write`` of 1,000 rows and ``isp.read`` of them (best of
  three): the per-query fixed cost, which the big cases pay too;
- **write**: ``isp.write(df, fresh_table)`` of ``spark_io.py``'s twelve generated columns,
  about ``--connect-gb`` GiB of zstd Parquet, through Spark's own Parquet writer as
  ``isp.write`` chooses it;
- **write (icefloe writer)**: the same rows with ``icefloe.spark.writer=icefloe`` (icefloe's
  writer in ``mapInArrow`` tasks: the rows cross into Python on the executors);
- **read**: ``isp.read(spark, table)`` with ``count(*), sum(hash(*))`` over the written table;
- **read (Spark Parquet)**: the same query through ``spark.read.parquet`` of the same files:
  what Connect costs Spark itself, with no icefloe in the way.

With ``--trace`` a session also logs every Spark Connect request it makes (analyses, config
calls, executions) with its duration and the icefloe line that made it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
sys.path.insert(0, str(HERE))

import icefloe  # noqa: E402
from icefloe import spark as isp  # noqa: E402
from icefloe.io import local_path  # noqa: E402
from icefloe.spec.properties import SPARK_WRITER  # noqa: E402

BYTES_PER_ROW = 52  # zstd Parquet of spark_io's twelve columns from spark.range in 8 tasks, measured
FIXED_ROWS = 1000
CASES = (
    "fixed write",
    "fixed read",
    "write",
    "write (icefloe writer)",
    "read",
    "read (Spark Parquet)",
)
QUERY = ("count(*)", "sum(hash(*))")


def trace_connect_requests(log: list[tuple[str, float, str]]) -> None:
    """Log each Spark Connect request (kind, seconds, the icefloe or bench line behind it)."""
    from pyspark.sql.connect.client import core

    def caller() -> str:
        for frame in reversed(traceback.extract_stack()[:-2]):
            if f"{os.sep}icefloe{os.sep}" in frame.filename and "site-packages" not in frame.filename:
                return f"{Path(frame.filename).name}:{frame.lineno} {frame.name}"
            if frame.filename == __file__:
                return f"bench:{frame.lineno} {frame.name}"
        return "?"

    def wrapped(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(self, *args, **kwargs)
            finally:
                log.append((name, time.perf_counter() - started, caller()))

        return call

    client = core.SparkConnectClient
    for name in ("_analyze", "_execute", "_execute_and_fetch", "config"):
        setattr(client, name, wrapped(name, getattr(client, name)))


def session_run(kind: str, rows: int, warehouse: Path, trace: bool) -> dict[str, Any]:
    """One session of ``kind`` (in this process): seconds per case, and the traced requests."""
    from spark_io import arrow_schema, generated, table_properties

    log: list[tuple[str, float, str]] = []
    if trace and kind == "connect":
        trace_connect_requests(log)
    spark = isp.local_session(
        "local[2]",
        app_name="icefloe-bench-connect",
        config={"spark.driver.memory": "2g", "spark.ui.showConsoleProgress": "false"},
        connect=kind == "connect",
    )
    catalog = icefloe.load_catalog(
        "bench", type="sql", uri=f"sqlite:///{warehouse}/catalog.db", warehouse=str(warehouse)
    )
    traced: dict[str, list[Any]] = {}
    times: dict[str, float] = {}
    counter = [0]

    def new_table(writer: str | None = None) -> Any:
        counter[0] += 1
        properties = table_properties("zstd", 3)
        if writer is not None:
            properties[SPARK_WRITER] = writer
        return catalog.create_table(f"db.t{counter[0]}", arrow_schema(nested=False), properties=properties)

    def timed(case: str, run: Callable[[], Any], repeat: int = 1) -> None:
        best = float("inf")
        for _ in range(repeat):
            log.clear()
            started = time.perf_counter()
            run()
            best = min(best, time.perf_counter() - started)
            traced[case] = [[name, round(seconds, 4), where] for name, seconds, where in log]
        times[case] = best

    try:
        catalog.create_namespace_if_not_exists("db")
        spark.range(1000).selectExpr("sum(id)").collect()  # start the executors, not timed
        small = new_table()
        timed("fixed write", lambda: isp.write(generated(spark, FIXED_ROWS, 1), small), repeat=3)
        small.refresh()
        timed("fixed read", lambda: isp.read(spark, small).selectExpr(*QUERY).collect(), repeat=3)
        big = new_table()
        timed("write", lambda: isp.write(generated(spark, rows, 8), big))
        timed("write (icefloe writer)", lambda: isp.write(generated(spark, rows, 8), new_table("icefloe")))
        big.refresh()
        timed("read", lambda: isp.read(spark, big).selectExpr(*QUERY).collect())
        files = [local_path(t.file.file_path) for t in big.new_scan().plan_files()]
        timed("read (Spark Parquet)", lambda: spark.read.parquet(*files).selectExpr(*QUERY).collect())
        return {"times": times, "trace": traced}
    finally:
        catalog.close()
        spark.stop()


def run_child(kind: str, rows: int, warehouse: Path, trace: bool) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", kind, "--rows", str(rows), "--warehouse", str(warehouse)]
    if trace:
        cmd.append("--trace")
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"the {kind} session failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def wait_for_port(port: int = 15002, timeout_s: float = 900.0) -> None:
    """Only one local Connect server fits on this machine (port 15002): wait for it to be free."""
    import socket

    deadline = time.monotonic() + timeout_s
    while True:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) != 0:
                return
        if time.monotonic() > deadline:
            raise SystemExit(f"port {port} stayed busy (another Spark Connect server runs)")
        print(f"  port {port} busy (another Connect server); waiting ...", flush=True)
        time.sleep(15)


def compare(size_gb: float, repeat: int, *, trace: bool = False) -> str:
    """Run both kinds ``repeat`` times each (in subprocesses); the report."""
    rows = int(size_gb * 2**30 / BYTES_PER_ROW)
    runs: dict[str, dict[str, list[float]]] = {k: {c: [] for c in CASES} for k in ("classic", "connect")}
    loads: dict[str, list[float]] = {"classic": [], "connect": []}
    traces: list[dict[str, Any]] = []
    order = ["classic", "connect"]
    with tempfile.TemporaryDirectory(prefix="icefloe-bench-connect-") as folder:
        for repetition in range(repeat):
            for kind in order if repetition % 2 == 0 else order[::-1]:
                if kind == "connect":
                    wait_for_port()
                warehouse = Path(folder) / f"{kind}-{repetition}"
                warehouse.mkdir()
                result = run_child(kind, rows, warehouse, trace)
                load = os.getloadavg()[0]
                loads[kind].append(load)
                print(
                    f"  {kind:8} " + "  ".join(f"{c} {t:.2f} s" for c, t in result["times"].items()),
                    f" load {load:.1f}",
                    flush=True,
                )
                for case, seconds in result["times"].items():
                    runs[kind][case].append(seconds)
                if kind == "connect" and any(result["trace"].values()):  # only with --trace
                    traces.append(result["trace"])
    out = [f"\nConnect vs classic: {rows:,} rows (~{size_gb} GiB) per big case, {repeat} sessions per kind"]
    out.append(
        f"{'case':24} {'classic best/median':>20} {'connect best/median':>20} {'connect/classic':>16} {'+s best':>8}"
    )
    for case in CASES:
        a, b = runs["classic"][case], runs["connect"][case]
        out.append(
            f"{case:24} {min(a):10.2f} / {statistics.median(a):6.2f} s {min(b):10.2f} / {statistics.median(b):6.2f} s"
            f" {min(b) / min(a):10.2f}x best {min(b) - min(a):+7.2f}"
        )
    out.append(
        f"load (1-min average after each session): classic {statistics.mean(loads['classic']):.1f}, "
        f"connect {statistics.mean(loads['connect']):.1f} ({os.cpu_count()} cpus). '+s': the seconds Connect "
        "adds (best runs); the fixed rows are that part of every query, the rest scales with the data."
    )
    if traces:
        out.append("\nSpark Connect requests of the last Connect session (kind, seconds, caller):")
        for case, requests in traces[-1].items():
            total = sum(r[1] for r in requests)
            out.append(f"  {case}: {len(requests)} requests, {total:.2f} s")
            for name, seconds, where in requests:
                out.append(f"    {seconds:8.3f} {name:20} {where}")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="icefloe.spark on Spark Connect vs classic PySpark")
    parser.add_argument("--size-gb", type=float, default=1.0, help="GiB of Parquet each big write makes")
    parser.add_argument("--repeat", type=int, default=2, help="sessions per kind")
    parser.add_argument("--trace", action="store_true", help="log every Spark Connect request")
    parser.add_argument("--child", choices=["classic", "connect"], help=argparse.SUPPRESS)
    parser.add_argument("--rows", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--warehouse", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(session_run(args.child, args.rows, args.warehouse, args.trace)))
        return 0
    print(compare(args.size_gb, args.repeat, trace=args.trace))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
