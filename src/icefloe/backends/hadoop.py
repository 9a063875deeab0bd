"""HadoopCatalogBackend: tables as directories, as Java's ``HadoopCatalog`` lays them out.

``<warehouse>/<ns levels>/<table>/metadata/v<N>.metadata.json`` (``v<N>.gz.metadata.json``
when gzipped) holds version N of a table's metadata, and ``metadata/version-hint.text`` the
number of the latest version, as a hint. Namespaces are directories; a table is a directory
whose ``metadata/`` folder holds ``*.metadata.json`` files.

Finding the current version is Java's ``HadoopTableOperations.refresh``: read the hint; when
it is missing, unreadable or names a missing file, take the highest version found by listing
``metadata/``; then probe ``v<N+1>``, ``v<N+2>``... while they exist (a writer may have
published a version and not yet rewritten the hint).

A commit publishes ``v<N+1>`` with ``FileIO.write_exclusive``, which never overwrites: of two
writers exactly one wins, the other gets ``CommitFailedException``. Then the hint is
rewritten, with a correct Hadoop checksum beside it (``.version-hint.text.crc``) so that
Java's checksummed local file system keeps reading it. A hint that could not be rewritten
is harmless: readers probe past it.

Local warehouses only (plain paths or ``file:`` URIs).
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Iterable, Mapping, Sequence

from icefloe.backends._hadoop_crc import checksum_location, hadoop_checksum
from icefloe.backends.base import CatalogBackend, LoadedTable, PropertiesUpdateSummary
from icefloe.backends.identifiers import (
    Identifier,
    Namespace,
    identifier_to_string,
    parse_identifier,
    parse_namespace,
)
from icefloe.errors import (
    CommitFailedException,
    CommitStateUnknownException,
    FileAlreadyExistsError,
    FileIOError,
    InvalidIdentifierError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchFileError,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
    UnsupportedFeatureError,
    ValidationError,
)
from icefloe.io import FileIO, local_path, split_scheme, strip_trailing_slash
from icefloe.serde.metadata_json import dumps_metadata, metadata_file_name, parse_metadata_version
from icefloe.spec.properties import WRITE_METADATA_LOCATION
from icefloe.spec.table_metadata import TableMetadata

__all__ = ["VERSION_HINT", "HadoopCatalogBackend"]

log = logging.getLogger(__name__)

VERSION_HINT = "version-hint.text"
_METADATA_SUFFIX = ".metadata.json"


def _version_names(version: int) -> tuple[str, ...]:
    # Java's probing order: uncompressed, gzip, then the old ".metadata.json.gz" suffix.
    return (f"v{version}.metadata.json", f"v{version}.gz.metadata.json", f"v{version}.metadata.json.gz")


class HadoopCatalogBackend(CatalogBackend):
    """A catalog that is a directory tree (Java's HadoopCatalog layout).

    Properties:
        warehouse: the root directory (a local path or ``file:`` URI). Required.

    Namespaces carry no properties (``load_namespace_properties`` gives their location);
    tables cannot be renamed, relocated, or keep metadata under ``write.metadata.path``.

    Raises:
        UnsupportedFeatureError: the warehouse is not on the local file system.
    """

    catalog_type = "hadoop"

    def __init__(self, name: str, properties: Mapping[str, str] | None = None, *, io: FileIO | None = None):
        super().__init__(name, properties, io=io)
        scheme, _ = split_scheme(self.warehouse)
        if scheme not in (None, "file"):
            raise UnsupportedFeatureError(
                f"hadoop catalog '{name}' needs a local warehouse (a path or file: URI), not {self.warehouse}"
            )
        self._root = local_path(self.warehouse)

    # ---- layout ---------------------------------------------------------------------------------

    @staticmethod
    def _as_directories(parts: Sequence[str]) -> Sequence[str]:
        # The names are the directories: a part with a path separator would be two.
        for part in parts:
            if "/" in part or "\\" in part:
                raise InvalidIdentifierError(
                    f"the hadoop catalog's names are directories: {part!r} cannot contain '/' or '\\'"
                )
        return parts

    def _dir(self, parts: Sequence[str]) -> str:
        return os.path.join(self._root, *self._as_directories(parts))

    def _location(self, parts: Sequence[str]) -> str:
        return "/".join([self.warehouse, *self._as_directories(parts)])

    @staticmethod
    def _is_table_dir(path: str) -> bool:
        try:
            return any(name.endswith(_METADATA_SUFFIX) for name in os.listdir(os.path.join(path, "metadata")))
        except (FileNotFoundError, NotADirectoryError):
            return False

    def _inside_table(self, parts: Sequence[str]) -> str | None:
        """The first proper ancestor of ``parts`` that is a table, if any."""
        for depth in range(1, len(parts)):
            if self._is_table_dir(self._dir(parts[:depth])):
                return identifier_to_string(parts[:depth])
        return None

    def _is_namespace(self, levels: Namespace) -> bool:
        path = self._dir(levels)
        return os.path.isdir(path) and not self._is_table_dir(path) and self._inside_table(levels) is None

    def _require_namespace(self, levels: Namespace) -> None:
        if levels and not self._is_namespace(levels):
            raise NoSuchNamespaceError(
                f"namespace {identifier_to_string(levels)} does not exist in catalog '{self.name}'"
            )

    def _children(self, levels: Namespace) -> list[str]:
        try:
            names = os.listdir(self._dir(levels))
        except (FileNotFoundError, NotADirectoryError):
            return []
        valid = []
        for name in names:
            try:
                parse_namespace((name,))
            except InvalidIdentifierError:
                continue  # a directory no identifier can name (e.g. "a.b")
            if os.path.isdir(self._dir((*levels, name))):
                valid.append(name)
        return sorted(valid)

    # ---- namespaces -----------------------------------------------------------------------------

    def create_namespace(
        self, namespace: str | Sequence[str], properties: Mapping[str, str] | None = None
    ) -> None:
        levels = parse_namespace(namespace)
        if properties:
            raise UnsupportedFeatureError(
                f"hadoop catalog '{self.name}': namespaces have no properties (cannot create "
                f"{identifier_to_string(levels)} with {sorted(properties)})"
            )
        inside = self._inside_table(levels)
        if inside is not None:
            raise ValidationError(
                f"cannot create namespace {identifier_to_string(levels)} inside table {inside}"
            )
        path = self._dir(levels)
        if os.path.exists(path):
            raise NamespaceAlreadyExistsError(f"namespace {identifier_to_string(levels)} already exists")
        try:
            os.makedirs(path)
        except FileExistsError as exc:
            raise NamespaceAlreadyExistsError(
                f"namespace {identifier_to_string(levels)} already exists"
            ) from exc

    def list_namespaces(self, parent: str | Sequence[str] = ()) -> list[Namespace]:
        levels = parse_namespace(parent, allow_root=True)
        self._require_namespace(levels)
        return [
            (*levels, name)
            for name in self._children(levels)
            if not self._is_table_dir(self._dir((*levels, name)))
        ]

    def load_namespace_properties(self, namespace: str | Sequence[str]) -> dict[str, str]:
        levels = parse_namespace(namespace)
        self._require_namespace(levels)
        return {"location": self._location(levels)}

    def update_namespace_properties(
        self,
        namespace: str | Sequence[str],
        removals: Iterable[str] = (),
        updates: Mapping[str, str] | None = None,
    ) -> PropertiesUpdateSummary:
        levels = parse_namespace(namespace)
        self._require_namespace(levels)
        removals = tuple(removals)
        if removals or updates:
            raise UnsupportedFeatureError(
                f"hadoop catalog '{self.name}': namespaces have no properties to change"
            )
        return PropertiesUpdateSummary(removed=(), updated=(), missing=())

    def drop_namespace(self, namespace: str | Sequence[str]) -> None:
        levels = parse_namespace(namespace)
        self._require_namespace(levels)
        path = self._dir(levels)
        if os.listdir(path):
            raise NamespaceNotEmptyError(f"namespace {identifier_to_string(levels)} is not empty ({path})")
        try:
            os.rmdir(path)
        except OSError as exc:  # something appeared meanwhile
            raise NamespaceNotEmptyError(
                f"namespace {identifier_to_string(levels)} is not empty: {exc}"
            ) from exc

    def namespace_exists(self, namespace: str | Sequence[str]) -> bool:
        return self._is_namespace(parse_namespace(namespace))

    # ---- reading tables -------------------------------------------------------------------------

    def list_tables(self, namespace: str | Sequence[str]) -> list[tuple[str, ...]]:
        levels = parse_namespace(namespace)
        self._require_namespace(levels)
        return [
            (*levels, name)
            for name in self._children(levels)
            if self._is_table_dir(self._dir((*levels, name)))
        ]

    def _version_file(self, metadata_dir: str, version: int) -> str | None:
        for name in _version_names(version):
            if os.path.isfile(os.path.join(metadata_dir, name)):
                return name
        return None

    def _read_hint(self, table_location: str) -> int | None:
        try:
            text = self.io.read_bytes(f"{table_location}/metadata/{VERSION_HINT}").decode("utf-8").strip()
            return int(text)
        except (NoSuchFileError, UnicodeDecodeError, ValueError):
            return None
        except Exception:
            log.warning("cannot read the version hint of %s", table_location, exc_info=True)
            return None

    def _listed_version(self, metadata_dir: str) -> int | None:
        try:
            names = os.listdir(metadata_dir)
        except (FileNotFoundError, NotADirectoryError):
            return None
        best = None
        for name in names:
            version = parse_metadata_version(name) if name.startswith("v") else None
            if version is not None and (best is None or version > best) and name in _version_names(version):
                best = version
        return best

    def _current_version(self, parts: tuple[str, ...]) -> tuple[int, str] | None:
        """The current version number and file name, or None when there is no table."""
        metadata_dir = os.path.join(self._dir(parts), "metadata")
        version = self._read_hint(self._location(parts))
        if version is None or self._version_file(metadata_dir, version) is None:
            version = self._listed_version(metadata_dir)
            if version is None:
                return None
        while self._version_file(metadata_dir, version + 1) is not None:
            version += 1
        name = self._version_file(metadata_dir, version)
        if name is None:  # deleted while we looked: start over from a listing
            version = self._listed_version(metadata_dir)
            name = None if version is None else self._version_file(metadata_dir, version)
            if version is None or name is None:
                return None
        return version, name

    def _read_pointer(self, identifier: tuple[str, ...]) -> str | None:
        parts = parse_identifier(identifier)
        if self._inside_table(parts) is not None:
            return None
        current = self._current_version(parts)
        if current is None:
            return None
        return f"{self._location(parts)}/metadata/{current[1]}"

    # ---- writing tables -------------------------------------------------------------------------

    def default_table_location(self, identifier: Identifier) -> str:
        """``<warehouse>/<namespace levels>/<table>``: the names themselves are the directories."""
        return self._location(parse_identifier(identifier))

    def _check_can_create(self, identifier: tuple[str, ...], metadata: TableMetadata) -> None:
        self._check_new_table_dir(identifier)
        expected = self.default_table_location(identifier)
        if not _same_local_path(metadata.location, expected):
            raise ValidationError(
                f"hadoop catalog '{self.name}': table {identifier_to_string(identifier)} must be located at "
                f"{expected}, not {metadata.location}"
            )
        _check_no_metadata_path(metadata)

    def _check_new_table_dir(self, identifier: tuple[str, ...]) -> None:
        parts = parse_identifier(identifier)
        self._require_namespace(parts[:-1])
        path = self._dir(parts)
        if self._is_table_dir(path):
            raise TableAlreadyExistsError(f"table {identifier_to_string(parts)} already exists")
        # A create transaction writes its data files and manifests under the table's
        # directory before the commit creates the table: those folders alone are no obstacle.
        if os.path.isdir(path) and not set(os.listdir(path)) <= {"data", "metadata"}:
            raise ValidationError(
                f"cannot create table {identifier_to_string(parts)}: its directory {path} is not empty "
                "(it is a namespace or holds other files)"
            )

    def _version_location(self, parts: tuple[str, ...], version: int, metadata: TableMetadata) -> str:
        name = metadata_file_name(version, compression=self._compression(metadata), hadoop=True)
        return f"{self._location(parts)}/metadata/{name}"

    def _write_version(self, parts: tuple[str, ...], version: int, metadata: TableMetadata) -> str:
        """Publish ``metadata`` as ``v<version>``, never overwriting; returns its location.

        Raises:
            FileAlreadyExistsError: that version exists (another writer won).
            FileIOError, UnsupportedFeatureError: from the FileIO.
        """
        location = self._version_location(parts, version, metadata)
        metadata_dir = os.path.join(self._dir(parts), "metadata")
        # The same version under another codec's name would be a second "v<version>".
        other = self._version_file(metadata_dir, version)
        if other is not None:
            raise FileAlreadyExistsError(f"version {version} already exists as {other}", location=location)
        self.io.write_exclusive(location, dumps_metadata(metadata, compression=self._compression(metadata)))
        # The check above and the exclusive create are not one atomic step across names: a
        # writer using the other codec may have published the same version meanwhile. Then
        # neither may claim it; withdraw ours (the other writer, seeing ours or not, stands or
        # withdraws too) and let the caller retry on the next version.
        mine = location.rsplit("/", 1)[-1]
        rival = next(
            (
                n
                for n in _version_names(version)
                if n != mine and os.path.isfile(os.path.join(metadata_dir, n))
            ),
            None,
        )
        if rival is not None:
            self.io.delete_quietly([location])
            raise FileAlreadyExistsError(
                f"version {version} was also published as {rival}", location=location
            )
        return location

    def _publish_new_table(self, ident: tuple[str, ...], metadata: TableMetadata) -> str:
        try:
            location = self._write_version(ident, 1, metadata)
        except FileAlreadyExistsError as exc:
            raise TableAlreadyExistsError(f"table {identifier_to_string(ident)} already exists") from exc
        self._write_hint(ident, 1)
        return location

    def _publish_commit(
        self, ident: tuple[str, ...], old_location: str, old: TableMetadata, new: TableMetadata
    ) -> str:
        if strip_trailing_slash(new.location) != strip_trailing_slash(old.location):
            raise ValidationError(
                f"hadoop catalog '{self.name}': table {identifier_to_string(ident)} cannot be relocated "
                f"(from {old.location} to {new.location})"
            )
        _check_no_metadata_path(new)
        previous = parse_metadata_version(old_location)
        if previous is None:
            raise CommitFailedException(
                f"cannot tell the version of the current metadata file {old_location}"
            )
        version = previous + 1
        location = self._version_location(ident, version, new)
        try:
            self._write_version(ident, version, new)
        except FileAlreadyExistsError as exc:
            raise CommitFailedException(
                f"table {identifier_to_string(ident)} was changed concurrently: version {version} exists"
            ) from exc
        except UnsupportedFeatureError:
            raise
        except Exception as exc:
            self._resolve_publish(location, new, exc)
        self._write_hint(ident, version)
        return location

    def _resolve_publish(self, location: str, new: TableMetadata, error: Exception) -> None:
        """After a failed exclusive write: return if our file is in place, else raise."""
        try:
            published = self.io.read_bytes(location)
        except NoSuchFileError:
            raise CommitFailedException(f"cannot write {location}: {error}") from error
        except Exception as check_error:
            raise CommitStateUnknownException(
                f"cannot tell whether {location} was published: {error}; checking failed: {check_error}"
            ) from error
        if published != dumps_metadata(new, compression=self._compression(new)):
            raise CommitFailedException(f"{location} was written by another writer") from error

    def _write_hint(self, parts: tuple[str, ...], version: int) -> None:
        """Best effort: a missing or stale hint only costs readers a few probes."""
        location = f"{self._location(parts)}/metadata/{VERSION_HINT}"
        checksum = checksum_location(location)
        data = str(version).encode("ascii")
        try:
            # First drop the old checksum: Java rejects a hint whose checksum does not match.
            self.io.delete(checksum)
            self.io.write_bytes(location, data, overwrite=True)
            self.io.write_bytes(checksum, hadoop_checksum(data), overwrite=True)
        except Exception:
            log.warning("could not update %s to version %d", location, version, exc_info=True)

    def drop_table(self, identifier: Identifier, purge: bool = False) -> None:
        """Drop a table, deleting its directory as Java's HadoopCatalog does (even without
        ``purge``: in this catalog a table *is* its directory). ``purge`` also deletes files
        the metadata reaches outside the directory (``write.data.path``, ...)."""
        parts = parse_identifier(identifier)
        location = self._read_pointer(parts)
        if location is None:
            raise NoSuchTableError(self._no_such_table(parts))
        loaded = (
            self._loaded_for_purge(parts, location, left="files outside its directory are left")
            if purge
            else None
        )
        if loaded is not None:
            try:
                self._purge(loaded)
            except Exception:  # best effort, as the rest of purging; the directory still goes
                log.warning("cannot purge the files of %s", identifier_to_string(parts), exc_info=True)
        path = self._dir(parts)
        try:
            shutil.rmtree(path)
        except FileNotFoundError:
            pass  # dropped by another process meanwhile
        except OSError as exc:
            # Java's HadoopCatalog fails the same way when its recursive delete fails. The
            # table may be partly deleted: say which directory to finish by hand.
            raise FileIOError(
                f"cannot drop table {identifier_to_string(parts)}: deleting its directory {path} failed: {exc}"
            ) from exc

    def rename_table(self, source: Identifier, destination: Identifier) -> None:
        parse_identifier(source)
        parse_identifier(destination)
        raise UnsupportedFeatureError(
            f"hadoop catalog '{self.name}' cannot rename tables (a table's location is its identifier)"
        )

    def register_table(self, identifier: Identifier, metadata_location: str) -> LoadedTable:
        parts = parse_identifier(identifier)
        metadata = self._read_metadata(metadata_location)
        self._check_new_table_dir(parts)
        _check_no_metadata_path(metadata)
        location = self._publish_new_table(parts, metadata)
        return LoadedTable(parts, location, metadata)


def _check_no_metadata_path(metadata: TableMetadata) -> None:
    if metadata.properties.get(WRITE_METADATA_LOCATION):
        raise ValidationError(
            f"hadoop catalog tables cannot keep metadata elsewhere ('{WRITE_METADATA_LOCATION}')"
        )


def _same_local_path(a: str, b: str) -> bool:
    """Whether two locations name one local directory."""
    try:
        return os.path.normpath(os.path.abspath(local_path(a))) == os.path.normpath(
            os.path.abspath(local_path(b))
        )
    except ValidationError:  # not a local location
        return False
