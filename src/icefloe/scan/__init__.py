"""Scan planning and reading: from a snapshot and a filter to tasks, and tasks to Arrow."""

from icefloe.scan.delete_index import DeleteFileIndex
from icefloe.scan.planning import plan_files, referenced_columns
from icefloe.scan.reading import read_batches, task_row_count
from icefloe.scan.tasks import FileScanTask

__all__ = [
    "DeleteFileIndex",
    "FileScanTask",
    "plan_files",
    "read_batches",
    "referenced_columns",
    "task_row_count",
]
