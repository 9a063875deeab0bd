"""FileIO for the local file system: plain paths and ``file:`` URIs.

Accepted forms: ``/tmp/t/x``, relative ``warehouse/t/x``, ``file:/tmp/t/x`` (what Java's
Hadoop ``Path`` writes into metadata), ``file:///tmp/t/x`` and ``file://localhost/tmp/t/x``.
URIs are taken literally: Java writes ``file:`` locations unencoded, so ``%20`` stays ``%20``.

Every write goes to a temp file in the target directory and is then published in one step,
so no reader ever sees a partial file: ``os.replace`` when overwriting, ``os.link`` (which
fails if the target exists) otherwise. Parent directories are created as needed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, BinaryIO

from icefloe.errors import (
    FileAlreadyExistsError,
    FileIOError,
    UnsupportedFeatureError,
    ValidationError,
)
from icefloe.io.fileio import FileInfo, FileIO, InputFile, OutputFile, PublishingWriter, _guard, split_scheme

if TYPE_CHECKING:
    import pyarrow.fs

__all__ = ["LocalFileIO", "local_path"]

# errno values meaning "this file system cannot make hard links".
_NO_HARD_LINKS = frozenset(
    code
    for code in (
        getattr(errno, "EPERM", None),
        getattr(errno, "ENOTSUP", None),
        getattr(errno, "EOPNOTSUPP", None),
        getattr(errno, "ENOSYS", None),
        getattr(errno, "EXDEV", None),
    )
    if code is not None
)


def local_path(location: str) -> str:
    """The operating-system path for a plain path or ``file:`` URI.

    Raises:
        ValidationError: ``location`` has another scheme, or a ``file:`` URI names a remote host.
    """
    scheme, rest = split_scheme(location)
    if scheme is None:
        return location
    if scheme != "file":
        raise ValidationError(f"Not a local file location: {location}")
    if rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        if authority not in ("", "localhost"):
            raise ValidationError(f"Cannot access a file on remote host '{authority}': {location}")
        return "/" + path if slash else "/"
    return rest


class LocalFileIO(FileIO):
    """FileIO over the local file system. Stateless, so it pickles trivially.

    Args:
        properties: accepted for a uniform constructor; none are used.
    """

    def new_input(self, location: str, *, length: int | None = None) -> InputFile:
        return _LocalInputFile(location, local_path(location), length)

    def new_output(self, location: str) -> OutputFile:
        return _LocalOutputFile(location, local_path(location))

    def delete(self, location: str) -> None:
        path = local_path(location)
        try:
            os.remove(path)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise FileIOError(f"Failed to delete {location}: {exc}") from exc

    def list_prefix(self, prefix: str) -> Iterator[FileInfo]:
        root = local_path(prefix)
        if os.path.isfile(root):
            yield _file_info(prefix, root)
            return
        base = prefix.rstrip("/")
        root_dir = root.rstrip("/") or "/"

        def on_error(exc: OSError) -> None:
            # The root vanishing (or never existing) means there is nothing to list.
            if not (isinstance(exc, FileNotFoundError) and exc.filename == root_dir):
                raise FileIOError(f"Failed to list {prefix}: {exc}") from exc

        for dirpath, dirnames, filenames in os.walk(root_dir, onerror=on_error):
            dirnames.sort()
            relative_dir = os.path.relpath(dirpath, root_dir)
            for name in sorted(filenames):
                relative = name if relative_dir == "." else f"{relative_dir}/{name}"
                try:
                    info = _file_info(f"{base}/{relative.replace(os.sep, '/')}", os.path.join(dirpath, name))
                except FileNotFoundError:  # deleted while listing
                    continue
                yield info

    def write_exclusive(self, location: str, data: bytes) -> None:
        path = local_path(location)
        if os.path.exists(path):
            raise FileAlreadyExistsError(f"Cannot create {location}: it already exists", location=location)
        stream = _open_temp_writer(location, path, mode="exclusive")
        with stream:
            stream.write(data)

    def arrow_filesystem(self, location: str) -> tuple[pyarrow.fs.FileSystem, str]:
        import pyarrow.fs

        return pyarrow.fs.LocalFileSystem(), os.path.abspath(local_path(location))


def _file_info(location: str, path: str) -> FileInfo:
    stat = os.stat(path)
    return FileInfo(location=location, size=stat.st_size, modified_ms=stat.st_mtime_ns // 1_000_000)


class _LocalInputFile(InputFile):
    def __init__(self, location: str, path: str, length: int | None):
        self.location = location
        self._path = path
        self._length = length

    def length(self) -> int:
        if self._length is None:
            stat = _guard(self.location, "get the length of", lambda: os.stat(self._path), must_exist=True)
            self._length = stat.st_size
        return self._length

    def exists(self) -> bool:
        return os.path.isfile(self._path)

    def open(self) -> BinaryIO:
        return _guard(self.location, "open", lambda: open(self._path, "rb"), must_exist=True)  # type: ignore[no-any-return]


class _LocalOutputFile(OutputFile):
    def __init__(self, location: str, path: str):
        self.location = location
        self._path = path

    def create(self, overwrite: bool = False) -> BinaryIO:
        if not overwrite and os.path.exists(self._path):
            raise FileAlreadyExistsError(
                f"Cannot create {self.location}: it already exists", location=self.location
            )
        return _open_temp_writer(self.location, self._path, mode="replace" if overwrite else "create")

    def to_input_file(self) -> InputFile:
        return _LocalInputFile(self.location, self._path, None)


def _open_temp_writer(location: str, path: str, *, mode: str) -> BinaryIO:
    """A stream into a temp file beside ``path``, published there on close.

    ``mode``: "replace" overwrites; "create" refuses an existing file (atomically where the
    file system has hard links, else by checking first); "exclusive" is "create" that must be
    atomic and durable (fsync before publishing).
    """
    directory, name = os.path.split(os.path.abspath(path))
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as exc:
        raise FileIOError(f"Failed to create the directory of {location}: {exc}") from exc
    # Hidden and unique, in the same directory so that link/rename stay on one file system.
    temp = os.path.join(directory, f".{name}.{uuid.uuid4().hex}.tmp")
    try:
        # os.open with 0o666 lets the umask decide permissions, like a plain open() would.
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    except OSError as exc:
        raise FileIOError(f"Failed to create {location}: {exc}") from exc
    raw = os.fdopen(fd, "wb")

    def remove_temp() -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)

    def abort() -> None:
        try:
            raw.close()
        finally:
            remove_temp()

    def commit() -> None:
        try:
            if mode == "exclusive":
                # On disk before it becomes visible: a commit must survive a crash.
                _guard(location, "sync", lambda: _fsync(temp))
            _publish(location, temp, path, mode)
        finally:
            remove_temp()

    return PublishingWriter(raw, location, abort=abort, commit=commit, cleanup=remove_temp)  # type: ignore[return-value]


def _publish(location: str, temp: str, path: str, mode: str) -> None:
    if mode == "replace":
        _guard(location, "publish", lambda: os.replace(temp, path))
        return
    try:
        os.link(temp, path)
    except FileExistsError as exc:
        raise FileAlreadyExistsError(
            f"Cannot create {location}: it already exists", location=location
        ) from exc
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise FileIOError(f"Failed to publish {location}: {exc}") from exc
        if mode == "exclusive":
            raise UnsupportedFeatureError(
                f"Cannot write {location} exclusively: its file system has no hard links "
                f"(needed for an atomic create-if-absent)"
            ) from exc
        # Best effort without hard links: check, then rename. Not safe against a racing writer.
        if os.path.exists(path):
            raise FileAlreadyExistsError(
                f"Cannot create {location}: it already exists", location=location
            ) from exc
        _guard(location, "publish", lambda: os.replace(temp, path))
        return
    if mode == "exclusive":
        # Makes the new directory entry durable; not every platform can open a directory.
        with contextlib.suppress(OSError):
            _fsync(os.path.dirname(path))


def _fsync(path: str) -> None:
    # fsync flushes the file itself, whichever descriptor is used.
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
