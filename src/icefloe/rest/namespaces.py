"""Handlers of the namespace routes (and metrics and credentials, which need nothing else)."""

from __future__ import annotations

from icefloe.backends import identifier_to_string, parse_namespace
from icefloe.errors import InvalidIdentifierError, NamespaceAlreadyExistsError, NamespaceNotEmptyError
from icefloe.rest.errors import HttpProblem
from icefloe.rest.routing import NAMESPACE_SEPARATOR, Call, Reply
from icefloe.rest.service import CatalogService, json_reply
from icefloe.rest.wording import java_words, namespace_already_exists, namespace_missing, table_missing
from icefloe.serde._reader import JsonReader
from icefloe.serde.rest_json import read_metrics_report, read_namespace_levels

__all__ = [
    "create_namespace",
    "drop_namespace",
    "list_namespaces",
    "load_credentials",
    "load_namespace",
    "namespace_exists",
    "report_metrics",
    "update_namespace",
]


def list_namespaces(service: CatalogService, call: Call) -> Reply:
    parent_text = call.query.get("parent")
    levels = tuple(parent_text.split(NAMESPACE_SEPARATOR)) if parent_text else ()
    try:
        parent = parse_namespace(levels) if levels else ()
    except InvalidIdentifierError:
        raise namespace_missing(levels) from None  # no namespace has that name
    if parent:
        call.principal.check_namespace(parent)
    with java_words(namespace=parent):
        listed = service.backend.list_namespaces(parent)
    names = [ns for ns in listed if call.principal.sees(ns)]
    page, token = service.page(call, sorted(names))
    return json_reply({"namespaces": [list(ns) for ns in page], "next-page-token": token})


def create_namespace(service: CatalogService, call: Call) -> Reply:
    r = JsonReader("request body", "CreateNamespaceRequest")
    body = r.obj(call.json("CreateNamespaceRequest"), "")
    namespace = parse_namespace(read_namespace_levels(r, body, "namespace", ""))
    properties = r.str_map(body, "properties", "")
    call.principal.check_namespace(namespace)
    try:
        service.backend.create_namespace(namespace, properties)
    except NamespaceAlreadyExistsError as exc:
        raise namespace_already_exists(namespace) from exc
    return json_reply({"namespace": list(namespace), "properties": properties})


def load_namespace(service: CatalogService, call: Call) -> Reply:
    with java_words(namespace=call.namespace):
        properties = service.backend.load_namespace_properties(call.namespace)
    return json_reply({"namespace": list(call.namespace), "properties": properties})


def namespace_exists(service: CatalogService, call: Call) -> Reply:
    if not service.backend.namespace_exists(call.namespace):
        raise namespace_missing(call.namespace)
    return Reply(204)


def drop_namespace(service: CatalogService, call: Call) -> Reply:
    with java_words(namespace=call.namespace):
        try:
            service.backend.drop_namespace(call.namespace)
        except NamespaceNotEmptyError as exc:
            tables = len(service.backend.list_tables(call.namespace))
            if not tables:
                raise  # views or namespaces inside it: the catalog's words name them
            name = identifier_to_string(call.namespace)
            raise NamespaceNotEmptyError(f"Namespace {name} is not empty. {tables} tables exist.") from exc
    return Reply(204)


def update_namespace(service: CatalogService, call: Call) -> Reply:
    r = JsonReader("request body", "UpdateNamespacePropertiesRequest")
    body = r.obj(call.json("UpdateNamespacePropertiesRequest"), "")
    removals = r.str_list(body, "removals", "", required=False) or []
    updates = r.str_map(body, "updates", "")
    both = sorted(set(removals) & set(updates))
    if both:
        raise HttpProblem(
            422, "UnprocessableEntityException", f"properties {both} are both removed and updated"
        )
    with java_words(namespace=call.namespace):
        summary = service.backend.update_namespace_properties(call.namespace, removals, updates)
    return json_reply(
        {"updated": list(summary.updated), "removed": list(summary.removed), "missing": list(summary.missing)}
    )


def report_metrics(service: CatalogService, call: Call) -> Reply:
    read_metrics_report(call.json("ReportMetricsRequest"))
    return Reply(204)


def load_credentials(service: CatalogService, call: Call) -> Reply:
    location = service.backend.current_metadata_location(call.identifier())
    if location is None:
        raise table_missing(call.identifier())
    # Without a vendor (a local or unmanaged warehouse) the client's own credentials apply.
    return json_reply({"storage-credentials": service.credentials_json(call.identifier(), location)})
