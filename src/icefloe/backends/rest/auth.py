"""Credentials of the REST catalog client: none, a static bearer ``token``, or OAuth2 client
credentials (``credential="client_id:secret"``).

With a credential the client fetches a token from ``oauth2-server-uri`` (default
``<uri>/v1/oauth/tokens``, scope ``catalog``), refreshes it before it expires (at
``expires_at - min(expires_in / 10, 5 min)``, by RFC 8693 token exchange, falling back to
fetching a new one), and fetches a new one once when the server answers 401 or 419.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from icefloe.errors import NotAuthorizedError
from icefloe.serde._reader import parse_json_document
from icefloe.serde.rest_json import read_error, read_token_response

if TYPE_CHECKING:
    from icefloe.backends.rest._http import HttpSession

__all__ = ["AuthSession"]

CREDENTIAL = "credential"
TOKEN = "token"
OAUTH2_SERVER_URI = "oauth2-server-uri"
SCOPE = "scope"
TOKEN_REFRESH_ENABLED = "token-refresh-enabled"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"


class AuthSession:
    """The ``Authorization`` header of every request, kept fresh."""

    def __init__(self, uri: str, properties: Mapping[str, str]):
        self._uri = uri.rstrip("/")
        self._credential = properties.get(CREDENTIAL) or None
        self._token = properties.get(TOKEN) or None
        self._server = properties.get(OAUTH2_SERVER_URI) or f"{self._uri}/v1/oauth/tokens"
        self._scope = properties.get(SCOPE, "catalog")
        self._refresh_enabled = properties.get(TOKEN_REFRESH_ENABLED, "true").lower() == "true"
        self._expires_at: float | None = None
        self._lifetime: float | None = None
        self._lock = threading.Lock()
        self._http: HttpSession | None = None

    def bind(self, http: HttpSession) -> None:
        """The session that sends token requests (and asks this one for headers)."""
        self._http = http
        if self._credential and self._token is None:
            self._fetch()

    def headers(self) -> dict[str, str]:
        if self._credential and self._refresh_enabled and self._due():
            with self._lock:
                if self._due():
                    self._refresh()
        return {"Authorization": f"Bearer {self._token}"} if self._token else {}

    def _due(self) -> bool:
        if self._expires_at is None or self._lifetime is None:
            return False
        return time.time() >= self._expires_at - min(self._lifetime / 10, 300)

    def retry_after_401(self) -> bool:
        """On 401/419: fetch a new token with the credential; False without one."""
        if not self._credential:
            return False
        with self._lock:
            self._fetch()
        return True

    def _client_credentials(self) -> tuple[str | None, str]:
        assert self._credential is not None
        client_id, colon, secret = self._credential.partition(":")
        return (client_id, secret) if colon else (None, self._credential)

    def _post(self, form: dict[str, str], headers: dict[str, str] | None = None) -> None:
        assert self._http is not None
        response = self._http.request("POST", self._server, form=form, headers=headers, authenticate=False)
        try:
            body = parse_json_document(response.content, self._server, "token response")
        except Exception:
            body = response.text
        if response.status_code != 200:
            error = read_error(body, response.status_code)
            raise NotAuthorizedError(
                f"the REST catalog's token endpoint {self._server} refused the credential: "
                f"{error.type} {error.message}".rstrip()
            )
        token, expires_in = read_token_response(body)
        self._token = token
        if expires_in is not None and expires_in > 0:
            self._lifetime = float(expires_in)
            self._expires_at = time.time() + expires_in
        else:
            self._lifetime = self._expires_at = None

    def _fetch(self) -> None:
        client_id, secret = self._client_credentials()
        form = {"grant_type": "client_credentials", "client_secret": secret, "scope": self._scope}
        if client_id is not None:
            form["client_id"] = client_id
        self._post(form)

    def _refresh(self) -> None:
        """Exchange the current token for a new one; fetch a new one if that fails."""
        expired = self._expires_at is not None and time.time() >= self._expires_at
        if self._token and not expired:
            try:
                self._post(
                    {
                        "grant_type": TOKEN_EXCHANGE,
                        "subject_token": self._token,
                        "subject_token_type": ACCESS_TOKEN_TYPE,
                        "scope": self._scope,
                    },
                    {"Authorization": f"Bearer {self._token}"},
                )
                return
            except NotAuthorizedError:
                pass
        self._fetch()
