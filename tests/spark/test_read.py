"""icefloe.spark.read.frames: Spark's Parquet reader over icefloe's plan gives exactly the rows
icefloe's own reader gives (which the interop tests hold to Java's), across schema evolution,
deletes of every kind, time travel and incremental reads."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal
from pathlib import Path
from urllib.parse import quote_plus

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icefloe import Catalog, DataFile, Table
from icefloe import spark as isp
from icefloe.spark.paths import reported_path
from icefloe.write import footer_metrics
from support.spark import sorted_tuples, spark_rows


def _same(spark: object, table: Table, **kwargs: object) -> list[tuple[object, ...]]:
    """Rows of isp.read, asserted equal to icefloe's own scan with the same arguments."""
    got = spark_rows(isp.read(spark, table, **kwargs))
    scan = table.new_scan()
    if kwargs.get("filter") is not None:
        scan = scan.filter(kwargs["filter"])
    if kwargs.get("columns") is not None:
        scan = scan.select(*kwargs["columns"])
    if kwargs.get("snapshot_id") is not None:
        scan = scan.use_snapshot(kwargs["snapshot_id"])
    expected = sorted_tuples(scan.to_arrow())
    assert got == expected
    return got


ALL_TYPES = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("b", pa.bool_()),
        pa.field("i", pa.int32()),
        pa.field("f", pa.float32()),
        pa.field("d", pa.float64()),
        pa.field("dec", pa.decimal128(12, 3)),
        pa.field("day", pa.date32()),
        pa.field("ts", pa.timestamp("us")),
        pa.field("tstz", pa.timestamp("us", tz="UTC")),
        pa.field("s", pa.string()),
        pa.field("bin", pa.binary()),
        pa.field("st", pa.struct([pa.field("x", pa.int32()), pa.field("y", pa.string())])),
        pa.field("arr", pa.list_(pa.int64())),
        pa.field("m", pa.map_(pa.string(), pa.float64())),
    ]
)


def _all_types_rows(n: int, start: int = 0) -> pa.Table:
    rows = []
    for k in range(start, start + n):
        rows.append(
            {
                "id": k,
                "b": k % 2 == 0 if k % 7 else None,
                "i": k * 3 if k % 5 else None,
                "f": float("nan") if k % 11 == 0 else k / 4,
                "d": -k / 8,
                "dec": Decimal(k) / 1000,
                "day": dt.date(2024, 1, 1) + dt.timedelta(days=k % 40),
                "ts": dt.datetime(2024, 1, 1) + dt.timedelta(minutes=17 * k),
                "tstz": dt.datetime(2024, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=1013 * k),
                "s": f"name-{k % 13}" if k % 3 else None,
                "bin": bytes([k % 256, 1, 2]),
                "st": {"x": k, "y": str(k)} if k % 4 else None,
                "arr": [k, k + 1] if k % 6 else [],
                "m": {"a": 1.5, f"k{k}": float(k)} if k % 2 else None,
            }
        )
    return pa.Table.from_pylist(rows, schema=ALL_TYPES)


@pytest.fixture
def typed_table(catalog: Catalog) -> Table:
    table = catalog.create_table("db.typed", ALL_TYPES, partition_by=["day(ts)"])
    table.append(_all_types_rows(200))
    table.append(_all_types_rows(100, start=200))
    return table


@pytest.mark.every_session
def test_reads_every_type(spark: object, typed_table: Table) -> None:
    rows = _same(spark, typed_table)
    assert len(rows) == 300


@pytest.mark.parametrize(
    "where",
    [
        "id < 50",
        "f > 10",
        "f != 5.0",
        "i NOT IN (3, 6, 9)",
        "s IS NULL OR s LIKE 'name-1%'",
        "day >= DATE '2024-01-20' AND tstz < TIMESTAMP '2024-01-02T00:00:00+00:00'",
        "ts > TIMESTAMP '2024-01-02T10:00:00'",
        "dec BETWEEN 0.05 AND 0.2",
        "st.x > 100",
        "f IS NAN",
    ],
)
def test_filters_match_icefloe(spark: object, typed_table: Table, where: str) -> None:
    _same(spark, typed_table, filter=where)


def test_columns_and_filter_on_unselected_column(spark: object, typed_table: Table) -> None:
    rows = _same(spark, typed_table, filter="i > 30", columns=["id", "s"])
    assert rows and all(len(r) == 2 for r in rows)


def test_renamed_name_reused_is_not_pushed_into_old_files(spark: object, catalog: Catalog) -> None:
    schema = pa.schema([pa.field("a", pa.int32()), pa.field("b", pa.string())])
    table = catalog.create_table("db.reuse", schema)
    table.append(pa.table({"a": pa.array(range(100), pa.int32()), "b": [str(i) for i in range(100)]}))
    table.update_schema().rename_column("a", "old_a").commit()
    table.update_schema().add_column("a", "int").commit()
    # Every row has a null 'a' now; Spark must not consult the old 'a' statistics.
    assert len(_same(spark, table, filter="a IS NULL")) == 100
    assert _same(spark, table, filter="a = 5") == []
    assert len(_same(spark, table, filter="old_a >= 90")) == 10


def test_promoted_columns_read_from_dictionary_encoded_files(spark: object, catalog: Catalog) -> None:
    schema = pa.schema([pa.field("n", pa.int32()), pa.field("x", pa.float32()), pa.field("k", pa.int32())])
    table = catalog.create_table("db.promote", schema)
    table.append(
        pa.table(
            {
                "n": pa.array([i % 3 for i in range(50)], pa.int32()),
                "x": pa.array([0.5] * 50, pa.float32()),
                "k": pa.array(range(50), pa.int32()),
            }
        )
    )
    table.update_schema().update_column("n", "long").update_column("x", "double").commit()
    table.append(
        pa.table({"n": pa.array([2**40], pa.int64()), "x": [1e300], "k": pa.array([99], pa.int32())})
    )
    rows = _same(spark, table)
    assert (2**40, 1e300, 99) in rows
    assert len(_same(spark, table, filter="n = 1")) == 17


def test_added_column_reads_null_and_initial_default(spark: object, catalog: Catalog) -> None:
    table = catalog.create_table(
        "db.defaults", pa.schema([pa.field("id", pa.int64())]), properties={"format-version": "3"}
    )
    table.append(pa.table({"id": [1, 2]}))
    table.update_schema().add_column("plain", "string").add_column("dflt", "int", default=7).commit()
    table.append(pa.table({"id": [3], "plain": ["x"], "dflt": pa.array([None], pa.int32())}))
    rows = _same(spark, table)
    assert rows == [(1, None, 7), (2, None, 7), (3, "x", None)]


def test_identity_partition_values_missing_from_files(spark: object, catalog: Catalog) -> None:
    table = catalog.create_table(
        "db.hive",
        pa.schema([pa.field("id", pa.int64()), pa.field("region", pa.string())]),
        partition_by=["region"],
    )
    table.append(pa.table({"id": [0], "region": ["eu west"]}))
    for region, ids in (("eu west", [1, 2]), ("us/ca", [3])):
        path = Path(table.location()) / "data" / f"region={quote_plus(region)}" / "imported 1.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(
            pa.table(
                {"id": ids},
                schema=pa.schema([pa.field("id", pa.int64(), metadata={"PARQUET:field_id": "1"})]),
            ),
            path,
        )
        file = (
            DataFile.builder(table.spec(), table.schema())
            .with_path(str(path))
            .with_format("parquet")
            .with_file_size_in_bytes(path.stat().st_size)
            .with_metrics(footer_metrics(pq.read_metadata(path), table.schema()))
            .with_partition_path(f"region={quote_plus(region)}")
            .build()
        )
        table.new_append().append_file(file).commit()
    assert _same(spark, table) == [(0, "eu west"), (1, "eu west"), (2, "eu west"), (3, "us/ca")]
    assert _same(spark, table, filter="region = 'us/ca'") == [(3, "us/ca")]


def test_reported_paths_match_spark(spark: object, tmp_path: object) -> None:
    import os

    base = os.path.join(str(tmp_path), "c=United%20States x+y", "a*b")
    os.makedirs(base)
    path = os.path.join(base, "f 1[2].parquet")
    pq.write_table(pa.table({"a": [1]}), path)
    from icefloe.spark.paths import spark_input_path

    got = spark.read.parquet(spark_input_path(path)).select("_metadata.file_path").first()[0]  # type: ignore[attr-defined]
    assert got == reported_path(path)


@pytest.mark.every_session
@pytest.mark.parametrize("version", [2, 3])
def test_merge_on_read_deletes(spark: object, catalog: Catalog, version: int) -> None:
    table = catalog.create_table(
        "db.mor",
        ALL_TYPES,
        partition_by=["day"],
        properties={"format-version": str(version), "write.delete.mode": "merge-on-read"},
    )
    table.append(_all_types_rows(120))
    table.delete("id % 7 = 0" if False else "id < 10")
    table.delete("s = 'name-4'")
    table.append(_all_types_rows(30, start=500))
    rows = _same(spark, table)
    assert not any(r[0] < 10 for r in rows)
    _same(spark, table, filter="id > 100")


@pytest.mark.every_session
def test_equality_deletes(spark: object, catalog: Catalog) -> None:
    from icefloe.write import write_equality_deletes

    schema = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string()), pa.field("g", pa.int32())])
    table = catalog.create_table("db.eq", schema, partition_by=["g"])
    table.append(
        pa.table(
            {
                "id": list(range(20)),
                "name": [f"n{i}" if i % 5 else None for i in range(20)],
                "g": [i % 2 for i in range(20)],
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
    rows = _same(spark, table)
    ids = [r[0] for r in rows]
    assert 3 not in ids and 100 in ids and 0 not in ids and 5 in ids


@pytest.mark.every_session
def test_time_travel_and_incremental(spark: object, catalog: Catalog) -> None:
    table = catalog.create_table("db.tt", pa.schema([pa.field("id", pa.int64())]))
    table.append(pa.table({"id": [1]}))
    first = table.current_snapshot().snapshot_id
    table.append(pa.table({"id": [2]}))
    second = table.current_snapshot().snapshot_id
    table.manage_snapshots().create_tag("v1", first).commit()
    table.append(pa.table({"id": [3]}))
    assert spark_rows(isp.read(spark, table, snapshot_id=first)) == [(1,)]
    assert spark_rows(isp.read(spark, table, ref="v1")) == [(1,)]
    assert spark_rows(isp.read(spark, table, as_of=table.snapshot(second).timestamp_ms)) == [(1,), (2,)]
    assert spark_rows(isp.read(spark, table, from_snapshot_id=first)) == [(2,), (3,)]
    assert spark_rows(isp.read(spark, table, from_snapshot_id=first, to_snapshot_id=second)) == [(2,)]
    assert spark_rows(isp.read(spark, "db.tt" if False else table)) == [(1,), (2,), (3,)]


def test_empty_table(spark: object, catalog: Catalog) -> None:
    table = catalog.create_table(
        "db.empty", pa.schema([pa.field("id", pa.int64()), pa.field("u", pa.string())])
    )
    frame = isp.read(spark, table)
    assert frame.columns == ["id", "u"]
    assert frame.count() == 0


def test_uuid_and_fixed(spark: object, catalog: Catalog) -> None:
    from icefloe.spec.schema import Schema
    from icefloe.spec.types import FixedType, LongType, NestedField, UUIDType

    schema = Schema(
        NestedField(1, "id", LongType()), NestedField(2, "u", UUIDType()), NestedField(3, "fx", FixedType(4))
    )
    table = catalog.create_table("db.uu", schema)
    values = [uuid.UUID(int=i * 7919) for i in range(5)]
    table.append(
        pa.table(
            {
                "id": list(range(5)),
                "u": pa.array([v.bytes for v in values], pa.binary(16)),
                "fx": pa.array([b"abcd"] * 5, pa.binary(4)),
            }
        )
    )
    rows = spark_rows(isp.read(spark, table, filter=f"u = '{values[2]}'"))
    assert rows == [(2, str(values[2]), b"abcd")]
