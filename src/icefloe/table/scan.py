"""The immutable snapshot scan builders: ``new_scan()``, ``new_batch_scan()`` (the incremental
ones are in :mod:`icefloe.table.incremental_scan`).

Every builder method returns a new scan. As in Java, a scan of a snapshot id, a tag or a point
in time reads with the schema that snapshot was written with; a branch or the current state
reads with the table's current schema. Filters are expressions or SQL strings; planning prunes
manifests and files with them, and the residual of each file is applied to its rows.

- :class:`TableScan` (Java's ``TableScan``): one snapshot. ``plan_files()`` gives one task per
  data file; ``plan_tasks()`` splits files at their row groups and packs the splits into
  groups of about ``read.split.target-size`` (see :mod:`icefloe.scan.splitting`).
- :class:`BatchScan` (Java's ``BatchScan``): the same builder; its outputs read through the
  task groups of ``plan_tasks()``, as a distributed engine would.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, Self

import pyarrow as pa

from icefloe._util.optional import import_optional
from icefloe.arrow.reader import read_arrow_schema
from icefloe.errors import NoSuchSnapshotError, ValidationError
from icefloe.expressions import AlwaysTrue, BooleanExpression, always_true, and_, parse
from icefloe.io import FileIO
from icefloe.scan import (
    CombinedScanTask,
    FileScanTask,
    PositionDeletes,
    SplitOptions,
    dictionary_field_ids,
    plan_files,
    plan_task_groups,
    read_batches,
    referenced_columns,
    task_row_count,
)
from icefloe.spec.schema import Schema
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata
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


__all__ = ["BaseScan", "BatchScan", "TableScan", "project_batch", "union_columns"]


@dataclass(frozen=True)
class BaseScan:
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

    def to_batches(
        self, *, batch_size: int | None = None, dictionary_columns: bool | Iterable[str] = False
    ) -> Iterator[pa.RecordBatch]:
        """Stream the rows as Arrow record batches. Files are read a few at a time, each in a
        thread (pyarrow decodes with the GIL released); memory stays bounded by those reads,
        whatever the size of the table.

        ``dictionary_columns``: string and binary columns (True: all, or their names) to return
        dictionary-encoded, as Parquet stores them: less memory, and faster to read and to turn
        into pandas ``Categorical``s.
        """
        return self._batches(batch_size, dictionary_columns, eager=False)

    def _batches(
        self, batch_size: int | None, dictionary_columns: bool | Iterable[str], *, eager: bool
    ) -> Iterator[pa.RecordBatch]:
        table_schema = self._table_schema()
        projected = self.schema()
        # Columns the filter needs are read too and dropped after filtering.
        needed = referenced_columns(self.row_filter, table_schema, case_sensitive=self.is_case_sensitive)
        read_schema = table_schema.select(
            *union_columns(self.selected, needed), case_sensitive=self.is_case_sensitive
        )
        dictionary_ids = dictionary_field_ids(
            projected, dictionary_columns, case_sensitive=self.is_case_sensitive
        )
        tasks = self._tasks_to_read()
        output_schema = read_arrow_schema(projected, dictionary_ids)
        for batch in read_batches(
            self.table.io(),
            self.table.metadata,
            tasks,
            read_schema,
            case_sensitive=self.is_case_sensitive,
            batch_size=batch_size,
            dictionary_ids=dictionary_ids,
            eager=eager,
        ):
            if read_schema != projected:
                batch = project_batch(batch, output_schema)
            yield batch

    def to_arrow(self, *, dictionary_columns: bool | Iterable[str] = False) -> pa.Table:
        """All matching rows as one Arrow table (``dictionary_columns``: see ``to_batches``)."""
        ids = dictionary_field_ids(self.schema(), dictionary_columns, case_sensitive=self.is_case_sensitive)
        # every batch is taken: the first files are all read at once
        batches = list(self._batches(None, dictionary_columns, eager=True))
        return pa.Table.from_batches(batches, schema=read_arrow_schema(self.schema(), ids))

    def to_pandas(self, *, dictionary_columns: bool | Iterable[str] = False, **kwargs: Any) -> Any:
        """All matching rows as a pandas DataFrame; ``dictionary_columns`` become
        ``Categorical`` (see ``to_batches``)."""
        import_optional("pandas", extra="pandas")
        return self.to_arrow(dictionary_columns=dictionary_columns).to_pandas(**kwargs)

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
class TableScan(BaseScan):
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


def union_columns(selected: tuple[str, ...], needed: list[str]) -> list[str]:
    if "*" in selected:
        return ["*"]
    return list(selected) + [name for name in needed if name not in selected]


def project_batch(batch: pa.RecordBatch, output_schema: pa.Schema) -> pa.RecordBatch:
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
