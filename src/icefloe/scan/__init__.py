"""Scan planning and reading: from a snapshot and a filter to tasks, and tasks to Arrow."""

from icefloe.scan.changelog import (
    changelog_arrow_schema,
    changelog_snapshots,
    plan_changelog,
    read_changelog,
)
from icefloe.scan.delete_index import DeleteFileIndex
from icefloe.scan.incremental import appends_between, plan_appended_files, resolve_range
from icefloe.scan.planning import decoded_manifests, manifest_list, plan_files, referenced_columns
from icefloe.scan.reading import (
    EqualityDeletes,
    PositionDeletes,
    dictionary_field_ids,
    read_batches,
    task_row_count,
)
from icefloe.scan.splitting import (
    CombinedScanTask,
    ScanTaskGroup,
    SplitOptions,
    merge_tasks,
    plan_task_groups,
    split_task,
)
from icefloe.scan.tasks import (
    AddedRowsScanTask,
    ChangelogOperation,
    ChangelogScanTask,
    DeletedDataFileScanTask,
    DeletedRowsScanTask,
    FileScanTask,
)

__all__ = [
    "AddedRowsScanTask",
    "ChangelogOperation",
    "ChangelogScanTask",
    "CombinedScanTask",
    "DeleteFileIndex",
    "DeletedDataFileScanTask",
    "DeletedRowsScanTask",
    "EqualityDeletes",
    "FileScanTask",
    "PositionDeletes",
    "ScanTaskGroup",
    "SplitOptions",
    "appends_between",
    "changelog_arrow_schema",
    "changelog_snapshots",
    "decoded_manifests",
    "dictionary_field_ids",
    "manifest_list",
    "merge_tasks",
    "plan_appended_files",
    "plan_changelog",
    "plan_files",
    "plan_task_groups",
    "read_batches",
    "read_changelog",
    "referenced_columns",
    "resolve_range",
    "split_task",
    "task_row_count",
]
