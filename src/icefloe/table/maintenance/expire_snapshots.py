"""ExpireSnapshots: ``table.expire_snapshots()`` (Java's ``ExpireSnapshots`` / ``RemoveSnapshots``).

::

    (table.expire_snapshots()
        .expire_older_than(cutoff_ms)
        .retain_last(10)
        .commit())

Which snapshots go (Java 1.9 semantics):

- Refs: ``main`` always stays; any other branch or tag whose snapshot is older than its
  ``max-ref-age-ms`` (default: table property ``history.expire.max-ref-age-ms``, no limit)
  is removed.
- Every remaining branch keeps its head and those ancestors that are among its
  ``min-snapshots-to-keep`` newest or not older than its ``max-snapshot-age-ms``. The
  branch's own settings win; otherwise ``retain_last`` / ``expire_older_than``; otherwise the
  table properties ``history.expire.min-snapshots-to-keep`` (1) and
  ``history.expire.max-snapshot-age-ms`` (5 days). Every remaining tag keeps its snapshot.
- A snapshot no remaining ref reaches (a rolled-back or staged one) stays while it is not
  older than the cutoff.
- ``expire_snapshot_id`` removes a snapshot even where retention would keep it, unless a
  remaining ref points at it (ValidationError naming the refs). Ids the table does not have
  are ignored, as Java does. As in Java, the age-based expiration still applies alongside.

``apply()`` returns the snapshots that would expire and changes nothing. ``commit()``
commits (and returns an ``ExpireSnapshotsResult``, as the Spark action does), then (``clean_expired_files``, default on) deletes what only the expired snapshots
reached: see ``table/maintenance/reachable_files.py``. In a transaction the files are deleted once the
transaction has committed (Java deletes them when the operation is staged, before the
transaction commits). The outcome of the cleanup is ``delete_summary``.

Concurrency: the commit asserts every ref where it was (a branch moved by someone else means
the retention must be computed again: the operation is re-applied to the fresh metadata and
retried). A ref *created* concurrently on a snapshot this commit removes is dropped with it
(no commit requirement can assert that a ref does not exist under an unknown name); Java's
REST commits share this. The table property ``gc.enabled=false`` refuses the operation
(ValidationException), checked when it is created and again on every attempt; when a
concurrent commit turned it off, the expiration still commits but no file is deleted.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Executor
from dataclasses import dataclass

from icefloe.errors import ValidationError, ValidationException
from icefloe.spec.properties import (
    GC_ENABLED,
    GC_ENABLED_DEFAULT,
    MAX_REF_AGE_MS,
    MAX_REF_AGE_MS_DEFAULT,
    MAX_SNAPSHOT_AGE_MS,
    MAX_SNAPSHOT_AGE_MS_DEFAULT,
    MIN_SNAPSHOTS_TO_KEEP,
    MIN_SNAPSHOTS_TO_KEEP_DEFAULT,
    int_property,
    lenient_bool,
)
from icefloe.spec.snapshots import MAIN_BRANCH, Snapshot, SnapshotRef
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.updates import (
    AssertDefaultSpecId,
    AssertRefSnapshotId,
    AssertTableUUID,
    RemovePartitionSpecs,
    RemoveSnapshotRef,
    RemoveSnapshots,
    TableRequirement,
    TableUpdate,
)
from icefloe.table.maintenance.reachable_files import DeleteSummary, clean_expired_files
from icefloe.table.maintenance.results import ExpireSnapshotsResult
from icefloe.table.operation import Changes, PendingUpdate, TableOperations

__all__ = [
    "DeleteSummary",
    "ExpireSnapshots",
]

log = logging.getLogger(__name__)


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True, slots=True)
class _Plan:
    """What one attempt removes from its base metadata."""

    refs: tuple[str, ...]
    snapshot_ids: tuple[int, ...]
    spec_ids: tuple[int, ...]


class ExpireSnapshots(PendingUpdate[list[Snapshot]]):
    """``table.expire_snapshots()``; see the module docstring."""

    def __init__(self, transaction: TableOperations, *, autocommit: bool):
        super().__init__(transaction, autocommit=autocommit)
        base = self._base
        _check_gc_enabled(base)
        properties = base.properties
        # As Java, "now" and the defaults are fixed when the operation is created.
        self._now = _now_ms()
        max_snapshot_age = int_property(properties, MAX_SNAPSHOT_AGE_MS, MAX_SNAPSHOT_AGE_MS_DEFAULT)
        self._older_than = self._now - max_snapshot_age
        self._min_to_keep = int_property(properties, MIN_SNAPSHOTS_TO_KEEP, MIN_SNAPSHOTS_TO_KEEP_DEFAULT)
        self._max_ref_age = int_property(properties, MAX_REF_AGE_MS, MAX_REF_AGE_MS_DEFAULT)
        self._ids: dict[int, None] = {}  # an ordered set
        self._clean_files = True
        self._clean_metadata = False
        self._delete: Callable[[str], None] | None = None
        self._delete_executor: Executor | None = None
        self._plan_executor: Executor | None = None
        # The base and changes of the last attempt: the committed one when the commit succeeds.
        self._attempt: tuple[TableMetadata, Changes] | None = None
        self._summary: DeleteSummary | None = None

    # ---- builder -------------------------------------------------------------------------------

    def expire_snapshot_id(self, snapshot_id: int) -> ExpireSnapshots:
        """Expire this snapshot (unless a branch or tag that stays points at it: then the
        commit raises ValidationError)."""
        self._check_mutable()
        if not isinstance(snapshot_id, int) or isinstance(snapshot_id, bool):
            raise ValidationError(f"snapshot id must be an int, not {snapshot_id!r}")
        log.info("Expiring snapshot with id: %d", snapshot_id)
        self._ids[snapshot_id] = None
        return self

    def expire_older_than(self, timestamp_ms: int) -> ExpireSnapshots:
        """Expire snapshots committed before ``timestamp_ms`` (milliseconds since the epoch),
        except those a branch's retention keeps; replaces the table's max snapshot age."""
        self._check_mutable()
        if not isinstance(timestamp_ms, int) or isinstance(timestamp_ms, bool):
            raise ValidationError(f"timestamp must be an int of milliseconds, not {timestamp_ms!r}")
        self._older_than = timestamp_ms
        return self

    def retain_last(self, num_snapshots: int) -> ExpireSnapshots:
        """Keep at least the ``num_snapshots`` newest ancestors of every branch that does not
        set its own ``min-snapshots-to-keep``, however old they are."""
        self._check_mutable()
        if not isinstance(num_snapshots, int) or isinstance(num_snapshots, bool) or num_snapshots < 1:
            raise ValidationError(
                f"Number of snapshots to retain must be at least 1, cannot be: {num_snapshots!r}"
            )
        self._min_to_keep = num_snapshots
        return self

    def clean_expired_files(self, clean: bool) -> ExpireSnapshots:
        """Whether ``commit()`` deletes the files only expired snapshots reached (default True)."""
        self._check_mutable()
        self._clean_files = bool(clean)
        return self

    def clean_expired_metadata(self, clean: bool) -> ExpireSnapshots:
        """Also remove the partition specs no retained snapshot uses (never the default spec);
        default False. As Java 1.9, schemas are not removed."""
        self._check_mutable()
        self._clean_metadata = bool(clean)
        return self

    def delete_with(self, delete: Callable[[str], None]) -> ExpireSnapshots:
        """Delete files with ``delete(path)`` instead of the table's FileIO. Unless an executor
        is given (``execute_delete_with``), it is called from the committing thread."""
        self._check_mutable()
        if not callable(delete):
            raise ValidationError(f"delete_with takes a callable, not {delete!r}")
        self._delete = delete
        return self

    def execute_delete_with(self, executor: Executor) -> ExpireSnapshots:
        """Run the deletions on ``executor`` (not shut down here). Default: a pool of threads
        for the FileIO's deletes; the calling thread for a ``delete_with`` function."""
        self._check_mutable()
        if not isinstance(executor, Executor):
            raise ValidationError(
                f"execute_delete_with takes a concurrent.futures.Executor, not {executor!r}"
            )
        self._delete_executor = executor
        return self

    def plan_with(self, executor: Executor) -> ExpireSnapshots:
        """Read manifest lists and manifests on ``executor`` (not shut down here)."""
        self._check_mutable()
        if not isinstance(executor, Executor):
            raise ValidationError(f"plan_with takes a concurrent.futures.Executor, not {executor!r}")
        self._plan_executor = executor
        return self

    def commit(self) -> ExpireSnapshotsResult:  # type: ignore[override]  # Java's Spark action's result
        """Commit the expiration (inside an explicit transaction: stage it) and tell what it
        removed, as the Spark action's result does: the expired snapshot ids and, once the
        files were cleaned up (after the commit; in a transaction, after it commits), the
        files deleted per kind and those whose deletion failed.

        Raises:
            ValidationException: ``gc.enabled`` is false, or a conflicting concurrent commit.
            ValidationError: an expired snapshot id a kept ref points at.
        """
        super().commit()
        return self.result()

    def result(self) -> ExpireSnapshotsResult:
        """What this expiration removed so far (see ``commit``)."""
        expired = sorted(_removed_ids(self._attempt[1].updates)) if self._attempt is not None else []
        summary = self._summary or DeleteSummary()
        return ExpireSnapshotsResult(
            deleted_data_files_count=summary.data_files,
            deleted_position_delete_files_count=summary.position_delete_files,
            deleted_equality_delete_files_count=summary.equality_delete_files,
            deleted_manifests_count=summary.manifests,
            deleted_manifest_lists_count=summary.manifest_lists,
            deleted_statistics_files_count=summary.statistics_files,
            expired_snapshot_ids=expired,
            failed_deletes=list(summary.failed),
        )

    @property
    def delete_summary(self) -> DeleteSummary | None:
        """What the cleanup after the commit deleted; None before it ran (or when disabled)."""
        return self._summary

    # ---- choosing the snapshots ------------------------------------------------------------------

    def _plan(self, base: TableMetadata) -> _Plan:
        refs = self._retained_refs(base)
        by_snapshot: dict[int, list[str]] = {}
        for name, ref in refs.items():
            by_snapshot.setdefault(ref.snapshot_id, []).append(name)
        for snapshot_id in self._ids:
            names = by_snapshot.get(snapshot_id)
            if names:
                raise ValidationError(
                    f"Cannot expire {snapshot_id}. Still referenced by refs: [{', '.join(sorted(names))}]"
                )
        retain = set(by_snapshot)
        retain |= self._branch_snapshots_to_retain(base, refs)
        retain |= self._unreferenced_snapshots_to_retain(base, refs)
        removed = tuple(
            s.snapshot_id for s in base.snapshots if s.snapshot_id not in retain or s.snapshot_id in self._ids
        )
        spec_ids: tuple[int, ...] = ()
        if self._clean_metadata:
            gone = set(removed)
            spec_ids = self._unused_specs(base, [s for s in base.snapshots if s.snapshot_id not in gone])
        return _Plan(tuple(name for name in base.refs if name not in refs), removed, spec_ids)

    def _retained_refs(self, base: TableMetadata) -> dict[str, SnapshotRef]:
        kept: dict[str, SnapshotRef] = {}
        for name, ref in base.refs.items():
            if name == MAIN_BRANCH:
                kept[name] = ref
                continue
            snapshot = base.snapshot_by_id(ref.snapshot_id)
            if snapshot is None:
                log.warning("Removing invalid ref %s: snapshot %d does not exist", name, ref.snapshot_id)
                continue
            max_ref_age = ref.max_ref_age_ms if ref.max_ref_age_ms is not None else self._max_ref_age
            if self._now - snapshot.timestamp_ms <= max_ref_age:
                kept[name] = ref
        return kept

    def _branch_snapshots_to_retain(self, base: TableMetadata, refs: dict[str, SnapshotRef]) -> set[int]:
        retain: set[int] = set()
        for ref in refs.values():
            if not ref.is_branch:
                continue
            older_than = (
                self._now - ref.max_snapshot_age_ms
                if ref.max_snapshot_age_ms is not None
                else self._older_than
            )
            min_to_keep = (
                ref.min_snapshots_to_keep if ref.min_snapshots_to_keep is not None else self._min_to_keep
            )
            kept = 0
            for ancestor in base.ancestors_of(ref.snapshot_id):
                if kept < min_to_keep or ancestor.timestamp_ms >= older_than:
                    retain.add(ancestor.snapshot_id)
                    kept += 1
                else:
                    break
        return retain

    def _unreferenced_snapshots_to_retain(
        self, base: TableMetadata, refs: dict[str, SnapshotRef]
    ) -> set[int]:
        referenced: set[int] = set()
        for ref in refs.values():
            if ref.is_branch:
                referenced.update(s.snapshot_id for s in base.ancestors_of(ref.snapshot_id))
            else:
                referenced.add(ref.snapshot_id)
        return {
            s.snapshot_id
            for s in base.snapshots
            if s.snapshot_id not in referenced and s.timestamp_ms >= self._older_than
        }

    def _unused_specs(self, base: TableMetadata, retained: list[Snapshot]) -> tuple[int, ...]:
        """Specs neither default nor used by a manifest of a retained snapshot (Java 1.9's
        ``cleanExpiredMetadata``). Reads the retained snapshots' manifest lists."""
        io = self._transaction.io()
        used = {base.default_spec_id}
        executor = self._plan_executor
        if executor is None or len(retained) <= 1:
            lists = [s.all_manifests(io) for s in retained]
        else:
            lists = list(executor.map(lambda s: s.all_manifests(io), retained))
        for manifests in lists:
            used.update(m.partition_spec_id for m in manifests)
        return tuple(spec.spec_id for spec in base.partition_specs if spec.spec_id not in used)

    # ---- PendingUpdate ---------------------------------------------------------------------------

    def _produce(self, base: TableMetadata) -> Changes:
        self._attempt = None
        if not base.snapshots:
            return Changes()
        # Java checks when the operation is created; a table that turned gc off since is
        # refused too, rather than deleting files it now says may be shared.
        _check_gc_enabled(base)
        plan = self._plan(base)
        updates: list[TableUpdate] = [RemoveSnapshotRef(name) for name in plan.refs]
        if plan.snapshot_ids:
            updates.append(RemoveSnapshots(plan.snapshot_ids))
        if plan.spec_ids:
            updates.append(RemovePartitionSpecs(plan.spec_ids))
        if not updates:
            return Changes()
        # Every ref must be where this plan saw it: a branch that moved (or a ref re-pointed at
        # a snapshot this plan removes) means the retention must be computed again.
        requirements: list[TableRequirement] = [AssertTableUUID(base.table_uuid)]
        requirements.extend(AssertRefSnapshotId(name, ref.snapshot_id) for name, ref in base.refs.items())
        if plan.spec_ids:
            requirements.append(AssertDefaultSpecId(base.default_spec_id))
        changes = Changes(updates, requirements)
        self._attempt = (base, changes)
        return changes

    def _result(self, base: TableMetadata, changes: Changes) -> list[Snapshot]:
        removed = _removed_ids(changes.updates)
        return [s for s in base.snapshots if s.snapshot_id in removed]

    def _after_commit(self, committed: Changes) -> None:
        if not self._clean_files:
            return
        if self._attempt is None:  # nothing was removed
            self._summary = DeleteSummary()
            return
        base, changes = self._attempt
        if changes is not committed:
            log.warning("expire_snapshots: the committed changes are not the last attempt's; files are kept")
            self._summary = DeleteSummary(complete=False)
            return
        removed = _removed_ids(committed.updates)
        if not removed:
            self._summary = DeleteSummary()
            return
        name = self._transaction.table_name()
        try:
            # As Java: judge reachability on the table as it is now, after this commit, so that
            # what a writer committed meanwhile is protected too.
            current = self._transaction.committed_metadata()
        except Exception:
            log.warning(
                "expire_snapshots: cannot reload %s after the commit; files are kept",
                name,
                exc_info=True,
            )
            self._summary = DeleteSummary(complete=False)
            return
        if current.table_uuid != base.table_uuid:
            log.warning("expire_snapshots: %s was replaced after the commit; files are kept", name)
            self._summary = DeleteSummary(complete=False)
            return
        if not lenient_bool(current.properties, GC_ENABLED, GC_ENABLED_DEFAULT):
            # Turned off by a concurrent commit that this one did not conflict with: its
            # files may now be shared with another table.
            log.warning("expire_snapshots: %s=false on %s now; files are kept", GC_ENABLED, name)
            self._summary = DeleteSummary(complete=False)
            return
        expired = [
            s
            for s in base.snapshots
            if s.snapshot_id in removed and current.snapshot_by_id(s.snapshot_id) is None
        ]
        expired_ids = {s.snapshot_id for s in expired}
        statistics = _expired_statistics(base, current, expired_ids)
        log.info("Cleaning up files of %d expired snapshots of %s", len(expired), name)
        self._summary = clean_expired_files(
            self._transaction.io(),
            expired,
            list(current.snapshots),
            statistics,
            delete=self._delete,
            delete_executor=self._delete_executor,
            plan_executor=self._plan_executor,
        )


def _check_gc_enabled(metadata: TableMetadata) -> None:
    # Java reads the property with Boolean.parseBoolean: anything but "true" disables.
    if not lenient_bool(metadata.properties, GC_ENABLED, GC_ENABLED_DEFAULT):
        raise ValidationException(
            f"Cannot expire snapshots: GC is disabled (deleting files may corrupt other tables); "
            f"table property '{GC_ENABLED}' is '{metadata.properties.get(GC_ENABLED)}'"
        )


def _expired_statistics(base: TableMetadata, current: TableMetadata, expired_ids: set[int]) -> set[str]:
    """Statistics files of the expired snapshots that the table no longer lists."""
    listed = {f.path for f in current.statistics} | {f.path for f in current.partition_statistics}
    paths = {f.path for f in base.statistics if f.snapshot_id in expired_ids}
    paths |= {f.path for f in base.partition_statistics if f.snapshot_id in expired_ids}
    return paths - listed


def _removed_ids(updates: Iterable[TableUpdate]) -> set[int]:
    removed: set[int] = set()
    for update in updates:
        if isinstance(update, RemoveSnapshots):
            removed.update(update.snapshot_ids)
    return removed
