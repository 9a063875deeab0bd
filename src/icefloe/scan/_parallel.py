"""Decoding manifests in worker processes, for plans that decode many of them.

Decoding a manifest is CPU work under the GIL (fastavro builds Python objects), so threads do
not make it faster; processes do. A plan that must decode at least ``PARALLEL_MIN_BYTES`` of
manifests (``NATIVE_FACTOR`` times more when the native decoder is installed) hands them to a
process-wide pool of workers and decodes some itself: the planning thread takes the next job
no worker has started whenever the one it needs next is not back yet, so every core stays
busy and results are used in manifest order. A job is a group of consecutive manifests
(decoded in one native call where they share a schema, see ``decode_manifests``). A worker
gets the manifests' bytes (the planning process reads the files: any FileIO works) and sends
back the ``DecodedManifest``s (numpy arrays and a few lists: cheap to pickle).

Workers are forked on Linux when the process has a single thread (cheap, nothing to
re-import, no lock held by another thread can be inherited); otherwise they start from a fresh
interpreter (``forkserver`` or ``spawn``), which takes about a second, so then only plans
decoding at least ``PARALLEL_MIN_BYTES_COLD_START`` start the pool. The pool is created on first use and kept; it is not used from a forked
child of the process that created it. Any failure of the pool (it cannot start, a worker
dies) makes the plan decode in-process, and a manifest a worker cannot decode is decoded
again in-process, so errors are raised exactly as without workers.

The number of worker processes is the catalog (FileIO) property
``scan.planning.worker-processes``: ``auto`` (default: one less than the CPUs, at most 7) or
a number (0 turns the pool off).
"""

from __future__ import annotations

import atexit
import contextlib
import multiprocessing
import os
import pickle
import queue
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from multiprocessing.connection import Connection, wait
from typing import Any

from icefloe.errors import ValidationError
from icefloe.manifests._native import native_available
from icefloe.scan._columnar import DecodedManifest, HotValues, decode_manifests
from icefloe.spec.manifest import ManifestFile

__all__ = [
    "PARALLEL_MIN_BYTES",
    "PARALLEL_MIN_BYTES_COLD_START",
    "WORKER_PROCESSES",
    "DecodePool",
    "decode_all",
    "pool_size",
]

#: Below this many bytes of manifests to decode, a plan decodes them itself.
PARALLEL_MIN_BYTES = 1 << 20
#: The thresholds are this many times higher when manifests are decoded natively (about 16x
#: less work per byte than fastavro): a 3,000-file table (2 MB of manifests) decodes in about
#: 70 ms, less than forking a worker and waiting for its answers costs.
NATIVE_FACTOR = 16
#: The same, when the pool must first be started without ``fork`` (workers that import
#: icefloe from scratch take about a second to start).
PARALLEL_MIN_BYTES_COLD_START = 32 << 20
WORKER_PROCESSES = "scan.planning.worker-processes"
#: Manifests decoded together (``decode_manifests``: one native reader set-up for all).
GROUP = 16
#: With workers, groups are smaller where needed so that each process gets at least this many.
_GROUPS_PER_PROCESS = 4
_MAX_AUTO = 7
_OUTSTANDING = 2  # jobs queued per worker, so a worker never waits for the planning thread
_AUTO = max(0, min((os.cpu_count() or 1) - 1, _MAX_AUTO))

#: Consecutive jobs (a manifest and a function giving its bytes) decoded together.
Group = list[tuple[ManifestFile, Callable[[], bytes]]]


def pool_size(properties: Mapping[str, str]) -> int:
    """Worker processes the properties ask for.

    Raises:
        ValidationError: the property is neither ``auto`` nor a non-negative number.
    """
    text = properties.get(WORKER_PROCESSES, "auto").strip().lower()
    if text == "auto":
        return _AUTO
    try:
        value = int(text)
    except ValueError:
        raise ValidationError(f"{WORKER_PROCESSES} must be 'auto' or a number, not {text!r}") from None
    if value < 0:
        raise ValidationError(f"{WORKER_PROCESSES} must not be negative, got {value}")
    return value


def _worker_main(conn: Connection, others: list[Connection]) -> None:
    """A worker: decode each group of (manifest, bytes) it is sent, until its pipe closes.
    ``others``: the planning process's ends of its own pipe and of the pipes to the workers
    forked before it, which a fork inherits: closed, so that each pipe closes when the
    planning process closes its end.

    Jobs are read, and answers sent, by threads of their own while this one decodes: a job or
    an answer can be larger than the pipe holds, and the planning thread must neither wait
    for a decode to finish before its job is taken (it decodes too) nor be blocked sending
    while this process is blocked sending it an answer (both would wait for ever)."""
    for other in others:
        with contextlib.suppress(OSError):
            other.close()
    jobs: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
    answers: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()

    def receive() -> None:
        try:
            while True:
                jobs.put(conn.recv_bytes())
        except (EOFError, OSError):
            jobs.put(None)

    def send() -> None:
        while (answer := answers.get()) is not None:
            try:
                conn.send_bytes(answer)
            except (BrokenPipeError, OSError):
                return

    for target in (receive, send):
        threading.Thread(target=target, name=f"icefloe-decode-{target.__name__}", daemon=True).start()
    while (message := jobs.get()) is not None:
        try:
            manifests, datas, summary = pickle.loads(message)
            decoded = [d for d, _ in decode_manifests(list(zip(datas, manifests)), summary=summary)]
            answer = pickle.dumps(("ok", decoded), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:
            # The planning process decodes it again and raises the error itself, as it
            # would have without workers.
            answer = pickle.dumps(("error", None))
        answers.put(answer)
    answers.put(None)


class _Worker:
    def __init__(self, context: Any, others: list[Connection]):
        parent, child = context.Pipe()
        self.process = context.Process(target=_worker_main, args=(child, [*others, parent]), daemon=True)
        self.process.start()
        child.close()
        self.conn: Connection = parent
        self.jobs: deque[int] = deque()  # indices of the jobs it holds, in order


class DecodePool:
    """A set of worker processes (see the module docstring). Use one plan at a time."""

    def __init__(self, workers: int):
        context = multiprocessing.get_context(_start_method())
        self.pid = os.getpid()
        self.lock = threading.Lock()
        self.workers: list[_Worker] = []
        for _ in range(workers):
            self.workers.append(_Worker(context, [w.conn for w in self.workers]))
        self.broken = False

    def close(self) -> None:
        for worker in self.workers:
            with contextlib.suppress(OSError):
                worker.conn.close()
        for worker in self.workers:
            worker.process.join(timeout=5)
            if worker.process.is_alive():
                worker.process.kill()

    def decode(
        self, jobs: list[Group], *, any_order: bool, summary: bool = False
    ) -> Iterator[list[tuple[DecodedManifest, HotValues | None]]]:
        """Decode every job, yielding the manifests of each in job order. A job is a group of
        manifests, each with a function giving its bytes (called in this thread).
        ``summary``: see ``decode_manifest``.

        Workers take jobs from the front. This thread, whenever the result it needs next is
        not back yet, decodes a job itself: from the back when ``any_order`` (the job's bytes
        can be fetched in any order), so that it and the workers meet in the middle and it
        keeps time for turning results into files; else the next one from the front."""
        results: dict[int, list[tuple[DecodedManifest, HotValues | None]]] = {}
        data_of: dict[int, list[bytes]] = {}
        next_job = 0  # the first job not started by anyone
        last_job = len(jobs)  # one past the last job not started by anyone
        workers = [] if self.broken else self.workers

        def take() -> int | None:
            nonlocal next_job
            if next_job >= last_job:
                return None
            next_job += 1
            return next_job - 1

        def take_here() -> int | None:
            nonlocal last_job
            if not any_order:
                return take()
            if next_job >= last_job:
                return None
            last_job -= 1
            return last_job

        def local(index: int, wanted: int = -1) -> None:
            group = jobs[index]
            datas = data_of.pop(index, None)
            if datas is None:
                datas = [fetch() for _, fetch in group]
            decoded = decode_manifests([(d, m) for d, (m, _) in zip(datas, group)], summary=summary)
            # The flat values save the consumer converting arrays back, but they are big: kept
            # only for a result about to be used, not for one decoded far ahead.
            keep = index <= wanted + _OUTSTANDING
            results[index] = [(d, hot if keep else None) for d, hot in decoded]

        def feed() -> None:
            for worker in workers:
                while len(worker.jobs) < _OUTSTANDING:
                    index = take()
                    if index is None:
                        return
                    group = jobs[index]
                    datas = [fetch() for _, fetch in group]
                    data_of[index] = datas  # kept until answered: decoded here if the worker fails
                    manifests = [m for m, _ in group]
                    try:
                        worker.conn.send_bytes(
                            pickle.dumps((manifests, datas, summary), protocol=pickle.HIGHEST_PROTOCOL)
                        )
                    except (BrokenPipeError, OSError):
                        self.broken = True
                        local(index)
                        continue
                    worker.jobs.append(index)

        def collect(block: bool) -> None:
            busy = [w for w in workers if w.jobs]
            if not busy:
                return
            ready = wait([w.conn for w in busy], timeout=None if block else 0)
            for worker in busy:
                if worker.conn not in ready:
                    continue
                index = worker.jobs.popleft()
                try:
                    status, decoded = pickle.loads(worker.conn.recv_bytes())
                except (EOFError, OSError, pickle.UnpicklingError):
                    # The worker died: decode what it held here, and stop using the pool.
                    self.broken = True
                    local(index)
                    while worker.jobs:
                        local(worker.jobs.popleft())
                    workers.remove(worker)
                    continue
                if status == "ok":
                    data_of.pop(index, None)
                    results[index] = [(d, None) for d in decoded]
                else:
                    local(index)

        try:
            for wanted in range(len(jobs)):
                while wanted not in results:
                    feed()
                    collect(block=False)
                    if wanted in results:
                        break
                    index = take_here()
                    if index is not None:
                        local(index, wanted)  # this thread decodes too, while the workers do theirs
                    else:
                        collect(block=True)
                        if not any(w.jobs for w in workers) and wanted not in results:
                            local(wanted, wanted)  # lost with a dead worker
                yield results.pop(wanted)
        finally:
            # An abandoned plan (an error, or the caller stopped early): drain the answers of
            # the jobs still out, so the next plan starts with empty pipes.
            for worker in workers:
                while worker.jobs:
                    worker.jobs.popleft()
                    try:
                        worker.conn.recv_bytes()
                    except (EOFError, OSError):
                        self.broken = True
                        break


def _start_method() -> str:
    """``fork`` where it is safe and cheap: Linux, and no other thread that could hold a lock
    the children would inherit locked. Otherwise the platform's safe method."""
    if sys.platform == "linux" and threading.active_count() == 1:
        return "fork"
    methods = multiprocessing.get_all_start_methods()
    return "forkserver" if "forkserver" in methods else "spawn"


_POOL: DecodePool | None = None
_POOL_LOCK = threading.Lock()


def _shutdown() -> None:
    global _POOL
    with _POOL_LOCK:
        if _POOL is not None:
            _POOL.close()
            _POOL = None


atexit.register(_shutdown)


def _pool(workers: int) -> DecodePool | None:
    """The process-wide pool with ``workers`` workers (None if it cannot be started)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is not None and (_POOL.pid != os.getpid() or _POOL.broken or len(_POOL.workers) != workers):
            if _POOL.pid == os.getpid():
                _POOL.close()
            _POOL = None
        if _POOL is None:
            try:
                _POOL = DecodePool(workers)
            except (OSError, ValueError, RuntimeError, AssertionError):
                return None  # no processes here (a sandbox, a daemonic process ...)
        return _POOL


def decode_all(
    jobs: list[tuple[ManifestFile, Callable[[], bytes]]],
    *,
    workers: int,
    any_order: bool = False,
    summary: bool = False,
) -> Iterator[tuple[DecodedManifest, HotValues | None]]:
    """Decode the jobs in order, with worker processes when there is enough to decode.
    ``any_order``: the jobs' bytes may be fetched in any order (else in job order);
    ``summary``: see ``decode_manifest``. Consecutive jobs are decoded in groups (one native
    call each, ``decode_manifests``), small enough that every process gets several."""
    size = sum(manifest.manifest_length or 0 for manifest, _ in jobs)
    started = _POOL is not None and _POOL.pid == os.getpid() and not _POOL.broken
    threshold = PARALLEL_MIN_BYTES if started or _start_method() == "fork" else PARALLEL_MIN_BYTES_COLD_START
    if native_available():
        threshold *= NATIVE_FACTOR
    pool = _pool(workers) if workers and len(jobs) > 1 and size >= threshold else None
    if pool is None or not pool.lock.acquire(blocking=False):
        # No pool, or another thread's plan is using it: decode here.
        for group in _groups(jobs, GROUP):
            yield from decode_manifests([(fetch(), m) for m, fetch in group], summary=summary)
        return
    try:
        per_process = len(jobs) // (_GROUPS_PER_PROCESS * (len(pool.workers) + 1))
        for decoded in pool.decode(
            _groups(jobs, max(1, min(GROUP, per_process))), any_order=any_order, summary=summary
        ):
            yield from decoded
    finally:
        pool.lock.release()


def _groups(jobs: list[tuple[ManifestFile, Callable[[], bytes]]], size: int) -> list[Group]:
    return [jobs[i : i + size] for i in range(0, len(jobs), size)]
