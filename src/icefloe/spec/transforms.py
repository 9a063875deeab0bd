"""Partition transforms (spec "Partition Transforms", Appendix B), on single values.

A transform is an immutable value that prints as its spec name (``str(BucketTransform(16)) ==
"bucket[16]"``) and :func:`parse_transform` reads back. Transforms are applied to values in
icefloe's internal representation (see :mod:`icefloe.spec.types`) and given the source column
type, because one transform serves many types: ``day`` of a date is the date itself, ``day`` of a
``timestamp_ns`` divides nanoseconds. Every transform maps ``None`` to ``None``.

Behaviour follows Java Iceberg where the spec leaves room: ``day`` produces a ``date`` (Java's
``Days.getResultType``, which is what manifests' partition structs carry), ``void`` keeps the
source type, and an unknown transform produces ``string``. Time transforms use floor division
for values before 1970 (year -1 is 1969).
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar

from icefloe._util.murmur3 import hash32
from icefloe.errors import UnsupportedFeatureError, ValidationError
from icefloe.spec.conversions import (
    MICROS_PER_DAY,
    NANOS_PER_DAY,
    civil_from_days,
    decimal_from_unscaled,
    to_human_string,
    unscaled_decimal,
)
from icefloe.spec.types import (
    BinaryType,
    DateType,
    DecimalType,
    FixedType,
    IcebergType,
    IntegerType,
    LongType,
    PrimitiveType,
    StringType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
    VariantType,
)

__all__ = [
    "BucketTransform",
    "DayTransform",
    "HourTransform",
    "IdentityTransform",
    "MonthTransform",
    "TimeTransform",
    "Transform",
    "TruncateTransform",
    "UnknownTransform",
    "VoidTransform",
    "YearTransform",
    "parse_transform",
    "partition_path_segment",
    "url_encode",
]

_INT_MAX = 2**31 - 1
_PACK_LONG = struct.Struct("<q").pack
_MICRO_TYPES = (TimestampType, TimestamptzType)
_NANO_TYPES = (TimestampNanoType, TimestamptzNanoType)


@dataclass(frozen=True, slots=True)
class Transform:
    """Base of all transforms: equal by value, hashable, printed as the spec name."""

    def __str__(self) -> str:
        raise NotImplementedError

    def can_transform(self, source_type: IcebergType) -> bool:
        """Whether this transform accepts values of ``source_type``."""
        raise NotImplementedError

    def result_type(self, source_type: IcebergType) -> IcebergType:
        """The type of the values this transform produces from ``source_type`` values."""
        raise NotImplementedError

    def _function(self, source_type: IcebergType) -> Callable[[Any], Any]:
        """The function on non-null values; only called for a type :meth:`can_transform` accepts."""
        raise NotImplementedError

    def bind(self, source_type: IcebergType) -> Callable[[Any], Any]:
        """Return a function applying this transform to values of ``source_type`` (None -> None).

        Raises:
            ValidationError: the transform cannot be applied to ``source_type``.
        """
        if not self.can_transform(source_type):
            raise ValidationError(f"cannot apply transform {self} to type {source_type}")
        function = self._function(source_type)
        return lambda value: None if value is None else function(value)

    def apply(self, source_type: IcebergType, value: Any) -> Any:
        """Transform one value of ``source_type``; see :meth:`bind` for repeated use."""
        return self.bind(source_type)(value)

    def to_human_string(self, source_type: IcebergType, value: Any) -> str:
        """The text of a transformed ``value`` in partition paths (Java ``toHumanString``)."""
        return to_human_string(self.result_type(source_type), value)

    @property
    def preserves_order(self) -> bool:
        """Whether ``a < b`` implies ``apply(a) <= apply(b)``."""
        return False

    @property
    def is_identity(self) -> bool:
        return False

    @property
    def is_void(self) -> bool:
        return False

    @property
    def dedup_name(self) -> str:
        """Name under which two transforms of one source field count as redundant in a spec."""
        return str(self)

    def satisfies_order_of(self, other: Transform) -> bool:
        """Whether data ordered by this transform's values is also ordered by ``other``'s."""
        return self == other


@dataclass(frozen=True, slots=True)
class IdentityTransform(Transform):
    """The source value, unmodified."""

    def __str__(self) -> str:
        return "identity"

    def can_transform(self, source_type: IcebergType) -> bool:
        return isinstance(source_type, PrimitiveType) and not isinstance(source_type, VariantType)

    def result_type(self, source_type: IcebergType) -> IcebergType:
        return source_type

    def _function(self, source_type: IcebergType) -> Callable[[Any], Any]:
        return lambda value: value

    @property
    def preserves_order(self) -> bool:
        return True

    @property
    def is_identity(self) -> bool:
        return True

    def satisfies_order_of(self, other: Transform) -> bool:
        # Ordering by the value itself orders by anything monotonic in it.
        return other.preserves_order


@dataclass(frozen=True, slots=True)
class VoidTransform(Transform):
    """Always null; replaces the transform of a partition field dropped from a v1 spec."""

    def __str__(self) -> str:
        return "void"

    def can_transform(self, source_type: IcebergType) -> bool:
        return True

    def result_type(self, source_type: IcebergType) -> IcebergType:
        return source_type

    def _function(self, source_type: IcebergType) -> Callable[[Any], Any]:
        return lambda value: None

    def to_human_string(self, source_type: IcebergType, value: Any) -> str:
        return "null"

    @property
    def is_void(self) -> bool:
        return True


def _hash_long(value: int) -> int:
    try:
        return hash32(_PACK_LONG(value))
    except struct.error as e:
        raise ValidationError(f"cannot bucket {value!r}: not a 64-bit integer") from e


def _hash_decimal(scale: int) -> Callable[[Decimal], int]:
    def hash_decimal(value: Decimal) -> int:
        # Minimal two's-complement big-endian bytes of the unscaled value, like BigInteger.toByteArray
        unscaled = unscaled_decimal(value, scale)
        length = (unscaled if unscaled >= 0 else ~unscaled).bit_length() // 8 + 1
        return hash32(unscaled.to_bytes(length, "big", signed=True))

    return hash_decimal


def _hash_string(value: str) -> int:
    # Unpaired surrogates become '?', as Java's String.getBytes(UTF_8) does.
    return hash32(value.encode("utf-8", "replace"))


@dataclass(frozen=True, slots=True)
class BucketTransform(Transform):
    """Murmur3 hash of the value modulo ``num_buckets`` (spec Appendix B)."""

    num_buckets: int

    _HASHABLE: ClassVar[tuple[type[IcebergType], ...]] = (
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
    )

    def __post_init__(self) -> None:
        if not isinstance(self.num_buckets, int) or not 0 < self.num_buckets <= _INT_MAX:
            raise ValidationError(f"invalid number of buckets: {self.num_buckets!r} (must be > 0)")

    def __str__(self) -> str:
        return f"bucket[{self.num_buckets}]"

    def can_transform(self, source_type: IcebergType) -> bool:
        return isinstance(source_type, self._HASHABLE)

    def result_type(self, source_type: IcebergType) -> IcebergType:
        return IntegerType()

    def hasher(self, source_type: IcebergType) -> Callable[[Any], int]:
        """Return the Appendix B 32-bit hash function (signed) for non-null ``source_type`` values.

        Raises:
            ValidationError: the type cannot be bucketed.
        """
        if not self.can_transform(source_type):
            raise ValidationError(f"cannot bucket type {source_type}")
        # int/date hash as long so that promoting int to long keeps bucket values.
        if isinstance(source_type, (IntegerType, LongType, DateType, TimeType, *_MICRO_TYPES)):
            return _hash_long
        if isinstance(source_type, _NANO_TYPES):
            # Nanoseconds hash as microseconds (floor), so both precisions share buckets.
            return lambda nanos: _hash_long(nanos // 1000)
        if isinstance(source_type, DecimalType):
            return _hash_decimal(source_type.scale)
        if isinstance(source_type, StringType):
            return _hash_string
        if isinstance(source_type, UUIDType):
            return lambda value: hash32(value.bytes)
        return hash32  # fixed, binary

    def hash(self, source_type: IcebergType, value: Any) -> int:
        """The Appendix B hash of one non-null value (before the modulo)."""
        return self.hasher(source_type)(value)

    def _function(self, source_type: IcebergType) -> Callable[[Any], Any]:
        hasher, buckets = self.hasher(source_type), self.num_buckets
        return lambda value: (hasher(value) & _INT_MAX) % buckets


def _java_truncate(value: int, width: int, bits: int) -> int:
    """``v - (((v % W) + W) % W)`` evaluated in Java's wrapping int/long arithmetic."""

    def wrap(x: int) -> int:
        return (x + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1))

    def java_rem(a: int, b: int) -> int:  # Java '%' takes the sign of the dividend
        rem = abs(a) % b
        return -rem if a < 0 else rem

    return wrap(value - java_rem(wrap(java_rem(value, width) + width), width))


@dataclass(frozen=True, slots=True)
class TruncateTransform(Transform):
    """Truncate to ``width``: numbers down to a multiple of it, strings to as many code points,
    binary to as many bytes. Decimals use the width in units of the last digit of the scale."""

    width: int

    def __post_init__(self) -> None:
        if not isinstance(self.width, int) or not 0 < self.width <= _INT_MAX:
            raise ValidationError(f"invalid truncate width: {self.width!r} (must be > 0)")

    def __str__(self) -> str:
        return f"truncate[{self.width}]"

    def can_transform(self, source_type: IcebergType) -> bool:
        return isinstance(source_type, (IntegerType, LongType, DecimalType, StringType, BinaryType))

    def result_type(self, source_type: IcebergType) -> IcebergType:
        return source_type

    def _function(self, source_type: IcebergType) -> Callable[[Any], Any]:
        width = self.width
        if isinstance(source_type, (IntegerType, LongType)):
            bits = 32 if isinstance(source_type, IntegerType) else 64
            return lambda value: _java_truncate(value, width, bits)
        if isinstance(source_type, DecimalType):
            scale = source_type.scale

            def truncate_decimal(value: Decimal) -> Decimal:
                unscaled = unscaled_decimal(value, scale)
                return decimal_from_unscaled(unscaled - unscaled % width, scale)

            return truncate_decimal
        # str slices by code point, as Java's UnicodeUtil.truncateString counts; bytes by byte.
        return lambda value: value[:width]

    @property
    def preserves_order(self) -> bool:
        return True

    def satisfies_order_of(self, other: Transform) -> bool:
        # As Java: a longer prefix orders by every shorter one.
        return isinstance(other, TruncateTransform) and other.width <= self.width


@dataclass(frozen=True, slots=True)
class TimeTransform(Transform):
    """Base of year, month, day and hour: whole units since 1970-01-01 00:00 (UTC)."""

    _NAME: ClassVar[str] = ""
    _RANK: ClassVar[int] = 0  # granularity: hour < day < month < year

    def __str__(self) -> str:
        return self._NAME

    def can_transform(self, source_type: IcebergType) -> bool:
        return isinstance(source_type, (DateType, *_MICRO_TYPES, *_NANO_TYPES))

    def result_type(self, source_type: IcebergType) -> IcebergType:
        return IntegerType()

    def _from_days(self, days: int) -> int:
        raise NotImplementedError

    def _function(self, source_type: IcebergType) -> Callable[[Any], Any]:
        if isinstance(source_type, DateType):
            return self._from_days
        per_day = NANOS_PER_DAY if isinstance(source_type, _NANO_TYPES) else MICROS_PER_DAY
        from_days = self._from_days
        return lambda value: from_days(value // per_day)  # floor: pre-1970 values round down

    @property
    def preserves_order(self) -> bool:
        return True

    @property
    def dedup_name(self) -> str:
        return "time"

    def satisfies_order_of(self, other: Transform) -> bool:
        return isinstance(other, TimeTransform) and self._RANK <= other._RANK


@dataclass(frozen=True, slots=True)
class YearTransform(TimeTransform):
    _NAME = "year"
    _RANK = 3

    def _from_days(self, days: int) -> int:
        return civil_from_days(days)[0] - 1970

    def to_human_string(self, source_type: IcebergType, value: Any) -> str:
        return "null" if value is None else f"{1970 + value:04d}"


@dataclass(frozen=True, slots=True)
class MonthTransform(TimeTransform):
    _NAME = "month"
    _RANK = 2

    def _from_days(self, days: int) -> int:
        year, month, _ = civil_from_days(days)
        return (year - 1970) * 12 + month - 1

    def to_human_string(self, source_type: IcebergType, value: Any) -> str:
        return "null" if value is None else f"{1970 + value // 12:04d}-{value % 12 + 1:02d}"


@dataclass(frozen=True, slots=True)
class DayTransform(TimeTransform):
    _NAME = "day"
    _RANK = 1

    def result_type(self, source_type: IcebergType) -> IcebergType:
        # The spec table says int; Java (and so every manifest it writes) says date.
        return DateType()

    def _from_days(self, days: int) -> int:
        return days

    def to_human_string(self, source_type: IcebergType, value: Any) -> str:
        return to_human_string(DateType(), value)


@dataclass(frozen=True, slots=True)
class HourTransform(TimeTransform):
    _NAME = "hour"
    _RANK = 0

    def can_transform(self, source_type: IcebergType) -> bool:
        return isinstance(source_type, (*_MICRO_TYPES, *_NANO_TYPES))

    def _function(self, source_type: IcebergType) -> Callable[[Any], Any]:
        per_hour = (NANOS_PER_DAY if isinstance(source_type, _NANO_TYPES) else MICROS_PER_DAY) // 24
        # The result is an int: past year 246,970 the hour count overflows 32 bits, and Java's
        # (int) cast wraps it; do the same so partition values match Java's.
        return lambda value: ((value // per_hour + 2**31) % 2**32) - 2**31

    def to_human_string(self, source_type: IcebergType, value: Any) -> str:
        if value is None:
            return "null"
        days, hour = divmod(value, 24)
        return f"{to_human_string(DateType(), days)}-{hour:02d}"


@dataclass(frozen=True, slots=True)
class UnknownTransform(Transform):
    """A transform this version does not know, kept by its text so that metadata still loads.

    Readers ignore partition fields with unknown transforms; applying one is not possible.
    """

    text: str

    def __str__(self) -> str:
        return self.text

    def can_transform(self, source_type: IcebergType) -> bool:
        return True

    def result_type(self, source_type: IcebergType) -> IcebergType:
        return StringType()  # the real result type is not known; Java says string as well

    def bind(self, source_type: IcebergType) -> Callable[[Any], Any]:
        raise UnsupportedFeatureError(f"cannot apply unsupported transform: {self.text}")


_WITH_ARGUMENT = re.compile(r"(\w+)\[(\d+)\]", re.ASCII)
_SIMPLE: dict[str, Transform] = {
    str(t): t
    for t in (
        IdentityTransform(),
        VoidTransform(),
        YearTransform(),
        MonthTransform(),
        DayTransform(),
        HourTransform(),
    )
}


def parse_transform(text: str) -> Transform:
    """Parse a transform's spec name, case-insensitively like Java's ``Transforms.fromString``.

    Names this version does not know give an :class:`UnknownTransform`.

    Raises:
        ValidationError: a known transform with an invalid argument (``"bucket[0]"``).
    """
    match = _WITH_ARGUMENT.fullmatch(text)
    if match is not None:
        name, argument = match.group(1).lower(), int(match.group(2))
        if name == "bucket":
            return BucketTransform(argument)
        if name == "truncate":
            return TruncateTransform(argument)
    return _SIMPLE.get(text.lower()) or UnknownTransform(text)


_URL_SAFE = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-*_")


def url_encode(text: str) -> str:
    """Encode like ``java.net.URLEncoder.encode(text, UTF_8)``: space -> '+', and every byte
    outside ``[A-Za-z0-9.*_-]`` -> ``%XX`` (unpaired surrogates encode as '?')."""
    return "".join(
        chr(byte) if byte in _URL_SAFE else "+" if byte == 0x20 else f"%{byte:02X}"
        for byte in text.encode("utf-8", "replace")
    )


def partition_path_segment(name: str, transform: Transform, source_type: IcebergType, value: Any) -> str:
    """Return one ``name=value`` directory of a partition path, as Java's
    ``PartitionSpec.partitionToPath`` writes it: both sides URL-encoded, the value as the
    transform's human string (``"null"`` for null)."""
    return f"{url_encode(name)}={url_encode(transform.to_human_string(source_type, value))}"
