"""Column metrics of Parquet data files, as Java Iceberg computes them.

A data file's ``value_counts``, ``null_value_counts``, ``nan_value_counts``, ``lower_bounds``,
``upper_bounds`` and ``column_sizes`` (spec: "Manifests") let readers skip files. This module
decides which columns get which metrics (:class:`MetricsConfig`, Java's ``MetricsConfig``), and
computes them the way Java's Parquet writer does (``ParquetMetrics`` in Iceberg 1.9):

* Counts and bounds come from the Parquet footer: per column chunk, ``num_values`` (nulls
  included), the statistics' null count and min/max, merged over row groups. Footer min/max
  are exact values from the data (parquet-cpp never truncates them; it drops them when they
  are too long, and then the column gets counts only, as in Java).
* ``float`` / ``double`` columns are measured over the data instead (:class:`MetricsCollector`),
  as Java's value writers do: NaN values are counted and never become bounds, ``-0.0`` sorts
  below ``0.0``, and counts only cover rows where every enclosing struct is non-null.
* Columns inside lists and maps get a column size and nothing else.
* Strings are truncated to ``truncate(N)`` code points, binary to N bytes; a truncated upper
  bound is rounded up (the last code point / byte that can be incremented is), and dropped when
  nothing can be. ``fixed`` and the other types are never truncated.

:func:`footer_metrics` without a collector is Java's ``ParquetUtil.fileMetrics``: floats then
also come from the footer, and no NaN counts are known.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icefloe.arrow.schema import apply_name_mapping
from icefloe.errors import ValidationError
from icefloe.spec.conversions import decimal_from_unscaled, to_bytes
from icefloe.spec.manifest import Metrics
from icefloe.spec.name_mapping import NameMapping
from icefloe.spec.schema import Schema
from icefloe.spec.types import (
    BinaryType,
    DecimalType,
    DoubleType,
    FloatType,
    IcebergType,
    ListType,
    MapType,
    NestedField,
    PrimitiveType,
    StringType,
    StructType,
    UnknownType,
    UUIDType,
)
from icefloe.write._metrics_config import (
    DEFAULT_METRICS_MODE,
    MetricsConfig,
    MetricsMode,
    truncate_binary_max,
    truncate_binary_min,
    truncate_string_max,
    truncate_string_min,
)

if TYPE_CHECKING:
    import pyarrow.parquet as pq

__all__ = [
    "DEFAULT_METRICS_MODE",
    "LeafColumn",
    "MetricsCollector",
    "MetricsConfig",
    "MetricsMode",
    "footer_metrics",
    "leaf_columns",
    "truncate_binary_max",
    "truncate_binary_min",
    "truncate_string_max",
    "truncate_string_min",
]


# ---------------------------------------------------------------------------------------------
# Leaf columns of a Parquet file


@dataclass(frozen=True, slots=True)
class LeafColumn:
    """One Parquet leaf column of an Iceberg schema, in file order.

    Attributes:
        field_id: the Iceberg field id of the leaf.
        name: its full dotted Iceberg name (``"s.x"``, ``"l.element"``).
        path: the names from the top-level column down (struct fields only, when not repeated).
        iceberg_type: the leaf's primitive type.
        repeated: whether the leaf is inside a list or map (such leaves get no counts or bounds).
    """

    field_id: int
    name: str
    path: tuple[str, ...]
    iceberg_type: PrimitiveType
    repeated: bool


def leaf_columns(schema: Schema | StructType) -> list[LeafColumn]:
    """The Parquet leaf columns a file of this schema has, in file order.

    ``unknown`` columns are not stored in data files and are left out.
    """
    struct = schema.as_struct() if isinstance(schema, Schema) else schema
    result: list[LeafColumn] = []

    def walk(nested: NestedField, names: tuple[str, ...], path: tuple[str, ...], repeated: bool) -> None:
        field_type = nested.field_type
        if isinstance(field_type, UnknownType):
            return
        if isinstance(field_type, StructType):
            for child in field_type.fields:
                walk(child, (*names, child.name), (*path, child.name), repeated)
        elif isinstance(field_type, ListType):
            element = field_type.element_field
            walk(element, (*names, "element"), path, True)
        elif isinstance(field_type, MapType):
            walk(field_type.key_field, (*names, "key"), path, True)
            walk(field_type.value_field, (*names, "value"), path, True)
        elif isinstance(field_type, PrimitiveType):
            result.append(LeafColumn(nested.field_id, ".".join(names), path, field_type, repeated))

    for column in struct.fields:
        walk(column, (column.name,), (column.name,), False)
    return result


def _is_float(leaf: LeafColumn) -> bool:
    return isinstance(leaf.iceberg_type, (FloatType, DoubleType)) and not leaf.repeated


# ---------------------------------------------------------------------------------------------
# Float and double metrics over the data (Java's FloatFieldMetrics / DoubleFieldMetrics)


def _float_less(a: float, b: float) -> bool:
    """Java's ``Float.compare(a, b) < 0`` for non-NaN values: -0.0 sorts below 0.0."""
    if a == b == 0.0:
        return math.copysign(1.0, a) < math.copysign(1.0, b)
    return a < b


@dataclass(slots=True)
class _FloatStats:
    value_count: int = 0
    null_count: int = 0
    nan_count: int = 0
    lower: float | None = None
    upper: float | None = None

    def add(self, array: pa.Array | pa.ChunkedArray, parent_valid: int) -> None:
        """Add one batch of a leaf whose ancestors' nulls are merged into ``array``.

        ``parent_valid`` counts the rows where every enclosing struct is non-null: Java's value
        writers only see those rows.
        """
        self.value_count += parent_valid
        self.null_count += array.null_count - (len(array) - parent_valid)
        non_null = len(array) - array.null_count
        if non_null == 0:
            return
        nan_count = int(pc.sum(pc.is_nan(array)).as_py() or 0)
        self.nan_count += nan_count
        if nan_count == non_null:
            return
        extremes = pc.min_max(array)  # NaN never wins against a number
        low: float = extremes["min"].as_py()
        high: float = extremes["max"].as_py()
        if low == 0.0 or high == 0.0:
            low, high = _signed_zero_extremes(array, low, high)
        if self.lower is None or _float_less(low, self.lower):
            self.lower = low
        if self.upper is None or _float_less(self.upper, high):
            self.upper = high


def _signed_zero_extremes(array: pa.Array | pa.ChunkedArray, low: float, high: float) -> tuple[float, float]:
    """Min and max with -0.0 < 0.0 when a zero is an extreme (Arrow treats the zeros as equal)."""
    zeros = pc.filter(array, pc.equal(array, 0.0))
    if isinstance(zeros, pa.ChunkedArray):
        zeros = zeros.combine_chunks()
    signs = np.signbit(zeros.to_numpy(zero_copy_only=False))
    if low == 0.0:
        low = -0.0 if bool(signs.any()) else 0.0
    if high == 0.0:
        high = 0.0 if not bool(signs.all()) else -0.0
    return low, high


class MetricsCollector:
    """Measures the ``float`` / ``double`` columns of the rows written to one file.

    Feed it every batch written (:meth:`update`), then turn the file's footer into
    :class:`Metrics` with :meth:`metrics`.
    """

    def __init__(self, schema: Schema, config: MetricsConfig):
        self.schema = schema
        self.config = config
        self.leaves = leaf_columns(schema)
        names = schema.id_to_name()
        self.modes = {leaf.field_id: config.column_mode(names.get(leaf.field_id)) for leaf in self.leaves}
        self._floats = {
            leaf.field_id: leaf
            for leaf in self.leaves
            if _is_float(leaf) and self.modes[leaf.field_id].has_counts
        }
        self._stats: dict[int, _FloatStats] = {field_id: _FloatStats() for field_id in self._floats}

    def update(self, data: pa.Table | pa.RecordBatch) -> None:
        """Measure the float/double columns of ``data`` (rows written to this file)."""
        for field_id, leaf in self._floats.items():
            array, parent_valid = _leaf_array(data, leaf.path)
            self._stats[field_id].add(array, parent_valid)

    def metrics(self, file_metadata: pq.FileMetaData) -> Metrics:
        """The file's metrics: floats from the batches seen, the rest from the footer."""
        if file_metadata.num_columns != len(self.leaves):
            raise ValidationError(
                f"Parquet file has {file_metadata.num_columns} columns, "
                f"schema {self.schema.schema_id} has {len(self.leaves)}"
            )
        return _file_metrics(file_metadata, self.schema, self.config, self.leaves, self._stats)


def _leaf_array(data: pa.Table | pa.RecordBatch, path: Sequence[str]) -> tuple[Any, int]:
    """The leaf's values with every ancestor's nulls merged in, and the rows whose ancestors are
    all non-null."""
    array: Any = data.column(path[0])
    parent_valid = data.num_rows
    for name in path[1:]:
        struct_type = array.type
        parent_valid = len(array) - array.null_count
        # flatten() merges the struct's validity into its children.
        array = array.flatten()[struct_type.get_field_index(name)]
    return array, parent_valid


# ---------------------------------------------------------------------------------------------
# Footer metrics


def footer_metrics(
    file_metadata: pq.FileMetaData,
    schema: Schema,
    config: MetricsConfig | None = None,
    *,
    name_mapping: NameMapping | None = None,
) -> Metrics:
    """Metrics of a Parquet file with field ids, from its footer alone.

    This is Java's ``ParquetUtil.fileMetrics``: float/double bounds come from the footer too,
    and NaN counts are unknown (left out). Writers use :class:`MetricsCollector` instead.
    Columns are matched to ``schema`` by field id; file columns the schema lacks are ignored.
    A file without field ids takes them from ``name_mapping`` (as readers do).

    Raises:
        ValidationError: a column of the file has no field id (and no name-mapping entry).
    """
    by_id = {leaf.field_id: leaf for leaf in leaf_columns(schema)}
    arrow_schema = file_metadata.schema.to_arrow_schema()
    if name_mapping is not None:
        arrow_schema = apply_name_mapping(arrow_schema, name_mapping)
    file_ids = _parquet_leaf_ids(arrow_schema)
    if len(file_ids) != file_metadata.num_columns:
        raise ValidationError(
            f"cannot match the {file_metadata.num_columns} columns of the Parquet file to fields"
        )
    if None in file_ids:
        raise ValidationError("Parquet file has columns without field ids; metrics need a name mapping")
    leaves = [by_id.get(field_id) for field_id in file_ids if field_id is not None]
    return _file_metrics(file_metadata, schema, config or MetricsConfig(), leaves, {})


def _parquet_leaf_ids(arrow_schema: pa.Schema) -> list[int | None]:
    """The field ids of a Parquet file's leaf columns, in file order (None where missing)."""
    ids: list[int | None] = []

    def walk(node: pa.Field) -> None:
        field_type = node.type
        if pa.types.is_struct(field_type):
            for index in range(field_type.num_fields):
                walk(field_type.field(index))
        elif pa.types.is_map(field_type):
            walk(field_type.key_field)
            walk(field_type.item_field)
        elif pa.types.is_list(field_type) or pa.types.is_large_list(field_type):
            walk(field_type.value_field)
        else:
            raw = (node.metadata or {}).get(b"PARQUET:field_id")
            ids.append(int(raw) if raw is not None and int(raw) >= 0 else None)

    for column in arrow_schema:
        walk(column)
    return ids


def _file_metrics(
    file_metadata: pq.FileMetaData,
    schema: Schema,
    config: MetricsConfig,
    leaves: Sequence[LeafColumn | None],
    floats: Mapping[int, _FloatStats],
) -> Metrics:
    """The metrics of a file whose i-th column is ``leaves[i]`` (None: not in the schema)."""
    names = schema.id_to_name()
    chunks = [[rg.column(i) for rg in _row_groups(file_metadata)] for i in range(len(leaves))]

    column_sizes: dict[int, int] = {}
    value_counts: dict[int, int] = {}
    null_counts: dict[int, int] = {}
    nan_counts: dict[int, int] = {}
    lower_bounds: dict[int, bytes] = {}
    upper_bounds: dict[int, bytes] = {}
    for leaf, columns in zip(leaves, chunks):
        if leaf is None:
            continue
        mode = config.column_mode(names.get(leaf.field_id))
        if not mode.has_counts:
            continue
        field_id = leaf.field_id
        column_sizes[field_id] = sum(c.total_compressed_size for c in columns)
        if leaf.repeated:
            continue  # Java keeps no counts or bounds inside lists and maps
        stats = floats.get(field_id)
        if stats is not None:
            value_counts[field_id] = stats.value_count
            null_counts[field_id] = stats.null_count
            nan_counts[field_id] = stats.nan_count
            if mode.has_bounds and stats.lower is not None and stats.upper is not None:
                lower_bounds[field_id] = to_bytes(leaf.iceberg_type, stats.lower)
                upper_bounds[field_id] = to_bytes(leaf.iceberg_type, stats.upper)
            continue
        summary = _summarize(leaf, columns, mode.has_bounds)
        if summary is None:
            continue  # a chunk without statistics: nothing is known
        value_counts[field_id], null_counts[field_id], low, high = summary
        if low is None or high is None or not mode.has_bounds:
            continue
        low, high = _truncate_bounds(leaf.iceberg_type, low, high, mode.truncate_length)
        if low is not None:
            lower_bounds[field_id] = to_bytes(leaf.iceberg_type, low)
        if high is not None:
            upper_bounds[field_id] = to_bytes(leaf.iceberg_type, high)
    return Metrics(
        record_count=file_metadata.num_rows,
        column_sizes=column_sizes,
        value_counts=value_counts,
        null_value_counts=null_counts,
        nan_value_counts=nan_counts,
        lower_bounds=lower_bounds,
        upper_bounds=upper_bounds,
    )


def _row_groups(file_metadata: pq.FileMetaData) -> Iterable[Any]:
    return [file_metadata.row_group(i) for i in range(file_metadata.num_row_groups)]


def _summarize(
    leaf: LeafColumn, columns: Sequence[Any], with_bounds: bool
) -> tuple[int, int, Any, Any] | None:
    """(value count, null count, min, max) over the column's chunks; None without statistics."""
    value_count = 0
    null_count = 0
    low: Any = None
    high: Any = None
    less = _float_less if isinstance(leaf.iceberg_type, (FloatType, DoubleType)) else _less
    for column in columns:
        stats = column.statistics
        if stats is None or not stats.has_null_count:
            return None
        value_count += column.num_values
        null_count += stats.null_count
        if with_bounds and not stats.has_min_max and stats.null_count < column.num_values:
            # parquet-cpp drops min/max of a chunk whose values are too long (> 4 KiB): the
            # other chunks' bounds would exclude its values, so the file's bounds are unknown
            # (as Java's footer metrics treat missing statistics).
            with_bounds = False
            low = high = None
        if with_bounds and stats.has_min_max:
            chunk_low = _from_physical(leaf.iceberg_type, stats.min_raw)
            chunk_high = _from_physical(leaf.iceberg_type, stats.max_raw)
            if low is None or less(chunk_low, low):
                low = chunk_low
            if high is None or less(high, chunk_high):
                high = chunk_high
    if isinstance(low, float) and (math.isnan(low) or math.isnan(high)):
        return value_count, null_count, None, None
    return value_count, null_count, low, high


def _less(a: Any, b: Any) -> bool:
    # icefloe values order as Iceberg does: str by code point, bytes and UUIDs unsigned.
    return bool(a < b)


def _from_physical(iceberg_type: IcebergType, raw: Any) -> Any:
    """A Parquet statistics value (physical form) as an icefloe value of ``iceberg_type``."""
    if isinstance(iceberg_type, StringType):
        return bytes(raw).decode("utf-8")
    if isinstance(iceberg_type, DecimalType):
        unscaled = raw if isinstance(raw, int) else int.from_bytes(bytes(raw), "big", signed=True)
        return decimal_from_unscaled(unscaled, iceberg_type.scale)
    if isinstance(iceberg_type, UUIDType):
        return uuid.UUID(bytes=bytes(raw))
    if isinstance(raw, (bytearray, memoryview)):
        return bytes(raw)
    return raw


def _truncate_bounds(iceberg_type: IcebergType, low: Any, high: Any, length: int | None) -> tuple[Any, Any]:
    if length is None:
        return low, high
    if isinstance(iceberg_type, StringType):
        return truncate_string_min(low, length), truncate_string_max(high, length)
    if isinstance(iceberg_type, BinaryType):
        return truncate_binary_min(low, length), truncate_binary_max(high, length)
    return low, high
