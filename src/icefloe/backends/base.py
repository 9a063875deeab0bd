"""CatalogBackend: where a table's metadata pointer lives, and how it is swapped.

A backend maps table identifiers to the location of their current metadata file and moves
that pointer atomically. It knows nothing about Table objects or scans; the user-facing
``Catalog`` in ``icefloe.table`` is a facade over a backend.

The commit protocol is shared here; each backend supplies a few hooks:

1. Read the pointer and the current metadata (reusing the caller's ``base`` when the pointer
   has not moved).
2. Check every requirement against the current metadata (``CommitFailedException``).
3. Apply the updates with ``MetadataBuilder`` (the metadata log records the current file).
4. Write the new metadata file (``write.metadata.compression-codec``).
5. Swap the pointer atomically (``_swap_pointer``).
6. On a definite failure, delete the new file and raise ``CommitFailedException``. When the
   outcome cannot be known, re-read the pointer: the commit succeeded if the table now points
   to our file (or lists it in its metadata log), it definitely failed if it still points to
   the old file (or lists the old file but not ours); otherwise raise
   ``CommitStateUnknownException`` and delete nothing.
7. After a success, delete metadata files that dropped out of the metadata log when
   ``write.metadata.delete-after-commit.enabled`` is true. Nothing after the swap raises.
"""

from __future__ import annotations

import logging
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from typing import ClassVar

from icefloe.backends._hadoop_crc import checksum_location
from icefloe.backends._multi import MultiTableCommits
from icefloe.backends._purge import reachable_files
from icefloe.backends._records import LoadedTable, PreparedCommit, PropertiesUpdateSummary, TableCommit
from icefloe.backends.identifiers import (
    Identifier,
    Namespace,
    identifier_to_string,
    location_segment,
    parse_identifier,
)
from icefloe.backends.views import ViewCatalog
from icefloe.errors import (
    CommitFailedException,
    CommitStateUnknownException,
    FileIOError,
    IcefloeError,
    NoSuchTableError,
    TableAlreadyExistsError,
    ValidationError,
    ValidationException,
)
from icefloe.io import FileIO, is_within, load_file_io, metadata_location, split_scheme, strip_trailing_slash
from icefloe.io.encryption import (
    EncryptingFileIO,
    KeyManagementClient,
    StandardEncryptionManager,
    create_encryption_manager,
    load_kms_client,
)
from icefloe.serde.metadata_json import (
    dumps_metadata,
    loads_metadata,
    metadata_file_name,
    parse_metadata_version,
)
from icefloe.spec.builder import MetadataBuilder, new_table_metadata
from icefloe.spec.partitioning import PartitionSpec
from icefloe.spec.properties import (
    COMMIT_NUM_STATUS_CHECKS,
    COMMIT_NUM_STATUS_CHECKS_DEFAULT,
    COMMIT_STATUS_CHECKS_MAX_WAIT_MS,
    COMMIT_STATUS_CHECKS_MAX_WAIT_MS_DEFAULT,
    COMMIT_STATUS_CHECKS_MIN_WAIT_MS,
    COMMIT_STATUS_CHECKS_MIN_WAIT_MS_DEFAULT,
    METADATA_COMPRESSION,
    METADATA_COMPRESSION_DEFAULT,
    METADATA_DELETE_AFTER_COMMIT_ENABLED,
    lenient_bool,
    lenient_int,
)
from icefloe.spec.schema import Schema
from icefloe.spec.sorting import SortOrder
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.updates import AssertCreate, TableRequirement, TableUpdate

__all__ = [
    "WAREHOUSE",
    "CatalogBackend",
    "LoadedTable",
    "PropertiesUpdateSummary",
    "TableCommit",
]

log = logging.getLogger(__name__)

WAREHOUSE = "warehouse"
# Java's TableProperties for resolving an unknown commit outcome.


def normalize_warehouse(warehouse: str) -> str:
    """The warehouse location without trailing slash; plain local paths made absolute."""
    location = strip_trailing_slash(warehouse)
    scheme, _ = split_scheme(location)
    if scheme is None:
        location = os.path.abspath(os.path.expanduser(location))
    return location


def _with_local_checksums(locations: Iterable[str]) -> list[str]:
    """``locations`` and, for local files, the ``.<name>.crc`` checksum files that Java's local
    Hadoop file system writes beside what it writes (deleting a file leaves none behind)."""
    result = []
    for location in locations:
        result.append(location)
        if split_scheme(location)[0] in (None, "file"):
            result.append(checksum_location(location))
    return result


class CatalogBackend(MultiTableCommits, ViewCatalog, ABC):
    """Namespaces, and the metadata pointer of each table.

    Methods accept identifiers as ``"db.table"`` or as sequences of parts and validate them
    (``InvalidIdentifierError``). Tables and namespaces come back as tuples of parts.

    Args:
        name: the catalog's name (the SQL catalog stores it in every row).
        properties: catalog properties (``warehouse``, FileIO settings, backend settings).
        io: the FileIO for metadata files; by default ``load_file_io(properties, warehouse)``.

    Attributes:
        name: the catalog's name.
        properties: the catalog properties.
        warehouse: the root location of tables, without trailing slash.
        io: the FileIO this backend reads and writes metadata files with.
        kms: the key management client the properties configure (``encryption.kms-type`` /
            ``encryption.kms-impl``), shared by every table of the catalog and closed with it;
            None when none is configured (the catalog's tables cannot be encrypted).
    """

    catalog_type: ClassVar[str] = ""

    def __init__(self, name: str, properties: Mapping[str, str] | None = None, *, io: FileIO | None = None):
        self.name = name
        self.properties = dict(properties or {})
        warehouse = self.properties.get(WAREHOUSE)
        if not warehouse:
            raise ValidationError(
                f"{self.catalog_type or 'the'} catalog '{name}' needs the '{WAREHOUSE}' property"
            )
        self.warehouse = normalize_warehouse(warehouse)
        self.io = io if io is not None else load_file_io(self.properties, self.warehouse)
        self.kms: KeyManagementClient | None = load_kms_client(self.properties)

    # ---- namespaces --------------------------------------------------------------------------

    @abstractmethod
    def create_namespace(
        self, namespace: str | Sequence[str], properties: Mapping[str, str] | None = None
    ) -> None:
        """Create a namespace.

        Raises:
            NamespaceAlreadyExistsError: it exists.
        """

    @abstractmethod
    def list_namespaces(self, parent: str | Sequence[str] = ()) -> list[Namespace]:
        """The namespaces directly below ``parent`` (the root by default), sorted.

        Raises:
            NoSuchNamespaceError: ``parent`` is not the root and does not exist.
        """

    @abstractmethod
    def load_namespace_properties(self, namespace: str | Sequence[str]) -> dict[str, str]:
        """The namespace's properties.

        Raises:
            NoSuchNamespaceError: it does not exist.
        """

    @abstractmethod
    def update_namespace_properties(
        self,
        namespace: str | Sequence[str],
        removals: Iterable[str] = (),
        updates: Mapping[str, str] | None = None,
    ) -> PropertiesUpdateSummary:
        """Remove and set namespace properties in one step.

        Raises:
            NoSuchNamespaceError: it does not exist.
            ValidationError: a key is both removed and updated, or is reserved.
        """

    @abstractmethod
    def drop_namespace(self, namespace: str | Sequence[str]) -> None:
        """Drop an empty namespace.

        Raises:
            NoSuchNamespaceError: it does not exist.
            NamespaceNotEmptyError: it holds tables or namespaces.
        """

    @abstractmethod
    def namespace_exists(self, namespace: str | Sequence[str]) -> bool:
        """Whether the namespace exists."""

    # ---- tables: per-backend -------------------------------------------------------------------

    @abstractmethod
    def list_tables(self, namespace: str | Sequence[str]) -> list[tuple[str, ...]]:
        """The identifiers of the tables directly in ``namespace``, sorted.

        Raises:
            NoSuchNamespaceError: it does not exist.
        """

    @abstractmethod
    def drop_table(self, identifier: Identifier, purge: bool = False) -> None:
        """Remove a table from the catalog; with ``purge``, also delete its files.

        Purging deletes every file reachable from the current metadata: data and delete
        files, manifests, manifest lists, statistics files, and the metadata files of the
        metadata log. Deletion is best effort after the table is dropped: failures are logged.

        Raises:
            NoSuchTableError: the table does not exist.
        """

    @abstractmethod
    def rename_table(self, source: Identifier, destination: Identifier) -> None:
        """Give a table another identifier (its files stay where they are).

        Raises:
            NoSuchTableError: ``source`` does not exist.
            NoSuchNamespaceError: ``destination``'s namespace does not exist.
            TableAlreadyExistsError: ``destination`` exists.
        """

    @abstractmethod
    def register_table(self, identifier: Identifier, metadata_location: str) -> LoadedTable:
        """Add an existing table, given its metadata file, to the catalog.

        Raises:
            NoSuchNamespaceError: the namespace does not exist.
            TableAlreadyExistsError: the identifier is taken.
            NoSuchFileError, InvalidMetadataError: the metadata file cannot be read.
        """

    @abstractmethod
    def _read_pointer(self, identifier: tuple[str, ...]) -> str | None:
        """The table's current metadata location, or None when there is no such table."""

    @abstractmethod
    def _check_can_create(self, identifier: tuple[str, ...], metadata: TableMetadata) -> None:
        """Raise NoSuchNamespaceError / TableAlreadyExistsError / ValidationError early."""

    def _create_pointer(self, identifier: tuple[str, ...], location: str) -> None:
        """Register a new table pointing to ``location``.

        Raises:
            TableAlreadyExistsError: the identifier was taken (nothing registered).
            CommitFailedException: definitely not registered.
            CommitStateUnknownException: the outcome is unknown.
        """
        raise NotImplementedError

    def _swap_pointer(self, identifier: tuple[str, ...], old_location: str, new_location: str) -> None:
        """Atomically move the pointer from ``old_location`` to ``new_location``.

        Raises:
            CommitFailedException: definitely not swapped (the pointer moved, a lock was busy).
            CommitStateUnknownException: the outcome is unknown.
        """
        raise NotImplementedError

    def _read_pointer_for_status_check(self, identifier: tuple[str, ...]) -> str | None:
        """Like ``_read_pointer``, after any in-flight write of ours has settled."""
        return self._read_pointer(identifier)

    # ---- tables: shared ------------------------------------------------------------------------

    def default_table_location(self, identifier: Identifier) -> str:
        """``<warehouse>/<namespace levels joined by '/'>/<table>``, each part one directory
        (``location_segment``: a ``/`` in a name is escaped)."""
        parts = parse_identifier(identifier)
        return f"{self.warehouse}/{'/'.join(map(location_segment, parts))}"

    def load_table(self, identifier: Identifier) -> LoadedTable:
        """The table's current metadata file and its content.

        Raises:
            NoSuchTableError: the table does not exist.
            NoSuchFileError, InvalidMetadataError: its metadata file cannot be read.
        """
        ident = parse_identifier(identifier)
        location = self._read_pointer(ident)
        if location is None:
            raise NoSuchTableError(self._no_such_table(ident))
        return LoadedTable(ident, location, self._read_metadata(location))

    def current_metadata_location(self, identifier: Identifier) -> str | None:
        """The table's current metadata file, or None when there is no such table (no read of
        the file itself)."""
        return self._read_pointer(parse_identifier(identifier))

    def table_exists(self, identifier: Identifier) -> bool:
        """Whether the catalog has a table with this identifier."""
        return self._read_pointer(parse_identifier(identifier)) is not None

    def check_can_create(self, identifier: Identifier, metadata: TableMetadata) -> None:
        """Fail early if ``create_table(identifier, metadata)`` would fail now (a create
        transaction checks this before writing anything; its commit checks again).

        Raises:
            NoSuchNamespaceError, TableAlreadyExistsError, ValidationError.
        """
        self._check_can_create(parse_identifier(identifier), metadata)

    def create_table(self, identifier: Identifier, metadata: TableMetadata) -> LoadedTable:
        """Write the table's first metadata file and register it.

        Args:
            identifier: the new table's identifier.
            metadata: its metadata (``new_table_metadata(...)``), written as is.

        Raises:
            NoSuchNamespaceError: the namespace does not exist.
            TableAlreadyExistsError: the identifier is taken (the written file is deleted).
            CommitStateUnknownException: registration may or may not have happened.
            FileIOError: the metadata file could not be written.
        """
        ident = parse_identifier(identifier)
        self._check_can_create(ident, metadata)
        location = self._publish_new_table(ident, metadata)
        return LoadedTable(ident, location, metadata)

    def create_new_table(
        self,
        identifier: Identifier,
        schema: Schema,
        spec: PartitionSpec,
        sort_order: SortOrder,
        location: str | None,
        properties: Mapping[str, str],
    ) -> LoadedTable:
        """Create a table from its definition (fresh ids, the location under the warehouse
        unless ``location`` is given); a REST catalog lets its server do it.

        Raises:
            as ``create_table``.
        """
        ident = parse_identifier(identifier)
        metadata = self.stage_create(ident, schema, spec, sort_order, location, properties)
        return self.create_table(ident, metadata)

    def stage_create(
        self,
        identifier: Identifier,
        schema: Schema,
        spec: PartitionSpec,
        sort_order: SortOrder,
        location: str | None,
        properties: Mapping[str, str],
    ) -> TableMetadata:
        """The metadata a new table would have, checked to be creatable now; nothing is
        registered (a create transaction starts from it; REST's ``stage-create``).

        Raises:
            NoSuchNamespaceError, TableAlreadyExistsError, ValidationError.
        """
        ident = parse_identifier(identifier)
        table_location = strip_trailing_slash(location or self.default_table_location(ident))
        metadata = new_table_metadata(schema, spec, sort_order, table_location, dict(properties))
        self._check_can_create(ident, metadata)
        return metadata

    def commit_table(
        self,
        identifier: Identifier,
        base: LoadedTable | None,
        requirements: Sequence[TableRequirement],
        updates: Sequence[TableUpdate],
    ) -> LoadedTable:
        """Apply ``updates`` to the table's current metadata if ``requirements`` hold.

        The updates apply to the metadata current at commit time, not to ``base``; the
        requirements guard what the caller's changes depend on. ``base`` (what the caller
        loaded) saves re-reading the metadata file when the pointer has not moved. With an
        ``AssertCreate`` requirement and no such table, this creates the table from the
        updates (a create transaction).

        Returns:
            The table after the commit (unchanged when the updates change nothing).

        Raises:
            NoSuchTableError: the table does not exist (and no ``AssertCreate``).
            TableAlreadyExistsError: ``AssertCreate`` and the table exists.
            CommitFailedException: a requirement failed, a concurrent commit won, or the new
                metadata file could not be written; nothing was committed, retry on fresh
                metadata.
            CommitStateUnknownException: the outcome is unknown; delete nothing.
            ValidationError, ValidationException: the updates are invalid for the metadata.
        """
        ident = parse_identifier(identifier)
        prepared = self._prepare_commit(TableCommit(ident, base, requirements, updates))
        current_location, current, new_metadata = prepared.old_location, prepared.old, prepared.new
        if current_location is None or current is None:
            return self.create_table(ident, new_metadata)
        if new_metadata is current:
            return LoadedTable(ident, current_location, current)
        new_location = self._publish_commit(ident, current_location, current, new_metadata)
        try:
            self._after_commit(ident, current, new_metadata, new_location)
        except Exception:  # the commit happened: nothing after it may fail it
            log.warning("clean-up after the commit to %s failed", identifier_to_string(ident), exc_info=True)
        return LoadedTable(ident, new_location, new_metadata)

    def _prepare_commit(self, commit: TableCommit) -> PreparedCommit:
        """Steps 1-3 of the protocol: the current metadata, the requirements checked on it, the
        updates applied (or, for ``AssertCreate`` and no table, the new table's metadata)."""
        ident = parse_identifier(commit.identifier)
        requirements, base = commit.requirements, commit.base
        creating = any(isinstance(r, AssertCreate) for r in requirements)
        current_location = self._read_pointer(ident)
        if current_location is None:
            if not creating:
                raise NoSuchTableError(self._no_such_table(ident))
            for requirement in requirements:
                requirement.validate(None)
            metadata = MetadataBuilder(None).apply_all(commit.updates).build()
            self._check_can_create(ident, metadata)
            return PreparedCommit(ident, None, None, metadata)
        if creating:
            raise TableAlreadyExistsError(f"table {identifier_to_string(ident)} already exists")
        if base is not None and base.metadata_location == current_location:
            current = base.metadata
        else:
            current = self._read_metadata(current_location)
        for requirement in requirements:
            requirement.validate(current)
        try:
            new_metadata = (
                MetadataBuilder(current, metadata_location=current_location).apply_all(commit.updates).build()
            )
        except ValidationException as exc:
            if base is not None and base.metadata_location != current_location:
                # The updates were computed on an older version: a concurrent commit (e.g. a
                # snapshot on another branch taking this sequence number). Retryable.
                raise CommitFailedException(
                    f"table {identifier_to_string(ident)} changed concurrently: {exc}"
                ) from exc
            raise
        return PreparedCommit(ident, current_location, current, new_metadata)

    def close(self) -> None:
        """Release connections (and the key management client's). The backend must not be used
        afterwards."""
        if self.kms is not None:
            self.kms.close()

    def __enter__(self) -> CatalogBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, warehouse={self.warehouse!r})"

    # ---- the protocol's steps ------------------------------------------------------------------

    def _no_such_table(self, ident: tuple[str, ...]) -> str:
        return f"table {identifier_to_string(ident)} does not exist in catalog '{self.name}'"

    def _read_metadata(self, location: str) -> TableMetadata:
        return loads_metadata(self.io.read_bytes(location), location=location)

    @staticmethod
    def _compression(metadata: TableMetadata) -> str:
        codec = metadata.properties.get(METADATA_COMPRESSION, METADATA_COMPRESSION_DEFAULT).strip().lower()
        if codec not in ("none", "gzip"):
            raise ValidationError(
                f"table property '{METADATA_COMPRESSION}' must be 'none' or 'gzip', not {codec!r}"
            )
        return codec

    def _new_metadata_location(self, metadata: TableMetadata, previous_location: str | None) -> str:
        """``<metadata dir>/<NNNNN>-<uuid>.metadata.json``, numbered after the previous file."""
        version = 0
        if previous_location is not None:
            previous = parse_metadata_version(previous_location)
            version = previous + 1 if previous is not None else 0
        name = metadata_file_name(version, compression=self._compression(metadata), hadoop=False)
        return metadata_location(metadata.location, metadata.properties, name)

    def _write_new_file(self, location: str, metadata: TableMetadata) -> None:
        """Write a metadata file that must not exist yet. Raises FileIOError."""
        self.io.write_bytes(location, dumps_metadata(metadata, compression=self._compression(metadata)))

    def _publish_new_table(self, ident: tuple[str, ...], metadata: TableMetadata) -> str:
        """Write the first metadata file and register it; returns its location."""
        location = self._new_metadata_location(metadata, None)
        self._write_new_file(location, metadata)
        try:
            self._create_pointer(ident, location)
        except CommitStateUnknownException as exc:
            self._resolve_create(ident, location, exc)
        except IcefloeError:
            # By the hook's contract every other icefloe error means nothing was registered.
            self._delete_quietly([location])
            raise
        except Exception as exc:
            self._resolve_create(ident, location, exc)
        return location

    def _resolve_create(self, ident: tuple[str, ...], location: str, error: Exception) -> None:
        try:
            pointer = self._read_pointer_for_status_check(ident)
        except Exception as check_error:
            raise CommitStateUnknownException(
                f"cannot tell whether table {identifier_to_string(ident)} was created with {location}: "
                f"{error}; checking failed too: {check_error}"
            ) from error
        if pointer == location:
            return
        if pointer is not None:
            # Someone else's table holds the name; ours was never registered.
            self._delete_quietly([location])
            raise TableAlreadyExistsError(f"table {identifier_to_string(ident)} already exists") from error
        raise CommitStateUnknownException(
            f"cannot tell whether table {identifier_to_string(ident)} was created with {location}: {error}"
        ) from error

    def _publish_commit(
        self, ident: tuple[str, ...], old_location: str, old: TableMetadata, new: TableMetadata
    ) -> str:
        """Write the new metadata file and swap the pointer to it; returns its location.

        Pointer-store backends (SQL, memory) use this as is; the Hadoop backend, whose
        pointer is the metadata file itself, overrides it.
        """
        new_location = self._new_metadata_location(new, old_location)
        try:
            self._write_new_file(new_location, new)
        except FileIOError as exc:
            raise CommitFailedException(f"cannot write the new metadata file {new_location}: {exc}") from exc
        try:
            self._swap_pointer(ident, old_location, new_location)
        except CommitFailedException:
            self._delete_quietly([new_location])
            raise
        except Exception as exc:  # CommitStateUnknownException, or anything unforeseen
            self._resolve_commit(ident, old_location, new_location, new, exc)
        return new_location

    def _resolve_commit(
        self,
        ident: tuple[str, ...],
        old_location: str,
        new_location: str,
        new: TableMetadata,
        error: Exception,
    ) -> None:
        """Settle an unknown outcome: return on success, raise CommitFailedException (after
        deleting our file) on a definite failure, else CommitStateUnknownException."""
        committed = self._check_commit_status(ident, old_location, new_location, new.properties)
        name = identifier_to_string(ident)
        if committed is True:
            log.info("commit of %s to %s succeeded despite an error: %s", name, new_location, error)
            return
        if committed is False:
            self._delete_quietly([new_location])
            raise CommitFailedException(
                f"commit of table {name} failed: {error} (the table does not point to {new_location})"
            ) from error
        raise CommitStateUnknownException(
            f"cannot tell whether the commit of table {name} to {new_location} succeeded: {error}"
        ) from error

    def _check_commit_status(
        self, ident: tuple[str, ...], old_location: str, new_location: str, properties: Mapping[str, str]
    ) -> bool | None:
        """True: committed; False: definitely not; None: unknown.

        A metadata log is a chain: each file lists its predecessor. Our file was based on
        ``old_location``, so if the current metadata lists the old file but not ours, ours was
        never part of the chain.
        """
        attempts = max(
            1, lenient_int(properties, COMMIT_NUM_STATUS_CHECKS, COMMIT_NUM_STATUS_CHECKS_DEFAULT) + 1
        )
        wait_ms = max(
            0,
            lenient_int(
                properties, COMMIT_STATUS_CHECKS_MIN_WAIT_MS, COMMIT_STATUS_CHECKS_MIN_WAIT_MS_DEFAULT
            ),
        )
        max_wait_ms = max(
            wait_ms,
            lenient_int(
                properties, COMMIT_STATUS_CHECKS_MAX_WAIT_MS, COMMIT_STATUS_CHECKS_MAX_WAIT_MS_DEFAULT
            ),
        )
        for attempt in range(attempts):
            if attempt:
                time.sleep(min(max_wait_ms, wait_ms * 2 ** (attempt - 1)) / 1000)
            try:
                pointer = self._read_pointer_for_status_check(ident)
                if pointer is None or pointer == new_location:
                    return None if pointer is None else True
                if pointer == old_location:
                    return False
                logged = {e.metadata_file for e in self._read_metadata(pointer).metadata_log}
            except Exception:
                log.warning(
                    "checking the commit status of %s failed", identifier_to_string(ident), exc_info=True
                )
                continue
            if new_location in logged:
                return True
            if old_location in logged:
                return False
            return None
        return None

    def _after_commit(
        self, ident: tuple[str, ...], old: TableMetadata, new: TableMetadata, new_location: str
    ) -> None:
        """Delete metadata files that left the metadata log, if the table asks for it."""
        if not lenient_bool(new.properties, METADATA_DELETE_AFTER_COMMIT_ENABLED, False):
            return
        kept = {e.metadata_file for e in new.metadata_log} | {new_location}
        dropped = [e.metadata_file for e in old.metadata_log if e.metadata_file not in kept]
        self._delete_metadata_files(dropped)

    def _delete_metadata_files(self, locations: Sequence[str]) -> None:
        self._delete_quietly(_with_local_checksums(locations))

    def _delete_quietly(self, locations: Iterable[str]) -> None:
        """Best-effort deletion: failures are logged, never raised."""
        self.io.delete_quietly(locations)

    def _loaded_for_purge(
        self, ident: tuple[str, ...], location: str, *, left: str = "its files are left"
    ) -> LoadedTable | None:
        """The metadata of a table being dropped with ``purge``, or None when it cannot be read.

        As Java, a table whose metadata is damaged is dropped anyway and its files are left
        (``left`` says which). That is logged as one warning naming the file and the problem:
        the reader needs no traceback to act on a damaged file.
        """
        try:
            return LoadedTable(ident, location, self._read_metadata(location))
        except Exception as exc:
            problem = str(exc) if location in str(exc) else f"{exc} ({location})"
            log.warning(
                "dropping table %s without purging its files (%s): cannot read its metadata: %s",
                identifier_to_string(ident),
                left,
                problem,
            )
            return None

    def _table_io(self, loaded: LoadedTable) -> FileIO:
        """The FileIO to read a table's manifests with: an encrypted table's decrypts them
        (when the catalog has a KMS; otherwise the reads fail and are reported)."""
        try:
            encryption = create_encryption_manager(loaded.metadata, self.kms)
        except IcefloeError as exc:
            log.warning("table %s: %s", identifier_to_string(loaded.identifier), exc)
            return self.io
        if isinstance(encryption, StandardEncryptionManager):
            return EncryptingFileIO(self.io, encryption)
        return self.io

    def _purge(self, loaded: LoadedTable) -> None:
        self.purge_files(loaded)

    def purge_files(self, loaded: LoadedTable, *, within: str | None = None) -> None:
        """Delete every file reachable from a dropped table's metadata (best effort), what
        ``drop_table(purge=True)`` deletes; with ``within``, only the files under that location
        (a server purges no file outside the table, whatever its metadata names)."""
        files = reachable_files(self._table_io(loaded), loaded.metadata, loaded.metadata_location)
        for problem in files.problems:
            log.warning("purging table %s: %s", identifier_to_string(loaded.identifier), problem)

        def kept(locations: list[str]) -> list[str]:
            return [x for x in locations if within is None or is_within(x, within)]

        self._delete_quietly(_with_local_checksums(kept(files.content_files)))
        self._delete_quietly(_with_local_checksums(kept(files.manifests)))
        self._delete_quietly(_with_local_checksums(kept(files.manifest_lists)))
        self._delete_quietly(_with_local_checksums(kept(files.statistics)))
        self._delete_metadata_files(kept(files.metadata_files))
