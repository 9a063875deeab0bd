"""Table statistics files (Puffin) and partition statistics files (spec: "Table Statistics")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["BlobMetadata", "PartitionStatisticsFile", "StatisticsFile"]


@dataclass(frozen=True, slots=True)
class BlobMetadata:
    """One blob of a Puffin statistics file, as listed in table metadata."""

    type: str
    snapshot_id: int
    sequence_number: int
    fields: tuple[int, ...]
    properties: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class StatisticsFile:
    snapshot_id: int
    statistics_path: str
    file_size_in_bytes: int
    file_footer_size_in_bytes: int
    blob_metadata: tuple[BlobMetadata, ...] = ()
    key_metadata: str | None = None

    @property
    def path(self) -> str:
        return self.statistics_path


@dataclass(frozen=True, slots=True)
class PartitionStatisticsFile:
    snapshot_id: int
    statistics_path: str
    file_size_in_bytes: int

    @property
    def path(self) -> str:
        return self.statistics_path
