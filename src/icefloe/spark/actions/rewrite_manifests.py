"""``rewrite_manifests`` on Spark (private; Java's ``RewriteManifestsSparkAction``).

The data manifests of the current snapshot (of one partition spec, optionally filtered) are
read in Spark tasks, their live entries range-partitioned by partition value into as many
Spark partitions as the manifests' total size asks for (``commit.manifest.target-size-bytes``),
and each Spark task writes its entries, sorted by partition, as EXISTING entries (snapshot id
and sequence numbers kept, written with no snapshot id of their own, as Java does) into new
manifests next to the table's metadata. The driver commits them through
``table.rewrite_manifests()`` (``delete_manifest`` / ``add_manifest``), which checks that the
new manifests hold exactly the live files of the replaced ones, and copies them where v1
tables need snapshot ids filled in. Delete manifests are never rewritten (as Java).
"""

from __future__ import annotations

import pickle
import time
import uuid
from collections.abc import Callable, Iterator

import pyarrow as pa
from pyspark.sql import SparkSession

from icefloe.io import FileIO, metadata_location
from icefloe.manifests import ManifestWriter, read_manifest
from icefloe.spark.jobs import frame_in_tasks, removed_unless_committed, tagged, task_attempt
from icefloe.spark.tables import resolve_table
from icefloe.spec.conversions import sortable_tuple
from icefloe.spec.manifest import ManifestContent, ManifestEntry, ManifestFile
from icefloe.spec.properties import (
    AVRO_COMPRESSION,
)
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.maintenance.manifest_compaction import plan_manifest_rewrite
from icefloe.table.maintenance.results import RewriteManifestsResult
from icefloe.table.table import Table

__all__ = ["RewriteManifestsResult", "rewrite_manifests"]


def rewrite_manifests(
    spark: SparkSession,
    table: Table | str,
    *,
    rewrite_if: Callable[[ManifestFile], bool] | None = None,
    spec_id: int | None = None,
    target_manifest_size_bytes: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> RewriteManifestsResult:
    """Rewrite the current snapshot's data manifests clustered by partition (a ``replace``
    snapshot; the table's rows do not change).

    Args:
        spark: the session.
        table: a :class:`Table` (updated to the commit) or an identifier.
        rewrite_if: only rewrite the data manifests it accepts (it runs on the driver).
        spec_id: the partition spec whose manifests are rewritten (default the table's
            current spec; manifests of other specs are kept, as Java).
        target_manifest_size_bytes: size of the new manifests (default the table's
            ``commit.manifest.target-size-bytes``, 8 MiB).
        progress: called with a line when done.

    Returns:
        the counts; zero when nothing needed rewriting (no matching manifest, or a single
        one that is not over the target size).

    Raises:
        ValidationError: an unknown spec id, a target size below 1.
        ValidationException: a manifest without file counts; the commit's checks.
    """
    resolved = resolve_table(table)
    metadata = resolved.metadata
    result = RewriteManifestsResult()
    io = resolved.io()
    plan = plan_manifest_rewrite(
        io,
        metadata,
        spec_id=spec_id,
        target_manifest_size_bytes=target_manifest_size_bytes,
        rewrite_if=rewrite_if,
    )
    if plan is None:
        return result
    matching, spec_id, outputs = plan.manifests, plan.spec_id, plan.outputs
    started = time.perf_counter()
    written = _write_manifests(spark, io, metadata, spec_id, matching, outputs)
    with removed_unless_committed(lambda: io.delete_quietly([m.manifest_path for m in written])):
        op = resolved.rewrite_manifests()
        for manifest in matching:
            op = op.delete_manifest(manifest)
        for manifest in written:
            op = op.add_manifest(manifest)
        op.commit()
    # A v1 table without snapshot id inheritance commits copies: ours are then unused.
    current = resolved.current_snapshot()
    used = {m.manifest_path for m in current.all_manifests(io)} if current is not None else set()
    io.delete_quietly([m.manifest_path for m in written if m.manifest_path not in used])
    result.rewritten_manifests_count = len(matching)
    result.added_manifests_count = len(written)
    if progress is not None:
        progress(
            f"rewrote {len(matching)} manifests into {len(written)} in {time.perf_counter() - started:.1f}s"
        )
    return result


def _write_manifests(
    spark: SparkSession,
    io: FileIO,
    metadata: TableMetadata,
    spec_id: int,
    manifests: list[ManifestFile],
    outputs: int,
) -> list[ManifestFile]:
    """Write the live entries of ``manifests`` into about ``outputs`` manifests, clustered by
    partition, in Spark tasks. Files written by a failed job are deleted."""
    spec = metadata.spec_by_id(spec_id)
    schema = metadata.schema()
    partition_type = spec.partition_type(schema)
    version = metadata.format_version
    codec = metadata.properties.get(AVRO_COMPRESSION, "gzip")
    prefix = f"optimized-m-{uuid.uuid4()}"
    location = metadata.location
    properties = dict(metadata.properties)

    def entries(part: list[ManifestFile]) -> Iterator[pa.RecordBatch]:
        keys, rows = [], []
        for manifest in part:
            for entry in read_manifest(io, manifest, partition_type=partition_type):
                if entry.is_live:
                    keys.append(sortable_tuple(partition_type, entry.data_file.partition))
                    rows.append(pickle.dumps(entry))
        if rows:
            yield pa.RecordBatch.from_arrays(
                [pa.array(keys, pa.binary()), pa.array(rows, pa.binary())], ["key", "entry"]
            )

    def write(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        rows = [pickle.loads(data) for batch in batches for data in batch.column(1).to_pylist()]
        if not rows:
            return
        path = metadata_location(location, properties, f"{prefix}-{task_attempt().partition_id}.avro")
        # A retried task (its executor was lost after the write) finds the file of the earlier
        # attempt: the name belongs to this job alone and nothing references it yet.
        io.delete_quietly([path])
        try:
            with ManifestWriter(
                io,
                path,
                spec=spec,
                schema=schema,
                format_version=version,
                snapshot_id=None,
                content=ManifestContent.DATA,
                codec=codec,
            ) as writer:
                for entry in rows:
                    _existing(writer, entry)
        except BaseException:
            io.delete_quietly([path])
            raise
        yield pa.RecordBatch.from_arrays(
            [pa.array([pickle.dumps(writer.to_manifest_file())], pa.binary())], ["manifest"]
        )

    keyed = frame_in_tasks(spark, manifests, entries, "key binary, entry binary")
    if spec.fields:
        # Range partitioning on the partition values (their order-preserving bytes): each
        # output manifest holds a contiguous range, so partition summaries prune well.
        clustered = keyed.repartitionByRange(outputs, "key").sortWithinPartitions("key")
    else:
        clustered = keyed.repartition(outputs)
    try:
        with tagged(spark, "rewrite-manifests"):
            rows = clustered.mapInArrow(write, "manifest binary").toArrow()
    except BaseException:
        # Tasks that finished wrote manifests nobody will commit: they have known names.
        io.delete_quietly(
            [metadata_location(location, properties, f"{prefix}-{i}.avro") for i in range(outputs)]
        )
        raise
    return [pickle.loads(blob) for blob in rows.column(0).to_pylist()]


def _existing(writer: ManifestWriter, entry: ManifestEntry) -> None:
    assert entry.snapshot_id is not None  # entries of committed manifests have one
    writer.existing(entry.data_file, entry.snapshot_id, entry.sequence_number, entry.file_sequence_number)
