"""Catalog: the user-facing facade that hands out Tables.

It turns user input (pyarrow or icefloe schemas, ``partition_by`` / ``sort_by`` strings,
identifier strings) into the spec model and delegates storage of the metadata pointer to a
catalog backend (``icefloe.backends``), which knows nothing about Tables.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from icefloe.backends import (
    CatalogBackend,
    Identifier,
    LoadedTable,
    LoadedView,
    parse_identifier,
    parse_namespace,
)
from icefloe.catalog.transactions import DefinitionMode, TableDefinition
from icefloe.errors import KeyManagementError, NoSuchTableError, ValidationError
from icefloe.io import FileIO, load_file_io
from icefloe.io.encryption import ENCRYPTION_KMS_IMPL, ENCRYPTION_KMS_TYPE
from icefloe.spec.builder import MetadataBuilder
from icefloe.spec.encryption import is_encrypted
from icefloe.spec.partitioning import PartitionSpec, build_spec
from icefloe.spec.properties import VIEW_COMMENT
from icefloe.spec.schema import Schema
from icefloe.spec.sorting import SortOrder, build_sort_order
from icefloe.spec.views import SQLViewRepresentation, ViewVersion
from icefloe.table.table import Table
from icefloe.table.view import View, spark_properties, view_summary

if TYPE_CHECKING:
    from icefloe.table.transaction import Transaction

__all__ = ["Catalog"]


def _iceberg_schema(schema: Schema | Any) -> Schema:
    """``schema`` as an icefloe Schema (see ``arrow.schema.as_iceberg_schema``)."""
    if isinstance(schema, Schema):
        return schema
    from icefloe.arrow.schema import as_iceberg_schema  # lazy: pyarrow, for a pyarrow schema

    return as_iceberg_schema(schema)


class Catalog:
    """An Iceberg catalog: namespaces and tables.

    Args:
        name: the catalog's name (prefixes ``Table.name()``).
        backend: where metadata pointers live (sql, hadoop, memory, rest).
    """

    def __init__(self, name: str, backend: CatalogBackend):
        self.name = name
        self.backend = backend

    @property
    def properties(self) -> dict[str, str]:
        return dict(self.backend.properties)

    def _io(self, location: str | None = None) -> FileIO:
        return load_file_io(self.backend.properties, location)

    def _table(
        self,
        identifier: tuple[str, ...],
        metadata: Any,
        metadata_location: str | None,
        io_properties: Mapping[str, str] | None = None,
    ) -> Table:
        # A REST catalog may hand out table-scoped FileIO settings (config, storage credentials).
        properties = {**self.backend.properties, **(io_properties or {})}
        return Table(
            identifier,
            metadata,
            metadata_location,
            load_file_io(properties, metadata.location),
            self.backend,
            catalog_name=self.name,
        )

    def _loaded(self, loaded: LoadedTable) -> Table:
        return self._table(loaded.identifier, loaded.metadata, loaded.metadata_location, loaded.io_properties)

    # ---- namespaces --------------------------------------------------------------------------

    def create_namespace(
        self, namespace: str | Sequence[str], properties: Mapping[str, str] | None = None
    ) -> None:
        self.backend.create_namespace(parse_namespace(namespace), dict(properties or {}))

    def create_namespace_if_not_exists(
        self, namespace: str | Sequence[str], properties: Mapping[str, str] | None = None
    ) -> None:
        ns = parse_namespace(namespace)
        if not self.backend.namespace_exists(ns):
            self.backend.create_namespace(ns, dict(properties or {}))

    def list_namespaces(self, parent: str | Sequence[str] = ()) -> list[tuple[str, ...]]:
        return list(self.backend.list_namespaces(parse_namespace(parent) if parent else ()))

    def namespace_exists(self, namespace: str | Sequence[str]) -> bool:
        return bool(self.backend.namespace_exists(parse_namespace(namespace)))

    def load_namespace_properties(self, namespace: str | Sequence[str]) -> dict[str, str]:
        return dict(self.backend.load_namespace_properties(parse_namespace(namespace)))

    def update_namespace_properties(
        self,
        namespace: str | Sequence[str],
        removals: Iterable[str] = (),
        updates: Mapping[str, str] | None = None,
    ) -> Any:
        return self.backend.update_namespace_properties(
            parse_namespace(namespace), tuple(removals), dict(updates or {})
        )

    def drop_namespace(self, namespace: str | Sequence[str]) -> None:
        self.backend.drop_namespace(parse_namespace(namespace))

    # ---- tables ------------------------------------------------------------------------------

    def create_table(
        self,
        identifier: Identifier,
        schema: Schema | Any,
        *,
        partition_by: Iterable[str] | PartitionSpec | None = None,
        sort_by: Iterable[str] | SortOrder | None = None,
        location: str | None = None,
        properties: Mapping[str, str] | None = None,
    ) -> Table:
        """Create a table and return it.

        Args:
            identifier: ``"db.table"`` or a tuple of parts.
            schema: an icefloe Schema, or a pyarrow Schema (fresh field ids are assigned).
            partition_by: a PartitionSpec, or terms in Spark's ``PARTITIONED BY`` form:
                ``["country", "day(ts)", "bucket(16, id)", "truncate(4, name)"]``.
            sort_by: a SortOrder or terms like ``["id", "ts DESC NULLS LAST"]``.
            location: the table location (default: the catalog's layout under the warehouse).
            properties: table properties; ``format-version`` ("1", "2" or "3", default "2")
                picks the format version.

        Raises:
            TableAlreadyExistsError, NoSuchNamespaceError, ValidationError (naming the bad
            column, term or property).
        """
        ident = parse_identifier(identifier)
        self._check_can_encrypt(ident, properties)
        iceberg_schema = _iceberg_schema(schema)
        spec = build_spec(iceberg_schema, partition_by)
        order = build_sort_order(iceberg_schema, sort_by)
        table_location = location.rstrip("/") if location else None
        loaded = self.backend.create_new_table(
            ident, iceberg_schema, spec, order, table_location, dict(properties or {})
        )
        return self._loaded(loaded)

    def create_table_if_not_exists(
        self, identifier: Identifier, schema: Schema | Any, **kwargs: Any
    ) -> Table:
        ident = parse_identifier(identifier)
        if self.backend.table_exists(ident):
            return self.load_table(ident)
        return self.create_table(ident, schema, **kwargs)

    def create_table_transaction(
        self,
        identifier: Identifier,
        schema: Schema | Any,
        *,
        partition_by: Iterable[str] | PartitionSpec | None = None,
        sort_by: Iterable[str] | SortOrder | None = None,
        location: str | None = None,
        properties: Mapping[str, str] | None = None,
    ) -> Transaction:
        """A transaction that creates the table when it commits (Java's ``createTransaction()``).

        Arguments are those of ``create_table``. The transaction offers every operation of
        ``table.new_transaction()`` (``append(data)``, ``new_append()``,
        ``update_properties()``, ...); nothing exists in the catalog until
        ``commit_transaction()`` creates the table with all of them as its first metadata
        version. ``txn.table`` is the new table once committed.

        Raises:
            TableAlreadyExistsError: the table exists (now, or at commit: then everything the
                transaction wrote is deleted).
            NoSuchNamespaceError, ValidationError: as ``create_table``.
        """
        return self._definition_transaction(
            DefinitionMode.CREATE, identifier, schema, partition_by, sort_by, location, properties
        )

    def replace_table_transaction(
        self,
        identifier: Identifier,
        schema: Schema | Any,
        *,
        partition_by: Iterable[str] | PartitionSpec | None = None,
        sort_by: Iterable[str] | SortOrder | None = None,
        location: str | None = None,
        properties: Mapping[str, str] | None = None,
    ) -> Transaction:
        """A transaction that replaces the table's definition when it commits (Java's
        ``replaceTransaction()``).

        The table keeps its uuid, snapshots, history and refs, except ``main``: after the
        commit its current snapshot is the one the transaction appends, or none. Schema,
        partition spec and sort order become the given ones (ids reused by column name, as
        Java's ``buildReplacement``); ``properties`` are added to the existing ones; the
        location stays unless ``location`` is given. See ``catalog/transactions.py``.

        Raises:
            NoSuchTableError: the table does not exist (now, or at commit).
            CommitFailedException: it was dropped and re-created before the commit.
            ValidationError: as ``create_table``; a lower ``format-version``.
        """
        return self._definition_transaction(
            DefinitionMode.REPLACE, identifier, schema, partition_by, sort_by, location, properties
        )

    def create_or_replace_table_transaction(
        self,
        identifier: Identifier,
        schema: Schema | Any,
        *,
        partition_by: Iterable[str] | PartitionSpec | None = None,
        sort_by: Iterable[str] | SortOrder | None = None,
        location: str | None = None,
        properties: Mapping[str, str] | None = None,
    ) -> Transaction:
        """``replace_table_transaction`` when the table exists, else ``create_table_transaction``
        (decided again at commit time; a table created by someone else between the start and
        the commit of a transaction that creates fails it with TableAlreadyExistsError)."""
        return self._definition_transaction(
            DefinitionMode.CREATE_OR_REPLACE, identifier, schema, partition_by, sort_by, location, properties
        )

    def _definition_transaction(
        self,
        mode: DefinitionMode,
        identifier: Identifier,
        schema: Schema | Any,
        partition_by: Iterable[str] | PartitionSpec | None,
        sort_by: Iterable[str] | SortOrder | None,
        location: str | None,
        properties: Mapping[str, str] | None,
    ) -> Transaction:
        ident = parse_identifier(identifier)
        self._check_can_encrypt(ident, properties)
        iceberg_schema = _iceberg_schema(schema)
        existing = None
        if mode is not DefinitionMode.CREATE:
            try:
                existing = self.backend.load_table(ident)
            except NoSuchTableError:
                if mode is DefinitionMode.REPLACE:
                    raise
        spec = build_spec(iceberg_schema, partition_by)
        order = build_sort_order(iceberg_schema, sort_by)
        table_location = location.rstrip("/") if location else None
        props = dict(properties or {})
        default_location = None
        if existing is None:
            # Checks that the table can be created now; a REST server also picks its location
            # and may add properties (its stage-create).
            staged = self.backend.stage_create(ident, iceberg_schema, spec, order, table_location, props)
            default_location = staged.location
            props = {**props, **staged.properties}
        definition = TableDefinition(
            identifier=ident,
            mode=mode,
            schema=iceberg_schema,
            spec=spec,
            sort_order=order,
            location=table_location,
            default_location=default_location or self.backend.default_table_location(ident),
            table_uuid=str(uuid.uuid4()),
            properties=props,
            replaced_uuid=existing.metadata.table_uuid if existing is not None else None,
        )
        if existing is not None:
            table = self._loaded(existing)
        else:
            # Not in the catalog yet (no metadata location): the table as the commit will create it.
            metadata = MetadataBuilder(None).apply_all(definition.define(None).updates).build()
            table = self._table(ident, metadata, None)
        from icefloe.table.transaction import Transaction  # lazy: the operations (manifests, pyarrow)

        return Transaction(table, definition=definition)

    def _check_can_encrypt(self, ident: tuple[str, ...], properties: Mapping[str, str] | None) -> None:
        """Refuse early to create an encrypted table this catalog could not write.

        Raises:
            KeyManagementError: ``encryption.key-id`` without a key management client.
        """
        if is_encrypted(properties or {}) and self.backend.kms is None:
            raise KeyManagementError(
                f"cannot create encrypted table {'.'.join(ident)}: catalog '{self.name}' has no key "
                f"management client (set the catalog property '{ENCRYPTION_KMS_TYPE}' or '{ENCRYPTION_KMS_IMPL}')"
            )

    def load_table(self, identifier: Identifier) -> Table:
        return self._loaded(self.backend.load_table(parse_identifier(identifier)))

    def table_exists(self, identifier: Identifier) -> bool:
        return bool(self.backend.table_exists(parse_identifier(identifier)))

    def list_tables(self, namespace: str | Sequence[str]) -> list[tuple[str, ...]]:
        return list(self.backend.list_tables(parse_namespace(namespace)))

    def rename_table(self, source: Identifier, destination: Identifier) -> Table:
        self.backend.rename_table(parse_identifier(source), parse_identifier(destination))
        return self.load_table(destination)

    def drop_table(self, identifier: Identifier, purge: bool = False) -> None:
        self.backend.drop_table(parse_identifier(identifier), purge=purge)

    def purge_table(self, identifier: Identifier) -> None:
        self.drop_table(identifier, purge=True)

    def register_table(self, identifier: Identifier, metadata_location: str) -> Table:
        return self._loaded(self.backend.register_table(parse_identifier(identifier), metadata_location))

    def commit_transaction(self, transactions: Sequence[Transaction]) -> None:
        """Commit transactions on several tables of this catalog as one atomic change: every
        table moves to its new metadata, or none does (Java's multi-table
        ``commitTransaction``; REST's ``/transactions/commit``; one database transaction on
        the SQL catalog). Conflicts retry all of them together.

        Raises:
            UnsupportedFeatureError: the catalog cannot (Hadoop).
            ValidationError: two transactions on one table, or on another catalog's tables.
            ValidationException, CommitFailedException, CommitStateUnknownException: as
                ``Transaction.commit_transaction``.
        """
        for transaction in transactions:
            if transaction.table._backend is not self.backend:
                raise ValidationError(
                    f"transaction on {transaction.table.name()} does not belong to catalog '{self.name}'"
                )
        from icefloe.table.transaction import commit_transactions  # lazy: the operations (pyarrow)

        commit_transactions(list(transactions))

    # ---- views -------------------------------------------------------------------------------

    def create_view(
        self,
        identifier: Identifier,
        schema: Schema | Any,
        sql: str,
        *,
        dialect: str = "spark",
        default_namespace: Sequence[str] | str | None = None,
        default_catalog: str | None = None,
        properties: Mapping[str, str] | None = None,
        location: str | None = None,
        comment: str | None = None,
    ) -> View:
        """Create a view whose query is ``sql`` in ``dialect``.

        Args:
            identifier: ``"db.view"`` or a tuple of parts.
            schema: the query's output (an icefloe or pyarrow Schema): names, types, docs.
            sql: the SELECT statement.
            dialect: the SQL dialect (``spark`` makes Spark able to read it: icefloe then also
                writes ``spark.query-column-names``, as Spark does).
            default_namespace: where unqualified names in ``sql`` resolve (default: the view's
                own namespace).
            default_catalog: the catalog they resolve in (default None: the view's catalog).
            properties: view properties.
            location: the view's base location (default: under the warehouse, as a table's).
            comment: stored as the ``comment`` property.

        Raises:
            ViewAlreadyExistsError: a view or a table has the identifier.
            NoSuchNamespaceError, ValidationError.
        """
        ident = parse_identifier(identifier)
        iceberg_schema = _iceberg_schema(schema)
        representation = SQLViewRepresentation(sql, dialect)
        if isinstance(default_namespace, str):
            namespace = tuple(default_namespace.split("."))
        else:
            namespace = tuple(default_namespace) if default_namespace is not None else ident[:-1]
        version = ViewVersion(
            version_id=1,
            schema_id=iceberg_schema.schema_id,
            timestamp_ms=int(time.time() * 1000),
            summary=view_summary(),
            representations=(representation,),
            default_namespace=namespace,
            default_catalog=default_catalog,
        )
        props = {**spark_properties(iceberg_schema, [representation]), **dict(properties or {})}
        if comment is not None:
            props[VIEW_COMMENT] = comment
        view_location = location.rstrip("/") if location else None
        return self._view(self.backend.create_new_view(ident, iceberg_schema, version, props, view_location))

    def load_view(self, identifier: Identifier) -> View:
        """Raises NoSuchViewError."""
        return self._view(self.backend.load_view(parse_identifier(identifier)))

    def list_views(self, namespace: str | Sequence[str]) -> list[tuple[str, ...]]:
        return list(self.backend.list_views(parse_namespace(namespace)))

    def view_exists(self, identifier: Identifier) -> bool:
        return bool(self.backend.view_exists(parse_identifier(identifier)))

    def drop_view(self, identifier: Identifier) -> None:
        """Remove the view from the catalog (its metadata files stay, as Java). Raises NoSuchViewError."""
        self.backend.drop_view(parse_identifier(identifier))

    def rename_view(self, source: Identifier, destination: Identifier) -> View:
        self.backend.rename_view(parse_identifier(source), parse_identifier(destination))
        return self.load_view(destination)

    def register_view(self, identifier: Identifier, metadata_location: str) -> View:
        return self._view(self.backend.register_view(parse_identifier(identifier), metadata_location))

    def _view(self, loaded: LoadedView) -> View:
        return View(
            loaded.identifier, loaded.metadata, loaded.metadata_location, self.backend, catalog_name=self.name
        )

    def close(self) -> None:
        """Release the backend's resources (e.g. the SQL catalog's connection pool)."""
        self.backend.close()

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Catalog({self.name!r}, type={self.backend.catalog_type!r})"
