"""Describing an existing Parquet file as a data file of a table (for ``add_files``).

A file is accepted only if every Iceberg reader will read it as the table's rows:

- its columns resolve to the table's field ids: by the ids in the file, or (for a file without
  ids) through the table's name mapping, as readers resolve them;
- each column's stored type reads as the table's type: the same type, or a promotion the spec
  allows (int -> long, float -> double, decimal(P, S) -> decimal(P', S) with P' >= P), with
  timestamps and times stored in the unit of the table's type (microseconds, or nanoseconds
  for ``*_ns``), timestamps adjusted to UTC exactly when the table's type has a zone, and no
  unsigned integers, half floats or INT96 timestamps (readers disagree on those);
- every required column is present; a required top-level column stored as optional must hold
  no null (its footer statistics say so);
- no column the table's schema does not have (it would surface later under an id or name a
  new column takes);
- (partitioned tables) all its rows fall into one partition of the default spec.

Partition values come from the data, never from the path: from the footer when a column's
statistics prove it (an order-preserving transform giving the same value for the lower and
upper bounds, or a column of nulls), otherwise by reading the partition source columns and
transforming every value. A file spanning two partitions is refused.

Metrics come from the footer (``write.footer_metrics``, Java's ``ParquetUtil.fileMetrics``)
under the table's metrics configuration; split offsets are the row groups' starts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from icefloe.arrow.convert import from_arrow_array
from icefloe.arrow.partition import source_column, transform_array
from icefloe.arrow.reader import read_parquet
from icefloe.arrow.schema import apply_name_mapping, arrow_to_schema, field_id_of
from icefloe.errors import InvalidDataFileError, InvalidSchemaError
from icefloe.io import FileIO
from icefloe.spec.conversions import decimal_from_unscaled
from icefloe.spec.manifest import DataFile, FileFormat
from icefloe.spec.name_mapping import NameMapping
from icefloe.spec.partitioning import PartitionField, PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.spec.types import (
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    PrimitiveType,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
)
from icefloe.write import MetricsConfig, footer_metrics, split_offsets

__all__ = ["ImportProblem", "ImportTarget", "describe_parquet_file"]


class ImportProblem(Exception):
    """Why one file cannot be added (collected per file, reported together)."""


@dataclass(frozen=True, slots=True)
class ImportTarget:
    """What files are checked against: the table's current schema and default spec.

    Attributes:
        schema: the table's current schema.
        spec: the partition spec the files are added to (the default spec).
        format_version: the table's format version.
        name_mapping: the mapping for files without field ids.
        metrics: the table's metrics configuration.
    """

    schema: Schema
    spec: PartitionSpec
    format_version: int
    name_mapping: NameMapping
    metrics: MetricsConfig


def describe_parquet_file(io: FileIO, path: str, target: ImportTarget) -> tuple[DataFile, bool]:
    """The DataFile registering the Parquet file at ``path``, and whether it resolved its
    columns through the name mapping (it has no field ids).

    Raises:
        ImportProblem: the file cannot be added; the message says why.
    """
    try:
        filesystem, inner = io.arrow_filesystem(path)
        with filesystem.open_input_file(inner) as source:
            size = source.size()
            metadata = pq.ParquetFile(source).metadata
            arrow_schema = metadata.schema.to_arrow_schema()
    except FileNotFoundError:
        raise ImportProblem("does not exist") from None
    except (OSError, pa.ArrowException) as exc:
        raise ImportProblem(f"is not a readable Parquet file ({exc})") from None
    mapped = not any(field_id_of(f) is not None for f in arrow_schema)
    mapping = target.name_mapping if mapped else None
    with_ids = apply_name_mapping(arrow_schema, mapping) if mapping is not None else arrow_schema
    try:
        file_schema = arrow_to_schema(with_ids, name_mapping=mapping, format_version=target.format_version)
    except InvalidSchemaError as exc:
        if mapping is not None:
            raise ImportProblem(f"has no field ids, and the name mapping cannot resolve it: {exc}") from None
        raise ImportProblem(str(exc)) from None
    leaves = _leaf_ids(with_ids)
    problems = _Compatibility(target.schema, metadata, leaves).check(file_schema)
    if problems:
        raise ImportProblem("; ".join(problems))
    partition = _partition(io, path, target, metadata, leaves, mapping)
    metrics = footer_metrics(metadata, target.schema, target.metrics, name_mapping=mapping)
    data_file: DataFile = (
        DataFile.builder(target.spec)
        .with_path(path)
        .with_format(FileFormat.PARQUET)
        .with_partition(partition)
        .with_file_size_in_bytes(size)
        .with_metrics(metrics)
        .with_split_offsets(split_offsets(metadata))
        .build()
    )
    return data_file, mapped


def _leaf_ids(arrow_schema: pa.Schema) -> dict[int, int]:
    """Parquet leaf column index by field id (leaves without an id are left out)."""
    result: dict[int, int] = {}
    index = 0

    def walk(node: pa.Field) -> None:
        nonlocal index
        t = node.type
        if pa.types.is_struct(t):
            for i in range(t.num_fields):
                walk(t.field(i))
        elif pa.types.is_map(t):
            walk(t.key_field)
            walk(t.item_field)
        elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
            walk(t.value_field)
        else:
            field_id = field_id_of(node)
            if field_id is not None:
                result[field_id] = index
            index += 1

    for column in arrow_schema:
        walk(column)
    return result


def _column_stats(metadata: pq.FileMetaData, column: int) -> list[tuple[int, Any]]:
    """(values, statistics or None) of the column in each row group."""
    result = []
    for group in range(metadata.num_row_groups):
        chunk = metadata.row_group(group).column(column)
        result.append((chunk.num_values, chunk.statistics))
    return result


def _null_count(metadata: pq.FileMetaData, column: int) -> int | None:
    total = 0
    for _, stats in _column_stats(metadata, column):
        if stats is None or not stats.has_null_count:
            return None
        total += stats.null_count
    return total


# ---- schema compatibility --------------------------------------------------------------------


class _Compatibility:
    """Collects every way the file's schema does not read as the table's."""

    def __init__(self, table: Schema, metadata: pq.FileMetaData, leaves: dict[int, int]):
        self.table = table
        self.metadata = metadata
        self.leaves = leaves
        self.problems: list[str] = []

    def check(self, file_schema: Schema) -> list[str]:
        self._struct(self.table.as_struct(), file_schema.as_struct(), "", top_level=True)
        return self.problems

    def _struct(self, table: StructType, file: StructType, prefix: str, *, top_level: bool) -> None:
        by_id = {f.field_id: f for f in file.fields}
        table_ids = {f.field_id for f in table.fields}
        for column in table.fields:
            found = by_id.get(column.field_id)
            name = prefix + column.name
            if found is None:
                if column.required and column.initial_default is None:
                    self.problems.append(f"required column '{name}' is missing")
                continue
            self._field(column, found, name, top_level=top_level)
        extra = [prefix + f.name for f in file.fields if f.field_id not in table_ids]
        if extra:
            self.problems.append(f"columns not in the table schema: {', '.join(repr(e) for e in extra)}")

    def _field(self, column: NestedField, found: NestedField, name: str, *, top_level: bool) -> None:
        if column.required and not found.required and not self._holds_no_null(found, top_level=top_level):
            self.problems.append(f"column '{name}' is required in the table but may hold nulls in the file")
        self._type(column.field_type, found.field_type, found.field_id, name)

    def _holds_no_null(self, found: NestedField, *, top_level: bool) -> bool:
        # Only a top-level leaf's null count is exactly "rows with a null here".
        if not top_level or not isinstance(found.field_type, PrimitiveType):
            return False
        column = self.leaves.get(found.field_id)
        return column is not None and _null_count(self.metadata, column) == 0

    def _type(self, table: IcebergType, file: IcebergType, field_id: int, name: str) -> None:
        if isinstance(table, StructType) and isinstance(file, StructType):
            self._struct(table, file, name + ".", top_level=False)
        elif isinstance(table, ListType) and isinstance(file, ListType):
            self._child(table.element_field, file.element_field, name + ".element")
        elif isinstance(table, MapType) and isinstance(file, MapType):
            self._child(table.key_field, file.key_field, name + ".key")
            self._child(table.value_field, file.value_field, name + ".value")
        elif isinstance(table, PrimitiveType) and isinstance(file, PrimitiveType):
            if not _promotable(file, table):
                self.problems.append(f"column '{name}' is {file} in the file, {table} in the table")
            else:
                self._storage(table, field_id, name)
        else:
            self.problems.append(f"column '{name}' is {file} in the file, {table} in the table")

    def _child(self, table: NestedField, file: NestedField, name: str) -> None:
        if table.field_id != file.field_id:
            self.problems.append(
                f"'{name}' has field id {file.field_id} in the file, {table.field_id} in the table"
            )
            return
        self._field(table, file, name, top_level=False)

    def _storage(self, table: PrimitiveType, field_id: int, name: str) -> None:
        """The Parquet storage of the leaf must be one every reader reads as ``table``."""
        column = self.leaves.get(field_id)
        if column is None:
            return
        schema = self.metadata.schema.column(column)
        logical = json.loads(schema.logical_type.to_json())
        kind = logical.get("Type")
        if schema.physical_type == "INT96":
            self.problems.append(f"column '{name}' is an INT96 timestamp; store it as INT64 microseconds")
        elif kind == "Int" and logical.get("isSigned") is False:
            self.problems.append(f"column '{name}' holds unsigned integers, which Iceberg has no type for")
        elif kind == "Float16":
            self.problems.append(f"column '{name}' holds half floats, which Iceberg has no type for")
        elif isinstance(table, (TimestampType, TimestamptzType, TimestampNanoType, TimestamptzNanoType)):
            unit = (
                "nanoseconds"
                if isinstance(table, (TimestampNanoType, TimestamptzNanoType))
                else "microseconds"
            )
            utc = isinstance(table, (TimestamptzType, TimestamptzNanoType))
            if kind != "Timestamp" or logical.get("timeUnit") != unit:
                self.problems.append(
                    f"column '{name}' is stored as {schema.logical_type}; {table} needs {unit}"
                )
            elif logical.get("isAdjustedToUTC") is not utc:
                zone = "adjusted to UTC" if utc else "not adjusted to UTC"
                self.problems.append(f"column '{name}': {table} must be stored {zone}")
        elif isinstance(table, TimeType) and (kind != "Time" or logical.get("timeUnit") != "microseconds"):
            self.problems.append(
                f"column '{name}' is stored as {schema.logical_type}; time needs microseconds"
            )


def _promotable(file: PrimitiveType, table: PrimitiveType) -> bool:
    """Whether a column stored as ``file`` reads as ``table`` (the spec's type promotions)."""
    if file == table:
        return True
    if isinstance(file, IntegerType) and isinstance(table, LongType):
        return True
    if isinstance(file, FloatType) and isinstance(table, DoubleType):
        return True
    if isinstance(file, DecimalType) and isinstance(table, DecimalType):
        return file.scale == table.scale and file.precision <= table.precision
    # A UUID is 16 bytes; a file may store it without the UUID annotation.
    return isinstance(file, FixedType) and file.length == 16 and isinstance(table, UUIDType)


# ---- partition values ------------------------------------------------------------------------


def _partition(
    io: FileIO,
    path: str,
    target: ImportTarget,
    metadata: pq.FileMetaData,
    leaves: dict[int, int],
    mapping: NameMapping | None,
) -> tuple[Any, ...]:
    """The partition tuple every row of the file has under the default spec."""
    schema = target.schema
    values: dict[int, Any] = {}
    unresolved: list[PartitionField] = []
    for pf in target.spec.fields:
        if pf.transform.is_void:
            values[pf.field_id] = None
            continue
        source = schema.find_field(pf.source_id)
        column = leaves.get(pf.source_id)
        if source is None or column is None:
            name = schema.find_column_name(pf.source_id) or str(pf.source_id)
            raise ImportProblem(
                f"has no column '{name}', the source of partition field '{pf.name}' "
                "(partition values come from the data, not from the path)"
            )
        found, value = _partition_from_footer(pf, source.field_type, metadata, column)
        if found:
            values[pf.field_id] = value
        else:
            unresolved.append(pf)
    if unresolved:
        values.update(_partition_from_data(io, path, schema, unresolved, mapping))
    return tuple(values[pf.field_id] for pf in target.spec.fields)


_FOOTER_TYPES = (BooleanType, IntegerType, LongType, DateType, TimeType, TimestampType, TimestamptzType,
                 TimestampNanoType, TimestamptzNanoType, StringType, DecimalType)  # fmt: skip


def _partition_from_footer(
    pf: PartitionField, source_type: IcebergType, metadata: pq.FileMetaData, column: int
) -> tuple[bool, Any]:
    """(True, value) when the footer proves every row has this partition value.

    Null counts are exact; bounds may be loose (a writer may truncate them), so only an
    order-preserving transform mapping the lower and the upper bound to the same value proves
    it. Raises ImportProblem when the counts prove the file mixes null and non-null values.
    """
    if not isinstance(source_type, _FOOTER_TYPES):
        return False, None
    values = nulls = 0
    low: Any = None
    high: Any = None
    for count, stats in _column_stats(metadata, column):
        if stats is None or not stats.has_null_count:
            return False, None
        values += count
        nulls += stats.null_count
        if stats.null_count == count:
            continue
        if not stats.has_min_max:
            return False, None
        chunk_low = _stat_value(source_type, stats.min_raw)
        chunk_high = _stat_value(source_type, stats.max_raw)
        low = chunk_low if low is None or chunk_low < low else low
        high = chunk_high if high is None or chunk_high > high else high
    if nulls == values:
        return True, None  # every value null: the partition value of null is null
    if nulls:
        raise ImportProblem(
            f"spans partitions: partition field '{pf.name}' is null for {nulls} rows and not null for others"
        )
    if not pf.transform.preserves_order:
        return False, None
    lower = pf.transform.apply(source_type, low)
    upper = pf.transform.apply(source_type, high)
    return (True, lower) if lower == upper else (False, None)


def _stat_value(source_type: IcebergType, raw: Any) -> Any:
    """A footer statistic (physical form) in icefloe's representation of ``source_type``."""
    if isinstance(source_type, StringType):
        return bytes(raw).decode("utf-8")
    if isinstance(source_type, DecimalType):
        unscaled = raw if isinstance(raw, int) else int.from_bytes(bytes(raw), "big", signed=True)
        return decimal_from_unscaled(unscaled, source_type.scale)
    if isinstance(source_type, BooleanType):
        return bool(raw)
    return int(raw)


def _partition_from_data(
    io: FileIO, path: str, schema: Schema, fields: list[PartitionField], mapping: NameMapping | None
) -> dict[int, Any]:
    """Read the source columns and transform every value; one distinct value per field."""
    names = sorted({schema.find_column_name(pf.source_id) or "" for pf in fields})
    projected = schema.select(*names)
    seen: dict[int, pa.Array] = {}
    try:
        for batch in read_parquet(io, path, projected=projected, name_mapping=mapping):
            table = pa.Table.from_batches([batch])
            for pf in fields:
                source = projected.field(pf.source_id)
                transformed = transform_array(
                    source_column(table, projected, pf.source_id), pf, source.field_type
                )
                distinct = pc.unique(transformed)
                if pf.field_id in seen:
                    distinct = pc.unique(
                        pa.concat_arrays([seen[pf.field_id], distinct.cast(seen[pf.field_id].type)])
                    )
                if len(distinct) > 1:
                    shown = from_arrow_array(
                        distinct.slice(0, 2), pf.transform.result_type(source.field_type)
                    )
                    raise ImportProblem(
                        f"spans partitions: partition field '{pf.name}' has values {shown[0]!r} and {shown[1]!r}"
                    )
                seen[pf.field_id] = distinct
    except (OSError, pa.ArrowException, InvalidDataFileError) as exc:
        raise ImportProblem(f"cannot be read ({exc})") from None
    result: dict[int, Any] = {}
    for pf in fields:
        source = projected.field(pf.source_id)
        distinct = seen.get(pf.field_id)
        values = from_arrow_array(distinct, pf.transform.result_type(source.field_type)) if distinct else []
        result[pf.field_id] = values[0] if values else None
    return result
