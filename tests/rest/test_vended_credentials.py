"""Credentials a REST server vends: a client with no storage credentials of its own reads and
writes a table on S3 (moto behind a gate that admits only the keys it was told about), renews
credentials that expire, and shows no secret in reprs, errors or logs."""

from __future__ import annotations

import json
import logging
import pickle
import time
import traceback
from collections.abc import Iterator
from pathlib import Path

import httpx
import pyarrow as pa
import pytest
from typer.testing import CliRunner

import icefloe
from icefloe._util.redaction import MASK, is_secret, redact
from icefloe.cli.app import app as cli_app
from icefloe.io import load_file_io
from icefloe.io.refreshing import RefreshingFileIO, expires_at_ms
from icefloe.rest.serve import _build
from support.rest import serve_in_thread
from support.vended import PAST_RENEWAL_S, SECRET, Served, vended_rest_server


@pytest.fixture(scope="module")
def served(moto_endpoint: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with vended_rest_server(moto_endpoint, tmp_path_factory.mktemp("vended")) as done:
        yield done


SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])


def rows(n: int) -> pa.Table:
    return pa.table(
        {"id": pa.array(range(n), pa.int64()), "name": pa.array([f"r{i}" for i in range(n)], pa.string())}
    )


def test_secret_keys_are_known_by_java_and_pyiceberg_names() -> None:
    secret = [
        "s3.secret-access-key",
        "s3.session-token",
        "gcs.oauth2.token",
        "adls.sas-token.acct",
        "adls.connection-string.acct",
        "adls.account-key",
        "adls.auth.shared-key.account.key",
        "credential",
        "token",
        "jdbc.password",
        "header.Authorization",
        "adls.client-secret",
        "s3.sse.key",
    ]
    shown = [
        "s3.access-key-id",
        "s3.session-token-expires-at-ms",
        "oauth2-server-uri",
        "encryption.key-id",
        "client.refresh-credentials-endpoint",
        "client.refresh-credentials-enabled",
        "s3.endpoint",
        "gcs.oauth2.token-expires-at",
        "adls.sas-token-expires-at-ms.acct",
        "adls.auth.shared-key.account.name",
        "uri",
        "warehouse",
    ]
    assert [k for k in secret if not is_secret(k)] == []
    assert [k for k in shown if is_secret(k)] == []
    assert redact({"token": "t0ken", "uri": "http://x"}) == {"token": MASK, "uri": "http://x"}
    expiries = {"s3.session-token-expires-at-ms": "20", "adls.sas-token-expires-at-ms.acct": "10", "x": "5"}
    assert expires_at_ms(expiries) == 10


def test_a_client_without_keys_writes_and_reads_through_vended_ones(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    catalog = served.client(token="client-T0ken-" + SECRET)
    catalog.create_namespace_if_not_exists("static")
    table = catalog.create_table("static.t", SCHEMA)
    table.append(rows(50))
    loaded = catalog.load_table("static.t")
    assert loaded.scan().to_arrow().num_rows == 50
    assert loaded.io().properties["s3.access-key-id"].startswith("vended-t-")
    assert served.gate.refused.get(None, 0) == 0  # nothing went unsigned
    keys_used = {k for k in served.gate.seen if k and k.startswith("vended-t-")}
    assert keys_used, served.gate.seen
    # No secret in reprs, a pickled-and-shown FileIO, or the log.
    shown = " ".join(
        [repr(catalog), repr(loaded), repr(loaded.io()), repr(pickle.loads(pickle.dumps(loaded.io())))]
    )
    assert SECRET not in shown
    assert SECRET not in caplog.text


def test_without_vended_credentials_the_gate_refuses(served: Served) -> None:
    # The same client, asking for no credentials: the bucket is closed to it (the gate is real).
    catalog = served.client(
        **{
            "header.X-Iceberg-Access-Delegation": "",
            "s3.access-key-id": "nobody",
            "s3.secret-access-key": SECRET,
        }
    )
    catalog.create_namespace_if_not_exists("static")
    if not catalog.table_exists("static.closed"):
        served.client().create_table("static.closed", SCHEMA).append(rows(3))
    table = catalog.load_table("static.closed")
    with pytest.raises(Exception) as failure:
        table.scan().to_arrow()
    assert served.gate.refused["nobody"] >= 1
    assert SECRET not in str(failure.value) and SECRET not in repr(failure.value)


def test_expiring_credentials_are_renewed_before_they_expire(served: Served) -> None:
    catalog = served.client()
    catalog.create_namespace_if_not_exists("expiring")
    vendor = served.vendors["expiring"]
    table = catalog.create_table("expiring.t", SCHEMA)
    table.append(rows(20))
    io = table.io()
    assert isinstance(io, RefreshingFileIO)
    first = io.properties["s3.access-key-id"]
    task_copy = pickle.loads(pickle.dumps(io))  # as a Spark task gets it
    calls = vendor.calls
    time.sleep(PAST_RENEWAL_S)  # the first key is due for renewal
    table.append(rows(5))  # the same Table object, its FileIO renews
    assert vendor.calls > calls
    assert io.properties["s3.access-key-id"] != first
    assert table.scan().to_arrow().num_rows == 25
    # The copy renews on its own, from the credentials endpoint (no catalog client in a task).
    calls = vendor.calls
    assert len(list(task_copy.list_prefix(table.location()))) >= 3
    assert vendor.calls == calls + 1
    assert task_copy.properties["s3.access-key-id"] not in (first, io.properties["s3.access-key-id"])
    assert served.gate.refused.get(first, 0) == 0  # the old key was never used after expiry
    assert SECRET not in repr(task_copy)


def _whole_error(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc))


def test_errors_from_bad_endpoints_show_no_secret(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with pytest.raises(Exception) as rest_failure:
        icefloe.load_catalog(
            "bad",
            type="rest",
            uri="http://127.0.0.1:9",
            credential=f"client:{SECRET}",
            **{"rest.client.max-retries": "0"},
        )
    io = load_file_io(
        {
            "s3.endpoint": "http://127.0.0.1:9",
            "s3.access-key-id": "k",
            "s3.secret-access-key": SECRET,
            "s3.session-token": SECRET + "-session",
            "s3.region": "us-east-1",
        },
        "s3://bucket/x",
    )
    with pytest.raises(Exception) as s3_failure:
        io.read_bytes("s3://bucket/x/file")
    for failure in (rest_failure, s3_failure):
        assert SECRET not in _whole_error(failure.value)
    assert SECRET not in caplog.text


def test_serve_vends_from_a_credentials_file_and_only_when_asked(tmp_path: Path) -> None:
    warehouse = tmp_path / "wh"
    served_catalog = icefloe.load_catalog("filed", type="sql", warehouse=str(warehouse))
    served_catalog.create_namespace("db")
    served_catalog.create_table("db.t", SCHEMA)
    credentials = {str(warehouse): {"s3.access-key-id": "filed-key", "s3.secret-access-key": SECRET}}
    (tmp_path / "credentials.json").write_text(json.dumps(credentials))
    application = _build(
        {
            "catalog": "filed",
            "catalog_properties": dict(served_catalog.properties),
            "storage_credentials": str(tmp_path / "credentials.json"),
            "state_dir": str(tmp_path / "state"),
        }
    )
    with serve_in_thread(application) as url:
        base = f"{url}/v1/namespaces/db/tables/t"
        vended = {"X-Iceberg-Access-Delegation": "vended-credentials"}
        asked = httpx.get(base, headers=vended).json()
        assert asked["storage-credentials"] == [
            {"prefix": str(warehouse), "config": credentials[str(warehouse)]}
        ]
        assert "storage-credentials" not in httpx.get(base).json()
        endpoint = httpx.get(base + "/credentials").json()
        assert endpoint["storage-credentials"] == asked["storage-credentials"]
        # A create with an idempotency key answers the credentials; the store keeps none.
        body = {"name": "u", "schema": {"type": "struct", "schema-id": 0, "fields": []}}
        headers = {**vended, "Idempotency-Key": "0190a8f4-0000-7000-8000-000000000001"}
        created = httpx.post(f"{url}/v1/namespaces/db/tables", json=body, headers=headers)
        assert created.status_code == 200 and created.json()["storage-credentials"]
    stored = b"".join(p.read_bytes() for p in (tmp_path / "state").iterdir() if p.is_file())
    assert SECRET.encode() not in stored
    served_catalog.close()


def test_listings_mask_secret_table_properties(tmp_path: Path) -> None:
    catalog = icefloe.load_catalog("masked", type="sql", warehouse=str(tmp_path / "wh"))
    catalog.create_namespace("db")
    catalog.create_table("db.t", SCHEMA, properties={"x.token": SECRET, "owner": "me"})
    args = ["-c", "masked", "-p", "type=sql", "-p", f"warehouse={tmp_path / 'wh'}"]
    described = CliRunner().invoke(cli_app, [*args, "-o", "json", "describe", "db.t"])
    listed = CliRunner().invoke(cli_app, [*args, "properties", "get", "db.t"])
    for result in (described, listed):
        assert result.exit_code == 0, result.output
        assert SECRET not in result.output and MASK in result.output and "me" in result.output
    catalog.close()


def test_a_task_renews_credentials_after_the_catalog_token_expired(
    moto_endpoint: str, tmp_path: Path
) -> None:
    # Tokens live a second: a copy of the FileIO (a task's) that renews the credentials later
    # gets a new token from the catalog's client credential first.
    principals = {"job": {"secret": "job-" + SECRET}}
    with vended_rest_server(moto_endpoint, tmp_path, auth=principals, token_ttl_seconds=1) as secured:
        catalog = secured.client(credential=f"job:job-{SECRET}")
        catalog.create_namespace("expiring")
        table = catalog.create_table("expiring.t", SCHEMA)
        table.append(rows(3))
        task_copy = pickle.loads(pickle.dumps(table.io()))
        first_token = task_copy.properties["token"]
        time.sleep(1.05)  # the token has expired and the storage credentials are due
        assert len(list(task_copy.list_prefix(table.location()))) >= 3
        assert task_copy.properties["token"] != first_token
        assert secured.vendors["expiring"].calls >= 2
