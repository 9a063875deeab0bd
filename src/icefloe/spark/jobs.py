"""Spark job plumbing shared by the writers (private): a job group to find a job's tasks,
waiting for the tasks Spark is killing after a failure before deleting what they wrote, and
deleting a failed commit's files only when the commit surely did not land."""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable, Iterator, Sequence

from pyspark import SparkContext

from icefloe import errors
from icefloe.errors import CommitStateUnknownException, IcefloeError
from icefloe.io import FileIO

__all__ = ["delete_paths", "job_group", "removed_unless_committed", "task_error", "wait_for_tasks"]

# The last line of a Python worker's traceback when icefloe raised one of its errors there.
_TASK_ERROR = re.compile(r"^icefloe\.errors\.(?P<name>\w+): (?P<message>.*)$", re.MULTILINE)


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


def task_error(exc: BaseException) -> IcefloeError | None:
    """The icefloe error a Spark task raised, rebuilt on the driver from the job's failure
    (``ValidationError: required column 'id' has 1 null value(s)`` rather than a
    ``PythonException`` with a worker traceback), or None when the job failed otherwise."""
    matches = list(_TASK_ERROR.finditer(str(exc)))
    if not matches:
        return None
    found = matches[-1]  # the error the task raised, not one it was handling
    kind = getattr(errors, found.group("name"), None)
    if not (isinstance(kind, type) and issubclass(kind, IcefloeError)):
        return None
    try:
        return kind(found.group("message"))
    except TypeError:  # an error class that takes other arguments
        return None
