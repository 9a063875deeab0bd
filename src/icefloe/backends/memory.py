"""InMemoryCatalogBackend: namespaces and table pointers in a dict, for tests.

Metadata files are still written through the FileIO (so every file the catalog hands out
exists, and other readers can open the tables), and kept in memory too, so loads are cheap.
Fault injection for tests of the layers above:

- ``fail_next_commits(n, exc_type)``: the next ``n`` calls of ``commit_table`` raise
  ``exc_type`` before doing anything.
- ``commit_then_raise(n)``: the next ``n`` commits happen, then raise
  ``CommitStateUnknownException`` to the caller (a lost response).
- ``swap_then_raise(n)``: the next ``n`` pointer swaps happen, then raise
  ``CommitStateUnknownException`` inside the backend, which settles it by re-reading the
  pointer (so the commit returns normally): exercises the shared commit protocol.
- ``set_before_swap(callback)``: ``callback(identifier)`` runs just before each pointer swap,
  after the new metadata file is written, e.g. to commit a concurrent change.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence

from icefloe._util.redaction import redact
from icefloe.backends._multi import PointerSwap
from icefloe.backends.base import WAREHOUSE, CatalogBackend, LoadedTable, PropertiesUpdateSummary
from icefloe.backends.identifiers import (
    Identifier,
    Namespace,
    identifier_to_string,
    parse_identifier,
    parse_namespace,
)
from icefloe.errors import (
    CommitFailedException,
    CommitStateUnknownException,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchViewError,
    TableAlreadyExistsError,
    ValidationError,
)
from icefloe.io import FileIO
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.updates import TableRequirement, TableUpdate

__all__ = ["InMemoryCatalogBackend"]


class InMemoryCatalogBackend(CatalogBackend):
    """A catalog held in memory; metadata files are written through the FileIO.

    Properties:
        warehouse: where table files go; default a fresh temporary directory.

    Thread-safe.
    """

    catalog_type = "memory"

    def __init__(
        self, name: str = "memory", properties: Mapping[str, str] | None = None, *, io: FileIO | None = None
    ):
        props = dict(properties or {})
        if not props.get(WAREHOUSE):
            props[WAREHOUSE] = tempfile.mkdtemp(prefix="icefloe-memory-")
        super().__init__(name, props, io=io)
        self._lock = threading.RLock()
        self._namespaces: dict[Namespace, dict[str, str]] = {}
        self._tables: dict[tuple[str, ...], str] = {}
        self._views: dict[tuple[str, ...], str] = {}
        self._metadata: dict[str, TableMetadata] = {}
        self._failures_left = 0
        self._failure_type: type[Exception] = CommitFailedException
        self._lost_responses_left = 0
        self._lost_swaps_left = 0
        self._before_swap: Callable[[tuple[str, ...]], None] | None = None
        self._in_before_swap = threading.local()

    # ---- fault injection ----------------------------------------------------------------------

    def fail_next_commits(self, n: int, exc_type: type[Exception] = CommitFailedException) -> None:
        """Make the next ``n`` ``commit_table`` calls raise ``exc_type`` without doing anything."""
        with self._lock:
            self._failures_left = n
            self._failure_type = exc_type

    def commit_then_raise(self, n: int) -> None:
        """Make the next ``n`` commits succeed, then raise ``CommitStateUnknownException``."""
        with self._lock:
            self._lost_responses_left = n

    def swap_then_raise(self, n: int) -> None:
        """Make the next ``n`` pointer swaps happen, then raise ``CommitStateUnknownException``
        inside the backend (which resolves it by re-reading the pointer)."""
        with self._lock:
            self._lost_swaps_left = n

    def set_before_swap(self, callback: Callable[[tuple[str, ...]], None] | None) -> None:
        """Run ``callback(identifier)`` before every pointer swap (None removes it).

        Commits made by the callback itself do not trigger it again.
        """
        self._before_swap = callback

    # ---- namespaces -----------------------------------------------------------------------------

    def _exists(self, levels: Namespace) -> bool:
        depth = len(levels)
        if any(ns[:depth] == levels for ns in self._namespaces):
            return True
        return any(ident[:-1][:depth] == levels for ident in (*self._tables, *self._views))

    def _require(self, levels: Namespace) -> None:
        if levels and not self._exists(levels):
            raise NoSuchNamespaceError(
                f"namespace {identifier_to_string(levels)} does not exist in catalog '{self.name}'"
            )

    def create_namespace(
        self, namespace: str | Sequence[str], properties: Mapping[str, str] | None = None
    ) -> None:
        levels = parse_namespace(namespace)
        props = dict(properties or {})
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in props.items()):
            raise ValidationError(f"namespace properties must map strings to strings: {redact(props)!r}")
        with self._lock:
            if self._exists(levels):
                raise NamespaceAlreadyExistsError(f"namespace {identifier_to_string(levels)} already exists")
            self._namespaces[levels] = props

    def list_namespaces(self, parent: str | Sequence[str] = ()) -> list[Namespace]:
        levels = parse_namespace(parent, allow_root=True)
        depth = len(levels) + 1
        with self._lock:
            self._require(levels)
            candidates = list(self._namespaces) + [ident[:-1] for ident in (*self._tables, *self._views)]
        return sorted({ns[:depth] for ns in candidates if len(ns) >= depth and ns[: depth - 1] == levels})

    def load_namespace_properties(self, namespace: str | Sequence[str]) -> dict[str, str]:
        levels = parse_namespace(namespace)
        with self._lock:
            self._require(levels)
            return dict(self._namespaces.get(levels, {}))

    def update_namespace_properties(
        self,
        namespace: str | Sequence[str],
        removals: Iterable[str] = (),
        updates: Mapping[str, str] | None = None,
    ) -> PropertiesUpdateSummary:
        levels = parse_namespace(namespace)
        remove = set(removals)
        sets = dict(updates or {})
        both = sorted(remove & set(sets))
        if both:
            raise ValidationError(f"namespace properties {both} are both removed and updated")
        with self._lock:
            self._require(levels)
            current = self._namespaces.setdefault(levels, {})
            removed = sorted(k for k in remove if k in current)
            missing = sorted(k for k in remove if k not in current)
            for key in removed:
                del current[key]
            current.update(sets)
        return PropertiesUpdateSummary(
            removed=tuple(removed), updated=tuple(sorted(sets)), missing=tuple(missing)
        )

    def drop_namespace(self, namespace: str | Sequence[str]) -> None:
        levels = parse_namespace(namespace)
        with self._lock:
            self._require(levels)
            tables = [i for i in (*self._tables, *self._views) if i[:-1] == levels]
            if tables:
                raise NamespaceNotEmptyError(
                    f"namespace {identifier_to_string(levels)} is not empty: it holds {len(tables)} table(s) or view(s)"
                )
            if any(len(ns) > len(levels) and ns[: len(levels)] == levels for ns in self._namespaces):
                raise NamespaceNotEmptyError(f"namespace {identifier_to_string(levels)} holds namespaces")
            self._namespaces.pop(levels, None)

    def namespace_exists(self, namespace: str | Sequence[str]) -> bool:
        levels = parse_namespace(namespace)
        with self._lock:
            return self._exists(levels)

    # ---- tables ---------------------------------------------------------------------------------

    def list_tables(self, namespace: str | Sequence[str]) -> list[tuple[str, ...]]:
        levels = parse_namespace(namespace)
        with self._lock:
            self._require(levels)
            return sorted(i for i in self._tables if i[:-1] == levels)

    def _read_pointer(self, identifier: tuple[str, ...]) -> str | None:
        with self._lock:
            return self._tables.get(parse_identifier(identifier))

    def _read_metadata(self, location: str) -> TableMetadata:
        cached = self._metadata.get(location)
        if cached is not None:
            return cached
        metadata = super()._read_metadata(location)
        self._metadata[location] = metadata
        return metadata

    def _write_new_file(self, location: str, metadata: TableMetadata) -> None:
        super()._write_new_file(location, metadata)
        self._metadata[location] = metadata

    def _check_can_create(self, identifier: tuple[str, ...], metadata: TableMetadata) -> None:
        with self._lock:
            self._require(identifier[:-1])
            if identifier in self._tables or identifier in self._views:
                raise TableAlreadyExistsError(
                    f"a table or view named {identifier_to_string(identifier)} exists"
                )

    def _create_pointer(self, identifier: tuple[str, ...], location: str) -> None:
        with self._lock:
            self._require(identifier[:-1])
            if identifier in self._tables or identifier in self._views:
                raise TableAlreadyExistsError(
                    f"a table or view named {identifier_to_string(identifier)} exists"
                )
            self._tables[identifier] = location

    def _run_before_swap(self, identifier: tuple[str, ...]) -> None:
        callback = self._before_swap
        if callback is not None and not getattr(self._in_before_swap, "active", False):
            self._in_before_swap.active = True
            try:
                callback(identifier)
            finally:
                self._in_before_swap.active = False

    def _swap_pointer(self, identifier: tuple[str, ...], old_location: str, new_location: str) -> None:
        self._swap_pointers([PointerSwap(identifier, old_location, new_location)])

    def _swap_pointers(self, swaps: Sequence[PointerSwap]) -> None:
        """Every pointer moves under the lock, or none (the in-memory multi-table commit)."""
        for swap in swaps:
            self._run_before_swap(swap.identifier)
        with self._lock:
            for swap in swaps:
                current = self._tables.get(swap.identifier)
                if swap.old_location is None:
                    self._require(swap.identifier[:-1])
                    if current is not None or swap.identifier in self._views:
                        raise TableAlreadyExistsError(
                            f"table {identifier_to_string(swap.identifier)} already exists"
                        )
                elif current != swap.old_location:
                    raise CommitFailedException(
                        f"table {identifier_to_string(swap.identifier)} was changed concurrently: "
                        f"it no longer points to {swap.old_location}"
                    )
            for swap in swaps:
                self._tables[swap.identifier] = swap.new_location
            lose = self._lost_swaps_left > 0
            if lose:
                self._lost_swaps_left -= 1
        if lose:
            raise CommitStateUnknownException(
                f"injected: the swap to {swaps[-1].new_location} happened, its answer was lost"
            )

    # ---- views ----------------------------------------------------------------------------------

    def _read_view_pointer(self, identifier: tuple[str, ...]) -> str | None:
        with self._lock:
            return self._views.get(identifier)

    def _check_can_create_view(self, identifier: tuple[str, ...]) -> None:
        with self._lock:
            self._require(identifier[:-1])
            if identifier in self._tables or identifier in self._views:
                raise self._view_exists_error(identifier, table=identifier in self._tables)

    def _create_view_pointer(self, identifier: tuple[str, ...], location: str) -> None:
        with self._lock:
            self._check_can_create_view(identifier)
            self._views[identifier] = location

    def _swap_view_pointer(self, identifier: tuple[str, ...], old_location: str, new_location: str) -> None:
        with self._lock:
            if self._views.get(identifier) != old_location:
                raise CommitFailedException(
                    f"view {identifier_to_string(identifier)} was changed concurrently: "
                    f"it no longer points to {old_location}"
                )
            self._views[identifier] = new_location

    def _delete_view_pointer(self, identifier: tuple[str, ...]) -> bool:
        with self._lock:
            return self._views.pop(identifier, None) is not None

    def _rename_view_pointer(self, source: tuple[str, ...], destination: tuple[str, ...]) -> None:
        with self._lock:
            if source not in self._views:
                raise NoSuchViewError(self._no_such_view(source))
            if source == destination:
                return
            self._check_can_create_view(destination)
            self._views[destination] = self._views.pop(source)

    def _view_names(self, namespace: tuple[str, ...]) -> list[str]:
        with self._lock:
            self._require(namespace)
            return [ident[-1] for ident in self._views if ident[:-1] == namespace]

    def commit_table(
        self,
        identifier: Identifier,
        base: LoadedTable | None,
        requirements: Sequence[TableRequirement],
        updates: Sequence[TableUpdate],
    ) -> LoadedTable:
        with self._lock:
            fail = self._failures_left > 0
            if fail:
                self._failures_left -= 1
            lose_response = not fail and self._lost_responses_left > 0
            if lose_response:
                self._lost_responses_left -= 1
        ident = parse_identifier(identifier)
        if fail:
            raise self._failure_type(f"injected failure of the commit to {identifier_to_string(ident)}")
        result = super().commit_table(ident, base, requirements, updates)
        if lose_response:
            raise CommitStateUnknownException(
                f"injected: the commit to {identifier_to_string(ident)} succeeded but its response was lost"
            )
        return result

    def drop_table(self, identifier: Identifier, purge: bool = False) -> None:
        ident = parse_identifier(identifier)
        with self._lock:
            location = self._tables.pop(ident, None)
        if location is None:
            raise NoSuchTableError(self._no_such_table(ident))
        loaded = self._loaded_for_purge(ident, location) if purge else None
        if loaded is not None:
            self._purge(loaded)

    def rename_table(self, source: Identifier, destination: Identifier) -> None:
        src = parse_identifier(source)
        dst = parse_identifier(destination)
        with self._lock:
            if src not in self._tables:
                raise NoSuchTableError(self._no_such_table(src))
            if src == dst:
                return
            self._require(dst[:-1])
            if dst in self._tables or dst in self._views:
                raise TableAlreadyExistsError(f"a table or view named {identifier_to_string(dst)} exists")
            self._tables[dst] = self._tables.pop(src)

    def register_table(self, identifier: Identifier, metadata_location: str) -> LoadedTable:
        ident = parse_identifier(identifier)
        metadata = self._read_metadata(metadata_location)
        self._create_pointer(ident, metadata_location)
        return LoadedTable(ident, metadata_location, metadata)
