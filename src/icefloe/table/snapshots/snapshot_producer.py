"""SnapshotProducer: how every snapshot-producing operation builds its snapshot.

The steps are always the same: find the parent (the head of the target branch), validate
against it, write manifests for the entries this operation adds or removes, carry the parent's
other manifests forward, write a manifest list, compute the summary, and express the result as
updates (add-snapshot, set-snapshot-ref) guarded by requirements (table uuid, the branch still
at the parent). Operations plug in small strategies instead of subclassing deeply:

- ``_validate(base, parent)`` for conflict checks (re-run on every retry);
- ``_new_manifests(base, parent)`` for the manifests holding this operation's changes;
- ``_carried_manifests(base, parent)`` for what is kept from the parent;
- ``_merger`` (optional): a ``ManifestMergeManager`` (``table/snapshots/manifest_merge.py``) that
  bin-packs the new and carried manifests into fewer, larger ones (the merging append).

Manifests written for the changes are reused across retries as long as they stay valid; a
retry rewrites only the manifest list (its sequence number changes). Files written by failed
attempts are deleted once the outcome is known (never when it is unknown).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, ClassVar

from icefloe.errors import ValidationError, ValidationException
from icefloe.io.encryption import StandardEncryptionManager, encryption_of
from icefloe.io.locations import metadata_location
from icefloe.manifests import UNASSIGNED_SEQ, ManifestListWriter, ManifestWriter
from icefloe.spec.manifest import ContentFile, ManifestContent, ManifestFile
from icefloe.spec.properties import (
    AVRO_COMPRESSION,
    AVRO_COMPRESSION_DEFAULT,
    WRITE_PARTITION_SUMMARY_LIMIT,
    WRITE_PARTITION_SUMMARY_LIMIT_DEFAULT,
    int_property,
)
from icefloe.spec.snapshots import MAIN_BRANCH, Snapshot, SnapshotRefType, new_snapshot_id
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.updates import (
    AddEncryptionKey,
    AddSnapshot,
    AssertRefSnapshotId,
    AssertTableUUID,
    SetSnapshotRef,
    TableRequirement,
    TableUpdate,
)
from icefloe.table.operation import Changes, PendingUpdate, TableOperations
from icefloe.table.snapshots.manifest_merge import ManifestMergeManager
from icefloe.table.snapshots.summary import SummaryBuilder, with_totals

if TYPE_CHECKING:
    from icefloe.io import FileIO

__all__ = ["SnapshotProducer", "inherits_ids"]

log = logging.getLogger(__name__)


class SnapshotProducer(PendingUpdate[Snapshot]):
    """Base of append, overwrite, delete, rewrite, row delta and rewrite-manifests operations."""

    operation: ClassVar[str] = ""

    def __init__(self, transaction: TableOperations, *, autocommit: bool):
        super().__init__(transaction, autocommit=autocommit)
        self._snapshot_id = new_snapshot_id()
        self._commit_uuid = uuid.uuid4()
        self._branch = MAIN_BRANCH
        self._stage_only = False
        self._extra_summary: dict[str, str] = {}
        self._attempt = 0
        self._manifest_count = 0
        self._written: list[str] = []
        # Data files written for this operation by a convenience (table.append(data), ...):
        # deleted if the commit definitely fails, kept otherwise.
        self._owned_data_files: list[str] = []
        # The merge strategy of merging producers (new_append()); None keeps every manifest.
        self._merger: ManifestMergeManager | None = None

    # ---- builder methods common to all producers ---------------------------------------------

    def to_branch(self, branch: str) -> SnapshotProducer:
        """Commit to ``branch`` instead of main (the branch is created if missing)."""
        self._check_mutable()
        if not branch:
            raise ValidationError("branch name must not be empty")
        ref = self._base.refs.get(branch)
        if ref is not None and not ref.is_branch:
            raise ValidationError(f"'{branch}' is a tag, not a branch; commits go to branches")
        self._branch = branch
        return self

    def stage_only(self) -> SnapshotProducer:
        """Add the snapshot without moving any branch (write-audit-publish)."""
        self._check_mutable()
        self._stage_only = True
        return self

    def set(self, key: str, value: str) -> SnapshotProducer:
        """Add a custom property to the snapshot summary."""
        self._check_mutable()
        self._extra_summary[key] = value
        return self

    def delete_on_failure(self, paths: Iterable[str]) -> SnapshotProducer:
        """Files this operation should delete if its commit definitely fails (not if unknown)."""
        self._check_mutable()
        self._owned_data_files.extend(paths)
        return self

    @property
    def snapshot_id(self) -> int:
        return self._snapshot_id

    # ---- strategies --------------------------------------------------------------------------

    def _validate(self, base: TableMetadata, parent: Snapshot | None) -> None:
        """Conflict validations; raise ValidationException to stop the commit."""

    def _new_manifests(self, base: TableMetadata, parent: Snapshot | None) -> list[ManifestFile]:
        raise NotImplementedError

    def _carried_manifests(self, base: TableMetadata, parent: Snapshot | None) -> list[ManifestFile]:
        """By default every manifest of the parent is kept as it is."""
        return parent.all_manifests(self._io) if parent is not None else []

    def _summary(self, base: TableMetadata, builder: SummaryBuilder) -> None:
        """Record this operation's changes in the summary builder."""

    # ---- helpers for strategies --------------------------------------------------------------

    @property
    def _io(self) -> FileIO:
        return self._transaction.io()

    def _new_manifest_location(self, base: TableMetadata) -> str:
        self._manifest_count += 1
        name = f"{self._commit_uuid}-m{self._manifest_count - 1}.avro"
        return metadata_location(base.location, base.properties, name)

    def _new_manifest_writer(
        self, base: TableMetadata, spec_id: int, content: ManifestContent = ManifestContent.DATA
    ) -> ManifestWriter:
        """A writer for a new manifest of this snapshot, remembered for cleanup.

        The file only exists once the writer is closed; it is deleted with the other files of
        this operation if the commit fails or the committed snapshot does not use it.
        """
        location = self._new_manifest_location(base)
        self._written.append(location)
        return ManifestWriter(
            self._io,
            location,
            spec=base.spec_by_id(spec_id),
            schema=base.schema(),
            format_version=base.format_version,
            snapshot_id=self._snapshot_id,
            content=content,
            codec=base.properties.get(AVRO_COMPRESSION, AVRO_COMPRESSION_DEFAULT),
        )

    def _write_manifest(
        self,
        base: TableMetadata,
        spec_id: int,
        content: ManifestContent,
        added: Iterable[ContentFile] = (),
    ) -> ManifestFile:
        """Write a manifest of ADDED entries for ``spec_id`` and remember it for cleanup."""
        with self._new_manifest_writer(base, spec_id, content) as writer:
            for file in added:
                writer.add(file)
        return writer.to_manifest_file()

    def _delete_files(self, paths: Sequence[str], *, quiet: bool = False) -> None:
        """Delete files this operation wrote and no longer uses (and forget them).

        With ``quiet``, a failure is only logged: the files stay tracked, and the cleanup
        after the commit tries again (a commit must not fail over garbage).
        """
        doomed = set(paths)
        if not doomed:
            return
        try:
            self._io.delete_many(list(doomed))
        except Exception:
            if not quiet:
                raise
            log.warning(
                "could not delete %d unused files of %s; retrying after the commit", len(doomed), self
            )
            return
        self._written = [p for p in self._written if p not in doomed]
        if self._merger is not None:
            self._merger.discard(doomed)

    def _delete_written(self, keep: Sequence[str] = (), *, quiet: bool = False) -> None:
        keep_set = set(keep)
        self._delete_files([p for p in self._written if p not in keep_set], quiet=quiet)

    # ---- PendingUpdate -----------------------------------------------------------------------

    def _parent(self, base: TableMetadata) -> Snapshot | None:
        ref = base.refs.get(self._branch)
        if ref is None:
            # A new branch starts from the current snapshot, as in Java.
            return base.current_snapshot()
        return base.snapshot_by_id(ref.snapshot_id)

    def _produce(self, base: TableMetadata) -> Changes:
        parent = self._parent(base)
        self._validate(base, parent)
        new_manifests = self._new_manifests(base, parent)
        carried = self._carried_manifests(base, parent)
        if self._merger is not None:
            manifests = self._merger.merge(base, new_manifests, carried)
        else:
            manifests = [*new_manifests, *carried]

        self._attempt += 1
        sequence_number = base.last_sequence_number + 1 if base.format_version > 1 else 0
        list_location = metadata_location(
            base.location,
            base.properties,
            f"snap-{self._snapshot_id}-{self._attempt}-{self._commit_uuid}.avro",
        )
        first_row_id = (base.next_row_id or 0) if base.format_version >= 3 else None
        self._written.append(list_location)
        writer = ManifestListWriter(
            self._io,
            list_location,
            format_version=base.format_version,
            snapshot_id=self._snapshot_id,
            parent_snapshot_id=parent.snapshot_id if parent else None,
            sequence_number=sequence_number,
            first_row_id=first_row_id,
            codec=base.properties.get(AVRO_COMPRESSION, AVRO_COMPRESSION_DEFAULT),
        )
        writer.add_all(manifests)
        next_row_id = writer.close()
        key_id, key_updates = self._manifest_list_key(base, writer)
        summary = self._build_summary(base, parent)
        snapshot = Snapshot(
            snapshot_id=self._snapshot_id,
            timestamp_ms=_timestamp_after(parent, base),
            manifest_list=list_location,
            parent_snapshot_id=parent.snapshot_id if parent else None,
            sequence_number=sequence_number,
            summary=summary,
            schema_id=base.current_schema_id,
            first_row_id=first_row_id,
            added_rows=(next_row_id - first_row_id)
            if first_row_id is not None and next_row_id is not None
            else None,
            key_id=key_id,
        )
        updates: list[TableUpdate] = [*key_updates, AddSnapshot(snapshot)]
        requirements: list[TableRequirement] = [AssertTableUUID(base.table_uuid)]
        if not self._stage_only:
            ref = base.refs.get(self._branch)
            # Moving a branch keeps its retention settings (Java's setBranchSnapshot).
            updates.append(
                SetSnapshotRef(
                    self._branch,
                    self._snapshot_id,
                    SnapshotRefType.BRANCH,
                    min_snapshots_to_keep=ref.min_snapshots_to_keep if ref else None,
                    max_snapshot_age_ms=ref.max_snapshot_age_ms if ref else None,
                    max_ref_age_ms=ref.max_ref_age_ms if ref else None,
                )
            )
            requirements.append(AssertRefSnapshotId(self._branch, ref.snapshot_id if ref else None))
        referenced = [list_location] + [m.manifest_path for m in manifests]
        return Changes(updates, requirements, tuple(referenced))

    def _manifest_list_key(
        self, base: TableMetadata, writer: ManifestListWriter
    ) -> tuple[str | None, list[TableUpdate]]:
        """The snapshot's ``key-id`` and the ``encryption-keys`` entries this attempt adds (a
        new KEK, when needed, and the list's key), for an encrypted list; else none.

        Keys come from this attempt's base, so a retry never commits a key of a failed attempt.
        """
        key_metadata = writer.key_metadata
        encryption = encryption_of(self._io)
        if key_metadata is None or not isinstance(encryption, StandardEncryptionManager):
            return None, []
        key_id, added = encryption.add_manifest_list_key_metadata(
            key_metadata, base.encryption_keys, location=writer.output.location
        )
        return key_id, [AddEncryptionKey(key) for key in added]

    def _build_summary(self, base: TableMetadata, parent: Snapshot | None) -> dict[str, str]:
        builder = SummaryBuilder(
            partition_summary_limit=int_property(
                base.properties, WRITE_PARTITION_SUMMARY_LIMIT, WRITE_PARTITION_SUMMARY_LIMIT_DEFAULT
            )
        )
        self._summary(base, builder)
        for key, value in self._extra_summary.items():
            builder.set(key, value)
        summary = with_totals(builder.build(), dict(parent.summary) if parent else None)
        return {"operation": self._operation_name(), **summary}

    def _operation_name(self) -> str:
        """The snapshot's ``operation`` (an operation may pick it from what it holds)."""
        return self.operation

    def _result(self, base: TableMetadata, changes: Changes) -> Snapshot:
        for update in changes.updates:
            if isinstance(update, AddSnapshot):
                return update.snapshot
        raise ValidationException("operation produced no snapshot")

    def _after_commit(self, committed: Changes) -> None:
        # The commit happened: failing to delete garbage must not make it look failed.
        self._delete_written(keep=committed.written_files, quiet=True)

    def _abort(self) -> None:
        # Best effort for every file at once: one failed delete must not leave the others
        # (data files written by a convenience included) behind, nor hide the commit's error.
        self._delete_written(quiet=True)
        if self._owned_data_files:
            self._io.delete_quietly(self._owned_data_files)
            self._owned_data_files = []


def inherits_ids(base: TableMetadata, manifest: ManifestFile) -> bool:
    """Whether a manifest written outside the commit (appended, or added to a manifest
    rewrite) can be committed as it is: the table is v2+ and the manifest's row leaves its
    snapshot id, sequence number and first row id to the commit (a manifest written with
    ``snapshot_id=None`` and not committed yet), with every count known. Otherwise the
    commit copies its entries into a manifest of its own, as Java does."""
    return (
        base.format_version >= 2
        and manifest.added_snapshot_id is None
        and manifest.sequence_number == UNASSIGNED_SEQ
        and manifest.first_row_id is None
        and None
        not in (
            manifest.added_files_count,
            manifest.existing_files_count,
            manifest.deleted_files_count,
            manifest.added_rows_count,
            manifest.existing_rows_count,
            manifest.deleted_rows_count,
        )
    )


def _timestamp_after(parent: Snapshot | None, base: TableMetadata) -> int:
    """Now, but never before the parent snapshot (clocks of concurrent writers may differ)."""
    now = int(time.time() * 1000)
    floor = max(parent.timestamp_ms if parent else 0, base.last_updated_ms if base.snapshots else 0)
    return max(now, floor + 1)
