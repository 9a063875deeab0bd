"""RewriteManifests: ``table.rewrite_manifests()`` (Java's ``BaseRewriteManifests``).

Rewrites the manifests of the current snapshot without changing the table's data; the new
snapshot's operation is ``replace``. Two ways, which combine:

- ``cluster_by(fn)``: every data manifest of the current snapshot (or those ``rewrite_if``
  accepts) is read, and its live entries are written again, grouped by ``fn(data_file)`` and
  partition spec, into manifests of about ``commit.manifest.target-size-bytes`` each. Delete
  manifests are kept as they are.
- ``delete_manifest(m)`` / ``add_manifest(m)``: replace manifests by ones written elsewhere.

Entries keep what makes them mean the same thing: they become EXISTING with the snapshot id,
data and file sequence numbers and (v3) first row id they had. The commit is refused
(``ValidationException``) unless the live files of the replaced manifests are exactly those of
the manifests that replace them (Java checks only that the counts agree; icefloe also checks
the files, their partition specs and partition values), and unless every deleted manifest is
still in the table's current snapshot. An added manifest may hold EXISTING entries (their
snapshot id and sequence numbers must be those of the file in the table, or left unset) and
ADDED ones (which take the file's from the table); it is copied when anything has to be filled
in, and used as it is otherwise (v2+, written with ``snapshot_id=None``).

On a retry after a concurrent commit the rewrite is re-planned against the new current
snapshot: manifests added meanwhile are kept, manifests already rewritten are reused unless one
of them has gone (then everything is rewritten again), and a deleted manifest that has gone
fails the commit. The summary carries Java's ``manifests-created``, ``manifests-kept``,
``manifests-replaced`` and ``entries-processed``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from icefloe.errors import UnsupportedFeatureError, ValidationError, ValidationException
from icefloe.manifests import read_manifest
from icefloe.spec.manifest import (
    ContentFile,
    DataFile,
    FileContent,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
)
from icefloe.spec.properties import (
    MANIFEST_TARGET_SIZE_BYTES,
    MANIFEST_TARGET_SIZE_BYTES_DEFAULT,
    int_property,
)
from icefloe.spec.snapshots import MAIN_BRANCH, Snapshot
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.types import StructType
from icefloe.table.operation import TableOperations
from icefloe.table.snapshots.snapshot_producer import SnapshotProducer, inherits_ids
from icefloe.table.snapshots.summary import SummaryBuilder

__all__ = ["RewriteManifests", "partition_order"]

CREATED_MANIFESTS_COUNT = "manifests-created"
KEPT_MANIFESTS_COUNT = "manifests-kept"
REPLACED_MANIFESTS_COUNT = "manifests-replaced"
PROCESSED_ENTRY_COUNT = "entries-processed"

_SHOWN = 5  # files named in a validation message


class RewriteManifests(SnapshotProducer):
    """``table.rewrite_manifests().cluster_by(lambda f: f.partition).commit()``."""

    operation = "replace"

    def __init__(self, transaction: TableOperations, *, autocommit: bool):
        super().__init__(transaction, autocommit=autocommit)
        self._cluster_by: Callable[[DataFile], Hashable] | None = None
        self._rewrite_if: Callable[[ManifestFile], bool] | None = None
        self._deleted: dict[str, ManifestFile] = {}
        self._added: list[ManifestFile] = []
        # The plan, kept across attempts (as Java's): manifests read and rewritten by path, the
        # manifests written for them, the current manifests kept, the entries rewritten.
        self._rewritten: dict[str, ManifestFile] = {}
        self._clustered: list[ManifestFile] = []
        self._kept: list[ManifestFile] = []
        self._entry_count = 0
        # The added manifests ready to commit, checked against the deleted ones.
        self._prepared: _Prepared | None = None
        self._target: int | None = None
        self._sorted = False

    # ---- builder -----------------------------------------------------------------------------

    def cluster_by(self, fn: Callable[[DataFile], Hashable]) -> RewriteManifests:
        """Rewrite data manifests, grouping their live files by ``fn(data_file)`` (a hashable
        key, not None) and partition spec into new manifests."""
        self._check_mutable()
        if not callable(fn):
            raise ValidationError(f"cluster_by takes a function of a DataFile, not {fn!r}")
        self._cluster_by = fn
        self._reset_plan()
        return self

    def rewrite_if(self, predicate: Callable[[ManifestFile], bool]) -> RewriteManifests:
        """Only rewrite the data manifests for which ``predicate(manifest)`` is true; keep the
        others as they are (needs ``cluster_by``)."""
        self._check_mutable()
        if not callable(predicate):
            raise ValidationError(f"rewrite_if takes a function of a ManifestFile, not {predicate!r}")
        self._rewrite_if = predicate
        self._reset_plan()
        return self

    def target_manifest_size_bytes(self, size: int) -> RewriteManifests:
        """The size of the clustered manifests (icefloe; default the table's
        ``commit.manifest.target-size-bytes``)."""
        self._check_mutable()
        if not isinstance(size, int) or size < 1:
            raise ValidationError(f"target manifest size must be a positive int, not {size!r}")
        self._target = size
        self._reset_plan()
        return self

    def sort_by_partition(self) -> RewriteManifests:
        """Write each cluster's entries ordered by partition (icefloe; what Java's Spark action
        does), so that the new manifests cover narrow partition ranges and prune well."""
        self._check_mutable()
        self._sorted = True
        self._reset_plan()
        return self

    def delete_manifest(self, manifest: ManifestFile) -> RewriteManifests:
        """Remove a manifest of the current snapshot; its live files must be in the added ones."""
        self._check_mutable()
        if not isinstance(manifest, ManifestFile):
            raise ValidationError(f"delete_manifest takes a ManifestFile, not {manifest!r}")
        self._deleted[manifest.manifest_path] = manifest
        self._reset_plan()
        return self

    def add_manifest(self, manifest: ManifestFile) -> RewriteManifests:
        """Add a manifest holding (as EXISTING or ADDED entries) files of the deleted manifests.

        Raises:
            ValidationError: the manifest has DELETED entries or a partition spec the table
                does not have.
        """
        self._check_mutable()
        if not isinstance(manifest, ManifestFile):
            raise ValidationError(f"add_manifest takes a ManifestFile, not {manifest!r}")
        if manifest.deleted_files_count:
            raise ValidationError(f"cannot add manifest {manifest.manifest_path} with deleted files")
        if manifest.partition_spec_id not in self._base.specs_by_id():
            raise ValidationError(
                f"cannot add manifest {manifest.manifest_path}: partition spec "
                f"{manifest.partition_spec_id} is not a spec of this table"
            )
        self._added.append(manifest)
        self._reset_plan()
        return self

    def to_branch(self, branch: str) -> RewriteManifests:
        """Rewriting manifests applies to the main branch only (as in Java).

        Raises:
            UnsupportedFeatureError: for any other branch.
        """
        if branch != MAIN_BRANCH:
            raise UnsupportedFeatureError(
                f"cannot commit to branch {branch}: rewrite_manifests does not support branch commits"
            )
        super().to_branch(branch)
        return self

    # ---- strategies --------------------------------------------------------------------------

    def _new_manifests(self, base: TableMetadata, parent: Snapshot | None) -> list[ManifestFile]:
        if parent is None:
            raise ValidationException(
                f"cannot rewrite the manifests of {self._transaction.table_name()}: it has no current snapshot"
            )
        current = parent.all_manifests(self._io)
        by_path = {m.manifest_path: m for m in current}
        for path in self._deleted:
            if path not in by_path:
                raise ValidationException(
                    f"Deleted manifest {path} could not be found in the latest snapshot {parent.snapshot_id}"
                )
        if self._requires_rewrite(by_path):
            self._rewrite(base, current)
        else:
            self._kept = [
                m
                for m in current
                if m.manifest_path not in self._rewritten and m.manifest_path not in self._deleted
            ]
        as_is, copies = self._prepare_added(base, by_path)
        self._validate_counts()
        # New manifests first, as Java lists them.
        return [*self._clustered, *as_is, *copies]

    def _validate_counts(self) -> None:
        """Java's check: the manifests created hold as many live files as those replaced."""
        created = sum((m.added_files_count or 0) + (m.existing_files_count or 0) for m in self._clustered)
        replaced = self._entry_count
        if self._prepared is not None:
            created += self._prepared.added_live
            replaced += self._prepared.deleted_live
        if created != replaced:
            raise ValidationException(
                "Replaced and created manifests must have the same number of active files: "
                f"{created} (new), {replaced} (old)"
            )

    def _carried_manifests(self, base: TableMetadata, parent: Snapshot | None) -> list[ManifestFile]:
        return list(self._kept)

    def _summary(self, base: TableMetadata, builder: SummaryBuilder) -> None:
        builder.set(CREATED_MANIFESTS_COUNT, str(len(self._clustered) + len(self._added)))
        builder.set(KEPT_MANIFESTS_COUNT, str(len(self._kept)))
        builder.set(REPLACED_MANIFESTS_COUNT, str(len(self._rewritten) + len(self._deleted)))
        builder.set(PROCESSED_ENTRY_COUNT, str(self._entry_count))

    def _abort(self) -> None:
        super()._abort()  # deletes every file this operation wrote
        self._rewritten, self._clustered, self._kept, self._entry_count = {}, [], [], 0
        self._prepared = None

    # ---- clustering --------------------------------------------------------------------------

    def _requires_rewrite(self, current: dict[str, ManifestFile]) -> bool:
        if self._cluster_by is None:
            return False  # manifests are only added and deleted
        if not self._rewritten:
            return True
        # A manifest this plan rewrote has gone (a concurrent commit replaced it): start over.
        return any(path not in current for path in self._rewritten)

    def _reset_plan(self) -> None:
        """Forget the plan (and delete what it wrote): the next attempt plans again."""
        written = [m.manifest_path for m in self._clustered]
        if self._prepared is not None:
            written += [m.manifest_path for m in self._prepared.copies]
        self._delete_files(written, quiet=True)
        self._rewritten, self._clustered, self._kept, self._entry_count = {}, [], [], 0
        self._prepared = None

    def _rewrite(self, base: TableMetadata, current: list[ManifestFile]) -> None:
        """Plan and write the clustered manifests; the plan is only kept when complete (a
        failure halfway leaves no plan, so the next attempt starts over)."""
        assert self._cluster_by is not None
        stale = [m.manifest_path for m in self._clustered]
        self._rewritten, self._clustered, self._kept, self._entry_count = {}, [], [], 0
        self._delete_files(stale, quiet=True)
        rewritten: dict[str, ManifestFile] = {}
        kept: list[ManifestFile] = []
        groups: dict[tuple[Hashable, int], list[ManifestEntry]] = {}
        count = 0
        for manifest in current:
            if manifest.manifest_path in self._deleted:
                continue
            if manifest.content != ManifestContent.DATA or (
                self._rewrite_if is not None and not self._rewrite_if(manifest)
            ):
                kept.append(manifest)  # delete manifests are never clustered (as Java)
                continue
            rewritten[manifest.manifest_path] = manifest
            spec_id = manifest.partition_spec_id
            for entry in read_manifest(self._io, manifest, partition_type=_partition_type(base, spec_id)):
                if not entry.is_live:
                    continue
                key = self._cluster_key(entry.data_file)
                try:
                    groups.setdefault((key, spec_id), []).append(entry)
                except TypeError:
                    raise ValidationError(
                        f"cluster_by returned an unhashable key {key!r} for {entry.data_file.file_path}"
                    ) from None
                count += 1
        target = self._target or int_property(
            base.properties, MANIFEST_TARGET_SIZE_BYTES, MANIFEST_TARGET_SIZE_BYTES_DEFAULT
        )
        clustered: list[ManifestFile] = []
        for (_, spec_id), entries in groups.items():
            if self._sorted:
                entries.sort(key=lambda e: partition_order(e.data_file.partition))
            clustered.extend(self._write_rolling(base, spec_id, entries, target))
        self._rewritten, self._clustered, self._kept, self._entry_count = rewritten, clustered, kept, count

    def _cluster_key(self, file: ContentFile) -> Hashable:
        assert self._cluster_by is not None
        key = self._cluster_by(file)  # type: ignore[arg-type]
        if key is None:
            raise ValidationError(f"cluster_by returned None for {file.file_path}; keys cannot be None")
        return key

    def _write_rolling(
        self, base: TableMetadata, spec_id: int, entries: list[ManifestEntry], target: int
    ) -> list[ManifestFile]:
        """Manifests of about ``target`` bytes holding ``entries`` as EXISTING, in order.

        The group is written once; only when that manifest is over the target is it split
        into as many even parts as its size asks for (Java rolls to a new file as it writes).
        """
        manifest = self._write_existing(base, spec_id, ManifestContent.DATA, entries)
        if manifest.manifest_length <= target or len(entries) <= 1:
            return [manifest]
        self._delete_files([manifest.manifest_path], quiet=True)
        parts = min(len(entries), -(-manifest.manifest_length // max(target, 1)))
        size = -(-len(entries) // parts)
        return [
            self._write_existing(base, spec_id, ManifestContent.DATA, entries[start : start + size])
            for start in range(0, len(entries), size)
        ]

    def _write_existing(
        self, base: TableMetadata, spec_id: int, content: ManifestContent, entries: list[ManifestEntry]
    ) -> ManifestFile:
        with self._new_manifest_writer(base, spec_id, content) as writer:
            for entry in entries:
                assert entry.snapshot_id is not None  # entries of committed manifests have one
                writer.existing(
                    entry.data_file, entry.snapshot_id, entry.sequence_number, entry.file_sequence_number
                )
        return writer.to_manifest_file()

    # ---- added and deleted manifests ---------------------------------------------------------

    def _prepare_added(
        self, base: TableMetadata, current: dict[str, ManifestFile]
    ) -> tuple[list[ManifestFile], list[ManifestFile]]:
        """The added manifests as they will be committed: validated against the deleted ones,
        copied where an entry needs its snapshot id or sequence numbers filled in."""
        if self._prepared is not None:
            if self._prepared.format_version == base.format_version:
                return self._prepared.as_is, self._prepared.copies
            self._delete_files([m.manifest_path for m in self._prepared.copies], quiet=True)
            self._prepared = None
        if not self._added and not self._deleted:
            return [], []

        originals: dict[ContentFile, tuple[ManifestEntry, ManifestFile]] = {}
        for path in self._deleted:
            row = current[path]  # the current list's row: it gives the inherited values
            for entry in read_manifest(
                self._io, row, partition_type=_partition_type(base, row.partition_spec_id)
            ):
                if entry.is_live:
                    originals[entry.data_file] = (entry, row)
        added: list[tuple[ManifestFile, list[ManifestEntry]]] = []
        for manifest in self._added:
            entries = list(
                read_manifest(
                    self._io, manifest, partition_type=_partition_type(base, manifest.partition_spec_id)
                )
            )
            for entry in entries:
                if entry.status == ManifestEntryStatus.DELETED:
                    raise ValidationError(f"cannot add manifest {manifest.manifest_path} with deleted files")
            added.append((manifest, entries))

        added_live = sum(len(entries) for _, entries in added)
        if added_live != len(originals):
            raise ValidationException(
                "Replaced and created manifests must have the same number of active files: "
                f"{self._entry_count + added_live} (new), {self._entry_count + len(originals)} (old)"
            )
        as_is: list[ManifestFile] = []
        copies: list[ManifestFile] = []
        seen: set[ContentFile] = set()
        for manifest, entries in added:
            resolved = [self._resolve(base, manifest, entry, originals, seen) for entry in entries]
            if inherits_ids(base, manifest) and all(same for _, same in resolved):
                as_is.append(manifest)
            else:
                copies.append(
                    self._write_existing(
                        base, manifest.partition_spec_id, manifest.content, [entry for entry, _ in resolved]
                    )
                )
        self._prepared = _Prepared(base.format_version, as_is, copies, added_live, len(originals))
        return as_is, copies

    def _resolve(
        self,
        base: TableMetadata,
        manifest: ManifestFile,
        entry: ManifestEntry,
        originals: dict[ContentFile, tuple[ManifestEntry, ManifestFile]],
        seen: set[ContentFile],
    ) -> tuple[ManifestEntry, bool]:
        """The EXISTING entry to commit for ``entry`` of an added manifest, and whether the
        manifest already says exactly that.

        Raises:
            ValidationException: the file is not live in a deleted manifest, is added twice,
                or contradicts what the table knows of it (spec, partition, snapshot id,
                sequence numbers, first row id).
        """
        file = entry.data_file
        where = f"{file.file_path} in added manifest {manifest.manifest_path}"
        if file in seen:
            raise ValidationException(
                f"Replaced and created manifests must have the same live files: {where} is added twice"
            )
        seen.add(file)
        found = originals.get(file)
        if found is None:
            raise ValidationException(
                f"Replaced and created manifests must have the same live files: {where} is not a live file "
                f"of a deleted manifest ({_names(originals.keys() - seen)} are not added)"
            )
        original, row = found
        if (
            manifest.partition_spec_id != row.partition_spec_id
            or file.partition != original.data_file.partition
        ):
            raise ValidationException(
                f"{where} has partition {file.partition} of spec {manifest.partition_spec_id}, but the table "
                f"has it in partition {original.data_file.partition} of spec {row.partition_spec_id}"
            )
        same = entry.status == ManifestEntryStatus.EXISTING
        checks: list[tuple[str, Any, Any]] = [("snapshot id", entry.snapshot_id, original.snapshot_id)]
        if base.format_version >= 2:
            checks.append(("data sequence number", entry.sequence_number, original.sequence_number))
            checks.append(("file sequence number", entry.file_sequence_number, original.file_sequence_number))
        is_data = file.content == FileContent.DATA
        if base.format_version >= 3 and is_data:
            checks.append(("first row id", file.first_row_id, original.data_file.first_row_id))
        for name, given, known in checks:
            if given is None or entry.status == ManifestEntryStatus.ADDED:
                same = same and given == known
            elif given != known:
                raise ValidationException(f"{where} has {name} {given}, but the table has {known}")
        if is_data and file.first_row_id != original.data_file.first_row_id:
            file = file.copy(first_row_id=original.data_file.first_row_id)
        return (
            ManifestEntry(
                ManifestEntryStatus.EXISTING,
                original.snapshot_id,
                file,
                original.sequence_number,
                original.file_sequence_number,
            ),
            same,
        )


@dataclass(frozen=True, slots=True)
class _Prepared:
    format_version: int
    as_is: list[ManifestFile]  # added manifests committed as they are
    copies: list[ManifestFile]  # copies of the others, with ids filled in
    added_live: int  # live files of the added manifests
    deleted_live: int  # live files of the deleted manifests


def _partition_type(base: TableMetadata, spec_id: int) -> StructType:
    return base.spec_by_id(spec_id).partition_type(base.schema())


def partition_order(partition: Any) -> tuple[Any, ...]:
    """A key ordering partition tuples: nulls first, values of one field compared with each
    other (a UUID as its bytes)."""
    return tuple(
        (0, b"") if v is None else (1, v.bytes if isinstance(v, uuid.UUID) else v) for v in partition
    )


def _names(files: Any) -> str:
    paths = sorted(f.file_path for f in files)
    shown = ", ".join(paths[:_SHOWN])
    return f"{shown} and {len(paths) - _SHOWN} more" if len(paths) > _SHOWN else (shown or "none")
