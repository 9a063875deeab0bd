"""Literal values of filter expressions, and their conversion to the type of a column.

A literal keeps the value a user wrote (``5``, ``'2024-01-01'``, ``DATE '2024-01-01'``,
``datetime.date(2024, 1, 1)``) until the filter is bound to a schema; :meth:`Literal.to` then
converts it to the column's type, in icefloe's value representation (see
:mod:`icefloe.spec.types`). Conversions follow Java's ``Literals`` and go further where the
meaning is unambiguous:

- strings convert to every primitive type: dates, times and timestamps from ISO text (a
  timestamp without offset is UTC for ``timestamptz`` columns), numbers from decimal text,
  booleans from ``true``/``false``, UUIDs, and binary as UTF-8 bytes;
- numbers convert between all numeric types. Floats round to the nearest ``float`` value (as
  Java). Everything else is exact: a value that falls between two values of the column's type
  (``2.5`` for an ``int`` column, ``10.505`` for ``decimal(10, 2)``, ``1e10`` for an ``int``,
  ``TIMESTAMP '2024-01-01T10:00'`` for a ``date``) converts to an :class:`Inexact` naming the
  neighbours, which binding turns into an exact predicate (``x > 2.5`` is ``x >= 3``). A value
  beyond the type's range has ``BELOW_MIN`` / ``ABOVE_MAX`` as its missing neighbour (Java's
  ``AboveMax`` / ``BelowMin``).
- plain integers are taken in icefloe's representation for temporal columns: days for ``date``,
  microseconds for ``time`` / ``timestamp(tz)``, nanoseconds for ``timestamp(tz)_ns`` (Java
  reads microseconds there; icefloe's partition tuples and bounds carry nanoseconds).

NaN is never a literal: compare with ``is_nan``.
"""

from __future__ import annotations

import datetime as dt
import math
import numbers
import uuid
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

from icefloe.errors import InvalidFilterError
from icefloe.expressions._numbers import (
    ABOVE_MAX,
    BELOW_MIN,
    INT32,
    INT64,
    NUMERIC_TYPES,
    TIME_RANGE,
    Inexact,
    Unsupported,
    between,
    exact_decimal,
    fit,
    number_to,
    parse_number,
)
from icefloe.expressions._text import (
    format_date,
    format_time,
    format_timestamp,
    parse_time,
    parse_timestamp,
    quote_string,
)
from icefloe.spec.conversions import MICROS_PER_DAY, NANOS_PER_DAY
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
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

__all__ = [
    "ABOVE_MAX",
    "BELOW_MIN",
    "BinaryLiteral",
    "BooleanLiteral",
    "DateLiteral",
    "DecimalLiteral",
    "FloatLiteral",
    "Inexact",
    "IntLiteral",
    "Literal",
    "StringLiteral",
    "TimeLiteral",
    "TimestampLiteral",
    "TimestampNanoLiteral",
    "TimestamptzLiteral",
    "TimestamptzNanoLiteral",
    "UUIDLiteral",
    "literal",
    "literal_for",
]

_MICRO_TYPES = (TimestampType, TimestamptzType)
_NANO_TYPES = (TimestampNanoType, TimestamptzNanoType)


# ---------------------------------------------------------------------------------------------
# Literal classes


@dataclass(frozen=True, slots=True)
class Literal:
    """A value in a filter, before it is converted to a column's type. Equal by class and value."""

    value: Any

    def __post_init__(self) -> None:
        """Validation of the value, by the subclasses (the generated __init__ calls it)."""

    def to(self, type_: IcebergType) -> Any:
        """Convert to ``type_``: the value in icefloe's representation, or an :class:`Inexact`.

        Raises:
            InvalidFilterError: the literal has no meaning for that type, or is malformed.
        """
        try:
            return self._convert(type_)
        except Unsupported:
            raise InvalidFilterError(f"cannot compare a {type_} column with {self.sql()}") from None
        except (ValueError, ArithmeticError) as e:
            raise InvalidFilterError(f"cannot convert {self.sql()} to {type_}: {e}") from e

    def _convert(self, type_: IcebergType) -> Any:
        raise Unsupported

    def sql(self) -> str:
        """The literal as the filter parser reads it back."""
        raise NotImplementedError

    def __str__(self) -> str:
        return self.sql()


class BooleanLiteral(Literal):
    __slots__ = ()

    def __post_init__(self) -> None:
        if not isinstance(self.value, bool):
            raise InvalidFilterError(f"not a boolean: {self.value!r}")

    def _convert(self, type_: IcebergType) -> Any:
        if isinstance(type_, BooleanType):
            return self.value
        raise Unsupported

    def sql(self) -> str:
        return "TRUE" if self.value else "FALSE"


class IntLiteral(Literal):
    """An integer of any size; its range is checked against the column's type."""

    __slots__ = ()

    def __post_init__(self) -> None:
        if not isinstance(self.value, int) or isinstance(self.value, bool):
            raise InvalidFilterError(f"not an integer: {self.value!r}")

    def _convert(self, type_: IcebergType) -> Any:
        if isinstance(type_, NUMERIC_TYPES):
            return number_to(Fraction(self.value), type_)
        if isinstance(type_, DateType):
            return fit(self.value, INT32)
        if isinstance(type_, TimeType):
            return fit(self.value, TIME_RANGE)
        if isinstance(type_, (*_MICRO_TYPES, *_NANO_TYPES)):
            return fit(self.value, INT64)
        raise Unsupported

    def sql(self) -> str:
        return str(self.value)


class FloatLiteral(Literal):
    """A double-precision number (never NaN)."""

    __slots__ = ()

    def __post_init__(self) -> None:
        if not isinstance(self.value, float):
            raise InvalidFilterError(f"not a float: {self.value!r}")
        if math.isnan(self.value):
            raise InvalidFilterError("NaN cannot be compared: use is_nan / IS NAN")

    def _convert(self, type_: IcebergType) -> Any:
        value = self.value
        if isinstance(type_, (FloatType, DoubleType)):
            return number_to(value, type_)
        if isinstance(type_, DecimalType) and not math.isinf(value):
            # As Java's BigDecimal.valueOf(double): the shortest decimal that reads back as value.
            return number_to(exact_decimal(Decimal(repr(value))), type_)
        if isinstance(type_, NUMERIC_TYPES):
            return number_to(value, type_)
        raise Unsupported

    def sql(self) -> str:
        if math.isinf(self.value):
            return "DOUBLE 'Infinity'" if self.value > 0 else "DOUBLE '-Infinity'"
        text = repr(self.value)
        # An exponent makes the parser read a double, not a decimal.
        return text if "e" in text else text + "E0"


class DecimalLiteral(Literal):
    """An exact decimal number; its scale need not match the column's."""

    __slots__ = ()

    def __post_init__(self) -> None:
        if not isinstance(self.value, Decimal) or not self.value.is_finite():
            raise InvalidFilterError(f"not a finite decimal: {self.value!r}")
        try:
            exact_decimal(self.value)
        except ValueError as e:
            raise InvalidFilterError(str(e)) from None

    def _convert(self, type_: IcebergType) -> Any:
        if isinstance(type_, NUMERIC_TYPES):
            return number_to(Fraction(self.value), type_)
        raise Unsupported

    def sql(self) -> str:
        exponent = self.value.as_tuple().exponent
        assert isinstance(exponent, int)
        # With a fraction the parser reads a decimal; whole numbers would read as integers.
        return f"{self.value:f}" if exponent < 0 else f"DECIMAL '{self.value}'"


class StringLiteral(Literal):
    """Text; converts to any primitive type by parsing (see the module docstring)."""

    __slots__ = ()

    def __post_init__(self) -> None:
        if not isinstance(self.value, str):
            raise InvalidFilterError(f"not a string: {self.value!r}")

    def _convert(self, type_: IcebergType) -> Any:
        text: str = self.value
        if isinstance(type_, StringType):
            return text
        if isinstance(type_, NUMERIC_TYPES):
            return number_to(parse_number(text), type_)
        if isinstance(type_, BooleanType):
            lowered = text.strip().lower()
            if lowered not in ("true", "false"):
                raise ValueError("expected 'true' or 'false'")
            return lowered == "true"
        if isinstance(type_, TimeType):
            nanos = parse_time(text)
            return fit(nanos // 1000, TIME_RANGE) if nanos % 1000 == 0 else between(nanos // 1000, TIME_RANGE)
        if isinstance(type_, (DateType, *_MICRO_TYPES, *_NANO_TYPES)):
            parsed = parse_timestamp(text)
            if parsed.offset_seconds is not None and isinstance(type_, (TimestampType, TimestampNanoType)):
                raise ValueError(
                    "a timestamp without time zone cannot be compared with a time that has an offset"
                )
            if not parsed.has_time:
                return DateLiteral(parsed.nanos // NANOS_PER_DAY).to(type_)
            return TimestamptzNanoLiteral(parsed.utc_nanos).to(type_)
        if isinstance(type_, UUIDType):
            return uuid.UUID(text.strip())
        if isinstance(type_, (BinaryType, FixedType)):
            return BinaryLiteral(text.encode("utf-8")).to(type_)
        raise Unsupported

    def sql(self) -> str:
        return quote_string(self.value)


class UUIDLiteral(Literal):
    __slots__ = ()

    def __post_init__(self) -> None:
        if not isinstance(self.value, uuid.UUID):
            raise InvalidFilterError(f"not a UUID: {self.value!r}")

    def _convert(self, type_: IcebergType) -> Any:
        if isinstance(type_, UUIDType):
            return self.value
        raise Unsupported

    def sql(self) -> str:
        return f"UUID '{self.value}'"


class BinaryLiteral(Literal):
    """Bytes, for ``binary`` and ``fixed`` columns (a fixed column needs exactly its length)."""

    __slots__ = ()

    def __post_init__(self) -> None:
        if not isinstance(self.value, bytes):
            raise InvalidFilterError(f"not bytes: {self.value!r}")

    def _convert(self, type_: IcebergType) -> Any:
        if isinstance(type_, BinaryType):
            return self.value
        if isinstance(type_, FixedType):
            if len(self.value) != type_.length:
                raise ValueError(f"{len(self.value)} bytes, the column holds {type_.length}")
            return self.value
        raise Unsupported

    def sql(self) -> str:
        return f"X'{self.value.hex().upper()}'"


class DateLiteral(Literal):
    """Days since 1970-01-01. Compares with timestamps as their midnight."""

    __slots__ = ()

    def __post_init__(self) -> None:
        if not isinstance(self.value, int) or isinstance(self.value, bool):
            raise InvalidFilterError(f"not a day count: {self.value!r}")

    def _convert(self, type_: IcebergType) -> Any:
        if isinstance(type_, DateType):
            return fit(self.value, INT32)
        if isinstance(type_, _MICRO_TYPES):
            return fit(self.value * MICROS_PER_DAY, INT64)
        if isinstance(type_, _NANO_TYPES):
            return fit(self.value * NANOS_PER_DAY, INT64)
        raise Unsupported

    def sql(self) -> str:
        return f"DATE '{format_date(self.value)}'"


class TimeLiteral(Literal):
    """Microseconds since midnight."""

    __slots__ = ()

    def __post_init__(self) -> None:
        if (
            not isinstance(self.value, int)
            or isinstance(self.value, bool)
            or not 0 <= self.value < MICROS_PER_DAY
        ):
            raise InvalidFilterError(f"not a time of day in microseconds: {self.value!r}")

    def _convert(self, type_: IcebergType) -> Any:
        if isinstance(type_, TimeType):
            return self.value
        raise Unsupported

    def sql(self) -> str:
        return f"TIME '{format_time(self.value * 1000, 6)}'"


_PER_UNIT: dict[type, int] = {DateType: NANOS_PER_DAY, TimestampType: 1000, TimestamptzType: 1000}


class _InstantLiteral(Literal):
    """Base of the timestamp literals: ``value`` counts units of ``_UNIT`` nanoseconds."""

    __slots__ = ()
    _UNIT = 1000

    def __post_init__(self) -> None:
        if not isinstance(self.value, int) or isinstance(self.value, bool):
            raise InvalidFilterError(f"not a timestamp count: {self.value!r}")

    def _convert(self, type_: IcebergType) -> Any:
        nanos = self.value * self._UNIT
        if isinstance(type_, _NANO_TYPES):
            return fit(nanos, INT64)
        per_unit = _PER_UNIT.get(type(type_))
        if per_unit is None:
            raise Unsupported
        whole, rest = divmod(nanos, per_unit)
        bounds = INT32 if isinstance(type_, DateType) else INT64
        return between(whole, bounds) if rest else fit(whole, bounds)


class TimestampLiteral(_InstantLiteral):
    """Microseconds since the epoch, without time zone (a UTC instant for timestamptz columns)."""

    __slots__ = ()

    def sql(self) -> str:
        return f"TIMESTAMP '{format_timestamp(self.value * 1000, 6, utc=False)}'"


class TimestamptzLiteral(_InstantLiteral):
    """Microseconds since the epoch in UTC."""

    __slots__ = ()

    def sql(self) -> str:
        return f"TIMESTAMPTZ '{format_timestamp(self.value * 1000, 6, utc=True)}'"


class TimestampNanoLiteral(_InstantLiteral):
    """Nanoseconds since the epoch, without time zone."""

    __slots__ = ()
    _UNIT = 1

    def sql(self) -> str:
        return f"TIMESTAMP_NS '{format_timestamp(self.value, 9, utc=False)}'"


class TimestamptzNanoLiteral(_InstantLiteral):
    """Nanoseconds since the epoch in UTC."""

    __slots__ = ()
    _UNIT = 1

    def sql(self) -> str:
        return f"TIMESTAMPTZ_NS '{format_timestamp(self.value, 9, utc=True)}'"


# ---------------------------------------------------------------------------------------------
# Factories

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def _micros_since(epoch: dt.datetime, value: dt.datetime) -> int:
    delta = value - epoch
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _from_datetime(value: dt.datetime) -> Literal:
    aware = value.tzinfo is not None and value.utcoffset() is not None
    micros = _micros_since(_EPOCH_UTC if aware else _EPOCH, value)
    nanos = int(getattr(value, "nanosecond", 0) or 0)  # pandas.Timestamp carries nanoseconds
    if nanos:
        return (TimestamptzNanoLiteral if aware else TimestampNanoLiteral)(micros * 1000 + nanos)
    return (TimestamptzLiteral if aware else TimestampLiteral)(micros)


def literal(value: Any) -> Literal:
    """The literal of a Python value.

    Accepts a :class:`Literal`, ``bool``, ``int``, ``float`` (not NaN), ``Decimal``, ``str``,
    ``uuid.UUID``, bytes-like, ``datetime.date`` / ``datetime`` (naive: without zone; aware:
    a UTC instant) / ``time``, and numpy scalars.

    Raises:
        InvalidFilterError: None, NaN, or a value of another kind.
    """
    if isinstance(value, Literal):
        return value
    if value is None:
        raise InvalidFilterError("a filter value cannot be None: use is_null / IS NULL")
    if isinstance(value, bool):
        return BooleanLiteral(value)
    if isinstance(value, numbers.Integral):
        return IntLiteral(int(value))
    if isinstance(value, float):
        return FloatLiteral(float(value))
    if isinstance(value, Decimal):
        if value.is_nan():
            raise InvalidFilterError("NaN cannot be compared: use is_nan / IS NAN")
        return DecimalLiteral(value) if value.is_finite() else FloatLiteral(float(value))
    if isinstance(value, str):
        return StringLiteral(value)
    if isinstance(value, uuid.UUID):
        return UUIDLiteral(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return BinaryLiteral(bytes(value))
    if isinstance(value, dt.datetime):
        return _from_datetime(value)
    if isinstance(value, dt.date):
        return DateLiteral(value.toordinal() - _EPOCH.toordinal())
    if isinstance(value, dt.time):
        if value.utcoffset() is not None:
            raise InvalidFilterError(f"a time of day with a zone cannot be compared: {value!r}")
        return TimeLiteral(
            ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond
        )
    if isinstance(value, numbers.Real):
        return FloatLiteral(float(value))
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item):
        native = item()
        if native is not value and not hasattr(native, "item"):
            return literal(native)
    raise InvalidFilterError(f"cannot use {type(value).__name__} value {value!r} in a filter")


_FOR_TYPE: dict[type, type[Literal]] = {
    BooleanType: BooleanLiteral,
    IntegerType: IntLiteral,
    LongType: IntLiteral,
    FloatType: FloatLiteral,
    DoubleType: FloatLiteral,
    DecimalType: DecimalLiteral,
    DateType: DateLiteral,
    TimeType: TimeLiteral,
    TimestampType: TimestampLiteral,
    TimestamptzType: TimestamptzLiteral,
    TimestampNanoType: TimestampNanoLiteral,
    TimestamptzNanoType: TimestamptzNanoLiteral,
    StringType: StringLiteral,
    UUIDType: UUIDLiteral,
    FixedType: BinaryLiteral,
    BinaryType: BinaryLiteral,
}


def literal_for(type_: IcebergType, value: Any) -> Literal:
    """The literal that converts back to ``value`` (icefloe's representation of ``type_``).

    Raises:
        InvalidFilterError: ``type_`` has no literals (nested, unknown, variant types).
    """
    cls = _FOR_TYPE.get(type(type_))
    if cls is None:
        raise InvalidFilterError(f"type {type_} has no literal values")
    return cls(value)
