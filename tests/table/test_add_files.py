"""``table.add_files(paths)``: existing Parquet files registered as data files in one append."""

from __future__ import annotations

import datetime as dt
import json
import os
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from icefloe import Catalog, Table, ValidationException
from icefloe.arrow.schema import schema_to_arrow
from icefloe.errors import ValidationError
from icefloe.spec.conversions import from_bytes
from icefloe.spec.manifest import DataFile
from icefloe.spec.properties import DEFAULT_NAME_MAPPING
from icefloe.spec.transforms import parse_transform
from icefloe.spec.types import LongType
from support.catalogs import ARROW_SCHEMA, rows, sorted_rows

FAST_RETRIES = {"commit.retry.min-wait-ms": "1", "commit.retry.max-wait-ms": "5"}


def _table(catalog: Catalog, format_version: int = 2, **kwargs: Any) -> Table:
    properties = {"format-version": str(format_version), **FAST_RETRIES, **kwargs.pop("properties", {})}
    return catalog.create_table("db.t", ARROW_SCHEMA, properties=properties, **kwargs)


def _write(path: Path, data: pa.Table, *, ids_of: Table | None = None, **options: Any) -> str:
    """Write ``data`` with plain pyarrow; with ``ids_of``, cast to that table's schema with field ids."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if ids_of is not None:
        arrow_schema = schema_to_arrow(ids_of.schema())
        data = data.select(arrow_schema.names).cast(arrow_schema)
    pq.write_table(data, path, **options)
    return str(path)


def _added(table: Table) -> dict[str, DataFile]:
    snapshot = table.current_snapshot()
    assert snapshot is not None
    return {f.file_path: f for f in snapshot.added_data_files(table.io())}


def _bound(file: DataFile, table: Table, name: str, which: str) -> Any:
    field = table.schema().field(name)
    bounds = file.lower_bounds if which == "lower" else file.upper_bounds
    assert bounds is not None
    return from_bytes(field.field_type, bounds[field.field_id])


# ---- the happy paths ---------------------------------------------------------------------------


def test_files_without_field_ids_are_added_through_a_name_mapping(
    catalog: Catalog, format_version: int, tmp_path: Path
) -> None:
    table = _table(catalog, format_version)
    first = _write(tmp_path / "in" / "a.parquet", rows(10), row_group_size=4)
    second = _write(tmp_path / "in" / "b.parquet", rows(5, start=100))
    assert pq.read_schema(first).field("id").metadata is None  # plain pyarrow: no ids

    snapshot = table.add_files([first, second], snapshot_properties={"source": "import"})

    assert table.current_snapshot() == snapshot
    assert snapshot.summary["operation"] == "append"
    assert snapshot.summary["added-data-files"] == "2"
    assert snapshot.summary["added-records"] == "15"
    assert snapshot.summary["source"] == "import"
    # The mapping that resolved the files is stored, so that every reader resolves them alike.
    mapping = json.loads(table.properties()[DEFAULT_NAME_MAPPING])
    assert {m["field-id"]: m["names"] for m in mapping} == {
        f.field_id: [f.name] for f in table.schema().fields
    }
    assert len(table.metadata.metadata_log) == 1  # one commit: mapping and append together

    files = _added(table)
    assert set(files) == {first, second}
    a = files[first]
    assert a.record_count == 10
    assert a.file_size_in_bytes == os.path.getsize(first)
    metadata = pq.read_metadata(first)
    firsts = [metadata.row_group(i).column(0) for i in range(metadata.num_row_groups)]
    starts = [c.dictionary_page_offset if c.has_dictionary_page else c.data_page_offset for c in firsts]
    assert a.split_offsets == tuple(sorted(starts)) and len(starts) == 3
    assert _bound(a, table, "id", "lower") == 0 and _bound(a, table, "id", "upper") == 9
    assert _bound(a, table, "amount", "upper") == Decimal("11.25")
    name_id = table.schema().field("name").field_id
    assert a.null_value_counts is not None and a.null_value_counts[name_id] == 1
    assert a.value_counts is not None and a.value_counts[name_id] == 10
    assert a.partition == ()
    # Every row reads back.
    expected = pa.concat_tables([rows(10), rows(5, start=100)])
    assert sorted_rows(table.new_scan().to_arrow()) == sorted_rows(expected)


def test_files_with_field_ids_are_added_by_their_ids(catalog: Catalog, tmp_path: Path) -> None:
    table = _table(catalog)
    # Columns renamed in the file: ids decide, as readers decide.
    path = _write(tmp_path / "ids.parquet", rows(4), ids_of=table)
    renamed = pq.read_table(path).rename_columns(["ident", "label", "ts", "day", "amount", "score"])
    path = _write(tmp_path / "renamed.parquet", renamed)
    assert pq.read_schema(path).field("ident").metadata == {b"PARQUET:field_id": b"1"}
    table.add_files([path])
    assert DEFAULT_NAME_MAPPING not in table.properties()  # not needed
    assert sorted_rows(table.new_scan().to_arrow()) == sorted_rows(rows(4))
    [file] = _added(table).values()
    assert _bound(file, table, "name", "lower") == "a"


def test_an_existing_name_mapping_resolves_other_names(catalog: Catalog, tmp_path: Path) -> None:
    table = _table(catalog)
    mapping = [
        {"field-id": f.field_id, "names": [f.name, f"old_{f.name}"]}  # every column also had another name
        for f in table.schema().fields
    ]
    table.update_properties().set(DEFAULT_NAME_MAPPING, json.dumps(mapping)).commit()
    old = rows(3).rename_columns([f"old_{n}" for n in ARROW_SCHEMA.names])
    table.add_files([_write(tmp_path / "old.parquet", old)])
    assert json.loads(table.properties()[DEFAULT_NAME_MAPPING]) == mapping  # kept as it was
    assert sorted_rows(table.new_scan().to_arrow()) == sorted_rows(rows(3))


def test_nested_columns_without_ids(catalog: Catalog, tmp_path: Path) -> None:
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("point", pa.struct([pa.field("x", pa.float64()), pa.field("y", pa.float64())])),
            pa.field("tags", pa.list_(pa.string())),
            pa.field("attrs", pa.map_(pa.string(), pa.int32())),
        ]
    )
    table = catalog.create_table("db.n", schema, partition_by=["point.x"])
    data = pa.table(
        {
            "id": [1, 2],
            "point": [{"x": 1.5, "y": 2.0}, {"x": 1.5, "y": None}],
            "tags": [["a", "b"], None],
            "attrs": [[("k", 1)], []],
        },
        schema=schema,
    )
    table.add_files([_write(tmp_path / "n.parquet", data)])
    [file] = _added(table).values()
    assert file.partition == (1.5,)  # a double partition source: read from the data
    assert table.new_scan().to_arrow().sort_by("id").to_pylist() == data.to_pylist()


def test_promoted_types_are_accepted(catalog: Catalog, tmp_path: Path) -> None:
    table = _table(catalog)
    narrow = rows(3).cast(
        pa.schema(
            [
                pa.field("id", pa.int32(), nullable=False),
                pa.field("name", pa.string()),
                pa.field("ts", pa.timestamp("us")),
                pa.field("day", pa.date32()),
                pa.field("amount", pa.decimal128(8, 2)),
                pa.field("score", pa.float32()),
            ]
        )
    )
    table.add_files([_write(tmp_path / "narrow.parquet", narrow)])
    [file] = _added(table).values()
    assert _bound(file, table, "id", "upper") == 2
    assert sorted_rows(table.new_scan().to_arrow()) == sorted_rows(rows(3))


def test_a_required_column_stored_as_optional_is_accepted_without_nulls(
    catalog: Catalog, tmp_path: Path
) -> None:
    table = _table(catalog)
    optional = rows(3).cast(ARROW_SCHEMA.set(0, pa.field("id", pa.int64(), nullable=True)))
    table.add_files([_write(tmp_path / "ok.parquet", optional)])
    with_null = optional.set_column(0, "id", pa.array([1, None, 3], pa.int64()))
    bad = _write(tmp_path / "null.parquet", with_null)
    with pytest.raises(ValidationError, match=r"null\.parquet.*'id' is required"):
        table.add_files([bad])


def test_metrics_follow_the_table_metrics_config(catalog: Catalog, tmp_path: Path) -> None:
    table = _table(
        catalog,
        properties={
            "write.metadata.metrics.default": "counts",
            "write.metadata.metrics.column.name": "truncate(1)",
        },
    )
    data = rows(3).set_column(1, "name", pa.array(["apple", "banana", "cherry"]))
    table.add_files([_write(tmp_path / "m.parquet", data)])
    [file] = _added(table).values()
    name_id = table.schema().field("name").field_id
    assert file.lower_bounds is not None and set(file.lower_bounds) == {name_id}
    assert _bound(file, table, "name", "lower") == "a" and _bound(file, table, "name", "upper") == "d"
    assert file.value_counts is not None and len(file.value_counts) == 6


def test_add_files_in_a_transaction_with_other_operations(catalog: Catalog, tmp_path: Path) -> None:
    table = _table(catalog)
    table.append(rows(2))
    txn = table.new_transaction()
    staged = txn.add_files([_write(tmp_path / "x.parquet", rows(3, start=10))])
    txn.update_properties().set("owner", "etl").commit()
    assert table.new_scan().count() == 2  # nothing committed yet
    txn.commit_transaction()
    assert table.current_snapshot() is not None
    assert table.current_snapshot().snapshot_id == staged.snapshot_id  # type: ignore[union-attr]
    assert table.properties()["owner"] == "etl"
    assert table.new_scan().count() == 5


def test_add_files_in_a_create_transaction(catalog: Catalog, tmp_path: Path) -> None:
    path = _write(tmp_path / "seed.parquet", rows(4))
    txn = catalog.create_table_transaction("db.t", ARROW_SCHEMA, partition_by=["name"])
    with pytest.raises(ValidationError, match="spans partitions"):
        txn.add_files([path])  # four rows, three names (and nulls)
    one_name = rows(4).filter(pc.equal(rows(4)["name"], "a"))
    txn.add_files([_write(tmp_path / "a.parquet", one_name)])
    assert not catalog.table_exists("db.t")
    txn.commit_transaction()
    table = catalog.load_table("db.t")
    assert [f.partition for f in _added(table).values()] == [("a",)]
    assert DEFAULT_NAME_MAPPING in table.properties()


# ---- partitions --------------------------------------------------------------------------------

_BUCKET4 = parse_transform("bucket[4]")
_SAME_BUCKET = [i for i in range(100) if _BUCKET4.apply(LongType(), i) == _BUCKET4.apply(LongType(), 7)][:3]
_BUCKET = _BUCKET4.apply(LongType(), 7)
_OTHER_BUCKET = next(i for i in range(100) if _BUCKET4.apply(LongType(), i) != _BUCKET)


@pytest.mark.parametrize(
    ("terms", "expected"),
    [
        (["day"], (19723,)),  # identity on a date: from the footer
        (["day(ts)"], (19723,)),  # order-preserving transform: from the footer
        (["bucket(4, id)", "truncate(1, name)"], (_BUCKET, "a")),  # from the data
    ],
)
def test_partition_values_come_from_the_data(
    catalog: Catalog, tmp_path: Path, terms: list[str], expected: tuple[Any, ...]
) -> None:
    table = _table(catalog, partition_by=terms)
    data = pa.table(
        {
            "id": _SAME_BUCKET,
            "name": ["ab", "ax", "a"],
            "ts": [dt.datetime(2024, 1, 1, h) for h in (0, 5, 23)],
            "day": [dt.date(2024, 1, 1)] * 3,
            "amount": [Decimal("1.00")] * 3,
            "score": [1.0] * 3,
        },
        schema=ARROW_SCHEMA,
    )
    table.add_files([_write(tmp_path / "p.parquet", data)])
    [file] = _added(table).values()
    assert file.partition == expected
    kept = table.new_scan().filter(f"id > {_SAME_BUCKET[0]}").to_arrow()
    assert sorted_rows(kept) == sorted_rows(data)[1:]


@pytest.mark.parametrize(
    ("terms", "column", "values"),
    [
        (["day"], "day", [dt.date(2024, 1, 1), dt.date(2024, 1, 2)]),
        (["day(ts)"], "ts", [dt.datetime(2024, 1, 1, 23), dt.datetime(2024, 1, 2, 0)]),
        (["bucket(4, id)"], "id", [7, _OTHER_BUCKET]),
        (["name"], "name", ["a", None]),  # null and not null are two partitions
    ],
)
def test_a_file_spanning_partitions_is_refused(
    catalog: Catalog, tmp_path: Path, terms: list[str], column: str, values: list[Any]
) -> None:
    table = _table(catalog, partition_by=terms)
    data = rows(2)
    data = data.set_column(
        data.schema.get_field_index(column), column, pa.array(values, data.schema.field(column).type)
    )
    good = _write(tmp_path / "good.parquet", rows(1))
    bad = _write(tmp_path / "bad.parquet", data)
    with pytest.raises(ValidationError, match=r"1 of 2 files: .*bad\.parquet spans partitions") as info:
        table.add_files([good, bad])
    assert "good.parquet" not in str(info.value)
    assert table.current_snapshot() is None


def test_null_partition_values(catalog: Catalog, tmp_path: Path) -> None:
    table = _table(catalog, partition_by=["name", "bucket(2, amount)"])
    data = rows(2).set_column(1, "name", pa.array([None, None], pa.string()))
    data = data.set_column(4, "amount", pa.array([None, None], pa.decimal128(10, 2)))
    table.add_files([_write(tmp_path / "nulls.parquet", data)])
    [file] = _added(table).values()
    assert file.partition == (None, None)


def test_a_file_without_the_partition_source_column_is_refused(catalog: Catalog, tmp_path: Path) -> None:
    table = _table(catalog, partition_by=["day"])
    hive_style = _write(tmp_path / "day=2024-01-01" / "f.parquet", rows(3).drop(["day"]))
    with pytest.raises(ValidationError, match=r"has no column 'day'.*not from the path"):
        table.add_files([hive_style])


# ---- refusals ----------------------------------------------------------------------------------


def test_files_already_in_the_table_are_refused(catalog: Catalog, tmp_path: Path) -> None:
    table = _table(catalog)
    path = _write(tmp_path / "a.parquet", rows(2))
    other = _write(tmp_path / "b.parquet", rows(2, start=5))
    table.add_files([path])
    with pytest.raises(ValidationError, match=r"already references: .*a\.parquet"):
        table.add_files([other, path])
    with pytest.raises(ValidationError, match="more than once"):
        table.add_files([other, other])
    assert table.new_scan().count() == 2
    # As in Java and PyIceberg, the check can be turned off.
    table.add_files([path], check_duplicate_files=False)
    assert table.new_scan().count() == 4


def test_a_file_added_concurrently_is_refused_on_retry(memory_catalog: Catalog, tmp_path: Path) -> None:
    table = _table(memory_catalog)
    path = _write(tmp_path / "a.parquet", rows(2), ids_of=table)
    txn = table.new_transaction()
    txn.add_files([path])
    memory_catalog.load_table("db.t").add_files([path])  # another writer, first
    with pytest.raises(ValidationError, match="already references"):
        txn.commit_transaction()
    assert memory_catalog.load_table("db.t").new_scan().count() == 2


def test_a_name_mapping_change_before_a_retry_is_a_conflict(memory_catalog: Catalog, tmp_path: Path) -> None:
    table = _table(memory_catalog)
    txn = table.new_transaction()
    txn.add_files([_write(tmp_path / "a.parquet", rows(2))])
    other = memory_catalog.load_table("db.t")
    other.update_properties().set(DEFAULT_NAME_MAPPING, "[]").commit()
    other.append(rows(1, start=50))  # moves main: the transaction retries on the fresh table
    with pytest.raises(ValidationException, match="name mapping changed"):
        txn.commit_transaction()


def test_bad_files_are_refused_together_naming_each(catalog: Catalog, tmp_path: Path) -> None:
    table = _table(catalog)
    text = tmp_path / "notes.txt"
    text.write_text("not parquet")
    bad = {
        "missing": str(tmp_path / "missing.parquet"),
        "text": str(text),
        "type": _write(
            tmp_path / "type.parquet", rows(2).set_column(1, "name", pa.array([1, 2], pa.int64()))
        ),
        "required": _write(tmp_path / "required.parquet", rows(2).drop(["id"])),
        "extra": _write(tmp_path / "extra.parquet", rows(2).append_column("more", pa.array([1, 2]))),
        "millis": _write(
            tmp_path / "millis.parquet", rows(2).set_column(2, "ts", rows(2)["ts"].cast(pa.timestamp("ms")))
        ),
        "unsigned": _write(
            tmp_path / "unsigned.parquet", rows(2).set_column(0, "id", pa.array([1, 2], pa.uint32()))
        ),
        "zone": _write(
            tmp_path / "zone.parquet",
            rows(2).set_column(2, "ts", rows(2)["ts"].cast(pa.timestamp("us", tz="UTC"))),
        ),
    }
    good = _write(tmp_path / "good.parquet", rows(2))
    with pytest.raises(ValidationError) as info:
        table.add_files([good, *bad.values()])
    message = str(info.value)
    assert f"cannot add {len(bad)} of {len(bad) + 1} files" in message
    assert "good.parquet" not in message
    assert f"{bad['missing']} does not exist" in message
    assert f"{bad['text']} is not a readable Parquet file" in message
    assert "'name' is long in the file, string in the table" in message
    assert "required column 'id' is missing" in message
    assert "name-mapping entry): 'more'" in message  # the mapping cannot resolve it
    assert "'ts' is stored as" in message and "needs microseconds" in message
    assert "'id' holds unsigned integers" in message
    assert "'ts' is timestamptz in the file, timestamp in the table" in message
    assert table.current_snapshot() is None
    assert DEFAULT_NAME_MAPPING not in table.properties()


def test_field_ids_the_table_does_not_have_are_refused(catalog: Catalog, tmp_path: Path) -> None:
    table = _table(catalog)
    ids = schema_to_arrow(table.schema())
    wrong = pa.schema(
        [
            f.with_metadata({b"PARQUET:field_id": str(int(f.metadata[b"PARQUET:field_id"]) + 10).encode()})
            for f in ids
        ]
    )
    path = _write(tmp_path / "wrong.parquet", rows(2).cast(wrong))
    with pytest.raises(
        ValidationError, match=r"wrong\.parquet .*required column 'id' is missing.*not in the table schema"
    ):
        table.add_files([path])


def test_paths_must_be_a_list_of_strings(catalog: Catalog, tmp_path: Path) -> None:
    table = _table(catalog)
    with pytest.raises(ValidationError, match="list of paths"):
        table.add_files(str(tmp_path / "a.parquet"))
    with pytest.raises(ValidationError, match="at least one"):
        table.add_files([])
