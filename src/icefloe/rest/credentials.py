"""Vended storage credentials: what the server hands a client for a table's files.

A server configured with credentials (``app(storage_credentials=...)``, ``icefloe serve
--storage-credentials FILE``) answers them in ``loadTable`` / ``createTable`` /
``registerTable`` when the client asks with ``X-Iceberg-Access-Delegation:
vended-credentials`` (Java's and PyIceberg's clients do by default), and always from
``GET .../tables/{t}/credentials``, where clients refresh credentials that expire
(``s3.session-token-expires-at-ms``). Clients then need no storage credentials of their own.

The configuration is a mapping of location prefixes to FileIO properties (static keys, a
start), or a callable of ``(identifier, table location)`` returning ``StorageCredential`` s,
which can mint short-lived ones.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence

from icefloe.serde.rest_json import StorageCredential
from icefloe.spec.table_metadata import TableMetadata

__all__ = [
    "ACCESS_DELEGATION",
    "CredentialVendor",
    "StaticCredentials",
    "vendor_of",
    "wants_vended",
    "without_credentials",
]

#: The request header by which a client asks for credentials (the REST spec's).
ACCESS_DELEGATION = "x-iceberg-access-delegation"
VENDED = "vended-credentials"

CredentialVendor = Callable[[tuple[str, ...], TableMetadata], Sequence[StorageCredential]]
CredentialsConfig = Mapping[str, Mapping[str, str]] | CredentialVendor


class StaticCredentials:
    """Fixed credentials per location prefix: a table gets those whose prefix covers its
    location or lies inside it (a table may keep data under ``write.data.path``)."""

    def __init__(self, by_prefix: Mapping[str, Mapping[str, str]]):
        self._credentials = tuple(StorageCredential(p, dict(c)) for p, c in by_prefix.items())

    def __call__(self, identifier: tuple[str, ...], metadata: TableMetadata) -> list[StorageCredential]:
        location = metadata.location
        return [
            c for c in self._credentials if location.startswith(c.prefix) or c.prefix.startswith(location)
        ]

    def __repr__(self) -> str:  # prefixes only: the values are secrets
        return f"StaticCredentials({[c.prefix for c in self._credentials]!r})"


def vendor_of(config: CredentialsConfig | None) -> CredentialVendor | None:
    if config is None or callable(config):
        return config
    return StaticCredentials(config)


def wants_vended(headers: Mapping[str, str]) -> bool:
    """Whether the request asked for vended credentials (a comma-separated header value)."""
    asked = headers.get(ACCESS_DELEGATION, "")
    return VENDED in (part.strip().lower() for part in asked.split(","))


def without_credentials(body: bytes) -> bytes:
    """A reply body as the idempotency store may keep it: without vended credentials (the
    store may be a file on disk; a replayed create answers without them, and the client's
    next load gets fresh ones)."""
    if b'"storage-credentials"' not in body:
        return body
    try:
        document = json.loads(body)
    except ValueError:
        return body
    if isinstance(document, dict):
        document.pop("storage-credentials", None)
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
