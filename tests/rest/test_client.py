"""icefloe's REST client against icefloe's server: the Catalog surface end to end, and how the
client behaves when the network does not (lost answers, dropped requests, a busy server),
when the server serves less, and with credentials (401, 403, token refresh)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pyarrow as pa
import pytest

import icefloe
from icefloe.backends.rest._credentials import _io_properties
from icefloe.errors import (
    CommitFailedException,
    CommitStateUnknownException,
    ForbiddenError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NotAuthorizedError,
    TableAlreadyExistsError,
    UnsupportedFeatureError,
)
from icefloe.rest import app
from icefloe.serde.rest_json import LoadTableResult, StorageCredential
from icefloe.spec.builder import new_table_metadata
from icefloe.spec.partitioning import UNPARTITIONED_SPEC
from icefloe.spec.schema import Schema
from icefloe.spec.sorting import UNSORTED_SORT_ORDER
from icefloe.spec.updates import AssertTableUUID
from support.catalogs import files_under
from support.rest import FaultyProxy, serve_in_thread

SCHEMA = pa.schema([("id", pa.int64()), ("part", pa.string())])


def rows(*ids: int) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "part": [str(i % 2) for i in ids]})


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, FaultyProxy, Path]]:
    root = tmp_path_factory.mktemp("rest-client")
    catalog = icefloe.load_catalog("served", type="sql", warehouse=str(root / "wh"))
    proxy = FaultyProxy(app(catalog))
    with serve_in_thread(proxy) as url:
        yield url, proxy, root / "wh"
    catalog.close()


def test_the_catalog_surface_end_to_end(served: tuple[str, FaultyProxy, Path]) -> None:
    url, _, _ = served
    catalog = icefloe.load_catalog("r", type="rest", uri=url, **{"rest-page-size": "1"})
    catalog.create_namespace(("e2e",), {"owner": "me"})
    catalog.create_namespace(("e2e", "inner"))
    assert ("e2e",) in catalog.list_namespaces()
    assert catalog.list_namespaces("e2e") == [("e2e", "inner")]
    assert catalog.load_namespace_properties("e2e") == {"owner": "me"}
    table = catalog.create_table("e2e.t", SCHEMA, partition_by=["part"], sort_by=["id"])
    table.append(rows(1, 2, 3))
    catalog.create_table("e2e.u", SCHEMA)
    assert catalog.list_tables("e2e") == [("e2e", "t"), ("e2e", "u")]  # two pages of one
    with pytest.raises(TableAlreadyExistsError):
        catalog.create_table("e2e.t", SCHEMA)
    with pytest.raises(NoSuchNamespaceError):
        catalog.create_table("nope.t", SCHEMA)
    with pytest.raises(NamespaceNotEmptyError):
        catalog.drop_namespace("e2e")
    # Two writers: the second's commit conflicts (409), reloads and re-applies.
    other = catalog.load_table("e2e.t")
    table.append(rows(4))
    other.append(rows(5))
    assert catalog.load_table("e2e.t").new_scan().count() == 5
    table.refresh().update_schema().add_column("extra", "int").commit()
    create = catalog.create_table_transaction("e2e.staged", SCHEMA)
    create.append(rows(7))
    create.commit_transaction()
    replace = catalog.replace_table_transaction("e2e.staged", pa.schema([("id", pa.int64())]))
    replace.append(pa.table({"id": pa.array([8], pa.int64())}))
    replace.commit_transaction()
    assert catalog.load_table("e2e.staged").new_scan().to_arrow().to_pylist() == [{"id": 8}]
    a, b = catalog.load_table("e2e.t").new_transaction(), catalog.load_table("e2e.u").new_transaction()
    a.delete("id = 1")
    b.append(rows(9))
    catalog.commit_transaction([a, b])
    assert (
        catalog.load_table("e2e.t").new_scan().count() == 4
        and catalog.load_table("e2e.u").new_scan().count() == 1
    )
    view = catalog.create_view("e2e.v", SCHEMA, "SELECT * FROM e2e.t")
    view.update_properties().set("k", "v").commit()
    assert catalog.load_view("e2e.v").properties()["k"] == "v"
    catalog.rename_view("e2e.v", "e2e.w")
    assert catalog.list_views("e2e") == [("e2e", "w")]
    location = catalog.load_table("e2e.u").metadata_location
    catalog.drop_table("e2e.u")
    catalog.register_table("e2e.u2", location)
    catalog.rename_table("e2e.u2", "e2e.u3")
    assert catalog.table_exists("e2e.u3") and not catalog.table_exists("e2e.u2")
    catalog.drop_table("e2e.u3", purge=True)
    with pytest.raises(NoSuchTableError):
        catalog.load_table("e2e.u3")
    catalog.close()


def test_lost_answers_are_replayed_or_reconciled_and_dropped_requests_are_unknown(
    served: tuple[str, FaultyProxy, Path],
) -> None:
    url, proxy, warehouse = served
    catalog = icefloe.load_catalog("r", type="rest", uri=url)
    catalog.create_namespace("faults")
    table = catalog.create_table("faults.t", SCHEMA)
    # With idempotency keys (the server advertises them) the retry replays the first answer.
    proxy.lose_answers(1, "POST /v1/namespaces/faults/tables/t")
    table.append(rows(1))
    commits = [
        key
        for method, path, key in proxy.seen
        if path == "/v1/namespaces/faults/tables/t" and method == "POST"
    ]
    assert len(commits) == 2 and commits[0] == commits[1] is not None
    assert len(catalog.load_table("faults.t").snapshots()) == 1

    # Without them (a server that does not advertise any): reconciled by reloading.
    proxy.config_without("idempotency-key-lifetime")
    plain = icefloe.load_catalog("plain", type="rest", uri=url)
    proxy.config_without()
    t = plain.load_table("faults.t")
    proxy.lose_answers(1, "POST /v1/namespaces/faults/tables/t")
    t.append(rows(2))
    assert len(plain.load_table("faults.t").snapshots()) == 2

    before = files_under(warehouse)
    proxy.drop_requests(1, "POST /v1/namespaces/faults/tables/t")
    with pytest.raises(CommitStateUnknownException):
        t.append(rows(3))
    written = files_under(warehouse) - before
    assert any(f.endswith(".parquet") for f in written)  # maybe committed: nothing deleted
    assert len(plain.load_table("faults.t").snapshots()) == 2

    proxy.busy(2)  # 503 with Retry-After: 0, twice: backed off and retried
    assert plain.load_table("faults.t").new_scan().count() == 2
    before = proxy.revalidated
    again = plain.load_table("faults.t")  # the ETag of the last load: 304, the cached table
    assert proxy.revalidated == before + 1 and again.metadata_location == t.refresh().metadata_location
    plain.close()
    catalog.close()


def test_operations_the_server_does_not_serve_fail_before_sending(
    served: tuple[str, FaultyProxy, Path],
) -> None:
    url, proxy, _ = served
    proxy.config_without(
        "POST /v1/{prefix}/namespaces/{namespace}/views", "POST /v1/{prefix}/transactions/commit"
    )
    catalog = icefloe.load_catalog("r", type="rest", uri=url)
    proxy.config_without()
    catalog.create_namespace("limited")
    sent = len(proxy.seen)
    with pytest.raises(UnsupportedFeatureError, match=r"POST /v1/\{prefix\}/namespaces/\{namespace\}/views"):
        catalog.create_view("limited.v", SCHEMA, "SELECT 1")
    assert len(proxy.seen) == sent
    a = catalog.create_table("limited.a", SCHEMA).new_transaction()
    b = catalog.create_table("limited.b", SCHEMA).new_transaction()
    a.update_properties().set("k", "v").commit()
    b.update_properties().set("k", "v").commit()
    with pytest.raises(UnsupportedFeatureError, match="transactions/commit"):
        catalog.commit_transaction([a, b])
    catalog.close()


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("rest-auth")
    catalog = icefloe.load_catalog("served", type="sql", warehouse=str(root / "wh"))
    catalog.create_namespace("db")
    catalog.create_namespace("other")
    principals = {
        "writer": {"secret": "w"},
        "reader": {"secret": "r", "read_only": True},
        "db-only": {"secret": "d", "namespaces": ["db"]},
    }
    with serve_in_thread(app(catalog, principals, token_ttl_seconds=2)) as url:
        yield url
    catalog.close()


def test_no_token_401_foreign_namespace_403_and_expired_tokens_refreshed(secured: str) -> None:
    raw = httpx.get(f"{secured}/v1/namespaces")
    assert raw.status_code == 401 and raw.json()["error"]["type"] == "NotAuthorizedException"
    assert (
        httpx.get(f"{secured}/v1/namespaces", headers={"Authorization": "Bearer forged.token"}).status_code
        == 401
    )
    with pytest.raises(NotAuthorizedError):
        icefloe.load_catalog("r", type="rest", uri=secured)
    with pytest.raises(NotAuthorizedError, match="invalid_client"):
        icefloe.load_catalog("r", type="rest", uri=secured, credential="writer:wrong")

    reader = icefloe.load_catalog("r", type="rest", uri=secured, credential="reader:r")
    assert reader.list_namespaces() == [("db",), ("other",)]
    with pytest.raises(ForbiddenError, match="read-only"):
        reader.create_namespace("new")
    limited = icefloe.load_catalog("l", type="rest", uri=secured, credential="db-only:d")
    assert limited.list_namespaces() == [("db",)]
    limited.create_table("db.t", SCHEMA).append(rows(1))
    with pytest.raises(ForbiddenError, match="namespace other"):
        limited.create_table("other.t", SCHEMA)
    with pytest.raises(ForbiddenError):
        limited.rename_table("db.t", "other.t")

    writer = icefloe.load_catalog("w", type="rest", uri=secured, credential="writer:w")
    table = writer.load_table("db.t")
    time.sleep(2.5)  # the token lived 2 s: refreshed before use (token exchange)
    table.append(rows(2))
    lazy = icefloe.load_catalog(
        "w2", type="rest", uri=secured, credential="writer:w", **{"token-refresh-enabled": "false"}
    )
    time.sleep(2.5)  # expired and not refreshed: the 401 makes the client fetch a new one, once
    assert lazy.load_table("db.t").new_scan().count() == 2
    with pytest.raises(CommitFailedException, match="Requirement failed"):
        writer.backend.commit_table(
            ("db", "t"), None, [AssertTableUUID("00000000-0000-0000-0000-000000000000")], []
        )
    for catalog in (reader, limited, writer, lazy):
        catalog.close()


def test_table_io_takes_the_servers_config_and_the_longest_matching_credential() -> None:
    result = LoadTableResult(
        "s3://b/wh/t/metadata/00001.metadata.json",
        new_table_metadata(Schema(), UNPARTITIONED_SPEC, UNSORTED_SORT_ORDER, "s3://b/wh/t"),
        config={"s3.endpoint": "http://minio:9000", "s3.access-key-id": "catalog"},
        storage_credentials=(
            StorageCredential("s3://b/", {"s3.access-key-id": "bucket"}),
            StorageCredential("s3://b/wh/t", {"s3.access-key-id": "table", "s3.session-token": "x"}),
            StorageCredential("s3://other/", {"s3.access-key-id": "other"}),
        ),
    )
    assert _io_properties(result, "s3://b/wh/t") == {
        "s3.endpoint": "http://minio:9000",
        "s3.access-key-id": "table",
        "s3.session-token": "x",
    }
