"""Avro manifests and manifest lists for format versions 1, 2 and 3 (layer L4).

- ``ManifestWriter`` / ``write_manifest``: write a manifest, get its ``ManifestFile`` row.
- ``ManifestListWriter`` / ``write_manifest_list``: write a snapshot's manifest list,
  assigning sequence numbers and (v3) first row ids.
- ``read_manifest_list``, ``read_manifest``, ``read_manifest_header``: read them back, by
  field id, with inheritance applied.
- ``snapshot_manifest_columns``: a snapshot's manifest list as columns, for planning
  (``list_reader.ManifestListColumns``: a ``ManifestFile`` built only for the rows asked for).

Importing this package lets ``Snapshot.all_manifests(io)``, ``Snapshot.added_data_files(io)``
and the other snapshot methods read files (``spec.snapshots.register_manifest_reader``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from icefloe.io import FileIO
from icefloe.manifests.list_reader import (
    ListSummaries,
    ManifestListColumns,
    SummaryField,
    read_manifest_list_columns,
)
from icefloe.manifests.manifest_list import ManifestListWriter, read_manifest_list, write_manifest_list
from icefloe.manifests.reader import ManifestHeader, read_manifest, read_manifest_header
from icefloe.manifests.writer import DEFAULT_BLOCK_SIZE, UNASSIGNED_SEQ, ManifestWriter, write_manifest
from icefloe.spec.manifest import ManifestEntry, ManifestFile
from icefloe.spec.snapshots import Snapshot, register_manifest_reader

__all__ = [
    "DEFAULT_BLOCK_SIZE",
    "UNASSIGNED_SEQ",
    "ListSummaries",
    "ManifestHeader",
    "ManifestListColumns",
    "ManifestListWriter",
    "ManifestWriter",
    "SummaryField",
    "inline_manifest_files",
    "read_manifest",
    "read_manifest_header",
    "read_manifest_list",
    "read_manifest_list_columns",
    "snapshot_manifest_columns",
    "write_manifest",
    "write_manifest_list",
]


def inline_manifest_files(io: FileIO, snapshot: Snapshot) -> list[ManifestFile]:
    """Manifest list rows for an old v1 snapshot that lists its manifests inline.

    As Java does, each manifest counts as added by the snapshot at sequence number 0, with
    unknown file counts; its spec id comes from the manifest's header (0 when absent).
    """
    result = []
    for location in snapshot.manifests or ():
        header = read_manifest_header(io, location)
        result.append(
            ManifestFile(
                manifest_path=location,
                manifest_length=io.new_input(location).length(),
                partition_spec_id=header.partition_spec_id or 0,
                added_snapshot_id=snapshot.snapshot_id,
            )
        )
    return result


def snapshot_manifest_columns(io: FileIO, snapshot: Snapshot) -> ManifestListColumns:
    """``snapshot.all_manifests(io)`` as columns (``read_manifest_list_columns``)."""
    if not snapshot.manifest_list:  # none, or a v1 snapshot's inline manifests
        return ManifestListColumns.of(snapshot.all_manifests(io))
    return read_manifest_list_columns(io, snapshot.manifest_list, key_id=snapshot.key_id)


class _SnapshotManifestReader:
    """What ``Snapshot`` calls to read its files (``spec.snapshots.ManifestReader``)."""

    def read_manifest_list(self, io: Any, location: str, snapshot: Snapshot) -> list[ManifestFile]:
        if not location and snapshot.manifests is not None:
            return inline_manifest_files(io, snapshot)
        return read_manifest_list(io, location, key_id=snapshot.key_id)

    def read_entries(self, io: Any, manifest: ManifestFile) -> Iterator[ManifestEntry]:
        return read_manifest(io, manifest)


register_manifest_reader(_SnapshotManifestReader())
