"""Snapshots, snapshot references and the logs of table history (spec: "Snapshots").

``Snapshot``'s seed methods (``all_manifests(io)``, ``added_data_files(io)``, ...) read Avro
files. The reader lives in a higher layer (``icefloe.manifests``), which registers itself here
with ``register_manifest_reader`` when it is imported: the spec model stays free of file I/O
while a Snapshot still answers the questions the Java API lets it answer. The ``icefloe``
package names, with ``load_manifest_reader_with``, how to import it on first use, so a program
that never reads a manifest never imports the reader (fastavro, pyarrow).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

from icefloe._util.times import format_epoch_ms
from icefloe.errors import UnsupportedFeatureError, ValidationError

if TYPE_CHECKING:
    from icefloe.spec.manifest import DataFile, DeleteFile, ManifestEntry, ManifestFile

__all__ = [
    "MAIN_BRANCH",
    "HistoryEntry",
    "ManifestReader",
    "MetadataLogEntry",
    "Operation",
    "Snapshot",
    "SnapshotRef",
    "SnapshotRefType",
    "load_manifest_reader_with",
    "new_snapshot_id",
    "register_manifest_reader",
]

MAIN_BRANCH = "main"


class Operation(StrEnum):
    """The snapshot ``operation`` of the summary."""

    APPEND = "append"
    REPLACE = "replace"
    OVERWRITE = "overwrite"
    DELETE = "delete"


class ManifestReader(Protocol):
    """What Snapshot needs from the manifest layer."""

    def read_manifest_list(self, io: Any, location: str, snapshot: Snapshot) -> list[ManifestFile]: ...

    def read_entries(self, io: Any, manifest: ManifestFile) -> Iterator[ManifestEntry]: ...


_manifest_reader: ManifestReader | None = None
_load_manifest_reader: Callable[[], object] | None = None


def register_manifest_reader(reader: ManifestReader) -> None:
    """Called by ``icefloe.manifests`` on import; see the module docstring."""
    global _manifest_reader
    _manifest_reader = reader


def load_manifest_reader_with(load: Callable[[], object]) -> None:
    """Called by ``icefloe`` on import: ``load()`` imports the module that registers the reader."""
    global _load_manifest_reader
    _load_manifest_reader = load


def _reader() -> ManifestReader:
    if _manifest_reader is None and _load_manifest_reader is not None:
        _load_manifest_reader()
    if _manifest_reader is None:
        raise UnsupportedFeatureError("import icefloe.manifests to read manifests")
    return _manifest_reader


def new_snapshot_id() -> int:
    """A random positive 63-bit id, generated as Java does (xor of a random UUID's halves)."""
    value = uuid.uuid4().int
    return ((value >> 64) ^ (value & 0xFFFFFFFFFFFFFFFF)) & 0x7FFFFFFFFFFFFFFF


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One state of the table. ``summary`` holds the summary strings, ``operation`` included.

    ``manifests`` is set only for old v1 snapshots that list manifests inline instead of
    pointing to a manifest list.
    """

    snapshot_id: int
    timestamp_ms: int
    manifest_list: str | None = None
    parent_snapshot_id: int | None = None
    sequence_number: int = 0
    summary: Mapping[str, str] = field(default_factory=dict)
    schema_id: int | None = None
    first_row_id: int | None = None
    added_rows: int | None = None
    key_id: str | None = None
    manifests: tuple[str, ...] | None = None

    def __hash__(self) -> int:
        return hash(self.snapshot_id)

    def __repr__(self) -> str:
        # What a person asks of a snapshot, times in UTC; the summary's counts without its
        # operation (shown on its own).
        summary = {k: v for k, v in self.summary.items() if k != "operation"}
        parts = [
            f"snapshot_id={self.snapshot_id}",
            f"parent_snapshot_id={self.parent_snapshot_id}",
            f"sequence_number={self.sequence_number}",
            f"committed_at={format_epoch_ms(self.timestamp_ms)}",
            f"operation={self.operation!r}",
            f"summary={summary!r}",
        ]
        if self.schema_id is not None:
            parts.append(f"schema_id={self.schema_id}")
        if self.first_row_id is not None:
            parts.append(f"first_row_id={self.first_row_id}, added_rows={self.added_rows}")
        parts.append(f"manifest_list={self.manifest_list!r}")
        return f"Snapshot({', '.join(parts)})"

    @property
    def operation(self) -> str | None:
        return self.summary.get("operation")

    # ---- the seed's methods: they read the manifest list and manifests through ``io`` --------

    def all_manifests(self, io: Any) -> list[ManifestFile]:
        """Every manifest of this snapshot, data and delete, in manifest-list order."""
        if self.manifest_list is None and self.manifests is not None:
            return _reader().read_manifest_list(io, "", self)
        if self.manifest_list is None:
            return []
        return _reader().read_manifest_list(io, self.manifest_list, self)

    def data_manifests(self, io: Any) -> list[ManifestFile]:
        return [m for m in self.all_manifests(io) if m.content == 0]

    def delete_manifests(self, io: Any) -> list[ManifestFile]:
        return [m for m in self.all_manifests(io) if m.content == 1]

    def _changed_files(self, io: Any, manifests: list[ManifestFile], status: int) -> list[Any]:
        reader = _reader()
        result = []
        for manifest in manifests:
            if manifest.added_snapshot_id != self.snapshot_id:
                continue  # only manifests written by this snapshot can hold its changes
            for entry in reader.read_entries(io, manifest):
                if entry.status == status and entry.snapshot_id == self.snapshot_id:
                    result.append(entry.data_file)
        return result

    def added_data_files(self, io: Any) -> list[DataFile]:
        """Data files this snapshot added."""
        return self._changed_files(io, self.data_manifests(io), 1)

    def removed_data_files(self, io: Any) -> list[DataFile]:
        """Data files this snapshot removed."""
        return self._changed_files(io, self.data_manifests(io), 2)

    def added_delete_files(self, io: Any) -> list[DeleteFile]:
        return self._changed_files(io, self.delete_manifests(io), 1)

    def removed_delete_files(self, io: Any) -> list[DeleteFile]:
        return self._changed_files(io, self.delete_manifests(io), 2)


class SnapshotRefType(StrEnum):
    BRANCH = "branch"
    TAG = "tag"


@dataclass(frozen=True, slots=True)
class SnapshotRef:
    """A named reference (branch or tag) to a snapshot, with its retention settings."""

    snapshot_id: int
    type: SnapshotRefType = SnapshotRefType.BRANCH
    min_snapshots_to_keep: int | None = None
    max_snapshot_age_ms: int | None = None
    max_ref_age_ms: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "type", SnapshotRefType(self.type))
        if self.type == SnapshotRefType.TAG and (
            self.min_snapshots_to_keep is not None or self.max_snapshot_age_ms is not None
        ):
            raise ValidationError("tags cannot have min-snapshots-to-keep or max-snapshot-age-ms")
        for name in ("min_snapshots_to_keep", "max_snapshot_age_ms", "max_ref_age_ms"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValidationError(f"snapshot ref {name.replace('_', '-')} must be positive, not {value}")

    @property
    def is_branch(self) -> bool:
        return self.type == SnapshotRefType.BRANCH

    @property
    def is_tag(self) -> bool:
        return self.type == SnapshotRefType.TAG


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """At ``timestamp_ms`` the table's current snapshot became ``snapshot_id`` (snapshot-log)."""

    timestamp_ms: int
    snapshot_id: int

    def __repr__(self) -> str:
        return f"HistoryEntry(made_current_at={format_epoch_ms(self.timestamp_ms)}, snapshot_id={self.snapshot_id})"


@dataclass(frozen=True, slots=True)
class MetadataLogEntry:
    """An earlier metadata file of the table (metadata-log)."""

    timestamp_ms: int
    metadata_file: str
