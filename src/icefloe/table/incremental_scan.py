"""The incremental scan builders: ``new_incremental_append_scan()`` and
``new_incremental_changelog_scan()``.

- :class:`IncrementalAppendScan` (Java's ``IncrementalAppendScan``): the rows that ``append``
  snapshots added between two snapshots of one lineage, read with the current schema.
- :class:`IncrementalChangelogScan` (Java's ``IncrementalChangelogScan``): the rows each
  snapshot of such a range inserted and deleted, row-level deletes included, tagged with
  ``_change_type``, ``_change_ordinal`` and ``_commit_snapshot_id``.

Both share :class:`~icefloe.table.scan.BaseScan` (filters, projection, reading) with the
snapshot scans.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Self

import pyarrow as pa

from icefloe.errors import NoSuchSnapshotError, UnsupportedFeatureError, ValidationError
from icefloe.scan import (
    ChangelogScanTask,
    CombinedScanTask,
    FileScanTask,
    appends_between,
    changelog_arrow_schema,
    changelog_snapshots,
    plan_appended_files,
    plan_changelog,
    read_changelog,
    referenced_columns,
    resolve_range,
)
from icefloe.scan.changelog import CHANGE_ORDINAL, compute_updates, index_path, remove_carryovers
from icefloe.spec.schema import Schema
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.types import StructType
from icefloe.table.scan import BaseScan, project_batch, union_columns

__all__ = ["IncrementalAppendScan", "IncrementalChangelogScan"]


@dataclass(frozen=True)
class _IncrementalScan(BaseScan):
    """What incremental scans share: a range of snapshots of one lineage.

    The range follows the end snapshot's parents back to the start: ``from_snapshot_exclusive``
    (the start's own changes are not included; the start may be expired) or
    ``from_snapshot_inclusive`` (they are); without a start, the end's whole ancestry. The end is
    ``to_snapshot`` or the current snapshot. Rows are read with the table's current schema.
    """

    from_snapshot_id: int | None = None
    from_inclusive: bool = False
    to_snapshot_id: int | None = None

    # ---- builder -----------------------------------------------------------------------------

    def from_snapshot_inclusive(self, snapshot: int | str) -> Self:
        """Start at this snapshot (an id, or a tag or branch name), its own changes included.

        Raises:
            NoSuchSnapshotError: the table has no such snapshot.
        """
        snapshot_id = self._snapshot_id(snapshot, "start snapshot")
        return replace(self, from_snapshot_id=snapshot_id, from_inclusive=True)

    def from_snapshot_exclusive(self, snapshot: int | str) -> Self:
        """Start after this snapshot (an id, or a tag or branch name). The id may be of an
        expired snapshot, as long as it is the parent of one of the end snapshot's ancestors."""
        snapshot_id = snapshot if isinstance(snapshot, int) else self._snapshot_id(snapshot, "start snapshot")
        return replace(self, from_snapshot_id=snapshot_id, from_inclusive=False)

    def to_snapshot(self, snapshot: int | str) -> Self:
        """End at this snapshot, included (an id, or a tag or branch name); default: current.

        Raises:
            NoSuchSnapshotError: the table has no such snapshot.
        """
        return replace(self, to_snapshot_id=self._snapshot_id(snapshot, "end snapshot"))

    def _snapshot_id(self, snapshot: int | str, what: str) -> int:
        metadata = self.table.metadata
        if isinstance(snapshot, str):
            found = metadata.snapshot_by_name(snapshot)
            if found is None:
                raise NoSuchSnapshotError(
                    f"table {self.table.name()} has no branch or tag '{snapshot}' ({what})"
                )
            return found.snapshot_id
        if metadata.snapshot_by_id(snapshot) is None:
            raise NoSuchSnapshotError(f"table {self.table.name()} has no snapshot {snapshot} ({what})")
        return snapshot

    def _range(self) -> tuple[int | None, int] | None:
        """``(from exclusive, to inclusive)``, validated; None for an empty table without bounds.

        Raises:
            NoSuchSnapshotError: no end snapshot is set and the table has no current snapshot
                while a start is set.
            SnapshotNotAncestorError: the start is not in the end snapshot's history.
        """
        return resolve_range(
            self.table.metadata,
            from_snapshot_id=self.from_snapshot_id,
            from_inclusive=self.from_inclusive,
            to_snapshot_id=self.to_snapshot_id,
            table_name=self.table.name(),
        )


@dataclass(frozen=True)
class IncrementalAppendScan(_IncrementalScan):
    """``table.new_incremental_append_scan()``: the data files ``append`` snapshots added after
    a start snapshot, up to an end snapshot (Java's ``IncrementalAppendScan``).

    The range is set as for every incremental scan (see ``_IncrementalScan``).
    ``overwrite``, ``replace`` and ``delete`` snapshots in the range contribute nothing. Files
    are read with the table's current schema and, as in Java, without applying delete files:
    the rows as they were appended.
    """

    # ---- what the scan reads -----------------------------------------------------------------

    def snapshots(self) -> list[Snapshot]:
        """The append snapshots whose files the scan reads, oldest first.

        Raises:
            NoSuchSnapshotError: no end snapshot is set and the table has no current snapshot
                while a start is set.
            SnapshotNotAncestorError: the start is not in the end snapshot's history.
        """
        bounds = self._range()
        if bounds is None:
            return []
        return list(reversed(appends_between(self.table.metadata, *bounds)))

    # ---- planning ----------------------------------------------------------------------------

    def plan_files(self) -> list[FileScanTask]:
        """One task per data file the range's appends added that may hold matching rows
        (oldest snapshot first), with its residual and no delete files."""
        snapshots = self.snapshots()
        if not snapshots:
            return []
        return plan_appended_files(
            self.table.io(),
            self.table.metadata,
            list(reversed(snapshots)),
            self.row_filter,
            schema=self._table_schema(),
            case_sensitive=self.is_case_sensitive,
            column_stats=self._column_stats_ids(),
        )


@dataclass(frozen=True)
class IncrementalChangelogScan(_IncrementalScan):
    """``table.new_incremental_changelog_scan()``: the rows each snapshot of a range inserted
    and deleted (Java's ``IncrementalChangelogScan``, with row-level deletes: position deletes,
    deletion vectors and equality deletes).

    The range is set as for every incremental scan (see ``_IncrementalScan``); ``replace``
    snapshots (compactions) change no rows and are skipped; the others get change ordinals 0,
    1, ... oldest first. ``plan_files()`` gives the changelog tasks
    (:class:`~icefloe.scan.AddedRowsScanTask`, :class:`~icefloe.scan.DeletedDataFileScanTask`,
    :class:`~icefloe.scan.DeletedRowsScanTask`) in ordinal order; see
    :mod:`icefloe.scan.changelog` for what each holds.

    The outputs (``to_arrow()``, ``to_batches()``, ...) hold the selected columns and
    ``_change_type`` (``INSERT`` / ``DELETE``, or ``UPDATE_BEFORE`` / ``UPDATE_AFTER`` with
    ``compute_updates``), ``_change_ordinal`` (int32) and ``_commit_snapshot_id`` (int64), in
    ordinal order. As Java's scan (and Spark's ``changes`` table), a copy-on-write commit shows
    the unchanged rows of the files it rewrote as a DELETE and an INSERT; ``remove_carryovers()``
    drops those pairs (Spark's ``create_changelog_view`` does by default).
    """

    carryovers_removed: bool = False
    update_columns: tuple[str, ...] | None = None

    # ---- builder -----------------------------------------------------------------------------

    def remove_carryovers(self, value: bool = True) -> Self:
        """Drop the DELETE / INSERT pairs of one commit whose rows are equal in every column
        (rows a copy-on-write commit rewrote unchanged). Reading then compares whole rows: the
        table's columns are all read, whatever the selection."""
        return replace(self, carryovers_removed=value)

    def compute_updates(self, *identifier_columns: str) -> Self:
        """Pair the DELETE and the INSERT of one commit with the same values of
        ``identifier_columns`` (default: the schema's identifier fields) into an
        ``UPDATE_BEFORE`` and an ``UPDATE_AFTER`` row (Spark's ``create_changelog_view`` with
        ``compute_updates``); carry-overs are removed first. Reading fails with a
        ValidationError when one commit changes several rows with the same identifier.

        Raises:
            ValidationError: no columns given and the schema has no identifier fields, or a
                column the schema does not have.
        """
        if len(identifier_columns) == 1 and isinstance(identifier_columns[0], (list, tuple)):
            identifier_columns = tuple(identifier_columns[0])
        schema = self._table_schema()
        if not identifier_columns:
            identifier_columns = tuple(schema.identifier_field_names())
            if not identifier_columns:
                raise ValidationError(
                    f"table {self.table.name()} has no identifier fields: name the columns that "
                    "identify a row to compute updates"
                )
        for name in identifier_columns:
            column = schema.field(name, case_sensitive=self.is_case_sensitive)  # raises for an unknown one
            parent = schema.parent_id(column.field_id)
            while parent is not None:
                if not isinstance(schema.field(parent).field_type, StructType):
                    raise ValidationError(
                        f"identifier column '{name}' is inside a list or map; compute updates by "
                        "top-level columns or fields of structs"
                    )
                parent = schema.parent_id(parent)
        return replace(self, carryovers_removed=True, update_columns=tuple(identifier_columns))

    # ---- what the scan reads -----------------------------------------------------------------

    def snapshots(self) -> list[Snapshot]:
        """The snapshots whose changes the scan reads, oldest first (a snapshot's index is its
        change ordinal): the range without its ``replace`` snapshots.

        Raises:
            NoSuchSnapshotError: no end snapshot is set and the table has no current snapshot
                while a start is set.
            SnapshotNotAncestorError: the start is not in the end snapshot's history.
        """
        bounds = self._range()
        if bounds is None:
            return []
        return changelog_snapshots(self.table.metadata, *bounds)

    def arrow_schema(self) -> pa.Schema:
        """The Arrow schema of the rows: the selected columns and the three change columns."""
        return changelog_arrow_schema(self.schema())

    # ---- planning ----------------------------------------------------------------------------

    def plan_files(self) -> list[ChangelogScanTask]:  # type: ignore[override]
        """The changelog tasks of the range, in change ordinal order (within one ordinal the
        deletes first), with their residuals."""
        snapshots = self.snapshots()
        if not snapshots:
            return []
        return plan_changelog(
            self.table.io(),
            self.table.metadata,
            snapshots,
            self.row_filter,
            schema=self._table_schema(),
            case_sensitive=self.is_case_sensitive,
            column_stats=self._column_stats_ids(),
        )

    def plan_tasks(self) -> list[CombinedScanTask]:
        """Not supported: changelog tasks are not split or grouped (read ``plan_files()``)."""
        raise UnsupportedFeatureError(
            "a changelog scan plans no task groups: read its tasks from plan_files()"
        )

    # ---- reading -----------------------------------------------------------------------------

    def to_batches(
        self, *, batch_size: int | None = None, dictionary_columns: bool | Iterable[str] = False
    ) -> Iterator[pa.RecordBatch]:
        """Stream the changed rows as Arrow record batches, in change ordinal order. Memory
        stays bounded by a batch; with ``remove_carryovers()`` or ``compute_updates()``, by the
        changes of one commit. (``dictionary_columns`` is not supported here.)"""
        _no_dictionaries(dictionary_columns)
        table_schema = self._table_schema()
        output_schema = self.arrow_schema()
        needed = referenced_columns(self.row_filter, table_schema, case_sensitive=self.is_case_sensitive)
        whole_rows = self.carryovers_removed or self.update_columns is not None
        columns = ["*"] if whole_rows else union_columns(self.selected, needed)
        read_schema = table_schema.select(*columns, case_sensitive=self.is_case_sensitive)
        batches = read_changelog(
            self.table.io(),
            self.table.metadata,
            self.plan_files(),
            read_schema,
            case_sensitive=self.is_case_sensitive,
            batch_size=batch_size,
        )
        if whole_rows:
            batches = self._per_commit(batches, read_schema, batch_size)
        for batch in batches:
            yield batch if batch.schema == output_schema else project_batch(batch, output_schema)

    def _per_commit(
        self, batches: Iterator[pa.RecordBatch], read_schema: Schema, batch_size: int | None
    ) -> Iterator[pa.RecordBatch]:
        """The batches of each commit together, carry-overs removed and updates computed."""
        data_columns = [f.name for f in read_schema.fields]
        schema = changelog_arrow_schema(read_schema)
        identifier = None
        if self.update_columns is not None:
            identifier = {}
            for name in self.update_columns:
                field = read_schema.field(name, case_sensitive=self.is_case_sensitive)
                identifier[name] = index_path(read_schema, field.field_id)
        for _, group in itertools.groupby(batches, key=_ordinal):
            changes = remove_carryovers(pa.Table.from_batches(list(group), schema=schema), data_columns)
            if identifier is not None:
                changes = compute_updates(changes, identifier)
            yield from changes.to_batches(max_chunksize=batch_size)

    def to_arrow(self, *, dictionary_columns: bool | Iterable[str] = False) -> pa.Table:
        """All changed rows as one Arrow table."""
        _no_dictionaries(dictionary_columns)
        return pa.Table.from_batches(list(self.to_batches()), schema=self.arrow_schema())

    def count(self) -> int:
        """The number of changed rows."""
        return sum(batch.num_rows for batch in self.to_batches())


def _no_dictionaries(dictionary_columns: bool | Iterable[str]) -> None:
    if dictionary_columns is not False and dictionary_columns != ():
        raise UnsupportedFeatureError("a changelog scan returns no dictionary-encoded columns")


def _ordinal(batch: pa.RecordBatch) -> int:
    value: int = batch.column(CHANGE_ORDINAL)[0].as_py()
    return value
