"""``rewrite_data_files`` without Spark: compaction of small files, files with deletes, sorting.

What is rewritten and how it commits are ``table/maintenance/compaction.py`` (shared with
``icefloe.spark.actions``). Here each group is cut into bins of about the target file size
(by the bytes of its input files), and each bin is read with its deletes applied (icefloe's
Arrow reader) and written as new data files (icefloe's Parquet writer), streamed, a bin per
thread on every core. The ``sort`` strategy keeps a group whole, sorts it and writes it as
files covering disjoint ranges of the sort key (the group is held in memory while sorted).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from icefloe.actions._workers import default_workers, run_all
from icefloe.catalog.resolve import resolve_table
from icefloe.errors import ValidationError
from icefloe.expressions import Expression
from icefloe.scan import FileScanTask, PositionDeletes, read_batches
from icefloe.spec.manifest import DataFile
from icefloe.spec.sorting import SortOrder, build_sort_order
from icefloe.table.maintenance.compaction import FileGroup, ProgressLine, commit_groups, plan_compaction
from icefloe.table.maintenance.options import RewriteDataFilesOptions
from icefloe.table.maintenance.results import RewriteDataFilesResult
from icefloe.table.table import Table
from icefloe.write import write_data_files

__all__ = ["rewrite_data_files"]


def rewrite_data_files(
    table: Table | str,
    *,
    strategy: str = "binpack",
    sort_by: Sequence[str] | None = None,
    where: Expression | str | None = None,
    options: dict[str, Any] | None = None,
    progress: Callable[[str], None] | None = None,
    max_workers: int | None = None,
) -> RewriteDataFilesResult:
    """Compact a table's data files (Java's ``RewriteDataFiles``), without Spark.

    The same arguments, options and result as ``icefloe.spark.actions.rewrite_data_files``.

    Args:
        table: a :class:`Table` (updated to the commits) or an identifier.
        strategy: ``"binpack"`` or ``"sort"`` (by ``sort_by``, strings like ``"ts DESC"``,
            else the table's sort order).
        where: only files that may hold rows matching this filter.
        options: Java's option names: ``target-file-size-bytes`` (default the table's
            ``write.target-file-size-bytes``), ``min-file-size-bytes`` (75% of target),
            ``max-file-size-bytes`` (180%), ``min-input-files`` (5), ``delete-file-threshold``
            (1), ``rewrite-all`` (false), ``partial-progress.enabled`` (false: one commit),
            ``partial-progress.max-commits`` (10).
        progress: called with a :class:`ProgressLine` (a ``str`` that also carries ``done``
            and ``total`` bytes) per rewritten bin and per commit.
        max_workers: threads (default one per core).

    Returns:
        counts of what was rewritten; ``commits`` is 0 when nothing needed rewriting.

    Raises:
        ValidationError: an unknown strategy, a malformed option, a sort without an order.
        ValidationException: a concurrent commit conflicts (without partial progress).
    """
    resolved = resolve_table(table)
    metadata = resolved.metadata
    parsed = RewriteDataFilesOptions.parse(options, metadata.properties, strategy=strategy)
    workers = default_workers(max_workers)
    order = None
    if strategy == "sort":
        order = _sort_order(resolved, sort_by)
        if order.is_unsorted:
            raise ValidationError("sort strategy: no sort_by columns and the table has no sort order")
    plan = plan_compaction(resolved.io(), metadata, parsed, where)
    if plan is None:
        return RewriteDataFilesResult()
    target = parsed.sizes.target
    total = sum(g.size for g in plan.groups)
    done = 0

    def write(unit: tuple[FileGroup, list[FileScanTask]]) -> list[DataFile]:
        group, tasks = unit
        io = resolved.io()
        schema = metadata.schema()
        batches = read_batches(io, metadata, tasks, schema, deletes=PositionDeletes(io, metadata))
        same_spec = group.spec_id == metadata.default_spec_id
        files = write_data_files(
            io,
            table_location=metadata.location,
            properties=metadata.properties,
            schema=schema,
            spec=metadata.spec(),
            data=(batch for batch in batches if batch.num_rows),
            sort_order=order,
            partition=group.partition if same_spec else None,
            target_file_size_bytes=target,
        )
        if order is not None and order.order_id not in metadata.sort_orders_by_id():
            # Sorted by an order the table does not have: no sort order id to record.
            files = [dataclasses.replace(f, sort_order_id=None) for f in files]
        return files

    def rewrite(groups: list[FileGroup]) -> tuple[list[DataFile], Callable[[Iterable[str]], None]]:
        nonlocal done
        units = [(g, bin_) for g in groups for bin_ in _bins(g, target, whole=order is not None)]
        written: list[DataFile] = []
        try:
            for (_, tasks), files in run_all(write, units, workers):
                written.extend(files)
                done += sum(t.file.file_size_in_bytes for t in tasks)
                if progress is not None:
                    progress(
                        ProgressLine(
                            f"rewrote {len(tasks)} files into {len(files)}",
                            step="bytes",
                            done=done,
                            total=total,
                        )
                    )
        except BaseException:
            resolved.io().delete_quietly([f.file_path for f in written])
            raise

        def cleanup(committed: Iterable[str]) -> None:
            keep = set(committed)
            resolved.io().delete_quietly([f.file_path for f in written if f.file_path not in keep])

        return written, cleanup

    return commit_groups(resolved, plan, rewrite, progress=progress)


def _bins(group: FileGroup, target: int, *, whole: bool) -> list[list[FileScanTask]]:
    """The group's tasks in bins of about ``target`` input bytes (one bin when ``whole``)."""
    if whole:
        return [list(group.tasks)]
    bins: list[list[FileScanTask]] = []
    current: list[FileScanTask] = []
    size = 0
    for task in sorted(group.tasks, key=lambda t: -t.file.file_size_in_bytes):
        if current and size + task.file.file_size_in_bytes > target:
            bins.append(current)
            current, size = [], 0
        current.append(task)
        size += task.file.file_size_in_bytes
    if current:
        bins.append(current)
    return bins


def _sort_order(table: Table, sort_by: Sequence[str] | None) -> SortOrder:
    """The order of the sort strategy: ``sort_by`` (the table's order of the same fields when
    it has one, so files record its id), else the table's order."""
    if not sort_by:
        return table.sort_order()
    wanted = build_sort_order(table.schema(), list(sort_by), order_id=-1)
    for existing in table.sort_orders().values():
        if existing.same_order(wanted):
            return existing
    return wanted
