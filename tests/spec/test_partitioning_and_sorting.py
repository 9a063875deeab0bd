import pytest

from icefloe.errors import ValidationError
from icefloe.spec.manifest import DataFile
from icefloe.spec.partition_values import parse_partition_value
from icefloe.spec.partitioning import PartitionSpecBuilder, build_spec, parse_partition_term
from icefloe.spec.schema import Schema
from icefloe.spec.sorting import NullOrder, SortDirection, build_sort_order
from icefloe.spec.transforms import parse_transform
from icefloe.spec.types import (
    BinaryType,
    DateType,
    DecimalType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
    TimestamptzType,
)

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "country", StringType()),
    NestedField(3, "ts", TimestampType()),
    NestedField(4, "grass_date", DateType()),
    NestedField(5, "amount", DecimalType(10, 2)),
    NestedField(6, "payload", BinaryType()),
    NestedField(7, "tstz", TimestamptzType()),
)


@pytest.mark.parametrize(
    ("term", "column", "transform"),
    [
        ("country", "country", "identity"),
        ("day(ts)", "ts", "day"),
        ("days(ts)", "ts", "day"),
        ("  months( ts ) ", "ts", "month"),
        ("bucket(16, id)", "id", "bucket[16]"),
        ("truncate(4, country)", "country", "truncate[4]"),
        ("hour(`ts`)", "ts", "hour"),
        ("years(ts)", "ts", "year"),
    ],
)
def test_parse_partition_terms(term: str, column: str, transform: str) -> None:
    assert parse_partition_term(term) == (column, parse_transform(transform))


@pytest.mark.parametrize("term", ["bucket(id)", "frobnicate(ts)", "day(4, ts)", "a(b(c))"])
def test_bad_partition_terms(term: str) -> None:
    with pytest.raises(ValidationError):
        parse_partition_term(term)


def test_spec_field_names_ids_and_types() -> None:
    spec = build_spec(SCHEMA, ["country", "day(ts)", "bucket(16, id)", "truncate(4, country)", "month(tstz)"])
    assert [f.name for f in spec.fields] == ["country", "ts_day", "id_bucket", "country_trunc", "tstz_month"]
    assert [f.field_id for f in spec.fields] == [1000, 1001, 1002, 1003, 1004]
    assert str(spec.partition_type(SCHEMA)) == (
        "struct<country: string, ts_day: date, id_bucket: int, country_trunc: string, tstz_month: int>"
    )


def test_spec_builder_rejects_bad_fields() -> None:
    with pytest.raises(ValidationError, match="no such column"):
        build_spec(SCHEMA, ["nope"])
    with pytest.raises(ValidationError, match="cannot partition column 'payload'"):
        build_spec(SCHEMA, ["day(payload)"])
    with pytest.raises(ValidationError, match="already"):
        build_spec(SCHEMA, ["country", "country"])
    with pytest.raises(ValidationError, match="already used"):
        PartitionSpecBuilder(SCHEMA).identity("country").identity("grass_date", name="country").build()


def test_partition_path_round_trip_through_data_file_builder() -> None:
    spec = build_spec(SCHEMA, ["country", "grass_date", "hour(ts)", "bucket(8, id)", "amount"])
    values = ("Côte d'Ivoire / West", 19358, 464604, 3, None)
    path = spec.partition_to_path(values, SCHEMA)
    assert path.startswith(
        "country=C%C3%B4te+d%27Ivoire+%2F+West/grass_date=2023-01-01/ts_hour=2023-01-01-12/"
    )
    file = (
        DataFile.builder(spec, SCHEMA)
        .with_path("/t/data/x.parquet")
        .with_format("parquet")
        .with_file_size_in_bytes(10)
        .with_record_count(2)
        .with_partition_path(path)
        .build()
    )
    assert file.partition == values


def test_partition_value_parsing_of_time_transforms() -> None:
    assert parse_partition_value(parse_transform("year"), IntegerType(), "2024") == 54
    assert parse_partition_value(parse_transform("month"), IntegerType(), "2024-03") == 650
    assert parse_partition_value(parse_transform("day"), DateType(), "1969-12-31") == -1
    assert parse_partition_value(parse_transform("hour"), IntegerType(), "1970-01-02-03") == 27
    with pytest.raises(ValidationError, match="not a valid month"):
        parse_partition_value(parse_transform("month"), IntegerType(), "2024")


def test_data_file_builder_requires_fields_and_matching_partition() -> None:
    spec = build_spec(SCHEMA, ["country"])
    with pytest.raises(ValidationError, match="'file_size_in_bytes' is required"):
        DataFile.builder(spec).with_path("/x").with_format("parquet").with_record_count(1).build()
    with pytest.raises(ValidationError, match="partition has 0 values"):
        (
            DataFile.builder(spec)
            .with_path("/x")
            .with_format("parquet")
            .with_record_count(1)
            .with_file_size_in_bytes(1)
            .build()
        )


def test_sort_orders_from_strings() -> None:
    order = build_sort_order(
        SCHEMA, ["id", "ts DESC NULLS LAST", "bucket(4, id) asc nulls last", "country DESC"]
    )
    assert order.order_id == 1
    first, second, third, fourth = order.fields
    assert (first.source_id, first.direction, first.null_order) == (
        1,
        SortDirection.ASC,
        NullOrder.NULLS_FIRST,
    )
    assert (second.source_id, second.direction, second.null_order) == (
        3,
        SortDirection.DESC,
        NullOrder.NULLS_LAST,
    )
    assert str(third.transform) == "bucket[4]" and third.null_order == NullOrder.NULLS_LAST
    # Java's default null order follows the direction.
    assert fourth.null_order == NullOrder.NULLS_LAST
    assert build_sort_order(SCHEMA, None).is_unsorted
    with pytest.raises(ValidationError, match="no such column"):
        build_sort_order(SCHEMA, ["missing DESC"])
