"""icefloe's partition transforms agree with PyIceberg 0.12's, on 100,000 values per type.

For every primitive type a transform accepts, values are generated deterministically (uniform
over the type's range, values around zero and the epoch, the extremes, ~1% nulls), sent to the
PyIceberg server as JSON, converted there to PyIceberg's Python values and transformed with
``pyiceberg.transforms`` (its scalar path: ``Transform.transform(source_type)(value)``, which
hashes with ``mmh3``). icefloe computes the same with its vectorized transforms over Arrow arrays
(every value) and its scalar transforms (every fifth value; ``tests/arrow`` checks both are equal
property by property).

Where PyIceberg disagrees with Java Iceberg and the spec, the difference is asserted, not skipped:

- ``truncate`` of int and long: PyIceberg computes ``v - v % W`` with Python's unbounded ints;
  Java (and icefloe) evaluate the spec's ``v - (((v % W) + W) % W)`` in 32/64-bit arithmetic.
  They differ exactly where that overflows: values within ``W`` of the minimum (PyIceberg returns
  a value outside the type's range) and, for int with ``W > 2**30``, values whose remainder plus
  ``W`` passes ``2**31 - 1`` (Java's ``truncate[2147483647]`` of 5 is -2147483647; PyIceberg's 0).
- ``hour`` of a microsecond timestamp past year 246,970: PyIceberg returns the exact hour count,
  which does not fit the partition field's int; Java casts it to int (wraps), as icefloe's
  vectorized transform does (icefloe's scalar transform returns the exact count like PyIceberg).
- ``year`` and ``month`` need Python ``datetime``: PyIceberg raises ``OverflowError`` outside
  years 1 to 9999, where Java and icefloe compute a value.
- decimals: PyIceberg takes the scale from the ``Decimal`` value rather than from the type, so
  ``Decimal("1.5")`` in a ``decimal(9, 2)`` column buckets as unscaled 15, not 150. Values as a
  ``decimal(9, 2)`` column holds them (``Decimal("1.50")``) agree.

Pre-epoch time transforms agree: PyIceberg floors like icefloe and the spec (the hour before
1970 is -1). Java Iceberg 1.9.2 does not always: its ``DateTimeUtil.convertMicros`` rounds a
negative timestamp whose fraction is ``.999999`` exactly one second off, so e.g. ``hour`` of
``1969-12-31 23:00:00.999999`` is -2 in Java (-1 here and in PyIceberg), ``day`` of
``1969-12-31 00:00:00.999999`` is 1969-12-30, ``year`` of ``1969-01-01 00:00:00.999999`` is -2
(checked by hand with Spark's ``system.hours`` / ``days`` / ``years``). Such values are included
below (PyIceberg and icefloe agree on the floor).
"""

from __future__ import annotations

import uuid
import zlib
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from icefloe.arrow.convert import from_arrow_array, to_arrow_array
from icefloe.arrow.transforms import apply_transform
from icefloe.spec.conversions import decimal_from_unscaled
from icefloe.spec.transforms import Transform, TruncateTransform, parse_transform
from icefloe.spec.types import (
    BinaryType,
    DateType,
    DecimalType,
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

from .engines import PyIcebergEngine

pytestmark = pytest.mark.interop

N = 100_000
SCALAR_SAMPLE_STEP = 5  # icefloe's scalar transforms run on every 5th value (20,000 per type)
INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
MICROS_PER_HOUR = 3_600_000_000
MICROS_PER_DAY = 24 * MICROS_PER_HOUR
# Python datetime's range (years 1 to 9999), which PyIceberg's year/month need
MIN_DAY, MAX_DAY = -719_162, 2_932_896
MIN_MICROS, MAX_MICROS = MIN_DAY * MICROS_PER_DAY, (MAX_DAY + 1) * MICROS_PER_DAY - 1
# 1969-12-31 23:00:00.999999, 1969-12-31 00:00:00.999999, 1969-01-01 00:00:00.999999 and
# 1969-12-01 00:00:00.999999 (micros): where Java 1.9.2 is one unit below the floor
JAVA_PRE_EPOCH_QUIRKS = [
    -MICROS_PER_HOUR + 999_999,
    -MICROS_PER_DAY + 999_999,
    -365 * MICROS_PER_DAY + 999_999,
    -31 * MICROS_PER_DAY + 999_999,
]

# ---------------------------------------------------------------------------------------------
# the PyIceberg side: runs inside the engine server (PyIceberg's environment, no icefloe)

SERVER_SETUP = r"""
import uuid as _uuid
from decimal import Decimal as _Decimal
from pyiceberg import transforms as _transforms, types as _types


def _source_type(name):
    simple = {
        "int": _types.IntegerType(), "long": _types.LongType(), "date": _types.DateType(),
        "time": _types.TimeType(), "timestamp": _types.TimestampType(),
        "timestamptz": _types.TimestamptzType(), "timestamp_ns": _types.TimestampNanoType(),
        "timestamptz_ns": _types.TimestamptzNanoType(), "string": _types.StringType(),
        "uuid": _types.UUIDType(), "binary": _types.BinaryType(),
    }
    if name in simple:
        return simple[name]
    if name.startswith("decimal("):
        precision, scale = name[len("decimal("):-1].split(",")
        return _types.DecimalType(int(precision), int(scale))
    if name.startswith("fixed("):
        return _types.FixedType(int(name[len("fixed("):-1]))
    raise ValueError(name)


def _decoder(name):
    if name.startswith("decimal"):
        return _Decimal
    if name == "uuid":
        return lambda text: _uuid.UUID(hex=text)
    if name.startswith("fixed") or name == "binary":
        return bytes.fromhex
    return None


def _encode(value):
    if isinstance(value, _Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    return value


def run_transforms(type_name, transforms, values):
    source = _source_type(type_name)
    decode = _decoder(type_name)
    if decode is not None:
        values = [None if v is None else decode(v) for v in values]
    results = {}
    for text in transforms:
        function = _transforms.parse_transform(text).transform(source)
        out = []
        for value in values:
            try:
                out.append(_encode(function(value)))
            except Exception as e:
                out.append({"error": type(e).__name__})
        results[text] = out
    return results


state["run_transforms"] = run_transforms
"""


@pytest.fixture(scope="module")
def pyiceberg(pyiceberg_engine: PyIcebergEngine) -> PyIcebergEngine:
    """The PyIceberg server with ``run_transforms`` installed; checks it hashes with mmh3."""
    versions = pyiceberg_engine.exec(
        SERVER_SETUP
        + "\nimport mmh3, pyiceberg\n"
        + "result = {'pyiceberg': pyiceberg.__version__, 'bucket_uses_mmh3': _transforms.mmh3 is mmh3}"
    )
    assert versions["pyiceberg"].startswith("0.12"), versions
    assert versions["bucket_uses_mmh3"], versions
    return pyiceberg_engine


def pyiceberg_transform(
    engine: PyIcebergEngine, type_name: str, transforms: list[str], values: list[Any]
) -> dict[str, list[Any]]:
    return dict(
        engine.exec(
            "result = state['run_transforms'](type_name, transforms, values)",
            type_name=type_name,
            transforms=transforms,
            values=values,
        )
    )


# ---------------------------------------------------------------------------------------------
# values, deterministic per type


def _rng(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def _mix(rng: np.random.Generator, parts: list[np.ndarray]) -> np.ndarray:
    """N values, each drawn from one of the parts (parts are N long) at random."""
    choice = rng.integers(0, len(parts), N)
    return np.choose(choice, parts)


def _finish(rng: np.random.Generator, values: list[Any], edges: list[Any]) -> list[Any]:
    """Put the edge values first and ~1% nulls anywhere after them."""
    values[: len(edges)] = edges
    for i in rng.choice(np.arange(len(edges), N), N // 100, replace=False):
        values[int(i)] = None
    return values


def int_values(name: str, low: int, high: int, *, around: int = 0, spread: int = 1000) -> list[Any]:
    rng = _rng(name)
    uniform = rng.integers(low, high, N, endpoint=True)
    near = np.clip(rng.integers(-spread, spread, N, endpoint=True) + around, low, high)
    small = rng.integers(-1000, 1000, N, endpoint=True).clip(low, high)
    values = _mix(rng, [uniform, near, small]).tolist()
    edges = [low, low + 1, low + 9, -1, 0, 1, high - 9, high - 1, high]
    return _finish(rng, values, [e for e in edges if low <= e <= high])


def timestamp_values(name: str, low: int, high: int, unit: int) -> list[Any]:
    """Timestamps with ``unit`` steps per microsecond (1 or 1000): uniform over [low, high],
    within 30 days of the epoch, and on hour boundaries within 2,000 hours of it (days and months
    around 1970 included) or one step either side of one."""
    rng = _rng(name)
    uniform = rng.integers(low, high, N, endpoint=True)
    near_epoch = rng.integers(-30 * MICROS_PER_DAY * unit, 30 * MICROS_PER_DAY * unit, N)
    boundaries = rng.integers(-2000, 2000, N) * MICROS_PER_HOUR * unit + rng.integers(-1, 2, N)
    values = _mix(rng, [uniform, near_epoch, boundaries]).tolist()
    edges = [low, high, -1, 0, 1, *(q * unit + unit - 1 for q in JAVA_PRE_EPOCH_QUIRKS)]
    return _finish(rng, values, edges)


def decimal_values(name: str, precision: int, scale: int) -> list[Any]:
    rng = _rng(name)
    bound = 10**precision - 1
    digits = rng.integers(1, precision, N, endpoint=True)
    # three random 18-digit chunks cover 38 digits; keep the chosen number of digits
    chunks = [rng.integers(0, 10**18, N) for _ in range(3)]
    signs = rng.choice([-1, 1], N)
    values: list[Any] = []
    for i in range(N):
        unscaled = (int(chunks[0][i]) * 10**36 + int(chunks[1][i]) * 10**18 + int(chunks[2][i])) % 10 ** int(
            digits[i]
        )
        values.append(decimal_from_unscaled(int(signs[i]) * unscaled, scale))
    edges = [-bound, -bound + 1, -1, 0, 1, bound - 1, bound, -128, 127, -129, 128, 255, -32768, 32767]
    return _finish(rng, values, [decimal_from_unscaled(e, scale) for e in edges])


# code points by UTF-8 length: 1, 2, 3 (no surrogates) and 4 bytes
_CODE_POINT_RANGES = [(0x20, 0x7F), (0x80, 0x800), (0x800, 0xD800), (0xE000, 0x10000), (0x10000, 0x110000)]


def string_values(name: str) -> list[Any]:
    rng = _rng(name)
    lengths = rng.integers(0, 30, N, endpoint=True)
    long_ones = rng.random(N) < 0.02  # a few long ones (many 4-byte blocks)
    lengths[long_ones] = rng.integers(31, 400, int(long_ones.sum()))
    total = int(lengths.sum())
    ranges = np.array(_CODE_POINT_RANGES)
    which = rng.choice(len(ranges), total, p=[0.55, 0.1, 0.15, 0.05, 0.15])
    code_points = rng.integers(ranges[which, 0], ranges[which, 1])
    text = code_points.astype("<u4").tobytes().decode("utf-32-le")
    ends = np.cumsum(lengths)
    values: list[Any] = [text[int(end - length) : int(end)] for end, length in zip(ends, lengths)]
    return _finish(rng, values, ["", "a", "iceberg", "ü", "€", "😀", "a😀b€c", "x" * 100])


def bytes_values(name: str, *, length: int | None = None) -> list[Any]:
    rng = _rng(name)
    lengths = np.full(N, length) if length is not None else rng.integers(0, 70, N, endpoint=True)
    data = rng.integers(0, 256, int(lengths.sum()), dtype=np.uint8).tobytes()
    ends = np.cumsum(lengths)
    values: list[Any] = [data[int(end - n) : int(end)] for end, n in zip(ends, lengths)]
    edges = (
        [b"", b"\x00", b"\x00\x01\x02\x03", b"\xff" * 5]
        if length is None
        else [b"\x00" * length, b"\xff" * length]
    )
    return _finish(rng, values, edges)


def uuid_values(name: str) -> list[Any]:
    return [None if b is None else uuid.UUID(bytes=b) for b in bytes_values(name, length=16)]


# A small and the largest bucket count: the latter shows (almost) the whole hash.
BUCKETS = ["bucket[16]", "bucket[2147483647]"]
TIME = ["year", "month", "day", "hour"]


# type name -> (icefloe type, transforms, value generator)
CASES: dict[str, tuple[IcebergType, list[str], Callable[[], list[Any]]]] = {
    "int": (
        IntegerType(),
        [
            "identity",
            "void",
            *BUCKETS,
            "truncate[1]",
            "truncate[10]",
            "truncate[1000003]",
            "truncate[2147483647]",
        ],
        lambda: int_values("int", INT_MIN, INT_MAX),
    ),
    "long": (
        LongType(),
        [*BUCKETS, "truncate[10]", "truncate[2147483647]"],
        lambda: int_values("long", LONG_MIN, LONG_MAX),
    ),
    "date": (
        DateType(),
        [*BUCKETS, "year", "month", "day"],
        lambda: int_values("date", MIN_DAY, MAX_DAY, spread=800),
    ),
    "time": (TimeType(), BUCKETS, lambda: int_values("time", 0, MICROS_PER_DAY - 1)),
    "timestamp": (
        TimestampType(),
        [*BUCKETS, *TIME],
        lambda: timestamp_values("timestamp", MIN_MICROS, MAX_MICROS, 1),
    ),
    "timestamptz": (
        TimestamptzType(),
        [*BUCKETS, *TIME],
        lambda: timestamp_values("timestamptz", MIN_MICROS, MAX_MICROS, 1),
    ),
    # every int64 of nanoseconds is within years 1677 to 2262
    "timestamp_ns": (
        TimestampNanoType(),
        [*BUCKETS, *TIME],
        lambda: timestamp_values("timestamp_ns", LONG_MIN, LONG_MAX, 1000),
    ),
    "timestamptz_ns": (
        TimestamptzNanoType(),
        [*BUCKETS, *TIME],
        lambda: timestamp_values("timestamptz_ns", LONG_MIN, LONG_MAX, 1000),
    ),
    "decimal(9,2)": (
        DecimalType(9, 2),
        [*BUCKETS, "truncate[50]"],
        lambda: decimal_values("decimal(9,2)", 9, 2),
    ),
    "decimal(18,0)": (
        DecimalType(18, 0),
        [*BUCKETS, "truncate[1000003]"],
        lambda: decimal_values("decimal(18,0)", 18, 0),
    ),
    "decimal(38,10)": (
        DecimalType(38, 10),
        [*BUCKETS, "truncate[7]", "truncate[2147483647]"],
        lambda: decimal_values("decimal(38,10)", 38, 10),
    ),
    "string": (
        StringType(),
        ["identity", *BUCKETS, "truncate[1]", "truncate[5]"],
        lambda: string_values("string"),
    ),
    "uuid": (UUIDType(), BUCKETS, lambda: uuid_values("uuid")),
    "fixed(3)": (FixedType(3), BUCKETS, lambda: bytes_values("fixed(3)", length=3)),
    "fixed(16)": (FixedType(16), BUCKETS, lambda: bytes_values("fixed(16)", length=16)),
    "binary": (BinaryType(), [*BUCKETS, "truncate[3]", "truncate[40]"], lambda: bytes_values("binary")),
}


def to_json(value: Any) -> Any:
    """The JSON form both sides compare: Decimal as text (with its scale), bytes as hex, uuid hex."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, uuid.UUID):
        return value.hex
    return value


# ---------------------------------------------------------------------------------------------
# the documented differences


def _java_rem(a: int, b: int) -> int:
    return -(abs(a) % b) if a < 0 else abs(a) % b


def truncate_overflows_in_java(value: int, width: int, bits: int) -> bool:
    """Whether the spec's ``v - (((v % W) + W) % W)`` overflows ``bits``-bit arithmetic."""
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    step = _java_rem(value, width) + width
    return not low <= step <= high or not low <= value - value % width <= high


def is_documented_difference(type_name: str, transform: Transform, value: Any, theirs: Any) -> bool:
    """Whether PyIceberg's result ``theirs`` for ``value`` differs from icefloe's (Java's) in a
    documented way (see the module docstring)."""
    if isinstance(transform, TruncateTransform) and type_name in ("int", "long"):
        bits = 32 if type_name == "int" else 64
        return theirs == value - value % transform.width and truncate_overflows_in_java(
            value, transform.width, bits
        )
    return False


# ---------------------------------------------------------------------------------------------
# the comparison


@pytest.mark.parametrize("type_name", list(CASES))
def test_transforms_agree_with_pyiceberg(pyiceberg: PyIcebergEngine, type_name: str) -> None:
    source_type, transform_names, generate = CASES[type_name]
    values = generate()
    assert len(values) == N and values.count(None) == N // 100
    array = to_arrow_array(values, source_type)
    theirs_by_transform = pyiceberg_transform(
        pyiceberg, type_name, transform_names, [to_json(v) for v in values]
    )

    explained: dict[str, list[Any]] = {}  # transform -> the values where a documented difference shows
    for text in transform_names:
        transform = parse_transform(text)
        result_type = transform.result_type(source_type)
        vectorized = [
            to_json(v) for v in from_arrow_array(apply_transform(transform, source_type, array), result_type)
        ]
        # The scalar transform on a sample (tests/arrow checks it equals the vectorized one
        # property by property; here it must agree on PyIceberg's values too).
        scalar_function = transform.bind(source_type)
        sample = slice(0, N, SCALAR_SAMPLE_STEP)
        assert [to_json(scalar_function(v)) for v in values[sample]] == vectorized[sample], text

        theirs = theirs_by_transform[text]
        assert len(theirs) == N
        unexplained = []
        for value, their, our in zip(values, theirs, vectorized):
            if their == our:
                continue
            if is_documented_difference(type_name, transform, value, their):
                explained.setdefault(text, []).append(value)
            else:
                unexplained.append((value, their, our))
        assert not unexplained, (
            f"{type_name} {text}: {len(unexplained)} values differ from PyIceberg "
            f"(value, PyIceberg, icefloe): {unexplained[:5]}"
        )

    # The documented differences show where expected, and only there.
    if type_name == "int":
        assert set(explained) == {"truncate[10]", "truncate[1000003]", "truncate[2147483647]"}
        assert explained["truncate[10]"] == [INT_MIN, INT_MIN + 1]
        assert {INT_MIN, INT_MIN + 1, INT_MIN + 9} <= set(explained["truncate[1000003]"])
        assert len(explained["truncate[2147483647]"]) > N // 10  # every positive value but the maximum
    elif type_name == "long":
        assert set(explained) == {"truncate[10]", "truncate[2147483647]"}
        assert explained["truncate[10]"] == [LONG_MIN, LONG_MIN + 1]
        assert {LONG_MIN, LONG_MIN + 1} <= set(explained["truncate[2147483647]"])
    else:
        assert explained == {}


def test_truncate_near_the_minimum(pyiceberg: PyIcebergEngine) -> None:
    values = [INT_MIN, INT_MIN + 1, 5, 1]
    theirs = pyiceberg_transform(pyiceberg, "int", ["truncate[10]", "truncate[2147483647]"], values)
    assert theirs["truncate[10]"] == [-2147483650, -2147483650, 0, 0]  # below the int range
    assert theirs["truncate[2147483647]"] == [-4294967294, INT_MIN + 1, 0, 0]
    array = pa.array(values, pa.int32())
    # Java's int arithmetic: INT_MIN % 10 == -8, -8 + 10 == 2, INT_MIN - 2 wraps to 2147483646;
    # 5 % W + W wraps to -2147483644, and 5 - -2147483644 wraps to -2147483647.
    assert apply_transform(parse_transform("truncate[10]"), IntegerType(), array).to_pylist() == [
        2147483646,
        2147483646,
        0,
        0,
    ]
    assert apply_transform(parse_transform("truncate[2147483647]"), IntegerType(), array).to_pylist() == [
        2,
        INT_MIN + 1,
        -2147483647,
        2,
    ]


def test_hour_beyond_the_int_range(pyiceberg: PyIcebergEngine) -> None:
    values = [LONG_MAX, LONG_MIN, MAX_MICROS]
    theirs = pyiceberg_transform(pyiceberg, "timestamp", ["hour"], values)["hour"]
    exact = [v // MICROS_PER_HOUR for v in values]
    assert theirs == exact
    # Java casts the hour to int, so hours beyond the 32-bit range wrap (PyIceberg keeps them
    # exact); icefloe writes what Java writes, on single values and on arrays alike.
    hour = parse_transform("hour")
    wrapped = [(h + 2**31) % 2**32 - 2**31 for h in exact]
    assert wrapped[:2] != exact[:2] and wrapped[2] == exact[2]
    assert [hour.apply(TimestampType(), v) for v in values] == wrapped
    assert apply_transform(hour, TimestampType(), pa.array(values, pa.timestamp("us"))).to_pylist() == wrapped


def test_year_and_month_outside_python_datetime(pyiceberg: PyIcebergEngine) -> None:
    days = [MIN_DAY - 1, MAX_DAY + 1]
    micros = [d * MICROS_PER_DAY for d in days]
    theirs = pyiceberg_transform(pyiceberg, "date", ["year", "month", "day"], days)
    assert theirs["year"] == theirs["month"] == [{"error": "OverflowError"}] * 2
    assert theirs["day"] == days
    theirs_ts = pyiceberg_transform(pyiceberg, "timestamp", ["year", "month", "day"], micros)
    assert theirs_ts["year"] == theirs_ts["month"] == [{"error": "OverflowError"}] * 2
    assert theirs_ts["day"] == days
    year = parse_transform("year")
    month = parse_transform("month")
    # 0000-12-31 (year 0 of the proleptic calendar) and 10000-01-01
    assert apply_transform(year, DateType(), pa.array(days, pa.int32()).view(pa.date32())).to_pylist() == [
        -1970,
        8030,
    ]
    assert apply_transform(month, TimestampType(), pa.array(micros, pa.timestamp("us"))).to_pylist() == [
        -1970 * 12 + 11,
        8030 * 12,
    ]


def test_decimal_scale_comes_from_the_type(pyiceberg: PyIcebergEngine) -> None:
    values = ["1.5", "1.50"]
    theirs = pyiceberg_transform(pyiceberg, "decimal(9,2)", ["bucket[1009]", "truncate[4]"], values)
    bucket = parse_transform("bucket[1009]")
    ours = bucket.apply(DecimalType(9, 2), Decimal("1.50"))
    assert bucket.apply(DecimalType(9, 2), Decimal("1.5")) == ours
    assert theirs["bucket[1009]"][1] == ours
    assert theirs["bucket[1009]"][0] == bucket.apply(DecimalType(9, 1), Decimal("1.5")) != ours
    # truncate[4] at scale 2 is a multiple of 0.04; PyIceberg uses 0.4 for the one-digit value
    assert theirs["truncate[4]"] == ["1.2", "1.48"]
    assert parse_transform("truncate[4]").apply(DecimalType(9, 2), Decimal("1.5")) == Decimal("1.48")


# The floors of JAVA_PRE_EPOCH_QUIRKS. Java Iceberg 1.9.2 gives (Spark's system.years / months /
# days / hours, by hand) year [-1, -1, -2, -1], month [-1, -1, -13, -2], day [-1, -2, -366, -32],
# hour [-2, -25, -8761, -745]: one below wherever the second before the fraction is a boundary.
FLOORS = {
    "year": [-1, -1, -1, -1],
    "month": [-1, -1, -12, -1],
    "day": [-1, -1, -365, -31],
    "hour": [-1, -24, -8760, -744],
}


@pytest.mark.parametrize("type_name", ["timestamp", "timestamptz_ns"])
def test_pre_epoch_values_floor_like_the_spec(pyiceberg: PyIcebergEngine, type_name: str) -> None:
    source_type = CASES[type_name][0]
    unit = 1000 if type_name.endswith("_ns") else 1
    values = [q * unit + unit - 1 for q in JAVA_PRE_EPOCH_QUIRKS]  # .999999(999) after the second
    theirs = pyiceberg_transform(pyiceberg, type_name, list(FLOORS), values)
    array = to_arrow_array(values, source_type)
    for text, floors in FLOORS.items():
        transform = parse_transform(text)
        ours = from_arrow_array(
            apply_transform(transform, source_type, array), transform.result_type(source_type)
        )
        assert theirs[text] == ours == floors, text
