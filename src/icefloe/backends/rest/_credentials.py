"""The FileIO properties of a table loaded from a REST catalog: the table's ``config``, the
vended storage credential that covers it, and what renewing that credential needs."""

from __future__ import annotations

from icefloe.io.refreshing import REFRESH_ENABLED, REFRESH_ENDPOINT, TOKEN, expires_at_ms
from icefloe.serde.rest_json import LoadTableResult, best_credential

__all__ = ["table_io_properties"]

_BEARER = "Bearer "


def _io_properties(result: LoadTableResult, location: str) -> dict[str, str]:
    """The table's ``config`` and the storage credential with the longest matching prefix."""
    properties = dict(result.config)
    chosen = best_credential(result.storage_credentials, location)
    if chosen is not None:
        properties.update(chosen.config)
    return properties


def table_io_properties(
    result: LoadTableResult,
    *,
    credentials_url: str | None,
    authorization: str | None,
    refresh_enabled: str = "true",
) -> dict[str, str]:
    """``_io_properties``, and for a credential that expires (and a server that serves the
    table's credentials endpoint, ``credentials_url``) what a FileIO needs to renew it without
    this client (in Spark tasks, say): the endpoint and the current bearer token, under
    Java's names (``client.refresh-credentials-endpoint``, ``token``)."""
    properties = _io_properties(result, result.metadata.location)
    if credentials_url is None or expires_at_ms(properties) is None:
        return properties
    properties[REFRESH_ENDPOINT] = credentials_url
    properties[REFRESH_ENABLED] = refresh_enabled
    if authorization and authorization.startswith(_BEARER):
        properties[TOKEN] = authorization[len(_BEARER) :]
    return properties
