"""``expire_snapshots`` on Spark, and deleting files in Spark tasks (private).

The expiration itself is the table's (``table.expire_snapshots()``): which snapshots go (refs,
branch retention, ``history.expire.*`` defaults), the ``gc.enabled`` check, the commit, and
which files only expired snapshots reached (a reachability computation that never picks a file
a retained snapshot reaches). Spark only does the deleting: the cleanup hands every doomed
path to a collecting function, in its phases (data, position delete and equality delete files,
then manifests, then manifest lists, then statistics files), and Spark tasks delete each phase
before the next, so a crash leaves orphans, never a manifest pointing at a deleted file.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence

from pyspark.sql import SparkSession

from icefloe.errors import ValidationError
from icefloe.io import FileIO
from icefloe.spark.jobs import map_in_tasks
from icefloe.spark.tables import resolve_table
from icefloe.table.maintenance.expire_snapshots import DeleteSummary
from icefloe.table.maintenance.options import to_millis
from icefloe.table.maintenance.results import ExpireSnapshotsResult
from icefloe.table.table import Table

__all__ = ["ExpireSnapshotsResult", "delete_in_tasks", "expire_snapshots"]

log = logging.getLogger(__name__)

#: Attempts per file deletion in a task (as the table's cleanup and Java: 3).
_DELETE_ATTEMPTS = 3
_RETRY_WAIT_S = 0.05


def expire_snapshots(
    spark: SparkSession,
    table: Table | str,
    *,
    older_than: dt.datetime | int | None = None,
    retain_last: int | None = None,
    snapshot_ids: Iterable[int] = (),
    clean_expired_files: bool = True,
    parallelism: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> ExpireSnapshotsResult:
    """Expire snapshots and delete the files only they reached, deleting in Spark tasks (Java's
    ``ExpireSnapshotsSparkAction``).

    Args:
        spark: the session.
        table: a :class:`Table` (updated to the commit) or an identifier.
        older_than: expire snapshots older than this (datetime, naive = UTC, or epoch ms);
            default the table's ``history.expire.max-snapshot-age-ms`` (5 days).
        retain_last: keep at least this many ancestors of each branch (default the table's
            ``history.expire.min-snapshots-to-keep``, 1).
        snapshot_ids: also expire these snapshots (refused when a kept ref points at one).
        clean_expired_files: delete the files only expired snapshots reached.
        parallelism: Spark tasks per deletion phase (default the session's default
            parallelism).
        progress: called with a line per step.

    Raises:
        ValidationException: ``gc.enabled`` is false on the table.
        ValidationError: bad arguments, or an expired snapshot id a kept ref points at.
    """
    resolved = resolve_table(table)
    op = resolved.expire_snapshots()
    if older_than is not None:
        op = op.expire_older_than(to_millis(older_than, "older_than"))
    if retain_last is not None:
        op = op.retain_last(retain_last)
    for snapshot_id in snapshot_ids:
        op = op.expire_snapshot_id(snapshot_id)
    collected: list[str] = []
    op = op.clean_expired_files(clean_expired_files).delete_with(collected.append)
    started = time.perf_counter()
    before = {s.snapshot_id for s in resolved.metadata.snapshots}
    op.commit()
    after = {s.snapshot_id for s in resolved.metadata.snapshots}
    result = ExpireSnapshotsResult(expired_snapshot_ids=sorted(before - after))
    if progress is not None:
        progress(
            f"expired {len(before - after)} snapshots in {time.perf_counter() - started:.1f}s; "
            f"{len(collected)} files to delete"
        )
    summary = op.delete_summary
    if summary is None or not collected:
        return result
    phases = _phases(collected, summary)
    io = resolved.io()
    failed: list[str] = []
    for number, (name, paths) in enumerate(phases):
        if not paths:
            continue
        started = time.perf_counter()
        try:
            failures = delete_in_tasks(spark, io, paths, parallelism=parallelism)
        except Exception:
            # The expiration is committed: a failed job must not turn it into a failure. The
            # later phases are skipped (their files would be deleted before these), and every
            # file not deleted is reported; remove_orphan_files finds them later.
            log.warning("expire_snapshots: deleting %s failed; the rest is kept", name, exc_info=True)
            failed.extend(p for _, rest in phases[number:] for p in rest)
            break
        failed.extend(failures)
        if progress is not None:
            progress(
                f"deleted {len(paths) - len(failures)} of {len(paths)} {name} "
                f"in {time.perf_counter() - started:.1f}s"
            )
    gone = set(failed)
    slices = _slices(collected, summary)
    result.deleted_data_files_count = _count(slices[0], gone)
    result.deleted_position_delete_files_count = _count(slices[1], gone)
    result.deleted_equality_delete_files_count = _count(slices[2], gone)
    result.deleted_manifests_count = _count(slices[3], gone)
    result.deleted_manifest_lists_count = _count(slices[4], gone)
    result.deleted_statistics_files_count = _count(slices[5], gone)
    result.failed_deletes = sorted(gone)
    return result


def _slices(paths: list[str], summary: DeleteSummary) -> list[list[str]]:
    """The collected paths per kind. The table's cleanup calls the delete function in its
    phase order (data, position deletes, equality deletes, manifests, manifest lists,
    statistics files), one kind after the other, from the calling thread, and its summary
    counts each kind (every call of a function that does not raise counts)."""
    counts = [
        summary.data_files,
        summary.position_delete_files,
        summary.equality_delete_files,
        summary.manifests,
        summary.manifest_lists,
        summary.statistics_files,
    ]
    if sum(counts) != len(paths):  # cannot happen with a collecting function; be safe anyway
        raise AssertionError(
            f"expire_snapshots: the cleanup reported {sum(counts)} files but handed over {len(paths)}"
        )
    slices, start = [], 0
    for count in counts:
        slices.append(paths[start : start + count])
        start += count
    return slices


def _phases(paths: list[str], summary: DeleteSummary) -> list[tuple[str, list[str]]]:
    """The deletion phases: content files, manifests, manifest lists, statistics files."""
    data, positions, equalities, manifests, lists, statistics = _slices(paths, summary)
    return [
        ("data and delete files", [*data, *positions, *equalities]),
        ("manifests", manifests),
        ("manifest lists", lists),
        ("statistics files", statistics),
    ]


def _count(paths: Sequence[str], failed: set[str]) -> int:
    return sum(1 for p in paths if p not in failed)


def delete_in_tasks(
    spark: SparkSession, io: FileIO, paths: Sequence[str], *, parallelism: int | None = None
) -> list[str]:
    """Delete ``paths`` in Spark tasks (the FileIO travels pickled; each executor builds its
    own clients). A missing file counts as deleted; each deletion is retried.

    Returns:
        the paths that could not be deleted (each logged on its executor).
    """
    if not paths:
        return []
    if parallelism is not None and parallelism < 1:
        raise ValidationError(f"parallelism must be at least 1, not {parallelism}")

    def delete(part: list[str]) -> Iterator[str]:
        for path in part:
            if not _delete_one(io, path):
                yield path

    return map_in_tasks(spark, list(paths), delete, slices=parallelism)


def _delete_one(io: FileIO, path: str) -> bool:
    for attempt in range(1, _DELETE_ATTEMPTS + 1):
        try:
            io.delete(path)
            return True
        except FileNotFoundError:  # gone is what we wanted
            return True
        except Exception as exc:
            if attempt == _DELETE_ATTEMPTS:
                log.warning("could not delete %s: %s", path, exc)
                return False
            time.sleep(_RETRY_WAIT_S * attempt)
    return False
