"""``rewrite_position_deletes`` on Spark (private; Java's ``RewritePositionDeleteFilesSparkAction``).

Position delete files of the current snapshot are grouped per partition (spec and values);
in ``where``'s partitions, a group is rewritten when it has enough files outside the target
size range (Java's bin-pack options below). Spark tasks read the group's delete files (with
icefloe's reader, through the table's FileIO), drop the *dangling* deletes (those whose data
file is no longer live in the current snapshot), and write the rest again, sorted and
deduplicated, one or more files per partition. The driver commits through ``new_rewrite()``
(validated from the starting snapshot: a concurrent commit that removed one of the files
fails the rewrite); each new file keeps the highest data sequence number of the files it
replaces, so it applies to exactly the data files they applied to (Java does the same).

v3 tables: position delete files may not be added, and at most one deletion vector may
apply to a data file. As Java 1.9, every v2 position delete file (in ``where``'s partitions)
is rewritten into deletion vectors, one Puffin file per partition and task; deletes of a
data file that already has a deletion vector are dropped, since that vector holds them
(the spec requires a vector to include the position deletes that existed when it was added)
and readers ignore position files for such a data file. Existing deletion vectors are never
rewritten. A group with nothing left to write is just removed.

The deleted rows that a position delete file may store (its optional ``row`` column) are not
kept (Java keeps them).
"""

from __future__ import annotations

import itertools
import math
import pickle
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import SparkSession

from icefloe.arrow.reader import read_position_deletes
from icefloe.errors import ValidationError
from icefloe.expressions import AlwaysFalse, Expression, ResidualEvaluator, always_true, parse
from icefloe.io import FileIO
from icefloe.manifests import read_manifest
from icefloe.manifests.reader import manifest_records, read_manifest_bytes
from icefloe.spark.actions.options import FileSizeOptions, true_option
from icefloe.spark.jobs import (
    JobOutput,
    any_retried,
    parallelism,
    removed_unless_committed,
    speculative,
    tagged,
    task_attempt,
)
from icefloe.spark.tables import resolve_table
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
from icefloe.spec.properties import DELETE_TARGET_FILE_SIZE_BYTES, DELETE_TARGET_FILE_SIZE_BYTES_DEFAULT
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.table import Table
from icefloe.write.deletes import write_position_deletes
from icefloe.write.deletion_vectors import write_deletion_vectors
from icefloe.write.parquet import file_name_prefix

__all__ = ["RewritePositionDeletesResult", "rewrite_position_deletes"]

_OPTIONS = (
    "target-file-size-bytes",
    "min-file-size-bytes",
    "max-file-size-bytes",
    "min-input-files",
    "rewrite-all",
)
_DELETED = int(ManifestEntryStatus.DELETED)


@dataclass
class RewritePositionDeletesResult:
    """What :func:`rewrite_position_deletes` did (Java's ``RewritePositionDeleteFiles.Result``)."""

    rewritten_delete_files_count: int = 0
    added_delete_files_count: int = 0
    rewritten_bytes_count: int = 0
    added_bytes_count: int = 0


@dataclass(frozen=True, slots=True)
class _Group:
    spec_id: int
    partition: tuple[Any, ...]
    files: tuple[DeleteFile, ...]
    sequence_number: int  # the highest data sequence number of the files


def rewrite_position_deletes(
    spark: SparkSession,
    table: Table | str,
    *,
    where: Expression | str | None = None,
    options: dict[str, Any] | None = None,
    progress: Callable[[str], None] | None = None,
) -> RewritePositionDeletesResult:
    """Compact position delete files per partition and drop dangling deletes (v2); rewrite
    position delete files into deletion vectors (v3). See the module docstring.

    Args:
        spark: the session.
        table: a :class:`Table` (updated to the commit) or an identifier.
        where: only delete files in partitions that may hold rows matching this filter.
        options: Java's option names: ``target-file-size-bytes`` (default the table's
            ``write.delete.target-file-size-bytes``, 64 MiB), ``min-file-size-bytes`` (75% of
            target), ``max-file-size-bytes`` (180%), ``min-input-files`` (5), ``rewrite-all``
            (false). v3 tables rewrite every position delete file.
        progress: called with a line when done.

    Raises:
        ValidationError: an unknown or malformed option.
        ValidationException: a concurrent commit removed a file being rewritten.
    """
    resolved = resolve_table(table)
    opts = dict(options or {})
    unknown = sorted(set(opts) - set(_OPTIONS))
    if unknown:
        raise ValidationError(
            f"rewrite_position_deletes does not support the options {unknown}; expected {', '.join(_OPTIONS)}"
        )
    metadata = resolved.metadata
    result = RewritePositionDeletesResult()
    snapshot = metadata.current_snapshot()
    if snapshot is None or metadata.format_version < 2:
        return result  # v1 tables have no delete files
    sizes = FileSizeOptions.parse(
        opts,
        int(metadata.properties.get(DELETE_TARGET_FILE_SIZE_BYTES, DELETE_TARGET_FILE_SIZE_BYTES_DEFAULT)),
        action="rewrite_position_deletes",
    )
    target, min_size, max_size, min_inputs = sizes.target, sizes.min_size, sizes.max_size, sizes.min_inputs
    to_dvs = metadata.format_version >= 3
    rewrite_all = to_dvs or true_option(opts, "rewrite-all")
    row_filter = always_true() if where is None else (parse(where) if isinstance(where, str) else where)

    io = resolved.io()
    manifests = snapshot.all_manifests(io)
    position_files: list[tuple[DeleteFile, int]] = []
    with_vectors: set[str] = set()
    for manifest in manifests:
        if manifest.content != ManifestContent.DELETES:
            continue
        for entry in read_manifest(io, manifest, partition_type=_partition_type(metadata, manifest)):
            file = entry.data_file
            if not entry.is_live or file.content != FileContent.POSITION_DELETES:
                continue
            if file.file_format == FileFormat.PUFFIN:
                if file.referenced_data_file is not None:
                    with_vectors.add(file.referenced_data_file)
                continue
            assert entry.sequence_number is not None  # committed entries have one
            position_files.append((file, entry.sequence_number))  # type: ignore[arg-type]

    groups = _plan(metadata, position_files, row_filter, rewrite_all, target, min_size, max_size, min_inputs)
    if not groups:
        return result
    started = time.perf_counter()
    data_manifests = [m for m in manifests if m.content == ManifestContent.DATA]
    added, cleanup = _rewrite(spark, io, metadata, groups, data_manifests, with_vectors, target, to_dvs)
    with removed_unless_committed(lambda: cleanup(committed=())):
        rewrite = resolved.new_rewrite()
        rewrite.validate_from_snapshot(snapshot.snapshot_id)
        for group in groups:
            for file in group.files:
                rewrite.delete_file(file)
        for index, file in added:
            rewrite.add_file(file, groups[index].sequence_number)
        rewrite.commit()
    cleanup(committed=[f.file_path for _, f in added])
    result.rewritten_delete_files_count = sum(len(g.files) for g in groups)
    result.rewritten_bytes_count = sum(f.file_size_in_bytes for g in groups for f in g.files)
    result.added_delete_files_count = len(added)
    result.added_bytes_count = sum(_content_size(f) for _, f in added)
    if progress is not None:
        progress(
            f"rewrote {result.rewritten_delete_files_count} position delete files in {len(groups)} partitions "
            f"into {len(added)} {'deletion vectors' if to_dvs else 'files'} "
            f"in {time.perf_counter() - started:.1f}s"
        )
    return result


def _partition_type(metadata: TableMetadata, manifest: ManifestFile) -> Any:
    return metadata.spec_by_id(manifest.partition_spec_id).partition_type(metadata.schema())


def _content_size(file: DeleteFile) -> int:
    if file.file_format == FileFormat.PUFFIN and file.content_size_in_bytes is not None:
        return file.content_size_in_bytes
    return file.file_size_in_bytes


def _plan(
    metadata: TableMetadata,
    files: list[tuple[DeleteFile, int]],
    row_filter: Expression,
    rewrite_all: bool,
    target: int,
    min_size: int,
    max_size: int,
    min_inputs: int,
) -> list[_Group]:
    """The groups to rewrite: per partition, the files outside the size range (all of them
    with ``rewrite_all``), when they are enough files or enough bytes."""
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
                metadata.spec_by_id(file.spec_id), schema, row_filter
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
                _Group(
                    first.spec_id,
                    tuple(first.partition),
                    tuple(f for f, _ in members),
                    max(s for _, s in members),
                )
            )
    return groups


def _rewrite(
    spark: SparkSession,
    io: FileIO,
    metadata: TableMetadata,
    groups: list[_Group],
    data_manifests: list[ManifestFile],
    with_vectors: set[str],
    target: int,
    to_dvs: bool,
) -> tuple[list[tuple[int, DeleteFile]], Any]:
    """Write the groups' live deletes again in Spark tasks.

    Returns:
        (group index, new file) pairs, and ``cleanup(committed=paths)``, which deletes every
        file the job wrote that is not in ``committed``.

    Raises:
        Any error of the job, after deleting the files its finished tasks wrote.
    """
    parallel = parallelism(spark)
    inputs = [(g, f.file_path) for g, group in enumerate(groups) for f in group.files]
    skip = frozenset(with_vectors)

    def read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for index in batch.column(0).to_pylist():
                group, path = inputs[index]
                by_file = read_position_deletes(io, path)
                if skip:
                    by_file = {k: v for k, v in by_file.items() if k not in skip}
                if not by_file:
                    continue
                paths = list(by_file)
                counts = [len(by_file[p]) for p in paths]
                positions = np.concatenate([by_file[p] for p in paths])
                yield pa.RecordBatch.from_arrays(
                    [
                        pa.array(np.full(len(positions), group, np.int32)),
                        pa.array(np.repeat(np.array(paths, dtype=object), counts), pa.string()),
                        pa.array(positions, pa.int64()),
                    ],
                    names=["g", "file_path", "pos"],
                )

    def live(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for index in batch.column(0).to_pylist():
                paths = _live_paths(io, data_manifests[index])
                if paths:
                    yield pa.RecordBatch.from_arrays([pa.array(paths, pa.string())], names=["file_path"])

    operation_id = str(uuid.uuid4())
    location = metadata.location
    properties = dict(metadata.properties)
    schema = metadata.schema()
    specs = metadata.specs_by_id()
    sort_order = metadata.sort_order()
    job = JobOutput(io, metadata, operation_id)

    def write(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        task = task_attempt()
        partition_id, attempt = task.partition_id, task.attempt_id
        received = list(batches)
        if not received:
            return
        table = pa.Table.from_batches(received)
        files: list[tuple[int, DeleteFile]] = []
        for g in pc.unique(table.column("g")).to_pylist():
            group = groups[g]
            rows = table.filter(pc.equal(table.column("g"), g)).select(["file_path", "pos"])
            prefix = file_name_prefix(partition_id, attempt, f"{operation_id}-{g}")
            try:
                if to_dvs:
                    spec_id, partition = group.spec_id, group.partition
                    by_file = _grouped(rows)
                    new = write_deletion_vectors(
                        io,
                        table_location=location,
                        properties=properties,
                        deletes=[(_data_file(p, spec_id, partition), v) for p, v in by_file.items()],
                        file_name_prefix=prefix,
                    )
                else:
                    new = write_position_deletes(
                        io,
                        table_location=location,
                        properties=properties,
                        schema=schema,
                        spec=specs[group.spec_id],
                        deletes=rows,
                        partition=group.partition,
                        sort_order=sort_order,
                        file_name_prefix=prefix,
                        target_file_size_bytes=target,
                    )
            except BaseException:
                io.delete_quietly(sorted({f.file_path for _, f in files}))
                raise
            files.extend((g, f) for f in new)
        job.seal(sorted({f.file_path for _, f in files}))
        report = pickle.dumps((task.attempt_number, files))
        yield pa.RecordBatch.from_arrays([pa.array([report], pa.binary())], names=["files"])

    def indexes(count: int) -> Any:
        slices = max(1, min(count, parallel * 2))
        return spark.createDataFrame([(i,) for i in range(count)], "i int").repartition(slices)

    deletes = indexes(len(inputs)).mapInArrow(read, "g int, file_path string, pos long")
    if data_manifests:
        live_files = indexes(len(data_manifests)).mapInArrow(live, "file_path string")
        deletes = deletes.join(live_files, on="file_path", how="left_semi")
    else:
        deletes = deletes.limit(0)
    total = sum(f.file_size_in_bytes for g in groups for f in g.files)
    outputs = max(1, min(len(groups), max(parallel, math.ceil(total / max(target, 1)))))
    try:
        with tagged(spark, "rewrite-position-deletes"):
            rows = deletes.repartition(outputs, "g").mapInArrow(write, "files binary").collect()
    except BaseException:
        job.fail()  # as isp.write: every file named with this job's id goes
        raise
    reports: list[tuple[int, list[tuple[int, DeleteFile]]]] = [pickle.loads(row[0]) for row in rows]
    added = [pair for _, pairs in reports for pair in pairs]
    retried = any_retried(attempt for attempt, _ in reports) or speculative(spark)

    def cleanup(committed: Any) -> None:
        job.keep_only(committed, [f.file_path for _, f in added], retried=retried)

    return added, cleanup


def _live_paths(io: FileIO, manifest: ManifestFile) -> list[str]:
    """The paths of the live entries of a data manifest."""
    layout, blocks = manifest_records(read_manifest_bytes(io, manifest), manifest.manifest_path)
    n_status, n_file, n_path = layout.status, layout.data_file, layout.file_path
    return [record[n_file][n_path] for block in blocks for record in block if record[n_status] != _DELETED]


def _grouped(rows: pa.Table) -> dict[str, np.ndarray]:
    """Sorted, unique positions per data file path."""
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


def _data_file(path: str, spec_id: int, partition: tuple[Any, ...]) -> DataFile:
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
