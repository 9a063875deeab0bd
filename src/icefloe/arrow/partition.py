"""Splitting an Arrow table into one slice per partition (for writers).

:func:`partition_keys` computes each row's partition tuple with the spec's transforms and
groups the rows by it. Identity and the time transforms (year, month, day, hour) are computed
on whole arrays; the others (bucket, truncate) are applied to each *distinct* source value with
:meth:`Transform.bind` and mapped back, so their cost grows with the number of distinct
values, not rows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

from icefloe.arrow._types import type_to_arrow
from icefloe.arrow.convert import from_arrow_array, to_arrow_array
from icefloe.errors import ValidationError
from icefloe.spec.conversions import MICROS_PER_DAY, NANOS_PER_DAY
from icefloe.spec.partitioning import PartitionField, PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.spec.transforms import DayTransform, HourTransform, MonthTransform, TimeTransform, YearTransform
from icefloe.spec.types import (
    DateType,
    IcebergType,
    StructType,
    TimestampNanoType,
    TimestamptzNanoType,
)

__all__ = ["partition_keys", "source_column", "transform_array"]

_NANO_TYPES = (TimestampNanoType, TimestamptzNanoType)


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


# ---------------------------------------------------------------------------------------------
# transforms over whole arrays


def _civil_year_month(days: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(year, month) of day counts since 1970-01-01, proleptic Gregorian, any year."""
    z = days + 719_468
    era = np.floor_divide(z, 146_097)
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    month = np.where(mp < 10, mp + 3, mp - 9)
    year = yoe + era * 400 + (month <= 2)
    return year, month


def _time_transform(array: pa.Array, transform: TimeTransform, source_type: IcebergType) -> pa.Array:
    mask = array.is_null().to_numpy(zero_copy_only=False) if array.null_count else None
    if isinstance(source_type, DateType):
        values = array.view(pa.int32()).fill_null(0).to_numpy().astype(np.int64)
        days = values
    else:
        values = array.view(pa.int64()).fill_null(0).to_numpy()
        per_day = NANOS_PER_DAY if isinstance(source_type, _NANO_TYPES) else MICROS_PER_DAY
        if isinstance(transform, HourTransform):
            result = np.floor_divide(values, per_day // 24)
            return pa.array(result.astype(np.int32), pa.int32(), mask=mask)
        days = np.floor_divide(values, per_day)
    if isinstance(transform, DayTransform):
        return pa.array(days.astype(np.int32), pa.int32(), mask=mask).view(pa.date32())
    year, month = _civil_year_month(days)
    if isinstance(transform, YearTransform):
        result = year - 1970
    elif isinstance(transform, MonthTransform):
        result = (year - 1970) * 12 + month - 1
    else:  # pragma: no cover - the four time transforms are handled above
        raise ValidationError(f"unsupported time transform {transform}")
    return pa.array(result.astype(np.int32), pa.int32(), mask=mask)


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


def transform_array(array: pa.Array, field: PartitionField, source_type: IcebergType) -> pa.Array:
    """The partition values of ``field`` for each value of its source column, as an Arrow array.

    The result has the Arrow type of the transform's result type (``day`` gives ``date32``).

    Raises:
        ValidationError: the transform does not apply to the source type.
    """
    transform = field.transform
    result_type = transform.result_type(source_type)
    if transform.is_void:
        return pa.nulls(len(array), type_to_arrow(result_type))
    if transform.is_identity:
        return array
    if isinstance(transform, TimeTransform):
        if not transform.can_transform(source_type):
            raise ValidationError(f"cannot apply transform {transform} to type {source_type}")
        return _time_transform(array, transform, source_type)
    function: Callable[[Any], Any] = transform.bind(source_type)
    codes, distinct = _encode(array)
    values = [function(v) for v in from_arrow_array(distinct, source_type)]
    transformed = to_arrow_array(values, result_type)
    indices = pa.array(codes, pa.int64(), mask=codes < 0)
    return transformed.take(indices)


# ---------------------------------------------------------------------------------------------
# grouping


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

    # one code per distinct combination, compacted after each field so it never overflows
    combined = codes_per_field[0] + 1
    for codes in codes_per_field[1:]:
        _, combined = np.unique(combined, return_inverse=True)
        combined = combined.astype(np.int64) * (int(codes.max()) + 2) + codes + 1
    _, group = np.unique(combined, return_inverse=True)
    group = group.reshape(-1)
    order = np.argsort(group, kind="stable")
    counts = np.bincount(group)
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
