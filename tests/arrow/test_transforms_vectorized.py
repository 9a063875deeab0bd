"""Transforms on whole Arrow arrays agree with the scalar transforms, value by value."""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icefloe.arrow._types import type_to_arrow
from icefloe.arrow.convert import from_arrow_array, to_arrow_array
from icefloe.arrow.transforms import apply_transform, bucket_hashes
from icefloe.errors import UnsupportedFeatureError, ValidationError
from icefloe.spec.conversions import days_from_civil, decimal_from_unscaled
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
)
from icefloe.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    IcebergType,
    IntegerType,
    LongType,
    StringType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
MICROS_PER_DAY = 86_400_000_000

PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _ints(low: int, high: int) -> st.SearchStrategy[int]:
    """Integers in [low, high], with the extremes and values around zero drawn often."""
    edges = [v for v in (low, low + 1, -1, 0, 1, high - 1, high) if low <= v <= high]
    return st.one_of(
        st.sampled_from(edges), st.integers(low, high), st.integers(max(low, -1000), min(high, 1000))
    )


def _unscaled_decimals(precision: int, scale: int) -> st.SearchStrategy[Decimal]:
    bound = 10**precision - 1
    return _ints(-bound, bound).map(lambda unscaled: decimal_from_unscaled(unscaled, scale))


_TEXT = st.one_of(
    st.text(),  # no surrogates: Arrow strings are valid UTF-8
    st.text(st.characters(min_codepoint=0x80, max_codepoint=0x7FF)),  # 2-byte
    st.text(st.characters(min_codepoint=0x800, max_codepoint=0xFFFF, exclude_categories=("Cs",))),
    st.text(st.characters(min_codepoint=0x10000)),  # 4-byte (outside the BMP)
    st.text(max_size=300),
)

# every type a transform accepts, with a strategy of its values in icefloe's representation
TYPES: dict[str, tuple[IcebergType, st.SearchStrategy[Any]]] = {
    "int": (IntegerType(), _ints(INT_MIN, INT_MAX)),
    "long": (LongType(), _ints(LONG_MIN, LONG_MAX)),
    "date": (DateType(), _ints(INT_MIN, INT_MAX)),
    "time": (TimeType(), _ints(0, MICROS_PER_DAY - 1)),
    "timestamp": (TimestampType(), _ints(LONG_MIN, LONG_MAX)),
    "timestamptz": (TimestamptzType(), _ints(LONG_MIN, LONG_MAX)),
    "timestamp_ns": (TimestampNanoType(), _ints(LONG_MIN, LONG_MAX)),
    "timestamptz_ns": (TimestamptzNanoType(), _ints(LONG_MIN, LONG_MAX)),
    "decimal(1,0)": (DecimalType(1, 0), _unscaled_decimals(1, 0)),
    "decimal(9,2)": (DecimalType(9, 2), _unscaled_decimals(9, 2)),
    "decimal(18,6)": (DecimalType(18, 6), _unscaled_decimals(18, 6)),
    "decimal(38,0)": (DecimalType(38, 0), _unscaled_decimals(38, 0)),
    "decimal(38,10)": (DecimalType(38, 10), _unscaled_decimals(38, 10)),
    "string": (StringType(), _TEXT),
    "uuid": (UUIDType(), st.uuids()),
    "fixed(1)": (FixedType(1), st.binary(min_size=1, max_size=1)),
    "fixed(4)": (FixedType(4), st.binary(min_size=4, max_size=4)),
    "fixed(7)": (FixedType(7), st.binary(min_size=7, max_size=7)),
    "fixed(17)": (FixedType(17), st.binary(min_size=17, max_size=17)),
    "binary": (BinaryType(), st.one_of(st.binary(), st.binary(min_size=20, max_size=200))),
}

# Hypothesis favours small numbers; widths above 2**30 (where Java's int truncate wraps) get
# their own branch.
WIDTHS = st.one_of(
    st.sampled_from([1, 2, 3, 4, 10, 1000, 2**30 + 1, INT_MAX]),
    st.integers(1, 1000),
    st.integers(1, INT_MAX),
    st.integers(2**30, INT_MAX),
)
KINDS: dict[str, st.SearchStrategy[Transform]] = {
    "identity": st.just(IdentityTransform()),
    "void": st.just(VoidTransform()),
    "bucket": WIDTHS.map(BucketTransform),
    "truncate": WIDTHS.map(TruncateTransform),
    "year": st.just(YearTransform()),
    "month": st.just(MonthTransform()),
    "day": st.just(DayTransform()),
    "hour": st.just(HourTransform()),
}

# one instance per kind decides which types it accepts (the argument does not change that)
_ACCEPTS: dict[str, Transform] = {
    "identity": IdentityTransform(),
    "void": VoidTransform(),
    "bucket": BucketTransform(1),
    "truncate": TruncateTransform(1),
    "year": YearTransform(),
    "month": MonthTransform(),
    "day": DayTransform(),
    "hour": HourTransform(),
}
CASES = [
    (kind, type_name)
    for kind in KINDS
    for type_name, (source_type, _) in TYPES.items()
    if _ACCEPTS[kind].can_transform(source_type)
]


def _java_int(value: int | None) -> int | None:
    """``(int) value`` in Java: the low 32 bits, signed."""
    return None if value is None else (value + 2**31) % 2**32 - 2**31


def expected_values(transform: Transform, source_type: IcebergType, values: list[Any]) -> list[Any]:
    """The scalar transform's results, with Java's (int) cast of results out of int range.

    Only ``hour`` of microsecond timestamps after year 246,970 (or before -243,000) leaves the
    int range: the scalar transform returns the exact hour, Java and the vectorized transform
    wrap it to 32 bits, which is what a partition field of type int can hold.
    """
    function = transform.bind(source_type)
    results = [function(v) for v in values]
    if isinstance(transform, HourTransform):
        return [_java_int(r) for r in results]
    return results


def to_array(values: list[Any], source_type: IcebergType) -> pa.Array:
    return to_arrow_array(values, source_type)


def check(
    transform: Transform, source_type: IcebergType, array: pa.Array | pa.ChunkedArray, values: list[Any]
) -> None:
    result = apply_transform(transform, source_type, array)
    assert isinstance(result, pa.Array)
    assert len(result) == len(values)
    result_type = transform.result_type(source_type)
    if not (transform.is_identity or isinstance(transform, TruncateTransform)):
        assert result.type == type_to_arrow(result_type)
    result.validate(full=not isinstance(source_type, DecimalType))  # truncate may exceed precision
    assert from_arrow_array(result, result_type) == expected_values(transform, source_type, values)


@pytest.mark.parametrize(("kind", "type_name"), CASES, ids=[f"{k}-{t}" for k, t in CASES])
@PROPERTY
@given(data=st.data())
def test_vectorized_equals_scalar(kind: str, type_name: str, data: st.DataObject) -> None:
    source_type, values_strategy = TYPES[type_name]
    transform = data.draw(KINDS[kind], label="transform")
    values = data.draw(st.lists(st.one_of(st.none(), values_strategy), max_size=60), label="values")
    check(transform, source_type, to_array(values, source_type), values)


# ---------------------------------------------------------------------------------------------
# array layouts: slices, chunks, dictionaries, other string/binary flavours, garbage under nulls


@PROPERTY
@given(
    values=st.lists(st.one_of(st.none(), _TEXT), min_size=1, max_size=40),
    cut=st.integers(0, 40),
    n=WIDTHS,
)
def test_string_layouts(values: list[str | None], cut: int, n: int) -> None:
    cut = min(cut, len(values))
    base = pa.array(values, pa.string())
    layouts: list[pa.Array | pa.ChunkedArray] = [
        base.cast(pa.large_string()),
        base.cast(pa.string_view()),
        base.dictionary_encode(),
        pa.chunked_array([base.slice(0, cut), base.slice(cut)], pa.string()),
    ]
    padded = pa.array(["prefix-ü", *values, "suffix-😀"], pa.string()).slice(1, len(values))
    layouts.append(padded)
    for array in layouts:
        for transform in (BucketTransform(n), TruncateTransform(n), IdentityTransform()):
            result = apply_transform(transform, StringType(), array)
            assert result.to_pylist() == [transform.apply(StringType(), v) for v in values]


@PROPERTY
@given(
    values=st.lists(st.one_of(st.none(), st.binary(max_size=40)), min_size=1, max_size=40),
    start=st.integers(0, 5),
    n=WIDTHS,
)
def test_binary_layouts(values: list[bytes | None], start: int, n: int) -> None:
    base = pa.array([b"\xff" * 9] * start + values, pa.binary()).slice(start)
    for array in (base, base.cast(pa.large_binary()), base.cast(pa.binary_view()), base.dictionary_encode()):
        for transform in (BucketTransform(n), TruncateTransform(n)):
            result = apply_transform(transform, BinaryType(), array)
            assert result.to_pylist() == [transform.apply(BinaryType(), v) for v in values]


@pytest.mark.parametrize(
    ("source_type", "storage", "transforms"),
    [
        (IntegerType(), pa.int32(), (BucketTransform(16), TruncateTransform(7))),
        (LongType(), pa.int64(), (BucketTransform(16), TruncateTransform(7))),
        (DateType(), pa.int32(), (BucketTransform(16), YearTransform(), MonthTransform(), DayTransform())),
        (
            TimestamptzType(),
            pa.int64(),
            (BucketTransform(16), MonthTransform(), DayTransform(), HourTransform()),
        ),
        (TimestampNanoType(), pa.int64(), (BucketTransform(16), YearTransform(), HourTransform())),
    ],
    ids=lambda p: str(p) if isinstance(p, IcebergType) else "",
)
def test_sliced_arrays_with_values_under_nulls(source_type, storage, transforms) -> None:
    # Null slots hold real (non-zero) numbers, the array is a slice with an odd offset:
    # nothing under a null may leak, and offsets must be honoured.
    rng = np.random.default_rng(3)
    raw = rng.integers(np.iinfo(storage.to_pandas_dtype()).min, np.iinfo(storage.to_pandas_dtype()).max, 103)
    valid = rng.random(103) < 0.7
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little"))
    data = pa.array(raw, storage).buffers()[1]
    full = pa.Array.from_buffers(type_to_arrow(source_type), 103, [bitmap, data])
    array = full.slice(3, 97)
    values = [int(v) if ok else None for v, ok in zip(raw[3:100], valid[3:100])]
    for transform in transforms:
        check(transform, source_type, array, values)
        check(transform, source_type, pa.chunked_array([array.slice(0, 50), array.slice(50)]), values)


def test_decimal_slices_and_values_under_nulls() -> None:
    source_type = DecimalType(38, 4)
    values = [decimal_from_unscaled(v, 4) for v in (10**37, -(10**37), -1, 0, 12345, -99999, 2**100)]
    array = to_array([Decimal("1.0000"), *values], source_type)
    # mark slot 3 (the value -1) null without touching its bytes
    bitmap = pa.py_buffer(np.packbits(np.array([1, 1, 1, 0, 1, 1, 1, 1], bool), bitorder="little"))
    with_null = pa.Array.from_buffers(array.type, 8, [bitmap, array.buffers()[1]]).slice(1)
    expected_input = [values[0], values[1], None, *values[3:]]
    for transform in (BucketTransform(1000), TruncateTransform(3), TruncateTransform(INT_MAX)):
        check(transform, source_type, with_null, expected_input)


def test_other_arrow_inputs_are_cast_safely() -> None:
    # timestamps in another unit, date64, ints wider than the Iceberg type when they fit
    ms = pa.array([-1, 0, 1_500_000_000_123, None], pa.timestamp("ms"))
    micros = [-1000, 0, 1_500_000_000_123_000, None]
    assert apply_transform(HourTransform(), TimestampType(), ms).to_pylist() == [
        HourTransform().apply(TimestampType(), v) for v in micros
    ]
    assert apply_transform(
        BucketTransform(7), TimestamptzType(), ms.cast(pa.timestamp("ms", "UTC"))
    ).to_pylist() == [BucketTransform(7).apply(TimestamptzType(), v) for v in micros]
    date64 = pa.array([0, 86_400_000 * 365, None], pa.date64())
    assert apply_transform(YearTransform(), DateType(), date64).to_pylist() == [0, 1, None]
    assert apply_transform(
        BucketTransform(10), IntegerType(), pa.array([34, None], pa.int64())
    ).to_pylist() == [
        BucketTransform(10).apply(IntegerType(), 34),
        None,
    ]
    # a timestamp with a zone other than UTC is the same instant
    berlin = pa.array([0], pa.timestamp("us", "Europe/Berlin"))
    assert apply_transform(HourTransform(), TimestamptzType(), berlin).to_pylist() == [0]
    uuids = [uuid.UUID(int=5), None]
    storage = pa.array([u.bytes if u else None for u in uuids], pa.binary(16))
    for array in (storage, to_array(uuids, UUIDType())):
        assert apply_transform(BucketTransform(100), UUIDType(), array).to_pylist() == [
            BucketTransform(100).apply(UUIDType(), u) for u in uuids
        ]


def test_all_null_and_empty_inputs() -> None:
    for transform, source_type in (
        (BucketTransform(4), StringType()),
        (BucketTransform(4), DecimalType(10, 2)),
        (TruncateTransform(4), LongType()),
        (DayTransform(), TimestampNanoType()),
        (BucketTransform(4), FixedType(3)),
    ):
        for array in (
            pa.nulls(3),
            pa.nulls(3, type_to_arrow(source_type)),
            pa.nulls(0, type_to_arrow(source_type)),
        ):
            result = apply_transform(transform, source_type, array)
            assert result.null_count == len(array)
            assert result.type == type_to_arrow(transform.result_type(source_type))


def test_void_keeps_the_source_type_and_identity_returns_the_values() -> None:
    array = pa.array([1, None, 3], pa.int64())
    assert apply_transform(VoidTransform(), LongType(), array).equals(pa.nulls(3, pa.int64()))
    assert apply_transform(IdentityTransform(), LongType(), array) is array
    dictionary = pa.array(["a", "b", "a"]).dictionary_encode()
    assert apply_transform(IdentityTransform(), StringType(), dictionary).equals(pa.array(["a", "b", "a"]))


# ---------------------------------------------------------------------------------------------
# reference values


def test_appendix_b_hash_vectors() -> None:
    day = days_from_civil(2017, 11, 16)
    micros = day * MICROS_PER_DAY + (22 * 3600 + 31 * 60 + 8) * 1_000_000
    cases: list[tuple[IcebergType, pa.Array, list[int]]] = [
        (IntegerType(), pa.array([34], pa.int32()), [2017239379]),
        (LongType(), pa.array([34], pa.int64()), [2017239379]),
        (DecimalType(9, 2), pa.array([Decimal("14.20")], pa.decimal128(9, 2)), [-500754589]),
        (DateType(), pa.array([day], pa.int32()).view(pa.date32()), [-653330422]),
        (TimeType(), pa.array([(22 * 3600 + 31 * 60 + 8) * 1_000_000], pa.time64("us")), [-662762989]),
        (TimestampType(), pa.array([micros, micros + 1], pa.timestamp("us")), [-2047944441, -1207196810]),
        (
            TimestamptzType(),
            pa.array([micros, micros + 1], pa.timestamp("us", "UTC")),
            [-2047944441, -1207196810],
        ),
        (
            TimestampNanoType(),
            pa.array([micros * 1000, micros * 1000 + 1001], pa.timestamp("ns")),
            [-2047944441, -1207196810],
        ),
        (
            TimestamptzNanoType(),
            pa.array([micros * 1000, micros * 1000 + 1001], pa.timestamp("ns", "UTC")),
            [-2047944441, -1207196810],
        ),
        (StringType(), pa.array(["iceberg"]), [1210000089]),
        (UUIDType(), to_array([uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")], UUIDType()), [1488055340]),
        (FixedType(4), pa.array([b"\x00\x01\x02\x03"], pa.binary(4)), [-188683207]),
        (BinaryType(), pa.array([b"\x00\x01\x02\x03"], pa.binary()), [-188683207]),
    ]
    for source_type, array, expected in cases:
        assert bucket_hashes(source_type, array).to_pylist() == expected, source_type


def test_spec_truncate_examples() -> None:
    assert apply_transform(
        TruncateTransform(10), IntegerType(), pa.array([1, -1], pa.int32())
    ).to_pylist() == [0, -10]
    assert apply_transform(TruncateTransform(10), LongType(), pa.array([1, -1], pa.int64())).to_pylist() == [
        0,
        -10,
    ]
    decimals = pa.array([Decimal("10.65")], pa.decimal128(9, 2))
    assert apply_transform(TruncateTransform(50), DecimalType(9, 2), decimals).to_pylist() == [
        Decimal("10.50")
    ]
    assert apply_transform(TruncateTransform(3), StringType(), pa.array(["iceberg"])).to_pylist() == ["ice"]
    binary = pa.array([b"\x01\x02\x03\x04\x05"])
    assert apply_transform(TruncateTransform(3), BinaryType(), binary).to_pylist() == [b"\x01\x02\x03"]


def test_java_wrapping_and_pre_epoch_floors() -> None:
    # truncate near the minimum wraps as Java's int arithmetic does
    ints = pa.array([INT_MIN, INT_MIN + 5], pa.int32())
    assert apply_transform(TruncateTransform(10), IntegerType(), ints).to_pylist() == [2147483646, 2147483646]
    # (v % W) + W overflows for wide widths: Java's truncate[2147483647] of 1 is 2, of 5 is -2147483647
    small = pa.array([1, 5, INT_MAX - 1, INT_MAX, -1], pa.int32())
    assert apply_transform(TruncateTransform(INT_MAX), IntegerType(), small).to_pylist() == [
        2,
        -2147483647,
        -2147483647,
        INT_MAX,
        -INT_MAX,
    ]
    longs = pa.array([LONG_MIN], pa.int64())
    assert apply_transform(TruncateTransform(10), LongType(), longs).to_pylist() == [LONG_MAX - 1]
    # one microsecond before the epoch is in 1969, December, the 31st, 23:00
    before = pa.array([-1], pa.timestamp("us"))
    assert [
        apply_transform(t, TimestampType(), before).to_pylist()[0]
        for t in (YearTransform(), MonthTransform(), HourTransform())
    ] == [-1, -1, -1]
    assert apply_transform(DayTransform(), TimestampType(), before).cast(pa.int32()).to_pylist() == [-1]
    # truncating a decimal can need one digit more than the precision; the value is kept
    decimals = pa.array([Decimal("-9.99")], pa.decimal128(3, 2))
    assert apply_transform(TruncateTransform(100), DecimalType(3, 2), decimals).to_pylist() == [
        Decimal("-10.00")
    ]


def test_large_inputs_agree_with_scalar_on_a_sample() -> None:
    # long strings (many blocks) mixed with short ones, so the active prefix shrinks step by step
    rng = np.random.default_rng(11)
    lengths = rng.integers(0, 2000, 500)
    lengths[:3] = [70_000, 0, 5]
    values = [bytes(rng.integers(0, 256, n, dtype=np.uint8)) for n in lengths]
    result = bucket_hashes(BinaryType(), pa.array(values, pa.large_binary())).to_pylist()
    assert result == [BucketTransform(1).hash(BinaryType(), v) for v in values]


# ---------------------------------------------------------------------------------------------
# errors


def test_errors() -> None:
    with pytest.raises(ValidationError, match="hour"):
        apply_transform(HourTransform(), DateType(), pa.array([1], pa.date32()))
    with pytest.raises(ValidationError, match="bucket"):
        apply_transform(BucketTransform(2), DoubleType(), pa.array([1.0]))
    with pytest.raises(ValidationError, match="bucket"):
        bucket_hashes(BooleanType(), pa.array([True]))
    with pytest.raises(UnsupportedFeatureError, match="zorder"):
        apply_transform(UnknownTransform("zorder"), LongType(), pa.array([1]))
    with pytest.raises(ValidationError, match="Iceberg long"):
        apply_transform(BucketTransform(2), LongType(), pa.array(["x"]))
    with pytest.raises(ValidationError, match="Iceberg int"):
        apply_transform(TruncateTransform(2), IntegerType(), pa.array([2**40], pa.int64()))
