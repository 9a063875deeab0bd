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
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from pyspark.sql import SparkSession

from icefloe.io import FileIO, metadata_location
from icefloe.manifests import ManifestWriter, read_manifest
from icefloe.spark.jobs import removed_unless_committed
from icefloe.spark.tables import resolve_table
from icefloe.spec.manifest import ManifestContent, ManifestEntry, ManifestFile
from icefloe.spec.properties import (
    AVRO_COMPRESSION,
)
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.maintenance.manifest_compaction import plan_manifest_rewrite
from icefloe.table.maintenance.results import RewriteManifestsResult
from icefloe.table.maintenance.rewrite_manifests import partition_order
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
    context = spark.sparkContext

    def entries(part: Iterable[ManifestFile]) -> Iterator[tuple[Any, bytes]]:
        for manifest in part:
            for entry in read_manifest(io, manifest, partition_type=partition_type):
                if entry.is_live:
                    yield partition_order(entry.data_file.partition), pickle.dumps(entry)

    def write(index: int, part: Iterable[tuple[Any, bytes]]) -> Iterator[bytes]:
        rows = [pickle.loads(data) for _, data in part]
        if not rows:
            return
        path = metadata_location(location, properties, f"{prefix}-{index}.avro")
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
        yield pickle.dumps(writer.to_manifest_file())

    source = context.parallelize(manifests, max(1, min(len(manifests), context.defaultParallelism)))
    keyed = source.mapPartitions(entries)
    if spec.fields:
        # Range partitioning on the partition values: each output holds a contiguous range.
        clustered = keyed.sortBy(lambda row: row[0], numPartitions=outputs)
    else:
        clustered = keyed.repartition(outputs)
    try:
        rows = clustered.mapPartitionsWithIndex(write).collect()
    except BaseException:
        # Tasks that finished wrote manifests nobody will commit: they have known names.
        io.delete_quietly(
            [metadata_location(location, properties, f"{prefix}-{i}.avro") for i in range(outputs)]
        )
        raise
    return [pickle.loads(row) for row in rows]


def _existing(writer: ManifestWriter, entry: ManifestEntry) -> None:
    assert entry.snapshot_id is not None  # entries of committed manifests have one
    writer.existing(entry.data_file, entry.snapshot_id, entry.sequence_number, entry.file_sequence_number)
