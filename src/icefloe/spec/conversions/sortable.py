"""Order-preserving bytes of values: comparing the bytes compares the values.

For engines that sort opaque keys (Spark's range partitioning of a binary column): a tuple of
partition values becomes one ``bytes`` whose order is the tuples' order, field by field, nulls
first. Per type, after a ``0x01`` marker (``0x00`` is null):

- integers, dates, times and timestamps: 8 bytes, big-endian, sign bit flipped;
- decimals: the unscaled value in 16 bytes likewise (one type has one scale);
- floats and doubles: the IEEE 754 bits of the double, big-endian, sign bit flipped for
  positives and every bit flipped for negatives (-0.0 sorts just below 0.0, NaN last);
- booleans: one byte;
- strings (UTF-8 orders as code points), binary and fixed: the bytes with ``0x00`` escaped as
  ``0x00 0xFF``, then ``0x00 0x00``, so a prefix sorts before its extensions;
- uuids: their 16 bytes.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from icefloe.spec.conversions._common import unscaled_decimal
from icefloe.spec.types import (
    BinaryType,
    BooleanType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    StringType,
    StructType,
    UUIDType,
)

__all__ = ["sortable_bytes", "sortable_tuple"]

_NULL, _VALUE = b"\x00", b"\x01"
_SIGN_64 = 1 << 63
_SIGN_128 = 1 << 127
_TERMINATOR = b"\x00\x00"


def sortable_bytes(field_type: IcebergType, value: Any) -> bytes:
    """The order-preserving bytes of one value of ``field_type`` (icefloe's representation)."""
    if value is None:
        return _NULL
    if isinstance(field_type, BooleanType):
        return _VALUE + (b"\x01" if value else b"\x00")
    if isinstance(field_type, (FloatType, DoubleType)):
        bits: int = struct.unpack(">Q", struct.pack(">d", float(value)))[0]
        bits = bits ^ 0xFFFF_FFFF_FFFF_FFFF if bits & _SIGN_64 else bits | _SIGN_64
        return _VALUE + bits.to_bytes(8, "big")
    if isinstance(field_type, DecimalType):
        unscaled = unscaled_decimal(Decimal(value), field_type.scale)
        return _VALUE + (unscaled + _SIGN_128).to_bytes(16, "big")
    if isinstance(field_type, UUIDType):
        raw: bytes = value.bytes if isinstance(value, uuid.UUID) else bytes(value)
        return _VALUE + raw
    if isinstance(field_type, StringType):
        return _VALUE + _escaped(value.encode("utf-8"))
    if isinstance(field_type, (BinaryType, FixedType)):
        return _VALUE + _escaped(bytes(value))
    if isinstance(value, int):  # int, long, date, time, timestamps (micros or nanos)
        return _VALUE + (value + _SIGN_64).to_bytes(8, "big")
    raise ValueError(f"no sortable form for {field_type} value {value!r}")


def sortable_tuple(struct_type: StructType, values: Sequence[Any]) -> bytes:
    """The order-preserving bytes of a tuple of ``struct_type`` (a partition tuple)."""
    return b"".join(
        sortable_bytes(field.field_type, value)
        for field, value in zip(struct_type.fields, values, strict=True)
    )


def _escaped(data: bytes) -> bytes:
    return data.replace(b"\x00", b"\x00\xff") + _TERMINATOR
