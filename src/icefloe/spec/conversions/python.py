"""Python-native values for users: ``datetime``, ``Decimal``, ``UUID``."""

from __future__ import annotations

import datetime as dt
import math
import uuid
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from icefloe.spec.conversions._common import (
    MICROS_PER_DAY,
    NANO_TYPES,
    NANOS_PER_DAY,
    TZ_TYPES,
    checked_unscaled,
    decimal_from_unscaled,
    float32,
    invalid_value,
    struct_items,
)
from icefloe.spec.conversions.binary import to_bytes
from icefloe.spec.types import (
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    ListType,
    MapType,
    StructType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UnknownType,
    UUIDType,
)

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
                raise invalid_value(type_, value, "not within a day")
            return (_EPOCH + dt.timedelta(microseconds=value)).time()
        if isinstance(type_, (TimestampType, TimestamptzType, *NANO_TYPES)):
            micros = value // 1000 if isinstance(type_, NANO_TYPES) else value
            epoch = _EPOCH_UTC if isinstance(type_, TZ_TYPES) else _EPOCH
            return epoch + dt.timedelta(microseconds=micros)
    except OverflowError as e:
        raise invalid_value(type_, value, "outside the range of Python's datetime") from e
    if isinstance(type_, ListType):
        return [to_python(type_.element_type, item) for item in value]
    if isinstance(type_, MapType):
        return {to_python(type_.key_type, k): to_python(type_.value_type, v) for k, v in value.items()}
    if isinstance(type_, StructType):
        return {f.name: to_python(f.field_type, v) for f, v in struct_items(type_, value)}
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
        raise invalid_value(type_, value, "expected a datetime.date")
    if isinstance(type_, TimeType):
        if isinstance(value, dt.time) and value.tzinfo is None:
            return ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond
        raise invalid_value(type_, value, "expected a naive datetime.time")
    if isinstance(value, dt.datetime):
        if isinstance(type_, TZ_TYPES) and value.tzinfo is None:
            raise invalid_value(type_, value, "expected a timezone-aware datetime")
        if not isinstance(type_, TZ_TYPES) and value.tzinfo is not None:
            raise invalid_value(type_, value, "expected a naive datetime")
        micros = _micros_since(_EPOCH_UTC if value.tzinfo else _EPOCH, value)
        if isinstance(type_, NANO_TYPES):
            # pandas.Timestamp is a datetime subclass that carries the nanoseconds
            return micros * 1000 + int(getattr(value, "nanosecond", 0))
        return micros
    if isinstance(value, dt.date) and not isinstance(type_, TZ_TYPES):
        days = value.toordinal() - 719_163
        return days * (NANOS_PER_DAY if isinstance(type_, NANO_TYPES) else MICROS_PER_DAY)
    raise invalid_value(type_, value, "expected a datetime.datetime")


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
    if isinstance(type_, (DateType, TimeType, TimestampType, TimestamptzType, *NANO_TYPES)):
        result = _from_python_temporal(type_, value)
        to_bytes(type_, result)
        return result
    if isinstance(type_, (FloatType, DoubleType)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise invalid_value(type_, value)
        result_f = float(value)
        if isinstance(type_, FloatType):
            result_f = float32(result_f)
            if math.isinf(result_f) and not math.isinf(value):
                raise invalid_value(type_, value, "out of range")
        return result_f
    if isinstance(type_, DecimalType):
        if isinstance(value, (int, float, str)) and not isinstance(value, bool):
            try:
                value = Decimal(repr(value) if isinstance(value, float) else value)
            except InvalidOperation as e:
                raise invalid_value(type_, value) from e
        return decimal_from_unscaled(checked_unscaled(type_, value, check_precision=True), type_.scale)
    if isinstance(type_, UUIDType) and isinstance(value, str):
        try:
            return uuid.UUID(value)
        except ValueError as e:
            raise invalid_value(type_, value) from e
    if (
        isinstance(type_, FixedType)
        and isinstance(value, (bytes, bytearray, memoryview))
        and len(value) != type_.length
    ):
        raise invalid_value(type_, value, f"expected {type_.length} bytes")
    if isinstance(type_, ListType):
        if not isinstance(value, Sequence) or isinstance(value, (str, bytes)):
            raise invalid_value(type_, value, "expected a sequence")
        return [from_python(type_.element_type, item) for item in value]
    if isinstance(type_, MapType):
        if not isinstance(value, Mapping):
            raise invalid_value(type_, value, "expected a mapping")
        return {from_python(type_.key_type, k): from_python(type_.value_type, v) for k, v in value.items()}
    if isinstance(type_, StructType):
        return {f.name: from_python(f.field_type, v) for f, v in struct_items(type_, value)}
    if isinstance(type_, UnknownType):
        raise invalid_value(type_, value, "unknown columns are always null")
    to_bytes(type_, value)  # type and range check for the remaining primitives
    return bytes(value) if isinstance(value, (bytearray, memoryview)) else value
