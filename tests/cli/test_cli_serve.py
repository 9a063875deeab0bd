"""``icefloe serve``: the command line serves a catalog over the REST protocol (a real server
process), and refuses a non-loopback address without ``--auth``."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
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


def test_serve_refuses_a_public_address_without_auth(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["-p", "type=sql", "-p", f"warehouse={tmp_path}", "serve", "--host", "0.0.0.0", "--port", "1"],
    )
    assert result.exit_code == 1
    assert "without --auth" in result.output
