"""``rewrite_data_files`` on Spark: compaction of small files, files with deletes, sorting.

What is rewritten and how it commits are ``table/maintenance/compaction.py`` (shared with
``icefloe.actions``); here each commit's groups are read through ``read_tasks`` (deletes
applied) and written through ``write_data_frame``, bin-packed or range-partitioned and sorted.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from icefloe.errors import ValidationError
from icefloe.expressions import Expression
from icefloe.spark.read.frames import read_tasks
from icefloe.spark.tables import resolve_table
from icefloe.spark.write.distribution import NO_DISTRIBUTION
from icefloe.spark.write.frames import write_data_frame
from icefloe.spec.manifest import DataFile
from icefloe.table.maintenance.compaction import FileGroup, commit_groups, plan_compaction
from icefloe.table.maintenance.options import RewriteDataFilesOptions
from icefloe.table.maintenance.results import RewriteDataFilesResult
from icefloe.table.table import Table

__all__ = ["RewriteDataFilesResult", "rewrite_data_files"]


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
    resolved = resolve_table(table)
    metadata = resolved.metadata
    parsed = RewriteDataFilesOptions.parse(options, metadata.properties, strategy=strategy)
    plan = plan_compaction(resolved.io(), metadata, parsed, where)
    if plan is None:
        return RewriteDataFilesResult()
    order = []
    if strategy == "sort":
        order = [_sort_column(c) for c in (sort_by or _table_order(resolved))]
        if not order:
            raise ValidationError("sort strategy: no sort_by columns and the table has no sort order")
    target = parsed.sizes.target

    def rewrite(groups: list[FileGroup]) -> tuple[list[DataFile], Callable[[Iterable[str]], None]]:
        tasks = [t for g in groups for t in g.tasks]
        frame = read_tasks(
            spark,
            metadata,
            resolved.io(),
            tasks,
            table_schema=metadata.schema(),
            projection=metadata.schema(),
        )
        outputs = max(1, math.ceil(sum(g.size for g in groups) / target))
        if order:
            # Range partitioning: the output files cover disjoint ranges of the sort key.
            frame = frame.repartitionByRange(outputs, *order).sortWithinPartitions(*order)
        else:
            frame = frame.repartition(outputs)
        files, cleanup = write_data_frame(frame, resolved, distribution=NO_DISTRIBUTION)
        return list(files), lambda committed: cleanup(committed=list(committed))

    return commit_groups(resolved, plan, rewrite, progress=progress)


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
