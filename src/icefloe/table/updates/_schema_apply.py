"""Turning the recorded changes of a schema update into the new struct (Java's ``ApplyChanges``).

Private to :mod:`icefloe.table.updates._schema_changes`. The changes are keyed by field id: deleted
ids, updated fields (renames, promotions, docs, nullability, defaults; added fields too), the
ids added under each parent (:data:`TABLE_ROOT_ID` for top-level columns, else the id of the
field whose type is the struct: a struct column, a list element, a map value), and the moves
within each parent struct. Adds are applied before moves, so added fields can be moved.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

from icefloe.errors import ValidationError
from icefloe.spec.name_mapping import TOP_LEVEL_PARENT_ID
from icefloe.spec.types import IcebergType, ListType, MapType, NestedField, StructType

__all__ = ["TABLE_ROOT_ID", "Move", "MoveKind", "apply_changes", "check_unique_names"]

#: The parent id of top-level columns (the same as the name mapping's top-level parent id).
TABLE_ROOT_ID = TOP_LEVEL_PARENT_ID  # update_mapping takes the same parent key


class MoveKind(Enum):
    FIRST = "first"
    BEFORE = "before"
    AFTER = "after"


@dataclass(frozen=True, slots=True)
class Move:
    """Move field ``field_id`` first in its struct, or just before / after ``reference_id``."""

    field_id: int
    kind: MoveKind
    reference_id: int | None = None


def apply_changes(
    root: StructType,
    deletes: Sequence[int],
    updates: Mapping[int, NestedField],
    parent_to_added: Mapping[int, Sequence[int]],
    moves: Mapping[int, Sequence[Move]],
) -> StructType:
    """The struct ``root`` with the changes applied.

    Raises:
        ValidationError: a change Java refuses when applying (deleting a list element or map
            value, changing a map key), or a move whose field or reference is gone.
    """
    applier = _Applier(set(deletes), updates, parent_to_added, moves)
    result = applier.struct(root)
    fields = applier.add_and_move(result.fields, TABLE_ROOT_ID)
    return StructType(*fields)


class _Applier:
    def __init__(
        self,
        deletes: set[int],
        updates: Mapping[int, NestedField],
        parent_to_added: Mapping[int, Sequence[int]],
        moves: Mapping[int, Sequence[Move]],
    ):
        self.deletes = deletes
        self.updates = updates
        self.parent_to_added = parent_to_added
        self.moves = moves

    def struct(self, struct: StructType) -> StructType:
        fields: list[NestedField] = []
        for field in struct.fields:
            if field.field_id in self.deletes:
                continue
            result_type = self.field_type(field)
            update = self.updates.get(field.field_id, field)
            fields.append(dataclasses.replace(update, field_type=result_type))
        return StructType(*fields)

    def field_type(self, field: NestedField) -> IcebergType:
        """The new type of an existing field: its promotion, or its type with nested changes
        and the additions and moves of its struct."""
        update = self.updates.get(field.field_id)
        if update is not None and update.field_type != field.field_type:
            return update.field_type  # a primitive promotion: nothing nested to change
        result = self.nested(field.field_type)
        if field.field_id in self.parent_to_added or field.field_id in self.moves:
            if not isinstance(result, StructType):
                raise ValidationError(f"cannot add or move fields in {field.field_type} field '{field.name}'")
            result = StructType(*self.add_and_move(result.fields, field.field_id))
        return result

    def nested(self, field_type: IcebergType) -> IcebergType:
        if isinstance(field_type, StructType):
            return self.struct(field_type)
        if isinstance(field_type, ListType):
            element = field_type.element_field
            if element.field_id in self.deletes:
                raise ValidationError(f"cannot delete element type from list: {field_type}")
            element_type = self.field_type(element)
            required = self.updates.get(element.field_id, element).required
            return ListType(field_type.element_id, element_type, required)
        if isinstance(field_type, MapType):
            key = field_type.key_field
            if key.field_id in self.deletes:
                raise ValidationError(f"cannot delete map keys: {field_type}")
            if key.field_id in self.updates:
                raise ValidationError(f"cannot update map keys: {field_type}")
            if key.field_id in self.parent_to_added:
                raise ValidationError(f"cannot add fields to map keys: {field_type}")
            if self.nested(field_type.key_type) != field_type.key_type:
                raise ValidationError(f"cannot alter map keys: {field_type}")
            value = field_type.value_field
            if value.field_id in self.deletes:
                raise ValidationError(f"cannot delete value type from map: {field_type}")
            value_type = self.field_type(value)
            required = self.updates.get(value.field_id, value).required
            return MapType(field_type.key_id, field_type.key_type, field_type.value_id, value_type, required)
        return field_type

    def add_and_move(self, fields: Sequence[NestedField], parent_id: int) -> list[NestedField]:
        result = list(fields)
        result.extend(self.updates[i] for i in self.parent_to_added.get(parent_id, ()))
        for move in self.moves.get(parent_id, ()):
            index = _index_of(result, move.field_id)
            if index is None:
                raise ValidationError(f"cannot move field id {move.field_id}: it is deleted")
            to_move = result.pop(index)
            if move.kind is MoveKind.FIRST:
                result.insert(0, to_move)
                continue
            assert move.reference_id is not None
            reference = _index_of(result, move.reference_id)
            if reference is None:
                raise ValidationError(
                    f"cannot move '{to_move.name}' {move.kind.value} field id {move.reference_id}: "
                    "that field is deleted"
                )
            result.insert(reference if move.kind is MoveKind.BEFORE else reference + 1, to_move)
        return result


def _index_of(fields: Sequence[NestedField], field_id: int) -> int | None:
    return next((i for i, f in enumerate(fields) if f.field_id == field_id), None)


def check_unique_names(root: StructType) -> None:
    """Raise ValidationError when two fields of one struct share a name (a rename or an add
    collided with a sibling)."""
    stack: list[tuple[IcebergType, str]] = [(root, "")]
    while stack:
        current, path = stack.pop()
        if isinstance(current, StructType):
            seen: set[str] = set()
            for field in current.fields:
                if field.name in seen:
                    where = f"two fields of struct '{path}'" if path else "two columns"
                    raise ValidationError(f"invalid schema change: {where} would be named '{field.name}'")
                seen.add(field.name)
                stack.append((field.field_type, f"{path}.{field.name}" if path else field.name))
        elif isinstance(current, ListType):
            stack.append((current.element_type, f"{path}.element"))
        elif isinstance(current, MapType):
            stack.append((current.key_type, f"{path}.key"))
            stack.append((current.value_type, f"{path}.value"))
