"""Incremental append planning: the data files that ``append`` snapshots added in a range.

Java's ``BaseIncrementalAppendScan``: the range is the ancestry of the end snapshot back to (not
including) the start snapshot; of those snapshots only ``append`` ones count (``overwrite``,
``replace`` and ``delete`` snapshots contribute nothing, not even files they added). Each
append snapshot's files are read from the manifests that snapshot wrote (its own manifest
list, ``added_snapshot_id`` = the snapshot), so later manifest rewrites, merges and deletes do
not hide them. Entries count when their status is ADDED by a snapshot of the range.

As in Java, the planned tasks carry no delete files: the scan returns the rows as appended.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from icefloe.errors import NoSuchSnapshotError, SnapshotNotAncestorError
from icefloe.expressions import Expression
from icefloe.io import FileIO
from icefloe.scan.planning import plan_files
from icefloe.scan.tasks import FileScanTask
from icefloe.spec.manifest import ManifestEntry, ManifestEntryStatus, ManifestFile
from icefloe.spec.schema import Schema
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata

__all__ = ["appends_between", "plan_appended_files", "resolve_range"]

_APPEND = "append"


def resolve_range(
    metadata: TableMetadata,
    *,
    from_snapshot_id: int | None,
    from_inclusive: bool,
    to_snapshot_id: int | None,
    table_name: str | None = None,
) -> tuple[int | None, int] | None:
    """The range ``(from exclusive, to inclusive)`` of an incremental scan, validated.

    Args:
        metadata: the table.
        from_snapshot_id: the start, or None for the end snapshot's whole ancestry.
        from_inclusive: whether the start snapshot itself belongs to the range.
        to_snapshot_id: the end, or None for the current snapshot.
        table_name: the table's name, for messages (default: its location).

    Returns:
        ``(from_exclusive, to_inclusive)``, where ``from_exclusive`` None means "back to the
        oldest ancestor"; None when neither end is set and the table has no snapshot.

    Raises:
        NoSuchSnapshotError: an end or an inclusive start the table does not have, or no end set
            on a table without a current snapshot.
        SnapshotNotAncestorError: an inclusive start that is not an ancestor of the end, or an
            exclusive start that is not the parent of one of the end's ancestors (naming both).
    """
    table = f"table {table_name}" if table_name else f"table at {metadata.location}"
    if to_snapshot_id is None:
        current = metadata.current_snapshot()
        if current is None:
            if from_snapshot_id is None:
                return None
            raise NoSuchSnapshotError(f"{table} has no current snapshot and the scan sets no end snapshot")
        to_snapshot_id = current.snapshot_id
    elif metadata.snapshot_by_id(to_snapshot_id) is None:
        raise NoSuchSnapshotError(f"{table} has no snapshot {to_snapshot_id} (end snapshot)")
    if from_snapshot_id is None:
        return None, to_snapshot_id
    ancestors = metadata.ancestors_of(to_snapshot_id)
    if from_inclusive:
        start = metadata.snapshot_by_id(from_snapshot_id)
        if start is None:
            raise NoSuchSnapshotError(
                f"{table} has no snapshot {from_snapshot_id} (start snapshot, inclusive)"
            )
        if not any(s.snapshot_id == from_snapshot_id for s in ancestors):
            raise SnapshotNotAncestorError(
                f"starting snapshot (inclusive) {from_snapshot_id} is not an ancestor of end snapshot "
                f"{to_snapshot_id}",
                snapshot_id=from_snapshot_id,
                end_snapshot_id=to_snapshot_id,
            )
        return start.parent_snapshot_id, to_snapshot_id
    if from_snapshot_id == to_snapshot_id:
        # An empty range. (Java rejects it: no ancestor of the end has the end as its parent.)
        return from_snapshot_id, to_snapshot_id
    # The start may be expired: it must be the parent of one of the end's ancestors.
    if not any(s.parent_snapshot_id == from_snapshot_id for s in ancestors):
        raise SnapshotNotAncestorError(
            f"starting snapshot (exclusive) {from_snapshot_id} is not a parent ancestor of end snapshot "
            f"{to_snapshot_id}",
            snapshot_id=from_snapshot_id,
            end_snapshot_id=to_snapshot_id,
        )
    return from_snapshot_id, to_snapshot_id


def appends_between(metadata: TableMetadata, from_exclusive: int | None, to_inclusive: int) -> list[Snapshot]:
    """The ``append`` snapshots from ``to_inclusive`` back along its parents, stopping before
    ``from_exclusive`` (or where history ends), newest first (Java's ``appendsBetween``)."""
    if from_exclusive == to_inclusive:
        return []
    result = []
    for snapshot in metadata.ancestors_of(to_inclusive):
        if snapshot.snapshot_id == from_exclusive:
            break
        if snapshot.operation == _APPEND:
            result.append(snapshot)
    return result


def plan_appended_files(
    io: FileIO,
    metadata: TableMetadata,
    snapshots: list[Snapshot],
    row_filter: Expression | None = None,
    *,
    schema: Schema | None = None,
    case_sensitive: bool = True,
    column_stats: bool | Iterable[int] = True,
) -> list[FileScanTask]:
    """One task per data file the ``snapshots`` added that may hold matching rows
    (``column_stats``: as ``plan_files``).

    Files are pruned by partition and metrics like a table scan's, and carry their residual;
    they carry no delete files (as Java's incremental append scan). Tasks come oldest snapshot
    first, each snapshot's in manifest order.
    """
    ids = frozenset(s.snapshot_id for s in snapshots)

    def added_in_range(entry: ManifestEntry) -> bool:
        return entry.status == ManifestEntryStatus.ADDED and entry.snapshot_id in ids

    tasks: list[FileScanTask] = []
    for snapshot in reversed(snapshots):
        own_id = snapshot.snapshot_id

        def written_by_snapshot(manifest: ManifestFile, own_id: int = own_id) -> bool:
            # Every manifest a snapshot adds is in its own list; taking each manifest from the
            # snapshot that added it reads it once (Java's set of manifests, by path).
            return manifest.added_snapshot_id == own_id

        planned = plan_files(
            io,
            metadata,
            snapshot,
            row_filter,
            schema=schema,
            case_sensitive=case_sensitive,
            manifest_filter=written_by_snapshot,
            entry_filter=added_in_range,
            column_stats=column_stats,
        )
        tasks.extend(replace(task, deletes=()) if task.deletes else task for task in planned)
    return tasks
