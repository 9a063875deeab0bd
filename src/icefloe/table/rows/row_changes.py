"""Row-level conveniences: ``table.delete(where)``, ``table.overwrite(data, where)`` and
``table.replace_partitions(data)``, and the commit path ``table.update`` (``update_rows.py``),
``table.upsert`` (``upsert_rows.py``) and the Spark row-level changes share.

Each reads the table at one snapshot, finds the rows it changes, writes files and commits one
snapshot through an operation whose validations protect it against concurrent commits:

- **which rows**: a delete whose filter every file it may match satisfies in every row (by
  partition or metrics, or no file at all) is a metadata-only ``delete`` snapshot, as Java's
  DELETE is (``metadata_delete.py``). Otherwise a task whose residual is always-true (its
  partition decides the filter) is removed whole without reading it; the others' live rows
  are read with their positions (``_pos``) and matched (the filter, or a join on the upsert
  keys). A file all of whose live rows match is removed whole too.
- **how** (``write.delete.mode`` / ``write.update.mode`` / ``write.merge.mode``):
  ``copy-on-write`` (Java's default) rewrites each partly matching file without the matched
  rows and commits an ``overwrite`` (``new_overwrite()``); ``merge-on-read`` writes position
  deletes (v2) or deletion vectors (v3, merged with the deletes the file already has, which
  the commit removes) and commits a row delta (``new_row_delta()``).
- **isolation** (``write.delete.isolation-level`` and friends: ``serializable``, the default,
  or ``snapshot``): both fail the commit when a concurrent commit removed or deleted rows of
  the files read; ``serializable`` also when one added data that the filter matches.

- **a change that changes nothing** still commits a snapshot, as Java's DELETE / UPDATE /
  MERGE do: ``delete`` for a metadata-only delete, else an ``overwrite`` without files (a row
  delta or an overwrite, with their validations). Only a delete whose filter is always false
  commits nothing (Java skips it too). So icefloe's and Java's histories (``snapshots``
  counts, time travel by snapshot ordinal) stay the same.

If the commit definitely fails, every file written is deleted; an unknown outcome keeps them.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icefloe.arrow.reader import ROW_POSITION_ID
from icefloe.arrow.row_filter import to_arrow_expression
from icefloe.arrow.schema import schema_to_arrow
from icefloe.errors import ValidationError
from icefloe.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    Expression,
    always_true,
    bind,
    parse,
    referenced_field_ids,
)
from icefloe.io import FileIO
from icefloe.scan import FileScanTask, PositionDeletes, plan_files, read_batches
from icefloe.spec.manifest import DataFile, DeleteFile, FileContent
from icefloe.spec.properties import isolation_level_property, row_level_mode_property
from icefloe.spec.schema import Schema
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.types import LongType, NestedField
from icefloe.table.rows.append_data import write_files
from icefloe.table.rows.metadata_delete import delete_by_metadata, metadata_decides
from icefloe.write import write_data_files
from icefloe.write.deletes import write_position_deletes_for
from icefloe.write.deletion_vectors import write_deletion_vectors

if TYPE_CHECKING:
    from icefloe.table.snapshots.delete_files import DeleteFiles
    from icefloe.table.snapshots.overwrite import OverwriteFiles
    from icefloe.table.snapshots.replace_partitions import ReplacePartitions
    from icefloe.table.snapshots.row_delta import RowDelta

__all__ = [
    "COPY_ON_WRITE",
    "MERGE_ON_READ",
    "RowChangeTarget",
    "branch_head",
    "delete_rows",
    "overwrite_rows",
    "replace_partitions_with",
]

COPY_ON_WRITE = "copy-on-write"
MERGE_ON_READ = "merge-on-read"
SERIALIZABLE = "serializable"
SNAPSHOT = "snapshot"
_POS = NestedField(ROW_POSITION_ID, "_pos", LongType(), required=True)


class RowChangeTarget(Protocol):
    """A Table or a Transaction."""

    @property
    def metadata(self) -> TableMetadata: ...

    def io(self) -> FileIO: ...

    def new_overwrite(self) -> OverwriteFiles: ...

    def new_delete(self) -> DeleteFiles: ...

    def new_row_delta(self) -> RowDelta: ...

    def new_replace_partitions(self) -> ReplacePartitions: ...


def _choice(properties: Mapping[str, str], name: str, allowed: tuple[str, str], default: str) -> str:
    value = properties.get(name, default).strip().lower()
    if value not in allowed:
        raise ValidationError(f"table property {name} must be one of {', '.join(allowed)}, not {value!r}")
    return value


def _mode(metadata: TableMetadata, kind: str) -> str:
    return _choice(
        metadata.properties, row_level_mode_property(kind), (COPY_ON_WRITE, MERGE_ON_READ), COPY_ON_WRITE
    )


def _isolation(metadata: TableMetadata, kind: str) -> str:
    return _choice(
        metadata.properties, isolation_level_property(kind), (SERIALIZABLE, SNAPSHOT), SERIALIZABLE
    )


def branch_head(metadata: TableMetadata, branch: str | None) -> Snapshot | None:
    """The snapshot a commit to ``branch`` (None: main) builds on: its head, or the current
    snapshot for a branch that does not exist yet (which the commit creates, as Java does).

    Raises:
        ValidationError: ``branch`` names a tag.
    """
    if branch is None:
        return metadata.current_snapshot()
    ref = metadata.refs.get(branch)
    if ref is None:
        return metadata.current_snapshot()
    if not ref.is_branch:
        raise ValidationError(f"'{branch}' is a tag, not a branch; commits go to branches")
    return metadata.snapshot_by_id(ref.snapshot_id)


def _expression(where: Expression | str | None) -> Expression:
    if where is None:
        return always_true()
    return parse(where) if isinstance(where, str) else where


# ---- finding the rows -------------------------------------------------------------------------

#: Given the live rows of one file (with ``_pos``), the positions of the rows that change.
Matcher = Callable[[pa.Table], np.ndarray]
#: Given a file's task, the matcher for its rows, or None when no row of it can match (the
#: file is then not read).
MatcherFor = Callable[[FileScanTask], Matcher | None]


@dataclass
class _Found:
    """The rows a change touches, at the snapshot it read."""

    snapshot: Snapshot | None
    whole: list[DataFile] = field(default_factory=list)  # every live row matches
    partial: list[tuple[FileScanTask, np.ndarray]] = field(default_factory=list)  # (task, positions)
    matched_rows: int = 0

    @property
    def touched(self) -> bool:
        return bool(self.whole or self.partial)


def _with_positions(schema: Schema, field_ids: Sequence[int] | None) -> Schema:
    """The table schema (or the top-level columns holding ``field_ids``) plus ``_pos``."""
    if field_ids is None:
        fields = list(schema.fields)
    else:
        wanted = set(field_ids)
        fields = [f for f in schema.fields if any(i in wanted for i in _ids_under(schema, f.field_id))]
    return Schema(*fields, _POS, schema_id=schema.schema_id)


def _ids_under(schema: Schema, field_id: int) -> set[int]:
    column = schema.find_column_name(field_id)
    assert column is not None
    return set(schema.select(column).id_to_name())


def _find(
    target: RowChangeTarget,
    row_filter: Expression,
    matcher: Matcher | None,
    *,
    read_ids: Sequence[int] | None,
    case_sensitive: bool,
    branch: str | None = None,
    matched: list[pa.Table] | None = None,
    planned: tuple[Snapshot | None, list[FileScanTask]] | None = None,
    matcher_for: MatcherFor | None = None,
) -> _Found:
    """The files and positions of the rows ``row_filter`` (and ``matcher``, when given)
    selects at the head of ``branch`` (default main; ``planned``: that head and its tasks
    for ``row_filter``, planned already). Without a matcher, a task whose residual is
    always-true is taken whole unread, unless ``matched`` collects the matched rows (read
    with ``read_ids``' columns, ``_pos`` dropped). ``matcher_for`` gives each task its own
    matcher (in place of ``matcher``), or None to leave the file unread."""
    metadata = target.metadata
    snapshot, tasks = planned or _plan(target, row_filter, case_sensitive, branch)
    found = _Found(snapshot)
    if snapshot is None:
        return found
    io = target.io()
    schema = metadata.schema()
    deletes = PositionDeletes(io, metadata)
    read_schema = _with_positions(schema, read_ids)

    def examine(task: FileScanTask, matcher: Matcher | None) -> tuple[np.ndarray, pa.Table | None, int]:
        """The changed positions of one file, its matched rows (when collected), its live rows."""
        live = _read_live(io, metadata, task, read_schema, deletes, case_sensitive)
        if matcher is None:
            bound = bind(read_schema, task.residual, case_sensitive=case_sensitive)
            selected = live.filter(to_arrow_expression(bound, read_schema))
            positions = np.asarray(selected.column("_pos").to_numpy(), dtype=np.int64)
        else:
            positions = matcher(live)
        rows = None
        if matched is not None and positions.size:
            keep = pc.is_in(live.column("_pos"), value_set=pa.array(positions, pa.int64()))
            rows = live.filter(keep).drop_columns(["_pos"])
        return positions, rows, live.num_rows

    # Files are read and matched in threads (pyarrow releases the GIL): only their positions
    # (and the matched rows, when collected) are kept, so memory stays bounded by the files
    # in flight.
    pending: list[tuple[FileScanTask, Future[tuple[np.ndarray, pa.Table | None, int]]]] = []
    with ThreadPoolExecutor(max_workers=_workers(), thread_name_prefix="icefloe-row-change") as pool:
        for task in tasks:
            task_matcher = matcher_for(task) if matcher_for is not None else matcher
            if matcher_for is not None and task_matcher is None:
                continue
            if (
                task_matcher is None
                and matched is None
                and isinstance(task.residual, AlwaysTrue)
                and not task.deletes
            ):
                found.whole.append(task.file)
                found.matched_rows += task.file.record_count
                continue
            pending.append((task, pool.submit(examine, task, task_matcher)))
        for task, future in pending:
            positions, rows, live_rows = future.result()
            if positions.size == 0:
                continue
            if rows is not None and matched is not None:
                matched.append(rows)
            has_equality = any(d.content == FileContent.EQUALITY_DELETES for d in task.deletes)
            found.matched_rows += int(positions.size)
            if positions.size == live_rows and not has_equality:
                found.whole.append(task.file)
            else:
                found.partial.append((task, _ascending_unique(positions)))
    return found


def _ascending_unique(positions: np.ndarray) -> np.ndarray:
    """The positions sorted and without repeats (most matchers give them so already: then
    they are only checked, which costs far less than sorting)."""
    if positions.size < 2 or bool(np.all(positions[1:] > positions[:-1])):
        return positions
    return np.unique(positions)


def _plan(
    target: RowChangeTarget, row_filter: Expression, case_sensitive: bool, branch: str | None
) -> tuple[Snapshot | None, list[FileScanTask]]:
    """The head of ``branch`` (None: main) and its tasks that ``row_filter`` may match."""
    metadata = target.metadata
    snapshot = branch_head(metadata, branch)
    if snapshot is None:
        return None, []
    tasks = plan_files(
        target.io(), metadata, snapshot, row_filter, schema=metadata.schema(), case_sensitive=case_sensitive
    )
    return snapshot, tasks


def _read_live(
    io: FileIO,
    metadata: TableMetadata,
    task: FileScanTask,
    read_schema: Schema,
    deletes: PositionDeletes,
    case_sensitive: bool,
) -> pa.Table:
    """Every row of the task's file that no delete removes, with ``_pos``."""
    whole = dataclasses.replace(task, residual=always_true(), start=0, length=task.file.file_size_in_bytes)
    batches = list(
        read_batches(io, metadata, [whole], read_schema, case_sensitive=case_sensitive, deletes=deletes)
    )
    return pa.Table.from_batches(batches, schema=schema_to_arrow(read_schema))


# ---- writing the change -----------------------------------------------------------------------


@dataclass
class _Written:
    data: list[DataFile] = field(default_factory=list)
    deletes: list[DeleteFile] = field(default_factory=list)
    replaced_deletes: list[DeleteFile] = field(default_factory=list)  # merged into new vectors

    def paths(self) -> list[str]:
        return [f.file_path for f in self.data] + [f.file_path for f in self.deletes]


def _write_deletes(target: RowChangeTarget, found: _Found, written: _Written) -> None:
    """Merge-on-read: position deletes (v2) or deletion vectors (v3) for the partial files."""
    if not found.partial:
        return
    metadata = target.metadata
    io = target.io()
    if metadata.format_version >= 3:
        existing = PositionDeletes(io, metadata)
        vectors: list[tuple[DataFile, np.ndarray]] = []
        for task, positions in found.partial:
            old = existing.for_task(task)
            merged = positions if old is None else np.union1d(positions, old)
            vectors.append((task.file, merged))
            # The old vector, and position delete files of this data file alone, are merged
            # into the new vector: at most one vector per data file.
            written.replaced_deletes.extend(
                d
                for d in task.deletes
                if d.content == FileContent.POSITION_DELETES
                and (d.is_deletion_vector or d.referenced_data_file == task.file.file_path)
            )
        written.deletes.extend(
            write_deletion_vectors(
                io, table_location=metadata.location, properties=metadata.properties, deletes=vectors
            )
        )
        return
    written.deletes.extend(
        write_position_deletes_for(
            io,
            table_location=metadata.location,
            properties=metadata.properties,
            schema=metadata.schema(),
            specs=metadata.specs_by_id(),
            deletes=[(task.file, positions) for task, positions in found.partial],
            sort_order=metadata.sort_order(),
        )
    )


def _rewrite_remainders(target: RowChangeTarget, found: _Found, written: _Written) -> None:
    """Copy-on-write: each partial file's other live rows, in new data files."""
    metadata = target.metadata
    io = target.io()
    schema = metadata.schema()
    read_schema = _with_positions(schema, None)
    deletes = PositionDeletes(io, metadata)

    names = [f.name for f in schema.fields]

    def remainder(task: FileScanTask, positions: np.ndarray) -> Iterator[pa.RecordBatch]:
        """The file's live rows but ``positions``, streamed: a batch at a time in memory."""
        whole = dataclasses.replace(
            task, residual=always_true(), start=0, length=task.file.file_size_in_bytes
        )
        for batch in read_batches(io, metadata, [whole], read_schema, deletes=deletes):
            kept = batch.filter(pa.array(_kept(batch.column("_pos"), positions))).select(names)
            if kept.num_rows:
                yield kept

    def rewrite(task: FileScanTask, positions: np.ndarray) -> list[DataFile]:
        return write_data_files(
            io,
            table_location=metadata.location,
            properties=metadata.properties,
            schema=schema,
            spec=metadata.spec(),
            data=remainder(task, positions),
            sort_order=metadata.sort_order(),
        )

    # A file each thread at a time (reading and writing Parquet release the GIL); every
    # file written is recorded, also when another fails, so that the caller deletes them.
    error: BaseException | None = None
    with ThreadPoolExecutor(max_workers=_workers(), thread_name_prefix="icefloe-row-change") as pool:
        futures = [pool.submit(rewrite, task, positions) for task, positions in found.partial]
        for future in futures:
            try:
                written.data.extend(future.result())
            except BaseException as e:
                error = error or e
    if error is not None:
        raise error


def _kept(live_positions: pa.ChunkedArray | pa.Array, removed: np.ndarray) -> np.ndarray:
    """A mask of the live rows (ascending ``_pos``: one file's rows, or a batch of them) whose
    position is not in ``removed`` (ascending, unique)."""
    live = np.asarray(live_positions.to_numpy(), dtype=np.int64)
    keep = np.ones(len(live), dtype=bool)
    if removed.size and live.size:
        at = np.minimum(np.searchsorted(live, removed), len(live) - 1)
        keep[at[live[at] == removed]] = False
    return keep


def _workers() -> int:
    """Threads reading or rewriting files at once: one per core, at most four (each holds a
    file's rows)."""
    return max(1, min(4, os.cpu_count() or 1))


def _commit(
    target: RowChangeTarget,
    found: _Found,
    written: _Written,
    *,
    mode: str,
    isolation: str,
    conflict_filter: Expression,
    new_rows: Sequence[DataFile] = (),
    snapshot_properties: Mapping[str, str] | None = None,
    branch: str | None = None,
    stage_only: bool = False,
) -> Snapshot | None:
    """Commit the change as one snapshot (an overwrite or a row delta, per ``mode``) to
    ``branch`` (default main); ``stage_only``: added to the table's snapshots without moving
    any ref (write-audit-publish)."""
    io = target.io()
    owned = written.paths() + [f.file_path for f in new_rows]
    try:
        operation: Any
        if mode == MERGE_ON_READ:
            delta = target.new_row_delta()
            for file in found.whole:
                delta.remove_rows(file)
            for delete in written.deletes:
                delta.add_deletes(delete)
            for old in written.replaced_deletes:
                delta.remove_deletes(old)
            for file in new_rows:
                delta.add_rows(file)
            delta.conflict_detection_filter(conflict_filter)
            delta.validate_data_files_exist([task.file.file_path for task, _ in found.partial])
            delta.validate_deleted_files().validate_no_conflicting_delete_files()
            if isolation == SERIALIZABLE:
                delta.validate_no_conflicting_data_files()
            operation = delta
        else:
            overwrite = target.new_overwrite()
            for file in found.whole:
                overwrite.delete_file(file)
            for task, _ in found.partial:
                overwrite.delete_file(task.file)
            for file in [*written.data, *new_rows]:
                overwrite.add_file(file)
            overwrite.conflict_detection_filter(conflict_filter).validate_no_conflicting_deletes()
            if isolation == SERIALIZABLE:
                overwrite.validate_no_conflicting_data()
            operation = overwrite
        if branch is not None:
            operation.to_branch(branch)
        if found.snapshot is not None:
            operation.validate_from_snapshot(found.snapshot.snapshot_id)
        if stage_only:
            operation.stage_only()
        operation.delete_on_failure(owned)
        for key, value in (snapshot_properties or {}).items():
            operation.set(key, value)
    except Exception:
        io.delete_quietly(owned)
        raise
    operation.commit()
    return target.metadata.snapshot_by_id(operation.snapshot_id)


# ---- the conveniences ---------------------------------------------------------------------------


def delete_rows(
    target: RowChangeTarget,
    where: Expression | str,
    *,
    case_sensitive: bool = True,
    snapshot_properties: Mapping[str, str] | None = None,
    branch: str | None = None,
) -> Snapshot | None:
    """Delete the rows matching ``where`` (rows where it is null stay), as Java's
    ``DELETE FROM t WHERE <where>`` does: a metadata-only ``delete`` snapshot when every file
    the filter may match matches it wholly (also when no file does), else a row-level change
    per ``write.delete.mode``, committed even when no row matched (an ``overwrite`` without
    files). Returns the snapshot; None only when ``where`` is always false (nothing is
    committed, as Java skips it)."""
    row_filter = _expression(where)
    metadata = target.metadata
    mode, isolation = _mode(metadata, "delete"), _isolation(metadata, "delete")
    bound = bind(metadata.schema(), row_filter, case_sensitive=case_sensitive)
    if isinstance(bound, AlwaysFalse):
        return None
    planned = _plan(target, row_filter, case_sensitive, branch)
    if metadata_decides(metadata, planned[1], row_filter, case_sensitive):
        return delete_by_metadata(
            target,
            row_filter,
            case_sensitive=case_sensitive,
            snapshot_properties=snapshot_properties,
            branch=branch,
        )
    found = _find(
        target,
        row_filter,
        None,
        read_ids=sorted(referenced_field_ids(bound)),
        case_sensitive=case_sensitive,
        branch=branch,
        planned=planned,
    )
    written = _Written()
    try:
        if mode == MERGE_ON_READ:
            _write_deletes(target, found, written)
        else:
            _rewrite_remainders(target, found, written)
    except Exception:
        target.io().delete_quietly(written.paths())
        raise
    return _commit(
        target,
        found,
        written,
        mode=mode,
        isolation=isolation,
        conflict_filter=row_filter,
        snapshot_properties=snapshot_properties,
        branch=branch,
    )


def overwrite_rows(
    target: RowChangeTarget,
    data: Any,
    where: Expression | str | None = None,
    *,
    case_sensitive: bool = True,
    snapshot_properties: Mapping[str, str] | None = None,
    branch: str | None = None,
) -> Snapshot | None:
    """Replace the rows matching ``where`` (every row when None) by ``data``, in one
    ``overwrite`` snapshot: files whose rows all match are removed, files that match in part
    are rewritten without the matching rows (copy-on-write)."""
    row_filter = _expression(where)
    metadata = target.metadata
    isolation = _isolation(metadata, "update")
    bound = bind(metadata.schema(), row_filter, case_sensitive=case_sensitive)
    found = _find(
        target,
        row_filter,
        None,
        read_ids=sorted(referenced_field_ids(bound)),
        case_sensitive=case_sensitive,
        branch=branch,
    )
    written = _Written()
    new_rows: list[DataFile] = []
    try:
        _rewrite_remainders(target, found, written)
        new_rows = write_files(target, data)  # type: ignore[arg-type]
    except Exception:
        target.io().delete_quietly(written.paths() + [f.file_path for f in new_rows])
        raise
    if not found.touched and not new_rows:
        return None
    return _commit(
        target,
        found,
        written,
        mode=COPY_ON_WRITE,
        isolation=isolation,
        conflict_filter=row_filter,
        new_rows=new_rows,
        snapshot_properties=snapshot_properties,
        branch=branch,
    )


def replace_partitions_with(
    target: RowChangeTarget,
    data: Any,
    *,
    snapshot_properties: Mapping[str, str] | None = None,
    branch: str | None = None,
) -> Snapshot | None:
    """Write ``data`` and replace every partition it touches (a dynamic partition overwrite)."""
    files = write_files(target, data)  # type: ignore[arg-type]
    if not files:
        return None
    snapshot = branch_head(target.metadata, branch)
    try:
        replace = target.new_replace_partitions()
        if branch is not None:
            replace.to_branch(branch)
        replace.delete_on_failure(f.file_path for f in files)
        for file in files:
            replace.add_file(file)
        if snapshot is not None:
            replace.validate_from_snapshot(snapshot.snapshot_id)
        replace.validate_no_conflicting_data().validate_no_conflicting_deletes()
        for key, value in (snapshot_properties or {}).items():
            replace.set(key, value)
    except Exception:
        target.io().delete_quietly([f.file_path for f in files])
        raise
    replace.commit()
    return target.metadata.snapshot_by_id(replace.snapshot_id)


# ---- for engines that find the rows themselves (icefloe.spark) -----------------------------------
# The Spark row-level changes find the matching rows and write new rows in Spark tasks, then
# hand over here: the same delete files, deletion-vector merging, commit and validations as
# the conveniences above.
FoundRows = _Found
WrittenFiles = _Written
find_rows = _find
rewrite_remainders = _rewrite_remainders
write_change_deletes = _write_deletes
commit_row_change = _commit
change_mode = _mode
change_isolation = _isolation
