"""What ``rewrite_position_deletes`` rewrites and how it commits, for both implementations
(plain Python in ``icefloe.actions``, Spark in ``icefloe.spark.actions``).

Position delete files of the current snapshot are grouped per partition (spec and values);
in ``where``'s partitions, a group is rewritten when it has enough files outside the target
size range (Java's bin-pack options). Rewriting reads the group's delete files, drops the
*dangling* deletes (those whose data file is no longer live in the current snapshot), and
writes the rest again, sorted and deduplicated. The commit goes through ``new_rewrite()``
(validated from the starting snapshot: a concurrent commit that removed one of the files
fails the rewrite); each new file keeps the highest data sequence number of the files it
replaces, so it applies to exactly the data files they applied to (Java does the same).

v3 tables: position delete files may not be added, and at most one deletion vector may
apply to a data file. As Java 1.9, every v2 position delete file (in ``where``'s partitions)
is rewritten into deletion vectors; deletes of a data file that already has a deletion vector
are dropped, since that vector holds them (the spec requires a vector to include the position
deletes that existed when it was added) and readers ignore position files for such a data
file. Existing deletion vectors are never rewritten. A group with nothing left to write is
just removed.

The deleted rows that a position delete file may store (its optional ``row`` column) are not
kept (Java keeps them).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pyarrow as pa

from icefloe.expressions import AlwaysFalse, Expression, ResidualEvaluator
from icefloe.io import FileIO
from icefloe.manifests.reader import manifest_records, read_manifest_bytes
from icefloe.scan import decoded_manifests, manifest_list
from icefloe.spec.manifest import (
    DataFile,
    DeleteFile,
    FileContent,
    FileFormat,
    ManifestContent,
    ManifestEntryStatus,
    ManifestFile,
)
from icefloe.spec.partition_values import partition_key
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.maintenance.options import RewritePositionDeletesOptions, row_filter
from icefloe.table.maintenance.results import RewritePositionDeletesResult
from icefloe.table.snapshots.rewrite_files import RewriteFiles

__all__ = [
    "DeleteGroup",
    "DeletesPlan",
    "commit_delete_groups",
    "content_size",
    "grouped_positions",
    "live_paths",
    "plan_delete_groups",
    "vector_target",
]

_DELETED = int(ManifestEntryStatus.DELETED)
_POSITION = int(FileContent.POSITION_DELETES)


@dataclass(frozen=True, slots=True)
class DeleteGroup:
    """The position delete files of one partition that are rewritten together."""

    spec_id: int
    partition: tuple[Any, ...]
    files: tuple[DeleteFile, ...]
    sequence_number: int  # the highest data sequence number of the files


@dataclass
class DeletesPlan:
    """The groups to rewrite and what rewriting them needs to know."""

    snapshot: Snapshot
    groups: list[DeleteGroup]
    data_manifests: list[ManifestFile]  # to find the live data files
    with_vectors: frozenset[str]  # data files that have a deletion vector already
    target: int
    to_vectors: bool


def plan_delete_groups(
    io: FileIO,
    metadata: TableMetadata,
    options: RewritePositionDeletesOptions,
    where: Expression | str | None,
) -> DeletesPlan | None:
    """The plan for the current snapshot (None: nothing to rewrite; v1 tables have no deletes)."""
    snapshot = metadata.current_snapshot()
    if snapshot is None or metadata.format_version < 2:
        return None
    sizes = options.sizes
    to_vectors = metadata.format_version >= 3
    rewrite_all = to_vectors or options.rewrite_all
    manifests = manifest_list(io, snapshot)
    position_files: list[tuple[DeleteFile, int]] = []
    with_vectors: set[str] = set()
    deletes = [m for m in manifests if m.content == ManifestContent.DELETES]
    for decoded in decoded_manifests(io, deletes):
        indices = np.flatnonzero(decoded.live() & (decoded.content == _POSITION)).tolist()
        files = decoded.files(indices, stats=False)
        for file, sequence_number in zip(files, decoded.sequence_numbers(indices)):
            assert isinstance(file, DeleteFile)
            if file.file_format == FileFormat.PUFFIN:
                if file.referenced_data_file is not None:
                    with_vectors.add(file.referenced_data_file)
                continue
            position_files.append((file, sequence_number or 0))
    groups = _groups(
        metadata,
        position_files,
        row_filter(where),
        rewrite_all,
        sizes.target,
        sizes.min_size,
        sizes.max_size,
        sizes.min_inputs,
    )
    if not groups:
        return None
    data = [m for m in manifests if m.content == ManifestContent.DATA]
    return DeletesPlan(snapshot, groups, data, frozenset(with_vectors), sizes.target, to_vectors)


def _groups(
    metadata: TableMetadata,
    files: list[tuple[DeleteFile, int]],
    where: Expression,
    rewrite_all: bool,
    target: int,
    min_size: int,
    max_size: int,
    min_inputs: int,
) -> list[DeleteGroup]:
    """Per partition, the files outside the size range (all of them with ``rewrite_all``),
    when they are enough files or enough bytes."""
    schema = metadata.schema()
    residuals: dict[int, ResidualEvaluator] = {}
    by_partition: dict[tuple[int, Any], list[tuple[DeleteFile, int]]] = {}
    for file, sequence_number in files:
        size = file.file_size_in_bytes
        if not (rewrite_all or size < min_size or size > max_size):
            continue
        evaluator = residuals.get(file.spec_id)
        if evaluator is None:
            evaluator = residuals[file.spec_id] = ResidualEvaluator(
                metadata.spec_by_id(file.spec_id), schema, where
            )
        if isinstance(evaluator.residual_for(tuple(file.partition)), AlwaysFalse):
            continue
        key = (file.spec_id, partition_key(tuple(file.partition), file.spec_id))
        by_partition.setdefault(key, []).append((file, sequence_number))
    groups = []
    for members in by_partition.values():
        total = sum(f.file_size_in_bytes for f, _ in members)
        too_big = any(f.file_size_in_bytes > max_size for f, _ in members)
        if rewrite_all or len(members) >= min_inputs or total > target or too_big:
            first = members[0][0]
            groups.append(
                DeleteGroup(
                    first.spec_id,
                    tuple(first.partition),
                    tuple(f for f, _ in members),
                    max(s for _, s in members),
                )
            )
    return groups


class DeleteRewriteTarget(Protocol):
    def new_rewrite(self) -> RewriteFiles: ...


def commit_delete_groups(
    table: DeleteRewriteTarget, plan: DeletesPlan, added: Sequence[tuple[int, DeleteFile]]
) -> RewritePositionDeletesResult:
    """Commit the rewrite: every file of the groups out, ``added`` ((group index, new file)
    pairs) in with their group's sequence number. The caller deletes the added files when
    this raises (unless the outcome is unknown)."""
    rewrite = table.new_rewrite()
    rewrite.validate_from_snapshot(plan.snapshot.snapshot_id)
    for group in plan.groups:
        for file in group.files:
            rewrite.delete_file(file)
    for index, file in added:
        rewrite.add_file(file, plan.groups[index].sequence_number)
    rewrite.commit()
    return RewritePositionDeletesResult(
        rewritten_delete_files_count=sum(len(g.files) for g in plan.groups),
        added_delete_files_count=len(added),
        rewritten_bytes_count=sum(f.file_size_in_bytes for g in plan.groups for f in g.files),
        added_bytes_count=sum(content_size(f) for _, f in added),
    )


def content_size(file: DeleteFile) -> int:
    """The bytes a delete file's content takes (a deletion vector's blob, not its Puffin file)."""
    if file.file_format == FileFormat.PUFFIN and file.content_size_in_bytes is not None:
        return file.content_size_in_bytes
    return file.file_size_in_bytes


def live_paths(io: FileIO, manifest: ManifestFile) -> list[str]:
    """The paths of the live entries of a data manifest."""
    layout, blocks = manifest_records(read_manifest_bytes(io, manifest), manifest.manifest_path)
    n_status, n_file, n_path = layout.status, layout.data_file, layout.file_path
    return [record[n_file][n_path] for block in blocks for record in block if record[n_status] != _DELETED]


def grouped_positions(rows: pa.Table) -> dict[str, np.ndarray]:
    """Sorted, unique positions per data file path of a (``file_path``, ``pos``) table."""
    if rows.num_rows == 0:
        return {}
    encoded = rows.column("file_path").combine_chunks().dictionary_encode()
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    positions = rows.column("pos").to_numpy()
    order = np.lexsort((positions, codes))
    codes, positions = codes[order], positions[order]
    starts = np.concatenate(([0], np.flatnonzero(np.diff(codes)) + 1, [len(codes)]))
    names = encoded.dictionary.to_pylist()
    return {names[codes[start]]: np.unique(positions[start:end]) for start, end in itertools.pairwise(starts)}


def vector_target(path: str, spec_id: int, partition: tuple[Any, ...]) -> DataFile:
    """What a deletion vector needs of its data file: path, spec and partition (a position
    delete file only references data files of its own partition)."""
    return DataFile(
        file_path=path,
        file_format=FileFormat.PARQUET,
        record_count=0,
        file_size_in_bytes=0,
        partition=partition,
        spec_id=spec_id,
    )


def all_live_paths(io: FileIO, manifests: Iterable[ManifestFile]) -> set[str]:
    """The live data files of ``manifests``."""
    found: set[str] = set()
    for decoded in decoded_manifests(io, list(manifests)):
        live = decoded.live()
        paths = decoded.file_path
        found.update(p for p, ok in zip(paths, live.tolist()) if ok)
    return found
