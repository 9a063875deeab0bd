"""icefloe's REST server answers Java's own REST client as Java's reference server does.

One JVM runs ``_clients/rest_parity/RestParity.java``: Java Iceberg 1.9.2's ``RESTCatalog``
drives the same scenarios against the project's Java server (Iceberg's ``CatalogHandlers`` over
its ``JdbcCatalog``, ``rest_java.py``), icefloe's server with the scenarios' outside folder
among its allowed locations, and icefloe's server as configured by default (the warehouse
alone). The scenarios are those of Iceberg's REST Compatibility Kit where icefloe once answered
differently: the words of missing and conflicting objects (Java's client shows them and tools
match them), rename conflicts, failed requirements (``assert-create`` included), locations
outside the warehouse, names with ``/`` and ``.``, the properties of a new table. Each outcome
(a result, or an exception's class and message) must be Java's.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import icefloe
from icefloe.rest import app
from support.catalogs import files_under
from support.rest import serve_in_thread

from .rest_java import JavaRestServer, compiled_classes, iceberg_jars

CLIENT = Path(__file__).resolve().parent / "_clients" / "rest_parity"

#: Where icefloe deliberately answers otherwise, and why.
DIFFERENT = {
    # Java's JDBC catalog creates a table in a namespace nobody created (the kit's
    # tableCreationWithoutNamespace fails on Java's server); the spec's answer is a 404.
    "create a table in a missing namespace": (
        {"result": True},
        {"error": "NoSuchNamespaceException", "message": re.compile(r"Namespace does not exist: p\d+")},
    ),
}
LOCATIONS = [
    "a table outside the warehouse",
    "a table moved outside the warehouse",
    "a create transaction outside the warehouse",
    "a view outside the warehouse",
]


class Servers:
    def __init__(self, root: Path, java: JavaRestServer, icefloe_url: str, default_url: str):
        self.root = root
        self.urls = {"java": java.url, "icefloe": icefloe_url, "icefloe-default": default_url}
        self.outside = {name: root / f"outside-{name}" for name in self.urls}


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    root = tmp_path_factory.mktemp("rest-parity")
    catalogs = []
    for name in ("icefloe", "icefloe-default"):
        (root / f"outside-{name}").mkdir()
        catalogs.append(icefloe.load_catalog(name, type="sql", warehouse=str(root / name)))
    (root / "outside-java").mkdir()
    allowed = [catalogs[0].backend.warehouse, str(root / "outside-icefloe")]
    with (
        JavaRestServer(root / "java") as java,
        serve_in_thread(app(catalogs[0], allowed_locations=allowed)) as icefloe_url,
        serve_in_thread(app(catalogs[1])) as default_url,
    ):
        yield Servers(root, java, icefloe_url, default_url)
    for catalog in catalogs:
        catalog.close()


@pytest.fixture(scope="module")
def outcomes(servers: Servers) -> dict[str, dict[str, Any]]:
    classes = compiled_classes("rest-parity", CLIENT)
    runtime, spark_jars = iceberg_jars()
    result = subprocess.run(
        [
            "java",
            "-XX:TieredStopAtLevel=1",
            "-XX:+UseSerialGC",
            "-Dlog4j2.level=ERROR",
            "-cp",
            f"{classes}:{runtime}:{spark_jars}",
            "icefloe.fixture.RestParity",
            *(f"{name}={url}={servers.outside[name]}" for name, url in servers.urls.items()),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    parsed: dict[str, dict[str, Any]] = json.loads(result.stdout)
    return parsed


def _matches(expected: dict[str, Any], seen: dict[str, Any]) -> bool:
    return expected.keys() == seen.keys() and all(
        v.fullmatch(str(seen[k])) if isinstance(v, re.Pattern) else v == seen[k] for k, v in expected.items()
    )


def test_icefloe_answers_javas_client_as_javas_server(outcomes: dict[str, dict[str, Any]]) -> None:
    java, ours = outcomes["java"], outcomes["icefloe"]
    assert java.keys() == ours.keys() and len(java) >= 40
    differ = {
        name: (java[name], ours[name]) for name in java if name not in DIFFERENT and java[name] != ours[name]
    }
    assert not differ, json.dumps(differ, indent=1)
    for name, (javas, icefloes) in DIFFERENT.items():
        assert _matches(javas, java[name]), java[name]
        assert _matches(icefloes, ours[name]), ours[name]
    # The scenarios did reach the checks they are about.
    assert java["load a missing table"]["message"].startswith("Table does not exist: p")
    assert ours["a create transaction after a concurrent create"] == {
        "error": "AlreadyExistsException",
        "message": "Requirement failed: table already exists",
    }
    assert ours["the properties of a new table"]["result"] == {
        "k": "v",
        "write.parquet.compression-codec": "zstd",
    }
    assert all(ours[name] == {"result": True} for name in LOCATIONS)


def test_by_default_only_the_warehouse_is_allowed(
    servers: Servers, outcomes: dict[str, dict[str, Any]]
) -> None:
    java, default = outcomes["java"], outcomes["icefloe-default"]
    for name in LOCATIONS:
        assert default[name]["error"] == "IllegalArgumentException", default[name]
        assert "is outside the allowed locations" in default[name]["message"]
    assert files_under(servers.outside["icefloe-default"]) == set()
    assert files_under(servers.outside["icefloe"])  # the allowed server wrote there
    same = [name for name in java if name not in DIFFERENT and name not in LOCATIONS]
    assert {n: default[n] for n in same} == {n: java[n] for n in same}


def test_a_float_default_is_written_as_javas_server_writes_it(servers: Servers) -> None:
    """A float32 ``write-default`` in the JSON Java writes: its shortest digits (``22.27``), not
    the double it equals (``22.270000457763672``)."""
    schema = {
        "type": "struct",
        "schema-id": 0,
        "fields": [
            {"id": 1, "name": "f", "required": False, "type": "float", "write-default": 22.27},
            {"id": 2, "name": "d", "required": False, "type": "double", "write-default": 22.27},
        ],
    }
    texts = {}
    for name in ("java", "icefloe"):
        with httpx.Client(base_url=servers.urls[name], timeout=30) as client:
            client.post("/v1/namespaces", json={"namespace": ["floats"]}).raise_for_status()
            client.post(
                "/v1/namespaces/floats/tables",
                json={"name": "t", "schema": schema, "properties": {"format-version": "3"}},
            ).raise_for_status()
            body = client.get("/v1/namespaces/floats/tables/t").text
        texts[name] = re.findall(r'"write-default"\s*:\s*([^,}\s]+)', body)
    assert texts["java"] == ["22.27", "22.27"]
    assert texts["icefloe"] == texts["java"]
