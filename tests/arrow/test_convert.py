"""Values between Arrow and icefloe's representation."""

from __future__ import annotations

import uuid
from decimal import Decimal

import pyarrow as pa
import pytest

from icefloe.arrow.convert import (
    from_arrow_array,
    from_arrow_scalar,
    repeat_value,
    to_arrow_array,
    to_arrow_scalar,
)
from icefloe.arrow.schema import type_to_arrow
from icefloe.errors import ValidationError
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
)

CASES = [
    (BooleanType(), [True, False]),
    (IntegerType(), [-(2**31), 2**31 - 1]),
    (LongType(), [-(2**63), 2**63 - 1]),
    (FloatType(), [1.5, float("inf")]),
    (DoubleType(), [-0.0, 1e300]),
    (DecimalType(38, 2), [Decimal("-999999999999999999999999999999999999.99"), Decimal("0.01")]),
    (DateType(), [-719_528, 2_932_896]),
    (TimeType(), [0, 86_399_999_999]),
    (TimestampType(), [-1, 1_700_000_000_000_000]),
    (TimestamptzType(), [-62_135_596_800_000_000, 0]),
    (TimestampNanoType(), [-1, 2**63 - 1]),
    (TimestamptzNanoType(), [123_456_789, -(2**63)]),
    (StringType(), ["", "héllo"]),
    (UUIDType(), [uuid.UUID(int=0), uuid.UUID("12345678-1234-5678-1234-567812345678")]),
    (FixedType(3), [b"abc", b"\x00\x00\x00"]),
    (BinaryType(), [b"", b"\xff"]),
]


@pytest.mark.parametrize(("iceberg_type", "values"), CASES, ids=[str(t) for t, _ in CASES])
def test_primitive_round_trip(iceberg_type, values):
    array = to_arrow_array([*values, None], iceberg_type)
    assert array.type == type_to_arrow(iceberg_type)
    assert from_arrow_array(array, iceberg_type) == [*values, None]
    assert from_arrow_array(array.slice(1), iceberg_type) == [values[1], None]
    assert from_arrow_scalar(to_arrow_scalar(values[0], iceberg_type), iceberg_type) == values[0]
    assert from_arrow_scalar(array[2], iceberg_type) is None
    assert from_arrow_array(repeat_value(values[1], iceberg_type, 3), iceberg_type) == [values[1]] * 3


NESTED = StructType(
    NestedField(1, "d", DateType()),
    NestedField(2, "u", UUIDType()),
    NestedField(3, "l", ListType(4, TimestampNanoType(), element_required=False)),
    NestedField(
        5, "m", MapType(6, StringType(), 7, StructType(NestedField(8, "v", DecimalType(5, 2))), False)
    ),
)


def test_nested_round_trip_and_slices():
    rows = [
        {"d": 3, "u": uuid.UUID(int=9), "l": [1, None, 2**62], "m": {"a": {"v": Decimal("1.25")}, "b": None}},
        None,
        {"d": None, "u": None, "l": None, "m": None},
        {"d": -3, "u": None, "l": [], "m": {}},
    ]
    array = to_arrow_array(rows, NESTED)
    assert array.type == type_to_arrow(NESTED)
    assert from_arrow_array(array, NESTED) == rows
    assert from_arrow_array(array.slice(1, 3), NESTED) == rows[1:]
    assert from_arrow_array(pa.chunked_array([array.slice(0, 1), array.slice(1)]), NESTED) == rows
    repeated = repeat_value(rows[0], NESTED, 2)
    assert from_arrow_array(repeated, NESTED) == [rows[0]] * 2


def test_structs_accept_positional_values():
    struct = StructType(NestedField(1, "a", IntegerType()), NestedField(2, "b", StringType()))
    assert to_arrow_array([(1, "x")], struct).to_pylist() == [{"a": 1, "b": "x"}]


def test_reads_other_arrow_forms():
    assert from_arrow_array(pa.array([0, 86_400_000], pa.date64()), DateType()) == [0, 1]
    assert from_arrow_array(pa.array(["a", "b", "a"]).dictionary_encode(), StringType()) == ["a", "b", "a"]
    assert from_arrow_array(pa.array([uuid.UUID(int=1).bytes], pa.binary(16)), UUIDType()) == [
        uuid.UUID(int=1)
    ]
    fixed_list = pa.array([[1, 2]], pa.list_(pa.int32(), 2))
    assert from_arrow_array(fixed_list, ListType(1, IntegerType())) == [[1, 2]]


def test_unknown_and_bad_values():
    assert to_arrow_array([None, None], UnknownType()).null_count == 2
    with pytest.raises(ValidationError, match="int"):
        to_arrow_array([2**40], IntegerType())
    with pytest.raises(ValidationError):
        to_arrow_array(["x"], LongType())
    assert repeat_value(None, StringType(), 2).to_pylist() == [None, None]
