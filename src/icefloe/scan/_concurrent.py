"""Running several item streams ahead in threads, yielding their items in order (private).

Reading a scan's tasks one after another leaves cores idle: pyarrow decodes a row group's
columns in parallel, but opening a file, reading its footer and waiting for its bytes are
serial, and a few columns do not fill the cores. ``ordered`` runs up to ``ahead`` streams (one
per task) at once in threads of its own, each holding at most ``buffered`` items, and yields
every item of the first stream, then of the second, and so on: the output is exactly that of
running them in turn, and memory stays bounded by ``ahead x (buffered + the item being
made)``. pyarrow releases the GIL while it reads and decodes, so the threads overlap.

Streaming stays lazy: only the first stream starts before the consumer has taken its first
item; the others start when it comes back for the next. A caller that takes everything (to
build a table) says ``eager``: then ``ahead`` streams start at once, so the cores are busy from
the first file on, and they never wait for the consumer (which keeps every item anyway); a
single source then runs in the consumer's thread. Lazy streams run in a pool of ``ahead``
threads of the call's own (none is shared between scans, which a paused consumer could
exhaust); eager ones in a pool of the process's (starting threads on each call costs more than
a small file's read; a consumer that keeps everything never pauses its sources). When the
consumer stops early (closes the generator, or an error), the threads are told to stop and are
not waited for: each stops at its next item.
"""

from __future__ import annotations

import itertools
import os
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["ordered"]

T = TypeVar("T")
_END = object()
_POLL_SECONDS = 0.05


class _Failure:
    __slots__ = ("error",)

    def __init__(self, error: BaseException):
        self.error = error


class _Stream:
    """One source's items, made in a pool thread, in a bounded queue."""

    def __init__(self, buffered: int, stop: threading.Event):
        self.items: queue.Queue[Any] = queue.Queue(maxsize=buffered)
        self.stop = stop

    def _put(self, item: Any) -> bool:
        while not self.stop.is_set():
            try:
                self.items.put(item, timeout=_POLL_SECONDS)
                return True
            except queue.Full:
                continue
        return False

    def run(self, source: Callable[[], Iterable[Any]]) -> None:
        if self.stop.is_set():  # the consumer left before this source's turn
            return
        try:
            for item in source():
                if not self._put(item):
                    return
        except BaseException as error:  # handed to the consumer, which raises it
            self._put(_Failure(error))
            return
        self._put(_END)

    def __iter__(self) -> Iterator[Any]:
        while True:
            item = self.items.get()
            if item is _END:
                return
            if isinstance(item, _Failure):
                raise item.error
            yield item


def ordered(
    sources: Iterable[Callable[[], Iterable[T]]], *, ahead: int, buffered: int, eager: bool = False
) -> Iterator[T]:
    """The items of every source, source by source, each source's in its order; up to
    ``ahead`` sources run at once, each holding at most ``buffered`` items not yet taken.
    ``eager``: the consumer takes every item (and keeps them): ``ahead`` sources start at
    once instead of one until the first item is taken, hold any number of items (a source
    never waits for the consumer), and the next ones are queued for the threads before the
    consumer reaches them.

    A source's error is raised when the consumer reaches its items (the items before it are
    yielded first), as running them in turn would.
    """
    pending = iter(sources)
    if eager:
        # a single source (a selective scan keeps one file) is run in the caller's thread: a
        # thread and a queue would only add their latency
        first = next(pending, None)
        if first is None:
            return
        second = next(pending, None)
        if second is None:
            yield from first()
            return
        pending = itertools.chain((first, second), pending)
    running: deque[_Stream] = deque()
    stop = threading.Event()
    # Sources started and not yet consumed. Unless eager, until the consumer comes back for a
    # second item, nothing is read ahead. Eager: twice the threads, so that a thread that
    # finishes a source finds the next one waiting (the consumer may still be on an earlier
    # one); ``ahead`` still run at once.
    limit = 2 * ahead if eager else 1
    workers = max(1, ahead)
    # Lazy: a pool of the call's own. At most ``ahead`` sources are started and not yet
    # consumed, so a thread is always free for the next source, however long the consumer
    # pauses. Eager: the process's pool (no thread to start on each call); its sources never
    # wait for a consumer, so every queued source gets a thread in turn.
    pool = _shared_pool(workers) if eager else ThreadPoolExecutor(workers, thread_name_prefix="icefloe-read")
    futures: list[Future[None]] = []

    def start() -> None:
        while len(running) < limit:
            source = next(pending, None)
            if source is None:
                return
            stream = _Stream(0 if eager else max(1, buffered), stop)
            futures.append(pool.submit(stream.run, source))
            running.append(stream)

    try:
        start()
        while running:
            for item in running[0]:
                yield item
                if limit == 1 < ahead:
                    limit = ahead
                    start()
            running.popleft()
            start()
    finally:
        stop.set()
        if eager:
            for future in futures:
                future.cancel()  # those not started yet
        else:
            pool.shutdown(wait=False, cancel_futures=True)


_SHARED_POOLS: dict[int, ThreadPoolExecutor] = {}
_SHARED_LOCK = threading.Lock()


def _shared_pool(size: int) -> ThreadPoolExecutor:
    """The process's pool of ``size`` threads for eager calls (created on first use)."""
    with _SHARED_LOCK:
        pool = _SHARED_POOLS.get(size)
        if pool is None:
            pool = _SHARED_POOLS[size] = ThreadPoolExecutor(size, thread_name_prefix="icefloe-read")
        return pool


def _forget_shared_pools() -> None:
    # a forked child has none of its parent's threads: its pools are created anew
    global _SHARED_LOCK
    _SHARED_POOLS.clear()
    _SHARED_LOCK = threading.Lock()


os.register_at_fork(after_in_child=_forget_shared_pools)
