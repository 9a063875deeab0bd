"""``icefloe.spark.merge_into``: MERGE INTO a table from a Spark DataFrame.

The builder has the shape of PySpark 4's ``DataFrame.mergeInto``::

    (merge_into(source_df, table, "t.id = s.id")     # target alias t, source alias s
        .when_matched("s.op = 'D'").delete()
        .when_matched().update({"amount": "s.amount"})   # or .update_all()
        .when_not_matched().insert_all()                # or .insert({...})
        .when_not_matched_by_source("t.day < '2024-01-01'").delete()
        .merge())

Clauses of one kind are tried in order; the first whose condition holds acts (SQL's MERGE).
A target row matched by two source rows is an error (it would be changed twice), raised before
anything is written. Target rows no clause changes stay where they are.

How it runs: the table's live rows (with file and position; pruned by what the condition says
of the target alone, unless a NOT MATCHED BY SOURCE clause needs every row) are joined with the
source on the condition (outer on the sides a clause needs); each joined row gets its action; the changed target rows' positions
and the new rows (updates and inserts) go to :func:`icefloe.spark.rows.changes.apply_change`,
which writes and commits per ``write.merge.mode`` and the isolation level.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from icefloe.errors import ValidationError
from icefloe.expressions import always_true
from icefloe.scan import plan_files
from icefloe.spark.read.frames import FILE_COLUMN, POSITION_COLUMN, read_tasks
from icefloe.spark.rows.changes import apply_change
from icefloe.spark.rows.conditions import merge_target_filter
from icefloe.spark.tables import resolve_table
from icefloe.spark.wap import wap_write
from icefloe.spec.snapshots import Snapshot
from icefloe.table.rows.row_changes import branch_head
from icefloe.table.table import Table

__all__ = ["MergeBuilder", "merge_into"]

_TARGET_PRESENT = "_icefloe_t"
_SOURCE_PRESENT = "_icefloe_s"
_ACTION = "_icefloe_action"
_MATCHED = "_icefloe_matched"
_KEEP, _DELETE = -1, -2  # actions other than the clause index of an update / insert


@dataclass
class _Clause:
    kind: str  # matched | not_matched | not_matched_by_source
    condition: str | Column | None
    action: str = ""  # update | delete | insert
    assignments: Mapping[str, str | Column] | None = None  # None: all columns (update_all / insert_all)


@dataclass
class _ClauseBuilder:
    builder: MergeBuilder
    clause: _Clause

    def _done(self, action: str, assignments: Mapping[str, str | Column] | None) -> MergeBuilder:
        allowed = {
            "matched": ("update", "delete"),
            "not_matched": ("insert",),
            "not_matched_by_source": ("update", "delete"),
        }
        if action not in allowed[self.clause.kind]:
            raise ValidationError(f"a when_{self.clause.kind} clause cannot {action}")
        self.clause.action = action
        self.clause.assignments = assignments
        self.builder.clauses.append(self.clause)
        return self.builder

    def update(self, assignments: Mapping[str, str | Column]) -> MergeBuilder:
        """Set these target columns to expressions (``{"amount": "s.amount"}``)."""
        return self._done("update", dict(assignments))

    def update_all(self) -> MergeBuilder:
        """Set every target column to the source column of the same name."""
        return self._done("update", None)

    def delete(self) -> MergeBuilder:
        return self._done("delete", None)

    def insert(self, values: Mapping[str, str | Column]) -> MergeBuilder:
        """Insert a row of these column values (others null)."""
        return self._done("insert", dict(values))

    def insert_all(self) -> MergeBuilder:
        """Insert the source row (columns by name)."""
        return self._done("insert", None)


@dataclass
class MergeBuilder:
    """A MERGE INTO being described; :meth:`merge` runs and commits it."""

    source: DataFrame
    table: Table
    condition: str | Column
    clauses: list[_Clause] = field(default_factory=list)
    branch: str | None = None  # the branch read and committed to (None: main)

    def when_matched(self, condition: str | Column | None = None) -> _ClauseBuilder:
        return _ClauseBuilder(self, _Clause("matched", condition))

    def when_not_matched(self, condition: str | Column | None = None) -> _ClauseBuilder:
        return _ClauseBuilder(self, _Clause("not_matched", condition))

    def when_not_matched_by_source(self, condition: str | Column | None = None) -> _ClauseBuilder:
        return _ClauseBuilder(self, _Clause("not_matched_by_source", condition))

    def merge(self) -> Snapshot | None:
        """Run the merge and commit it as one snapshot (returned), also when it changes
        nothing, as Java does: an ``append`` for a merge of only ``when_not_matched`` clauses
        (of no rows, too), else an ``overwrite`` when no row changed.

        Raises:
            ValidationError: no clauses, a column the table does not have, or a target row
                matched by more than one source row.
        """
        if not self.clauses:
            raise ValidationError("merge_into needs at least one when_* clause")
        table = self.table
        spark = self.source.sparkSession
        metadata = table.metadata
        schema = metadata.schema()
        commits_to = wap_write(spark, table, self.branch)
        snapshot = branch_head(metadata, commits_to.branch)
        kinds = {c.kind for c in self.clauses}
        # Target rows only a NOT MATCHED BY SOURCE clause acts on need the whole table; else
        # only target rows that can match are read: what the condition says of the target's
        # columns alone prunes its files (Java pushes it down likewise).
        target_filter = (
            always_true()
            if "not_matched_by_source" in kinds
            else merge_target_filter(
                spark,
                schema,
                self.condition,
                target_alias="t",
                source_alias="s",
                source_columns=self.source.columns,
            )
        )
        tasks = (
            []
            if snapshot is None
            else plan_files(table.io(), metadata, snapshot, target_filter, schema=schema)
        )
        target = read_tasks(
            spark, metadata, table.io(), tasks, table_schema=schema, projection=schema, keep_file_columns=True
        ).withColumn(_TARGET_PRESENT, F.lit(True))
        # One pass over the target: the join runs once, and what the merge needs of it (each
        # matched row's file and position for the cardinality check, the changed rows'
        # positions, the new rows' values) is kept, cached, for the jobs after it: the rows
        # some clause acts on and the matched ones, a few per cent of the target in a daily
        # merge; the target's unchanged rows are dropped as the join makes them.
        source = self.source.withColumn(_SOURCE_PRESENT, F.lit(True))
        joined = target.alias("t").join(source.alias("s"), on=_column(self.condition), how=_join_type(kinds))
        target_present = F.col(f"t.{_TARGET_PRESENT}").isNotNull()
        matched = target_present & F.col(f"s.{_SOURCE_PRESENT}").isNotNull()
        acted = joined.withColumn(_ACTION, self._action(matched)).withColumn(_MATCHED, matched)
        writes_rows = any(c.action != "delete" for c in self.clauses)
        work = acted.filter(F.col(_MATCHED) | (F.col(_ACTION) != F.lit(_KEEP))).select(
            F.col(f"t.{FILE_COLUMN}").alias(FILE_COLUMN),
            F.col(f"t.{POSITION_COLUMN}").alias(POSITION_COLUMN),
            target_present.alias(_TARGET_PRESENT),
            F.col(_MATCHED),
            F.col(_ACTION),
            *(self._outputs(schema) if writes_rows else []),
        )
        work = work.persist(StorageLevel.MEMORY_AND_DISK)
        try:
            if self._acts_on_matched():
                duplicates = (
                    work.filter(F.col(_MATCHED))
                    .groupBy(FILE_COLUMN, POSITION_COLUMN)
                    .count()
                    .filter("count > 1")
                )
                if duplicates.limit(1).count():
                    raise ValidationError(
                        "MERGE: a target row matched more than one source row (the merge condition "
                        "must match each target row at most once)"
                    )
            changed = work.filter(F.col(_TARGET_PRESENT) & (F.col(_ACTION) != F.lit(_KEEP))).select(
                FILE_COLUMN, POSITION_COLUMN
            )
            new_rows = (
                work.filter(F.col(_ACTION) >= 0).select(*[f"`{f.name}`" for f in schema.fields])
                if writes_rows
                else None
            )
            append_only = kinds == {"not_matched"}
            # (counted from the cache: a row-level write sizes its files by it; an append does not)
            new_rows_count = new_rows.count() if new_rows is not None and not append_only else None
            return apply_change(
                spark,
                table,
                kind="merge",
                snapshot=snapshot,
                tasks=tasks,
                whole=[],
                changed=changed,
                new_rows=new_rows,
                conflict_filter=target_filter,
                target=commits_to,
                # Only NOT MATCHED clauses: Java's Spark runs the MERGE as an insert (an append).
                append_only=append_only,
                new_rows_count=new_rows_count,
            )
        finally:
            work.unpersist()

    def _acts_on_matched(self) -> bool:
        return any(c.kind == "matched" for c in self.clauses)

    def _action(self, matched: Column) -> Column:
        """The action of each joined row: the index of the update / insert clause that acts,
        :data:`_DELETE`, or :data:`_KEEP`."""
        target_only = F.col(f"t.{_TARGET_PRESENT}").isNotNull() & F.col(f"s.{_SOURCE_PRESENT}").isNull()
        source_only = F.col(f"t.{_TARGET_PRESENT}").isNull()
        situation = {"matched": matched, "not_matched": source_only, "not_matched_by_source": target_only}
        action: Any = F
        for index, clause in enumerate(self.clauses):
            when = situation[clause.kind]
            if clause.condition is not None:
                when = when & F.coalesce(_column(clause.condition), F.lit(False))
            value = F.lit(_DELETE if clause.action == "delete" else index)
            action = action.when(when, value)
        result: Column = action.otherwise(F.lit(_KEEP))
        return result

    def _outputs(self, schema: Any) -> list[Column]:
        """The table's columns of the new rows, per acting clause."""
        columns = []
        for table_field in schema.fields:
            name = table_field.name
            value: Any = F
            for index, clause in enumerate(self.clauses):
                if clause.action == "delete":
                    continue
                value = value.when(F.col(_ACTION) == F.lit(index), self._value(clause, name))
            columns.append(value.otherwise(F.lit(None)).alias(name))
        return columns

    def _value(self, clause: _Clause, name: str) -> Column:
        if clause.assignments is None:
            if name.lower() not in {c.lower() for c in self.source.columns}:
                if clause.action == "update":
                    return F.col(f"t.`{name}`")
                return F.lit(None)
            return F.col(f"s.`{name}`")
        lowered = {k.lower(): v for k, v in clause.assignments.items()}
        unknown = [k for k in clause.assignments if k.lower() not in {f.lower() for f in self._table_names()}]
        if unknown:
            raise ValidationError(
                f"MERGE {clause.action} sets columns {unknown} that the table does not have"
            )
        if name.lower() in lowered:
            return _column(lowered[name.lower()])
        return F.col(f"t.`{name}`") if clause.action == "update" else F.lit(None)

    def _table_names(self) -> list[str]:
        return [f.name for f in self.table.metadata.schema().fields]


def _join_type(kinds: set[str]) -> str:
    """The join that keeps the rows some clause can act on: target rows without a source row
    only for NOT MATCHED BY SOURCE, source rows without a target row only for NOT MATCHED."""
    keep_target = "not_matched_by_source" in kinds
    keep_source = "not_matched" in kinds
    if keep_target and keep_source:
        return "full_outer"
    if keep_target:
        return "left_outer"
    return "right_outer" if keep_source else "inner"


def _column(value: str | Column) -> Column:
    return F.expr(value) if isinstance(value, str) else value


def merge_into(
    source: DataFrame, table: Table | str, condition: str | Column, *, branch: str | None = None
) -> MergeBuilder:
    """Start a MERGE INTO ``table`` (alias ``t``) from ``source`` (alias ``s``) on ``condition``;
    with ``branch``, the merge reads that branch's head and commits to it (created from the
    current snapshot when it does not exist, as Java does)."""
    return MergeBuilder(source, resolve_table(table), condition, branch=branch)
