"""Iceberg <-> Arrow schema conversion and conforming data to a table schema."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icefloe.arrow.schema import (
    FIELD_ID_KEY,
    apply_name_mapping,
    arrow_to_schema,
    arrow_to_schema_fresh,
    field_id_of,
    schema_to_arrow,
    to_requested_schema,
    type_to_arrow,
)
from icefloe.errors import InvalidSchemaError, UnsupportedFeatureError, ValidationError
from icefloe.spec.name_mapping import MappedField, NameMapping, create_mapping_from_schema
from icefloe.spec.schema import Schema
from icefloe.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UnknownType,
    UUIDType,
    VariantType,
)

PRIMITIVES = [
    (BooleanType(), pa.bool_()),
    (IntegerType(), pa.int32()),
    (LongType(), pa.int64()),
    (FloatType(), pa.float32()),
    (DoubleType(), pa.float64()),
    (DecimalType(9, 2), pa.decimal128(9, 2)),
    (DecimalType(38, 10), pa.decimal128(38, 10)),
    (DateType(), pa.date32()),
    (TimeType(), pa.time64("us")),
    (TimestampType(), pa.timestamp("us")),
    (TimestamptzType(), pa.timestamp("us", tz="UTC")),
    (TimestampNanoType(), pa.timestamp("ns")),
    (TimestamptzNanoType(), pa.timestamp("ns", tz="UTC")),
    (StringType(), pa.string()),
    (UUIDType(), pa.uuid()),
    (FixedType(7), pa.binary(7)),
    (BinaryType(), pa.binary()),
]


def nested_schema() -> Schema:
    return Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(
            2,
            "location",
            StructType(
                NestedField(3, "lat", DoubleType(), required=True),
                NestedField(4, "lon", DoubleType()),
            ),
        ),
        NestedField(
            5,
            "points",
            ListType(
                6, StructType(NestedField(7, "x", IntegerType()), NestedField(8, "y", StringType())), True
            ),
        ),
        NestedField(9, "tags", MapType(10, StringType(), 11, ListType(12, UUIDType(), False), False)),
        NestedField(13, "scores", ListType(14, DecimalType(10, 3), element_required=False), required=True),
    )


@pytest.mark.parametrize(("iceberg", "arrow"), PRIMITIVES, ids=[str(t) for t, _ in PRIMITIVES])
def test_every_primitive_maps_both_ways(iceberg, arrow):
    schema = Schema(NestedField(1, "c", iceberg, required=True), NestedField(2, "o", iceberg))
    pa_schema = schema_to_arrow(schema)
    assert pa_schema.field("c").type == arrow
    assert pa_schema.field("c").nullable is False
    assert pa_schema.field("o").nullable is True
    assert pa_schema.field("c").metadata == {FIELD_ID_KEY: b"1"}
    assert arrow_to_schema(pa_schema) == schema


def test_unknown_is_null_and_always_optional():
    schema = Schema(NestedField(1, "u", UnknownType()))
    pa_schema = schema_to_arrow(schema)
    assert pa_schema.field("u").type == pa.null()
    assert arrow_to_schema(pa_schema) == schema


def test_variant_is_not_supported_in_arrow():
    with pytest.raises(UnsupportedFeatureError):
        schema_to_arrow(Schema(NestedField(1, "v", VariantType())))


def test_nested_types_carry_ids_on_elements_keys_and_values():
    pa_schema = schema_to_arrow(nested_schema())
    points = pa_schema.field("points").type
    assert points.value_field.name == "element"
    assert field_id_of(points.value_field) == 6
    assert points.value_field.nullable is False
    assert field_id_of(points.value_type.field("y")) == 8
    tags = pa_schema.field("tags").type
    assert (tags.key_field.name, tags.item_field.name) == ("key", "value")
    assert (field_id_of(tags.key_field), field_id_of(tags.item_field)) == (10, 11)
    assert tags.key_field.nullable is False
    assert field_id_of(tags.item_type.value_field) == 12
    assert tags.item_type.value_field.nullable is True
    assert arrow_to_schema(pa_schema) == nested_schema()


def test_without_field_ids():
    pa_schema = schema_to_arrow(nested_schema(), include_field_ids=False)
    assert all(f.metadata is None for f in pa_schema)
    assert pa_schema.field("points").type.value_type.field("x").metadata is None


def test_ids_survive_a_parquet_round_trip(tmp_path):
    pa_schema = schema_to_arrow(nested_schema())
    path = tmp_path / "ids.parquet"
    pq.write_table(pa.Table.from_batches([], schema=pa_schema), path)
    assert arrow_to_schema(pq.read_schema(path)) == nested_schema()
    parquet_schema = pq.ParquetFile(path).schema
    # the Parquet schema itself holds the ids, including list elements and map keys/values
    text = str(parquet_schema)
    for fid in (6, 10, 11, 12, 14):
        assert f"field_id={fid} " in text


def test_uuid_is_written_as_fixed_16_with_the_uuid_logical_type(tmp_path):
    path = tmp_path / "uuid.parquet"
    table = pa.table(
        {"u": pa.array([uuid.uuid4()], pa.uuid())},
        schema=schema_to_arrow(Schema(NestedField(1, "u", UUIDType()))),
    )
    pq.write_table(table, path, store_schema=False)
    column = pq.ParquetFile(path).schema.column(0)
    assert column.physical_type == "FIXED_LEN_BYTE_ARRAY"
    assert column.length == 16
    assert column.logical_type.type == "UUID"


def test_arrow_to_schema_accepts_the_bare_field_id_key():
    pa_schema = pa.schema([pa.field("a", pa.int32(), metadata={b"field_id": b"7"})])
    assert arrow_to_schema(pa_schema) == Schema(NestedField(7, "a", IntegerType()))


def test_arrow_to_schema_names_every_column_without_an_id():
    pa_schema = pa.schema(
        [
            pa.field("a", pa.int32(), metadata={FIELD_ID_KEY: b"1"}),
            pa.field("b", pa.struct([pa.field("c", pa.int32())]), metadata={FIELD_ID_KEY: b"2"}),
            pa.field("d", pa.string()),
        ]
    )
    with pytest.raises(InvalidSchemaError) as info:
        arrow_to_schema(pa_schema)
    assert "'b.c'" in str(info.value) and "'d'" in str(info.value)
    assert "'a'" not in str(info.value)


def test_arrow_to_schema_uses_the_name_mapping_for_missing_ids():
    pa_schema = pa.schema(
        [
            pa.field("record_id", pa.int64(), nullable=False),
            pa.field("loc", pa.struct([pa.field("lat", pa.float64()), pa.field("lng", pa.float64())])),
            pa.field("xs", pa.list_(pa.int32())),
            pa.field("m", pa.map_(pa.string(), pa.int32())),
        ]
    )
    mapping = NameMapping(
        (
            MappedField(1, ("id", "record_id")),
            MappedField(2, ("location", "loc"), (MappedField(3, ("lat",)), MappedField(4, ("lon", "lng")))),
            MappedField(5, ("xs",), (MappedField(6, ("element",)),)),
            MappedField(7, ("m",), (MappedField(8, ("key",)), MappedField(9, ("value",)))),
        )
    )
    schema = arrow_to_schema(pa_schema, name_mapping=mapping)
    assert schema == Schema(
        NestedField(1, "record_id", LongType(), required=True),
        NestedField(
            2, "loc", StructType(NestedField(3, "lat", DoubleType()), NestedField(4, "lng", DoubleType()))
        ),
        NestedField(5, "xs", ListType(6, IntegerType(), element_required=False)),
        NestedField(7, "m", MapType(8, StringType(), 9, IntegerType(), value_required=False)),
    )
    # a field the mapping does not know is reported
    with pytest.raises(InvalidSchemaError, match="'extra'"):
        arrow_to_schema(pa_schema.append(pa.field("extra", pa.int32())), name_mapping=mapping)


def test_apply_name_mapping_adds_ids_and_keeps_existing_ones():
    pa_schema = pa.schema(
        [pa.field("a", pa.int32(), metadata={FIELD_ID_KEY: b"42"}), pa.field("b", pa.list_(pa.int32()))]
    )
    mapping = NameMapping((MappedField(1, ("a",)), MappedField(2, ("b",), (MappedField(3, ("element",)),))))
    mapped = apply_name_mapping(pa_schema, mapping)
    assert [field_id_of(f) for f in mapped] == [42, 2]
    assert field_id_of(mapped.field("b").type.value_field) == 3


def test_fresh_schema_from_pandas_and_polars_types():
    pa_schema = pa.schema(
        [
            pa.field("i8", pa.int8()),
            pa.field("i16", pa.int16()),
            pa.field("u8", pa.uint8()),
            pa.field("u32", pa.uint32()),
            pa.field("f16", pa.float16()),
            pa.field("ls", pa.large_string(), nullable=False),
            pa.field("sv", pa.string_view()),
            pa.field("lb", pa.large_binary()),
            pa.field("dict", pa.dictionary(pa.int32(), pa.string())),
            pa.field("ll", pa.large_list(pa.int64())),
            pa.field("fsl", pa.list_(pa.float32(), 3)),
            pa.field("tz", pa.timestamp("ms", tz="Europe/Paris")),
            pa.field("ts_s", pa.timestamp("s")),
            pa.field("ts_ns", pa.timestamp("ns")),
            pa.field("d64", pa.date64()),
            pa.field("t32", pa.time32("ms")),
            pa.field("s", pa.struct([pa.field("x", pa.int64(), metadata={FIELD_ID_KEY: b"99"})])),
            pa.field("m", pa.map_(pa.large_string(), pa.bool_())),
        ]
    )
    schema = arrow_to_schema_fresh(pa_schema)
    types = {f.name: f.field_type for f in schema.fields}
    assert types["i8"] == types["i16"] == types["u8"] == IntegerType()
    assert types["u32"] == LongType()
    assert types["f16"] == FloatType()
    assert types["ls"] == types["sv"] == types["dict"] == StringType()
    assert schema.find_field("ls").required
    assert types["lb"] == BinaryType()
    assert types["ll"] == ListType(19, LongType(), element_required=False)
    assert isinstance(types["fsl"], ListType) and types["fsl"].element_type == FloatType()
    assert types["tz"] == TimestamptzType()
    assert types["ts_s"] == TimestampType()
    assert types["ts_ns"] == TimestampType()  # format version 2: nanoseconds become micros
    assert types["d64"] == DateType()
    assert types["t32"] == TimeType()
    # ids are fresh, in Java's order (top-level first), ignoring the metadata
    assert [f.field_id for f in schema.fields] == list(range(1, 19))
    assert schema.find_field("s.x").field_id == 21  # after the two list elements (19, 20)
    assert (
        arrow_to_schema_fresh(pa_schema, format_version=3).find_field("ts_ns").field_type
        == TimestampNanoType()
    )


@pytest.mark.parametrize(
    "arrow_type", [pa.uint64(), pa.duration("s"), pa.month_day_nano_interval(), pa.decimal256(50, 2)]
)
def test_fresh_schema_rejects_types_without_an_iceberg_type(arrow_type):
    pa_schema = pa.schema(
        [pa.field("ok", pa.int32()), pa.field("bad", pa.struct([pa.field("inner", arrow_type)]))]
    )
    with pytest.raises(InvalidSchemaError, match=r"'bad\.inner'"):
        arrow_to_schema_fresh(pa_schema)


def test_type_to_arrow_of_a_nested_type():
    assert type_to_arrow(ListType(3, LongType()), include_field_ids=False) == pa.list_(
        pa.field("element", pa.int64(), nullable=False)
    )


# ---------------------------------------------------------------------------------------------
# to_requested_schema


def test_to_requested_schema_casts_by_name_and_adds_ids():
    schema = nested_schema()
    data = pa.table(
        {
            "scores": pa.array([[Decimal("1.5")], []], pa.large_list(pa.decimal128(5, 1))),
            "id": pa.array([1, 2], pa.int32()),
            "location": [{"lon": 2.0, "lat": 1.0}, None],
            "points": [[{"x": 1, "y": "a"}], None],
            "tags": pa.array(
                [[("k", [uuid.UUID(int=5).bytes])], None], pa.map_(pa.large_string(), pa.list_(pa.binary(16)))
            ),
        }
    )
    result = to_requested_schema(data, schema)
    assert result.schema.equals(schema_to_arrow(schema), check_metadata=True)
    assert result.column("id").to_pylist() == [1, 2]
    assert result.column("location").to_pylist() == [{"lat": 1.0, "lon": 2.0}, None]
    assert result.column("tags").to_pylist() == [[("k", [uuid.UUID(int=5)])], None]
    assert result.column("scores").to_pylist() == [[Decimal("1.500")], []]


def test_to_requested_schema_keeps_a_record_batch_a_record_batch():
    schema = Schema(NestedField(1, "a", LongType()))
    result = to_requested_schema(pa.record_batch({"a": [1]}), schema)
    assert isinstance(result, pa.RecordBatch)
    assert field_id_of(result.schema.field("a")) == 1


def test_to_requested_schema_fills_missing_optional_columns_with_nulls_or_write_default():
    schema = Schema(
        NestedField(1, "a", LongType()),
        NestedField(2, "b", StringType()),
        NestedField(3, "c", DateType(), write_default=19_000),
        NestedField(4, "d", IntegerType(), required=True, write_default=7),
        NestedField(
            5, "s", StructType(NestedField(6, "x", IntegerType(), write_default=1)), write_default={}
        ),
    )
    result = to_requested_schema(pa.table({"a": [1, 2]}), schema)
    assert result.to_pylist() == [
        {"a": a, "b": None, "c": dt.date(2022, 1, 8), "d": 7, "s": {"x": 1}} for a in (1, 2)
    ]


def test_to_requested_schema_errors_name_the_column():
    schema = Schema(
        NestedField(1, "a", LongType(), required=True),
        NestedField(2, "s", StructType(NestedField(3, "x", IntegerType(), required=True))),
        NestedField(4, "l", ListType(5, StructType(NestedField(6, "z", DoubleType(), required=True)))),
    )
    with pytest.raises(ValidationError, match="required column 'a' is missing"):
        to_requested_schema(pa.table({"s": [None]}), schema)
    with pytest.raises(ValidationError, match="required column 'a' has 1 null"):
        to_requested_schema(pa.table({"a": [1, None]}), schema)
    with pytest.raises(ValidationError, match=r"required column 's\.x' has 1 null"):
        to_requested_schema(pa.table({"a": [1, 2], "s": [{"x": None}, {"x": 3}]}), schema)
    with pytest.raises(ValidationError, match=r"'extra', 'more'"):
        to_requested_schema(pa.table({"a": [1], "extra": [1], "more": [2]}), schema)
    with pytest.raises(ValidationError, match=r"'s\.y'"):
        to_requested_schema(pa.table({"a": [1], "s": [{"x": 1, "y": 2}]}), schema)
    with pytest.raises(ValidationError, match=r"column 'a' of type string"):
        to_requested_schema(pa.table({"a": ["1"]}), schema)
    with pytest.raises(ValidationError, match=r"required column 'l\.element\.z' has 1 null"):
        to_requested_schema(pa.table({"a": [1], "l": [[{"z": 1.0}, {"z": None}]]}), schema)
    with pytest.raises(ValidationError, match="column 'a'"):
        to_requested_schema(pa.table({"a": pa.array([2**40], pa.uint64())}), schema)


def test_nulls_under_a_null_parent_are_not_errors():
    schema = Schema(
        NestedField(2, "s", StructType(NestedField(3, "x", IntegerType(), required=True))),
        NestedField(4, "l", ListType(5, StructType(NestedField(6, "z", DoubleType(), required=True)))),
    )
    s = pa.StructArray.from_arrays(
        [pa.array([None, 1], pa.int32())], names=["x"], mask=pa.array([True, False])
    )
    # the null list's offsets cover an element whose z is null: it is not a value of the table
    values = pa.array([{"z": None}, {"z": 2.0}])
    lists = pa.ListArray.from_arrays(pa.array([0, 1, 2], pa.int32()), values, mask=pa.array([True, False]))
    result = to_requested_schema(pa.table({"s": s, "l": lists}), schema)
    assert result.to_pylist() == [{"s": None, "l": None}, {"s": {"x": 1}, "l": [{"z": 2.0}]}]


def test_to_requested_schema_narrows_long_to_int_only_when_values_fit():
    schema = Schema(NestedField(1, "a", IntegerType()))
    assert to_requested_schema(pa.table({"a": [1, 2**31 - 1]}), schema).column("a").type == pa.int32()
    with pytest.raises(ValidationError, match="column 'a'"):
        to_requested_schema(pa.table({"a": [2**31]}), schema)


def test_to_requested_schema_timestamps():
    schema = Schema(NestedField(1, "ts", TimestampType()), NestedField(2, "tz", TimestamptzType()))
    data = pa.table(
        {
            "ts": pa.array([1_000_000_000], pa.timestamp("ns")),
            "tz": pa.array([5], pa.timestamp("s", tz="America/New_York")),
        }
    )
    result = to_requested_schema(data, schema)
    assert result.column("ts").cast(pa.int64()).to_pylist() == [1_000_000]
    assert result.column("tz").type == pa.timestamp("us", tz="UTC")
    assert result.column("tz").cast(pa.int64()).to_pylist() == [5_000_000]
    with pytest.raises(ValidationError, match="column 'ts'"):  # would lose nanoseconds
        to_requested_schema(pa.table({"ts": pa.array([1], pa.timestamp("ns"))}), schema)
    with pytest.raises(ValidationError, match="column 'tz'"):  # naive into zoned is ambiguous
        to_requested_schema(pa.table({"tz": pa.array([1], pa.timestamp("us"))}), schema)


def test_to_requested_schema_of_an_empty_table():
    schema = Schema(NestedField(1, "a", LongType()))
    result = to_requested_schema(pa.table({"a": pa.array([], pa.int32())}), schema)
    assert result.num_rows == 0 and result.schema.equals(schema_to_arrow(schema), check_metadata=True)
    with pytest.raises(ValidationError, match="'b'"):
        to_requested_schema(pa.table({"b": pa.array([], pa.int32())}), schema)


def test_to_requested_schema_uuid_from_binary_and_all_null_columns():
    schema = Schema(NestedField(1, "u", UUIDType()), NestedField(2, "n", StringType()))
    u = uuid.uuid4()
    result = to_requested_schema(pa.table({"u": [u.bytes], "n": pa.nulls(1)}), schema)
    assert result.column("u").type == pa.uuid()
    assert result.to_pylist() == [{"u": u, "n": None}]
    with pytest.raises(ValidationError, match="column 'u'"):
        to_requested_schema(pa.table({"u": [b"short"]}), schema)


def test_name_mapping_of_a_schema_round_trips_through_arrow():
    schema = nested_schema()
    without_ids = schema_to_arrow(schema, include_field_ids=False)
    assert arrow_to_schema(without_ids, name_mapping=create_mapping_from_schema(schema)) == schema


def test_values_under_null_parents_are_not_converted():
    # pyarrow fills the children of null structs with placeholder values (here b"", which is
    # not a valid uuid); they must not be cast, nor reported
    schema = Schema(
        NestedField(1, "s", StructType(NestedField(2, "v", UUIDType()))),
        NestedField(3, "l", ListType(4, UUIDType())),
    )
    u = uuid.UUID(int=3)
    structs = pa.array([{"v": u.bytes}, None], pa.struct([pa.field("v", pa.binary())]))
    lists = pa.ListArray.from_arrays(
        pa.array([0, 1, 2], pa.int32()), pa.array([b"bad", u.bytes]), mask=pa.array([True, False])
    )
    result = to_requested_schema(pa.table({"s": structs, "l": lists}), schema)
    assert result.to_pylist() == [{"s": {"v": u}, "l": None}, {"s": None, "l": [u]}]
    assert result.column("l").chunk(0).values.to_pylist() == [u]  # the hidden value is gone
