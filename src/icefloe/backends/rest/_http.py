"""HTTP for the REST catalog client: one httpx connection pool, headers, retries, errors.

- Headers: ``Accept``/``Content-Type`` JSON, ``X-Client-Version``, every ``header.<Name>``
  catalog property, the auth session's ``Authorization``.
- Retries (``rest.client.max-retries``, default 5): 429 and 503 for any request, honouring
  ``Retry-After``, else ``min(2^(n-1), 64)`` seconds with up to 10% jitter (none for a refused
  connection: nothing was sent, and as in Java it fails at once); read timeouts, resets and
  502/504 only for
  idempotent methods, or for a mutation that carries an ``Idempotency-Key`` (the server replays
  its first answer). A retried request keeps its key.
- 401/419: when the auth session can get a new token, it does and the request is sent once more.
- Errors: the spec's error model turned into icefloe's exceptions by status and ``type``
  (``raise_for`` with the kind of object the request was about).
"""

from __future__ import annotations

import logging
import os
import random
import secrets
import time
from collections.abc import Callable, Mapping
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

from icefloe._util.optional import import_optional
from icefloe.errors import (
    CommitFailedException,
    CommitStateUnknownException,
    ForbiddenError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchViewError,
    NotAuthorizedError,
    RESTError,
    ServiceUnavailableError,
    TableAlreadyExistsError,
    UnsupportedFeatureError,
    ValidationError,
    ValidationException,
    ViewAlreadyExistsError,
)
from icefloe.serde._reader import parse_json_document
from icefloe.serde.rest_json import ErrorResponse, read_error

if TYPE_CHECKING:
    import httpx

__all__ = ["HttpSession", "TransportUncertain", "uuid7"]

log = logging.getLogger(__name__)

MAX_RETRIES = "rest.client.max-retries"
CONNECT_TIMEOUT_MS = "rest.client.connection-timeout-ms"
SOCKET_TIMEOUT_MS = "rest.client.socket-timeout-ms"
HEADER_PREFIX = "header."
_IDEMPOTENT = frozenset({"GET", "HEAD", "DELETE", "PUT", "OPTIONS"})


def uuid7() -> str:
    """A UUIDv7 (48-bit unix milliseconds, version 7, variant, 74 random bits): the spec's
    Idempotency-Key format (Python 3.11 has no ``uuid.uuid7``)."""
    value = (int(time.time() * 1000) & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= secrets.randbits(12) << 64
    value |= 0b10 << 62
    value |= secrets.randbits(62)
    text = f"{value:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


class TransportUncertain(Exception):
    """A request was (maybe) sent but no answer came: a read timeout, a reset connection, or a
    500/502/504. For a commit the outcome is unknown."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


# (status, type) -> exception class, per kind of object; None type = any.
_NOT_FOUND = {
    "NoSuchNamespaceException": NoSuchNamespaceError,
    "NoSuchTableException": NoSuchTableError,
    "NoSuchViewException": NoSuchViewError,
}
_DEFAULT_NOT_FOUND = {"namespace": NoSuchNamespaceError, "table": NoSuchTableError, "view": NoSuchViewError}
_EXISTS = {
    "namespace": NamespaceAlreadyExistsError,
    "table": TableAlreadyExistsError,
    "view": ViewAlreadyExistsError,
}


def error_for(status: int, error: ErrorResponse, kind: str, what: str) -> Exception:
    """icefloe's exception for an error answer about ``what`` (a ``kind`` of object)."""
    message = f"{what}: {error.message}" if error.message else f"{what}: HTTP {status} {error.type}"
    if status == 404:
        return _NOT_FOUND.get(error.type, _DEFAULT_NOT_FOUND.get(kind, NoSuchTableError))(message)
    if status == 409:
        if error.type == "NamespaceNotEmptyException":
            return NamespaceNotEmptyError(message)
        if error.type == "CommitFailedException" or (
            kind == "commit" and error.type != "AlreadyExistsException"
        ):
            return CommitFailedException(message)
        return _EXISTS.get(kind, TableAlreadyExistsError)(message)
    if status == 400:
        if error.type == "NamespaceNotEmptyException":
            return NamespaceNotEmptyError(message)
        if error.type == "ValidationException":
            return ValidationException(message)
        return ValidationError(message)
    if status in (401, 419):
        return NotAuthorizedError(message)
    if status == 403:
        return ForbiddenError(message)
    if status in (405, 406, 501):
        return UnsupportedFeatureError(message)
    if status == 422:
        return ValidationError(message)
    if status == 503:
        return ServiceUnavailableError(message)
    return RESTError(message, status=status, error_type=error.type)


class HttpSession:
    """Sends requests to ``uri`` (the catalog's root, without ``/v1``).

    Args:
        uri: e.g. ``http://127.0.0.1:8181``.
        properties: catalog properties (``header.*``, retries, timeouts).
        auth_headers: returns the current ``Authorization`` header (or none).
        refresh_auth: called on 401/419; True when a retry with fresh credentials makes sense.
    """

    def __init__(
        self,
        uri: str,
        properties: Mapping[str, str],
        *,
        auth_headers: Callable[[], dict[str, str]] = dict,
        refresh_auth: Callable[[], bool] = lambda: False,
        transport: Any = None,
    ):
        self.uri = uri.rstrip("/")
        self.auth_headers = auth_headers
        self.refresh_auth = refresh_auth
        self.max_retries = int(properties.get(MAX_RETRIES, "5"))
        self.backoff_base = float(os.environ.get("ICEFLOE_REST_BACKOFF_SECONDS", "1.0"))
        connect = float(properties.get(CONNECT_TIMEOUT_MS, "10000")) / 1000
        read = float(properties.get(SOCKET_TIMEOUT_MS, "120000")) / 1000
        self.headers = {
            "Accept": "application/json",
            "X-Client-Version": "icefloe",
            "X-Iceberg-Access-Delegation": "vended-credentials",
        }
        self.update_headers(properties)
        # httpx is imported when a REST catalog is used, not with icefloe.
        self._httpx = import_optional("httpx", extra="rest")
        self._client = self._httpx.Client(
            timeout=self._httpx.Timeout(read, connect=connect), transport=transport
        )

    def update_headers(self, properties: Mapping[str, str]) -> None:
        for key, value in properties.items():
            if key.startswith(HEADER_PREFIX):
                name = key[len(HEADER_PREFIX) :]
                if value == "":
                    self.headers.pop(name, None)
                else:
                    self.headers[name] = value

    def close(self) -> None:
        self._client.close()

    def _delay(self, attempt: int, response: httpx.Response | None) -> float:
        if response is not None:
            after: str | None = response.headers.get("retry-after")
            if after:
                try:
                    return max(0.0, float(after))  # seconds
                except ValueError:
                    try:
                        when: float = parsedate_to_datetime(after).timestamp()
                        return max(0.0, when - time.time())
                    except (TypeError, ValueError):
                        pass
        delay: float = self.backoff_base * min(1 << max(attempt - 1, 0), 64)
        return delay + random.uniform(0, delay * 0.1)

    def request(
        self,
        method: str,
        url: str,
        *,
        json_body: Any = None,
        form: Mapping[str, str] | None = None,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        idempotency_key: str | None = None,
        authenticate: bool = True,
    ) -> httpx.Response:
        """Send a request, retrying as the module docstring says; returns the final response
        (any status).

        Raises:
            TransportUncertain: no answer after sending (a timeout, a reset), retries done.
            ServiceUnavailableError: the server could not be reached at all.
        """
        retry_uncertain = method in _IDEMPOTENT or idempotency_key is not None
        refreshed = False
        attempt = 0
        while True:
            attempt += 1
            all_headers = dict(self.headers)
            if authenticate:
                all_headers.update(self.auth_headers())
            if idempotency_key is not None:
                all_headers["Idempotency-Key"] = idempotency_key
            all_headers.update(headers or {})
            try:
                response: httpx.Response = self._client.request(
                    method,
                    url,
                    json=json_body,
                    data=dict(form) if form is not None else None,
                    params=params,
                    headers=all_headers,
                )
            except (self._httpx.ConnectError, self._httpx.ConnectTimeout, self._httpx.PoolTimeout) as exc:
                # Nothing was sent; like Java's client (ConnectException is not retried) fail at
                # once rather than sleep through a minute of back-off on a server that is down.
                raise ServiceUnavailableError(f"cannot reach the REST catalog at {self.uri}: {exc}") from exc
            except self._httpx.TransportError as exc:
                if not retry_uncertain or attempt > self.max_retries:
                    raise TransportUncertain(f"{method} {url}: no answer: {exc}") from exc
                time.sleep(self._delay(attempt, None))
                continue
            status = response.status_code
            if status in (401, 419) and authenticate and not refreshed and self.refresh_auth():
                refreshed = True
                attempt -= 1
                continue
            retryable = status in (429, 503) or (status in (502, 504) and retry_uncertain)
            if retryable and attempt <= self.max_retries:
                time.sleep(self._delay(attempt, response))
                continue
            return response

    def call(
        self,
        method: str,
        url: str,
        *,
        kind: str,
        what: str,
        ok: tuple[int, ...] = (200,),
        **kwargs: Any,
    ) -> Any:
        """``request`` and its JSON answer (None for an empty one); errors raised as icefloe's
        exceptions. 500/502/504 raise ``TransportUncertain`` (callers that commit decide)."""
        try:
            response = self.request(method, url, **kwargs)
        except TransportUncertain as exc:
            if kind == "commit":
                raise
            raise RESTError(f"{what}: {exc}", status=0) from exc
        if response.status_code in ok:
            return parse_json_document(response.content, url, "REST response") if response.content else None
        raise self.failure(response, kind, what)

    @staticmethod
    def failure(response: httpx.Response, kind: str, what: str) -> Exception:
        status = response.status_code
        try:
            body: Any = parse_json_document(response.content, None, "error") if response.content else {}
        except Exception:
            body = response.text
        error = read_error(body, status)
        if status in (500, 502, 504) and kind == "commit":
            return TransportUncertain(f"{what}: HTTP {status} {error.type}: {error.message}", status)
        return error_for(status, error, kind, what)


def commit_state_unknown(what: str, cause: Exception) -> CommitStateUnknownException:
    return CommitStateUnknownException(f"{what}: the outcome is unknown ({cause}); nothing was cleaned up")
