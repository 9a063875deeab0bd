"""The ``icefloe`` command line, command by command, through Click's runner (output piped:
tab-separated text, or JSON parsed back): look, change, maintain (``--dry-run`` changes
nothing, deleting needs ``--yes`` without a terminal), errors on stderr with exit codes and
close-match suggestions."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from typer.testing import CliRunner

import icefloe
from icefloe.cli import app

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("g", pa.string())])


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cli")


@pytest.fixture(scope="module")
def catalog_args(warehouse: Path) -> list[str]:
    return [
        "-c",
        "cli",
        "-p",
        "type=sql",
        "-p",
        f"uri=sqlite:///{warehouse}/c.db",
        "-p",
        f"warehouse={warehouse}",
    ]


@pytest.fixture(scope="module")
def catalog(warehouse: Path) -> icefloe.Catalog:
    return icefloe.load_catalog(
        "cli", type="sql", uri=f"sqlite:///{warehouse}/c.db", warehouse=str(warehouse)
    )


@pytest.fixture(scope="module")
def orders(catalog: icefloe.Catalog) -> Iterator[icefloe.Table]:
    catalog.create_namespace("db")
    table = catalog.create_table(
        "db.orders", SCHEMA, partition_by=["g"], properties={"write.delete.mode": "merge-on-read"}
    )
    for i in range(6):
        table.append(pa.table({"id": list(range(i * 10, i * 10 + 10)), "g": ["a", "b"] * 5}, schema=SCHEMA))
    table.delete("id IN (3, 14, 27)")
    yield table


class Cli:
    def __init__(self, args: list[str]):
        self.args = args
        self.runner = CliRunner()

    def __call__(self, *argv: str, code: int = 0, stdin: str | None = None) -> Any:
        result = self.runner.invoke(app, [*self.args, *argv], input=stdin)
        assert result.exit_code == code, (
            argv,
            result.exit_code,
            result.stdout,
            result.stderr,
            result.exception,
        )
        return result

    def json(self, *argv: str) -> Any:
        return json.loads(self("-o", "json", *argv).stdout)

    def tsv(self, *argv: str) -> list[list[str]]:
        return [line.split("\t") for line in self(*argv).stdout.splitlines()]


@pytest.fixture(scope="module")
def cli(catalog_args: list[str], orders: icefloe.Table) -> Cli:
    return Cli(catalog_args)


def test_look(cli: Cli, orders: icefloe.Table) -> None:
    assert cli.tsv("list") == [["name", "type"], ["db", "namespace"]]
    assert ["db.orders", "table"] in cli.tsv("list", "db")
    described = cli.json("describe", "db.orders")
    assert (
        described["records"] == "60"
        and described["current snapshot"] == orders.current_snapshot().snapshot_id
    )
    assert described["partition spec"] == "identity(g) as g" and described["sort order"] == "unsorted"
    schema = cli.json("schema", "db.orders")
    assert [(c["id"], c["name"], c["type"]) for c in schema] == [(1, "id", "long"), (2, "g", "string")]
    assert cli.json("spec", "db.orders") == [
        {"field_id": 1000, "name": "g", "transform": "identity", "source": "g"}
    ]
    assert len(cli.json("history", "db.orders")) == len(orders.history())
    snapshots = cli.json("snapshots", "db.orders")
    assert [s["snapshot_id"] for s in snapshots] == [s.snapshot_id for s in orders.metadata.snapshots]
    assert cli.json("refs", "db.orders")[0]["name"] == "main"
    files = cli.json("files", "db.orders")
    assert len(files) == 14 and {f["content"] for f in files} == {0, 1}
    assert "readable_metrics" in files[0]  # JSON shows every column
    assert cli.tsv("files", "db.orders", "--filter", "content = 1", "-n", "1")[0][:2] == [
        "content",
        "file_path",
    ]
    assert len(cli.tsv("files", "db.orders", "--filter", "content = 1")) == 3  # header + 2 delete files
    first = orders.snapshots()[0].snapshot_id
    assert len(cli.json("files", "db.orders", "--snapshot-id", str(first))) == 2
    partitions = cli.json("partitions", "db.orders")
    assert sorted((p["partition"]["g"], p["record_count"]) for p in partitions) == [("a", 30), ("b", 30)]
    assert len(cli.json("manifests", "db.orders")) == len(orders.inspect.manifests())
    assert cli("location", "db.orders").stdout.strip() == orders.location()
    assert cli.json("uuid", "db.orders") == str(orders.uuid())
    assert cli.json("properties", "get", "db.orders") == {
        "write.delete.mode": "merge-on-read",
        "write.parquet.compression-codec": "zstd",  # Java's default for a new table
    }


def test_errors(cli: Cli) -> None:
    missing = cli("describe", "db.order", code=3)
    assert "does not exist" in missing.stderr and "did you mean: db.orders?" in missing.stderr
    assert missing.stdout == ""
    assert "no property 'nope'" in cli("properties", "get", "db.orders", "nope", code=3).stderr
    assert cli("files", "db.orders", "--filter", "no_such_column = 1", code=1).stderr.startswith("error:")
    assert cli("properties", "set", "db.orders", "missing-equals", code=2).stderr
    assert cli("frobnicate", code=2).exit_code == 2
    assert cli("-o", "yaml", "list", code=2).exit_code == 2


def test_change(cli: Cli, catalog: icefloe.Catalog, orders: icefloe.Table) -> None:
    assert cli.json("create", "namespace", "tmp", "-p", "owner=me")["ok"]
    assert catalog.load_namespace_properties("tmp")["owner"] == "me"
    cli("properties", "set", "db.orders", "a=1", "b=two")
    assert cli("properties", "get", "db.orders", "b").stdout.strip() == "two"
    cli("properties", "remove", "db.orders", "a", "b")
    assert "a" not in orders.refresh().properties()
    head = orders.current_snapshot().snapshot_id
    cli("branch", "create", "db.orders", "dev")
    cli("tag", "create", "db.orders", "v1", "--snapshot-id", str(orders.snapshots()[0].snapshot_id))
    refs = {r["name"]: r for r in cli.json("refs", "db.orders")}
    assert (
        refs["dev"]["type"] == "BRANCH" and refs["dev"]["snapshot_id"] == head and refs["v1"]["type"] == "TAG"
    )
    cli("branch", "drop", "db.orders", "dev")
    cli("tag", "drop", "db.orders", "v1")
    assert set(orders.refresh().refs()) == {"main"}
    parent = orders.current_snapshot().parent_snapshot_id
    cli("rollback", "db.orders", str(parent))
    assert orders.refresh().current_snapshot().snapshot_id == parent
    cli("rollback", "db.orders", str(head), code=1)  # not an ancestor any more
    orders.manage_snapshots().set_current_snapshot(head).commit()
    catalog.create_table("tmp.scratch", SCHEMA).append(pa.table({"id": [1], "g": ["x"]}, schema=SCHEMA))
    cli("rename", "tmp.scratch", "tmp.renamed")
    assert catalog.table_exists("tmp.renamed") and not catalog.table_exists("tmp.scratch")
    location = Path(catalog.load_table("tmp.renamed").location())
    cli("drop", "table", "tmp.renamed", "--purge", code=1)  # no terminal to ask on, no --yes
    assert catalog.table_exists("tmp.renamed")
    cli("drop", "table", "tmp.renamed", "--purge", "--yes")
    assert not catalog.table_exists("tmp.renamed") and not list(location.rglob("*.parquet"))
    cli("drop", "namespace", "tmp")
    assert ("tmp",) not in catalog.list_namespaces()


def _state(table: icefloe.Table) -> tuple[Any, ...]:
    table.refresh()
    return (table.metadata_location, sorted(p.name for p in Path(table.location()).rglob("*")))


def test_maintain(cli: Cli, orders: icefloe.Table) -> None:
    rows = sorted(orders.refresh().new_scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    stray = Path(orders.location()) / "data" / "stray.parquet"
    stray.write_bytes(b"x")
    an_hour_ago = time.time() - 3600
    os.utime(stray, (an_hour_ago, an_hour_ago))
    before = _state(orders)
    planned = cli.json("compact", "db.orders", "--dry-run")
    assert sorted((g["partition"], g["files"]) for g in planned) == [(["a"], 6), (["b"], 6)]
    deletes = cli.json("rewrite-position-deletes", "db.orders", "--dry-run", "-o", "rewrite-all=true")
    assert sum(g["delete_files"] for g in deletes) == 2
    assert cli.json("rewrite-manifests", "db.orders", "--dry-run")["data manifests of spec"] >= 1
    assert (
        len(
            cli.json("expire-snapshots", "db.orders", "--older-than", "0d", "--retain-last", "1", "--dry-run")
        )
        == 6
    )
    assert cli.json("remove-orphan-files", "db.orders", "--older-than", "0d", "--dry-run")[0][
        "orphan"
    ].endswith("stray.parquet")
    assert _state(orders) == before  # no dry run changed the table or its files

    assert (
        cli.json("rewrite-position-deletes", "db.orders", "-o", "rewrite-all=true")[
            "added_delete_files_count"
        ]
        == 2
    )
    compacted = cli.json("compact", "db.orders")
    assert compacted["rewritten_data_files_count"] == 12 and compacted["added_data_files_count"] == 2
    assert (
        compacted["removed_delete_files_count"] == 2
        and orders.refresh().current_snapshot().operation == "replace"
    )
    assert cli.json("rewrite-manifests", "db.orders")["added_manifests_count"] == 1
    cli("expire-snapshots", "db.orders", "--older-than", "0d", "--retain-last", "1", code=1)  # needs --yes
    expired = cli.json("expire-snapshots", "db.orders", "--older-than", "0d", "--retain-last", "1", "--yes")
    assert len(expired["expired_snapshot_ids"]) >= 7 and expired["deleted_data_files_count"] == 12
    cli("remove-orphan-files", "db.orders", "--older-than", "30m", code=1)  # needs --yes
    assert stray.exists()
    removed = cli.json("remove-orphan-files", "db.orders", "--older-than", "30m", "--yes")
    assert [Path(p).name for p in removed["orphan_file_locations"]] == ["stray.parquet"]
    assert not stray.exists()
    cli("remove-orphan-files", "db.orders", "--older-than", "0d", "--yes", code=1)  # later than a minute ago
    assert sorted(orders.refresh().new_scan().to_arrow().to_pylist(), key=lambda r: r["id"]) == rows
    assert len(orders.snapshots()) == 1
