"""The file-writing machinery shared by the Parquet data and delete file writers (private).

One write call has a :class:`WriteContext` (schema, spec, options, metrics, locations, naming)
and a :class:`Writers` set that keeps one rolling :class:`_PartitionWriter` per partition, each
with at most one open :class:`_FileWriter`. :func:`run_write` feeds rows to the writers and, on
any failure, deletes every file the call created. :class:`ContentFileKind` says how the files
are named and described (data files, or position / equality delete files).
"""

from __future__ import annotations

import contextlib
import inspect
import math
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from icefloe.arrow.encryption import write_options
from icefloe.arrow.schema import schema_to_arrow, to_requested_schema
from icefloe.errors import DataWriteError, IcefloeError, UnsupportedFeatureError
from icefloe.io import FileIO
from icefloe.io.encryption import StandardEncryptionManager, encryption_of
from icefloe.io.locations import LocationProvider
from icefloe.spec.manifest import DataFile, DataFileBuilder, FileFormat, Metrics
from icefloe.spec.partition_values import partition_key
from icefloe.spec.partitioning import PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.spec.types import ListType, MapType, NestedField, StructType, UnknownType
from icefloe.write.metrics import MetricsCollector, MetricsConfig
from icefloe.write.options import ParquetWriteOptions

__all__ = [
    "DATA_FILES",
    "DEFAULT_MAX_BUFFERED_BYTES",
    "ContentFileKind",
    "WriteContext",
    "Writers",
    "run_write",
    "split_offsets",
]

#: Rows buffered for row groups, over all open files of one call, beyond which the largest
#: buffers are written out early (smaller row groups, bounded memory).
DEFAULT_MAX_BUFFERED_BYTES = 256 * 1024 * 1024
# Rows are appended to a file in slices of at most this many bytes (in Arrow memory), so the
# size checks happen often enough to keep files near the target.
_SLICE_BYTES = 8 * 1024 * 1024
_SAMPLE_ROWS = 4_096
# Parquet is rarely larger than the Arrow data it encodes; page headers and levels add a little.
_WORST_RATIO = 1.1
# File systems without real directories: nothing to create before writing a file.
_OBJECT_STORES = frozenset({"s3", "gcs", "abfs"})
_WRITER_PARAMETERS = frozenset(inspect.signature(pq.ParquetWriter.__init__).parameters)


@dataclass(frozen=True, slots=True)
class ContentFileKind:
    """What kind of content file a write produces, for writers of delete files that reuse this
    module's machinery (rolling, row groups, metrics, cleanup on failure).

    Attributes:
        name_suffix: appended to each file name before ``.parquet`` (``"-deletes"``).
        partition_schema: the table schema the spec's source ids refer to, for partition
            paths; None: the schema being written (data files).
        describe: finishes each file's description: given the builder (path, format,
            partition, size, split offsets set) and the file's metrics, it sets the content,
            the metrics and anything else (e.g. ``referenced_data_file``). None: a data file
            with the metrics as measured.
        description: what the files are, in error messages (``"position delete file"``).
    """

    name_suffix: str = ""
    partition_schema: Schema | None = None
    describe: Callable[[DataFileBuilder, Metrics], None] | None = None
    description: str = "data file"


DATA_FILES = ContentFileKind()


def split_offsets(file_metadata: pq.FileMetaData) -> tuple[int, ...]:
    """The start offsets of a Parquet file's row groups, ascending (Java's ``getSplitOffsets``).

    A row group starts at its first column chunk: the dictionary page if there is one, else
    the first data page.
    """
    offsets = []
    for index in range(file_metadata.num_row_groups):
        first = file_metadata.row_group(index).column(0)
        offset = first.dictionary_page_offset if first.has_dictionary_page else first.data_page_offset
        offsets.append(int(offset))
    return tuple(sorted(offsets))


# ---------------------------------------------------------------------------------------------
# Schema plumbing


def _file_struct(struct: StructType, path: str = "") -> tuple[StructType, bool]:
    """The struct without ``unknown`` fields (not stored in data files), and whether any went."""
    kept: list[NestedField] = []
    changed = False
    for nested in struct.fields:
        name = f"{path}{nested.name}"
        field_type = nested.field_type
        if isinstance(field_type, UnknownType):
            changed = True
            continue
        if isinstance(field_type, StructType):
            inner, inner_changed = _file_struct(field_type, f"{name}.")
            if inner_changed:
                nested = NestedField(
                    nested.field_id, nested.name, inner, required=nested.required, doc=nested.doc
                )
                changed = True
        elif isinstance(field_type, (ListType, MapType)) and _has_unknown(field_type):
            raise UnsupportedFeatureError(
                f"column '{name}': unknown values inside a list or map cannot be written to Parquet"
            )
        kept.append(nested)
    return (StructType(*kept) if changed else struct), changed


def _has_unknown(field_type: Any) -> bool:
    if isinstance(field_type, UnknownType):
        return True
    if isinstance(field_type, (StructType, ListType, MapType)):
        return any(_has_unknown(f.field_type) for f in field_type.fields)
    return False


def _drop_unknown(array: Any, target: pa.DataType) -> Any:
    """``array`` (a struct column) reduced to the fields of ``target``."""
    if array.type == target:
        return array
    if isinstance(array, pa.ChunkedArray):
        return pa.chunked_array([_drop_unknown(chunk, target) for chunk in array.chunks], type=target)
    children = []
    for index in range(target.num_fields):
        wanted = target.field(index)
        child = array.field(array.type.get_field_index(wanted.name))
        children.append(_drop_unknown(child, wanted.type) if pa.types.is_struct(wanted.type) else child)
    mask = array.is_null() if array.null_count else None
    return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)


# ---------------------------------------------------------------------------------------------
# One write call


@dataclass
class WriteContext:
    io: FileIO
    schema: Schema
    spec: PartitionSpec
    options: ParquetWriteOptions
    metrics_config: MetricsConfig
    locations: LocationProvider
    name_prefix: str
    sort_order_id: int | None
    kind: ContentFileKind = DATA_FILES
    current_location: str | None = None
    file_count: int = 0
    # on-disk bytes per Arrow byte, learned from row groups written (None until measured)
    disk_bytes: int = 0
    arrow_bytes: int = 0
    sample_ratio: float | None = None
    table_arrow: pa.Schema = field(init=False)
    file_schema: Schema = field(init=False)
    file_arrow: pa.Schema = field(init=False)
    writer_kwargs: dict[str, Any] = field(init=False)
    encryption: StandardEncryptionManager | None = field(init=False)

    def __post_init__(self) -> None:
        encryption = encryption_of(self.io)
        # An encrypted table's files each get a fresh key (Parquet modular encryption).
        self.encryption = encryption if isinstance(encryption, StandardEncryptionManager) else None
        self.table_arrow = schema_to_arrow(self.schema)
        struct, changed = _file_struct(self.schema.as_struct())
        self.file_schema = Schema(*struct.fields, schema_id=self.schema.schema_id) if changed else self.schema
        self.file_arrow = schema_to_arrow(self.file_schema) if changed else self.table_arrow
        kwargs = self.options.writer_kwargs()
        self.writer_kwargs = {k: v for k, v in kwargs.items() if k in _WRITER_PARAMETERS}

    def conform(self, batch: pa.RecordBatch | pa.Table) -> Any:
        """``batch`` in the table's Arrow schema (a no-op when it already is)."""
        if batch.schema.equals(self.table_arrow, check_metadata=True):
            return batch
        return to_requested_schema(batch, self.schema)

    def to_file_columns(self, table: pa.Table) -> pa.Table:
        """The columns stored in the file: ``unknown`` columns left out."""
        if self.file_arrow is self.table_arrow:
            return table
        columns = [
            _drop_unknown(table.column(f.name), f.type)
            if pa.types.is_struct(f.type)
            else table.column(f.name)
            for f in self.file_arrow
        ]
        return pa.Table.from_arrays(columns, schema=self.file_arrow)

    def next_location(self, partition: tuple[Any, ...]) -> str:
        self.file_count += 1
        name = f"{self.name_prefix}-{self.file_count:05d}{self.kind.name_suffix}.parquet"
        partition_schema = self.kind.partition_schema or self.schema
        path = self.spec.partition_to_path(partition, partition_schema) if self.spec.fields else None
        return self.locations.new_data_location(name, path or None)

    def ratio(self, sample: pa.Table) -> float:
        """Estimated bytes on disk per byte of Arrow data."""
        if self.arrow_bytes > 0:
            return max(self.disk_bytes / self.arrow_bytes, 1e-4)
        if self.sample_ratio is None:
            self.sample_ratio = self._measure(sample)
        return self.sample_ratio

    def _measure(self, sample: pa.Table) -> float:
        # Compress a slice in memory with the same settings: an early, cheap estimate that the
        # real row groups then replace.
        rows = sample.slice(0, _SAMPLE_ROWS)
        arrow_bytes = int(rows.nbytes)
        if arrow_bytes == 0:
            return 1.0
        sink = pa.BufferOutputStream()
        with pq.ParquetWriter(sink, rows.schema, **self.writer_kwargs) as writer:
            writer.write_table(rows)
        written = int(sink.tell())
        return max(written / arrow_bytes, 1e-4)

    def learn(self, disk_bytes: int, arrow_bytes: int) -> None:
        self.disk_bytes += disk_bytes
        self.arrow_bytes += arrow_bytes


# ---------------------------------------------------------------------------------------------
# Files


class _FileWriter:
    """One open Parquet data file, buffering rows into row groups."""

    def __init__(self, context: WriteContext, partition: tuple[Any, ...]):
        self.context = context
        self.partition = partition
        self.location = context.next_location(partition)
        context.current_location = self.location
        self._metadata: list[pq.FileMetaData] = []
        self._buffer: list[pa.Table] = []
        self.buffered_rows = 0
        self.buffered_bytes = 0
        self.rows = 0
        self._sink: Any = None
        self._writer: pq.ParquetWriter | None = None
        # Everything that can fail without a file goes first: nothing to clean up then.
        self.collector = MetricsCollector(context.file_schema, context.metrics_config)
        self._key = context.encryption.new_key_metadata() if context.encryption is not None else None
        writer_kwargs = {**context.writer_kwargs, **write_options(self._key)}
        fs, path = context.io.arrow_filesystem(self.location)
        parent = path.rsplit("/", 1)[0] if "/" in path else ""
        if parent and fs.type_name not in _OBJECT_STORES:
            fs.create_dir(parent, recursive=True)
        self._sink = fs.open_output_stream(path)
        try:
            self._writer = pq.ParquetWriter(
                self._sink, context.file_arrow, metadata_collector=self._metadata, **writer_kwargs
            )
        except BaseException:
            self.abort()
            raise

    @property
    def position(self) -> int:
        return int(self._sink.tell())

    def estimated_size(self, ratio: float) -> float:
        return self.position + self.buffered_bytes * ratio

    def append(self, rows: pa.Table) -> None:
        self._buffer.append(rows)
        self.buffered_rows += rows.num_rows
        self.buffered_bytes += rows.nbytes
        self.rows += rows.num_rows

    def flush(self) -> None:
        """Write the buffered rows as one row group."""
        if not self._buffer:
            return
        assert self._writer is not None
        self.context.current_location = self.location
        group = pa.concat_tables(self._buffer) if len(self._buffer) > 1 else self._buffer[0]
        before = self.position
        self._writer.write_table(group, row_group_size=max(group.num_rows, 1))
        self.context.learn(self.position - before, self.buffered_bytes)
        self.collector.update(group)
        self._buffer = []
        self.buffered_rows = 0
        self.buffered_bytes = 0

    def close(self) -> DataFile:
        """Finish the file and describe it."""
        self.flush()
        assert self._writer is not None
        self.context.current_location = self.location
        writer, self._writer = self._writer, None
        writer.close()
        size = self.position
        self._sink.close()
        metadata = self._metadata[0]
        builder = (
            DataFile.builder(self.context.spec)
            .with_path(self.location)
            .with_format(FileFormat.PARQUET)
            .with_partition(self.partition)
            .with_file_size_in_bytes(size)
            .with_split_offsets(split_offsets(metadata))
        )
        if self._key is not None:
            builder.with_encryption_key_metadata(self._key.with_length(size).to_bytes())
        metrics = self.collector.metrics(metadata)
        describe = self.context.kind.describe
        if describe is None:
            builder.with_metrics(metrics)
        else:
            describe(builder, metrics)
        if self.context.sort_order_id is not None:
            builder.with_sort_order_id(self.context.sort_order_id)
        data_file: DataFile = builder.build()
        return data_file

    def abort(self) -> None:
        """Discard the file: close what is open and delete what was written."""
        writer, self._writer = self._writer, None
        if writer is not None:
            with contextlib.suppress(Exception):
                writer.close()
        if self._sink is not None:
            with contextlib.suppress(Exception):
                self._sink.close()
        self.context.io.delete_quietly([self.location])


class _PartitionWriter:
    """The rolling sequence of files of one partition."""

    def __init__(self, context: WriteContext, partition: tuple[Any, ...]):
        self.context = context
        self.partition = partition
        self.current: _FileWriter | None = None

    def write(self, rows: pa.Table, open_file: Any, finished: list[DataFile]) -> None:
        """Append ``rows``, rolling to new files at the target size; files finished are added
        to ``finished`` at once (so that a later failure can delete them)."""
        options = self.context.options
        target = options.target_file_size_bytes
        rows = self.context.to_file_columns(rows)
        total = rows.num_rows
        arrow_per_row = rows.nbytes / total if total else 0.0
        slice_rows = max(1, int(_SLICE_BYTES / arrow_per_row)) if arrow_per_row else total
        offset = 0
        while offset < total:
            if self.current is None:
                self.current = open_file(self)
            current = self.current
            ratio = self._ratio(current, rows, (total - offset) * arrow_per_row)
            disk_per_row = max(arrow_per_row * ratio, 1e-9)
            room = target - current.estimated_size(ratio)
            if room <= 0 and current.rows > 0:
                finished.append(self.finish())
                continue
            group_room = min(
                options.row_group_limit - current.buffered_rows,
                math.ceil((options.row_group_size_bytes - current.buffered_bytes * ratio) / disk_per_row),
            )
            count = min(
                total - offset, slice_rows, max(1, math.ceil(room / disk_per_row)), max(1, group_room)
            )
            current.append(rows.slice(offset, count))
            offset += count
            if (
                current.buffered_rows >= options.row_group_limit
                or current.buffered_bytes * ratio >= options.row_group_size_bytes
                # bound the Arrow memory held for one row group of very compressible data
                or current.buffered_bytes >= 4 * options.row_group_size_bytes
            ):
                current.flush()
            if current.estimated_size(self._ratio(current, rows, (total - offset) * arrow_per_row)) >= target:
                finished.append(self.finish())

    def _ratio(self, current: _FileWriter, rows: pa.Table, pending_bytes: float) -> float:
        """The compression ratio to plan with: measured when it matters.

        Until one is known, rows that could not fill a row group or reach the target even at a
        pessimistic ratio need none (small writes skip the measurement).
        """
        context = self.context
        if context.arrow_bytes == 0 and context.sample_ratio is None:
            worst = (current.buffered_bytes + pending_bytes) * _WORST_RATIO
            if (
                current.position + worst < context.options.target_file_size_bytes
                and worst < context.options.row_group_size_bytes
            ):
                return _WORST_RATIO
        return context.ratio(rows)

    def finish(self) -> DataFile:
        current = self.current
        assert current is not None
        try:
            data_file = current.close()
        except BaseException:
            current.abort()
            raise
        finally:
            self.current = None
        return data_file

    def abort(self) -> None:
        current, self.current = self.current, None
        if current is not None:
            current.abort()


class Writers:
    """The partition writers of one call, with a bound on files open at once."""

    def __init__(
        self,
        context: WriteContext,
        max_open_files: int,
        max_buffered_bytes: int = DEFAULT_MAX_BUFFERED_BYTES,
    ):
        self.context = context
        self.max_open_files = max_open_files
        self.max_buffered_bytes = max_buffered_bytes
        self.completed: list[DataFile] = []
        self._writers: dict[tuple[Any, ...], _PartitionWriter] = {}
        self._open: OrderedDict[int, _PartitionWriter] = OrderedDict()  # by id, least recent first

    def _open_file(self, writer: _PartitionWriter) -> _FileWriter:
        self._open.pop(id(writer), None)
        while len(self._open) >= self.max_open_files:
            _, oldest = self._open.popitem(last=False)
            if oldest.current is not None:
                self.completed.append(oldest.finish())
        file_writer = _FileWriter(self.context, writer.partition)
        writer.current = file_writer
        self._open[id(writer)] = writer
        return file_writer

    def write(self, partition: tuple[Any, ...], rows: pa.Table) -> None:
        # Keyed canonically: Python's == would merge 0.0 with -0.0 and split every NaN.
        key = partition_key(partition)
        writer = self._writers.get(key)
        if writer is None:
            writer = self._writers[key] = _PartitionWriter(self.context, partition)
        if id(writer) in self._open:
            self._open.move_to_end(id(writer))
        writer.write(rows, self._open_file, self.completed)
        if writer.current is None:
            self._open.pop(id(writer), None)
        self._bound_memory()

    def _bound_memory(self) -> None:
        """Each open file buffers up to a row group; with many partitions open that adds up.
        Past the budget, write out the largest buffers (as smaller row groups) until under half.
        """
        open_files = [w.current for w in self._open.values() if w.current is not None]
        total = sum(f.buffered_bytes for f in open_files)
        if total <= self.max_buffered_bytes:
            return
        for file_writer in sorted(open_files, key=lambda f: f.buffered_bytes, reverse=True):
            if total <= self.max_buffered_bytes // 2:
                break
            total -= file_writer.buffered_bytes
            file_writer.flush()

    def finish(self, partition: tuple[Any, ...]) -> None:
        writer = self._writers.get(partition_key(partition))
        if writer is not None and writer.current is not None:
            self.completed.append(writer.finish())
            self._open.pop(id(writer), None)

    def finish_all(self) -> None:
        for writer in self._writers.values():
            if writer.current is not None:
                self.completed.append(writer.finish())
        self._open.clear()

    def abort(self) -> None:
        for writer in self._writers.values():
            writer.abort()
        self._open.clear()
        self.context.io.delete_quietly(f.file_path for f in self.completed)
        self.completed = []


def run_write(
    context: WriteContext, feed: Callable[[Writers], None], max_open_files: int, max_buffered_bytes: int
) -> list[Any]:
    """Run ``feed`` against the writers of one call; on any failure delete every file created."""
    writers = Writers(context, max_open_files, max_buffered_bytes)
    try:
        feed(writers)
        writers.finish_all()
    except BaseException as exc:
        writers.abort()
        if isinstance(exc, (OSError, pa.ArrowException)) and not isinstance(exc, IcefloeError):
            location = context.current_location or "(no file)"
            what = context.kind.description
            raise DataWriteError(f"Failed to write {what} {location}: {exc}", location=location) from exc
        raise
    return writers.completed
