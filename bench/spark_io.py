"""Benchmark: icefloe.spark reads and writes vs Spark's own Parquet, and vs Java Iceberg.

A cached source table (built once, reused): an unpartitioned icefloe table of about
``--size-gb`` GiB of Parquet (SQLite catalog in the cache directory), twelve columns of mixed
types and no lists or maps: ``id`` (0..N-1, so every file and row group holds one contiguous
range), random longs, doubles, an int, three strings of 200 / 5,000 / 100,000 distinct values,
a date and a timestamp that grow with ``id``, a decimal(12,2) and a boolean. It is written by
``isp.write`` from ``spark.range(N)`` plus expressions; that write is timed and reported.

**Reads**, on the same data files: ``isp.read(spark, table, filter=...)`` against
``spark.read.parquet(<the table's data files>)``, timed from building the DataFrame to the
collected result (icefloe's driver-side planning included), four queries:

- ``scan-agg``: an aggregate per column (sum / max / count_if), so every column is decoded;
- ``scan-hash``: ``count(*), sum(hash(*))`` over all columns;
- ``narrow``: ``sum(amount), sum(user_id)`` (two columns of twelve);
- ``selective``: ``count(*), sum(hash(*))`` where ``id`` is in a 0.1% range (file pruning by
  icefloe, row-group skipping by Spark).

**Writes**, of one DataFrame (``spark.range(N)`` plus the same expressions, computed again
by every writer): ``isp.write(df, fresh_table)`` against ``df.write.parquet(path)``, both with
the same codec and level (``--codec``, ``--level``); then a nested case with an
``array<bigint>`` and a ``map<string,double>`` column added (``--nested-fraction`` of the rows).

**The in-task reader** (``ice-tasks``, off with ``--no-in-tasks``): ``isp.read`` forced onto
icefloe's Arrow reader in the Spark tasks (``icefloe.spark.reader=icefloe``, what tables on a
store Spark's Hadoop cannot open take) on the same local files; its ratio to ``spark``
(Spark's own Parquet over the files) is printed under each read (target at most 1.5x).

**Java** (``--java``, on when ``java`` is installed): Apache Iceberg 1.9.2 on Spark 3.5.7, the
interop harness's engine (``tests/interop/engines.py``; built on first use under
``~/.cache/icefloe/engines``), in its own JVM, one run at a time with ours: it reads the same
icefloe table (``spark.read.format("iceberg").load(<metadata file>)``) and the same files
with its Spark's ``spark.read.parquet`` (``spark-3.5``), and writes the same rows with
``INSERT INTO ... SELECT`` into a table of its Hadoop catalog. Timed inside its process.

Every measurement is repeated (reads ``--repeat``, writes ``--write-repeat``), the engines
interleaved and their order rotated between repetitions; best and median are reported with
the ratios computed from this run. Before each run the bench waits (up to ``--quiet-wait`` s)
for the CPUs to be idle, and it prints the 1-minute load average seen by each row: on a shared
machine compare ratios, not absolute times.

``--diagnose`` adds variants that show where the time goes: for reads, icefloe's planning
alone, and Spark reading the files with icefloe's field-id schema with and without the
``_metadata.file_path`` / ``_metadata.row_index`` columns ``isp.read`` selects; for writes,
Spark's ``noop`` sink (producing the rows), ``mapInArrow`` handing the rows to Python and
dropping them (Arrow transfer), ``mapInArrow`` writing them with plain pyarrow
(``ParquetWriter``, the same options), icefloe's job and commit separately, and (flat case)
``isp.write`` forced onto icefloe's own writer in ``mapInArrow`` (``icefloe.spark.writer=icefloe``),
the path tables Spark's writer cannot write take. The flat table itself is written by Spark's
own Parquet writer (``isp.write`` chooses it); the nested case always by icefloe's.

**Connect column** (``--connect``, or ``--only connect`` alone): the same reads and writes on a
Spark Connect session against a classic one (target: within 1.1x), each session in its own
subprocess, kinds alternating; ``--connect-gb`` GiB per write (default 1), plus the per-query
fixed cost (1,000 rows) and Spark's own Parquet read on both kinds, to tell what Connect costs
Spark from what it costs icefloe. ``--trace`` lists every Connect request a session made. The
work is done by ``spark_connect.py``.

Usage, from the repository with the project venv::

    python bench/spark_io.py                      # 2 GiB, all queries, Java included
    python bench/spark_io.py --quick --no-java    # 0.2 GiB, to try it out
    python bench/spark_io.py --diagnose --only read --queries scan-agg,selective
    python bench/spark_io.py --only connect --connect-gb 1 --trace
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import math
import os
import platform
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
import pyspark  # noqa: E402
from appends import _load_engines_module  # noqa: E402
from planning import QUIET, wait_quiet  # noqa: E402
from pyspark.sql import DataFrame, SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

import icefloe  # noqa: E402
from icefloe import spark as isp  # noqa: E402
from icefloe.io import local_path  # noqa: E402
from icefloe.spark.paths import spark_input_path  # noqa: E402
from icefloe.spark.types import to_spark_schema  # noqa: E402
from icefloe.spec.properties import SPARK_WRITER as WRITER_PROPERTY  # noqa: E402
from icefloe.write.options import ParquetWriteOptions  # noqa: E402

GENERATOR_VERSION = 1  # bump when the columns or expressions change: the cached data is rebuilt
BYTES_PER_ROW = 30  # on-disk bytes of one row with zstd level 3, measured; sizes the table
# ``icefloe.spark.write.frames`` is also the name of the function the package exports.
spark_write = importlib.import_module("icefloe.spark.write.frames")
DEFAULT_CACHE = Path.home() / ".cache" / "icefloe" / "bench" / "spark_io"

# name, Arrow type (icefloe table schema), Spark SQL type (Java's DDL), generating expression
# ({n}: the row count; rand(seed) is per-partition deterministic, the same in Spark 3.5 and 4).
COLUMNS: list[tuple[str, pa.DataType, str, str]] = [
    ("id", pa.int64(), "bigint", "id"),
    ("user_id", pa.int64(), "bigint", "cast(rand(1) * 10000000 as bigint)"),
    ("amount", pa.float64(), "double", "round(rand(2) * 1000, 2)"),
    ("score", pa.float64(), "double", "rand(3)"),
    ("qty", pa.int32(), "int", "cast(rand(4) * 100 as int)"),
    ("country", pa.string(), "string", "concat('c', cast(cast(rand(5) * 200 as int) as string))"),
    (
        "category",
        pa.string(),
        "string",
        "concat('category-', cast(cast(pow(rand(6), 2) * 5000 as int) as string))",
    ),
    ("note", pa.string(), "string", "concat('n', cast(cast(rand(7) * 100000 as int) as string))"),
    ("event_date", pa.date32(), "date", "date_add(date'2024-01-01', cast(id * 365 div {n} as int))"),
    (
        "ts",
        pa.timestamp("us", tz="UTC"),
        "timestamp",
        "timestamp_micros(1704067200000000 + id * (31536000000000 div {n}) + cast(rand(8) * 1000000 as bigint))",
    ),
    ("price", pa.decimal128(12, 2), "decimal(12,2)", "cast(rand(9) * 10000 as decimal(12,2))"),
    ("flag", pa.bool_(), "boolean", "rand(10) < 0.1"),
]
NESTED: list[tuple[str, pa.DataType, str, str]] = [
    (
        "arr",
        pa.list_(pa.int64()),
        "array<bigint>",
        "transform(sequence(0, cast(rand(11) * 5 as int)), x -> id * 8 + x)",
    ),
    (
        "m",
        pa.map_(pa.string(), pa.float64()),
        "map<string,double>",
        "map(concat('k', cast(cast(rand(12) * 20 as int) as string)), rand(13), 'total', rand(14))",
    ),
]

AGGREGATES = [
    "count(*)",
    "sum(id)",
    "sum(user_id)",
    "sum(amount)",
    "sum(score)",
    "sum(qty)",
    # Strings through length(): max(string) would make Spark aggregate row by row, uncompiled.
    "sum(length(country))",
    "sum(length(category))",
    "sum(length(note))",
    "max(event_date)",
    "max(ts)",
    "sum(price)",
    "count_if(flag)",
]
HASH = ["count(*)", "sum(hash(*))"]
QUERY_NAMES = ("scan-agg", "scan-hash", "narrow", "selective")


@dataclass(frozen=True)
class Query:
    name: str
    where: str | None  # Spark SQL and icefloe filter text alike
    select: list[str]


def queries(rows: int) -> dict[str, Query]:
    low = int(rows * 0.4)
    high = low + max(1, rows // 1000)
    return {
        "scan-agg": Query("scan-agg", None, AGGREGATES),
        "scan-hash": Query("scan-hash", None, HASH),
        "narrow": Query("narrow", None, ["sum(amount)", "sum(user_id)"]),
        "selective": Query("selective", f"id >= {low} AND id < {high}", HASH),
    }


def select_list(rows: int, *, nested: bool) -> list[str]:
    columns = COLUMNS + (NESTED if nested else [])
    return [f"{expr.format(n=rows)} AS {name}" for name, _, _, expr in columns]


def arrow_schema(*, nested: bool) -> pa.Schema:
    return pa.schema([(name, t) for name, t, _, _ in COLUMNS + (NESTED if nested else [])])


def generated(spark: SparkSession, rows: int, partitions: int, *, nested: bool = False) -> DataFrame:
    return spark.range(0, rows, 1, partitions).selectExpr(*select_list(rows, nested=nested))


def table_properties(codec: str, level: int) -> dict[str, str]:
    return {"write.parquet.compression-codec": codec, "write.parquet.compression-level": str(level)}


# ---- measurements ---------------------------------------------------------------------------


@dataclass
class Runs:
    seconds: list[float] = field(default_factory=list)
    loads: list[float] = field(default_factory=list)  # 1-minute load average after each run
    result: Any = None  # the query's rows (as text) or the written files' summary
    note: str = ""

    def add(self, seconds: float, result: Any = None) -> None:
        self.seconds.append(seconds)
        self.loads.append(os.getloadavg()[0])
        if result is not None:
            self.result = result

    @property
    def best(self) -> float:
        return min(self.seconds)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


@dataclass
class Case:
    section: str  # "read", "write" or "diagnose"
    name: str
    runs: dict[str, Runs] = field(default_factory=dict)

    def runs_of(self, engine: str) -> Runs:
        return self.runs.setdefault(engine, Runs())


def as_text(rows: list[Any]) -> list[list[str | None]]:
    return [[None if v is None else str(v) for v in row] for row in rows]


def same_rows(a: list[list[str | None]], b: list[list[str | None]]) -> bool:
    """Equal, but sums of doubles only to 1e-9 (other engines add them up in another order)."""
    if len(a) != len(b):
        return False
    for row_a, row_b in zip(a, b, strict=True):
        for x, y in zip(row_a, row_b, strict=True):
            if x == y:
                continue
            try:
                if not math.isclose(float(x or "nan"), float(y or "nan"), rel_tol=1e-9):
                    return False
            except ValueError:
                return False
    return True


def interleaved(engines: list[str], repeat: int) -> Iterator[tuple[int, str]]:
    """(repetition, engine), each repetition starting one engine later than the previous."""
    for rep in range(repeat):
        shift = rep % len(engines)
        for engine in engines[shift:] + engines[:shift]:
            yield rep, engine


def timed(run: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = run()
    return time.perf_counter() - started, result


# ---- the source table -----------------------------------------------------------------------


@dataclass
class Source:
    table: Any  # icefloe Table
    rows: int
    partitions: int
    paths: list[str]  # data files, as Iceberg locations
    bytes: int
    row_groups: int
    info: dict[str, Any]


def source_table(spark: SparkSession, args: argparse.Namespace) -> Source:
    rows = math.ceil(args.size_gb * 2**30 / BYTES_PER_ROW)
    partitions = max(2, round(args.size_gb * 4))
    key = {"rows": rows, "partitions": partitions, "codec": args.codec, "level": args.level}
    key["generator"] = GENERATOR_VERSION
    folder = args.cache_dir / f"source-{rows}-{args.codec}{args.level}-v{GENERATOR_VERSION}"
    stamp = folder / "dataset.json"
    catalog_props = {"type": "sql", "uri": f"sqlite:///{folder / 'catalog.db'}", "warehouse": str(folder)}
    info: dict[str, Any] = json.loads(stamp.read_text()) if stamp.is_file() else {}
    if info.get("key") != key:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        print(f"building the source table: {rows:,} rows in {partitions} tasks into {folder} ...", flush=True)
        catalog = icefloe.load_catalog("bench_source", **catalog_props)
        catalog.create_namespace("db")
        schema = arrow_schema(nested=False)
        table = catalog.create_table("db.src", schema, properties=table_properties(args.codec, args.level))
        load = os.getloadavg()[0]
        seconds, _ = timed(lambda: isp.write(generated(spark, rows, partitions), table))
        info = {"key": key, "write_s": seconds, "load_before": load, "load_after": os.getloadavg()[0]}
        info["built"] = time.strftime("%Y-%m-%d %H:%M:%S")
        stamp.write_text(json.dumps(info, indent=1))
    table = icefloe.load_catalog("bench_source", **catalog_props).load_table("db.src")
    paths = [task.file.file_path for task in table.new_scan().plan_files()]
    row_groups = sum(pq.ParquetFile(local_path(p)).metadata.num_row_groups for p in paths)
    size = sum(os.path.getsize(local_path(p)) for p in paths)
    return Source(table, rows, partitions, paths, size, row_groups, info)


# ---- reads ----------------------------------------------------------------------------------


def icefloe_read(spark: SparkSession, source: Source, query: Query) -> Any:
    return isp.read(spark, source.table, filter=query.where).selectExpr(*query.select).collect()


def in_tasks_read(spark: SparkSession, source: Source, query: Query) -> Any:
    """``isp.read`` forced onto icefloe's Arrow reader in the Spark tasks (the reader of tables
    whose store Spark's Hadoop cannot open), on the same local files."""
    spark.conf.set("icefloe.spark.reader", "icefloe")
    try:
        return icefloe_read(spark, source, query)
    finally:
        spark.conf.unset("icefloe.spark.reader")


def spark_read(spark: SparkSession, source: Source, query: Query) -> Any:
    df = spark.read.parquet(*[spark_input_path(p) for p in source.paths])
    if query.where:
        df = df.where(query.where)
    return df.selectExpr(*query.select).collect()


def field_id_read(spark: SparkSession, source: Source, query: Query, *, metadata_columns: bool) -> Any:
    """What ``isp.read`` hands Spark, rebuilt: icefloe's field-id read schema over the files,
    with or without the ``_metadata`` columns it selects (its filter is Spark SQL here)."""
    schema = to_spark_schema(source.table.schema(), for_read=True)
    df = (
        spark.read.schema(schema)
        .option("recursiveFileLookup", "true")
        .parquet(*[spark_input_path(p) for p in source.paths])
    )
    if metadata_columns:
        df = df.select(
            *[F.col(f"`{f.name}`") for f in schema.fields],
            F.col("_metadata.file_path").alias("_icefloe_file"),
            F.col("_metadata.row_index").alias("_icefloe_pos"),
        )
    if query.where:
        df = df.where(query.where)
    if metadata_columns:
        df = df.drop("_icefloe_file", "_icefloe_pos")
    return df.selectExpr(*query.select).collect()


def plan_only(spark: SparkSession, source: Source, query: Query) -> list[Any]:
    isp.read(spark, source.table, filter=query.where)
    return []


JAVA_READ = """
import time
started = time.perf_counter()
df = spark.read.format('iceberg').load(table) if kind == 'iceberg' else spark.read.parquet(*paths)
if where:
    df = df.where(where)
rows = df.selectExpr(*select).collect()
result = {'seconds': time.perf_counter() - started,
          'rows': [[None if v is None else str(v) for v in row] for row in rows]}
"""


def java_read(java: Any, source: Source, query: Query, kind: str) -> tuple[float, Any]:
    answer = java.exec(
        JAVA_READ,
        kind=kind,
        table=local_path(source.table.metadata_location),
        paths=[local_path(p) for p in source.paths],
        where=query.where,
        select=query.select,
    )
    return float(answer["seconds"]), answer["rows"]


def run_reads(
    spark: SparkSession, source: Source, java: Any, args: argparse.Namespace, cases: list[Case]
) -> None:
    readers: dict[str, Callable[[Query], tuple[float, Any]]] = {
        "icefloe": lambda q: timed(lambda: as_text(icefloe_read(spark, source, q))),
        "spark": lambda q: timed(lambda: as_text(spark_read(spark, source, q))),
    }
    if not args.no_in_tasks:
        readers["ice-tasks"] = lambda q: timed(lambda: as_text(in_tasks_read(spark, source, q)))
    if args.diagnose:
        readers["ice-plan"] = lambda q: timed(lambda: plan_only(spark, source, q))
        readers["ids"] = lambda q: timed(
            lambda: as_text(field_id_read(spark, source, q, metadata_columns=False))
        )
        readers["ids+meta"] = lambda q: timed(
            lambda: as_text(field_id_read(spark, source, q, metadata_columns=True))
        )
    if java is not None:
        readers["java-iceberg"] = lambda q: java_read(java, source, q, "iceberg")
        readers["spark-3.5"] = lambda q: java_read(java, source, q, "parquet")
    all_queries = queries(source.rows)
    # Warm-up: code generation and the JIT for every query shape, on a few rows.
    for name in args.queries:
        query = all_queries[name]
        small = Query(name, f"id < {min(source.rows, 200_000)}", query.select)
        for reader in readers.values():
            reader(small)
    for name in args.queries:
        query = all_queries[name]
        case = Case("read", name)
        print(f"  read {name}: ", end="", flush=True)
        for _, engine in interleaved(list(readers), args.repeat):
            wait_quiet(args.quiet, args.quiet_wait)
            seconds, rows = readers[engine](query)
            case.runs_of(engine).add(seconds, rows)
            print(".", end="", flush=True)
        expected = case.runs["spark"].result
        for engine, runs in case.runs.items():
            if engine != "ice-plan" and not same_rows(runs.result, expected):
                runs.note = "ROWS DIFFER"
                print(f"\n    {engine} returned {runs.result}, spark {expected}", end="")
        print(f" {statistics.median(case.runs['icefloe'].seconds):.1f} s (icefloe median)", flush=True)
        cases.append(case)
    if args.diagnose:
        for name in args.queries:
            query = all_queries[name]
            plan = isp.read(spark, source.table, filter=query.where).selectExpr(*query.select)
            scans = [
                line.strip()
                for line in plan._jdf.queryExecution().executedPlan().toString().splitlines()
                if "FileScan" in line or "Filter" in line
            ]
            print(f"  plan of isp.read for {name}:\n    " + "\n    ".join(s[:400] for s in scans))


# ---- writes ---------------------------------------------------------------------------------


@dataclass
class Written:
    rows: int
    files: int
    bytes: int

    def text(self) -> str:
        return f"{self.rows:,} rows, {self.files} files, {self.bytes / 2**20:,.0f} MiB"


def _parquet_dir_summary(folder: Path) -> Written:
    files = sorted(folder.rglob("*.parquet"))
    rows = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    return Written(rows, len(files), sum(f.stat().st_size for f in files))


def _count_rows(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    total = 0
    for batch in batches:
        total += batch.num_rows
    yield pa.RecordBatch.from_pylist([{"rows": total}])


def _pyarrow_writer(folder: str, kwargs: dict[str, Any], row_group_rows: int) -> Any:
    """A mapInArrow function writing its rows with pyarrow alone: row groups of
    ``row_group_rows`` rows, one file per task (the floor for icefloe's writer)."""

    def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import uuid

        writer = None
        buffered: list[pa.RecordBatch] = []
        count = total = 0
        for batch in batches:
            if writer is None:
                path = os.path.join(folder, f"{uuid.uuid4()}.parquet")
                writer = pq.ParquetWriter(path, batch.schema, **kwargs)
            buffered.append(batch)
            count += batch.num_rows
            total += batch.num_rows
            if count >= row_group_rows:
                writer.write_table(pa.Table.from_batches(buffered), row_group_size=row_group_rows)
                buffered, count = [], 0
        if writer is not None:
            if buffered:
                writer.write_table(pa.Table.from_batches(buffered), row_group_size=row_group_rows)
            writer.close()
        yield pa.RecordBatch.from_pylist([{"rows": total}])

    return task


@contextlib.contextmanager
def _timing_job(log: list[float]) -> Iterator[None]:
    """Time ``write_data_frame`` (the Spark job) inside ``isp.write``; the rest is the commit."""
    original = spark_write.write_data_frame

    def wrapper(df: DataFrame, table: Any) -> Any:
        started = time.perf_counter()
        try:
            return original(df, table)
        finally:
            log.append(time.perf_counter() - started)

    spark_write.write_data_frame = wrapper  # type: ignore[assignment]
    try:
        yield
    finally:
        spark_write.write_data_frame = original  # type: ignore[assignment]


JAVA_WRITE = """
import time
spark.sql(create)
started = time.perf_counter()
spark.sql(insert)
seconds = time.perf_counter() - started
rows = spark.sql(f'SELECT count(*) FROM {name}').collect()[0][0]
files = spark.sql(f'SELECT count(*), sum(file_size_in_bytes) FROM {name}.files').collect()[0]
result = {'seconds': seconds, 'rows': int(rows), 'files': int(files[0]), 'bytes': int(files[1])}
"""


class WriteBench:
    """The writers, each writing a DataFrame (or, for Java, the same rows) into fresh scratch
    space and removing it afterwards."""

    def __init__(self, spark: SparkSession, java: Any, args: argparse.Namespace) -> None:
        self.spark, self.java, self.args = spark, java, args
        self.scratch = args.cache_dir / "scratch"
        shutil.rmtree(self.scratch, ignore_errors=True)
        self.scratch.mkdir(parents=True)
        self.catalog = icefloe.load_catalog(
            "bench_scratch",
            type="sql",
            uri=f"sqlite:///{self.scratch / 'catalog.db'}",
            warehouse=str(self.scratch / "ice"),
        )
        self.catalog.create_namespace("db")
        self.java_catalog = java.hadoop_catalog(self.scratch / "java") if java is not None else None
        self.props = table_properties(args.codec, args.level)
        self.options = ParquetWriteOptions.from_properties(self.props)
        self.counter = 0
        self.job_seconds: list[float] = []

    def _next(self) -> int:
        self.counter += 1
        return self.counter

    def icefloe(
        self, df: DataFrame, nested: bool, *, time_job: bool = False, extra: dict[str, str] | None = None
    ) -> Written:
        name = f"db.w{self._next()}"
        properties = {**self.props, **(extra or {})}
        table = self.catalog.create_table(name, arrow_schema(nested=nested), properties=properties)
        with _timing_job(self.job_seconds) if time_job else contextlib.nullcontext():
            snapshot = isp.write(df, table)
        assert snapshot is not None
        summary = snapshot.summary
        written = Written(
            int(summary["total-records"]), int(summary["total-data-files"]), int(summary["total-files-size"])
        )
        self.catalog.drop_table(name, purge=True)
        return written

    def icefloe_arrow(self, df: DataFrame, nested: bool) -> Written:
        """isp.write with icefloe's own writer in mapInArrow tasks (what tables Spark's writer
        cannot write take), forced by the table property."""
        return self.icefloe(df, nested, extra={WRITER_PROPERTY: "icefloe"})

    def spark_parquet(self, df: DataFrame) -> Written:
        folder = self.scratch / f"spark{self._next()}"
        level_key = f"parquet.compression.codec.{self.args.codec}.level"
        df.write.option("compression", self.args.codec).option(level_key, str(self.args.level)).parquet(
            str(folder)
        )
        written = _parquet_dir_summary(folder)
        shutil.rmtree(folder)
        return written

    def pyarrow_in_map(self, df: DataFrame) -> Written:
        folder = self.scratch / f"pyarrow{self._next()}"
        folder.mkdir()
        task = _pyarrow_writer(str(folder), self.options.writer_kwargs(), self.options.row_group_limit)
        df.mapInArrow(task, "rows long").collect()
        written = _parquet_dir_summary(folder)
        shutil.rmtree(folder)
        return written

    def java_iceberg(self, rows: int, partitions: int, nested: bool) -> tuple[float, Written]:
        name = f"{self.java_catalog}.db.w{self._next()}"
        columns = ", ".join(f"{c} {t}" for c, _, t, _ in COLUMNS + (NESTED if nested else []))
        properties = ", ".join(f"'{k}'='{v}'" for k, v in self.props.items())
        create = f"CREATE TABLE {name} ({columns}) USING iceberg TBLPROPERTIES ({properties})"
        select = ", ".join(select_list(rows, nested=nested))
        insert = f"INSERT INTO {name} SELECT {select} FROM range(0, {rows}, 1, {partitions})"
        answer = self.java.exec(JAVA_WRITE, create=create, insert=insert, name=name)
        shutil.rmtree(self.scratch / "java", ignore_errors=True)
        return float(answer["seconds"]), Written(answer["rows"], answer["files"], answer["bytes"])

    def writers(self, rows: int, partitions: int, nested: bool) -> dict[str, Callable[[], tuple[float, Any]]]:
        df = generated(self.spark, rows, partitions, nested=nested)
        writers: dict[str, Callable[[], tuple[float, Any]]] = {
            "icefloe": lambda: timed(lambda: self.icefloe(df, nested)),
            "spark": lambda: timed(lambda: self.spark_parquet(df)),
        }
        if self.java is not None:
            writers["java-iceberg"] = lambda: self.java_iceberg(rows, partitions, nested)
        if self.args.diagnose:
            writers["ice-job"] = lambda: timed(lambda: self.icefloe(df, nested, time_job=True))
            writers["noop"] = lambda: timed(lambda: df.write.format("noop").mode("overwrite").save())
            writers["arrow-xfer"] = lambda: timed(lambda: df.mapInArrow(_count_rows, "rows long").collect())
            writers["pyarrow-mapInArrow"] = lambda: timed(lambda: self.pyarrow_in_map(df))
            if not nested:  # (the nested case always takes icefloe's writer)
                writers["ice-arrow"] = lambda: timed(lambda: self.icefloe_arrow(df, nested))
        return writers

    def close(self) -> None:
        shutil.rmtree(self.scratch, ignore_errors=True)


def run_writes(spark: SparkSession, java: Any, args: argparse.Namespace, cases: list[Case]) -> None:
    bench = WriteBench(spark, java, args)
    rows = math.ceil(args.size_gb * 2**30 / BYTES_PER_ROW)
    partitions = max(2, round(args.size_gb * 4))
    # Warm-up: Python workers started, code generated, in every writer.
    for writer in bench.writers(200_000, 2, nested=True).values():
        writer()
    try:
        for nested in (False, True):
            n = rows if not nested else max(1, int(rows * args.nested_fraction))
            parts = partitions if not nested else max(2, round(partitions * args.nested_fraction))
            writers = bench.writers(n, parts, nested)
            case = Case("write", f"{'nested' if nested else 'flat'} ({n:,} rows)")
            print(f"  write {case.name}: ", end="", flush=True)
            bench.job_seconds.clear()
            for _, engine in interleaved(list(writers), args.write_repeat):
                wait_quiet(args.quiet, args.quiet_wait)
                seconds, written = writers[engine]()
                case.runs_of(engine).add(seconds, written)
                print(".", end="", flush=True)
            for engine, runs in case.runs.items():
                if isinstance(runs.result, Written):
                    runs.note = runs.result.text()
                    if runs.result.rows != n:
                        runs.note = f"WROTE {runs.result.rows:,} ROWS, expected {n:,}"
                if engine == "ice-job" and bench.job_seconds:
                    commits = [t - j for t, j in zip(runs.seconds, bench.job_seconds, strict=True)]
                    runs.note = f"job {min(bench.job_seconds):.1f} s best, commit {max(commits):.2f} s max"
            print(f" {case.runs['icefloe'].median:.1f} s (icefloe median)", flush=True)
            cases.append(case)
    finally:
        bench.close()


# ---- report ---------------------------------------------------------------------------------


def _s(seconds: float) -> str:
    return f"{seconds:.2f}" if seconds < 100 else f"{seconds:.1f}"


def render(cases: list[Case]) -> str:
    header = [
        "case",
        "engine",
        "best s",
        "median s",
        "runs",
        "load",
        "icefloe/x best",
        "icefloe/x median",
        "",
    ]
    rows: list[list[str]] = []
    for case in cases:
        ice = case.runs.get("icefloe")
        first = True
        for engine, runs in case.runs.items():
            ratio_best = ratio_median = ""
            if ice is not None and engine not in ("icefloe", "ice-plan"):
                ratio_best = f"{ice.best / runs.best:.2f}x"
                ratio_median = f"{ice.median / runs.median:.2f}x"
            rows.append(
                [
                    f"{case.section} {case.name}" if first else "",
                    engine,
                    _s(runs.best),
                    _s(runs.median),
                    str(len(runs.seconds)),
                    f"{statistics.fmean(runs.loads):.1f}",
                    ratio_best,
                    ratio_median,
                    runs.note,
                ]
            )
            first = False
        tasks, spark_runs = case.runs.get("ice-tasks"), case.runs.get("spark")
        if tasks is not None and spark_runs is not None:
            rows.append(["", "(ice-tasks / spark)", "", "", "", "", f"{tasks.best / spark_runs.best:.2f}x"])
            rows[-1] += [f"{tasks.median / spark_runs.median:.2f}x", ""]
        java, old_spark = case.runs.get("java-iceberg"), case.runs.get("spark-3.5")
        if java is not None and old_spark is not None:
            rows.append(
                ["", "(java-iceberg / spark-3.5)", "", "", "", "", f"{java.best / old_spark.best:.2f}x"]
            )
            rows[-1] += [f"{java.median / old_spark.median:.2f}x", ""]
        rows.append([])
    widths = [max(len(r[i]) for r in [header, *rows] if r) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        left = [cells[0].ljust(widths[0]), cells[1].ljust(widths[1])]
        mid = [c.rjust(w) for c, w in zip(cells[2:-1], widths[2:-1], strict=True)]
        return "  ".join([*left, *mid, cells[-1]]).rstrip()

    out = [line(header), "  ".join("-" * w for w in widths[:-1])]
    out += [line(r) if r else "" for r in rows]
    return "\n".join(out).rstrip()


# ---- main -----------------------------------------------------------------------------------


def start_java(args: argparse.Namespace) -> Any:
    if not args.java:
        return None
    try:
        engines = _load_engines_module()
        print("java engine: starting (built on first use) ...", flush=True)
        java = engines.start_engine("java", args.cache_dir / "java-engine")
    except Exception as exc:  # the Java rows are optional
        print(f"java engine unavailable, skipped: {exc}", flush=True)
        return None
    print(f"java engine: {java.versions}", flush=True)
    return java


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="icefloe.spark read/write vs Spark Parquet and Java Iceberg")
    parser.add_argument("--size-gb", type=float, default=2.0, help="GiB of Parquet in the source table")
    parser.add_argument("--quick", action="store_true", help="--size-gb 0.2 (trying it out)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per read query and engine")
    parser.add_argument("--write-repeat", type=int, default=2, help="runs per write and engine")
    parser.add_argument("--queries", default=",".join(QUERY_NAMES), help="comma-separated read queries")
    parser.add_argument(
        "--only",
        choices=["read", "write", "connect"],
        help="only the reads, the writes or the Connect column",
    )
    parser.add_argument(
        "--connect", action="store_true", help="add the Connect column: the same on Spark Connect vs classic"
    )
    parser.add_argument("--connect-gb", type=float, default=1.0, help="GiB per write of the Connect column")
    parser.add_argument("--connect-repeat", type=int, default=2, help="sessions per kind, Connect column")
    parser.add_argument("--trace", action="store_true", help="Connect column: log every Connect request")
    parser.add_argument("--codec", default="zstd", help="Parquet codec of every writer (default zstd)")
    parser.add_argument("--level", type=int, default=3, help="codec level of every writer (3: parquet-mr's)")
    parser.add_argument("--nested-fraction", type=float, default=0.25, help="rows of the nested write case")
    parser.add_argument(
        "--java", action=argparse.BooleanOptionalAction, default=shutil.which("java") is not None
    )
    parser.add_argument("--diagnose", action="store_true", help="add the variants that show where time goes")
    parser.add_argument(
        "--no-in-tasks",
        action="store_true",
        help="leave out ice-tasks: isp.read forced onto icefloe's reader in the tasks (icefloe.spark.reader=icefloe)",
    )
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--driver-memory", default="2g", help="as the Java engine's (2g)")
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--quiet", type=float, default=0.9, help="idle CPU share to wait for before a run")
    parser.add_argument(
        "--quiet-wait", type=float, default=20.0, help="longest wait for it, seconds (0: never)"
    )
    parser.add_argument("--json", type=Path, help="also write every run to this JSON file")
    args = parser.parse_args(argv)
    if args.quick:
        args.size_gb = 0.2
    args.queries = [q for q in args.queries.split(",") if q]
    unknown = [q for q in args.queries if q not in QUERY_NAMES]
    if unknown:
        parser.error(f"unknown queries {unknown}; choose from {', '.join(QUERY_NAMES)}")
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    if args.only == "connect":
        print(connect_column(args))
        return 0

    spark = isp.local_session(
        args.master,
        app_name="icefloe-bench",
        config={"spark.driver.memory": args.driver_memory, "spark.ui.showConsoleProgress": "false"},
    )
    print(
        f"icefloe {icefloe.__version__}, Spark {spark.version} (pyspark {pyspark.__version__}, "
        f"{args.master}, driver {args.driver_memory}), pyarrow {pa.__version__}, python "
        f"{platform.python_version()}, {os.cpu_count()} cpus; codec {args.codec} level {args.level}",
        flush=True,
    )
    source = source_table(spark, args)
    built = source.info
    print(
        f"source: {source.rows:,} rows, {len(source.paths)} files, {source.row_groups} row groups, "
        f"{source.bytes / 2**30:.2f} GiB; built {built['built']} by isp.write in {built['write_s']:.1f} s "
        f"(load {built['load_before']:.1f} -> {built['load_after']:.1f})",
        flush=True,
    )
    java = start_java(args)
    cases: list[Case] = []
    started = time.monotonic()
    try:
        if args.only in (None, "read"):
            run_reads(spark, source, java, args, cases)
        if args.only in (None, "write"):
            run_writes(spark, java, args, cases)
    finally:
        if java is not None:
            java.close()
    print()
    print(render(cases))
    if args.connect:
        spark.stop()  # its JVM would compete with the Connect column's sessions
        print(connect_column(args))
    print(
        f"\nicefloe/x: icefloe's time over that engine's (below 1.00x: icefloe is faster); load: mean "
        f"1-minute load average after the runs ({os.cpu_count()} cpus); waited {QUIET['waited_s']:.0f} s "
        f"for idle CPUs, {QUIET['noisy_runs']} runs started without them; {time.monotonic() - started:.0f} s "
        "in all.\nReads are timed from building the DataFrame to the collected rows; java-iceberg and "
        "spark-3.5 run in the harness's JVM (Spark 3.5.7, local[2], driver 2g), timed inside it."
    )
    if args.diagnose:
        print(
            "Diagnose rows: ice-plan = isp.read() alone (planning, no job); ids = Spark over the files "
            "with icefloe's field-id schema;\nids+meta = that plus _metadata.file_path/row_index "
            "(what isp.read selects); ice-job = isp.write with its job and commit timed apart;\n"
            "noop = Spark producing the rows; arrow-xfer = mapInArrow handing them to Python; "
            "pyarrow-mapInArrow = plain pyarrow ParquetWriter in mapInArrow;\nice-arrow = isp.write "
            "through icefloe's own writer in mapInArrow (icefloe.spark.writer=icefloe)."
        )
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        out = [
            {
                "section": c.section,
                "case": c.name,
                "runs": {
                    e: {"seconds": r.seconds, "loads": r.loads, "note": r.note} for e, r in c.runs.items()
                },
            }
            for c in cases
        ]
        args.json.write_text(json.dumps({"source": built, "rows": source.rows, "cases": out}, indent=1))
    spark.stop()
    return 0


def connect_column(args: argparse.Namespace) -> str:
    """icefloe's reads and writes on Spark Connect vs classic PySpark (``spark_connect.py``,
    imported here: it imports this module's column definitions)."""
    connect = importlib.import_module("spark_connect")
    report: str = connect.compare(args.connect_gb, args.connect_repeat, trace=args.trace)
    return report


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
