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
from icefloe.errors import UnsupportedFeatureError, ValidationError
from icefloe.expressions import AlwaysFalse, AlwaysTrue, bind
from icefloe.io import FileIO
from icefloe.scan.tasks import FileScanTask
from icefloe.serde.name_mapping_json import loads_name_mapping
from icefloe.spec.manifest import FileContent, FileFormat
from icefloe.spec.name_mapping import DEFAULT_NAME_MAPPING_PROPERTY, NameMapping
from icefloe.spec.schema import Schema
from icefloe.spec.table_metadata import TableMetadata

__all__ = ["PositionDeletes", "read_batches", "task_row_count"]


class PositionDeletes:
    """The deleted positions of a scan's delete files, each file read once.

    A position delete file usually holds deletes for many data files; reading it again for
    every data file it applies to would cost a footer read and a scan per task (slow on object
    stores). One instance serves one scan; it holds the positions of the files it has read.
    """

    def __init__(self, io: FileIO):
        self._io = io
        self._by_delete_file: dict[str, dict[str, np.ndarray]] = {}

    def for_task(self, task: FileScanTask) -> np.ndarray | None:
        """The sorted, unique deleted positions of the task's data file, or None."""
        arrays = []
        for delete in task.deletes:
            if delete.content != FileContent.POSITION_DELETES or delete.file_format == FileFormat.PUFFIN:
                raise UnsupportedFeatureError(
                    f"delete file {delete.file_path} ({delete.content.name.lower()}, "
                    f"{delete.file_format.value}) cannot be applied by this version of icefloe"
                )
            found = self._by_delete_file.get(delete.file_path)
            if found is None:
                found = self._by_delete_file[delete.file_path] = read_position_deletes(
                    self._io, delete.file_path
                )
            positions = found.get(task.file.file_path)
            if positions is not None:
                arrays.append(positions)
        if not arrays:
            return None
        return np.unique(np.concatenate(arrays))


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
    deletes = PositionDeletes(io)
    for task in tasks:
        if isinstance(task.residual, AlwaysFalse):
            continue
        positions = deletes.for_task(task)
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


def task_row_count(io: FileIO, task: FileScanTask, deletes: PositionDeletes | None = None) -> int:
    """The rows of a task without a residual: its record count minus its deleted positions.

    For a split (part of a file) the rows are those of its row groups (read from the file's
    footer), minus the deleted positions among them. Pass one ``deletes`` for all the tasks of
    a scan so each delete file is read once.

    Raises:
        ValidationError: the task has a residual filter (its count needs the rows).
    """
    if not isinstance(task.residual, AlwaysTrue):
        raise ValidationError(
            f"task of {task.file.file_path} has a residual filter ({task.residual}); count its rows by reading"
        )
    positions = (deletes or PositionDeletes(io)).for_task(task)
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
