"""Incremental changelog planning and reading: the rows each snapshot of a range inserted and
deleted (Java's ``BaseIncrementalChangelogScan``, with row-level deletes supported).

The range is the end snapshot's ancestry back to (not including) the start, as for incremental
append scans; ``replace`` snapshots (compactions, manifest rewrites) change no rows and are
skipped. The other snapshots get change ordinals 0, 1, ... oldest first. A row is a position in
a data file; a snapshot's changes are the rows live after it and not before (INSERT) and the
rows live before it and not after (DELETE):

- a data file the snapshot added: its rows, minus the rows the delete files live in the
  snapshot delete (a row added and deleted by the same commit is no change):
  :class:`AddedRowsScanTask`;
- a data file the snapshot removed: its rows minus those the delete files live in the parent
  delete (rows already deleted are not deleted again): :class:`DeletedDataFileScanTask`;
- a data file that stays, to which delete files the snapshot added apply (position deletes,
  deletion vectors, equality deletes): the rows they delete among those the parent's delete
  files leave: :class:`DeletedRowsScanTask`.

Both states come from the snapshot's own manifests, never from its parent's manifest list: the
entries a snapshot ADDED (``snapshot_id`` = the snapshot) are what it added, the entries it
marks DELETED are what it removed, and the parent's live files are the snapshot's live files
it did not add plus those it removed. So a range may start after an expired snapshot. (Java
1.9 throws for snapshots with delete files; newer Java approximates the parent's deletes by
accumulating the delete files added since the start of the range.)

Not reported: rows a snapshot un-deletes by removing a delete file while keeping the data file
(no engine writes that outside ``replace`` snapshots, which are skipped; a deletion vector
replaced by a larger one is handled).

Reading (:func:`read_changelog`) appends ``_change_type`` (``INSERT`` / ``DELETE``),
``_change_ordinal`` and ``_commit_snapshot_id`` to each task's rows, in task order.
:func:`remove_carryovers` and :func:`compute_updates` post-process the rows of one commit as
Spark's ``create_changelog_view`` does.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from icefloe.arrow.equality import key_column
from icefloe.arrow.reader import ROW_POSITION_ID
from icefloe.arrow.schema import schema_to_arrow
from icefloe.errors import ValidationError
from icefloe.expressions import AlwaysTrue, Expression, always_true, bind
from icefloe.io import FileIO
from icefloe.manifests.reader import gc_paused
from icefloe.scan._changelog_updates import compute_updates, remove_carryovers
from icefloe.scan._columnar import DecodedManifest
from icefloe.scan._deletes import index_path, with_fields
from icefloe.scan._manifest_cache import cache_for, new_plan_token
from icefloe.scan._metrics_filter import MetricsFilter
from icefloe.scan.delete_index import DeleteFileIndex
from icefloe.scan.planning import _Loader, _spec_filters, _SpecFilters, manifests_keep
from icefloe.scan.reading import PositionDeletes, read_batches
from icefloe.scan.tasks import (
    AddedRowsScanTask,
    ChangelogScanTask,
    DeletedDataFileScanTask,
    DeletedRowsScanTask,
)
from icefloe.spec.manifest import DataFile, DeleteFile, ManifestContent, ManifestEntryStatus, ManifestFile
from icefloe.spec.partitioning import PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.types import LongType, NestedField

__all__ = [
    "CHANGE_ORDINAL",
    "CHANGE_TYPE",
    "COMMIT_SNAPSHOT_ID",
    "changelog_arrow_schema",
    "changelog_snapshots",
    "compute_updates",
    "index_path",
    "plan_changelog",
    "read_changelog",
    "remove_carryovers",
]

#: The columns a changelog read appends to the rows (Spark's changelog metadata columns).
CHANGE_TYPE = "_change_type"
CHANGE_ORDINAL = "_change_ordinal"
COMMIT_SNAPSHOT_ID = "_commit_snapshot_id"
CHANGE_FIELDS = (
    pa.field(CHANGE_TYPE, pa.string(), nullable=False),
    pa.field(CHANGE_ORDINAL, pa.int32(), nullable=False),
    pa.field(COMMIT_SNAPSHOT_ID, pa.int64(), nullable=False),
)

_REPLACE = "replace"
_ADDED = int(ManifestEntryStatus.ADDED)
_DELETED = int(ManifestEntryStatus.DELETED)
_POS = NestedField(ROW_POSITION_ID, "_pos", LongType(), required=True)


def changelog_snapshots(
    metadata: TableMetadata, from_exclusive: int | None, to_inclusive: int
) -> list[Snapshot]:
    """The snapshots whose changes a changelog of the range holds, oldest first: the ancestors
    of ``to_inclusive`` back to (not including) ``from_exclusive``, or as far as history goes,
    without ``replace`` snapshots. A snapshot's index in the list is its change ordinal."""
    if from_exclusive == to_inclusive:
        return []
    result = []
    for snapshot in metadata.ancestors_of(to_inclusive):
        if snapshot.snapshot_id == from_exclusive:
            break
        if snapshot.operation != _REPLACE:
            result.append(snapshot)
    result.reverse()
    return result


# ---- planning ---------------------------------------------------------------------------------


def plan_changelog(
    io: FileIO,
    metadata: TableMetadata,
    snapshots: list[Snapshot],
    row_filter: Expression | None = None,
    *,
    schema: Schema | None = None,
    case_sensitive: bool = True,
    column_stats: bool | Iterable[int] = True,
) -> list[ChangelogScanTask]:
    """The changelog tasks of ``snapshots`` (oldest first; change ordinal = index), ordered
    by change ordinal; within one ordinal the deletes (removed files, then deleted rows) come
    before the inserts, each in manifest order.

    Data files are pruned by the row filter's partition projection and their metrics, as a
    table scan prunes them, and carry their residual (``column_stats``: as ``plan_files``).

    Raises:
        InvalidFilterError: naming the column or literal the filter gets wrong.
        InvalidManifestError, NoSuchFileError: a manifest list or manifest is damaged or missing.
        ValidationError: a manifest uses a partition spec the metadata lacks.
    """
    schema = schema or metadata.schema()
    bound = bind(
        schema, row_filter if row_filter is not None else always_true(), case_sensitive=case_sensitive
    )
    planner = _Planner(
        loader=_Loader(io, cache_for(io), new_plan_token()),
        specs=metadata.specs_by_id(),
        schema=schema,
        row_filter=bound,
        case_sensitive=case_sensitive,
        metrics=None if isinstance(bound, AlwaysTrue) else MetricsFilter(schema, bound, case_sensitive),
        stats=column_stats if isinstance(column_stats, bool) else frozenset(column_stats),
    )
    tasks: list[ChangelogScanTask] = []
    with gc_paused():
        for ordinal, snapshot in enumerate(snapshots):
            tasks.extend(planner.snapshot_changes(ordinal, snapshot))
    return tasks


@dataclass
class _DeleteStates:
    """The delete files live after a snapshot, live before it, and added by it."""

    after: DeleteFileIndex
    before: DeleteFileIndex
    added: DeleteFileIndex


@dataclass
class _Planner:
    loader: _Loader
    specs: dict[int, PartitionSpec]
    schema: Schema
    row_filter: Expression
    case_sensitive: bool
    metrics: MetricsFilter | None
    stats: bool | frozenset[int]

    def __post_init__(self) -> None:
        self._filters: dict[int, _SpecFilters] = {}

    def filters_for(self, spec_id: int) -> _SpecFilters:
        found = self._filters.get(spec_id)
        if found is None:
            found = self._filters[spec_id] = _spec_filters(
                self.specs[spec_id], self.schema, self.row_filter, self.case_sensitive
            )
        return found

    def snapshot_changes(self, ordinal: int, snapshot: Snapshot) -> list[ChangelogScanTask]:
        snapshot_id = snapshot.snapshot_id
        manifests = self.loader.manifest_list(snapshot)
        for manifest in manifests:
            if manifest.partition_spec_id not in self.specs:
                raise ValidationError(
                    f"manifest {manifest.manifest_path} uses partition spec {manifest.partition_spec_id}, "
                    "which the table metadata does not define"
                )
        data = [m for m in manifests if m.content == ManifestContent.DATA]
        delete_manifests = [m for m in manifests if m.content == ManifestContent.DELETES]
        # What the snapshot itself changed is in the manifests it wrote.
        own = [m for m in data if m.added_snapshot_id == snapshot_id]
        added, removed = self._changed_data_files(own, snapshot_id)
        states = self._delete_states(delete_manifests, snapshot_id) if delete_manifests else None
        new_deletes = states is not None and len(states.added) > 0
        if not added and not removed and not new_deletes:
            return []

        tasks: list[ChangelogScanTask] = []
        for file, seq, residual, spec in removed:
            existing = states.before.for_data_file(file, seq) if states is not None else ()
            tasks.append(DeletedDataFileScanTask(ordinal, snapshot_id, file, residual, spec, seq, existing))
        if states is not None and new_deletes:
            tasks.extend(self._deleted_rows(ordinal, snapshot_id, data, states))
        for file, seq, residual, spec in added:
            deletes = states.after.for_data_file(file, seq) if states is not None else ()
            tasks.append(AddedRowsScanTask(ordinal, snapshot_id, file, residual, spec, seq, deletes))
        return tasks

    # ---- data files --------------------------------------------------------------------------

    def _kept(self, decoded: DecodedManifest, mask: np.ndarray) -> list[int]:
        """The entries of ``mask`` that may hold rows matching the filter."""
        spec_filters = self.filters_for(decoded.spec_id)
        partitions_ok = spec_filters.partitions_ok(decoded.partitions)
        if partitions_ok is not None:
            mask &= partitions_ok[decoded.partition_codes]
        if self.metrics is not None and mask.any():
            mask &= self.metrics.might_match(decoded)
        indices: list[int] = np.flatnonzero(mask).tolist()
        return indices

    def _files(
        self, decoded: DecodedManifest, indices: list[int]
    ) -> list[tuple[DataFile, int, Expression, PartitionSpec]]:
        """Each entry's data file, data sequence number, residual and spec."""
        spec_filters = self.filters_for(decoded.spec_id)
        spec = self.specs[decoded.spec_id]
        files = self.loader.files(decoded, indices, None, stats=self.stats)
        seqs = decoded.sequence_numbers(indices)
        codes = decoded.partition_codes.tolist()
        residuals: dict[int, Expression] = {}
        result = []
        for i, file, seq in zip(indices, files, seqs):
            code = codes[i]
            residual = residuals.get(code)
            if residual is None:
                residual = residuals[code] = spec_filters.residual(decoded.partitions[code])
            result.append((file, seq or 0, residual, spec))
        return result  # type: ignore[return-value]

    def _live_manifests(self, manifests: list[ManifestFile]) -> list[ManifestFile]:
        return manifests_keep(manifests, self.filters_for)

    def _changed_data_files(
        self, own: list[ManifestFile], snapshot_id: int
    ) -> tuple[
        list[tuple[DataFile, int, Expression, PartitionSpec]],
        list[tuple[DataFile, int, Expression, PartitionSpec]],
    ]:
        """The data files the snapshot added and those it removed."""
        added = []
        removed = []
        for decoded, _, _ in self.loader.decoded(self._live_manifests(own)):
            mine = decoded.snapshot_id == snapshot_id
            if decoded.snapshot_null is not None:
                mine &= ~decoded.snapshot_null
            added.extend(self._files(decoded, self._kept(decoded, mine & (decoded.status == _ADDED))))
            removed.extend(self._files(decoded, self._kept(decoded, mine & (decoded.status == _DELETED))))
        return added, removed

    def _deleted_rows(
        self, ordinal: int, snapshot_id: int, data: list[ManifestFile], states: _DeleteStates
    ) -> list[ChangelogScanTask]:
        """Tasks for the data files live before and after the snapshot to which delete files
        it added apply."""
        tasks: list[ChangelogScanTask] = []
        for decoded, _, _ in self.loader.decoded(self._live_manifests(data)):
            kept_before = decoded.live() & ~(
                (decoded.status == _ADDED) & (decoded.snapshot_id == snapshot_id)
            )
            indices = self._kept(decoded, kept_before)
            if not indices:
                continue
            # Cheap first: which files any added delete file may apply to.
            files = self.loader.files(decoded, indices, None, stats=False)
            seqs = decoded.sequence_numbers(indices)
            touched = [
                i
                for i, file, seq in zip(indices, files, seqs)
                if states.added.for_data_file(file, seq or 0)  # type: ignore[arg-type]
            ]
            for file, seq, residual, spec in self._files(decoded, touched):
                after = states.after.for_data_file(file, seq)
                before = states.before.for_data_file(file, seq)
                known = {_delete_key(d) for d in before}
                new = tuple(d for d in after if _delete_key(d) not in known)
                if new:
                    tasks.append(
                        DeletedRowsScanTask(ordinal, snapshot_id, file, residual, spec, seq, new, before)
                    )
        return tasks

    # ---- delete files ------------------------------------------------------------------------

    def _delete_states(self, manifests: list[ManifestFile], snapshot_id: int) -> _DeleteStates:
        after, before, added = (DeleteFileIndex(self.specs) for _ in range(3))
        for decoded, hot, _ in self.loader.decoded(manifests):
            mine = decoded.snapshot_id == snapshot_id
            if decoded.snapshot_null is not None:
                mine &= ~decoded.snapshot_null
            live = decoded.live()
            is_added = mine & (decoded.status == _ADDED)
            wanted: list[int] = np.flatnonzero(live | (mine & (decoded.status == _DELETED))).tolist()
            if not wanted:
                continue
            files = decoded.files(wanted, hot)
            flags_live = live.tolist()
            flags_added = is_added.tolist()
            for i, file, seq in zip(wanted, files, decoded.sequence_numbers(wanted)):
                delete_file: DeleteFile = file  # type: ignore[assignment]
                seq = seq or 0
                if not flags_live[i]:  # removed by this snapshot
                    before.add(delete_file, seq)
                elif flags_added[i]:
                    after.add(delete_file, seq)
                    added.add(delete_file, seq)
                else:
                    after.add(delete_file, seq)
                    before.add(delete_file, seq)
        return _DeleteStates(after, before, added)


def _delete_key(delete: DeleteFile) -> tuple[str, int | None]:
    # Deletion vectors share a Puffin file: a blob is its file and offset.
    return delete.file_path, delete.content_offset


# ---- reading ----------------------------------------------------------------------------------


def changelog_arrow_schema(schema: Schema) -> pa.Schema:
    """The Arrow schema of changelog rows: ``schema``'s columns and the three change columns.

    Raises:
        ValidationError: ``schema`` has a column named like a change column.
    """
    names = {f.name for f in schema.fields}
    clash = [f.name for f in CHANGE_FIELDS if f.name in names]
    if clash:
        raise ValidationError(f"the table has columns named like changelog columns: {clash}")
    arrow = schema_to_arrow(schema)
    for field in CHANGE_FIELDS:
        arrow = arrow.append(field)
    return arrow


def read_changelog(
    io: FileIO,
    metadata: TableMetadata,
    tasks: Iterable[ChangelogScanTask],
    read_schema: Schema,
    *,
    case_sensitive: bool = True,
    batch_size: int | None = None,
) -> Iterator[pa.RecordBatch]:
    """Stream the changed rows of ``tasks``, in task order: ``read_schema``'s columns plus
    ``_change_type``, ``_change_ordinal`` and ``_commit_snapshot_id``
    (:func:`changelog_arrow_schema`). Every batch comes from one task.

    Args:
        io: reads data and delete files.
        metadata: the table metadata (as for ``read_batches``).
        tasks: planned changelog tasks; each task's residual filters its rows.
        read_schema: the columns to produce; must include every column the residuals use.
        case_sensitive: how residual column names match.
        batch_size: the maximum rows per batch.

    Raises:
        InvalidDataFileError: a data or delete file is missing or malformed (naming it).
        UnsupportedFeatureError: a data file is not Parquet.
    """
    deletes = PositionDeletes(io, metadata)  # each delete file read once for all the tasks
    target = changelog_arrow_schema(read_schema)
    for task in tasks:
        if isinstance(task, (AddedRowsScanTask, DeletedDataFileScanTask)):
            # The file's rows less those its delete files delete: inserted rows that stayed
            # (added files), or the rows that were live before the file was removed.
            batches = read_batches(
                io,
                metadata,
                [task.file_task(task.referenced_delete_files)],
                read_schema,
                case_sensitive=case_sensitive,
                batch_size=batch_size,
                deletes=deletes,
            )
        elif isinstance(task, DeletedRowsScanTask):
            batches = _newly_deleted(
                io, metadata, task, read_schema, deletes, case_sensitive=case_sensitive, batch_size=batch_size
            )
        else:  # pragma: no cover - the three kinds are all there are
            raise TypeError(f"not a changelog task: {task!r}")
        yield from _tagged(batches, task, target)


def _tagged(
    batches: Iterable[pa.RecordBatch], task: ChangelogScanTask, target: pa.Schema
) -> Iterator[pa.RecordBatch]:
    operation = str(task.operation.value)
    for batch in batches:
        n = batch.num_rows
        if n == 0:
            continue
        columns = [
            *batch.columns,
            pa.repeat(pa.scalar(operation, pa.string()), n),
            pa.repeat(pa.scalar(task.change_ordinal, pa.int32()), n),
            pa.repeat(pa.scalar(task.commit_snapshot_id, pa.int64()), n),
        ]
        yield pa.RecordBatch.from_arrays(columns, schema=target)


def _newly_deleted(
    io: FileIO,
    metadata: TableMetadata,
    task: DeletedRowsScanTask,
    read_schema: Schema,
    deletes: PositionDeletes,
    *,
    case_sensitive: bool,
    batch_size: int | None,
) -> Iterator[pa.RecordBatch]:
    """The rows ``task.added_deletes`` delete among those ``task.existing_deletes`` leave:
    the file is read with its existing deletes applied and its positions (``_pos``), and the
    added deletes select rows instead of dropping them."""
    added = task.file_task(task.added_deletes)
    positions = deletes.for_task(added)
    equality = deletes.equality_for_task(added, read_schema)
    if positions is None and not equality:
        # The added deletes name none of this file's rows (a partition-scoped position
        # delete file that lists other files): nothing to read.
        return
    schema = with_fields(read_schema, [ROW_POSITION_ID], [Schema(_POS)])
    if equality:
        schema = with_fields(schema, [i for e in equality for i in e.field_ids], [e.schema for e in equality])
    position_path = index_path(schema, ROW_POSITION_ID)
    equality_paths = [[index_path(schema, i) for i in e.field_ids] for e in equality]
    target = schema_to_arrow(read_schema)
    for batch in read_batches(
        io,
        metadata,
        [task.file_task(task.existing_deletes)],
        schema,
        case_sensitive=case_sensitive,
        batch_size=batch_size,
        deletes=deletes,
    ):
        selected = np.zeros(batch.num_rows, dtype=bool)
        if positions is not None:
            column = key_column(batch, position_path).to_numpy(zero_copy_only=False)
            selected |= np.isin(column, positions)
        for e, paths in zip(equality, equality_paths):
            selected |= e.keys.deleted([key_column(batch, path) for path in paths])
        if not selected.any():
            continue
        batch = batch.filter(pa.array(selected))
        # The extra columns come after the read schema's, or inside its structs (a nested
        # equality delete column): a struct cast keeps the target's children, by name.
        columns = []
        for i, field in enumerate(target):
            column = batch.column(i)
            columns.append(column if column.type == field.type else column.cast(field.type))
        yield pa.RecordBatch.from_arrays(columns, schema=target)
