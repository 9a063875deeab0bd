"""``icefloe serve``: the command line serves a catalog over the REST protocol (a real server
process), takes the locations it allows, and refuses a non-loopback address without ``--auth``."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from typer.testing import CliRunner

import icefloe
from icefloe.cli.app import app
from support.rest import ServerProcess


def test_serve_answers_rest_clients(tmp_path: Path) -> None:
    warehouse = tmp_path / "wh"
    with ServerProcess(warehouse, via_cli=True) as server:
        remote = icefloe.load_catalog("remote", type="rest", uri=server.url)
        remote.create_namespace("db")
        table = remote.create_table("db.t", pa.schema([("id", pa.int64())]))
        table.append(pa.table({"id": [1, 2, 3]}))
        remote.close()
    # What the client wrote through the server is in the served SQL catalog.
    local = icefloe.load_catalog("served", type="sql", warehouse=str(warehouse))
    assert local.load_table("db.t").scan().to_arrow().column("id").to_pylist() == [1, 2, 3]
    local.close()


def test_serve_allows_the_locations_it_is_given(tmp_path: Path) -> None:
    warehouse, lake = tmp_path / "wh", tmp_path / "lake"
    options = ("--allowed-location", str(warehouse), "--allowed-location", str(lake))
    with ServerProcess(warehouse, via_cli=True, options=options) as server:
        remote = icefloe.load_catalog("remote", type="rest", uri=server.url)
        remote.create_namespace("db")
        schema = pa.schema([("id", pa.int64())])
        assert remote.create_table("db.t", schema, location=str(lake / "t")).location() == str(lake / "t")
        assert remote.create_table("db.u", schema).location() == f"{warehouse}/db/u"
        with pytest.raises(icefloe.errors.ValidationError, match="outside the allowed locations"):
            remote.create_table("db.v", schema, location=str(tmp_path / "elsewhere"))
        remote.close()
    assert (lake / "t" / "metadata").is_dir() and not (tmp_path / "elsewhere").exists()


def test_serve_refuses_a_public_address_without_auth(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["-p", "type=sql", "-p", f"warehouse={tmp_path}", "serve", "--host", "0.0.0.0", "--port", "1"],
    )
    assert result.exit_code == 1
    assert "without --auth" in result.output
