"""Updates as Java's REST server takes them.

Java's ``TableMetadata.Builder`` refuses ``set-current-schema`` / ``set-default-spec`` /
``set-default-sort-order`` with ``-1`` ("the last added") when the matching ``add-*`` re-added
something the table already had (it records no addition then); icefloe's builder is lenient.
Before sending, an ``add-*`` of an existing schema, spec or sort order is dropped and the
``-1`` that follows names the existing id, as Java's own client sends it.
"""

from __future__ import annotations

from collections.abc import Sequence

from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.updates import (
    LAST_ADDED,
    AddPartitionSpec,
    AddSchema,
    AddSortOrder,
    SetCurrentSchema,
    SetDefaultSortOrder,
    SetDefaultSpec,
    TableUpdate,
)

__all__ = ["as_java_sends"]


def as_java_sends(base: TableMetadata | None, updates: Sequence[TableUpdate]) -> list[TableUpdate]:
    if base is None:
        return list(updates)
    result: list[TableUpdate] = []
    reused_schema: int | None = None
    reused_spec: int | None = None
    reused_order: int | None = None
    for update in updates:
        if isinstance(update, AddSchema):
            match = next((s for s in base.schemas if s.same_structure(update.schema)), None)
            reused_schema = match.schema_id if match is not None else None
            if match is not None:
                continue
        elif isinstance(update, AddPartitionSpec):
            found = next((s for s in base.partition_specs if s.fields == update.spec.fields), None)
            reused_spec = found.spec_id if found is not None else None
            if found is not None:
                continue
        elif isinstance(update, AddSortOrder):
            order = next((o for o in base.sort_orders if o.fields == update.sort_order.fields), None)
            reused_order = order.order_id if order is not None else None
            if order is not None:
                continue
        elif (
            isinstance(update, SetCurrentSchema)
            and update.schema_id == LAST_ADDED
            and reused_schema is not None
        ):
            update = SetCurrentSchema(reused_schema)
        elif isinstance(update, SetDefaultSpec) and update.spec_id == LAST_ADDED and reused_spec is not None:
            update = SetDefaultSpec(reused_spec)
        elif (
            isinstance(update, SetDefaultSortOrder)
            and update.sort_order_id == LAST_ADDED
            and reused_order is not None
        ):
            update = SetDefaultSortOrder(reused_order)
        result.append(update)
    return result
