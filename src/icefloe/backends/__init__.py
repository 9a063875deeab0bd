"""Catalog backends (layer L5): where each table's metadata pointer lives, and its atomic swap.

A backend knows namespaces and metadata locations, nothing about Tables or scans; the
user-facing ``Catalog`` (``icefloe.table``) is a facade over one. Pick one with
``load_catalog_backend(name, type=..., **properties)``:

- ``sql`` (default): Iceberg's JDBC catalog tables in SQLite (``sqlite:///<warehouse>/catalog.db``
  unless ``uri`` says otherwise) or PostgreSQL; shared with Java's and PyIceberg's SQL catalogs.
- ``hadoop``: Java's HadoopCatalog directory layout on a local file system.
- ``memory``: in memory (metadata files still written), with fault injection, for tests.
- ``rest``: an Iceberg REST catalog server (``rest/``; needs httpx, ``icefloe[rest]``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from icefloe.backends.base import CatalogBackend, LoadedTable, PropertiesUpdateSummary, TableCommit
from icefloe.backends.identifiers import (
    Identifier,
    Namespace,
    identifier_to_string,
    location_segment,
    parse_identifier,
    parse_namespace,
    split_identifier,
)
from icefloe.backends.views import LoadedView
from icefloe.errors import ValidationError

if TYPE_CHECKING:
    from icefloe.backends.hadoop import HadoopCatalogBackend
    from icefloe.backends.memory import InMemoryCatalogBackend
    from icefloe.backends.rest import RestCatalogBackend
    from icefloe.backends.sql import SqlCatalogBackend

__all__ = [
    "CatalogBackend",
    "HadoopCatalogBackend",
    "Identifier",
    "InMemoryCatalogBackend",
    "LoadedTable",
    "LoadedView",
    "Namespace",
    "PropertiesUpdateSummary",
    "RestCatalogBackend",
    "SqlCatalogBackend",
    "TableCommit",
    "identifier_to_string",
    "load_catalog_backend",
    "location_segment",
    "parse_identifier",
    "parse_namespace",
    "split_identifier",
]

# Each backend is imported when a catalog of its type is first loaded (or its class is first
# named, PEP 562's module __getattr__): a SQL catalog needs SQLAlchemy, a REST one httpx, and
# neither needs the other.


def _sql() -> type[CatalogBackend]:
    from icefloe.backends.sql import SqlCatalogBackend  # lazy: SQLAlchemy

    return SqlCatalogBackend


def _hadoop() -> type[CatalogBackend]:
    from icefloe.backends.hadoop import HadoopCatalogBackend  # lazy: only hadoop catalogs need it

    return HadoopCatalogBackend


def _memory() -> type[CatalogBackend]:
    from icefloe.backends.memory import InMemoryCatalogBackend  # lazy: only tests' catalogs need it

    return InMemoryCatalogBackend


def _rest() -> type[CatalogBackend]:
    from icefloe.backends.rest import RestCatalogBackend  # lazy: the REST client (httpx)

    return RestCatalogBackend


_BACKENDS: dict[str, Callable[[], type[CatalogBackend]]] = {
    "sql": _sql,
    "hadoop": _hadoop,
    "memory": _memory,
    "in-memory": _memory,
    "rest": _rest,
}
_CLASSES = {
    "SqlCatalogBackend": _sql,
    "HadoopCatalogBackend": _hadoop,
    "InMemoryCatalogBackend": _memory,
    "RestCatalogBackend": _rest,
}


def __getattr__(name: str) -> Any:
    if name not in _CLASSES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = _CLASSES[name]()
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def _property_text(key: str, value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, os.PathLike):
        return str(os.fspath(value))
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    raise ValidationError(f"catalog property '{key}' must be a string, not {type(value).__name__}")


def load_catalog_backend(name: str, **properties: Any) -> CatalogBackend:
    """The backend that ``properties['type']`` names (``sql`` when absent).

    Args:
        name: the catalog's name.
        properties: catalog properties: ``type``, ``warehouse``, ``uri`` (sql), FileIO
            settings. Paths, booleans and integers are turned into property strings.

    Raises:
        ValidationError: an unknown type, or a property the backend needs is missing.
        MissingDependencyError: ``type="rest"`` without httpx (``pip install 'icefloe[rest]'``).
    """
    props = {key: _property_text(key, value) for key, value in properties.items()}
    kind = props.get("type", "sql").strip().lower()
    backend = _BACKENDS.get(kind)
    if backend is None:
        raise ValidationError(
            f"unknown catalog type {kind!r} for catalog '{name}'; expected one of {sorted(_BACKENDS)}"
        )
    return backend()(name, props)
