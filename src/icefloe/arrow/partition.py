"""Splitting an Arrow table into one slice per partition (for writers).

:func:`partition_keys` computes each row's partition tuple with the spec's transforms, on whole
arrays (:mod:`icefloe.arrow.transforms`), and groups the rows by it. Only the distinct
partition values of each field become Python objects.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from icefloe.arrow.convert import from_arrow_array
from icefloe.arrow.transforms import apply_transform
from icefloe.errors import ValidationError
from icefloe.spec.partitioning import PartitionField, PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.spec.types import IcebergType, StructType

__all__ = ["partition_keys", "source_column", "transform_array"]


def source_column(table: pa.Table, schema: Schema, source_id: int) -> pa.Array:
    """The values of the column with id ``source_id`` (at any struct depth) as one array.

    A value nested in a null struct is null. Columns are found by their name in ``schema``.

    Raises:
        ValidationError: the column is missing, or nested in a list or map.
    """
    name = schema.find_column_name(source_id)
    if name is None:
        raise ValidationError(f"partition source column id {source_id} is not in the schema")
    parts = name.split(".")
    current: IcebergType = schema.as_struct()
    for part in parts[:-1]:
        child = current.field_by_name(part) if isinstance(current, StructType) else None
        if child is None or not isinstance(child.field_type, StructType):
            raise ValidationError(f"partition source column '{name}' is inside a list or map")
        current = child.field_type
    if parts[0] not in table.column_names:
        raise ValidationError(f"partition source column '{parts[0]}' is not in the data")
    array = table.column(parts[0]).combine_chunks()
    for part in parts[1:]:
        struct_type = array.type
        index = struct_type.get_field_index(part)
        if index < 0:
            raise ValidationError(f"partition source column '{name}' is not in the data")
        array = array.flatten()[index]  # flatten() applies the struct's nulls to its children
    return array


def transform_array(array: pa.Array, field: PartitionField, source_type: IcebergType) -> pa.Array:
    """The partition values of ``field`` for each value of its source column, as an Arrow array.

    The result has the Arrow type of the transform's result type (``day`` gives ``date32``);
    see :func:`icefloe.arrow.transforms.apply_transform`, which computes it.

    Raises:
        ValidationError: the transform does not apply to the source type.
    """
    return apply_transform(field.transform, source_type, array)


# ---------------------------------------------------------------------------------------------
# grouping


def _encode(array: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """Per-row codes (-1 for null) and the distinct non-null values, in first-appearance order."""
    if isinstance(array, pa.ExtensionArray):
        codes, dictionary = _encode(array.storage)
        return codes, pa.ExtensionArray.from_storage(array.type, dictionary)
    if pa.types.is_null(array.type):
        return np.full(len(array), -1, dtype=np.int64), array.slice(0, 0)
    encoded = array.dictionary_encode()
    codes = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    return codes, encoded.dictionary


def _compact(codes: np.ndarray) -> tuple[np.ndarray, int]:
    """Codes renumbered 0..n-1 (keeping their order), and n."""
    distinct, inverse = np.unique(codes, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64), len(distinct)


def _dense_groups(codes_per_field: list[np.ndarray], num_rows: int) -> tuple[np.ndarray, int]:
    """A dense group id (0..G-1) per row for the distinct combinations of the fields' codes
    (-1 for null), and G. Combined codes are compacted before they could overflow, and through
    a count per possible code (no sort) while the code space is small."""
    combined = codes_per_field[0] + 1
    size = int(combined.max()) + 1
    for codes in codes_per_field[1:]:
        width = int(codes.max()) + 2
        if size * width >= 1 << 62:
            combined, size = _compact(combined)
        combined = combined * width + codes + 1
        size *= width
    if size > 4 * num_rows + 1024:
        return _compact(combined)
    present = np.bincount(combined, minlength=size) > 0
    if present.all():
        return combined, size
    renumber = np.cumsum(present) - 1
    return renumber[combined], int(renumber[-1]) + 1


def _sort_key(values: tuple[Any, ...]) -> tuple[Any, ...]:
    # None first, then values; values within one field always have one Python type
    return tuple((v is not None, v) if v is not None else (False, 0) for v in values)


def partition_keys(
    table: pa.Table, spec: PartitionSpec, schema: Schema
) -> list[tuple[tuple[Any, ...], pa.Table]]:
    """Group the rows of ``table`` by their partition under ``spec``.

    Args:
        table: the rows, with the columns of ``schema`` (by name), e.g. from
            ``to_requested_schema``.
        spec: the partition spec.
        schema: the table schema the spec's source ids refer to.

    Returns:
        one ``(partition tuple, rows)`` pair per distinct partition, ordered by the partition
        values (nulls first). Tuples are in spec field order, in icefloe's representation
        (day -> int days, identity of a timestamp -> int micros, ...), None for null. The row
        tables are slices of one reordered copy of ``table``; rows keep their relative order.
        An unpartitioned spec gives one pair ``((), table)``; an empty table gives ``[]``.

    Raises:
        ValidationError: a source column is missing, or a transform does not apply to it.
    """
    if table.num_rows == 0:
        return []
    if not spec.fields:
        return [((), table)]
    codes_per_field: list[np.ndarray] = []
    values_per_field: list[list[Any]] = []
    for field in spec.fields:
        source = schema.find_field(field.source_id)
        if source is None and field.transform.is_void:
            # A v1 table keeps a removed field as void; its column may be dropped since. Void is null.
            codes_per_field.append(np.full(table.num_rows, -1, dtype=np.int64))
            values_per_field.append([])
            continue
        if source is None:
            raise ValidationError(
                f"partition field '{field.name}': source column id {field.source_id} is not in the schema"
            )
        array = source_column(table, schema, field.source_id)
        result_type = field.transform.result_type(source.field_type)
        transformed = transform_array(array, field, source.field_type)
        codes, distinct = _encode(transformed)
        codes_per_field.append(codes)
        values_per_field.append(from_arrow_array(distinct, result_type))

    group, group_count = _dense_groups(codes_per_field, table.num_rows)
    # A stable sort by group id; for 16-bit keys numpy's stable sort is a radix sort.
    key_type = np.uint8 if group_count <= 1 << 8 else np.uint16 if group_count <= 1 << 16 else np.int64
    order = np.argsort(group.astype(key_type, copy=False), kind="stable")
    counts = np.bincount(group, minlength=group_count)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    first_rows = order[starts]

    reordered = table.take(pa.array(order))
    groups: list[tuple[tuple[Any, ...], pa.Table]] = []
    for start, count, first in zip(starts, counts, first_rows):
        key = tuple(
            None if codes[first] < 0 else values[codes[first]]
            for codes, values in zip(codes_per_field, values_per_field)
        )
        groups.append((key, reordered.slice(int(start), int(count))))
    groups.sort(key=lambda pair: _sort_key(pair[0]))
    return groups
