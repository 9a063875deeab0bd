"""What every handler shares: the catalog, the guards on locations, the caches, JSON replies.

Caches hold only what never changes: a metadata file's content and the bytes of its
LoadTableResult, keyed by the file's location (a commit writes a new file, so an entry never
goes stale). A table load is then one pointer read and a dictionary lookup.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from icefloe.backends import CatalogBackend, LoadedTable, identifier_to_string
from icefloe.catalog import Catalog
from icefloe.errors import UnsupportedFeatureError, ValidationError
from icefloe.io import is_within_any
from icefloe.rest.credentials import CredentialsConfig, vendor_of, wants_vended
from icefloe.rest.errors import HttpProblem
from icefloe.rest.routing import Call, Reply
from icefloe.serde.metadata_json import dumps_metadata, loads_metadata, metadata_to_dict
from icefloe.spec.properties import (
    OBJECT_STORE_PATH,
    WRITE_DATA_LOCATION,
    WRITE_FOLDER_STORAGE_LOCATION,
    WRITE_METADATA_LOCATION,
)
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.updates import SetLocation, SetProperties, TableUpdate

__all__ = ["CatalogService", "json_reply"]

#: Properties naming where files go: a server keeps them inside the locations it allows.
PATH_PROPERTIES = (
    WRITE_METADATA_LOCATION,
    WRITE_DATA_LOCATION,
    OBJECT_STORE_PATH,
    WRITE_FOLDER_STORAGE_LOCATION,
)

_GZIP_MAGIC = b"\x1f\x8b"


def json_bytes(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def json_reply(value: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, json_bytes(value), dict(headers or {}))


class _Lru:
    """A small thread-safe LRU map."""

    def __init__(self, limit: int):
        self._limit = limit
        self._items: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: Any, value: Any) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._limit:
                self._items.popitem(last=False)


class CatalogService:
    """The catalog behind the server, and the helpers its handlers share.

    Args:
        catalog: the catalog served.
        prefix: the path prefix advertised in ``/v1/config`` (None: none).
        allowed_locations: the locations (prefixes) tables and views may have and the server
            may write under; None: the warehouse alone.
        storage_credentials: what the server vends (``rest.credentials``); None: nothing.
    """

    def __init__(
        self,
        catalog: Catalog,
        *,
        prefix: str | None = None,
        allowed_locations: Sequence[str] | None = None,
        storage_credentials: CredentialsConfig | None = None,
    ):
        self.catalog = catalog
        self.vendor = vendor_of(storage_credentials)
        self.backend: CatalogBackend = catalog.backend
        self.allowed_locations: tuple[str, ...] = (
            (self.backend.warehouse,) if allowed_locations is None else tuple(allowed_locations)
        )
        self.prefix = prefix
        self._metadata = _Lru(64)  # metadata location -> TableMetadata
        self._latest = _Lru(4096)  # table identifier -> the last metadata location this process saw
        self._documents = _Lru(64)  # (metadata location, snapshots mode) -> LoadTableResult bytes

    # ---- guards --------------------------------------------------------------------------------

    def check_location(self, location: str, what: str) -> None:
        """Raise ValidationError (400) unless ``location`` is inside an allowed location."""
        if not isinstance(location, str) or not is_within_any(location, self.allowed_locations):
            allowed = " or ".join(self.allowed_locations)
            raise ValidationError(
                f"{what} {str(location)[:200]!r} is outside the allowed locations: {allowed}"
            )

    def check_properties(self, properties: Mapping[str, str], what: str) -> None:
        for key in PATH_PROPERTIES:
            if key in properties:
                self.check_location(properties[key], f"{what} '{key}'")

    def check_updates(self, updates: Iterable[TableUpdate], what: str) -> None:
        for update in updates:
            if isinstance(update, SetLocation):
                self.check_location(update.location, f"{what}: set-location")
            elif isinstance(update, SetProperties):
                self.check_properties(update.updates, f"{what}: set-properties")

    def check_namespace(self, call: Call, identifier: Sequence[str]) -> None:
        call.principal.check_namespace(tuple(identifier)[:-1])

    # ---- tables through the caches -------------------------------------------------------------

    def cached_base(self, identifier: tuple[str, ...]) -> LoadedTable | None:
        """The table as this process last saw it, if its metadata is cached: the commit uses it
        when the pointer has not moved since (no parse), and reads the current file otherwise."""
        location = self._latest.get(identifier)
        metadata = self._metadata.get(location) if location else None
        return LoadedTable(identifier, location, metadata) if location and metadata else None

    def remember(self, loaded: LoadedTable) -> None:
        self._metadata.put(loaded.metadata_location, loaded.metadata)
        self._latest.put(loaded.identifier, loaded.metadata_location)

    def metadata_at(self, location: str) -> TableMetadata:
        cached: TableMetadata | None = self._metadata.get(location)
        if cached is not None:
            return cached
        metadata = loads_metadata(self.backend.io.read_bytes(location), location=location)
        self._metadata.put(location, metadata)
        return metadata

    def load_table_document(self, identifier: tuple[str, ...], snapshots: str) -> tuple[str, bytes]:
        """``(metadata location, LoadTableResult bytes)`` of the table's current version.

        Raises:
            NoSuchTableError: no such table (also when its namespace does not exist).
        """
        location = self.backend.current_metadata_location(identifier)
        if location is None:
            self.backend.load_table(identifier)  # raises NoSuchTableError with the catalog's message
            raise AssertionError("unreachable")
        self._latest.put(identifier, location)
        key = (location, snapshots)
        document = self._documents.get(key)
        if document is None:
            document = self._render(location, snapshots)
            self._documents.put(key, document)
        return location, document

    def _render(self, location: str, snapshots: str) -> bytes:
        if snapshots == "refs":
            metadata = self.metadata_at(location)
            kept = {ref.snapshot_id for ref in metadata.refs.values()}
            filtered = replace(
                metadata, snapshots=tuple(s for s in metadata.snapshots if s.snapshot_id in kept)
            )
            body = json_bytes(metadata_to_dict(filtered))
        else:
            metadata = self._metadata.get(location)
            if metadata is not None:
                body = dumps_metadata(metadata)
            else:
                # The file's own JSON is the document: no parse, no re-render.
                body = self.backend.io.read_bytes(location)
                if body[:2] == _GZIP_MAGIC:
                    body = dumps_metadata(self.metadata_at(location))
        return b"".join(
            (b'{"metadata-location":', json_bytes(location), b',"metadata":', body, b',"config":{}}')
        )

    def commit_document(self, loaded: LoadedTable) -> bytes:
        """The CommitTableResponse of a commit (and the load document it is for the new file)."""
        self.remember(loaded)
        body = dumps_metadata(loaded.metadata)
        document = b"".join(
            (
                b'{"metadata-location":',
                json_bytes(loaded.metadata_location),
                b',"metadata":',
                body,
                b',"config":{}}',
            )
        )
        self._documents.put((loaded.metadata_location, "all"), document)
        return document

    def credentials_json(self, identifier: tuple[str, ...], metadata_location: str) -> list[dict[str, Any]]:
        """The storage credentials vended for a table (none without a vendor)."""
        if self.vendor is None:
            return []
        metadata = self.metadata_at(metadata_location)
        return [c.to_json() for c in self.vendor(identifier, metadata)]

    def with_credentials(
        self, call: Call, identifier: tuple[str, ...], location: str, document: bytes
    ) -> bytes:
        """A LoadTableResult ``document`` with the table's vended credentials when the request
        asked for them (``X-Iceberg-Access-Delegation: vended-credentials``). Cached documents
        never hold credentials: they are added per answer, so they can change (expire)."""
        if self.vendor is None or not wants_vended(call.headers):
            return document
        credentials = self.credentials_json(identifier, location)
        if not credentials:
            return document
        return b"".join((document[:-1], b',"storage-credentials":', json_bytes(credentials), b"}"))

    @staticmethod
    def etag(location: str, snapshots: str) -> str:
        return '"' + hashlib.sha256(f"{location}\n{snapshots}".encode()).hexdigest()[:32] + '"'

    # ---- pagination ----------------------------------------------------------------------------

    @staticmethod
    def page(call: Call, names: list[tuple[str, ...]]) -> tuple[list[tuple[str, ...]], str | None]:
        """One page of sorted ``names`` after ``pageToken`` (the last name of the previous page,
        so concurrent inserts shift nothing); everything when there is no ``pageSize``."""
        token = call.query.get("pageToken") or ""
        size_text = call.query.get("pageSize")
        start = 0
        if token:
            try:
                last = tuple(json.loads(bytes.fromhex(token).decode("utf-8")))
            except (ValueError, TypeError, UnicodeError):
                raise HttpProblem(400, "BadRequestException", f"invalid pageToken {token[:50]!r}") from None
            start = next((i for i, n in enumerate(names) if n > last), len(names))
        if size_text is None:
            return names[start:], None
        try:
            size = int(size_text)
        except ValueError:
            size = 0
        if size < 1:
            raise HttpProblem(
                400, "BadRequestException", f"pageSize must be a positive integer, not {size_text!r}"
            )
        chunk = names[start : start + size]
        more = start + size < len(names)
        next_token = json_bytes(list(chunk[-1])).hex() if more and chunk else None
        return chunk, next_token

    def view_exists(self, identifier: Sequence[str]) -> bool:
        """Whether a view has this name (never, in a catalog without views)."""
        try:
            return self.backend.view_exists(identifier)
        except UnsupportedFeatureError:
            return False

    def describe(self, identifier: Sequence[str]) -> str:
        return identifier_to_string(identifier)
