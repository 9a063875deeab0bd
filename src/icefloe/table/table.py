"""Table: the seed's ``Table`` API in Python.

A Table holds the metadata it last saw. It reflects its own commits at once (a committed
operation replaces its metadata); commits by other writers appear after ``refresh()``.

Loading a table to read its metadata (``icefloe describe``) imports no scan, writer or
operation: each method imports the module that does its work (``# lazy:``), which brings
pyarrow and the manifest readers along.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from icefloe.errors import NoSuchSnapshotError, UnsupportedFeatureError
from icefloe.io import FileIO
from icefloe.io.encryption import (
    EncryptingFileIO,
    EncryptionManager,
    KeyManagementClient,
    StandardEncryptionManager,
    create_encryption_manager,
)
from icefloe.io.locations import LocationProvider, load_location_provider
from icefloe.spec.encryption import is_encrypted
from icefloe.spec.partitioning import PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.spec.snapshots import HistoryEntry, Snapshot, SnapshotRef
from icefloe.spec.sorting import SortOrder
from icefloe.spec.statistics import PartitionStatisticsFile, StatisticsFile
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.factories import OperationFactories
from icefloe.table.operation import TableOperations
from icefloe.table.rows.conveniences import RowConveniences

if TYPE_CHECKING:
    from icefloe.backends.base import CatalogBackend
    from icefloe.expressions.model import Expression
    from icefloe.scan.tasks import FileScanTask
    from icefloe.table.incremental_scan import IncrementalAppendScan, IncrementalChangelogScan
    from icefloe.table.inspect import MetadataTables
    from icefloe.table.remote_planning import PlanRequest
    from icefloe.table.scan import BatchScan, TableScan
    from icefloe.table.transaction import Transaction

__all__ = ["Table"]


class Table(OperationFactories, RowConveniences):
    """An Iceberg table.

    Args:
        identifier: the table's identifier parts, e.g. ``("db", "orders")``.
        metadata: the table metadata.
        metadata_location: the metadata file ``metadata`` was read from.
        io: the FileIO for the table's files (another encrypted table's ``io()`` brings its
            key management client along).
        backend: the catalog backend that commits go through; None for a read-only table.
        kms: the key management client of an encrypted table (default: the backend's).
    """

    def __init__(
        self,
        identifier: tuple[str, ...],
        metadata: TableMetadata,
        metadata_location: str | None,
        io: FileIO,
        backend: CatalogBackend | None = None,
        *,
        catalog_name: str | None = None,
        kms: KeyManagementClient | None = None,
    ):
        if isinstance(io, EncryptingFileIO):
            kms = kms if kms is not None else io.encryption.kms
            io = io.io
        self._identifier = tuple(identifier)
        self._metadata = metadata
        self._metadata_location = metadata_location
        self._io = io
        self._backend = backend
        self._catalog_name = catalog_name
        self._kms = kms if kms is not None else (backend.kms if backend is not None else None)
        # Built on first use: a plaintext table never needs them (nor the cryptography package).
        self._encryption: EncryptionManager | None = None
        self._table_io: EncryptingFileIO | None = None

    # ---- identity and state ------------------------------------------------------------------

    @property
    def identifier(self) -> str:
        """The identifier as a dotted string (``"db.orders"``)."""
        return ".".join(self._identifier)

    @property
    def identifier_tuple(self) -> tuple[str, ...]:
        return self._identifier

    def name(self) -> str:
        """The table's full name, prefixed by the catalog name when there is one (as Java)."""
        return f"{self._catalog_name}.{self.identifier}" if self._catalog_name else self.identifier

    @property
    def metadata(self) -> TableMetadata:
        return self._metadata

    @property
    def metadata_location(self) -> str | None:
        return self._metadata_location

    def _set_state(self, metadata: TableMetadata, metadata_location: str | None) -> None:
        self._metadata = metadata
        self._metadata_location = metadata_location
        if self._encryption is not None and (
            isinstance(self._encryption, StandardEncryptionManager) != is_encrypted(metadata.properties)
        ):
            # A create transaction that committed something else than it started from.
            self._encryption = self._table_io = None
        if isinstance(self._encryption, StandardEncryptionManager):
            self._encryption.learn(metadata)

    def _learn_keys(self, metadata: TableMetadata) -> None:
        """Let the encryption manager know the keys of a version of this table that an operation
        reads (a transaction's staged state, a concurrent commit).

        Raises:
            KeyManagementError: ``metadata`` is encrypted and there is no key management client.
        """
        if self._encryption is None and is_encrypted(metadata.properties):
            self.encryption()
        if isinstance(self._encryption, StandardEncryptionManager):
            self._encryption.learn(metadata)

    def _committed_metadata(self) -> TableMetadata:
        """The metadata the catalog holds now (this table's own state is left as it is)."""
        if self._backend is None:
            return self._metadata
        committed = self._backend.load_table(self._identifier).metadata
        self._learn_keys(committed)
        return committed

    def refresh(self) -> Table:
        """Reload the metadata from the catalog; returns the table itself."""
        if self._backend is not None:
            loaded = self._backend.load_table(self._identifier)
            self._set_state(loaded.metadata, loaded.metadata_location)
        return self

    # ---- the seed's read accessors -------------------------------------------------------------

    def schema(self) -> Schema:
        return self._metadata.schema()

    def schemas(self) -> dict[int, Schema]:
        return self._metadata.schemas_by_id()

    def spec(self) -> PartitionSpec:
        return self._metadata.spec()

    def specs(self) -> dict[int, PartitionSpec]:
        return self._metadata.specs_by_id()

    def sort_order(self) -> SortOrder:
        return self._metadata.sort_order()

    def sort_orders(self) -> dict[int, SortOrder]:
        return self._metadata.sort_orders_by_id()

    def properties(self) -> dict[str, str]:
        return dict(self._metadata.properties)

    def location(self) -> str:
        return self._metadata.location

    def format_version(self) -> int:
        return self._metadata.format_version

    def current_snapshot(self) -> Snapshot | None:
        return self._metadata.current_snapshot()

    def snapshot(self, id_or_ref: int | str) -> Snapshot | None:
        """The snapshot with this id, or the head of this branch / the target of this tag.

        Returns None when there is no such snapshot, as Java does.
        """
        try:
            return self._metadata.snapshot(id_or_ref)
        except NoSuchSnapshotError:
            return None

    def snapshots(self) -> list[Snapshot]:
        """Every snapshot, oldest first."""
        return sorted(self._metadata.snapshots, key=lambda s: (s.timestamp_ms, s.sequence_number))

    def history(self) -> list[HistoryEntry]:
        return list(self._metadata.snapshot_log)

    def refs(self) -> dict[str, SnapshotRef]:
        return dict(self._metadata.refs)

    def uuid(self) -> uuid.UUID:
        return uuid.UUID(self._metadata.table_uuid)

    def statistics_files(self) -> list[StatisticsFile]:
        return list(self._metadata.statistics)

    def partition_statistics_files(self) -> list[PartitionStatisticsFile]:
        return list(self._metadata.partition_statistics)

    def io(self) -> FileIO:
        """The FileIO of the table's files; for an encrypted table an ``EncryptingFileIO``,
        which carries the table's encryption manager to the writers and readers of its files.

        Raises:
            KeyManagementError: the table is encrypted and the catalog has no key management
                client (``encryption.kms-type`` / ``encryption.kms-impl``).
        """
        encryption = self.encryption()
        if not isinstance(encryption, StandardEncryptionManager):
            return self._io
        if self._table_io is None or self._table_io.io is not self._io:
            self._table_io = EncryptingFileIO(self._io, encryption)
        return self._table_io

    def location_provider(self) -> LocationProvider:
        return load_location_provider(self._metadata.location, self._metadata.properties)

    def encryption(self) -> EncryptionManager:
        """The table's encryption manager: plaintext, or (``encryption.key-id`` set, format v3)
        a ``StandardEncryptionManager`` using the catalog's key management client.

        Raises:
            KeyManagementError: the table is encrypted and there is no key management client.
            ValidationError: encryption properties on a v1/v2 table, or a bad data key length.
        """
        if self._encryption is None:
            self._encryption = create_encryption_manager(self._metadata, self._kms, table_name=self.name())
        return self._encryption

    @property
    def inspect(self) -> MetadataTables:
        """Java's metadata tables as ``pyarrow.Table``s: ``table.inspect.files()``,
        ``.partitions()``, ``.snapshots()`` ... (see ``icefloe.table.inspect``)."""
        from icefloe.table.inspect import MetadataTables  # lazy: pyarrow

        return MetadataTables(self)

    # ---- scans -------------------------------------------------------------------------------

    def new_scan(self) -> TableScan:
        """A scan of the current snapshot (immutable builder; see TableScan)."""
        from icefloe.table.scan import TableScan  # lazy: the scan layer (pyarrow)

        return TableScan(self)

    def new_batch_scan(self) -> BatchScan:
        """A batch scan: a TableScan whose reads go through ``plan_tasks()`` groups (Java's
        ``newBatchScan()``)."""
        from icefloe.table.scan import BatchScan  # lazy: the scan layer (pyarrow)

        return BatchScan(self)

    def new_incremental_append_scan(self) -> IncrementalAppendScan:
        """The data files appended between two snapshots (Java's ``newIncrementalAppendScan()``;
        see IncrementalAppendScan)."""
        from icefloe.table.incremental_scan import IncrementalAppendScan  # lazy: the scan layer (pyarrow)

        return IncrementalAppendScan(self)

    def new_incremental_changelog_scan(self) -> IncrementalChangelogScan:
        """The rows inserted and deleted by each snapshot between two snapshots (Java's
        ``newIncrementalChangelogScan()``; see IncrementalChangelogScan)."""
        from icefloe.table.incremental_scan import IncrementalChangelogScan  # lazy: the scan layer (pyarrow)

        return IncrementalChangelogScan(self)

    def scan(self, **options: Any) -> TableScan:
        """Shortcut: ``table.scan(filter=..., columns=[...], snapshot_id=...)``."""
        scan = self.new_scan()
        if options.get("filter") is not None:
            scan = scan.filter(options.pop("filter"))
        if options.get("columns") is not None:
            scan = scan.select(*options.pop("columns"))
        if options.get("snapshot_id") is not None:
            scan = scan.use_snapshot(options.pop("snapshot_id"))
        if options.get("ref") is not None:
            scan = scan.use_ref(options.pop("ref"))
        if options.get("as_of") is not None:
            scan = scan.as_of_time(options.pop("as_of"))
        unknown = [k for k, v in options.items() if v is not None]
        if unknown:
            raise TypeError(f"unknown scan options: {unknown}")
        return scan

    # ---- operations --------------------------------------------------------------------------

    def plan_remotely(
        self, request: PlanRequest, schema: Schema, row_filter: Expression, mode: str | None
    ) -> list[FileScanTask] | None:
        """Tasks planned by the catalog's server when ``mode`` (the scan option ``planning``)
        or, when it is unset, the catalog property ``scan-planning-mode`` says ``server``; None
        to plan in this process.

        Raises:
            UnsupportedFeatureError: ``planning=server`` and the catalog's server does not plan.
        """
        from icefloe.table.remote_planning import SCAN_PLANNING_MODE, plan_on_server  # lazy: the scan layer

        backend = self._backend
        wanted = mode or (backend.properties.get(SCAN_PLANNING_MODE) if backend is not None else None)
        if wanted != "server":
            return None
        if backend is None or not getattr(backend, "serves_planning", False):
            if mode == "server":
                raise UnsupportedFeatureError(
                    f"the catalog of table {self.name()} does not plan scans on a server"
                )
            return None
        return plan_on_server(backend, self._identifier, self._metadata, request, schema, row_filter)

    def new_transaction(self) -> Transaction:
        """A transaction: operations created from it commit together (``commit_transaction()``)."""
        from icefloe.table.transaction import Transaction  # lazy: the operations (manifests, pyarrow)

        return Transaction(self)

    def _operation_target(self) -> tuple[TableOperations, bool]:
        # Each operation of a Table commits on its own, through a transaction of its own.
        from icefloe.table.transaction import Transaction  # lazy: the operations (manifests, pyarrow)

        return Transaction(self, autocommit=True), True

    # ---- data conveniences ---------------------------------------------------------------------

    def add_files(
        self,
        paths: Iterable[str],
        *,
        snapshot_properties: Mapping[str, str] | None = None,
        check_duplicate_files: bool = True,
    ) -> Snapshot:
        """Register existing Parquet files as data files, committed as one append snapshot
        (returned). See ``table/rows/add_files.py``: metrics come from the footers, partition values
        from the data, column ids from the files or the name mapping.

        Raises:
            ValidationError: naming every file that cannot be added, and why; nothing is
                committed.
        """
        from icefloe.table.rows.add_files import add_files  # lazy: pyarrow (Parquet footers)

        return add_files(
            self, paths, snapshot_properties=snapshot_properties, check_duplicate_files=check_duplicate_files
        )

    def append(
        self, data: Any, *, snapshot_properties: dict[str, str] | None = None, branch: str | None = None
    ) -> Snapshot | None:
        """Write ``data`` (pyarrow Table / RecordBatchReader / pandas or polars DataFrame) as
        new data files, partitioned and sorted per the table, and commit one append snapshot
        (to ``branch``, default main; a branch that does not exist is created from the current
        snapshot).

        Returns the new snapshot (None when ``data`` has no rows). On a failed commit the written files are deleted (unless the
        outcome is unknown).
        """
        from icefloe.table.rows.append_data import append_data  # lazy: the writers (pyarrow)

        return append_data(self, data, snapshot_properties=snapshot_properties, branch=branch)

    def __repr__(self) -> str:
        snap = self._metadata.current_snapshot_id
        return f"Table({self.name()!r}, format-version={self._metadata.format_version}, snapshot={snap})"
