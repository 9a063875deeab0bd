"""Java's words for the errors the server answers about catalog objects.

Java's REST client shows the server's message to its user, and tools (and Iceberg's REST
Compatibility Kit) match on it: ``Table does not exist: ns.tbl``, ``Namespace does not exist:
ns``, ``View with same name already exists: ns.v``, ``Cannot rename a.t to a.v. View already
exists``. The catalog's own messages (which name the catalog) stay what Python callers see;
the handlers re-word what they answer with these, naming the object the request named.
A name the catalog cannot hold (a dot inside a level, a control character) in a request's
path is an object that does not exist: 404, as for any other missing one
(``check_path_names``); only a request that creates such a name gets a 400.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from icefloe.backends import identifier_to_string, parse_identifier, parse_namespace
from icefloe.errors import (
    InvalidIdentifierError,
    NamespaceAlreadyExistsError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchViewError,
    TableAlreadyExistsError,
    ViewAlreadyExistsError,
)
from icefloe.rest.routing import Call

__all__ = [
    "check_path_names",
    "java_words",
    "namespace_already_exists",
    "namespace_missing",
    "path_missing",
    "rename_conflict",
    "table_already_exists",
    "table_missing",
    "view_already_exists",
    "view_missing",
]


def table_missing(ident: Sequence[str]) -> NoSuchTableError:
    return NoSuchTableError(f"Table does not exist: {identifier_to_string(ident)}")


def view_missing(ident: Sequence[str]) -> NoSuchViewError:
    return NoSuchViewError(f"View does not exist: {identifier_to_string(ident)}")


def namespace_missing(namespace: Sequence[str]) -> NoSuchNamespaceError:
    return NoSuchNamespaceError(f"Namespace does not exist: {identifier_to_string(namespace)}")


def table_already_exists(ident: Sequence[str]) -> TableAlreadyExistsError:
    return TableAlreadyExistsError(f"Table already exists: {identifier_to_string(ident)}")


def view_already_exists(ident: Sequence[str]) -> ViewAlreadyExistsError:
    return ViewAlreadyExistsError(f"View already exists: {identifier_to_string(ident)}")


def namespace_already_exists(namespace: Sequence[str]) -> NamespaceAlreadyExistsError:
    return NamespaceAlreadyExistsError(f"Namespace already exists: {identifier_to_string(namespace)}")


def rename_conflict(source: Sequence[str], destination: Sequence[str], kind: str) -> Exception:
    """Java's answer to a rename onto a name a ``kind`` ("Table" or "View") holds."""
    text = (
        f"Cannot rename {identifier_to_string(source)} to {identifier_to_string(destination)}. "
        f"{kind} already exists"
    )
    return ViewAlreadyExistsError(text) if kind == "View" else TableAlreadyExistsError(text)


@contextmanager
def java_words(
    *,
    namespace: Sequence[str] | None = None,
    table: Sequence[str] | None = None,
    view: Sequence[str] | None = None,
) -> Iterator[None]:
    """Re-raise the catalog's not-found errors about the objects given in Java's words (a
    missing namespace of a table or view is Java's missing table or view when only the table or
    view is given, as Java's catalogs answer a load)."""
    try:
        yield
    except NoSuchTableError as exc:
        if table is None:
            raise
        raise table_missing(table) from exc
    except NoSuchViewError as exc:
        if view is None:
            raise
        raise view_missing(view) from exc
    except NoSuchNamespaceError as exc:
        if namespace is not None:
            raise namespace_missing(namespace) from exc
        if table is not None:
            raise table_missing(table) from exc
        if view is not None:
            raise view_missing(view) from exc
        raise


def path_missing(call: Call) -> Exception:
    """The not-found error of the object a request's path names."""
    if "view" in call.params:
        return view_missing(call.identifier("view"))
    if "table" in call.params:
        return table_missing(call.identifier("table"))
    return namespace_missing(call.namespace)


def check_path_names(call: Call) -> None:
    """Raise the not-found error of the object a request's path names when no catalog object
    can have that name (it is simply missing, not a bad request)."""
    params = call.params
    if "namespace" not in params:
        return
    try:
        parse_namespace(call.namespace)
        for key in ("table", "view"):
            if key in params:
                parse_identifier(call.identifier(key))
    except InvalidIdentifierError:
        raise path_missing(call) from None
