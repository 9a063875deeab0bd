"""Row-level changes from Spark: ``delete``, ``update`` and ``merge_into``.

Spark finds the rows a change touches (reading the table with ``icefloe.spark.read.frames``'s
machinery, which knows each row's file and position) and writes the new rows in Spark tasks;
icefloe then writes the position deletes or deletion vectors (merge-on-read) or Spark rewrites
the touched files' other rows (copy-on-write), per ``write.{delete,update,merge}.mode``, and
commits one snapshot with the validations of the table's isolation level
(``write.*.isolation-level``), exactly as ``table.delete`` / ``table.upsert`` do.

Which snapshot, case for case as Java Iceberg 1.9.2's Spark integration commits it (also when
nothing changes, so the two histories stay the same):

- DELETE whose whole condition is an Iceberg filter that the metadata decides (every file it
  may match matches in every row, or no file may: a missing partition, a value outside every
  file's bounds, a table without files) is Java's metadata-only delete: a ``delete`` snapshot,
  removing whole files unread (``table/rows/metadata_delete.py``); a condition that is always
  false commits nothing.
- any other DELETE, every UPDATE and every MERGE is a row-level change: an ``overwrite`` when it
  changes nothing (no file added or removed), else per what it adds and removes.
- a MERGE with only WHEN NOT MATCHED clauses is an insert: an ``append`` (also of no rows).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow.compute as pc
from pyspark import StorageLevel
from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from icefloe.errors import ValidationError
from icefloe.expressions import Expression, bind
from icefloe.expressions.model import AlwaysFalse, AlwaysTrue
from icefloe.scan import FileScanTask, plan_files
from icefloe.spark.jobs import removed_unless_committed
from icefloe.spark.paths import reported_path
from icefloe.spark.read.choice import hadoop_schemes
from icefloe.spark.read.frames import FILE_COLUMN, POSITION_COLUMN, read_tasks
from icefloe.spark.rows.assignments import check_assignments, literal_columns, unresolved
from icefloe.spark.rows.conditions import Condition, table_condition
from icefloe.spark.tables import resolve_table
from icefloe.spark.wap import WapWrite, wap_write
from icefloe.spark.write.distribution import distribution_for
from icefloe.spark.write.frames import conform_to_table, write_data_frame
from icefloe.spec.schema import Schema
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.rows.metadata_delete import delete_by_metadata, metadata_decides
from icefloe.table.rows.row_changes import (
    MERGE_ON_READ,
    FoundRows,
    WrittenFiles,
    branch_head,
    change_isolation,
    change_mode,
    commit_row_change,
    write_change_deletes,
)
from icefloe.table.rows.update_rows import updated_columns
from icefloe.table.table import Table
from icefloe.write.options import ParquetWriteOptions

__all__ = ["apply_change", "delete", "update"]

#: Up to this many changed rows, a copy-on-write change sends their (file, position) pairs to
#: every task (a hash table of a few hundred MB at most) instead of shuffling the rewritten
#: files' rows to meet them; the driver holds them already (``_positions``).
_BROADCAST_POSITIONS = 2_000_000


def _plan(
    table: Table, row_filter: Expression, branch: str | None
) -> tuple[Snapshot | None, list[FileScanTask]]:
    """The head of ``branch`` (None: main) and its tasks matching ``row_filter``."""
    metadata = table.metadata
    snapshot = branch_head(metadata, branch)
    if snapshot is None:
        return None, []
    return snapshot, plan_files(table.io(), metadata, snapshot, row_filter, schema=metadata.schema())


def _live_rows(spark: SparkSession, table: Table, tasks: Sequence[FileScanTask]) -> DataFrame:
    """Every live row of the tasks' files, with their file and position columns."""
    metadata = table.metadata
    return read_tasks(
        spark,
        metadata,
        table.io(),
        tasks,
        table_schema=metadata.schema(),
        projection=metadata.schema(),
        keep_file_columns=True,
    )


def _positions(
    changed: DataFrame, tasks: Sequence[FileScanTask], schemes: Mapping[str, str]
) -> list[tuple[FileScanTask, np.ndarray]]:
    """The changed rows' positions, per task (collected to the driver as Arrow); ``schemes``:
    the read's Hadoop schemes, which the file column's paths carry."""
    by_path = {reported_path(t.file.file_path, schemes): t for t in tasks}
    located = changed.select(FILE_COLUMN, POSITION_COLUMN).toArrow()
    if located.num_rows == 0:
        return []
    grouped = located.group_by(FILE_COLUMN).aggregate([(POSITION_COLUMN, "list")])
    result = []
    for path, positions in zip(
        grouped.column(FILE_COLUMN).to_pylist(),
        grouped.column(f"{POSITION_COLUMN}_list").to_pylist(),
        strict=True,
    ):
        result.append((by_path[path], np.unique(np.asarray(positions, dtype=np.int64))))
    return result


def apply_change(
    spark: SparkSession,
    table: Table,
    *,
    kind: str,
    snapshot: Snapshot | None,
    tasks: Sequence[FileScanTask],
    whole: Sequence[Any],
    changed: DataFrame,
    new_rows: DataFrame | None,
    conflict_filter: Expression,
    new_rows_file_column: str | None = None,
    target: WapWrite | None = None,
    append_only: bool = False,
    new_rows_count: int | None = None,
) -> Snapshot | None:
    """Commit a change: ``changed`` (live rows with file and position) go away, ``new_rows``
    (table columns) come in; files in ``whole`` go away unread. Committed also when nothing
    changes (an ``overwrite`` without files), as Java commits its row-level changes.

    Args:
        kind: ``"delete"``, ``"update"`` or ``"merge"`` (which ``write.<kind>.mode`` and
            isolation level apply).
        snapshot: the snapshot the change read (validations start there).
        tasks: the planned tasks ``changed`` came from.
        new_rows_file_column: a column of ``new_rows`` naming the file a row's old version
            came from (a copy-on-write update clusters by it), not written.
        target: where the change commits (:func:`icefloe.spark.wap.wap_write`: a branch, and
            a write-audit-publish id that stages it); None: main. ``snapshot`` is its head.
        append_only: nothing goes away (``changed`` is ignored): ``new_rows`` are appended, an
            ``append`` snapshot even of no rows (Java runs a MERGE of only NOT MATCHED clauses
            as an insert).
        new_rows_count: how many ``new_rows`` there are, when known (an UPDATE's are its
            changed rows): an unclustered write of them goes to as many files as they fill.
    """
    target = target or WapWrite(None)
    if append_only:
        if new_rows is None:
            raise ValidationError("an append-only change needs the rows it appends")
        return _append(spark, table, new_rows, target)
    metadata = table.metadata
    mode, isolation = change_mode(metadata, kind), change_isolation(metadata, kind)
    partial = _positions(changed, tasks, hadoop_schemes(spark, metadata))
    found = FoundRows(snapshot, whole=list(whole), partial=partial)
    found.matched_rows = sum(len(p) for _, p in partial) + sum(f.record_count for f in whole)
    written = WrittenFiles()
    cleanups: list[Any] = []
    added: list[Any] = []

    def remove_written() -> None:
        for cleanup in cleanups:
            cleanup(committed=())

    # How many rows come in, when known: an UPDATE's are the rows it changes.
    if new_rows is None:
        new_count: int | None = 0
    elif new_rows_count is not None:
        new_count = new_rows_count
    else:
        new_count = found.matched_rows if kind == "update" else None
    try:
        if mode == MERGE_ON_READ:
            if new_rows is not None:
                distribution = distribution_for(spark, metadata, kind, copy_on_write=False)
                if distribution.mode == "none" and new_count is not None:
                    # The new rows sit in the partitions of the read (one per split of every
                    # file read): as many files as their bytes fill, not one per split.
                    new_rows = new_rows.coalesce(_files_for(new_count, tasks, metadata))
                files, cleanup = write_data_frame(
                    new_rows,
                    table,
                    distribution=distribution,
                    file_column=new_rows_file_column,
                )
                added.extend(files)
                cleanups.append(cleanup)
            write_change_deletes(table, found, written)
        else:
            # The touched files' other rows and the new rows, written by one job (as Java's
            # copy-on-write does): a partition gets one new file, not one per kind of row.
            schema = metadata.schema()
            parts = []
            if partial:
                gone = changed.select(FILE_COLUMN, POSITION_COLUMN)
                if found.matched_rows <= _BROADCAST_POSITIONS:
                    # Spark would otherwise sort-merge the anti-join: shuffle every kept row.
                    gone = F.broadcast(gone)
                remainder = _live_rows(spark, table, [task for task, _ in partial]).join(
                    gone, on=[FILE_COLUMN, POSITION_COLUMN], how="left_anti"
                )
                parts.append(conform_to_table(remainder.drop(POSITION_COLUMN), schema, keep=FILE_COLUMN))
            if new_rows is not None:
                if new_rows_file_column is None:
                    new_rows = new_rows.withColumn(FILE_COLUMN, F.lit(None).cast("string"))
                elif new_rows_file_column != FILE_COLUMN:
                    new_rows = new_rows.withColumnRenamed(new_rows_file_column, FILE_COLUMN)
                parts.append(conform_to_table(new_rows, schema, keep=FILE_COLUMN))
            if parts:
                frame = functools.reduce(lambda a, b: a.unionByName(b), parts)
                distribution = distribution_for(spark, metadata, kind, copy_on_write=True)
                if distribution.mode == "none":
                    # Unclustered, the rewrite would write a file per split read (and per
                    # partition of the new rows): as many as the bytes fill instead.
                    kept = sum(t.file.record_count for t, _ in partial) - found.matched_rows
                    rows = kept + (new_count if new_count is not None else found.matched_rows)
                    frame = frame.coalesce(_files_for(rows, [t for t, _ in partial] or tasks, metadata))
                files, cleanup = write_data_frame(
                    frame,
                    table,
                    distribution=distribution,
                    file_column=FILE_COLUMN,
                )
                written.data.extend(files)
                cleanups.append(cleanup)
    except BaseException:
        table.io().delete_quietly(written.paths())
        remove_written()
        raise
    with removed_unless_committed(remove_written):
        result = commit_row_change(
            table,
            found,
            written,
            mode=mode,
            isolation=isolation,
            conflict_filter=conflict_filter,
            new_rows=added,
            branch=target.branch,
            snapshot_properties=target.summary(),
            stage_only=target.wap_id is not None,
        )
    committed = [f.file_path for f in [*written.data, *added]]
    for cleanup in cleanups:
        cleanup(committed=committed)
    return result


def _files_for(rows: int, tasks: Sequence[FileScanTask], metadata: TableMetadata) -> int:
    """How many files ``rows`` rows fill at the table's target file size, at the bytes per row
    of the files ``tasks`` read (at least one)."""
    stored = sum(t.file.file_size_in_bytes for t in tasks)
    records = sum(t.file.record_count for t in tasks)
    per_row = stored / records if records else 64.0
    target = ParquetWriteOptions.from_properties(metadata.properties).target_file_size_bytes
    return max(1, math.ceil(rows * per_row / target))


def _append(spark: SparkSession, table: Table, rows: DataFrame, target: WapWrite) -> Snapshot | None:
    """Append ``rows`` in one ``append`` snapshot (committed also without rows, as Java's)."""
    distribution = distribution_for(spark, table.metadata, "merge", copy_on_write=False)
    files, cleanup = write_data_frame(rows, table, distribution=distribution)
    with removed_unless_committed(lambda: cleanup(committed=())):
        append = table.new_append()
        for file in files:
            append.append_file(file)
        for key, value in target.summary().items():
            append.set(key, value)
        if target.branch is not None:
            append.to_branch(target.branch)
        if target.wap_id is not None:
            append.stage_only()
        append.delete_on_failure([f.file_path for f in files])
        append.commit()
    cleanup(committed=[f.file_path for f in files])
    return table.metadata.snapshot_by_id(append.snapshot_id)


def _matching(condition: Condition) -> Column:
    """The rows the condition is true on (not null)."""
    return F.coalesce(condition.rows, F.lit(False))


def _split_whole(tasks: Sequence[FileScanTask]) -> tuple[list[Any], list[FileScanTask]]:
    """Tasks every row of which matches (removable unread) and the others."""
    whole = [t.file for t in tasks if isinstance(t.residual, AlwaysTrue) and not t.deletes]
    rest = [t for t in tasks if not (isinstance(t.residual, AlwaysTrue) and not t.deletes)]
    return whole, rest


def delete(
    spark: SparkSession,
    table: Table | str,
    where: Expression | str | Column | None = None,
    *,
    branch: str | None = None,
) -> Snapshot | None:
    """Delete the rows matching ``where`` (rows where it is null stay); returns the snapshot
    committed (also when no row matched, as Java's DELETE: see the module docstring), or None
    when ``where`` is always false (nothing is committed).

    Args:
        where: a Spark SQL boolean expression (``"id % 100 = 0"``, functions, casts and
            subqueries as Spark allows them in a filter), a Spark column, or an icefloe
            expression; None deletes every row. Spark evaluates it on the rows; the part that
            converts to an Iceberg filter prunes the files read, and when all of it converts,
            files whose every row matches are removed without being read.
        branch: change that branch (its head is read and committed to) instead of main; a
            branch that does not exist yet is created from the current snapshot, as Java does.

    With ``write.wap.enabled=true`` on the table, ``spark.wap.id`` stages the snapshot and
    ``spark.wap.branch`` picks the branch, as for ``isp.write`` (``icefloe.spark.wap``).
    """
    resolved = resolve_table(table)
    target = wap_write(spark, resolved, branch)
    metadata = resolved.metadata
    condition = table_condition(spark, metadata.schema(), where)
    row_filter = condition.pushed
    if condition.exact and isinstance(bind(metadata.schema(), row_filter), AlwaysFalse):
        return None  # Java skips a delete whose condition is always false
    snapshot, tasks = _plan(resolved, row_filter, target.branch)
    if condition.exact and metadata_decides(metadata, tasks, row_filter):
        return delete_by_metadata(
            resolved,
            row_filter,
            snapshot_properties=target.summary(),
            branch=target.branch,
            stage_only=target.wap_id is not None,
        )
    whole, rest = _split_whole(tasks) if condition.exact else ([], list(tasks))
    changed = _live_rows(spark, resolved, rest).filter(_matching(condition))
    return apply_change(
        spark,
        resolved,
        kind="delete",
        snapshot=snapshot,
        tasks=rest,
        whole=whole,
        changed=changed,
        new_rows=None,
        conflict_filter=row_filter,
        target=target,
    )


def update(
    spark: SparkSession,
    table: Table | str,
    set: Mapping[str, str | Column] | None = None,
    where: Expression | str | Column | None = None,
    *,
    new_values: Mapping[str, Any] | None = None,
    branch: str | None = None,
) -> Snapshot | None:
    """Set columns of the rows matching ``where``; returns the snapshot, committed also when no
    row matched (an ``overwrite`` without files, as Java's UPDATE commits). The arguments are
    ``table.update``'s:

    Args:
        set: column -> its new value as a Spark SQL expression of the row (``{"amount":
            "amount * 2", "country": "'ZZ'"}``: a string literal is quoted) or a Spark column.
        new_values: column -> a literal value (a Python value or a ``pyarrow.Scalar``), cast to
            the column's type (``{"country": "ZZ"}``). A column is in ``set`` or here, not both.
        where, branch: what :func:`delete` takes.

    Values are assigned as Spark's ``UPDATE`` assigns them (``spark.sql.storeAssignmentPolicy``,
    ANSI by default: a STRING does not go into a DOUBLE column without a CAST).
    """
    resolved = resolve_table(table)
    target = wap_write(spark, resolved, branch)
    schema = resolved.metadata.schema()
    case_sensitive = str(spark.conf.get("spark.sql.caseSensitive", "false")).lower() == "true"
    columns = updated_columns(schema, set, new_values, case_sensitive)
    expressions = {n: v for n, v in columns.computed.items() if isinstance(v, (str, Column))}
    for name, value in columns.computed.items():
        if name not in expressions:  # a constant in set=, as table.update takes one
            _refuse_arrow_values(name, value)
            columns.literal[name] = value
    assignments = {name: F.expr(v) if isinstance(v, str) else v for name, v in expressions.items()}
    condition = table_condition(spark, schema, where)
    row_filter = condition.pushed
    snapshot, tasks = _plan(resolved, row_filter, target.branch)
    matching = _live_rows(spark, resolved, tasks).filter(_matching(condition))
    assignments.update(literal_columns(schema, columns.literal))
    updated = _select_assigned(matching, schema, assignments, expressions)
    check_assignments(spark, schema, updated, expressions)
    # Each affected file is read once: the updated rows (with where they were) are cached for
    # both the positions that go away and the new versions written.
    updated = updated.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        return apply_change(
            spark,
            resolved,
            kind="update",
            snapshot=snapshot,
            tasks=tasks,
            whole=[],
            changed=updated.select(FILE_COLUMN, POSITION_COLUMN),
            new_rows=updated.drop(POSITION_COLUMN),
            conflict_filter=row_filter,
            new_rows_file_column=FILE_COLUMN,
            target=target,
        )
    finally:
        updated.unpersist()


def _select_assigned(
    changed: DataFrame, schema: Schema, assignments: Mapping[str, Column], expressions: Mapping[str, Any]
) -> DataFrame:
    """The changed rows with their new values, file and position (a classic session analyses
    them here)."""
    try:
        return changed.select(
            *[assignments.get(f.name, F.col(f"`{f.name}`")).alias(f.name) for f in schema.fields],
            FILE_COLUMN,
            POSITION_COLUMN,
        )
    except AnalysisException as exc:
        error = unresolved(exc, expressions)
        if error is None:
            raise
        raise error from exc


def _refuse_arrow_values(name: str, value: Any) -> None:
    if callable(value) or isinstance(value, pc.Expression):
        raise ValidationError(
            f"update: set= of '{name}' is a function or an Arrow expression, which Spark cannot "
            "run; isp.update takes Spark SQL strings, Spark columns and constants"
        )
