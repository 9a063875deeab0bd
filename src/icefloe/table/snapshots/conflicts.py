"""Conflict validation: what concurrent commits did since an operation's starting snapshot
(Java's validations in ``MergingSnapshotProducer``).

An operation that read the table at snapshot S (``validate_from_snapshot(S)``) and commits on
top of a newer parent P checks the snapshots after S up to P (P's ancestors; S itself
excluded) for changes that would make its own commit wrong. Without a starting snapshot every
ancestor of P is checked (as Java does). The history must be complete: a starting snapshot that
is not an ancestor of P, or whose descendants were expired, fails the commit.

Each check raises ``ValidationException`` with Java's message, naming the conflicting files.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass

from icefloe.errors import ValidationException
from icefloe.expressions import Expression
from icefloe.io import FileIO
from icefloe.manifests import read_manifest
from icefloe.scan.delete_index import DeleteFileIndex
from icefloe.spec.manifest import (
    DataFile,
    DeleteFile,
    FileContent,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
)
from icefloe.spec.partition_values import partition_key
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.snapshots.manifest_filter import FileEvaluator

__all__ = [
    "ADDED_DELETE_FILES_OPERATIONS",
    "ADDED_FILES_OPERATIONS",
    "DATA_FILES_EXIST_OPERATIONS",
    "Conflicts",
]

#: Snapshots that may add data files a concurrent operation must see (Java's sets).
ADDED_FILES_OPERATIONS = frozenset({"append", "overwrite"})
ADDED_DELETE_FILES_OPERATIONS = frozenset({"overwrite", "delete"})
DATA_FILES_EXIST_OPERATIONS = frozenset({"overwrite", "replace", "delete"})
DATA_FILES_EXIST_SKIP_DELETE_OPERATIONS = frozenset({"overwrite", "replace"})

PartitionSet = Collection[tuple[int, tuple[object, ...]]]


@dataclass(frozen=True, slots=True)
class _History:
    snapshot_ids: frozenset[int]
    manifests: list[ManifestFile]  # the manifests of ``content`` those snapshots added


class Conflicts:
    """The checks, for one base metadata, parent snapshot and starting snapshot."""

    def __init__(
        self,
        base: TableMetadata,
        parent: Snapshot | None,
        starting_snapshot_id: int | None,
        io: FileIO,
        *,
        case_sensitive: bool = True,
    ):
        self.base = base
        self.parent = parent
        self.starting_snapshot_id = starting_snapshot_id
        self.io = io
        self.case_sensitive = case_sensitive
        self._evaluators: dict[tuple[int, str], FileEvaluator] = {}

    # ---- history ----------------------------------------------------------------------------

    def _history(self, operations: frozenset[str], content: ManifestContent) -> _History:
        assert self.parent is not None
        ids: set[int] = set()
        manifests: list[ManifestFile] = []
        last: Snapshot | None = None
        for snapshot in self.base.ancestors_of(self.parent.snapshot_id):
            if snapshot.snapshot_id == self.starting_snapshot_id:
                break
            last = snapshot
            if snapshot.operation in operations:
                ids.add(snapshot.snapshot_id)
                for manifest in snapshot.all_manifests(self.io):
                    if manifest.content == content and manifest.added_snapshot_id == snapshot.snapshot_id:
                        manifests.append(manifest)
        if last is not None and last.parent_snapshot_id != self.starting_snapshot_id:
            raise ValidationException(
                f"Cannot determine history between starting snapshot {self.starting_snapshot_id} "
                f"and the last known ancestor {last.snapshot_id}"
            )
        return _History(frozenset(ids), manifests)

    def _starting_sequence_number(self) -> int:
        if self.starting_snapshot_id is None:
            return 0
        snapshot = self.base.snapshot_by_id(self.starting_snapshot_id)
        return snapshot.sequence_number if snapshot is not None else 0

    def _evaluator(self, spec_id: int, expr: Expression) -> FileEvaluator:
        key = (spec_id, repr(expr))
        found = self._evaluators.get(key)
        if found is None:
            found = self._evaluators[key] = FileEvaluator(
                self.base.specs_by_id()[spec_id], self.base.schema(), expr, self.case_sensitive
            )
        return found

    def _entries(
        self,
        history: _History,
        keep: Callable[[ManifestEntry], bool],
        data_filter: Expression | None = None,
        partitions: PartitionSet | None = None,
    ) -> Iterator[ManifestEntry]:
        """Entries of the history's manifests written by its snapshots that ``keep`` accepts,
        pruned by the filter (rows might match) and the partition set."""
        wanted = None if partitions is None else {(s, partition_key(p)) for s, p in partitions}
        for manifest in history.manifests:
            spec_id = manifest.partition_spec_id
            evaluator = None if data_filter is None else self._evaluator(spec_id, data_filter)
            if evaluator is not None and not evaluator.manifest_might_match(manifest):
                continue
            for entry in read_manifest(self.io, manifest):
                if entry.snapshot_id not in history.snapshot_ids or not keep(entry):
                    continue
                file = entry.data_file
                if wanted is not None and (file.spec_id, partition_key(file.partition)) not in wanted:
                    continue
                if evaluator is not None and not evaluator.rows_might_match(file):
                    continue
                yield entry

    # ---- the checks -------------------------------------------------------------------------

    def added_data_files(
        self, data_filter: Expression | None, partitions: PartitionSet | None = None
    ) -> None:
        """No data file matching the filter (or in the partitions) was added concurrently."""
        if self.parent is None:
            return
        history = self._history(ADDED_FILES_OPERATIONS, ManifestContent.DATA)
        found = [e.data_file.file_path for e in self._entries(history, _is_added, data_filter, partitions)]
        if found:
            what = data_filter if partitions is None else _partitions_text(self.base, partitions)
            raise ValidationException(
                f"Found conflicting files that can contain records matching {what}: {_paths(found)}"
            )

    def deleted_data_files(
        self, data_filter: Expression | None, partitions: PartitionSet | None = None
    ) -> None:
        """No data file matching the filter (or in the partitions) was removed concurrently."""
        if self.parent is None:
            return
        history = self._history(DATA_FILES_EXIST_OPERATIONS, ManifestContent.DATA)
        found = [e.data_file.file_path for e in self._entries(history, _is_deleted, data_filter, partitions)]
        if found:
            # Java's wording differs by what is checked: a filter, or a set of partitions.
            if partitions is None:
                what = f"can contain records matching {data_filter}"
            else:
                what = f"can apply to records matching {_partitions_text(self.base, partitions)}"
            raise ValidationException(f"Found conflicting deleted files that {what}: {_paths(found)}")

    def data_files_exist(
        self,
        required_paths: Collection[str],
        *,
        skip_deletes: bool,
        data_filter: Expression | None,
    ) -> None:
        """The data files that new position deletes reference were not removed concurrently
        (``skip_deletes``: removals by ``delete`` snapshots do not count)."""
        if self.parent is None or not required_paths:
            return
        operations = DATA_FILES_EXIST_SKIP_DELETE_OPERATIONS if skip_deletes else DATA_FILES_EXIST_OPERATIONS
        history = self._history(operations, ManifestContent.DATA)
        required = set(required_paths)

        def removed_required(entry: ManifestEntry) -> bool:
            return entry.status != ManifestEntryStatus.ADDED and entry.data_file.file_path in required

        found = [
            e.data_file.file_path
            for e in self._entries(history, removed_required, data_filter)
            if e.status == ManifestEntryStatus.DELETED
        ]
        if found:
            raise ValidationException(f"Cannot commit, missing data files: {_paths(found)}")

    def _added_deletes(
        self, data_filter: Expression | None, partitions: PartitionSet | None
    ) -> tuple[DeleteFileIndex, list[str]]:
        """The delete files added concurrently (after the starting snapshot's sequence
        number), indexed, and their paths."""
        index = DeleteFileIndex(self.base.specs_by_id())
        paths: list[str] = []
        if self.parent is None or self.base.format_version < 2:
            return index, paths
        history = self._history(ADDED_DELETE_FILES_OPERATIONS, ManifestContent.DELETES)
        starting = self._starting_sequence_number()
        for entry in self._entries(history, _is_live, data_filter, partitions):
            sequence_number = entry.sequence_number or 0
            if sequence_number > starting:
                index.add(entry.data_file, sequence_number)  # type: ignore[arg-type]
                paths.append(entry.data_file.file_path)
        return index, paths

    def no_new_deletes_for_data_files(
        self,
        data_files: Collection[DataFile],
        data_filter: Expression | None,
        *,
        ignore_equality_deletes: bool = False,
    ) -> None:
        """No delete file added concurrently applies to any of ``data_files`` (files this
        operation removes or replaces: their deleted rows would come back)."""
        if self.parent is None or not data_files:
            return
        index, paths = self._added_deletes(data_filter, None)
        if not paths:
            return
        starting = self._starting_sequence_number()
        for file in data_files:
            deletes = index.for_data_file(file, starting)
            if ignore_equality_deletes:
                deletes = tuple(d for d in deletes if d.content != FileContent.EQUALITY_DELETES)
            if deletes:
                raise ValidationException(
                    f"Cannot commit, found new delete for replaced data file: {file.file_path}"
                )

    def no_new_delete_files(
        self, data_filter: Expression | None, partitions: PartitionSet | None = None
    ) -> None:
        """No delete file that may apply to rows matching the filter (or in the partitions)
        was added concurrently."""
        if self.parent is None:
            return
        _, paths = self._added_deletes(data_filter, partitions)
        if paths:
            what = data_filter if partitions is None else _partitions_text(self.base, partitions)
            raise ValidationException(
                f"Found new conflicting delete files that can apply to records matching {what}: "
                f"{_paths(paths)}"
            )

    def added_dvs(self, referenced: Collection[str], data_filter: Expression | None) -> None:
        """No deletion vector for any of the ``referenced`` data files was added concurrently
        (v3: one DV per data file; a concurrent one would be silently ignored)."""
        if self.parent is None or not referenced or self.base.format_version < 3:
            return
        history = self._history(ADDED_DELETE_FILES_OPERATIONS, ManifestContent.DELETES)
        targets = set(referenced)

        def concurrent_dv(entry: ManifestEntry) -> bool:
            file = entry.data_file
            return (
                entry.status == ManifestEntryStatus.ADDED
                and isinstance(file, DeleteFile)
                and file.is_deletion_vector
                and file.referenced_data_file in targets
            )

        for entry in self._entries(history, concurrent_dv, data_filter):
            raise ValidationException(
                f"Found concurrently added DV for {entry.data_file.referenced_data_file}: "
                f"{entry.data_file.file_path}"
            )


def _is_added(entry: ManifestEntry) -> bool:
    return entry.status == ManifestEntryStatus.ADDED


def _is_deleted(entry: ManifestEntry) -> bool:
    return entry.status == ManifestEntryStatus.DELETED


def _is_live(entry: ManifestEntry) -> bool:
    return entry.status != ManifestEntryStatus.DELETED


def _paths(paths: Collection[str], limit: int = 10) -> str:
    listed = sorted(set(paths))
    more = f" (and {len(listed) - limit} more)" if len(listed) > limit else ""
    return "[" + ", ".join(listed[:limit]) + "]" + more


def _partitions_text(base: TableMetadata, partitions: PartitionSet) -> str:
    specs = base.specs_by_id()
    schema = base.schema()
    texts = sorted(
        specs[spec_id].partition_to_path(tuple(p), schema) if specs[spec_id].fields else "(unpartitioned)"
        for spec_id, p in partitions
    )
    return "partitions [" + ", ".join(texts) + "]"
