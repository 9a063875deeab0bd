"""Strings read and written as Spark reads and writes them, on whole arrays.

Each reader returns the values and two masks: ``bad`` (Spark refuses the string: CAST fails,
TRY_CAST gives null) and ``unknown`` (a form Spark may accept that is not implemented here,
such as a time zone region name; the caller raises rather than guess). Readers follow Spark's
own parsers: ``UTF8String.toLong`` (integers), ``Double.parseDouble`` (doubles), ``new
BigDecimal`` (decimals), ``StringUtils.isTrueString`` (booleans), ``DateTimeUtils.stringToDate``
and ``parseTimestampString`` (dates and timestamps).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icefloe.arrow.sql import _types as t

__all__ = [
    "Parsed",
    "format_date",
    "format_timestamp",
    "parse_boolean",
    "parse_date",
    "parse_decimal",
    "parse_floating",
    "parse_integral",
    "parse_timestamp",
]

# Java's String.trim (Double.parseDouble, new BigDecimal) trims every char <= U+0020; Spark's
# UTF8String.trimAll (integers, booleans, dates) trims whitespace and ISO controls. Strings that
# start or end with a char only one of them trims are not guessed at (``unknown``).
_JAVA_TRIM = "".join(chr(c) for c in range(0x21))
_SPARK_TRIM = _JAVA_TRIM + "\x7f"
_EDGE_CONTROLS = r"^[\x00-\x08\x0e-\x1b\x7f]|[\x00-\x08\x0e-\x1b\x7f]$"
_INTEGER = r"^[+-]?[0-9]+$"
_DECIMAL = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
_JAVA_DOUBLE = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[fFdD]?$"
_HEX_DOUBLE = r"^[+-]?0[xX]"
_SPECIAL_DOUBLES = {
    "inf": np.inf, "+inf": np.inf, "infinity": np.inf, "+infinity": np.inf, "-inf": -np.inf,
    "-infinity": -np.inf, "nan": np.nan,
}  # fmt: skip
_JAVA_SPECIALS = {"NaN": np.nan, "+NaN": np.nan, "-NaN": np.nan}
_TRUE = ["t", "true", "y", "yes", "1"]
_FALSE = ["f", "false", "n", "no", "0"]
_DATE = r"(?s)^(?P<sign>[+-]?)(?P<year>[0-9]{4,7})(?:-(?P<month>[0-9]{1,2})(?:-(?P<day>[0-9]{1,2})(?:[ T].*)?)?)?$"
_TIMESTAMP = (
    r"(?s)^(?P<sign>[+-]?)(?P<year>[0-9]{4,6})(?:-(?P<month>[0-9]{1,2})(?:-(?P<day>[0-9]{1,2})"
    r"(?:[ T](?P<hour>[0-9]{1,2})(?::(?P<minute>[0-9]{1,2})(?::(?P<second>[0-9]{1,2})"
    r"(?P<dot>\.(?P<fraction>[0-9]*))?(?P<zone>[^0-9].*)?)?)?)?)?)?$"
)
_TIME_ONLY = r"^(T|[0-9]{1,2}:)"
# An offset as ZoneId.of reads it, after Spark's two fixes (+h:mm and +hh:m are padded).
_ZONE = r"^(?:Z|(?:UTC|GMT|UT)?(?:(?P<sign>[+-])(?P<digits>[0-9]{1,2}|[0-9]{2}:?[0-9]{2}|[0-9]{2}:[0-9]{2}:[0-9]{2}|[0-9]{6}))?)$"
_MICROS_PER_DAY = 86_400_000_000


@dataclass(frozen=True)
class Parsed:
    """Values read from strings: ``values`` (nulls where ``bad``, ``unknown`` or null)."""

    values: pa.Array
    bad: pa.Array  # boolean, no nulls
    unknown: pa.Array  # boolean, no nulls


def _false(n: int) -> pa.Array:
    return pa.repeat(pa.scalar(False), n)


def _mask(array: pa.Array) -> pa.Array:
    """A boolean array with nulls as false."""
    return pc.fill_null(array, False)


def _result(values: pa.Array, ok: pa.Array, strings: pa.Array, unknown: pa.Array | None = None) -> Parsed:
    present = pc.is_valid(strings)
    unknown = _false(len(strings)) if unknown is None else pc.and_(unknown, present)
    bad = pc.and_(pc.and_(present, pc.invert(ok)), pc.invert(unknown))
    return Parsed(pc.if_else(ok, values, pa.scalar(None, values.type)), bad, unknown)


def _trimmed(strings: pa.Array, characters: str) -> tuple[pa.Array, pa.Array]:
    """The strings trimmed, and where a control character at an edge makes Spark's and Java's
    trimming disagree."""
    return pc.utf8_trim(strings, characters=characters), _mask(
        pc.match_substring_regex(strings, _EDGE_CONTROLS)
    )


def parse_integral(strings: pa.Array, target: pa.DataType) -> Parsed:
    """``[+-]digits`` after trimming, in the target's range (out of range is malformed, as in
    Spark)."""
    text, unknown = _trimmed(strings, _SPARK_TRIM)
    ok = _mask(pc.match_substring_regex(text, _INTEGER))
    digits = pc.if_else(ok, pc.utf8_ltrim(pc.utf8_ltrim(text, characters="+-"), characters="0"), "0")
    digits = pc.if_else(pc.equal(digits, ""), "0", digits)
    ok = pc.and_(ok, pc.less_equal(pc.utf8_length(digits), 19))
    negative = _mask(pc.starts_with(text, "-"))
    wide = pc.cast(
        pc.if_else(ok, pc.if_else(negative, pc.binary_join_element_wise("-", digits, ""), digits), "0"),
        pa.decimal128(20, 0),
    )
    info = np.iinfo(target.to_pandas_dtype())
    low, high = pa.scalar(int(info.min), pa.decimal128(20, 0)), pa.scalar(int(info.max), pa.decimal128(20, 0))
    ok = pc.and_(ok, pc.and_(pc.greater_equal(wide, low), pc.less_equal(wide, high)))
    values = pc.cast(pc.if_else(ok, wide, pa.scalar(0, pa.decimal128(20, 0))), target)
    return _result(values, ok, strings, unknown)


def parse_floating(strings: pa.Array, target: pa.DataType) -> Parsed:
    """``Double.parseDouble`` (``Float.parseFloat``) after Spark's special values (``inf``,
    ``-Infinity``, ``nan``, any case); hexadecimal forms are ``unknown``."""
    text, unknown = _trimmed(strings, _JAVA_TRIM)
    lower = pc.ascii_lower(text)
    number = _mask(pc.match_substring_regex(text, _JAVA_DOUBLE))
    unknown = pc.or_(unknown, _mask(pc.match_substring_regex(text, _HEX_DOUBLE)))
    plain = pc.if_else(number, pc.utf8_rtrim(text, characters="fFdD"), "0")
    values = pc.cast(plain, target)
    for table, source in ((_SPECIAL_DOUBLES, lower), (_JAVA_SPECIALS, text)):
        for name, special in table.items():
            hit = _mask(pc.equal(source, name))
            values = pc.if_else(hit, pa.scalar(special, target), values)
            number = pc.or_(number, hit)
    return _result(values, number, strings, unknown)


def parse_decimal(strings: pa.Array, target: pa.DataType) -> tuple[Parsed, pa.Array]:
    """``new BigDecimal(s.trim())`` rounded half up to the target's scale; also the rows whose
    value does not fit the target's precision (overflow: an error, or null for TRY_CAST)."""
    text, unknown = _trimmed(strings, _JAVA_TRIM)
    ok = _mask(pc.match_substring_regex(text, _DECIMAL))
    values, overflow = decimal_from_text(pc.if_else(ok, text, "0"), target)
    overflow = pc.and_(overflow, ok)
    parsed = _result(values, pc.and_(ok, pc.invert(overflow)), strings, unknown)
    bad = pc.and_(parsed.bad, pc.invert(overflow))
    return Parsed(parsed.values, bad, parsed.unknown), overflow


def decimal_from_text(
    text: pa.Array, target: pa.DataType, *, round_mode: str = "half_towards_infinity"
) -> tuple[pa.Array, pa.Array]:
    """Valid decimal strings (exponents allowed) as ``target`` values, rounded half up (or by
    ``round_mode``: ``towards_zero`` truncates); and where the value does not fit (those values
    are nulls)."""
    precision, scale = target.precision, target.scale
    limit = 10.0 ** (precision - scale)
    approximate = pc.abs(pc.cast(text, t.DOUBLE))
    candidate = _mask(pc.less(approximate, limit * 2))  # larger ones overflow whatever their digits
    wide = pc.cast(
        pc.if_else(candidate, text, "0"),
        options=pc.CastOptions(pa.decimal256(76, scale + 1), allow_decimal_truncate=True),
    )
    rounded = pc.round(wide, ndigits=scale, round_mode=round_mode)
    bound = pa.scalar(Decimal(10 ** (precision - scale)), pa.decimal256(76, 0))
    fits = pc.and_(candidate, pc.less(pc.abs(rounded), bound.cast(rounded.type)))
    kept = pc.if_else(fits, rounded, pa.scalar(0, rounded.type))
    values = pc.cast(kept, options=pc.CastOptions(target, allow_decimal_truncate=True))
    return pc.if_else(fits, values, pa.scalar(None, target)), pc.invert(fits)


def parse_boolean(strings: pa.Array) -> Parsed:
    """``t true y yes 1`` and ``f false n no 0``, any case, after trimming."""
    text, unknown = _trimmed(strings, _SPARK_TRIM)
    lower = pc.ascii_lower(text)
    true = _mask(pc.is_in(lower, value_set=pa.array(_TRUE)))
    false = _mask(pc.is_in(lower, value_set=pa.array(_FALSE)))
    return _result(true, pc.or_(true, false), strings, unknown)


def _days(year: np.ndarray, month: np.ndarray, day: np.ndarray) -> np.ndarray:
    """Days since 1970-01-01 of proleptic Gregorian dates (Howard Hinnant's days_from_civil)."""
    y = year - (month <= 2)
    era = np.floor_divide(y, 400)
    yoe = y - era * 400
    doy = (153 * (month + np.where(month > 2, -3, 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    result: np.ndarray = era * 146097 + doe - 719468
    return result


def _valid_date(year: np.ndarray, month: np.ndarray, day: np.ndarray) -> np.ndarray:
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    lengths = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])
    in_month = (month >= 1) & (month <= 12)
    last = np.where(in_month, lengths[np.clip(month, 0, 12)], 0) + ((month == 2) & leap)
    valid: np.ndarray = in_month & (day >= 1) & (day <= last)
    return valid


def _field(parts: pa.StructArray, name: str, default: int) -> np.ndarray:
    text = parts.field(name)
    filled = pc.if_else(pc.equal(pc.fill_null(text, ""), ""), str(default), text)
    return np.asarray(pc.cast(filled, pa.int64()).to_numpy(zero_copy_only=False), dtype=np.int64)


def _civil(parts: pa.StructArray, matched: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    year = _field(parts, "year", 1970)
    sign = np.where(np.asarray(pc.fill_null(pc.equal(parts.field("sign"), "-"), False)), -1, 1)
    year = year * sign
    month, day = _field(parts, "month", 1), _field(parts, "day", 1)
    valid = np.asarray(matched) & _valid_date(year, month, day)
    return year, month, day, valid


def parse_date(strings: pa.Array) -> Parsed:
    """``[+-]yyyy[-m[m][-d[d][ |T anything]]]`` after trimming, a real date."""
    text, unknown = _trimmed(strings, _SPARK_TRIM)
    parts = pc.extract_regex(pc.fill_null(text, ""), _DATE)
    matched = _mask(parts.is_valid())
    year, month, day, valid = _civil(parts, matched)
    days = _days(year, month, day)
    valid &= (days >= -(2**31)) & (days < 2**31)
    days = np.where(valid, days, 0)
    values = pa.array(days, pa.int32()).cast(t.DATE)
    return _result(values, pa.array(valid), strings, unknown)


def parse_timestamp(strings: pa.Array, *, with_zone: bool) -> Parsed:
    """``yyyy[-m[-d[ |T h[:m[:s[.fraction][zone]]]]]]`` after trimming (fractions past
    microseconds are cut, as Spark does). Zones are ``Z``, ``UTC``/``GMT``/``UT`` and offsets
    (``+1``, ``+01:00``, ``-0130``, ``UTC+1``); a region name (``America/New_York``) and the
    time-only forms (which take today's date) are ``unknown``. ``with_zone``: TIMESTAMP (a
    zone-less string is in UTC, the session time zone); else TIMESTAMP_NTZ (a zone is ignored)."""
    text, unknown = _trimmed(strings, _SPARK_TRIM)
    filled = pc.fill_null(text, "")
    parts = pc.extract_regex(filled, _TIMESTAMP)
    matched = _mask(parts.is_valid())
    unknown = pc.or_(
        unknown, pc.and_(pc.invert(matched), _mask(pc.match_substring_regex(filled, _TIME_ONLY)))
    )
    year, month, day, valid = _civil(parts, matched)
    hour, minute, second = _field(parts, "hour", 0), _field(parts, "minute", 0), _field(parts, "second", 0)
    valid &= (hour <= 23) & (minute <= 59) & (second <= 59) & (np.abs(year) <= 290_000)  # (int64 micros)
    fraction = pc.utf8_slice_codeunits(pc.fill_null(parts.field("fraction"), ""), 0, 6)
    micros = np.asarray(pc.cast(pc.utf8_rpad(fraction, 6, "0"), pa.int64()).to_numpy(zero_copy_only=False))
    zone = pc.utf8_trim(pc.fill_null(parts.field("zone"), ""), characters=" ")
    offset, zone_ok, zone_unknown = _offsets(zone)
    unknown = pc.or_(unknown, pc.and_(pa.array(valid), zone_unknown))
    valid &= np.asarray(zone_ok)
    local = (_days(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second) * 1_000_000 + micros
    instant = local - offset * 1_000_000 if with_zone else local
    values = pa.array(np.where(valid, instant, 0), pa.int64()).cast(
        t.TIMESTAMP if with_zone else t.TIMESTAMP_NTZ
    )
    return _result(values, pa.array(valid), strings, unknown)


def _offsets(zone: pa.Array) -> tuple[np.ndarray, pa.Array, pa.Array]:
    """Seconds east of UTC of zone strings ('' is none), where they are valid offsets, and
    where they are other zone ids (region names)."""
    zone = pc.replace_substring_regex(zone, r"([+-])([0-9]):", r"\10\2:", max_replacements=1)
    zone = pc.replace_substring_regex(zone, r"([+-][0-9]{2}):([0-9])$", r"\1:0\2", max_replacements=1)
    parts = pc.extract_regex(zone, _ZONE)
    matched = _mask(parts.is_valid())
    digits = pc.replace_substring(pc.fill_null(parts.field("digits"), ""), ":", "")
    digits = pc.if_else(pc.less_equal(pc.utf8_length(digits), 2), pc.utf8_lpad(digits, 2, "0"), digits)
    digits = pc.utf8_rpad(pc.if_else(pc.equal(digits, "00"), "00", digits), 6, "0")
    number = np.asarray(pc.cast(digits, pa.int64()).to_numpy(zero_copy_only=False))
    hours, minutes, seconds = number // 10_000, number // 100 % 100, number % 100
    sign = np.where(np.asarray(pc.fill_null(pc.equal(parts.field("sign"), "-"), False)), -1, 1)
    total = sign * (hours * 3600 + minutes * 60 + seconds)
    in_range = (hours <= 18) & (minutes <= 59) & (seconds <= 59) & (np.abs(total) <= 18 * 3600)
    empty = _mask(pc.equal(zone, ""))
    ok = pc.or_(empty, pc.and_(matched, pa.array(in_range)))
    unknown = pc.and_(
        pc.invert(matched), _mask(pc.match_substring_regex(zone, r"^[A-Za-z][A-Za-z0-9_/+-]*$"))
    )
    return np.where(np.asarray(matched), total, 0), ok, unknown


def _years_in_range(years: pa.Array) -> bool:
    low, high = pc.min_max(years).values()
    return low.as_py() is None or (low.as_py() >= 1 and high.as_py() <= 9999)


def format_date(dates: pa.Array) -> pa.Array | None:
    """Dates as Spark writes them (``2024-01-05``); None when a year is outside 1..9999 (Spark's
    forms for those are not implemented)."""
    if not _years_in_range(pc.year(dates)):
        return None
    return pc.cast(dates, pa.string())


def format_timestamp(values: pa.Array) -> pa.Array | None:
    """Timestamps as Spark writes them, in UTC: ``2024-01-05 10:00:00``, with the fraction of a
    second without trailing zeros (``.5``); None when a year is outside 1..9999."""
    if not _years_in_range(pc.year(values)):
        return None
    micros = np.asarray(pc.fill_null(pc.cast(values, pa.int64()), 0).to_numpy(zero_copy_only=False))
    base = pc.strftime(values, format="%Y-%m-%d %H:%M")
    seconds = pc.utf8_lpad(
        pa.array(np.mod(micros, _MICROS_PER_DAY) // 1_000_000 % 60).cast(pa.string()), 2, "0"
    )
    fraction = pa.array(np.mod(micros, 1_000_000))
    digits = pc.utf8_rtrim(pc.utf8_lpad(fraction.cast(pa.string()), 6, "0"), characters="0")
    tail = pc.if_else(pc.equal(fraction, 0), "", pc.binary_join_element_wise(".", digits, ""))
    joined = pc.binary_join_element_wise(base, ":", seconds, tail, "")
    return pc.if_else(pc.is_valid(values), joined, pa.scalar(None, pa.string()))
