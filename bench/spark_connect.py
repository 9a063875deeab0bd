"""Benchmark: icefloe.spark on Spark Connect against the same on classic PySpark.

The same work on two session kinds of one machine, in one run: a classic ``local[2]`` session
(``isp.local_session``) and a Spark Connect session on a local Connect server over
``local[2]`` (``isp.local_session(connect=True)``). PySpark cannot hold both in one process,
so the kinds take turns (``classic, connect, connect, classic, ...``), each in a fresh session.

- **write**: ``isp.write(df, fresh_table)`` of ``spark.range(N)`` plus the twelve columns of
  ``spark_io.py`` (about ``--size-gb`` GiB of zstd Parquet), through Spark's own Parquet writer
  as ``isp.write`` chooses it;
- **write (icefloe's writer)**: the same rows with ``icefloe.spark.writer=icefloe`` (icefloe's
  writer in ``mapInArrow`` tasks: the path that crosses into Python on the executors);
- **read**: ``isp.read(spark, table)`` with ``count(*), sum(hash(*))`` over the written table.

Each case runs ``--repeat`` times per kind; best and median are printed with the ratio
Connect / classic (target: within 1.1x). Usage: ``python bench/spark_connect.py [--size-gb 1]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from spark_io import arrow_schema, generated, table_properties

import icefloe
from icefloe import spark as isp
from icefloe.spec.properties import SPARK_WRITER

BYTES_PER_ROW = 52  # zstd Parquet of spark_io's twelve columns, measured
CASES = ("write", "write (icefloe's writer)", "read")


def run_kind(kind: str, rows: int, warehouse: Path, counter: list[int]) -> dict[str, float]:
    """One session of ``kind``: each case once; seconds per case."""
    spark = isp.local_session(
        "local[2]",
        app_name="icefloe-bench-connect",
        config={"spark.ui.showConsoleProgress": "false"},
        connect=kind == "connect",
    )
    catalog = icefloe.load_catalog(
        "bench", type="sql", uri=f"sqlite:///{warehouse}/catalog.db", warehouse=str(warehouse)
    )
    try:
        catalog.create_namespace_if_not_exists("db")
        spark.range(1000).selectExpr("sum(id)").collect()  # warm the session
        times: dict[str, float] = {}
        written = None
        for case in CASES[:2]:
            counter[0] += 1
            properties = table_properties("zstd", 3)
            if case != "write":
                properties[SPARK_WRITER] = "icefloe"
            table = catalog.create_table(
                f"db.t{counter[0]}", arrow_schema(nested=False), properties=properties
            )
            started = time.perf_counter()
            isp.write(generated(spark, rows, 8), table)
            times[case] = time.perf_counter() - started
            written = written or table
        assert written is not None
        written.refresh()
        started = time.perf_counter()
        isp.read(spark, written).selectExpr("count(*)", "sum(hash(*))").collect()
        times["read"] = time.perf_counter() - started
        return times
    finally:
        catalog.close()
        spark.stop()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-gb", type=float, default=1.0, help="GiB of Parquet each write makes")
    parser.add_argument("--repeat", type=int, default=2, help="sessions per kind")
    args = parser.parse_args(argv)
    rows = int(args.size_gb * 2**30 / BYTES_PER_ROW)
    runs: dict[str, dict[str, list[float]]] = {k: {c: [] for c in CASES} for k in ("classic", "connect")}
    order = ["classic", "connect"]
    counter = [0]
    with tempfile.TemporaryDirectory(prefix="icefloe-bench-connect-") as folder:
        for repetition in range(args.repeat):
            for kind in order if repetition % 2 == 0 else order[::-1]:
                times = run_kind(kind, rows, Path(folder), counter)
                load = os.getloadavg()[0]
                print(
                    f"  {kind:8} "
                    + "  ".join(f"{c} {t:6.1f} s" for c, t in times.items())
                    + f"  load {load:.1f}"
                )
                for case, seconds in times.items():
                    runs[kind][case].append(seconds)
    print(f"\n{rows:,} rows (~{args.size_gb} GiB), {args.repeat} sessions per kind")
    print(f"{'case':26} {'classic best/median':>22} {'connect best/median':>22} {'connect/classic':>16}")
    for case in CASES:
        a, b = runs["classic"][case], runs["connect"][case]
        print(
            f"{case:26} {min(a):9.1f} / {statistics.median(a):6.1f} s {min(b):9.1f} / {statistics.median(b):6.1f} s"
            f" {min(b) / min(a):9.2f}x best {statistics.median(b) / statistics.median(a):.2f}x median"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
