"""Scan planning and reading: from a snapshot and a filter to tasks, and tasks to Arrow."""

from icefloe.scan.delete_index import DeleteFileIndex
from icefloe.scan.incremental import appends_between, plan_appended_files, resolve_range
from icefloe.scan.planning import plan_files, referenced_columns
from icefloe.scan.reading import EqualityDeletes, PositionDeletes, read_batches, task_row_count
from icefloe.scan.splitting import (
    CombinedScanTask,
    ScanTaskGroup,
    SplitOptions,
    merge_tasks,
    plan_task_groups,
    split_task,
)
from icefloe.scan.tasks import FileScanTask

__all__ = [
    "CombinedScanTask",
    "DeleteFileIndex",
    "EqualityDeletes",
    "FileScanTask",
    "PositionDeletes",
    "ScanTaskGroup",
    "SplitOptions",
    "appends_between",
    "merge_tasks",
    "plan_appended_files",
    "plan_files",
    "plan_task_groups",
    "read_batches",
    "referenced_columns",
    "resolve_range",
    "split_task",
    "task_row_count",
]
