"""Benchmark: the ``files`` and ``partitions`` metadata tables, icefloe vs Java Iceberg 1.9.2.

The table is the large table of ``bench/planning.py`` (``bench/_planning_tables.py``: 2,000
manifests x 100 data files = 200,000 files over a year, day-partitioned, thirteen columns with
full metrics), built once and cached under ``bench/out/planning/``.

Per metadata table, in the same run:

- **icefloe cold**: a fresh process each time (imports done before the clock starts), timed
  from loading the table (Hadoop catalog) to the complete ``pyarrow.Table`` of
  ``table.inspect.files()`` / ``.partitions()`` (every column, ``readable_metrics`` included);
  peak RSS of that process by then (the decoded manifests it caches included). The best of
  ``--repeat`` runs.
- **icefloe warm**: the same process asks again (the manifest cache is process-wide); the
  peak RSS once that second result is built too, while the first is still held.
- **java**: Java Iceberg 1.9.2 on Spark 3.5 (the interop harness's engine, ``local[2]``):
  ``spark.read.format("iceberg").load("<location>#files")`` written to Spark's ``noop`` sink,
  which computes every column of every row inside the JVM without shipping them anywhere
  (``#partitions`` likewise); the first run in the JVM (cold) and the best of the next ones.

Row counts must agree. Printed: times, the ratios icefloe / Java (below 1.00x icefloe is
faster), and icefloe's peak RSS after the cold run ("RSS MB") and after the warm one too
("+warm").

Usage, from the repository with the project venv::

    python bench/inspect_tables.py              # files and partitions, Java included
    python bench/inspect_tables.py --no-java --repeat 1
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _planning_tables import TableParams, ensure_table  # noqa: E402
from appends import _load_engines_module  # noqa: E402

import icefloe  # noqa: E402

LARGE = TableParams(manifests=2000, files=100, days=365)
TABLES = ("files", "partitions")


def child(args: argparse.Namespace) -> dict[str, Any]:
    """One cold icefloe run (in a fresh process)."""
    catalog = icefloe.load_catalog("bench", type="hadoop", warehouse=args.warehouse)
    started = time.perf_counter()
    table = catalog.load_table("db.t")
    result = table.inspect.table(args.child)
    cold = time.perf_counter() - started
    rss_cold = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.perf_counter()
    again = table.inspect.table(args.child)
    warm = time.perf_counter() - started
    assert again.num_rows == result.num_rows
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"cold": cold, "warm": warm, "rows": result.num_rows, "rss_mb": rss_cold, "rss_both_mb": rss}


def run_child(warehouse: Path, name: str) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", name, "--warehouse", str(warehouse)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


JAVA_RUN = """
System = jvm.java.lang.System
times = []
for i in range(repeats):
    started = System.nanoTime()
    df = spark.read.format("iceberg").load(location + "#" + name)
    df.write.format("noop").mode("overwrite").save()
    times.append((System.nanoTime() - started) / 1e9)
rows = spark.read.format("iceberg").load(location + "#" + name).count()
result = {"times": times, "rows": rows}
"""


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="files / partitions metadata tables: icefloe vs Java")
    parser.add_argument("--repeat", type=int, default=3, help="cold icefloe runs per table")
    parser.add_argument("--java-repeat", type=int, default=4, help="Java runs per table (first is cold)")
    parser.add_argument("--tables", default=",".join(TABLES))
    parser.add_argument("--no-java", action="store_true")
    parser.add_argument("--child", choices=TABLES, help=argparse.SUPPRESS)
    parser.add_argument("--warehouse", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args)))
        return 0

    table = ensure_table(LARGE)
    names = [n for n in args.tables.split(",") if n]
    print(
        f"icefloe {icefloe.__version__}; {LARGE.data_files:,} data files in {LARGE.manifests:,} manifests; "
        f"{os.cpu_count()} cpus",
        flush=True,
    )
    ours: dict[str, list[dict[str, Any]]] = {}
    for name in names:
        ours[name] = [run_child(table.warehouse, name) for _ in range(args.repeat)]
        print(f"  icefloe {name}: {[round(r['cold'], 2) for r in ours[name]]} s", flush=True)
    theirs: dict[str, dict[str, Any]] = {}
    if not args.no_java:
        engines = _load_engines_module()
        java = engines.start_engine("java")
        try:
            for name in names:
                theirs[name] = java.exec(
                    JAVA_RUN, location=str(table.location), name=name, repeats=args.java_repeat
                )
                print(f"  java {name}: {[round(t, 2) for t in theirs[name]['times']]} s", flush=True)
        finally:
            java.close()

    print()
    header = (
        f"{'table':<12}{'rows':>10}{'icefloe cold':>14}{'warm':>9}{'RSS MB':>9}{'+warm':>7}"
        f"{'java 1st':>10}{'java best':>11}{'cold/1st':>10}{'cold/best':>11}"
    )
    print(header)
    for name in names:
        runs = ours[name]
        cold = min(r["cold"] for r in runs)
        warm = min(r["warm"] for r in runs)
        rss = max(r["rss_mb"] for r in runs)
        rss_both = max(r["rss_both_mb"] for r in runs)
        rows = runs[0]["rows"]
        java = theirs.get(name)
        first = best = None
        if java is not None:
            first, best = java["times"][0], min(java["times"][1:] or java["times"])
            if java["rows"] != rows:
                raise SystemExit(f"{name}: Java has {java['rows']} rows, icefloe {rows}")
        print(
            f"{name:<12}{rows:>10,}{cold:>13.2f}s{warm:>8.2f}s{rss:>9.0f}{rss_both:>7.0f}"
            + (f"{first:>9.2f}s{best:>10.2f}s{cold / first:>9.2f}x{cold / best:>10.2f}x" if first else "")
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
