"""ISO text of dates, times and timestamps, and Java's ``Transform.toHumanString`` (partition
paths)."""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from icefloe.errors import ValidationError
from icefloe.spec.conversions._common import (
    MICROS_PER_DAY,
    NANO_TYPES,
    NANOS_PER_DAY,
    TZ_TYPES,
    civil_from_days,
    days_from_civil,
    decimal_from_unscaled,
    float32,
    invalid_value,
    unscaled_decimal,
)
from icefloe.spec.types import (
    BinaryType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    TimestampType,
    TimestamptzType,
    TimeType,
)

# ---------------------------------------------------------------------------------------------
# Text forms of dates and times, as java.time prints them


def _iso_year(year: int) -> str:
    # ISO_LOCAL_DATE: at least 4 digits, '+' above 9999, '-' below 0
    if year > 9999:
        return f"+{year}"
    return f"-{-year:04d}" if year < 0 else f"{year:04d}"


def iso_date(days: int) -> str:
    year, month, day = civil_from_days(days)
    return f"{_iso_year(year)}-{month:02d}-{day:02d}"


def _human_date(days: int) -> str:
    """Java TransformUtil.humanDay: ``String.format("%04d-%02d-%02d")``."""
    year, month, day = civil_from_days(days)
    return f"{year:04d}-{month:02d}-{day:02d}"


def iso_time(nanos_of_day: int) -> str:
    """DateTimeFormatter.ISO_LOCAL_TIME: seconds always, fraction without trailing zeros."""
    seconds, nanos = divmod(nanos_of_day, 1_000_000_000)
    hours, rest = divmod(seconds, 3600)
    text = f"{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"
    return text + (f".{nanos:09d}".rstrip("0") if nanos else "")


def _java_time_str(nanos_of_day: int) -> str:
    """LocalTime.toString: seconds only when non-zero, fraction in groups of 3 digits."""
    seconds, nanos = divmod(nanos_of_day, 1_000_000_000)
    hours, rest = divmod(seconds, 3600)
    text = f"{hours:02d}:{rest // 60:02d}"
    if rest % 60 or nanos:
        text += f":{rest % 60:02d}"
        if nanos:
            digits = f"{nanos:09d}"
            text += "." + (
                digits[:3] if nanos % 1_000_000 == 0 else digits[:6] if nanos % 1000 == 0 else digits
            )
    return text


def iso_timestamp(value: int, type_: IcebergType) -> str:
    per_day = NANOS_PER_DAY if isinstance(type_, NANO_TYPES) else MICROS_PER_DAY
    days, rest = divmod(value, per_day)
    nanos = rest if per_day == NANOS_PER_DAY else rest * 1000
    text = f"{iso_date(days)}T{iso_time(nanos)}"
    return text + "+00:00" if isinstance(type_, TZ_TYPES) else text


_DATE_RE = r"([+-]?\d{4,})-(\d{2})-(\d{2})"
_TIME_RE = r"(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?"
_DATE_PATTERN = re.compile(_DATE_RE, re.ASCII)
_TIME_PATTERN = re.compile(_TIME_RE, re.ASCII)
_TIMESTAMP_PATTERN = re.compile(
    _DATE_RE + "[Tt]" + _TIME_RE + r"([Zz]|[+-]\d{2}:\d{2}(?::\d{2})?)?", re.ASCII
)


def _parse_time(groups: Sequence[str | None], text: str) -> int:
    hours, minutes, seconds, fraction = groups
    assert hours is not None and minutes is not None
    if int(hours) > 23 or int(minutes) > 59 or int(seconds or 0) > 59:
        raise ValidationError(f"invalid time {text!r}")
    nanos = int((fraction or "").ljust(9, "0"))
    return ((int(hours) * 60 + int(minutes)) * 60 + int(seconds or 0)) * 1_000_000_000 + nanos


def parse_iso(type_: IcebergType, text: Any) -> int:
    """Parse the ISO text of a date/time/timestamp type into its internal int."""
    if not isinstance(text, str):
        raise invalid_value(type_, text, "expected an ISO-8601 string")
    if isinstance(type_, DateType):
        match = _DATE_PATTERN.fullmatch(text)
        if match is None:
            raise invalid_value(type_, text)
        return days_from_civil(*map(int, match.groups()))
    if isinstance(type_, TimeType):
        match = _TIME_PATTERN.fullmatch(text)
        if match is None:
            raise invalid_value(type_, text)
        return _parse_time(match.groups(), text) // 1000
    match = _TIMESTAMP_PATTERN.fullmatch(text)
    if match is None:
        raise invalid_value(type_, text)
    offset = match.group(8)
    if isinstance(type_, TZ_TYPES):
        # Java requires the offset to be UTC; "Z", "+00:00" and "-00:00" all are.
        if offset is None or (offset.upper() != "Z" and offset[1:].strip(":0")):
            raise invalid_value(type_, text, "the offset must be +00:00")
    elif offset is not None:
        raise invalid_value(type_, text, "a timestamp without zone must not have an offset")
    days = days_from_civil(*map(int, match.groups()[:3]))
    nanos = days * NANOS_PER_DAY + _parse_time(match.groups()[3:7], text)
    if isinstance(type_, NANO_TYPES):
        return nanos
    # Java's ChronoUnit.MICROS.between truncates extra digits toward zero
    return nanos // 1000 if nanos >= 0 else -(-nanos // 1000)


# ---------------------------------------------------------------------------------------------
# Human strings (Java Transform.toHumanString)


def java_float_str(value: float, single: bool) -> str:
    """Java's ``Float.toString`` / ``Double.toString`` (shortest round-trip digits, JDK 19+)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"

    def round_trips(text: str) -> bool:
        return (float32(float(text)) if single else float(text)) == value

    text = repr(value)
    if single:
        text = next(t for t in (f"{value:.{p}g}" for p in range(1, 10)) if round_trips(t))
    digits_tuple, exponent = Decimal(text).as_tuple()[1:]
    if len(digits_tuple) == 1 and round_trips(f"{value:.1e}"):
        # Java prints at least two digits, choosing the closest two-digit decimal.
        digits_tuple, exponent = Decimal(f"{value:.1e}").as_tuple()[1:]
    assert isinstance(exponent, int)
    digits = "".join(map(str, digits_tuple)).rstrip("0") or "0"
    sci = len(digits_tuple) - 1 + exponent  # value = d.ddd * 10**sci
    sign = "-" if value < 0 else ""
    if -3 <= sci < 7:
        if sci >= 0:
            whole, frac = digits[: sci + 1].ljust(sci + 1, "0"), digits[sci + 1 :]
        else:
            whole, frac = "0", "0" * (-sci - 1) + digits
        return f"{sign}{whole}.{frac or '0'}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{sci}"


def to_human_string(type_: IcebergType, value: Any) -> str:
    """Return the string Java's ``Transform.toHumanString(type, value)`` gives for a value.

    This is the text of identity partition values in paths: ``"null"``, ``"true"``, dates as
    ``"2023-01-01"``, times as ``LocalTime.toString`` (``"10:11"``, ``"10:11:12.123456"``),
    timestamps in ISO form with seconds (``"2023-01-01T10:00:00"``, with zone
    ``"...+00:00"``), fixed/binary as base64, decimals as ``BigDecimal.toString``, floats as
    Java prints them.
    """
    if value is None:
        return "null"
    if isinstance(type_, DateType):
        return _human_date(value)
    if isinstance(type_, TimeType):
        return _java_time_str(value * 1000)
    if isinstance(type_, (TimestampType, TimestamptzType, *NANO_TYPES)):
        return iso_timestamp(value, type_)
    if isinstance(type_, (FixedType, BinaryType)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(type_, (FloatType, DoubleType)):
        return java_float_str(float(value), isinstance(type_, FloatType))
    if isinstance(type_, DecimalType) and isinstance(value, Decimal) and value.is_finite():
        try:
            return str(decimal_from_unscaled(unscaled_decimal(value, type_.scale), type_.scale))
        except ValidationError:
            return str(value)
    return str(value)
