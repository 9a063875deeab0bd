"""Scan tasks: what planning hands to readers."""

from __future__ import annotations

from dataclasses import dataclass

from icefloe.expressions import Expression
from icefloe.spec.manifest import DataFile, DeleteFile, FileFormat
from icefloe.spec.partitioning import PartitionSpec

__all__ = ["FileScanTask", "usable_split_offsets"]


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
