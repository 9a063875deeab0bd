"""The pending changes of one schema update, and how they turn a schema into the next one.

``SchemaChanges`` is the bookkeeping of Java's ``SchemaUpdate``: deleted field ids, updated
fields by id (renames, type promotions, docs, nullability, defaults), added field ids by parent,
moves by parent struct, the identifier fields, the next field id. Each change method runs
Java's call-time checks against the schema the update started from and records the change;
:meth:`SchemaChanges.apply` builds the new schema (:mod:`icefloe.table.updates._schema_apply`) and runs
the checks Java runs in ``apply()``.

Names given to the change methods are full dotted names of the base schema's fields
(``"point.x"``; list elements and map values also by the short forms ``"points.x"``,
``"locations.lat"``), as in Java: after ``rename_column("a", "b")``, ``update_column("a", ...)``
still means that column. Columns added in this update are found by their full new name.

This module is private to :mod:`icefloe.table.updates.update_schema`, which replays the recorded
changes on fresh metadata when a commit is retried.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from icefloe.errors import ValidationError
from icefloe.spec.schema import Schema, assign_fresh_ids, index_by_id, index_parents
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.types import (
    DateType,
    IcebergType,
    ListType,
    MapType,
    NestedField,
    PrimitiveType,
    StructType,
    UnknownType,
    to_type,
)
from icefloe.table.updates._schema_apply import (
    TABLE_ROOT_ID,
    Move,
    MoveKind,
    apply_changes,
    check_unique_names,
)
from icefloe.table.updates._schema_rules import (
    DATE_PROMOTION_SAFE_TRANSFORMS,
    DEFAULT_VALUES_MIN_FORMAT_VERSION,
    check_doc,
    check_name,
    convert_default,
    is_promotion_allowed,
    promote_default,
    validate_identifier_field,
)

__all__ = ["DEFAULT_VALUES_MIN_FORMAT_VERSION", "TABLE_ROOT_ID", "SchemaChanges", "is_promotion_allowed"]


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
        self.parent_to_added: dict[int, list[int]] = {}
        self.added_name_to_id: dict[str, int] = {}
        self.moves: dict[int, list[Move]] = {}
        self.allow_incompatible = False
        self.is_case_sensitive = True
        self._by_id = index_by_id(self.schema)
        # Parents of the base fields and of the fields added here (for moves and checks).
        self._id_to_parent: dict[int, int] = index_parents(self.schema)
        # Identifier fields: ids (the base schema's, or names pinned by a rename) or names
        # given to set_identifier_fields, resolved in the new schema as Java does.
        self._identifiers: list[int | str] = list(self.schema.identifier_field_ids)

    @property
    def added_ids(self) -> list[int]:
        """Ids of the fields added in this update (top-level and nested), in order."""
        return [i for ids in self.parent_to_added.values() for i in ids]

    # ---- flags -------------------------------------------------------------------------------

    def allow_incompatible_changes(self) -> None:
        self.allow_incompatible = True

    def case_sensitive(self, case_sensitive: bool) -> None:
        if not isinstance(case_sensitive, bool):
            raise ValidationError(f"case_sensitive must be a bool, not {case_sensitive!r}")
        self.is_case_sensitive = case_sensitive

    # ---- adding ------------------------------------------------------------------------------

    def split_add_name(self, name: str | tuple[str, ...], parent: str | None) -> tuple[str | None, str]:
        """The (parent, field name) an ``add_column`` call means.

        With ``parent`` the name is taken literally (as Java's ``addColumn(parent, name, ...)``).
        A tuple is a path: its last element is the new name, the others name the parent. A
        string with ``.`` is split at its last dot (as Spark's ``ADD COLUMN point.z``); the
        part before must name a struct (or a list or map of structs) of the table.
        """
        if parent is not None:
            check_name(parent, "parent column name")
            return parent, name if isinstance(name, str) else ".".join(name)
        if isinstance(name, tuple):
            if not name or not all(isinstance(part, str) and part for part in name):
                raise ValidationError(f"column path must be non-empty strings, not {name!r}")
            return (".".join(name[:-1]) or None), name[-1]
        check_name(name, "column name")
        if "." not in name:
            return None, name
        prefix, leaf = name.rsplit(".", 1)
        if self._find(prefix) is None:
            raise ValidationError(
                f"cannot add column '{name}': no parent column '{prefix}' (to add a top-level column "
                f"whose name contains '.', pass the name as a tuple: ('{name}',))"
            )
        return prefix, leaf

    def add_column(
        self,
        parent: str | None,
        name: str,
        field_type: IcebergType | str,
        doc: str | None,
        default: Any,
        *,
        required: bool,
    ) -> None:
        check_name(name, "column name")
        check_doc(doc)
        resolved = to_type(field_type)
        parent_id = TABLE_ROOT_ID
        if parent is not None:
            parent_id = self._parent_struct_id(parent)
            current = self._find(f"{parent}.{name}")
            if current is not None and current.field_id not in self.deletes:
                raise ValidationError(f"cannot add column, name already exists: {parent}.{name}")
            full_name = f"{self.schema.find_column_name(parent_id)}.{name}"
        else:
            current = self._find(name)
            if current is not None and current.field_id not in self.deletes:
                raise ValidationError(f"cannot add column '{name}': the name already exists")
            full_name = name
        # Java finds added fields by their full name ("points.element.z"); the name as given
        # ("points.z") finds them too, as existing fields are found by their short names.
        aliases = {self._key(full_name), self._key(name if parent is None else f"{parent}.{name}")}
        if any(alias in self.added_name_to_id for alias in aliases):
            raise ValidationError(f"cannot add column '{full_name}': it is already added in this update")
        minimum = getattr(resolved, "min_format_version", 1)
        if minimum > self.format_version:
            raise ValidationError(
                f"cannot add column '{full_name}': type {resolved} needs format-version {minimum} "
                f"(the table is v{self.format_version})"
            )
        if required and default is None and not self.allow_incompatible:
            raise ValidationError(
                f"incompatible change: cannot add required column without a default value: {full_name} "
                "(pass default=..., or call allow_incompatible_changes() first)"
            )
        if isinstance(resolved, UnknownType) and required:
            raise ValidationError(
                f"cannot add column '{full_name}': a column of type unknown must be optional"
            )
        value = convert_default(full_name, resolved, default)
        if value is not None and self.format_version < DEFAULT_VALUES_MIN_FORMAT_VERSION:
            raise ValidationError(
                f"cannot add column '{full_name}' with a default value: default values need format-version "
                f"{DEFAULT_VALUES_MIN_FORMAT_VERSION} (the table is v{self.format_version})"
            )
        # As Java: the new column takes the next id, then its nested fields (fresh ids).
        template = StructType(NestedField(0, name, resolved, required, doc, value, value))
        field = assign_fresh_ids(template, self._next_id).fields[0]
        self.updates[field.field_id] = field
        self.parent_to_added.setdefault(parent_id, []).append(field.field_id)
        for alias in aliases:
            self.added_name_to_id[alias] = field.field_id
        if parent_id != TABLE_ROOT_ID:
            self._id_to_parent[field.field_id] = parent_id

    def _parent_struct_id(self, parent: str) -> int:
        """The id of the field whose struct type ``parent`` names (a struct column, or the
        element of a list / value of a map of structs), checked as Java does."""
        parent_field = self._find(parent)
        if parent_field is None:
            raise ValidationError(f"cannot find parent struct: {parent}")
        parent_type = parent_field.field_type
        if isinstance(parent_type, MapType):
            parent_field = parent_type.value_field  # fields are added to the map's value struct
        elif isinstance(parent_type, ListType):
            parent_field = parent_type.element_field  # ... and to the list's element struct
        if not isinstance(parent_field.field_type, StructType):
            raise ValidationError(f"cannot add to non-struct column: {parent}: {parent_field.field_type}")
        parent_id = parent_field.field_id
        deleted = next((i for i in (parent_id, *self._ancestors(parent_id)) if i in self.deletes), None)
        if deleted is not None:
            raise ValidationError(f"cannot add to a column that will be deleted: {parent}")
        if self._map_key_of(parent_id) is not None:
            raise ValidationError(f"cannot add fields to map keys: {parent}")
        return parent_id

    # ---- changing existing columns -------------------------------------------------------------

    def delete_column(self, name: str) -> None:
        field = self._find(name)
        if field is None:
            raise ValidationError(f"cannot delete missing column: {name}")
        field_id = field.field_id
        if any(p == field_id or field_id in self._ancestors(p) for p in self.parent_to_added):
            raise ValidationError(f"cannot delete a column that has additions: {name}")
        if field_id in self.updates:
            raise ValidationError(f"cannot delete a column that has updates: {name}")
        self._check_not_collection_part(field_id, name, "delete")
        if field_id not in self.deletes:
            self.deletes.append(field_id)

    def rename_column(self, name: str, new_name: str) -> None:
        check_name(new_name, "new column name")
        field = self._find(name)
        if field is None:
            raise ValidationError(f"cannot rename missing column: {name}")
        if field.field_id in self.deletes:
            raise ValidationError(f"cannot rename a column that will be deleted: {field.name}")
        self._check_not_collection_part(field.field_id, name, "rename")
        current = self.updates.get(field.field_id, field)
        self.updates[field.field_id] = dataclasses.replace(current, name=new_name)
        # As Java: an identifier field named by its old name stays an identifier field. Names
        # inside the renamed field are pinned to their ids too (Java would lose them).
        for i, entry in enumerate(self._identifiers):
            if isinstance(entry, str):
                target = self._find(entry)
                if target is not None and (
                    target.field_id == field.field_id or field.field_id in self._ancestors(target.field_id)
                ):
                    self._identifiers[i] = target.field_id

    def update_column(self, name: str, new_type: IcebergType | str) -> None:
        field = self._find_for_update(name)
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
            initial_default=promote_default(field.initial_default, field.field_type, target),
            write_default=promote_default(field.write_default, field.field_type, target),
        )

    def update_column_doc(self, name: str, doc: str | None) -> None:
        check_doc(doc)
        field = self._find_for_update(name)
        if field.doc == doc:
            return
        self.updates[field.field_id] = dataclasses.replace(field, doc=doc)

    def update_column_default(self, name: str, default: Any) -> None:
        field = self._find_for_update(name)
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
        field = self._find_for_update(name, check_deleted=False)
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

    # ---- moves -------------------------------------------------------------------------------

    def move(self, name: str, kind: MoveKind, reference: str | None = None) -> None:
        """Java's ``moveFirst`` / ``moveBefore`` / ``moveAfter``: within the field's struct."""
        field_id = self._find_for_move(name)
        if field_id is None:
            raise ValidationError(f"cannot move missing column: {name}")
        reference_id = None
        if reference is not None:
            reference_id = self._find_for_move(reference)
            if reference_id is None:
                raise ValidationError(f"cannot move {name} {kind.value} missing column: {reference}")
            if reference_id == field_id:
                raise ValidationError(f"cannot move {name} {kind.value} itself")
        for what, fid in (("column", field_id), ("reference column", reference_id)):
            if fid is not None and fid in self.deletes:
                raise ValidationError(f"cannot move {name}: the {what} will be deleted")
        parent_id = self._id_to_parent.get(field_id)
        if parent_id is not None:
            parent_type = self._by_id[parent_id].field_type
            if not isinstance(parent_type, StructType):
                raise ValidationError(f"cannot move fields in non-struct type: {parent_type}")
        if reference_id is not None and self._id_to_parent.get(reference_id) != parent_id:
            raise ValidationError(f"cannot move field {name} to a different struct")
        key = TABLE_ROOT_ID if parent_id is None else parent_id
        self.moves.setdefault(key, []).append(Move(field_id, kind, reference_id))

    # ---- identifier fields -------------------------------------------------------------------

    def set_identifier_fields(self, names: Iterable[str]) -> None:
        """Replace the identifier fields by these full names of the new schema (as Java,
        resolved when the schema is built, so columns added in this update may be named)."""
        entries: list[int | str] = []
        for name in names:
            check_name(name, "identifier field name")
            if name not in entries:
                entries.append(name)
        self._identifiers = entries

    # ---- the result --------------------------------------------------------------------------

    def apply(self) -> Schema:
        """The new schema (schema id 0: the metadata builder assigns the real one).

        Raises:
            ValidationError: an identifier field (or a struct holding one) is deleted, an
                identifier field is missing or does not qualify, a change Java refuses when
                applying, or two fields of a struct would share a name.
        """
        self._check_identifier_deletes()
        struct = apply_changes(
            self.schema.as_struct(), self.deletes, self.updates, self.parent_to_added, self.moves
        )
        check_unique_names(struct)
        lookup = Schema(*struct.fields)
        by_id = index_by_id(struct)
        parents = index_parents(struct)
        identifier_ids: list[int] = []
        for entry in self._identifiers:
            if isinstance(entry, int):
                field_id, label = entry, self.schema.find_column_name(entry) or str(entry)
            else:
                found = lookup.find_field(entry, self.is_case_sensitive)
                if found is None:
                    raise ValidationError(
                        f"cannot add field {entry} as an identifier field: not found in current schema "
                        "or added columns"
                    )
                field_id, label = found.field_id, entry
            validate_identifier_field(label, by_id[field_id], by_id, parents)
            if field_id not in identifier_ids:
                identifier_ids.append(field_id)
        return Schema(*struct.fields, identifier_field_ids=identifier_ids)

    def _check_identifier_deletes(self) -> None:
        """Java: an identifier field of the update (named, or kept from the base schema) must
        not be deleted, directly or with a struct that holds it."""
        for entry in self._identifiers:
            field = self.schema.find_field(entry, self.is_case_sensitive)
            if field is None:
                continue
            name = self.schema.find_column_name(field.field_id)
            if field.field_id in self.deletes:
                raise ValidationError(
                    f"cannot delete identifier field {name} (id {field.field_id}). To force deletion, "
                    "also call set_identifier_fields to update identifier fields."
                )
            for parent_id in self._ancestors(field.field_id):
                if parent_id in self.deletes:
                    raise ValidationError(
                        f"cannot delete field {self.schema.find_column_name(parent_id)} as it will delete "
                        f"nested identifier field {name}"
                    )

    def renamed_columns(self, new_schema: Schema) -> dict[str, str]:
        """Old full name -> new full name of the existing fields this update renames (Java:
        the updated fields whose full name changed)."""
        old_names, new_names = self.schema.id_to_name(), new_schema.id_to_name()
        added = set(self.added_ids)
        return {
            old_names[field_id]: new_names[field_id]
            for field_id in self.updates
            if field_id not in added
            and field_id in new_names
            and old_names.get(field_id, new_names[field_id]) != new_names[field_id]
        }

    def deleted_columns(self) -> list[str]:
        return [name for i in self.deletes if (name := self.schema.find_column_name(i)) is not None]

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

    def _ancestors(self, field_id: int) -> list[int]:
        result = []
        parent = self._id_to_parent.get(field_id)
        while parent is not None:
            result.append(parent)
            parent = self._id_to_parent.get(parent)
        return result

    def _map_key_of(self, field_id: int) -> NestedField | None:
        """The map column whose key is, or holds, this field; None when it is no map key."""
        child = field_id
        for parent_id in self._ancestors(field_id):
            parent_type = self._by_id[parent_id].field_type
            if isinstance(parent_type, MapType) and parent_type.key_id == child:
                return self._by_id[parent_id]
            child = parent_id
        return None

    def _check_not_collection_part(self, field_id: int, name: str, verb: str) -> None:
        """Java refuses changes to map keys, deleting list elements and map values; renaming
        them (which Java ignores) is refused here too."""
        if self._map_key_of(field_id) is not None:
            raise ValidationError(f"cannot {verb} map keys: {name}")
        parent_id = self._id_to_parent.get(field_id)
        if parent_id is None:
            return
        parent_type = self._by_id[parent_id].field_type
        if isinstance(parent_type, ListType):
            raise ValidationError(f"cannot {verb} the element of a list: {name}")
        if isinstance(parent_type, MapType):
            raise ValidationError(f"cannot {verb} the value of a map: {name}")

    def _find_for_update(self, name: str, *, check_deleted: bool = True) -> NestedField:
        """The field as this update leaves it so far: an existing field with its pending
        changes, or a field added in this update (Java's ``findForUpdate``)."""
        existing = self._find(name)
        if existing is not None:
            field = self.updates.get(existing.field_id, existing)
            if self._map_key_of(existing.field_id) is not None:
                raise ValidationError(f"cannot update map keys: {name}")
        else:
            added = self.added_name_to_id.get(self._key(name))
            if added is None:
                raise ValidationError(f"cannot update missing column: {name}")
            field = self.updates[added]
        if check_deleted and field.field_id in self.deletes:
            raise ValidationError(f"cannot update a column that will be deleted: {field.name}")
        return field

    def _find_for_move(self, name: str) -> int | None:
        if not isinstance(name, str):
            raise ValidationError(f"column name must be a string, not {name!r}")
        added = self.added_name_to_id.get(self._key(name))
        if added is not None:
            return added
        field = self._find(name)
        return None if field is None else field.field_id

    def _check_date_promotion(self, name: str, field_id: int, target: IcebergType) -> None:
        """Spec: no promotion of a partition source whose transform would then give other values
        (identity and bucket values of a date differ from those of its timestamp)."""
        for spec in self.base.partition_specs:
            for pf in spec.fields:
                if pf.source_id == field_id and not isinstance(pf.transform, DATE_PROMOTION_SAFE_TRANSFORMS):
                    raise ValidationError(
                        f"cannot change column type: {name}: date -> {target}: partition field "
                        f"'{pf.name}' ({pf.transform}) of partition spec {spec.spec_id} would produce "
                        "different values"
                    )
