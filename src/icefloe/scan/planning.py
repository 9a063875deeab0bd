"""Scan planning: from a snapshot and a row filter to FileScanTasks.

1. Manifests are pruned by their partition field summaries (ManifestEvaluator, per spec).
2. Live entries are pruned by the filter's inclusive projection onto their partition, then by
   their column metrics (InclusiveMetricsEvaluator).
3. Delete manifests feed a DeleteFileIndex; each data file gets the delete files that apply.
4. Each task carries its residual: the filter as far as the file's partition does not already
   decide it.

Partition pruning needs the spec's source columns in the scan's schema; a spec whose source
column was dropped is planned without partition pruning (correct, just slower).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
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
    referenced_field_ids,
)
from icefloe.expressions.evaluator import compile_expression
from icefloe.io import FileIO
from icefloe.manifests import read_manifest
from icefloe.scan.delete_index import DeleteFileIndex
from icefloe.scan.tasks import FileScanTask
from icefloe.spec.manifest import (
    DataFile,
    DeleteFile,
    FileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
)
from icefloe.spec.partitioning import PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata

__all__ = ["plan_files", "referenced_columns"]


@dataclass
class _SpecFilters:
    """The filter's forms for one partition spec, built once per scan."""

    manifest_might_match: Callable[[ManifestFile], bool]
    partition_might_match: Callable[[Any], bool]
    residuals: ResidualEvaluator | None
    row_filter: Expression

    def residual(self, partition: tuple[Any, ...]) -> Expression:
        return self.residuals.residual_for(partition) if self.residuals is not None else self.row_filter


def _spec_filters(
    spec: PartitionSpec, schema: Schema, row_filter: Expression, case_sensitive: bool
) -> _SpecFilters:
    bound = bind(schema, row_filter, case_sensitive=case_sensitive)
    if isinstance(bound, AlwaysTrue):
        return _SpecFilters(lambda _: True, lambda _: True, None, bound)
    try:
        spec.partition_type(schema)
    except ValidationError:
        # A source column of this spec is gone from the schema: no partition pruning.
        return _SpecFilters(lambda _: True, lambda _: True, None, bound)
    manifest_eval = ManifestEvaluator(spec, schema, bound, case_sensitive)
    projected = compile_expression(inclusive_projection(spec, schema, bound, case_sensitive=case_sensitive))
    residuals = ResidualEvaluator(spec, schema, bound, case_sensitive)
    # The compiled predicate is three-valued (None: unknown); only True may match.
    return _SpecFilters(manifest_eval.eval, lambda partition: projected(partition) is True, residuals, bound)


def plan_files(
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
    """Plan a scan of ``snapshot``: one task per data file that may hold matching rows.

    Args:
        io: reads the manifest list and manifests.
        metadata: the table metadata (for partition specs).
        snapshot: the snapshot to scan.
        row_filter: the filter (unbound or bound), default all rows.
        schema: the schema the filter binds to (default: the table's current schema).
        case_sensitive: how the filter's column names match.
        manifest_filter: keep only data manifests it accepts (e.g. an incremental scan keeps
            the manifests its snapshots added); delete manifests are not filtered.
        entry_filter: keep only live data-file entries it accepts (e.g. ADDED by a snapshot
            of an incremental range).

    Raises:
        InvalidFilterError: naming the column or literal the filter gets wrong.
        UnsupportedFeatureError: for delete kinds this version of icefloe cannot apply yet.
    """
    schema = schema or metadata.schema()
    row_filter = row_filter if row_filter is not None else always_true()
    bound = bind(schema, row_filter, case_sensitive=case_sensitive)
    metrics = (
        None if isinstance(bound, AlwaysTrue) else InclusiveMetricsEvaluator(schema, bound, case_sensitive)
    )
    specs = metadata.specs_by_id()
    filters: dict[int, _SpecFilters] = {}

    def filters_for(spec_id: int) -> _SpecFilters:
        found = filters.get(spec_id)
        if found is None:
            found = filters[spec_id] = _spec_filters(specs[spec_id], schema, bound, case_sensitive)
        return found

    manifests = snapshot.all_manifests(io)
    for manifest in manifests:
        if manifest.partition_spec_id not in specs:
            raise ValidationError(
                f"manifest {manifest.manifest_path} uses partition spec {manifest.partition_spec_id}, "
                "which the table metadata does not define"
            )
    data_manifests = [
        m
        for m in manifests
        if m.content == ManifestContent.DATA
        and (manifest_filter is None or manifest_filter(m))
        and filters_for(m.partition_spec_id).manifest_might_match(m)
    ]
    delete_index = _delete_index(io, specs, [m for m in manifests if m.content == ManifestContent.DELETES])

    tasks: list[FileScanTask] = []
    for manifest in data_manifests:
        spec_filters = filters_for(manifest.partition_spec_id)
        spec = specs[manifest.partition_spec_id]
        for file, sequence_number in _live_files(io, manifest, entry_filter):
            if not spec_filters.partition_might_match(file.partition):
                continue
            if metrics is not None and not metrics.eval(file):
                continue
            tasks.append(
                FileScanTask(
                    file=file,  # type: ignore[arg-type]
                    deletes=delete_index.for_data_file(file, sequence_number),  # type: ignore[arg-type]
                    residual=spec_filters.residual(file.partition),
                    spec=spec,
                    start=0,
                    length=file.file_size_in_bytes,
                    data_sequence_number=sequence_number,
                )
            )
    return tasks


def _live_files(
    io: FileIO, manifest: ManifestFile, entry_filter: Callable[[ManifestEntry], bool] | None = None
) -> Iterator[tuple[DataFile | DeleteFile, int]]:
    for entry in read_manifest(io, manifest):
        if entry.is_live and (entry_filter is None or entry_filter(entry)):
            yield entry.data_file, entry.sequence_number or 0  # type: ignore[misc]


def _delete_index(
    io: FileIO, specs: dict[int, PartitionSpec], manifests: list[ManifestFile]
) -> DeleteFileIndex:
    index = DeleteFileIndex(specs)
    for manifest in manifests:
        for file, sequence_number in _live_files(io, manifest):
            if file.content == FileContent.EQUALITY_DELETES:
                raise UnsupportedFeatureError(
                    f"the table has equality delete files ({file.file_path}); applying them comes with "
                    "icefloe's row-level delete support. Reading without them would return deleted rows."
                )
            if file.file_format == FileFormat.PUFFIN:
                raise UnsupportedFeatureError(
                    f"the table has deletion vectors ({file.file_path}); applying them comes with icefloe's "
                    "row-level delete support. Reading without them would return deleted rows."
                )
            index.add(file, sequence_number)  # type: ignore[arg-type]
    return index


def referenced_columns(row_filter: Expression, schema: Schema, *, case_sensitive: bool = True) -> list[str]:
    """Full names of the columns ``row_filter`` reads, in schema order."""
    bound = bind(schema, row_filter, case_sensitive=case_sensitive)
    ids = referenced_field_ids(bound)
    names = schema.id_to_name()
    return [names[i] for i in sorted(ids) if i in names]
