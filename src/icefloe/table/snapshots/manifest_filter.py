"""Removing files from a snapshot's manifests: Java's ``ManifestFilterManager``.

Operations that remove files (overwrite, delete, replace partitions, rewrite, row delta)
say *what* goes: paths, files, partitions, or a row filter whose matching files go whole. A
``ManifestFilter`` applies that to the parent snapshot's manifests of one content kind (data
or deletes):

- a manifest that cannot hold a removed file (judged from its partition summaries and counts)
  is kept as it is;
- otherwise its entries are read; when none goes, the manifest is kept as it is; else it is
  rewritten: removed files become DELETED entries of the new snapshot, the other live entries
  EXISTING (keeping the snapshot that added them and their sequence numbers), and entries
  DELETED by earlier snapshots are dropped.

A row filter removes a data file only when *every* row of it matches (strict projection of the
filter onto the partition, or the strict metrics evaluator); a data file with some matching
rows and some not cannot be removed whole, so the operation fails with a ValidationException
(row-level deletes are the tool for that). Delete files that only partly match are kept.

Filtered manifests are remembered by their input manifest: a retry re-uses them (the input is
immutable and the new snapshot's id does not change), and re-counts what they removed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from icefloe.errors import ValidationError, ValidationException
from icefloe.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    Expression,
    InclusiveMetricsEvaluator,
    ManifestEvaluator,
    ResidualEvaluator,
    StrictMetricsEvaluator,
    always_false,
    bind,
    or_,
)
from icefloe.io import FileIO
from icefloe.manifests import ManifestWriter, read_manifest
from icefloe.spec.manifest import (
    ContentFile,
    FileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
)
from icefloe.spec.partitioning import PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.spec.table_metadata import TableMetadata

__all__ = ["FileEvaluator", "ManifestFilter", "RemovedFile", "file_key"]

#: Makes a writer for a new manifest of the snapshot: (base, spec id, content) -> writer.
NewWriter = Callable[[TableMetadata, int, ManifestContent], ManifestWriter]


def file_key(file: ContentFile) -> tuple[str, int | None]:
    """What identifies a file in a table: its path, and for a deletion vector its offset in
    the Puffin file (one Puffin file holds the vectors of many data files)."""
    return (file.file_path, file.content_offset if file.file_format == FileFormat.PUFFIN else None)


class FileEvaluator:
    """Whether a file's rows may match (or must all match) a row filter, judged by its
    partition and its column metrics (Java's ``PartitionAndMetricsEvaluator``).

    The filter is first reduced to its residual for the file's partition (what the partition
    does not decide), and the metrics judge the residual: ``date = D AND id < 20`` on a file
    of partition ``date=D`` leaves ``id < 20`` for the file's ``id`` bounds.
    """

    def __init__(self, spec: PartitionSpec, schema: Schema, row_filter: Expression, case_sensitive: bool):
        self._schema = schema
        self._case_sensitive = case_sensitive
        bound = bind(schema, row_filter, case_sensitive=case_sensitive)
        self._trivial: bool | None = (
            True if isinstance(bound, AlwaysTrue) else False if isinstance(bound, AlwaysFalse) else None
        )
        self._manifests = ManifestEvaluator(spec, schema, bound, case_sensitive)
        self._residuals = ResidualEvaluator(spec, schema, bound, case_sensitive)
        # Per distinct residual (a handful per table): its metrics evaluators.
        self._metrics: dict[int, tuple[Expression, InclusiveMetricsEvaluator, StrictMetricsEvaluator]] = {}

    def manifest_might_match(self, manifest: ManifestFile) -> bool:
        if self._trivial is not None:
            return self._trivial
        return self._manifests.eval(manifest)

    def _residual(
        self, file: ContentFile
    ) -> tuple[Expression, InclusiveMetricsEvaluator, StrictMetricsEvaluator]:
        residual = self._residuals.residual_for(file.partition)
        found = self._metrics.get(id(residual))
        if found is None or found[0] is not residual:
            found = (
                residual,
                InclusiveMetricsEvaluator(self._schema, residual, self._case_sensitive),
                StrictMetricsEvaluator(self._schema, residual, self._case_sensitive),
            )
            self._metrics[id(residual)] = found
        return found

    def rows_might_match(self, file: ContentFile) -> bool:
        if self._trivial is not None:
            return self._trivial
        residual, inclusive, _ = self._residual(file)
        if isinstance(residual, AlwaysFalse):
            return False
        return isinstance(residual, AlwaysTrue) or inclusive.eval(file)

    def rows_must_match(self, file: ContentFile) -> bool:
        if self._trivial is not None:
            return self._trivial
        residual, _, strict = self._residual(file)
        if isinstance(residual, (AlwaysTrue, AlwaysFalse)):
            return isinstance(residual, AlwaysTrue)
        return strict.eval(file)


@dataclass(frozen=True, slots=True)
class RemovedFile:
    """A file a filtered manifest marks DELETED, with its spec (for the snapshot summary)."""

    file: ContentFile
    spec_id: int


@dataclass(slots=True)
class _Filtered:
    manifest: ManifestFile  # the manifest to commit (the input when nothing was removed)
    removed: list[RemovedFile]
    keys: set[tuple[str, int | None]]  # every live file key the input holds


@dataclass
class ManifestFilter:
    """What to remove from the manifests of one content kind, and the filtering itself."""

    content: ManifestContent
    case_sensitive: bool = True
    delete_paths: set[str] = field(default_factory=set)
    delete_files: dict[tuple[str, int | None], ContentFile] = field(default_factory=dict)
    delete_expression: Expression = field(default_factory=always_false)
    drop_partitions: set[tuple[int, tuple[object, ...]]] = field(default_factory=set)
    fail_missing_delete_paths: bool = False
    #: Raise when any file would be removed (``validate_append_only`` of replace partitions).
    fail_any_delete: bool = False
    #: Delete files whose data sequence number is below this are removed (they can no longer
    #: apply to any live data file); 0 keeps all.
    min_sequence_number: int = 0
    _cache: dict[str, _Filtered] = field(default_factory=dict)

    # ---- building ---------------------------------------------------------------------------

    def delete_path(self, path: str) -> None:
        self.delete_paths.add(path)
        self._invalidate()

    def delete_file(self, file: ContentFile) -> None:
        self.delete_files[file_key(file)] = file
        self._invalidate()

    def delete_by_row_filter(self, expr: Expression) -> None:
        self.delete_expression = or_(self.delete_expression, expr)
        self._invalidate()

    def drop_partition(self, spec_id: int, partition: tuple[object, ...]) -> None:
        self.drop_partitions.add((spec_id, tuple(partition)))
        self._invalidate()

    def set_min_sequence_number(self, value: int) -> None:
        if value != self.min_sequence_number:
            self.min_sequence_number = value
            self._invalidate()

    def _invalidate(self) -> None:
        # Filtered manifests of an older definition are garbage: the producer deletes every
        # manifest it wrote and does not commit.
        self._cache.clear()

    @property
    def removes_files_explicitly(self) -> bool:
        """Paths, files, partitions or a row filter (not the sequence-number cleanup)."""
        return bool(
            self.delete_paths
            or self.delete_files
            or self.drop_partitions
            or not isinstance(self.delete_expression, AlwaysFalse)
        )

    @property
    def removes_anything(self) -> bool:
        return bool(
            self.delete_paths
            or self.delete_files
            or self.drop_partitions
            or not isinstance(self.delete_expression, AlwaysFalse)
            or self.min_sequence_number > 0
        )

    # ---- filtering --------------------------------------------------------------------------

    def filter(
        self,
        base: TableMetadata,
        manifests: Sequence[ManifestFile],
        io: FileIO,
        new_writer: NewWriter,
        snapshot_id: int,
    ) -> tuple[list[ManifestFile], list[RemovedFile]]:
        """The manifests with the removals applied, and the files removed.

        Raises:
            ValidationException: a data file only some of whose rows match the row filter; a
                path or file to delete that no manifest holds (with
                ``fail_missing_delete_paths``); any removal with ``fail_any_delete``.
        """
        if not self.removes_anything:
            return list(manifests), []
        schema = base.schema()
        specs = base.specs_by_id()
        evaluators: dict[int, FileEvaluator] = {}

        def evaluator(spec_id: int) -> FileEvaluator:
            found = evaluators.get(spec_id)
            if found is None:
                found = evaluators[spec_id] = FileEvaluator(
                    specs[spec_id], schema, self.delete_expression, self.case_sensitive
                )
            return found

        result: list[ManifestFile] = []
        removed: list[RemovedFile] = []
        seen: set[tuple[str, int | None]] = set()
        for manifest in manifests:
            if manifest.content != self.content or not self._might_remove(manifest, evaluator):
                result.append(manifest)
                continue
            filtered = self._cache.get(manifest.manifest_path)
            if filtered is None:
                filtered = self._filter_one(base, manifest, io, new_writer, snapshot_id, evaluator)
                self._cache[manifest.manifest_path] = filtered
            result.append(filtered.manifest)
            removed.extend(filtered.removed)
            seen |= filtered.keys
        if self.fail_missing_delete_paths:
            self._check_all_found(seen)
        return result, removed

    def _might_remove(self, manifest: ManifestFile, evaluator: Callable[[int], FileEvaluator]) -> bool:
        live = manifest.added_files_count, manifest.existing_files_count
        if None not in live and not any(live):
            return False  # nothing live to remove
        if self.delete_paths or self.delete_files:
            return True
        if self.drop_partitions and any(
            spec == manifest.partition_spec_id for spec, _ in self.drop_partitions
        ):
            return True
        if (
            self.content == ManifestContent.DELETES
            and self.min_sequence_number > 0
            and 0 < manifest.min_sequence_number < self.min_sequence_number
        ):
            return True
        if isinstance(self.delete_expression, AlwaysFalse):
            return False
        return evaluator(manifest.partition_spec_id).manifest_might_match(manifest)

    def _marked(self, entry: ManifestEntry, evaluator: FileEvaluator) -> bool:
        file = entry.data_file
        if file.file_path in self.delete_paths or file_key(file) in self.delete_files:
            return True
        if self.drop_partitions and (file.spec_id, tuple(file.partition)) in self.drop_partitions:
            return True
        return (
            file.content != FileContent.DATA
            and self.min_sequence_number > 0
            and entry.sequence_number is not None
            and 0 < entry.sequence_number < self.min_sequence_number
        )

    def _filter_one(
        self,
        base: TableMetadata,
        manifest: ManifestFile,
        io: FileIO,
        new_writer: NewWriter,
        snapshot_id: int,
        evaluators: Callable[[int], FileEvaluator],
    ) -> _Filtered:
        evaluator = evaluators(manifest.partition_spec_id)
        has_expression = not isinstance(self.delete_expression, AlwaysFalse)
        entries = [e for e in read_manifest(io, manifest) if e.status != ManifestEntryStatus.DELETED]
        doomed: list[bool] = []
        removed: list[RemovedFile] = []
        keys: set[tuple[str, int | None]] = set()
        for entry in entries:
            file = entry.data_file
            keys.add(file_key(file))
            keys.add((file.file_path, None))
            marked = self._marked(entry, evaluator)
            if not marked and has_expression and evaluator.rows_might_match(file):
                if evaluator.rows_must_match(file):
                    marked = True
                elif file.content == FileContent.DATA:
                    raise ValidationException(
                        f"Cannot delete file where some, but not all, rows match filter "
                        f"{self.delete_expression}: {file.file_path}"
                    )
            if marked and self.fail_any_delete:
                spec = base.specs_by_id()[manifest.partition_spec_id]
                where = (
                    spec.partition_to_path(file.partition, base.schema())
                    if spec.fields
                    else "(unpartitioned)"
                )
                raise ValidationException(
                    f"Cannot commit file that conflicts with existing partition: {where}"
                )
            doomed.append(marked)
            if marked:
                removed.append(RemovedFile(file, manifest.partition_spec_id))
        if not removed:
            return _Filtered(manifest, [], keys)
        with new_writer(base, manifest.partition_spec_id, manifest.content) as writer:
            for entry, marked in zip(entries, doomed):
                if marked:
                    writer.delete(
                        entry.data_file, snapshot_id, entry.sequence_number, entry.file_sequence_number
                    )
                else:
                    if entry.snapshot_id is None:  # pragma: no cover - inheritance fills it in
                        raise ValidationError(f"{manifest.manifest_path}: entry without a snapshot id")
                    writer.existing(
                        entry.data_file, entry.snapshot_id, entry.sequence_number, entry.file_sequence_number
                    )
        return _Filtered(writer.to_manifest_file(), removed, keys)

    def _check_all_found(self, seen: set[tuple[str, int | None]]) -> None:
        missing = [p for p in self.delete_paths if (p, None) not in seen]
        missing += [key[0] for key in self.delete_files if key not in seen]
        if missing:
            raise ValidationException(f"Missing required files to delete: {', '.join(sorted(missing))}")
