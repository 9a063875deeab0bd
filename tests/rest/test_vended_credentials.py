"""Credentials a REST server vends: a client with no storage credentials of its own reads and
writes a table on S3 (moto behind a gate that admits only the keys it was told about), renews
credentials that expire, and shows no secret in reprs, errors or logs."""

from __future__ import annotations

import logging
import pickle
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pytest

import icefloe
from icefloe._util.redaction import MASK, is_secret, redact
from icefloe.catalog import Catalog
from icefloe.io.refreshing import RefreshingFileIO
from icefloe.rest import app
from icefloe.serde.rest_json import StorageCredential
from icefloe.spec.table_metadata import TableMetadata
from support.rest import serve_in_thread
from support.s3_keys import KeyGate

SERVER_KEY = "server-key"
SECRET = "Sup3r-S3cret-Vended"  # distinctive: it must appear nowhere
TTL_MS = 1000


class MintingVendor:
    """Mints a new short-lived key on every call, and tells the gate about it."""

    def __init__(self, gate: KeyGate, bucket: str, ttl_ms: int | None):
        self.gate, self.bucket, self.ttl_ms = gate, bucket, ttl_ms
        self.calls = 0

    def __call__(self, identifier: tuple[str, ...], metadata: TableMetadata) -> list[StorageCredential]:
        self.calls += 1
        key = f"vended-{identifier[-1]}-{self.calls}"
        config = {"s3.access-key-id": key, "s3.secret-access-key": f"{SECRET}-{self.calls}"}
        config["s3.session-token"] = f"session-{SECRET}-{self.calls}"
        until = None
        if self.ttl_ms is not None:
            until = int(time.time() * 1000) + self.ttl_ms
            config["s3.session-token-expires-at-ms"] = str(until)
        self.gate.allow(key, until)
        return [StorageCredential(f"s3://{self.bucket}/", config)]


@dataclass
class Served:
    url: str
    gate: KeyGate
    gate_url: str
    vendors: dict[str, MintingVendor]
    bucket: str
    opened: list[Catalog] = field(default_factory=list)

    def client(self, **extra: str) -> Catalog:
        # Where S3 is, but no keys: only vended credentials open the bucket.
        s3 = {"s3.endpoint": self.gate_url, "s3.region": "us-east-1", "s3.path-style-access": "true"}
        catalog = icefloe.load_catalog("vended", type="rest", uri=self.url, **s3, **extra)
        self.opened.append(catalog)
        return catalog


@pytest.fixture(scope="module")
def served(moto_endpoint: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    import botocore.session

    bucket = f"vended-{uuid.uuid4().hex[:10]}"
    s3 = botocore.session.get_session().create_client(
        "s3",
        endpoint_url=moto_endpoint,
        region_name="us-east-1",
        aws_access_key_id="k",
        aws_secret_access_key="s",
    )
    s3.create_bucket(Bucket=bucket)
    s3.close()
    gate = KeyGate(moto_endpoint)
    gate.allow(SERVER_KEY)
    with serve_in_thread(gate) as gate_url:
        server_s3 = {
            "s3.endpoint": gate_url,
            "s3.region": "us-east-1",
            "s3.path-style-access": "true",
            "s3.access-key-id": SERVER_KEY,
            "s3.secret-access-key": "server-secret",
        }
        root: Path = tmp_path_factory.mktemp("vended")
        catalog = icefloe.load_catalog(
            "served",
            type="sql",
            uri=f"sqlite:///{root}/catalog.db",
            warehouse=f"s3://{bucket}/wh",
            **server_s3,
        )
        vendors = {
            "static": MintingVendor(gate, bucket, None),
            "expiring": MintingVendor(gate, bucket, TTL_MS),
        }

        def vend(identifier: tuple[str, ...], metadata: TableMetadata) -> list[StorageCredential]:
            return vendors[identifier[0]](identifier, metadata)

        with serve_in_thread(app(catalog, storage_credentials=vend)) as url:
            done = Served(url, gate, gate_url, vendors, bucket)
            yield done
            for client in done.opened:
                client.close()
        catalog.close()


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
        "adls.auth.shared-key.account.name",
        "uri",
        "warehouse",
    ]
    assert [k for k in secret if not is_secret(k)] == []
    assert [k for k in shown if is_secret(k)] == []
    assert redact({"token": "t0ken", "uri": "http://x"}) == {"token": MASK, "uri": "http://x"}


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
    calls = vendor.calls
    time.sleep(TTL_MS / 1000 + 0.05)  # the first key has expired: the gate refuses it now
    table.append(rows(5))  # the same Table object, its FileIO renews
    assert vendor.calls > calls
    assert io.properties["s3.access-key-id"] != first
    assert table.scan().to_arrow().num_rows == 25
    assert served.gate.refused.get(first, 0) == 0  # the old key was never used after expiry
    # A pickled copy (a Spark task) carries the newest credentials and renews on its own.
    copy = pickle.loads(pickle.dumps(io))
    assert copy.properties["s3.access-key-id"] == io.properties["s3.access-key-id"]
    assert SECRET not in repr(copy)
