"""``rewrite_position_deletes`` without Spark: compact position delete files per partition and
drop dangling deletes (v2), rewrite them into deletion vectors (v3).

What is rewritten and the commit are ``table/maintenance/delete_compaction.py`` (shared with
``icefloe.spark.actions``). Here each group is a piece of work on a thread: its delete files
are read, deletes of data files no longer live (or, v3, of data files that have a vector
already) are dropped, and the rest is written again as position delete files or deletion
vectors of that partition.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from icefloe.actions._workers import default_workers, run_all
from icefloe.arrow.reader import read_position_deletes
from icefloe.catalog.resolve import resolve_table
from icefloe.errors import CommitStateUnknownException
from icefloe.expressions import Expression
from icefloe.spec.manifest import DeleteFile
from icefloe.table.maintenance.compaction import ProgressLine
from icefloe.table.maintenance.delete_compaction import (
    DeleteGroup,
    all_live_paths,
    commit_delete_groups,
    plan_delete_groups,
    vector_target,
)
from icefloe.table.maintenance.options import RewritePositionDeletesOptions
from icefloe.table.maintenance.results import RewritePositionDeletesResult
from icefloe.table.table import Table
from icefloe.write.deletes import write_position_deletes
from icefloe.write.deletion_vectors import write_deletion_vectors

__all__ = ["rewrite_position_deletes"]


def rewrite_position_deletes(
    table: Table | str,
    *,
    where: Expression | str | None = None,
    options: dict[str, Any] | None = None,
    progress: Callable[[str], None] | None = None,
    max_workers: int | None = None,
) -> RewritePositionDeletesResult:
    """Compact position delete files per partition and drop dangling deletes (v2); rewrite
    position delete files into deletion vectors (v3). The same arguments, options and result
    as ``icefloe.spark.actions.rewrite_position_deletes``.

    Args:
        table: a :class:`Table` (updated to the commit) or an identifier.
        where: only delete files in partitions that may hold rows matching this filter.
        options: ``target-file-size-bytes`` (default the table's
            ``write.delete.target-file-size-bytes``), ``min-file-size-bytes``,
            ``max-file-size-bytes``, ``min-input-files``, ``rewrite-all``.
        progress: called with a :class:`ProgressLine` per rewritten partition.
        max_workers: threads (default one per core).

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
    workers = default_workers(max_workers)
    live = all_live_paths(io, plan.data_manifests)
    specs = metadata.specs_by_id()

    def write(index: int) -> list[DeleteFile]:
        group: DeleteGroup = plan.groups[index]
        positions: dict[str, list[np.ndarray]] = {}
        for delete in group.files:
            for path, found in read_position_deletes(io, delete.file_path).items():
                if path in live and path not in plan.with_vectors:
                    positions.setdefault(path, []).append(found)
        merged = {path: np.unique(np.concatenate(arrays)) for path, arrays in positions.items()}
        if not merged:
            return []
        if plan.to_vectors:
            return write_deletion_vectors(
                io,
                table_location=metadata.location,
                properties=metadata.properties,
                deletes=[(vector_target(p, group.spec_id, group.partition), v) for p, v in merged.items()],
            )
        return write_position_deletes(
            io,
            table_location=metadata.location,
            properties=metadata.properties,
            schema=metadata.schema(),
            spec=specs[group.spec_id],
            deletes=merged,
            partition=group.partition,
            sort_order=metadata.sort_order(),
            target_file_size_bytes=plan.target,
        )

    added: list[tuple[int, DeleteFile]] = []
    try:
        for done, (index, files) in enumerate(run_all(write, range(len(plan.groups)), workers), start=1):
            added.extend((index, f) for f in files)
            if progress is not None:
                progress(
                    ProgressLine(
                        f"rewrote {len(plan.groups[index].files)} delete files of a partition into {len(files)}",
                        step="partitions",
                        done=done,
                        total=len(plan.groups),
                    )
                )
        return commit_delete_groups(resolved, plan, added)
    except CommitStateUnknownException:
        raise  # the commit may have landed: its files must stay
    except BaseException:
        io.delete_quietly([f.file_path for _, f in added])
        raise
