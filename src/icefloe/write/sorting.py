"""Ordering rows by a table's sort order before they are written (spec: "Sorting")."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from icefloe.arrow.partition import source_column
from icefloe.arrow.transforms import apply_transform
from icefloe.spec.schema import Schema
from icefloe.spec.sorting import NullOrder, SortDirection, SortField, SortOrder
from icefloe.spec.transforms import UnknownTransform

__all__ = ["can_sort", "sort_table"]


def can_sort(order: SortOrder | None, schema: Schema) -> bool:
    """Whether rows can be ordered by ``order``: it has fields, and each has a known transform
    of a column the schema has (void fields are simply skipped)."""
    if order is None or order.is_unsorted:
        return False
    for sort_field in order.fields:
        if isinstance(sort_field.transform, UnknownTransform):
            return False
        if schema.find_field(sort_field.source_id) is None:
            return False
    return True


def sort_table(table: pa.Table, order: SortOrder, schema: Schema) -> pa.Table:
    """``table``'s rows ordered by ``order`` (stable: equal keys keep their input order).

    Each sort field orders by its transform's value of the source column (identity: the value
    itself; others computed on the whole column), in its direction, with nulls
    first or last as the field says. NaN is above every number, as in Java.

    Raises:
        ValidationError: a sort field's source column is not in the schema, or its transform
            cannot be applied (see :func:`can_sort`).
    """
    if table.num_rows <= 1 or order.is_unsorted:
        return table
    keys: dict[str, Any] = {}
    sort_keys: list[tuple[str, str]] = []
    for index, sort_field in enumerate(order.fields):
        if sort_field.transform.is_void:
            continue
        key = _sort_key(table, schema, sort_field)
        nulls_first = sort_field.null_order == NullOrder.NULLS_FIRST
        descending = sort_field.direction == SortDirection.DESC
        # An explicit null flag per field: pyarrow's null placement is global in older versions.
        direction = "descending" if descending else "ascending"
        keys[f"n{index}"] = key.is_null()
        sort_keys.append((f"n{index}", "descending" if nulls_first else "ascending"))
        if pa.types.is_floating(key.type):
            # NaN sorts above every number, as in Java and Spark (Arrow puts it last either way)
            keys[f"nan{index}"] = pc.fill_null(pc.is_nan(key), False)
            sort_keys.append((f"nan{index}", direction))
        keys[f"k{index}"] = key
        sort_keys.append((f"k{index}", direction))
    if not sort_keys:
        return table
    indices = pc.sort_indices(pa.table(keys), sort_keys=sort_keys)
    return table.take(indices)


def _sort_key(table: pa.Table, schema: Schema, sort_field: SortField) -> Any:
    source = schema.field(sort_field.source_id)
    column = source_column(table, schema, sort_field.source_id)
    key = apply_transform(sort_field.transform, source.field_type, column)
    if isinstance(key, pa.ExtensionArray):
        key = key.storage  # uuid: order by the 16 bytes, unsigned
    return key
