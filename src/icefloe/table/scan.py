"""TableScan: the immutable scan builder of ``table.new_scan()``.

Every builder method returns a new scan. As in Java, a scan of a snapshot id, a tag or a point
in time reads with the schema that snapshot was written with; a branch or the current state
reads with the table's current schema. Filters are expressions or SQL strings; planning prunes
manifests and files with them, and the residual of each file is applied to its rows.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from icefloe._util.optional import import_optional
from icefloe.arrow.schema import schema_to_arrow
from icefloe.errors import NoSuchSnapshotError, ValidationError
from icefloe.expressions import AlwaysTrue, BooleanExpression, always_true, and_, parse
from icefloe.scan import FileScanTask, plan_files, read_batches, referenced_columns, task_row_count
from icefloe.spec.schema import Schema
from icefloe.spec.snapshots import Snapshot

if TYPE_CHECKING:
    from icefloe.table.table import Table

__all__ = ["TableScan"]


@dataclass(frozen=True)
class TableScan:
    table: Table
    row_filter: BooleanExpression = field(default_factory=always_true)
    selected: tuple[str, ...] = ("*",)
    is_case_sensitive: bool = True
    snapshot_id: int | None = None
    ref: str | None = None
    as_of_ms: int | None = None
    options: dict[str, str] = field(default_factory=dict)

    # ---- builder -----------------------------------------------------------------------------

    def filter(self, expr: BooleanExpression | str) -> TableScan:
        """AND a filter into the scan: an expression or a SQL string (``"a > 1 AND b IS NULL"``)."""
        parsed = parse(expr) if isinstance(expr, str) else expr
        if not isinstance(parsed, BooleanExpression):
            raise ValidationError(f"filter must be an expression or a SQL string, not {expr!r}")
        return replace(self, row_filter=and_(self.row_filter, parsed))

    def select(self, *columns: str) -> TableScan:
        if len(columns) == 1 and isinstance(columns[0], (list, tuple)):
            columns = tuple(columns[0])
        return replace(self, selected=tuple(columns) or ("*",))

    def case_sensitive(self, value: bool = True) -> TableScan:
        return replace(self, is_case_sensitive=value)

    def use_snapshot(self, snapshot_id: int) -> TableScan:
        self._check_time_travel_unset()
        if self.table.metadata.snapshot_by_id(snapshot_id) is None:
            raise NoSuchSnapshotError(f"table {self.table.name()} has no snapshot {snapshot_id}")
        return replace(self, snapshot_id=snapshot_id)

    def use_ref(self, name: str) -> TableScan:
        self._check_time_travel_unset()
        if name not in self.table.metadata.refs:
            raise NoSuchSnapshotError(f"table {self.table.name()} has no branch or tag '{name}'")
        return replace(self, ref=name)

    def as_of_time(self, timestamp: int | dt.datetime) -> TableScan:
        """Read the snapshot that was current at ``timestamp`` (epoch millis or a datetime)."""
        self._check_time_travel_unset()
        if isinstance(timestamp, dt.datetime):
            if timestamp.tzinfo is None:
                timestamp = timestamp.replace(tzinfo=dt.UTC)
            timestamp = int(timestamp.timestamp() * 1000)
        self.table.metadata.snapshot_as_of(timestamp)  # raises if the table had no snapshot then
        return replace(self, as_of_ms=timestamp)

    def option(self, key: str, value: str) -> TableScan:
        return replace(self, options={**self.options, key: value})

    def _check_time_travel_unset(self) -> None:
        if self.snapshot_id is not None or self.ref is not None or self.as_of_ms is not None:
            raise ValidationError(
                "a scan reads one snapshot: use only one of use_snapshot, use_ref, as_of_time"
            )

    # ---- what the scan reads -----------------------------------------------------------------

    def snapshot(self) -> Snapshot | None:
        metadata = self.table.metadata
        if self.snapshot_id is not None:
            return metadata.snapshot(self.snapshot_id)
        if self.ref is not None:
            return metadata.snapshot(self.ref)
        if self.as_of_ms is not None:
            return metadata.snapshot_as_of(self.as_of_ms)
        return metadata.current_snapshot()

    def _table_schema(self) -> Schema:
        """The schema rows are read with (before column selection)."""
        metadata = self.table.metadata
        time_travel = self.snapshot_id is not None or self.as_of_ms is not None
        if self.ref is not None and metadata.refs[self.ref].is_tag:
            time_travel = True
        snapshot = self.snapshot()
        if time_travel and snapshot is not None:
            return metadata.schema_for_snapshot(snapshot)
        return metadata.schema()

    def schema(self) -> Schema:
        """The projected schema of the rows this scan returns."""
        return self._table_schema().select(*self.selected, case_sensitive=self.is_case_sensitive)

    # ---- planning ----------------------------------------------------------------------------

    def plan_files(self) -> list[FileScanTask]:
        """One task per data file that may hold matching rows, with its deletes and residual."""
        snapshot = self.snapshot()
        if snapshot is None:
            return []
        return plan_files(
            self.table.io(),
            self.table.metadata,
            snapshot,
            self.row_filter,
            schema=self._table_schema(),
            case_sensitive=self.is_case_sensitive,
        )

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
        tasks = self.plan_files()
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
                batch = pa.RecordBatch.from_arrays(
                    [batch.column(name) for name in output_schema.names], schema=output_schema
                )
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
        total = 0
        table_schema = self._table_schema()
        needed = referenced_columns(self.row_filter, table_schema, case_sensitive=self.is_case_sensitive)
        for task in self.plan_files():
            if isinstance(task.residual, AlwaysTrue):
                total += task_row_count(self.table.io(), task)
                continue
            read_schema = table_schema.select(*needed, case_sensitive=self.is_case_sensitive)
            batches = read_batches(
                self.table.io(),
                self.table.metadata,
                [task],
                read_schema,
                case_sensitive=self.is_case_sensitive,
            )
            total += sum(batch.num_rows for batch in batches)
        return total


def _union(selected: tuple[str, ...], needed: list[str]) -> list[str]:
    if "*" in selected:
        return ["*"]
    return list(selected) + [name for name in needed if name not in selected]
