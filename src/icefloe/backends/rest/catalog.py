"""RestCatalogBackend: a catalog behind an Iceberg REST server (``type="rest"``).

Start-up: credentials (``auth.py``), then ``GET /v1/config`` (``?warehouse=`` when set): the
properties become ``defaults < the client's < overrides``; ``prefix``, the endpoints the server
lists (or the spec's default set), whether it takes ``Idempotency-Key`` s
(``idempotency-key-lifetime``), ``rest-page-size`` and ``snapshot-loading-mode``. Every
operation checks its endpoint first: one the server does not serve fails with
``UnsupportedFeatureError`` before anything is sent.

The server writes metadata files and swaps pointers, so this backend overrides the whole
commit protocol: a commit is ``POST .../tables/{t}`` with requirements and updates; 409 is
``CommitFailedException`` (the transaction reloads and retries); 500/502/504 or no answer is an
unknown outcome, reconciled as Java 1.11 does: reload, and if every snapshot the commit added
is there (and every branch it set points to it), the commit landed; else
``CommitStateUnknownException``. Several tables commit through ``/transactions/commit``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

from icefloe.backends._records import LoadedTable, PropertiesUpdateSummary, TableCommit
from icefloe.backends.base import CatalogBackend
from icefloe.backends.identifiers import (
    Identifier,
    Namespace,
    identifier_to_string,
    parse_identifier,
    parse_namespace,
)
from icefloe.backends.rest._credentials import table_io_properties
from icefloe.backends.rest._http import HttpSession, TransportUncertain, commit_state_unknown, uuid7
from icefloe.backends.rest._planning import plan_on_server
from icefloe.backends.rest._updates import as_java_sends
from icefloe.backends.rest.auth import AuthSession
from icefloe.backends.rest.endpoints import DEFAULT_ENDPOINTS, VIEW_ENDPOINTS, Endpoint
from icefloe.backends.views import LoadedView
from icefloe.errors import (
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchViewError,
    UnsupportedFeatureError,
    ValidationError,
)
from icefloe.io import load_file_io
from icefloe.io.encryption import load_kms_client
from icefloe.io.refreshing import REFRESH_ENABLED
from icefloe.serde.rest_json import (
    CommitTableRequest,
    CommitViewRequest,
    CreateTableRequest,
    CreateViewRequest,
    identifier_to_json,
    read_catalog_config,
    read_load_table_result,
    read_load_view_result,
)
from icefloe.spec.partitioning import PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.spec.sorting import SortOrder
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.updates import AddSnapshot, SetSnapshotRef, TableRequirement, TableUpdate
from icefloe.spec.views import ViewMetadata, ViewRequirement, ViewVersion

__all__ = ["RestCatalogBackend"]

log = logging.getLogger(__name__)

URI = "uri"
PREFIX = "prefix"
WAREHOUSE = "warehouse"
PAGE_SIZE = "rest-page-size"
SNAPSHOT_LOADING_MODE = "snapshot-loading-mode"
NAMESPACE_SEPARATOR = "namespace-separator"
VIEW_ENDPOINTS_SUPPORTED = "view-endpoints-supported"


class RestCatalogBackend(CatalogBackend):
    """A catalog behind a REST server.

    Properties:
        uri: the server (``http://host:port``, without ``/v1``). Required.
        warehouse: sent as ``?warehouse=`` to ``/v1/config`` (which warehouse of the server).
        credential: ``client_id:secret`` for OAuth2 client credentials; token: a static bearer
            token; oauth2-server-uri, scope: where and for what tokens are fetched.
        header.<Name>: an extra HTTP header (``header.X-Iceberg-Access-Delegation=`` drops
            the default ``vended-credentials``).
        rest.client.max-retries, rest.client.connection-timeout-ms,
        rest.client.socket-timeout-ms, rest-page-size, snapshot-loading-mode (``all`` | ``refs``).
    """

    catalog_type = "rest"

    def __init__(self, name: str, properties: Mapping[str, str] | None = None, *, transport: Any = None):
        props = dict(properties or {})
        uri = props.get(URI)
        if not uri:
            raise ValidationError(f"rest catalog '{name}' needs the '{URI}' property (http://host:port)")
        self.name = name
        self.uri = uri.rstrip("/")
        self._auth = AuthSession(self.uri, props)
        self._http = HttpSession(
            self.uri,
            props,
            auth_headers=self._auth.headers,
            refresh_auth=self._auth.retry_after_401,
            transport=transport,
        )
        try:
            self._auth.bind(self._http)
            params = {WAREHOUSE: props[WAREHOUSE]} if props.get(WAREHOUSE) else None
            config = read_catalog_config(
                self._http.call(
                    "GET",
                    f"{self.uri}/v1/config",
                    kind="config",
                    what="loading the catalog config",
                    params=params,
                )
            )
        except BaseException:
            self._http.close()  # nothing else will: the backend never existed
            raise
        merged = {**config.defaults, **props, **config.overrides}
        self.properties = merged
        # Encrypted tables: the key management client is the client's own (the catalog's merged
        # properties name it); the server never sees a plaintext key.
        self.kms = load_kms_client(merged)
        self._http.update_headers(merged)
        self.warehouse = merged.get(WAREHOUSE, "")
        if config.endpoints is not None:
            self.endpoints = frozenset(config.endpoints)
        else:
            views = merged.get(VIEW_ENDPOINTS_SUPPORTED, "false").lower() == "true"
            self.endpoints = DEFAULT_ENDPOINTS | (VIEW_ENDPOINTS if views else frozenset())
        self._idempotent = config.idempotency_key_lifetime is not None
        prefix = merged.get(PREFIX)
        self._base = f"{self.uri}/v1/" + (f"{quote(prefix, safe='')}/" if prefix else "")
        separator = merged.get(NAMESPACE_SEPARATOR, "%1F")
        self._separator = separator if separator else "%1F"
        self._page_size = merged.get(PAGE_SIZE)
        self._snapshots = merged.get(SNAPSHOT_LOADING_MODE, "all").lower()
        self._etags: dict[tuple[str, ...], tuple[str, LoadedTable]] = {}
        self._etag_lock = threading.Lock()
        self.io = load_file_io(merged, self.warehouse or None)

    def close(self) -> None:
        self._http.close()
        if self.kms is not None:
            self.kms.close()

    def __repr__(self) -> str:
        return f"RestCatalogBackend({self.name!r}, uri={self.uri!r})"

    # ---- paths and checks -------------------------------------------------------------------

    def _check(self, endpoint: str) -> None:
        if endpoint not in self.endpoints:
            raise UnsupportedFeatureError(f"the REST catalog at {self.uri} does not serve {endpoint}")

    def supports(self, endpoint: str) -> bool:
        return endpoint in self.endpoints

    def _ns(self, namespace: Sequence[str]) -> str:
        return self._separator.join(quote(level, safe="") for level in namespace)

    def _namespace_url(self, namespace: Sequence[str]) -> str:
        return f"{self._base}namespaces/{self._ns(namespace)}"

    def _table_url(self, ident: tuple[str, ...], kind: str = "tables") -> str:
        return f"{self._namespace_url(ident[:-1])}/{kind}/{quote(ident[-1], safe='')}"

    def _key(self) -> str | None:
        return uuid7() if self._idempotent else None

    def _paged(
        self, url: str, key: str, *, what: str, kind: str, params: dict[str, str] | None = None
    ) -> list[Any]:
        items: list[Any] = []
        query = dict(params or {})
        if self._page_size:
            query["pageSize"] = self._page_size
        while True:
            body = self._http.call("GET", url, kind=kind, what=what, params=query or None)
            items.extend(body.get(key) or [])
            token = body.get("next-page-token")
            if not token:
                return items
            query["pageToken"] = token

    # ---- namespaces -------------------------------------------------------------------------

    def create_namespace(
        self, namespace: str | Sequence[str], properties: Mapping[str, str] | None = None
    ) -> None:
        self._check(Endpoint.CREATE_NAMESPACE)
        levels = parse_namespace(namespace)
        self._http.call(
            "POST",
            f"{self._base}namespaces",
            kind="namespace",
            what=f"creating namespace {identifier_to_string(levels)}",
            json_body={"namespace": list(levels), "properties": dict(properties or {})},
            idempotency_key=self._key(),
        )

    def list_namespaces(self, parent: str | Sequence[str] = ()) -> list[Namespace]:
        if Endpoint.LIST_NAMESPACES not in self.endpoints:
            return []
        levels = parse_namespace(parent, allow_root=True)
        params = {"parent": "\x1f".join(levels)} if levels else None
        items = self._paged(
            f"{self._base}namespaces",
            "namespaces",
            what="listing namespaces",
            kind="namespace",
            params=params,
        )
        return sorted(tuple(ns) for ns in items)

    def load_namespace_properties(self, namespace: str | Sequence[str]) -> dict[str, str]:
        self._check(Endpoint.LOAD_NAMESPACE)
        levels = parse_namespace(namespace)
        body = self._http.call(
            "GET",
            self._namespace_url(levels),
            kind="namespace",
            what=f"loading namespace {identifier_to_string(levels)}",
        )
        return dict(body.get("properties") or {})

    def update_namespace_properties(
        self,
        namespace: str | Sequence[str],
        removals: Iterable[str] = (),
        updates: Mapping[str, str] | None = None,
    ) -> PropertiesUpdateSummary:
        self._check(Endpoint.UPDATE_NAMESPACE)
        levels = parse_namespace(namespace)
        body = self._http.call(
            "POST",
            f"{self._namespace_url(levels)}/properties",
            kind="namespace",
            what=f"updating namespace {identifier_to_string(levels)}",
            json_body={"removals": sorted(set(removals)), "updates": dict(updates or {})},
            idempotency_key=self._key(),
        )
        return PropertiesUpdateSummary(
            removed=tuple(sorted(body.get("removed") or [])),
            updated=tuple(sorted(body.get("updated") or [])),
            missing=tuple(sorted(body.get("missing") or [])),
        )

    def drop_namespace(self, namespace: str | Sequence[str]) -> None:
        self._check(Endpoint.DROP_NAMESPACE)
        levels = parse_namespace(namespace)
        self._http.call(
            "DELETE",
            self._namespace_url(levels),
            kind="namespace",
            what=f"dropping namespace {identifier_to_string(levels)}",
            ok=(200, 204),
            idempotency_key=self._key(),
        )

    def namespace_exists(self, namespace: str | Sequence[str]) -> bool:
        levels = parse_namespace(namespace)
        if Endpoint.NAMESPACE_EXISTS in self.endpoints:
            response = self._http.request("HEAD", self._namespace_url(levels))
            if response.status_code == 404:
                return False
            if response.status_code in (200, 204):
                return True
            raise self._http.failure(
                response, "namespace", f"checking namespace {identifier_to_string(levels)}"
            )
        try:
            self.load_namespace_properties(levels)
            return True
        except NoSuchNamespaceError:
            return False

    # ---- tables -----------------------------------------------------------------------------

    def list_tables(self, namespace: str | Sequence[str]) -> list[tuple[str, ...]]:
        return self._list_identifiers(Endpoint.LIST_TABLES, namespace, "tables")

    def _list_identifiers(
        self, endpoint: str, namespace: str | Sequence[str], kind: str
    ) -> list[tuple[str, ...]]:
        """The identifiers of a namespace's ``kind`` (``tables`` or ``views``), every page;
        none when the server does not advertise ``endpoint``."""
        if endpoint not in self.endpoints:
            return []
        levels = parse_namespace(namespace)
        items = self._paged(
            f"{self._namespace_url(levels)}/{kind}", "identifiers", what=f"listing {kind}", kind="namespace"
        )
        return sorted((*i.get("namespace", []), i["name"]) for i in items)

    def _loaded(self, ident: tuple[str, ...], body: Any, where: str) -> LoadedTable:
        result = read_load_table_result(body, where=where)
        if result.metadata_location is None:
            raise ValidationError(f"{where}: the server's answer has no metadata-location")
        io_properties = table_io_properties(
            result,
            credentials_url=self._table_url(ident) + "/credentials"
            if Endpoint.LOAD_CREDENTIALS in self.endpoints
            else None,
            authorization=self._auth.headers().get("Authorization"),
            refresh_enabled=self.properties.get(REFRESH_ENABLED, "true"),
        )
        return LoadedTable(ident, result.metadata_location, result.metadata, io_properties)

    def load_table(self, identifier: Identifier) -> LoadedTable:
        ident = parse_identifier(identifier)
        if Endpoint.LOAD_TABLE not in self.endpoints:
            raise NoSuchTableError(f"the REST catalog at {self.uri} does not serve {Endpoint.LOAD_TABLE}")
        url = self._table_url(ident)
        with self._etag_lock:
            cached = self._etags.get(ident)
        headers = {"If-None-Match": cached[0]} if cached else None
        response = self._http.request("GET", url, params={"snapshots": self._snapshots}, headers=headers)
        if response.status_code == 304 and cached is not None:
            return cached[1]
        if response.status_code != 200:
            raise self._http.failure(response, "table", f"loading table {identifier_to_string(ident)}")
        loaded = self._loaded(ident, response.json(), url)
        etag = response.headers.get("etag")
        if etag:
            with self._etag_lock:
                self._etags[ident] = (etag, loaded)
        return loaded

    def table_exists(self, identifier: Identifier) -> bool:
        ident = parse_identifier(identifier)
        if Endpoint.TABLE_EXISTS in self.endpoints:
            response = self._http.request("HEAD", self._table_url(ident))
            if response.status_code == 404:
                return False
            if response.status_code in (200, 204):
                return True
            raise self._http.failure(response, "table", f"checking table {identifier_to_string(ident)}")
        try:
            self.load_table(ident)
            return True
        except NoSuchTableError:
            return False

    def current_metadata_location(self, identifier: Identifier) -> str | None:
        try:
            return self.load_table(identifier).metadata_location
        except NoSuchTableError:
            return None

    def _read_pointer(self, identifier: tuple[str, ...]) -> str | None:
        return self.current_metadata_location(identifier)

    def _check_can_create(self, identifier: tuple[str, ...], metadata: TableMetadata) -> None:
        """The server checks when the table is created (or staged)."""

    def default_table_location(self, identifier: Identifier) -> str:
        """Where the server would put it is the server's choice; this is only a guess."""
        return f"{self.warehouse.rstrip('/')}/{'/'.join(parse_identifier(identifier))}"

    def _create(self, ident: tuple[str, ...], request: CreateTableRequest) -> Any:
        self._check(Endpoint.CREATE_TABLE)
        return self._http.call(
            "POST",
            f"{self._namespace_url(ident[:-1])}/tables",
            kind="table",
            what=f"creating table {identifier_to_string(ident)}",
            json_body=request.to_json(),
            idempotency_key=self._key(),
        )

    def create_new_table(
        self,
        identifier: Identifier,
        schema: Schema,
        spec: PartitionSpec,
        sort_order: SortOrder,
        location: str | None,
        properties: Mapping[str, str],
    ) -> LoadedTable:
        ident = parse_identifier(identifier)
        body = self._create(
            ident, CreateTableRequest(ident[-1], schema, location, spec, sort_order, False, dict(properties))
        )
        return self._loaded(ident, body, self._table_url(ident))

    def stage_create(
        self,
        identifier: Identifier,
        schema: Schema,
        spec: PartitionSpec,
        sort_order: SortOrder,
        location: str | None,
        properties: Mapping[str, str],
    ) -> TableMetadata:
        ident = parse_identifier(identifier)
        body = self._create(
            ident, CreateTableRequest(ident[-1], schema, location, spec, sort_order, True, dict(properties))
        )
        return read_load_table_result(body, where=self._table_url(ident)).metadata

    def create_table(self, identifier: Identifier, metadata: TableMetadata) -> LoadedTable:
        ident = parse_identifier(identifier)
        request = CreateTableRequest(
            ident[-1],
            metadata.schema(),
            metadata.location,
            metadata.spec(),
            metadata.sort_order(),
            False,
            {**metadata.properties, "format-version": str(metadata.format_version)},
        )
        return self._loaded(ident, self._create(ident, request), self._table_url(ident))

    def register_table(self, identifier: Identifier, metadata_location: str) -> LoadedTable:
        self._check(Endpoint.REGISTER_TABLE)
        ident = parse_identifier(identifier)
        body = self._http.call(
            "POST",
            f"{self._namespace_url(ident[:-1])}/register",
            kind="table",
            what=f"registering table {identifier_to_string(ident)}",
            json_body={"name": ident[-1], "metadata-location": metadata_location},
            idempotency_key=self._key(),
        )
        return self._loaded(ident, body, self._table_url(ident))

    def drop_table(self, identifier: Identifier, purge: bool = False) -> None:
        self._check(Endpoint.DROP_TABLE)
        ident = parse_identifier(identifier)
        self._http.call(
            "DELETE",
            self._table_url(ident),
            kind="table",
            what=f"dropping table {identifier_to_string(ident)}",
            ok=(200, 204),
            params={"purgeRequested": "true" if purge else "false"},
            idempotency_key=self._key(),
        )
        with self._etag_lock:
            self._etags.pop(ident, None)

    def rename_table(self, source: Identifier, destination: Identifier) -> None:
        self._rename(Endpoint.RENAME_TABLE, f"{self._base}tables/rename", source, destination, "table")

    def _rename(
        self, endpoint: str, url: str, source: Identifier, destination: Identifier, kind: str
    ) -> None:
        self._check(endpoint)
        src, dst = parse_identifier(source), parse_identifier(destination)
        self._http.call(
            "POST",
            url,
            kind=kind,
            what=f"renaming {kind} {identifier_to_string(src)} to {identifier_to_string(dst)}",
            ok=(200, 204),
            json_body={"source": identifier_to_json(src), "destination": identifier_to_json(dst)},
            idempotency_key=self._key(),
        )

    # ---- commits ----------------------------------------------------------------------------

    def commit_table(
        self,
        identifier: Identifier,
        base: LoadedTable | None,
        requirements: Sequence[TableRequirement],
        updates: Sequence[TableUpdate],
    ) -> LoadedTable:
        self._check(Endpoint.UPDATE_TABLE)
        ident = parse_identifier(identifier)
        sent = as_java_sends(base.metadata if base is not None else None, updates)
        request = CommitTableRequest(ident, tuple(requirements), tuple(sent))
        what = f"commit to table {identifier_to_string(ident)}"
        url = self._table_url(ident)
        try:
            body = self._http.call(
                "POST",
                url,
                kind="commit",
                what=what,
                json_body=request.to_json(),
                idempotency_key=self._key(),
            )
        except TransportUncertain as exc:
            return self._reconcile([TableCommit(ident, base, requirements, updates)], what, exc)[0]
        return self._loaded(ident, body, url)

    def commit_tables(self, commits: Sequence[TableCommit]) -> list[LoadedTable]:
        self._check(Endpoint.COMMIT_TRANSACTION)
        idents = [parse_identifier(c.identifier) for c in commits]
        if len(set(idents)) != len(idents):
            raise ValidationError("a multi-table commit names a table more than once")
        changes = [
            CommitTableRequest(
                ident,
                tuple(c.requirements),
                tuple(as_java_sends(c.base.metadata if c.base else None, c.updates)),
            ).to_json()
            for ident, c in zip(idents, commits)
        ]
        what = "multi-table commit to " + ", ".join(identifier_to_string(i) for i in idents)
        try:
            self._http.call(
                "POST",
                f"{self._base}transactions/commit",
                kind="commit",
                what=what,
                ok=(200, 204),
                json_body={"table-changes": changes},
                idempotency_key=self._key(),
            )
        except TransportUncertain as exc:
            return self._reconcile(commits, what, exc)
        return [self.load_table(ident) for ident in idents]

    def _reconcile(self, commits: Sequence[TableCommit], what: str, cause: Exception) -> list[LoadedTable]:
        """After an unknown outcome: the tables, if every snapshot the commits added is there
        and every branch they set points to it; else CommitStateUnknownException."""
        results = []
        for commit in commits:
            added = {u.snapshot.snapshot_id for u in commit.updates if isinstance(u, AddSnapshot)}
            refs = {u.ref_name: u.snapshot_id for u in commit.updates if isinstance(u, SetSnapshotRef)}
            if not added:
                raise commit_state_unknown(what, cause)
            try:
                loaded = self.load_table(commit.identifier)
            except Exception as exc:
                raise commit_state_unknown(what, cause) from exc
            present = {s.snapshot_id for s in loaded.metadata.snapshots}
            branches_moved = all(
                (r := loaded.metadata.refs.get(name)) is not None and r.snapshot_id == sid
                for name, sid in refs.items()
            )
            if not added <= present or not branches_moved:
                raise commit_state_unknown(what, cause)
            results.append(loaded)
        log.info("%s: the outcome was unknown (%s); the reloaded tables show it landed", what, cause)
        return results

    # ---- scan planning ----------------------------------------------------------------------

    @property
    def serves_planning(self) -> bool:
        """Whether the server plans scans (it serves ``/plan`` and ``/tasks``)."""
        return Endpoint.PLAN_TABLE_SCAN in self.endpoints and Endpoint.FETCH_SCAN_TASKS in self.endpoints

    def plan_table_scan(self, identifier: Identifier, request: Mapping[str, Any]) -> dict[str, Any]:
        """Plan on the server: ``POST .../plan``, polling a ``submitted`` plan, then every plan
        task. Returns one completed plan: ``file-scan-tasks`` and ``delete-files`` of every batch
        (delete references renumbered).

        Raises:
            UnsupportedFeatureError: the server does not plan scans.
            RESTError: planning failed or was cancelled.
        """
        self._check(Endpoint.PLAN_TABLE_SCAN)
        self._check(Endpoint.FETCH_SCAN_TASKS)
        ident = parse_identifier(identifier)
        return plan_on_server(
            self._http, self._table_url(ident), request, f"planning a scan of {identifier_to_string(ident)}"
        )

    # ---- views ------------------------------------------------------------------------------

    def list_views(self, namespace: str | Sequence[str]) -> list[tuple[str, ...]]:
        return self._list_identifiers(Endpoint.LIST_VIEWS, namespace, "views")

    def _view(self, ident: tuple[str, ...], body: Any, where: str) -> LoadedView:
        result = read_load_view_result(body, where=where)
        return LoadedView(ident, result.metadata_location, result.metadata)

    def load_view(self, identifier: Identifier) -> LoadedView:
        ident = parse_identifier(identifier)
        if Endpoint.LOAD_VIEW not in self.endpoints:
            raise NoSuchViewError(f"the REST catalog at {self.uri} does not serve {Endpoint.LOAD_VIEW}")
        url = self._table_url(ident, "views")
        return self._view(
            ident,
            self._http.call("GET", url, kind="view", what=f"loading view {identifier_to_string(ident)}"),
            url,
        )

    def view_exists(self, identifier: Identifier) -> bool:
        ident = parse_identifier(identifier)
        if Endpoint.VIEW_EXISTS in self.endpoints:
            response = self._http.request("HEAD", self._table_url(ident, "views"))
            if response.status_code == 404:
                return False
            if response.status_code in (200, 204):
                return True
            raise self._http.failure(response, "view", f"checking view {identifier_to_string(ident)}")
        try:
            self.load_view(ident)
            return True
        except NoSuchViewError:
            return False

    def create_new_view(
        self,
        identifier: Identifier,
        schema: Schema,
        version: ViewVersion,
        properties: Mapping[str, str],
        location: str | None,
    ) -> LoadedView:
        self._check(Endpoint.CREATE_VIEW)
        ident = parse_identifier(identifier)
        request = CreateViewRequest(ident[-1], schema, version, dict(properties), location)
        body = self._http.call(
            "POST",
            f"{self._namespace_url(ident[:-1])}/views",
            kind="view",
            what=f"creating view {identifier_to_string(ident)}",
            json_body=request.to_json(),
        )
        return self._view(ident, body, self._table_url(ident, "views"))

    def create_view(self, identifier: Identifier, metadata: ViewMetadata) -> LoadedView:
        version = metadata.current_version()
        return self.create_new_view(
            identifier, metadata.schema(), version, metadata.properties, metadata.location
        )

    def register_view(self, identifier: Identifier, metadata_location: str) -> LoadedView:
        self._check(Endpoint.REGISTER_VIEW)
        ident = parse_identifier(identifier)
        body = self._http.call(
            "POST",
            f"{self._namespace_url(ident[:-1])}/register-view",
            kind="view",
            what=f"registering view {identifier_to_string(ident)}",
            json_body={"name": ident[-1], "metadata-location": metadata_location},
            idempotency_key=self._key(),
        )
        return self._view(ident, body, self._table_url(ident, "views"))

    def commit_view(
        self,
        identifier: Identifier,
        base: LoadedView | None,
        requirements: Sequence[ViewRequirement],
        updates: Sequence[TableUpdate],
    ) -> LoadedView:
        self._check(Endpoint.REPLACE_VIEW)
        ident = parse_identifier(identifier)
        url = self._table_url(ident, "views")
        request = CommitViewRequest(ident, tuple(requirements), tuple(updates))
        what = f"commit to view {identifier_to_string(ident)}"
        try:
            body = self._http.call(
                "POST",
                url,
                kind="commit",
                what=what,
                json_body=request.to_json(),
                idempotency_key=self._key(),
            )
        except TransportUncertain as exc:
            raise commit_state_unknown(what, exc) from exc
        return self._view(ident, body, url)

    def drop_view(self, identifier: Identifier) -> None:
        self._check(Endpoint.DROP_VIEW)
        ident = parse_identifier(identifier)
        self._http.call(
            "DELETE",
            self._table_url(ident, "views"),
            kind="view",
            what=f"dropping view {identifier_to_string(ident)}",
            ok=(200, 204),
            idempotency_key=self._key(),
        )

    def rename_view(self, source: Identifier, destination: Identifier) -> None:
        self._rename(Endpoint.RENAME_VIEW, f"{self._base}views/rename", source, destination, "view")
