"""What ``rewrite_data_files`` rewrites and how it commits, for both implementations (plain
Python in ``icefloe.actions``, Spark in ``icefloe.spark.actions``); they differ only in how
they turn a group of files into new files.

Planning (Java's ``SizeBasedFileRewriter`` / ``BinPackRewriteFilePlanner``): the current
snapshot is planned with the ``where`` filter; a file is a candidate when it is outside
[min, max] size, or has at least ``delete-file-threshold`` deletes, or ``rewrite-all``; the
candidates form one group per partition (spec and values); a group is rewritten when it has
``min-input-files`` candidates, or a file with enough deletes, or more bytes than the target
(or ``rewrite-all``). The groups go into one commit, or up to ``partial-progress.max-commits``.

Committing: each commit is a ``new_rewrite()`` validated from the starting snapshot, with the
starting snapshot's sequence number for the new files (Java's
``use-starting-sequence-number``: equality deletes committed meanwhile still apply to them).
Delete files that apply to nothing once the commit's files are gone are removed with them
(known only when the plan saw every file: no ``where``), as Java does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from icefloe.errors import CommitStateUnknownException
from icefloe.expressions import Expression
from icefloe.io import FileIO
from icefloe.scan import FileScanTask, plan_files
from icefloe.spec.manifest import DataFile, DeleteFile
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.maintenance.options import RewriteDataFilesOptions, row_filter
from icefloe.table.maintenance.results import RewriteDataFilesResult
from icefloe.table.snapshots.rewrite_files import RewriteFiles

__all__ = ["CompactionPlan", "FileGroup", "ProgressLine", "RewriteTarget", "commit_groups", "plan_compaction"]


class ProgressLine(str):
    """A progress message (a ``str``, so a ``print``-like callback works) that also says how
    far the action is: ``done`` of ``total`` units of ``step`` (files, groups, bytes ...)."""

    step: str
    done: int
    total: int

    def __new__(cls, text: str, *, step: str = "", done: int = 0, total: int = 0) -> ProgressLine:
        line = super().__new__(cls, text)
        line.step, line.done, line.total = step, done, total
        return line


@dataclass(frozen=True)
class FileGroup:
    """The files of one partition that are rewritten together."""

    spec_id: int
    partition: tuple[Any, ...]
    tasks: tuple[FileScanTask, ...]

    @property
    def files(self) -> list[DataFile]:
        return [t.file for t in self.tasks]

    @property
    def size(self) -> int:
        return sum(t.file.file_size_in_bytes for t in self.tasks)


@dataclass
class CompactionPlan:
    """The groups to rewrite, in commits, and what each commit may drop with them."""

    snapshot: Snapshot
    options: RewriteDataFilesOptions
    commits: list[list[FileGroup]]
    whole_table: bool  # the plan saw every file (no ``where``): dangling deletes are known
    _kept_deletes: set[str] = field(default_factory=set)  # deletes of files left alone

    @property
    def groups(self) -> list[FileGroup]:
        return [g for commit in self.commits for g in commit]

    def dangling(self, commit: list[FileGroup]) -> list[DeleteFile]:
        """Delete files attached only to files this commit rewrites: they apply to nothing
        afterwards (the new files are other paths, and not older than equality deletes)."""
        if not self.whole_table:
            return []
        outside = {d.file_path for g in self.groups if g not in commit for t in g.tasks for d in t.deletes}
        attached = {d.file_path: d for g in commit for t in g.tasks for d in t.deletes}
        return [d for path, d in attached.items() if path not in self._kept_deletes and path not in outside]


def plan_compaction(
    io: FileIO,
    metadata: TableMetadata,
    options: RewriteDataFilesOptions,
    where: Expression | str | None,
) -> CompactionPlan | None:
    """The compaction plan of the current snapshot (None: nothing to rewrite)."""
    snapshot = metadata.current_snapshot()
    if snapshot is None:
        return None
    sizes = options.sizes
    tasks = plan_files(io, metadata, snapshot, row_filter(where), schema=metadata.schema())

    def candidate(task: FileScanTask) -> bool:
        size = task.file.file_size_in_bytes
        return (
            options.rewrite_all
            or size < sizes.min_size
            or size > sizes.max_size
            or len(task.deletes) >= options.delete_threshold
        )

    by_partition: dict[tuple[int, tuple[Any, ...]], list[FileScanTask]] = {}
    for task in tasks:
        if candidate(task):
            by_partition.setdefault((task.file.spec_id, tuple(task.file.partition)), []).append(task)
    selected = [
        FileGroup(spec_id, partition, tuple(group))
        for (spec_id, partition), group in by_partition.items()
        if options.rewrite_all
        or len(group) >= sizes.min_inputs
        or any(len(t.deletes) >= options.delete_threshold for t in group)
        or sum(t.file.file_size_in_bytes for t in group) > sizes.target
    ]
    if not selected:
        return None
    count = max(1, min(options.max_commits if options.partial_progress else 1, len(selected)))
    commits = [selected[i::count] for i in range(count)]
    rewritten = {t.file.file_path for g in selected for t in g.tasks}
    kept = {d.file_path for t in tasks if t.file.file_path not in rewritten for d in t.deletes}
    return CompactionPlan(snapshot, options, commits, where is None, kept)


class RewriteTarget(Protocol):
    """What committing needs of a table."""

    def new_rewrite(self) -> RewriteFiles: ...


def commit_groups(
    table: RewriteTarget,
    plan: CompactionPlan,
    rewrite: Callable[[list[FileGroup]], tuple[list[DataFile], Callable[[Iterable[str]], None]]],
    *,
    progress: Callable[[str], None] | None = None,
) -> RewriteDataFilesResult:
    """Rewrite and commit each commit's groups: ``rewrite(groups)`` writes their new files and
    returns them with ``cleanup(committed_paths)``, which deletes what it wrote that is not
    committed. A failed commit raises, or with partial progress is recorded in
    ``failed_groups`` and the next commit goes on."""
    result = RewriteDataFilesResult()
    snapshot = plan.snapshot
    total = len(plan.groups)
    done = 0
    for number, commit in enumerate(plan.commits, start=1):
        old = [f for g in commit for f in g.files]
        dangling = plan.dangling(commit)
        try:
            files, cleanup = rewrite(commit)
        except Exception as exc:
            if not plan.options.partial_progress:
                raise
            result.failed_groups.append(f"commit {number}: {exc}")
            continue
        try:
            operation = table.new_rewrite()
            operation.validate_from_snapshot(snapshot.snapshot_id)
            operation.rewrite_files(
                [*old, *dangling], list(files), data_sequence_number=snapshot.sequence_number
            )
            operation.commit()
        except CommitStateUnknownException:
            raise  # the snapshot may have landed: its files must stay
        except Exception as exc:
            cleanup(())
            if not plan.options.partial_progress:
                raise
            result.failed_groups.append(f"commit {number}: {exc}")
            continue
        cleanup([f.file_path for f in files])
        done += len(commit)
        result.commits += 1
        result.rewritten_data_files_count += len(old)
        result.added_data_files_count += len(files)
        result.rewritten_bytes_count += sum(g.size for g in commit)
        result.removed_delete_files_count += len(dangling)
        if progress is not None:
            progress(
                ProgressLine(
                    f"commit {number}/{len(plan.commits)}: {len(old)} files -> {len(files)}",
                    step="groups",
                    done=done,
                    total=total,
                )
            )
    return result
