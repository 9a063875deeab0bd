"""Who may call the server: OAuth2 client credentials, bearer tokens, read-only principals and
namespace limits.

Principals are given as ``{client_id: {"secret": ..., "read_only": False, "namespaces": ["db",
...]}}`` (``namespaces`` absent: all; a listed namespace includes the ones below it). The token
endpoint (``POST /v1/oauth/tokens``) takes ``client_credentials`` (form fields or HTTP Basic) and
RFC 8693 ``token-exchange`` (a valid token of ours, or Basic credentials) and answers a signed,
self-contained token: ``<payload>.<HMAC-SHA256>`` with the client id and the expiry time. Any
server process holding the same key verifies it, so several workers need no shared state
beyond the key.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from icefloe.backends import identifier_to_string, parse_namespace
from icefloe.errors import ForbiddenError, NotAuthorizedError, ValidationError

__all__ = ["Authenticator", "OAuthError", "Principal", "parse_principals"]

CLIENT_CREDENTIALS = "client_credentials"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"


@dataclass(frozen=True, slots=True)
class Principal:
    """A caller: its id, whether it may only read, and the namespaces it may touch (None: all)."""

    client_id: str
    secret: str = ""
    read_only: bool = False
    namespaces: tuple[tuple[str, ...], ...] | None = None

    def check_namespace(self, namespace: Sequence[str]) -> None:
        """Raise ForbiddenError unless ``namespace`` is one of (or below one of) the allowed."""
        if self.namespaces is None:
            return
        levels = tuple(namespace)
        if any(levels[: len(allowed)] == allowed for allowed in self.namespaces):
            return
        raise ForbiddenError(
            f"principal '{self.client_id}' may not access namespace {identifier_to_string(levels) or '(root)'}"
        )

    def sees(self, namespace: Sequence[str]) -> bool:
        """Whether a listing may show ``namespace`` (allowed, or on the way to an allowed one)."""
        if self.namespaces is None:
            return True
        levels = tuple(namespace)
        return any(
            levels[: len(allowed)] == allowed or allowed[: len(levels)] == levels
            for allowed in self.namespaces
        )

    def check_write(self, what: str) -> None:
        if self.read_only:
            raise ForbiddenError(f"principal '{self.client_id}' is read-only: it may not {what}")


#: The caller when the server has no auth: everything allowed.
ANONYMOUS = Principal("anonymous")


def parse_principals(auth: Mapping[str, Any]) -> dict[str, Principal]:
    """The principals of an ``auth`` mapping (see the module docstring).

    Raises:
        ValidationError: naming the client and the bad setting.
    """
    if not isinstance(auth, Mapping) or not auth:
        raise ValidationError(
            "auth must map client ids to {'secret': ..., 'read_only': ..., 'namespaces': [...]}"
        )
    principals = {}
    for client_id, settings in auth.items():
        if not isinstance(client_id, str) or not client_id or ":" in client_id:
            raise ValidationError(f"auth: client id {client_id!r} must be a non-empty string without ':'")
        if not isinstance(settings, Mapping):
            raise ValidationError(f"auth: client '{client_id}' needs a mapping of settings")
        unknown = sorted(set(settings) - {"secret", "read_only", "namespaces"})
        if unknown:
            raise ValidationError(f"auth: client '{client_id}' has unknown settings {unknown}")
        secret = settings.get("secret")
        if not isinstance(secret, str) or not secret:
            raise ValidationError(f"auth: client '{client_id}' needs a non-empty 'secret'")
        read_only = settings.get("read_only", False)
        if not isinstance(read_only, bool):
            raise ValidationError(f"auth: client '{client_id}': 'read_only' must be true or false")
        namespaces = settings.get("namespaces")
        allowed = None
        if namespaces is not None:
            if not isinstance(namespaces, list):
                raise ValidationError(f"auth: client '{client_id}': 'namespaces' must be a list")
            allowed = tuple(parse_namespace(ns) for ns in namespaces)
        principals[client_id] = Principal(client_id, secret, read_only, allowed)
    return principals


class OAuthError(Exception):
    """An answer of the token endpoint in OAuth's error form (not the catalog's)."""

    def __init__(self, status: int, error: str, description: str):
        super().__init__(description)
        self.status = status
        self.error = error
        self.description = description

    def body(self) -> dict[str, str]:
        return {"error": self.error, "error_description": self.description}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Authenticator:
    """Issues and checks tokens for a set of principals (None: auth is off).

    Args:
        principals: by client id; None turns auth off (every request is allowed, any
            ``Authorization`` header ignored: PyIceberg sends ``Bearer None``).
        key: the signing key (shared by every worker of one server).
        token_ttl_seconds: how long a token lives.
    """

    def __init__(
        self,
        principals: Mapping[str, Principal] | None,
        key: bytes | None = None,
        *,
        token_ttl_seconds: int = 3600,
    ):
        self.principals = dict(principals) if principals is not None else None
        self._key = key or secrets.token_bytes(32)
        self.token_ttl_seconds = token_ttl_seconds

    @property
    def enabled(self) -> bool:
        return self.principals is not None

    # ---- tokens --------------------------------------------------------------------------------

    def issue(self, client_id: str) -> str:
        payload = _b64(
            json.dumps({"sub": client_id, "exp": int(time.time()) + self.token_ttl_seconds}).encode()
        )
        return f"{payload}.{self._sign(payload)}"

    def _sign(self, payload: str) -> str:
        return _b64(hmac.new(self._key, payload.encode("ascii"), hashlib.sha256).digest())

    def _read_token(self, token: str, *, allow_expired: bool = False) -> Principal:
        payload, _, signature = token.partition(".")
        try:
            valid = hmac.compare_digest(self._sign(payload), signature)
            claims = json.loads(_unb64(payload)) if valid else None
        except (ValueError, UnicodeError, binascii.Error):
            claims = None
        if (
            not isinstance(claims, dict)
            or not isinstance(claims.get("sub"), str)
            or type(claims.get("exp")) is not int
        ):
            raise NotAuthorizedError("not authorized: the bearer token is not valid")
        if not allow_expired and claims["exp"] < time.time():
            raise NotAuthorizedError("not authorized: the bearer token has expired")
        principal = (self.principals or {}).get(claims["sub"])
        if principal is None:
            raise NotAuthorizedError("not authorized: the token's client is unknown")
        return principal

    def authenticate(self, authorization: str | None) -> Principal:
        """The principal of a request's ``Authorization`` header.

        Raises:
            NotAuthorizedError: auth is on and the header has no valid, unexpired bearer token.
        """
        if self.principals is None:
            return ANONYMOUS
        if not authorization or not authorization[:7].lower() == "bearer ":
            raise NotAuthorizedError("not authorized: send a bearer token from /v1/oauth/tokens")
        return self._read_token(authorization[7:].strip())

    # ---- the token endpoint --------------------------------------------------------------------

    def _basic(self, authorization: str | None) -> tuple[str, str] | None:
        if not authorization or authorization[:6].lower() != "basic ":
            return None
        try:
            text = base64.b64decode(authorization[6:].strip(), validate=True).decode("utf-8")
        except (ValueError, UnicodeError, binascii.Error):
            raise OAuthError(401, "invalid_client", "malformed Basic credentials") from None
        client_id, colon, secret = text.partition(":")
        return (client_id, secret) if colon else None

    def _client(self, client_id: str | None, secret: str | None) -> str:
        if self.principals is None:
            return client_id or "anonymous"
        principal = self.principals.get(client_id or "")
        if principal is None or secret is None or not hmac.compare_digest(principal.secret, secret):
            raise OAuthError(401, "invalid_client", "unknown client or wrong secret")
        return principal.client_id

    def token(self, form: Mapping[str, str], authorization: str | None) -> dict[str, Any]:
        """Answer a token request (form fields of ``application/x-www-form-urlencoded``).

        Raises:
            OAuthError: 400 ``invalid_request`` / ``unsupported_grant_type`` /
                ``invalid_grant``, 401 ``invalid_client``.
        """
        grant = form.get("grant_type")
        basic = self._basic(authorization)
        if grant == CLIENT_CREDENTIALS:
            client_id, secret = form.get("client_id"), form.get("client_secret")
            if client_id is None and basic is not None:
                client_id, secret = basic
            if client_id is None:
                raise OAuthError(
                    400, "invalid_request", "client_credentials needs client_id and client_secret"
                )
            subject = self._client(client_id, secret)
        elif grant == TOKEN_EXCHANGE:
            subject_token = form.get("subject_token")
            if not subject_token:
                raise OAuthError(400, "invalid_request", "token-exchange needs subject_token")
            if basic is not None:
                subject = self._client(*basic)
            elif self.principals is None:
                subject = "anonymous"
            else:
                try:
                    subject = self._read_token(subject_token).client_id
                except NotAuthorizedError as exc:
                    raise OAuthError(400, "invalid_grant", str(exc)) from None
        else:
            raise OAuthError(400, "unsupported_grant_type", f"grant_type {grant!r} is not supported")
        return {
            "access_token": self.issue(subject),
            "token_type": "bearer",
            "expires_in": self.token_ttl_seconds,
            "issued_token_type": ACCESS_TOKEN_TYPE,
        }
