"""Scan tasks: what planning hands to readers.

- :class:`FileScanTask`: rows of a data file (a table scan, an incremental append scan).
- The changelog tasks of an incremental changelog scan (Java's ``ChangelogScanTask`` family),
  each tagged with its change ordinal and commit snapshot: :class:`AddedRowsScanTask` (rows a
  snapshot inserted), :class:`DeletedDataFileScanTask` (rows a snapshot deleted by removing
  their data file) and :class:`DeletedRowsScanTask` (rows a snapshot deleted with delete files).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from icefloe.expressions import Expression
from icefloe.spec.manifest import DataFile, DeleteFile, FileFormat
from icefloe.spec.partitioning import PartitionSpec

__all__ = [
    "AddedRowsScanTask",
    "ChangelogOperation",
    "ChangelogScanTask",
    "DeletedDataFileScanTask",
    "DeletedRowsScanTask",
    "FileScanTask",
    "new_file_scan_task",
    "usable_split_offsets",
]


@dataclass(frozen=True, slots=True, eq=False)
class FileScanTask:
    """Read ``file`` (bytes ``start`` to ``start + length``), drop the rows ``deletes`` delete,
    keep the rows ``residual`` matches.

    ``residual`` is bound to the scan's schema: the part of the row filter that the file's
    partition does not already guarantee (``AlwaysTrue`` when every row of the partition
    matches). ``data_sequence_number`` is the file's data sequence number after inheritance.
    """

    file: DataFile
    deletes: tuple[DeleteFile, ...]
    residual: Expression
    spec: PartitionSpec
    start: int
    length: int
    data_sequence_number: int = 0

    @property
    def file_path(self) -> str:
        return self.file.file_path

    @property
    def record_count(self) -> int:
        return self.file.record_count

    # ---- sizes for split planning (Java's ScanTask.sizeBytes / estimatedRowsCount / filesCount) ----

    @property
    def is_whole_file(self) -> bool:
        """Whether the task covers its whole file (planned tasks do; splits do not)."""
        return self.start == 0 and self.length == self.file.file_size_in_bytes

    @property
    def size_bytes(self) -> int:
        """Bytes to read: the task's range plus its delete files (a deletion vector counts its
        blob, not its Puffin file), as Java's ``FileScanTask.sizeBytes()``."""
        return self.length + sum(_content_size(d) for d in self.deletes)

    @property
    def files_count(self) -> int:
        """Files to open: the data file and its delete files."""
        return 1 + len(self.deletes)

    @property
    def estimated_rows_count(self) -> int:
        """The file's record count scaled by the share of its row-group bytes this task covers
        (Java's ``ContentScanTask.estimatedRowsCount()``)."""
        offsets = usable_split_offsets(self.file)
        first = offsets[0] if offsets else 0
        span = self.file.file_size_in_bytes - first
        if span <= 0:
            return self.file.record_count if self.length > 0 else 0
        return int(self.length / span * self.file.record_count)


_set_file, _set_deletes, _set_residual, _set_spec, _set_start, _set_length, _set_sequence = (
    FileScanTask.__dict__[name].__set__
    for name in ("file", "deletes", "residual", "spec", "start", "length", "data_sequence_number")
)
_new = object.__new__


def new_file_scan_task(
    file: DataFile,
    deletes: tuple[DeleteFile, ...],
    residual: Expression,
    spec: PartitionSpec,
    start: int,
    length: int,
    data_sequence_number: int,
) -> FileScanTask:
    """``FileScanTask(...)``, built by setting its slots: planning builds one per planned file,
    and the frozen dataclass ``__init__`` (one ``object.__setattr__`` per field) costs twice as
    much."""
    task = _new(FileScanTask)
    _set_file(task, file)
    _set_deletes(task, deletes)
    _set_residual(task, residual)
    _set_spec(task, spec)
    _set_start(task, start)
    _set_length(task, length)
    _set_sequence(task, data_sequence_number)
    return task


def usable_split_offsets(file: DataFile) -> tuple[int, ...] | None:
    """The file's ``split_offsets`` when Java would use them: present and the last one before
    the end of the file (Java's ``BaseFile.hasWellDefinedOffsets``); None otherwise."""
    offsets = file.split_offsets
    if not offsets or offsets[-1] >= file.file_size_in_bytes:
        return None
    return offsets


def _content_size(delete: DeleteFile) -> int:
    # Java's ScanTaskUtil.contentSizeInBytes: a deletion vector is a blob inside a Puffin file.
    if delete.file_format == FileFormat.PUFFIN and delete.content_size_in_bytes is not None:
        return delete.content_size_in_bytes
    return delete.file_size_in_bytes


# ---- changelog tasks -------------------------------------------------------------------------


class ChangelogOperation(enum.StrEnum):
    """The kind of a change row (Java's ``ChangelogOperation``; the values are the
    ``_change_type`` strings of Spark's changelog)."""

    INSERT = "INSERT"
    DELETE = "DELETE"
    UPDATE_BEFORE = "UPDATE_BEFORE"
    UPDATE_AFTER = "UPDATE_AFTER"


@dataclass(frozen=True, slots=True, eq=False)
class ChangelogScanTask:
    """What every changelog task has (Java's ``ChangelogScanTask``): the rows of ``file``
    that one snapshot changed.

    Attributes:
        change_ordinal: the position of the commit in the scan's range (0 for the oldest
            snapshot that changed rows): changes with a lower ordinal apply first.
        commit_snapshot_id: the snapshot that made the change.
        file: the data file whose rows changed.
        residual: the scan's filter as far as the file's partition does not decide it (bound
            to the scan's schema); only rows matching it are changes of the scan.
        spec: the file's partition spec.
        data_sequence_number: the file's data sequence number.
    """

    change_ordinal: int
    commit_snapshot_id: int
    file: DataFile
    residual: Expression
    spec: PartitionSpec
    data_sequence_number: int

    @property
    def operation(self) -> ChangelogOperation:  # pragma: no cover - every task overrides it
        raise NotImplementedError

    @property
    def file_path(self) -> str:
        return self.file.file_path

    @property
    def referenced_delete_files(self) -> tuple[DeleteFile, ...]:
        """Every delete file the task reads."""
        return ()

    def file_task(self, deletes: tuple[DeleteFile, ...]) -> FileScanTask:
        """The task's whole file as a :class:`FileScanTask` with ``deletes``."""
        return FileScanTask(
            self.file,
            deletes,
            self.residual,
            self.spec,
            0,
            self.file.file_size_in_bytes,
            self.data_sequence_number,
        )


@dataclass(frozen=True, slots=True, eq=False)
class AddedRowsScanTask(ChangelogScanTask):
    """Rows inserted by adding a data file: the file's rows that ``deletes`` (the delete
    files live in the commit snapshot that apply to it, e.g. rows deleted again in the same
    commit) do not delete (Java's ``AddedRowsScanTask``)."""

    deletes: tuple[DeleteFile, ...]

    @property
    def operation(self) -> ChangelogOperation:
        return ChangelogOperation.INSERT

    @property
    def referenced_delete_files(self) -> tuple[DeleteFile, ...]:
        return self.deletes


@dataclass(frozen=True, slots=True, eq=False)
class DeletedDataFileScanTask(ChangelogScanTask):
    """Rows deleted by removing a data file: its rows as they were live before the commit,
    the rows ``existing_deletes`` (the delete files live in the parent snapshot that apply to
    it) delete excluded (Java's ``DeletedDataFileScanTask``)."""

    existing_deletes: tuple[DeleteFile, ...]

    @property
    def operation(self) -> ChangelogOperation:
        return ChangelogOperation.DELETE

    @property
    def referenced_delete_files(self) -> tuple[DeleteFile, ...]:
        return self.existing_deletes


@dataclass(frozen=True, slots=True, eq=False)
class DeletedRowsScanTask(ChangelogScanTask):
    """Rows of a data file that stays in the table, deleted by delete files the commit
    added: the rows ``added_deletes`` delete among those ``existing_deletes`` (live before the
    commit) do not (Java's ``DeletedRowsScanTask``)."""

    added_deletes: tuple[DeleteFile, ...]
    existing_deletes: tuple[DeleteFile, ...]

    @property
    def operation(self) -> ChangelogOperation:
        return ChangelogOperation.DELETE

    @property
    def referenced_delete_files(self) -> tuple[DeleteFile, ...]:
        return self.added_deletes + self.existing_deletes
