"""The updates that replace a table's definition (Java's ``TableMetadata.buildReplacement``).

A replace-table transaction keeps the table (its uuid, snapshots, refs other than ``main``,
history, statistics and every earlier schema, spec and sort order) and gives it a new current
schema, partition spec, sort order, location and properties. As in Java:

- column ids are reused for columns whose full name (``a``, ``s.x``, ``l.element``,
  ``m.key``) exists in the current schema; other columns get ids above ``last-column-id``;
- partition field ids are reused for the same (source column, transform) in any earlier spec
  (v2+); v1 carries the current spec's fields forward, replacing dropped ones by ``void``;
- the ``main`` branch is removed: the table has no current snapshot until one is added;
- properties are added to the existing ones (none is removed), with Java's new-table
  default ``write.parquet.compression-codec=zstd`` unless they name a codec;
  ``format-version`` upgrades;
- a schema, spec or sort order equal to an existing one is reused by ``MetadataBuilder``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping

from icefloe.errors import ValidationError
from icefloe.spec.partitioning import PartitionField, PartitionSpec
from icefloe.spec.properties import persisted_properties
from icefloe.spec.schema import Schema
from icefloe.spec.snapshots import MAIN_BRANCH
from icefloe.spec.sorting import UNSORTED_SORT_ORDER, SortField, SortOrder
from icefloe.spec.table_metadata import SUPPORTED_FORMAT_VERSIONS, TableMetadata
from icefloe.spec.transforms import parse_transform
from icefloe.spec.types import IcebergType, ListType, MapType, NestedField, StructType
from icefloe.spec.updates import (
    LAST_ADDED,
    AddPartitionSpec,
    AddSchema,
    AddSortOrder,
    RemoveSnapshotRef,
    SetCurrentSchema,
    SetDefaultSortOrder,
    SetDefaultSpec,
    SetLocation,
    SetProperties,
    TableUpdate,
    UpgradeFormatVersion,
)

__all__ = ["assign_ids_reusing", "updates_for_replacement"]

FORMAT_VERSION = "format-version"


def updates_for_replacement(
    base: TableMetadata,
    schema: Schema,
    spec: PartitionSpec,
    sort_order: SortOrder,
    location: str,
    properties: Mapping[str, str] | None = None,
) -> list[TableUpdate]:
    """The updates that turn ``base`` into the replacement table.

    Args:
        base: the table being replaced.
        schema: the new schema, with ids of its own (``spec`` and ``sort_order`` refer to them).
        spec: the new partition spec, over ``schema``.
        sort_order: the new sort order, over ``schema``.
        location: the table location after the replacement.
        properties: properties to set; ``format-version`` upgrades the table (never downgrades).

    Raises:
        ValidationError: an unknown or lower ``format-version``, a type the format version does
            not allow, or a spec / sort order naming a column ``schema`` lacks.
    """
    props = dict(properties or {})
    format_version = _format_version(props.pop(FORMAT_VERSION, None), base.format_version)
    last_column_id = base.last_column_id

    def next_column_id() -> int:
        nonlocal last_column_id
        last_column_id += 1
        return last_column_id

    fresh_schema = assign_ids_reusing(schema, base.schema(), next_column_id)
    for column in fresh_schema.fields:
        _check_type_allowed(column.field_type, format_version, column.name)
    fresh_spec = _replacement_spec(spec, schema, fresh_schema, base)
    fresh_order = _renumbered_order(sort_order, schema, fresh_schema)

    updates: list[TableUpdate] = []
    if format_version != base.format_version:
        updates.append(UpgradeFormatVersion(format_version))
    if MAIN_BRANCH in base.refs:
        updates.append(RemoveSnapshotRef(MAIN_BRANCH))
    updates += [
        AddSchema(fresh_schema, last_column_id),
        SetCurrentSchema(LAST_ADDED),
        AddPartitionSpec(fresh_spec),
        SetDefaultSpec(LAST_ADDED),
        AddSortOrder(fresh_order),
        SetDefaultSortOrder(LAST_ADDED),
        SetLocation(location),
    ]
    updates.append(SetProperties(persisted_properties(props)))
    return updates


def _format_version(text: str | None, current: int) -> int:
    if text is None:
        return current
    try:
        version = int(text)
    except ValueError:
        raise ValidationError(f"format-version must be an integer, not {text!r}") from None
    if version not in SUPPORTED_FORMAT_VERSIONS:
        raise ValidationError(
            f"unsupported format-version {version}; icefloe supports {list(SUPPORTED_FORMAT_VERSIONS)}"
        )
    if version < current:
        raise ValidationError(f"cannot downgrade format-version from {current} to {version}")
    return version


def _check_type_allowed(field_type: IcebergType, format_version: int, name: str) -> None:
    minimum = getattr(field_type, "min_format_version", 1)
    if minimum > format_version:
        raise ValidationError(f"column '{name}': type {field_type} needs format-version {minimum} or later")
    if isinstance(field_type, StructType):
        for child in field_type.fields:
            _check_type_allowed(child.field_type, format_version, f"{name}.{child.name}")
    elif isinstance(field_type, ListType):
        _check_type_allowed(field_type.element_type, format_version, f"{name}.element")
    elif isinstance(field_type, MapType):
        _check_type_allowed(field_type.key_type, format_version, f"{name}.key")
        _check_type_allowed(field_type.value_type, format_version, f"{name}.value")


# ---- schema ----------------------------------------------------------------------------------


def assign_ids_reusing(schema: Schema, base: Schema, next_id: Callable[[], int]) -> Schema:
    """``schema`` renumbered: a field whose full name exists in ``base`` takes its id there,
    any other field the next id of ``next_id`` (Java's ``TypeUtil.assignFreshIds(schema,
    baseSchema, nextId)``: a struct's fields are numbered before their children).

    Identifier fields are carried over by name.
    """
    ids_by_name = {name: field_id for field_id, name in base.id_to_name().items()}

    def id_for(path: str) -> int:
        found = ids_by_name.get(path)
        return found if found is not None else next_id()

    def fresh_struct(struct: StructType, prefix: str) -> StructType:
        ids = [id_for(prefix + f.name) for f in struct.fields]
        return StructType(
            *(
                NestedField(
                    new_id,
                    f.name,
                    fresh_type(f.field_type, prefix + f.name),
                    f.required,
                    f.doc,
                    f.initial_default,
                    f.write_default,
                )
                for new_id, f in zip(ids, struct.fields)
            )
        )

    def fresh_type(field_type: IcebergType, path: str) -> IcebergType:
        if isinstance(field_type, StructType):
            return fresh_struct(field_type, path + ".")
        if isinstance(field_type, ListType):
            element_id = id_for(path + ".element")
            element = fresh_type(field_type.element_type, path + ".element")
            return ListType(element_id, element, field_type.element_required)
        if isinstance(field_type, MapType):
            key_id, value_id = id_for(path + ".key"), id_for(path + ".value")
            return MapType(
                key_id,
                fresh_type(field_type.key_type, path + ".key"),
                value_id,
                fresh_type(field_type.value_type, path + ".value"),
                field_type.value_required,
            )
        return field_type

    struct = fresh_struct(schema.as_struct(), "")
    identifier_ids: list[int] = []
    if schema.identifier_field_ids:
        old_names = schema.id_to_name()
        fresh = Schema(*struct.fields)
        identifier_ids = [fresh.field(old_names[i]).field_id for i in schema.identifier_field_ids]
    return Schema(*struct.fields, identifier_field_ids=identifier_ids)


def _renumbered_source(source_id: int, old: Schema, new: Schema, what: str) -> int:
    name = old.find_column_name(source_id)
    if name is None:
        raise ValidationError(f"{what}: source column id {source_id} is not in the schema")
    return new.field(name).field_id


# ---- partition spec --------------------------------------------------------------------------


def _replacement_spec(spec: PartitionSpec, old: Schema, new: Schema, base: TableMetadata) -> PartitionSpec:
    """``spec`` re-pointed to ``new``'s columns, with partition field ids as Java assigns them."""
    wanted = [
        (_renumbered_source(f.source_id, old, new, f"partition field '{f.name}'"), f.transform, f.name)
        for f in spec.fields
    ]
    next_field_id = itertools.count(base.last_partition_id + 1)
    if base.format_version > 1:  # Java decides by the replaced table's version
        # Reuse the id a (source, transform) pair had in any spec; the highest if several.
        known: dict[tuple[int, str], int] = {}
        for old_spec in base.partition_specs:
            for pf in old_spec.fields:
                key = (pf.source_id, str(pf.transform))
                known[key] = max(known.get(key, pf.field_id), pf.field_id)
        fields = []
        for source_id, transform, name in wanted:
            key = (source_id, str(transform))
            if key not in known:
                known[key] = next(next_field_id)
            fields.append(PartitionField(source_id, known[key], transform, name))
        return PartitionSpec(tuple(fields), spec_id=0)
    # v1: partition tuples are positional, so every field of the current spec stays, in place;
    # the ones the new spec drops become void (renamed if their name is taken).
    pending = {
        (source_id, str(transform)): (source_id, transform, name) for source_id, transform, name in wanted
    }
    new_names = {name for _, _, name in wanted}
    fields = []
    for pf in base.spec().fields:
        match = pending.pop((pf.source_id, str(pf.transform)), None)
        if match is not None:
            fields.append(PartitionField(match[0], pf.field_id, match[1], match[2]))
        else:
            name = f"{pf.name}_{pf.field_id}" if pf.name in new_names else pf.name
            fields.append(PartitionField(pf.source_id, pf.field_id, parse_transform("void"), name))
    for source_id, transform, name in pending.values():
        fields.append(PartitionField(source_id, next(next_field_id), transform, name))
    return PartitionSpec(tuple(fields), spec_id=0)


# ---- sort order ------------------------------------------------------------------------------


def _renumbered_order(order: SortOrder, old: Schema, new: Schema) -> SortOrder:
    if order.is_unsorted:
        return UNSORTED_SORT_ORDER
    fields = tuple(
        SortField(
            _renumbered_source(f.source_id, old, new, "sort field"), f.transform, f.direction, f.null_order
        )
        for f in order.fields
    )
    return SortOrder(fields, order_id=1)
