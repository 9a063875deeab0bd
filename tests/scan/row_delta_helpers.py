"""Committing data and delete files by hand, as a row delta would (icefloe's ``new_row_delta()``
is being built beside these tests): a data manifest, one delete manifest per partition spec, a
manifest list over them and the parent's manifests, and the snapshot, through the catalog's
backend (so every catalog kind works, Java's Hadoop layout included).
"""

from __future__ import annotations

from collections.abc import Sequence

from icefloe import Catalog, Table
from icefloe.manifests import ManifestWriter, write_manifest_list
from icefloe.spec.manifest import DataFile, DeleteFile, ManifestContent, ManifestFile
from icefloe.spec.snapshots import Snapshot, new_snapshot_id
from icefloe.spec.updates import AddSnapshot, AssertRefSnapshotId, SetSnapshotRef

__all__ = ["commit_row_delta"]


def commit_row_delta(
    catalog: Catalog,
    table: Table,
    *,
    data: Sequence[DataFile] = (),
    deletes: Sequence[DeleteFile] = (),
    operation: str = "overwrite",
) -> Snapshot:
    """Commit one snapshot on main adding ``data`` and ``deletes``; refreshes ``table``."""
    metadata = table.metadata
    parent = table.current_snapshot()
    snapshot_id = new_snapshot_id()
    sequence_number = metadata.last_sequence_number + 1
    io = table.io()
    specs = metadata.specs_by_id()
    manifests: list[ManifestFile] = []
    groups: list[tuple[ManifestContent, int, list[DataFile] | list[DeleteFile]]] = []
    for spec_id in sorted({f.spec_id for f in data}):
        groups.append((ManifestContent.DATA, spec_id, [f for f in data if f.spec_id == spec_id]))
    for spec_id in sorted({f.spec_id for f in deletes}):
        groups.append((ManifestContent.DELETES, spec_id, [f for f in deletes if f.spec_id == spec_id]))
    for number, (content, spec_id, files) in enumerate(groups):
        path = f"{table.location()}/metadata/row-delta-{snapshot_id}-m{number}.avro"
        with ManifestWriter(
            io,
            path,
            spec=specs[spec_id],
            schema=table.schema(),
            format_version=metadata.format_version,
            snapshot_id=snapshot_id,
            content=content,
        ) as writer:
            for file in files:
                writer.add(file)
        manifests.append(writer.to_manifest_file())
    if parent is not None:
        manifests.extend(parent.all_manifests(io))
    list_path = f"{table.location()}/metadata/snap-{snapshot_id}-1-row-delta.avro"
    next_row_id = write_manifest_list(
        io,
        list_path,
        format_version=metadata.format_version,
        snapshot_id=snapshot_id,
        parent_snapshot_id=parent.snapshot_id if parent else None,
        sequence_number=sequence_number,
        manifests=manifests,
        first_row_id=metadata.next_row_id,
    )
    added_rows = None
    if next_row_id is not None and metadata.next_row_id is not None:
        added_rows = next_row_id - metadata.next_row_id
    snapshot = Snapshot(
        snapshot_id=snapshot_id,
        timestamp_ms=(parent.timestamp_ms + 1) if parent else metadata.last_updated_ms + 1,
        manifest_list=list_path,
        parent_snapshot_id=parent.snapshot_id if parent else None,
        sequence_number=sequence_number,
        summary={"operation": operation},
        schema_id=metadata.current_schema_id,
        first_row_id=metadata.next_row_id,
        added_rows=added_rows,
    )
    requirements = [AssertRefSnapshotId("main", parent.snapshot_id if parent else None)]
    catalog.backend.commit_table(
        table.identifier_tuple,
        None,
        requirements,
        [AddSnapshot(snapshot), SetSnapshotRef("main", snapshot_id)],
    )
    table.refresh()
    return snapshot
