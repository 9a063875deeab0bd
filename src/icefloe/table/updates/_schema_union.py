"""``union_by_name_with``: the changes that evolve a schema into its union with another one.

Java's ``UnionByNameVisitor`` (Iceberg 1.9): the new schema is walked children first, each field
matched by name (case-insensitively when the update is) with the existing field in the same
place. A field the table lacks is added as an optional column (with its doc and defaults) at
the end of its struct; a field both have becomes optional when the new one is, gets the new
one's type when that is a promotion of the existing type (a narrower new type is ignored), and
takes the new doc and write default when given. Nothing is ever deleted.

Newer Java releases also move each added top-level field after its predecessor in the new
schema; Iceberg 1.9 (and icefloe) append added fields at the end of their struct. Private to
:mod:`icefloe.table.updates.update_schema`.
"""

from __future__ import annotations

from icefloe.errors import ValidationError
from icefloe.spec.schema import Schema
from icefloe.spec.types import IcebergType, ListType, MapType, NestedField, PrimitiveType, StructType
from icefloe.table.updates._schema_changes import SchemaChanges, is_promotion_allowed

__all__ = ["union_by_name"]


def union_by_name(changes: SchemaChanges, new_schema: Schema) -> None:
    """Record in ``changes`` what makes its base schema the union with ``new_schema``.

    Raises:
        ValidationError: a field's type cannot become the new one (not a promotion, or a
            struct / list / map where the table has another kind of type).
    """
    _Union(changes).struct(new_schema.as_struct(), changes.schema.as_struct(), None)


class _Union:
    def __init__(self, changes: SchemaChanges):
        self.changes = changes
        self.existing = changes.schema
        self.case_sensitive = changes.is_case_sensitive

    def name_of(self, field: NestedField) -> str:
        name = self.existing.find_column_name(field.field_id)
        assert name is not None  # every existing field has a name
        return name

    def struct(self, struct: StructType, partner: StructType, partner_name: str | None) -> None:
        pairs = [(f, partner.field_by_name(f.name, self.case_sensitive)) for f in struct.fields]
        # Children first, as Java's visitor: nested additions get their ids before their parents'.
        for field, existing in pairs:
            if existing is not None:
                self.nested(field, existing)
        for field, existing in pairs:
            if existing is None:
                self.add(partner_name, field)
            else:
                self.update(field, existing)

    def nested(self, field: NestedField, existing: NestedField) -> None:
        new_type, old_type = field.field_type, existing.field_type
        if isinstance(new_type, PrimitiveType):
            return
        if type(new_type) is not type(old_type):
            raise ValidationError(
                f"cannot change column type: {self.name_of(existing)}: {old_type} -> {new_type}"
            )
        if isinstance(new_type, StructType):
            assert isinstance(old_type, StructType)
            self.struct(new_type, old_type, self.name_of(existing))
        elif isinstance(new_type, ListType):
            assert isinstance(old_type, ListType)
            self.nested(new_type.element_field, old_type.element_field)
            self.update(new_type.element_field, old_type.element_field)
        elif isinstance(new_type, MapType):
            assert isinstance(old_type, MapType)
            self.nested(new_type.key_field, old_type.key_field)
            self.nested(new_type.value_field, old_type.value_field)
            self.update(new_type.key_field, old_type.key_field)
            self.update(new_type.value_field, old_type.value_field)

    def add(self, parent_name: str | None, field: NestedField) -> None:
        changes = self.changes
        changes.add_column(
            parent_name, field.name, field.field_type, field.doc, field.initial_default, required=False
        )
        if field.write_default != field.initial_default:
            full_name = field.name if parent_name is None else f"{parent_name}.{field.name}"
            changes.update_column_default(full_name, field.write_default)

    def update(self, field: NestedField, existing: NestedField) -> None:
        name = self.name_of(existing)
        if field.optional and existing.required:
            self.changes.set_requirement(name, required=False)
        if not _ignorable_type_change(existing.field_type, field.field_type, self.changes.format_version):
            if not isinstance(field.field_type, PrimitiveType):
                raise ValidationError(
                    f"cannot change column type: {name}: {existing.field_type} -> {field.field_type}"
                )
            self.changes.update_column(name, field.field_type)
        if field.doc is not None and field.doc != existing.doc:
            self.changes.update_column_doc(name, field.doc)
        if field.write_default is not None and field.write_default != existing.write_default:
            self.changes.update_column_default(name, field.write_default)


def _ignorable_type_change(existing: IcebergType, new: IcebergType, format_version: int) -> bool:
    """Java's ``isIgnorableTypeUpdate``: the same type, a narrower one the existing type is a
    promotion of, or (for nested types) any nested type: their children are compared instead."""
    if isinstance(existing, PrimitiveType):
        return isinstance(new, PrimitiveType) and is_promotion_allowed(new, existing, format_version)
    return not isinstance(new, PrimitiveType)
