"""Running independent pieces of an action on every core.

Threads, not processes: the work is reading and writing Parquet and Puffin files, which
pyarrow does without holding the GIL, so threads keep every core busy without pickling table
metadata and file handles into worker processes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import TypeVar

from icefloe.errors import ValidationError

__all__ = ["default_workers", "run_all"]

T = TypeVar("T")
R = TypeVar("R")


def default_workers(workers: int | None) -> int:
    """``workers``, or one per core.

    Raises:
        ValidationError: a count below 1.
    """
    if workers is None:
        return max(1, os.cpu_count() or 1)
    if workers < 1:
        raise ValidationError(f"max_workers must be at least 1, not {workers}")
    return workers


def run_all(fn: Callable[[T], R], items: Iterable[T], workers: int) -> Iterator[tuple[T, R]]:
    """``fn`` of every item, on ``workers`` threads, yielded as they finish. The first error is
    raised once every running piece has stopped (pieces not started are cancelled)."""
    pending = list(items)
    if workers <= 1 or len(pending) <= 1:
        for item in pending:
            yield item, fn(item)
        return
    with ThreadPoolExecutor(workers, thread_name_prefix="icefloe-action") as pool:
        futures: dict[Future[R], T] = {pool.submit(fn, item): item for item in pending}
        remaining = set(futures)
        while remaining:
            done, remaining = wait(remaining, return_when=FIRST_EXCEPTION)
            for future in done:
                error = future.exception()
                if error is not None:
                    for other in remaining:
                        other.cancel()
                    wait(remaining)
                    raise error
                yield futures[future], future.result()
