"""``icefloe.load_catalog()``: the default, environment variables, the YAML file, keywords."""

from __future__ import annotations

import os
import socket
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

import icefloe
from icefloe.backends import HadoopCatalogBackend, InMemoryCatalogBackend, SqlCatalogBackend
from icefloe.errors import ServiceUnavailableError, ValidationError

SCHEMA = pa.schema([("id", pa.int64())])


@pytest.fixture(autouse=True)
def clean_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No configuration from the machine running the tests: no YAML file, no variables."""
    monkeypatch.setenv("ICEFLOE_CONFIG", str(tmp_path / "absent.yaml"))
    for key in list(os.environ):
        if key.startswith("ICEFLOE_CATALOG__"):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)
    yield


def _close(catalog: icefloe.Catalog) -> None:
    catalog.backend.close()


def test_default_is_sqlite_in_dot_warehouse(tmp_path: Path) -> None:
    catalog = icefloe.load_catalog()
    try:
        assert catalog.name == "default"
        assert isinstance(catalog.backend, SqlCatalogBackend)
        assert Path(catalog.backend.warehouse) == tmp_path / "warehouse"
        catalog.create_namespace("db")
        table = catalog.create_table("db.t", SCHEMA)
        table.append(pa.table({"id": [1, 2]}))
        assert Path(table.location()) == tmp_path / "warehouse" / "db" / "t"
        assert (tmp_path / "warehouse" / "catalog.db").is_file()
        assert list((tmp_path / "warehouse" / "db" / "t" / "data").glob("*.parquet"))
        # The JDBC catalog layout, as Java's and PyIceberg's SQL catalogs expect.
        with sqlite3.connect(tmp_path / "warehouse" / "catalog.db") as db:
            names = [
                r[0] for r in db.execute("SELECT table_name FROM iceberg_tables WHERE table_namespace = 'db'")
            ]
        assert names == ["t"]
    finally:
        _close(catalog)
    # A second load_catalog() sees the same tables.
    again = icefloe.load_catalog()
    try:
        assert again.load_table("db.t").new_scan().count() == 2
    finally:
        _close(again)


def test_environment_variables(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ICEFLOE_CATALOG__LAKE__TYPE", "hadoop")
    monkeypatch.setenv("ICEFLOE_CATALOG__LAKE__WAREHOUSE", str(tmp_path / "lake"))
    monkeypatch.setenv("ICEFLOE_CATALOG__LAKE__S3__ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("ICEFLOE_CATALOG__LAKE__WRITE_METADATA_PATH", "x")
    catalog = icefloe.load_catalog("lake")
    try:
        assert catalog.name == "lake"
        assert isinstance(catalog.backend, HadoopCatalogBackend)
        assert Path(catalog.backend.warehouse) == tmp_path / "lake"
        # "__" is ".", "_" is "-".
        assert catalog.properties["s3.endpoint"] == "http://127.0.0.1:9"
        assert catalog.properties["write-metadata-path"] == "x"
        catalog.create_namespace("db")
        catalog.create_table("db.t", SCHEMA)
        assert (tmp_path / "lake" / "db" / "t" / "metadata" / "v1.metadata.json").is_file()
    finally:
        _close(catalog)


def test_default_catalog_from_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ICEFLOE_CATALOG__DEFAULT__WAREHOUSE", str(tmp_path / "elsewhere"))
    catalog = icefloe.load_catalog()
    try:
        assert isinstance(catalog.backend, SqlCatalogBackend)
        assert Path(catalog.backend.warehouse) == tmp_path / "elsewhere"
        catalog.create_namespace("db")
        catalog.create_table("db.t", SCHEMA)
        assert (tmp_path / "elsewhere" / "catalog.db").is_file()
        assert not (tmp_path / "warehouse").exists()
    finally:
        _close(catalog)


def test_yaml_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    config = tmp_path / "icefloe.yaml"
    config.write_text(
        "catalog:\n"
        "  mem:\n"
        "    type: memory\n"
        f"    warehouse: {tmp_path / 'mem'}\n"
        "  relative:\n"
        "    type: hadoop\n"
        "    warehouse: rel-wh\n"
    )
    monkeypatch.setenv("ICEFLOE_CONFIG", str(config))
    mem = icefloe.load_catalog("mem")
    assert isinstance(mem.backend, InMemoryCatalogBackend)
    assert Path(mem.backend.warehouse) == tmp_path / "mem"
    relative = icefloe.load_catalog("relative")
    assert isinstance(relative.backend, HadoopCatalogBackend)
    assert Path(relative.backend.warehouse) == tmp_path / "rel-wh"  # relative to the working directory


def test_precedence_keywords_then_environment_then_yaml(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config = tmp_path / "icefloe.yaml"
    config.write_text(
        f"catalog:\n  prod:\n    type: hadoop\n    warehouse: {tmp_path / 'yaml'}\n    owner: yaml\n"
    )
    monkeypatch.setenv("ICEFLOE_CONFIG", str(config))
    monkeypatch.setenv("ICEFLOE_CATALOG__PROD__WAREHOUSE", str(tmp_path / "env"))
    monkeypatch.setenv("ICEFLOE_CATALOG__PROD__COLOR", "env")

    from_env = icefloe.load_catalog("prod")
    assert isinstance(from_env.backend, HadoopCatalogBackend)
    assert Path(from_env.backend.warehouse) == tmp_path / "env"  # environment over YAML
    assert from_env.properties["owner"] == "yaml"
    assert from_env.properties["color"] == "env"

    from_kwargs = icefloe.load_catalog("prod", type="memory", warehouse=str(tmp_path / "kw"), color="kw")
    assert isinstance(from_kwargs.backend, InMemoryCatalogBackend)  # keywords over everything
    assert Path(from_kwargs.backend.warehouse) == tmp_path / "kw"
    assert from_kwargs.properties["color"] == "kw"
    assert from_kwargs.properties["owner"] == "yaml"


def test_path_objects_as_keywords(tmp_path: Path) -> None:
    catalog = icefloe.load_catalog("p", type="hadoop", warehouse=tmp_path / "pathlib")
    assert Path(catalog.backend.warehouse) == tmp_path / "pathlib"


def test_unconfigured_named_catalog_is_an_error() -> None:
    with pytest.raises(ValidationError, match="nothing_here"):
        icefloe.load_catalog("nothing_here")


def test_unknown_type_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="bogus"):
        icefloe.load_catalog("x", type="bogus", warehouse=str(tmp_path))
    with pytest.raises(ValidationError, match="uri"):
        icefloe.load_catalog("x", type="rest")
    with socket.socket() as closed:  # a port nobody listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    with pytest.raises(ServiceUnavailableError, match="cannot reach"):
        icefloe.load_catalog("x", type="rest", uri=f"http://127.0.0.1:{port}")


def test_sql_on_object_store_needs_a_uri() -> None:
    # The default SQLite file lives in a local warehouse; with a remote warehouse the user
    # must say where the database is, rather than getting a file in a made-up local path.
    with pytest.raises(ValidationError, match="uri"):
        icefloe.load_catalog("remote", type="sql", warehouse="s3://bucket/wh")


def test_bad_yaml_is_an_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text("catalog: [unclosed\n")
    monkeypatch.setenv("ICEFLOE_CONFIG", str(config))
    with pytest.raises(ValidationError, match=r"bad\.yaml"):
        icefloe.load_catalog("any")
