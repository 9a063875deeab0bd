"""``icefloe.rest.app(catalog)``: an Iceberg REST catalog server over an icefloe catalog, as an
ASGI application (Starlette).

One catch-all route hands each request to :class:`RestServer`, which routes on the raw path
(``routing.py``), reads the body up to a limit (413 beyond), authenticates (``auth.py``),
checks the principal's rights, replays or claims an ``Idempotency-Key`` (``idempotency.py``),
and runs the handler in a worker thread (the catalog is blocking code). Exceptions icefloe
raises on purpose become the spec's error answers (``errors.py``); anything else is a bug,
logged with its traceback and answered 500.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import secrets
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route as StarletteRoute

from icefloe.backends.rest.endpoints import Endpoint
from icefloe.catalog import Catalog
from icefloe.errors import InvalidIdentifierError, InvalidMetadataError, ValidationError
from icefloe.io import ConfinedFileIO, is_within, strip_trailing_slash
from icefloe.rest import namespaces, planning, tables, views
from icefloe.rest.auth import Authenticator, OAuthError, parse_principals
from icefloe.rest.credentials import CredentialsConfig, without_credentials
from icefloe.rest.errors import HttpProblem, error_response
from icefloe.rest.idempotency import (
    LIFETIME_ISO,
    IdempotencyStore,
    MemoryIdempotencyStore,
    SqliteIdempotencyStore,
)
from icefloe.rest.routing import Call, Reply, Route, match_route
from icefloe.rest.service import CatalogService, json_bytes, json_reply
from icefloe.rest.wording import check_path_names, path_missing
from icefloe.serde.rest_json import CatalogConfig, ErrorResponse

__all__ = ["DEFAULT_MAX_BODY_BYTES", "RestServer", "app"]

log = logging.getLogger(__name__)

DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
_METHODS = ["GET", "HEAD", "POST", "DELETE", "PUT", "PATCH", "OPTIONS"]
_KEY_FILE = "signing-key"


def _signing_key(state_dir: Path | None) -> bytes:
    """The token signing key: kept in the state folder (shared by workers), else random."""
    if state_dir is None:
        return secrets.token_bytes(32)
    path = state_dir / _KEY_FILE
    try:
        fd = path.open("xb")
    except FileExistsError:
        return path.read_bytes()
    with fd:
        path.chmod(0o600)
        key = secrets.token_bytes(32)
        fd.write(key)
    return key


class RestServer:
    """The server behind ``app()``: routes, auth, idempotency, error answers."""

    def __init__(
        self,
        catalog: Catalog,
        auth: Mapping[str, Any] | None = None,
        *,
        prefix: str | None = None,
        token_ttl_seconds: int = 3600,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        state_dir: str | Path | None = None,
        allowed_locations: Sequence[str] | None = None,
        storage_credentials: CredentialsConfig | None = None,
    ):
        folder = Path(state_dir) if state_dir is not None else None
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.service = CatalogService(
            catalog,
            prefix=prefix,
            allowed_locations=_allowed(catalog, allowed_locations),
            storage_credentials=storage_credentials,
        )
        backend = catalog.backend
        # Whatever a request says, the server writes and deletes only inside the allowed
        # locations (a catalog served again keeps the innermost confinement: the new one).
        inner = backend.io.inner if isinstance(backend.io, ConfinedFileIO) else backend.io
        backend.io = ConfinedFileIO(inner, self.service.allowed_locations)
        principals = parse_principals(auth) if auth is not None else None
        self.auth = Authenticator(principals, _signing_key(folder), token_ttl_seconds=token_ttl_seconds)
        self.idempotency: IdempotencyStore = (
            SqliteIdempotencyStore(folder / "idempotency.db")
            if folder is not None
            else MemoryIdempotencyStore()
        )
        self.max_body_bytes = max_body_bytes
        self.prefix = prefix
        self.routes = self._routes()
        self.endpoints = tuple(
            r.endpoint for r in self.routes if r.endpoint not in (Endpoint.CONFIG, Endpoint.TOKENS)
        )

    def _routes(self) -> list[Route]:
        s = self.service

        def bind(handler: Any) -> Any:
            return functools.partial(handler, s)

        read = [
            (Endpoint.LIST_NAMESPACES, namespaces.list_namespaces),
            (Endpoint.LOAD_NAMESPACE, namespaces.load_namespace),
            (Endpoint.NAMESPACE_EXISTS, namespaces.namespace_exists),
            (Endpoint.LIST_TABLES, tables.list_tables),
            (Endpoint.LOAD_TABLE, tables.load_table),
            (Endpoint.TABLE_EXISTS, tables.table_exists),
            (Endpoint.LOAD_CREDENTIALS, namespaces.load_credentials),
            (Endpoint.REPORT_METRICS, namespaces.report_metrics),
            (Endpoint.LIST_VIEWS, views.list_views),
            (Endpoint.LOAD_VIEW, views.load_view),
            (Endpoint.VIEW_EXISTS, views.view_exists),
            # Planning changes nothing: read-only principals may plan.
            (Endpoint.PLAN_TABLE_SCAN, planning.plan_table_scan),
            (Endpoint.FETCH_PLANNING_RESULT, planning.fetch_planning_result),
            (Endpoint.CANCEL_PLANNING, planning.cancel_planning),
            (Endpoint.FETCH_SCAN_TASKS, planning.fetch_scan_tasks),
        ]
        write = [
            (Endpoint.CREATE_NAMESPACE, namespaces.create_namespace),
            (Endpoint.DROP_NAMESPACE, namespaces.drop_namespace),
            (Endpoint.UPDATE_NAMESPACE, namespaces.update_namespace),
            (Endpoint.CREATE_TABLE, tables.create_table),
            (Endpoint.UPDATE_TABLE, tables.commit_table),
            (Endpoint.DROP_TABLE, tables.drop_table),
            (Endpoint.REGISTER_TABLE, tables.register_table),
            (Endpoint.RENAME_TABLE, tables.rename_table),
            (Endpoint.COMMIT_TRANSACTION, tables.commit_transaction),
            (Endpoint.CREATE_VIEW, views.create_view),
            (Endpoint.REPLACE_VIEW, views.replace_view),
            (Endpoint.DROP_VIEW, views.drop_view),
            (Endpoint.RENAME_VIEW, views.rename_view),
            (Endpoint.REGISTER_VIEW, views.register_view),
        ]
        return [
            Route(Endpoint.CONFIG, self._config),
            Route(Endpoint.TOKENS, self._token),
            *(Route(e, bind(h)) for e, h in read),
            *(Route(e, bind(h), mutation=True) for e, h in write),
        ]

    # ---- the two routes that need the server itself -----------------------------------------

    def _config(self, call: Call) -> Reply:
        overrides = {"prefix": self.prefix} if self.prefix else {}
        config = CatalogConfig({}, overrides, self.endpoints, LIFETIME_ISO)
        return json_reply(config.to_json())

    def _token(self, call: Call) -> Reply:
        try:
            return json_reply(self.auth.token(call.form, call.headers.get("authorization")))
        except OAuthError as exc:
            return json_reply(exc.body(), exc.status)

    # ---- handling ------------------------------------------------------------------------------

    def handle(self, route: Route, call: Call) -> Reply:
        """Authenticate, authorize, run the route (blocking; called in a worker thread)."""
        try:
            if route.endpoint != Endpoint.TOKENS:
                call.principal = self.auth.authenticate(call.headers.get("authorization"))
                check_path_names(call)
                if "namespace" in call.params:
                    call.principal.check_namespace(call.namespace)
                if route.mutation:
                    call.principal.check_write(route.endpoint)
            key = call.headers.get("idempotency-key") if route.mutation else None
            if key:
                return self._idempotent(route, call, key)
            return route.handler(call)
        except InvalidIdentifierError as exc:
            if call.method in ("GET", "HEAD", "DELETE") and "namespace" in call.params:
                # A name this catalog cannot hold (the Hadoop catalog's '/'): nothing has it.
                return self.failure(path_missing(call), call)
            return self.failure(exc, call)
        except Exception as exc:
            return self.failure(exc, call)

    def _idempotent(self, route: Route, call: Call, key: str) -> Reply:
        # The same key for another route, path or body is another request: refused (422).
        fingerprint = f"{route.endpoint} {call.params} {hashlib.sha256(call.body).hexdigest()}"
        replay = self.idempotency.claim(key, fingerprint)
        if replay is not None:
            return Reply(replay.status, replay.body)
        try:
            reply = route.handler(call)
        except Exception as exc:
            reply = self.failure(exc, call)
        self.idempotency.finish(key, reply.status, without_credentials(reply.body))
        return reply

    @staticmethod
    def failure(exc: BaseException, call: Call | None = None) -> Reply:
        error = error_response(exc)
        if error is None:
            where = f"{call.method} {call.endpoint}" if call is not None else "a request"
            log.error("internal error handling %s", where, exc_info=exc)
            error = ErrorResponse(
                f"internal error: {type(exc).__name__}: {exc}"[:1000], "InternalServerError", 500
            )
        return Reply(error.code, json_bytes(error.to_json()))

    async def _body(self, request: Request) -> bytes:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body_bytes:
            raise HttpProblem(
                413, "PayloadTooLargeException", f"the body is larger than {self.max_body_bytes} bytes"
            )
        chunks = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > self.max_body_bytes:
                raise HttpProblem(
                    413, "PayloadTooLargeException", f"the body is larger than {self.max_body_bytes} bytes"
                )
            chunks.append(chunk)
        return b"".join(chunks)

    async def endpoint(self, request: Request) -> Response:
        scope = request.scope
        method = request.method
        raw_path = scope.get("raw_path") or scope["path"].encode("utf-8")
        raw_path = raw_path.split(b"?", 1)[0]
        call: Call | None = None
        try:
            route, params, query = match_route(
                self.routes, method, raw_path, scope.get("query_string", b""), self.prefix
            )
            body = await self._body(request)
            headers = {k.lower(): v for k, v in request.headers.items()}
            call = Call(method, route.endpoint, params, query, headers, body)
            if route.endpoint == Endpoint.TOKENS:
                try:
                    call.form = dict(parse_qsl(body.decode("utf-8"), keep_blank_values=True, errors="strict"))
                except (UnicodeError, ValueError) as exc:
                    raise InvalidMetadataError(f"the token request is not a valid form: {exc}") from exc
            reply = await run_in_threadpool(self.handle, route, call)
        except Exception as exc:
            reply = self.failure(exc, call)
        no_body = reply.status in (204, 304) or method == "HEAD"
        return Response(
            b"" if no_body else reply.body,
            status_code=reply.status,
            headers=reply.headers,
            media_type=None if no_body else reply.content_type,
        )


def _allowed(catalog: Catalog, allowed_locations: Sequence[str] | None) -> tuple[str, ...]:
    """The allowed locations, checked: absolute paths or URIs, never empty (the warehouse when
    none are given)."""
    if allowed_locations is None:
        return (catalog.backend.warehouse,)
    if isinstance(allowed_locations, str):
        allowed_locations = [allowed_locations]
    allowed = tuple(strip_trailing_slash(location) or "/" for location in allowed_locations)
    if not allowed:
        raise ValidationError("allowed_locations must name at least one location (None: the warehouse)")
    for location in allowed:
        if not is_within(location, location):
            raise ValidationError(
                f"allowed location {location!r} must be an absolute path or a URI (like s3://bucket/prefix)"
            )
    # New tables go under the warehouse by default: a list that leaves it out would refuse
    # every create that names no location, which is never what an operator means.
    warehouse = catalog.backend.warehouse
    if not any(is_within(warehouse, location) for location in allowed):
        raise ValidationError(
            f"allowed locations {list(allowed)} do not include the warehouse {warehouse!r}, where new "
            "tables go by default: list it too"
        )
    return allowed


def app(
    catalog: Catalog,
    auth: Mapping[str, Any] | None = None,
    *,
    prefix: str | None = None,
    token_ttl_seconds: int = 3600,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    state_dir: str | Path | None = None,
    allowed_locations: Sequence[str] | None = None,
    storage_credentials: CredentialsConfig | None = None,
) -> Starlette:
    """An Iceberg REST catalog server over ``catalog``, as an ASGI application.

    Args:
        catalog: the catalog served (any icefloe catalog; multi-table commits need one that
            can commit several tables atomically: SQL, in-memory). The server confines its
            backend's metadata FileIO to the warehouse: nothing is written or deleted outside.
        auth: principals ``{client_id: {"secret": ..., "read_only": bool, "namespaces":
            [...]}}``; None: no authentication (for a server on 127.0.0.1).
        prefix: serve under ``/v1/<prefix>/...`` (advertised in ``/v1/config``).
        token_ttl_seconds: lifetime of issued tokens.
        max_body_bytes: larger request bodies get 413.
        state_dir: a folder for what several worker processes must share (the idempotency
            keys, the token signing key); None keeps both in this process.
        allowed_locations: the locations (prefixes: ``s3://bucket/tables``, ``/data/lake``)
            where tables and views may be and the server may write or delete; None: the
            warehouse alone. A request for a location outside all of them gets a 400, and the
            backend's FileIO refuses any write or delete outside them. Give the warehouse too
            when new tables should still go there by default.
        storage_credentials: credentials the server vends to clients for tables' files:
            ``{location prefix: FileIO properties}`` or a callable of ``(identifier,
            TableMetadata)`` returning ``StorageCredential`` s (see ``rest.credentials``).

    Raises:
        ValidationError: a malformed ``auth`` or allowed location.
    """
    server = RestServer(
        catalog,
        auth,
        prefix=prefix,
        token_ttl_seconds=token_ttl_seconds,
        max_body_bytes=max_body_bytes,
        state_dir=state_dir,
        allowed_locations=allowed_locations,
        storage_credentials=storage_credentials,
    )
    application = Starlette(routes=[StarletteRoute("/{path:path}", server.endpoint, methods=_METHODS)])
    application.state.server = server
    return application
