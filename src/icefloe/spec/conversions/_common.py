"""What the value codecs share: calendar arithmetic (proleptic Gregorian, any year, as
java.time), unscaled decimals, and the error for an invalid value."""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from icefloe.errors import ValidationError
from icefloe.spec.types import (
    DateType,
    DecimalType,
    IcebergType,
    IntegerType,
    LongType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
)

MICROS_PER_DAY = 86_400_000_000
NANOS_PER_DAY = 86_400_000_000_000
INT_TYPES: dict[type[IcebergType], tuple[str, int, int]] = {
    IntegerType: ("<i", -(2**31), 2**31 - 1),
    DateType: ("<i", -(2**31), 2**31 - 1),
    LongType: ("<q", -(2**63), 2**63 - 1),
    TimeType: ("<q", -(2**63), 2**63 - 1),
    TimestampType: ("<q", -(2**63), 2**63 - 1),
    TimestamptzType: ("<q", -(2**63), 2**63 - 1),
    TimestampNanoType: ("<q", -(2**63), 2**63 - 1),
    TimestamptzNanoType: ("<q", -(2**63), 2**63 - 1),
}
TZ_TYPES = (TimestamptzType, TimestamptzNanoType)
NANO_TYPES = (TimestampNanoType, TimestamptzNanoType)


def invalid_value(type_: IcebergType, value: Any, why: str = "") -> ValidationError:
    return ValidationError(f"invalid {type_} value {value!r}" + (f": {why}" if why else ""))


# ---------------------------------------------------------------------------------------------
# Calendar and decimal helpers (proleptic Gregorian, any year, like java.time)


def civil_from_days(days: int) -> tuple[int, int, int]:
    """Return (year, month, day) of a day count since 1970-01-01; works for any year."""
    z = days + 719_468
    era = z // 146_097
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (month <= 2), month, day


def days_from_civil(year: int, month: int, day: int) -> int:
    """Return the day count since 1970-01-01 of a date; raises ValidationError if it is invalid."""
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    month_days = (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
    if not 1 <= month <= 12 or not 1 <= day <= month_days[month - 1]:
        raise ValidationError(f"invalid date {year}-{month}-{day}")
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    return era * 146_097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719_468


def unscaled_decimal(value: Decimal, scale: int) -> int:
    """Return the unscaled integer of ``value`` at ``scale`` (``Decimal("1.5")``, 2 -> 150).

    Raises:
        ValidationError: if the value is not finite or has more fraction digits than ``scale``.
    """
    if not isinstance(value, Decimal) or not value.is_finite():
        raise ValidationError(f"not a finite Decimal: {value!r}")
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)  # finite values have an int exponent
    unscaled = int("".join(map(str, digits)) or "0")
    shift = exponent + scale
    if shift >= 0:
        unscaled *= 10**shift
    else:
        divisor: int = 10 ** (-shift)
        unscaled, rest = divmod(unscaled, divisor)
        if rest:
            raise ValidationError(f"{value} has more than {scale} digits after the decimal point")
    return -unscaled if sign else unscaled


def decimal_from_unscaled(unscaled: int, scale: int) -> Decimal:
    """Return the Decimal ``unscaled * 10**-scale`` exactly (no context rounding at 38 digits)."""
    return Decimal((int(unscaled < 0), tuple(map(int, str(abs(unscaled)))), -scale))


def checked_unscaled(type_: DecimalType, value: Any, check_precision: bool) -> int:
    if not isinstance(value, Decimal):
        raise invalid_value(type_, value, "expected a Decimal")
    unscaled = unscaled_decimal(value, type_.scale)
    if check_precision and abs(unscaled) >= 10**type_.precision:
        raise invalid_value(type_, value, f"more than {type_.precision} digits")
    return unscaled


def float32(value: float) -> float:
    """Round a Python float to the nearest float32, as Java's ``(float)`` cast does."""
    try:
        return float(struct.unpack("<f", struct.pack("<f", value))[0])
    except OverflowError:
        return math.copysign(math.inf, value)


def struct_items(type_: StructType, value: Any) -> list[tuple[Any, Any]]:
    """Pair each struct field with its value from a by-name mapping or a positional sequence."""
    if isinstance(value, Mapping):
        unknown = set(value) - {f.name for f in type_.fields}
        if unknown:
            raise invalid_value(type_, value, f"unknown fields {sorted(unknown)}")
        return [(f, value[f.name]) for f in type_.fields if f.name in value]
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        if len(value) != len(type_.fields):
            raise invalid_value(type_, value, f"expected {len(type_.fields)} values")
        return list(zip(type_.fields, value))
    raise invalid_value(type_, value, "expected a mapping by field name or a sequence")
