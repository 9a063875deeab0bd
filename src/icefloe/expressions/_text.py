"""Text forms shared by literals and the filter parser: ISO dates and times, SQL quoting.

Dates and timestamps are read in the ISO-8601 forms users type in filters: ``2024-03-10``,
``2024-03-10T10:00:00``, ``2024-03-10 10:00:00.123456``, with an optional offset (``Z``,
``+02:00``, ``-0800``, ``+05``). Fractions of a second take up to nine digits, so nanosecond
values are exact. Years before 1 or after 9999 carry a sign (``+10000-01-01``), as java.time
prints them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from icefloe.spec.conversions import NANOS_PER_DAY, civil_from_days, days_from_civil

__all__ = [
    "ParsedTimestamp",
    "format_date",
    "format_time",
    "format_timestamp",
    "parse_date",
    "parse_time",
    "parse_timestamp",
    "quote_string",
]

_NANOS_PER_SECOND = 1_000_000_000
_DATE = r"([+-]?\d{4,})-(\d{2})-(\d{2})"
_TIME = r"(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?"
_OFFSET = r"([Zz]|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?)"
_DATE_RE = re.compile(_DATE, re.ASCII)
_TIME_RE = re.compile(_TIME, re.ASCII)
_TIMESTAMP_RE = re.compile(_DATE + r"(?:[Tt ]" + _TIME + r"(?:\s*" + _OFFSET + r")?)?", re.ASCII)


@dataclass(frozen=True, slots=True)
class ParsedTimestamp:
    """A parsed ISO date or date-time.

    Attributes:
        nanos: nanoseconds since 1970-01-01T00:00 of the wall-clock value (before any offset).
        offset_seconds: the offset east of UTC, or None when the text had none.
        has_time: False for a bare date.
        fraction_digits: how many digits the fraction of a second had (0 when none).
    """

    nanos: int
    offset_seconds: int | None
    has_time: bool
    fraction_digits: int

    @property
    def utc_nanos(self) -> int:
        """Nanoseconds since the epoch in UTC (the wall clock when there is no offset)."""
        return self.nanos - (self.offset_seconds or 0) * _NANOS_PER_SECOND


def _date_days(year: str, month: str, day: str) -> int:
    return days_from_civil(int(year), int(month), int(day))


def _time_nanos(hours: str, minutes: str, seconds: str | None, fraction: str | None) -> int:
    h, m, s = int(hours), int(minutes), int(seconds or 0)
    if h > 23 or m > 59 or s > 59:
        raise ValueError(f"invalid time {hours}:{minutes}:{seconds or '00'}")
    return ((h * 60 + m) * 60 + s) * _NANOS_PER_SECOND + int((fraction or "").ljust(9, "0"))


def _offset_seconds(text: str) -> int:
    if text in ("Z", "z"):
        return 0
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    hours, minutes, seconds = int(digits[:2]), int(digits[2:4] or 0), int(digits[4:6] or 0)
    if hours > 18 or minutes > 59 or seconds > 59:
        raise ValueError(f"invalid zone offset {text!r}")
    return sign * (hours * 3600 + minutes * 60 + seconds)


def parse_date(text: str) -> int:
    """Days since 1970-01-01 of an ISO date (``2024-03-10``).

    Raises:
        ValueError: the text is not a valid ISO date.
    """
    match = _DATE_RE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"not an ISO date (yyyy-mm-dd): {text!r}")
    return _date_days(*match.groups())


def parse_time(text: str) -> int:
    """Nanoseconds since midnight of an ISO time (``10:15``, ``10:15:30.123456789``).

    Raises:
        ValueError: the text is not a valid time of day.
    """
    match = _TIME_RE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"not an ISO time (hh:mm[:ss[.fraction]]): {text!r}")
    return _time_nanos(*match.groups())


def parse_timestamp(text: str) -> ParsedTimestamp:
    """Parse an ISO date or date-time with an optional offset.

    Raises:
        ValueError: the text is neither.
    """
    match = _TIMESTAMP_RE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"not an ISO timestamp (yyyy-mm-ddThh:mm[:ss[.fraction]][offset]): {text!r}")
    year, month, day, hours, minutes, seconds, fraction, offset = match.groups()
    nanos = _date_days(year, month, day) * NANOS_PER_DAY
    if hours is not None:
        assert minutes is not None
        nanos += _time_nanos(hours, minutes, seconds, fraction)
    return ParsedTimestamp(
        nanos=nanos,
        offset_seconds=None if offset is None else _offset_seconds(offset),
        has_time=hours is not None,
        fraction_digits=len(fraction or ""),
    )


def format_date(days: int) -> str:
    """ISO text of a day count, with a sign for years outside 0000..9999."""
    year, month, day = civil_from_days(days)
    if year > 9999:
        year_text = f"+{year}"
    elif year < 0:
        year_text = f"-{-year:04d}"
    else:
        year_text = f"{year:04d}"
    return f"{year_text}-{month:02d}-{day:02d}"


def format_time(nanos_of_day: int, digits: int) -> str:
    """``HH:MM:SS`` plus ``digits`` fraction digits when the fraction is not zero."""
    seconds, nanos = divmod(nanos_of_day, _NANOS_PER_SECOND)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    text = f"{hour:02d}:{minute:02d}:{second:02d}"
    if nanos:
        text += "." + f"{nanos:09d}"[:digits]
    return text


def format_timestamp(nanos: int, digits: int, *, utc: bool) -> str:
    """ISO text of nanoseconds since the epoch; ``utc`` appends ``+00:00``."""
    days, rest = divmod(nanos, NANOS_PER_DAY)
    text = f"{format_date(days)}T{format_time(rest, digits)}"
    return text + "+00:00" if utc else text


def quote_string(text: str) -> str:
    """A SQL string literal: single quotes, embedded quotes doubled."""
    return "'" + text.replace("'", "''") + "'"
