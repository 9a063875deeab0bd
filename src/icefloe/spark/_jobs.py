"""Spark job plumbing shared by the writers (private): a job group to find a job's tasks,
waiting for the tasks Spark is killing after a failure before deleting what they wrote, and
deleting a failed commit's files only when the commit surely did not land."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence

from pyspark import SparkContext

from icefloe.errors import CommitStateUnknownException
from icefloe.io import FileIO

__all__ = ["delete_paths", "job_group", "removed_unless_committed", "wait_for_tasks"]


@contextlib.contextmanager
def job_group(context: SparkContext, group: str, description: str = "icefloe write") -> Iterator[str]:
    """Run the jobs of the block in job group ``group`` (the previous group restored after)."""
    keys = ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")
    before = {key: context.getLocalProperty(key) for key in keys}
    context.setJobGroup(group, description, interruptOnCancel=True)
    try:
        yield group
    finally:
        for key, value in before.items():
            context.setLocalProperty(key, value)  # type: ignore[arg-type]  # None unsets it


def wait_for_tasks(context: SparkContext, group: str, timeout: float = 120.0) -> None:
    """Wait (at most ``timeout`` seconds) until no task of the job group runs."""
    tracker = context.statusTracker()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        active = 0
        for job_id in tracker.getJobIdsForGroup(group):
            job = tracker.getJobInfo(job_id)
            for stage_id in job.stageIds if job is not None else ():
                stage = tracker.getStageInfo(stage_id)
                active += stage.numActiveTasks if stage is not None else 0
        if active == 0:
            return
        time.sleep(0.2)


def delete_paths(io: FileIO, paths: Sequence[str]) -> None:
    if paths:
        io.delete_quietly(paths)  # a path already gone (a failed task removed it) is fine


@contextlib.contextmanager
def removed_unless_committed(cleanup: Callable[[], object]) -> Iterator[None]:
    """Call ``cleanup`` (deleting the files written for a commit) when the commit in the block
    fails, then re-raise. Not when its outcome is unknown (``CommitStateUnknownException``, or
    an interrupt such as Ctrl-C mid-commit): the snapshot may have landed and reference the
    files, and deleting them would leave the table unreadable; they are orphans at worst."""
    try:
        yield
    except CommitStateUnknownException:
        raise
    except Exception:
        cleanup()
        raise
