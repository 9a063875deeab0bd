"""Literal conversions to column types: Java's, plus exact handling of values between two
values of the column's type."""

from __future__ import annotations

import datetime as dt
import math
import uuid
from decimal import Decimal
from typing import Any

import pytest

from icefloe.errors import InvalidFilterError
from icefloe.expressions.literals import (
    ABOVE_MAX,
    BELOW_MIN,
    BinaryLiteral,
    BooleanLiteral,
    DateLiteral,
    DecimalLiteral,
    FloatLiteral,
    Inexact,
    IntLiteral,
    StringLiteral,
    TimeLiteral,
    TimestampLiteral,
    TimestampNanoLiteral,
    TimestamptzLiteral,
    TimestamptzNanoLiteral,
    UUIDLiteral,
    literal,
    literal_for,
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
    LongType,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

F32_MAX = 3.4028234663852886e38
U = uuid.UUID("12345678-1234-5678-1234-567812345678")

CONVERSIONS: list[tuple[Any, IcebergType, Any]] = [
    # strings: every primitive type
    ("2023-01-01", DateType(), 19358),
    ("2024-03-10T00:00:00", TimestampType(), 1_710_028_800_000_000),
    ("2024-03-10 00:00:00.5", TimestampType(), 1_710_028_800_500_000),
    ("2024-03-10", TimestampType(), 1_710_028_800_000_000),  # a date is its midnight
    ("2024-03-10T00:00:00", TimestamptzType(), 1_710_028_800_000_000),  # UTC without an offset
    ("2024-03-10T02:00:00+02:00", TimestamptzType(), 1_710_028_800_000_000),
    ("2024-03-10T00:00:00Z", TimestamptzNanoType(), 1_710_028_800_000_000_000),
    ("1970-01-01T00:00:00.000000001", TimestampNanoType(), 1),
    ("1970-01-01T00:00:00.0000005", TimestampType(), Inexact(0, 1)),
    ("1970-01-02T10:00:00", DateType(), Inexact(1, 2)),
    ("10:15:30.25", TimeType(), 36_930_250_000),
    ("10.50", DecimalType(10, 2), Decimal("10.50")),
    ("10.5", DecimalType(10, 2), Decimal("10.50")),
    ("10.505", DecimalType(10, 2), Inexact(Decimal("10.50"), Decimal("10.51"))),
    ("-10.505", DecimalType(10, 2), Inexact(Decimal("-10.51"), Decimal("-10.50"))),
    ("42", IntegerType(), 42),
    ("1e3", LongType(), 1000),
    ("2.5", IntegerType(), Inexact(2, 3)),
    ("0.1", FloatType(), 0.10000000149011612),
    ("0.1", DoubleType(), 0.1),
    ("-Infinity", DoubleType(), -math.inf),
    ("TRUE", BooleanType(), True),
    ("false", BooleanType(), False),
    (str(U), UUIDType(), U),
    ("abc", BinaryType(), b"abc"),
    ("abc", FixedType(3), b"abc"),
    ("abc", StringType(), "abc"),
    # integers
    (5, IntegerType(), 5),
    (2**31, IntegerType(), Inexact(2**31 - 1, ABOVE_MAX)),
    (-(2**31) - 1, IntegerType(), Inexact(BELOW_MIN, -(2**31))),
    (2**63, LongType(), Inexact(2**63 - 1, ABOVE_MAX)),
    (5, DoubleType(), 5.0),
    (2**24 + 1, FloatType(), 16777216.0),  # rounds, as Java's floatValue
    (5, DecimalType(3, 2), Decimal("5.00")),
    (1000, DecimalType(3, 2), Inexact(Decimal("9.99"), ABOVE_MAX)),
    (19358, DateType(), 19358),
    (5, TimeType(), 5),
    (-1, TimeType(), Inexact(BELOW_MIN, 0)),
    (7, TimestampType(), 7),
    (7, TimestampNanoType(), 7),  # icefloe's representation: nanoseconds (Java reads micros)
    # floats
    (1.5, FloatType(), 1.5),
    (1e300, FloatType(), Inexact(F32_MAX, math.inf)),
    (-1e300, FloatType(), Inexact(-math.inf, -F32_MAX)),
    (math.inf, FloatType(), math.inf),
    (0.1, DecimalType(5, 2), Decimal("0.10")),  # as Java: the shortest decimal of the double
    (0.125, DecimalType(5, 2), Inexact(Decimal("0.12"), Decimal("0.13"))),
    (0.25, DecimalType(5, 2), Decimal("0.25")),
    (2.5, LongType(), Inexact(2, 3)),
    (-2.5, LongType(), Inexact(-3, -2)),
    (3.0, IntegerType(), 3),
    (math.inf, IntegerType(), Inexact(2**31 - 1, ABOVE_MAX)),
    # decimals
    (Decimal("1.5"), DecimalType(10, 2), Decimal("1.50")),
    (Decimal("1E+1"), DecimalType(4, 2), Decimal("10.00")),
    (Decimal("1.5"), DoubleType(), 1.5),
    (Decimal("1.5"), IntegerType(), Inexact(1, 2)),
    # temporal literals
    (DateLiteral(1), TimestampType(), 86_400_000_000),
    (DateLiteral(1), TimestamptzNanoType(), 86_400_000_000_000),
    (DateLiteral(2**40), DateType(), Inexact(2**31 - 1, ABOVE_MAX)),
    (TimestampLiteral(86_400_000_000), DateType(), 1),
    (TimestampLiteral(1), TimestamptzType(), 1),
    (TimestampLiteral(1), TimestampNanoType(), 1000),
    (TimestamptzLiteral(1), TimestampType(), 1),  # as Java: both are TIMESTAMP
    (TimestampNanoLiteral(1500), TimestampType(), Inexact(1, 2)),
    (TimestampNanoLiteral(-1500), TimestampType(), Inexact(-2, -1)),
    (TimestamptzNanoLiteral(3000), TimestamptzType(), 3),
    (TimeLiteral(5), TimeType(), 5),
    (b"\x01\x02", BinaryType(), b"\x01\x02"),
    (b"\x01\x02", FixedType(2), b"\x01\x02"),
    (True, BooleanType(), True),
    (U, UUIDType(), U),
]


@pytest.mark.parametrize(("value", "type_", "expected"), CONVERSIONS)
def test_conversions(value: Any, type_: IcebergType, expected: Any) -> None:
    converted = literal(value).to(type_)
    assert converted == expected
    assert type(converted) is type(expected)


@pytest.mark.parametrize(
    ("value", "type_", "message"),
    [
        ("abc", IntegerType(), "not a number"),
        ("NaN", DoubleType(), "NaN cannot be compared"),
        ("2023-13-01", DateType(), "invalid date"),
        ("2024-01-01T00:00:00+01:00", TimestampType(), "cannot be compared with a time that has an offset"),
        ("maybe", BooleanType(), "expected 'true' or 'false'"),
        ("not-a-uuid", UUIDType(), "cannot convert 'not-a-uuid' to uuid"),
        ("ab", FixedType(3), "2 bytes, the column holds 3"),
        ("25:00", TimeType(), "invalid time"),
        (5, StringType(), "cannot compare a string column with 5"),
        (True, IntegerType(), "cannot compare a int column with TRUE"),
        (1.5, DateType(), "cannot compare a date column"),
        (DateLiteral(0), TimeType(), "cannot compare a time column with DATE '1970-01-01'"),
        (U, StringType(), "cannot compare a string column"),
        ("1e99999", DecimalType(10, 2), "exponent out of range"),
    ],
)
def test_conversion_errors(value: Any, type_: IcebergType, message: str) -> None:
    with pytest.raises(InvalidFilterError, match="cannot") as info:
        literal(value).to(type_)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, BooleanLiteral(True)),
        (5, IntLiteral(5)),
        (1.5, FloatLiteral(1.5)),
        (Decimal("1.5"), DecimalLiteral(Decimal("1.5"))),
        (Decimal("Infinity"), FloatLiteral(math.inf)),
        ("x", StringLiteral("x")),
        (U, UUIDLiteral(U)),
        (bytearray(b"ab"), BinaryLiteral(b"ab")),
        (dt.date(1970, 1, 3), DateLiteral(2)),
        (dt.datetime(1970, 1, 1, 0, 0, 1), TimestampLiteral(1_000_000)),
        (dt.datetime(1970, 1, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=1))), TimestamptzLiteral(0)),
        (dt.time(0, 0, 1), TimeLiteral(1_000_000)),
    ],
)
def test_literals_of_python_values(value: Any, expected: Any) -> None:
    assert literal(value) == expected
    assert literal(expected) is expected


def test_pandas_timestamps_keep_nanoseconds() -> None:
    pd = pytest.importorskip("pandas")
    assert literal(pd.Timestamp("1970-01-01T00:00:00.000000001")) == TimestampNanoLiteral(1)
    assert literal(pd.Timestamp("1970-01-01T00:00:01", tz="UTC")) == TimestamptzLiteral(1_000_000)


def test_numpy_scalars() -> None:
    np = pytest.importorskip("numpy")
    assert literal(np.int32(5)) == IntLiteral(5)
    assert literal(np.float32(1.5)) == FloatLiteral(1.5)
    assert literal(np.bool_(True)) == BooleanLiteral(True)


@pytest.mark.parametrize("value", [None, math.nan, Decimal("NaN"), object(), [1]])
def test_values_that_are_not_literals(value: Any) -> None:
    with pytest.raises(InvalidFilterError):
        literal(value)


def test_equality_is_by_kind_and_value() -> None:
    assert IntLiteral(1) != FloatLiteral(1.0)
    assert DecimalLiteral(Decimal("1.5")) == DecimalLiteral(Decimal("1.50"))
    assert len({IntLiteral(1), IntLiteral(1), DateLiteral(1)}) == 2


@pytest.mark.parametrize(
    ("type_", "value", "text"),
    [
        (BooleanType(), True, "TRUE"),
        (LongType(), -5, "-5"),
        (DoubleType(), 1.5, "1.5E0"),
        (DoubleType(), 1e300, "1e+300"),
        (FloatType(), -math.inf, "DOUBLE '-Infinity'"),
        (DecimalType(5, 2), Decimal("1.50"), "1.50"),
        (DecimalType(5, 0), Decimal("7"), "DECIMAL '7'"),
        (StringType(), "it's", "'it''s'"),
        (DateType(), -719_163, "DATE '0000-12-31'"),
        (DateType(), 2_932_897, "DATE '+10000-01-01'"),
        (TimeType(), 1, "TIME '00:00:00.000001'"),
        (TimestampType(), -1, "TIMESTAMP '1969-12-31T23:59:59.999999'"),
        (TimestamptzType(), 0, "TIMESTAMPTZ '1970-01-01T00:00:00+00:00'"),
        (TimestampNanoType(), 1, "TIMESTAMP_NS '1970-01-01T00:00:00.000000001'"),
        (TimestamptzNanoType(), 0, "TIMESTAMPTZ_NS '1970-01-01T00:00:00+00:00'"),
        (UUIDType(), U, f"UUID '{U}'"),
        (FixedType(2), b"\xab\x01", "X'AB01'"),
    ],
)
def test_sql_text_converts_back(type_: IcebergType, value: Any, text: str) -> None:
    lit = literal_for(type_, value)
    assert lit.sql() == text
    assert lit.to(type_) == value


def test_nested_types_have_no_literals() -> None:
    with pytest.raises(InvalidFilterError, match="has no literal values"):
        literal_for(StructType(), {})
