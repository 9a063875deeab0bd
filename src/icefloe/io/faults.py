"""A FileIO wrapper that fails chosen writes, for fault-injection tests.

Counts every write attempt (``new_output(...).create()``, ``write_bytes``,
``write_exclusive``) and raises ``FileIOError`` instead of writing when the attempt is the
k-th, or when a predicate on its location says so. Nothing is written by a failed attempt.
Reads, listings and deletes pass straight through, as do writes made through
``arrow_filesystem``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, BinaryIO

from icefloe.errors import FileIOError
from icefloe.io.fileio import FileInfo, FileIO, InputFile, OutputFile

if TYPE_CHECKING:
    import pyarrow.fs

__all__ = ["FaultInjectingFileIO"]


class FaultInjectingFileIO(FileIO):
    """Wraps ``inner`` and fails the writes ``fail_on_write`` selects.

    Args:
        inner: the FileIO doing the real work.
        fail_on_write: an int k fails the k-th write attempt (1-based) and only that one; a
            callable gets each write's location and returns True to fail it.

    Attributes:
        writes: the number of write attempts so far, failed ones included.
        failed: the locations whose writes were failed, in order.
    """

    def __init__(self, inner: FileIO, fail_on_write: int | Callable[[str], bool]):
        super().__init__(inner.properties)
        self.inner = inner
        self.fail_on_write = fail_on_write
        self.writes = 0
        self.failed: list[str] = []
        self._lock = threading.Lock()

    def _before_write(self, location: str) -> None:
        with self._lock:
            self.writes += 1
            attempt = self.writes
            if callable(self.fail_on_write):
                fail = bool(self.fail_on_write(location))
            else:
                fail = attempt == self.fail_on_write
            if fail:
                self.failed.append(location)
        if fail:
            raise FileIOError(f"Injected fault: write #{attempt} to {location} failed")

    def new_input(self, location: str, *, length: int | None = None) -> InputFile:
        return self.inner.new_input(location, length=length)

    def new_output(self, location: str) -> OutputFile:
        return _FaultyOutputFile(self, self.inner.new_output(location))

    def delete(self, location: str) -> None:
        self.inner.delete(location)

    def delete_many(self, locations: Iterable[str]) -> None:
        self.inner.delete_many(locations)

    def list_prefix(self, prefix: str) -> Iterator[FileInfo]:
        return self.inner.list_prefix(prefix)

    def write_exclusive(self, location: str, data: bytes) -> None:
        self._before_write(location)
        self.inner.write_exclusive(location, data)

    def arrow_filesystem(self, location: str) -> tuple[pyarrow.fs.FileSystem, str]:
        return self.inner.arrow_filesystem(location)

    def close(self) -> None:
        self.inner.close()

    def __reduce__(self) -> tuple[Any, ...]:
        # The counters travel too, so a copy fails the same remaining writes.
        return (_restore, (self.inner, self.fail_on_write, self.writes, list(self.failed)))


def _restore(inner: FileIO, fail_on_write: Any, writes: int, failed: list[str]) -> FaultInjectingFileIO:
    io = FaultInjectingFileIO(inner, fail_on_write)
    io.writes = writes
    io.failed = failed
    return io


class _FaultyOutputFile(OutputFile):
    def __init__(self, io: FaultInjectingFileIO, inner: OutputFile):
        self.location = inner.location
        self._io = io
        self._inner = inner

    def create(self, overwrite: bool = False) -> BinaryIO:
        self._io._before_write(self.location)
        return self._inner.create(overwrite=overwrite)

    def to_input_file(self) -> InputFile:
        return self._inner.to_input_file()
