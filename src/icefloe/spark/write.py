"""``icefloe.spark.write``: Spark tasks write Iceberg data files, the driver commits one snapshot.

Tables Spark's own Parquet writer can write as Iceberg data files are written by it
(``_native_write.py``: no hand-over of rows to Python, so Spark's speed). For the others
(lists, maps, uuid, fixed, bucket partitions, object stores) each Spark task hands its rows
(as Arrow batches, through ``mapInArrow``) to icefloe's own Parquet writer on the executor,
which puts field ids on every field, list elements and map keys / values included (Spark's
own Parquet writer labels only struct fields, and Java Iceberg resolves files by id),
computes partitions with icefloe's transforms, rolls files at ``write.target-file-size-bytes``,
sorts by the table's sort order and measures Java's metrics from the footers. A task returns
its files' descriptions; the driver commits them in one snapshot.

Nothing is left behind by a failed job: a failing task deletes its own files, and the paths of
every task that finished are gathered in an accumulator (merged on the driver even when the
job fails later), so the driver deletes them when the job or the commit fails, and deletes the
files of duplicate task attempts (retries, speculation) that the commit does not use. When the
job fails, the driver first waits for the tasks Spark is killing to stop, then also deletes
every file under the data location named with the job's id (a killed task reports nothing).
"""

from __future__ import annotations

import pickle
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
from pyspark import AccumulatorParam
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.taskcontext import TaskContext

from icefloe.arrow.schema import to_requested_schema
from icefloe.errors import ValidationError
from icefloe.expressions import Expression, always_true
from icefloe.io import FileIO
from icefloe.io.locations import DefaultLocationProvider
from icefloe.spark._conform import conform_column
from icefloe.spark._jobs import delete_paths, job_group, removed_unless_committed, wait_for_tasks
from icefloe.spark._native_write import spark_writer_blocker, write_with_spark
from icefloe.spark.tables import resolve_table
from icefloe.spark.types import to_spark_type
from icefloe.spec import types as it
from icefloe.spec.manifest import DataFile
from icefloe.spec.schema import Schema
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.table import Table
from icefloe.write.parquet import file_name_prefix, write_data_files

__all__ = ["MODES", "PathList", "commit_files", "job_files", "write", "write_data_frame", "write_task_files"]

#: The write modes: add rows; replace all rows (or those ``where`` matches); replace the
#: partitions the new rows fall in.
MODES = ("append", "overwrite", "overwrite-partitions")
_DESCRIPTION = "file binary"


class PathList(AccumulatorParam):  # type: ignore[type-arg]
    """An accumulator of the paths Spark tasks wrote (merged on the driver as tasks finish,
    even when the job fails later), for deleting what a failed job left."""

    def zero(self, value: list[str]) -> list[str]:
        return []

    def addInPlace(self, value1: list[str], value2: list[str]) -> list[str]:
        value1.extend(value2)
        return value1


def write(
    df: DataFrame, table: Table | str, mode: str = "append", where: Expression | str | None = None
) -> Snapshot | None:
    """Write a DataFrame's rows to a table in one snapshot (returned; None when there were no
    rows and nothing needed committing).

    Args:
        df: rows with the table's columns, matched by name (case-insensitively, as Spark
            does); optional columns may be missing (written as nulls).
        table: a :class:`Table` (updated to the commit) or an identifier.
        mode: ``"append"``, ``"overwrite"`` (every row, or the rows ``where`` matches: each
            data file must match it wholly, as in Java's ``overwriteByRowFilter``) or
            ``"overwrite-partitions"`` (dynamic: the partitions the new rows fall in).
        where: the overwrite filter (``mode="overwrite"`` only).

    Raises:
        ValidationError: an unknown mode, columns that do not fit the table, a ``where``
            with another mode.
        Any error of the Spark job or the commit, after deleting every file the job wrote.
    """
    if mode not in MODES:
        raise ValidationError(f"unknown write mode '{mode}'; expected one of {', '.join(MODES)}")
    if where is not None and mode != "overwrite":
        raise ValidationError(f"where= is only for mode='overwrite', not '{mode}'")
    resolved = resolve_table(table)
    files, cleanup = write_data_frame(df, resolved)
    with removed_unless_committed(lambda: cleanup(committed=())):
        if not commit_files(resolved, files, mode, where=where):
            return None
    cleanup(committed=[f.file_path for f in files])
    return resolved.current_snapshot()


def commit_files(
    table: Table,
    files: Sequence[DataFile],
    mode: str,
    *,
    where: Expression | str | None = None,
    summary: Mapping[str, str] | None = None,
    branch: str | None = None,
) -> bool:
    """Commit ``files`` in one snapshot of ``mode`` (see :func:`write`); the operation deletes
    them when the commit surely failed. Shared with the ``icefloe`` data source.

    Args:
        summary: extra snapshot summary properties.
        branch: the branch to commit to (default ``main``).

    Returns:
        False when there was nothing to commit: an append or a partition replacement without
        files (an overwrite without files still removes the rows it replaces).
    """
    op: Any
    if mode == "append":
        if not files:
            return False
        op = table.new_append()
        for file in files:
            op = op.append_file(file)
    elif mode == "overwrite":
        op = table.new_overwrite().overwrite_by_row_filter(where if where is not None else always_true())
        for file in files:
            op = op.add_file(file)
    else:
        if not files:
            return False
        op = table.new_replace_partitions()
        for file in files:
            op = op.add_file(file)
    for key, value in (summary or {}).items():
        op = op.set(key, value)
    if branch:
        op = op.to_branch(branch)
    op.delete_on_failure([f.file_path for f in files])
    op.commit()
    return True


def write_data_frame(df: DataFrame, table: Table) -> tuple[list[DataFile], Any]:
    """Write ``df`` as data files of ``table`` in Spark tasks; nothing is committed.

    Returns:
        the files, and ``cleanup(committed=paths)``: deletes every file the job wrote that
        is not in ``committed`` (all of them when the commit failed).

    Raises:
        Any error of the job, after deleting the files its finished tasks wrote.
    """
    metadata = table.metadata
    schema = metadata.schema()
    prepared = _conform(df, schema)
    io = table.io()
    operation_id = str(uuid.uuid4())
    if spark_writer_blocker(metadata) is None:
        return write_with_spark(prepared, metadata, io, operation_id)
    context = df.sparkSession.sparkContext
    written = context.accumulator([], PathList())
    task = _writer_task(io, metadata, operation_id, written)
    group = f"icefloe-write-{operation_id}"
    try:
        with job_group(context, group):
            rows = prepared.mapInArrow(task, _DESCRIPTION).collect()
    except BaseException:
        # The job failed; tasks Spark is still killing may finish a file after this point,
        # and killed tasks never report theirs. Wait for them to stop, then delete what the
        # accumulator knows and every file named with this job's id.
        wait_for_tasks(context, group)
        delete_paths(io, [*written.value, *job_files(io, metadata, operation_id)])
        raise
    files: list[DataFile] = [f for row in rows for f in pickle.loads(row[0])]

    def cleanup(committed: Sequence[str]) -> None:
        keep = set(committed)
        delete_paths(io, [p for p in written.value if p not in keep])

    return files, cleanup


def job_files(io: FileIO, metadata: TableMetadata, operation_id: str) -> list[str]:
    """The files under the table's data location named with ``operation_id`` (best effort:
    a listing that fails leaves only the accumulator's paths to delete)."""
    data_location = DefaultLocationProvider.for_table(metadata.location, metadata.properties).data_location
    try:
        return [
            info.location
            for info in io.list_prefix(data_location)
            if operation_id in info.location.rsplit("/", 1)[-1]
        ]
    except Exception:  # a missing folder, a store that cannot list
        return []


def _conform(df: DataFrame, schema: Schema) -> DataFrame:
    """The DataFrame's columns in the table's order and Spark types (missing optional columns
    as nulls; struct fields matched by name, see ``_conform.py``); uuids stay strings (the
    executor parses them)."""
    by_name = {c.lower(): c for c in df.columns}
    wanted = {f.name.lower() for f in schema.fields}
    extra = [c for c in df.columns if c.lower() not in wanted]
    if extra:
        raise ValidationError(
            f"columns {extra} are not in the table schema ({', '.join(f.name for f in schema.fields)})"
        )
    columns = []
    for field in schema.fields:
        spark_type = to_spark_type(field.field_type, column=field.name, with_ids=False)
        source = by_name.get(field.name.lower())
        if source is None:
            if field.required:
                raise ValidationError(f"required column '{field.name}' is missing from the DataFrame")
            columns.append(F.lit(None).cast(spark_type).alias(field.name))
        else:
            source_type = df.schema[source].dataType
            columns.append(
                conform_column(F.col(f"`{source}`"), source_type, field.field_type, field.name).alias(
                    field.name
                )
            )
    return df.select(*columns)


def _writer_task(io: FileIO, metadata: TableMetadata, operation_id: str, written: Any) -> Any:
    def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        files = write_task_files(io, metadata, batches, operation_id=operation_id)
        written.add([f.file_path for f in files])
        yield pa.RecordBatch.from_arrays([pa.array([pickle.dumps(files)], pa.binary())], names=["file"])

    return task


def write_task_files(
    io: FileIO, metadata: TableMetadata, batches: Iterable[pa.RecordBatch], *, operation_id: str
) -> list[DataFile]:
    """Write one Spark task's rows as data files of the table (on the executor); nothing is
    committed. Shared by :func:`write` and the ``icefloe`` data source.

    Args:
        io, metadata: the table's.
        batches: the task's rows, columns named as the table's (uuids as strings); conformed
            to the table schema here.
        operation_id: names the job's files (with the task's partition and attempt ids).

    Raises:
        ValidationError: rows that do not fit the table (naming the column); the files this
            call created are deleted first.
    """
    schema = metadata.schema()
    uuid_columns = [f.name for f in schema.fields if isinstance(f.field_type, it.UUIDType)]
    context = TaskContext.get()
    partition_id = context.partitionId() if context else 0
    attempt = context.taskAttemptId() if context else 0

    def conformed() -> Iterator[pa.RecordBatch]:
        for batch in batches:
            if batch.num_rows:
                yield to_requested_schema(_parse_uuids(batch, uuid_columns), schema)

    return write_data_files(
        io,
        table_location=metadata.location,
        properties=metadata.properties,
        schema=schema,
        spec=metadata.spec(),
        data=conformed(),
        sort_order=metadata.sort_order(),
        file_name_prefix=file_name_prefix(partition_id, attempt, operation_id),
    )


def _parse_uuids(batch: pa.RecordBatch, columns: Sequence[str]) -> pa.RecordBatch:
    if not columns:
        return batch
    arrays = list(batch.columns)
    for name in columns:
        index = batch.schema.get_field_index(name)
        values = batch.column(index).to_pylist()
        arrays[index] = pa.array([None if v is None else uuid.UUID(v).bytes for v in values], pa.binary(16))
    return pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)
