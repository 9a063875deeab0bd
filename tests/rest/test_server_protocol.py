"""icefloe's REST server speaks the protocol as the clients expect it: routes, status codes and
error types (Java branches on them), paths with encoded namespaces, pagination, ETags,
idempotency keys, staged creates, empty commits, multi-table commits, views, and the guards
(locations outside the warehouse, purges, oversized bodies). One server per module, over a
SQLite catalog, driven with raw HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import icefloe
from icefloe.rest import app
from support.rest import serve_in_thread

SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 0, "name": "id", "required": False, "type": "long"},
        {"id": 1, "name": "data", "required": False, "type": "string"},
    ],
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, Path]]:
    root = tmp_path_factory.mktemp("rest-protocol")
    catalog = icefloe.load_catalog("served", type="sql", warehouse=str(root / "wh"))
    with serve_in_thread(app(catalog, max_body_bytes=1 << 20)) as url, httpx.Client(base_url=url) as client:
        yield client, root / "wh"
    catalog.close()


def error(response: httpx.Response) -> tuple[int, str]:
    body: dict[str, Any] = response.json()["error"]
    assert body["code"] == response.status_code
    return response.status_code, body["type"]


def test_config_lists_every_served_endpoint_and_takes_idempotency_keys(
    server: tuple[httpx.Client, Path],
) -> None:
    client, _ = server
    config = client.get("/v1/config", params={"warehouse": "anything"}).json()
    assert config["defaults"] == {} and config["overrides"] == {}
    assert "POST /v1/{prefix}/transactions/commit" in config["endpoints"]
    assert "HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}" in config["endpoints"]
    assert config["idempotency-key-lifetime"] == "PT30M"
    # PyIceberg sends "Bearer None" when it has no token: a server without auth ignores it.
    assert client.get("/v1/config", headers={"Authorization": "Bearer None"}).status_code == 200


def test_namespaces_with_nested_levels_pages_and_errors(server: tuple[httpx.Client, Path]) -> None:
    client, _ = server
    for ns in (["a"], ["a", "b c"], ["a", "x+y"], ["z"]):
        assert (
            client.post("/v1/namespaces", json={"namespace": ns, "properties": {"k": "v"}}).status_code == 200
        )
    assert error(client.post("/v1/namespaces", json={"namespace": ["a"]})) == (409, "AlreadyExistsException")
    # Java encodes a space as "+", PyIceberg as "%20" and "+" as "%2B"; levels joined by %1F.
    assert client.get("/v1/namespaces/a%1Fb+c").json()["namespace"] == ["a", "b c"]
    assert client.get("/v1/namespaces/a%1Fb%20c").status_code == 200
    assert client.get("/v1/namespaces/a%1Fx%2By").json()["namespace"] == ["a", "x+y"]
    assert client.get("/v1/namespaces", params={"parent": "a"}).json()["namespaces"] == [
        ["a", "b c"],
        ["a", "x+y"],
    ]
    first = client.get("/v1/namespaces", params={"pageToken": "", "pageSize": "1"}).json()
    assert first["namespaces"] == [["a"]] and first["next-page-token"]
    second = client.get(
        "/v1/namespaces", params={"pageToken": first["next-page-token"], "pageSize": "5"}
    ).json()
    assert second == {"namespaces": [["z"]], "next-page-token": None}
    assert client.head("/v1/namespaces/z").status_code == 204
    assert client.head("/v1/namespaces/nope").status_code == 404
    assert error(client.get("/v1/namespaces/nope")) == (404, "NoSuchNamespaceException")
    update = client.post(
        "/v1/namespaces/z/properties", json={"removals": ["k", "gone"], "updates": {"n": "1"}}
    )
    assert update.json() == {"updated": ["n"], "removed": ["k"], "missing": ["gone"]}
    assert error(
        client.post("/v1/namespaces/z/properties", json={"removals": ["n"], "updates": {"n": "2"}})
    ) == (
        422,
        "UnprocessableEntityException",
    )
    assert error(client.delete("/v1/namespaces/a")) == (409, "NamespaceNotEmptyException")
    assert client.delete("/v1/namespaces/z").status_code == 204


def test_tables_load_with_etags_commit_and_fall_back_as_java_needs(server: tuple[httpx.Client, Path]) -> None:
    client, _ = server
    client.post("/v1/namespaces", json={"namespace": ["db"]})
    created = client.post(
        "/v1/namespaces/db/tables",
        json={"name": "t", "schema": SCHEMA, "location": None, "write-order": None, "stage-create": False},
    )
    assert created.status_code == 200
    metadata = created.json()["metadata"]
    assert [f["id"] for f in metadata["schemas"][0]["fields"]] == [1, 2]  # the server assigns ids
    loaded = client.get("/v1/namespaces/db/tables/t", params={"snapshots": "all"})
    etag = loaded.headers["etag"]
    assert client.get("/v1/namespaces/db/tables/t", headers={"If-None-Match": etag}).status_code == 304
    assert client.get("/v1/namespaces/db/tables/t", params={"snapshots": "refs"}).headers["etag"] != etag
    # Spark looks for metadata table "snapshots" of table db.t as table "snapshots" in "db.t".
    assert error(client.get("/v1/namespaces/db%1Ft/tables/snapshots")) == (404, "NoSuchTableException")
    assert error(client.post("/v1/namespaces/nope/tables", json={"name": "t", "schema": SCHEMA})) == (
        404,
        "NoSuchNamespaceException",
    )
    uuid = metadata["table-uuid"]
    # An empty commit (Spark's expire_snapshots with nothing to expire) succeeds unchanged.
    empty = client.post(
        "/v1/namespaces/db/tables/t",
        json={"requirements": [{"type": "assert-table-uuid", "uuid": uuid}], "updates": []},
    )
    assert (
        empty.status_code == 200 and empty.json()["metadata-location"] == loaded.json()["metadata-location"]
    )
    changed = client.post(
        "/v1/namespaces/db/tables/t",
        json={"requirements": [], "updates": [{"action": "set-properties", "updates": {"k": "v"}}]},
    )
    assert changed.json()["metadata"]["properties"]["k"] == "v"
    stale = client.post(
        "/v1/namespaces/db/tables/t",
        json={"requirements": [{"type": "assert-current-schema-id", "current-schema-id": 7}], "updates": []},
    )
    assert error(stale) == (409, "CommitFailedException")
    assert client.head("/v1/namespaces/db/tables/t").status_code == 204
    assert client.head("/v1/namespaces/db/tables/nope").status_code == 404
    assert client.head("/v1/namespaces/nope/tables/t").status_code == 404
    listed = client.get("/v1/namespaces/db/tables").json()
    assert listed == {"identifiers": [{"namespace": ["db"], "name": "t"}], "next-page-token": None}


def test_staged_create_then_commit_and_multi_table_commits(server: tuple[httpx.Client, Path]) -> None:
    client, _ = server
    client.post("/v1/namespaces", json={"namespace": ["tx"]})
    staged = client.post(
        "/v1/namespaces/tx/tables",
        json={
            "name": "s",
            "schema": SCHEMA,
            "stage-create": True,
            "properties": {"format-version": "2"},
            "partition-spec": {"spec-id": 0, "type": "struct", "fields": []},
        },
    ).json()
    assert "metadata-location" not in staged
    assert client.head("/v1/namespaces/tx/tables/s").status_code == 404
    meta = staged["metadata"]
    updates = [
        {"action": "assign-uuid", "uuid": meta["table-uuid"]},
        {"action": "upgrade-format-version", "format-version": 2},
        {"action": "add-schema", "schema": meta["schemas"][0], "last-column-id": 2},
        {"action": "set-current-schema", "schema-id": -1},
        {"action": "add-spec", "spec": {"spec-id": 0, "fields": []}},
        {"action": "set-default-spec", "spec-id": -1},
        {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
        {"action": "set-default-sort-order", "sort-order-id": -1},
        {"action": "set-location", "location": meta["location"]},
    ]
    body = {"requirements": [{"type": "assert-create"}], "updates": updates}
    assert client.post("/v1/namespaces/tx/tables/s", json=body).status_code == 200
    # A failed assert-create is the spec's (and Java's) failed requirement, in Java's words.
    again = client.post("/v1/namespaces/tx/tables/s", json=body)
    assert error(again) == (409, "CommitFailedException")
    assert again.json()["error"]["message"] == "Requirement failed: table already exists"
    client.post("/v1/namespaces/tx/tables", json={"name": "u", "schema": SCHEMA})

    def change(name: str, value: str, requirements: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        return {
            "identifier": {"namespace": ["tx"], "name": name},
            "requirements": requirements or [],
            "updates": [{"action": "set-properties", "updates": {"gen": value}}],
        }

    assert (
        client.post(
            "/v1/transactions/commit", json={"table-changes": [change("s", "1"), change("u", "1")]}
        ).status_code
        == 204
    )
    failing = [
        change("s", "2"),
        change("u", "2", [{"type": "assert-table-uuid", "uuid": meta["table-uuid"]}]),
    ]
    assert error(client.post("/v1/transactions/commit", json={"table-changes": failing})) == (
        409,
        "CommitFailedException",
    )
    gens = {
        n: client.get(f"/v1/namespaces/tx/tables/{n}").json()["metadata"]["properties"]["gen"] for n in "su"
    }
    assert gens == {"s": "1", "u": "1"}
    twice = {"table-changes": [change("s", "3"), change("s", "4")]}
    assert error(client.post("/v1/transactions/commit", json=twice))[0] == 400


def test_views_rename_register_and_drop_with_purge(server: tuple[httpx.Client, Path]) -> None:
    client, warehouse = server
    client.post("/v1/namespaces", json={"namespace": ["vw"]})
    version = {
        "version-id": 1,
        "schema-id": 0,
        "timestamp-ms": 1,
        "summary": {},
        "default-namespace": ["vw"],
        "representations": [{"type": "sql", "sql": "SELECT 1", "dialect": "spark"}],
    }
    created = client.post(
        "/v1/namespaces/vw/views",
        json={"name": "v", "schema": SCHEMA, "view-version": version, "properties": {}},
    )
    assert created.status_code == 200 and created.json()["metadata-location"].endswith(".gz.metadata.json")
    assert error(client.post("/v1/namespaces/vw/tables", json={"name": "v", "schema": SCHEMA})) == (
        409,
        "AlreadyExistsException",
    )
    assert error(client.get("/v1/namespaces/vw/tables/v")) == (404, "NoSuchTableException")
    uuid = created.json()["metadata"]["view-uuid"]
    replaced = client.post(
        "/v1/namespaces/vw/views/v",
        json={
            "requirements": [{"type": "assert-view-uuid", "uuid": uuid}],
            "updates": [
                {
                    "action": "add-view-version",
                    "view-version": {
                        **version,
                        "version-id": 2,
                        "representations": [{"type": "sql", "sql": "SELECT 2", "dialect": "spark"}],
                    },
                },
                {"action": "set-current-view-version", "view-version-id": -1},
            ],
        },
    )
    assert replaced.json()["metadata"]["current-version-id"] == 2
    assert client.head("/v1/namespaces/vw/views/v").status_code == 204
    assert (
        client.post(
            "/v1/views/rename",
            json={
                "source": {"namespace": ["vw"], "name": "v"},
                "destination": {"namespace": ["vw"], "name": "w"},
            },
        ).status_code
        == 204
    )
    assert client.get("/v1/namespaces/vw/views").json()["identifiers"] == [{"namespace": ["vw"], "name": "w"}]
    assert client.delete("/v1/namespaces/vw/views/w").status_code == 204
    assert error(client.get("/v1/namespaces/vw/views/w")) == (404, "NoSuchViewException")

    table = client.post("/v1/namespaces/vw/tables", json={"name": "t", "schema": SCHEMA}).json()
    location = table["metadata-location"]
    assert client.delete("/v1/namespaces/vw/tables/t").status_code == 204
    registered = client.post("/v1/namespaces/vw/register", json={"name": "t2", "metadata-location": location})
    assert registered.status_code == 200
    assert (
        client.post(
            "/v1/tables/rename",
            json={
                "source": {"namespace": ["vw"], "name": "t2"},
                "destination": {"namespace": ["vw"], "name": "t3"},
            },
        ).status_code
        == 204
    )
    assert client.delete("/v1/namespaces/vw/tables/t3", params={"purgeRequested": "true"}).status_code == 204
    assert not Path(location).exists()
    assert (warehouse / "catalog.db").exists()


def test_bad_input_is_refused_with_4xx(server: tuple[httpx.Client, Path]) -> None:
    client, _ = server
    client.post("/v1/namespaces", json={"namespace": ["bad"]})
    client.post("/v1/namespaces/bad/tables", json={"name": "t", "schema": SCHEMA})
    cases = [
        client.post(
            "/v1/namespaces/bad/tables/t", json={"requirements": [], "updates": [{"action": "explode"}]}
        ),
        client.post(
            "/v1/namespaces/bad/tables/t", json={"requirements": [{"type": "assert-nothing"}], "updates": []}
        ),
        client.post("/v1/namespaces/bad/tables/t", content=b'{"requirements": [], "updates": [NaN]}'),
        client.post("/v1/namespaces/bad/tables/t", content=b"[" * 100_000),
        client.post(
            "/v1/namespaces/bad/tables/t",
            json={"requirements": [], "updates": [{"action": "set-location", "location": "/etc"}]},
        ),
        client.post(
            "/v1/namespaces/bad/tables",
            json={"name": "u", "schema": SCHEMA, "location": "file:///tmp/elsewhere"},
        ),
        client.post(
            "/v1/namespaces/bad/tables",
            json={"name": "u", "schema": SCHEMA, "properties": {"write.metadata.path": "/tmp/x"}},
        ),
        client.post("/v1/namespaces/bad/tables", json={"name": "..", "schema": SCHEMA}),
        client.get("/v1/namespaces/..%2F..%2Fetc/tables"),
        client.post("/v1/namespaces/bad/register", json={"name": "r", "metadata-location": "/etc/passwd"}),
        client.post("/v1/namespaces/bad/tables/t", content=b"x" * (2 << 20)),
        client.get("/v1/namespaces/bad/tables", params={"pageToken": "zz", "pageSize": "1"}),
        client.put("/v1/namespaces/bad/tables/t"),
        client.get("/v2/anything"),
    ]
    statuses = [r.status_code for r in cases]
    # A name no namespace can have (dots) in the path is a missing namespace: 404.
    assert statuses == [400, 400, 400, 400, 400, 400, 400, 400, 404, 400, 413, 400, 405, 404], statuses
    assert cases[8].json()["error"] == {
        "message": "Namespace does not exist: ../../etc",
        "type": "NoSuchNamespaceException",
        "code": 404,
    }


def test_idempotency_keys_replay_the_first_answer(server: tuple[httpx.Client, Path]) -> None:
    client, _ = server
    key = {"Idempotency-Key": "01890a5d-ac96-774b-bcce-b302099a8057"}
    first = client.post("/v1/namespaces", json={"namespace": ["idem"]}, headers=key)
    again = client.post("/v1/namespaces", json={"namespace": ["idem"]}, headers=key)
    assert first.status_code == again.status_code == 200  # not 409: the first answer, replayed
    assert client.head("/v1/namespaces/idem").status_code == 204
    other = client.post("/v1/namespaces", json={"namespace": ["idem2"]}, headers=key)
    assert error(other) == (422, "UnprocessableEntityException")  # the key of another request
    assert error(client.delete("/v1/namespaces/idem", headers=key)) == (422, "UnprocessableEntityException")
    assert client.head("/v1/namespaces/idem2").status_code == 404


def test_names_in_paths_and_bodies(server: tuple[httpx.Client, Path]) -> None:
    """A name no object can have (a dot inside a level) in a path is a missing object, for HEAD
    and GET alike; creating one is a 400 that names it, in the namespace the request named. A
    '/' is a character of a name: one escaped directory of the warehouse."""
    client, warehouse = server
    assert client.post("/v1/namespaces", json={"namespace": ["names"]}).status_code == 200
    for path in (
        "/v1/namespaces/new.db",
        "/v1/namespaces/names/tables/ta.ble",
        "/v1/namespaces/names/views/v.w",
    ):
        assert client.head(path).status_code == 404, path
    assert error(client.get("/v1/namespaces/new.db")) == (404, "NoSuchNamespaceException")
    assert error(client.get("/v1/namespaces", params={"parent": "new.db"})) == (
        404,
        "NoSuchNamespaceException",
    )
    assert client.get("/v1/namespaces/new.db/tables/t").json()["error"]["message"] == (
        "Table does not exist: new.db.t"
    )
    assert client.get("/v1/namespaces/names/views/v.w").json()["error"] == {
        "message": "View does not exist: names.v.w",
        "type": "NoSuchViewException",
        "code": 404,
    }
    refused = client.post("/v1/namespaces/names/tables", json={"name": "ta.ble", "schema": SCHEMA})
    assert error(refused) == (400, "IllegalArgumentException")
    assert "('names', 'ta.ble')" in refused.json()["error"]["message"]
    assert client.head("/v1/namespaces/new%2Fdb").status_code == 404
    assert client.post("/v1/namespaces", json={"namespace": ["new/db"]}).status_code == 200
    assert client.head("/v1/namespaces/new%2Fdb").status_code == 204
    created = client.post("/v1/namespaces/new%2Fdb/tables", json={"name": "tab/le", "schema": SCHEMA})
    assert created.json()["metadata"]["location"] == f"{warehouse}/new~2Fdb/tab~2Fle"
    assert (warehouse / "new~2Fdb" / "tab~2Fle" / "metadata").is_dir()


def test_allowed_locations_are_checked(tmp_path: Path) -> None:
    catalog = icefloe.load_catalog("allowed", type="sql", warehouse=str(tmp_path / "wh"))
    for bad in ([], ["relative/path"]):
        with pytest.raises(icefloe.errors.ValidationError, match=r"allowed.location"):
            app(catalog, allowed_locations=bad)
    outside = tmp_path / "outside"
    with pytest.raises(icefloe.errors.ValidationError, match=r"do not include the warehouse"):
        app(catalog, allowed_locations=[str(outside)])
    with (
        serve_in_thread(app(catalog, allowed_locations=[str(tmp_path / "wh"), f"file://{outside}/"])) as url,
        httpx.Client(base_url=url) as client,
    ):
        client.post("/v1/namespaces", json={"namespace": ["db"]}).raise_for_status()
        inside = client.post(
            "/v1/namespaces/db/tables", json={"name": "t", "schema": SCHEMA, "location": f"{outside}/db/t"}
        )
        assert inside.status_code == 200, inside.text
        assert (outside / "db" / "t" / "metadata").is_dir()
        elsewhere = client.post(
            "/v1/namespaces/db/tables",
            json={"name": "u", "schema": SCHEMA, "location": f"{tmp_path}/elsewhere/u"},
        )
        assert error(elsewhere) == (400, "IllegalArgumentException")
        assert "outside the allowed locations" in elsewhere.json()["error"]["message"]
        assert not (tmp_path / "elsewhere").exists()
    catalog.close()


def test_a_catalog_without_views_renames_and_refuses_duplicates(tmp_path: Path) -> None:
    catalog = icefloe.load_catalog("hadoop", type="hadoop", warehouse=str(tmp_path / "wh"))
    with serve_in_thread(app(catalog)) as url, httpx.Client(base_url=url) as client:
        client.post("/v1/namespaces", json={"namespace": ["db"]}).raise_for_status()
        client.post("/v1/namespaces/db/tables", json={"name": "t", "schema": SCHEMA}).raise_for_status()
        again = client.post("/v1/namespaces/db/tables", json={"name": "t", "schema": SCHEMA})
        assert error(again) == (409, "AlreadyExistsException")
        assert again.json()["error"]["message"] == "Table already exists: db.t"
        rename = {
            "source": {"namespace": ["db"], "name": "t"},
            "destination": {"namespace": ["db"], "name": "u"},
        }
        # the catalog's own refusal (a Hadoop table's location is its name), not a views error
        refused = client.post("/v1/tables/rename", json=rename)
        assert error(refused) == (406, "UnsupportedOperationException")
        assert "cannot rename tables" in refused.json()["error"]["message"]
        assert client.head("/v1/namespaces/db%2Fx").status_code == 404  # a name Hadoop cannot hold
    catalog.close()
