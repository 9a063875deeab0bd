"""The ``manifests`` and ``all_manifests`` metadata tables (Java's ``ManifestsTable`` and
``AllManifestsTable``): one row per manifest list row, partition summaries in human form."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from icefloe.arrow.schema import schema_to_arrow
from icefloe.io import FileIO
from icefloe.scan import manifest_list
from icefloe.spec.conversions import from_bytes
from icefloe.spec.manifest import FieldSummary, ManifestContent, ManifestFile
from icefloe.spec.partitioning import PartitionField, PartitionSpec
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.types import IcebergType
from icefloe.table.inspect.schemas import ALL_MANIFESTS_SCHEMA, MANIFESTS_SCHEMA, source_types

__all__ = ["all_manifests", "manifests"]


def manifests(metadata: TableMetadata, io: FileIO, snapshot: Snapshot | None) -> pa.Table:
    """The manifests of ``snapshot`` (none without a snapshot)."""
    rows = [] if snapshot is None else [_row(metadata, m) for m in manifest_list(io, snapshot)]
    return pa.Table.from_pylist(rows, schema=schema_to_arrow(MANIFESTS_SCHEMA))


def all_manifests(metadata: TableMetadata, io: FileIO) -> pa.Table:
    """The manifests of every snapshot the metadata keeps, a row per snapshot that lists one
    (``reference_snapshot_id``), so a manifest kept by ten snapshots has ten rows."""
    rows = []
    for snapshot in metadata.snapshots:
        for manifest in manifest_list(io, snapshot):
            row = _row(metadata, manifest)
            row["reference_snapshot_id"] = snapshot.snapshot_id
            rows.append(row)
    return pa.Table.from_pylist(rows, schema=schema_to_arrow(ALL_MANIFESTS_SCHEMA))


def _row(metadata: TableMetadata, manifest: ManifestFile) -> dict[str, Any]:
    data = manifest.content == ManifestContent.DATA
    spec = metadata.specs_by_id().get(manifest.partition_spec_id)

    def count(value: int | None, of_data: bool) -> int | None:
        return value if data == of_data else 0

    return {
        "content": int(manifest.content),
        "path": manifest.manifest_path,
        "length": manifest.manifest_length,
        "partition_spec_id": manifest.partition_spec_id,
        "added_snapshot_id": manifest.added_snapshot_id,
        "added_data_files_count": count(manifest.added_files_count, True),
        "existing_data_files_count": count(manifest.existing_files_count, True),
        "deleted_data_files_count": count(manifest.deleted_files_count, True),
        "added_delete_files_count": count(manifest.added_files_count, False),
        "existing_delete_files_count": count(manifest.existing_files_count, False),
        "deleted_delete_files_count": count(manifest.deleted_files_count, False),
        "partition_summaries": None
        if manifest.partitions is None or spec is None
        else _summaries(metadata, spec, manifest.partitions),
    }


def _summaries(
    metadata: TableMetadata, spec: PartitionSpec, summaries: tuple[FieldSummary, ...]
) -> list[dict[str, Any]]:
    """Each field's summary with its bounds as Java's ``Transform.toHumanString`` writes them
    (a missing bound is the text ``null``, as in Java)."""
    sources = source_types(metadata, spec)
    rows = []
    for pf, summary in zip(spec.fields, summaries):
        source = sources[pf.field_id]
        rows.append(
            {
                "contains_null": summary.contains_null,
                "contains_nan": summary.contains_nan,
                "lower_bound": _human(pf, source, summary.lower_bound),
                "upper_bound": _human(pf, source, summary.upper_bound),
            }
        )
    return rows


def _human(pf: PartitionField, source: IcebergType, bound: bytes | None) -> str:
    value = None if bound is None else from_bytes(pf.transform.result_type(source), bound)
    return pf.transform.to_human_string(source, value)
