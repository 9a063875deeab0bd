"""Helpers for the planning tests: the straightforward reference planner, random tables
written straight to manifests, and a comparable form of a task.

``reference_plan`` is planning as icefloe first did it, one ``ManifestEntry`` at a time through
``read_manifest``, ``InclusiveMetricsEvaluator`` and the compiled partition projection: the
fast planner (columnar, vectorized, cached) must give exactly its tasks, in its order.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from icefloe.errors import UnsupportedFeatureError, ValidationError
from icefloe.expressions import (
    AlwaysTrue,
    Expression,
    InclusiveMetricsEvaluator,
    ManifestEvaluator,
    ResidualEvaluator,
    always_true,
    bind,
    inclusive_projection,
)
from icefloe.expressions.evaluator import compile_expression
from icefloe.io import FileIO
from icefloe.manifests import ManifestWriter, read_manifest, write_manifest_list
from icefloe.scan import DeleteFileIndex, FileScanTask
from icefloe.spec.builder import MetadataBuilder, new_table_metadata
from icefloe.spec.manifest import (
    ContentFile,
    DataFile,
    DeleteFile,
    FileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
)
from icefloe.spec.partitioning import PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.sorting import SortOrder
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.updates import AddPartitionSpec

__all__ = [
    "EntrySpec",
    "ManifestSpec",
    "data_file",
    "file_signature",
    "position_delete",
    "reference_plan",
    "task_signature",
    "write_snapshot",
]


# ---- the reference planner ------------------------------------------------------------------


def reference_plan(
    io: FileIO,
    metadata: TableMetadata,
    snapshot: Snapshot,
    row_filter: Expression | None = None,
    *,
    schema: Schema | None = None,
    case_sensitive: bool = True,
    manifest_filter: Callable[[ManifestFile], bool] | None = None,
    entry_filter: Callable[[ManifestEntry], bool] | None = None,
) -> list[FileScanTask]:
    schema = schema or metadata.schema()
    bound = bind(
        schema, row_filter if row_filter is not None else always_true(), case_sensitive=case_sensitive
    )
    metrics = (
        None if isinstance(bound, AlwaysTrue) else InclusiveMetricsEvaluator(schema, bound, case_sensitive)
    )
    specs = metadata.specs_by_id()

    def spec_filters(
        spec_id: int,
    ) -> tuple[Callable[[Any], bool], Callable[[Any], bool], Callable[[Any], Any]]:
        spec = specs[spec_id]
        if isinstance(bound, AlwaysTrue):
            return (lambda m: True), (lambda p: True), (lambda p: bound)
        try:
            spec.partition_type(schema)
        except ValidationError:
            return (lambda m: True), (lambda p: True), (lambda p: bound)
        projected = compile_expression(
            inclusive_projection(spec, schema, bound, case_sensitive=case_sensitive)
        )
        residuals = ResidualEvaluator(spec, schema, bound, case_sensitive)
        return (
            ManifestEvaluator(spec, schema, bound, case_sensitive).eval,
            lambda p: projected(p) is True,
            residuals.residual_for,
        )

    manifests = snapshot.all_manifests(io)
    for manifest in manifests:
        if manifest.partition_spec_id not in specs:
            raise ValidationError(f"manifest {manifest.manifest_path} uses an unknown spec")
    index = DeleteFileIndex(specs)
    for manifest in manifests:
        if manifest.content != ManifestContent.DELETES:
            continue
        for entry in read_manifest(io, manifest):
            if entry.is_live:
                file = entry.data_file
                if file.content == FileContent.EQUALITY_DELETES or file.file_format == FileFormat.PUFFIN:
                    raise UnsupportedFeatureError("unsupported deletes")
                index.add(file, entry.sequence_number or 0)  # type: ignore[arg-type]
    tasks = []
    for manifest in manifests:
        if manifest.content != ManifestContent.DATA:
            continue
        if manifest_filter is not None and not manifest_filter(manifest):
            continue
        manifest_ok, partition_ok, residual = spec_filters(manifest.partition_spec_id)
        if not manifest_ok(manifest):
            continue
        for entry in read_manifest(io, manifest):
            if not entry.is_live or (entry_filter is not None and not entry_filter(entry)):
                continue
            file = entry.data_file
            if not partition_ok(file.partition):
                continue
            if metrics is not None and not metrics.eval(file):
                continue
            seq = entry.sequence_number or 0
            tasks.append(
                FileScanTask(
                    file=file,  # type: ignore[arg-type]
                    deletes=index.for_data_file(file, seq),  # type: ignore[arg-type]
                    residual=residual(file.partition),
                    spec=specs[manifest.partition_spec_id],
                    start=0,
                    length=file.file_size_in_bytes,
                    data_sequence_number=seq,
                )
            )
    return tasks


def _plain(value: Any) -> Any:
    """A form of a value where NaN equals NaN and -0.0 differs from 0.0."""
    if isinstance(value, float):
        return ("float", repr(value))
    if isinstance(value, Mapping):  # dicts, and the lazily decoded metrics of planned files
        return ("dict", tuple((k, _plain(v)) for k, v in value.items()))
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_plain(v) for v in value))
    return (type(value).__name__, value)


def file_signature(file: ContentFile) -> tuple[Any, ...]:
    """Every field of a file (and its class), comparable."""
    return (type(file).__name__, *(_plain(getattr(file, f.name)) for f in dataclasses.fields(file)))


def task_signature(task: FileScanTask) -> tuple[Any, ...]:
    return (
        file_signature(task.file),
        tuple(file_signature(d) for d in task.deletes),
        str(task.residual),
        task.spec.spec_id,
        task.start,
        task.length,
        task.data_sequence_number,
    )


# ---- tables written straight to manifests ------------------------------------------------------


@dataclass(frozen=True)
class EntrySpec:
    """One manifest entry to write: ``status`` with the snapshot and sequence numbers it keeps
    (None for an ADDED entry that inherits them)."""

    file: ContentFile
    status: ManifestEntryStatus = ManifestEntryStatus.ADDED
    snapshot_id: int | None = None
    data_sequence_number: int | None = None
    file_sequence_number: int | None = None


@dataclass(frozen=True)
class ManifestSpec:
    entries: tuple[EntrySpec, ...]
    content: ManifestContent = ManifestContent.DATA
    codec: str = "gzip"
    spec_id: int | None = None  # None: the table's default spec


def write_snapshot(
    folder: Path,
    io: FileIO,
    schema: Schema,
    spec: PartitionSpec,
    manifests: list[ManifestSpec],
    *,
    format_version: int,
    other_specs: tuple[PartitionSpec, ...] = (),
) -> tuple[TableMetadata, Snapshot]:
    """Metadata of a table with ``schema`` and ``spec`` (and ``other_specs``, added after it)
    and a snapshot listing ``manifests`` (manifest ``i`` is added by its own snapshot id, at
    sequence number ``i + 1``; the entries of an EXISTING or DELETED entry keep what they say)."""
    location = str(folder)
    metadata = new_table_metadata(
        schema, spec, SortOrder(), location, {"format-version": str(format_version)}
    )
    if other_specs:
        metadata = (
            MetadataBuilder(metadata).apply_all([AddPartitionSpec(other) for other in other_specs]).build()
        )
    schema = metadata.schema()
    rows = []
    for i, manifest in enumerate(manifests):
        spec = metadata.specs_by_id()[
            metadata.default_spec_id if manifest.spec_id is None else manifest.spec_id
        ]
        snapshot_id = 1000 + i
        path = f"{location}/metadata/{uuid.uuid4()}-m{i}.avro"
        writer = ManifestWriter(
            io,
            path,
            spec=spec,
            schema=schema,
            format_version=format_version,
            snapshot_id=snapshot_id,
            content=manifest.content,
            codec=manifest.codec,
        )
        for e in manifest.entries:
            file = dataclasses.replace(e.file, spec_id=spec.spec_id)
            if e.status == ManifestEntryStatus.ADDED:
                writer.add(file, e.data_sequence_number)
            elif e.status == ManifestEntryStatus.EXISTING:
                writer.existing(file, e.snapshot_id or 1, e.data_sequence_number, e.file_sequence_number)
            else:
                writer.delete(file, e.snapshot_id or 1, e.data_sequence_number, e.file_sequence_number)
        row = writer.close()
        seq = i + 1 if format_version >= 2 else 0
        min_seq = row.min_sequence_number if row.min_sequence_number >= 0 else seq
        rows.append(dataclasses.replace(row, sequence_number=seq, min_sequence_number=min(min_seq, seq)))
    snapshot_id = 9_999
    list_path = f"{location}/metadata/snap-{snapshot_id}-{uuid.uuid4()}.avro"
    sequence_number = len(manifests) + 1 if format_version >= 2 else 0
    write_manifest_list(
        io, list_path, format_version, snapshot_id, None, sequence_number, rows, first_row_id=0
    )
    snapshot = Snapshot(
        snapshot_id=snapshot_id,
        timestamp_ms=metadata.last_updated_ms + 1,
        manifest_list=list_path,
        sequence_number=sequence_number,
        summary={"operation": "append"},
        schema_id=schema.schema_id,
    )
    return metadata, snapshot


def data_file(path: str, partition: tuple[Any, ...], records: int = 10, **metrics: Any) -> DataFile:
    return DataFile(path, FileFormat.PARQUET, records, 1000 + records, partition, **metrics)


def position_delete(path: str, partition: tuple[Any, ...], **fields: Any) -> DeleteFile:
    return DeleteFile(
        path, FileFormat.PARQUET, 3, 300, partition, content=FileContent.POSITION_DELETES, **fields
    )
