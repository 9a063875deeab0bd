"""Writing Arrow data as Iceberg Parquet data files.

:func:`write_data_files` turns rows already conformed to the table schema into finished data
files and their :class:`DataFile` descriptions (not committed):

* rows are grouped by partition (``icefloe.arrow.partition.partition_keys``) and each group
  goes under ``location_provider.new_data_location(name, spec.partition_to_path(...))``;
* rows are ordered by the table's sort order within each file;
* a file is closed and the next one started once its size reaches
  ``write.target-file-size-bytes`` (estimated from bytes written plus buffered rows at the
  compression ratio seen so far), so files land close to the target;
* file names follow Java's ``OutputFileFactory``:
  ``{partition_id:05d}-{task_id}-{operation_id}-{file_count:05d}.parquet``;
* each DataFile carries the exact size written, row count, row-group offsets
  (``split_offsets``), partition tuple, spec id, sort order id (when sorted) and the column
  metrics of :mod:`icefloe.write.metrics`.

Files are written through the FileIO's pyarrow file system (so object stores work). When
anything fails, every file this call created is deleted before the error propagates.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa

from icefloe.arrow.partition import partition_keys
from icefloe.errors import ValidationError
from icefloe.io import FileIO, load_location_provider
from icefloe.spec.manifest import DataFile
from icefloe.spec.partitioning import PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.spec.sorting import SortOrder
from icefloe.write._files import (
    DEFAULT_MAX_BUFFERED_BYTES,
    ContentFileKind,
    WriteContext,
    Writers,
    run_write,
    split_offsets,
)
from icefloe.write.metrics import MetricsConfig
from icefloe.write.options import ParquetWriteOptions
from icefloe.write.sorting import can_sort, sort_table

__all__ = [
    "DEFAULT_MAX_OPEN_FILES",
    "ContentFileKind",
    "file_name_prefix",
    "split_offsets",
    "write_content_files",
    "write_data_files",
]

log = logging.getLogger(__name__)

#: Most data files kept open at once when rows of many partitions arrive interleaved.
DEFAULT_MAX_OPEN_FILES = 100


def file_name_prefix(partition_id: int = 0, task_id: int = 0, operation_id: str | None = None) -> str:
    """The part of Java's data file names before the file counter:
    ``{partition_id:05d}-{task_id}-{operation_id}`` (a fresh UUID when no operation id is given)."""
    return f"{partition_id:05d}-{task_id}-{operation_id or uuid.uuid4()}"


def write_data_files(
    io: FileIO,
    *,
    table_location: str,
    properties: Mapping[str, str],
    schema: Schema,
    spec: PartitionSpec,
    data: pa.Table | pa.RecordBatch | Iterable[pa.RecordBatch],
    sort_order: SortOrder | None = None,
    partition: Sequence[Any] | None = None,
    file_name_prefix: str | None = None,
    target_file_size_bytes: int | None = None,
    max_open_files: int = DEFAULT_MAX_OPEN_FILES,
    max_buffered_bytes: int = DEFAULT_MAX_BUFFERED_BYTES,
) -> list[DataFile]:
    """Write ``data`` as Parquet data files of a table; nothing is committed.

    Args:
        io: the table's FileIO; files are written through ``io.arrow_filesystem``.
        table_location: the table's base location (for the location provider).
        properties: the table properties (``write.*``: codec, sizes, metrics modes, locations).
        schema: the table schema the data conforms to.
        spec: the partition spec to write with; its id is recorded in each DataFile.
        data: a Table, a RecordBatch or an iterable of RecordBatches (e.g. a
            RecordBatchReader), with the table's columns. Data not already in the table's Arrow
            schema (``icefloe.arrow.schema``, field ids included) is conformed to it first.
        sort_order: the table's sort order; when it has fields, rows are sorted within each
            file and the files record its id. Streamed input is then gathered in memory first.
        partition: the partition tuple of all rows, when the caller already knows it; by
            default each row's partition is computed from ``spec``.
        file_name_prefix: file names are ``<prefix>-<counter:05d>.parquet``; default
            :func:`file_name_prefix` ``()`` (a fresh operation UUID).
        target_file_size_bytes: overrides ``write.target-file-size-bytes``.
        max_open_files: most files open at once when streamed rows of many partitions
            interleave; the least recently written one is closed to open another.
        max_buffered_bytes: most Arrow bytes buffered for row groups over all open files;
            beyond it the largest buffers are written out early, as smaller row groups.

    Returns:
        the DataFiles written, in the order they were finished. Empty input writes nothing.

    Raises:
        ValidationError: a malformed property, or data that does not fit the schema.
        UnsupportedFeatureError: the schema has a type icefloe cannot write (variant, unknown
            inside a list or map), or the codec cannot be written.
        DataWriteError: a storage or encoding failure, naming the file being written.
        Any error is raised only after deleting every file this call created.
    """
    if max_open_files < 1:
        raise ValidationError(f"max_open_files must be at least 1, not {max_open_files}")
    options = ParquetWriteOptions.from_properties(properties, target_file_size_bytes=target_file_size_bytes)
    sorted_write = can_sort(sort_order, schema)
    context = WriteContext(
        io=io,
        schema=schema,
        spec=spec,
        options=options,
        metrics_config=MetricsConfig.from_properties(
            properties, schema, sort_order=sort_order if sorted_write else None
        ),
        locations=load_location_provider(table_location, properties),
        name_prefix=file_name_prefix if file_name_prefix is not None else _default_prefix(),
        sort_order_id=sort_order.order_id if sorted_write and sort_order is not None else None,
    )
    if partition is not None and len(partition) != len(spec.fields):
        raise ValidationError(
            f"partition {tuple(partition)!r} has {len(partition)} values but spec {spec.spec_id} "
            f"has {len(spec.fields)} fields"
        )

    def feed(writers: Writers) -> None:
        rows_in: Any = pa.Table.from_batches([data]) if isinstance(data, pa.RecordBatch) else data
        if sorted_write or isinstance(rows_in, pa.Table):
            # All rows at hand: each partition's rows are written (and sorted) in one go.
            table = _gather(context, rows_in)
            for values, rows in _partitions(context, table, partition):
                if sorted_write:
                    assert sort_order is not None
                    rows = sort_table(rows, sort_order, schema)
                writers.write(values, rows)
                writers.finish(values)
        else:
            for batch in rows_in:
                conformed = context.conform(batch)
                if conformed.num_rows == 0:
                    continue
                if isinstance(conformed, pa.RecordBatch):
                    conformed = pa.Table.from_batches([conformed])
                for values, rows in _partitions(context, conformed, partition):
                    writers.write(values, rows)

    return run_write(context, feed, max_open_files, max_buffered_bytes)


def write_content_files(
    io: FileIO,
    *,
    table_location: str,
    properties: Mapping[str, str],
    schema: Schema,
    spec: PartitionSpec,
    groups: Iterable[tuple[Sequence[Any], pa.Table]],
    kind: ContentFileKind,
    metrics_config: MetricsConfig,
    options: ParquetWriteOptions,
    file_name_prefix: str | None = None,
    sort_order_id: int | None = None,
    max_open_files: int = DEFAULT_MAX_OPEN_FILES,
) -> list[Any]:
    """Write rows already grouped by partition as Parquet content files of ``kind``.

    The building block of the delete-file writers (``icefloe.write.deletes``): each group's rows
    (already conformed to ``schema``'s Arrow schema, and in the order they must be written) go
    to files of their partition, rolling at ``options.target_file_size_bytes``; every file of
    the call shares the name prefix and one counter.

    Args:
        io: the table's FileIO.
        table_location: the table's base location (for the location provider).
        properties: the table properties (location provider settings).
        schema: the schema of the files (e.g. the position delete schema).
        spec: the partition spec recorded in each file; partition paths use
            ``kind.partition_schema``.
        groups: ``(partition tuple, rows)`` pairs; each group is written out (its last file
            closed) before the next; a partition given twice gets files of its own each time.
        kind: names and describes the files.
        metrics_config: the metrics modes of the files' columns (by full column name).
        options: Parquet settings and the target file size.
        file_name_prefix: as for :func:`write_data_files`.
        sort_order_id: recorded in each file when set.
        max_open_files: as for :func:`write_data_files`.

    Returns:
        the files written (``DataFile`` or ``DeleteFile``, as ``kind.describe`` makes them), in
        the order they were finished.

    Raises:
        DataWriteError: naming the file being written; every file the call created is deleted.
    """
    context = WriteContext(
        io=io,
        schema=schema,
        spec=spec,
        options=options,
        metrics_config=metrics_config,
        locations=load_location_provider(table_location, properties),
        name_prefix=file_name_prefix if file_name_prefix is not None else _default_prefix(),
        sort_order_id=sort_order_id,
        kind=kind,
    )

    def feed(writers: Writers) -> None:
        for values, rows in groups:
            if rows.num_rows:
                writers.write(tuple(values), context.conform(rows))
                writers.finish(tuple(values))  # a group is complete: close its file

    return run_write(context, feed, max_open_files, DEFAULT_MAX_BUFFERED_BYTES)


def _default_prefix() -> str:
    return file_name_prefix()


def _gather(context: WriteContext, data: Any) -> pa.Table:
    if isinstance(data, pa.Table):
        return context.conform(data)
    batches = [context.conform(batch) for batch in data]
    return pa.Table.from_batches(batches, schema=context.table_arrow)


def _partitions(
    context: WriteContext, table: pa.Table, partition: Sequence[Any] | None
) -> list[tuple[tuple[Any, ...], pa.Table]]:
    if table.num_rows == 0:
        return []
    if partition is not None or not context.spec.fields:
        return [(tuple(partition or ()), table)]
    return partition_keys(table, context.spec, context.schema)
