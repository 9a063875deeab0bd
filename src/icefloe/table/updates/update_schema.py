"""UpdateSchema: schema evolution with Java's ``UpdateSchema`` / ``SchemaUpdate`` semantics.

::

    (table.update_schema()
        .add_column("comment", "string", "free text")
        .add_column("point.z", "double")                 # into the struct column ``point``
        .add_column("alt", "double", parent="locations")  # into a list's element struct
        .rename_column("amount", "total")
        .rename_column("point.x", "lon")
        .update_column("total", "decimal(12, 2)")
        .move_after("comment", "id")
        .delete_column("legacy")
        .set_identifier_fields("id")
        .commit())

Names are full dotted names of the schema the update started from (``"point.x"``; list
elements and map values also by the short forms ``"points.x"`` / ``"locations.lat"``), as in
Java; columns added in this update are named by their full new name. Each method runs Java's
checks when it is called (a missing column, a type change that is not a promotion the spec
allows, conflicting changes to one column, changes to map keys, moves across structs) and
raises ValidationError at once; ``apply()`` runs the rest (identifier fields, name clashes).
``apply()`` returns the new Schema; ``commit()`` adds it to the table and makes it current,
guarded by the ``assert-current-schema-id`` and ``assert-last-assigned-field-id`` requirements
so that a concurrent schema change makes the commit fail and retry. A retry replays the
recorded changes on the fresh schema (new columns get fresh ids there); a change that no
longer applies (its column was dropped meanwhile) raises ValidationException.

The commit also keeps table properties in step, as Java does: the name mapping in
``schema.name-mapping.default`` gains the new names (renamed fields keep their old names as
aliases) and the added fields at any depth, and per-column properties
(``write.metadata.metrics.column.*``, ``write.parquet.bloom-filter-enabled.column.*``,
``write.parquet.stats-enabled.column.*``) follow renames and are dropped with their column.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import pyarrow as pa

from icefloe.arrow.schema import arrow_to_schema_fresh
from icefloe.errors import IcefloeError, ValidationError, ValidationException
from icefloe.serde.name_mapping_json import dumps_name_mapping, loads_name_mapping
from icefloe.spec.name_mapping import update_mapping
from icefloe.spec.properties import (
    DEFAULT_NAME_MAPPING,
    METRICS_MODE_COLUMN_CONF_PREFIX,
    PARQUET_BLOOM_FILTER_COLUMN_ENABLED_PREFIX,
    PARQUET_COLUMN_STATS_ENABLED_PREFIX,
)
from icefloe.spec.schema import Schema, index_by_id
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.types import IcebergType
from icefloe.spec.updates import (
    LAST_ADDED,
    AddSchema,
    AssertCurrentSchemaId,
    AssertLastAssignedFieldId,
    RemoveProperties,
    SetCurrentSchema,
    SetProperties,
    TableUpdate,
)
from icefloe.table.operation import Changes, PendingUpdate, TableOperations
from icefloe.table.updates._schema_apply import MoveKind
from icefloe.table.updates._schema_changes import DEFAULT_VALUES_MIN_FORMAT_VERSION, SchemaChanges
from icefloe.table.updates._schema_union import union_by_name

__all__ = ["COLUMN_PROPERTY_PREFIXES", "UpdateSchema"]

log = logging.getLogger(__name__)

#: Table property prefixes followed by a column name (Java's ``SchemaUpdate`` keeps them in step).
COLUMN_PROPERTY_PREFIXES = (
    METRICS_MODE_COLUMN_CONF_PREFIX,
    PARQUET_BLOOM_FILTER_COLUMN_ENABLED_PREFIX,
    PARQUET_COLUMN_STATS_ENABLED_PREFIX,
)

_NO_DEFAULT: Any = object()


class UpdateSchema(PendingUpdate[Schema]):
    """``table.update_schema()``: add, rename, delete, retype, document and move columns at
    any depth; union with another schema; set the identifier fields.

    Types are IcebergType objects or their string form (``"long"``, ``"decimal(10, 2)"``,
    ``"struct<a: int>"``). Default values (format v3) are given in icefloe's value
    representation or anything a filter literal accepts (``"2024-01-01"`` for a date column).
    """

    def __init__(self, transaction: TableOperations, *, autocommit: bool):
        super().__init__(transaction, autocommit=autocommit)
        # Each change as (method name, args, kwargs), replayed on fresh metadata on retry.
        self._log: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
        self._changes = SchemaChanges(self._base)

    def _record(self, method: str, *args: Any, **kwargs: Any) -> UpdateSchema:
        self._check_mutable()
        try:
            _apply_change(self._changes, method, args, kwargs)
        except Exception:
            # A refused call must leave the update as it was: union_by_name_with, for one, can
            # fail after adding some columns.
            self._changes = _replay(self._changes.base, self._log)
            raise
        self._log.append((method, args, kwargs))
        return self

    # ---- flags -------------------------------------------------------------------------------

    def allow_incompatible_changes(self) -> UpdateSchema:
        """Allow changes that can break reading older data: required columns without a
        default, ``require_column``. Applies to the calls after it (as in Java)."""
        return self._record("allow_incompatible_changes")

    def case_sensitive(self, case_sensitive: bool) -> UpdateSchema:
        """Match column names case-insensitively (``False``) in the calls after it."""
        return self._record("case_sensitive", case_sensitive)

    # ---- adding ------------------------------------------------------------------------------

    def add_column(
        self,
        name: str | tuple[str, ...],
        field_type: IcebergType | str,
        doc: str | None = None,
        *,
        parent: str | None = None,
        default: Any = None,
    ) -> UpdateSchema:
        """Add an optional column, last in its struct, with a fresh field id (a nested type's
        fields get the following ids, in Java's order).

        Where it goes: ``parent="point"`` adds ``name`` (taken literally) to the struct column
        ``point``; a list or map parent means its element or value struct (as Java's
        ``addColumn(parent, name, type)``). Without ``parent`` a dotted name is split at its
        last dot: ``"point.z"`` adds ``z`` to ``point``. A tuple is a path: ``("point", "z")``;
        ``("a.b",)`` adds a top-level column whose name contains a dot.

        ``default`` (format v3) sets both the initial default (the value rows written before
        the column existed read as) and the write default.

        Raises:
            ValidationError: the name is empty or already exists, the parent is missing, not a
                struct (or list / map of structs), a map key or deleted in this update, the
                type needs a newer format version, or the default does not fit the type.
        """
        where, leaf = self._changes.split_add_name(name, parent)
        return self._record("add_column", where, leaf, field_type, doc, default, required=False)

    def add_required_column(
        self,
        name: str | tuple[str, ...],
        field_type: IcebergType | str,
        doc: str | None = None,
        *,
        parent: str | None = None,
        default: Any = _NO_DEFAULT,
    ) -> UpdateSchema:
        """Add a required column (placed as ``add_column`` places it).

        Refused unless a ``default`` is given (format v3: older rows read as that value) or
        ``allow_incompatible_changes()`` was called before.
        """
        value = None if default is _NO_DEFAULT else default
        where, leaf = self._changes.split_add_name(name, parent)
        return self._record("add_column", where, leaf, field_type, doc, value, required=True)

    # ---- changing existing columns -------------------------------------------------------------

    def rename_column(self, name: str, new_name: str) -> UpdateSchema:
        """Rename a column of the base schema (its field id stays)."""
        return self._record("rename_column", name, new_name)

    def update_column(self, name: str, new_type: IcebergType | str, doc: str | None = None) -> UpdateSchema:
        """Promote a column's type, as the spec allows: ``int`` -> ``long``, ``float`` ->
        ``double``, ``decimal(P, S)`` -> ``decimal(P', S)`` with ``P' >= P``; in format v3 also
        ``unknown`` -> any primitive type and ``date`` -> ``timestamp`` / ``timestamp_ns`` (not
        for a column an identity or bucket partition field uses). ``doc``, when given, replaces
        the column's doc.

        Java Iceberg (1.9) does not implement the v3 promotions yet: it cannot read a table
        whose ``date`` column became a timestamp.
        """
        self._record("update_column", name, new_type)
        return self if doc is None else self._record("update_column_doc", name, doc)

    def update_column_doc(self, name: str, doc: str | None) -> UpdateSchema:
        """Replace (or with None, remove) a column's doc."""
        return self._record("update_column_doc", name, doc)

    def update_column_default(self, name: str, default: Any) -> UpdateSchema:
        """Set a column's write default (format v3); the initial default never changes."""
        return self._record("update_column_default", name, default)

    def make_column_optional(self, name: str) -> UpdateSchema:
        return self._record("set_requirement", name, required=False)

    def require_column(self, name: str) -> UpdateSchema:
        """Make a column required: refused unless ``allow_incompatible_changes()`` was called
        (or the column is added in this update with a default)."""
        return self._record("set_requirement", name, required=True)

    def delete_column(self, name: str) -> UpdateSchema:
        """Delete a column of the base schema. The commit is refused (ValidationException)
        while the current partition spec or sort order uses it; identifier fields cannot be
        deleted."""
        return self._record("delete_column", name)

    # ---- moves -----------------------------------------------------------------------------------

    def move_first(self, name: str) -> UpdateSchema:
        """Move a column to the start of the table, or a nested field to the start of its struct."""
        return self._record("move", name, MoveKind.FIRST)

    def move_before(self, name: str, before_name: str) -> UpdateSchema:
        """Move a column just before another one of the same struct (columns added in this
        update can be moved, and be the reference)."""
        return self._record("move", name, MoveKind.BEFORE, before_name)

    def move_after(self, name: str, after_name: str) -> UpdateSchema:
        """Move a column just after another one of the same struct."""
        return self._record("move", name, MoveKind.AFTER, after_name)

    # ---- whole-schema changes ----------------------------------------------------------------------

    def union_by_name_with(self, new_schema: Schema | pa.Schema) -> UpdateSchema:
        """Evolve the schema into its union with ``new_schema`` (an icefloe Schema or a pyarrow
        Schema), matching fields by name at every depth, as Java's ``unionByNameWith``:
        missing fields are added (optional, at the end of their struct), types are promoted
        where the new type is wider (a narrower one is ignored), fields become optional where
        the new one is optional, new docs are taken; nothing is dropped.

        Raises:
            ValidationError: a type cannot become the new one (not a promotion, or another kind
                of nested type).
        """
        if not isinstance(new_schema, Schema):
            new_schema = _from_arrow(new_schema, self._base.format_version)
        return self._record("union_by_name_with", new_schema)

    def set_identifier_fields(self, *names: str | Iterable[str]) -> UpdateSchema:
        """Replace the identifier fields (``set_identifier_fields("id", "region")``, or one
        iterable of names; none to clear them). Names are full names in the new schema, so
        columns added in this update may be used. Each must be a required primitive column,
        not float or double, not inside a list, a map or an optional struct (checked in
        ``apply()``). Identifier fields cannot be deleted unless they are replaced here.
        """
        flat: list[str] = []
        for item in names:
            if isinstance(item, str):
                flat.append(item)
            else:
                flat.extend(item)
        return self._record("set_identifier_fields", tuple(flat))

    # ---- producing -----------------------------------------------------------------------------

    def _changes_for(self, base: TableMetadata) -> SchemaChanges:
        if base is self._changes.base:
            return self._changes
        # A retry, or a commit after the table moved on: replay the changes on the new schema.
        try:
            return _replay(base, self._log)
        except ValidationError as e:
            raise ValidationException(
                f"schema update conflicts with the table's current schema {base.current_schema_id}: {e}"
            ) from e

    def _produce(self, base: TableMetadata) -> Changes:
        changes = self._changes_for(base)
        new_schema = changes.apply()
        _check_compatible(base, new_schema)
        if new_schema.same_structure(base.schema()) and changes.last_column_id == base.last_column_id:
            return Changes()
        updates: list[TableUpdate] = [
            AddSchema(new_schema, changes.last_column_id),
            SetCurrentSchema(LAST_ADDED),
        ]
        updates.extend(_property_updates(base, changes, new_schema))
        return Changes(
            updates,
            [
                AssertCurrentSchemaId(base.current_schema_id),
                AssertLastAssignedFieldId(base.last_column_id),
            ],
        )

    def _result(self, base: TableMetadata, changes: Changes) -> Schema:
        return changes.apply_to(base).schema()


def _replay(base: TableMetadata, log: list[tuple[str, tuple[Any, ...], dict[str, Any]]]) -> SchemaChanges:
    """The changes of ``log`` applied afresh to ``base``."""
    changes = SchemaChanges(base)
    for method, args, kwargs in log:
        _apply_change(changes, method, args, kwargs)
    return changes


def _apply_change(changes: SchemaChanges, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    if method == "union_by_name_with":
        union_by_name(changes, *args)
    else:
        getattr(changes, method)(*args, **kwargs)


def _from_arrow(arrow_schema: Any, format_version: int) -> Schema:
    if not isinstance(arrow_schema, pa.Schema):
        raise ValidationError(
            f"union_by_name_with needs an icefloe Schema or a pyarrow Schema, not {arrow_schema!r}"
        )
    return arrow_to_schema_fresh(arrow_schema, format_version=format_version)


def _check_compatible(base: TableMetadata, schema: Schema) -> None:
    """Java's checks when the new schema becomes current: types and defaults allowed by the
    format version, and the default partition spec and sort order still resolve."""
    version = base.format_version
    for field in index_by_id(schema).values():
        minimum = getattr(field.field_type, "min_format_version", 1)
        if minimum > version:
            raise ValidationError(
                f"invalid type for {field.name}: {field.field_type} is not supported until v{minimum}"
            )
        if version < DEFAULT_VALUES_MIN_FORMAT_VERSION and (
            field.initial_default is not None or field.write_default is not None
        ):
            raise ValidationError(
                f"invalid default for {field.name}: non-null defaults are not supported until "
                f"v{DEFAULT_VALUES_MIN_FORMAT_VERSION}"
            )
    old = base.schema()
    for pf in base.spec().fields:
        if pf.transform.is_void:
            continue  # v1 specs keep removed partition fields as void transforms
        source = schema.find_field(pf.source_id)
        if source is None:
            raise ValidationException(
                f"cannot find source column for partition field {pf} of the current partition spec: "
                f"column '{old.find_column_name(pf.source_id)}' would be deleted; remove the "
                "partition field first"
            )
        if not pf.transform.can_transform(source.field_type):
            raise ValidationException(
                f"invalid source type {source.field_type} for transform {pf.transform} of partition field {pf}"
            )
    for sf in base.sort_order().fields:
        source = schema.find_field(sf.source_id)
        if source is None:
            raise ValidationException(
                f"cannot find source column for sort field {sf.transform}({sf.source_id}) of the default "
                f"sort order: column '{old.find_column_name(sf.source_id)}' would be deleted; replace "
                "the sort order first"
            )
        if not sf.transform.can_transform(source.field_type):
            raise ValidationException(
                f"invalid source type {source.field_type} for transform {sf.transform} of the default sort order"
            )


def _property_updates(base: TableMetadata, changes: SchemaChanges, new_schema: Schema) -> list[TableUpdate]:
    properties = base.properties
    updated: dict[str, str] = {}
    removed: list[str] = []

    mapping_json = properties.get(DEFAULT_NAME_MAPPING)
    if mapping_json is not None:
        try:
            mapping = loads_name_mapping(mapping_json, location=f"property {DEFAULT_NAME_MAPPING}")
            # Added fields are keyed by parent id; the top level is -1 for both (as Java).
            new_mapping = update_mapping(mapping, changes.updates, changes.parent_to_added)
            new_json = dumps_name_mapping(new_mapping)
            if new_json != mapping_json:
                updated[DEFAULT_NAME_MAPPING] = new_json
        except IcefloeError:
            # As Java: a mapping that cannot be read must not block the schema change.
            log.warning("could not update the name mapping in %s", DEFAULT_NAME_MAPPING, exc_info=True)

    renamed = changes.renamed_columns(new_schema)
    deleted = set(changes.deleted_columns())
    if renamed or deleted:
        for key, value in properties.items():
            prefix = next((p for p in COLUMN_PROPERTY_PREFIXES if key.startswith(p)), None)
            if prefix is None:
                continue
            column = key[len(prefix) :]
            if column in renamed:
                removed.append(key)
                updated[prefix + renamed[column]] = value
            elif column in deleted:
                removed.append(key)

    result: list[TableUpdate] = []
    removals = tuple(k for k in removed if k not in updated)
    if removals:
        result.append(RemoveProperties(removals))
    if updated:
        result.append(SetProperties(updated))
    return result
