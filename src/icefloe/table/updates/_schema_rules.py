"""The rules a schema update checks: type promotions, default values, names, identifier fields.

Private to :mod:`icefloe.table.updates.update_schema` and its helper modules; pure functions over spec
types, no state.
"""

from __future__ import annotations

import math
from typing import Any

from icefloe.errors import InvalidFilterError, UnsupportedFeatureError, ValidationError
from icefloe.expressions.literals import Inexact, literal
from icefloe.spec.conversions import MICROS_PER_DAY, NANOS_PER_DAY
from icefloe.spec.transforms import DayTransform, MonthTransform, VoidTransform, YearTransform
from icefloe.spec.types import (
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
    NestedField,
    PrimitiveType,
    TimestampNanoType,
    TimestampType,
    UnknownType,
    VariantType,
)

__all__ = [
    "DATE_PROMOTION_SAFE_TRANSFORMS",
    "DEFAULT_VALUES_MIN_FORMAT_VERSION",
    "V3_PROMOTIONS_MIN_FORMAT_VERSION",
    "check_doc",
    "check_name",
    "convert_default",
    "is_promotion_allowed",
    "promote_default",
    "validate_identifier_field",
]

#: The first format version whose fields may carry non-null initial / write defaults.
DEFAULT_VALUES_MIN_FORMAT_VERSION = 3
#: The first format version with the v3 promotions (``unknown`` to any type, ``date`` to timestamps).
V3_PROMOTIONS_MIN_FORMAT_VERSION = 3
# Transforms whose value is the same for a date and for the timestamp at the start of that day
# (spec "Schema Evolution": promotion must not change the partition values of existing files).
DATE_PROMOTION_SAFE_TRANSFORMS = (YearTransform, MonthTransform, DayTransform, VoidTransform)


def is_promotion_allowed(source: IcebergType, target: IcebergType, format_version: int) -> bool:
    """Whether a column of type ``source`` may become ``target`` (spec "Schema Evolution").

    v1 and v2: ``int`` -> ``long``, ``float`` -> ``double``, ``decimal(P, S)`` -> ``decimal(P', S)``
    with ``P' >= P``. v3 adds ``unknown`` -> any primitive type and ``date`` -> ``timestamp`` /
    ``timestamp_ns`` (never to the ``tz`` kinds).
    """
    if source == target:
        return True
    if isinstance(source, IntegerType):
        return isinstance(target, LongType)
    if isinstance(source, FloatType):
        return isinstance(target, DoubleType)
    if isinstance(source, DecimalType):
        return (
            isinstance(target, DecimalType)
            and target.scale == source.scale
            and target.precision >= source.precision
        )
    if format_version >= V3_PROMOTIONS_MIN_FORMAT_VERSION:
        if isinstance(source, UnknownType):
            return isinstance(target, PrimitiveType)
        if isinstance(source, DateType):
            return isinstance(target, (TimestampType, TimestampNanoType))
    return False


def convert_default(column: str, field_type: IcebergType, value: Any) -> Any:
    """``value`` as a default of a ``field_type`` column, in icefloe's value representation.

    Accepts what filters accept: the representation itself, ISO text for dates and times,
    ``datetime`` objects, numbers for any numeric type when the conversion is exact.

    Raises:
        ValidationError: naming the column, when the value does not fit the type exactly, or
            the type cannot have a non-null default (``unknown``, ``variant``, nested types).
    """
    if value is None:
        return None
    if isinstance(field_type, (UnknownType, VariantType)):
        raise ValidationError(f"column '{column}': a column of type {field_type} must default to null")
    if not isinstance(field_type, PrimitiveType):
        raise UnsupportedFeatureError(
            f"column '{column}': default values of {field_type} columns are not supported; "
            "set defaults on primitive columns"
        )
    if (
        isinstance(field_type, (FloatType, DoubleType))
        and isinstance(value, float)
        and not math.isfinite(value)
    ):
        return value  # NaN and infinities are values of the type, but never filter literals
    try:
        converted = literal(value).to(field_type)
    except InvalidFilterError as e:
        raise ValidationError(
            f"column '{column}': invalid default value {value!r} for type {field_type}"
        ) from e
    if isinstance(converted, Inexact):
        raise ValidationError(
            f"column '{column}': default value {value!r} is not exactly representable as {field_type}"
        )
    if isinstance(field_type, FixedType) and len(converted) != field_type.length:
        raise ValidationError(
            f"column '{column}': default value has {len(converted)} bytes, {field_type} needs {field_type.length}"
        )
    return converted


def promote_default(value: Any, source: IcebergType, target: IcebergType) -> Any:
    """A default of a ``source`` column as a value of the promoted ``target`` type."""
    if value is None or not isinstance(source, DateType):
        return value  # int -> long, float -> double, decimal widening keep their values
    return value * (NANOS_PER_DAY if isinstance(target, TimestampNanoType) else MICROS_PER_DAY)


def check_name(name: object, what: str) -> None:
    if not isinstance(name, str) or not name:
        raise ValidationError(f"{what} must be a non-empty string, not {name!r}")


def check_doc(doc: object) -> None:
    if doc is not None and not isinstance(doc, str):
        raise ValidationError(f"column doc must be a string or None, not {doc!r}")


def validate_identifier_field(
    name: str, field: NestedField, by_id: dict[int, NestedField], parents: dict[int, int]
) -> None:
    """Java's ``Schema.validateIdentifierField``: an identifier field is a required primitive
    (not float or double), nested only in required structs (never in a list or map).

    Args:
        name: the name the field was given by (for messages).
        field: the field, as in the new schema.
        by_id: every field of the new schema by id.
        parents: the parent field id of each nested field of the new schema.

    Raises:
        ValidationError: naming the field and the reason.
    """
    prefix = f"cannot add field '{name}' as an identifier field"
    if not isinstance(field.field_type, PrimitiveType):
        raise ValidationError(f"{prefix}: not a primitive type field ({field.field_type})")
    if not field.required:
        raise ValidationError(f"{prefix}: not a required field (identifier fields must be required)")
    if isinstance(field.field_type, (FloatType, DoubleType)):
        raise ValidationError(f"{prefix}: must not be float or double field")
    ancestors: list[NestedField] = []
    parent_id = parents.get(field.field_id)
    while parent_id is not None:
        ancestors.append(by_id[parent_id])
        parent_id = parents.get(parent_id)
    # A list or map anywhere above wins over an optional struct: rows there have no single key.
    for parent in ancestors:
        if isinstance(parent.field_type, (ListType, MapType)):
            raise ValidationError(
                f"{prefix}: must not be nested in {parent.field_type} column '{parent.name}'"
            )
    for parent in ancestors:
        if not parent.required:
            raise ValidationError(f"{prefix}: must not be nested in an optional field '{parent.name}'")
