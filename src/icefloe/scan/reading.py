"""Reading planned tasks into Arrow record batches.

Each task's data file is read projected by field id to the scan's read schema (so renamed and
added columns come back right), its deletes are removed and its residual filter is applied
exactly. Batches stream: memory is bounded by a batch (and the scan's delete files), not by the
table.

Deletes (spec: "Scan Planning" decides which apply; :class:`PositionDeletes` reads each delete
file once per scan):

- position delete files and deletion vectors remove rows by position;
- equality deletes remove rows whose delete columns equal a delete row's (null equals null).
  Delete columns the read schema lacks are read too and dropped afterwards.

A task that covers part of its file (a split from ``plan_tasks()``) reads the row groups of its
byte range only (Parquet's midpoint rule); deletes and ``_pos`` keep the file's positions.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable, Iterator, Sized
from typing import Any

import numpy as np
import pyarrow as pa

from icefloe.arrow.equality import key_column
from icefloe.arrow.page_index import page_predicate
from icefloe.arrow.reader import Layouts, read_arrow_schema, read_parquet, split_row_ranges
from icefloe.arrow.row_filter import to_arrow_expression
from icefloe.errors import UnsupportedFeatureError, ValidationError
from icefloe.expressions import AlwaysFalse, AlwaysTrue, bind
from icefloe.io import FileIO
from icefloe.scan._concurrent import ordered
from icefloe.scan._deletes import (
    EqualityDeletes,
    PositionDeletes,
    index_path,
    table_name_mapping,
    with_fields,
)
from icefloe.scan.tasks import FileScanTask
from icefloe.spec.manifest import FileContent, FileFormat
from icefloe.spec.name_mapping import NameMapping
from icefloe.spec.properties import READ_PAGE_INDEX_ENABLED, READ_PAGE_INDEX_ENABLED_DEFAULT, bool_property
from icefloe.spec.schema import Schema
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.types import BinaryType, StringType

__all__ = [
    "BUFFERED_BATCHES",
    "READ_AHEAD",
    "EqualityDeletes",
    "PositionDeletes",
    "dictionary_field_ids",
    "read_batches",
    "task_row_count",
]


#: Tasks read ahead of the one being consumed (each in a thread of its own), as pyarrow's
#: dataset scanner reads four fragments ahead.
READ_AHEAD = 4
#: Batches each task holds ready beyond the one being decoded.
BUFFERED_BATCHES = 2


def read_batches(
    io: FileIO,
    metadata: TableMetadata,
    tasks: Iterable[FileScanTask],
    read_schema: Schema,
    *,
    case_sensitive: bool = True,
    batch_size: int | None = None,
    deletes: PositionDeletes | None = None,
    dictionary_ids: Collection[int] = (),
    read_ahead: int = READ_AHEAD,
    eager: bool = False,
) -> Iterator[pa.RecordBatch]:
    """Stream the rows of ``tasks``, projected to ``read_schema``, without their deleted rows.

    Tasks are read concurrently (``read_ahead`` at a time, each in a thread, holding at most a
    few batches), and their batches come out in task order: the same batches, in the same
    order, as reading the tasks one after another. Memory is bounded by ``read_ahead`` reads
    (see :func:`icefloe.arrow.reader.read_parquet`), not by the size of the table.

    Args:
        io: reads data and delete files.
        metadata: the table metadata (name mapping for files without field ids; schemas for
            equality delete columns the read schema lacks).
        tasks: planned tasks; each task's residual is applied to its rows and its deletes
            (position, deletion vector, equality) remove theirs.
        read_schema: the columns to produce; must include every column the residuals use.
        case_sensitive: how residual column names match.
        batch_size: the maximum rows per batch.
        deletes: the scan's delete file cache (default a new one for this call).
        dictionary_ids: top-level string and binary columns to keep dictionary-encoded (see
            ``read_arrow_schema``).
        read_ahead: tasks read at once (1: one after another, in the caller's thread's turn).
        eager: the caller takes and keeps every batch (to build a table): ``read_ahead`` tasks
            start at once and read on without waiting for the caller (their batches are not
            bounded), and unless ``batch_size`` is given their batches are as large as
            ``read_parquet``'s ``for_table`` allows. Otherwise only the first task is read until
            the caller takes its first batch (a stream opened and left costs one read), and
            memory stays bounded.

    Raises:
        InvalidDataFileError: a data or delete file is missing or malformed (naming it).
        UnsupportedFeatureError: a data file is not Parquet.
    """
    name_mapping = table_name_mapping(metadata)
    page_reads = bool_property(metadata.properties, READ_PAGE_INDEX_ENABLED, READ_PAGE_INDEX_ENABLED_DEFAULT)
    # Eager reads of several files decode each file in its own thread only: the files are the
    # parallelism, and pyarrow's column tasks for a file on top of them cost more than they
    # gain (a few columns, two cores: 3-5% slower). One file keeps pyarrow's threads.
    one_file = isinstance(tasks, Sized) and len(tasks) <= 1
    use_threads = not eager or one_file
    cache = deletes if deletes is not None else PositionDeletes(io, metadata)
    dictionaries = frozenset(dictionary_ids)
    layouts = Layouts()  # the files of a scan usually share their schema: work it out once

    def sources() -> Iterator[Callable[[], Iterable[pa.RecordBatch]]]:
        # Delete files are loaded here, in the consumer's thread (the cache is not shared
        # between threads); a task's data file is read in a thread of its own.
        for task in tasks:
            if isinstance(task.residual, AlwaysFalse):
                continue
            try:
                yield _task_reader(
                    io,
                    task,
                    read_schema,
                    cache,
                    name_mapping,
                    case_sensitive,
                    batch_size,
                    dictionaries,
                    layouts,
                    for_table=eager and batch_size is None,
                    use_threads=use_threads,
                    page_reads=page_reads,
                )
            except Exception as error:  # raised when the consumer reaches this task, as in turn
                yield functools.partial(_raise, error)

    yield from ordered(sources(), ahead=read_ahead, buffered=BUFFERED_BATCHES, eager=eager)


def dictionary_field_ids(
    schema: Schema, columns: bool | Iterable[str], *, case_sensitive: bool = True
) -> frozenset[int]:
    """The field ids of the top-level string and binary ``columns`` of ``schema`` (True: all of
    them), the columns a read may keep dictionary-encoded.

    Raises:
        ValidationError: a column ``schema`` lacks, or one of another type (naming it).
    """
    if columns is True:
        return frozenset(
            f.field_id for f in schema.fields if isinstance(f.field_type, (StringType, BinaryType))
        )
    if columns is False:
        return frozenset()
    ids = set()
    for name in [columns] if isinstance(columns, str) else columns:
        field = next(
            (
                f
                for f in schema.fields
                if (f.name == name if case_sensitive else f.name.lower() == name.lower())
            ),
            None,
        )
        if field is None:
            raise ValidationError(f"dictionary column '{name}' is not a top-level column of the scan")
        if not isinstance(field.field_type, (StringType, BinaryType)):
            raise ValidationError(
                f"dictionary column '{name}' is {field.field_type}; only string and binary columns are dictionary-encoded"
            )
        ids.add(field.field_id)
    return frozenset(ids)


def _raise(error: Exception) -> Iterable[pa.RecordBatch]:
    raise error


def _task_reader(
    io: FileIO,
    task: FileScanTask,
    read_schema: Schema,
    deletes: PositionDeletes,
    name_mapping: NameMapping | None,
    case_sensitive: bool,
    batch_size: int | None,
    dictionary_ids: frozenset[int],
    layouts: Layouts,
    *,
    for_table: bool,
    use_threads: bool,
    page_reads: bool = True,
) -> Callable[[], Iterable[pa.RecordBatch]]:
    """What reading one task's rows takes, prepared (deletes loaded, residual bound).
    ``page_reads``: a selective read may skip pages by the file's page index."""
    if task.file.file_format != FileFormat.PARQUET:
        raise UnsupportedFeatureError(
            f"data file {task.file.file_path} is {task.file.file_format.value}; icefloe reads Parquet data files"
        )
    positions = deletes.for_task(task)
    equality = deletes.equality_for_task(task, read_schema)
    schema = _with_delete_columns(read_schema, equality)
    kwargs: dict[str, Any] = {}
    residual = None
    if not isinstance(task.residual, AlwaysTrue):
        bound = bind(read_schema, task.residual, case_sensitive=case_sensitive)
        residual = to_arrow_expression(bound, read_schema)
        pushed = page_predicate(bound, read_schema) if page_reads else None
        if pushed is not None:
            kwargs["page_filter"] = pushed
    if batch_size is not None:
        kwargs["batch_size"] = batch_size
    if for_table:
        kwargs["for_table"] = True
    if not use_threads:
        kwargs["use_threads"] = False
    if not task.is_whole_file:
        kwargs["byte_range"] = (task.start, task.length)

    def read() -> Iterable[pa.RecordBatch]:
        batches = read_parquet(
            io,
            task.file.file_path,
            file_size=task.file.file_size_in_bytes,
            projected=schema,
            name_mapping=name_mapping,
            row_filter=residual,
            positions_to_delete=positions,
            constants=_identity_constants(task, schema),
            first_row_id=task.file.first_row_id,
            data_sequence_number=task.data_sequence_number,
            key_metadata=task.file.key_metadata,
            dictionary_ids=dictionary_ids,
            layouts=layouts,
            **kwargs,
        )
        if equality:
            return _without_equality_deletes(batches, equality, schema, read_schema, dictionary_ids)
        return batches

    return read


def task_row_count(
    io: FileIO,
    task: FileScanTask,
    deletes: PositionDeletes | None = None,
    *,
    metadata: TableMetadata | None = None,
) -> int:
    """The rows of a task without a residual: its record count minus its deleted rows.

    Position deletes and deletion vectors are counted from the delete files alone. Equality
    deletes need the data: the task's delete columns are read (only those) and matched.

    For a split (part of a file) the rows are those of its row groups (read from the file's
    footer), minus the deleted rows among them. Pass one ``deletes`` for all the tasks of a
    scan so each delete file is read once.

    Args:
        io: reads data and delete files.
        task: the task, with an ``AlwaysTrue`` residual.
        deletes: the scan's delete file cache.
        metadata: the table metadata, for data files without field ids (name mapping) and
            equality delete columns; default the one ``deletes`` was made with.

    Raises:
        ValidationError: the task has a residual filter (its count needs the rows).
    """
    if not isinstance(task.residual, AlwaysTrue):
        raise ValidationError(
            f"task of {task.file.file_path} has a residual filter ({task.residual}); count its rows by reading"
        )
    if deletes is None:
        deletes = PositionDeletes(io, metadata)
    positions = deletes.for_task(task)
    if task.is_whole_file and not any(d.content == FileContent.EQUALITY_DELETES for d in task.deletes):
        return task.file.record_count - (len(positions) if positions is not None else 0)
    if task.file.file_format != FileFormat.PARQUET:
        raise UnsupportedFeatureError(
            f"data file {task.file.file_path} is {task.file.file_format.value}; icefloe reads Parquet data files"
        )
    equality = deletes.equality_for_task(task)
    if equality:
        metadata = metadata if metadata is not None else deletes.metadata
        schema = _with_delete_columns(Schema(), equality)
        batches = read_parquet(
            io,
            task.file.file_path,
            file_size=task.file.file_size_in_bytes,
            projected=schema,
            file_schema_hint=schema,
            name_mapping=table_name_mapping(metadata) if metadata is not None else None,
            positions_to_delete=positions,
            constants=_identity_constants(task, schema),
            byte_range=None if task.is_whole_file else (task.start, task.length),
            key_metadata=task.file.key_metadata,
        )
        return sum(batch.num_rows for batch in _without_equality_deletes(batches, equality, schema, schema))
    total = 0
    for first, count in split_row_ranges(
        io, task.file.file_path, task.start, task.length, key_metadata=task.file.key_metadata
    ):
        total += count
        if positions is not None:
            lo, hi = np.searchsorted(positions, [first, first + count])
            total -= int(hi - lo)
    return total


def _with_delete_columns(read_schema: Schema, equality: list[EqualityDeletes]) -> Schema:
    """The read schema plus the equality delete columns it lacks."""
    if not equality:
        return read_schema
    return with_fields(read_schema, [i for e in equality for i in e.field_ids], [e.schema for e in equality])


def _without_equality_deletes(
    batches: Iterable[pa.RecordBatch],
    equality: list[EqualityDeletes],
    schema: Schema,
    read_schema: Schema,
    dictionary_ids: Collection[int] = (),
) -> Iterator[pa.RecordBatch]:
    """``batches`` (of ``schema``) without the rows the equality deletes delete, projected to
    ``read_schema``."""
    paths = [[index_path(schema, i) for i in e.field_ids] for e in equality]
    target = None if schema is read_schema else read_arrow_schema(read_schema, dictionary_ids)
    for batch in batches:
        deleted = None
        for deletes, columns in zip(equality, paths):
            mask = deletes.keys.deleted([key_column(batch, path) for path in columns])
            deleted = mask if deleted is None else deleted | mask
        if deleted is not None and deleted.any():
            batch = batch.filter(pa.array(~deleted))
        if batch.num_rows == 0:
            continue
        yield batch if target is None else _project(batch, target)


def _project(batch: pa.RecordBatch, target: pa.Schema) -> pa.RecordBatch:
    """``batch`` reduced to the fields of ``target`` (a prefix-compatible subset by name)."""
    if not len(target):
        return pa.RecordBatch.from_struct_array(pa.repeat(pa.scalar({}, pa.struct([])), batch.num_rows))
    columns = []
    for field in target:
        column = batch.column(field.name)
        columns.append(column if column.type == field.type else column.cast(field.type))
    return pa.RecordBatch.from_arrays(columns, schema=target)


def _identity_constants(task: FileScanTask, read_schema: Schema) -> dict[int, Any]:
    """Identity partition values, for columns a data file does not hold (imported files)."""
    constants: dict[int, Any] = {}
    for field, value in zip(task.spec.fields, task.file.partition):
        if field.transform.is_identity and read_schema.find_field(field.source_id) is not None:
            constants[field.source_id] = value
    return constants
