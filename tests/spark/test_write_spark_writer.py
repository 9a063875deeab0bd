"""isp.write through Spark's own Parquet writer (tables without lists, maps, uuids ...): the
files are valid Iceberg data files (field ids, INT64 timestamps, required columns), grouped
exactly as icefloe's transforms partition whatever the session time zone, described from their
footers, and the session is left as it was."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icefloe import Catalog, Table
from icefloe import spark as isp
from icefloe.errors import CommitStateUnknownException, UnsupportedFeatureError, ValidationError
from icefloe.io.local import local_path
from icefloe.spark.jobs import session_settings
from icefloe.spec.properties import SPARK_WRITER
from spark.test_read import ALL_TYPES
from support.catalogs import make_catalog, memory_backend
from support.spark import sorted_tuples, spark_rows

# Every type of test_read.ALL_TYPES but the list and the map.
FLAT = pa.schema([f for f in ALL_TYPES if f.name not in ("arr", "m")])
EPOCH = dt.datetime(1970, 1, 1)


def _flat_rows(n: int) -> pa.Table:
    """Values on both sides of 1970 and of zero (floor division), nulls, empty strings and
    multi-byte characters (truncation by code points)."""
    rows = []
    for k in range(n):
        signed = k - n // 2
        rows.append(
            {
                "id": signed * 7919,
                "b": k % 2 == 0 if k % 7 else None,
                "i": signed * 37 if k % 5 else None,
                "f": float("nan") if k % 11 == 0 else k / 4,
                "d": -k / 8,
                "dec": Decimal(signed) / 1000,
                "day": dt.date(1970, 1, 1) + dt.timedelta(days=signed * 13),
                "ts": EPOCH + dt.timedelta(minutes=97 * signed, microseconds=k),
                "tstz": dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=3607 * signed),
                "s": ["", "é", "日本語テキスト", f"name-{k % 13}", None][k % 5],
                "bin": bytes([k % 256, 1, 2])[: k % 4],
                "st": {"x": k, "y": str(k)} if k % 4 else None,
            }
        )
    return pa.Table.from_pylist(rows, schema=FLAT)


def _files(table: Table) -> list[Any]:
    return [t.file for t in table.new_scan().plan_files()]


def _written_by_spark(path: str) -> bool:
    metadata = pq.read_metadata(local_path(path)).metadata or {}
    return b"org.apache.spark.version" in metadata


@pytest.fixture
def los_angeles(spark: Any) -> Iterator[None]:
    """A session time zone far from UTC: the groupings must not depend on it."""
    before = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/Los_Angeles")
    try:
        yield
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)


@pytest.mark.every_session
def test_flat_table_round_trips_through_sparks_writer(spark: Any, catalog: Catalog) -> None:
    table = catalog.create_table("db.flat", FLAT)
    source = _flat_rows(400)
    isp.write(spark.createDataFrame(source).repartition(3), table)
    files = _files(table)
    assert files and all(_written_by_spark(f.file_path) for f in files)
    assert sorted_tuples(table.new_scan().to_arrow()) == sorted_tuples(source)
    assert spark_rows(isp.read(spark, table)) == sorted_tuples(source)
    for f in files:
        schema = pq.read_schema(local_path(f.file_path))
        assert schema.field("id").nullable is False  # required stays required
        assert schema.field("i").nullable is True
        assert schema.field("tstz").type == pa.timestamp("us", tz="UTC")  # INT64, not INT96
        assert schema.field("ts").type == pa.timestamp("us")
        assert schema.field("st").type.field("y").metadata[b"PARQUET:field_id"]
        assert f.record_count > 0 and f.split_offsets
        # Footer metrics: NaN never becomes a bound, and filters prune correctly with them.
        assert f.lower_bounds and f.upper_bounds
    expected = sorted(r["id"] for r in source.to_pylist() if r["f"] == r["f"] and r["f"] > 50)
    assert sorted(table.new_scan().filter("f > 50").to_arrow().column("id").to_pylist()) == expected


@pytest.mark.parametrize(
    "partition_by",
    [
        ["id", "b", "i"],
        ["day", "ts", "tstz"],
        ["s", "bin"],
        ["truncate(10, i)", "truncate(1000, id)"],
        ["truncate(2, s)", "truncate(2, bin)"],
        ["year(ts)", "month(tstz)", "day(day)"],
        ["hour(ts)"],
        ["hour(tstz)", "year(day)"],
        ["day(tstz)", "month(ts)"],
    ],
)
def test_partitions_group_as_icefloe_transforms(
    spark: Any, catalog: Catalog, los_angeles: None, partition_by: list[str]
) -> None:
    source = _flat_rows(300)
    by_spark = catalog.create_table("db.spark_part", FLAT, partition_by=partition_by)
    by_icefloe = catalog.create_table("db.own_part", FLAT, partition_by=partition_by)
    isp.write(spark.createDataFrame(source).repartition(2), by_spark)
    by_icefloe.append(source)

    def per_partition(table: Table) -> Counter[object]:
        counts: Counter[object] = Counter()
        for f in _files(table):
            counts[f.partition] += f.record_count
        return counts

    assert all(_written_by_spark(f.file_path) for f in _files(by_spark))
    assert per_partition(by_spark) == per_partition(by_icefloe)
    assert sorted_tuples(by_spark.new_scan().to_arrow()) == sorted_tuples(source)
    # Files sit where the table's layout puts them (Java's names, partition paths).
    for f in _files(by_spark):
        relative = f.file_path.split("/data/", 1)[1]
        assert relative.count("/") == len(partition_by)
        assert "icefloe-staging" not in relative


def test_writer_choice_and_fallback(spark: Any, catalog: Catalog) -> None:
    frame = spark.createDataFrame(_flat_rows(50))
    forced = catalog.create_table("db.forced", FLAT, properties={SPARK_WRITER: "icefloe"})
    isp.write(frame, forced)
    assert not any(_written_by_spark(f.file_path) for f in _files(forced))
    # bucket has no exact Spark grouping: icefloe's writer takes the table.
    bucketed = catalog.create_table("db.bucketed", FLAT, partition_by=["bucket(4, id)"])
    isp.write(frame, bucketed)
    assert not any(_written_by_spark(f.file_path) for f in _files(bucketed))
    bucketed.update_properties().set(SPARK_WRITER, "spark").commit()
    with pytest.raises(UnsupportedFeatureError, match="partition spec"):
        isp.write(frame, bucketed)
    forced.update_properties().set(SPARK_WRITER, "fastest").commit()
    with pytest.raises(ValidationError, match=SPARK_WRITER):
        isp.write(frame, forced)


@pytest.mark.every_session
def test_required_null_fails_and_leaves_nothing(spark: Any, catalog: Catalog) -> None:
    table = catalog.create_table("db.req", FLAT)
    data = Path(local_path(table.location())) / "data"
    frame = spark.createDataFrame([(1,), (None,)], "id long")
    with pytest.raises(ValidationError, match="required column 'id'"):
        isp.write(frame, table)
    assert table.refresh().current_snapshot() is None
    assert not data.exists() or not any(data.rglob("*"))


def test_session_settings_are_restored(spark: Any, catalog: Catalog) -> None:
    key = "spark.sql.parquet.outputTimestampType"
    spark.conf.set(key, "INT96")
    try:
        table = catalog.create_table("db.conf", FLAT)
        isp.write(spark.createDataFrame(_flat_rows(20)), table)
        assert spark.conf.get(key) == "INT96"
        assert all(
            pq.read_schema(local_path(f.file_path)).field("tstz").type.unit == "us" for f in _files(table)
        )
    finally:
        spark.conf.unset(key)
    assert spark.conf.get("spark.sql.parquet.datetimeRebaseModeInWrite", None) is None


def test_overlapping_session_settings_restore_the_sessions_own(spark: Any, catalog: Catalog) -> None:
    batch = "spark.sql.execution.arrow.maxRecordsPerBatch"
    zone = "spark.sql.session.timeZone"
    own_zone = spark.conf.get(zone)
    outer = session_settings(spark, {batch: "777", zone: "Asia/Tokyo"})
    inner = session_settings(spark, {batch: "888"})
    outer.__enter__()
    inner.__enter__()
    assert spark.conf.get(batch) == "777"  # the first block in set it
    outer.__exit__(None, None, None)
    assert (spark.conf.get(batch), spark.conf.get(zone)) == ("777", own_zone)  # held by `inner`
    inner.__exit__(None, None, None)
    assert spark.conf.get(batch) == "10000"  # unset again: Spark's default
    # icefloe's writer takes larger Arrow batches for its job only, unless the session chose.
    table = catalog.create_table("db.batches", FLAT, properties={SPARK_WRITER: "icefloe"})
    isp.write(spark.createDataFrame(_flat_rows(20)), table)
    assert spark.conf.get(batch) == "10000"
    spark.conf.set(batch, "5000")
    try:
        isp.write(spark.createDataFrame(_flat_rows(20)), table)
        assert spark.conf.get(batch) == "5000"
    finally:
        spark.conf.unset(batch)
    assert table.refresh().scan().to_arrow().num_rows == 40


def test_rolls_by_the_tables_bytes_per_row(spark: Any, catalog: Catalog) -> None:
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("payload", pa.string())])
    target = 64 * 1024
    table = catalog.create_table(
        "db.roll", schema, sort_by=["id DESC"], properties={"write.target-file-size-bytes": str(target)}
    )
    frame = spark.range(20000, numPartitions=2).selectExpr("id", "sha2(cast(id as string), 256) as payload")
    isp.write(frame, table)  # no data yet: rows per file from the schema's widths
    first = {f.file_path for f in _files(table)}
    isp.write(frame, table)  # now from the table's measured bytes per row
    second = [f for f in _files(table) if f.file_path not in first]
    assert len(second) > 4
    sizes = sorted(f.file_size_in_bytes for f in second)
    assert sizes[-1] < target * 1.5 and sizes[len(sizes) // 2] > target * 0.5  # tails are smaller
    for f in second:
        assert _written_by_spark(f.file_path)
        ids = pq.read_table(local_path(f.file_path)).column("id").to_pylist()
        assert ids == sorted(ids, reverse=True)
        assert f.sort_order_id == table.sort_order().order_id


def test_empty_frame_writes_nothing(spark: Any, catalog: Catalog) -> None:
    table = catalog.create_table("db.empty", FLAT)
    frame = spark.createDataFrame(_flat_rows(10)).limit(0).repartition(2)
    assert isp.write(frame, table) is None
    assert table.refresh().current_snapshot() is None
    data = Path(local_path(table.location())) / "data"
    assert not data.exists() or not any(data.rglob("*.parquet"))


@pytest.mark.every_session
@pytest.mark.parametrize("writer", ["spark", "icefloe"])
def test_unknown_commit_outcome_keeps_the_files(spark: Any, warehouse: Path, writer: str) -> None:
    """The catalog takes the commit but its answer is lost: the files may be (and here are)
    referenced by the new snapshot, so neither writer nor a rewrite deletes them."""
    catalog = make_catalog("memory", warehouse)
    try:
        table = catalog.create_table("db.unknown", FLAT, properties={SPARK_WRITER: writer})
        source = _flat_rows(60)
        memory_backend(catalog).commit_then_raise(1)
        with pytest.raises(CommitStateUnknownException):
            isp.write(spark.createDataFrame(source).repartition(2), table)
        table = catalog.load_table("db.unknown")
        assert sorted_tuples(table.new_scan().to_arrow()) == sorted_tuples(source)
        memory_backend(catalog).commit_then_raise(1)
        with pytest.raises(CommitStateUnknownException):
            isp.actions.rewrite_data_files(
                spark, table, options={"min-input-files": "1", "rewrite-all": "true"}
            )
        table = catalog.load_table("db.unknown")
        assert table.current_snapshot().operation == "replace"
        assert sorted_tuples(table.new_scan().to_arrow()) == sorted_tuples(source)
    finally:
        catalog.backend.close()
