"""SqlCatalogBackend: table pointers in a relational database, with the schema of Iceberg's JDBC catalog.

Java's ``JdbcCatalog``, PyIceberg's ``SqlCatalog`` and icefloe share one database: the same two
tables (``_sql_schema``), namespaces stored as their levels joined by ``.``, Java's
``exists=true`` marker property for created namespaces, ``iceberg_type = 'TABLE'`` on table
rows when the schema has that column (V1). SQLAlchemy 2 drives the database: SQLite by default
(``sqlite:///<warehouse>/catalog.db``), PostgreSQL through psycopg 3.

A commit is one conditional update, so of two writers exactly one wins::

    UPDATE iceberg_tables SET metadata_location = :new, previous_metadata_location = :old
    WHERE catalog_name = :catalog AND table_namespace = :ns AND table_name = :table
      AND metadata_location = :old

SQLite runs in WAL mode with a busy timeout, and every write transaction takes the write lock
up front (``BEGIN IMMEDIATE``): a "database is locked" error then comes before anything was
written and is retried. An error during ``COMMIT`` itself leaves the outcome unknown; the
commit protocol (``base``) settles it by re-reading the pointer.
"""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from sqlalchemy import Connection, and_, delete, insert, inspect, or_, select, text, update
from sqlalchemy.exc import DBAPIError, IntegrityError

from icefloe.backends._multi import PointerSwap
from icefloe.backends._sql_engine import (
    backoff,
    create_engine,
    escape_like,
    is_busy,
    mark_write,
    rollback_quietly,
)
from icefloe.backends._sql_schema import (
    EXISTS_PROPERTY,
    MAX_NAME_LENGTH,
    NAMESPACE_PROPERTIES,
    SCHEMA,
    TABLE_TYPE,
    TABLES,
    VIEW_TYPE,
    check_location_length,
    check_properties,
    check_property_update,
)
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
    InvalidIdentifierError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchViewError,
    TableAlreadyExistsError,
    UnsupportedFeatureError,
    ValidationError,
    ViewAlreadyExistsError,
)
from icefloe.io import FileIO, local_path, split_scheme
from icefloe.spec.properties import int_property
from icefloe.spec.table_metadata import TableMetadata

__all__ = ["SqlCatalogBackend"]

log = logging.getLogger(__name__)

T = TypeVar("T")

URI = "uri"
#: Java's property: "V1" adds the iceberg_type column to an existing V0 schema.
SCHEMA_VERSION = "jdbc.schema-version"
#: Java's property: create the catalog tables when they are missing (default true).
INIT_CATALOG_TABLES = "jdbc.init-catalog-tables"
#: How long SQLite waits for a lock before reporting "database is locked".
BUSY_TIMEOUT_MS = "sql.busy-timeout-ms"
#: How often a write that found the database locked (before writing anything) is retried.
LOCK_RETRIES = "sql.lock-retries"


class SqlCatalogBackend(CatalogBackend):
    """A catalog in a SQL database (Iceberg's JDBC catalog layout).

    Properties:
        warehouse: where new tables go (``<warehouse>/<ns>/<table>``). Required.
        uri: a SQLAlchemy URL; default ``sqlite:///<warehouse>/catalog.db`` (local warehouse
            only). ``postgresql://`` means ``postgresql+psycopg://``.
        jdbc.schema-version: ``V1`` upgrades an existing V0 schema (adds ``iceberg_type``).
        jdbc.init-catalog-tables: create missing catalog tables (default ``true``).
        sql.busy-timeout-ms: SQLite's lock wait (default 10000).
        sql.lock-retries: retries of a write refused by a lock (default 10).

    Raises:
        ValidationError: no warehouse, or no uri for a non-local warehouse.
        MissingDependencyError: the database driver is not installed.
    """

    catalog_type = "sql"

    def __init__(self, name: str, properties: Mapping[str, str] | None = None, *, io: FileIO | None = None):
        super().__init__(name, properties, io=io)
        uri = self.properties.get(URI) or self._default_uri()
        self._busy_timeout_ms = int_property(self.properties, BUSY_TIMEOUT_MS, 10_000, minimum=0)
        self._lock_retries = int_property(self.properties, LOCK_RETRIES, 10, minimum=0)
        self._engine = create_engine(name, uri, busy_timeout_ms=self._busy_timeout_ms)
        self._dialect = self._engine.dialect.name
        try:
            self._typed = self._init_schema()
        except BaseException:
            self._engine.dispose()
            raise

    # ---- connection -----------------------------------------------------------------------------

    def _default_uri(self) -> str:
        scheme, _ = split_scheme(self.warehouse)
        if scheme not in (None, "file"):
            raise ValidationError(
                f"sql catalog '{self.name}': set the '{URI}' property (a database URL); the default "
                f"SQLite file needs a local warehouse, not {self.warehouse}"
            )
        return f"sqlite:///{os.path.join(local_path(self.warehouse), 'catalog.db')}"

    def close(self) -> None:
        self._engine.dispose()
        super().close()

    def _init_schema(self) -> bool:
        """Create missing catalog tables; returns whether ``iceberg_tables`` has iceberg_type."""
        names = set(inspect(self._engine).get_table_names())
        if not {TABLES.name, NAMESPACE_PROPERTIES.name} <= names:
            if self.properties.get(INIT_CATALOG_TABLES, "true").lower() != "true":
                raise ValidationError(
                    f"sql catalog '{self.name}': the catalog tables are missing and "
                    f"{INIT_CATALOG_TABLES} is false"
                )
            try:
                SCHEMA.create_all(self._engine, checkfirst=True)
            except DBAPIError:
                # Another process may have created them meanwhile (as Java checks again).
                names = set(inspect(self._engine).get_table_names())
                if not {TABLES.name, NAMESPACE_PROPERTIES.name} <= names:
                    raise
        columns = {c["name"] for c in inspect(self._engine).get_columns(TABLES.name)}
        if "iceberg_type" in columns:
            return True
        if self.properties.get(SCHEMA_VERSION, "V0").upper() == "V1":
            with self._engine.connect() as conn:
                mark_write(conn)
                with conn.begin():
                    conn.execute(text(f"ALTER TABLE {TABLES.name} ADD COLUMN iceberg_type VARCHAR(5)"))
            return True
        return False

    def _write(self, work: Callable[[Connection], T]) -> T:
        """Run ``work`` in one write transaction, retrying while the database is locked."""
        for attempt in itertools.count():
            try:
                with self._engine.connect() as conn:
                    mark_write(conn)
                    with conn.begin():
                        return work(conn)
            except DBAPIError as exc:
                if not is_busy(exc) or attempt >= self._lock_retries:
                    raise
                backoff(attempt)
        raise AssertionError("unreachable")

    def _read(self, work: Callable[[Connection], T]) -> T:
        with self._engine.connect() as conn:
            return work(conn)

    # ---- rows -------------------------------------------------------------------------------------

    def _row_filter(self, namespace: str, name: str, kind: str = TABLE_TYPE) -> Any:
        """The row of table (or view) ``name`` in ``namespace``."""
        condition = self._name_filter(namespace, name)
        return and_(condition, self._type_filter(kind)) if self._typed else condition

    def _name_filter(self, namespace: str, name: str) -> Any:
        """The row holding ``name`` in ``namespace``, whether a table or a view."""
        return and_(
            TABLES.c.catalog_name == self.name,
            TABLES.c.table_namespace == namespace,
            TABLES.c.table_name == name,
        )

    def _type_filter(self, kind: str = TABLE_TYPE) -> Any:
        if kind == VIEW_TYPE:
            return TABLES.c.iceberg_type == VIEW_TYPE
        return or_(TABLES.c.iceberg_type == TABLE_TYPE, TABLES.c.iceberg_type.is_(None))

    def _require_views(self) -> None:
        if not self._typed:
            raise UnsupportedFeatureError(
                f"sql catalog '{self.name}': views need the V1 catalog schema (the iceberg_type column); "
                f"set {SCHEMA_VERSION}=V1 to upgrade it"
            )

    @staticmethod
    def _ns_key(namespace: Namespace) -> str:
        key = identifier_to_string(namespace)
        if len(key) > MAX_NAME_LENGTH:
            raise InvalidIdentifierError(
                f"namespace {key[:40]!r}... is longer than the {MAX_NAME_LENGTH} characters the catalog stores"
            )
        return key

    def _split(self, identifier: Identifier) -> tuple[tuple[str, ...], str, str]:
        ident = parse_identifier(identifier)
        if len(ident[-1]) > MAX_NAME_LENGTH:
            raise InvalidIdentifierError(
                f"table name {ident[-1][:40]!r}... is longer than the {MAX_NAME_LENGTH} characters the catalog stores"
            )
        return ident, self._ns_key(ident[:-1]), ident[-1]

    def _namespace_exists(self, conn: Connection, key: str) -> bool:
        pattern = escape_like(key) + ".%"
        in_tables = select(TABLES.c.table_namespace).where(
            TABLES.c.catalog_name == self.name,
            or_(TABLES.c.table_namespace == key, TABLES.c.table_namespace.like(pattern, escape="!")),
        )
        in_properties = select(NAMESPACE_PROPERTIES.c.namespace).where(
            NAMESPACE_PROPERTIES.c.catalog_name == self.name,
            or_(
                NAMESPACE_PROPERTIES.c.namespace == key,
                NAMESPACE_PROPERTIES.c.namespace.like(pattern, escape="!"),
            ),
        )
        return (
            conn.execute(in_tables.limit(1)).first() is not None
            or conn.execute(in_properties.limit(1)).first() is not None
        )

    def _require_namespace(self, conn: Connection, key: str) -> None:
        if not self._namespace_exists(conn, key):
            raise NoSuchNamespaceError(f"namespace {key} does not exist in catalog '{self.name}'")

    def _all_namespace_keys(self, conn: Connection, prefix: str | None) -> set[str]:
        tables = select(TABLES.c.table_namespace).where(TABLES.c.catalog_name == self.name)
        props = select(NAMESPACE_PROPERTIES.c.namespace).where(
            NAMESPACE_PROPERTIES.c.catalog_name == self.name
        )
        if prefix is not None:
            pattern = escape_like(prefix) + ".%"
            tables = tables.where(TABLES.c.table_namespace.like(pattern, escape="!"))
            props = props.where(NAMESPACE_PROPERTIES.c.namespace.like(pattern, escape="!"))
        keys = {row[0] for row in conn.execute(tables.distinct())}
        keys.update(row[0] for row in conn.execute(props.distinct()))
        return keys

    def _properties(self, conn: Connection, key: str) -> dict[str, str]:
        rows = conn.execute(
            select(NAMESPACE_PROPERTIES.c.property_key, NAMESPACE_PROPERTIES.c.property_value).where(
                NAMESPACE_PROPERTIES.c.catalog_name == self.name, NAMESPACE_PROPERTIES.c.namespace == key
            )
        )
        return {k: v if v is not None else "" for k, v in rows}

    def _insert_properties(self, conn: Connection, key: str, properties: Mapping[str, str]) -> None:
        if properties:
            conn.execute(
                insert(NAMESPACE_PROPERTIES),
                [
                    {"catalog_name": self.name, "namespace": key, "property_key": k, "property_value": v}
                    for k, v in properties.items()
                ],
            )

    # ---- namespaces -----------------------------------------------------------------------------

    def create_namespace(
        self, namespace: str | Sequence[str], properties: Mapping[str, str] | None = None
    ) -> None:
        key = self._ns_key(parse_namespace(namespace))
        props = check_properties(properties or {})
        if EXISTS_PROPERTY in props:
            raise ValidationError(f"namespace property '{EXISTS_PROPERTY}' is reserved by the catalog")
        # Java marks every created namespace, so it exists even without other properties.
        props[EXISTS_PROPERTY] = "true"

        def work(conn: Connection) -> None:
            if self._namespace_exists(conn, key):
                raise NamespaceAlreadyExistsError(f"namespace {key} already exists in catalog '{self.name}'")
            self._insert_properties(conn, key, props)

        try:
            self._write(work)
        except IntegrityError as exc:
            raise NamespaceAlreadyExistsError(
                f"namespace {key} already exists in catalog '{self.name}'"
            ) from exc

    def list_namespaces(self, parent: str | Sequence[str] = ()) -> list[Namespace]:
        levels = parse_namespace(parent, allow_root=True)
        prefix = self._ns_key(levels) if levels else None

        def work(conn: Connection) -> set[str]:
            if prefix is not None:
                self._require_namespace(conn, prefix)
            return self._all_namespace_keys(conn, prefix)

        depth = len(levels) + 1
        children = {
            tuple(parts[:depth])
            for parts in (key.split(".") for key in self._read(work))
            if len(parts) >= depth and tuple(parts[: depth - 1]) == levels
        }
        return sorted(children)

    def load_namespace_properties(self, namespace: str | Sequence[str]) -> dict[str, str]:
        key = self._ns_key(parse_namespace(namespace))

        def work(conn: Connection) -> dict[str, str]:
            self._require_namespace(conn, key)
            return self._properties(conn, key)

        props = self._read(work)
        props.pop(EXISTS_PROPERTY, None)
        return props

    def update_namespace_properties(
        self,
        namespace: str | Sequence[str],
        removals: Iterable[str] = (),
        updates: Mapping[str, str] | None = None,
    ) -> PropertiesUpdateSummary:
        key = self._ns_key(parse_namespace(namespace))
        remove = set(removals)
        sets = check_properties(updates or {})
        check_property_update(remove, sets)

        def work(conn: Connection) -> PropertiesUpdateSummary:
            self._require_namespace(conn, key)
            current = self._properties(conn, key)
            removed = sorted(k for k in remove if k in current)
            touched = removed + [k for k in sets if k in current]
            if touched:
                conn.execute(
                    delete(NAMESPACE_PROPERTIES).where(
                        NAMESPACE_PROPERTIES.c.catalog_name == self.name,
                        NAMESPACE_PROPERTIES.c.namespace == key,
                        NAMESPACE_PROPERTIES.c.property_key.in_(touched),
                    )
                )
            self._insert_properties(conn, key, sets)
            return PropertiesUpdateSummary(
                removed=tuple(removed),
                updated=tuple(sorted(sets)),
                missing=tuple(sorted(k for k in remove if k not in current)),
            )

        return self._write(work)

    def drop_namespace(self, namespace: str | Sequence[str]) -> None:
        key = self._ns_key(parse_namespace(namespace))

        def work(conn: Connection) -> None:
            self._require_namespace(conn, key)
            tables = conn.execute(
                select(TABLES.c.table_name).where(
                    TABLES.c.catalog_name == self.name, TABLES.c.table_namespace == key
                )
            ).all()
            if tables:
                raise NamespaceNotEmptyError(f"namespace {key} is not empty: it holds {len(tables)} table(s)")
            children = self._all_namespace_keys(conn, key)
            if children:
                raise NamespaceNotEmptyError(
                    f"namespace {key} is not empty: it holds namespace(s) {', '.join(sorted(children)[:5])}"
                )
            conn.execute(
                delete(NAMESPACE_PROPERTIES).where(
                    NAMESPACE_PROPERTIES.c.catalog_name == self.name, NAMESPACE_PROPERTIES.c.namespace == key
                )
            )

        self._write(work)

    def namespace_exists(self, namespace: str | Sequence[str]) -> bool:
        key = self._ns_key(parse_namespace(namespace))
        return self._read(lambda conn: self._namespace_exists(conn, key))

    # ---- tables and views -------------------------------------------------------------------------

    def list_tables(self, namespace: str | Sequence[str]) -> list[tuple[str, ...]]:
        levels = parse_namespace(namespace)
        return sorted((*levels, name) for name in self._names(levels, TABLE_TYPE))

    def _names(self, levels: Namespace, kind: str) -> list[str]:
        key = self._ns_key(levels)

        def work(conn: Connection) -> list[str]:
            self._require_namespace(conn, key)
            query = select(TABLES.c.table_name).where(
                TABLES.c.catalog_name == self.name, TABLES.c.table_namespace == key
            )
            if self._typed:
                query = query.where(self._type_filter(kind))
            return [row[0] for row in conn.execute(query)]

        return self._read(work)

    def _pointer_query(self, namespace: str, name: str, kind: str = TABLE_TYPE) -> Any:
        return select(TABLES.c.metadata_location).where(self._row_filter(namespace, name, kind))

    def _existing_kind(self, conn: Connection, namespace: str, name: str) -> str | None:
        """``TABLE`` or ``VIEW`` when a row holds the name (they share the primary key), else None."""
        column = TABLES.c.iceberg_type if self._typed else TABLES.c.table_name
        row = conn.execute(select(column).where(self._name_filter(namespace, name))).first()
        if row is None:
            return None
        return VIEW_TYPE if self._typed and row[0] == VIEW_TYPE else TABLE_TYPE

    def _read_pointer(self, identifier: tuple[str, ...], kind: str = TABLE_TYPE) -> str | None:
        _, key, name = self._split(identifier)
        row = self._read(lambda conn: conn.execute(self._pointer_query(key, name, kind)).first())
        return row[0] if row is not None and row[0] else None

    def _read_pointer_for_status_check(self, identifier: tuple[str, ...]) -> str | None:
        if self._dialect != "postgresql":
            # SQLite: our failed connection was closed, which ended its transaction.
            return self._read_pointer(identifier)
        _, key, name = self._split(identifier)
        # Wait (briefly) for the row lock of a transaction that may still be committing.
        with self._engine.connect() as conn, conn.begin():
            conn.exec_driver_sql("SET LOCAL lock_timeout = '10s'")
            row = conn.execute(self._pointer_query(key, name).with_for_update()).first()
        return row[0] if row is not None and row[0] else None

    def _check_free(self, identifier: tuple[str, ...], kind: str) -> None:
        """Raise NoSuchNamespaceError, or TableAlreadyExistsError / ViewAlreadyExistsError when a
        table or view holds the name."""
        ident, key, name = self._split(identifier)

        def work(conn: Connection) -> None:
            self._require_namespace(conn, key)
            existing = self._existing_kind(conn, key, name)
            if existing is not None:
                raise self._exists_error(ident, kind, existing)

        self._read(work)

    def _exists_error(self, ident: tuple[str, ...], kind: str, existing: str | None = None) -> Exception:
        what = (
            "a view" if existing == VIEW_TYPE else "a table" if existing == TABLE_TYPE else "a table or view"
        )
        message = f"{what} named {identifier_to_string(ident)} already exists"
        return ViewAlreadyExistsError(message) if kind == VIEW_TYPE else TableAlreadyExistsError(message)

    def _check_can_create(self, identifier: tuple[str, ...], metadata: TableMetadata) -> None:
        self._check_free(identifier, TABLE_TYPE)

    def _new_metadata_location(self, metadata: TableMetadata, previous_location: str | None) -> str:
        location = super()._new_metadata_location(metadata, previous_location)
        check_location_length(location)
        return location

    def _pointer_write(
        self, statements: Sequence[tuple[Any, bool, Callable[[], Exception]]], *, what: str
    ) -> None:
        """Run pointer INSERTs/UPDATEs in one transaction: each must touch exactly one row.

        ``statements`` holds ``(statement, is_update, on_conflict)``: an UPDATE that matched no
        row, or an INSERT that hit the primary key, rolls everything back and raises
        ``on_conflict()``. (An INSERT's rowcount is not checked: psycopg reports -1.)

        Errors before COMMIT are definite failures (retried while the database is locked);
        an error during COMMIT leaves the outcome unknown.
        """
        for attempt in itertools.count():
            conn = self._engine.connect()
            try:
                mark_write(conn)
                conflict: Callable[[], Exception] | None = None
                try:
                    conn.begin()
                    for statement, is_update, on_conflict in statements:
                        conflict = on_conflict
                        rowcount = conn.execute(statement).rowcount
                        if is_update and rowcount != 1:
                            break
                    else:
                        conflict = None
                except IntegrityError as exc:
                    rollback_quietly(conn)
                    assert conflict is not None
                    raise conflict() from exc
                except DBAPIError as exc:
                    rollback_quietly(conn)
                    if is_busy(exc) and attempt < self._lock_retries:
                        backoff(attempt)
                        continue
                    raise CommitFailedException(
                        f"{what} failed before anything was committed: {exc}"
                    ) from exc
                if conflict is not None:
                    rollback_quietly(conn)
                    raise conflict()
                try:
                    conn.commit()
                except Exception as exc:
                    # Close the broken connection: on SQLite that ends the transaction for good.
                    conn.invalidate()
                    raise CommitStateUnknownException(
                        f"{what}: the database failed during COMMIT: {exc}"
                    ) from exc
                return
            finally:
                conn.close()

    def _insert_statement(
        self, identifier: tuple[str, ...], location: str, kind: str = TABLE_TYPE
    ) -> tuple[Any, bool, Callable[[], Exception]]:
        ident, key, name = self._split(identifier)
        row: dict[str, Any] = {
            "catalog_name": self.name,
            "table_namespace": key,
            "table_name": name,
            "metadata_location": location,
            "previous_metadata_location": None,
        }
        if self._typed:
            row["iceberg_type"] = kind
        return insert(TABLES).values(**row), False, lambda: self._exists_error(ident, kind)

    def _update_statement(
        self, identifier: tuple[str, ...], old_location: str, new_location: str, kind: str = TABLE_TYPE
    ) -> tuple[Any, bool, Callable[[], Exception]]:
        ident, key, name = self._split(identifier)
        statement = (
            update(TABLES)
            .where(self._row_filter(key, name, kind), TABLES.c.metadata_location == old_location)
            .values(metadata_location=new_location, previous_metadata_location=old_location)
        )
        what = "view" if kind == VIEW_TYPE else "table"
        return (
            statement,
            True,
            lambda: CommitFailedException(
                f"{what} {identifier_to_string(ident)} was changed concurrently: it no longer points to {old_location}"
            ),
        )

    def _create_pointer(self, identifier: tuple[str, ...], location: str) -> None:
        what = f"registering table {identifier_to_string(identifier)}"
        self._pointer_write([self._insert_statement(identifier, location)], what=what)

    def _swap_pointer(self, identifier: tuple[str, ...], old_location: str, new_location: str) -> None:
        what = f"commit to table {identifier_to_string(identifier)}"
        self._pointer_write([self._update_statement(identifier, old_location, new_location)], what=what)

    def _swap_pointers(self, swaps: Sequence[PointerSwap]) -> None:
        statements = [
            self._insert_statement(s.identifier, s.new_location)
            if s.old_location is None
            else self._update_statement(s.identifier, s.old_location, s.new_location)
            for s in swaps
        ]
        names = ", ".join(identifier_to_string(s.identifier) for s in swaps)
        self._pointer_write(statements, what=f"multi-table commit to {names}")

    def _drop(self, identifier: tuple[str, ...], kind: str) -> bool:
        _, key, name = self._split(identifier)
        return bool(
            self._write(
                lambda conn: (
                    conn.execute(delete(TABLES).where(self._row_filter(key, name, kind))).rowcount == 1
                )
            )
        )

    def drop_table(self, identifier: Identifier, purge: bool = False) -> None:
        ident, _, _ = self._split(identifier)
        loaded = self._load_for_purge(ident) if purge else None
        if not self._drop(ident, TABLE_TYPE):
            raise NoSuchTableError(self._no_such_table(ident))
        if loaded is not None:
            self._purge(loaded)

    def _load_for_purge(self, ident: tuple[str, ...]) -> LoadedTable | None:
        location = self._read_pointer(ident)
        if location is None:
            raise NoSuchTableError(self._no_such_table(ident))
        return self._loaded_for_purge(ident, location)

    def _rename(self, source: Identifier, destination: Identifier, kind: str) -> None:
        src, src_key, src_name = self._split(source)
        dst, dst_key, dst_name = self._split(destination)

        def work(conn: Connection) -> None:
            if conn.execute(self._pointer_query(src_key, src_name, kind)).first() is None:
                raise (
                    NoSuchViewError(self._no_such_view(src))
                    if kind == VIEW_TYPE
                    else NoSuchTableError(self._no_such_table(src))
                )
            if src == dst:
                return
            self._require_namespace(conn, dst_key)
            existing = self._existing_kind(conn, dst_key, dst_name)
            if existing is not None:
                raise self._exists_error(dst, kind, existing)
            conn.execute(
                update(TABLES)
                .where(self._row_filter(src_key, src_name, kind))
                .values(table_namespace=dst_key, table_name=dst_name)
            )

        try:
            self._write(work)
        except IntegrityError as exc:  # a racing create holds the name
            raise self._exists_error(dst, kind) from exc

    def rename_table(self, source: Identifier, destination: Identifier) -> None:
        self._rename(source, destination, TABLE_TYPE)

    def register_table(self, identifier: Identifier, metadata_location: str) -> LoadedTable:
        ident, _, _ = self._split(identifier)
        check_location_length(metadata_location)
        metadata = self._read_metadata(metadata_location)
        self._check_can_create(ident, metadata)
        try:
            self._create_pointer(ident, metadata_location)
        except CommitStateUnknownException:
            # The file is not ours: never delete it; only tell whether it is registered now.
            if self._read_pointer_for_status_check(ident) != metadata_location:
                raise
        return LoadedTable(ident, metadata_location, metadata)

    # ---- view hooks (backends/views.py) -----------------------------------------------------------

    def _read_view_pointer(self, identifier: tuple[str, ...]) -> str | None:
        self._require_views()
        return self._read_pointer(identifier, VIEW_TYPE)

    def _check_can_create_view(self, identifier: tuple[str, ...]) -> None:
        self._require_views()
        self._check_free(identifier, VIEW_TYPE)

    def _create_view_pointer(self, identifier: tuple[str, ...], location: str) -> None:
        check_location_length(location)
        what = f"registering view {identifier_to_string(identifier)}"
        self._pointer_write([self._insert_statement(identifier, location, VIEW_TYPE)], what=what)

    def _swap_view_pointer(self, identifier: tuple[str, ...], old_location: str, new_location: str) -> None:
        check_location_length(new_location)
        what = f"commit to view {identifier_to_string(identifier)}"
        self._pointer_write(
            [self._update_statement(identifier, old_location, new_location, VIEW_TYPE)], what=what
        )

    def _delete_view_pointer(self, identifier: tuple[str, ...]) -> bool:
        self._require_views()
        return self._drop(identifier, VIEW_TYPE)

    def _rename_view_pointer(self, source: tuple[str, ...], destination: tuple[str, ...]) -> None:
        self._require_views()
        self._rename(source, destination, VIEW_TYPE)

    def _view_names(self, namespace: tuple[str, ...]) -> list[str]:
        self._require_views()
        return self._names(namespace, VIEW_TYPE)
