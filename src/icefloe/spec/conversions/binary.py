"""The spec's Appendix D binary single-value form (manifest bounds, partition values)."""

from __future__ import annotations

import struct
import uuid
from typing import Any

from icefloe.errors import ValidationError
from icefloe.spec.conversions._common import (
    INT_TYPES,
    MICROS_PER_DAY,
    NANO_TYPES,
    NANOS_PER_DAY,
    checked_unscaled,
    decimal_from_unscaled,
    invalid_value,
)
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
    TimestamptzType,
    TimeType,
    UUIDType,
)

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
    layout = INT_TYPES.get(type(type_))
    if layout is not None:
        fmt, low, high = layout
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise invalid_value(type_, value, "out of range or not an int")
        return struct.pack(fmt, value)
    if isinstance(type_, BooleanType):
        if not isinstance(value, bool):
            raise invalid_value(type_, value)
        return b"\x01" if value else b"\x00"
    if isinstance(type_, (FloatType, DoubleType)):
        if not isinstance(value, (float, int)) or isinstance(value, bool):
            raise invalid_value(type_, value)
        try:
            return struct.pack("<f" if isinstance(type_, FloatType) else "<d", value)
        except OverflowError as e:
            raise invalid_value(type_, value, "out of range") from e
    if isinstance(type_, StringType):
        if not isinstance(value, str):
            raise invalid_value(type_, value)
        try:
            return value.encode("utf-8")
        except UnicodeEncodeError as e:
            raise invalid_value(type_, value, "not valid Unicode") from e
    if isinstance(type_, UUIDType):
        if not isinstance(value, uuid.UUID):
            raise invalid_value(type_, value)
        return value.bytes
    if isinstance(type_, (FixedType, BinaryType)):
        # Fixed lengths are not checked: truncated bounds may be shorter than the type.
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise invalid_value(type_, value)
        return bytes(value)
    if isinstance(type_, DecimalType):
        unscaled = checked_unscaled(type_, value, check_precision=False)
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
    if isinstance(type_, (LongType, TimeType, TimestampType, TimestamptzType, *NANO_TYPES)):
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
    elif not isinstance(type_, tuple(INT_TYPES)):
        raise ValidationError(f"type {type_} has no binary single-value form")
    raise ValidationError(f"invalid {size}-byte binary value for {type_}: {data!r}")
