"""The metadata tables that only read the table metadata: ``history``, ``metadata_log_entries``,
``snapshots`` and ``refs`` (Java's ``HistoryTable``, ``MetadataLogEntriesTable``,
``SnapshotsTable`` and ``RefsTable``)."""

from __future__ import annotations

import pyarrow as pa

from icefloe.arrow.schema import schema_to_arrow
from icefloe.spec.snapshots import SnapshotRefType
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.inspect.schemas import (
    HISTORY_SCHEMA,
    METADATA_LOG_ENTRIES_SCHEMA,
    REFS_SCHEMA,
    SNAPSHOTS_SCHEMA,
)

__all__ = ["history", "metadata_log_entries", "refs", "snapshots"]

_MICROS = 1000  # milliseconds to the microseconds of a timestamptz


def history(metadata: TableMetadata) -> pa.Table:
    """One row per snapshot-log entry: when it became current, its parent, and whether it is
    an ancestor of the current snapshot (a rolled-back snapshot is not)."""
    ancestors = {s.snapshot_id for s in metadata.ancestors_of(metadata.current_snapshot_id)}
    rows = []
    for entry in metadata.snapshot_log:
        snapshot = metadata.snapshot_by_id(entry.snapshot_id)
        rows.append(
            {
                "made_current_at": entry.timestamp_ms * _MICROS,
                "snapshot_id": entry.snapshot_id,
                "parent_id": None if snapshot is None else snapshot.parent_snapshot_id,
                "is_current_ancestor": entry.snapshot_id in ancestors,
            }
        )
    return pa.Table.from_pylist(rows, schema=schema_to_arrow(HISTORY_SCHEMA))


def _snapshot_id_as_of(metadata: TableMetadata, timestamp_ms: int) -> int | None:
    """Java's ``SnapshotUtil.nullableSnapshotIdAsOfTime``: the last snapshot-log entry at or
    before the time."""
    found = None
    for entry in metadata.snapshot_log:
        if entry.timestamp_ms <= timestamp_ms:
            found = entry.snapshot_id
    return found


def metadata_log_entries(metadata: TableMetadata, metadata_location: str | None) -> pa.Table:
    """The previous metadata files and the current one, each with the snapshot that was
    current then (by time, from the snapshot log) and its schema id and sequence number."""
    log = [(e.timestamp_ms, e.metadata_file) for e in metadata.metadata_log]
    log.append((metadata.last_updated_ms, metadata_location or ""))
    rows = []
    for timestamp_ms, location in log:
        snapshot_id = _snapshot_id_as_of(metadata, timestamp_ms)
        snapshot = None if snapshot_id is None else metadata.snapshot_by_id(snapshot_id)
        rows.append(
            {
                "timestamp": timestamp_ms * _MICROS,
                "file": location,
                "latest_snapshot_id": snapshot_id,
                "latest_schema_id": None if snapshot is None else snapshot.schema_id,
                "latest_sequence_number": None if snapshot is None else snapshot.sequence_number,
            }
        )
    return pa.Table.from_pylist(rows, schema=schema_to_arrow(METADATA_LOG_ENTRIES_SCHEMA))


def snapshots(metadata: TableMetadata) -> pa.Table:
    """One row per snapshot the metadata keeps, in metadata order; ``summary`` without the
    ``operation`` (its own column)."""
    rows = [
        {
            "committed_at": s.timestamp_ms * _MICROS,
            "snapshot_id": s.snapshot_id,
            "parent_id": s.parent_snapshot_id,
            "operation": s.operation,
            "manifest_list": s.manifest_list,
            "summary": [(k, v) for k, v in s.summary.items() if k != "operation"],
        }
        for s in metadata.snapshots
    ]
    return pa.Table.from_pylist(rows, schema=schema_to_arrow(SNAPSHOTS_SCHEMA))


def refs(metadata: TableMetadata) -> pa.Table:
    """One row per branch and tag; ``type`` is ``BRANCH`` or ``TAG`` as Java names them."""
    rows = [
        {
            "name": name,
            "type": "BRANCH" if ref.type == SnapshotRefType.BRANCH else "TAG",
            "snapshot_id": ref.snapshot_id,
            "max_reference_age_in_ms": ref.max_ref_age_ms,
            "min_snapshots_to_keep": ref.min_snapshots_to_keep,
            "max_snapshot_age_in_ms": ref.max_snapshot_age_ms,
        }
        for name, ref in metadata.refs.items()
    ]
    return pa.Table.from_pylist(rows, schema=schema_to_arrow(REFS_SCHEMA))
