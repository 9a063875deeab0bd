"""``catalog.create_table``: schemas, partitioning, sort orders, properties and errors."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest

from icefloe import Catalog, Schema
from icefloe.errors import (
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
    ValidationError,
)
from icefloe.spec.sorting import NullOrder, SortDirection
from icefloe.spec.types import DateType, LongType, NestedField, StringType, TimestampType
from support.catalogs import ARROW_SCHEMA, files_under, local, make_catalog, rows, sorted_rows


@pytest.mark.parametrize("format_version", [1, 2, 3])
def test_create_from_pyarrow_schema_with_format_version(catalog: Catalog, format_version: int) -> None:
    table = catalog.create_table("db.t", ARROW_SCHEMA, properties={"format-version": str(format_version)})
    assert table.format_version() == format_version
    assert table.metadata.format_version == format_version
    schema = table.schema()
    assert [(f.field_id, f.name) for f in schema.fields] == list(enumerate(ARROW_SCHEMA.names, start=1))
    assert str(schema.find_field("amount").field_type) == "decimal(10, 2)"  # type: ignore[union-attr]
    assert str(schema.find_field("ts").field_type) == "timestamp"  # type: ignore[union-attr]
    assert table.spec().is_unpartitioned
    assert table.sort_order().is_unsorted
    # The catalog hands out the same state it stored.
    assert catalog.load_table("db.t").metadata == table.metadata
    assert catalog.table_exists("db.t")
    assert ("db", "t") in catalog.list_tables("db")


def test_default_format_version_is_2(catalog: Catalog) -> None:
    assert catalog.create_table("db.t", ARROW_SCHEMA).format_version() == 2


def test_create_from_icefloe_schema(catalog: Catalog) -> None:
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "name", StringType()),
        NestedField(3, "ts", TimestampType()),
    )
    table = catalog.create_table("db.t", schema, partition_by=["day(ts)"], sort_by=["id"])
    assert table.schema().fields == schema.fields
    table.append(pa.table({"id": [2, 1], "name": ["x", None], "ts": [dt.datetime(2024, 5, 1, 12)] * 2}))
    assert table.new_scan().to_arrow().column("id").to_pylist() == [1, 2]  # sorted by id in the file


def test_create_rejects_other_schema_objects(catalog: Catalog) -> None:
    with pytest.raises(ValidationError, match="dict"):
        catalog.create_table("db.t", {"id": "long"})


# ---- partitioning ---------------------------------------------------------------------------

# (term, expected partition field name, folder of ROW_34, its partition value)
TRANSFORMS = [
    ("name", "name", "name=b", "b"),
    ("day", "day", "day=2024-01-02", (dt.date(2024, 1, 2) - dt.date(1970, 1, 1)).days),
    ("day(ts)", "ts_day", "ts_day=2024-01-02", (dt.date(2024, 1, 2) - dt.date(1970, 1, 1)).days),
    ("month(ts)", "ts_month", "ts_month=2024-01", (2024 - 1970) * 12),
    ("year(ts)", "ts_year", "ts_year=2024", 2024 - 1970),
    (
        "hour(ts)",
        "ts_hour",
        "ts_hour=2024-01-02-10",
        (dt.date(2024, 1, 2) - dt.date(1970, 1, 1)).days * 24 + 10,
    ),
    ("month(day)", "day_month", "day_month=2024-01", (2024 - 1970) * 12),
    # The spec's example: bucket hash of 34 is 2017239379, so bucket[16] is 3.
    ("bucket(16, id)", "id_bucket", "id_bucket=3", 3),
    ("truncate(1, name)", "name_trunc", "name_trunc=b", "b"),
    ("truncate(10, id)", "id_trunc", "id_trunc=30", 30),
]


# id 34, name 'b', ts 2024-01-02T10:00, day 2024-01-02.
ROW_34 = rows(1, start=34).set_column(1, "name", pa.array(["b"]))


@pytest.mark.parametrize(
    ("term", "field_name", "folder", "value"), TRANSFORMS, ids=[t[0] for t in TRANSFORMS]
)
def test_partition_transforms(
    catalog: Catalog, term: str, field_name: str, folder: str, value: object
) -> None:
    table = catalog.create_table("db.t", ARROW_SCHEMA, partition_by=[term])
    assert [f.name for f in table.spec().fields] == [field_name]
    assert table.spec().fields[0].field_id == 1000
    data = ROW_34
    table.append(data)
    (file,) = table.current_snapshot().added_data_files(table.io())  # type: ignore[union-attr]
    assert file.partition == (value,)
    assert Path(file.file_path).parent.name == folder
    assert sorted_rows(table.new_scan().to_arrow()) == sorted_rows(data)


def test_multi_field_partitioning_and_spec_object(catalog: Catalog) -> None:
    table = catalog.create_table("db.t", ARROW_SCHEMA, partition_by=["day", "bucket(2, id)"])
    assert [f.field_id for f in table.spec().fields] == [1000, 1001]
    data = rows(12)
    table.append(data)
    files = table.current_snapshot().added_data_files(table.io())  # type: ignore[union-attr]
    assert len({f.partition for f in files}) == len(files) > 3
    assert sorted_rows(table.new_scan().to_arrow()) == sorted_rows(data)
    # A PartitionSpec object is taken as is.
    again = catalog.create_table("db.t2", ARROW_SCHEMA, partition_by=table.spec())
    assert again.spec() == table.spec()


@pytest.mark.parametrize(
    ("terms", "needle"),
    [
        (["nope"], "nope"),
        (["day(nope)"], "nope"),
        (["bucket(x, id)"], "bucket"),
        (["frobnicate(id)"], "frobnicate"),
        (["day(name)"], "name"),  # day of a string
        (["bucket(0, id)"], "bucket"),
        (["day", "day"], "day"),  # the same field twice
    ],
)
def test_bad_partition_terms(catalog: Catalog, terms: list[str], needle: str) -> None:
    with pytest.raises(ValidationError, match=needle):
        catalog.create_table("db.t", ARROW_SCHEMA, partition_by=terms)
    assert not catalog.table_exists("db.t")


# ---- sort orders ----------------------------------------------------------------------------


def test_sort_by_terms(catalog: Catalog) -> None:
    table = catalog.create_table(
        "db.t", ARROW_SCHEMA, sort_by=["name", "ts DESC NULLS LAST", "bucket(4, id) ASC NULLS LAST"]
    )
    fields = table.sort_order().fields
    ids = {f.name: f.field_id for f in table.schema().fields}
    assert [(f.source_id, str(f.transform), f.direction, f.null_order) for f in fields] == [
        (ids["name"], "identity", SortDirection.ASC, NullOrder.NULLS_FIRST),
        (ids["ts"], "identity", SortDirection.DESC, NullOrder.NULLS_LAST),
        (ids["id"], "bucket[4]", SortDirection.ASC, NullOrder.NULLS_LAST),
    ]


def test_sort_order_is_applied_on_write(catalog: Catalog) -> None:
    table = catalog.create_table("db.t", ARROW_SCHEMA, sort_by=["score DESC"])
    data = rows(20)
    table.append(data.take([5, 0, 19, 3, 11, 7, 2, 18, 1, 4, 6, 8, 9, 10, 12, 13, 14, 15, 16, 17]))
    scores = table.new_scan().to_arrow().column("score").to_pylist()
    assert scores == sorted(scores, reverse=True)
    (file,) = table.current_snapshot().added_data_files(table.io())  # type: ignore[union-attr]
    assert file.sort_order_id == table.sort_order().order_id == 1


@pytest.mark.parametrize("terms", [["nope"], ["id SIDEWAYS"], ["score NULLS EVERYWHERE"]])
def test_bad_sort_terms(catalog: Catalog, terms: list[str]) -> None:
    with pytest.raises(ValidationError):
        catalog.create_table("db.t", ARROW_SCHEMA, sort_by=terms)
    assert not catalog.table_exists("db.t")


# ---- properties, location, errors ----------------------------------------------------------


def test_properties_and_location(catalog: Catalog, tmp_path: Path) -> None:
    if catalog.backend.catalog_type == "hadoop":
        pytest.skip("a Hadoop catalog keeps every table at its warehouse path")
    where = tmp_path / "elsewhere" / "t"
    table = catalog.create_table(
        "db.t",
        ARROW_SCHEMA,
        location=str(where) + "/",
        properties={"write.parquet.compression-codec": "snappy", "comment": "x"},
    )
    assert table.location() == str(where)
    assert table.properties()["write.parquet.compression-codec"] == "snappy"
    assert table.properties()["comment"] == "x"
    table.append(rows(1))
    assert any(f.startswith("data/") for f in files_under(where))
    assert table.metadata_location is not None
    assert local(table.metadata_location).parent == where / "metadata"


@pytest.mark.parametrize("value", ["0", "4", "two"])
def test_bad_format_version(catalog: Catalog, value: str) -> None:
    with pytest.raises(ValidationError, match="format-version"):
        catalog.create_table("db.t", ARROW_SCHEMA, properties={"format-version": value})


def test_existing_table(catalog: Catalog) -> None:
    first = catalog.create_table("db.t", ARROW_SCHEMA)
    with pytest.raises(TableAlreadyExistsError, match=r"db\.t"):
        catalog.create_table("db.t", pa.schema([("other", pa.int32())]))
    assert catalog.load_table("db.t").metadata == first.metadata
    same = catalog.create_table_if_not_exists("db.t", ARROW_SCHEMA)
    assert same.uuid() == first.uuid()


def test_missing_namespace(catalog: Catalog) -> None:
    with pytest.raises(NoSuchNamespaceError, match="nons"):
        catalog.create_table("nons.t", ARROW_SCHEMA)
    with pytest.raises(NoSuchTableError, match=r"db\.missing"):
        catalog.load_table("db.missing")


def test_identifier_forms(catalog: Catalog) -> None:
    table = catalog.create_table(("db", "tuple_form"), ARROW_SCHEMA)
    assert table.identifier == "db.tuple_form"
    assert catalog.load_table("db.tuple_form").uuid() == table.uuid()


def test_date_only_schema_round_trip(catalog: Catalog) -> None:
    schema = Schema(NestedField(1, "d", DateType(), required=True))
    table = catalog.create_table("db.dates", schema, partition_by=["year(d)"])
    table.append(pa.table({"d": pa.array([dt.date(1969, 12, 31), dt.date(2001, 3, 4)])}))
    files = table.current_snapshot().added_data_files(table.io())  # type: ignore[union-attr]
    assert sorted(f.partition for f in files) == [(-1,), (31,)]
    assert sorted(table.new_scan().to_arrow().column("d").to_pylist()) == [
        dt.date(1969, 12, 31),
        dt.date(2001, 3, 4),
    ]


def test_hadoop_refuses_other_locations(tmp_path: Path) -> None:
    catalog = make_catalog("hadoop", tmp_path / "wh")
    with pytest.raises(ValidationError, match="elsewhere"):
        catalog.create_table("db.t", ARROW_SCHEMA, location=str(tmp_path / "elsewhere"))
    assert not catalog.table_exists("db.t")


def test_non_string_property_values_are_refused(catalog: Catalog) -> None:
    with pytest.raises(ValidationError, match="'x'"):
        catalog.create_table("db.t", ARROW_SCHEMA, properties={"x": 1})  # type: ignore[dict-item]
    assert not catalog.table_exists("db.t")
