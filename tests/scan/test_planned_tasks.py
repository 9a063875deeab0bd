"""Planned tasks whose files are built on first use, and manifests' compact file paths: they
behave as the plain FileScanTask and list of paths they stand for."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import numpy as np
import pytest

from icefloe import Table
from icefloe.scan import FileScanTask
from icefloe.scan._columnar import KeptFiles, PlannedFileScanTask
from icefloe.scan._columnar.paths import PathColumn


def test_planned_task_builds_its_manifests_files_once(events_v2: Table) -> None:
    tasks = events_v2.new_scan().plan_files()
    assert tasks and all(isinstance(t, PlannedFileScanTask) for t in tasks)
    slot = FileScanTask.__dict__["file"]
    assert all(type(slot.__get__(t)) is KeptFiles for t in tasks)  # nothing built by planning
    first = tasks[0]
    kept = slot.__get__(first)
    siblings = [t for t in tasks[1:] if slot.__get__(t) is kept]
    assert siblings  # a manifest of several files
    built = first.file
    assert built.file_path == first.file_path and first.length == built.file_size_in_bytes
    assert first.file is built  # kept in the slot
    # The other files of the same manifest were built in the same pass, and are the ones
    # their tasks hand out.
    files = kept.get()
    assert any(f is built for f in files)
    for task in siblings:
        assert any(task.file is f for f in files)
    assert len({f.file_path for f in files}) == len(files) == len(siblings) + 1


def test_planned_task_is_a_file_scan_task(events_v2: Table) -> None:
    task = events_v2.new_scan().plan_files()[1]
    assert type(task).__name__ == "FileScanTask" and repr(task).startswith("FileScanTask(file=DataFile(")
    restored = pickle.loads(pickle.dumps(task))
    assert type(restored) is FileScanTask
    assert [getattr(restored, f.name) for f in dataclasses.fields(FileScanTask)] == [
        getattr(task, f.name) for f in dataclasses.fields(FileScanTask)
    ]
    moved = dataclasses.replace(task, start=4, length=8)
    assert (moved.file, moved.start, moved.length) == (task.file, 4, 8)
    assert copy.copy(task).file is task.file
    with pytest.raises(dataclasses.FrozenInstanceError):
        task.file = task.file  # type: ignore[misc]


@pytest.mark.parametrize(
    "paths",
    [
        [],
        ["s3://b/t/data/a=1/f1.parquet", "s3://b/t/data/a=1/f2.parquet", "s3://b/t/data/a=2/f3.parquet"],
        ["/t/ünïcode/€1.parquet", "/t/ünïcode/€2.parquet", "/t/ünï/x"],
        ["same", "same"],
        ["a", "b"],
    ],
)
def test_path_column_is_the_list_it_stores(paths: list[str]) -> None:
    column = PathColumn.of(paths)
    assert column == paths and list(column) == paths and len(column) == len(paths)
    assert column.take(list(range(len(paths)))[::-1]) == paths[::-1]
    if paths:
        assert column[-1] == paths[-1] and column[1:] == paths[1:]
    restored = pickle.loads(pickle.dumps(column))
    assert restored == column and np.array_equal(restored.offsets, column.offsets)
