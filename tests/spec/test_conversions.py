"""Single-value conversions: Appendix D binary, JSON single values, human strings, Python values.

Expected strings marked "Java" were produced by Apache Iceberg 1.9.2 on JDK 17.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import struct
import uuid
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from icefloe.errors import ValidationError
from icefloe.spec.conversions import (
    civil_from_days,
    days_from_civil,
    decimal_from_unscaled,
    from_bytes,
    from_json,
    from_python,
    to_bytes,
    to_human_string,
    to_json,
    to_python,
    unscaled_decimal,
)
from icefloe.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
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

UUID = uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")
TS_2017 = 1510871468123456  # 2017-11-16T22:31:08.123456


def f32(value: float) -> float:
    return float(struct.unpack("<f", struct.pack("<f", value))[0])


# --- Appendix D binary ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("type_", "value", "encoded"),
    [
        (BooleanType(), False, "00"),
        (BooleanType(), True, "01"),
        (IntegerType(), 34, "22000000"),
        (IntegerType(), -(2**31), "00000080"),
        (IntegerType(), 2**31 - 1, "ffffff7f"),
        (LongType(), 34, "2200000000000000"),
        (LongType(), -(2**63), "0000000000000080"),
        (LongType(), 2**63 - 1, "ffffffffffffff7f"),
        (FloatType(), 1.0, "0000803f"),
        (FloatType(), -0.0, "00000080"),
        (DoubleType(), 1.0, "000000000000f03f"),
        (DoubleType(), -0.0, "0000000000000080"),
        (DoubleType(), math.inf, "000000000000f07f"),
        (DateType(), 17486, "4e440000"),
        (DateType(), -1, "ffffffff"),
        (TimeType(), 81068000000, "008307e012000000"),
        (TimestampType(), -1, "ffffffffffffffff"),
        (TimestamptzType(), TS_2017, "40a5282d215e0500"),
        (TimestampNanoType(), 1, "0100000000000000"),
        (TimestamptzNanoType(), -(10**18), "00009c584c491ff2"),
        (StringType(), "", ""),
        (StringType(), "iceberg", b"iceberg".hex()),
        (StringType(), "ü😀", "c3bcf09f9880"),
        (UUIDType(), UUID, "f79c3e09677c4bbda4793f349cb785e7"),
        (FixedType(4), bytes([0, 1, 2, 3]), "00010203"),
        (BinaryType(), b"", ""),
        (BinaryType(), b"\x00\xff", "00ff"),
        (DecimalType(4, 2), Decimal("14.20"), "058c"),
        (DecimalType(38, 0), Decimal(0), "00"),
        (DecimalType(38, 0), Decimal(-1), "ff"),
        (DecimalType(38, 0), Decimal(127), "7f"),
        (DecimalType(38, 0), Decimal(128), "0080"),  # Java: 0080
        (DecimalType(38, 0), Decimal(-128), "80"),  # Java: 80
        (DecimalType(38, 0), Decimal(-129), "ff7f"),  # Java: ff7f
        (DecimalType(9, 2), Decimal("-0.01"), "ff"),
    ],
)
def test_binary_form(type_: IcebergType, value: Any, encoded: str) -> None:
    assert to_bytes(type_, value).hex() == encoded
    decoded = from_bytes(type_, bytes.fromhex(encoded))
    assert decoded == value and type(decoded) is type(value)
    if isinstance(value, float):
        assert math.copysign(1, decoded) == math.copysign(1, value)


@pytest.mark.parametrize("type_", [FloatType(), DoubleType()])
def test_nan_round_trips(type_: IcebergType) -> None:
    assert math.isnan(from_bytes(type_, to_bytes(type_, math.nan)))


@pytest.mark.parametrize("precision", range(1, 39))
def test_decimals_of_every_precision(precision: int) -> None:
    scale = precision // 3
    type_ = DecimalType(precision, scale)
    for unscaled in (10**precision - 1, -(10**precision) + 1, 1, -1, 0):
        value = decimal_from_unscaled(unscaled, scale)
        data = to_bytes(type_, value)
        assert int.from_bytes(data, "big", signed=True) == unscaled
        # minimal: dropping the first byte would change the value
        assert len(data) == 1 or int.from_bytes(data[1:], "big", signed=True) != unscaled
        assert from_bytes(type_, data) == value
        assert from_bytes(type_, data).as_tuple().exponent == -scale


def test_decimals_are_written_at_the_type_scale() -> None:
    assert to_bytes(DecimalType(9, 2), Decimal("14.2")) == to_bytes(DecimalType(9, 2), Decimal("14.20"))
    with pytest.raises(ValidationError):
        to_bytes(DecimalType(9, 2), Decimal("14.201"))
    with pytest.raises(ValidationError):
        to_bytes(DecimalType(9, 2), Decimal("NaN"))


def test_bounds_written_before_type_promotion() -> None:
    assert from_bytes(LongType(), to_bytes(IntegerType(), -5)) == -5
    assert from_bytes(DoubleType(), to_bytes(FloatType(), 1.5)) == 1.5
    assert from_bytes(DoubleType(), to_bytes(FloatType(), f32(0.1))) == f32(0.1)
    # date promoted to timestamp: the 4-byte bound is a day, read as its midnight
    assert from_bytes(TimestampType(), to_bytes(DateType(), -1)) == -86_400_000_000
    assert from_bytes(TimestampNanoType(), to_bytes(DateType(), 1)) == 86_400_000_000_000
    assert from_bytes(DecimalType(38, 2), to_bytes(DecimalType(4, 2), Decimal("-14.20"))) == Decimal("-14.20")


@pytest.mark.parametrize(
    ("type_", "data"),
    [
        (IntegerType(), b"\x00" * 8),
        (LongType(), b"\x00" * 3),
        (TimestamptzType(), b"\x00" * 4),  # date cannot be promoted to timestamptz
        (TimeType(), b"\x00" * 4),
        (FloatType(), b"\x00" * 8),
        (BooleanType(), b""),
        (UUIDType(), b"\x00" * 15),
        (DecimalType(9, 2), b""),
        (StringType(), b"\xff\xfe"),
        (UnknownType(), b""),
        (VariantType(), b"\x01"),
        (ListType(1, IntegerType()), b""),
    ],
)
def test_from_bytes_rejects_malformed_values(type_: IcebergType, data: bytes) -> None:
    with pytest.raises(ValidationError):
        from_bytes(type_, data)


@pytest.mark.parametrize(
    ("type_", "value"),
    [
        (IntegerType(), 2**31),
        (IntegerType(), True),
        (LongType(), -(2**63) - 1),
        (FloatType(), 1e300),
        (StringType(), b"bytes"),
        (StringType(), "\ud800"),
        (UUIDType(), str(UUID)),
        (BooleanType(), 1),
        (DecimalType(9, 2), 1.5),
        (StructType(), {}),
        (UnknownType(), 1),
    ],
)
def test_to_bytes_rejects_bad_values(type_: IcebergType, value: Any) -> None:
    with pytest.raises(ValidationError):
        to_bytes(type_, value)


INT_TYPES = st.sampled_from(
    [
        (IntegerType(), 32),
        (DateType(), 32),
        (LongType(), 64),
        (TimeType(), 64),
        (TimestampType(), 64),
        (TimestamptzType(), 64),
        (TimestampNanoType(), 64),
        (TimestamptzNanoType(), 64),
    ]
)


@given(INT_TYPES, st.data())
def test_integer_types_round_trip(type_bits: tuple[IcebergType, int], data: st.DataObject) -> None:
    type_, bits = type_bits
    value = data.draw(st.integers(min_value=-(2 ** (bits - 1)), max_value=2 ** (bits - 1) - 1))
    assert from_bytes(type_, to_bytes(type_, value)) == value


@given(st.floats(allow_nan=False))
def test_doubles_round_trip(value: float) -> None:
    assert from_bytes(DoubleType(), to_bytes(DoubleType(), value)) == value


@given(st.floats(allow_nan=False, width=32))
def test_floats_round_trip(value: float) -> None:
    assert from_bytes(FloatType(), to_bytes(FloatType(), value)) == value


@given(st.text())
def test_strings_round_trip(value: str) -> None:
    assert from_bytes(StringType(), to_bytes(StringType(), value)) == value


@given(st.integers(min_value=1, max_value=38), st.data())
def test_decimals_round_trip(precision: int, data: st.DataObject) -> None:
    scale = data.draw(st.integers(min_value=-5, max_value=precision))
    unscaled = data.draw(st.integers(min_value=-(10**precision) + 1, max_value=10**precision - 1))
    value = decimal_from_unscaled(unscaled, scale)
    assert from_bytes(DecimalType(precision, scale), to_bytes(DecimalType(precision, scale), value)) == value
    assert unscaled_decimal(value, scale) == unscaled


# --- calendar helpers -------------------------------------------------------------------------


@given(st.dates())
def test_civil_days_agree_with_datetime(date: dt.date) -> None:
    days = date.toordinal() - dt.date(1970, 1, 1).toordinal()
    assert civil_from_days(days) == (date.year, date.month, date.day)
    assert days_from_civil(date.year, date.month, date.day) == days


def test_civil_days_beyond_datetime_range() -> None:
    assert civil_from_days(-719529) == (-1, 12, 31)  # year 0 exists, as in java.time
    assert days_from_civil(10000, 1, 1) == 2932897
    for bad in ((2023, 2, 29), (2024, 13, 1), (2024, 4, 31)):
        with pytest.raises(ValidationError):
            days_from_civil(*bad)
    assert days_from_civil(2024, 2, 29) - days_from_civil(2024, 2, 28) == 1


# --- JSON single values ----------------------------------------------------------------------

NESTED_STRUCT = StructType(NestedField(1, "x", IntegerType()), NestedField(2, "y", StringType()))


@pytest.mark.parametrize(
    ("type_", "value", "json_value"),
    [
        # The spec table's examples
        (BooleanType(), True, True),
        (IntegerType(), 34, 34),
        (LongType(), 34, 34),
        (FloatType(), 1.0, 1.0),
        (DoubleType(), 1.0, 1.0),
        (DecimalType(9, 2), Decimal("14.20"), "14.20"),
        (DecimalType(1, -20), Decimal("2E+20"), "2E+20"),
        (DateType(), 17486, "2017-11-16"),
        (TimeType(), 81068123456, "22:31:08.123456"),
        (TimestampType(), TS_2017, "2017-11-16T22:31:08.123456"),
        (TimestamptzType(), TS_2017, "2017-11-16T22:31:08.123456+00:00"),
        (TimestampNanoType(), TS_2017 * 1000 + 789, "2017-11-16T22:31:08.123456789"),
        (TimestamptzNanoType(), TS_2017 * 1000 + 789, "2017-11-16T22:31:08.123456789+00:00"),
        (StringType(), "iceberg", "iceberg"),
        (UUIDType(), UUID, "f79c3e09-677c-4bbd-a479-3f349cb785e7"),
        (FixedType(4), bytes([0, 1, 2, 255]), "000102FF"),  # Java writes upper-case hex
        (BinaryType(), bytes([0, 1, 2, 255]), "000102FF"),
        (NESTED_STRUCT, {"x": 1, "y": "bar"}, {"1": 1, "2": "bar"}),
        (ListType(3, IntegerType()), [1, 2, 3], [1, 2, 3]),
        (
            MapType(4, StringType(), 5, IntegerType()),
            {"a": 1, "b": 2},
            {"keys": ["a", "b"], "values": [1, 2]},
        ),
        # Java forms: no trailing fraction zeros, seconds always, ISO years
        (TimeType(), 36000500000, "10:00:00.5"),
        (TimeType(), 36000000000, "10:00:00"),
        (TimestampType(), 1672567200000000, "2023-01-01T10:00:00"),
        (TimestamptzType(), -1, "1969-12-31T23:59:59.999999+00:00"),
        (TimestampNanoType(), 1, "1970-01-01T00:00:00.000000001"),
        (DateType(), 2932897, "+10000-01-01"),
        (DateType(), -719529, "-0001-12-31"),
        (DecimalType(10, 8), Decimal("0.00000001"), "0.00000001"),
        (DecimalType(38, 0), Decimal(-(10**38) + 1), str(-(10**38) + 1)),
        (StringType(), "", ""),
        (BinaryType(), b"", ""),
    ],
)
def test_json_single_values(type_: IcebergType, value: Any, json_value: Any) -> None:
    assert to_json(type_, value) == json_value
    parsed = from_json(type_, json.loads(json.dumps(json_value)))
    assert parsed == value
    assert to_json(type_, parsed) == json_value


def test_json_reads_what_other_writers_write() -> None:
    assert from_json(FixedType(4), "000102ff") == bytes([0, 1, 2, 255])  # the spec's lower case
    assert from_json(TimeType(), "10:00") == 36_000_000_000  # ISO_LOCAL_TIME minutes only
    assert from_json(TimeType(), "22:31:08.1234567") == 81068123456  # extra digits truncated
    assert from_json(TimestamptzType(), "2017-11-16T22:31:08Z") == TS_2017 - 123456
    assert from_json(TimestamptzType(), "2017-11-16T22:31:08-00:00") == TS_2017 - 123456
    assert from_json(TimestampType(), "1969-12-31T23:59:59.9999995") == 0  # Java truncates toward 0
    assert from_json(DoubleType(), 1) == 1.0 and from_json(FloatType(), 0.1) == f32(0.1)
    assert math.isnan(from_json(DoubleType(), "NaN")) and from_json(FloatType(), "-Infinity") == -math.inf
    assert from_json(NESTED_STRUCT, {"2": "a", "99": 1}) == {"y": "a"}  # missing fields: left to defaults


def test_json_non_finite_floats_are_written_as_jackson_does() -> None:
    assert to_json(DoubleType(), math.nan) == "NaN"
    assert to_json(FloatType(), math.inf) == "Infinity"


def test_json_struct_skips_nulls_and_accepts_positional_values() -> None:
    assert to_json(NESTED_STRUCT, {"x": 1, "y": None}) == {"1": 1}  # Java: {"1":1}
    assert to_json(NESTED_STRUCT, (None, "b")) == {"2": "b"}
    nested = ListType(1, MapType(2, StringType(), 3, NESTED_STRUCT))
    value = [{"k": {"x": 7, "y": "z"}}, {}]
    assert from_json(nested, to_json(nested, value)) == value


@pytest.mark.parametrize(
    ("type_", "json_value"),
    [
        (BooleanType(), "true"),
        (IntegerType(), True),
        (IntegerType(), 1.0),
        (IntegerType(), 2**31),
        (LongType(), "34"),
        (FloatType(), "1.0"),
        (DecimalType(9, 2), "14.2"),  # the scale must match
        (DecimalType(9, 2), 14.2),
        (DecimalType(9, 2), "1_4.20"),
        (DateType(), "2017-02-30"),
        (DateType(), 17486),
        (TimeType(), "24:00:00"),
        (TimestampType(), "2017-11-16T22:31:08+00:00"),  # no offset without zone
        (TimestamptzType(), "2017-11-16T22:31:08"),
        (TimestamptzType(), "2017-11-16T14:31:08-08:00"),  # the offset must be UTC
        (UUIDType(), "f79c3e09677c4bbda4793f349cb785e7"),
        (FixedType(4), "000102"),
        (BinaryType(), "0g"),
        (BinaryType(), "012"),
        (ListType(1, IntegerType()), {"a": 1}),
        (MapType(1, StringType(), 2, IntegerType()), {"keys": ["a"], "values": []}),
        (NESTED_STRUCT, [1, "a"]),
        (UnknownType(), 1),
    ],
)
def test_json_rejects_mismatched_values(type_: IcebergType, json_value: Any) -> None:
    with pytest.raises(ValidationError):
        from_json(type_, json_value)


def test_json_null_is_none_for_every_type() -> None:
    for type_ in (UnknownType(), IntegerType(), NESTED_STRUCT, VariantType()):
        assert from_json(type_, None) is None and to_json(type_, None) is None


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_json_timestamps_round_trip(value: int) -> None:
    for type_ in (TimestampType(), TimestamptzType(), TimestampNanoType(), TimestamptzNanoType()):
        assert from_json(type_, to_json(type_, value)) == value


@given(st.integers(min_value=0, max_value=86_400_000_000 - 1))
def test_json_times_round_trip(value: int) -> None:
    assert from_json(TimeType(), to_json(TimeType(), value)) == value


@given(st.integers(min_value=-(2**31), max_value=2**31 - 1))
def test_json_dates_round_trip(value: int) -> None:
    assert from_json(DateType(), to_json(DateType(), value)) == value


# --- human strings ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("type_", "value", "expected"),
    [
        # Java TestIdentity
        (LongType(), None, "null"),
        (BinaryType(), bytes([1, 2, 3]), "AQID"),
        (FixedType(3), bytes([1, 2, 3]), "AQID"),
        (DateType(), 17501, "2017-12-01"),
        (TimeType(), 36775038194, "10:12:55.038194"),
        (TimestampType(), 1512123175038194, "2017-12-01T10:12:55.038194"),
        (LongType(), -1234567890000, "-1234567890000"),
        (StringType(), "a/b/c=d", "a/b/c=d"),
        (DecimalType(9, 2), Decimal("-1.50"), "-1.50"),
        # Java 1.9.2 outputs
        (TimestamptzType(), 1512151975038194, "2017-12-01T18:12:55.038194+00:00"),
        (TimestampType(), 1672567200000000, "2023-01-01T10:00:00"),
        (TimestamptzType(), 1672567200000000, "2023-01-01T10:00:00+00:00"),
        (TimestampType(), 1672567200500000, "2023-01-01T10:00:00.5"),
        (TimestampType(), -1, "1969-12-31T23:59:59.999999"),
        (TimestampNanoType(), 1, "1970-01-01T00:00:00.000000001"),
        (TimestamptzNanoType(), 1672567200123456789, "2023-01-01T10:00:00.123456789+00:00"),
        (TimestampType(), 2932897 * 86_400_000_000, "+10000-01-01T00:00:00"),
        (TimestampType(), -719529 * 86_400_000_000, "-0001-12-31T00:00:00"),
        (TimeType(), 36000000000, "10:00"),
        (TimeType(), 36000500000, "10:00:00.500"),
        (TimeType(), 36000000001, "10:00:00.000001"),
        (DateType(), -1, "1969-12-31"),
        (DateType(), -719529, "-001-12-31"),  # String.format("%04d")
        (DateType(), 2932897, "10000-01-01"),
        (DecimalType(10, 8), Decimal("0.00000001"), "1E-8"),  # BigDecimal.toString
        (DecimalType(10, 8), Decimal("0E-8"), "0E-8"),
        (DecimalType(9, 2), Decimal("1.5"), "1.50"),
        (FloatType(), f32(0.1), "0.1"),
        (FloatType(), f32(1e10), "1.0E10"),
        (FloatType(), struct.unpack("<f", struct.pack("<I", 1))[0], "1.4E-45"),
        (DoubleType(), 1e7, "1.0E7"),
        (DoubleType(), 1e-4, "1.0E-4"),
        (DoubleType(), 2e-3, "0.002"),
        (DoubleType(), 5e-324, "4.9E-324"),
        (DoubleType(), -0.0, "-0.0"),
        (DoubleType(), 123.0, "123.0"),
        (DoubleType(), 9999999.5, "9999999.5"),
        (DoubleType(), math.nan, "NaN"),
        (DoubleType(), -math.inf, "-Infinity"),
        (BooleanType(), True, "true"),
        (BooleanType(), False, "false"),
        (UUIDType(), UUID, "f79c3e09-677c-4bbd-a479-3f349cb785e7"),
        (BinaryType(), bytes([0xFB, 0xFF]), "+/8="),
        (StringType(), "", ""),
    ],
)
def test_human_strings(type_: IcebergType, value: Any, expected: str) -> None:
    assert to_human_string(type_, value) == expected


# --- Python values ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("type_", "internal", "native"),
    [
        (DateType(), 17486, dt.date(2017, 11, 16)),
        (DateType(), -1, dt.date(1969, 12, 31)),
        (TimeType(), 81068123456, dt.time(22, 31, 8, 123456)),
        (TimestampType(), TS_2017, dt.datetime(2017, 11, 16, 22, 31, 8, 123456)),
        (TimestampType(), -1, dt.datetime(1969, 12, 31, 23, 59, 59, 999999)),
        (TimestamptzType(), TS_2017, dt.datetime(2017, 11, 16, 22, 31, 8, 123456, tzinfo=dt.UTC)),
        (TimestampNanoType(), TS_2017 * 1000, dt.datetime(2017, 11, 16, 22, 31, 8, 123456)),
        (DecimalType(9, 2), Decimal("14.20"), Decimal("14.20")),
        (UUIDType(), UUID, UUID),
        (BinaryType(), b"\x00", b"\x00"),
        (NESTED_STRUCT, {"x": 1, "y": "a"}, {"x": 1, "y": "a"}),
        (ListType(1, DateType()), [0, None], [dt.date(1970, 1, 1), None]),
        (MapType(1, StringType(), 2, TimeType()), {"t": 0}, {"t": dt.time(0)}),
    ],
)
def test_python_values_round_trip(type_: IcebergType, internal: Any, native: Any) -> None:
    assert to_python(type_, internal) == native
    assert from_python(type_, native) == internal


def test_from_python_conveniences() -> None:
    pst = dt.timezone(dt.timedelta(hours=-8))
    assert from_python(TimestamptzType(), dt.datetime(2017, 11, 16, 14, 31, 8, 123456, tzinfo=pst)) == TS_2017
    assert from_python(TimestampType(), dt.date(1970, 1, 2)) == 86_400_000_000
    assert from_python(TimestampNanoType(), dt.datetime(1970, 1, 1, 0, 0, 0, 1)) == 1000
    assert from_python(DateType(), 5) == 5  # already internal
    assert from_python(DecimalType(5, 2), 1.5) == Decimal("1.50")
    assert from_python(DecimalType(5, 2), "-3") == Decimal("-3.00")
    assert from_python(UUIDType(), str(UUID)) == UUID
    assert from_python(BinaryType(), bytearray(b"ab")) == b"ab"
    assert from_python(FloatType(), 0.1) == f32(0.1)
    assert from_python(NESTED_STRUCT, (1, None)) == {"x": 1, "y": None}
    assert to_python(TimestampNanoType(), -1) == dt.datetime(1969, 12, 31, 23, 59, 59, 999999)


@pytest.mark.parametrize(
    ("type_", "value"),
    [
        (TimestampType(), dt.datetime(2020, 1, 1, tzinfo=dt.UTC)),
        (TimestamptzType(), dt.datetime(2020, 1, 1)),
        (TimestamptzType(), dt.date(2020, 1, 1)),
        (DateType(), dt.datetime(2020, 1, 1)),
        (TimeType(), dt.time(1, tzinfo=dt.UTC)),
        (DecimalType(3, 2), Decimal("10.00")),  # precision
        (DecimalType(3, 2), Decimal("1.001")),  # scale
        (FixedType(2), b"abc"),
        (IntegerType(), 2**31),
        (IntegerType(), True),
        (FloatType(), 1e300),
        (UUIDType(), "not-a-uuid"),
        (UnknownType(), 1),
        (NESTED_STRUCT, {"z": 1}),
    ],
)
def test_from_python_rejects_values_that_do_not_fit(type_: IcebergType, value: Any) -> None:
    with pytest.raises(ValidationError):
        from_python(type_, value)


def test_to_python_rejects_values_outside_datetime() -> None:
    with pytest.raises(ValidationError):
        to_python(TimestampType(), 2**62)
    with pytest.raises(ValidationError):
        to_python(TimeType(), 86_400_000_000)
