"""FileIO for S3 (``s3://``, ``s3a://``, ``s3n://``) over pyarrow's S3 file system.

Configured from Iceberg's property names (see ``S3Config``). Listed and returned locations
keep the scheme they were asked with. Notes on S3 semantics:

* ``create(overwrite=False)`` checks for the object before writing; only ``write_exclusive``
  (a conditional PUT) is safe against a racing writer.
* An object is only visible once its upload completes, so readers never see a partial file.
  pyarrow cannot abort an upload, so a write that fails inside its ``with`` block completes
  the upload and then deletes the object (best effort).
* Every request is retried on throttling (503 SlowDown), 500s and cut connections with the AWS
  SDK's standard strategy (exponential backoff with jitter): ``s3.retry.num-retries`` retries
  (default 5, Java's), in whichever process the FileIO runs. pyarrow leaves a multipart upload
  open when a part finally fails, so a failed write aborts its key's unfinished uploads
  through botocore (``tests/io/test_fileio_s3_faults.py`` checks both through a
  fault-injecting proxy).
* Deleting the last object under a prefix may leave an empty directory marker (pyarrow keeps
  the parent "directory"); ``list_prefix`` skips markers.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, BinaryIO

from icefloe.errors import FileAlreadyExistsError, FileIOError, MissingDependencyError, NoSuchFileError
from icefloe.io.fileio import (
    FileInfo,
    FileIO,
    InputFile,
    OutputFile,
    PublishingWriter,
    _guard,
    _raise_delete_failures,
)
from icefloe.io.s3 import S3Config, put_if_absent, split_s3_location

if TYPE_CHECKING:
    import pyarrow.fs

__all__ = ["ArrowFileIO"]

_DELETE_THREADS = 8

log = logging.getLogger(__name__)


class ArrowFileIO(FileIO):
    """FileIO for S3 locations through ``pyarrow.fs.S3FileSystem``.

    Args:
        properties: Iceberg properties; ``s3.*`` keys configure the client.

    Raises:
        ValidationError: a property value is malformed, or a location is not an S3 location.
    """

    def __init__(self, properties: Mapping[str, str] | None = None):
        super().__init__(properties)
        self.config = S3Config.from_properties(self.properties)
        self._lock = threading.Lock()
        self._fs: pyarrow.fs.S3FileSystem | None = None
        self._boto: Any = None

    # ---- clients, created on first use and never pickled ----

    def filesystem(self) -> pyarrow.fs.S3FileSystem:
        """The pyarrow S3 file system (created on first use)."""
        with self._lock:
            if self._fs is None:
                import pyarrow.fs

                self._fs = pyarrow.fs.S3FileSystem(
                    retry_strategy=self.config.arrow_retry_strategy(), **self.config.arrow_options()
                )
            return self._fs

    def _botocore(self) -> Any:
        with self._lock:
            if self._boto is None:
                self._boto = self.config.botocore_client()
            return self._boto

    def _botocore_if_installed(self) -> Any:
        try:
            return self._botocore()
        except MissingDependencyError:
            return None

    def close(self) -> None:
        with self._lock:
            self._fs = None
            self._boto = None

    # ---- FileIO ----

    def new_input(self, location: str, *, length: int | None = None) -> InputFile:
        return _ArrowInputFile(self, location, _arrow_path(location), length)

    def new_output(self, location: str) -> OutputFile:
        return _ArrowOutputFile(self, location, _arrow_path(location))

    def delete(self, location: str) -> None:
        path = _arrow_path(location)
        try:
            self.filesystem().delete_file(path)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise FileIOError(f"Failed to delete {location}: {exc}") from exc

    def delete_many(self, locations: Iterable[str]) -> None:
        # One request per object; threads hide the latency.
        def attempt(location: str) -> tuple[str, Exception] | None:
            try:
                self.delete(location)
            except FileIOError as exc:
                return location, exc
            return None

        with ThreadPoolExecutor(max_workers=_DELETE_THREADS) as pool:
            failures = [failure for failure in pool.map(attempt, locations) if failure is not None]
        _raise_delete_failures(failures)

    def list_prefix(self, prefix: str) -> Iterator[FileInfo]:
        import pyarrow.fs

        split_s3_location(prefix)  # rejects a non-S3 prefix before any request
        path = _arrow_path(prefix).rstrip("/")
        fs = self.filesystem()
        selector = pyarrow.fs.FileSelector(path, recursive=True, allow_not_found=True)
        infos = _guard(prefix, "list", lambda: fs.get_file_info(selector))
        if not infos:
            # A prefix naming one object lists as an empty directory.
            single = _guard(prefix, "list", lambda: fs.get_file_info(path))
            if single.type == pyarrow.fs.FileType.File:
                yield _file_info(prefix, single)
            return
        base = prefix.rstrip("/")
        for info in sorted(infos, key=lambda i: i.path):
            if info.type == pyarrow.fs.FileType.File:
                yield _file_info(f"{base}{info.path[len(path) :]}", info)

    def write_exclusive(self, location: str, data: bytes) -> None:
        put_if_absent(self._botocore(), location, bytes(data))

    def arrow_filesystem(self, location: str) -> tuple[pyarrow.fs.FileSystem, str]:
        return self.filesystem(), _arrow_path(location)

    def abort_uploads(self, location: str) -> None:
        """Abort the unfinished multipart uploads to exactly ``location``'s key (best effort).

        Used after a failed write: every icefloe data and manifest file has a unique name, so
        an unfinished upload to that key is the failed write's own.
        """
        _, bucket, key = split_s3_location(location)
        try:
            client = self._botocore()
            listed = client.list_multipart_uploads(Bucket=bucket, Prefix=key)
            for upload in listed.get("Uploads", []):
                if upload["Key"] == key:
                    client.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload["UploadId"])
        except Exception:
            log.warning("could not abort the unfinished uploads of %s", location, exc_info=True)


def _arrow_path(location: str) -> str:
    _, bucket, key = split_s3_location(location)
    return f"{bucket}/{key}" if key else bucket


def _file_info(location: str, info: pyarrow.fs.FileInfo) -> FileInfo:
    mtime_ns = info.mtime_ns
    return FileInfo(
        location=location,
        size=int(info.size or 0),
        modified_ms=0 if mtime_ns is None else mtime_ns // 1_000_000,
    )


class _ArrowInputFile(InputFile):
    def __init__(self, io: ArrowFileIO, location: str, path: str, length: int | None):
        self.location = location
        self._io = io
        self._path = path
        self._length = length

    def _info(self) -> pyarrow.fs.FileInfo:
        fs = self._io.filesystem()
        return _guard(self.location, "get the status of", lambda: fs.get_file_info(self._path))

    def length(self) -> int:
        if self._length is None:
            import pyarrow.fs

            info = self._info()
            if info.type != pyarrow.fs.FileType.File:
                raise NoSuchFileError(f"File does not exist: {self.location}", location=self.location)
            self._length = int(info.size)
        return self._length

    def exists(self) -> bool:
        import pyarrow.fs

        return bool(self._info().type == pyarrow.fs.FileType.File)

    def read(self) -> bytes:
        # A whole-file read (metadata JSON, manifest lists, manifests) is one GET through
        # botocore; pyarrow's random-access file would first send a HEAD for the length.
        client = self._io._botocore_if_installed()
        if client is None:
            return super().read()
        from botocore.exceptions import BotoCoreError, ClientError

        _, bucket, key = split_s3_location(self.location)
        try:
            return bytes(client.get_object(Bucket=bucket, Key=key)["Body"].read())
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code")
            if code in ("NoSuchKey", "404", "NotFound"):
                raise NoSuchFileError(
                    f"File does not exist: {self.location}", location=self.location
                ) from exc
            raise FileIOError(f"Failed to read {self.location}: {code}") from exc
        except BotoCoreError as exc:
            raise FileIOError(f"Failed to read {self.location}: {exc}") from exc

    def open(self) -> BinaryIO:
        fs = self._io.filesystem()
        return _guard(self.location, "open", lambda: fs.open_input_file(self._path), must_exist=True)  # type: ignore[no-any-return]


class _ArrowOutputFile(OutputFile):
    def __init__(self, io: ArrowFileIO, location: str, path: str):
        self.location = location
        self._io = io
        self._path = path

    def create(self, overwrite: bool = False) -> BinaryIO:
        if not overwrite and self.to_input_file().exists():
            raise FileAlreadyExistsError(
                f"Cannot create {self.location}: it already exists", location=self.location
            )
        fs = self._io.filesystem()
        raw = _guard(self.location, "create", lambda: fs.open_output_stream(self._path))

        def abort() -> None:
            # The upload cannot be cancelled: finish it, then remove the partial object.
            try:
                raw.close()
            finally:
                try:
                    self._io.delete(self.location)
                finally:
                    self._io.abort_uploads(self.location)

        def cleanup() -> None:
            # Closing failed (a part or the completion was refused for good): pyarrow leaves
            # the multipart upload open, and its parts billed, unless it is aborted.
            self._io.abort_uploads(self.location)

        return PublishingWriter(raw, self.location, abort=abort, cleanup=cleanup)  # type: ignore[return-value]

    def to_input_file(self) -> InputFile:
        return _ArrowInputFile(self._io, self.location, self._path, None)
