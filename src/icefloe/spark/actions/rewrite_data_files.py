"""``rewrite_data_files`` on Spark: compaction of small files, files with deletes, sorting.

Small (or oversized) files, and files with deletes, are read with their deletes applied and
rewritten at ``write.target-file-size-bytes`` (bin-pack, or sorted by a sort order), one file
group per partition, committed through ``new_rewrite()`` with the starting snapshot's sequence
number (so equality deletes committed meanwhile still apply, as in Java's
``use-starting-sequence-number``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from icefloe.errors import CommitStateUnknownException, ValidationError
from icefloe.expressions import Expression, always_true, parse
from icefloe.scan import FileScanTask, plan_files
from icefloe.spark.actions.options import FileSizeOptions, int_option, true_option
from icefloe.spark.read.frames import read_tasks
from icefloe.spark.tables import resolve_table
from icefloe.spark.write.distribution import NO_DISTRIBUTION
from icefloe.spark.write.frames import write_data_frame
from icefloe.spec.properties import WRITE_TARGET_FILE_SIZE_BYTES, WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT
from icefloe.table.table import Table

__all__ = ["RewriteDataFilesResult", "rewrite_data_files"]


@dataclass
class RewriteDataFilesResult:
    """What :func:`rewrite_data_files` did (Java's ``RewriteDataFiles.Result``)."""

    rewritten_data_files_count: int = 0
    added_data_files_count: int = 0
    rewritten_bytes_count: int = 0
    removed_delete_files_count: int = 0
    commits: int = 0
    failed_groups: list[str] = field(default_factory=list)


def rewrite_data_files(
    spark: SparkSession,
    table: Table | str,
    *,
    strategy: str = "binpack",
    sort_by: Sequence[str] | None = None,
    where: Expression | str | None = None,
    options: dict[str, Any] | None = None,
    progress: Callable[[str], None] | None = None,
) -> RewriteDataFilesResult:
    """Compact a table's data files (Java's ``RewriteDataFiles`` action).

    Args:
        strategy: ``"binpack"`` or ``"sort"`` (by ``sort_by`` column names, else the table's
            sort order).
        where: only files that may hold rows matching this filter.
        options: Java's option names: ``target-file-size-bytes`` (default the table's
            ``write.target-file-size-bytes``), ``min-file-size-bytes`` (75% of target),
            ``max-file-size-bytes`` (180%), ``min-input-files`` (5), ``delete-file-threshold``
            (files with at least this many deletes are rewritten; default 1),
            ``rewrite-all`` (false), ``partial-progress.enabled`` (false: one commit),
            ``partial-progress.max-commits`` (10).
        progress: called with a line per group (for long runs).

    Returns:
        counts of what was rewritten; ``commits`` is 0 when nothing needed rewriting.
    """
    if strategy not in ("binpack", "sort"):
        raise ValidationError(f"unknown rewrite strategy '{strategy}'; expected 'binpack' or 'sort'")
    resolved = resolve_table(table)
    opts = dict(options or {})
    metadata = resolved.metadata
    action = "rewrite_data_files"
    sizes = FileSizeOptions.parse(
        opts,
        int(metadata.properties.get(WRITE_TARGET_FILE_SIZE_BYTES, WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT)),
        action=action,
    )
    target, min_size, max_size, min_inputs = sizes.target, sizes.min_size, sizes.max_size, sizes.min_inputs
    delete_threshold = int_option(opts, "delete-file-threshold", 1, action=action)
    rewrite_all = true_option(opts, "rewrite-all")
    partial = true_option(opts, "partial-progress.enabled")
    max_commits = int_option(opts, "partial-progress.max-commits", 10, action=action)
    result = RewriteDataFilesResult()

    snapshot = metadata.current_snapshot()
    if snapshot is None:
        return result
    row_filter = always_true() if where is None else (parse(where) if isinstance(where, str) else where)
    tasks = plan_files(resolved.io(), metadata, snapshot, row_filter, schema=metadata.schema())

    def needs_rewrite(task: FileScanTask) -> bool:
        size = task.file.file_size_in_bytes
        return rewrite_all or size < min_size or size > max_size or len(task.deletes) >= delete_threshold

    groups: dict[tuple[int, tuple[Any, ...]], list[FileScanTask]] = {}
    for task in tasks:
        if needs_rewrite(task):
            groups.setdefault((task.file.spec_id, tuple(task.file.partition)), []).append(task)
    selected = [
        g
        for g in groups.values()
        if rewrite_all
        or len(g) >= min_inputs
        or any(len(t.deletes) >= delete_threshold for t in g)
        or sum(t.file.file_size_in_bytes for t in g) > target
    ]
    if not selected:
        return result
    batches = _batches(selected, max_commits if partial else 1)
    rewritten = {t.file.file_path for group in selected for t in group}
    # Delete files attached only to rewritten files apply to nothing afterwards: the new files
    # are other paths (position deletes) and not older than them (equality deletes). Known
    # only when the plan saw every file (no ``where``).
    kept_deletes = {d.file_path for t in tasks if t.file.file_path not in rewritten for d in t.deletes}
    for number, batch in enumerate(batches, start=1):
        started = time.perf_counter()
        old = [t.file for group in batch for t in group]
        attached = {d.file_path: d for group in batch for t in group for d in t.deletes}
        outside = {d.file_path for group in selected if group not in batch for t in group for d in t.deletes}
        dangling = (
            [d for path, d in attached.items() if path not in kept_deletes and path not in outside]
            if where is None
            else []
        )
        frame = read_tasks(
            spark,
            metadata,
            resolved.io(),
            [t for group in batch for t in group],
            table_schema=metadata.schema(),
            projection=metadata.schema(),
        )
        total = sum(f.file_size_in_bytes for f in old)
        outputs = max(1, math.ceil(total / target))
        if strategy == "sort":
            order = [_sort_column(c) for c in (sort_by or _table_order(resolved))]
            if not order:
                raise ValidationError("sort strategy: no sort_by columns and the table has no sort order")
            # Range partitioning: the output files cover disjoint ranges of the sort key.
            frame = frame.repartitionByRange(outputs, *order).sortWithinPartitions(*order)
        else:
            frame = frame.repartition(outputs)
        files, cleanup = write_data_frame(frame, resolved, distribution=NO_DISTRIBUTION)
        try:
            rewrite = resolved.new_rewrite()
            rewrite.validate_from_snapshot(snapshot.snapshot_id)
            rewrite.rewrite_files(
                [*old, *dangling], list(files), data_sequence_number=snapshot.sequence_number
            )
            rewrite.commit()
        except CommitStateUnknownException:
            raise  # the snapshot may have landed: its files must stay
        except Exception as exc:
            cleanup(committed=())
            if not partial:
                raise
            result.failed_groups.append(f"commit {number}: {exc}")
            continue
        cleanup(committed=[f.file_path for f in files])
        result.commits += 1
        result.rewritten_data_files_count += len(old)
        result.added_data_files_count += len(files)
        result.rewritten_bytes_count += total
        result.removed_delete_files_count += len(dangling)
        if progress is not None:
            progress(
                f"rewrite {number}/{len(batches)}: {len(old)} files ({total / 1e6:.1f} MB) -> {len(files)} "
                f"in {time.perf_counter() - started:.1f}s"
            )
    return result


def _batches(groups: list[list[FileScanTask]], count: int) -> list[list[list[FileScanTask]]]:
    """The groups in at most ``count`` commits, of about equal size."""
    count = max(1, min(count, len(groups)))
    return [groups[i::count] for i in range(count)]


def _sort_column(text: str) -> Any:
    """``"ts"`` / ``"ts DESC"`` as a Spark sort column."""
    name, _, direction = text.strip().partition(" ")
    column = F.col(f"`{name}`")
    return (
        column.desc_nulls_last() if direction.strip().upper().startswith("DESC") else column.asc_nulls_first()
    )


def _table_order(table: Table) -> list[str]:
    """The table's sort order as ``"column [DESC]"`` strings (identity fields only)."""
    schema = table.schema()
    names = []
    for sort_field in table.sort_order().fields:
        name = schema.find_column_name(sort_field.source_id)
        if name is not None and sort_field.transform.is_identity:
            names.append(f"{name} {sort_field.direction.name}")
    return names
