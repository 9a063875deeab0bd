"""FileIO over fsspec, for schemes without a dedicated implementation (gs, abfs, hdfs, ...).

Each scheme needs its fsspec implementation installed (gcsfs for ``gs://``, adlfs for
``abfs://``, ...); without it, calls raise ``MissingDependencyError`` naming the package.
Iceberg's ``gcs.*``, ``adls.*`` and ``s3.*`` properties become fsspec storage options.

Whether a file shows before its write stream closes is the backend's choice: object stores
publish on close, fsspec's ``memory://`` at open. ``write_exclusive`` uses fsspec's exclusive-create mode (``"xb"``) only for the backends that
implement it with a conditional request (gcsfs, s3fs, adlfs); elsewhere (``memory://``, ...)
it raises ``UnsupportedFeatureError`` rather than promise an atomicity it cannot keep.
"""

from __future__ import annotations

import datetime
import threading
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, BinaryIO

from icefloe.errors import (
    FileAlreadyExistsError,
    FileIOError,
    MissingDependencyError,
    NoSuchFileError,
    UnsupportedFeatureError,
    ValidationError,
)
from icefloe.io.fileio import FileInfo, FileIO, InputFile, OutputFile, PublishingWriter, _guard, split_scheme

if TYPE_CHECKING:
    import pyarrow.fs

__all__ = ["FsspecFileIO"]

# Backends whose "xb" mode is a conditional create on the server (generation match,
# If-None-Match), hence atomic.
_ATOMIC_EXCLUSIVE = frozenset({"gs", "gcs", "s3", "s3a", "abfs", "abfss", "az"})

# Iceberg property -> fsspec storage option, per scheme family. A tuple target nests the
# option (s3fs takes the endpoint and region inside client_kwargs).
_GCS = {
    "gcs.project-id": "project",
    "gcs.oauth2.token": "token",
    "gcs.endpoint": "endpoint_url",
    "gcs.access": "access",
}
_ADLS = {
    "adls.account-name": "account_name",
    "adls.account-key": "account_key",
    "adls.sas-token": "sas_token",
    "adls.connection-string": "connection_string",
    "adls.tenant-id": "tenant_id",
    "adls.client-id": "client_id",
    "adls.client-secret": "client_secret",
}
_S3: dict[str, str | tuple[str, str]] = {
    "s3.access-key-id": "key",
    "s3.secret-access-key": "secret",
    "s3.session-token": "token",
    "s3.endpoint": ("client_kwargs", "endpoint_url"),
    "s3.region": ("client_kwargs", "region_name"),
}
_OPTIONS: dict[str, Mapping[str, str | tuple[str, str]]] = {
    "gs": _GCS,
    "gcs": _GCS,
    "abfs": _ADLS,
    "abfss": _ADLS,
    "az": _ADLS,
    "s3": _S3,
    "s3a": _S3,
}


def _storage_options(scheme: str, properties: Mapping[str, str]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for name, target in _OPTIONS.get(scheme, {}).items():
        if name not in properties:
            continue
        if isinstance(target, tuple):
            options.setdefault(target[0], {})[target[1]] = properties[name]
        else:
            options[target] = properties[name]
    return options


def _filesystem_class(scheme: str) -> Any:
    try:
        import fsspec
    except ImportError as exc:
        raise MissingDependencyError(
            f"Locations with scheme '{scheme}://' need fsspec: pip install fsspec"
        ) from exc
    try:
        return fsspec.get_filesystem_class(scheme)
    except ImportError as exc:
        raise MissingDependencyError(f"Locations with scheme '{scheme}://' need a package: {exc}") from exc
    except ValueError as exc:
        raise UnsupportedFeatureError(f"No FileIO for locations with scheme '{scheme}://'") from exc


class FsspecFileIO(FileIO):
    """FileIO for any scheme fsspec has an installed implementation for.

    Args:
        properties: Iceberg properties; ``gcs.*``, ``adls.*`` and ``s3.*`` keys configure the
            matching backend.
    """

    def __init__(self, properties: Mapping[str, str] | None = None):
        super().__init__(properties)
        self._lock = threading.Lock()
        self._filesystems: dict[str, Any] = {}

    @staticmethod
    def check_scheme(scheme: str) -> None:
        """Raise unless fsspec can serve ``scheme``, without connecting to anything.

        Raises:
            MissingDependencyError: fsspec, or the scheme's implementation, is not installed.
            UnsupportedFeatureError: fsspec knows no implementation for the scheme.
        """
        _filesystem_class(scheme)

    def filesystem(self, scheme: str) -> Any:
        """The fsspec file system for ``scheme`` (created on first use)."""
        with self._lock:
            fs = self._filesystems.get(scheme)
            if fs is None:
                fs = _filesystem_class(scheme)(**_storage_options(scheme, self.properties))
                self._filesystems[scheme] = fs
            return fs

    def close(self) -> None:
        with self._lock:
            self._filesystems.clear()

    def _resolve(self, location: str) -> tuple[Any, str]:
        scheme, _ = split_scheme(location)
        if scheme is None:
            raise ValidationError(f"Location has no scheme, so no fsspec file system: {location}")
        fs = self.filesystem(scheme)
        return fs, fs._strip_protocol(location)

    # ---- FileIO ----

    def new_input(self, location: str, *, length: int | None = None) -> InputFile:
        fs, path = self._resolve(location)
        return _FsspecInputFile(fs, location, path, length)

    def new_output(self, location: str) -> OutputFile:
        fs, path = self._resolve(location)
        return _FsspecOutputFile(fs, location, path)

    def delete(self, location: str) -> None:
        fs, path = self._resolve(location)
        try:
            fs.rm_file(path)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise FileIOError(f"Failed to delete {location}: {exc}") from exc

    def list_prefix(self, prefix: str) -> Iterator[FileInfo]:
        fs, path = self._resolve(prefix)
        path = path.rstrip("/") or path
        found = _guard(prefix, "list", lambda: fs.find(path, detail=True))
        base = prefix.rstrip("/")
        for name in sorted(found):
            info = found[name]
            if info.get("type", "file") != "file":
                continue
            location = prefix if name == path else f"{base}{name[len(path) :]}"
            yield FileInfo(location=location, size=int(info.get("size") or 0), modified_ms=_modified_ms(info))

    def write_exclusive(self, location: str, data: bytes) -> None:
        scheme, _ = split_scheme(location)
        if scheme not in _ATOMIC_EXCLUSIVE:
            raise UnsupportedFeatureError(
                f"Cannot write {location} exclusively: fsspec's '{scheme}' file system has no "
                f"atomic create-if-absent"
            )
        fs, path = self._resolve(location)
        try:
            with fs.open(path, "xb") as stream:
                stream.write(data)
        except FileExistsError as exc:
            raise FileAlreadyExistsError(
                f"Cannot create {location}: it already exists", location=location
            ) from exc
        except (NotImplementedError, ValueError) as exc:
            raise UnsupportedFeatureError(
                f"Cannot write {location} exclusively: the installed fsspec backend has no 'xb' mode"
            ) from exc
        except OSError as exc:
            raise FileIOError(f"Failed to write {location}: {exc}") from exc

    def arrow_filesystem(self, location: str) -> tuple[pyarrow.fs.FileSystem, str]:
        from pyarrow.fs import FSSpecHandler, PyFileSystem

        fs, path = self._resolve(location)
        return PyFileSystem(FSSpecHandler(fs)), path


def _modified_ms(info: Mapping[str, Any]) -> int:
    # Backends name and type the modification time differently.
    for key in ("mtime", "LastModified", "last_modified", "updated", "created"):
        value = info.get(key)
        if value is None:
            continue
        if isinstance(value, datetime.datetime):
            return int(value.timestamp() * 1000)
        if isinstance(value, int | float):
            return int(value * 1000)
        if isinstance(value, str):
            try:
                return int(datetime.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
            except ValueError:
                continue
    return 0


class _FsspecInputFile(InputFile):
    def __init__(self, fs: Any, location: str, path: str, length: int | None):
        self.location = location
        self._fs = fs
        self._path = path
        self._length = length

    def length(self) -> int:
        if self._length is None:
            try:
                info = self._fs.info(self._path)
            except FileNotFoundError as exc:
                raise NoSuchFileError(
                    f"File does not exist: {self.location}", location=self.location
                ) from exc
            except OSError as exc:
                raise FileIOError(f"Failed to get the length of {self.location}: {exc}") from exc
            if info.get("type", "file") != "file":
                raise NoSuchFileError(f"File does not exist: {self.location}", location=self.location)
            self._length = int(info["size"])
        return self._length

    def exists(self) -> bool:
        return bool(_guard(self.location, "get the status of", lambda: self._fs.isfile(self._path)))

    def open(self) -> BinaryIO:
        try:
            return self._fs.open(self._path, "rb")  # type: ignore[no-any-return]
        except FileNotFoundError as exc:
            raise NoSuchFileError(f"File does not exist: {self.location}", location=self.location) from exc
        except OSError as exc:
            raise FileIOError(f"Failed to open {self.location}: {exc}") from exc


class _FsspecOutputFile(OutputFile):
    def __init__(self, fs: Any, location: str, path: str):
        self.location = location
        self._fs = fs
        self._path = path

    def create(self, overwrite: bool = False) -> BinaryIO:
        if not overwrite and self.to_input_file().exists():
            raise FileAlreadyExistsError(
                f"Cannot create {self.location}: it already exists", location=self.location
            )
        raw = _guard(self.location, "create", lambda: self._fs.open(self._path, "wb"))

        def abort() -> None:
            # fsspec has no portable way to cancel a write: finish it, then remove the file.
            try:
                raw.close()
            finally:
                self._fs.rm_file(self._path)

        return PublishingWriter(raw, self.location, abort=abort)  # type: ignore[return-value]

    def to_input_file(self) -> InputFile:
        return _FsspecInputFile(self._fs, self.location, self._path, None)
