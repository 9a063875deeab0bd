"""``rewrite_manifests`` without Spark: the table's own ``rewrite_manifests()`` operation,
clustering the data manifests' live entries by partition into manifests of the target size
(Java's ``RewriteManifestsSparkAction`` does the same in Spark tasks)."""

from __future__ import annotations

import time
from collections.abc import Callable

from icefloe.catalog.resolve import resolve_table
from icefloe.spec.manifest import ManifestFile
from icefloe.table.maintenance.manifest_compaction import plan_manifest_rewrite
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
    plan = plan_manifest_rewrite(
        resolved.io(),
        resolved.metadata,
        spec_id=spec_id,
        target_manifest_size_bytes=target_manifest_size_bytes,
        rewrite_if=rewrite_if,
    )
    result = RewriteManifestsResult()
    if plan is None:
        return result
    chosen = {m.manifest_path for m in plan.manifests}
    target = plan.target
    started = time.perf_counter()
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
    result.rewritten_manifests_count = int(summary.get("manifests-replaced", len(plan.manifests)))
    result.added_manifests_count = int(summary.get("manifests-created", 0))
    if progress is not None:
        progress(
            f"rewrote {result.rewritten_manifests_count} manifests into {result.added_manifests_count} "
            f"in {time.perf_counter() - started:.1f}s"
        )
    return result
