"""Views on the SQL and in-memory catalogs: create, load, list, exists, replace, properties,
location, rename, drop; a table and a view never share a name; the SQL catalog's rows are
Java's V1 layout (``iceberg_type = 'VIEW'``), metadata files gzip as Java writes them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pyarrow as pa
import pytest

from icefloe.errors import (
    CommitFailedException,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchViewError,
    TableAlreadyExistsError,
    UnsupportedFeatureError,
    ViewAlreadyExistsError,
)
from icefloe.serde.view_json import loads_view_metadata
from support.catalogs import make_catalog

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])


@pytest.fixture(params=["sql", "memory"])
def catalog(request: pytest.FixtureRequest, tmp_path: Path):  # type: ignore[no-untyped-def]
    cat = make_catalog(request.param, tmp_path / "wh")
    yield cat
    cat.close()


def test_view_lifecycle(catalog) -> None:  # type: ignore[no-untyped-def]
    view = catalog.create_view("db.v", SCHEMA, "SELECT id, name FROM db.t", comment="first")
    assert view.sql_for("spark").sql == "SELECT id, name FROM db.t"
    assert view.current_version().default_namespace == ("db",)
    assert view.properties()["spark.query-column-names"] == "id,name"
    assert view.properties()["comment"] == "first"
    assert view.metadata_location.endswith(".gz.metadata.json")
    assert (
        loads_view_metadata(Path(view.metadata_location.removeprefix("file:")).read_bytes()) == view.metadata
    )
    assert catalog.view_exists("db.v") and not catalog.table_exists("db.v")
    assert catalog.list_views("db") == [("db", "v")]
    assert catalog.list_tables("db") == []

    new_schema = pa.schema([("n", pa.int64())])
    view.replace_version().with_query("spark", "SELECT count(*) AS n FROM db.t").with_schema(
        new_schema
    ).commit()
    loaded = catalog.load_view("db.v")
    assert loaded.current_version().version_id == 2
    assert loaded.schema().fields[0].name == "n"
    assert [e.version_id for e in loaded.history()] == [1, 2]
    assert loaded.properties()["spark.query-column-names"] == "n"

    view.update_properties().set("owner", "me").remove("comment").commit()
    assert catalog.load_view("db.v").properties().get("owner") == "me"
    assert "comment" not in catalog.load_view("db.v").properties()
    view.update_location().set_location(view.location() + "-moved").commit()
    assert catalog.load_view("db.v").location().endswith("-moved")

    catalog.create_namespace("other")
    renamed = catalog.rename_view("db.v", "other.w")
    assert renamed.uuid() == view.uuid()
    assert not catalog.view_exists("db.v")
    with pytest.raises(NamespaceNotEmptyError):
        catalog.drop_namespace("other")
    catalog.drop_view("other.w")
    with pytest.raises(NoSuchViewError):
        catalog.load_view("other.w")
    with pytest.raises(NoSuchViewError):
        catalog.drop_view("other.w")


def test_tables_and_views_never_share_a_name(catalog) -> None:  # type: ignore[no-untyped-def]
    catalog.create_table("db.t", SCHEMA)
    catalog.create_view("db.v", SCHEMA, "SELECT 1")
    with pytest.raises(ViewAlreadyExistsError, match=r"a table named db\.t"):
        catalog.create_view("db.t", SCHEMA, "SELECT 1")
    with pytest.raises((TableAlreadyExistsError, ViewAlreadyExistsError)):
        catalog.create_table("db.v", SCHEMA)
    with pytest.raises((TableAlreadyExistsError, ViewAlreadyExistsError)):
        catalog.rename_table("db.t", "db.v")
    with pytest.raises(ViewAlreadyExistsError):
        catalog.rename_view("db.v", "db.t")
    with pytest.raises(NoSuchNamespaceError):
        catalog.create_view("nope.v", SCHEMA, "SELECT 1")


def test_a_concurrent_replace_is_retried_and_a_stale_uuid_fails(catalog) -> None:  # type: ignore[no-untyped-def]
    first = catalog.create_view("db.v", SCHEMA, "SELECT 1")
    second = catalog.load_view("db.v")
    first.update_properties().set("a", "1").commit()
    # second holds the old metadata: its commit loses the swap, reloads, and applies on top.
    second.update_properties().set("b", "2").commit()
    assert {"a", "b"} <= set(catalog.load_view("db.v").properties())
    catalog.drop_view("db.v")
    catalog.create_view("db.v", SCHEMA, "SELECT 1")
    with pytest.raises(CommitFailedException, match="view UUID does not match"):
        first.update_properties().set("c", "3").commit()


def test_sql_view_rows_are_javas_v1_layout(tmp_path: Path) -> None:
    catalog = make_catalog("sql", tmp_path / "wh", name="cat")
    view = catalog.create_view("db.v", SCHEMA, "SELECT 1")
    catalog.create_table("db.t", SCHEMA)
    with sqlite3.connect(tmp_path / "wh" / "catalog.db") as db:
        rows = sorted(db.execute("SELECT table_name, metadata_location, iceberg_type FROM iceberg_tables"))
    assert rows == [("t", rows[0][1], "TABLE"), ("v", view.metadata_location, "VIEW")]
    catalog.close()


def test_views_need_the_v1_schema_and_hadoop_has_none(tmp_path: Path) -> None:
    hadoop = make_catalog("hadoop", tmp_path / "h")
    with pytest.raises(UnsupportedFeatureError, match="does not support views"):
        hadoop.create_view("db.v", SCHEMA, "SELECT 1")
    db = tmp_path / "v0" / "catalog.db"
    db.parent.mkdir()
    with sqlite3.connect(db) as conn:  # a V0 catalog: no iceberg_type column
        conn.execute(
            "CREATE TABLE iceberg_tables (catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) "
            "NOT NULL, table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000), "
            "previous_metadata_location VARCHAR(1000), PRIMARY KEY (catalog_name, table_namespace, table_name))"
        )
        conn.execute(
            "CREATE TABLE iceberg_namespace_properties (catalog_name VARCHAR(255) NOT NULL, namespace "
            "VARCHAR(255) NOT NULL, property_key VARCHAR(255), property_value VARCHAR(1000), "
            "PRIMARY KEY (catalog_name, namespace, property_key))"
        )
    v0 = make_catalog("sql", tmp_path / "v0")
    with pytest.raises(UnsupportedFeatureError, match=r"jdbc\.schema-version=V1"):
        v0.create_view("db.v", SCHEMA, "SELECT 1")
    v0.close()
    upgraded = make_catalog("sql", tmp_path / "v0", name="other", **{"jdbc.schema-version": "V1"})
    assert upgraded.create_view("db.v", SCHEMA, "SELECT 1").current_version().version_id == 1
    upgraded.close()
