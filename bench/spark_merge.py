"""Benchmark: ``MERGE INTO``, ``DELETE`` and ``UPDATE`` of 1% of the rows of a 2 GiB table,
icefloe vs Java Iceberg.

The same statement on the same data, in one run:

- **icefloe**: ``isp.sql(spark, "MERGE INTO db.t ...")`` on PySpark 4 (classic ``local[2]``,
  driver 2g), the table in an icefloe Hadoop catalog;
- **java**: Apache Iceberg 1.9.2's ``MERGE INTO`` on Spark 3.5.7 (the interop harness's
  engine, ``tests/interop/engines.py``, ``local[2]``), the same table through Java's
  ``HadoopCatalog``; timed inside its process.

The table: ``spark_io.py``'s twelve columns (``id`` 0..N-1, longs, doubles, strings, a date,
a timestamp, a decimal, a boolean), unpartitioned, zstd, about ``--size-gb`` GiB, written once
by ``isp.write`` into ``~/.cache/icefloe/bench/spark_merge`` and reused. The changes (a
Parquet file, cached too): 1% of N rows, half updates of existing ids spread over the whole
table (``id % 200 == 37``, so every data file is touched) and half inserts of new ids, all
with ``amount = -1``. Statement::

    MERGE INTO db.t t USING changes s ON t.id = s.id
    WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *

``--statements`` adds (or picks) the row-level changes of a retention rule and a fix, each 1% of
the rows spread over every file (``write.delete.mode`` / ``write.update.mode`` set per run)::

    DELETE FROM db.t WHERE id % 100 = 37
    UPDATE db.t SET amount = -1 WHERE id % 100 = 37

Each run works on a fresh copy of the cached table (data files hard-linked, metadata copied:
Iceberg never changes a file in place) with ``write.<statement>.mode`` set to ``merge-on-read``
or ``copy-on-write`` before the clock starts. After a MERGE the table must hold N + N/200 rows
of which N/100 have ``amount = -1``; after the DELETE N - N/100 rows, none changed; after the
UPDATE N rows, N/100 with ``amount = -1``. Printed: seconds per engine and mode, the ratio icefloe /
Java (below 1.00x icefloe is faster), the files the merge added, and the 1-minute load
average after each run (2 shared cores here: compare ratios from one run).

Usage, from the repository with the project venv::

    nice python bench/spark_merge.py                               # 2 GiB, both modes, MERGE
    nice python bench/spark_merge.py --statements merge,delete,update
    nice python bench/spark_merge.py --modes merge-on-read --repeat 1
    nice python bench/spark_merge.py --size-gb 0.2 --no-java       # trying it out
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

import pyspark  # noqa: E402
from appends import _load_engines_module  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402
from spark_io import (  # noqa: E402
    BYTES_PER_ROW,
    GENERATOR_VERSION,
    arrow_schema,
    generated,
    select_list,
    table_properties,
)

import icefloe  # noqa: E402
from icefloe import spark as isp  # noqa: E402

DEFAULT_CACHE = Path.home() / ".cache" / "icefloe" / "bench" / "spark_merge"
MODES = ("merge-on-read", "copy-on-write")
MERGE = (
    "MERGE INTO {table} t USING changes s ON t.id = s.id "
    "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
)
#: Each statement: its SQL (``{table}`` the table) and the table property of its write mode.
STATEMENTS = {
    "merge": (MERGE, "write.merge.mode"),
    "delete": ("DELETE FROM {table} WHERE id % 100 = 37", "write.delete.mode"),
    "update": ("UPDATE {table} SET amount = -1 WHERE id % 100 = 37", "write.update.mode"),
}
CHECK = "SELECT count(*) AS n, count_if(amount = -1) AS changed FROM {table}"

JAVA_RUN = """
import time
catalog = jvm_catalog
spark.read.parquet(changes).createOrReplaceTempView('changes')
spark.sql(f"ALTER TABLE {catalog}.db.t SET TBLPROPERTIES ('{mode_property}' = '{mode}')")
before = {r[0] for r in spark.sql(f'SELECT file_path FROM {catalog}.db.t.all_files').collect()}
started = time.perf_counter()
spark.sql(statement.format(table=f'{catalog}.db.t'))
seconds = time.perf_counter() - started
row = spark.sql(check.format(table=f'{catalog}.db.t')).collect()[0]
after = spark.sql(f'SELECT file_path, content FROM {catalog}.db.t.all_files').collect()
added = [r[1] for r in after if r[0] not in before]
result = {'seconds': seconds, 'rows': int(row[0]), 'changed': int(row[1]),
          'data_files': added.count(0), 'delete_files': len(added) - added.count(0)}
"""


def paths(args: argparse.Namespace, rows: int) -> tuple[Path, Path, Path]:
    """The cached warehouse, the cached changes, and the run warehouse (each run's copy; the
    table's metadata names this location, so the cached copy is built here and moved)."""
    key = f"{rows}-v{GENERATOR_VERSION}"
    return args.cache_dir / f"source-{key}", args.cache_dir / f"changes-{key}", args.cache_dir / "run"


def build(spark: SparkSession, args: argparse.Namespace, rows: int) -> None:
    cached, changes, run = paths(args, rows)
    if not (cached / "ready").is_file():
        shutil.rmtree(cached, ignore_errors=True)
        shutil.rmtree(run, ignore_errors=True)
        partitions = max(2, round(args.size_gb * 4))
        print(f"building the table: {rows:,} rows in {partitions} tasks ...", flush=True)
        catalog = icefloe.load_catalog("bench_merge", type="hadoop", warehouse=str(run))
        catalog.create_namespace("db")
        properties = {**table_properties("zstd", 3), "format-version": "2"}
        table = catalog.create_table("db.t", arrow_schema(nested=False), properties=properties)
        started = time.perf_counter()
        isp.write(generated(spark, rows, partitions), table)
        print(f"  written in {time.perf_counter() - started:.0f} s", flush=True)
        run.rename(cached)
        (cached / "ready").write_text(time.strftime("%Y-%m-%d %H:%M:%S"))
    if not (changes / "ready").is_file():
        shutil.rmtree(changes, ignore_errors=True)
        updates = spark.range(37, rows, 200, 2)
        inserts = spark.range(rows, rows + rows // 200, 1, 2)
        select = _change_columns(rows)
        updates.selectExpr(*select).unionByName(inserts.selectExpr(*select)).coalesce(2).write.parquet(
            str(changes / "data")
        )
        (changes / "ready").write_text("")


def _change_columns(rows: int) -> list[str]:
    """spark_io's column expressions (the dates and timestamps grow with ``id`` as in the
    table), with ``amount = -1`` to mark a changed row."""
    return [
        ("-1.0D AS amount" if item.endswith(" AS amount") else item)
        for item in select_list(rows, nested=False)
    ]


def fresh_copy(args: argparse.Namespace, rows: int) -> Path:
    """A copy of the cached table at the run location: data files hard-linked, the rest copied."""
    cached, _, run = paths(args, rows)
    shutil.rmtree(run, ignore_errors=True)

    def link_or_copy(source: str, target: str) -> None:
        if f"{os.sep}data{os.sep}" in source:
            os.link(source, target)
        else:
            shutil.copy2(source, target)

    shutil.copytree(cached, run, copy_function=link_or_copy)
    return run


def icefloe_run(
    spark: SparkSession, args: argparse.Namespace, rows: int, statement: str, mode: str
) -> dict[str, Any]:
    run = fresh_copy(args, rows)
    _, changes, _ = paths(args, rows)
    catalog = icefloe.load_catalog("bench_merge", type="hadoop", warehouse=str(run))
    table = catalog.load_table("db.t")
    sql, mode_property = STATEMENTS[statement]
    table.update_properties().set(mode_property, mode).commit()
    before = {t.file.file_path for t in table.new_scan().plan_files()}
    spark.read.parquet(str(changes / "data")).createOrReplaceTempView("changes")
    started = time.perf_counter()
    isp.sql(spark, sql.format(table="db.t"), catalog=catalog).collect()
    seconds = time.perf_counter() - started
    row = isp.sql(spark, CHECK.format(table="db.t"), catalog=catalog).collect()[0]
    table.refresh()
    tasks = list(table.new_scan().plan_files())
    deletes = {d.file_path for t in tasks for d in t.deletes}
    added = [t.file.file_path for t in tasks if t.file.file_path not in before]
    return {
        "seconds": seconds,
        "rows": int(row[0]),
        "changed": int(row[1]),
        "data_files": len(added),
        "delete_files": len(deletes),
    }


def java_run(java: Any, args: argparse.Namespace, rows: int, statement: str, mode: str) -> dict[str, Any]:
    run = fresh_copy(args, rows)
    _, changes, _ = paths(args, rows)
    name = java.hadoop_catalog(run)
    sql, mode_property = STATEMENTS[statement]
    answer = java.exec(
        JAVA_RUN,
        jvm_catalog=name,
        changes=str(changes / "data"),
        mode=mode,
        mode_property=mode_property,
        statement=sql,
        check=CHECK,
    )
    return dict(answer)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description="MERGE / DELETE / UPDATE of 1% of rows: isp.sql vs Java Iceberg"
    )
    parser.add_argument("--size-gb", type=float, default=2.0, help="GiB of Parquet in the table")
    parser.add_argument("--modes", default=",".join(MODES), help="write.<statement>.mode values to run")
    parser.add_argument("--statements", default="merge", help="of merge, delete, update (comma-separated)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per engine and mode")
    parser.add_argument("--no-java", action="store_true")
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--json", type=Path, help="also write every run to this JSON file")
    args = parser.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m]
    if any(m not in MODES for m in modes):
        parser.error(f"--modes: choose from {', '.join(MODES)}")
    statements = [s for s in args.statements.split(",") if s]
    if any(s not in STATEMENTS for s in statements):
        parser.error(f"--statements: choose from {', '.join(STATEMENTS)}")
    rows = math.ceil(args.size_gb * 2**30 / BYTES_PER_ROW)
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    spark = isp.local_session(
        "local[2]",
        app_name="icefloe-bench-merge",
        config={"spark.driver.memory": "2g", "spark.ui.showConsoleProgress": "false"},
    )
    print(
        f"icefloe {icefloe.__version__}, Spark {spark.version} (pyspark {pyspark.__version__}), {os.cpu_count()} cpus"
    )
    build(spark, args, rows)
    java = None
    if not args.no_java:
        print("java engine: starting (built on first use) ...", flush=True)
        java = _load_engines_module().start_engine("java", args.cache_dir / "java-engine")
        print(f"java engine: {java.versions}", flush=True)
    hundredth = len(range(37, rows, 100))
    expected = {
        "merge": {"rows": rows + rows // 200, "changed": len(range(37, rows, 200)) + rows // 200},
        "delete": {"rows": rows - hundredth, "changed": 0},
        "update": {"rows": rows, "changed": hundredth},
    }
    results: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    engines = ["icefloe"] + (["java"] if java is not None else [])
    try:
        for statement in statements:
            for mode in modes:
                for repetition in range(args.repeat):
                    for engine in engines if repetition % 2 == 0 else engines[::-1]:
                        if engine == "icefloe":
                            result = icefloe_run(spark, args, rows, statement, mode)
                        else:
                            result = java_run(java, args, rows, statement, mode)
                        result["load"] = os.getloadavg()[0]
                        print(f"  {statement:7}{mode:14} {engine:8} {json.dumps(result)}", flush=True)
                        for key, value in expected[statement].items():
                            if result[key] != value:
                                raise SystemExit(
                                    f"{engine} {statement} {mode}: {key} is {result[key]}, expected {value}"
                                )
                        results.setdefault((statement, mode, engine), []).append(result)
    finally:
        if java is not None:
            java.close()
        spark.stop()
        shutil.rmtree(paths(args, rows)[2], ignore_errors=True)
    print(
        f"\nOn {rows:,} rows (~{args.size_gb} GiB zstd): MERGE of {expected['merge']['changed']:,} rows "
        f"({len(range(37, rows, 200)):,} updates spread over every file, {rows // 200:,} inserts); "
        f"DELETE and UPDATE of {hundredth:,} rows spread over every file"
    )
    print(
        f"{'statement':10}{'mode':15}{'engine':9}{'best s':>9}{'median s':>10}{'added data':>12}"
        f"{'added deletes':>15}{'load':>7}"
    )
    for (statement, mode, engine), runs in results.items():
        seconds = [r["seconds"] for r in runs]
        print(
            f"{statement:10}{mode:15}{engine:9}{min(seconds):9.1f}{statistics.median(seconds):10.1f}"
            f"{runs[0]['data_files']:12}{runs[0]['delete_files']:15}"
            f"{statistics.mean(r['load'] for r in runs):7.1f}"
        )
    for statement in statements:
        for mode in modes:
            ours, theirs = results.get((statement, mode, "icefloe")), results.get((statement, mode, "java"))
            if ours and theirs:
                ratio = min(r["seconds"] for r in ours) / min(r["seconds"] for r in theirs)
                print(f"{statement} {mode}: icefloe / java = {ratio:.2f}x (best of {args.repeat})")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"/".join(key): r for key, r in results.items()}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
