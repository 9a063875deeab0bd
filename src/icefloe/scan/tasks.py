"""Scan tasks: what planning hands to readers."""

from __future__ import annotations

from dataclasses import dataclass

from icefloe.expressions import Expression
from icefloe.spec.manifest import DataFile, DeleteFile
from icefloe.spec.partitioning import PartitionSpec

__all__ = ["FileScanTask"]


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
