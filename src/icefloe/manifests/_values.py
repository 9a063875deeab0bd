"""Partition values between icefloe's representation and Avro's stored form, and the
partition field summaries of manifest list rows.

Stored forms (logical types stripped, see ``_avro_file``): date / time / timestamps are ints,
decimals are big-endian two's complement bytes (fixed or bytes), uuids 16 bytes (or a
string, from writers that use Avro's string uuid), fixed and binary bytes.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from icefloe.errors import ValidationError
from icefloe.serde.avro_schemas import decimal_required_bytes
from icefloe.spec.conversions import decimal_from_unscaled, to_bytes, unscaled_decimal
from icefloe.spec.manifest import FieldSummary
from icefloe.spec.types import DecimalType, DoubleType, FloatType, IcebergType, UnknownType, UUIDType

__all__ = ["PartitionSummary", "avro_decoder", "avro_encoder"]

Converter = Callable[[Any], Any]


def _decode_decimal(scale: int) -> Converter:
    def decode(value: Any) -> Any:
        if value is None or isinstance(value, Decimal):
            return value
        return decimal_from_unscaled(int.from_bytes(value, "big", signed=True), scale)

    return decode


def _decode_uuid(value: Any) -> Any:
    if value is None or isinstance(value, uuid.UUID):
        return value
    if isinstance(value, str):
        return uuid.UUID(value)
    return uuid.UUID(bytes=bytes(value))


def avro_decoder(field_type: IcebergType) -> Converter | None:
    """A function from a stored value to icefloe's value of ``field_type``; None when the
    stored value is already the right value (ints, floats, strings, bytes, bools)."""
    if isinstance(field_type, DecimalType):
        return _decode_decimal(field_type.scale)
    if isinstance(field_type, UUIDType):
        return _decode_uuid
    if isinstance(field_type, UnknownType):
        return lambda value: None
    return None


def avro_encoder(field_type: IcebergType, field_name: str) -> Converter | None:
    """A function from icefloe's value of ``field_type`` to its stored Avro form (as the
    schema of ``serde.avro_schemas`` declares it); None when no conversion is needed.

    The returned function raises ``ValidationError`` naming ``field_name`` for a bad value.
    """
    if isinstance(field_type, DecimalType):
        size = decimal_required_bytes(field_type.precision)
        scale, precision = field_type.scale, field_type.precision

        def encode_decimal(value: Any) -> Any:
            if value is None:
                return None
            if not isinstance(value, Decimal):
                raise ValidationError(f"partition field '{field_name}': expected a Decimal, got {value!r}")
            unscaled = unscaled_decimal(value, scale)
            if abs(unscaled) >= 10**precision:
                raise ValidationError(f"partition field '{field_name}': {value} does not fit {field_type}")
            return unscaled.to_bytes(size, "big", signed=True)

        return encode_decimal
    if isinstance(field_type, UUIDType):

        def encode_uuid(value: Any) -> Any:
            if value is None:
                return None
            if not isinstance(value, uuid.UUID):
                raise ValidationError(f"partition field '{field_name}': expected a uuid.UUID, got {value!r}")
            return value.bytes

        return encode_uuid
    if isinstance(field_type, UnknownType):
        return lambda value: None
    return None


def _order_key(field_type: IcebergType) -> Callable[[Any], Any] | None:
    if isinstance(field_type, (FloatType, DoubleType)):
        # -0.0 sorts before +0.0 (IEEE 754 totalOrder), so that a lower bound is never +0.0
        # when -0.0 occurs, nor an upper bound -0.0 when +0.0 does.
        return lambda value: (value, math.copysign(1.0, value))
    if isinstance(field_type, UUIDType):
        return lambda value: value.int  # unsigned, the order of the 16-byte big-endian form
    return None


class _FieldStats:
    __slots__ = (
        "contains_nan",
        "contains_null",
        "is_float",
        "key",
        "lower",
        "lower_key",
        "upper",
        "upper_key",
    )

    def __init__(self, field_type: IcebergType):
        self.contains_null = False
        self.contains_nan = False
        self.is_float = isinstance(field_type, (FloatType, DoubleType))
        self.key = _order_key(field_type)
        self.lower: Any = None
        self.upper: Any = None
        self.lower_key: Any = None
        self.upper_key: Any = None

    def update(self, value: Any) -> None:
        if value is None:
            self.contains_null = True
            return
        if self.is_float and math.isnan(value):
            self.contains_nan = True
            return
        key = value if self.key is None else self.key(value)
        if self.lower is None or key < self.lower_key:
            self.lower, self.lower_key = value, key
        if self.upper is None or key > self.upper_key:
            self.upper, self.upper_key = value, key


class PartitionSummary:
    """Accumulates the ``partitions`` field summaries of a manifest list row: per partition
    field, whether a null or NaN occurred and the bounds of the other values (Appendix D bytes).
    """

    def __init__(self, partition_type: Any):
        self._types: list[IcebergType] = [f.field_type for f in partition_type.fields]
        self._names: list[str] = [f.name for f in partition_type.fields]
        self._stats = [_FieldStats(t) for t in self._types]

    def update(self, partition: tuple[Any, ...]) -> None:
        for stats, value in zip(self._stats, partition):
            stats.update(value)

    def summaries(self) -> tuple[FieldSummary, ...]:
        result = []
        for field_type, name, stats in zip(self._types, self._names, self._stats):
            try:
                lower = None if stats.lower is None else to_bytes(field_type, stats.lower)
                upper = None if stats.upper is None else to_bytes(field_type, stats.upper)
            except ValidationError as exc:
                raise ValidationError(f"partition field '{name}': {exc}") from exc
            result.append(FieldSummary(stats.contains_null, stats.contains_nan, lower, upper))
        return tuple(result)
