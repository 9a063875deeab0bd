"""Choosing a FileIO: ``load_file_io`` and the scheme-dispatching ``ResolvingFileIO``.

A table's files may live under more than one scheme (metadata on local disk, data on S3 via
``write.data.path``), so the default FileIO dispatches every call by the location's scheme,
like Java's ``ResolvingFileIO``.
"""

from __future__ import annotations

import contextlib
import importlib
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from icefloe.errors import ValidationError
from icefloe.io.arrowfs import ArrowFileIO
from icefloe.io.fileio import FileInfo, FileIO, InputFile, OutputFile, split_scheme
from icefloe.io.fsspecfs import FsspecFileIO
from icefloe.io.local import LocalFileIO
from icefloe.io.refreshing import RefreshingFileIO, refreshes
from icefloe.io.s3 import S3_SCHEMES

if TYPE_CHECKING:
    import pyarrow.fs

__all__ = ["IO_IMPL", "PY_IO_IMPL", "ResolvingFileIO", "load_file_io"]

PY_IO_IMPL = "py-io-impl"
IO_IMPL = "io-impl"


_DELEGATES: dict[str, Callable[[Mapping[str, str]], FileIO]] = {
    "local": LocalFileIO,
    "s3": ArrowFileIO,
    "fsspec": FsspecFileIO,
}


class ResolvingFileIO(FileIO):
    """A FileIO that hands each location to the implementation for its scheme.

    No scheme or ``file:`` goes to ``LocalFileIO``; ``s3``, ``s3a``, ``s3n`` to ``ArrowFileIO``;
    anything else to ``FsspecFileIO``. Delegates share this FileIO's properties, are created
    on first use and are not pickled.

    Args:
        properties: Iceberg properties, passed to every delegate.
    """

    def __init__(self, properties: Mapping[str, str] | None = None):
        super().__init__(properties)
        self._lock = threading.Lock()
        self._delegates: dict[str, FileIO] = {}

    def io_for(self, location: str) -> FileIO:
        """The delegate that serves ``location``.

        Raises:
            MissingDependencyError: the scheme needs a package that is not installed.
            UnsupportedFeatureError: no implementation knows the scheme.
        """
        scheme, _ = split_scheme(location)
        if scheme is None or scheme == "file":
            kind = "local"
        elif scheme in S3_SCHEMES:
            kind = "s3"
        else:
            kind = "fsspec"
            FsspecFileIO.check_scheme(scheme)
        with self._lock:
            delegate = self._delegates.get(kind)
            if delegate is None:
                delegate = _DELEGATES[kind](self.properties)
                self._delegates[kind] = delegate
            return delegate

    def new_input(self, location: str, *, length: int | None = None) -> InputFile:
        return self.io_for(location).new_input(location, length=length)

    def new_output(self, location: str) -> OutputFile:
        return self.io_for(location).new_output(location)

    def delete(self, location: str) -> None:
        self.io_for(location).delete(location)

    def delete_many(self, locations: Iterable[str]) -> None:
        # Batch per delegate so each can use its own bulk strategy.
        groups: dict[int, tuple[FileIO, list[str]]] = {}
        for location in locations:
            delegate = self.io_for(location)
            groups.setdefault(id(delegate), (delegate, []))[1].append(location)
        for delegate, batch in groups.values():
            delegate.delete_many(batch)

    def list_prefix(self, prefix: str) -> Iterator[FileInfo]:
        return self.io_for(prefix).list_prefix(prefix)

    def write_exclusive(self, location: str, data: bytes) -> None:
        self.io_for(location).write_exclusive(location, data)

    def arrow_filesystem(self, location: str) -> tuple[pyarrow.fs.FileSystem, str]:
        return self.io_for(location).arrow_filesystem(location)

    def close(self) -> None:
        with self._lock:
            delegates = list(self._delegates.values())
            self._delegates.clear()
        for delegate in delegates:
            delegate.close()


# Java FileIO classes that catalogs (REST servers above all) hand out in "io-impl", and the
# icefloe FileIO doing the same job.
_JAVA_IMPLS: dict[str, type[FileIO]] = {
    "org.apache.iceberg.aws.s3.S3FileIO": ArrowFileIO,
    "org.apache.iceberg.io.ResolvingFileIO": ResolvingFileIO,
    "org.apache.iceberg.hadoop.HadoopFileIO": ResolvingFileIO,
    "org.apache.iceberg.gcp.gcs.GCSFileIO": FsspecFileIO,
    "org.apache.iceberg.azure.adlsv2.ADLSFileIO": FsspecFileIO,
}


def load_file_io(properties: Mapping[str, str] | None = None, location: str | None = None) -> FileIO:
    """The FileIO that ``properties`` ask for, able to serve ``location``.

    Choice, first match wins:

    1. ``py-io-impl``: a dotted Python path (``package.module.ClassName``) to a ``FileIO``
       subclass, constructed with the properties.
    2. ``io-impl``: a Java FileIO class name that icefloe knows (``S3FileIO``, ``GCSFileIO``,
       ``ADLSFileIO``, ``ResolvingFileIO``, ``HadoopFileIO``), or a dotted Python path to a
       FileIO. Anything else is ignored: catalogs set it for their Java clients.
    3. ``ResolvingFileIO``, which serves every scheme it has an implementation for.

    Vended credentials that expire, with ``client.refresh-credentials-enabled`` and
    ``client.refresh-credentials-endpoint`` (a REST catalog sets them), put that choice inside
    a ``RefreshingFileIO``, which renews them before they expire.

    Args:
        properties: catalog and table properties.
        location: a location the FileIO will be used for (a warehouse or table location);
            when given, its scheme is checked now rather than on first use.

    Raises:
        ValidationError: ``py-io-impl`` cannot be imported or is not a FileIO.
        MissingDependencyError: ``location``'s scheme needs a package that is not installed.
        UnsupportedFeatureError: no implementation serves ``location``'s scheme.
    """
    props = dict(properties or {})
    if refreshes(props):
        return RefreshingFileIO(props, location, _chosen_file_io)
    return _chosen_file_io(props, location)


def _chosen_file_io(props: Mapping[str, str], location: str | None) -> FileIO:
    cls: type[FileIO] = ResolvingFileIO
    if props.get(PY_IO_IMPL):
        cls = _import_file_io(props[PY_IO_IMPL], PY_IO_IMPL)
    elif props.get(IO_IMPL) in _JAVA_IMPLS:
        cls = _JAVA_IMPLS[props[IO_IMPL]]
    elif props.get(IO_IMPL):
        with contextlib.suppress(ValidationError):  # a Java class icefloe does not know
            cls = _import_file_io(props[IO_IMPL], IO_IMPL)
    file_io = cls(props)
    if location is not None and isinstance(file_io, ResolvingFileIO):
        file_io.io_for(location)
    return file_io


def _import_file_io(path: str, key: str) -> type[FileIO]:
    module_name, _, class_name = path.rpartition(".")
    try:
        cls: Any = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ValidationError(f"Cannot load the FileIO '{path}' named by property '{key}': {exc}") from exc
    if not (isinstance(cls, type) and issubclass(cls, FileIO)):
        raise ValidationError(f"'{path}' named by property '{key}' is not a FileIO subclass")
    return cls
