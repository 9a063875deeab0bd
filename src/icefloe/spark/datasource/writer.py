"""Batch and streaming writes of the ``icefloe`` data source.

Executors write Parquet with the function :func:`icefloe.spark.write.frames` uses
(:func:`~icefloe.spark.write.frames.write_task_files`) and return the files' descriptions; the commit
(in a Python worker on the driver) adds them in one snapshot.

Nothing committed is ever deleted: every snapshot a write commits carries an id of the write
in its summary (``icefloe.write-id``; a streaming batch: Java's ``spark.sql.streaming.queryId``
and ``spark.sql.streaming.epochId``), and ``abort`` (which Spark also calls when ``commit``
raised, possibly after the catalog took the commit) deletes the written files only when the
table's history does not show that write. A failed batch job hands ``abort`` no messages, so
it also deletes the files under the table's data location named with the write's id (a
listing: slow on object stores with many files, but only on failure).

Streaming writes commit each micro-batch exactly once: before committing batch N, the commit
walks the branch's snapshots back to the newest one of the same query; when that one's epoch is
N or later, the batch was committed before (a replay after a crash) and is skipped.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql import datasource as ds
from pyspark.sql import types as st

from icefloe.errors import ValidationError
from icefloe.io import load_file_io
from icefloe.spark.datasource.common import TableRef
from icefloe.spark.jobs import JobOutput, delete_paths
from icefloe.spark.types import to_spark_type
from icefloe.spark.write.frames import commit_files, write_task_files
from icefloe.spec import types as it
from icefloe.spec.manifest import DataFile
from icefloe.spec.schema import Schema
from icefloe.table.table import Table

__all__ = [
    "EPOCH_ID_KEY",
    "QUERY_ID_KEY",
    "WRITE_ID_KEY",
    "FilesMessage",
    "IcefloeStreamWriter",
    "IcefloeWriter",
    "last_committed_epoch",
    "stream_query_id",
]

#: Snapshot summary keys: Java Iceberg's streaming keys, and the id of a batch write.
QUERY_ID_KEY = "spark.sql.streaming.queryId"
EPOCH_ID_KEY = "spark.sql.streaming.epochId"
WRITE_ID_KEY = "icefloe.write-id"
_MAIN = "main"


@dataclass(frozen=True)
class FilesMessage(ds.WriterCommitMessage):
    """A write task's commit message: the data files it wrote."""

    files: tuple[DataFile, ...]


def _files(messages: Sequence[ds.WriterCommitMessage | None]) -> list[DataFile]:
    return [f for m in messages if isinstance(m, FilesMessage) for f in m.files]


class _TaskWriter:
    """What the batch and streaming writers share: the table's io and metadata (pickled to the
    executors), the DataFrame's column names, and the commit."""

    def __init__(self, ref: TableRef, table: Table, spark_schema: st.StructType, *, branch: str | None):
        self._ref = ref
        self._io = table.io()
        self._metadata = table.metadata
        self._renames = check_columns(spark_schema, table.metadata.schema())
        self._branch = branch
        self._write_id = str(uuid.uuid4())
        self._job = JobOutput(self._io, self._metadata, self._write_id)

    def _write_batches(self, batches: Iterator[pa.RecordBatch]) -> FilesMessage:
        renamed = (_rename(batch, self._renames) for batch in batches)
        files = write_task_files(self._io, self._metadata, renamed, operation_id=self._write_id)
        # The job may have been aborted while this task ran (abort's listing may have missed
        # these files): then they are this task's to delete.
        self._job.seal([f.file_path for f in files])
        return FilesMessage(tuple(files))

    def _delete(self, files: list[DataFile], *, listed: bool = False) -> None:
        """Delete ``files``; with ``listed``, also every file named with this write's id
        (tasks that finished when the job failed are not in the messages Spark passes to
        ``abort``; Spark calls abort while tasks it is killing may still be writing)."""
        if listed:
            self._job.fail([f.file_path for f in files])
        else:
            delete_paths(self._io, sorted({f.file_path for f in files}))

    def _history(self, table: Table) -> list[Mapping[str, str]]:
        """The summaries of the branch's snapshots, newest first."""
        ref = table.metadata.refs.get(self._branch or _MAIN)
        if ref is None:
            return []
        return [s.summary for s in table.metadata.ancestors_of(ref.snapshot_id)]


class IcefloeWriter(_TaskWriter, ds.DataSourceArrowWriter):
    """``df.write.format("icefloe")``: mode ``append``, ``overwrite`` (every row) or
    ``overwrite-partitions`` (dynamic overwrite: the partitions the rows fall in)."""

    def __init__(
        self, ref: TableRef, table: Table, spark_schema: st.StructType, *, mode: str, branch: str | None
    ):
        super().__init__(ref, table, spark_schema, branch=branch)
        self._mode = mode

    def write(self, iterator: Iterator[pa.RecordBatch]) -> FilesMessage:
        return self._write_batches(iterator)

    def commit(self, messages: list[ds.WriterCommitMessage | None]) -> None:
        commit_files(
            self._ref.load(),
            _files(messages),
            self._mode,
            summary={WRITE_ID_KEY: self._write_id},
            branch=self._branch,
        )

    def abort(self, messages: list[ds.WriterCommitMessage | None]) -> None:
        if not self._committed():
            self._delete(_files(messages), listed=True)

    def _committed(self) -> bool:
        try:
            table = self._ref.load()
        except Exception:
            return True  # cannot tell: keep the files (orphans at worst, never lost data)
        return any(summary.get(WRITE_ID_KEY) == self._write_id for summary in self._history(table))


class IcefloeStreamWriter(_TaskWriter, ds.DataSourceStreamArrowWriter):
    """``df.writeStream.format("icefloe")``: output mode ``append`` (each micro-batch appended)
    or ``complete`` (each micro-batch replaces every row)."""

    def __init__(
        self,
        ref: TableRef,
        table: Table,
        spark_schema: st.StructType,
        *,
        overwrite: bool,
        branch: str | None,
        query_id: str,
    ):
        super().__init__(ref, table, spark_schema, branch=branch)
        self._mode = "overwrite" if overwrite else "append"
        self._query_id = query_id

    def write(self, iterator: Iterator[pa.RecordBatch]) -> FilesMessage:
        return self._write_batches(iterator)

    def commit(self, messages: list[ds.WriterCommitMessage | None], batchId: int) -> None:
        files = _files(messages)
        table = self._ref.load()
        last = last_committed_epoch(self._history(table), self._query_id)
        if last is not None and last >= batchId:
            # A replay of a batch already committed (the query restarted after the commit but
            # before Spark recorded it): its new files are not needed.
            self._delete(files)
            return
        summary = {QUERY_ID_KEY: self._query_id, EPOCH_ID_KEY: str(batchId)}
        commit_files(table, files, self._mode, summary=summary, branch=self._branch)

    def abort(self, messages: list[ds.WriterCommitMessage | None], batchId: int) -> None:
        files = _files(messages)
        if not files:
            return
        try:
            last = last_committed_epoch(self._history(self._ref.load()), self._query_id)
        except Exception:
            return  # cannot tell: keep the files
        if last is None or last < batchId:
            self._delete(files)


def last_committed_epoch(history: Sequence[Mapping[str, str]], query_id: str) -> int | None:
    """The epoch of the newest snapshot (of summaries newest first) a streaming query committed."""
    for summary in history:
        if summary.get(QUERY_ID_KEY) == query_id:
            epoch = summary.get(EPOCH_ID_KEY)
            if epoch is not None and epoch.lstrip("-").isdigit():
                return int(epoch)
    return None


def stream_query_id(options: Mapping[str, str]) -> str:
    """The streaming query's id, stable across restarts.

    A Python data source is not told the query id; it is told the ``checkpointLocation``
    option, and Spark keeps the query id in ``<checkpointLocation>/metadata`` (``{"id": ...}``,
    written when the query first starts, before its first batch). When that file cannot be
    read, the id is derived from the checkpoint location (stable too: a query is its
    checkpoint).

    Raises:
        ValidationError: no ``checkpointLocation`` option.
    """
    location = options.get("checkpointLocation")
    if not location:
        raise ValidationError(
            "streaming writes to icefloe need option('checkpointLocation', ...): it identifies the "
            "query, so that each micro-batch is committed exactly once"
        )
    metadata_path = location.rstrip("/") + "/metadata"
    try:
        if "://" in location or location.startswith("file:"):
            data = load_file_io({}, metadata_path).read_bytes(metadata_path)
        else:
            with open(metadata_path, "rb") as stream:
                data = stream.read()
        found = json.loads(data).get("id")
        if isinstance(found, str) and found:
            return found
    except Exception:
        pass
    return "checkpoint-" + hashlib.sha256(location.rstrip("/").encode()).hexdigest()[:32]


# ---------------------------------------------------------------------------------------------
# The DataFrame's columns


def check_columns(spark_schema: st.StructType, schema: Schema) -> tuple[tuple[str, str], ...]:
    """Check a DataFrame's columns against the table's; returns the renames (DataFrame name,
    table name) for names that differ in case.

    Raises:
        ValidationError: a column the table lacks, a missing required column (without a write
            default), or a type that does not convert to the column's (naming the column).
    """
    by_name = {f.name.lower(): f for f in schema.fields}
    extra = [f.name for f in spark_schema.fields if f.name.lower() not in by_name]
    if extra:
        raise ValidationError(
            f"columns {extra} are not in the table schema ({', '.join(f.name for f in schema.fields)})"
        )
    given = {f.name.lower() for f in spark_schema.fields}
    for field in schema.fields:
        if field.required and field.write_default is None and field.name.lower() not in given:
            raise ValidationError(f"required column '{field.name}' is missing from the DataFrame")
    renames = []
    for spark_field in spark_schema.fields:
        field = by_name[spark_field.name.lower()]
        if not _convertible(spark_field.dataType, field):
            raise ValidationError(
                f"column '{field.name}': a DataFrame column of type {spark_field.dataType.simpleString()} "
                f"cannot be written to the table's {field.field_type}"
            )
        if spark_field.name != field.name:
            renames.append((spark_field.name, field.name))
    return tuple(renames)


_INTEGRAL = (st.ByteType, st.ShortType, st.IntegerType)


def _convertible(source: st.DataType, field: it.NestedField) -> bool:
    target = field.field_type
    if isinstance(source, st.NullType):
        return not field.required
    expected = to_spark_type(target, with_ids=False, column=field.name)
    if source.simpleString() == expected.simpleString():
        return True
    if isinstance(target, (it.IntegerType, it.LongType)):
        return isinstance(source, _INTEGRAL)
    if isinstance(target, it.DoubleType):
        return isinstance(source, st.FloatType)
    if isinstance(target, it.DecimalType) and isinstance(source, st.DecimalType):
        return source.scale == target.scale and source.precision <= target.precision
    return False


def _rename(batch: pa.RecordBatch, renames: tuple[tuple[str, str], ...]) -> pa.RecordBatch:
    if not renames:
        return batch
    mapping = dict(renames)
    return batch.rename_columns([mapping.get(name, name) for name in batch.schema.names])
