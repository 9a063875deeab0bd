"""The immutable scan builders: ``new_scan()``, ``new_batch_scan()``, ``new_incremental_append_scan()``.

Every builder method returns a new scan. As in Java, a scan of a snapshot id, a tag or a point
in time reads with the schema that snapshot was written with; a branch or the current state
reads with the table's current schema. Filters are expressions or SQL strings; planning prunes
manifests and files with them, and the residual of each file is applied to its rows.

- :class:`TableScan` (Java's ``TableScan``): one snapshot. ``plan_files()`` gives one task per
  data file; ``plan_tasks()`` splits files at their row groups and packs the splits into
  groups of about ``read.split.target-size`` (see :mod:`icefloe.scan.splitting`).
- :class:`BatchScan` (Java's ``BatchScan``): the same builder; its outputs read through the
  task groups of ``plan_tasks()``, as a distributed engine would.
- :class:`IncrementalAppendScan` (Java's ``IncrementalAppendScan``): the rows that ``append``
  snapshots added between two snapshots of one lineage, read with the current schema.
- :class:`IncrementalChangelogScan` (Java's ``IncrementalChangelogScan``): the rows each
  snapshot of such a range inserted and deleted, row-level deletes included, tagged with
  ``_change_type``, ``_change_ordinal`` and ``_commit_snapshot_id``.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, Self

import pyarrow as pa

from icefloe._util.optional import import_optional
from icefloe.arrow.schema import schema_to_arrow
from icefloe.errors import NoSuchSnapshotError, UnsupportedFeatureError, ValidationError
from icefloe.expressions import AlwaysTrue, BooleanExpression, always_true, and_, parse
from icefloe.io import FileIO
from icefloe.scan import (
    ChangelogScanTask,
    CombinedScanTask,
    FileScanTask,
    PositionDeletes,
    SplitOptions,
    appends_between,
    changelog_arrow_schema,
    changelog_snapshots,
    plan_appended_files,
    plan_changelog,
    plan_files,
    plan_task_groups,
    read_batches,
    read_changelog,
    referenced_columns,
    resolve_range,
    task_row_count,
)
from icefloe.scan.changelog import CHANGE_ORDINAL, compute_updates, index_path, remove_carryovers
from icefloe.spec.schema import Schema
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.types import StructType
from icefloe.table.remote_planning import PLANNING_OPTION, PlanRequest


class ScannedTable(Protocol):
    """What a scan needs of its table (a protocol: ``table.py`` imports this module)."""

    @property
    def metadata(self) -> TableMetadata: ...

    def io(self) -> FileIO: ...

    def name(self) -> str: ...

    def plan_remotely(
        self, request: PlanRequest, schema: Schema, row_filter: BooleanExpression, mode: str | None
    ) -> list[FileScanTask] | None:
        """The tasks planned by the table's catalog server, or None to plan here (see
        ``remote_planning.py``)."""
        ...


__all__ = ["BatchScan", "IncrementalAppendScan", "IncrementalChangelogScan", "TableScan"]


@dataclass(frozen=True)
class _Scan:
    """What every scan shares: the filter, the columns, options, task planning and reading."""

    table: ScannedTable
    row_filter: BooleanExpression = field(default_factory=always_true)
    selected: tuple[str, ...] = ("*",)
    is_case_sensitive: bool = True
    options: dict[str, str] = field(default_factory=dict)
    #: Column metrics the planned files carry: all (decoded lazily, on first use), or only
    #: these columns' (``include_column_stats``).
    column_stats: bool | tuple[str, ...] = True

    # ---- builder -----------------------------------------------------------------------------

    def filter(self, expr: BooleanExpression | str) -> Self:
        """AND a filter into the scan: an expression or a SQL string (``"a > 1 AND b IS NULL"``)."""
        parsed = parse(expr) if isinstance(expr, str) else expr
        if not isinstance(parsed, BooleanExpression):
            raise ValidationError(f"filter must be an expression or a SQL string, not {expr!r}")
        return replace(self, row_filter=and_(self.row_filter, parsed))

    def select(self, *columns: str) -> Self:
        if len(columns) == 1 and isinstance(columns[0], (list, tuple)):
            columns = tuple(columns[0])
        return replace(self, selected=tuple(columns) or ("*",))

    def include_column_stats(self, *columns: str) -> Self:
        """Column metrics (value, null and NaN counts, sizes, bounds) on the planned data files:
        of every column, or only of ``columns`` (Java's ``includeColumnStats``). Planned files
        carry every column's by default (unlike Java's scans, which drop them unless asked):
        they are decoded lazily, on first use, so they cost planning almost nothing."""
        if len(columns) == 1 and isinstance(columns[0], (list, tuple)):
            columns = tuple(columns[0])
        return replace(self, column_stats=tuple(columns) if columns else True)

    def _column_stats_ids(self) -> bool | frozenset[int]:
        """``column_stats`` as ``plan_files`` takes it: field ids (with every nested field of
        a selected struct, list or map column).

        Raises:
            ValidationError: a column the table schema does not have.
        """
        if isinstance(self.column_stats, bool):
            return self.column_stats
        selected = self._table_schema().select(*self.column_stats, case_sensitive=self.is_case_sensitive)
        return frozenset(selected.id_to_name())

    def case_sensitive(self, value: bool = True) -> Self:
        return replace(self, is_case_sensitive=value)

    def option(self, key: str, value: str) -> Self:
        """Set a scan option. Split planning reads ``read.split.target-size`` (or Spark's
        ``split-size``), ``read.split.planning-lookback`` (``lookback``) and
        ``read.split.open-file-cost`` (``file-open-cost``); they override the table
        properties of the same names."""
        return replace(self, options={**self.options, key: str(value)})

    # ---- what the scan reads -----------------------------------------------------------------

    def _table_schema(self) -> Schema:
        """The schema rows are read with (before column selection)."""
        return self.table.metadata.schema()

    def table_schema(self) -> Schema:
        """The schema the scan reads with and binds its filter to, before column selection:
        the current schema, or a time-travelled snapshot's."""
        return self._table_schema()

    def schema(self) -> Schema:
        """The projected schema of the rows this scan returns."""
        return self._table_schema().select(*self.selected, case_sensitive=self.is_case_sensitive)

    # ---- planning ----------------------------------------------------------------------------

    def plan_files(self) -> list[FileScanTask]:  # pragma: no cover - every scan overrides it
        raise NotImplementedError

    def split_options(self) -> SplitOptions:
        """The split size, lookback and open-file cost: scan options, else table properties,
        else Java's defaults (128 MiB, 10, 4 MiB).

        Raises:
            ValidationError: a value that is not an integer, or out of range (naming it).
        """
        return SplitOptions.resolve(self.table.metadata.properties, self.options)

    def target_split_size(self) -> int:
        return self.split_options().split_size

    def split_lookback(self) -> int:
        return self.split_options().lookback

    def split_open_file_cost(self) -> int:
        return self.split_options().open_file_cost

    def plan_tasks(self) -> list[CombinedScanTask]:
        """The planned files, split and packed into groups (Java's ``planTasks()``).

        Files are split at their row groups (``split_offsets``; files without usable offsets
        at ``read.split.target-size``), and the splits packed into groups of about that many
        bytes, counting each split's delete files and at least ``read.split.open-file-cost``
        per file; neighbouring splits of a file in one group are merged into one range. Each
        group is a unit of work; its tasks carry ``start`` and ``length``, and reading every
        group reads every row of the scan exactly once.
        """
        return plan_task_groups(self.plan_files(), self.split_options())

    def _tasks_to_read(self) -> list[FileScanTask]:
        return self.plan_files()

    # ---- reading -----------------------------------------------------------------------------

    def to_batches(self, *, batch_size: int | None = None) -> Iterator[pa.RecordBatch]:
        """Stream the rows as Arrow record batches; memory stays bounded by a batch."""
        table_schema = self._table_schema()
        projected = self.schema()
        # Columns the filter needs are read too and dropped after filtering.
        needed = referenced_columns(self.row_filter, table_schema, case_sensitive=self.is_case_sensitive)
        read_schema = table_schema.select(
            *_union(self.selected, needed), case_sensitive=self.is_case_sensitive
        )
        tasks = self._tasks_to_read()
        output_schema = schema_to_arrow(projected)
        for batch in read_batches(
            self.table.io(),
            self.table.metadata,
            tasks,
            read_schema,
            case_sensitive=self.is_case_sensitive,
            batch_size=batch_size,
        ):
            if read_schema != projected:
                batch = _project_batch(batch, output_schema)
            yield batch

    def to_arrow(self) -> pa.Table:
        """All matching rows as one Arrow table."""
        schema = schema_to_arrow(self.schema())
        return pa.Table.from_batches(list(self.to_batches()), schema=schema)

    def to_pandas(self, **kwargs: Any) -> Any:
        import_optional("pandas", extra="pandas")
        return self.to_arrow().to_pandas(**kwargs)

    def to_polars(self) -> Any:
        polars = import_optional("polars", extra="polars")
        return polars.from_arrow(self.to_arrow())

    def to_duckdb(self, table_name: str, connection: Any = None) -> Any:
        """Register the rows in DuckDB as ``table_name``; returns the connection."""
        duckdb = import_optional("duckdb", extra="duckdb")
        con = connection if connection is not None else duckdb.connect()
        con.register(table_name, self.to_arrow())
        return con

    def count(self) -> int:
        """The number of matching rows; answered from metadata (and delete files) when the
        residual filter is trivially true, by reading only the filter's columns otherwise."""
        io = self.table.io()
        deletes = PositionDeletes(io, self.table.metadata)  # one read per delete file for the whole count
        total = 0
        to_read = []
        for task in self.plan_files():
            if isinstance(task.residual, AlwaysTrue):
                total += task_row_count(io, task, deletes)
            else:
                to_read.append(task)
        if to_read:
            table_schema = self._table_schema()
            needed = referenced_columns(self.row_filter, table_schema, case_sensitive=self.is_case_sensitive)
            read_schema = table_schema.select(*needed, case_sensitive=self.is_case_sensitive)
            batches = read_batches(
                io, self.table.metadata, to_read, read_schema, case_sensitive=self.is_case_sensitive
            )
            total += sum(batch.num_rows for batch in batches)
        return total


@dataclass(frozen=True)
class TableScan(_Scan):
    """A scan of one snapshot (``table.new_scan()``): the current one, or the one chosen with
    ``use_snapshot``, ``use_ref`` or ``as_of_time``."""

    snapshot_id: int | None = None
    ref: str | None = None
    as_of_ms: int | None = None

    # ---- builder -----------------------------------------------------------------------------

    def use_snapshot(self, snapshot_id: int) -> Self:
        """Read the snapshot with this id.

        Raises:
            NoSuchSnapshotError: the table has no such snapshot (a ValidationError too).
        """
        self._check_time_travel_unset()
        if self.table.metadata.snapshot_by_id(snapshot_id) is None:
            raise NoSuchSnapshotError(f"table {self.table.name()} has no snapshot {snapshot_id}")
        return replace(self, snapshot_id=snapshot_id)

    def use_ref(self, name: str) -> Self:
        """Read the head of this branch, or the snapshot this tag points to.

        Raises:
            NoSuchSnapshotError: the table has no such branch or tag.
        """
        self._check_time_travel_unset()
        if name not in self.table.metadata.refs:
            raise NoSuchSnapshotError(f"table {self.table.name()} has no branch or tag '{name}'")
        return replace(self, ref=name)

    def as_of_time(self, timestamp: int | dt.datetime) -> Self:
        """Read the snapshot that was current at ``timestamp``: epoch milliseconds, or a
        ``datetime``. A naive datetime (no ``tzinfo``) is taken as UTC, not local time, as Iceberg
        records commit times in UTC; pass an aware datetime to mean another zone.

        Raises:
            NoSuchSnapshotError: the table had no snapshot then (the message shows the time and
                where the table's history starts, in UTC).
        """
        self._check_time_travel_unset()
        if isinstance(timestamp, dt.datetime):
            if timestamp.tzinfo is None:
                timestamp = timestamp.replace(tzinfo=dt.UTC)
            timestamp = int(timestamp.timestamp() * 1000)
        # Raises now if the table had no snapshot then.
        self.table.metadata.snapshot_as_of(timestamp, table_name=self.table.name())
        return replace(self, as_of_ms=timestamp)

    def _check_time_travel_unset(self) -> None:
        if self.snapshot_id is not None or self.ref is not None or self.as_of_ms is not None:
            raise ValidationError(
                "a scan reads one snapshot: use only one of use_snapshot, use_ref, as_of_time"
            )

    # ---- what the scan reads -----------------------------------------------------------------

    def snapshot(self) -> Snapshot | None:
        metadata = self.table.metadata
        name = self.table.name()
        if self.snapshot_id is not None:
            return metadata.snapshot(self.snapshot_id, table_name=name)
        if self.ref is not None:
            return metadata.snapshot(self.ref, table_name=name)
        if self.as_of_ms is not None:
            return metadata.snapshot_as_of(self.as_of_ms, table_name=name)
        return metadata.current_snapshot()

    def _table_schema(self) -> Schema:
        metadata = self.table.metadata
        time_travel = self.snapshot_id is not None or self.as_of_ms is not None
        if self.ref is not None and metadata.refs[self.ref].is_tag:
            time_travel = True
        snapshot = self.snapshot()
        if time_travel and snapshot is not None:
            return metadata.schema_for_snapshot(snapshot)
        return metadata.schema()

    # ---- planning ----------------------------------------------------------------------------

    def plan_files(self) -> list[FileScanTask]:
        """One task per data file that may hold matching rows, with its deletes and residual.

        With the scan option ``planning=server`` (or the REST catalog property
        ``scan-planning-mode=server``), the catalog's server plans.
        """
        snapshot = self.snapshot()
        if snapshot is None:
            return []
        mode = self.options.get(PLANNING_OPTION)
        if mode != "client":
            request = PlanRequest(
                snapshot_id=snapshot.snapshot_id,
                filter=self.row_filter,
                case_sensitive=self.is_case_sensitive,
                select=None if self.selected == ("*",) else self.selected,
            )
            remote = self.table.plan_remotely(request, self._table_schema(), self.row_filter, mode)
            if remote is not None:
                return remote
        return plan_files(
            self.table.io(),
            self.table.metadata,
            snapshot,
            self.row_filter,
            schema=self._table_schema(),
            case_sensitive=self.is_case_sensitive,
            column_stats=self._column_stats_ids(),
        )


@dataclass(frozen=True)
class BatchScan(TableScan):
    """``table.new_batch_scan()``: a :class:`TableScan` whose outputs (``to_arrow()``,
    ``to_batches()``, ...) read through the task groups of ``plan_tasks()``, group by group
    (Java's ``BatchScan``)."""

    def _tasks_to_read(self) -> list[FileScanTask]:
        return [task for group in self.plan_tasks() for task in group.tasks]


@dataclass(frozen=True)
class _IncrementalScan(_Scan):
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

    def to_batches(self, *, batch_size: int | None = None) -> Iterator[pa.RecordBatch]:
        """Stream the changed rows as Arrow record batches, in change ordinal order. Memory
        stays bounded by a batch; with ``remove_carryovers()`` or ``compute_updates()``, by the
        changes of one commit."""
        table_schema = self._table_schema()
        output_schema = self.arrow_schema()
        needed = referenced_columns(self.row_filter, table_schema, case_sensitive=self.is_case_sensitive)
        whole_rows = self.carryovers_removed or self.update_columns is not None
        columns = ["*"] if whole_rows else _union(self.selected, needed)
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
            yield batch if batch.schema == output_schema else _project_batch(batch, output_schema)

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

    def to_arrow(self) -> pa.Table:
        """All changed rows as one Arrow table."""
        return pa.Table.from_batches(list(self.to_batches()), schema=self.arrow_schema())

    def count(self) -> int:
        """The number of changed rows."""
        return sum(batch.num_rows for batch in self.to_batches())


def _ordinal(batch: pa.RecordBatch) -> int:
    value: int = batch.column(CHANGE_ORDINAL)[0].as_py()
    return value


def _project_batch(batch: pa.RecordBatch, output_schema: pa.Schema) -> pa.RecordBatch:
    """The output columns of a batch read with extra columns for the filter. A struct read with
    extra children (``select("s.a")`` filtered on ``s.b``) is cast to the output's children:
    a struct cast keeps the named children, by name."""
    columns = []
    for out_field in output_schema:
        column = batch.column(out_field.name)
        if column.type != out_field.type:
            column = column.cast(out_field.type)
        columns.append(column)
    return pa.RecordBatch.from_arrays(columns, schema=output_schema)


def _union(selected: tuple[str, ...], needed: list[str]) -> list[str]:
    if "*" in selected:
        return ["*"]
    return list(selected) + [name for name in needed if name not in selected]
