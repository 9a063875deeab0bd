"""Handlers of the table routes and of ``/transactions/commit``.

A commit is the backend's ``commit_table``: requirements checked against the metadata current
at the swap, updates applied by ``MetadataBuilder``, a new metadata file, a conditional pointer
swap. A swap lost to a concurrent commit is retried here while the requirements still hold
(Java's ``CatalogHandlers`` does the same); a failed requirement is the client's 409.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TypeVar

from icefloe.backends import LoadedTable, TableCommit, parse_identifier
from icefloe.errors import (
    CommitFailedException,
    NoSuchNamespaceError,
    NoSuchTableError,
    RequirementFailedError,
    TableAlreadyExistsError,
    ViewAlreadyExistsError,
)
from icefloe.rest.errors import HttpProblem
from icefloe.rest.routing import Call, Reply
from icefloe.rest.service import CatalogService, json_reply
from icefloe.rest.wording import (
    java_words,
    namespace_missing,
    rename_conflict,
    table_already_exists,
    table_missing,
)
from icefloe.serde._reader import JsonReader
from icefloe.serde.rest_json import (
    LoadTableResult,
    identifier_to_json,
    read_commit_table_request,
    read_commit_transaction_request,
    read_create_table_request,
    read_identifier,
)
from icefloe.spec.partitioning import UNPARTITIONED_SPEC
from icefloe.spec.sorting import UNSORTED_SORT_ORDER
from icefloe.spec.updates import AssertCreate, TableRequirement

__all__ = [
    "commit_table",
    "commit_transaction",
    "create_table",
    "drop_table",
    "list_tables",
    "load_table",
    "register_table",
    "rename_table",
    "table_exists",
]

log = logging.getLogger(__name__)

T = TypeVar("T")
#: Commits retried here after losing the pointer swap (Java's COMMIT_NUM_RETRIES_DEFAULT).
SWAP_RETRIES = 4


def _retrying(commit: Callable[[], T]) -> T:
    for attempt in range(SWAP_RETRIES + 1):
        try:
            return commit()
        except RequirementFailedError:
            raise
        except CommitFailedException:
            if attempt == SWAP_RETRIES:
                raise
            log.info("a commit lost its pointer swap; retrying (%d)", attempt + 1)
    raise AssertionError("unreachable")


def _name_taken(service: CatalogService, ident: tuple[str, ...]) -> Exception:
    """Java's answer to a table created where a table or a view has the name."""
    if service.view_exists(ident):
        return TableAlreadyExistsError(f"View with same name already exists: {service.describe(ident)}")
    return table_already_exists(ident)


def _create_conflict(service: CatalogService, ident: tuple[str, ...]) -> Exception:
    """A create (``assert-create``) commit that found the name taken: the spec's (and Java's)
    409 ``CommitFailedException`` of the failed requirement, or Java's words for a view."""
    if service.view_exists(ident):
        return _name_taken(service, ident)
    return RequirementFailedError("Requirement failed: table already exists")


def _utc_now_iso() -> str:
    """Now in UTC as Java's ``OffsetDateTime.toString`` writes it (``2025-01-02T03:04:05.123456Z``)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _creates(requirements: Sequence[TableRequirement]) -> bool:
    return any(isinstance(r, AssertCreate) for r in requirements)


def list_tables(service: CatalogService, call: Call) -> Reply:
    with java_words(namespace=call.namespace):
        names = service.backend.list_tables(call.namespace)
    page, token = service.page(call, sorted(names))
    return json_reply({"identifiers": [identifier_to_json(i) for i in page], "next-page-token": token})


def create_table(service: CatalogService, call: Call) -> Reply:
    request = read_create_table_request(call.json("CreateTableRequest"))
    ident = parse_identifier((*call.namespace, request.name))
    if request.location is not None:
        service.check_location(request.location, "table location")
    service.check_properties(request.properties, "table property")
    spec = request.spec or UNPARTITIONED_SPEC
    order = request.write_order or UNSORTED_SORT_ORDER
    location = request.location.rstrip("/") if request.location else None
    try:
        with java_words(namespace=call.namespace):
            if request.stage_create:
                # As Java's CatalogHandlers.stageTableCreate: the table records when its create
                # transaction began (the client commits these properties with the table).
                properties = {"created-at": _utc_now_iso(), **request.properties}
                metadata = service.backend.stage_create(
                    ident, request.schema, spec, order, location, properties
                )
                service.check_location(metadata.location, "table location")
                return json_reply(LoadTableResult(None, metadata).to_json())
            loaded = service.backend.create_new_table(
                ident, request.schema, spec, order, location, request.properties
            )
    except TableAlreadyExistsError as exc:
        raise _name_taken(service, ident) from exc
    document = service.commit_document(loaded)
    return Reply(200, service.with_credentials(call, ident, loaded.metadata_location, document))


def load_table(service: CatalogService, call: Call) -> Reply:
    snapshots = call.query.get("snapshots", "all") or "all"
    if snapshots not in ("all", "refs"):
        raise HttpProblem(400, "BadRequestException", f"snapshots must be 'all' or 'refs', not {snapshots!r}")
    with java_words(table=call.identifier()):
        location, document = service.load_table_document(call.identifier(), snapshots)
    etag = service.etag(location, snapshots)
    if call.headers.get("if-none-match") == etag:
        return Reply(304, headers={"ETag": etag})
    document = service.with_credentials(call, call.identifier(), location, document)
    return Reply(200, document, {"ETag": etag})


def table_exists(service: CatalogService, call: Call) -> Reply:
    if service.backend.current_metadata_location(call.identifier()) is None:
        raise table_missing(call.identifier())
    return Reply(204)


def commit_table(service: CatalogService, call: Call) -> Reply:
    request = read_commit_table_request(call.json("CommitTableRequest"))
    ident = call.identifier()
    service.check_updates(request.updates, "commit")

    def commit() -> LoadedTable:
        base = service.cached_base(ident)
        return service.backend.commit_table(ident, base, request.requirements, request.updates)

    creating = _creates(request.requirements)
    try:
        with java_words(namespace=call.namespace if creating else None, table=ident):
            loaded = _retrying(commit)
    except TableAlreadyExistsError as exc:
        if not creating:
            raise
        raise _create_conflict(service, ident) from exc
    return Reply(200, service.commit_document(loaded))


def commit_transaction(service: CatalogService, call: Call) -> Reply:
    changes = read_commit_transaction_request(call.json("CommitTransactionRequest"))
    if not changes:
        raise HttpProblem(400, "BadRequestException", "a transaction needs at least one table change")
    commits = []
    for change in changes:
        assert change.identifier is not None
        ident = parse_identifier(change.identifier)
        service.check_namespace(call, ident)
        call.principal.check_write(f"commit to {service.describe(ident)}")
        service.check_updates(change.updates, f"commit to {service.describe(ident)}")
        commits.append(TableCommit(ident, None, change.requirements, change.updates))

    def commit() -> list[LoadedTable]:
        if len(commits) == 1:
            c = commits[0]
            return [
                service.backend.commit_table(
                    c.identifier, service.cached_base(c.identifier), c.requirements, c.updates
                )
            ]
        return service.backend.commit_tables(
            [
                TableCommit(c.identifier, service.cached_base(c.identifier), c.requirements, c.updates)
                for c in commits
            ]
        )

    try:
        committed = _retrying(commit)
    except TableAlreadyExistsError as exc:
        created = [c.identifier for c in commits if _creates(c.requirements)]
        if not created:
            raise
        raise _create_conflict(service, created[0]) from exc
    for loaded in committed:
        service.remember(loaded)
    return Reply(204)


def drop_table(service: CatalogService, call: Call) -> Reply:
    ident = call.identifier()
    purge = call.query.get("purgeRequested", "false").lower() == "true"
    with java_words(table=ident):
        loaded = service.backend.load_table(ident) if purge else None
        service.backend.drop_table(ident, purge=False)
    if loaded is not None:
        # Only what lies under the table: its metadata could name any file.
        service.backend.purge_files(loaded, within=loaded.metadata.location)
    return Reply(204)


def register_table(service: CatalogService, call: Call) -> Reply:
    r = JsonReader("request body", "RegisterTableRequest")
    body = r.obj(call.json("RegisterTableRequest"), "")
    name = r.req_str(body, "name", "")
    location = r.req_str(body, "metadata-location", "")
    if body.get("overwrite") is True:
        raise HttpProblem(406, "UnsupportedOperationException", "register with overwrite is not supported")
    service.check_location(location, "metadata-location")
    service.check_location(service.metadata_at(location).location, "the registered table's location")
    ident = parse_identifier((*call.namespace, name))
    try:
        with java_words(namespace=call.namespace):
            loaded = service.backend.register_table(ident, location)
    except TableAlreadyExistsError as exc:
        raise _name_taken(service, ident) from exc
    document = service.commit_document(loaded)
    return Reply(200, service.with_credentials(call, ident, loaded.metadata_location, document))


def rename_table(service: CatalogService, call: Call) -> Reply:
    r = JsonReader("request body", "RenameTableRequest")
    body = r.obj(call.json("RenameTableRequest"), "")
    source = parse_identifier(read_identifier(r, body.get("source"), "source"))
    destination = parse_identifier(read_identifier(r, body.get("destination"), "destination"))
    service.check_namespace(call, source)
    service.check_namespace(call, destination)
    backend = service.backend
    # Java's checks, in Java's order (JdbcCatalog.renameTable), so the first problem is named.
    if not backend.table_exists(source):
        raise table_missing(source)
    if not backend.namespace_exists(destination[:-1]):
        raise namespace_missing(destination[:-1])
    if service.view_exists(destination):
        raise rename_conflict(source, destination, "View")
    try:
        backend.rename_table(source, destination)
    except NoSuchTableError as exc:
        raise table_missing(source) from exc
    except NoSuchNamespaceError as exc:
        raise namespace_missing(destination[:-1]) from exc
    except (TableAlreadyExistsError, ViewAlreadyExistsError) as exc:
        if service.view_exists(destination):
            raise rename_conflict(source, destination, "View") from exc
        raise table_already_exists(destination) from exc
    return Reply(204)
