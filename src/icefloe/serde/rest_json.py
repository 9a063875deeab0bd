"""The REST catalog's request and response bodies (``open-api/rest-catalog-open-api.yaml``).

Each message is a frozen record with ``to_json()`` and a ``read_*`` function that takes parsed
JSON and raises :class:`~icefloe.errors.InvalidMetadataError` naming the field (a server turns
that into 400). Readers are lenient where the judges differ: ``null`` counts as absent,
unknown keys are ignored (DuckDB sends ``"type": "struct"`` in a partition spec, Java
``"location": null``), a spec or sort order without its id gets 0. Tables, schemas, specs,
updates and requirements go through icefloe's own serde (``metadata_json``, ``schema_json``,
``updates_json``, ``view_json``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from icefloe.serde._reader import JsonReader, join_path
from icefloe.serde.metadata_json import metadata_from_dict, metadata_to_dict
from icefloe.serde.schema_json import (
    read_schema,
    read_sort_order,
    read_spec,
    schema_to_json,
    sort_order_to_json,
    spec_to_json,
)
from icefloe.serde.updates_json import (
    requirement_from_json,
    requirement_to_json,
    update_from_json,
    update_to_json,
)
from icefloe.serde.view_json import (
    read_view_version,
    view_metadata_from_dict,
    view_metadata_to_dict,
    view_requirement_from_json,
    view_requirement_to_json,
    view_update_from_json,
    view_update_to_json,
    view_version_to_json,
)
from icefloe.spec.partitioning import PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.spec.sorting import SortOrder
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.updates import TableRequirement, TableUpdate
from icefloe.spec.views import ViewMetadata, ViewRequirement, ViewVersion

__all__ = [
    "CatalogConfig",
    "CommitTableRequest",
    "CreateTableRequest",
    "CreateViewRequest",
    "ErrorResponse",
    "LoadTableResult",
    "LoadViewResult",
    "StorageCredential",
    "best_credential",
    "identifier_to_json",
    "read_catalog_config",
    "read_commit_table_request",
    "read_commit_transaction_request",
    "read_commit_view_request",
    "read_create_table_request",
    "read_create_view_request",
    "read_error",
    "read_identifier",
    "read_load_credentials_response",
    "read_load_table_result",
    "read_load_view_result",
    "read_metrics_report",
    "read_namespace_levels",
    "read_token_response",
]


def _reader(what: str) -> JsonReader:
    return JsonReader("request body", what)


def identifier_to_json(identifier: Sequence[str]) -> dict[str, Any]:
    return {"namespace": list(identifier[:-1]), "name": identifier[-1]}


def read_identifier(r: JsonReader, value: Any, path: str) -> tuple[str, ...]:
    """A ``TableIdentifier`` as icefloe's identifier tuple (namespace levels, then the name)."""
    o = r.obj(value, path)
    namespace = r.str_list(o, "namespace", path) or []
    return (*namespace, r.req_str(o, "name", path))


def read_namespace_levels(r: JsonReader, o: dict[str, Any], key: str, path: str) -> tuple[str, ...]:
    return tuple(r.str_list(o, key, path) or ())


# ---- config and errors -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CatalogConfig:
    """``GET /v1/config``: ``defaults`` < client properties < ``overrides``; the endpoints served
    (None: the server did not say, assume the spec's default set)."""

    defaults: Mapping[str, str] = field(default_factory=dict)
    overrides: Mapping[str, str] = field(default_factory=dict)
    endpoints: tuple[str, ...] | None = None
    idempotency_key_lifetime: str | None = None

    def to_json(self) -> dict[str, Any]:
        result: dict[str, Any] = {"defaults": dict(self.defaults), "overrides": dict(self.overrides)}
        if self.endpoints is not None:
            result["endpoints"] = list(self.endpoints)
        if self.idempotency_key_lifetime is not None:
            result["idempotency-key-lifetime"] = self.idempotency_key_lifetime
        return result


def _lenient_str_map(r: JsonReader, o: dict[str, Any], key: str, path: str) -> dict[str, str]:
    """A map of strings whose null values are dropped (Java drops them when merging configs)."""
    value = o.get(key)
    if value is None:
        return {}
    mapping = r.obj(value, join_path(path, key))
    return r.str_map({key: {k: v for k, v in mapping.items() if v is not None}}, key, path)


def read_catalog_config(obj: Any) -> CatalogConfig:
    r = JsonReader("GET /v1/config", "catalog config")
    o = r.obj(obj, "")
    endpoints = r.str_list(o, "endpoints", "", required=False)
    return CatalogConfig(
        defaults=_lenient_str_map(r, o, "defaults", ""),
        overrides=_lenient_str_map(r, o, "overrides", ""),
        endpoints=tuple(endpoints) if endpoints is not None else None,
        idempotency_key_lifetime=r.opt_str(o, "idempotency-key-lifetime", ""),
    )


@dataclass(frozen=True, slots=True)
class ErrorResponse:
    """``{"error": {"message", "type", "code"}}``: every non-2xx answer but the token endpoint's."""

    message: str
    type: str
    code: int

    def to_json(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "code": self.code}}


def read_error(obj: Any, status: int) -> ErrorResponse:
    """The error of a response body; anything unreadable becomes its text (as Java does)."""
    if isinstance(obj, dict):
        error = obj.get("error")
        if isinstance(error, dict):
            code = error.get("code")
            return ErrorResponse(
                message=str(error.get("message") or ""),
                type=str(error.get("type") or ""),
                code=code if type(code) is int else status,
            )
        if isinstance(error, str):  # OAuth's {"error": "invalid_client", "error_description": ...}
            return ErrorResponse(str(obj.get("error_description") or error), error, status)
    return ErrorResponse(str(obj)[:500], "", status)


def read_token_response(obj: Any) -> tuple[str, int | None]:
    """``(access_token, expires_in)`` of an ``OAuthTokenResponse``."""
    r = JsonReader("POST /v1/oauth/tokens", "token response")
    o = r.obj(obj, "")
    token = r.req_str(o, "access_token", "")
    r.req_str(o, "token_type", "")
    return token, r.opt_long(o, "expires_in", "")


# ---- tables -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StorageCredential:
    """Credentials for the files under ``prefix`` (clients use the longest matching prefix)."""

    prefix: str
    config: Mapping[str, str]

    def to_json(self) -> dict[str, Any]:
        return {"prefix": self.prefix, "config": dict(self.config)}


@dataclass(frozen=True, slots=True)
class CreateTableRequest:
    name: str
    schema: Schema
    location: str | None = None
    spec: PartitionSpec | None = None
    write_order: SortOrder | None = None
    stage_create: bool = False
    properties: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        result: dict[str, Any] = {"name": self.name, "schema": schema_to_json(self.schema)}
        if self.location is not None:
            result["location"] = self.location
        if self.spec is not None:
            result["partition-spec"] = spec_to_json(self.spec)
        if self.write_order is not None:
            result["write-order"] = sort_order_to_json(self.write_order)
        result["stage-create"] = self.stage_create
        result["properties"] = dict(self.properties)
        return result


def _with_default_id(r: JsonReader, o: dict[str, Any], key: str, id_key: str) -> dict[str, Any] | None:
    value = o.get(key)
    if value is None:
        return None
    obj = r.obj(value, key)
    return obj if obj.get(id_key) is not None else {**obj, id_key: 0}


def read_create_table_request(obj: Any) -> CreateTableRequest:
    r = _reader("CreateTableRequest")
    o = r.obj(obj, "")
    spec = _with_default_id(r, o, "partition-spec", "spec-id")
    order = _with_default_id(r, o, "write-order", "order-id")
    stage = o.get("stage-create")
    if stage is not None and type(stage) is not bool:
        r.fail("stage-create", "expected a JSON boolean")

    def build() -> CreateTableRequest:
        return CreateTableRequest(
            name=r.req_str(o, "name", ""),
            schema=read_schema(
                r, o.get("schema") if o.get("schema") is not None else r.req_obj(o, "schema", ""), "schema"
            ),
            location=r.opt_str(o, "location", ""),
            spec=read_spec(r, spec, "partition-spec") if spec is not None else None,
            write_order=read_sort_order(r, order, "write-order") if order is not None else None,
            stage_create=bool(stage),
            properties=r.str_map(o, "properties", ""),
        )

    return r.guard_depth(build)


@dataclass(frozen=True, slots=True)
class LoadTableResult:
    """A table as the server hands it out; ``metadata_location`` None for a staged create."""

    metadata_location: str | None
    metadata: TableMetadata
    config: Mapping[str, str] = field(default_factory=dict)
    storage_credentials: tuple[StorageCredential, ...] = ()

    def to_json(self, *, metadata_json: dict[str, Any] | None = None) -> dict[str, Any]:
        result: dict[str, Any] = {}
        if self.metadata_location is not None:
            result["metadata-location"] = self.metadata_location
        result["metadata"] = metadata_json if metadata_json is not None else metadata_to_dict(self.metadata)
        result["config"] = dict(self.config)
        if self.storage_credentials:
            result["storage-credentials"] = [c.to_json() for c in self.storage_credentials]
        return result


def _read_credentials(r: JsonReader, o: dict[str, Any]) -> tuple[StorageCredential, ...]:
    return tuple(
        StorageCredential(r.req_str(item, "prefix", path), r.str_map(item, "config", path))
        for item, path in r.objects(o, "storage-credentials", "", required=False)
    )


def read_load_credentials_response(obj: Any, *, where: str) -> tuple[StorageCredential, ...]:
    """The ``storage-credentials`` of a ``GET .../tables/{t}/credentials`` answer."""
    r = JsonReader(where, "LoadCredentialsResponse")
    return _read_credentials(r, r.obj(obj, ""))


def best_credential(credentials: Sequence[StorageCredential], location: str) -> StorageCredential | None:
    """The credential with the longest prefix of ``location`` (the spec's rule), or None."""
    matching = [c for c in credentials if location.startswith(c.prefix)]
    return max(matching, key=lambda c: len(c.prefix)) if matching else None


def read_load_table_result(obj: Any, *, where: str) -> LoadTableResult:
    r = JsonReader(where, "LoadTableResult")
    o = r.obj(obj, "")
    location = r.opt_str(o, "metadata-location", "")
    return LoadTableResult(
        metadata_location=location,
        metadata=metadata_from_dict(r.req_obj(o, "metadata", ""), location=location or where),
        config=_lenient_str_map(r, o, "config", ""),
        storage_credentials=_read_credentials(r, o),
    )


@dataclass(frozen=True, slots=True)
class CommitTableRequest:
    identifier: tuple[str, ...] | None
    requirements: tuple[TableRequirement, ...]
    updates: tuple[TableUpdate, ...]

    def to_json(self) -> dict[str, Any]:
        result: dict[str, Any] = {}
        if self.identifier is not None:
            result["identifier"] = identifier_to_json(self.identifier)
        result["requirements"] = [requirement_to_json(q) for q in self.requirements]
        result["updates"] = [update_to_json(u) for u in self.updates]
        return result


def _read_commit(r: JsonReader, o: dict[str, Any], path: str) -> CommitTableRequest:
    identifier = o.get("identifier")
    requirements = [
        requirement_from_json(item, location=f"{r.location}: {p}")
        for item, p in r.objects(o, "requirements", path)
    ]
    updates = [
        update_from_json(item, location=f"{r.location}: {p}") for item, p in r.objects(o, "updates", path)
    ]
    return CommitTableRequest(
        identifier=read_identifier(r, identifier, join_path(path, "identifier"))
        if identifier is not None
        else None,
        requirements=tuple(requirements),
        updates=tuple(updates),
    )


def read_commit_table_request(obj: Any) -> CommitTableRequest:
    r = _reader("CommitTableRequest")
    return r.guard_depth(lambda: _read_commit(r, r.obj(obj, ""), ""))


def read_commit_transaction_request(obj: Any) -> list[CommitTableRequest]:
    r = _reader("CommitTransactionRequest")
    o = r.obj(obj, "")

    def build() -> list[CommitTableRequest]:
        changes = []
        for item, path in r.objects(o, "table-changes", ""):
            change = _read_commit(r, item, path)
            if change.identifier is None:
                r.fail(join_path(path, "identifier"), "missing required field")
            changes.append(change)
        return changes

    return r.guard_depth(build)


def read_metrics_report(obj: Any) -> str:
    """Check a ``ReportMetricsRequest`` just enough to refuse garbage; returns its type."""
    r = _reader("ReportMetricsRequest")
    o = r.obj(obj, "")
    kind = r.req_str(o, "report-type", "")
    if kind not in ("scan-report", "commit-report"):
        r.fail("report-type", f"unknown report type {kind!r}")
    r.req_str(o, "table-name", "")
    r.req_long(o, "snapshot-id", "")
    r.req_obj(o, "metrics", "")
    return kind


# ---- views ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CreateViewRequest:
    name: str
    schema: Schema
    view_version: ViewVersion
    properties: Mapping[str, str] = field(default_factory=dict)
    location: str | None = None

    def to_json(self) -> dict[str, Any]:
        result: dict[str, Any] = {"name": self.name}
        if self.location is not None:
            result["location"] = self.location
        result["schema"] = schema_to_json(self.schema)
        result["view-version"] = view_version_to_json(self.view_version)
        result["properties"] = dict(self.properties)
        return result


def read_create_view_request(obj: Any) -> CreateViewRequest:
    r = _reader("CreateViewRequest")
    o = r.obj(obj, "")

    def build() -> CreateViewRequest:
        return CreateViewRequest(
            name=r.req_str(o, "name", ""),
            schema=read_schema(r, r.req_obj(o, "schema", ""), "schema"),
            view_version=read_view_version(r, r.req_obj(o, "view-version", ""), "view-version"),
            properties=r.str_map(o, "properties", ""),
            location=r.opt_str(o, "location", ""),
        )

    return r.guard_depth(build)


@dataclass(frozen=True, slots=True)
class LoadViewResult:
    metadata_location: str
    metadata: ViewMetadata
    config: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "metadata-location": self.metadata_location,
            "metadata": view_metadata_to_dict(self.metadata),
            "config": dict(self.config),
        }


def read_load_view_result(obj: Any, *, where: str) -> LoadViewResult:
    r = JsonReader(where, "LoadViewResult")
    o = r.obj(obj, "")
    location = r.req_str(o, "metadata-location", "")
    return LoadViewResult(
        metadata_location=location,
        metadata=view_metadata_from_dict(r.req_obj(o, "metadata", ""), location=location),
        config=_lenient_str_map(r, o, "config", ""),
    )


@dataclass(frozen=True, slots=True)
class CommitViewRequest:
    identifier: tuple[str, ...] | None
    requirements: tuple[ViewRequirement, ...]
    updates: tuple[TableUpdate, ...]

    def to_json(self) -> dict[str, Any]:
        result: dict[str, Any] = {}
        if self.identifier is not None:
            result["identifier"] = identifier_to_json(self.identifier)
        result["requirements"] = [view_requirement_to_json(q) for q in self.requirements]
        result["updates"] = [view_update_to_json(u) for u in self.updates]
        return result


def read_commit_view_request(obj: Any) -> CommitViewRequest:
    r = _reader("CommitViewRequest")
    o = r.obj(obj, "")

    def build() -> CommitViewRequest:
        identifier = o.get("identifier")
        requirements = [
            view_requirement_from_json(item, location=f"request body: {p}")
            for item, p in r.objects(o, "requirements", "", required=False)
        ]
        updates = [
            view_update_from_json(item, location=f"request body: {p}")
            for item, p in r.objects(o, "updates", "")
        ]
        return CommitViewRequest(
            identifier=read_identifier(r, identifier, "identifier") if identifier is not None else None,
            requirements=tuple(requirements),
            updates=tuple(updates),
        )

    return r.guard_depth(build)
