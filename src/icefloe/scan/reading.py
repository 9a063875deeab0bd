"""Reading planned tasks into Arrow record batches.

Each task's data file is read projected by field id to the scan's read schema (so renamed and
added columns come back right), its position deletes are removed, and its residual filter is
applied exactly. Batches stream: memory is bounded by a batch, not by the table.

A task that covers part of its file (a split from ``plan_tasks()``) reads the row groups of its
byte range only (Parquet's midpoint rule); deletes and ``_pos`` keep the file's positions.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa

from icefloe.arrow.reader import read_parquet, read_position_deletes, split_row_ranges
from icefloe.arrow.row_filter import to_arrow_expression
from icefloe.errors import UnsupportedFeatureError
from icefloe.expressions import AlwaysFalse, AlwaysTrue, bind
from icefloe.io import FileIO
from icefloe.scan.tasks import FileScanTask
from icefloe.serde.name_mapping_json import loads_name_mapping
from icefloe.spec.manifest import FileContent, FileFormat
from icefloe.spec.name_mapping import DEFAULT_NAME_MAPPING_PROPERTY, NameMapping
from icefloe.spec.schema import Schema
from icefloe.spec.table_metadata import TableMetadata

__all__ = ["read_batches", "task_row_count"]


def read_batches(
    io: FileIO,
    metadata: TableMetadata,
    tasks: Iterable[FileScanTask],
    read_schema: Schema,
    *,
    case_sensitive: bool = True,
    batch_size: int | None = None,
) -> Iterator[pa.RecordBatch]:
    """Stream the rows of ``tasks``, projected to ``read_schema``.

    Args:
        io: reads data and delete files.
        metadata: the table metadata (name mapping for files without field ids).
        tasks: planned tasks; each task's residual is applied to its rows.
        read_schema: the columns to produce; must include every column the residuals use.
        case_sensitive: how residual column names match.
        batch_size: the maximum rows per batch.
    """
    name_mapping = _name_mapping(metadata)
    for task in tasks:
        if isinstance(task.residual, AlwaysFalse):
            continue
        positions = _deleted_positions(io, task)
        residual = None
        if not isinstance(task.residual, AlwaysTrue):
            bound = bind(read_schema, task.residual, case_sensitive=case_sensitive)
            residual = to_arrow_expression(bound, read_schema)
        kwargs: dict[str, Any] = {}
        if batch_size is not None:
            kwargs["batch_size"] = batch_size
        if not task.is_whole_file:
            kwargs["byte_range"] = (task.start, task.length)
        if task.file.file_format != FileFormat.PARQUET:
            raise UnsupportedFeatureError(
                f"data file {task.file.file_path} is {task.file.file_format.value}; icefloe reads Parquet data files"
            )
        yield from read_parquet(
            io,
            task.file.file_path,
            projected=read_schema,
            name_mapping=name_mapping,
            row_filter=residual,
            positions_to_delete=positions,
            constants=_identity_constants(task, read_schema),
            first_row_id=task.file.first_row_id,
            data_sequence_number=task.data_sequence_number,
            **kwargs,
        )


def task_row_count(io: FileIO, task: FileScanTask) -> int:
    """The rows of a task without a residual: its record count minus its deleted positions.

    For a split (part of a file) the rows are those of its row groups (read from the file's
    footer), minus the deleted positions among them.
    """
    positions = _deleted_positions(io, task)
    if task.is_whole_file:
        return task.file.record_count - (len(positions) if positions is not None else 0)
    if task.file.file_format != FileFormat.PARQUET:
        raise UnsupportedFeatureError(
            f"data file {task.file.file_path} is {task.file.file_format.value}; icefloe reads Parquet data files"
        )
    total = 0
    for first, count in split_row_ranges(io, task.file.file_path, task.start, task.length):
        total += count
        if positions is not None:
            lo, hi = np.searchsorted(positions, [first, first + count])
            total -= int(hi - lo)
    return total


def _deleted_positions(io: FileIO, task: FileScanTask) -> np.ndarray | None:
    arrays = []
    for delete in task.deletes:
        if delete.content != FileContent.POSITION_DELETES or delete.file_format == FileFormat.PUFFIN:
            raise UnsupportedFeatureError(
                f"delete file {delete.file_path} ({delete.content.name.lower()}, {delete.file_format.value}) "
                "cannot be applied by this version of icefloe"
            )
        found = read_position_deletes(io, delete.file_path, data_files={task.file.file_path})
        if task.file.file_path in found:
            arrays.append(found[task.file.file_path])
    if not arrays:
        return None
    return np.unique(np.concatenate(arrays))


def _identity_constants(task: FileScanTask, read_schema: Schema) -> dict[int, Any]:
    """Identity partition values, for columns a data file does not hold (imported files)."""
    constants: dict[int, Any] = {}
    for field, value in zip(task.spec.fields, task.file.partition):
        if field.transform.is_identity and read_schema.find_field(field.source_id) is not None:
            constants[field.source_id] = value
    return constants


def _name_mapping(metadata: TableMetadata) -> NameMapping | None:
    text = metadata.properties.get(DEFAULT_NAME_MAPPING_PROPERTY)
    if text is None:
        return None
    return loads_name_mapping(text, location=f"table property {DEFAULT_NAME_MAPPING_PROPERTY}")
