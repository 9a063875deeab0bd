"""The FileIO contract: how every other layer reads, writes, lists and deletes files.

A ``FileIO`` is addressed by *locations*: the strings Iceberg stores in metadata (``s3://b/k``,
``file:/tmp/t/x``, ``/tmp/t/x``). Implementations translate them for one kind of storage;
``load_file_io`` picks one from catalog/table properties.

Contracts shared by every implementation:

* Reading a missing file raises ``NoSuchFileError`` (also a ``FileNotFoundError``); other
  storage failures raise ``FileIOError``. Every message names the location.
* A stream from ``OutputFile.create()`` publishes the file when it is closed. Leaving a
  ``with`` block by an exception discards it instead, so a failed write leaves no file behind
  (on object stores, best effort: see the implementation).
* ``write_exclusive`` publishes a complete file atomically, or raises
  ``FileAlreadyExistsError`` when the location exists: of concurrent writers exactly one wins.
* FileIOs pickle: only their properties travel; clients are re-created lazily.
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO

from icefloe.errors import FileIOError, IcefloeError, NoSuchFileError

if TYPE_CHECKING:
    import pyarrow.fs

__all__ = [
    "FileIO",
    "FileInfo",
    "InputFile",
    "OutputFile",
    "split_scheme",
]

log = logging.getLogger(__name__)

# A URI scheme per RFC 3986. One letter is excluded so that Windows drive paths (C:\x) are
# never mistaken for a scheme.
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]+):")


def split_scheme(location: str) -> tuple[str | None, str]:
    """Split ``location`` into its lower-cased URI scheme and the rest.

    Returns:
        ``(scheme, rest)``; ``scheme`` is None for a plain path (``/tmp/x``, ``warehouse/x``).
    """
    match = _SCHEME.match(location)
    if match is None:
        return None, location
    return match.group(1).lower(), location[match.end() :]


@dataclass(frozen=True, slots=True)
class FileInfo:
    """One file found by ``FileIO.list_prefix``.

    Attributes:
        location: the file's location, in the same form as the listed prefix.
        size: length in bytes.
        modified_ms: last modification time in epoch milliseconds (0 when the storage does
            not report one).
    """

    location: str
    size: int
    modified_ms: int


class InputFile(ABC):
    """A file to read. Creating one does no I/O; each method reaches the storage."""

    location: str

    @abstractmethod
    def length(self) -> int:
        """The file's length in bytes. Raises ``NoSuchFileError`` if it does not exist."""

    @abstractmethod
    def exists(self) -> bool:
        """Whether a file (not a directory) exists at the location."""

    @abstractmethod
    def open(self) -> BinaryIO:
        """Open a seekable binary stream; the caller closes it.

        Raises:
            NoSuchFileError: the file does not exist.
            FileIOError: any other storage failure.
        """

    def read(self) -> bytes:
        """The whole file's content. Raises like ``open()``."""
        with self.open() as stream:
            data: bytes = _guard(self.location, "read", stream.read)
        return data

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.location!r})"


class OutputFile(ABC):
    """A file to write. Creating one does no I/O."""

    location: str

    @abstractmethod
    def create(self, overwrite: bool = False) -> BinaryIO:
        """Open a writable binary stream that publishes the file on ``close()``.

        Leaving a ``with`` block by an exception discards what was written.

        Args:
            overwrite: replace an existing file. When False and the file exists, raise.

        Raises:
            FileAlreadyExistsError: the file exists and ``overwrite`` is False. May also be
                raised by ``close()`` if another writer published the file in the meantime.
            FileIOError: any other storage failure.
        """

    @abstractmethod
    def to_input_file(self) -> InputFile:
        """An ``InputFile`` for the same location."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.location!r})"


class FileIO(ABC):
    """Reads, writes, lists and deletes files by location.

    Implementations take the properties as their only constructor argument and pickle as
    ``cls(properties)``; one that needs more state overrides ``__reduce__``. Streams from
    ``OutputFile.create`` are normally a ``PublishingWriter`` around the storage's own.

    Attributes:
        properties: the catalog/table properties this FileIO was configured from.
    """

    properties: dict[str, str]

    def __init__(self, properties: Mapping[str, str] | None = None):
        self.properties = dict(properties or {})

    # ---- the primitives each implementation provides ----

    @abstractmethod
    def new_input(self, location: str, *, length: int | None = None) -> InputFile:
        """An ``InputFile`` for ``location``.

        Args:
            location: the file to read.
            length: the file's length when already known (from a manifest), which saves a
                request on object stores.
        """

    @abstractmethod
    def new_output(self, location: str) -> OutputFile:
        """An ``OutputFile`` for ``location``."""

    @abstractmethod
    def delete(self, location: str) -> None:
        """Delete the file at ``location``; a missing file is not an error."""

    @abstractmethod
    def list_prefix(self, prefix: str) -> Iterator[FileInfo]:
        """Yield every file under ``prefix``, recursively.

        ``prefix`` is a directory (a trailing slash is optional); when it names a file, that
        file is yielded. A missing prefix yields nothing. Object-store directory markers are
        not files and are skipped.
        """

    @abstractmethod
    def write_exclusive(self, location: str, data: bytes) -> None:
        """Publish ``data`` at ``location`` atomically, only if nothing exists there.

        Of concurrent writers to one location exactly one succeeds; no reader ever sees a
        partial file.

        Raises:
            FileAlreadyExistsError: a file exists at ``location`` (maybe just published by a
                concurrent writer).
            UnsupportedFeatureError: the storage cannot make this guarantee.
        """

    @abstractmethod
    def arrow_filesystem(self, location: str) -> tuple[pyarrow.fs.FileSystem, str]:
        """A pyarrow filesystem and the path within it for ``location``.

        Lets Parquet readers and writers use pyarrow directly on the same storage. Writes
        made this way bypass this FileIO (and any wrapper around it).
        """

    # ---- conveniences over the primitives ----

    def exists(self, location: str) -> bool:
        """Whether a file exists at ``location``."""
        return self.new_input(location).exists()

    def read_bytes(self, location: str) -> bytes:
        """The whole content of the file at ``location``. Raises ``NoSuchFileError``."""
        return self.new_input(location).read()

    def write_bytes(self, location: str, data: bytes, overwrite: bool = False) -> None:
        """Write ``data`` as the whole file at ``location``.

        Raises:
            FileAlreadyExistsError: the file exists and ``overwrite`` is False.
        """
        with self.new_output(location).create(overwrite=overwrite) as stream:
            stream.write(data)

    def delete_many(self, locations: Iterable[str]) -> None:
        """Delete every file in ``locations``; missing files are not errors.

        Raises:
            FileIOError: after trying all of them, if any deletion failed (the first failure
                is the cause).
        """
        failures: list[tuple[str, Exception]] = []
        for location in locations:
            try:
                self.delete(location)
            except FileIOError as exc:
                failures.append((location, exc))
        _raise_delete_failures(failures)

    def delete_quietly(self, locations: Iterable[str]) -> list[str]:
        """Best-effort deletion for cleanups: every failure is logged, none is raised.

        Cleanup after an error (or after a successful commit) must never replace the error
        being reported, nor turn a success into a failure.

        Returns:
            The locations that could not be deleted.
        """
        failed = []
        for location in locations:
            try:
                self.delete(location)
            except Exception:
                log.warning("could not delete %s", location, exc_info=True)
                failed.append(location)
        return failed

    def close(self) -> None:  # noqa: B027 - most FileIOs hold no clients; not abstract on purpose
        """Drop cached clients. The FileIO stays usable: clients are re-created on demand."""

    def __reduce__(self) -> tuple[Any, ...]:
        # Only the properties travel; each process builds its own clients.
        return (type(self), (self.properties,))

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _raise_delete_failures(failures: list[tuple[str, Exception]]) -> None:
    if not failures:
        return
    shown = ", ".join(location for location, _ in failures[:5])
    more = f" and {len(failures) - 5} more" if len(failures) > 5 else ""
    raise FileIOError(f"Failed to delete {len(failures)} file(s): {shown}{more}") from failures[0][1]


def _guard(location: str, action: str, call: Callable[[], Any], *, must_exist: bool = False) -> Any:
    """Run ``call``, turning a storage ``OSError`` into a ``FileIOError`` naming ``location``;
    with ``must_exist`` (a read, an open, a length), a missing file into a ``NoSuchFileError``."""
    try:
        return call()
    except IcefloeError:
        raise
    except OSError as exc:
        if must_exist and isinstance(exc, FileNotFoundError):
            raise NoSuchFileError(f"File does not exist: {location}", location=location) from exc
        raise FileIOError(f"Failed to {action} {location}: {exc}") from exc


class PublishingWriter(io.RawIOBase):
    """A write stream that publishes its file on ``close()`` and discards it on failure.

    Wraps an implementation's raw stream. Three hooks say what publishing means for it:

    * ``commit`` runs after the raw stream closed cleanly (rename a temp file into place).
    * ``abort`` runs instead of closing when the ``with`` block raised or the stream was
      dropped unclosed; the raw stream is still open, and ``abort`` must close or discard it
      and remove whatever was written.
    * ``cleanup`` runs when closing the raw stream or ``commit`` failed, to remove leftovers
      (a temp file); the error is then raised.

    Storage errors surface as ``FileIOError`` naming the location.
    """

    def __init__(
        self,
        raw: Any,
        location: str,
        *,
        abort: Callable[[], None],
        commit: Callable[[], None] | None = None,
        cleanup: Callable[[], None] | None = None,
    ):
        super().__init__()
        self._raw = raw
        self._location = location
        self._abort = abort
        self._commit = commit
        self._cleanup = cleanup
        self._position = 0
        self._finished = False  # the raw stream was closed or discarded

    @property
    def location(self) -> str:
        return self._location

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        if self._finished:
            raise FileIOError(f"Write to a closed stream of {self._location}")
        size = memoryview(data).nbytes
        _guard(self._location, "write", lambda: self._raw.write(data))
        self._position += size
        return size

    def tell(self) -> int:
        return self._position

    def flush(self) -> None:
        # IOBase.close() flushes, after our raw stream is already finished.
        if not self._finished:
            _guard(self._location, "flush", self._raw.flush)

    def close(self) -> None:
        """Finish the file and publish it. On failure, remove leftovers and raise."""
        if self.closed:
            return
        self._finished = True
        try:
            _guard(self._location, "write", self._raw.close)
            if self._commit is not None:
                self._commit()
        except BaseException:
            if self._cleanup is not None:
                # Cleanup must not hide the error that led here.
                with contextlib.suppress(Exception):
                    self._cleanup()
            raise
        finally:
            super().close()

    def abort(self) -> None:
        """Discard everything written; nothing is published."""
        if self.closed:
            return
        self._finished = True
        try:
            with contextlib.suppress(Exception):
                self._abort()
        finally:
            super().close()

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()

    def __del__(self) -> None:
        # A stream that was never closed is incomplete: discard rather than publish it.
        if not self.closed:
            self.abort()
