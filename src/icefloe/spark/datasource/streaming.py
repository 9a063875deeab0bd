"""Streaming reads of the ``icefloe`` data source: each micro-batch reads the data files the
table's ``append`` snapshots added since the previous one (Java Iceberg's Spark source).

Offsets are snapshots, as JSON: ``{"snapshot_id": ..., "sequence": ...}`` (the snapshot and its
sequence number); ``snapshot_id`` -1 is "before the table's first snapshot". A new query starts
before the first snapshot, or (option ``stream-from-timestamp``, epoch milliseconds) after the
last snapshot older than that time. A micro-batch from offset A to offset B reads what the
``append`` snapshots after A up to B added (icefloe's incremental append scan); when the start
is before a history whose oldest snapshots were expired, the oldest kept snapshot is read whole.

Other snapshots in a range: ``replace`` (compaction: the same rows) is skipped; ``overwrite``
and ``delete`` change rows a stream already emitted, so they fail the query unless the options
``streaming-skip-overwrite-snapshots`` / ``streaming-skip-delete-snapshots`` are true (Java's
names; skipped snapshots contribute nothing, not even rows they added).

Rows are read with the table's schema when the query started (by field id), without applying
delete files (as Java: the rows as they were appended).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa
from pyspark.sql import datasource as ds
from pyspark.sql import types as st
from pyspark.sql.streaming.datasource import ReadLimit, SupportsTriggerAvailableNow

from icefloe.errors import NoSuchSnapshotError, UnsupportedFeatureError, ValidationError
from icefloe.expressions import always_true
from icefloe.scan import plan_task_groups
from icefloe.scan.splitting import SplitOptions
from icefloe.scan.tasks import FileScanTask
from icefloe.spark.datasource.common import (
    SPLIT_OPTIONS,
    TableRef,
    arrow_target,
    bool_option,
    int_option,
    metadata_at,
)
from icefloe.spark.datasource.reader import TasksPartition, partitions_of, projection_of, read_partition
from icefloe.spec.snapshots import Snapshot
from icefloe.table.table import Table

__all__ = [
    "BEFORE_HISTORY",
    "SKIP_DELETE_OPTION",
    "SKIP_OVERWRITE_OPTION",
    "START_TIMESTAMP_OPTION",
    "IcefloeStreamReader",
]

SKIP_OVERWRITE_OPTION = "streaming-skip-overwrite-snapshots"
SKIP_DELETE_OPTION = "streaming-skip-delete-snapshots"
START_TIMESTAMP_OPTION = "stream-from-timestamp"
#: The offset before the first snapshot.
BEFORE_HISTORY: dict[str, int] = {"snapshot_id": -1, "sequence": 0}


def _offset(snapshot: Snapshot) -> dict[str, int]:
    return {"snapshot_id": snapshot.snapshot_id, "sequence": snapshot.sequence_number}


def _snapshot_id(offset: Mapping[str, Any]) -> int:
    value = offset.get("snapshot_id")
    if not isinstance(value, int):
        raise ValidationError(f"not an icefloe streaming offset: {dict(offset)!r}")
    return value


class IcefloeStreamReader(ds.DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Plans micro-batches in the driver's streaming worker (holding the table, refreshed for
    each ``latestOffset``); pickled without the table to the executors."""

    def __init__(self, ref: TableRef, table: Table, options: Mapping[str, str], spark_schema: st.StructType):
        for option in ("snapshot-id", "as-of-timestamp", "branch", "tag", "filter"):
            if options.get(option):
                raise ValidationError(f"option '{option}' is for batch reads, not streaming reads")
        self._ref = ref
        self._io = table.io()
        self._schema = table.metadata.schema()
        self._projection = projection_of(self._schema, spark_schema)
        self._target = arrow_target(spark_schema)
        self._skip_overwrite = bool_option(options, SKIP_OVERWRITE_OPTION)
        self._skip_delete = bool_option(options, SKIP_DELETE_OPTION)
        self._start_ms = int_option(options, START_TIMESTAMP_OPTION)
        self._split_options = {k: options[k] for k in SPLIT_OPTIONS if options.get(k)}
        self._table: Table | None = table
        self._available_now: dict[str, int] | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_table"] = None  # a catalog connection: each process loads its own
        return state

    # ---- the table -----------------------------------------------------------------------------

    def _refreshed(self) -> Table:
        if self._table is None:
            self._table = self._ref.load()
        else:
            self._table.refresh()
        return self._table

    def _with_snapshot(self, snapshot_id: int) -> Table:
        table = self._table if self._table is not None else self._refreshed()
        if table.metadata.snapshot_by_id(snapshot_id) is None:
            table = self._refreshed()
            if table.metadata.snapshot_by_id(snapshot_id) is None:
                raise NoSuchSnapshotError(
                    f"table {table.name()} no longer has snapshot {snapshot_id} (a streaming offset): "
                    "was it expired?"
                )
        return table

    # ---- offsets -------------------------------------------------------------------------------

    def initialOffset(self) -> dict[str, int]:
        metadata = self._refreshed().metadata
        head = metadata.current_snapshot()
        if head is None or self._start_ms is None:
            return dict(BEFORE_HISTORY)
        for snapshot in metadata.ancestors_of(head.snapshot_id):  # newest first
            if snapshot.timestamp_ms < self._start_ms:
                return _offset(snapshot)
        return dict(BEFORE_HISTORY)

    def _latest(self, start: Mapping[str, Any]) -> dict[str, Any]:
        head = self._refreshed().metadata.current_snapshot()
        return _offset(head) if head is not None else dict(start)

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        # Every read limit is taken as "all available": icefloe offers no rate limits yet, and
        # getDefaultReadLimit() says so.
        if self._available_now is not None:
            return self._available_now
        return self._latest(start)

    def prepareForTriggerAvailableNow(self) -> None:
        self._available_now = self._latest(BEFORE_HISTORY)

    def reportLatestOffset(self) -> dict[str, Any] | None:
        head = self._table.metadata.current_snapshot() if self._table is not None else None
        return _offset(head) if head is not None else None

    # ---- planning and reading ------------------------------------------------------------------

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[Any]:
        start_id, end_id = _snapshot_id(start), _snapshot_id(end)
        if start_id == end_id or end_id == -1:
            return []
        table = self._with_snapshot(end_id)
        files = self._plan(table, start_id, end_id)
        if not files:
            return []
        if table.metadata_location is None:
            raise UnsupportedFeatureError(
                f"table {table.name()} has no metadata file; executors cannot read it"
            )
        options = SplitOptions.resolve(table.metadata.properties, self._split_options)
        return partitions_of(plan_task_groups(files, options), table.metadata_location)

    def _plan(self, table: Table, start_id: int, end_id: int) -> list[FileScanTask]:
        """The files the append snapshots in (start, end] added; raises on overwrite / delete
        snapshots unless skipped."""
        metadata = table.metadata
        ancestors = []
        for snapshot in metadata.ancestors_of(end_id):
            if snapshot.snapshot_id == start_id:
                break
            ancestors.append(snapshot)
        for snapshot in ancestors:
            self._check(table, snapshot)
        files: list[FileScanTask] = []
        scan = table.new_incremental_append_scan().to_snapshot(end_id)
        if start_id != -1:
            scan = scan.from_snapshot_exclusive(start_id)
        elif ancestors and ancestors[-1].parent_snapshot_id is not None:
            # History before the oldest kept snapshot was expired: read that snapshot whole
            # (as Java does), then the appends after it.
            oldest = ancestors[-1]
            files += table.new_scan().use_snapshot(oldest.snapshot_id).plan_files()
            scan = scan.from_snapshot_exclusive(oldest.snapshot_id)
        files += scan.plan_files()
        return files

    def _check(self, table: Table, snapshot: Snapshot) -> None:
        operation = snapshot.operation
        if operation in ("append", "replace"):
            return
        if operation == "overwrite" and self._skip_overwrite:
            return
        if operation == "delete" and self._skip_delete:
            return
        option = {"overwrite": SKIP_OVERWRITE_OPTION, "delete": SKIP_DELETE_OPTION}.get(operation or "")
        hint = f"; to skip such snapshots, set option {option}=true" if option else ""
        raise UnsupportedFeatureError(
            f"cannot stream snapshot {snapshot.snapshot_id} of table {table.name()}: it is "
            f"an '{operation}' snapshot, and streaming reads process appends{hint}"
        )

    def read(self, partition: ds.InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, TasksPartition) or partition.metadata_location is None:
            return iter(())
        return read_partition(
            self._io,
            metadata_at(self._io, partition.metadata_location),
            partition.tasks(),
            table_schema=self._schema,
            projection=self._projection,
            row_filter=always_true(),
            target=self._target,
        )
