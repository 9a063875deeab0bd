"""MergingSnapshotProducer: the base of every operation that adds and removes files.

Overwrite, delete, replace partitions, rewrite and row delta all do the same thing with
different rules (Java's ``MergingSnapshotProducer``):

- files to add (data and delete files, optionally with an explicit data sequence number, as
  a compaction keeps the sequence number of the data it rewrote) go into new manifests, one
  per partition spec and content;
- files to remove (by path, by file, by partition, by a row filter matching whole files) are
  removed from the parent's manifests by two ``ManifestFilter``s, one for data manifests and
  one for delete manifests (``table/snapshots/manifest_filter.py``);
- delete files that can no longer apply to any live data file (their data sequence number is
  below every live data file's) are removed as well;
- the result is merged per ``commit.manifest-merge.*`` (``table/snapshots/manifest_merge.py``);
- the subclass's conflict checks (``table/snapshots/conflicts.py``) run on every attempt.

Format rules for delete files: none in v1; position deletes must be deletion vectors in v3
(and deletion vectors need v3); at most one deletion vector per data file in one commit.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from icefloe.errors import ValidationError
from icefloe.expressions import Expression, parse
from icefloe.spec.manifest import (
    ContentFile,
    DataFile,
    DeleteFile,
    FileContent,
    ManifestContent,
    ManifestFile,
)
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.operation import TableOperations
from icefloe.table.snapshots.conflicts import Conflicts
from icefloe.table.snapshots.manifest_filter import ManifestFilter, RemovedFile, file_key
from icefloe.table.snapshots.manifest_merge import ManifestMergeManager
from icefloe.table.snapshots.snapshot_producer import SnapshotProducer
from icefloe.table.snapshots.summary import SummaryBuilder

__all__ = ["MergingSnapshotProducer", "as_expression"]


def as_expression(expr: Expression | str) -> Expression:
    """An expression, parsing SQL text (``"day = '2024-01-01'"``)."""
    return parse(expr) if isinstance(expr, str) else expr


class MergingSnapshotProducer(SnapshotProducer):
    """Adds and removes data and delete files; merges manifests (see the module docstring)."""

    def __init__(self, transaction: TableOperations, *, autocommit: bool):
        super().__init__(transaction, autocommit=autocommit)
        self._case_sensitive = True
        self._starting_snapshot_id: int | None = None
        self._data_filter = ManifestFilter(ManifestContent.DATA)
        self._delete_filter = ManifestFilter(ManifestContent.DELETES)
        # Files to add, by path (data) or file key (deletes), with an explicit data sequence
        # number or None (the new snapshot's).
        self._added_data: dict[str, tuple[DataFile, int | None]] = {}
        self._added_deletes: dict[tuple[str, int | None], tuple[DeleteFile, int | None]] = {}
        self._removed_data_files: dict[str, DataFile] = {}  # explicitly removed DataFiles
        self._new_cache: list[ManifestFile] | None = None
        self._new_cache_key: tuple[int, int] | None = None
        self._removed: list[RemovedFile] = []  # what the last attempt removed
        self._merger = ManifestMergeManager(
            snapshot_id=self._snapshot_id,
            io=self._io,
            new_writer=self._new_manifest_writer,
            delete=lambda paths: self._delete_files(paths, quiet=True),
        )

    # ---- builder methods shared by the operations -------------------------------------------

    def case_sensitive(self, value: bool = True) -> MergingSnapshotProducer:
        """Whether row filters bind column names case-sensitively (default true)."""
        self._check_mutable()
        self._case_sensitive = value
        self._data_filter.case_sensitive = value
        self._delete_filter.case_sensitive = value
        self._data_filter._invalidate()
        self._delete_filter._invalidate()
        return self

    def validate_from_snapshot(self, snapshot_id: int) -> MergingSnapshotProducer:
        """Validate against the changes committed after ``snapshot_id`` (the snapshot the
        operation's input was read from). Without it, conflict checks see all history."""
        self._check_mutable()
        if self._base.snapshot_by_id(snapshot_id) is None:
            raise ValidationError(f"validate_from_snapshot: unknown snapshot id {snapshot_id}")
        self._starting_snapshot_id = snapshot_id
        return self

    # ---- for subclasses ---------------------------------------------------------------------

    def _add(self, file: ContentFile, data_sequence_number: int | None = None) -> None:
        self._check_mutable()
        if not isinstance(file, ContentFile):
            raise ValidationError(f"expected a DataFile or DeleteFile, not {file!r}")
        if file.spec_id not in self._base.specs_by_id():
            raise ValidationError(
                f"cannot add {file.file_path}: partition spec {file.spec_id} is not a spec of this table"
            )
        if data_sequence_number is not None and data_sequence_number < 0:
            raise ValidationError(f"data sequence number must not be negative: {data_sequence_number}")
        if file.content == FileContent.DATA:
            self._added_data[file.file_path] = (file, data_sequence_number)  # type: ignore[assignment]
        else:
            self._check_delete_file(file)
            self._added_deletes[file_key(file)] = (file, data_sequence_number)  # type: ignore[assignment]
        self._invalidate_new()

    def _added_dv_targets(self) -> list[str]:
        """The data files the deletion vectors this operation adds point at (for the check
        that no concurrent commit added a DV for one of them: readers apply one per file)."""
        return [
            f.referenced_data_file
            for f, _ in self._added_deletes.values()
            if f.is_deletion_vector and f.referenced_data_file
        ]

    def _check_delete_file(self, file: ContentFile) -> None:
        version = self._base.format_version
        if version < 2:
            raise ValidationError(
                f"cannot add delete file {file.file_path}: delete files need format version 2"
            )
        is_dv = isinstance(file, DeleteFile) and file.is_deletion_vector
        if file.content == FileContent.POSITION_DELETES and version >= 3 and not is_dv:
            raise ValidationError(
                f"cannot add position delete file {file.file_path}: format version {version} tables "
                "take deletion vectors (Puffin) for position deletes"
            )
        if is_dv and version < 3:
            raise ValidationError(
                f"cannot add deletion vector {file.file_path}: deletion vectors need format version 3"
            )
        if is_dv:
            target = file.referenced_data_file
            if not target:
                raise ValidationError(f"deletion vector {file.file_path} names no referenced data file")
            for other, _ in self._added_deletes.values():
                if (
                    other.is_deletion_vector
                    and other.referenced_data_file == target
                    and file_key(other) != file_key(file)
                ):
                    raise ValidationError(
                        f"two deletion vectors for data file {target} in one commit "
                        f"({other.file_path} and {file.file_path}); merge them into one"
                    )

    def _remove_data_file(self, file: DataFile | str) -> None:
        self._check_mutable()
        if isinstance(file, str):
            self._data_filter.delete_path(file)
        else:
            if not isinstance(file, ContentFile) or file.content != FileContent.DATA:
                raise ValidationError(f"expected a DataFile or a path, not {file!r}")
            self._data_filter.delete_file(file)
            self._removed_data_files[file.file_path] = file

    def _remove_delete_file(self, file: DeleteFile) -> None:
        self._check_mutable()
        if not isinstance(file, ContentFile) or file.content == FileContent.DATA:
            raise ValidationError(f"expected a DeleteFile, not {file!r}")
        self._delete_filter.delete_file(file)

    def _delete_by_row_filter(self, expr: Expression | str) -> None:
        self._check_mutable()
        parsed = as_expression(expr)
        self._data_filter.delete_by_row_filter(parsed)
        self._delete_filter.delete_by_row_filter(parsed)

    def _drop_partition(self, spec_id: int, partition: tuple[object, ...]) -> None:
        self._data_filter.drop_partition(spec_id, partition)
        self._delete_filter.drop_partition(spec_id, partition)

    def _conflicts(self, base: TableMetadata, parent: Snapshot | None) -> Conflicts:
        return Conflicts(
            base, parent, self._starting_snapshot_id, self._io, case_sensitive=self._case_sensitive
        )

    def _invalidate_new(self) -> None:
        had = self._new_cache is not None
        self._new_cache = None
        self._new_cache_key = None
        if had:
            self._delete_written(keep=[], quiet=True)
            self._data_filter._invalidate()
            self._delete_filter._invalidate()

    @property
    def _adds_data(self) -> bool:
        return bool(self._added_data)

    @property
    def _adds_deletes(self) -> bool:
        return bool(self._added_deletes)

    @property
    def _removes_files(self) -> bool:
        """Whether the operation itself removes data or delete files (not counting delete
        files dropped because they no longer apply to anything)."""
        return any(f.removes_files_explicitly for f in (self._data_filter, self._delete_filter))

    # ---- strategies -------------------------------------------------------------------------

    def _new_manifests(self, base: TableMetadata, parent: Snapshot | None) -> list[ManifestFile]:
        key = (base.format_version, base.current_schema_id)
        if self._new_cache is None or self._new_cache_key != key:
            if self._new_cache is not None:
                self._invalidate_new()
            for file, _ in self._added_deletes.values():
                self._check_delete_file(file)  # the format version may have changed
            self._new_cache, self._new_cache_key = self._write_new_manifests(base), key
        return list(self._new_cache)

    def _write_new_manifests(self, base: TableMetadata) -> list[ManifestFile]:
        specs = base.specs_by_id()
        result = []
        for content, added in (
            (ManifestContent.DATA, list(self._added_data.values())),
            (ManifestContent.DELETES, list(self._added_deletes.values())),
        ):
            by_spec: dict[int, list[tuple[DataFile | DeleteFile, int | None]]] = defaultdict(list)
            for file, seq in added:
                if file.spec_id not in specs:
                    raise ValidationError(
                        f"cannot add {file.file_path}: unknown partition spec {file.spec_id}"
                    )
                by_spec[file.spec_id].append((file, seq))
            for spec_id, files in by_spec.items():
                with self._new_manifest_writer(base, spec_id, content) as writer:
                    for file, seq in files:
                        writer.add(file, seq)
                result.append(writer.to_manifest_file())
        return result

    def _carried_manifests(self, base: TableMetadata, parent: Snapshot | None) -> list[ManifestFile]:
        if parent is None:
            self._removed = []
            # Nothing to remove from; a removal that must find its files fails.
            self._data_filter.filter(base, [], self._io, self._new_manifest_writer, self._snapshot_id)
            self._delete_filter.filter(base, [], self._io, self._new_manifest_writer, self._snapshot_id)
            return []
        manifests = parent.all_manifests(self._io)
        data = [m for m in manifests if m.content == ManifestContent.DATA]
        deletes = [m for m in manifests if m.content != ManifestContent.DATA]
        data, removed = self._data_filter.filter(
            base, data, self._io, self._new_manifest_writer, self._snapshot_id
        )
        if base.format_version >= 2 and deletes:
            self._delete_filter.set_min_sequence_number(self._min_live_data_sequence_number(base, data))
        deletes, removed_deletes = self._delete_filter.filter(
            base, deletes, self._io, self._new_manifest_writer, self._snapshot_id
        )
        self._removed = removed + removed_deletes
        return [*data, *deletes]

    def _min_live_data_sequence_number(self, base: TableMetadata, data: Iterable[ManifestFile]) -> int:
        """The smallest data sequence number a live data file will have after this commit:
        delete files below it apply to nothing and are dropped (Java does the same)."""
        result = base.last_sequence_number + 1
        for manifest in data:
            if manifest.has_added_files() or manifest.has_existing_files():
                result = min(result, manifest.min_sequence_number)
        for _, seq in self._added_data.values():
            if seq is not None:
                result = min(result, seq)
        return result

    def _summary(self, base: TableMetadata, builder: SummaryBuilder) -> None:
        specs = base.specs_by_id()
        schema = base.schema()
        for file, _ in self._added_data.values():
            builder.added_file(specs[file.spec_id], schema, file)
        for delete, _ in self._added_deletes.values():
            builder.added_file(specs[delete.spec_id], schema, delete)
        for removed in self._removed:
            builder.deleted_file(specs[removed.spec_id], schema, removed.file)

    def _abort(self) -> None:
        super()._abort()
        self._new_cache = None
        self._new_cache_key = None
        self._data_filter._invalidate()
        self._delete_filter._invalidate()
