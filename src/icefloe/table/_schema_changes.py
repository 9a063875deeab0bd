"""The pending changes of one schema update, and how they turn a schema into the next one.

``SchemaChanges`` is the bookkeeping of Java's ``SchemaUpdate``: deleted field ids, updated
fields by id (renames, type promotions, docs, nullability, defaults), added fields in order,
the next field id. Each change method runs Java's call-time checks against the schema the
update started from and records the change; :meth:`SchemaChanges.apply` builds the new schema
and runs the checks Java runs in ``apply()``.

Names given to the change methods refer to the base schema's columns (as in Java): after
``rename_column("a", "b")``, ``update_column("a", ...)`` still means that column. Only
top-level columns can change here; nested fields raise UnsupportedFeatureError.

This module is private to :mod:`icefloe.table.update_schema`, which replays the recorded
changes on fresh metadata when a commit is retried.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from icefloe.errors import InvalidFilterError, UnsupportedFeatureError, ValidationError
from icefloe.expressions.literals import Inexact, literal
from icefloe.spec.conversions import MICROS_PER_DAY, NANOS_PER_DAY
from icefloe.spec.schema import Schema, assign_fresh_ids
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.transforms import DayTransform, MonthTransform, VoidTransform, YearTransform
from icefloe.spec.types import (
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    LongType,
    NestedField,
    PrimitiveType,
    StructType,
    TimestampNanoType,
    TimestampType,
    UnknownType,
    VariantType,
    to_type,
)

__all__ = ["DEFAULT_VALUES_MIN_FORMAT_VERSION", "SchemaChanges", "is_promotion_allowed"]

#: The first format version whose fields may carry non-null initial / write defaults.
DEFAULT_VALUES_MIN_FORMAT_VERSION = 3
#: The first format version with the v3 promotions (``unknown`` to any type, ``date`` to timestamps).
V3_PROMOTIONS_MIN_FORMAT_VERSION = 3
# Transforms whose value is the same for a date and for the timestamp at the start of that day
# (spec "Schema Evolution": promotion must not change the partition values of existing files).
_DATE_PROMOTION_SAFE_TRANSFORMS = (YearTransform, MonthTransform, DayTransform, VoidTransform)


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


def _promote_default(value: Any, source: IcebergType, target: IcebergType) -> Any:
    """A default of a ``source`` column as a value of the promoted ``target`` type."""
    if value is None or not isinstance(source, DateType):
        return value  # int -> long, float -> double, decimal widening keep their values
    return value * (NANOS_PER_DAY if isinstance(target, TimestampNanoType) else MICROS_PER_DAY)


class SchemaChanges:
    """The changes of one schema update, relative to ``base``'s current schema.

    Args:
        base: the table metadata the update applies to (its current schema, last column id,
            format version and partition specs).
    """

    def __init__(self, base: TableMetadata):
        self.base = base
        self.schema = base.schema()
        self.format_version = base.format_version
        self.last_column_id = base.last_column_id
        self.deletes: list[int] = []
        self.updates: dict[int, NestedField] = {}
        self.added_ids: list[int] = []
        self.added_name_to_id: dict[str, int] = {}
        self.allow_incompatible = False
        self.is_case_sensitive = True

    # ---- flags -------------------------------------------------------------------------------

    def allow_incompatible_changes(self) -> None:
        self.allow_incompatible = True

    def case_sensitive(self, case_sensitive: bool) -> None:
        if not isinstance(case_sensitive, bool):
            raise ValidationError(f"case_sensitive must be a bool, not {case_sensitive!r}")
        self.is_case_sensitive = case_sensitive

    # ---- adding ------------------------------------------------------------------------------

    def add_column(
        self, name: str, field_type: IcebergType | str, doc: str | None, default: Any, *, required: bool
    ) -> None:
        _check_name(name, "column name")
        if "." in name:
            raise UnsupportedFeatureError(
                f"cannot add column with ambiguous name '{name}': '.' separates nested names, and "
                "adding nested columns (or top-level names containing '.') is not supported yet"
            )
        _check_doc(doc)
        resolved = to_type(field_type)
        existing = self._find(name)
        if existing is not None and existing.field_id not in self.deletes:
            raise ValidationError(f"cannot add column '{name}': the name already exists")
        if self._key(name) in self.added_name_to_id:
            raise ValidationError(f"cannot add column '{name}': it is already added in this update")
        minimum = getattr(resolved, "min_format_version", 1)
        if minimum > self.format_version:
            raise ValidationError(
                f"cannot add column '{name}': type {resolved} needs format-version {minimum} "
                f"(the table is v{self.format_version})"
            )
        if required and default is None and not self.allow_incompatible:
            raise ValidationError(
                f"incompatible change: cannot add required column without a default value: {name} "
                "(pass default=..., or call allow_incompatible_changes() first)"
            )
        if isinstance(resolved, UnknownType) and required:
            raise ValidationError(f"cannot add column '{name}': a column of type unknown must be optional")
        value = convert_default(name, resolved, default)
        if value is not None and self.format_version < DEFAULT_VALUES_MIN_FORMAT_VERSION:
            raise ValidationError(
                f"cannot add column '{name}' with a default value: default values need format-version "
                f"{DEFAULT_VALUES_MIN_FORMAT_VERSION} (the table is v{self.format_version})"
            )
        # As Java: the new column takes the next id, then its nested fields (fresh ids).
        template = StructType(NestedField(0, name, resolved, required, doc, value, value))
        field = assign_fresh_ids(template, self._next_id).fields[0]
        self.updates[field.field_id] = field
        self.added_ids.append(field.field_id)
        self.added_name_to_id[self._key(name)] = field.field_id

    # ---- changing existing columns -------------------------------------------------------------

    def delete_column(self, name: str) -> None:
        field = self._find_top_level(name, "delete")
        if field is None:
            raise ValidationError(f"cannot delete missing column: {name}")
        if field.field_id in self.updates:
            raise ValidationError(f"cannot delete a column that has updates: {name}")
        if field.field_id not in self.deletes:
            self.deletes.append(field.field_id)

    def rename_column(self, name: str, new_name: str) -> None:
        _check_name(new_name, "new column name")
        field = self._find_top_level(name, "rename")
        if field is None:
            raise ValidationError(f"cannot rename missing column: {name}")
        if field.field_id in self.deletes:
            raise ValidationError(f"cannot rename a column that will be deleted: {field.name}")
        current = self.updates.get(field.field_id, field)
        self.updates[field.field_id] = dataclasses.replace(current, name=new_name)

    def update_column(self, name: str, new_type: IcebergType | str) -> None:
        field = self._find_for_update(name, "update")
        target = to_type(new_type)
        if not isinstance(target, PrimitiveType):
            raise ValidationError(
                f"cannot change column type: {name}: {field.field_type} -> {target} (only primitive types)"
            )
        if field.field_type == target:
            return
        if not is_promotion_allowed(field.field_type, target, self.format_version):
            hint = ""
            if isinstance(field.field_type, (DateType, UnknownType)) and self.format_version < 3:
                hint = " (this promotion needs format-version 3)"
            raise ValidationError(f"cannot change column type: {name}: {field.field_type} -> {target}{hint}")
        if isinstance(field.field_type, DateType):
            self._check_date_promotion(name, field.field_id, target)
        self.updates[field.field_id] = dataclasses.replace(
            field,
            field_type=target,
            initial_default=_promote_default(field.initial_default, field.field_type, target),
            write_default=_promote_default(field.write_default, field.field_type, target),
        )

    def update_column_doc(self, name: str, doc: str | None) -> None:
        _check_doc(doc)
        field = self._find_for_update(name, "update")
        if field.doc == doc:
            return
        self.updates[field.field_id] = dataclasses.replace(field, doc=doc)

    def update_column_default(self, name: str, default: Any) -> None:
        field = self._find_for_update(name, "update")
        value = convert_default(name, field.field_type, default)
        if value is not None and self.format_version < DEFAULT_VALUES_MIN_FORMAT_VERSION:
            raise ValidationError(
                f"cannot set the default of column '{name}': default values need format-version "
                f"{DEFAULT_VALUES_MIN_FORMAT_VERSION} (the table is v{self.format_version})"
            )
        if value == field.write_default and type(value) is type(field.write_default):
            return
        # As Java: only the write default changes; the initial default is fixed when a column is added.
        self.updates[field.field_id] = dataclasses.replace(field, write_default=value)

    def set_requirement(self, name: str, *, required: bool) -> None:
        field = self._find_for_update(name, "update", check_deleted=False)
        if field.required == required:
            return  # a no-op is allowed even without allow_incompatible_changes (as Java)
        defaulted_add = self._key(name) in self.added_name_to_id and field.initial_default is not None
        if required and not (defaulted_add or self.allow_incompatible):
            raise ValidationError(
                f"cannot change column nullability: {name}: optional -> required "
                "(call allow_incompatible_changes() first)"
            )
        if field.field_id in self.deletes:
            raise ValidationError(f"cannot update a column that will be deleted: {field.name}")
        self.updates[field.field_id] = dataclasses.replace(field, required=required)

    # ---- the result --------------------------------------------------------------------------

    def apply(self) -> Schema:
        """The new schema (schema id 0: the metadata builder assigns the real one).

        Raises:
            ValidationError: an identifier field is deleted or no longer qualifies, or two
                columns would share a name.
        """
        for field_id in self.schema.identifier_field_ids:
            if field_id in self.deletes:
                raise ValidationError(
                    f"cannot delete identifier field {self.schema.find_column_name(field_id)} "
                    f"(id {field_id}); changing identifier fields is not supported yet"
                )
        fields: list[NestedField] = []
        for field in self.schema.fields:
            if field.field_id in self.deletes:
                continue
            fields.append(self.updates.get(field.field_id, field))
        fields.extend(self.updates[i] for i in self.added_ids)
        seen: set[str] = set()
        for field in fields:
            if field.name in seen:
                raise ValidationError(f"invalid schema change: two columns would be named '{field.name}'")
            seen.add(field.name)
        new_schema = Schema(*fields, identifier_field_ids=self.schema.identifier_field_ids)
        for field_id in new_schema.identifier_field_ids:
            _validate_identifier_field(new_schema.field(field_id))
        return new_schema

    def renamed_columns(self) -> dict[str, str]:
        """Old name -> new name of the existing columns this update renames."""
        return {
            self.schema.field(field_id).name: update.name
            for field_id, update in self.updates.items()
            if field_id not in self.added_ids and self.schema.field(field_id).name != update.name
        }

    def deleted_columns(self) -> list[str]:
        return [self.schema.field(field_id).name for field_id in self.deletes]

    # ---- lookups -----------------------------------------------------------------------------

    def _next_id(self) -> int:
        self.last_column_id += 1
        return self.last_column_id

    def _key(self, name: str) -> str:
        return name if self.is_case_sensitive else name.lower()

    def _find(self, name: str) -> NestedField | None:
        if not isinstance(name, str):
            raise ValidationError(f"column name must be a string, not {name!r}")
        return self.schema.find_field(name, self.is_case_sensitive)

    def _find_top_level(self, name: str, verb: str) -> NestedField | None:
        field = self._find(name)
        if field is not None and self.schema.as_struct().field(field.field_id) is None:
            raise UnsupportedFeatureError(
                f"cannot {verb} nested field '{name}': changing nested fields is not supported yet "
                "(only top-level columns)"
            )
        return field

    def _find_for_update(self, name: str, verb: str, *, check_deleted: bool = True) -> NestedField:
        """The column as this update leaves it so far: an existing column with its pending
        changes, or a column added in this update (Java's ``findForUpdate``)."""
        existing = self._find_top_level(name, verb)
        if existing is not None:
            field = self.updates.get(existing.field_id, existing)
        else:
            added = self.added_name_to_id.get(self._key(name))
            if added is None:
                raise ValidationError(f"cannot {verb} missing column: {name}")
            field = self.updates[added]
        if check_deleted and field.field_id in self.deletes:
            raise ValidationError(f"cannot update a column that will be deleted: {field.name}")
        return field

    def _check_date_promotion(self, name: str, field_id: int, target: IcebergType) -> None:
        """Spec: no promotion of a partition source whose transform would then give other values
        (identity and bucket values of a date differ from those of its timestamp)."""
        for spec in self.base.partition_specs:
            for pf in spec.fields:
                if pf.source_id == field_id and not isinstance(pf.transform, _DATE_PROMOTION_SAFE_TRANSFORMS):
                    raise ValidationError(
                        f"cannot change column type: {name}: date -> {target}: partition field "
                        f"'{pf.name}' ({pf.transform}) of partition spec {spec.spec_id} would produce "
                        "different values"
                    )


def _check_name(name: object, what: str) -> None:
    if not isinstance(name, str) or not name:
        raise ValidationError(f"{what} must be a non-empty string, not {name!r}")


def _check_doc(doc: object) -> None:
    if doc is not None and not isinstance(doc, str):
        raise ValidationError(f"column doc must be a string or None, not {doc!r}")


def _validate_identifier_field(field: NestedField) -> None:
    """Java's ``Schema.validateIdentifierField`` for a top-level field."""
    if not isinstance(field.field_type, PrimitiveType):
        raise ValidationError(f"cannot use field '{field.name}' as an identifier field: not a primitive type")
    if not field.required:
        raise ValidationError(
            f"cannot make identifier field '{field.name}' optional: identifier fields must be required"
        )
    if isinstance(field.field_type, (FloatType, DoubleType)):
        raise ValidationError(
            f"cannot use field '{field.name}' as an identifier field: must not be float or double"
        )
