"""Snapshot summaries as Java writes them (``SnapshotSummary`` + ``SnapshotProducer.summary``).

Counts of what a snapshot added and removed (only the non-zero ones), the number of changed
partitions, optional per-partition summaries (``write.summary.partition-limit``), and the
``total-*`` figures carried forward from the parent snapshot's summary.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

from icefloe.spec.manifest import ContentFile, FileContent, FileFormat, ManifestContent, ManifestFile
from icefloe.spec.partitioning import PartitionSpec
from icefloe.spec.schema import Schema

__all__ = ["SummaryBuilder", "with_totals"]

_TOTALS = (
    ("total-records", "added-records", "deleted-records"),
    ("total-files-size", "added-files-size", "removed-files-size"),
    ("total-data-files", "added-data-files", "deleted-data-files"),
    ("total-delete-files", "added-delete-files", "removed-delete-files"),
    ("total-position-deletes", "added-position-deletes", "removed-position-deletes"),
    ("total-equality-deletes", "added-equality-deletes", "removed-equality-deletes"),
)


@dataclass
class _Metrics:
    added_size: int = 0
    removed_size: int = 0
    added_files: int = 0
    removed_files: int = 0
    added_eq_delete_files: int = 0
    removed_eq_delete_files: int = 0
    added_pos_delete_files: int = 0
    removed_pos_delete_files: int = 0
    added_dvs: int = 0
    removed_dvs: int = 0
    added_delete_files: int = 0
    removed_delete_files: int = 0
    added_records: int = 0
    deleted_records: int = 0
    added_pos_deletes: int = 0
    removed_pos_deletes: int = 0
    added_eq_deletes: int = 0
    removed_eq_deletes: int = 0
    trust_sizes: bool = True

    def file(self, file: ContentFile, sign: str) -> None:
        """Count an added (``sign='added'``) or removed file."""
        added = sign == "added"
        # A deletion vector is a blob of a Puffin file shared with others: it counts its own
        # bytes, and as a DV rather than a position delete file (Java's SnapshotSummary).
        is_dv = file.file_format == FileFormat.PUFFIN
        size = (file.content_size_in_bytes or 0) if is_dv else file.file_size_in_bytes
        if added:
            self.added_size += size
        else:
            self.removed_size += size
        if file.content == FileContent.DATA:
            if added:
                self.added_files += 1
                self.added_records += file.record_count
            else:
                self.removed_files += 1
                self.deleted_records += file.record_count
        elif file.content == FileContent.POSITION_DELETES:
            if added:
                self.added_delete_files += 1
                if is_dv:
                    self.added_dvs += 1
                else:
                    self.added_pos_delete_files += 1
                self.added_pos_deletes += file.record_count
            else:
                self.removed_delete_files += 1
                if is_dv:
                    self.removed_dvs += 1
                else:
                    self.removed_pos_delete_files += 1
                self.removed_pos_deletes += file.record_count
        elif added:
            self.added_delete_files += 1
            self.added_eq_delete_files += 1
            self.added_eq_deletes += file.record_count
        else:
            self.removed_delete_files += 1
            self.removed_eq_delete_files += 1
            self.removed_eq_deletes += file.record_count

    def manifest(self, manifest: ManifestFile) -> None:
        if manifest.content == ManifestContent.DATA:
            self.added_files += manifest.added_files_count or 0
            self.added_records += manifest.added_rows_count or 0
            self.removed_files += manifest.deleted_files_count or 0
            self.deleted_records += manifest.deleted_rows_count or 0
        else:
            self.added_delete_files += manifest.added_files_count or 0
            self.removed_delete_files += manifest.deleted_files_count or 0
            self.trust_sizes = False

    def merge(self, other: _Metrics) -> None:
        for f in fields(self):
            if f.name == "trust_sizes":
                self.trust_sizes = self.trust_sizes and other.trust_sizes
            else:
                setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def items(self) -> list[tuple[str, int]]:
        """The non-zero counts, in Java's order and with Java's names."""
        pairs = [
            ("added-data-files", self.added_files),
            ("deleted-data-files", self.removed_files),
            ("added-equality-delete-files", self.added_eq_delete_files),
            ("removed-equality-delete-files", self.removed_eq_delete_files),
            ("added-position-delete-files", self.added_pos_delete_files),
            ("removed-position-delete-files", self.removed_pos_delete_files),
            ("added-dvs", self.added_dvs),
            ("removed-dvs", self.removed_dvs),
            ("added-delete-files", self.added_delete_files),
            ("removed-delete-files", self.removed_delete_files),
            ("added-records", self.added_records),
            ("deleted-records", self.deleted_records),
        ]
        if self.trust_sizes:
            pairs += [
                ("added-files-size", self.added_size),
                ("removed-files-size", self.removed_size),
                ("added-position-deletes", self.added_pos_deletes),
                ("removed-position-deletes", self.removed_pos_deletes),
                ("added-equality-deletes", self.added_eq_deletes),
                ("removed-equality-deletes", self.removed_eq_deletes),
            ]
        return [(k, v) for k, v in pairs if v > 0]


class SummaryBuilder:
    """Accumulates the changes of one snapshot into Java's summary properties."""

    def __init__(self, *, partition_summary_limit: int = 0):
        self._properties: dict[str, str] = {}
        self._metrics = _Metrics()
        self._partitions: dict[str, _Metrics] = {}
        self._trust_partitions = True
        self._limit = partition_summary_limit
        self._duplicate_deletes = 0

    def set(self, key: str, value: str) -> None:
        self._properties[key] = value

    def added_file(self, spec: PartitionSpec, schema: Schema, file: ContentFile) -> None:
        self._metrics.file(file, "added")
        self._partition(spec, schema, file).file(file, "added")

    def deleted_file(self, spec: PartitionSpec, schema: Schema, file: ContentFile) -> None:
        self._metrics.file(file, "removed")
        self._partition(spec, schema, file).file(file, "removed")

    def added_manifest(self, manifest: ManifestFile) -> None:
        # Manifests added whole carry no per-file detail: partition counts become unknown.
        self._trust_partitions = False
        self._partitions.clear()
        self._metrics.manifest(manifest)

    def increment_duplicate_deletes(self, count: int = 1) -> None:
        self._duplicate_deletes += count

    def _partition(self, spec: PartitionSpec, schema: Schema, file: ContentFile) -> _Metrics:
        if not self._trust_partitions:
            return _Metrics()  # discarded
        key = spec.partition_to_path(file.partition, schema) if spec.fields else ""
        return self._partitions.setdefault(key, _Metrics())

    def build(self) -> dict[str, str]:
        result = dict(self._properties)
        result.update((k, str(v)) for k, v in self._metrics.items())
        if self._duplicate_deletes:
            result["deleted-duplicate-files"] = str(self._duplicate_deletes)
        if self._trust_partitions:
            result["changed-partition-count"] = str(len(self._partitions))
            if len(self._partitions) <= self._limit:
                if self._partitions:
                    result["partition-summaries-included"] = "true"
                for key, metrics in self._partitions.items():
                    if key:
                        result[f"partitions.{key}"] = ",".join(f"{k}={v}" for k, v in metrics.items())
        return result


def with_totals(summary: Mapping[str, str], previous: Mapping[str, str] | None) -> dict[str, str]:
    """The summary plus ``total-*`` figures carried from the parent's summary.

    A table's first snapshot starts the totals at zero; a parent without a total (or with one
    that is not a number) leaves that total out, as Java does.
    """
    if previous is None:
        previous = {total: "0" for total, _, _ in _TOTALS}
    result = dict(summary)
    for total, added, removed in _TOTALS:
        text = previous.get(total)
        if text is None:
            continue
        try:
            value = int(text)
            if value >= 0 and added in summary:
                value += int(summary[added])
            if value >= 0 and removed in summary:
                value -= int(summary[removed])
        except ValueError:
            continue
        if value >= 0:
            result[total] = str(value)
    return result
