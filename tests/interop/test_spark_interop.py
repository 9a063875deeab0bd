"""``icefloe.spark`` against the reference engines: what Spark writes through icefloe reads
identically in Java Iceberg (on Spark 3.5), PyIceberg and DuckDB, and what Java writes reads
identically through ``icefloe.spark.read.frames``.

1. ``isp.write`` (append, overwrite-partitions) of every Spark type (boolean, byte, short, int,
   long, float, double, decimal, date, timestamp, timestamp_ntz, string, binary, struct, array,
   map; plus Iceberg's uuid and fixed, which Spark holds as string and binary) reads exactly as
   written in every engine at every snapshot; identity partitions on most types read right in
   Java (which takes identity columns from the manifests); a table partitioned by bucket,
   truncate and day holds the same partitions (and, after a dynamic partition overwrite, the
   same rows) as its twin written by Java from the same rows; Java prunes all of them by
   partitions and metrics exactly as icefloe does.
2. ``isp.delete`` / ``isp.update`` / ``isp.merge_into`` in merge-on-read (v2 position deletes,
   v3 deletion vectors) and copy-on-write read at every snapshot as a model of the changes
   says, in Java, PyIceberg and DuckDB, and Java plans the same delete files; Java's own
   DELETE on such a table merges with icefloe's deletes, and icefloe's next change with Java's.
3. Tables Java writes (merge-on-read DELETE / UPDATE / MERGE, copy-on-write, every type,
   schema and partition evolution, branches and tags) read through ``isp.read`` exactly as
   through Java and icefloe's own scan: at every snapshot, with filters, by ref, ``as_of``
   and incrementally.

Engine limitations, as in ``test_icefloe_writes.py``: PyIceberg 0.12 reads a null
``list<struct>`` / ``map<_, struct>`` as empty (``pyiceberg_null_nested_as_empty``); PySpark
cannot return timestamps within a day of 0001-01-01 (``all_types.py``). Spark has no ``time``,
nanosecond timestamp or variant column that icefloe maps, so those stay out of this module.

One Spark session for the module (``ICEFLOE_SPARK_MASTER`` picks ``local[2]`` or e.g.
``local-cluster[2,1,1024]``), one server per reference engine.
"""

from __future__ import annotations

import datetime as dt
import decimal
import os
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import icefloe
from icefloe import spark as isp
from icefloe.io.local import local_path
from icefloe.spec.manifest import FileFormat
from icefloe.spec.schema import Schema

from .all_types import ALL_TYPES_FIELDS, ALL_TYPES_ROWS, all_types_data, pyiceberg_null_nested_as_empty
from .engines import DuckDBEngine, JavaEngine, PyIcebergEngine
from .java_tables import current_snapshot_id
from .normalize import normalize_arrow, row_sort_key
from .tables import (
    and_,
    assert_engine_read,
    assert_same_rows,
    eq,
    expected_rows,
    ge,
    gt,
    hadoop_catalog,
    in_,
    is_null,
    java_planned_files,
    lt,
    not_null,
    or_,
    own_planned_files,
    own_rows,
    starts_with,
)

pytestmark = pytest.mark.interop

D = decimal.Decimal
UTC = dt.UTC
ALL_COLUMNS = [f.name for f in ALL_TYPES_FIELDS]


# ----------------------------------------------------------------------------------------------
# fixtures: one Spark session, one server per engine, one warehouse both catalogs share


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    """The module's Spark session (an already running one is reused and left running)."""
    running = SparkSession.getActiveSession()
    session = isp.local_session(
        os.environ.get("ICEFLOE_SPARK_MASTER", "local[2]"), app_name="icefloe-interop"
    )
    try:
        yield session
    finally:
        if running is None:
            session.stop()


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("spark-interop")


@pytest.fixture(scope="module")
def java_catalog(java_engine: JavaEngine, warehouse: Path) -> str:
    return java_engine.hadoop_catalog(warehouse)


@pytest.fixture(scope="module")
def catalog(warehouse: Path, java_catalog: str) -> icefloe.Catalog:
    cat = hadoop_catalog(warehouse)
    cat.create_namespace("db")
    return cat


@pytest.fixture(scope="module")
def engines(
    java_engine: JavaEngine, pyiceberg_engine: PyIcebergEngine, duckdb_engine: DuckDBEngine
) -> dict[str, Any]:
    return {"java": java_engine, "pyiceberg": pyiceberg_engine, "duckdb": duckdb_engine}


# ----------------------------------------------------------------------------------------------
# helpers


def _frame(spark: SparkSession, data: pa.Table, casts: Mapping[str, str] | None = None) -> DataFrame:
    """DATA as a Spark DataFrame with Spark's own types: uuid as string and fixed as binary
    (Spark has neither), naive timestamps as ``timestamp_ntz`` (``createDataFrame`` would make
    them ``timestamp``), and CASTS (column -> Spark type) applied on top."""
    data = pa.Table.from_pylist(data.to_pylist(), schema=data.schema)  # PySpark refuses sliced arrays
    arrays, ntz = [], []
    for field, column in zip(data.schema, data.columns, strict=True):
        if field.type == pa.uuid():
            column = pa.array([None if v is None else str(v) for v in column.to_pylist()], pa.string())
        elif pa.types.is_fixed_size_binary(field.type):
            column = column.cast(pa.binary())
        elif pa.types.is_timestamp(field.type) and field.type.tz is None:
            # As UTC instants, cast back to wall-clock time in Spark (the session is in UTC).
            column = column.cast(pa.timestamp("us", tz="UTC"))
            ntz.append(field.name)
        arrays.append(column)
    frame = spark.createDataFrame(pa.Table.from_arrays(arrays, names=data.schema.names))
    wanted = {**{name: "timestamp_ntz" for name in ntz}, **(casts or {})}
    return frame.select(
        *[F.col(f"`{c}`").cast(wanted[c]).alias(c) if c in wanted else F.col(f"`{c}`") for c in frame.columns]
    )


def _spark_read(spark: SparkSession, table: icefloe.Table, **kwargs: Any) -> dict[str, Any]:
    """``isp.read`` of TABLE, normalised like an engine's ``read``."""
    return normalize_arrow(isp.read(spark, table, **kwargs).toArrow())


def _snapshot_id(table: icefloe.Table) -> int:
    snapshot = table.current_snapshot()
    assert snapshot is not None
    return snapshot.snapshot_id


def _assert_reads(
    spark: SparkSession,
    engines: dict[str, Any],
    table: icefloe.Table,
    rows: list[Any],
    *,
    snapshot_id: int | None = None,
    names: tuple[str, ...] = ("java", "pyiceberg", "duckdb"),
    pyiceberg_rows: list[Any] | None = None,
) -> None:
    """icefloe's scan, ``isp.read`` and every engine in NAMES read ROWS (at SNAPSHOT_ID)."""
    where = f"@{snapshot_id}" if snapshot_id is not None else ""
    columns = [f.name for f in table.schema().fields]
    assert_same_rows(f"icefloe{where}", own_rows(table, snapshot_id=snapshot_id)["rows"], rows)
    through_spark = _spark_read(spark, table, snapshot_id=snapshot_id)
    assert through_spark["columns"] == columns
    assert_same_rows(f"isp.read{where}", through_spark["rows"], rows)
    for name in names:
        result = engines[name].read(table.metadata_location, snapshot_id=snapshot_id)
        want = pyiceberg_rows if name == "pyiceberg" and pyiceberg_rows is not None else rows
        assert_engine_read(f"{name}{where}", result, table, want, columns)


def _java_run(java: JavaEngine, table_dir: Path, *statements: str, **names: str) -> list[int]:
    """Runs Spark SQL statements (``{t}``-style placeholders filled from NAMES); returns the
    table's current snapshot id after each one."""
    snapshots = []
    for statement in statements:
        java.sql(statement.format(**names))
        snapshots.append(current_snapshot_id(table_dir))
    return snapshots


# ----------------------------------------------------------------------------------------------
# 1. isp.write: every type, every engine


def _replacement_rows() -> pa.Table:
    """Rows 3 and 4 again, with other values: an overwrite-partitions by truncate(2, id)
    replaces partitions 2 (ids 2, 3) and 4 (ids 4, 5)."""
    first, extremes = ALL_TYPES_ROWS[0], ALL_TYPES_ROWS[3]
    rows = [{**first, "id": 3, "s": "replaced"}, {**extremes, "id": 4, "s": "replaced too", "bin": None}]
    return pa.Table.from_pylist(rows, schema=all_types_data().schema)


ALL_TYPES_FILTERS = [
    eq("b", True),
    lt("i", 0),
    lt("l", -9_000_000_000_000_000_000),
    gt("dec38", D("1000")),
    lt("dec9", D("0")),
    lt("dt", dt.date(1000, 1, 1)),
    ge("ts", dt.datetime(2024, 1, 1)),
    lt("tstz", dt.datetime(1970, 1, 1, tzinfo=UTC)),
    eq("s", "hello"),
    starts_with("s", "日本"),
    is_null("dt"),
    in_("id", [1, 4, 9]),
]

# uuid filters: compared with the expected rows only (Java 1.9.2 orders UUIDs as signed longs
# and prunes them differently; see test_icefloe_writes.py's test_uuid_filters).
UUID_FILTERS = [
    eq("u", uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")),
    in_("u", [uuid.UUID(int=0), uuid.UUID(int=2**128 - 1)]),
    gt("u", uuid.UUID(int=2**127)),
]


@pytest.mark.parametrize("version", [1, 2, 3])
def test_spark_writes_every_type_read_everywhere(
    spark: SparkSession, catalog: icefloe.Catalog, engines: dict[str, Any], warehouse: Path, version: int
) -> None:
    table = catalog.create_table(
        f"db.spark_all_types_v{version}",
        Schema(*ALL_TYPES_FIELDS),
        partition_by=["truncate(2, id)"],
        properties={"format-version": str(version)},
    )
    data = all_types_data()
    replacement = _replacement_rows()
    frame = _frame(spark, data)
    assert {f.name: f.dataType.simpleString() for f in frame.schema.fields if f.name in ("ts", "tstz")} == {
        "ts": "timestamp_ntz",
        "tstz": "timestamp",
    }
    steps: list[tuple[int, pa.Table]] = []
    isp.write(_frame(spark, data.slice(0, 4)), table)
    steps.append((_snapshot_id(table), data.slice(0, 4)))
    isp.write(_frame(spark, data.slice(4)).repartition(2), table, mode="append")
    steps.append((_snapshot_id(table), data))
    isp.write(_frame(spark, replacement), table, mode="overwrite-partitions")
    kept = data.filter(pa.array([r["id"] not in (2, 3, 4, 5) for r in data.to_pylist()]))
    steps.append((_snapshot_id(table), pa.concat_tables([kept, replacement])))
    assert [table.snapshot(s).operation for s, _ in steps] == ["append", "append", "overwrite"]  # type: ignore[union-attr]

    for snapshot_id, expected in steps:
        rows = expected_rows(expected)
        _assert_reads(
            spark,
            engines,
            table,
            rows,
            snapshot_id=snapshot_id,
            pyiceberg_rows=pyiceberg_null_nested_as_empty(rows, ALL_COLUMNS),
        )
    # Java prunes Spark-written files by their metrics and partitions exactly as icefloe does.
    location = warehouse / "db" / f"spark_all_types_v{version}"
    final = steps[-1][1]
    for flt in ALL_TYPES_FILTERS:
        want = expected_rows(final, flt.matches)
        assert_same_rows(
            str(flt), engines["java"].read(table.metadata_location, where=flt.spark())["rows"], want
        )
        assert_same_rows(f"isp {flt}", _spark_read(spark, table, filter=flt.icefloe())["rows"], want)
        assert own_planned_files(table, flt) == java_planned_files(engines["java"], location, flt), str(flt)
    for flt in UUID_FILTERS:
        want = expected_rows(final, flt.matches)
        assert_same_rows(f"isp {flt}", _spark_read(spark, table, filter=flt.icefloe())["rows"], want)


# The columns Spark's own Parquet writer can write as Iceberg files (isp.write takes that path
# for them; uuid, fixed, lists and maps go through icefloe's writer).
SPARK_WRITER_COLUMNS = [
    f.name for f in ALL_TYPES_FIELDS if f.name not in ("u", "fx", "lst", "lst_st", "mp", "mp_st")
]


@pytest.mark.parametrize("version", [2, 3])
def test_sparks_own_writer_files_read_everywhere(
    spark: SparkSession, catalog: icefloe.Catalog, engines: dict[str, Any], warehouse: Path, version: int
) -> None:
    """A table of every type Spark's writer can write, partitioned by truncate, year and
    identity: its files (Spark's Parquet, labelled with field ids, described from their
    footers) read exactly as written in every engine, and Java prunes them as icefloe does."""
    fields = [f for f in ALL_TYPES_FIELDS if f.name in SPARK_WRITER_COLUMNS]
    table = catalog.create_table(
        f"db.spark_writer_v{version}",
        Schema(*fields),
        partition_by=["truncate(2, id)", "year(tstz)", "b"],
        properties={"format-version": str(version)},
    )
    data = all_types_data().select(SPARK_WRITER_COLUMNS)
    steps: list[tuple[int, pa.Table]] = []
    isp.write(_frame(spark, data.slice(0, 4)), table)
    steps.append((_snapshot_id(table), data.slice(0, 4)))
    isp.write(_frame(spark, data.slice(4)).repartition(2), table)
    steps.append((_snapshot_id(table), data))
    for task in table.new_scan().plan_files():
        footer = pq.read_metadata(local_path(task.file.file_path)).metadata
        assert b"org.apache.spark.version" in footer, task.file.file_path
    for snapshot_id, expected in steps:
        _assert_reads(spark, engines, table, expected_rows(expected), snapshot_id=snapshot_id)
    location = warehouse / "db" / f"spark_writer_v{version}"
    for flt in ALL_TYPES_FILTERS:
        want = expected_rows(data, flt.matches)
        assert_same_rows(
            str(flt), engines["java"].read(table.metadata_location, where=flt.spark())["rows"], want
        )
        assert own_planned_files(table, flt) == java_planned_files(engines["java"], location, flt), str(flt)


def test_spark_identity_partitions_read_everywhere(
    spark: SparkSession, catalog: icefloe.Catalog, engines: dict[str, Any], warehouse: Path
) -> None:
    """Identity partitions on boolean, int, long, decimal, date, timestamp and timestamptz
    columns, extremes and nulls included: Java reads identity columns from the manifests'
    partition values, not from the files, so a value icefloe serialises wrongly shows."""
    table = catalog.create_table(
        "db.spark_identity",
        Schema(*ALL_TYPES_FIELDS),
        partition_by=["b", "i", "l", "dec9", "dt", "ts", "tstz"],
        properties={"format-version": "2"},
    )
    data = all_types_data()
    isp.write(_frame(spark, data.slice(0, 5)), table)
    isp.write(_frame(spark, data.slice(5)), table)
    # One file per partition and write (the write clusters a partition's rows in one task): rows
    # 1 and 4 of the first write, and rows 7 and 8 of the second, share the all-null partition.
    assert len(table.new_scan().plan_files()) == data.num_rows - 2
    rows = expected_rows(data)
    _assert_reads(
        spark, engines, table, rows, pyiceberg_rows=pyiceberg_null_nested_as_empty(rows, ALL_COLUMNS)
    )
    location = warehouse / "db" / "spark_identity"
    for flt in [
        eq("b", False),
        lt("dt", dt.date(1970, 1, 1)),
        gt("tstz", dt.datetime(2000, 1, 1, tzinfo=UTC)),
    ]:
        want = expected_rows(data, flt.matches)
        assert_same_rows(
            str(flt), engines["java"].read(table.metadata_location, where=flt.spark())["rows"], want
        )
        planned = own_planned_files(table, flt)
        assert planned == java_planned_files(engines["java"], location, flt), str(flt)
        assert 0 < len(planned) < data.num_rows - 1, str(flt)


PARTITIONED_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("s", pa.string()),
        ("tstz", pa.timestamp("us", tz="UTC")),
        ("ts", pa.timestamp("us")),
        ("dec", pa.decimal128(10, 2)),
        ("small", pa.int32()),
        ("tiny", pa.int32()),
        ("amount", pa.float64()),
    ]
)
PARTITION_BY = ["bucket(4, id)", "truncate(2, s)", "day(tstz)"]
JAVA_PARTITION_BY = "bucket(4, id), truncate(2, s), days(tstz)"
# Spark's own types of the columns the table holds as int: icefloe widens them on write.
SMALL_TYPES = {"small": "short", "tiny": "byte"}
WORDS = [None, "apple", "apricot", "banana", "b", "日本語テキスト", ""]


def _partitioned_rows(keys: range) -> pa.Table:
    """Rows spread over a few days around the epoch (negative days too), seven truncations of
    ``s`` (null, empty and multi-byte among them) and four buckets."""
    start = dt.datetime(1969, 12, 30, 20, tzinfo=UTC)
    rows = [
        {
            "id": k * 7919 % 100_003,
            "s": WORDS[k % 7],
            "tstz": None if k % 11 == 0 else start + dt.timedelta(minutes=53 * (k % 120)),
            "ts": dt.datetime(2024, 2, 28, 23) + dt.timedelta(minutes=k),
            "dec": D(k * 37 - 2000) / 100,
            "small": k % 300 - 150,
            "tiny": k % 200 - 100,
            "amount": k / 3,
        }
        for k in keys
    ]
    return pa.Table.from_pylist(rows, schema=PARTITIONED_SCHEMA)


def test_spark_partitioned_writes_match_java_transforms(
    spark: SparkSession,
    catalog: icefloe.Catalog,
    engines: dict[str, Any],
    java_engine: JavaEngine,
    java_catalog: str,
    warehouse: Path,
) -> None:
    """icefloe (through Spark) and Java write the same rows into tables of the same spec: the
    same partitions with the same record counts, and the same rows after a dynamic overwrite
    of the partitions a second batch falls in."""
    first, second = _partitioned_rows(range(0, 160)), _partitioned_rows(range(1000, 1030))
    for name, data in (("stage_first", first), ("stage_second", second)):
        stage = catalog.create_table(f"db.{name}", PARTITIONED_SCHEMA)
        isp.write(_frame(spark, data, SMALL_TYPES), stage)
        assert_same_rows(name, engines["java"].read(stage.metadata_location)["rows"], expected_rows(data))

    table = catalog.create_table("db.spark_parted", PARTITIONED_SCHEMA, partition_by=PARTITION_BY)
    frame = _frame(spark, first, SMALL_TYPES)
    assert [frame.schema[c].dataType.simpleString() for c in SMALL_TYPES] == ["smallint", "tinyint"]
    isp.write(frame.repartition(3), table)
    appended = _snapshot_id(table)
    isp.write(_frame(spark, second, SMALL_TYPES), table, mode="overwrite-partitions")

    twin_dir = warehouse / "db" / "java_parted"
    twin = f"{java_catalog}.db.java_parted"
    java_engine.sql(
        f"""CREATE TABLE {twin} (id bigint NOT NULL, s string, tstz timestamp, ts timestamp_ntz,
                                  dec decimal(10, 2), small int, tiny int, amount double)
            USING iceberg PARTITIONED BY ({JAVA_PARTITION_BY}) TBLPROPERTIES ('format-version' = '2')"""
    )
    java_snapshots = _java_run(
        java_engine,
        twin_dir,
        "INSERT INTO {twin} SELECT * FROM {stage}.db.stage_first",
        "SET spark.sql.sources.partitionOverwriteMode = dynamic",
        "INSERT OVERWRITE {twin} SELECT * FROM {stage}.db.stage_second",
        "SET spark.sql.sources.partitionOverwriteMode = static",
        twin=twin,
        stage=java_catalog,
    )
    java_first, java_final = java_snapshots[0], java_snapshots[-1]

    # The same rows at both snapshots, in every engine, as Java's twin holds.
    for own_snapshot, java_snapshot in ((appended, java_first), (_snapshot_id(table), java_final)):
        rows = java_engine.read(twin_dir, snapshot_id=java_snapshot)["rows"]
        _assert_reads(spark, engines, table, rows, snapshot_id=own_snapshot)
    final = java_engine.read(twin_dir)["rows"]
    everything = expected_rows(pa.concat_tables([first, second]))
    assert_same_rows(
        "first snapshot", java_engine.read(twin_dir, snapshot_id=java_first)["rows"], expected_rows(first)
    )
    assert len(expected_rows(second)) < len(final) < len(everything)  # some partitions replaced, not all
    assert all(row in everything for row in final) and all(row in final for row in expected_rows(second))

    # The same partitions, by Java's own metadata tables.
    def partitions(name: str) -> list[Any]:
        return java_engine.sql(f"SELECT partition, record_count FROM {name}.partitions")["rows"]

    assert partitions(f"{java_catalog}.db.spark_parted") == partitions(twin)
    assert len(partitions(twin)) > 20
    # Java prunes icefloe's partitions as icefloe does.
    location = warehouse / "db" / "spark_parted"
    data = pa.Table.from_pylist(_final_input(first, second, final), schema=PARTITIONED_SCHEMA)
    filters = [
        eq("s", "apple"),
        starts_with("s", "ap"),
        eq("id", 7919),
        lt("tstz", dt.datetime(1970, 1, 1, tzinfo=UTC)),
        and_(ge("tstz", dt.datetime(1970, 1, 1, 12, tzinfo=UTC)), eq("s", "日本語テキスト")),
        or_(is_null("s"), is_null("tstz")),
    ]
    for flt in filters:
        want = expected_rows(data, flt.matches)
        assert_same_rows(str(flt), java_engine.read(table.metadata_location, where=flt.spark())["rows"], want)
        assert_same_rows(f"isp {flt}", _spark_read(spark, table, filter=flt.icefloe())["rows"], want)
        planned = own_planned_files(table, flt)
        assert planned == java_planned_files(java_engine, location, flt), str(flt)
        assert len(planned) < len(table.new_scan().plan_files()), f"{flt} prunes nothing"


def _final_input(first: pa.Table, second: pa.Table, final: list[Any]) -> list[dict[str, Any]]:
    """The input rows (as Python values) whose normalised form is among FINAL's rows."""
    wanted = {repr(row) for row in final}
    rows = []
    for table in (first, second):
        for row, norm in zip(table.to_pylist(), normalize_arrow(table, sort=False)["rows"], strict=True):
            if repr(norm) in wanted:
                rows.append(row)
    return rows


# ----------------------------------------------------------------------------------------------
# 2. isp.delete / update / merge_into: merge-on-read and copy-on-write, every engine

CHANGES_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("country", pa.string()),
        ("amount", pa.float64()),
        ("note", pa.string()),
        ("dec", pa.decimal128(10, 2)),
        ("ts", pa.timestamp("us", tz="UTC")),
        ("st", pa.struct([("x", pa.int32()), ("y", pa.string())])),
        ("tags", pa.list_(pa.string())),
        ("attrs", pa.map_(pa.string(), pa.int32())),
    ]
)


def _people(keys: range) -> list[dict[str, Any]]:
    return [
        {
            "id": k,
            "country": ("CN", "US", "BR")[k % 3],
            "amount": None if k % 7 == 6 else k * 0.5,
            "note": None if k % 5 == 0 else f"n{k}",
            "dec": D(k * 13 - 100) / 100,
            "ts": dt.datetime(2024, 1, 1, tzinfo=UTC) + dt.timedelta(hours=5 * k),
            "st": None if k % 6 == 1 else {"x": k, "y": f"y{k % 4}"},
            "tags": None if k % 4 == 3 else [f"t{k % 3}"] * (k % 3),
            "attrs": None if k % 5 == 2 else [(f"a{k % 2}", k)],
        }
        for k in keys
    ]


class _Model:
    """The rows a table should hold, changed step by step alongside it."""

    def __init__(self) -> None:
        self.rows: dict[int, dict[str, Any]] = {}

    def add(self, rows: list[dict[str, Any]]) -> None:
        self.rows.update({r["id"]: dict(r) for r in rows})

    def remove(self, gone: Callable[[dict[str, Any]], bool]) -> None:
        self.rows = {k: v for k, v in self.rows.items() if not gone(v)}

    def change(self, which: Callable[[dict[str, Any]], bool], how: Callable[[dict[str, Any]], None]) -> None:
        for row in self.rows.values():
            if which(row):
                how(row)

    def expected(self) -> list[Any]:
        return expected_rows(pa.Table.from_pylist(list(self.rows.values()), schema=CHANGES_SCHEMA))


def _update_us(row: dict[str, Any]) -> None:
    row["amount"] = None if row["amount"] is None else -row["amount"]
    row["note"] = "updated"
    row["st"] = {"x": None if row["st"] is None else row["st"]["x"] + 100, "y": "u"}
    row["tags"] = ["u1", "u2"]
    row["attrs"] = [("u", row["id"])]


def _merge_source(spark: SparkSession, model: _Model) -> DataFrame:
    """Source rows 10, 15, ..., 75 (country CN): matched even ids are deleted, matched odd ones
    updated, the others inserted; target row 59, matched by none, gets a note."""
    ids = list(range(10, 80, 5))
    source = pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "country": ["CN"] * len(ids),
            "amount": [i * 2.0 for i in ids],
            "note": ["merged"] * len(ids),
            "dec": pa.array([D("1.25")] * len(ids), pa.decimal128(10, 2)),
        }
    )
    for i in ids:
        if i in model.rows and i % 2 == 0:
            del model.rows[i]
        elif i in model.rows:
            model.rows[i].update(note="merged", amount=i * 2.0)
        else:
            model.add([{"id": i, "country": "CN", "amount": i * 2.0, "note": "merged", "dec": D("1.25")}])
    if 59 in model.rows:
        model.rows[59]["note"] = "orphan"
    return _frame(spark, source)


def _exclaim(row: dict[str, Any]) -> None:
    row["note"] = None if row["note"] is None else row["note"] + "!"


def _add_1000(row: dict[str, Any]) -> None:
    row["amount"] = None if row["amount"] is None else row["amount"] + 1000


CHANGE_VARIANTS = [(2, "merge-on-read"), (3, "merge-on-read"), (2, "copy-on-write"), (3, "copy-on-write")]


@pytest.mark.parametrize(("version", "mode"), CHANGE_VARIANTS, ids=[f"v{v}-{m}" for v, m in CHANGE_VARIANTS])
def test_spark_row_changes_read_everywhere_at_every_snapshot(
    spark: SparkSession,
    catalog: icefloe.Catalog,
    engines: dict[str, Any],
    java_catalog: str,
    warehouse: Path,
    version: int,
    mode: str,
) -> None:
    name = f"spark_changes_v{version}_{mode.replace('-', '_')}"
    table = catalog.create_table(
        f"db.{name}",
        CHANGES_SCHEMA,
        partition_by=["country", "bucket(2, id)"],
        properties={
            "format-version": str(version),
            "write.delete.mode": mode,
            "write.update.mode": mode,
            "write.merge.mode": mode,
        },
    )
    java: JavaEngine = engines["java"]
    location = warehouse / "db" / name
    model = _Model()
    steps: list[tuple[str, int, list[Any]]] = []

    def step(label: str, snapshot: Any) -> None:
        assert snapshot is not None, f"{label} committed nothing"
        assert not steps or snapshot.snapshot_id != steps[-1][1], label
        steps.append((label, snapshot.snapshot_id, model.expected()))

    def frame(rows: list[dict[str, Any]]) -> DataFrame:
        return _frame(spark, pa.Table.from_pylist(rows, schema=CHANGES_SCHEMA))

    model.add(_people(range(0, 40)))
    step("append", isp.write(frame(_people(range(0, 40))).repartition(2), table))
    model.add(_people(range(40, 60)))
    step("append 2", isp.write(frame(_people(range(40, 60))), table))

    model.remove(lambda r: r["id"] in (4, 8, 12, 33, 47) or (r["country"] == "BR" and r["id"] < 10))
    step("delete", isp.delete(spark, table, "id IN (4, 8, 12, 33, 47) OR (country = 'BR' AND id < 10)"))

    model.change(lambda r: r["country"] == "US" and r["id"] < 30, _update_us)
    assignments = {
        "amount": "-amount",
        "note": "'updated'",
        "st": "named_struct('x', st.x + 100, 'y', 'u')",
        "tags": "array('u1', 'u2')",
        "attrs": "map('u', cast(id AS int))",
    }
    step("update", isp.update(spark, table, set=assignments, where="country = 'US' AND id < 30"))

    source = _merge_source(spark, model)
    merge = (
        isp.merge_into(source, table, "t.id = s.id")
        .when_matched("s.id % 2 = 0")
        .delete()
        .when_matched()
        .update({"note": "s.note", "amount": "s.amount"})
        .when_not_matched()
        .insert_all()
        .when_not_matched_by_source("t.id = 59")
        .update({"note": "'orphan'"})
    )
    step("merge", merge.merge())

    # Files that already have deletes get more: v3 merges them into one new vector per file.
    model.remove(lambda r: r["id"] in (1, 2, 3, 41, 57))
    step("delete 2", isp.delete(spark, table, "id IN (1, 2, 3, 41, 57)"))
    model.change(lambda r: r["amount"] is not None and r["amount"] > 20, _exclaim)
    step("update 2", isp.update(spark, table, set={"note": "concat(note, '!')"}, where="amount > 20"))
    model.add(_people(range(100, 106)))
    step("append 3", isp.write(frame(_people(range(100, 106))), table))
    model.remove(lambda r: r["country"] == "BR")
    step("delete partition", isp.delete(spark, table, "country = 'BR'"))
    moved = (16, 25, 31)  # into another partition (BR, now empty)
    assert all(i in model.rows for i in moved)
    model.change(lambda r: r["id"] in moved, lambda r: r.update(country="BR"))
    step("move partition", isp.update(spark, table, set={"country": "'BR'"}, where="id IN (16, 25, 31)"))

    # Java deletes next to icefloe's deletes, then icefloe changes rows beside Java's deletes.
    java_gone = (7, 13, 22, 100)
    assert all(i in model.rows for i in java_gone)
    java.sql(f"DELETE FROM {java_catalog}.db.{name} WHERE id IN {java_gone}")
    table.refresh()
    model.remove(lambda r: r["id"] in java_gone)
    step("java delete", table.current_snapshot())
    model.change(lambda r: r["country"] == "US", _add_1000)
    step(
        "update after java", isp.update(spark, table, set={"amount": "amount + 1000"}, where="country = 'US'")
    )

    kinds = {(d.content.name, d.file_format) for t in table.new_scan().plan_files() for d in t.deletes}
    if mode == "copy-on-write":
        assert kinds == set()
    else:
        assert kinds == {("POSITION_DELETES", FileFormat.PUFFIN if version == 3 else FileFormat.PARQUET)}
    for label, snapshot_id, rows in steps:
        assert len(rows) > 0, label
        _assert_reads(spark, engines, table, rows, snapshot_id=snapshot_id)
        assert own_planned_files(table, None, snapshot_id=snapshot_id) == java_planned_files(
            java, location, None, snapshot_id=snapshot_id
        ), label
        if version == 3:  # at most one deletion vector per data file, naming it
            for task in table.new_scan().use_snapshot(snapshot_id).plan_files():
                assert len(task.deletes) <= 1 and all(
                    d.referenced_data_file == task.file.file_path for d in task.deletes
                ), label


# ----------------------------------------------------------------------------------------------
# 3. Java writes, isp.read reads

_JAVA_COLUMNS = """(id bigint, country string, amount double, note string, dec decimal(10, 2),
                    ts timestamp, ts_ntz timestamp_ntz, st struct<x: int, y: string>,
                    tags array<string>, attrs map<string, int>)"""

_JAVA_ROWS = """SELECT id, element_at(array('CN', 'US', 'BR'), cast(id % 3 + 1 AS int)) AS country,
                  if(id % 7 = 6, NULL, id * 0.5) AS amount,
                  if(id % 5 = 0, NULL, concat('n', id)) AS note,
                  cast((id * 13 - 100) / 100 AS decimal(10, 2)) AS dec,
                  timestamp_seconds(1704067200 + id * 18007) AS ts,
                  cast(timestamp_seconds(-86400 * 3 + id * 3607) AS timestamp_ntz) AS ts_ntz,
                  if(id % 6 = 1, NULL, named_struct('x', cast(id AS int), 'y', concat('y', id % 4))) AS st,
                  if(id % 4 = 3, NULL, array_repeat(concat('t', id % 3), cast(id % 3 AS int))) AS tags,
                  if(id % 5 = 2, NULL, map(concat('a', id % 2), cast(id AS int))) AS attrs
           FROM range({lo}, {hi})"""

_JAVA_MERGE = """MERGE INTO {t} t
   USING (SELECT id, 'CN' AS country, id * 2.0 AS amount, 'merged' AS note,
                 cast(1.25 AS decimal(10, 2)) AS dec, timestamp'2024-06-01 00:00:00' AS ts,
                 timestamp_ntz'2024-06-01 00:00:00' AS ts_ntz, named_struct('x', 1, 'y', 'm') AS st,
                 array('m') AS tags, map('m', 1) AS attrs
          FROM range(10, 80, 5)) s
   ON t.id = s.id
   WHEN MATCHED AND s.id % 2 = 0 THEN DELETE
   WHEN MATCHED THEN UPDATE SET t.note = s.note, t.amount = s.amount, t.st = s.st
   WHEN NOT MATCHED THEN INSERT *"""

JAVA_VARIANTS = [(2, "merge-on-read"), (3, "merge-on-read"), (2, "copy-on-write")]

JAVA_FILTERS = [
    eq("country", "US"),
    lt("amount", 0.0),
    gt("id", 30),
    starts_with("note", "merged"),
    is_null("st"),
    and_(not_null("tags"), lt("ts", dt.datetime(2024, 1, 5, tzinfo=UTC))),
    ge("ts_ntz", dt.datetime(1970, 1, 1)),
    lt("dec", D("0")),
]


@pytest.mark.parametrize(("version", "mode"), JAVA_VARIANTS, ids=[f"v{v}-{m}" for v, m in JAVA_VARIANTS])
def test_java_row_changes_read_through_spark(
    spark: SparkSession,
    catalog: icefloe.Catalog,
    java_engine: JavaEngine,
    java_catalog: str,
    warehouse: Path,
    version: int,
    mode: str,
) -> None:
    name = f"java_changes_v{version}_{mode.replace('-', '_')}"
    full, table_dir = f"{java_catalog}.db.{name}", warehouse / "db" / name
    java_engine.sql(
        f"""CREATE TABLE {full} {_JAVA_COLUMNS} USING iceberg PARTITIONED BY (country, bucket(2, id))
            TBLPROPERTIES ('format-version' = '{version}', 'write.delete.mode' = '{mode}',
                           'write.update.mode' = '{mode}', 'write.merge.mode' = '{mode}')"""
    )
    snapshots = _java_run(
        java_engine,
        table_dir,
        "INSERT INTO {t} " + _JAVA_ROWS.format(lo=0, hi=40),
        "INSERT INTO {t} " + _JAVA_ROWS.format(lo=40, hi=60),
        "DELETE FROM {t} WHERE id % 4 = 0",
        """UPDATE {t} SET amount = -amount, note = 'updated', st = named_struct('x', st.x + 100, 'y', 'u'),
                          attrs = map('u', 1) WHERE country = 'US' AND id < 30""",
        _JAVA_MERGE,
        "DELETE FROM {t} WHERE id IN (1, 2, 3, 41, 57)",
        "UPDATE {t} SET note = concat(note, '!'), tags = array('x') WHERE amount > 20",
        t=full,
    )
    assert len(set(snapshots)) == len(snapshots)
    table = catalog.load_table(f"db.{name}")
    assert [s.snapshot_id for s in table.snapshots()] == snapshots
    kinds = {(d.content.name, d.file_format) for t in table.new_scan().plan_files() for d in t.deletes}
    if mode == "copy-on-write":
        assert kinds == set()
    else:
        assert kinds == {("POSITION_DELETES", FileFormat.PUFFIN if version == 3 else FileFormat.PARQUET)}
    columns = [f.name for f in table.schema().fields]
    for snapshot_id in snapshots:
        want = java_engine.read(table_dir, snapshot_id=snapshot_id)
        assert want["columns"] == columns
        got = _spark_read(spark, table, snapshot_id=snapshot_id)
        assert got["columns"] == columns
        assert_same_rows(f"isp.read@{snapshot_id}", got["rows"], want["rows"])
        assert_same_rows(
            f"icefloe@{snapshot_id}", own_rows(table, snapshot_id=snapshot_id)["rows"], want["rows"]
        )
    for flt in JAVA_FILTERS:
        want = java_engine.read(table_dir, where=flt.spark())["rows"]
        assert want, f"{flt} selects nothing"
        assert_same_rows(f"isp {flt}", _spark_read(spark, table, filter=flt.icefloe())["rows"], want)
        assert_same_rows(f"icefloe {flt}", own_rows(table, where=flt.icefloe())["rows"], want)
    # Columns read alone, and a filter on a column not read.
    want = java_engine.read(table_dir, where="amount > 10", columns=["id", "st"])
    got = _spark_read(spark, table, filter="amount > 10", columns=["id", "st"])
    assert got["columns"] == want["columns"] == ["id", "st"]
    assert_same_rows("isp columns", got["rows"], want["rows"])


@pytest.mark.parametrize("version", [2, 3])
def test_java_writes_every_type_read_through_spark(
    spark: SparkSession,
    catalog: icefloe.Catalog,
    java_engine: JavaEngine,
    java_catalog: str,
    warehouse: Path,
    version: int,
) -> None:
    """Java writes every type (uuid and fixed included) into a table icefloe created, then
    deletes and updates rows (merge-on-read); ``isp.read`` returns exactly the expected rows."""
    stage = catalog.create_table(f"db.java_all_types_stage_v{version}", Schema(*ALL_TYPES_FIELDS))
    stage.append(all_types_data())  # icefloe's own writer: the Java table's source
    name = f"java_all_types_v{version}"
    table = catalog.create_table(
        f"db.{name}",
        Schema(*ALL_TYPES_FIELDS),
        partition_by=["bucket(3, id)", "truncate(4, s)", "day(tstz)"],
        properties={
            "format-version": str(version),
            "write.delete.mode": "merge-on-read",
            "write.update.mode": "merge-on-read",
        },
    )
    full = f"{java_catalog}.db.{name}"
    snapshots = _java_run(
        java_engine,
        warehouse / "db" / name,
        "INSERT INTO {t} SELECT * FROM {c}.db.java_all_types_stage_v{v}",
        "DELETE FROM {t} WHERE id = 5",
        "UPDATE {t} SET s = 'java', lst = array(42L) WHERE id IN (1, 3)",
        t=full,
        c=java_catalog,
        v=str(version),
    )
    table.refresh()
    assert "spark.app.id" in table.snapshot(snapshots[0]).summary  # type: ignore[union-attr]  (Java wrote it)
    rows = [dict(r) for r in ALL_TYPES_ROWS]
    expected = {snapshots[0]: expected_rows(pa.Table.from_pylist(rows, schema=all_types_data().schema))}
    rows = [r for r in rows if r["id"] != 5]
    expected[snapshots[1]] = expected_rows(pa.Table.from_pylist(rows, schema=all_types_data().schema))
    for r in rows:
        if r["id"] in (1, 3):
            r.update(s="java", lst=[42])
    final = pa.Table.from_pylist(rows, schema=all_types_data().schema)
    expected[snapshots[2]] = expected_rows(final)
    for snapshot_id, want in expected.items():
        assert_same_rows(
            f"java@{snapshot_id}",
            java_engine.read(table.metadata_location, snapshot_id=snapshot_id)["rows"],
            want,
        )
        got = _spark_read(spark, table, snapshot_id=snapshot_id)
        assert got["columns"] == ALL_COLUMNS
        assert_same_rows(f"isp.read@{snapshot_id}", got["rows"], want)
        assert_same_rows(f"icefloe@{snapshot_id}", own_rows(table, snapshot_id=snapshot_id)["rows"], want)
    for flt in [*ALL_TYPES_FILTERS, *UUID_FILTERS]:
        want = expected_rows(final, flt.matches)
        assert_same_rows(f"isp {flt}", _spark_read(spark, table, filter=flt.icefloe())["rows"], want)


def test_java_evolved_table_reads_through_spark(
    spark: SparkSession,
    catalog: icefloe.Catalog,
    java_engine: JavaEngine,
    java_catalog: str,
    warehouse: Path,
) -> None:
    """Java renames a column and reuses its name, widens int / float / decimal columns (stored
    dictionary-encoded), drops a column, adds top-level and nested columns, evolves the spec
    and deletes and updates across old and new files: ``isp.read`` reads every snapshot, and
    filters on the evolved columns, exactly as Java does."""
    full, table_dir = f"{java_catalog}.db.java_evolved", warehouse / "db" / "java_evolved"
    java_engine.sql(
        f"""CREATE TABLE {full} (id int, name string, score float, price decimal(9, 2), extra string,
                                 part string)
            USING iceberg PARTITIONED BY (part)
            TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read',
                           'write.update.mode' = 'merge-on-read')"""
    )
    snapshots = _java_run(
        java_engine,
        table_dir,
        """INSERT INTO {t} SELECT cast(id AS int), concat('old', id), cast(id % 5 AS float) / 4,
                                  cast(id % 3 * 1.25 AS decimal(9, 2)), concat('x', id),
                                  element_at(array('p', 'q'), cast(id % 2 + 1 AS int))
                           FROM range(0, 30)""",
        "ALTER TABLE {t} RENAME COLUMN name TO label",
        "ALTER TABLE {t} ADD COLUMN name string",
        "ALTER TABLE {t} ALTER COLUMN id TYPE bigint",
        "ALTER TABLE {t} ALTER COLUMN score TYPE double",
        "ALTER TABLE {t} ALTER COLUMN price TYPE decimal(12, 2)",
        "ALTER TABLE {t} DROP COLUMN extra",
        "ALTER TABLE {t} ADD COLUMN info struct<a: int, b: string>",
        "ALTER TABLE {t} ADD COLUMN info.c double",
        "ALTER TABLE {t} ADD PARTITION FIELD bucket(2, id)",
        """INSERT INTO {t} SELECT id + 100, concat('new', id), id * 1.5, cast(1234567890.12 + id AS decimal(12, 2)),
                                  element_at(array('p', 'q'), cast(id % 2 + 1 AS int)), concat('name', id),
                                  named_struct('a', cast(id AS int), 'b', 'b', 'c', id * 0.1)
                           FROM range(0, 20)""",
        "DELETE FROM {t} WHERE id % 7 = 0",
        "UPDATE {t} SET name = 'upd', info = named_struct('a', 1, 'b', 'u', 'c', 0.5) WHERE id < 10 OR id > 115",
        t=full,
    )
    table = catalog.load_table("db.java_evolved")
    assert len(table.specs()) == 2 and len(table.metadata.schemas) > 5
    for snapshot_id in dict.fromkeys(snapshots):  # ALTERs make no snapshot
        want = java_engine.read(table_dir, snapshot_id=snapshot_id)
        got = _spark_read(spark, table, snapshot_id=snapshot_id)
        assert got["columns"] == want["columns"]
        assert_same_rows(f"isp.read@{snapshot_id}", got["rows"], want["rows"])
        assert_same_rows(
            f"icefloe@{snapshot_id}", own_rows(table, snapshot_id=snapshot_id)["rows"], want["rows"]
        )
    filters = [
        eq("name", "upd"),
        is_null("name"),  # the old files have a column once called "name": it must not be used
        eq("label", "old3"),
        gt("score", 0.5),
        gt("price", D("1000")),
        gt("id", 105),
        eq("part", "p"),
    ]
    for flt in filters:
        want = java_engine.read(table_dir, where=flt.spark())["rows"]
        assert want, f"{flt} selects nothing"
        assert_same_rows(f"isp {flt}", _spark_read(spark, table, filter=flt.icefloe())["rows"], want)
    want = java_engine.read(table_dir, where="info.c > 0.5", columns=["id", "info"])
    got = _spark_read(spark, table, filter="info.c > 0.5", columns=["id", "info"])
    assert_same_rows("nested filter", got["rows"], want["rows"])


_JAVA_READ_WITH_OPTIONS = """
reader = spark.read.format("iceberg")
for key, value in options.items():
    reader = reader.option(key, value)
frame = reader.load(location)
result = {"columns": list(frame.columns), "rows": [list(r) for r in frame.collect()]}
"""


def _java_read_with(java: JavaEngine, table_dir: Path, **options: str) -> dict[str, Any]:
    """Java's read with Spark read options (``branch``, ``tag``, ``as-of-timestamp``,
    ``start-snapshot-id`` ...), rows normalised and sorted."""
    result = java.exec(_JAVA_READ_WITH_OPTIONS, location=str(table_dir), options=options)
    return {"columns": result["columns"], "rows": sorted(result["rows"], key=row_sort_key)}


def test_java_refs_time_travel_and_increments_read_through_spark(
    spark: SparkSession,
    catalog: icefloe.Catalog,
    java_engine: JavaEngine,
    java_catalog: str,
    warehouse: Path,
) -> None:
    """Branches, tags, ``as_of`` and incremental reads of a table Java wrote: ``isp.read``
    returns Java's rows for each."""
    full, table_dir = f"{java_catalog}.db.java_refs", warehouse / "db" / "java_refs"
    java_engine.sql(
        f"""CREATE TABLE {full} (id bigint, v string) USING iceberg PARTITIONED BY (bucket(2, id))
            TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read')"""
    )
    first, second, *_, deleted, last = _java_run(
        java_engine,
        table_dir,
        "INSERT INTO {t} SELECT id, concat('v', id) FROM range(0, 10)",
        "INSERT INTO {t} SELECT id, concat('v', id) FROM range(10, 20)",
        "ALTER TABLE {t} CREATE TAG t1",
        "ALTER TABLE {t} CREATE BRANCH b1",
        "INSERT INTO {t}.branch_b1 VALUES (100, 'on branch')",
        "DELETE FROM {t}.branch_b1 WHERE id = 3",
        "DELETE FROM {t} WHERE id < 5",
        "INSERT INTO {t} SELECT id, concat('v', id) FROM range(20, 25)",
        t=full,
    )
    table = catalog.load_table("db.java_refs")
    assert len({first, second, deleted, last}) == 4
    second_at = table.snapshot(second).timestamp_ms  # type: ignore[union-attr]
    cases: list[tuple[dict[str, Any], dict[str, str]]] = [
        ({"ref": "t1"}, {"tag": "t1"}),
        ({"ref": "b1"}, {"branch": "b1"}),
        ({"ref": "main"}, {}),
        ({"as_of": second_at}, {"as-of-timestamp": str(second_at)}),
        ({"snapshot_id": deleted}, {"snapshot-id": str(deleted)}),
        ({"from_snapshot_id": first}, {"start-snapshot-id": str(first)}),
        (
            {"from_snapshot_id": first, "to_snapshot_id": deleted},
            {"start-snapshot-id": str(first), "end-snapshot-id": str(deleted)},
        ),
    ]
    for ours, javas in cases:
        want = _java_read_with(java_engine, table_dir, **javas)
        got = _spark_read(spark, table, **ours)
        assert got["columns"] == want["columns"], ours
        assert_same_rows(f"isp.read {ours}", got["rows"], want["rows"])
    assert [r[0] for r in _spark_read(spark, table, ref="b1")["rows"]].count(100) == 1
