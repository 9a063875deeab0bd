"""``rewrite_position_deletes`` on Spark (private; Java's ``RewritePositionDeleteFilesSparkAction``).

What is rewritten, and the commit, are ``table/maintenance/delete_compaction.py`` (shared with
``icefloe.actions``); here Spark tasks read the groups' delete files (with icefloe's reader,
through the table's FileIO), drop the dangling deletes with a join against the live data
files, and write the rest again, one or more files (or deletion vectors, v3) per partition.
"""

from __future__ import annotations

import math
import pickle
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import SparkSession

from icefloe.arrow.reader import read_position_deletes
from icefloe.expressions import Expression
from icefloe.io import FileIO
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
from icefloe.spec.manifest import DeleteFile, ManifestFile
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.maintenance.delete_compaction import (
    DeleteGroup,
    commit_delete_groups,
    grouped_positions,
    live_paths,
    plan_delete_groups,
    vector_target,
)
from icefloe.table.maintenance.options import RewritePositionDeletesOptions
from icefloe.table.maintenance.results import RewritePositionDeletesResult
from icefloe.table.table import Table
from icefloe.write.deletes import write_position_deletes
from icefloe.write.deletion_vectors import write_deletion_vectors
from icefloe.write.parquet import file_name_prefix

__all__ = ["RewritePositionDeletesResult", "rewrite_position_deletes"]


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
    metadata = resolved.metadata
    parsed = RewritePositionDeletesOptions.parse(options, metadata.properties)
    io = resolved.io()
    plan = plan_delete_groups(io, metadata, parsed, where)
    if plan is None:
        return RewritePositionDeletesResult()
    started = time.perf_counter()
    groups = plan.groups
    added, cleanup = _rewrite(
        spark, io, metadata, groups, plan.data_manifests, set(plan.with_vectors), plan.target, plan.to_vectors
    )
    with removed_unless_committed(lambda: cleanup(committed=())):
        result = commit_delete_groups(resolved, plan, added)
    cleanup(committed=[f.file_path for _, f in added])
    if progress is not None:
        progress(
            f"rewrote {result.rewritten_delete_files_count} position delete files in {len(groups)} partitions "
            f"into {len(added)} {'deletion vectors' if plan.to_vectors else 'files'} "
            f"in {time.perf_counter() - started:.1f}s"
        )
    return result


def _rewrite(
    spark: SparkSession,
    io: FileIO,
    metadata: TableMetadata,
    groups: list[DeleteGroup],
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
    inputs = [(g, f.file_path, f.key_metadata) for g, group in enumerate(groups) for f in group.files]
    skip = frozenset(with_vectors)

    def read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for index in batch.column(0).to_pylist():
                group, path, key_metadata = inputs[index]
                by_file = read_position_deletes(io, path, key_metadata=key_metadata)
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
                paths = live_paths(io, data_manifests[index])
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
                    by_file = grouped_positions(rows)
                    new = write_deletion_vectors(
                        io,
                        table_location=location,
                        properties=properties,
                        deletes=[(vector_target(p, spec_id, partition), v) for p, v in by_file.items()],
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
