"""The file cleanup of snapshot expiration (Java's ``ReachableFileCleanup``).

After a commit removed snapshots, the files only those snapshots reached can go: their manifest
lists, the manifests no retained snapshot lists, the data and delete files that such a
manifest holds live and that no retained snapshot holds live, and the statistics files of the
expired snapshots. The rule is reachability, so it never deletes a file that a retained
snapshot reads, whatever the history looks like (branches, tags, rollbacks, cherry-picks,
manifests shared by many snapshots, a file re-added after it was deleted).

Failure policy (as Java): reading or deleting is best effort, and nothing here raises. A
failure is logged and makes the cleanup delete *less*, never more:

- an expired snapshot whose manifest list cannot be read contributes only that list;
- when the manifests of the retained snapshots cannot all be listed, no manifest and no
  content file is deleted (what they reach is unknown);
- when the live files of the retained manifests cannot all be read, no content file is
  deleted;
- an expired manifest whose entries cannot be read is kept (its files would otherwise become
  unfindable orphans), unless the manifest file is already gone.

Deletion runs in phases, content files first, then manifests, then manifest lists, then
statistics files: a crash between two files leaves orphans, never a table that points at a
missing file (the retained snapshots reference none of them, and the commit that expired the
snapshots is already durable).
"""

from __future__ import annotations

import logging
import posixpath
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from enum import Enum
from typing import TypeVar

from icefloe.errors import NoSuchFileError, ValidationError
from icefloe.io import FileIO, local_path, split_scheme
from icefloe.manifests.reader import manifest_records, read_manifest_bytes
from icefloe.spec.manifest import FileContent, ManifestContent, ManifestEntryStatus, ManifestFile
from icefloe.spec.snapshots import Snapshot

__all__ = ["DeleteSummary", "DeletedFileType", "clean_expired_files", "delete_files", "file_identity"]

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

#: Threads reading manifest lists and manifests when the caller gives no executor.
PLAN_THREADS = 8
#: Threads deleting files through the FileIO when the caller gives no executor.
DELETE_THREADS = 16
#: Attempts per file deletion (Java: 3), with a short backoff between them.
DELETE_ATTEMPTS = 3
_RETRY_WAIT_S = 0.05

_DELETED = int(ManifestEntryStatus.DELETED)


class DeletedFileType(Enum):
    """The kinds of file the cleanup deletes (Java's ``FileCleanupStrategy.DeletedFileType``)."""

    DATA = "data"
    POSITION_DELETES = "position delete"
    EQUALITY_DELETES = "equality delete"
    MANIFEST = "manifest"
    MANIFEST_LIST = "manifest list"
    STATISTICS_FILES = "statistics file"

    @classmethod
    def of_content(cls, content: int) -> DeletedFileType:
        if content == FileContent.POSITION_DELETES:
            return cls.POSITION_DELETES
        if content == FileContent.EQUALITY_DELETES:
            return cls.EQUALITY_DELETES
        return cls.DATA


@dataclass(frozen=True, slots=True)
class DeleteSummary:
    """What one cleanup deleted, per kind of file, and what it could not delete.

    A file that was already gone counts as deleted. ``failed`` lists the files whose deletion
    failed (after retries); ``complete`` is False when the cleanup knowingly left files behind
    (a failed deletion, or a read failure that made it keep files it could not judge).
    """

    data_files: int = 0
    position_delete_files: int = 0
    equality_delete_files: int = 0
    manifests: int = 0
    manifest_lists: int = 0
    statistics_files: int = 0
    failed: tuple[str, ...] = ()
    complete: bool = True

    @property
    def total(self) -> int:
        """Files deleted, all kinds together."""
        return (
            self.data_files
            + self.position_delete_files
            + self.equality_delete_files
            + self.manifests
            + self.manifest_lists
            + self.statistics_files
        )


class _Tally:
    """DeleteSummary under construction, shared by the deleting threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counts = dict.fromkeys(DeletedFileType, 0)
        self.failed: list[str] = []
        self.complete = True

    def deleted(self, kind: DeletedFileType) -> None:
        with self._lock:
            self.counts[kind] += 1

    def failure(self, path: str) -> None:
        with self._lock:
            self.failed.append(path)
            self.complete = False

    def summary(self) -> DeleteSummary:
        c = self.counts
        return DeleteSummary(
            data_files=c[DeletedFileType.DATA],
            position_delete_files=c[DeletedFileType.POSITION_DELETES],
            equality_delete_files=c[DeletedFileType.EQUALITY_DELETES],
            manifests=c[DeletedFileType.MANIFEST],
            manifest_lists=c[DeletedFileType.MANIFEST_LIST],
            statistics_files=c[DeletedFileType.STATISTICS_FILES],
            failed=tuple(sorted(self.failed)),
            complete=self.complete,
        )


def clean_expired_files(
    io: FileIO,
    expired: Sequence[Snapshot],
    retained: Sequence[Snapshot],
    statistics_files: Iterable[str],
    *,
    delete: Callable[[str], None] | None = None,
    delete_executor: Executor | None = None,
    plan_executor: Executor | None = None,
    content_files: bool = True,
) -> DeleteSummary:
    """Delete the files that only ``expired`` snapshots reach. Never raises (see the module
    docstring for what a failure leaves behind).

    Args:
        io: reads manifest lists and manifests; deletes when ``delete`` is None.
        expired: the snapshots the commit removed.
        retained: every snapshot of the table after the commit (re-read from the catalog).
        statistics_files: statistics and partition statistics files of the expired snapshots
            that the table no longer lists.
        delete: deletes one file; default ``io.delete``. Its failures are retried, then logged.
        delete_executor: runs the deletions. Default: a thread pool when deleting through
            ``io``, the calling thread when ``delete`` is given (a caller's function need not
            be thread-safe; Java's default is the calling thread).
        plan_executor: reads manifest lists and manifests; default: a thread pool.
        content_files: False keeps data and delete files (manifests, manifest lists and
            statistics files still go).
    """
    tally = _Tally()
    try:
        _clean(
            io,
            expired,
            retained,
            statistics_files,
            delete,
            delete_executor,
            plan_executor,
            content_files,
            tally,
        )
    except Exception:  # the commit is done: a cleanup problem must not turn it into a failure
        log.warning("cleanup of expired snapshot files stopped early", exc_info=True)
        tally.complete = False
    return tally.summary()


def delete_files(
    io: FileIO,
    paths: Sequence[str],
    *,
    executor: Executor | None = None,
    kind: DeletedFileType = DeletedFileType.DATA,
) -> list[str]:
    """Delete ``paths`` through ``io`` on threads (or ``executor``), each retried as the
    cleanup retries; a file already gone counts as deleted. Returns the paths that could not
    be deleted (each logged)."""
    tally = _Tally()
    deleter = _Deleter(io, None, executor, tally)
    try:
        deleter.run(list(paths), kind)
    finally:
        deleter.close()
    return list(tally.summary().failed)


def _clean(
    io: FileIO,
    expired: Sequence[Snapshot],
    retained: Sequence[Snapshot],
    statistics_files: Iterable[str],
    delete: Callable[[str], None] | None,
    delete_executor: Executor | None,
    plan_executor: Executor | None,
    content_files: bool,
    tally: _Tally,
) -> None:
    retained_lists = {file_identity(s.manifest_list) for s in retained if s.manifest_list}
    manifest_lists = {
        s.manifest_list
        for s in expired
        if s.manifest_list and file_identity(s.manifest_list) not in retained_lists
    }

    own_plan_pool = plan_executor is None
    planner = plan_executor or ThreadPoolExecutor(PLAN_THREADS, thread_name_prefix="icefloe-expire-plan")
    try:
        manifests, files = _unreachable(io, expired, retained, planner, content_files, tally)
    finally:
        if own_plan_pool:
            planner.shutdown(wait=True)

    deleter = _Deleter(io, delete, delete_executor, tally)
    try:
        by_kind: dict[DeletedFileType, list[str]] = {}
        for path, content in files.values():
            by_kind.setdefault(DeletedFileType.of_content(content), []).append(path)
        for kind in (
            DeletedFileType.DATA,
            DeletedFileType.POSITION_DELETES,
            DeletedFileType.EQUALITY_DELETES,
        ):
            deleter.run(sorted(by_kind.get(kind, ())), kind)
        deleter.run(sorted(manifests), DeletedFileType.MANIFEST)
        deleter.run(sorted(manifest_lists), DeletedFileType.MANIFEST_LIST)
        deleter.run(sorted(set(statistics_files)), DeletedFileType.STATISTICS_FILES)
    finally:
        deleter.close()


def _unreachable(
    io: FileIO,
    expired: Sequence[Snapshot],
    retained: Sequence[Snapshot],
    planner: Executor,
    content_files: bool,
    tally: _Tally,
) -> tuple[set[str], dict[str, tuple[str, int]]]:
    """The manifests only ``expired`` reaches, and the content files (identity -> (path,
    content)) only they reach."""
    candidates: dict[str, ManifestFile] = {}
    for snapshot, listed, error in _map(planner, lambda s: s.all_manifests(io), expired):
        if error is not None:
            log.warning(
                "cannot read the manifest list of expired snapshot %d (%s): its manifests are kept",
                snapshot.snapshot_id,
                error,
            )
            tally.complete = False
            continue
        for manifest in listed or ():
            candidates.setdefault(file_identity(manifest.manifest_path), manifest)
    if not candidates:
        return set(), {}

    live_manifests: dict[str, ManifestFile] = {}
    for snapshot, listed, error in _map(planner, lambda s: s.all_manifests(io), retained):
        if error is not None:
            log.warning(
                "cannot read the manifest list of retained snapshot %d (%s): without it, which files "
                "are still reachable is unknown, so no manifest and no data or delete file is deleted",
                snapshot.snapshot_id,
                error,
            )
            tally.complete = False
            return set(), {}
        for manifest in listed or ():
            live_manifests.setdefault(file_identity(manifest.manifest_path), manifest)

    doomed = {key: m for key, m in candidates.items() if key not in live_manifests}
    if not doomed:
        return set(), {}

    # Live content files of the manifests that go. A manifest without live entries (all its
    # files deleted) holds no candidate: its counts say so without reading it.
    files: dict[str, tuple[str, int]] = {}
    unreadable: set[str] = set()
    to_read = [m for m in doomed.values() if m.has_added_files() or m.has_existing_files()]
    for manifest, live, error in _map(
        planner, lambda m: _live_files(io, m), to_read if content_files else []
    ):
        if error is not None:
            if isinstance(error, NoSuchFileError):
                log.warning("expired manifest %s is already gone; its files cannot be found", manifest.path)
            else:
                log.warning(
                    "cannot read expired manifest %s (%s): it is kept, with its files", manifest.path, error
                )
                unreadable.add(manifest.manifest_path)
            tally.complete = False
            continue
        for path, content in (live or {}).items():
            files.setdefault(file_identity(path), (path, content))
    manifests = {m.manifest_path for m in doomed.values()} - unreadable
    if not files:
        return manifests, {}

    # Whatever a retained manifest holds live stays. Only the manifests of the content kinds
    # among the candidates can hold one of them (a path is a data file or a delete file).
    kinds = {
        ManifestContent.DELETES if c != FileContent.DATA else ManifestContent.DATA for _, c in files.values()
    }
    protecting = [m for m in live_manifests.values() if ManifestContent(m.content) in kinds]
    for manifest, live, error in _map(planner, lambda m: _live_files(io, m), protecting):
        if error is not None:
            log.warning(
                "cannot read manifest %s of a retained snapshot (%s): no data or delete file is deleted",
                manifest.path,
                error,
            )
            tally.complete = False
            return manifests, {}
        for path in live or ():
            files.pop(file_identity(path), None)
    return manifests, files


def file_identity(location: str) -> str:
    """The key under which two spellings of one file compare equal: ``/t/x``, ``file:/t/x``
    and ``file:///t/x`` are one local file, ``s3a://b/k`` and ``s3://b/k`` one object. A
    retained snapshot that lists a file under another spelling than an expired one still
    protects it."""
    scheme, rest = split_scheme(location)
    if scheme is None or scheme == "file":
        try:
            return "file:" + posixpath.normpath(local_path(location))
        except ValidationError:  # file://remote-host/...: leave as written
            return location
    if scheme in ("s3a", "s3n"):
        return "s3:" + rest
    return location


def _live_files(io: FileIO, manifest: ManifestFile) -> dict[str, int]:
    """Path -> content of the live (added or existing) entries of a manifest."""
    data = read_manifest_bytes(io, manifest)
    layout, blocks = manifest_records(data, manifest.manifest_path)
    n_status, n_file, n_path, n_content = layout.status, layout.data_file, layout.file_path, layout.content
    # v1 manifests have no content field: everything in them is data.
    default = int(
        FileContent.DATA if manifest.content == ManifestContent.DATA else FileContent.POSITION_DELETES
    )
    result: dict[str, int] = {}
    for block in blocks:
        for record in block:
            if record[n_status] == _DELETED:
                continue
            file = record[n_file]
            content = file.get(n_content)
            result[file[n_path]] = default if content is None else content
    return result


def _map(
    executor: Executor, fn: Callable[[T], R], items: Sequence[T]
) -> list[tuple[T, R | None, Exception | None]]:
    """``fn`` over ``items`` on ``executor``: (item, result, None) or (item, None, error)."""

    def guarded(item: T) -> tuple[R | None, Exception | None]:
        try:
            return fn(item), None
        except Exception as exc:
            return None, exc

    if len(items) <= 1:
        results = [guarded(item) for item in items]
    else:
        results = [f.result() for f in [executor.submit(guarded, item) for item in items]]
    return [(item, result, error) for item, (result, error) in zip(items, results)]


class _Deleter:
    """Deletes files with retries on an executor, recording each outcome in the tally."""

    def __init__(
        self,
        io: FileIO,
        delete: Callable[[str], None] | None,
        executor: Executor | None,
        tally: _Tally,
    ):
        self._delete = delete if delete is not None else io.delete
        self._tally = tally
        self._executor = executor
        self._own_pool: ThreadPoolExecutor | None = None
        # A caller's own delete function runs in the calling thread unless they gave an executor.
        self._parallel = executor is not None or delete is None

    def run(self, paths: Sequence[str], kind: DeletedFileType) -> None:
        if not paths:
            return
        log.debug("deleting %d %s files", len(paths), kind.value)
        if not self._parallel or len(paths) == 1:
            for path in paths:
                self._one(path, kind)
            return
        executor = self._executor
        if executor is None:
            if self._own_pool is None:
                self._own_pool = ThreadPoolExecutor(
                    DELETE_THREADS, thread_name_prefix="icefloe-expire-delete"
                )
            executor = self._own_pool
        futures: list[Future[None]] = [executor.submit(self._one, path, kind) for path in paths]
        wait(futures)
        for future in futures:
            error = future.exception()
            if error is not None:  # only a BaseException escapes _one; let it through
                raise error

    def _one(self, path: str, kind: DeletedFileType) -> None:
        for attempt in range(1, DELETE_ATTEMPTS + 1):
            try:
                self._delete(path)
            except FileNotFoundError:  # NoSuchFileError too: gone is what we wanted
                break
            except Exception as exc:
                if attempt == DELETE_ATTEMPTS:
                    log.warning("could not delete %s file %s: %s", kind.value, path, exc)
                    self._tally.failure(path)
                    return
                time.sleep(_RETRY_WAIT_S * attempt)
                continue
            break
        self._tally.deleted(kind)

    def close(self) -> None:
        if self._own_pool is not None:
            self._own_pool.shutdown(wait=True)
