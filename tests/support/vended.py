"""A REST catalog server that vends storage credentials for tables on S3 (moto behind a
``KeyGate``, which admits only the keys the server minted, each until it expires).

``vended_rest_server(moto_endpoint, root)`` yields a ``Served``: ``client()`` makes a REST
catalog client that has no S3 keys of its own. Tables in namespace ``static`` get keys that
never expire, in ``expiring`` keys that live ``TTL_MS`` (clients renew them after half of
that; the gate refuses them ``GRACE_MS`` after expiry, room for a write in flight on a busy
machine); ``vendors[ns].calls`` counts mints.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import icefloe
from icefloe.catalog import Catalog
from icefloe.rest import app
from icefloe.serde.rest_json import StorageCredential
from icefloe.spec.table_metadata import TableMetadata
from support.rest import serve_in_thread
from support.s3_keys import KeyGate

SERVER_KEY = "server-key"
SECRET = "Sup3r-S3cret-Vended"  # distinctive: it must appear nowhere
TTL_MS = 1600
GRACE_MS = 1500
#: Long enough for a client to renew (half the life of a key), not for the key to expire.
PAST_RENEWAL_S = TTL_MS / 2000 + 0.05


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
        self.gate.allow(key, None if until is None else until + GRACE_MS)
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


@contextlib.contextmanager
def vended_rest_server(
    moto_endpoint: str, root: Path, *, auth: dict[str, Any] | None = None, token_ttl_seconds: int = 3600
) -> Iterator[Served]:
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

        with serve_in_thread(
            app(catalog, auth, token_ttl_seconds=token_ttl_seconds, storage_credentials=vend)
        ) as url:
            done = Served(url, gate, gate_url, vendors, bucket)
            yield done
            for client in done.opened:
                client.close()
        catalog.close()
