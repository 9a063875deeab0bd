"""The ``icefloe`` Spark data source (batch): reads give exactly the rows icefloe's own scan gives
(time travel, deletes, filters), pushed filters prune files, writes commit one snapshot and a
failed write leaves nothing behind.

Spark runs a Python data source in its own Python workers, which do not see this process's
environment changes; the tests name their catalog through the data source's ``catalog`` /
``catalog.<key>`` options.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from icefloe import Catalog, Table
from icefloe import spark as isp
from icefloe.io.local import local_path
from icefloe.spark.datasource.source import IcefloeDataSource
from spark.test_read import ALL_TYPES, _all_types_rows
from support.spark import is_connect, sorted_tuples, spark_rows


def catalog_options(catalog: Catalog) -> dict[str, str]:
    """The options that make the data source load tables from ``catalog``."""
    return {"catalog": catalog.name, **{f"catalog.{k}": v for k, v in catalog.properties.items()}}


def reader(spark: Any, catalog: Catalog, **options: Any) -> Any:
    isp.register(spark)
    return spark.read.format("icefloe").options(**catalog_options(catalog)).options(**options)


def writer(df: Any, catalog: Catalog, mode: str = "append", **options: Any) -> Any:
    isp.register(df.sparkSession)
    return df.write.format("icefloe").options(**catalog_options(catalog)).options(**options).mode(mode)


def _data_files_on_disk(table: Table) -> set[str]:
    root = Path(local_path(table.location())) / "data"
    return {str(p) for p in root.rglob("*.parquet")} if root.exists() else set()


@pytest.fixture
def pushdown(spark: Any) -> Any:
    """Filter pushdown on for the test (the data source's ``push-filters`` needs it)."""
    key = "spark.sql.python.filterPushdown.enabled"
    before = spark.conf.get(key, None)
    spark.conf.set(key, "true")
    try:
        yield {"push-filters": "true"}
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)


@pytest.fixture
def typed_table(catalog: Catalog) -> Table:
    table = catalog.create_table("db.typed", ALL_TYPES, partition_by=["day(ts)"])
    table.append(_all_types_rows(200))
    table.append(_all_types_rows(100, start=200))
    return table


# ---------------------------------------------------------------------------------------------
# Reads


@pytest.mark.every_session
def test_register_twice_and_read_every_type(spark: Any, catalog: Catalog, typed_table: Table) -> None:
    isp.register(spark)
    frame = reader(spark, catalog).load("db.typed")
    assert frame.columns == [f.name for f in ALL_TYPES]
    assert frame.schema["id"].nullable  # read form: files may predate a required column
    assert spark_rows(frame) == sorted_tuples(typed_table.new_scan().to_arrow())
    assert frame.count() == 300


def test_time_travel(spark: Any, catalog: Catalog) -> None:
    table = catalog.create_table("db.tt", pa.schema([pa.field("id", pa.int64())]))
    table.append(pa.table({"id": [1]}))
    first = table.current_snapshot()
    table.append(pa.table({"id": [2]}))
    second = table.current_snapshot()
    table.manage_snapshots().create_tag("v1", first.snapshot_id).create_branch(
        "b", second.snapshot_id
    ).commit()
    table.append(pa.table({"id": [3]}))
    table.update_schema().add_column("extra", "string").commit()

    def rows(**options: Any) -> list[tuple[Any, ...]]:
        return spark_rows(reader(spark, catalog, **options).load("db.tt"))

    assert rows(**{"snapshot-id": first.snapshot_id}) == [(1,)]  # that snapshot's schema
    assert rows(**{"as-of-timestamp": second.timestamp_ms}) == [(1,), (2,)]
    assert rows(tag="v1") == [(1,)]
    assert rows(branch="b") == [(1, None), (2, None)]  # a branch reads with the current schema
    assert rows() == [(1, None), (2, None), (3, None)]
    with pytest.raises(Exception, match="at most one of snapshot-id, tag"):
        rows(**{"snapshot-id": first.snapshot_id, "tag": "v1"})
    with pytest.raises(Exception, match="no snapshot 12345"):
        rows(**{"snapshot-id": 12345})


@pytest.mark.every_session
def test_loaded_frame_reads_the_snapshot_it_was_loaded_at(spark: Any, catalog: Catalog) -> None:
    table = catalog.create_table("db.pin", pa.schema([pa.field("id", pa.int64())]))
    table.append(pa.table({"id": [1]}))
    frame = reader(spark, catalog).load("db.pin")
    table.append(pa.table({"id": [2]}))
    # Spark Connect sends the unresolved plan with every action, so the server loads the table
    # afresh each time (Java Iceberg's source behaves the same there); a classic DataFrame keeps
    # the snapshot it was loaded at.
    assert spark_rows(frame) == ([(1,), (2,)] if is_connect(spark) else [(1,)])
    assert spark_rows(reader(spark, catalog).load("db.pin")) == [(1,), (2,)]


@pytest.mark.every_session
@pytest.mark.parametrize("version", [2, 3])
def test_position_deletes_applied(spark: Any, catalog: Catalog, version: int) -> None:
    table = catalog.create_table(
        "db.mor",
        ALL_TYPES,
        partition_by=["day"],
        properties={"format-version": str(version), "write.delete.mode": "merge-on-read"},
    )
    table.append(_all_types_rows(120))
    table.delete("id < 10")
    table.delete("s = 'name-4'")
    assert any(t.deletes for t in table.new_scan().plan_files())
    rows = spark_rows(reader(spark, catalog).load("db.mor"))
    assert rows == sorted_tuples(table.new_scan().to_arrow())
    assert len(rows) < 110 and not any(r[0] < 10 for r in rows)


@pytest.mark.every_session
def test_equality_deletes_applied(spark: Any, catalog: Catalog) -> None:
    from icefloe.write import write_equality_deletes

    schema = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string()), pa.field("g", pa.int32())])
    table = catalog.create_table("db.eq", schema, partition_by=["g"])
    table.append(
        pa.table(
            {
                "id": list(range(20)),
                "name": [f"n{i}" if i % 5 else None for i in range(20)],
                "g": pa.array([i % 2 for i in range(20)], pa.int32()),
            }
        )
    )
    deletes = write_equality_deletes(
        table.io(),
        table_location=table.location(),
        properties=table.properties(),
        schema=table.schema(),
        spec=table.spec(),
        equality_ids=["name", "g"],
        data=pa.table({"name": ["n3", None], "g": pa.array([1, 0], pa.int32())}),
        row_schema=table.schema().select("name", "g"),
    )
    delta = table.new_row_delta()
    for d in deletes:
        delta = delta.add_deletes(d)
    delta.commit()
    table.append(pa.table({"id": [100], "name": ["n3"], "g": pa.array([1], pa.int32())}))
    rows = spark_rows(reader(spark, catalog).load("db.eq"))
    assert rows == sorted_tuples(table.new_scan().to_arrow())
    ids = [r[0] for r in rows]
    assert 3 not in ids and 0 not in ids and 10 not in ids and 100 in ids and 5 in ids
    assert len(ids) == 18


@pytest.mark.every_session
def test_filter_option_and_pushed_filters_match_icefloe(
    spark: Any, catalog: Catalog, typed_table: Table, pushdown: dict[str, str]
) -> None:
    frame = reader(spark, catalog, filter="i > 30 AND s IS NOT NULL").load("db.typed")
    assert spark_rows(frame) == sorted_tuples(
        typed_table.new_scan().filter("i > 30 AND s IS NOT NULL").to_arrow()
    )
    cases = {
        "id < 50 AND s LIKE 'name-1%'": "id < 50 AND s LIKE 'name-1%'",
        "NOT (i = 3) AND b": "i != 3 AND b = true",
        "i IN (3, 6, 9) OR id = 7": "i IN (3, 6, 9) OR id = 7",
        "day >= DATE '2024-01-20' AND tstz < TIMESTAMP '2024-01-02 00:00:00'": (
            "day >= DATE '2024-01-20' AND tstz < TIMESTAMP '2024-01-02T00:00:00+00:00'"
        ),
        "ts > TIMESTAMP_NTZ '2024-01-02 10:00:00'": "ts > TIMESTAMP '2024-01-02T10:00:00'",
        "dec <= 0.2 AND s IS NULL": "dec <= 0.2 AND s IS NULL",
        "f > 10": "f > 10 OR f IS NAN",  # Spark's NaN is above every number: not pushed
    }
    for spark_where, iceberg_where in cases.items():
        # A fresh DataFrame per query: PySpark 4.3 reuses a pushed-down plan for later scans of
        # the same DataFrame (see icefloe.spark.datasource.reader).
        frame = reader(spark, catalog, **pushdown).load("db.typed")
        got = spark_rows(frame.filter(spark_where))
        assert got == sorted_tuples(typed_table.new_scan().filter(iceberg_where).to_arrow()), spark_where
        assert got, spark_where


def test_same_frame_filtered_then_unfiltered_without_pushdown(spark: Any, catalog: Catalog) -> None:
    table = catalog.create_table(
        "db.reuse", pa.schema([pa.field("id", pa.int64()), pa.field("s", pa.string())])
    )
    table.append(pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]}))
    frame = reader(spark, catalog).load("db.reuse")
    assert spark_rows(frame.filter("id = 2")) == [(2, "b")]
    assert spark_rows(frame) == [(1, "a"), (2, "b"), (3, "c")]
    assert spark_rows(frame.filter("s = 'c' OR id = 1")) == [(1, "a"), (3, "c")]


def test_pushed_filter_prunes_files(spark: Any, catalog: Catalog, pushdown: dict[str, str]) -> None:
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("part", pa.string())])
    table = catalog.create_table("db.pruned", schema, partition_by=["part"])
    table.append(pa.table({"id": [1, 2, 3, 4], "part": ["a", "a", "b", "c"]}))
    # Remove the files of partition 'b' behind the table's back: only a read that prunes
    # them by the pushed filter still works.
    for task in table.new_scan().filter("part = 'b'").plan_files():
        os.remove(local_path(task.file.file_path))

    def frame() -> Any:
        return reader(spark, catalog, **pushdown).load("db.pruned")

    assert spark_rows(frame().filter("part = 'a'")) == [(1, "a"), (2, "a")]
    assert spark_rows(frame().filter("part IN ('a', 'c') AND id > 1")) == [(2, "a"), (4, "c")]
    assert spark_rows(reader(spark, catalog, filter="part = 'c'").load("db.pruned")) == [(4, "c")]
    with pytest.raises(Exception, match="part=b"):
        frame().filter("id > 0").collect()
    with pytest.raises(Exception, match="part=b"):  # without pushdown, nothing is pruned
        reader(spark, catalog).load("db.pruned").filter("part = 'a'").collect()


def test_user_schema_selects_columns(spark: Any, catalog: Catalog) -> None:
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("s", pa.string()), pa.field("x", pa.int32())])
    table = catalog.create_table("db.sel", schema)
    table.append(pa.table({"id": [1, 2], "s": ["a", "b"], "x": pa.array([5, 6], pa.int32())}))
    frame = reader(spark, catalog).schema("s string, id long").load("db.sel")
    assert spark_rows(frame) == [("a", 1), ("b", 2)]
    with pytest.raises(Exception, match="column 'nope' of the given schema is not in the table"):
        reader(spark, catalog).schema("nope string").load("db.sel").collect()


def test_uuid_fixed_and_metadata_file(spark: Any, catalog: Catalog) -> None:
    from icefloe.spec.schema import Schema
    from icefloe.spec.types import FixedType, LongType, NestedField, UUIDType

    schema = Schema(
        NestedField(1, "id", LongType()), NestedField(2, "u", UUIDType()), NestedField(3, "fx", FixedType(4))
    )
    table = catalog.create_table("db.uu", schema)
    values = [uuid.UUID(int=i * 7919) for i in range(3)]
    table.append(
        pa.table(
            {
                "id": list(range(3)),
                "u": pa.array([v.bytes for v in values], pa.binary(16)),
                "fx": pa.array([b"abcd"] * 3, pa.binary(4)),
            }
        )
    )
    expected = [(i, str(values[i]), b"abcd") for i in range(3)]
    assert spark_rows(reader(spark, catalog).load("db.uu")) == expected
    location = table.metadata_location
    assert location is not None
    isp.register(spark)
    assert spark_rows(spark.read.format("icefloe").load(location)) == expected


@pytest.mark.every_session
def test_empty_table_and_missing_table(spark: Any, catalog: Catalog) -> None:
    catalog.create_table("db.empty", pa.schema([pa.field("id", pa.int64())]))
    frame = reader(spark, catalog).load("db.empty")
    assert frame.columns == ["id"] and frame.count() == 0
    # On Spark Connect a load is analysed on the server when its schema is first needed.
    with pytest.raises(Exception, match="NoSuchTableError"):
        reader(spark, catalog).load("db.missing").schema  # noqa: B018 (analysis raises)
    with pytest.raises(Exception, match="needs a table"):
        reader(spark, catalog).load().schema  # noqa: B018 (analysis raises)


# ---------------------------------------------------------------------------------------------
# Writes

_SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("part", pa.string())])


def _both_readers(spark: Any, table: Table) -> list[tuple[Any, ...]]:
    table.refresh()
    own = sorted_tuples(table.new_scan().to_arrow())
    assert spark_rows(isp.read(spark, table)) == own
    return own


@pytest.mark.every_session
def test_write_append_and_overwrite(spark: Any, catalog: Catalog) -> None:
    table = catalog.create_table("db.w", _SCHEMA, partition_by=["part"])
    df = spark.createDataFrame([(1, "a"), (2, "b"), (3, "b")], "ID long, part string")  # names: any case
    writer(df, catalog).save("db.w")
    table.refresh()
    assert table.current_snapshot().operation == "append"
    assert _both_readers(spark, table) == [(1, "a"), (2, "b"), (3, "b")]
    writer(spark.createDataFrame([(4, "c")], "id int, part string"), catalog).option("path", "db.w").save()
    assert _both_readers(spark, table) == [(1, "a"), (2, "b"), (3, "b"), (4, "c")]
    assert len(table.snapshots()) == 2

    writer(spark.createDataFrame([(9, "b")], "id long, part string"), catalog, "overwrite").save("db.w")
    assert _both_readers(spark, table) == [(9, "b")]
    assert table.current_snapshot().operation == "overwrite"


def test_write_dynamic_overwrite_and_branch(spark: Any, catalog: Catalog) -> None:
    table = catalog.create_table("db.dyn", _SCHEMA, partition_by=["part"])
    table.append(pa.table({"id": [1, 2, 3], "part": ["a", "b", "c"]}, schema=_SCHEMA))
    df = spark.createDataFrame([(20, "b"), (21, "b")], "id long, part string")
    writer(df, catalog, "overwrite", **{"overwrite-mode": "dynamic"}).save("db.dyn")
    assert _both_readers(spark, table) == [(1, "a"), (20, "b"), (21, "b"), (3, "c")]
    main = table.current_snapshot().snapshot_id
    writer(spark.createDataFrame([(5, "e")], "id long, part string"), catalog, branch="audit").save("db.dyn")
    table.refresh()
    assert table.current_snapshot().snapshot_id == main
    branch_rows = sorted_tuples(table.new_scan().use_ref("audit").to_arrow())
    assert (5, "e") in branch_rows and len(branch_rows) == 5


def test_write_rejects_columns_naming_them(spark: Any, catalog: Catalog) -> None:
    catalog.create_table("db.bad", _SCHEMA)
    cases = [
        (
            spark.createDataFrame([(1, "a", 2)], "id long, part string, zz int"),
            r"columns \['zz'\] are not in",
        ),
        (spark.createDataFrame([("a",)], "part string"), "required column 'id' is missing"),
        (
            spark.createDataFrame([("x", "a")], "id string, part string"),
            "column 'id': a DataFrame column of type",
        ),
    ]
    for df, message in cases:
        with pytest.raises(Exception, match=message):
            writer(df, catalog).save("db.bad")
    table = catalog.load_table("db.bad")
    assert table.current_snapshot() is None and not _data_files_on_disk(table)


@pytest.mark.every_session
def test_failed_write_leaves_no_files_and_no_snapshot(spark: Any, catalog: Catalog) -> None:
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType

    table = catalog.create_table("db.fail", _SCHEMA, partition_by=["part"])

    def boom(value):  # type: ignore[no-untyped-def]  # (type hints would make it a pandas UDF)
        if value == 57:
            raise RuntimeError("task failure on purpose")
        return value

    udf = F.udf(boom, LongType())
    # Several partitions: some tasks finish (and write files) before one fails.
    df = spark.range(0, 120, 1, 6).select(
        udf(F.col("id")).alias("id"), (F.col("id") % 3).cast("string").alias("part")
    )
    with pytest.raises(Exception, match="task failure on purpose"):
        writer(df, catalog).save("db.fail")
    table.refresh()
    assert table.current_snapshot() is None
    assert _data_files_on_disk(table) == set()


def test_writer_commits_and_aborts_directly(spark: Any, catalog: Catalog) -> None:
    """Abort after a commit the catalog took keeps the files; abort of an uncommitted write
    deletes them."""
    from pyspark.sql.datasource import CaseInsensitiveDict
    from pyspark.sql.types import StructType

    table = catalog.create_table("db.direct", _SCHEMA)
    options = CaseInsensitiveDict({"path": "db.direct", **catalog_options(catalog)})
    schema = StructType.fromDDL("id long, part string")
    batch = pa.record_batch({"id": [1, 2], "part": ["x", "y"]})

    source = IcefloeDataSource(options)
    first = source.writer(schema, False)
    message = first.write(iter([batch]))
    first.commit([message])
    first.abort([message])  # Spark calls abort when commit raised, even after the catalog took it
    assert _both_readers(spark, table) == [(1, "x"), (2, "y")]

    second = source.writer(schema, False)
    message = second.write(iter([batch]))
    written = {local_path(f.file_path) for f in message.files}
    assert written and all(os.path.exists(p) for p in written)
    second.abort([message, None])
    assert not any(os.path.exists(p) for p in written)
    assert _both_readers(spark, table) == [(1, "x"), (2, "y")]
