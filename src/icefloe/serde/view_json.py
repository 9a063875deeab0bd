"""View metadata JSON (``format/view-spec.md``) and the REST JSON of view updates.

- :func:`dumps_view_metadata` writes the fields in the order of Java's ``ViewMetadataParser``
  (compact, gzip by default for views, as Java); :func:`loads_view_metadata` reads plain or
  gzip files and checks what Java checks (format version 1, the current version and its schema
  exist).
- :func:`view_update_from_json` / :func:`view_update_to_json`: the REST ``ViewUpdate`` (the
  table updates a view accepts, plus ``add-view-version`` and ``set-current-view-version``);
  :func:`view_requirement_from_json` / :func:`view_requirement_to_json`: ``assert-view-uuid``.
"""

from __future__ import annotations

import gzip
from typing import Any

from icefloe.serde._jackson import compact
from icefloe.serde._reader import JsonReader, join_path, parse_json_document
from icefloe.serde.schema_json import read_schema, schema_to_json
from icefloe.serde.updates_json import update_from_json, update_to_json
from icefloe.spec.updates import TableUpdate
from icefloe.spec.views import (
    SQL_REPRESENTATION,
    SUPPORTED_VIEW_FORMAT_VERSIONS,
    VIEW_UPDATE_TYPES,
    AddViewVersion,
    AssertViewUUID,
    SetCurrentViewVersion,
    SQLViewRepresentation,
    ViewHistoryEntry,
    ViewMetadata,
    ViewRequirement,
    ViewVersion,
)

__all__ = [
    "dumps_view_metadata",
    "loads_view_metadata",
    "read_view_version",
    "view_metadata_from_dict",
    "view_metadata_to_dict",
    "view_requirement_from_json",
    "view_requirement_to_json",
    "view_update_from_json",
    "view_update_to_json",
    "view_version_from_json",
    "view_version_to_json",
]


# ---- versions -------------------------------------------------------------------------------


def view_version_to_json(version: ViewVersion) -> dict[str, Any]:
    result: dict[str, Any] = {
        "version-id": version.version_id,
        "timestamp-ms": version.timestamp_ms,
        "schema-id": version.schema_id,
        "summary": dict(version.summary),
    }
    if version.default_catalog is not None:
        result["default-catalog"] = version.default_catalog
    result["default-namespace"] = list(version.default_namespace)
    result["representations"] = [
        {"type": r.type, "sql": r.sql, "dialect": r.dialect} for r in version.representations
    ]
    return result


def read_view_version(r: JsonReader, value: Any, path: str) -> ViewVersion:
    o = r.obj(value, path)
    representations = []
    for item, item_path in r.objects(o, "representations", path):
        kind = r.req_str(item, "type", item_path)
        if kind.lower() != SQL_REPRESENTATION:
            r.fail(join_path(item_path, "type"), f"unknown view representation type {kind!r}")
        representations.append(
            SQLViewRepresentation(r.req_str(item, "sql", item_path), r.req_str(item, "dialect", item_path))
        )
    namespace = r.str_list(o, "default-namespace", path)
    return r.wrap(
        path,
        lambda: ViewVersion(
            version_id=r.req_int(o, "version-id", path),
            schema_id=r.req_int(o, "schema-id", path),
            timestamp_ms=r.req_long(o, "timestamp-ms", path),
            summary=r.str_map(o, "summary", path),
            representations=tuple(representations),
            default_namespace=tuple(namespace or ()),
            default_catalog=r.opt_str(o, "default-catalog", path),
        ),
    )


def view_version_from_json(obj: Any, *, location: str | None = None) -> ViewVersion:
    r = JsonReader(location, "view version")
    return read_view_version(r, obj, "")


# ---- metadata -------------------------------------------------------------------------------


def view_metadata_to_dict(md: ViewMetadata) -> dict[str, Any]:
    """The metadata as the JSON object Java's ``ViewMetadataParser.toJson`` writes."""
    result: dict[str, Any] = {
        "view-uuid": md.view_uuid,
        "format-version": md.format_version,
        "location": md.location,
    }
    if md.properties:
        result["properties"] = dict(md.properties)
    result["schemas"] = [schema_to_json(s) for s in md.schemas]
    result["current-version-id"] = md.current_version_id
    result["versions"] = [view_version_to_json(v) for v in md.versions]
    result["version-log"] = [
        {"timestamp-ms": e.timestamp_ms, "version-id": e.version_id} for e in md.version_log
    ]
    return result


def dumps_view_metadata(md: ViewMetadata, *, compression: str = "gzip") -> bytes:
    """The view metadata file's bytes: compact UTF-8 JSON, gzipped for ``"gzip"``."""
    data = compact(view_metadata_to_dict(md)).encode("utf-8")
    codec = compression.strip().lower()
    if codec == "gzip":
        return gzip.compress(data, mtime=0)
    if codec != "none":
        raise ValueError(f"invalid view metadata compression {compression!r}; expected 'none' or 'gzip'")
    return data


def loads_view_metadata(
    data: bytes | bytearray | memoryview | str, *, location: str | None = None
) -> ViewMetadata:
    """Parse a view metadata file (plain or gzip JSON).

    Raises:
        InvalidMetadataError: naming ``location`` and the field path.
    """
    return view_metadata_from_dict(parse_json_document(data, location, "view metadata"), location=location)


def view_metadata_from_dict(obj: Any, *, location: str | None = None) -> ViewMetadata:
    r = JsonReader(location, "view metadata")
    return r.guard_depth(lambda: _view_metadata(r, obj))


def _view_metadata(r: JsonReader, obj: Any) -> ViewMetadata:
    root = r.obj(obj, "")
    version = r.req_int(root, "format-version", "")
    if version not in SUPPORTED_VIEW_FORMAT_VERSIONS:
        r.fail("format-version", f"unsupported view format version {version}")
    schemas = [read_schema(r, item, path) for item, path in r.objects(root, "schemas", "")]
    versions = [read_view_version(r, item, path) for item, path in r.objects(root, "versions", "")]
    log = [
        ViewHistoryEntry(r.req_long(item, "timestamp-ms", path), r.req_int(item, "version-id", path))
        for item, path in r.objects(root, "version-log", "")
    ]
    current = r.req_int(root, "current-version-id", "")
    by_id = {v.version_id: v for v in versions}
    if current not in by_id:
        r.fail("current-version-id", f"no version {current} in versions {sorted(by_id)}")
    if by_id[current].schema_id not in {s.schema_id for s in schemas}:
        r.fail("current-version-id", f"the current version's schema {by_id[current].schema_id} is missing")
    return r.wrap(
        "",
        lambda: ViewMetadata(
            view_uuid=r.req_str(root, "view-uuid", ""),
            format_version=version,
            location=r.req_str(root, "location", ""),
            schemas=tuple(schemas),
            current_version_id=current,
            versions=tuple(versions),
            version_log=tuple(log),
            properties=r.str_map(root, "properties", ""),
        ),
    )


# ---- REST: updates and requirements ---------------------------------------------------------

_SHARED_ACTIONS = frozenset(t.action for t in VIEW_UPDATE_TYPES) - {
    AddViewVersion.action,
    SetCurrentViewVersion.action,
}


def view_update_to_json(update: TableUpdate) -> dict[str, Any]:
    if isinstance(update, AddViewVersion):
        return {"action": update.action, "view-version": view_version_to_json(update.view_version)}
    if isinstance(update, SetCurrentViewVersion):
        return {"action": update.action, "view-version-id": update.view_version_id}
    return update_to_json(update)


def view_update_from_json(obj: Any, *, location: str | None = None) -> TableUpdate:
    """Read a REST ``ViewUpdate``.

    Raises:
        InvalidMetadataError: a missing or unknown ``action`` (a table-only one included), or a
            malformed field (named).
    """
    r = JsonReader(location, "view update")
    o = r.obj(obj, "")
    action = r.req_str(o, "action", "")
    if action == AddViewVersion.action:
        value = o.get("view-version")
        if value is None:
            r.fail("view-version", "missing required field")
        return r.guard_depth(lambda: AddViewVersion(read_view_version(r, value, "view-version")))
    if action == SetCurrentViewVersion.action:
        return SetCurrentViewVersion(r.req_int(o, "view-version-id", ""))
    if action not in _SHARED_ACTIONS:
        r.fail("action", f"unknown view update action {action!r}")
    return update_from_json(o, location=location)


def view_requirement_to_json(requirement: ViewRequirement) -> dict[str, Any]:
    if isinstance(requirement, AssertViewUUID):
        return {"type": requirement.type, "uuid": requirement.uuid}
    raise ValueError(f"cannot write view requirement {type(requirement).__name__} as JSON")


def view_requirement_from_json(obj: Any, *, location: str | None = None) -> ViewRequirement:
    r = JsonReader(location, "view requirement")
    o = r.obj(obj, "")
    kind = r.req_str(o, "type", "")
    if kind == AssertViewUUID.type:
        return AssertViewUUID(r.req_str(o, "uuid", ""))
    r.fail("type", f"unknown view requirement type {kind!r}")
