"""Partition values from the human-readable strings of partition paths.

The inverse of ``Transform.to_human_string``: ``grass_date=2023-01-01`` under an identity
transform of a date column is day 19358; ``ts_month=2024-03`` is month 650; ``ts_hour=
2024-03-01-10`` is an hour count. Used by ``DataFile.builder(...).with_partition_path(...)`` and
when registering files laid out by other tools.
"""

from __future__ import annotations

import base64
import datetime as dt
import math
import struct
import uuid
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import unquote_plus

from icefloe.errors import ValidationError
from icefloe.spec.transforms import Transform
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

__all__ = ["parse_human_value", "parse_partition_value", "partition_key"]

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DATE = dt.date(1970, 1, 1)


def parse_partition_value(transform: Transform, result_type: IcebergType, text: str) -> Any:
    """The partition value a path segment's (URL-encoded) value text stands for.

    Raises:
        ValidationError: naming the text and the expected form.
    """
    decoded = unquote_plus(text)
    if decoded == "null":
        return None
    name = str(transform)
    try:
        if name == "year":
            return int(decoded) - 1970
        if name == "month":
            year, month = decoded.split("-")
            return (int(year) - 1970) * 12 + int(month) - 1
        if name == "hour":
            date_part, hour = decoded.rsplit("-", 1)
            days = (dt.date.fromisoformat(date_part) - _EPOCH_DATE).days
            return days * 24 + int(hour)
        if name == "day":
            return (dt.date.fromisoformat(decoded) - _EPOCH_DATE).days
    except ValueError:
        raise ValidationError(f"partition value {text!r} is not a valid {name} value") from None
    return parse_human_value(result_type, decoded)


def parse_human_value(value_type: IcebergType, text: str) -> Any:
    """Parse a value printed by Java's ``toHumanString`` for an identity transform."""
    try:
        return _parse(value_type, text)
    except (ValueError, InvalidOperation):
        raise ValidationError(f"cannot read {text!r} as a {value_type} value") from None


def _parse(value_type: IcebergType, text: str) -> Any:
    if isinstance(value_type, BooleanType):
        lowered = text.lower()
        if lowered not in ("true", "false"):
            raise ValueError(text)
        return lowered == "true"
    if isinstance(value_type, (IntegerType, LongType)):
        return int(text)
    if isinstance(value_type, (FloatType, DoubleType)):
        return float(text)
    if isinstance(value_type, DecimalType):
        return Decimal(text).quantize(Decimal(1).scaleb(-value_type.scale))
    if isinstance(value_type, StringType):
        return text
    if isinstance(value_type, DateType):
        return (dt.date.fromisoformat(text) - _EPOCH_DATE).days
    if isinstance(value_type, TimeType):
        t = dt.time.fromisoformat(text)
        return ((t.hour * 60 + t.minute) * 60 + t.second) * 1_000_000 + t.microsecond
    if isinstance(value_type, (TimestampType, TimestamptzType, TimestampNanoType, TimestamptzNanoType)):
        nanos = _timestamp_nanos(text)
        if isinstance(value_type, (TimestampNanoType, TimestamptzNanoType)):
            return nanos
        return nanos // 1000
    if isinstance(value_type, UUIDType):
        return uuid.UUID(text)
    if isinstance(value_type, (BinaryType, FixedType)):
        return base64.b64decode(text, validate=True)
    raise ValueError(f"no human form for {value_type}")


def _timestamp_nanos(text: str) -> int:
    """Nanoseconds since epoch of an ISO timestamp; a trailing Z or offset is honoured."""
    body = text
    offset = dt.timedelta(0)
    if body.endswith("Z"):
        body = body[:-1]
    elif len(body) > 6 and body[-6] in "+-" and body[-3] == ":":
        sign = 1 if body[-6] == "+" else -1
        offset = sign * dt.timedelta(hours=int(body[-5:-3]), minutes=int(body[-2:]))
        body = body[:-6]
    fraction = 0
    if "." in body:
        body, frac_text = body.split(".", 1)
        fraction = int(frac_text.ljust(9, "0")[:9])
    moment = dt.datetime.fromisoformat(body) - offset
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + fraction


def _float_key(value: float) -> Any:
    if math.isnan(value):
        return ("nan",)
    return ("f", struct.pack(">d", value))


def partition_key(partition: Iterable[Any], spec_id: int | None = None) -> tuple[Any, ...]:
    """A hashable key equal exactly when the spec says two partitions are equal.

    Floats compare by bit pattern with NaNs normalized (spec: "Scan Planning", note 3): Python's
    ``==`` would merge 0.0 with -0.0 and keep every NaN apart.
    """
    values = tuple(_float_key(v) if isinstance(v, float) else v for v in partition)
    return values if spec_id is None else (spec_id, *values)
