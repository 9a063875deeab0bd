"""``icefloe.spark.write.frames``: Spark tasks write Iceberg data files, the driver commits one snapshot.

Tables Spark's own Parquet writer can write as Iceberg data files are written by it
(``spark_writer.py``: no hand-over of rows to Python, so Spark's speed). For the others
(lists, maps, uuid, fixed, bucket partitions, object stores) each Spark task hands its rows
(as Arrow batches, through ``mapInArrow``) to icefloe's own Parquet writer on the executor,
which puts field ids on every field, list elements and map keys / values included (Spark's
own Parquet writer labels only struct fields, and Java Iceberg resolves files by id),
computes partitions with icefloe's transforms, rolls files at ``write.target-file-size-bytes``,
sorts by the table's sort order and measures Java's metrics from the footers. A task returns
its files' descriptions; the driver commits them in one snapshot.

Nothing is left behind by a failed job: a failing task deletes its own files; when the job
fails, the driver deletes every file named with the job's id (``jobs.JobOutput``: tasks that
finish later see its abort marker and delete theirs), and after a job whose tasks were retried,
the files of lost attempts that the commit does not use.
"""

from __future__ import annotations

import pickle
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as st
from pyspark.taskcontext import TaskContext

from icefloe.arrow.schema import to_requested_schema
from icefloe.errors import ValidationError, ValidationException
from icefloe.expressions import Expression, always_true
from icefloe.io import FileIO
from icefloe.scan import plan_files
from icefloe.spark.jobs import (
    JobOutput,
    any_retried,
    removed_unless_committed,
    session_settings,
    speculative,
    tagged,
    task_attempt,
    task_error,
)
from icefloe.spark.paths import reported_path
from icefloe.spark.read.choice import hadoop_schemes
from icefloe.spark.read.frames import FILE_COLUMN, read_tasks
from icefloe.spark.rows.conditions import table_condition
from icefloe.spark.tables import resolve_table
from icefloe.spark.types import to_spark_type
from icefloe.spark.wap import wap_write
from icefloe.spark.write.conform import conform_column
from icefloe.spark.write.distribution import Distribution, distribute, distribution_for
from icefloe.spark.write.spark_writer import spark_writer_blocker, write_with_spark
from icefloe.spec import types as it
from icefloe.spec.manifest import DataFile
from icefloe.spec.schema import Schema
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.table import Table
from icefloe.write.parquet import file_name_prefix, write_data_files

__all__ = [
    "MODES",
    "OverwriteScope",
    "WriteTarget",
    "commit_files",
    "conform_to_table",
    "overwrite_scope",
    "write",
    "write_data_frame",
    "write_task_files",
]

#: The write modes: add rows; replace all rows (or those ``where`` matches); replace the
#: partitions the new rows fall in.
MODES = ("append", "overwrite", "overwrite-partitions")
# A StructType, not DDL text: Spark Connect would send the text to the server to parse it.
_DESCRIPTION = st.StructType([st.StructField("file", st.BinaryType())])
# Rows per Arrow batch Spark hands to icefloe's writer in a task. Spark's default (10 000) makes
# both sides pay their per-batch costs (the JVM's Arrow writer, icefloe's conform and buffer
# steps) ten times more often than pyarrow's own batch size; a session that sets another value
# keeps it, and Spark's maxBytesPerBatch still bounds a batch's memory.
_ARROW_BATCH_ROWS = "spark.sql.execution.arrow.maxRecordsPerBatch"
_SPARK_BATCH_ROWS = "10000"
_WRITE_BATCH_ROWS = "131072"


def write(
    df: DataFrame,
    table: Table | str,
    mode: str = "append",
    where: Expression | str | Column | None = None,
    *,
    branch: str | None = None,
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
        where: the overwrite filter (``mode="overwrite"`` only): a Spark SQL boolean expression,
            a Spark column or an icefloe expression. When all of it converts to an Iceberg
            filter, the table's metadata decides which files it replaces; otherwise Spark
            counts each candidate file's matching rows first.
        branch: commit to this branch (created if missing) instead of ``main``.

    With ``write.wap.enabled=true`` on the table, ``spark.wap.id`` stages the snapshot
    (returned, not current) and ``spark.wap.branch`` picks the branch (see ``spark/wap.py``).

    Raises:
        ValidationError: an unknown mode, columns that do not fit the table, a ``where``
            with another mode.
        ValidationException: ``where`` matches some but not all rows of a data file (nothing
            is written).
        ValidationError: a branch with an overwrite whose ``where`` is not an Iceberg filter.
        Any error of the Spark job or the commit, after deleting every file the job wrote.
    """
    if mode not in MODES:
        raise ValidationError(f"unknown write mode '{mode}'; expected one of {', '.join(MODES)}")
    if where is not None and mode != "overwrite":
        raise ValidationError(f"where= is only for mode='overwrite', not '{mode}'")
    resolved = resolve_table(table)
    target = wap_write(df.sparkSession, resolved, branch)
    branch = target.branch
    scope: OverwriteScope | Expression | str | None
    if branch is not None and where is not None:
        if isinstance(where, Column):
            raise ValidationError("an overwrite of a branch takes an Iceberg filter, not a Spark column")
        scope = where  # judged on the branch's own files by the commit
    else:
        scope = None if where is None else overwrite_scope(df.sparkSession, resolved, where)
    files, cleanup = write_data_frame(df, resolved)
    with removed_unless_committed(lambda: cleanup(committed=())):
        committed = commit_files(
            resolved,
            files,
            mode,
            where=scope,
            summary=target.summary(),
            branch=branch,
            stage_only=target.wap_id is not None,
        )
        if not committed:
            return None
    cleanup(committed=[f.file_path for f in files])
    if target.wap_id is not None:
        return resolved.snapshots()[-1]  # the staged one: added last, not current
    if branch is not None:
        return resolved.snapshot(branch)
    return resolved.current_snapshot()


@dataclass(frozen=True)
class OverwriteScope:
    """What an overwrite with a condition replaces.

    Attributes:
        row_filter: an Iceberg filter equivalent to the condition: the operation removes the
            files it matches wholly, judged on the metadata at commit time.
        snapshot, files: otherwise, the data files of ``snapshot`` Spark found to match the
            condition in every row (removed by name, the commit validated from ``snapshot``).
        conflict_filter: what the condition implies, for conflict detection.
    """

    row_filter: Expression | str | None
    snapshot: Snapshot | None = None
    files: tuple[DataFile, ...] = ()
    conflict_filter: Expression | None = None


def overwrite_scope(spark: SparkSession, table: Table, where: Expression | str | Column) -> OverwriteScope:
    """The files an overwrite ``where`` replaces (see :func:`write`).

    Raises:
        ValidationException: a file where some, but not all, live rows match (as Java's
            ``overwriteByRowFilter`` refuses it).
    """
    metadata = table.metadata
    schema = metadata.schema()
    condition = table_condition(spark, schema, where)
    if condition.exact:
        return OverwriteScope(row_filter=condition.pushed)
    snapshot = metadata.current_snapshot()
    if snapshot is None:
        return OverwriteScope(row_filter=None, conflict_filter=condition.pushed)
    tasks = plan_files(table.io(), metadata, snapshot, condition.pushed, schema=schema)
    rows = read_tasks(
        spark, metadata, table.io(), tasks, table_schema=schema, projection=schema, keep_file_columns=True
    )
    counts = (
        rows.groupBy(FILE_COLUMN)
        .agg(
            F.count(F.lit(1)).alias("rows"),
            F.sum(F.when(F.coalesce(condition.rows, F.lit(False)), 1).otherwise(0)).alias("matching"),
        )
        .filter("matching > 0")
        .collect()
    )
    schemes = hadoop_schemes(spark, metadata)
    by_path = {reported_path(t.file.file_path, schemes): t.file for t in tasks}
    partial = [by_path[row[FILE_COLUMN]].file_path for row in counts if row["matching"] < row["rows"]]
    if partial:
        raise ValidationException(
            f"Cannot overwrite where {where}: it matches some, but not all, rows of data file "
            f"{partial[0]}"
            + (f" (and {len(partial) - 1} more)" if len(partial) > 1 else "")
            + "; overwrite replaces whole files (use isp.delete and isp.write for row-level changes)"
        )
    files = tuple(by_path[row[FILE_COLUMN]] for row in counts)
    return OverwriteScope(row_filter=None, snapshot=snapshot, files=files, conflict_filter=condition.pushed)


def commit_files(
    table: Table,
    files: Sequence[DataFile],
    mode: str,
    *,
    where: OverwriteScope | Expression | str | None = None,
    summary: Mapping[str, str] | None = None,
    branch: str | None = None,
    stage_only: bool = False,
) -> bool:
    """Commit ``files`` in one snapshot of ``mode`` (see :func:`write`); the operation deletes
    them when the commit surely failed. Shared with the ``icefloe`` data source.

    Args:
        where: what an overwrite replaces: an :class:`OverwriteScope`, or an Iceberg filter
            (icefloe's grammar for a string); None: every row.
        summary: extra snapshot summary properties.
        branch: the branch to commit to (default ``main``).
        stage_only: add the snapshot without making it current (write-audit-publish).

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
        op = table.new_overwrite()
        scope = (
            where if isinstance(where, OverwriteScope) else OverwriteScope(row_filter=where or always_true())
        )
        if scope.row_filter is not None:
            op = op.overwrite_by_row_filter(scope.row_filter)
        else:
            # Files Spark judged on `snapshot`: none of them may have changed since, and no
            # data the condition may match may have arrived (it would escape the overwrite).
            for removed in scope.files:
                op = op.delete_file(removed)
            if scope.snapshot is not None:
                op = op.validate_from_snapshot(scope.snapshot.snapshot_id)
            op = op.conflict_detection_filter(scope.conflict_filter or always_true())
            op = op.validate_no_conflicting_data().validate_no_conflicting_deletes()
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
    if stage_only:
        op = op.stage_only()
    op.delete_on_failure([f.file_path for f in files])
    op.commit()
    return True


class WriteTarget(Protocol):
    """What ``write_data_frame`` needs of a table: a ``Table``, or a transaction (a create or
    replace transaction writes the files of a table not yet committed)."""

    @property
    def metadata(self) -> TableMetadata: ...

    def io(self) -> FileIO: ...


def write_data_frame(
    df: DataFrame,
    table: WriteTarget,
    *,
    distribution: Distribution | None = None,
    file_column: str | None = None,
) -> tuple[list[DataFile], Any]:
    """Write ``df`` as data files of ``table`` (a ``Table`` or a transaction) in Spark tasks;
    nothing is committed.

    Args:
        distribution: how rows are clustered over the write tasks first (default: the
            table's ``write.distribution-mode``, see ``distribution.py``).
        file_column: a column of ``df`` naming the data file each row came from (a
            copy-on-write rewrite may cluster by it); not written.

    Returns:
        the files, and ``cleanup(committed=paths)``: deletes every file the job wrote that
        is not in ``committed`` (all of them when the commit failed).

    Raises:
        ValidationError: rows that do not fit the table (naming the column).
        Any error of the job, after deleting the files its finished tasks wrote.
    """
    metadata = table.metadata
    schema = metadata.schema()
    if distribution is None:
        distribution = distribution_for(df.sparkSession, metadata, "write")
    prepared = conform_to_table(df, schema, keep=file_column)
    prepared = distribute(prepared, metadata, distribution, file_column=file_column)
    if file_column is not None:
        prepared = prepared.drop(file_column)
    io = table.io()
    operation_id = str(uuid.uuid4())
    if spark_writer_blocker(metadata) is None:
        return write_with_spark(prepared, metadata, io, operation_id)
    spark = df.sparkSession
    job = JobOutput(io, metadata, operation_id)
    task = _writer_task(io, metadata, job)
    try:
        batch_rows = session_settings(
            spark,
            {_ARROW_BATCH_ROWS: _WRITE_BATCH_ROWS},
            unless_chosen={_ARROW_BATCH_ROWS: _SPARK_BATCH_ROWS},
        )
        with batch_rows, tagged(spark, "write"):
            rows = prepared.mapInArrow(task, _DESCRIPTION).collect()
    except BaseException as exc:
        # Finished tasks' reports are lost with the failed job: delete every file named with
        # its id (tasks still finishing see the abort marker and delete their own).
        job.fail()
        typed = task_error(exc)
        if typed is not None:
            raise typed from None  # the task's own error, not a worker traceback
        raise
    reports: list[tuple[int, list[DataFile]]] = [pickle.loads(row[0]) for row in rows]
    files = [f for _, written in reports for f in written]
    retried = any_retried(attempt for attempt, _ in reports) or speculative(spark)

    def cleanup(committed: Sequence[str]) -> None:
        job.keep_only(committed, [f.file_path for f in files], retried=retried)

    return files, cleanup


def conform_to_table(df: DataFrame, schema: Schema, keep: str | None = None) -> DataFrame:
    """The DataFrame's columns in the table's order and Spark types (missing optional columns
    as nulls; struct fields matched by name, see ``conform.py``), then ``keep`` as it is;
    uuids stay strings (the executor parses them)."""
    by_name = {c.lower(): c for c in df.columns if c != keep}
    wanted = {f.name.lower() for f in schema.fields}
    extra = [c for c in by_name.values() if c.lower() not in wanted]
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
    if keep is not None:
        columns.append(F.col(keep))
    return df.select(*columns)


def _writer_task(io: FileIO, metadata: TableMetadata, job: JobOutput) -> Any:
    def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        files = write_task_files(io, metadata, batches, operation_id=job.operation_id)
        job.seal([f.file_path for f in files])
        report = pickle.dumps((task_attempt().attempt_number, files))
        yield pa.RecordBatch.from_arrays([pa.array([report], pa.binary())], names=["file"])

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
