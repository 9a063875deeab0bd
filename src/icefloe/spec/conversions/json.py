"""The spec's JSON single-value serialization (defaults, REST), as Java's SingleValueParser
writes it."""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from icefloe.spec.conversions._common import (
    NANO_TYPES,
    checked_unscaled,
    decimal_from_unscaled,
    float32,
    invalid_value,
    struct_items,
)
from icefloe.spec.conversions.binary import to_bytes
from icefloe.spec.conversions.strings import iso_date, iso_time, iso_timestamp, java_float_str, parse_iso
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
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

# ---------------------------------------------------------------------------------------------
# JSON single-value serialization


def to_json(type_: IcebergType, value: Any) -> Any:
    """Return the JSON single-value form of a value, as a ``json``-module-ready object.

    Follows Java's SingleValueParser: binary as upper-case hex, times and timestamps in ISO
    form without trailing fraction zeros, decimals in plain notation (scientific only for a
    negative scale), NaN and infinities as the strings Jackson writes. Struct fields with a
    null value are omitted. A float32 is the double of its shortest round-trip digits (Java's
    Jackson writes a ``Float``: ``0.1``, not the double ``0.10000000149011612`` it equals);
    readers round it back to the same float32.
    """
    if value is None:
        return None
    if isinstance(type_, BooleanType):
        if not isinstance(value, bool):
            raise invalid_value(type_, value)
        return value
    if isinstance(type_, (IntegerType, LongType)):
        to_bytes(type_, value)  # range and type check
        return value
    if isinstance(type_, (FloatType, DoubleType)):
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise invalid_value(type_, value)
        if isinstance(type_, FloatType):
            value = float32(float(value))
        if math.isnan(value) or math.isinf(value):
            return java_float_str(value, False)
        return float(java_float_str(value, True)) if isinstance(type_, FloatType) else float(value)
    if isinstance(type_, DecimalType):
        unscaled = checked_unscaled(type_, value, check_precision=False)
        exact = decimal_from_unscaled(unscaled, type_.scale)
        return f"{exact:f}" if type_.scale >= 0 else str(exact)
    if isinstance(type_, DateType):
        to_bytes(type_, value)
        return iso_date(value)
    if isinstance(type_, TimeType):
        to_bytes(type_, value)
        return iso_time(value * 1000)
    if isinstance(type_, (TimestampType, TimestamptzType, *NANO_TYPES)):
        to_bytes(type_, value)
        return iso_timestamp(value, type_)
    if isinstance(type_, (StringType, UUIDType)):
        to_bytes(type_, value)
        return str(value)
    if isinstance(type_, (FixedType, BinaryType)):
        raw = to_bytes(type_, value)
        if isinstance(type_, FixedType) and len(raw) != type_.length:
            raise invalid_value(type_, value, f"expected {type_.length} bytes")
        return raw.hex().upper()
    if isinstance(type_, ListType):
        if not isinstance(value, Sequence) or isinstance(value, (str, bytes)):
            raise invalid_value(type_, value, "expected a sequence")
        return [to_json(type_.element_type, item) for item in value]
    if isinstance(type_, MapType):
        if not isinstance(value, Mapping):
            raise invalid_value(type_, value, "expected a mapping")
        return {
            "keys": [to_json(type_.key_type, k) for k in value],
            "values": [to_json(type_.value_type, v) for v in value.values()],
        }
    if isinstance(type_, StructType):
        return {
            str(f.field_id): to_json(f.field_type, v) for f, v in struct_items(type_, value) if v is not None
        }
    raise invalid_value(type_, value, "the type has no non-null JSON single values")


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
            raise invalid_value(type_, json_value)
        return json_value
    if isinstance(type_, (IntegerType, LongType)):
        if isinstance(json_value, bool) or not isinstance(json_value, int):
            raise invalid_value(type_, json_value, "expected a JSON integer")
        to_bytes(type_, json_value)
        return json_value
    if isinstance(type_, (FloatType, DoubleType)):
        if isinstance(json_value, str) and json_value in _NON_FINITE:
            return _NON_FINITE[json_value]
        if isinstance(json_value, bool) or not isinstance(json_value, (int, float)):
            raise invalid_value(type_, json_value, "expected a JSON number")
        return float32(float(json_value)) if isinstance(type_, FloatType) else float(json_value)
    if isinstance(type_, DecimalType):
        is_number = isinstance(json_value, str) and _DECIMAL_PATTERN.fullmatch(json_value)
        parsed = Decimal(json_value) if is_number else None
        if parsed is None or parsed.as_tuple().exponent != -type_.scale:
            raise invalid_value(type_, json_value, f"expected a decimal string with scale {type_.scale}")
        return parsed
    if isinstance(type_, (DateType, TimeType, TimestampType, TimestamptzType, *NANO_TYPES)):
        return parse_iso(type_, json_value)
    if isinstance(type_, StringType):
        if not isinstance(json_value, str):
            raise invalid_value(type_, json_value)
        return json_value
    if isinstance(type_, UUIDType):
        if not isinstance(json_value, str) or not _UUID_PATTERN.fullmatch(json_value):
            raise invalid_value(type_, json_value)
        return uuid.UUID(json_value)
    if isinstance(type_, (FixedType, BinaryType)):
        if not isinstance(json_value, str) or not _HEX_PATTERN.fullmatch(json_value):
            raise invalid_value(type_, json_value, "expected a hexadecimal string")
        if isinstance(type_, FixedType) and len(json_value) != 2 * type_.length:
            raise invalid_value(type_, json_value, f"expected {type_.length} bytes")
        return bytes.fromhex(json_value)
    if isinstance(type_, ListType):
        if not isinstance(json_value, list):
            raise invalid_value(type_, json_value, "expected a JSON array")
        return [from_json(type_.element_type, item) for item in json_value]
    if isinstance(type_, MapType):
        keys, values = (
            json_value.get(k) if isinstance(json_value, dict) else None for k in ("keys", "values")
        )
        if not isinstance(keys, list) or not isinstance(values, list) or len(keys) != len(values):
            raise invalid_value(type_, json_value, 'expected {"keys": [...], "values": [...]}')
        try:
            return {
                from_json(type_.key_type, k): from_json(type_.value_type, v) for k, v in zip(keys, values)
            }
        except TypeError as e:
            raise invalid_value(type_, json_value, "map keys must be hashable") from e
    if isinstance(type_, StructType):
        if not isinstance(json_value, dict):
            raise invalid_value(type_, json_value, "expected a JSON object")
        return {
            f.name: from_json(f.field_type, json_value[str(f.field_id)])
            for f in type_.fields
            if str(f.field_id) in json_value
        }
    raise invalid_value(type_, json_value, "the type has no non-null JSON single values")
