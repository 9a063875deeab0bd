"""Scan builder and outputs: select, time travel, to_batches / to_pandas / to_polars /
to_duckdb, and errors."""

from __future__ import annotations

import datetime as dt

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icefloe import Catalog, DataFile, Table
from icefloe.arrow.schema import schema_to_arrow
from icefloe.errors import InvalidFilterError, NoSuchSnapshotError, ValidationError
from icefloe.spec.schema import Schema
from icefloe.spec.snapshots import SnapshotRefType
from icefloe.spec.types import NestedField, StringType
from icefloe.spec.updates import AddSchema, SetCurrentSchema, SetSnapshotRef
from icefloe.table.scan import TableScan
from icefloe.write import footer_metrics
from support.catalogs import ARROW_SCHEMA, local, rows, sorted_rows

# ---- select ---------------------------------------------------------------------------------


def test_select(events: Table) -> None:
    scan = events.new_scan().select("score", "id")
    # Columns come in table order, as in Java's and PyIceberg's projections.
    assert [f.name for f in scan.schema().fields] == ["id", "score"]
    result = scan.to_arrow()
    assert result.schema.names == ["id", "score"]
    assert result.schema == schema_to_arrow(scan.schema())
    assert sorted(result.column("id").to_pylist()) == list(range(75))
    assert events.new_scan().select(["id"]).to_arrow().schema.names == ["id"]  # a list works too
    assert events.new_scan().select().schema() == events.schema()  # nothing selected: all columns
    assert events.new_scan().select("*").to_arrow().schema.names == ARROW_SCHEMA.names


def test_select_with_filter_on_other_columns(events: Table) -> None:
    # The filter's columns are read to filter, then dropped.
    result = events.new_scan().filter("name = 'b' AND day = '2024-01-02'").select("id").to_arrow()
    assert result.schema.names == ["id"]
    assert sorted(result.column("id").to_pylist()) == [i for i in range(75) if i % 3 == 1 and i % 7 != 6]
    names = events.new_scan().filter("score > 30").select("name").to_arrow()
    assert names.schema.names == ["name"]
    assert names.num_rows == len([i for i in range(75) if i / 2 > 30])


def test_builder_is_immutable(events: Table) -> None:
    base = events.new_scan()
    filtered = base.filter("id < 3")
    selected = filtered.select("id")
    assert isinstance(filtered, TableScan) and filtered is not base
    assert base.to_arrow().num_rows == 75
    assert filtered.to_arrow().num_rows == 3
    assert selected.to_arrow().schema.names == ["id"]
    assert filtered.to_arrow().schema.names == ARROW_SCHEMA.names


def test_scan_shortcut(events: Table) -> None:
    result = events.scan(filter="id < 5", columns=["id", "name"]).to_arrow()
    assert result.schema.names == ["id", "name"]
    assert result.num_rows == 5
    with pytest.raises(TypeError, match="bogus"):
        events.scan(bogus=1)


# ---- errors ---------------------------------------------------------------------------------


def test_unknown_column_in_select(events: Table) -> None:
    with pytest.raises(ValidationError, match="nope"):
        events.new_scan().select("id", "nope").to_arrow()
    with pytest.raises(ValidationError, match="nope"):
        events.new_scan().select("nope").schema()


@pytest.mark.parametrize("text", ["nope = 1", "id > 3 AND nope IS NULL", "NOT (nope LIKE 'a%')"])
def test_unknown_column_in_filter(events: Table, text: str) -> None:
    with pytest.raises(InvalidFilterError, match="nope"):
        events.new_scan().filter(text).to_arrow()
    with pytest.raises(InvalidFilterError, match="nope"):
        events.new_scan().filter(text).plan_files()
    with pytest.raises(InvalidFilterError, match="nope"):
        events.new_scan().filter(text).count()


@pytest.mark.parametrize(
    ("text", "needle"),
    [("id >", "id"), ("id = 'x'", "x"), ("day = '2024-13-45'", "2024-13-45"), ("name LIKE '%a'", "LIKE")],
)
def test_bad_filters(events: Table, text: str, needle: str) -> None:
    with pytest.raises(InvalidFilterError, match=needle):
        events.new_scan().filter(text).to_arrow()


def test_filter_of_wrong_kind(events: Table) -> None:
    with pytest.raises(ValidationError):
        events.new_scan().filter(42)  # type: ignore[arg-type]


# ---- outputs --------------------------------------------------------------------------------


def test_to_batches_respects_batch_size(events: Table) -> None:
    batches = list(events.new_scan().filter("id >= 10").to_batches(batch_size=4))
    assert batches
    assert all(b.num_rows <= 4 for b in batches)
    assert sum(b.num_rows for b in batches) == 65
    assert all(b.schema == batches[0].schema for b in batches)
    selected = list(events.new_scan().select("id").to_batches(batch_size=7))
    assert all(b.schema.names == ["id"] and b.num_rows <= 7 for b in selected)
    assert sorted(v for b in selected for v in b.column("id").to_pylist()) == list(range(75))


def test_to_batches_streams(memory_catalog: Catalog) -> None:
    """The first batch comes before later files are opened: delete them after it, and only
    reading on fails."""
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA, partition_by=["day"])
    table.append(rows(30))
    scan = table.new_scan()
    tasks = scan.plan_files()
    iterator = scan.to_batches(batch_size=2)
    first = next(iterator)
    assert first.num_rows == 2
    for task in tasks:
        if task.file.file_path != tasks[0].file.file_path:
            local(task.file.file_path).unlink()
    with pytest.raises(Exception, match="does not exist"):
        list(iterator)


def test_to_pandas(events: Table) -> None:
    frame = events.new_scan().filter("id < 4").to_pandas()
    assert isinstance(frame, pd.DataFrame)
    assert sorted(frame["id"].tolist()) == [0, 1, 2, 3]
    assert list(frame.columns) == ARROW_SCHEMA.names


def test_to_polars(events: Table) -> None:
    frame = events.new_scan().filter("id < 4").select("id", "name").to_polars()
    assert isinstance(frame, pl.DataFrame)
    assert frame.columns == ["id", "name"]
    assert sorted(frame["id"].to_list()) == [0, 1, 2, 3]


def test_to_duckdb(events: Table) -> None:
    con = events.new_scan().filter("day = '2024-01-02'").to_duckdb("events")
    assert con.execute("SELECT count(*), min(id), max(id) FROM events").fetchone() == (25, 1, 73)
    own = duckdb.connect()
    try:
        assert events.new_scan().to_duckdb("t", connection=own) is own
        assert own.execute("SELECT count(*) FROM t").fetchone() == (75,)
    finally:
        own.close()
        con.close()


def test_to_arrow_types(events: Table) -> None:
    result = events.new_scan().to_arrow()
    assert result.schema.field("id").type == pa.int64()
    assert not result.schema.field("id").nullable
    assert result.schema.field("amount").type == pa.decimal128(10, 2)
    assert result.schema.field("day").type == pa.date32()
    assert result.schema.field("ts").type == pa.timestamp("us")


# ---- time travel ----------------------------------------------------------------------------


def test_use_snapshot_and_as_of_time(events: Table) -> None:
    first, second, third = events.snapshots()
    assert events.new_scan().use_snapshot(first.snapshot_id).count() == 30
    assert events.new_scan().use_snapshot(second.snapshot_id).to_arrow().num_rows == 60
    assert events.new_scan().use_snapshot(third.snapshot_id).snapshot() == third
    assert events.new_scan().snapshot() == third

    assert events.new_scan().as_of_time(first.timestamp_ms).snapshot() == first
    assert events.new_scan().as_of_time(second.timestamp_ms - 1).snapshot() == first
    assert events.new_scan().as_of_time(third.timestamp_ms + 10_000).snapshot() == third
    when = dt.datetime.fromtimestamp(second.timestamp_ms / 1000, tz=dt.UTC)
    assert events.new_scan().as_of_time(when).snapshot() == second
    assert events.new_scan().as_of_time(when).count() == 60
    naive_utc = when.replace(tzinfo=None)  # naive datetimes are taken as UTC
    assert events.new_scan().as_of_time(naive_utc).snapshot() == second
    with pytest.raises(NoSuchSnapshotError):
        events.new_scan().as_of_time(first.timestamp_ms - 1)

    assert events.new_scan().use_ref("main").snapshot() == third
    with pytest.raises(NoSuchSnapshotError, match="12345"):
        events.new_scan().use_snapshot(12345)
    with pytest.raises(NoSuchSnapshotError, match="nope"):
        events.new_scan().use_ref("nope")
    with pytest.raises(ValidationError):
        events.new_scan().use_snapshot(first.snapshot_id).use_ref("main")
    with pytest.raises(ValidationError):
        events.new_scan().as_of_time(first.timestamp_ms).use_snapshot(first.snapshot_id)


def test_time_travel_errors_name_the_table_and_show_utc_times(events: Table) -> None:
    """Not ``table at /tmp/.../events had no snapshot at timestamp 1710072000123``."""
    first = events.snapshots()[0]
    before = first.timestamp_ms - 1
    with pytest.raises(NoSuchSnapshotError) as info:
        events.new_scan().as_of_time(before)
    message = str(info.value)
    assert f"table {events.name()} had no snapshot at " in message
    iso = dt.datetime.fromtimestamp(before / 1000, dt.UTC).isoformat(timespec="milliseconds")
    assert iso.replace("+00:00", "Z") in message
    first_iso = dt.datetime.fromtimestamp(first.timestamp_ms / 1000, dt.UTC).isoformat(
        timespec="milliseconds"
    )
    assert f"its history starts at {first_iso.replace('+00:00', 'Z')}" in message
    assert str(before) not in message and events.location() not in message
    # A bad argument: a ValidationError as well as a NoSuchSnapshotError (a LookupError).
    assert isinstance(info.value, ValidationError) and isinstance(info.value, LookupError)
    # A naive datetime is UTC: the same moment, the same message.
    naive = dt.datetime(1999, 12, 31, 23, 0)
    with pytest.raises(NoSuchSnapshotError, match=r"had no snapshot at 1999-12-31T23:00:00\.000Z"):
        events.new_scan().as_of_time(naive)
    with pytest.raises(ValidationError, match=rf"table {events.name()} has no snapshot 12345"):
        events.new_scan().use_snapshot(12345)


def _evolve(catalog: Catalog, table: Table) -> None:
    """Rename ``name`` to ``label`` and add ``extra`` (no public schema API yet: the updates go
    straight to the catalog, as a schema-evolving engine would commit them)."""
    fields = [
        NestedField(f.field_id, "label", f.field_type, f.required) if f.name == "name" else f
        for f in table.schema().fields
    ]
    new = Schema(*fields, NestedField(7, "extra", StringType()), schema_id=1)
    catalog.backend.commit_table(table.identifier_tuple, None, [], [AddSchema(new, 7), SetCurrentSchema(-1)])
    table.refresh()


def test_time_travel_reads_with_the_snapshot_schema(catalog: Catalog, format_version: int) -> None:
    table = catalog.create_table("db.t", ARROW_SCHEMA, properties={"format-version": str(format_version)})
    old = table.append(rows(4))
    assert old is not None
    _evolve(catalog, table)
    new = table.append(
        pa.table({"id": [10], "label": ["z"], "extra": ["e"]}),
    )
    assert new is not None
    assert new.schema_id == 1 and old.schema_id == 0

    # Current state and branches: the current schema; old files read by field id.
    current = table.new_scan()
    assert [f.name for f in current.schema().fields] == [
        "id",
        "label",
        "ts",
        "day",
        "amount",
        "score",
        "extra",
    ]
    result = sorted_rows(current.select("id", "label", "extra").to_arrow())
    assert result[:2] == [{"id": 0, "label": "a", "extra": None}, {"id": 1, "label": "b", "extra": None}]
    assert result[-1] == {"id": 10, "label": "z", "extra": "e"}
    assert current.filter("label = 'b'").count() == 1
    assert table.new_scan().use_ref("main").schema() == table.schema()

    # A snapshot id or a time: the schema that snapshot was written with.
    by_id = table.new_scan().use_snapshot(old.snapshot_id)
    assert by_id.schema() == table.schemas()[0]
    assert by_id.to_arrow().schema.names == ARROW_SCHEMA.names
    assert sorted(by_id.filter("name = 'b'").to_arrow().column("id").to_pylist()) == [1]
    with pytest.raises(InvalidFilterError, match="label"):
        by_id.filter("label = 'b'").to_arrow()
    by_time = table.new_scan().as_of_time(old.timestamp_ms)
    assert by_time.schema() == table.schemas()[0]

    # A tag: the snapshot's schema too; a branch: the current schema.
    catalog.backend.commit_table(
        table.identifier_tuple,
        None,
        [],
        [
            SetSnapshotRef("v-old", old.snapshot_id, SnapshotRefType.TAG),
            SetSnapshotRef("b-old", old.snapshot_id, SnapshotRefType.BRANCH),
        ],
    )
    table.refresh()
    assert table.new_scan().use_ref("v-old").schema() == table.schemas()[0]
    assert table.new_scan().use_ref("v-old").count() == 4
    branch = table.new_scan().use_ref("b-old")
    assert branch.schema() == table.schema()
    assert sorted_rows(branch.select("id", "label").to_arrow())[1] == {"id": 1, "label": "b"}


def test_count_and_filters_on_old_snapshot(events: Table) -> None:
    first = events.snapshots()[0]
    scan = events.new_scan().use_snapshot(first.snapshot_id)
    assert scan.filter("id >= 25").count() == 5
    assert len(scan.filter("id >= 25").plan_files()) == 3
    assert sorted(scan.filter("id >= 25").to_arrow().column("id").to_pylist()) == [25, 26, 27, 28, 29]


# ---- files and types beyond the basics ------------------------------------------------------


def test_identity_partition_values_fill_columns_missing_from_files(memory_catalog: Catalog) -> None:
    """Hive-style imported files often lack the partition column: it comes from the partition."""
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA, partition_by=["day"])
    arrow_schema = schema_to_arrow(table.schema())
    without_day = pa.schema([f for f in arrow_schema if f.name != "day"])
    path = local(table.location()) / "data" / "day=2024-01-02" / "imported.parquet"
    path.parent.mkdir(parents=True)
    pq.write_table(rows(3).drop_columns(["day"]).cast(without_day), path)
    file = (
        DataFile.builder(table.spec(), table.schema())
        .with_path(str(path))
        .with_format("parquet")
        .with_file_size_in_bytes(path.stat().st_size)
        .with_metrics(footer_metrics(pq.read_metadata(path), table.schema()))
        .with_partition_path("day=2024-01-02")
        .build()
    )
    table.new_append().append_file(file).commit()
    assert table.new_scan().to_arrow().column("day").to_pylist() == [dt.date(2024, 1, 2)] * 3
    assert table.new_scan().filter("day = '2024-01-02' AND id > 0").count() == 2
    assert table.new_scan().filter("day = '2024-01-01'").count() == 0


def test_timestamptz_filters(memory_catalog: Catalog) -> None:
    schema = pa.schema([("id", pa.int64()), ("at", pa.timestamp("us", tz="UTC")), ("s", pa.string())])
    table = memory_catalog.create_table("db.tz", schema, partition_by=["day(at)"])
    utc = dt.UTC
    table.append(
        pa.table(
            {
                "id": [1, 2, 3],
                "at": [
                    dt.datetime(2024, 1, 1, 23, tzinfo=utc),
                    dt.datetime(2024, 1, 2, 1, tzinfo=utc),
                    dt.datetime(2024, 1, 2, 23, tzinfo=utc),
                ],
                "s": ["O'Brien", "x", None],
            },
            schema=schema,
        )
    )

    def ids(text: str) -> list[int]:
        return sorted(table.new_scan().filter(text).to_arrow().column("id").to_pylist())

    assert ids("at >= '2024-01-02T00:00:00+00:00'") == [2, 3]
    assert ids("at >= '2024-01-02T02:00:00+02:00'") == [2, 3]  # the same instant
    assert ids("at < '2024-01-02T00:00:00Z'") == [1]
    assert len(table.new_scan().filter("at < '2024-01-02T00:00:00Z'").plan_files()) == 1
    assert ids("s = 'O''Brien'") == [1]
    assert ids("s NOT IN ('x')") == [1]


def test_filter_matching_nothing_gives_an_empty_table_with_the_schema(events: Table) -> None:
    scan = events.new_scan().filter("id > 1000").select("id", "name")
    assert scan.plan_files() == []
    result = scan.to_arrow()
    assert result.num_rows == 0
    assert result.schema == schema_to_arrow(scan.schema())
    assert scan.to_pandas().empty


def test_nested_columns(memory_catalog: Catalog) -> None:
    schema = pa.schema([("id", pa.int64()), ("info", pa.struct([("a", pa.int32()), ("b", pa.string())]))])
    table = memory_catalog.create_table("db.n", schema)
    table.append(
        pa.table({"id": [1, 2, 3], "info": [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}, None]}, schema=schema)
    )
    # Selecting a nested field keeps its parent with that field only.
    selected = table.new_scan().select("info.a").to_arrow()
    assert selected.to_pylist() == [{"info": {"a": 1}}, {"info": {"a": 2}}, {"info": None}]
    # Filtering on a sibling that is not selected: read to filter, then dropped.
    filtered = table.new_scan().select("info.a").filter("info.b = 'x'").to_arrow()
    assert filtered.schema == schema_to_arrow(table.new_scan().select("info.a").schema())
    assert filtered.to_pylist() == [{"info": {"a": 1}}]
    assert table.new_scan().filter("info.a >= 2").select("id").to_arrow().column("id").to_pylist() == [2]
    assert table.new_scan().filter("info.b IS NULL").count() == 1


def test_select_nested_field_filtered_on_its_sibling(memory_catalog: Catalog) -> None:
    data = pa.table(
        {
            "id": pa.array([1, 2, 3], pa.int64()),
            "s": pa.array(
                [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}, None],
                pa.struct([("a", pa.int64()), ("b", pa.string())]),
            ),
        }
    )
    table = memory_catalog.create_table("db.nested", data.schema)
    table.append(data)
    scan = table.new_scan().select("id", "s.a").filter("s.b = 'y'")
    result = scan.to_arrow()
    # The filter's column s.b is read, then dropped: the struct keeps only the selected child.
    assert result.schema == schema_to_arrow(scan.schema())
    assert result.schema.field("s").type == pa.struct([pa.field("a", pa.int64(), nullable=True)])
    assert result.to_pylist() == [{"id": 2, "s": {"a": 2}}]
    assert scan.count() == 1
