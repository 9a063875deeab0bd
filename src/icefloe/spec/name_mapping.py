"""Name mapping (spec "Column Projection"): field ids for data files written without them.

A name mapping lists, for every field id, the names a column has had in data files (files
imported from Hive or written by other tools carry names, not Iceberg ids). Readers look a file
column up by its name path (``find("location", "lat")`` or ``find("location.lat")``) to learn
the field id it holds. The table stores its mapping as JSON in the ``schema.name-mapping.default``
property (see :mod:`icefloe.serde.name_mapping_json`).

:func:`create_mapping_from_schema` builds the mapping of a schema (each field under its current
name; list elements as ``element``, map keys and values as ``key`` / ``value``), and
:func:`update_mapping` follows schema changes as Java's ``MappingUtil.update`` does: a renamed
column keeps its old names as aliases, new columns are added, and a name that now belongs to a
different field id is taken away from the field that had it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from icefloe.errors import ValidationError
from icefloe.spec.properties import DEFAULT_NAME_MAPPING
from icefloe.spec.schema import Schema
from icefloe.spec.types import IcebergType, ListType, MapType, NestedField, StructType

__all__ = [
    "DEFAULT_NAME_MAPPING",
    "TOP_LEVEL_PARENT_ID",
    "MappedField",
    "NameMapping",
    "create_mapping_from_schema",
    "update_mapping",
]

#: The table property that holds the table's name mapping as JSON.
#: The parent id that ``update_mapping``'s ``adds`` uses for new top-level columns (as Java).
TOP_LEVEL_PARENT_ID = -1


@dataclass(frozen=True, slots=True)
class MappedField:
    """One field of a name mapping: its id (None when unknown), its names, its nested fields."""

    field_id: int | None
    names: tuple[str, ...]
    fields: tuple[MappedField, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.names, str):
            object.__setattr__(self, "names", (self.names,))
        else:
            # Names form a set (as in Java): keep the first occurrence of each, in order.
            object.__setattr__(self, "names", tuple(dict.fromkeys(self.names)))
        object.__setattr__(self, "fields", tuple(self.fields))

    def __str__(self) -> str:
        names = ", ".join(self.names)
        nested = f" {_fields_str(self.fields)}" if self.fields else ""
        return f"([{names}] -> {self.field_id if self.field_id is not None else '?'}{nested})"


def _fields_str(fields: Sequence[MappedField]) -> str:
    return "[" + ", ".join(str(f) for f in fields) + "]"


@dataclass(frozen=True, slots=True)
class NameMapping:
    """An immutable name mapping: the mapped top-level fields, each with its nested fields."""

    fields: tuple[MappedField, ...] = ()
    _by_name: dict[str, MappedField] | None = field(default=None, init=False, repr=False, compare=False)
    _by_id: dict[int, MappedField] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))

    def find(self, *names: str) -> MappedField | None:
        """The field with this name path, or None.

        The names are joined with dots, as in Java: ``find("a", "b")`` is ``find("a.b")``.
        """
        if self._by_name is None:
            object.__setattr__(self, "_by_name", _index_by_name(self.fields))
        assert self._by_name is not None
        return self._by_name.get(".".join(names))

    def find_by_id(self, field_id: int) -> MappedField | None:
        """The field with this id (at any depth), or None.

        Raises:
            ValidationError: the mapping gives one id to two fields.
        """
        if self._by_id is None:
            object.__setattr__(self, "_by_id", _index_by_id(self.fields))
        assert self._by_id is not None
        return self._by_id.get(field_id)

    def __iter__(self) -> Iterator[MappedField]:
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    def __str__(self) -> str:
        return _fields_str(self.fields)


def _index_by_name(fields: Sequence[MappedField]) -> dict[str, MappedField]:
    result: dict[str, MappedField] = {}
    for mapped in fields:
        nested = _index_by_name(mapped.fields) if mapped.fields else {}
        for name in mapped.names:
            for nested_name, nested_field in nested.items():
                result[f"{name}.{nested_name}"] = nested_field
            result[name] = mapped
    return result


def _index_by_id(fields: Sequence[MappedField]) -> dict[int, MappedField]:
    result: dict[int, MappedField] = {}
    stack = list(reversed(fields))
    while stack:
        mapped = stack.pop()
        if mapped.field_id is not None:
            if mapped.field_id in result:
                raise ValidationError(f"invalid name mapping: field id {mapped.field_id} is mapped twice")
            result[mapped.field_id] = mapped
        stack.extend(reversed(mapped.fields))
    return result


# ---- building from a schema -------------------------------------------------------------------


def create_mapping_from_schema(schema: Schema | StructType) -> NameMapping:
    """The mapping of a schema: every field (at any depth) under its current name."""
    struct = schema.as_struct() if isinstance(schema, Schema) else schema
    return NameMapping(_mapped_fields(struct))


def _mapped_fields(field_type: IcebergType) -> tuple[MappedField, ...]:
    if isinstance(field_type, StructType):
        return tuple(
            MappedField(f.field_id, (f.name,), _mapped_fields(f.field_type)) for f in field_type.fields
        )
    if isinstance(field_type, ListType):
        return (MappedField(field_type.element_id, ("element",), _mapped_fields(field_type.element_type)),)
    if isinstance(field_type, MapType):
        return (
            MappedField(field_type.key_id, ("key",), _mapped_fields(field_type.key_type)),
            MappedField(field_type.value_id, ("value",), _mapped_fields(field_type.value_type)),
        )
    return ()


# ---- following schema changes -----------------------------------------------------------------


def update_mapping(
    mapping: NameMapping,
    updates: Mapping[int, NestedField],
    adds: Mapping[int, Iterable[int]],
) -> NameMapping:
    """The mapping after a schema change, as Java's ``MappingUtil.update``.

    Args:
        mapping: the current mapping.
        updates: the changed and added fields by field id, as they are now (a renamed field
            under its new name; every added field must be here too).
        adds: the ids of added fields by parent field id (:data:`TOP_LEVEL_PARENT_ID` for new
            top-level columns).

    A renamed field keeps its old names and gains the new one. An added field is mapped under
    its name (with its nested fields). When a name now belongs to another field id (a column
    dropped and re-added under the same name), the old field loses that name. When an added
    field reuses an id the mapping already has, the two entries are merged.

    Raises:
        ValidationError: an id in ``adds`` is missing from ``updates``.
    """
    for parent_id, child_ids in adds.items():
        for child_id in child_ids:
            if child_id not in updates:
                raise ValidationError(
                    f"cannot update name mapping: added field id {child_id} (parent {parent_id}) "
                    "is not in the updates"
                )
    updater = _Updater(updates, {k: tuple(v) for k, v in adds.items()})
    return NameMapping(updater.top_level(mapping.fields))


class _Updater:
    def __init__(self, updates: Mapping[int, NestedField], adds: Mapping[int, tuple[int, ...]]):
        self.updates = updates
        self.adds = adds

    def top_level(self, fields: tuple[MappedField, ...]) -> tuple[MappedField, ...]:
        return self._add_new_fields(self._fields(fields), TOP_LEVEL_PARENT_ID)

    def _fields(self, fields: tuple[MappedField, ...]) -> tuple[MappedField, ...]:
        results = [self._field(f) for f in fields]
        # A field renamed to a name a sibling had: the sibling gives the name up.
        assignments = {
            update.name: update.field_id
            for f in results
            if f.field_id is not None and (update := self.updates.get(f.field_id)) is not None
        }
        return tuple(_remove_reassigned_names(f, assignments) for f in results)

    def _field(self, mapped: MappedField) -> MappedField:
        names = mapped.names
        update = self.updates.get(mapped.field_id) if mapped.field_id is not None else None
        if update is not None:
            names = (*names, update.name)
        nested = self._fields(mapped.fields) if mapped.fields else ()
        if mapped.field_id is not None:
            nested = self._add_new_fields(nested, mapped.field_id)
        return MappedField(mapped.field_id, names, nested)

    def _add_new_fields(self, fields: tuple[MappedField, ...], parent_id: int) -> tuple[MappedField, ...]:
        to_add = [self.updates[i] for i in self.adds.get(parent_id, ())]
        if not to_add:
            return fields
        new_fields = [MappedField(f.field_id, (f.name,), _mapped_fields(f.field_type)) for f in to_add]
        if not fields:
            return tuple(new_fields)
        assignments = {f.name: f.field_id for f in to_add}
        additions = {f.field_id: f for f in new_fields}
        merged_ids: set[int] = set()
        result: list[MappedField] = []
        for existing in fields:
            stripped = _remove_reassigned_names(existing, assignments)
            addition = additions.get(stripped.field_id) if stripped.field_id is not None else None
            if addition is not None and stripped.field_id is not None:
                merged_ids.add(stripped.field_id)
                result.append(_merge(stripped, addition))
            else:
                result.append(stripped)
        result.extend(f for f in new_fields if f.field_id not in merged_ids)
        return tuple(result)


def _remove_reassigned_names(mapped: MappedField, assignments: Mapping[str, int]) -> MappedField:
    kept = tuple(n for n in mapped.names if assignments.get(n, mapped.field_id) == mapped.field_id)
    if len(kept) == len(mapped.names):
        return mapped
    return MappedField(mapped.field_id, kept, mapped.fields)


def _merge(stale: MappedField, added: MappedField) -> MappedField:
    return MappedField(
        added.field_id, (*stale.names, *added.names), _merge_nested(stale.fields, added.fields)
    )


def _merge_nested(stale: tuple[MappedField, ...], added: tuple[MappedField, ...]) -> tuple[MappedField, ...]:
    if not stale:
        return added
    if not added:
        return stale
    added_by_id = {f.field_id: f for f in added}
    merged_ids = set()
    result = []
    for existing in stale:
        match = added_by_id.get(existing.field_id)
        if match is not None:
            merged_ids.add(existing.field_id)
            result.append(_merge(existing, match))
        else:
            result.append(existing)
    result.extend(f for f in added if f.field_id not in merged_ids)
    return tuple(result)
