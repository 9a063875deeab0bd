"""Handlers of the view routes."""

from __future__ import annotations

from icefloe.backends import LoadedView, parse_identifier
from icefloe.errors import (
    NoSuchNamespaceError,
    NoSuchViewError,
    TableAlreadyExistsError,
    ViewAlreadyExistsError,
)
from icefloe.rest.routing import Call, Reply
from icefloe.rest.service import CatalogService, json_reply
from icefloe.rest.wording import (
    java_words,
    namespace_missing,
    rename_conflict,
    view_already_exists,
    view_missing,
)
from icefloe.serde._reader import JsonReader
from icefloe.serde.rest_json import (
    LoadViewResult,
    identifier_to_json,
    read_commit_view_request,
    read_create_view_request,
    read_identifier,
)
from icefloe.serde.view_json import loads_view_metadata
from icefloe.spec.view_builder import new_view_metadata

__all__ = [
    "create_view",
    "drop_view",
    "list_views",
    "load_view",
    "register_view",
    "rename_view",
    "replace_view",
    "view_exists",
]


def _reply(loaded: LoadedView) -> Reply:
    return json_reply(LoadViewResult(loaded.metadata_location, loaded.metadata).to_json())


def _name_taken(service: CatalogService, ident: tuple[str, ...]) -> Exception:
    """Java's answer to a view created where a view or a table has the name."""
    if service.backend.table_exists(ident):
        return ViewAlreadyExistsError(f"Table with same name already exists: {service.describe(ident)}")
    return view_already_exists(ident)


def list_views(service: CatalogService, call: Call) -> Reply:
    with java_words(namespace=call.namespace):
        names = service.backend.list_views(call.namespace)
    page, token = service.page(call, sorted(names))
    return json_reply({"identifiers": [identifier_to_json(i) for i in page], "next-page-token": token})


def create_view(service: CatalogService, call: Call) -> Reply:
    request = read_create_view_request(call.json("CreateViewRequest"))
    ident = parse_identifier((*call.namespace, request.name))
    location = (request.location or service.backend.default_table_location(ident)).rstrip("/")
    service.check_location(location, "view location")
    service.check_properties(request.properties, "view property")
    metadata = new_view_metadata(request.schema, request.view_version, location, dict(request.properties))
    try:
        with java_words(namespace=call.namespace):
            return _reply(service.backend.create_view(ident, metadata))
    except ViewAlreadyExistsError as exc:
        raise _name_taken(service, ident) from exc


def load_view(service: CatalogService, call: Call) -> Reply:
    with java_words(view=call.identifier("view")):
        return _reply(service.backend.load_view(call.identifier("view")))


def view_exists(service: CatalogService, call: Call) -> Reply:
    if not service.backend.view_exists(call.identifier("view")):
        raise view_missing(call.identifier("view"))
    return Reply(204)


def replace_view(service: CatalogService, call: Call) -> Reply:
    request = read_commit_view_request(call.json("CommitViewRequest"))
    service.check_updates(request.updates, "view commit")
    with java_words(view=call.identifier("view")):
        loaded = service.backend.commit_view(
            call.identifier("view"), None, request.requirements, request.updates
        )
    return _reply(loaded)


def drop_view(service: CatalogService, call: Call) -> Reply:
    with java_words(view=call.identifier("view")):
        service.backend.drop_view(call.identifier("view"))
    return Reply(204)


def rename_view(service: CatalogService, call: Call) -> Reply:
    r = JsonReader("request body", "RenameTableRequest")
    body = r.obj(call.json("RenameTableRequest"), "")
    source = parse_identifier(read_identifier(r, body.get("source"), "source"))
    destination = parse_identifier(read_identifier(r, body.get("destination"), "destination"))
    service.check_namespace(call, source)
    service.check_namespace(call, destination)
    backend = service.backend
    # Java's checks, in Java's order and words (JdbcCatalog.renameView).
    if not backend.namespace_exists(destination[:-1]):
        raise namespace_missing(destination[:-1])
    if not backend.view_exists(source):
        raise NoSuchViewError("View does not exist")
    if backend.table_exists(destination):
        raise rename_conflict(source, destination, "Table")
    try:
        backend.rename_view(source, destination)
    except NoSuchViewError as exc:
        raise NoSuchViewError("View does not exist") from exc
    except NoSuchNamespaceError as exc:
        raise namespace_missing(destination[:-1]) from exc
    except (TableAlreadyExistsError, ViewAlreadyExistsError) as exc:
        kind = "Table" if backend.table_exists(destination) else "View"
        raise rename_conflict(source, destination, kind) from exc
    return Reply(204)


def register_view(service: CatalogService, call: Call) -> Reply:
    r = JsonReader("request body", "RegisterViewRequest")
    body = r.obj(call.json("RegisterViewRequest"), "")
    name = r.req_str(body, "name", "")
    location = r.req_str(body, "metadata-location", "")
    service.check_location(location, "metadata-location")
    metadata = loads_view_metadata(service.backend.io.read_bytes(location), location=location)
    service.check_location(metadata.location, "the registered view's location")
    ident = parse_identifier((*call.namespace, name))
    try:
        with java_words(namespace=call.namespace):
            return _reply(service.backend.register_view(ident, location))
    except ViewAlreadyExistsError as exc:
        raise _name_taken(service, ident) from exc
