"""500 malformed or hostile requests, generated: every answer is a 4xx, the catalog does not
change, and no file appears outside the warehouse.

The generator starts from valid requests of every mutating route and breaks each in one way a
server must refuse: bodies that are not JSON (NaN, truncated, deep nesting, huge integers,
binary), fields of the wrong JSON type, unknown update and requirement types, failing
requirements, identifiers that would climb out of the warehouse (``..``, ``a/..``, NUL,
control characters, dots, names over 255 bytes once escaped), locations and path properties
outside the warehouse, a metadata file outside it to register, bodies over the size limit,
unknown routes and methods.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import icefloe
from icefloe.rest import app
from support.catalogs import files_under
from support.rest import serve_in_thread

SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [{"id": 1, "name": "id", "required": False, "type": "long"}],
}
VERSION = {
    "version-id": 1,
    "schema-id": 0,
    "timestamp-ms": 1,
    "summary": {},
    "default-namespace": ["db"],
    "representations": [{"type": "sql", "sql": "SELECT 1", "dialect": "spark"}],
}
LIMIT = 256 * 1024


class Target:
    def __init__(self, client: httpx.Client, root: Path, uuid: str):
        self.client = client
        self.root = root
        self.warehouse = root / "wh"
        self.outside = root / "outside"
        self.uuid = uuid
        self.rows = self.catalog_rows()
        self.files = files_under(self.warehouse)

    def catalog_rows(self) -> list[Any]:
        with sqlite3.connect(self.warehouse / "catalog.db") as db:
            return sorted(db.execute("SELECT * FROM iceberg_tables")) + sorted(
                db.execute("SELECT * FROM iceberg_namespace_properties")
            )


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    root = tmp_path_factory.mktemp("hostile")
    (root / "outside").mkdir()
    (root / "outside" / "secret.metadata.json").write_text("{}")
    catalog = icefloe.load_catalog("served", type="sql", warehouse=str(root / "wh"))
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", pa.schema([("id", pa.int64())]))
    table.append(pa.table({"id": pa.array([1, 2], pa.int64())}))
    catalog.create_view("db.v", pa.schema([("id", pa.int64())]), "SELECT id FROM db.t")
    with (
        serve_in_thread(app(catalog, max_body_bytes=LIMIT)) as url,
        httpx.Client(base_url=url, timeout=30) as client,
    ):
        yield Target(client, root, table.metadata.table_uuid)
    catalog.close()


def outside(target_root: str, name: str) -> list[str]:
    """Locations outside the warehouse, spelled in the ways that could slip through."""
    return [
        f"{target_root}/outside/{name}",
        f"file://{target_root}/outside/{name}",
        f"{target_root}/wh/../outside/{name}",
        f"file://{target_root}/wh/db/../../outside/{name}",
        "/tmp/icefloe-hostile",
        "s3://bucket/wh/x",
        "relative/path",
        f"{target_root}/wh\x00/x",
    ]


hostile_names = st.sampled_from(
    # ("a/b" is a legal name: it stays one directory, "a~2Fb", inside the warehouse)
    ["..", ".", "", "a/..", "..\\..", "a\x00b", "a\nb", "a.b", "x" * 300, "/" * 90, "\x7f", "../../outside"]
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
broken_bodies = st.sampled_from(
    [
        b"",
        b"{",
        b"{'a': 1}",
        b'{"requirements": [], "updates": [NaN]}',
        b'{"updates": [Infinity], "requirements": []}',
        b"[" * 50_000 + b"]" * 50_000,
        b'{"n": ' + b"9" * 5000 + b"}",
        b"\xff\xfe\x00binary",
        b'"just a string"',
        b"null",
    ]
) | st.binary(max_size=64)


@st.composite
def requests(draw: st.DrawFn, target: Target) -> tuple[str, str, Any]:
    """(method, path, body): body is bytes (sent as is) or a JSON value."""
    root = str(target.root)
    name = draw(hostile_names)
    bad_location = draw(st.sampled_from(outside(root, draw(st.sampled_from(["t", "v", "m.metadata.json"])))))
    wrong = draw(json_values)
    commit_path = "/v1/namespaces/db/tables/t"
    kind = draw(st.integers(0, 15))
    if kind == 0:
        return (
            "POST",
            draw(
                st.sampled_from(
                    [
                        commit_path,
                        "/v1/namespaces",
                        "/v1/namespaces/db/tables",
                        "/v1/transactions/commit",
                        "/v1/namespaces/db/views/v",
                        "/v1/oauth/tokens",
                    ]
                )
            ),
            draw(broken_bodies),
        )
    if kind == 1:
        field = draw(st.sampled_from(["requirements", "updates"]))
        body = {"requirements": [], "updates": []}
        body[field] = wrong if not isinstance(wrong, list) or wrong else "x"
        return "POST", commit_path, body
    if kind == 2:
        update = {"action": draw(st.text(max_size=12).filter(lambda a: a not in _ACTIONS)), "x": wrong}
        return "POST", commit_path, {"requirements": [], "updates": [update]}
    if kind == 3:
        requirement = draw(
            st.sampled_from(
                [
                    {"type": "assert-table-uuid", "uuid": "00000000-0000-0000-0000-000000000000"},
                    {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 1},
                    {"type": "assert-current-schema-id", "current-schema-id": 99},
                    {"type": "assert-create"},
                    {"type": "no-such-requirement"},
                    {"type": "assert-table-uuid", "uuid": wrong},
                ]
            )
        )
        return (
            "POST",
            commit_path,
            {"requirements": [requirement], "updates": [{"action": "set-properties", "updates": {"k": "v"}}]},
        )
    if kind == 4:
        namespace = quote(name, safe="")
        return (
            draw(st.sampled_from(["POST", "GET", "DELETE", "HEAD"])),
            f"/v1/namespaces/{namespace}/tables",
            {"name": "t", "schema": SCHEMA},
        )
    if kind == 5:
        return "POST", "/v1/namespaces/db/tables", {"name": name, "schema": SCHEMA}
    if kind == 6:
        return "POST", "/v1/namespaces", {"namespace": ["db", name] if name else [], "properties": {}}
    if kind == 7:
        return "POST", "/v1/namespaces/db/tables", {"name": "new", "schema": SCHEMA, "location": bad_location}
    if kind == 8:
        key = draw(st.sampled_from(["write.metadata.path", "write.data.path", "write.object-storage.path"]))
        if draw(st.booleans()):
            return (
                "POST",
                "/v1/namespaces/db/tables",
                {"name": "new", "schema": SCHEMA, "properties": {key: bad_location}},
            )
        return (
            "POST",
            commit_path,
            {"requirements": [], "updates": [{"action": "set-properties", "updates": {key: bad_location}}]},
        )
    if kind == 9:
        return (
            "POST",
            commit_path,
            {"requirements": [], "updates": [{"action": "set-location", "location": bad_location}]},
        )
    if kind == 10:
        return "POST", "/v1/namespaces/db/register", {"name": "r", "metadata-location": bad_location}
    if kind == 11:
        body = {
            "name": draw(st.sampled_from(["nv", name])),
            "schema": SCHEMA,
            "view-version": VERSION,
            "properties": {},
        }
        body["location"] = bad_location
        return "POST", "/v1/namespaces/db/views", body
    if kind == 12:
        return "POST", "/v1/namespaces/db/tables", b'{"name": "big", "pad": "' + b"x" * (LIMIT + 10) + b'"}'
    if kind == 13:
        change = {
            "identifier": {"namespace": ["db"], "name": draw(st.sampled_from(["t", name]))},
            "requirements": [{"type": "assert-table-uuid", "uuid": "00000000-0000-0000-0000-000000000000"}],
            "updates": [],
        }
        return (
            "POST",
            "/v1/transactions/commit",
            {"table-changes": [change, draw(st.sampled_from([change, wrong]))]},
        )
    if kind == 14:
        method = draw(st.sampled_from(["PUT", "PATCH", "GET", "DELETE", "POST"]))
        path = draw(
            st.sampled_from(
                [
                    "/v1/transactions/commit",
                    "/v1/config",
                    "/v2/config",
                    "/v1/x/y/z",
                    "/v1/namespaces/db/tables/t/nope",
                    "/",
                    "/v1/oauth/tokens",
                ]
            )
        )
        if (method, path) in (("GET", "/v1/config"), ("POST", "/v1/oauth/tokens")):
            method = "PUT"
        return method, path, None
    src = {"namespace": ["db"], "name": "t"}
    dst = {"namespace": [name] if name else [], "name": draw(st.sampled_from(["t2", name]))}
    return (
        "POST",
        draw(st.sampled_from(["/v1/tables/rename", "/v1/views/rename"])),
        {"source": src, "destination": dst},
    )


_ACTIONS = {
    "assign-uuid",
    "upgrade-format-version",
    "add-schema",
    "set-current-schema",
    "add-spec",
    "set-default-spec",
    "add-sort-order",
    "set-default-sort-order",
    "add-snapshot",
    "set-snapshot-ref",
    "remove-snapshots",
    "remove-snapshot-ref",
    "set-location",
    "set-properties",
    "remove-properties",
    "set-statistics",
    "remove-statistics",
    "set-partition-statistics",
    "remove-partition-statistics",
    "remove-partition-specs",
    "remove-schemas",
    "add-encryption-key",
    "remove-encryption-key",
}


def test_500_hostile_requests_get_4xx_and_change_nothing(target: Target) -> None:
    seen: dict[int, int] = {}

    @settings(max_examples=500, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(st.data())
    def one(data: st.DataObject) -> None:
        method, path, body = data.draw(requests(target))
        content = (
            body if isinstance(body, bytes) else (json.dumps(body).encode() if body is not None else None)
        )
        response = target.client.request(
            method, path, content=content, headers={"Content-Type": "application/json"}
        )
        seen[response.status_code] = seen.get(response.status_code, 0) + 1
        assert 400 <= response.status_code < 500, (
            method,
            path,
            body if not isinstance(body, bytes) else body[:200],
            response.text[:500],
        )
        assert target.catalog_rows() == target.rows, (method, path, body)
        assert files_under(target.warehouse) == target.files, (method, path, body)
        assert files_under(target.outside) == {"secret.metadata.json"}

    one()
    assert sum(seen.values()) >= 500
    assert set(seen) <= {400, 401, 403, 404, 405, 406, 409, 413, 422}, seen
    assert not Path("/tmp/icefloe-hostile").exists()
