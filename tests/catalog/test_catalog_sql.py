"""SqlCatalogBackend: Java's JDBC catalog schema and rows, SQLite locking, unknown commit outcomes."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest
import sqlalchemy as sa
from catalog_helpers import new_metadata

from icefloe.backends import LoadedTable, SqlCatalogBackend, load_catalog_backend
from icefloe.errors import (
    CommitFailedException,
    CommitStateUnknownException,
    MissingDependencyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
    ValidationError,
)
from icefloe.spec.updates import SetProperties

# Java's JdbcUtil DDL before views existed (schema V0), as old Java catalogs left it.
JAVA_V0_DDL = [
    "CREATE TABLE iceberg_tables(catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) NOT NULL,"
    " table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000), previous_metadata_location"
    " VARCHAR(1000), PRIMARY KEY (catalog_name, table_namespace, table_name))",
    "CREATE TABLE iceberg_namespace_properties(catalog_name VARCHAR(255) NOT NULL, namespace VARCHAR(255)"
    " NOT NULL, property_key VARCHAR(255), property_value VARCHAR(1000),"
    " PRIMARY KEY (catalog_name, namespace, property_key))",
]


@pytest.fixture
def catalog(warehouse: Path) -> SqlCatalogBackend:
    return SqlCatalogBackend("cat", {"warehouse": str(warehouse)})


def _db(warehouse: Path) -> sqlite3.Connection:
    return sqlite3.connect(warehouse / "catalog.db")


def _create(catalog: SqlCatalogBackend, ident: str = "db.t") -> LoadedTable:
    namespace = ident.rsplit(".", 1)[0]
    if not catalog.namespace_exists(namespace):
        catalog.create_namespace(namespace)
    return catalog.create_table(ident, new_metadata(catalog, ident))


def test_schema_is_javas_v1_schema(catalog: SqlCatalogBackend, warehouse: Path) -> None:
    engine = sa.create_engine(f"sqlite:///{warehouse / 'catalog.db'}")
    inspector = sa.inspect(engine)
    tables = {c["name"]: c for c in inspector.get_columns("iceberg_tables")}
    assert list(tables) == [
        "catalog_name",
        "table_namespace",
        "table_name",
        "metadata_location",
        "previous_metadata_location",
        "iceberg_type",
    ]
    assert [tables[n]["type"].length for n in tables] == [255, 255, 255, 1000, 1000, 5]
    assert inspector.get_pk_constraint("iceberg_tables")["constrained_columns"] == [
        "catalog_name",
        "table_namespace",
        "table_name",
    ]
    props = {c["name"]: c for c in inspector.get_columns("iceberg_namespace_properties")}
    assert list(props) == ["catalog_name", "namespace", "property_key", "property_value"]
    assert [props[n]["type"].length for n in props] == [255, 255, 255, 1000]
    assert inspector.get_pk_constraint("iceberg_namespace_properties")["constrained_columns"] == [
        "catalog_name",
        "namespace",
        "property_key",
    ]
    engine.dispose()


def test_rows_are_javas(catalog: SqlCatalogBackend, warehouse: Path) -> None:
    catalog.create_namespace(("a", "b"), {"owner": "me"})
    created = _create(catalog, "a.b.t")
    committed = catalog.commit_table("a.b.t", created, [], [SetProperties({"k": "v"})])
    with _db(warehouse) as db:
        assert sorted(db.execute("SELECT * FROM iceberg_namespace_properties")) == [
            ("cat", "a.b", "exists", "true"),
            ("cat", "a.b", "owner", "me"),
        ]
        assert db.execute("SELECT * FROM iceberg_tables").fetchall() == [
            ("cat", "a.b", "t", committed.metadata_location, created.metadata_location, "TABLE")
        ]
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    # The "exists" marker is the catalog's, not the user's.
    assert catalog.load_namespace_properties("a.b") == {"owner": "me"}
    with pytest.raises(ValidationError):
        catalog.create_namespace("x", {"exists": "false"})
    with pytest.raises(ValidationError):
        catalog.update_namespace_properties("a.b", removals=["exists"])


def test_namespace_patterns_are_escaped(catalog: SqlCatalogBackend) -> None:
    catalog.create_namespace("axb")
    catalog.create_namespace("a%c")
    assert not catalog.namespace_exists("a_b")
    assert not catalog.namespace_exists("a%")
    catalog.create_namespace("a_b")
    catalog.create_namespace(("a_b", "in"))
    catalog.create_namespace(("axb", "out"))
    assert catalog.list_namespaces("a_b") == [("a_b", "in")]
    assert catalog.list_namespaces() == [("a%c",), ("a_b",), ("axb",)]


def test_views_are_not_tables(catalog: SqlCatalogBackend, warehouse: Path) -> None:
    catalog.create_namespace("db")
    with _db(warehouse) as db:
        db.execute("INSERT INTO iceberg_tables VALUES ('cat', 'db', 'v', '/x/v.metadata.json', NULL, 'VIEW')")
    assert catalog.list_tables("db") == []
    assert not catalog.table_exists("db.v")
    with pytest.raises(NoSuchTableError):
        catalog.load_table("db.v")
    metadata_dir = warehouse / "db" / "v" / "metadata"
    with pytest.raises(TableAlreadyExistsError):
        catalog.create_table("db.v", new_metadata(catalog, "db.v"))
    assert not metadata_dir.exists() or list(metadata_dir.iterdir()) == []


def test_v0_schema_is_used_as_is_or_upgraded(warehouse: Path) -> None:
    warehouse.mkdir(exist_ok=True)
    with _db(warehouse) as db:
        for ddl in JAVA_V0_DDL:
            db.execute(ddl)
    v0 = SqlCatalogBackend("cat", {"warehouse": str(warehouse)})
    created = _create(v0)
    assert v0.load_table("db.t") == created
    with _db(warehouse) as db:
        assert [c[1] for c in db.execute("PRAGMA table_info(iceberg_tables)")][
            -1
        ] == "previous_metadata_location"
    v0.close()
    v1 = SqlCatalogBackend("cat", {"warehouse": str(warehouse), "jdbc.schema-version": "V1"})
    assert v1.load_table("db.t") == created  # a NULL iceberg_type is a table
    _create(v1, "db.u")
    with _db(warehouse) as db:
        assert sorted(db.execute("SELECT table_name, iceberg_type FROM iceberg_tables")) == [
            ("t", None),
            ("u", "TABLE"),
        ]
    v1.close()


def test_catalog_names_keep_rows_apart(warehouse: Path) -> None:
    first = SqlCatalogBackend("first", {"warehouse": str(warehouse)})
    second = SqlCatalogBackend("second", {"warehouse": str(warehouse)})
    _create(first)
    assert second.list_namespaces() == []
    assert not second.table_exists("db.t")
    with pytest.raises(NoSuchNamespaceError):
        second.list_tables("db")
    _create(second)
    assert first.load_table("db.t").metadata_location != second.load_table("db.t").metadata_location


def test_default_uri_and_loading(warehouse: Path) -> None:
    backend = load_catalog_backend("cat", type="sql", warehouse=warehouse / "nested")
    assert isinstance(backend, SqlCatalogBackend)
    assert (warehouse / "nested" / "catalog.db").is_file()
    backend.close()
    with pytest.raises(ValidationError):
        SqlCatalogBackend("cat", {"warehouse": "s3://bucket/wh"})  # no uri, and no local file for SQLite
    with pytest.raises(ValidationError):
        SqlCatalogBackend("cat", {})
    with pytest.raises(MissingDependencyError):
        SqlCatalogBackend("cat", {"warehouse": str(warehouse), "uri": "mysql+pymysql://user@127.0.0.1/db"})
    empty = f"sqlite:///{warehouse / 'empty.db'}"
    with pytest.raises(ValidationError):
        SqlCatalogBackend(
            "cat", {"warehouse": str(warehouse), "uri": empty, "jdbc.init-catalog-tables": "false"}
        )


def _hold_write_lock(path: Path, seconds: float, started: threading.Event) -> None:
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("BEGIN IMMEDIATE")
        started.set()
        time.sleep(seconds)
        db.execute("ROLLBACK")
    finally:
        db.close()


def test_locked_database_is_retried(warehouse: Path) -> None:
    catalog = SqlCatalogBackend(
        "cat", {"warehouse": str(warehouse), "sql.busy-timeout-ms": "50", "sql.lock-retries": "30"}
    )
    created = _create(catalog)
    started = threading.Event()
    holder = threading.Thread(target=_hold_write_lock, args=(warehouse / "catalog.db", 0.6, started))
    holder.start()
    started.wait()
    try:
        committed = catalog.commit_table("db.t", created, [], [SetProperties({"a": "1"})])
    finally:
        holder.join()
    assert catalog.load_table("db.t") == committed
    catalog.close()


def test_lock_that_outlasts_the_retries_is_a_definite_failure(warehouse: Path) -> None:
    catalog = SqlCatalogBackend(
        "cat", {"warehouse": str(warehouse), "sql.busy-timeout-ms": "20", "sql.lock-retries": "2"}
    )
    created = _create(catalog)
    started = threading.Event()
    holder = threading.Thread(target=_hold_write_lock, args=(warehouse / "catalog.db", 3.0, started))
    holder.start()
    started.wait()
    try:
        with pytest.raises(CommitFailedException):
            catalog.commit_table("db.t", created, [], [SetProperties({"a": "1"})])
    finally:
        holder.join()
    assert catalog.load_table("db.t") == created
    # The new metadata file was deleted.
    assert [p.name for p in (warehouse / "db" / "t" / "metadata").iterdir()] == [
        created.metadata_location.rsplit("/", 1)[-1]
    ]
    catalog.close()


@pytest.mark.postgres
def test_postgres_commit_failing_at_commit_time_is_settled(postgres_url: str, warehouse: Path) -> None:
    catalog = SqlCatalogBackend("deferred_check", {"warehouse": str(warehouse), "uri": postgres_url})
    created = _create(catalog, "db.doomed")
    engine = sa.create_engine(postgres_url)
    with engine.begin() as conn:
        # A deferred constraint trigger fails the transaction at COMMIT, after the UPDATE
        # matched: the catalog cannot know the outcome from the error alone.
        conn.execute(
            sa.text(
                "CREATE OR REPLACE FUNCTION icefloe_fail() RETURNS trigger LANGUAGE plpgsql AS "
                "$$ BEGIN RAISE EXCEPTION 'refused at commit'; END $$"
            )
        )
        conn.execute(
            sa.text(
                "CREATE CONSTRAINT TRIGGER icefloe_fail_commit AFTER UPDATE ON iceberg_tables "
                "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW "
                "WHEN (NEW.catalog_name = 'deferred_check') EXECUTE FUNCTION icefloe_fail()"
            )
        )
    try:
        with pytest.raises(CommitFailedException) as info:
            catalog.commit_table("db.doomed", created, [], [SetProperties({"a": "1"})])
        # The COMMIT error left the outcome unknown; re-reading the pointer settled it.
        assert isinstance(info.value.__cause__, CommitStateUnknownException)
        assert catalog.load_table("db.doomed") == created
        assert [p.name for p in (warehouse / "db" / "doomed" / "metadata").iterdir()] == [
            created.metadata_location.rsplit("/", 1)[-1]
        ]
    finally:
        with engine.begin() as conn:
            conn.execute(sa.text("DROP TRIGGER icefloe_fail_commit ON iceberg_tables"))
        engine.dispose()
        catalog.close()


@pytest.mark.postgres
def test_postgres_url_without_driver_means_psycopg(postgres_url: str, warehouse: Path) -> None:
    plain = postgres_url.replace("postgresql+psycopg://", "postgresql://")
    catalog = SqlCatalogBackend("plain_url", {"warehouse": str(warehouse), "uri": plain})
    created = _create(catalog)
    assert catalog.load_table("db.t") == created
    catalog.close()


def test_sqlite_file_in_a_new_folder(warehouse: Path, tmp_path: Path) -> None:
    database = tmp_path / "not" / "yet" / "there.db"
    catalog = SqlCatalogBackend("cat", {"warehouse": str(warehouse), "uri": f"sqlite:///{database}"})
    _create(catalog)
    assert database.is_file()
    catalog.close()
    with pytest.raises(ValidationError):
        SqlCatalogBackend("cat", {"warehouse": str(warehouse), "uri": "not a url"})
