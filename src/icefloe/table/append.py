"""AppendFiles: ``new_append()`` and ``new_fast_append()``.

Both add data files (and whole manifests) without removing anything; the snapshot operation is
``append``. A fast append writes one new manifest per partition spec and keeps every manifest
of the parent as it is. ``new_append()`` is the merging append: it shares the fast append's
behaviour and will merge small manifests per ``commit.manifest-merge.enabled`` (see the planning
issue); until then it never rewrites existing manifests.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from icefloe.errors import ValidationError
from icefloe.manifests import read_manifest
from icefloe.spec.manifest import ContentFile, DataFile, FileContent, ManifestContent, ManifestFile
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.snapshot_producer import SnapshotProducer
from icefloe.table.summary import SummaryBuilder

if TYPE_CHECKING:
    from icefloe.table.transaction import Transaction

__all__ = ["AppendFiles", "FastAppend", "MergeAppend"]


class AppendFiles(SnapshotProducer):
    """Append data files and manifests to the table (Java's ``AppendFiles``)."""

    operation = "append"

    def __init__(self, transaction: Transaction, *, autocommit: bool):
        super().__init__(transaction, autocommit=autocommit)
        self._files: list[DataFile] = []
        self._file_paths: set[str] = set()
        self._appended_manifests: list[ManifestFile] = []
        # Manifests written for the added files, reused across retries while still valid.
        self._cached: list[ManifestFile] | None = None
        self._cache_key: tuple[int, int] | None = None

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
        """Add every live file of an existing manifest (it is copied with this snapshot's id)."""
        self._check_mutable()
        if manifest.content != ManifestContent.DATA:
            raise ValidationError(f"cannot append delete manifest {manifest.manifest_path} to an append")
        if manifest.has_existing_files() and manifest.existing_files_count:
            raise ValidationError(f"cannot append manifest {manifest.manifest_path} with existing files")
        if manifest.has_deleted_files() and manifest.deleted_files_count:
            raise ValidationError(f"cannot append manifest {manifest.manifest_path} with deleted files")
        self._appended_manifests.append(manifest)
        self._invalidate()
        return self

    def _invalidate(self) -> None:
        if self._cached is not None:
            self._delete_written(keep=[])
        self._cached = None
        self._cache_key = None

    # ---- strategies --------------------------------------------------------------------------

    def _all_files(self) -> list[DataFile]:
        files = list(self._files)
        seen = set(self._file_paths)
        for manifest in self._appended_manifests:
            for entry in read_manifest(self._io, manifest):
                if entry.is_live and entry.data_file.file_path not in seen:
                    seen.add(entry.data_file.file_path)
                    files.append(entry.data_file)  # type: ignore[arg-type]
        return files

    def _new_manifests(self, base: TableMetadata, parent: Snapshot | None) -> list[ManifestFile]:
        key = (base.format_version, base.current_schema_id)
        if self._cached is not None and self._cache_key == key:
            return self._cached
        if self._cached is not None:
            self._delete_written(keep=[])  # written for a different format version or schema
        by_spec: dict[int, list[DataFile]] = defaultdict(list)
        for file in self._all_files():
            if file.spec_id not in base.specs_by_id():
                raise ValidationError(
                    f"cannot append {file.file_path}: unknown partition spec {file.spec_id}"
                )
            by_spec[file.spec_id].append(file)
        manifests = [
            self._write_manifest(base, spec_id, ManifestContent.DATA, files)
            for spec_id, files in by_spec.items()
        ]
        self._cached, self._cache_key = manifests, key
        return manifests

    def _summary(self, base: TableMetadata, builder: SummaryBuilder) -> None:
        specs = base.specs_by_id()
        schema = base.schema()
        for file in self._all_files():
            builder.added_file(specs[file.spec_id], schema, file)


class FastAppend(AppendFiles):
    """``new_fast_append()``: never rewrites existing manifests."""


class MergeAppend(AppendFiles):
    """``new_append()``: the merging append."""
