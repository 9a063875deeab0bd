"""A FileIO over credentials a REST catalog vended, asking for new ones before they expire.

A REST catalog's ``loadTable`` may hand out short-lived storage credentials (an STS session:
``s3.session-token`` with ``s3.session-token-expires-at-ms``). A job that runs longer than
they live must renew them, on the driver and in every task, without the catalog client
(tasks run in other processes). So the FileIO itself carries what renewing needs, under
Java's names: ``client.refresh-credentials-endpoint`` (the table's credentials endpoint, a
full URL) and ``client.refresh-credentials-enabled``, with the catalog's bearer ``token``
(renewed from the catalog's OAuth2 ``credential``, when it has one, if the server refuses it).
Before the earliest ``*expires-at-ms`` is near (the later of five minutes before, or half the
credential's remaining life when it was received), the next call fetches the table's
credentials, keeps the one with the longest prefix of the table location, and builds a new
delegate from them. A pickled copy carries the newest credentials it has.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from icefloe._util.redaction import redact_text, secret_values
from icefloe.errors import FileIOError
from icefloe.io.fileio import FileInfo, FileIO, InputFile, OutputFile
from icefloe.serde.rest_json import best_credential, read_load_credentials_response

if TYPE_CHECKING:
    import pyarrow.fs

__all__ = ["REFRESH_ENABLED", "REFRESH_ENDPOINT", "RefreshingFileIO", "expires_at_ms", "refreshes"]

log = logging.getLogger(__name__)

REFRESH_ENDPOINT = "client.refresh-credentials-endpoint"
REFRESH_ENABLED = "client.refresh-credentials-enabled"
TOKEN = "token"
CREDENTIAL = "credential"
OAUTH2_SERVER_URI = "oauth2-server-uri"
_MAX_MARGIN_MS = 5 * 60 * 1000
_TIMEOUT_S = 30.0


def expires_at_ms(properties: Mapping[str, str]) -> int | None:
    """The earliest expiry among the properties' ``*expires-at-ms`` (ADLS's
    ``adls.sas-token-expires-at-ms.<account>`` too) and GCS's ``gcs.oauth2.token-expires-at``
    (also milliseconds), or None."""
    times = []
    for key, value in properties.items():
        if ("expires-at-ms" in key or key.endswith("expires-at")) and value.strip().isdigit():
            times.append(int(value))
    return min(times) if times else None


def refreshes(properties: Mapping[str, str]) -> bool:
    """Whether ``properties`` ask for vended credentials to be renewed."""
    enabled = properties.get(REFRESH_ENABLED, "false").strip().lower() == "true"
    return enabled and bool(properties.get(REFRESH_ENDPOINT)) and expires_at_ms(properties) is not None


def _now_ms() -> int:
    return int(time.time() * 1000)


class RefreshingFileIO(FileIO):
    """Serves every call through a delegate built from the current credentials.

    Args:
        properties: FileIO properties with the vended credentials and the refresh settings.
        location: the table location (which of several vended credentials applies).
        factory: builds the delegate from properties (``load_file_io`` without refreshing).
    """

    def __init__(
        self,
        properties: Mapping[str, str],
        location: str | None,
        factory: Callable[[Mapping[str, str], str | None], FileIO],
    ):
        super().__init__(properties)
        self.location = location
        self._factory = factory
        self._lock = threading.Lock()
        self._delegate: FileIO | None = None
        self._received_ms = _now_ms()

    def _renew_at_ms(self) -> int | None:
        expires = expires_at_ms(self.properties)
        if expires is None:
            return None
        margin = min(_MAX_MARGIN_MS, max(0, (expires - self._received_ms) // 2))
        return expires - margin

    def current(self) -> FileIO:
        """The delegate, renewing the credentials first when they are about to expire."""
        with self._lock:
            renew_at = self._renew_at_ms()
            if renew_at is not None and _now_ms() >= renew_at:
                self._refresh()
            if self._delegate is None:
                self._delegate = self._factory(self.properties, self.location)
            return self._delegate

    def _refresh(self) -> None:
        endpoint = self.properties[REFRESH_ENDPOINT]
        try:
            fresh = self._fetch(endpoint)
        except FileIOError:
            expires = expires_at_ms(self.properties)
            if expires is not None and _now_ms() < expires:
                # Still valid: keep working and try again on the next call.
                log.warning("could not renew the vended storage credentials yet", exc_info=True)
                return
            raise
        self.properties = {**self.properties, **fresh}
        self._received_ms = _now_ms()
        self._delegate = None  # streams already open keep the old one
        log.debug("renewed the vended storage credentials from %s", endpoint)

    def _get(self, endpoint: str) -> Any:
        request = urllib.request.Request(endpoint, headers={"Accept": "application/json"})
        token = self.properties.get(TOKEN)
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        with urllib.request.urlopen(request, timeout=_TIMEOUT_S) as answer:
            return json.loads(answer.read())

    def _new_token(self) -> bool:
        """A new bearer token from the catalog's OAuth2 client ``credential`` (``id:secret``),
        when the properties have one: a job may outlive the token it started with."""
        credential = self.properties.get(CREDENTIAL)
        if not credential:
            return False
        client_id, colon, secret = credential.partition(":")
        if not colon:  # a secret alone, as the catalog client takes it
            client_id, secret = "", credential
        server = self.properties.get(OAUTH2_SERVER_URI) or (
            self.properties.get("uri", "").rstrip("/") + "/v1/oauth/tokens"
        )
        form = {"grant_type": "client_credentials", "client_secret": secret}
        form["scope"] = self.properties.get("scope", "catalog")
        if client_id:
            form["client_id"] = client_id
        request = urllib.request.Request(
            server, data=urllib.parse.urlencode(form).encode(), headers={"Accept": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=_TIMEOUT_S) as answer:
            token = json.loads(answer.read()).get("access_token")
        if not isinstance(token, str) or not token:
            return False
        self.properties = {**self.properties, TOKEN: token}
        return True

    def _fetch(self, endpoint: str) -> dict[str, str]:
        try:
            try:
                body = self._get(endpoint)
            except urllib.error.HTTPError as exc:
                if exc.code not in (401, 419) or not self._new_token():
                    raise
                body = self._get(endpoint)
        except urllib.error.HTTPError as exc:
            raise FileIOError(
                f"could not renew the vended storage credentials: {exc.url} answered HTTP {exc.code}"
            ) from None
        except (OSError, ValueError) as exc:
            message = redact_text(str(exc), secret_values(self.properties))
            raise FileIOError(
                f"could not renew the vended storage credentials from {endpoint}: {message}"
            ) from None
        credentials = read_load_credentials_response(body, where=endpoint)
        chosen = best_credential(credentials, self.location or "")
        if chosen is None:
            raise FileIOError(
                f"could not renew the vended storage credentials: {endpoint} vends none for {self.location}"
            )
        return dict(chosen.config)

    # ---- the FileIO, through the current delegate ----

    def new_input(self, location: str, *, length: int | None = None) -> InputFile:
        return self.current().new_input(location, length=length)

    def new_output(self, location: str) -> OutputFile:
        return self.current().new_output(location)

    def delete(self, location: str) -> None:
        self.current().delete(location)

    def delete_many(self, locations: Iterable[str]) -> None:
        self.current().delete_many(locations)

    def list_prefix(self, prefix: str) -> Iterator[FileInfo]:
        return self.current().list_prefix(prefix)

    def write_exclusive(self, location: str, data: bytes) -> None:
        self.current().write_exclusive(location, data)

    def arrow_filesystem(self, location: str) -> tuple[pyarrow.fs.FileSystem, str]:
        return self.current().arrow_filesystem(location)

    def close(self) -> None:
        with self._lock:
            delegate, self._delegate = self._delegate, None
        if delegate is not None:
            delegate.close()

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.properties, self.location, self._factory))

    def __repr__(self) -> str:
        return f"RefreshingFileIO({self.location!r})"
