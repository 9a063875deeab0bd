"""``rewrite_manifests`` without Spark: the table's own ``rewrite_manifests()`` operation,
clustering the data manifests' live entries by partition into manifests of the target size
(Java's ``RewriteManifestsSparkAction`` does the same in Spark tasks)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from icefloe.catalog.resolve import resolve_table
from icefloe.errors import ValidationError, ValidationException
from icefloe.scan import manifest_list
from icefloe.spec.manifest import ManifestContent, ManifestFile
from icefloe.spec.properties import (
    MANIFEST_TARGET_SIZE_BYTES,
    MANIFEST_TARGET_SIZE_BYTES_DEFAULT,
    int_property,
)
from icefloe.table.maintenance.results import RewriteManifestsResult
from icefloe.table.table import Table

__all__ = ["rewrite_manifests"]


def rewrite_manifests(
    table: Table | str,
    *,
    rewrite_if: Callable[[ManifestFile], bool] | None = None,
    spec_id: int | None = None,
    target_manifest_size_bytes: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> RewriteManifestsResult:
    """Rewrite the current snapshot's data manifests of one spec clustered by partition (a
    ``replace`` snapshot; the table's rows do not change). The same arguments and result as
    ``icefloe.spark.actions.rewrite_manifests``: nothing is done when no manifest matches, or
    a single one is not over the target size.

    Raises:
        ValidationError: an unknown spec id, a target size below 1.
        ValidationException: a manifest without file counts; the commit's checks.
    """
    resolved = resolve_table(table)
    metadata = resolved.metadata
    result = RewriteManifestsResult()
    snapshot = metadata.current_snapshot()
    if snapshot is None:
        return result
    spec_id = metadata.default_spec_id if spec_id is None else spec_id
    if spec_id not in metadata.specs_by_id():
        raise ValidationError(f"rewrite_manifests: the table has no partition spec {spec_id}")
    target = (
        int_property(metadata.properties, MANIFEST_TARGET_SIZE_BYTES, MANIFEST_TARGET_SIZE_BYTES_DEFAULT)
        if target_manifest_size_bytes is None
        else target_manifest_size_bytes
    )
    if not isinstance(target, int) or target < 1:
        raise ValidationError(f"target_manifest_size_bytes must be a positive int, not {target!r}")
    io = resolved.io()

    def selected(m: ManifestFile) -> bool:
        return (
            m.content == ManifestContent.DATA
            and m.partition_spec_id == spec_id
            and (rewrite_if is None or rewrite_if(m))
        )

    matching = [m for m in manifest_list(io, snapshot) if selected(m)]
    if not matching:
        return result
    for manifest in matching:
        if manifest.added_files_count is None or manifest.existing_files_count is None:
            raise ValidationException(f"No file counts in manifest: {manifest.manifest_path}")
    if len(matching) == 1 and math.ceil(matching[0].manifest_length / target) <= 1:
        return result
    started = time.perf_counter()
    chosen = {m.manifest_path for m in matching}
    # One cluster of every entry, in partition order, cut at the target size: a few large
    # manifests each covering a narrow range of partitions (as the Spark action writes them).
    (
        resolved.rewrite_manifests()
        .rewrite_if(lambda m: m.manifest_path in chosen)
        .cluster_by(lambda f: 0)
        .sort_by_partition()
        .target_manifest_size_bytes(target)
        .commit()
    )
    current = resolved.current_snapshot()
    summary = current.summary if current is not None else {}
    result.rewritten_manifests_count = int(summary.get("manifests-replaced", len(matching)))
    result.added_manifests_count = int(summary.get("manifests-created", 0))
    if progress is not None:
        progress(
            f"rewrote {result.rewritten_manifests_count} manifests into {result.added_manifests_count} "
            f"in {time.perf_counter() - started:.1f}s"
        )
    return result
