"""``expire_snapshots`` without Spark: ``table.expire_snapshots()`` with the Spark action's
arguments and result (the expiration, its retention rules and the cleanup of what only
expired snapshots reached are the table's own; its deletions run on threads)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable

from icefloe.catalog.resolve import resolve_table
from icefloe.table.maintenance.options import to_millis
from icefloe.table.maintenance.results import ExpireSnapshotsResult
from icefloe.table.table import Table

__all__ = ["expire_snapshots"]


def expire_snapshots(
    table: Table | str,
    *,
    older_than: dt.datetime | int | None = None,
    retain_last: int | None = None,
    snapshot_ids: Iterable[int] = (),
    clean_expired_files: bool = True,
    progress: Callable[[str], None] | None = None,
) -> ExpireSnapshotsResult:
    """Expire snapshots and delete the files only they reached (the same arguments and result
    as ``icefloe.spark.actions.expire_snapshots``).

    Args:
        table: a :class:`Table` (updated to the commit) or an identifier.
        older_than: expire snapshots older than this (datetime, naive = UTC, or epoch ms);
            default the table's ``history.expire.max-snapshot-age-ms`` (5 days).
        retain_last: keep at least this many ancestors of each branch (default the table's
            ``history.expire.min-snapshots-to-keep``, 1).
        snapshot_ids: also expire these snapshots (refused when a kept ref points at one).
        clean_expired_files: delete the files only expired snapshots reached.
        progress: called with a line when done.

    Raises:
        ValidationException: ``gc.enabled`` is false on the table.
        ValidationError: bad arguments, or an expired snapshot id a kept ref points at.
    """
    op = resolve_table(table).expire_snapshots()
    if older_than is not None:
        op = op.expire_older_than(to_millis(older_than, "older_than"))
    if retain_last is not None:
        op = op.retain_last(retain_last)
    for snapshot_id in snapshot_ids:
        op = op.expire_snapshot_id(snapshot_id)
    result = op.clean_expired_files(clean_expired_files).commit()
    if progress is not None:
        progress(f"expired {len(result.expired_snapshot_ids)} snapshots")
    return result
