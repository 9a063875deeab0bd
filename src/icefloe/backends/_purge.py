"""The files a table's metadata reaches, for ``drop_table(purge=True)``.

Like Java's ``CatalogUtil.dropTableData``: the manifest lists of every snapshot, every manifest
they list, every data and delete file those manifests name (in any status: a deleted entry's
file may still exist), statistics and partition statistics files, and the metadata files of
the metadata log plus the current one. Data and delete files are left alone when the table
sets ``gc.enabled=false`` (they may be shared with another table), as in Java. Unreadable manifest
lists or manifests do not stop the collection: they are reported in ``problems``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from icefloe.io import FileIO
from icefloe.spec.manifest import ManifestFile
from icefloe.spec.properties import GC_ENABLED
from icefloe.spec.table_metadata import TableMetadata

__all__ = ["ReachableFiles", "reachable_files"]


@dataclass(slots=True)
class ReachableFiles:
    """Locations reachable from one metadata file, grouped by kind, without duplicates."""

    content_files: list[str] = field(default_factory=list)
    manifests: list[str] = field(default_factory=list)
    manifest_lists: list[str] = field(default_factory=list)
    statistics: list[str] = field(default_factory=list)
    metadata_files: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _gc_enabled(metadata: TableMetadata) -> bool:
    value = metadata.properties.get(GC_ENABLED)
    return value is None or value.strip().lower() != "false"


def reachable_files(io: FileIO, metadata: TableMetadata, metadata_location: str) -> ReachableFiles:
    """Collect what purging a table deletes (see the module docstring).

    ``Snapshot.all_manifests`` reads manifest lists through ``icefloe.manifests``, which this
    function imports (the import registers the reader).
    """
    from icefloe.manifests import read_manifest  # lazy: fastavro and pyarrow, for purges only

    result = ReachableFiles()
    gc = _gc_enabled(metadata)
    manifests: dict[str, ManifestFile] = {}
    for snapshot in metadata.snapshots:
        if snapshot.manifest_list is not None:
            result.manifest_lists.append(snapshot.manifest_list)
        try:
            for manifest in snapshot.all_manifests(io):
                manifests.setdefault(manifest.manifest_path, manifest)
        except Exception as exc:
            result.problems.append(f"cannot read the manifest list of snapshot {snapshot.snapshot_id}: {exc}")
    if gc:
        content: dict[str, None] = {}
        for path, manifest in manifests.items():
            try:
                for entry in read_manifest(io, manifest):
                    content.setdefault(entry.data_file.file_path, None)
            except Exception as exc:
                result.problems.append(f"cannot read manifest {path}: {exc}")
        result.content_files = list(content)
    result.manifests = list(manifests)
    result.statistics = list(
        dict.fromkeys(
            [s.statistics_path for s in metadata.statistics]
            + [s.statistics_path for s in metadata.partition_statistics]
        )
    )
    result.metadata_files = list(
        dict.fromkeys([e.metadata_file for e in metadata.metadata_log] + [metadata_location])
    )
    result.manifest_lists = list(dict.fromkeys(result.manifest_lists))
    return result
