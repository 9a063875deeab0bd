"""Partition transforms on single values, names, ordering relations and partition paths.

Expected values marked "Java" were produced by Apache Iceberg 1.9.2.
"""

from __future__ import annotations

import dataclasses
import uuid
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from icefloe.errors import UnsupportedFeatureError, ValidationError
from icefloe.spec.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    Transform,
    TruncateTransform,
    UnknownTransform,
    VoidTransform,
    YearTransform,
    parse_transform,
    partition_path_segment,
    url_encode,
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

ALL_PRIMITIVES: list[IcebergType] = [
    BooleanType(),
    IntegerType(),
    LongType(),
    FloatType(),
    DoubleType(),
    DecimalType(9, 2),
    DateType(),
    TimeType(),
    TimestampType(),
    TimestamptzType(),
    TimestampNanoType(),
    TimestamptzNanoType(),
    StringType(),
    UUIDType(),
    FixedType(4),
    BinaryType(),
]
YEAR, MONTH, DAY, HOUR = YearTransform(), MonthTransform(), DayTransform(), HourTransform()


# --- names, parsing, equality ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("transform", "text"),
    [
        (IdentityTransform(), "identity"),
        (VoidTransform(), "void"),
        (BucketTransform(16), "bucket[16]"),
        (TruncateTransform(4), "truncate[4]"),
        (YEAR, "year"),
        (MONTH, "month"),
        (DAY, "day"),
        (HOUR, "hour"),
    ],
)
def test_names_round_trip(transform: Transform, text: str) -> None:
    assert str(transform) == text
    assert parse_transform(text) == transform
    assert parse_transform(text.upper()) == transform  # Java parses case-insensitively
    assert hash(parse_transform(text)) == hash(transform)


def test_unknown_transforms_keep_their_text() -> None:
    for text in ("zorder", "bucket[x]", "truncate[]", "geohash[3]", "identity "):
        transform = parse_transform(text)
        assert transform == UnknownTransform(text) and str(transform) == text
        assert transform.can_transform(StringType())
        assert transform.result_type(LongType()) == StringType()  # Java says string too
        with pytest.raises(UnsupportedFeatureError):
            transform.apply(LongType(), 1)


@pytest.mark.parametrize("text", ["bucket[0]", "truncate[0]", "bucket[2147483648]"])
def test_invalid_arguments_of_known_transforms(text: str) -> None:
    with pytest.raises(ValidationError):
        parse_transform(text)


def test_transforms_are_immutable_values() -> None:
    assert BucketTransform(16) != BucketTransform(8)
    assert BucketTransform(4) != TruncateTransform(4)
    assert IdentityTransform() != VoidTransform()
    assert len({YEAR, YearTransform(), MONTH}) == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        BucketTransform(16).num_buckets = 3  # type: ignore[misc]
    with pytest.raises(ValidationError):
        BucketTransform(-1)


# --- types -----------------------------------------------------------------------------------

ACCEPTS: dict[str, set[type[IcebergType]]] = {
    "bucket[16]": {
        IntegerType,
        LongType,
        DecimalType,
        DateType,
        TimeType,
        TimestampType,
        TimestamptzType,
        TimestampNanoType,
        TimestamptzNanoType,
        StringType,
        UUIDType,
        FixedType,
        BinaryType,
    },
    "truncate[4]": {IntegerType, LongType, DecimalType, StringType, BinaryType},
    "year": {DateType, TimestampType, TimestamptzType, TimestampNanoType, TimestamptzNanoType},
    "month": {DateType, TimestampType, TimestamptzType, TimestampNanoType, TimestamptzNanoType},
    "day": {DateType, TimestampType, TimestamptzType, TimestampNanoType, TimestamptzNanoType},
    "hour": {TimestampType, TimestamptzType, TimestampNanoType, TimestamptzNanoType},
    "identity": {type(t) for t in ALL_PRIMITIVES},
    "void": {type(t) for t in ALL_PRIMITIVES},
}


@pytest.mark.parametrize("text", sorted(ACCEPTS))
def test_source_types(text: str) -> None:
    transform = parse_transform(text)
    for type_ in ALL_PRIMITIVES:
        assert transform.can_transform(type_) == (type(type_) in ACCEPTS[text]), type_
        if not transform.can_transform(type_):
            with pytest.raises(ValidationError):
                transform.apply(type_, 1)


def test_identity_and_void_on_other_types() -> None:
    assert IdentityTransform().can_transform(UnknownType())
    assert not IdentityTransform().can_transform(VariantType())
    assert not IdentityTransform().can_transform(StructType())
    assert VoidTransform().can_transform(ListType(1, IntegerType()))


@pytest.mark.parametrize(
    ("transform", "source", "result"),
    [
        (IdentityTransform(), DecimalType(9, 2), DecimalType(9, 2)),
        (VoidTransform(), StringType(), StringType()),  # Java: the source type
        (BucketTransform(3), StringType(), IntegerType()),
        (TruncateTransform(3), StringType(), StringType()),
        (YEAR, TimestampType(), IntegerType()),
        (MONTH, DateType(), IntegerType()),
        (DAY, TimestampType(), DateType()),  # Java: date, though the spec table says int
        (DAY, DateType(), DateType()),
        (HOUR, TimestamptzNanoType(), IntegerType()),
    ],
)
def test_result_types(transform: Transform, source: IcebergType, result: IcebergType) -> None:
    assert transform.result_type(source) == result


@pytest.mark.parametrize("text", sorted(ACCEPTS))
def test_null_maps_to_null(text: str) -> None:
    transform = parse_transform(text)
    for type_ in ALL_PRIMITIVES:
        if transform.can_transform(type_):
            assert transform.apply(type_, None) is None
            assert transform.to_human_string(type_, None) == "null"


# --- bucket ----------------------------------------------------------------------------------

UUID = uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")


@pytest.mark.parametrize(
    ("type_", "value", "expected"),
    [
        # Appendix B test vectors
        (IntegerType(), 34, 2017239379),
        (LongType(), 34, 2017239379),
        (DecimalType(4, 2), Decimal("14.20"), -500754589),
        (DateType(), 17486, -653330422),  # 2017-11-16
        (TimeType(), 81068000000, -662762989),  # 22:31:08
        (TimestampType(), 1510871468000000, -2047944441),  # 2017-11-16T22:31:08
        (TimestampType(), 1510871468000001, -1207196810),
        (TimestamptzType(), 1510871468000000, -2047944441),  # 2017-11-16T14:31:08-08:00
        (TimestamptzType(), 1510871468000001, -1207196810),
        (TimestampNanoType(), 1510871468000000000, -2047944441),
        (TimestampNanoType(), 1510871468000001001, -1207196810),
        (TimestamptzNanoType(), 1510871468000001001, -1207196810),
        (StringType(), "iceberg", 1210000089),
        (StringType(), "34", -427558391),
        (UUIDType(), UUID, 1488055340),
        (FixedType(4), bytes([0, 1, 2, 3]), -188683207),
        (BinaryType(), bytes([0, 1, 2, 3]), -188683207),
    ],
)
def test_bucket_hash_vectors(type_: IcebergType, value: Any, expected: int) -> None:
    assert BucketTransform(16).hash(type_, value) == expected
    assert BucketTransform(16).apply(type_, value) == (expected & 0x7FFFFFFF) % 16


def test_bucket_values() -> None:
    assert BucketTransform(16).apply(IntegerType(), 34) == 3  # 2017239379 % 16
    assert BucketTransform(100).apply(DecimalType(4, 2), Decimal("14.20")) == 59  # (-500754589 & MAX) % 100
    assert BucketTransform(1000).apply(TimestampNanoType(), -1) == 712  # Java: floor to micros
    assert BucketTransform(1000).apply(TimestampType(), -1) == 712  # Java
    assert BucketTransform(1).apply(StringType(), "anything") == 0


def test_bucket_decimal_ignores_the_values_own_scale() -> None:
    bucket = BucketTransform(128)
    assert bucket.hash(DecimalType(9, 2), Decimal("14.2")) == bucket.hash(DecimalType(9, 2), Decimal("14.20"))


@given(st.integers(min_value=-(2**31), max_value=2**31 - 1), st.integers(min_value=1, max_value=2**31 - 1))
def test_bucket_survives_int_to_long_and_date_promotion(value: int, buckets: int) -> None:
    bucket = BucketTransform(buckets)
    result = bucket.apply(IntegerType(), value)
    assert 0 <= result < buckets
    assert result == bucket.apply(LongType(), value) == bucket.apply(DateType(), value)


@given(st.integers(min_value=-(2**53), max_value=2**53))
def test_bucket_of_nanos_matches_micros(micros: int) -> None:
    bucket = BucketTransform(97)
    for extra in (0, 1, 999):
        assert bucket.apply(TimestampNanoType(), micros * 1000 + extra) == bucket.apply(
            TimestampType(), micros
        )


# --- truncate --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("type_", "width", "value", "expected"),
    [
        # spec examples
        (IntegerType(), 10, 1, 0),
        (IntegerType(), 10, -1, -10),
        (LongType(), 10, 1, 0),
        (LongType(), 10, -1, -10),
        (DecimalType(9, 2), 50, Decimal("10.65"), Decimal("10.50")),
        (StringType(), 3, "iceberg", "ice"),
        (BinaryType(), 3, b"\x01\x02\x03\x04\x05", b"\x01\x02\x03"),
        # more
        (IntegerType(), 10, 0, 0),
        (IntegerType(), 10, -10, -10),
        (IntegerType(), 10, 2**31 - 1, 2147483640),
        (DecimalType(9, 2), 10, Decimal("-0.05"), Decimal("-0.10")),  # Java
        (DecimalType(38, 0), 7, Decimal(-(10**37)), Decimal(-(10**37) - 4)),  # 10**37 % 7 == 3
        (StringType(), 2, "\U0001f600\U0001f601\U0001f602", "\U0001f600\U0001f601"),  # Java: by code point
        (StringType(), 3, "éà", "éà"),
        (StringType(), 1, "", ""),
        (BinaryType(), 3, b"", b""),
        # Java's wrapping int/long arithmetic at the extremes
        (IntegerType(), 10, -(2**31), 2147483646),
        (IntegerType(), 2000000000, 2100000000, 2000000000),
        (LongType(), 10, -(2**63), 2**63 - 2),
    ],
)
def test_truncate(type_: IcebergType, width: int, value: Any, expected: Any) -> None:
    result = TruncateTransform(width).apply(type_, value)
    assert result == expected and type(result) is type(expected)
    if isinstance(expected, Decimal):
        assert result.as_tuple().exponent == expected.as_tuple().exponent


@given(st.integers(min_value=-(2**62), max_value=2**62), st.integers(min_value=1, max_value=2**31 - 1))
def test_truncate_long_floors_to_a_multiple(value: int, width: int) -> None:
    result = TruncateTransform(width).apply(LongType(), value)
    assert result % width == 0 and 0 <= value - result < width


@given(st.text(), st.integers(min_value=1, max_value=10))
def test_truncate_string_keeps_whole_code_points(value: str, width: int) -> None:
    result = TruncateTransform(width).apply(StringType(), value)
    assert value.startswith(result) and len(result) == min(width, len(value))
    result.encode("utf-8", "surrogatepass")


# --- time transforms -------------------------------------------------------------------------

TS_2017_12_01 = 1512123175038194  # 2017-12-01T10:12:55.038194


@pytest.mark.parametrize(
    ("micros", "year", "month", "day", "hour"),
    [
        (0, 0, 0, 0, 0),
        (TS_2017_12_01, 47, 575, 17501, 420034),
        (-1, -1, -1, -1, -1),  # 1969-12-31T23:59:59.999999
        (-3_600_000_000, -1, -1, -1, -1),
        (-3_600_000_001, -1, -1, -1, -2),
        (-31_536_000_000_000, -1, -12, -365, -8760),  # 1969-01-01
        (-31_536_000_000_001, -2, -13, -366, -8761),
        # Java 1.9.2 gives hour -2 and day -2 / hour -25 for these two (an off-by-one at
        # .999999 after a boundary); the spec's units since 1970 are the floored values below.
        (-3_599_000_001, -1, -1, -1, -1),  # 1969-12-31T23:00:00.999999
        (-86_399_000_001, -1, -1, -1, -24),  # 1969-12-31T00:00:00.999999
    ],
)
def test_time_transforms_of_timestamps(micros: int, year: int, month: int, day: int, hour: int) -> None:
    for type_, value in (
        (TimestampType(), micros),
        (TimestamptzType(), micros),
        (TimestampNanoType(), micros * 1000),
        (TimestamptzNanoType(), micros * 1000 + 999),
    ):
        assert [t.apply(type_, value) for t in (YEAR, MONTH, DAY, HOUR)] == [year, month, day, hour]


@pytest.mark.parametrize(
    ("days", "year", "month"),
    [(0, 0, 0), (17501, 47, 575), (-1, -1, -1), (-365, -1, -12), (-366, -2, -13), (-719529, -1971, -23641)],
)
def test_time_transforms_of_dates(days: int, year: int, month: int) -> None:
    assert (YEAR.apply(DateType(), days), MONTH.apply(DateType(), days), DAY.apply(DateType(), days)) == (
        year,
        month,
        days,
    )


@given(st.integers(min_value=-(2**62), max_value=2**62))
def test_time_transforms_agree_across_precisions(micros: int) -> None:
    day = DAY.apply(TimestampType(), micros)
    assert DAY.apply(TimestampNanoType(), micros * 1000 + 1) == day
    assert YEAR.apply(TimestampType(), micros) == YEAR.apply(DateType(), day)
    assert MONTH.apply(TimestampType(), micros) == MONTH.apply(DateType(), day)
    assert HOUR.apply(TimestampType(), micros) // 24 == day


@pytest.mark.parametrize(
    ("transform", "value", "expected"),
    [
        # Java TestTransformUtil
        (YEAR, 0, "1970"),
        (YEAR, 47, "2017"),
        (YEAR, 100, "2070"),
        (MONTH, 0, "1970-01"),
        (MONTH, 12, "1971-01"),
        (MONTH, 658, "2024-11"),
        (DAY, 0, "1970-01-01"),
        (DAY, 20000, "2024-10-04"),
        (HOUR, 0, "1970-01-01-00"),
        (HOUR, 24, "1970-01-02-00"),
        # Java 1.9.2, before 1970
        (MONTH, -1, "1969-12"),
        (MONTH, -13, "1968-12"),
        (YEAR, -1971, "-001"),
        (HOUR, -1, "1969-12-31-23"),
        (DAY, -719529, "-001-12-31"),
    ],
)
def test_time_human_strings(transform: Transform, value: int, expected: str) -> None:
    assert transform.to_human_string(TimestampType(), value) == expected


# --- other human strings ---------------------------------------------------------------------


def test_human_strings_of_other_transforms() -> None:
    assert BucketTransform(16).to_human_string(StringType(), 3) == "3"
    assert TruncateTransform(3).to_human_string(BinaryType(), b"\x01\x02\x03") == "AQID"
    assert TruncateTransform(10).to_human_string(DecimalType(9, 2), Decimal("-0.10")) == "-0.10"
    assert IdentityTransform().to_human_string(TimestamptzType(), 0) == "1970-01-01T00:00:00+00:00"
    assert VoidTransform().to_human_string(LongType(), 5) == "null"
    assert VoidTransform().apply(LongType(), 5) is None


# --- ordering --------------------------------------------------------------------------------


def test_preserves_order() -> None:
    ordered = [IdentityTransform(), TruncateTransform(3), YEAR, MONTH, DAY, HOUR]
    assert all(t.preserves_order for t in ordered)
    assert not any(t.preserves_order for t in (BucketTransform(3), VoidTransform(), UnknownTransform("x")))


@pytest.mark.parametrize(
    ("left", "right", "expected"),
    [
        (HOUR, DAY, True),  # Java
        (DAY, HOUR, False),  # Java
        (HOUR, YEAR, True),
        (DAY, MONTH, True),
        (YEAR, MONTH, False),
        (MONTH, MONTH, True),
        (IdentityTransform(), DAY, True),
        (IdentityTransform(), TruncateTransform(3), True),
        (IdentityTransform(), BucketTransform(3), False),  # Java
        (DAY, IdentityTransform(), False),
        (TruncateTransform(10), TruncateTransform(5), True),  # Java
        (TruncateTransform(5), TruncateTransform(10), False),
        (BucketTransform(3), BucketTransform(3), True),
        (BucketTransform(3), BucketTransform(6), False),
        (VoidTransform(), VoidTransform(), True),  # Java
        (UnknownTransform("a"), UnknownTransform("a"), True),
    ],
)
def test_satisfies_order_of(left: Transform, right: Transform, expected: bool) -> None:
    assert left.satisfies_order_of(right) is expected


def test_flags_and_dedup_names() -> None:
    assert IdentityTransform().is_identity and not IdentityTransform().is_void
    assert VoidTransform().is_void and not VoidTransform().is_identity
    assert not BucketTransform(2).is_identity and not BucketTransform(2).is_void
    assert {t.dedup_name for t in (YEAR, MONTH, DAY, HOUR)} == {"time"}  # Java
    assert BucketTransform(3).dedup_name == "bucket[3]"  # Java
    assert VoidTransform().dedup_name == "void"  # Java


# --- partition paths -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "encoded"),
    [
        ("abc-XYZ_0.9*", "abc-XYZ_0.9*"),
        ("a b", "a+b"),
        ("a/b=c", "a%2Fb%3Dc"),
        ("~+%&?#", "%7E%2B%25%26%3F%23"),
        ("ü😀", "%C3%BC%F0%9F%98%80"),
        ("\ud800", "%3F"),  # an unpaired surrogate encodes as '?', like Java
        ("", ""),
    ],
)
def test_url_encode_like_java(text: str, encoded: str) -> None:
    assert url_encode(text) == encoded


def test_partition_path_segments_like_java() -> None:
    # Java 1.9.2 PartitionSpec.partitionToPath:
    # s=x+y%2F%C3%BC%3D%7E*%2B%25/ts_day=1969-12-31/b=%2B%2F8%3D/ts_hour=null
    segments = [
        partition_path_segment("s", IdentityTransform(), StringType(), "x y/ü=~*+%"),
        partition_path_segment("ts_day", DAY, TimestamptzType(), -1),
        partition_path_segment("b", IdentityTransform(), BinaryType(), bytes([0xFB, 0xFF])),
        partition_path_segment("ts_hour", HOUR, TimestamptzType(), None),
    ]
    assert "/".join(segments) == "s=x+y%2F%C3%BC%3D%7E*%2B%25/ts_day=1969-12-31/b=%2B%2F8%3D/ts_hour=null"
    # Java: a+b%2Fc%3Dd%7E*%C3%A9=v
    assert (
        partition_path_segment("a b/c=d~*é", IdentityTransform(), StringType(), "v")
        == "a+b%2Fc%3Dd%7E*%C3%A9=v"
    )


@pytest.mark.parametrize(
    ("transform", "source", "value", "segment"),
    [
        (YEAR, TimestampType(), 47, "p=2017"),
        (MONTH, DateType(), 575, "p=2017-12"),
        (DAY, DateType(), 17501, "p=2017-12-01"),
        (HOUR, TimestampType(), 420034, "p=2017-12-01-10"),
        (BucketTransform(16), LongType(), 3, "p=3"),
        (TruncateTransform(4), StringType(), "a b", "p=a+b"),
        (VoidTransform(), IntegerType(), None, "p=null"),
        (IdentityTransform(), TimestampType(), 1672567200000000, "p=2023-01-01T10%3A00%3A00"),
        (IdentityTransform(), DoubleType(), 1e-4, "p=1.0E-4"),
        (IdentityTransform(), BooleanType(), False, "p=false"),
    ],
)
def test_partition_path_segments(transform: Transform, source: IcebergType, value: Any, segment: str) -> None:
    assert partition_path_segment("p", transform, source, value) == segment


def test_hour_wraps_to_32_bits_like_javas_int_cast() -> None:
    hour = parse_transform("hour")
    micros_per_hour = 3_600_000_000
    assert hour.apply(TimestampType(), (2**31) * micros_per_hour) == -(2**31)
    assert hour.apply(TimestampType(), (2**31 - 1) * micros_per_hour) == 2**31 - 1
