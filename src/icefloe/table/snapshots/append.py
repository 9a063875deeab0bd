"""AppendFiles: ``new_append()`` and ``new_fast_append()``.

Both add data files (and whole manifests) without removing anything; the snapshot operation is
``append``. New files go into one new manifest per partition spec; an appended manifest stays
a manifest of its own (as Java does): in v2+ it is used as it is when its entries leave their
snapshot id and sequence numbers to inheritance (a manifest written with ``snapshot_id=None``),
otherwise (v1, or a manifest that names a snapshot) it is copied with this snapshot's id.

- ``new_fast_append()`` (FastAppend) keeps every manifest of the parent as it is.
- ``new_append()`` (MergeAppend) merges manifests per ``commit.manifest-merge.enabled``,
  ``commit.manifest.min-count-to-merge`` and ``commit.manifest.target-size-bytes`` (see
  ``table/snapshots/manifest_merge.py``), so that a table appended to many times keeps a bounded number
  of manifests; it also drops carried manifests that hold no live file.

The summary counts every appended file, those of appended manifests included (Java counts an
appended manifest's files and rows but not their sizes or partitions; icefloe reads the
manifest and counts them exactly).
"""

from __future__ import annotations

import logging
from collections import defaultdict

from icefloe.errors import ValidationError
from icefloe.manifests import read_manifest
from icefloe.spec.manifest import (
    ContentFile,
    DataFile,
    FileContent,
    ManifestContent,
    ManifestEntryStatus,
    ManifestFile,
)
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.operation import Changes, TableOperations
from icefloe.table.snapshots.manifest_merge import ManifestMergeManager
from icefloe.table.snapshots.snapshot_producer import SnapshotProducer, inherits_ids
from icefloe.table.snapshots.summary import SummaryBuilder

__all__ = ["AppendFiles", "FastAppend", "MergeAppend"]

log = logging.getLogger(__name__)


class AppendFiles(SnapshotProducer):
    """Append data files and manifests to the table (Java's ``AppendFiles``)."""

    operation = "append"

    def __init__(self, transaction: TableOperations, *, autocommit: bool):
        super().__init__(transaction, autocommit=autocommit)
        self._files: list[DataFile] = []
        self._file_paths: set[str] = set()
        self._appended_manifests: list[ManifestFile] = []
        # The files of each appended manifest (read once, for validation and the summary).
        self._appended_files: dict[str, list[DataFile]] = {}
        # Manifests written for the added files, and copies of appended manifests that cannot
        # be used as they are; reused across retries while still valid.
        self._cached: tuple[list[ManifestFile], list[ManifestFile]] | None = None
        self._cache_key: tuple[int, int] | None = None
        # Appended manifests the last attempt used as they are.
        self._as_is: list[ManifestFile] = []

    def append_file(self, file: DataFile) -> AppendFiles:
        """Add a data file. Adding the same path twice in one operation adds it once (as Java)."""
        self._check_mutable()
        if not isinstance(file, ContentFile) or file.content != FileContent.DATA:
            raise ValidationError(f"append_file takes a DataFile, not {file!r}")
        if file.spec_id not in self._base.specs_by_id():
            raise ValidationError(
                f"cannot append {file.file_path}: partition spec {file.spec_id} is not a spec of this table"
            )
        if file.file_path not in self._file_paths:
            self._file_paths.add(file.file_path)
            self._files.append(file)
            self._invalidate()
        return self

    def append_manifest(self, manifest: ManifestFile) -> AppendFiles:
        """Add every file of a manifest of ADDED entries, as a manifest of this snapshot.

        Raises:
            ValidationError: a delete manifest, a manifest with EXISTING or DELETED entries, or
                one of a partition spec the table does not have.
        """
        self._check_mutable()
        if not isinstance(manifest, ManifestFile):
            raise ValidationError(f"append_manifest takes a ManifestFile, not {manifest!r}")
        if manifest.content != ManifestContent.DATA:
            raise ValidationError(f"cannot append delete manifest {manifest.manifest_path} to an append")
        if manifest.existing_files_count:
            raise ValidationError(f"cannot append manifest {manifest.manifest_path} with existing files")
        if manifest.deleted_files_count:
            raise ValidationError(f"cannot append manifest {manifest.manifest_path} with deleted files")
        if manifest.partition_spec_id not in self._base.specs_by_id():
            raise ValidationError(
                f"cannot append manifest {manifest.manifest_path}: partition spec "
                f"{manifest.partition_spec_id} is not a spec of this table"
            )
        self._appended_files[manifest.manifest_path] = self._read_added_files(manifest)
        self._appended_manifests.append(manifest)
        self._invalidate()
        return self

    def _read_added_files(self, manifest: ManifestFile) -> list[DataFile]:
        files: list[DataFile] = []
        for entry in read_manifest(self._io, manifest):
            if entry.status != ManifestEntryStatus.ADDED:
                # Counts may be missing from the row; the entries tell.
                raise ValidationError(
                    f"cannot append manifest {manifest.manifest_path}: {entry.data_file.file_path} "
                    f"is {entry.status.name}, not ADDED"
                )
            files.append(entry.data_file)  # type: ignore[arg-type]
        return files

    def _invalidate(self) -> None:
        # Forget the cache before deleting its files: a delete that fails half-way must never
        # leave the cache naming files that are gone (a later commit would reference them).
        had_cache = self._cached is not None
        self._cached = None
        self._cache_key = None
        if had_cache:
            self._delete_written(keep=[], quiet=True)

    # ---- strategies --------------------------------------------------------------------------

    def _new_manifests(self, base: TableMetadata, parent: Snapshot | None) -> list[ManifestFile]:
        key = (base.format_version, base.current_schema_id)
        if self._cached is None or self._cache_key != key:
            if self._cached is not None:
                self._invalidate()  # written for a different format version or schema
            self._cached, self._cache_key = self._write_new_manifests(base), key
        written, copies = self._cached
        self._as_is = [m for m in self._appended_manifests if inherits_ids(base, m)]
        # Java's order: the new files' manifests, appended manifests as they are, then copies.
        return [*written, *self._as_is, *copies]

    def _write_new_manifests(self, base: TableMetadata) -> tuple[list[ManifestFile], list[ManifestFile]]:
        specs = base.specs_by_id()
        by_spec: dict[int, list[DataFile]] = defaultdict(list)
        for file in self._files:
            if file.spec_id not in specs:
                raise ValidationError(
                    f"cannot append {file.file_path}: unknown partition spec {file.spec_id}"
                )
            by_spec[file.spec_id].append(file)
        written = [
            self._write_manifest(base, spec_id, ManifestContent.DATA, files)
            for spec_id, files in by_spec.items()
        ]
        copies = []
        for manifest in self._appended_manifests:
            if manifest.partition_spec_id not in specs:
                raise ValidationError(
                    f"cannot append manifest {manifest.manifest_path}: unknown partition spec "
                    f"{manifest.partition_spec_id}"
                )
            if not inherits_ids(base, manifest):
                # Its entries name a snapshot (or the format cannot inherit one): copy them as
                # this snapshot's additions.
                files = self._appended_files[manifest.manifest_path]
                copies.append(
                    self._write_manifest(base, manifest.partition_spec_id, ManifestContent.DATA, files)
                )
        return written, copies

    def _summary(self, base: TableMetadata, builder: SummaryBuilder) -> None:
        specs = base.specs_by_id()
        schema = base.schema()
        for file in self._files:
            builder.added_file(specs[file.spec_id], schema, file)
        for manifest in self._appended_manifests:
            spec = specs[manifest.partition_spec_id]
            for file in self._appended_files[manifest.manifest_path]:
                builder.added_file(spec, schema, file)

    def _after_commit(self, committed: Changes) -> None:
        super()._after_commit(committed)
        # Once committed, the table owns the manifests appended as they are: those a merge
        # replaced are garbage (never deleted on failure: they still belong to the caller).
        referenced = set(committed.written_files)
        doomed = [m.manifest_path for m in self._as_is if m.manifest_path not in referenced]
        if doomed:
            try:
                self._io.delete_many(doomed)
            except Exception:  # the commit happened; garbage must not make it look failed
                log.warning("could not delete %d merged appended manifests of %s", len(doomed), self)

    def _abort(self) -> None:
        super()._abort()
        self._cached = None
        self._cache_key = None


class FastAppend(AppendFiles):
    """``new_fast_append()``: never rewrites existing manifests."""


class MergeAppend(AppendFiles):
    """``new_append()``: the merging append (see ``table/snapshots/manifest_merge.py``)."""

    def __init__(self, transaction: TableOperations, *, autocommit: bool):
        super().__init__(transaction, autocommit=autocommit)
        self._merger = ManifestMergeManager(
            snapshot_id=self._snapshot_id,
            io=self._io,
            new_writer=self._new_manifest_writer,
            delete=lambda paths: self._delete_files(paths, quiet=True),
        )
