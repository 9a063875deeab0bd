"""Spark job plumbing shared by icefloe's Spark functions (private), on classic and Spark Connect
sessions alike: nothing here uses ``sparkContext``, accumulators, RDDs or job groups, which a
Connect session does not have.

- :func:`map_in_tasks` spreads a Python list over Spark tasks (what ``parallelize`` did): the
  items travel pickled in a DataFrame, each task runs a function on its share in
  ``mapInArrow``, the results come back pickled.
- :class:`JobOutput` keeps today's cleanup guarantee for jobs that write files: a failed job
  deletes every file it wrote. Tasks report their files in their output rows; when the job
  fails, the driver first writes an *abort marker*, then deletes every file named with the
  job's id (a listing: finished tasks' rows are lost with the failed job). A task that finishes
  after the listing checks the marker and deletes its own files (:meth:`JobOutput.seal`).
  After a successful job whose tasks were retried, files of lost attempts are found the same
  way.
- :func:`removed_unless_committed`: a failed commit deletes its files only when it surely did
  not land.
- :func:`task_error`: the icefloe error a task raised, rebuilt on the driver.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TypeVar

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as st
from pyspark.taskcontext import TaskContext

from icefloe import errors
from icefloe.errors import CommitStateUnknownException, IcefloeError
from icefloe.io import FileIO
from icefloe.io.locations import DefaultLocationProvider, metadata_location
from icefloe.spec.table_metadata import TableMetadata

__all__ = [
    "JobOutput",
    "TaskAttempt",
    "any_retried",
    "delete_paths",
    "frame_in_tasks",
    "map_in_tasks",
    "parallelism",
    "removed_unless_committed",
    "session_settings",
    "speculative",
    "tagged",
    "task_attempt",
    "task_error",
    "wait_until_gone",
]

T = TypeVar("T")
R = TypeVar("R")

# The last line of a Python worker's traceback when icefloe raised one of its errors there.
_TASK_ERROR = re.compile(r"^icefloe\.errors\.(?P<name>\w+): (?P<message>.*)$", re.MULTILINE)
_LOCAL = re.compile(r"local(?:\[(?P<n>\d+|\*)(?:,\s*\d+)?\])?$")
_LOCAL_CLUSTER = re.compile(r"local-cluster\[(?P<workers>\d+),\s*(?P<cores>\d+),\s*\d+\]$")
_ITEMS, _RESULTS = "items", "results"
_SETTINGS_LOCK = threading.Lock()
# (id(session), setting) -> (blocks holding it, the session's own value, or _UNCHANGED when the
# session already had the value the blocks want)
_UNCHANGED = "\0icefloe-unchanged"
_HELD_SETTINGS: dict[tuple[int, str], tuple[int, str | None]] = {}
# StructTypes rather than DDL text, which Spark Connect sends to the server to parse.
_RESULTS_SCHEMA = st.StructType([st.StructField(_RESULTS, st.BinaryType())])


def parallelism(spark: SparkSession) -> int:
    """How many tasks can run at once: ``spark.default.parallelism`` when set, else the cores of
    a local or local-cluster master, of the configured executors, or the shuffle partitions."""
    conf = spark.conf
    configured = conf.get("spark.default.parallelism", None)
    if configured:
        return max(1, int(configured))
    master = (conf.get("spark.master", None) or "").strip()
    local = _LOCAL.match(master)
    if local:
        n = local.group("n")
        return (os.cpu_count() or 1) if n in (None, "*") else max(1, int(n))
    cluster = _LOCAL_CLUSTER.match(master)
    if cluster:
        return int(cluster.group("workers")) * int(cluster.group("cores"))
    executors, cores = conf.get("spark.executor.instances", None), conf.get("spark.executor.cores", None)
    if executors and cores:
        return max(1, int(executors) * int(cores))
    return max(1, int(conf.get("spark.sql.shuffle.partitions", "200") or 200))


def map_in_tasks(
    spark: SparkSession,
    items: Sequence[T],
    fn: Callable[[list[T]], Iterable[R]],
    *,
    slices: int | None = None,
) -> list[R]:
    """``fn`` over ``items`` in at most ``slices`` Spark tasks (default: :func:`parallelism`),
    each task handed its share as a list; returns every result (in no particular order).

    Items and results travel pickled, as with ``parallelize``: keep them small (paths, manifest
    descriptions), and let ``fn`` close over what every task needs (a FileIO, metadata).
    """
    if not items:
        return []

    def run(share: list[T]) -> Iterator[pa.RecordBatch]:
        results = list(fn(share))
        yield pa.RecordBatch.from_arrays([pa.array([pickle.dumps(results)], pa.binary())], [_RESULTS])

    rows = frame_in_tasks(spark, items, run, _RESULTS_SCHEMA, slices=slices).toArrow()
    return [result for blob in rows.column(0).to_pylist() for result in pickle.loads(blob)]


def frame_in_tasks(
    spark: SparkSession,
    items: Sequence[T],
    fn: Callable[[list[T]], Iterable[pa.RecordBatch]],
    schema: str | st.StructType,
    *,
    slices: int | None = None,
) -> DataFrame:
    """A DataFrame (of ``schema``: a StructType saves Spark Connect a round trip to parse DDL
    text) of the batches ``fn`` makes from each task's share of
    ``items``, in at most ``slices`` tasks: the start of a distributed job over driver data."""
    count = max(1, min(len(items), slices or parallelism(spark)))
    shares = [list(items[i::count]) for i in range(count)]
    source = spark.createDataFrame(
        pa.table({_ITEMS: pa.array([pickle.dumps(share) for share in shares], pa.binary())})
    )

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for blob in batch.column(0).to_pylist():
                yield from fn(pickle.loads(blob))

    # Round-robin repartitioning of `count` rows into `count` partitions: one share per task.
    return source.repartition(count).mapInArrow(run, schema)


@contextlib.contextmanager
def session_settings(
    spark: SparkSession, settings: Mapping[str, str], *, unless_chosen: Mapping[str, str] | None = None
) -> Iterator[None]:
    """Set SQL ``settings`` on the session while the block runs, then restore the session's own.

    For settings Spark reads from the session when a job starts, not from a write's options
    or a DataFrame. Blocks overlapping in threads that share the session share each setting:
    the first one in sets it, the last one out restores it. ``unless_chosen`` maps settings to
    Spark's default: such a setting is left as it is when the session chose another value
    (judged on the session's own value, not one an overlapping block set).
    """
    defaults = unless_chosen or {}
    session = id(spark)
    with _SETTINGS_LOCK:
        current: dict[str, str] | None = None
        for name, value in settings.items():
            holders, before = _HELD_SETTINGS.get((session, name), (0, _UNCHANGED))
            if holders == 0:
                # One request for the session's values (each call is a round trip on Spark
                # Connect); a setting that already has the value is neither set nor restored.
                current = spark.conf.getAll if current is None else current
                before = current.get(name)
                if before == value or (name in defaults and before not in (None, defaults[name])):
                    before = _UNCHANGED
                else:
                    spark.conf.set(name, value)
            _HELD_SETTINGS[(session, name)] = (holders + 1, before)
    try:
        yield
    finally:
        with _SETTINGS_LOCK:
            for name in settings:
                holders, before = _HELD_SETTINGS.pop((session, name))
                if holders > 1:
                    _HELD_SETTINGS[(session, name)] = (holders - 1, before)
                elif before is _UNCHANGED:
                    continue
                elif before is None:
                    spark.conf.unset(name)
                else:
                    spark.conf.set(name, before)


@contextlib.contextmanager
def tagged(spark: SparkSession, kind: str) -> Iterator[str]:
    """Tag the jobs the block runs (``icefloe-<kind>-<uuid>``, visible in Spark's UI and
    cancellable with ``spark.interruptTag``); yields the tag."""
    tag = f"icefloe-{kind}-{uuid.uuid4()}"
    spark.addTag(tag)
    try:
        yield tag
    finally:
        spark.removeTag(tag)


class TaskAttempt:
    """Which task attempt runs (on an executor): its partition and attempt number, and the
    attempt's unique id that names its files."""

    def __init__(self) -> None:
        context = TaskContext.get()
        self.partition_id = context.partitionId() if context else 0
        self.attempt_number = context.attemptNumber() if context else 0
        self.attempt_id = context.taskAttemptId() if context else 0


def task_attempt() -> TaskAttempt:
    return TaskAttempt()


class JobOutput:
    """The files a Spark job writes for one table operation, and their cleanup.

    Files must be named with ``operation_id`` (``icefloe.write.file_name_prefix`` does). It
    pickles to the tasks, which call :meth:`seal` on what they wrote before reporting it.

    Args:
        io, metadata: the table's.
        operation_id: the id in every file name of the job.
    """

    def __init__(self, io: FileIO, metadata: TableMetadata, operation_id: str):
        self.io = io
        self.operation_id = operation_id
        self._location = metadata.location
        self._properties = dict(metadata.properties)
        self._data_location = DefaultLocationProvider.for_table(
            metadata.location, metadata.properties
        ).data_location

    @property
    def abort_marker(self) -> str:
        """A file whose existence tells late tasks the job failed. It lives with the metadata
        (not hidden), so ``remove_orphan_files`` removes it in time."""
        return metadata_location(
            self._location, self._properties, f"icefloe-aborted-{self.operation_id}.marker"
        )

    def seal(self, paths: Sequence[str]) -> None:
        """In a task, after writing ``paths``: when the job already failed, delete them and
        raise (the driver's cleanup may have listed the folders before they existed)."""
        if paths and self.io.exists(self.abort_marker):
            self.io.delete_quietly(list(paths))
            raise RuntimeError(f"job {self.operation_id} failed while this task ran; its files were removed")

    def fail(self, reported: Sequence[str] = ()) -> None:
        """After the job failed: mark it, then delete ``reported`` and every file named with
        the job's id, listing again until nothing new shows up for a few seconds. Tasks that
        finish late find the marker (:meth:`seal`); tasks Spark is killing may still create a
        file for a moment, and nothing (on Spark Connect) can wait for them to stop."""
        try:
            with self.io.new_output(self.abort_marker).create(overwrite=True) as stream:
                stream.write(b"aborted\n")
        except Exception:  # best effort: the listing below still runs
            pass
        delete_paths(self.io, sorted(set(reported)))

        def remove_listed() -> bool:
            found = self.listed()
            delete_paths(self.io, found)
            return bool(found)

        wait_until_gone(remove_listed)

    def keep_only(self, committed: Iterable[str], written: Sequence[str], *, retried: bool) -> None:
        """After the job succeeded: delete ``written`` files not in ``committed``, and, when
        tasks were retried (their lost attempts may have left files), every other file named
        with the job's id."""
        keep = set(committed)
        doomed = {p for p in written if p not in keep}
        if retried:
            doomed.update(p for p in self.listed() if p not in keep)
        delete_paths(self.io, sorted(doomed))

    def listed(self) -> list[str]:
        """The files under the table's data location named with the job's id (best effort: a
        listing that fails finds nothing)."""
        try:
            return [
                info.location
                for info in self.io.list_prefix(self._data_location)
                if self.operation_id in info.location.rsplit("/", 1)[-1]
            ]
        except Exception:  # a missing folder, a store that cannot list
            return []


def delete_paths(io: FileIO, paths: Sequence[str]) -> None:
    if paths:
        io.delete_quietly(list(paths))  # a path already gone (a failed task removed it) is fine


def wait_until_gone(remove: Callable[[], bool], *, quiet_s: float = 3.0, timeout_s: float = 60.0) -> None:
    """Call ``remove`` (returns whether it found something) until it has found nothing for
    ``quiet_s`` seconds: tasks Spark is killing after a failure may still write for a moment."""
    deadline = time.monotonic() + timeout_s
    quiet_since = time.monotonic()
    while time.monotonic() < deadline:
        if remove():
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= quiet_s:
            return
        time.sleep(0.25)


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


def any_retried(attempts: Iterable[int]) -> bool:
    """Whether any reporting task ran as a retry (attempt number above 0)."""
    return any(a > 0 for a in attempts)


def speculative(spark: SparkSession) -> bool:
    """Whether Spark may run a task twice at once (``spark.speculation``): the loser's files
    are not in any report."""
    return (spark.conf.get("spark.speculation", "false") or "false").strip().lower() == "true"
