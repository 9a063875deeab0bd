"""icefloe.spark.write.frames: Spark tasks write valid Iceberg data files (field ids everywhere,
icefloe's transforms, rolling, sort order), committed as one snapshot per mode; a failed job
leaves nothing behind."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icefloe import Catalog, Table
from icefloe import spark as isp
from icefloe.errors import ValidationError, ValidationException
from icefloe.io.local import local_path
from icefloe.spec.properties import SPARK_WRITER
from spark.test_read import ALL_TYPES, _all_types_rows
from support.spark import sorted_tuples, spark_rows


def _data_files_on_disk(table: Table) -> set[str]:
    root = Path(local_path(table.location())) / "data"
    return {str(p) for p in root.rglob("*.parquet")} if root.exists() else set()


def _committed_files(table: Table) -> set[str]:
    return {local_path(t.file.file_path) for t in table.new_scan().plan_files()}


@pytest.mark.every_session
def test_append_every_type_round_trips(spark: object, catalog: Catalog) -> None:
    table = catalog.create_table("db.all", ALL_TYPES, partition_by=["bucket(4, id)", "day(ts)"])
    source = _all_types_rows(150)
    df = spark.createDataFrame(source)  # type: ignore[attr-defined]
    snapshot = isp.write(df, table)
    assert snapshot is not None and snapshot.operation == "append"
    assert table.current_snapshot().snapshot_id == snapshot.snapshot_id
    assert sorted_tuples(table.new_scan().to_arrow()) == sorted_tuples(source)
    assert spark_rows(isp.read(spark, table)) == sorted_tuples(source)
    # Field ids on every field, list elements and map keys / values included.
    for path in _committed_files(table):
        schema = pq.read_schema(path)
        arr = schema.field("arr").type
        assert arr.value_field.metadata[b"PARQUET:field_id"]
        m = schema.field("m").type
        assert m.key_field.metadata[b"PARQUET:field_id"] and m.item_field.metadata[b"PARQUET:field_id"]


@pytest.mark.parametrize(
    "partition_by",
    [
        ["bucket(16, id)"],
        ["truncate(3, s)"],
        ["year(ts)", "month(day)"],
        ["hour(tstz)"],
        ["truncate(10, i)", "s"],
    ],
)
def test_partitions_match_icefloe_transforms(
    spark: object, catalog: Catalog, partition_by: list[str]
) -> None:
    source = _all_types_rows(300)
    by_spark = catalog.create_table("db.spark_part", ALL_TYPES, partition_by=partition_by)
    by_icefloe = catalog.create_table("db.own_part", ALL_TYPES, partition_by=partition_by)
    isp.write(spark.createDataFrame(source), by_spark)  # type: ignore[attr-defined]
    by_icefloe.append(source)

    def per_partition(table: Table) -> Counter[object]:
        counts: Counter[object] = Counter()
        for task in table.new_scan().plan_files():
            counts[task.file.partition] += task.file.record_count
        return counts

    assert per_partition(by_spark) == per_partition(by_icefloe)


def test_overwrite_modes(spark: object, catalog: Catalog) -> None:
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("g", pa.string())])
    table = catalog.create_table("db.ow", schema, partition_by=["g"])
    frame = spark.createDataFrame([(i, "a" if i < 5 else "b") for i in range(10)], "id long, g string")  # type: ignore[attr-defined]
    isp.write(frame, table)
    isp.write(spark.createDataFrame([(100, "a")], "id long, g string"), table, mode="overwrite-partitions")  # type: ignore[attr-defined]
    assert sorted(r[0] for r in spark_rows(isp.read(spark, table))) == [5, 6, 7, 8, 9, 100]
    snap = isp.write(
        spark.createDataFrame([(200, "b")], "id long, g string"), table, mode="overwrite", where="g = 'b'"
    )  # type: ignore[attr-defined]
    assert snap is not None and snap.operation == "overwrite"
    assert sorted(r[0] for r in spark_rows(isp.read(spark, table))) == [100, 200]
    isp.write(
        spark.createDataFrame([(7, "c"), (8, "c")], "id long, g string").coalesce(1), table, mode="overwrite"
    )  # type: ignore[attr-defined]
    assert spark_rows(isp.read(spark, table)) == [(7, "c"), (8, "c")]
    with pytest.raises(ValidationError, match="mode"):
        isp.write(frame, table, mode="upsert")
    # A filter that matches part of a file is refused, and nothing is left behind.
    before = _data_files_on_disk(table)
    with pytest.raises(ValidationException):
        isp.write(
            spark.createDataFrame([(1, "c")], "id long, g string"), table, mode="overwrite", where="id = 7"
        )  # type: ignore[attr-defined]
    assert _data_files_on_disk(table) == before


def test_missing_optional_columns_and_case(spark: object, catalog: Catalog) -> None:
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("note", pa.string())])
    table = catalog.create_table("db.cols", schema)
    isp.write(spark.createDataFrame([(1,)], "ID long"), table)  # type: ignore[attr-defined]
    assert spark_rows(isp.read(spark, table)) == [(1, None)]
    with pytest.raises(ValidationError, match="extra"):
        isp.write(spark.createDataFrame([(1, 2)], "id long, extra int"), table)  # type: ignore[attr-defined]
    with pytest.raises(ValidationError, match="required column 'id'"):
        isp.write(spark.createDataFrame([("x",)], "note string"), table)  # type: ignore[attr-defined]


@pytest.mark.every_session
def test_failed_job_commits_nothing_and_removes_its_files(spark: object, catalog: Catalog) -> None:
    from pyspark.sql import functions as F

    schema = pa.schema([pa.field("id", pa.int64())])
    table = catalog.create_table("db.fail", schema)
    isp.write(spark.createDataFrame([(1,)], "id long"), table)  # type: ignore[attr-defined]
    before_files = _data_files_on_disk(table)
    before_snapshot = table.current_snapshot().snapshot_id

    def fail_on_last(value):  # type: ignore[no-untyped-def]
        if value == 3999:
            raise RuntimeError("boom")
        return value

    explode_late = F.udf(fail_on_last, "long")

    frame = spark.range(4000, numPartitions=4).select(explode_late("id").alias("id"))  # type: ignore[attr-defined]
    with pytest.raises(Exception, match="boom"):
        isp.write(frame, table)
    assert table.refresh().current_snapshot().snapshot_id == before_snapshot
    assert _data_files_on_disk(table) == before_files


@pytest.mark.every_session
def test_rolls_files_and_sorts(spark: object, catalog: Catalog) -> None:
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("payload", pa.string())])
    table = catalog.create_table(
        "db.roll",
        schema,
        sort_by=["id DESC"],
        # icefloe's writer rolls at the size itself (Spark's rolls by rows: test_write_spark_writer)
        properties={"write.target-file-size-bytes": str(64 * 1024), SPARK_WRITER: "icefloe"},
    )
    frame = spark.range(20000, numPartitions=2).selectExpr("id", "sha2(cast(id as string), 256) as payload")  # type: ignore[attr-defined]
    isp.write(frame, table)
    files = [t.file for t in table.new_scan().plan_files()]
    assert len(files) > 4
    assert all(f.file_size_in_bytes < 64 * 1024 * 1.5 for f in files)
    for f in files:
        ids = pq.read_table(local_path(f.file_path)).column("id").to_pylist()
        assert ids == sorted(ids, reverse=True)
        assert f.sort_order_id == table.sort_order().order_id
    assert table.new_scan().count() == 20000
    assert os.path.exists(local_path(table.location()))


NESTED = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("point", pa.struct([pa.field("x", pa.float64()), pa.field("y", pa.float64())])),
        pa.field("tags", pa.list_(pa.struct([pa.field("k", pa.string()), pa.field("v", pa.int64())]))),
        pa.field(
            "attrs", pa.map_(pa.string(), pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.string())]))
        ),
    ]
)


def test_nested_fields_match_by_name_not_position(spark: object, catalog: Catalog) -> None:
    # Spark casts structs by position: fields in another order (and case) must not swap values.
    table = catalog.create_table("db.nested", NESTED)
    df = spark.sql(  # type: ignore[attr-defined]
        """SELECT id,
                  if(id = 2, null, named_struct('Y', id * -1.0D, 'x', id * 1.0D)) AS point,
                  array(named_struct('v', id, 'K', concat('k', id)), null) AS tags,
                  map('m', named_struct('b', concat('b', id), 'a', cast(id AS int))) AS attrs
           FROM range(4)"""
    )
    isp.write(df, table)
    rows = sorted(table.new_scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    assert rows[1] == {
        "id": 1,
        "point": {"x": 1.0, "y": -1.0},
        "tags": [{"k": "k1", "v": 1}, None],
        "attrs": [("m", {"a": 1, "b": "b1"})],
    }
    assert rows[2]["point"] is None and rows[3]["point"] == {"x": 3.0, "y": -3.0}

    # A missing optional nested field is written as null; a field the table lacks is refused.
    isp.write(spark.sql("SELECT 9L AS id, named_struct('x', 1.5D) AS point"), table)  # type: ignore[attr-defined]
    assert table.new_scan().filter("id = 9").to_arrow().to_pylist()[0]["point"] == {"x": 1.5, "y": None}
    bad = spark.sql("SELECT 10L AS id, named_struct('x', 1.0D, 'z', 2.0D) AS point")  # type: ignore[attr-defined]
    with pytest.raises(ValidationError, match=r"fields \['z'\] of column 'point'"):
        isp.write(bad, table)


@pytest.mark.every_session
@pytest.mark.parametrize("writer", ["icefloe", "spark"])
def test_null_in_a_required_column_is_a_typed_error_on_the_driver(
    spark: object, catalog: Catalog, writer: str
) -> None:
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("note", pa.string())])
    table = catalog.create_table("db.required", schema, properties={"icefloe.spark.writer": writer})
    frame = spark.createDataFrame([(1, "a"), (None, "b")], "id long, note string")  # type: ignore[attr-defined]
    with pytest.raises(ValidationError, match="required column 'id'") as raised:
        isp.write(frame, table)
    assert "Traceback" not in str(raised.value) and raised.value.__cause__ is None
    assert table.refresh().current_snapshot() is None
