"""Single values of Iceberg types: binary, JSON, human-readable and Python-native forms.

Values use icefloe's internal representation (see :mod:`icefloe.spec.types`). Nested values,
which only the JSON and Python forms support, are: list -> ``list``, map -> ``dict``, struct ->
``dict`` keyed by field name (a positional sequence is accepted as input too).

- :func:`to_bytes` / :func:`from_bytes`: spec Appendix D binary form (manifest bounds).
- :func:`to_json` / :func:`from_json`: spec "JSON single-value serialization" (defaults, REST),
  producing and taking already-parsed JSON objects, written the way Java's SingleValueParser
  writes them.
- :func:`to_human_string`: Java's ``Transform.toHumanString`` (partition paths).
- :func:`to_python` / :func:`from_python`: datetime / Decimal / UUID values for users.
"""

from __future__ import annotations

import base64
import datetime as dt
import math
import re
import struct
import uuid
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from icefloe.errors import ValidationError
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

__all__ = [
    "MICROS_PER_DAY",
    "NANOS_PER_DAY",
    "civil_from_days",
    "days_from_civil",
    "decimal_from_unscaled",
    "from_bytes",
    "from_json",
    "from_python",
    "to_bytes",
    "to_human_string",
    "to_json",
    "to_python",
    "unscaled_decimal",
]

MICROS_PER_DAY = 86_400_000_000
NANOS_PER_DAY = 86_400_000_000_000
_INT_TYPES: dict[type[IcebergType], tuple[str, int, int]] = {
    IntegerType: ("<i", -(2**31), 2**31 - 1),
    DateType: ("<i", -(2**31), 2**31 - 1),
    LongType: ("<q", -(2**63), 2**63 - 1),
    TimeType: ("<q", -(2**63), 2**63 - 1),
    TimestampType: ("<q", -(2**63), 2**63 - 1),
    TimestamptzType: ("<q", -(2**63), 2**63 - 1),
    TimestampNanoType: ("<q", -(2**63), 2**63 - 1),
    TimestamptzNanoType: ("<q", -(2**63), 2**63 - 1),
}
_TZ_TYPES = (TimestamptzType, TimestamptzNanoType)
_NANO_TYPES = (TimestampNanoType, TimestamptzNanoType)


def _invalid(type_: IcebergType, value: Any, why: str = "") -> ValidationError:
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


def _decimal_unscaled(type_: DecimalType, value: Any, check_precision: bool) -> int:
    if not isinstance(value, Decimal):
        raise _invalid(type_, value, "expected a Decimal")
    unscaled = unscaled_decimal(value, type_.scale)
    if check_precision and abs(unscaled) >= 10**type_.precision:
        raise _invalid(type_, value, f"more than {type_.precision} digits")
    return unscaled


def _f32(value: float) -> float:
    """Round a Python float to the nearest float32, as Java's ``(float)`` cast does."""
    try:
        return float(struct.unpack("<f", struct.pack("<f", value))[0])
    except OverflowError:
        return math.copysign(math.inf, value)


# ---------------------------------------------------------------------------------------------
# Binary single-value serialization (Appendix D)


def to_bytes(type_: IcebergType, value: Any) -> bytes:
    """Serialize a non-null primitive value to its Appendix D binary form.

    Raises:
        ValidationError: the value does not fit the type, or the type has no binary form
            (unknown, variant, nested types).
    """
    if value is None:
        raise ValidationError(f"cannot serialize null as {type_}")
    layout = _INT_TYPES.get(type(type_))
    if layout is not None:
        fmt, low, high = layout
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise _invalid(type_, value, "out of range or not an int")
        return struct.pack(fmt, value)
    if isinstance(type_, BooleanType):
        if not isinstance(value, bool):
            raise _invalid(type_, value)
        return b"\x01" if value else b"\x00"
    if isinstance(type_, (FloatType, DoubleType)):
        if not isinstance(value, (float, int)) or isinstance(value, bool):
            raise _invalid(type_, value)
        try:
            return struct.pack("<f" if isinstance(type_, FloatType) else "<d", value)
        except OverflowError as e:
            raise _invalid(type_, value, "out of range") from e
    if isinstance(type_, StringType):
        if not isinstance(value, str):
            raise _invalid(type_, value)
        try:
            return value.encode("utf-8")
        except UnicodeEncodeError as e:
            raise _invalid(type_, value, "not valid Unicode") from e
    if isinstance(type_, UUIDType):
        if not isinstance(value, uuid.UUID):
            raise _invalid(type_, value)
        return value.bytes
    if isinstance(type_, (FixedType, BinaryType)):
        # Fixed lengths are not checked: truncated bounds may be shorter than the type.
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise _invalid(type_, value)
        return bytes(value)
    if isinstance(type_, DecimalType):
        unscaled = _decimal_unscaled(type_, value, check_precision=False)
        length = (unscaled if unscaled >= 0 else ~unscaled).bit_length() // 8 + 1
        return unscaled.to_bytes(length, "big", signed=True)
    raise ValidationError(f"type {type_} has no binary single-value form")


def from_bytes(type_: IcebergType, data: bytes | bytearray | memoryview) -> Any:
    """Deserialize an Appendix D binary value.

    Bounds written before a type promotion keep their old width, so (spec "Schema Evolution")
    ``long`` and ``double`` accept 4 bytes (an ``int`` / ``float``), and ``timestamp`` /
    ``timestamp_ns`` accept 4 bytes (a ``date``, converted to midnight).

    Raises:
        ValidationError: wrong length or undecodable bytes, or a type without binary form.
    """
    data = bytes(data)
    size = len(data)
    if isinstance(type_, (IntegerType, DateType)) and size == 4:
        return struct.unpack("<i", data)[0]
    if isinstance(type_, (LongType, TimeType, TimestampType, TimestamptzType, *_NANO_TYPES)):
        if size == 8:
            return struct.unpack("<q", data)[0]
        if size == 4 and isinstance(type_, LongType):
            return struct.unpack("<i", data)[0]
        if size == 4 and isinstance(type_, (TimestampType, TimestampNanoType)):
            days: int = struct.unpack("<i", data)[0]
            return days * (NANOS_PER_DAY if isinstance(type_, TimestampNanoType) else MICROS_PER_DAY)
    elif isinstance(type_, BooleanType) and size == 1:
        return data != b"\x00"
    elif isinstance(type_, FloatType) and size == 4:
        return struct.unpack("<f", data)[0]
    elif isinstance(type_, DoubleType) and size in (4, 8):
        return struct.unpack("<f" if size == 4 else "<d", data)[0]
    elif isinstance(type_, StringType):
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValidationError(f"invalid UTF-8 in a {type_} value: {data!r}") from e
    elif isinstance(type_, UUIDType) and size == 16:
        return uuid.UUID(bytes=data)
    elif isinstance(type_, (FixedType, BinaryType)):
        return data
    elif isinstance(type_, DecimalType) and size > 0:
        return decimal_from_unscaled(int.from_bytes(data, "big", signed=True), type_.scale)
    elif not isinstance(type_, tuple(_INT_TYPES)):
        raise ValidationError(f"type {type_} has no binary single-value form")
    raise ValidationError(f"invalid {size}-byte binary value for {type_}: {data!r}")


# ---------------------------------------------------------------------------------------------
# Text forms of dates and times, as java.time prints them


def _iso_year(year: int) -> str:
    # ISO_LOCAL_DATE: at least 4 digits, '+' above 9999, '-' below 0
    if year > 9999:
        return f"+{year}"
    return f"-{-year:04d}" if year < 0 else f"{year:04d}"


def _iso_date(days: int) -> str:
    year, month, day = civil_from_days(days)
    return f"{_iso_year(year)}-{month:02d}-{day:02d}"


def _human_date(days: int) -> str:
    """Java TransformUtil.humanDay: ``String.format("%04d-%02d-%02d")``."""
    year, month, day = civil_from_days(days)
    return f"{year:04d}-{month:02d}-{day:02d}"


def _iso_time(nanos_of_day: int) -> str:
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


def _iso_timestamp(value: int, type_: IcebergType) -> str:
    per_day = NANOS_PER_DAY if isinstance(type_, _NANO_TYPES) else MICROS_PER_DAY
    days, rest = divmod(value, per_day)
    nanos = rest if per_day == NANOS_PER_DAY else rest * 1000
    text = f"{_iso_date(days)}T{_iso_time(nanos)}"
    return text + "+00:00" if isinstance(type_, _TZ_TYPES) else text


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


def _parse_iso(type_: IcebergType, text: Any) -> int:
    """Parse the ISO text of a date/time/timestamp type into its internal int."""
    if not isinstance(text, str):
        raise _invalid(type_, text, "expected an ISO-8601 string")
    if isinstance(type_, DateType):
        match = _DATE_PATTERN.fullmatch(text)
        if match is None:
            raise _invalid(type_, text)
        return days_from_civil(*map(int, match.groups()))
    if isinstance(type_, TimeType):
        match = _TIME_PATTERN.fullmatch(text)
        if match is None:
            raise _invalid(type_, text)
        return _parse_time(match.groups(), text) // 1000
    match = _TIMESTAMP_PATTERN.fullmatch(text)
    if match is None:
        raise _invalid(type_, text)
    offset = match.group(8)
    if isinstance(type_, _TZ_TYPES):
        # Java requires the offset to be UTC; "Z", "+00:00" and "-00:00" all are.
        if offset is None or (offset.upper() != "Z" and offset[1:].strip(":0")):
            raise _invalid(type_, text, "the offset must be +00:00")
    elif offset is not None:
        raise _invalid(type_, text, "a timestamp without zone must not have an offset")
    days = days_from_civil(*map(int, match.groups()[:3]))
    nanos = days * NANOS_PER_DAY + _parse_time(match.groups()[3:7], text)
    if isinstance(type_, _NANO_TYPES):
        return nanos
    # Java's ChronoUnit.MICROS.between truncates extra digits toward zero
    return nanos // 1000 if nanos >= 0 else -(-nanos // 1000)


# ---------------------------------------------------------------------------------------------
# Human strings (Java Transform.toHumanString)


def _java_float_str(value: float, single: bool) -> str:
    """Java's ``Float.toString`` / ``Double.toString`` (shortest round-trip digits, JDK 19+)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"

    def round_trips(text: str) -> bool:
        return (_f32(float(text)) if single else float(text)) == value

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
    if isinstance(type_, (TimestampType, TimestamptzType, *_NANO_TYPES)):
        return _iso_timestamp(value, type_)
    if isinstance(type_, (FixedType, BinaryType)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(type_, (FloatType, DoubleType)):
        return _java_float_str(float(value), isinstance(type_, FloatType))
    if isinstance(type_, DecimalType) and isinstance(value, Decimal) and value.is_finite():
        try:
            return str(decimal_from_unscaled(unscaled_decimal(value, type_.scale), type_.scale))
        except ValidationError:
            return str(value)
    return str(value)


# ---------------------------------------------------------------------------------------------
# JSON single-value serialization


def _struct_items(type_: StructType, value: Any) -> list[tuple[Any, Any]]:
    """Pair each struct field with its value from a by-name mapping or a positional sequence."""
    if isinstance(value, Mapping):
        unknown = set(value) - {f.name for f in type_.fields}
        if unknown:
            raise _invalid(type_, value, f"unknown fields {sorted(unknown)}")
        return [(f, value[f.name]) for f in type_.fields if f.name in value]
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        if len(value) != len(type_.fields):
            raise _invalid(type_, value, f"expected {len(type_.fields)} values")
        return list(zip(type_.fields, value))
    raise _invalid(type_, value, "expected a mapping by field name or a sequence")


def to_json(type_: IcebergType, value: Any) -> Any:
    """Return the JSON single-value form of a value, as a ``json``-module-ready object.

    Follows Java's SingleValueParser: binary as upper-case hex, times and timestamps in ISO
    form without trailing fraction zeros, decimals in plain notation (scientific only for a
    negative scale), NaN and infinities as the strings Jackson writes. Struct fields with a
    null value are omitted. Floats stay Python floats, so ``json`` prints a float32 with its
    double digits (``0.10000000149011612`` where Java prints ``0.1``); readers round it back
    to the same float32.
    """
    if value is None:
        return None
    if isinstance(type_, BooleanType):
        if not isinstance(value, bool):
            raise _invalid(type_, value)
        return value
    if isinstance(type_, (IntegerType, LongType)):
        to_bytes(type_, value)  # range and type check
        return value
    if isinstance(type_, (FloatType, DoubleType)):
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise _invalid(type_, value)
        if math.isnan(value) or math.isinf(value):
            return _java_float_str(value, False)
        return float(value)
    if isinstance(type_, DecimalType):
        unscaled = _decimal_unscaled(type_, value, check_precision=False)
        exact = decimal_from_unscaled(unscaled, type_.scale)
        return f"{exact:f}" if type_.scale >= 0 else str(exact)
    if isinstance(type_, DateType):
        to_bytes(type_, value)
        return _iso_date(value)
    if isinstance(type_, TimeType):
        to_bytes(type_, value)
        return _iso_time(value * 1000)
    if isinstance(type_, (TimestampType, TimestamptzType, *_NANO_TYPES)):
        to_bytes(type_, value)
        return _iso_timestamp(value, type_)
    if isinstance(type_, (StringType, UUIDType)):
        to_bytes(type_, value)
        return str(value)
    if isinstance(type_, (FixedType, BinaryType)):
        raw = to_bytes(type_, value)
        if isinstance(type_, FixedType) and len(raw) != type_.length:
            raise _invalid(type_, value, f"expected {type_.length} bytes")
        return raw.hex().upper()
    if isinstance(type_, ListType):
        if not isinstance(value, Sequence) or isinstance(value, (str, bytes)):
            raise _invalid(type_, value, "expected a sequence")
        return [to_json(type_.element_type, item) for item in value]
    if isinstance(type_, MapType):
        if not isinstance(value, Mapping):
            raise _invalid(type_, value, "expected a mapping")
        return {
            "keys": [to_json(type_.key_type, k) for k in value],
            "values": [to_json(type_.value_type, v) for v in value.values()],
        }
    if isinstance(type_, StructType):
        return {
            str(f.field_id): to_json(f.field_type, v) for f, v in _struct_items(type_, value) if v is not None
        }
    raise _invalid(type_, value, "the type has no non-null JSON single values")


_UUID_PATTERN = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_HEX_PATTERN = re.compile(r"(?:[0-9a-fA-F]{2})*")
_DECIMAL_PATTERN = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
_NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def from_json(type_: IcebergType, json_value: Any) -> Any:
    """Read a JSON single value (as parsed by ``json.loads``) into the internal representation.

    Structs come back as dicts by field name holding only the fields present in the JSON;
    missing fields are left for the caller to default.

    Raises:
        ValidationError: the JSON value does not match the type.
    """
    if json_value is None:
        return None
    if isinstance(type_, BooleanType):
        if not isinstance(json_value, bool):
            raise _invalid(type_, json_value)
        return json_value
    if isinstance(type_, (IntegerType, LongType)):
        if isinstance(json_value, bool) or not isinstance(json_value, int):
            raise _invalid(type_, json_value, "expected a JSON integer")
        to_bytes(type_, json_value)
        return json_value
    if isinstance(type_, (FloatType, DoubleType)):
        if isinstance(json_value, str) and json_value in _NON_FINITE:
            return _NON_FINITE[json_value]
        if isinstance(json_value, bool) or not isinstance(json_value, (int, float)):
            raise _invalid(type_, json_value, "expected a JSON number")
        return _f32(float(json_value)) if isinstance(type_, FloatType) else float(json_value)
    if isinstance(type_, DecimalType):
        is_number = isinstance(json_value, str) and _DECIMAL_PATTERN.fullmatch(json_value)
        parsed = Decimal(json_value) if is_number else None
        if parsed is None or parsed.as_tuple().exponent != -type_.scale:
            raise _invalid(type_, json_value, f"expected a decimal string with scale {type_.scale}")
        return parsed
    if isinstance(type_, (DateType, TimeType, TimestampType, TimestamptzType, *_NANO_TYPES)):
        return _parse_iso(type_, json_value)
    if isinstance(type_, StringType):
        if not isinstance(json_value, str):
            raise _invalid(type_, json_value)
        return json_value
    if isinstance(type_, UUIDType):
        if not isinstance(json_value, str) or not _UUID_PATTERN.fullmatch(json_value):
            raise _invalid(type_, json_value)
        return uuid.UUID(json_value)
    if isinstance(type_, (FixedType, BinaryType)):
        if not isinstance(json_value, str) or not _HEX_PATTERN.fullmatch(json_value):
            raise _invalid(type_, json_value, "expected a hexadecimal string")
        if isinstance(type_, FixedType) and len(json_value) != 2 * type_.length:
            raise _invalid(type_, json_value, f"expected {type_.length} bytes")
        return bytes.fromhex(json_value)
    if isinstance(type_, ListType):
        if not isinstance(json_value, list):
            raise _invalid(type_, json_value, "expected a JSON array")
        return [from_json(type_.element_type, item) for item in json_value]
    if isinstance(type_, MapType):
        keys, values = (
            json_value.get(k) if isinstance(json_value, dict) else None for k in ("keys", "values")
        )
        if not isinstance(keys, list) or not isinstance(values, list) or len(keys) != len(values):
            raise _invalid(type_, json_value, 'expected {"keys": [...], "values": [...]}')
        try:
            return {
                from_json(type_.key_type, k): from_json(type_.value_type, v) for k, v in zip(keys, values)
            }
        except TypeError as e:
            raise _invalid(type_, json_value, "map keys must be hashable") from e
    if isinstance(type_, StructType):
        if not isinstance(json_value, dict):
            raise _invalid(type_, json_value, "expected a JSON object")
        return {
            f.name: from_json(f.field_type, json_value[str(f.field_id)])
            for f in type_.fields
            if str(f.field_id) in json_value
        }
    raise _invalid(type_, json_value, "the type has no non-null JSON single values")


# ---------------------------------------------------------------------------------------------
# Python-native values

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def to_python(type_: IcebergType, value: Any) -> Any:
    """Convert an internal value to a Python-native one.

    date -> ``datetime.date``, time -> ``datetime.time``, timestamp -> naive
    ``datetime.datetime``, timestamptz -> ``datetime.datetime`` in UTC; nanosecond timestamps
    lose their sub-microsecond digits (rounded toward the past), as ``datetime`` has none.
    Other values are already native and returned as they are; nested values are converted
    element by element.

    Raises:
        ValidationError: the value is outside the range of ``datetime``.
    """
    if value is None:
        return None
    try:
        if isinstance(type_, DateType):
            return dt.date(1970, 1, 1) + dt.timedelta(days=value)
        if isinstance(type_, TimeType):
            if not 0 <= value < MICROS_PER_DAY:
                raise _invalid(type_, value, "not within a day")
            return (_EPOCH + dt.timedelta(microseconds=value)).time()
        if isinstance(type_, (TimestampType, TimestamptzType, *_NANO_TYPES)):
            micros = value // 1000 if isinstance(type_, _NANO_TYPES) else value
            epoch = _EPOCH_UTC if isinstance(type_, _TZ_TYPES) else _EPOCH
            return epoch + dt.timedelta(microseconds=micros)
    except OverflowError as e:
        raise _invalid(type_, value, "outside the range of Python's datetime") from e
    if isinstance(type_, ListType):
        return [to_python(type_.element_type, item) for item in value]
    if isinstance(type_, MapType):
        return {to_python(type_.key_type, k): to_python(type_.value_type, v) for k, v in value.items()}
    if isinstance(type_, StructType):
        return {f.name: to_python(f.field_type, v) for f, v in _struct_items(type_, value)}
    return value


def _micros_since(epoch: dt.datetime, value: dt.datetime) -> int:
    delta = value - epoch
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _from_python_temporal(type_: IcebergType, value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value  # already internal
    if isinstance(type_, DateType):
        if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
            return value.toordinal() - 719_163
        raise _invalid(type_, value, "expected a datetime.date")
    if isinstance(type_, TimeType):
        if isinstance(value, dt.time) and value.tzinfo is None:
            return ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond
        raise _invalid(type_, value, "expected a naive datetime.time")
    if isinstance(value, dt.datetime):
        if isinstance(type_, _TZ_TYPES) and value.tzinfo is None:
            raise _invalid(type_, value, "expected a timezone-aware datetime")
        if not isinstance(type_, _TZ_TYPES) and value.tzinfo is not None:
            raise _invalid(type_, value, "expected a naive datetime")
        micros = _micros_since(_EPOCH_UTC if value.tzinfo else _EPOCH, value)
        if isinstance(type_, _NANO_TYPES):
            # pandas.Timestamp is a datetime subclass that carries the nanoseconds
            return micros * 1000 + int(getattr(value, "nanosecond", 0))
        return micros
    if isinstance(value, dt.date) and not isinstance(type_, _TZ_TYPES):
        days = value.toordinal() - 719_163
        return days * (NANOS_PER_DAY if isinstance(type_, _NANO_TYPES) else MICROS_PER_DAY)
    raise _invalid(type_, value, "expected a datetime.datetime")


def from_python(type_: IcebergType, value: Any) -> Any:
    """Convert a Python-native value to the internal representation, validating it.

    Accepts what :func:`to_python` returns, plus: ints in the internal representation for
    temporal types, ``datetime.date`` for timestamps without zone (midnight), any-zone aware
    datetimes for timestamptz, ``Decimal``/``int``/``str``/``float`` for decimals (exactly
    representable at the type's scale), ``str`` for UUIDs, bytes-like for fixed/binary,
    mappings by field name or sequences for structs (returned as dicts by field name).

    Raises:
        ValidationError: the value does not fit the type.
    """
    if value is None:
        return None
    if isinstance(type_, (DateType, TimeType, TimestampType, TimestamptzType, *_NANO_TYPES)):
        result = _from_python_temporal(type_, value)
        to_bytes(type_, result)
        return result
    if isinstance(type_, (FloatType, DoubleType)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _invalid(type_, value)
        result_f = float(value)
        if isinstance(type_, FloatType):
            result_f = _f32(result_f)
            if math.isinf(result_f) and not math.isinf(value):
                raise _invalid(type_, value, "out of range")
        return result_f
    if isinstance(type_, DecimalType):
        if isinstance(value, (int, float, str)) and not isinstance(value, bool):
            try:
                value = Decimal(repr(value) if isinstance(value, float) else value)
            except InvalidOperation as e:
                raise _invalid(type_, value) from e
        return decimal_from_unscaled(_decimal_unscaled(type_, value, check_precision=True), type_.scale)
    if isinstance(type_, UUIDType) and isinstance(value, str):
        try:
            return uuid.UUID(value)
        except ValueError as e:
            raise _invalid(type_, value) from e
    if (
        isinstance(type_, FixedType)
        and isinstance(value, (bytes, bytearray, memoryview))
        and len(value) != type_.length
    ):
        raise _invalid(type_, value, f"expected {type_.length} bytes")
    if isinstance(type_, ListType):
        if not isinstance(value, Sequence) or isinstance(value, (str, bytes)):
            raise _invalid(type_, value, "expected a sequence")
        return [from_python(type_.element_type, item) for item in value]
    if isinstance(type_, MapType):
        if not isinstance(value, Mapping):
            raise _invalid(type_, value, "expected a mapping")
        return {from_python(type_.key_type, k): from_python(type_.value_type, v) for k, v in value.items()}
    if isinstance(type_, StructType):
        return {f.name: from_python(f.field_type, v) for f, v in _struct_items(type_, value)}
    if isinstance(type_, UnknownType):
        raise _invalid(type_, value, "unknown columns are always null")
    to_bytes(type_, value)  # type and range check for the remaining primitives
    return bytes(value) if isinstance(value, (bytearray, memoryview)) else value
