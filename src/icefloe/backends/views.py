"""Views in a catalog backend: their metadata pointers, created, swapped, listed, dropped.

A view's metadata file is written like a table's (``<location>/metadata/NNNNN-<uuid>.gz.metadata.json``,
gzip unless the view's ``write.metadata.compression-codec`` says ``none``, as Java) and its
pointer lives beside the tables' (the SQL catalog: a row with ``iceberg_type = 'VIEW'``). A table
and a view never share an identifier.

:class:`ViewCatalog` holds the protocol (requirements checked against the current metadata,
the builder, a new file, an atomic swap, outcome settled by re-reading the pointer); a backend
that keeps views supplies the pointer hooks. Backends without views (Hadoop) inherit methods
that raise ``UnsupportedFeatureError``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from icefloe.backends.identifiers import Identifier, identifier_to_string, parse_identifier, parse_namespace
from icefloe.errors import (
    CommitFailedException,
    CommitStateUnknownException,
    FileIOError,
    IcefloeError,
    NoSuchViewError,
    UnsupportedFeatureError,
    ValidationError,
    ViewAlreadyExistsError,
)
from icefloe.io import FileIO, metadata_location
from icefloe.serde.metadata_json import metadata_file_name, parse_metadata_version
from icefloe.serde.view_json import dumps_view_metadata, loads_view_metadata
from icefloe.spec.properties import METADATA_COMPRESSION, VIEW_METADATA_COMPRESSION_DEFAULT
from icefloe.spec.schema import Schema
from icefloe.spec.updates import TableUpdate
from icefloe.spec.view_builder import ViewMetadataBuilder, new_view_metadata
from icefloe.spec.views import ViewMetadata, ViewRequirement, ViewVersion

__all__ = ["LoadedView", "ViewCatalog"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LoadedView:
    """A view as a backend knows it: its identifier, current metadata file and content."""

    identifier: tuple[str, ...]
    metadata_location: str
    metadata: ViewMetadata


class ViewCatalog:
    """The view half of a catalog backend (mixed into ``CatalogBackend``)."""

    name: str
    io: FileIO
    catalog_type: ClassVar[str]

    # ---- hooks: a backend that keeps views overrides these --------------------------------------

    def _unsupported(self) -> UnsupportedFeatureError:
        return UnsupportedFeatureError(
            f"the {self.catalog_type} catalog '{self.name}' does not support views"
        )

    def _read_view_pointer(self, identifier: tuple[str, ...]) -> str | None:
        """The view's metadata location, or None when there is no such view."""
        raise self._unsupported()

    def _create_view_pointer(self, identifier: tuple[str, ...], location: str) -> None:
        """Register a new view. Raises NoSuchNamespaceError, ViewAlreadyExistsError (a table or
        view holds the name), CommitStateUnknownException."""
        raise self._unsupported()

    def _swap_view_pointer(self, identifier: tuple[str, ...], old_location: str, new_location: str) -> None:
        """Atomically move the view's pointer. Raises CommitFailedException (it moved),
        CommitStateUnknownException."""
        raise self._unsupported()

    def _delete_view_pointer(self, identifier: tuple[str, ...]) -> bool:
        """Remove the view's pointer; False when there was none."""
        raise self._unsupported()

    def _rename_view_pointer(self, source: tuple[str, ...], destination: tuple[str, ...]) -> None:
        """Raises NoSuchViewError, NoSuchNamespaceError, ViewAlreadyExistsError."""
        raise self._unsupported()

    def _view_names(self, namespace: tuple[str, ...]) -> Iterable[str]:
        """The names of the views in ``namespace`` (raises NoSuchNamespaceError)."""
        raise self._unsupported()

    def _check_can_create_view(self, identifier: tuple[str, ...]) -> None:
        """Raise NoSuchNamespaceError / ViewAlreadyExistsError early."""

    # ---- the API -------------------------------------------------------------------------------

    def list_views(self, namespace: str | Sequence[str]) -> list[tuple[str, ...]]:
        """The identifiers of the views directly in ``namespace``, sorted.

        Raises:
            NoSuchNamespaceError: it does not exist.
        """
        levels = parse_namespace(namespace)
        return sorted((*levels, name) for name in self._view_names(levels))

    def view_exists(self, identifier: Identifier) -> bool:
        return self._read_view_pointer(parse_identifier(identifier)) is not None

    def load_view(self, identifier: Identifier) -> LoadedView:
        """The view's current metadata file and its content.

        Raises:
            NoSuchViewError: no such view.
        """
        ident = parse_identifier(identifier)
        location = self._read_view_pointer(ident)
        if location is None:
            raise NoSuchViewError(self._no_such_view(ident))
        return LoadedView(ident, location, self._read_view_metadata(location))

    def create_view(self, identifier: Identifier, metadata: ViewMetadata) -> LoadedView:
        """Write the view's first metadata file and register it.

        Raises:
            NoSuchNamespaceError: the namespace does not exist.
            ViewAlreadyExistsError: a view or a table has the identifier.
        """
        ident = parse_identifier(identifier)
        self._check_can_create_view(ident)
        location = self._new_view_file(metadata, None)
        self._write_view_file(location, metadata)
        try:
            self._create_view_pointer(ident, location)
        except CommitStateUnknownException:
            if self._read_view_pointer(ident) != location:
                raise
        except IcefloeError:
            self.io.delete_quietly([location])
            raise
        return LoadedView(ident, location, metadata)

    def default_table_location(self, identifier: Identifier) -> str:
        raise NotImplementedError

    def create_new_view(
        self,
        identifier: Identifier,
        schema: Schema,
        version: ViewVersion,
        properties: Mapping[str, str],
        location: str | None,
    ) -> LoadedView:
        """Create a view from its definition (``version`` current, with ``schema``); the
        location defaults to the catalog's layout, as a table's. A REST catalog lets its server
        build the metadata.

        Raises:
            as ``create_view``.
        """
        ident = parse_identifier(identifier)
        view_location = (location or self.default_table_location(ident)).rstrip("/")
        return self.create_view(ident, new_view_metadata(schema, version, view_location, dict(properties)))

    def register_view(self, identifier: Identifier, metadata_location: str) -> LoadedView:
        """Add an existing view, given its metadata file, to the catalog."""
        ident = parse_identifier(identifier)
        metadata = self._read_view_metadata(metadata_location)
        self._check_can_create_view(ident)
        self._create_view_pointer(ident, metadata_location)
        return LoadedView(ident, metadata_location, metadata)

    def commit_view(
        self,
        identifier: Identifier,
        base: LoadedView | None,
        requirements: Sequence[ViewRequirement],
        updates: Sequence[TableUpdate],
    ) -> LoadedView:
        """Apply ``updates`` to the view's current metadata if ``requirements`` hold.

        Raises:
            NoSuchViewError: no such view.
            CommitFailedException: a requirement failed or a concurrent commit won (nothing
                was committed; retry on fresh metadata).
            CommitStateUnknownException: the outcome is unknown.
            ValidationError, ValidationException: the updates do not apply.
        """
        ident = parse_identifier(identifier)
        current_location = self._read_view_pointer(ident)
        if current_location is None:
            raise NoSuchViewError(self._no_such_view(ident))
        if base is not None and base.metadata_location == current_location:
            current = base.metadata
        else:
            current = self._read_view_metadata(current_location)
        for requirement in requirements:
            requirement.validate(current)
        builder = ViewMetadataBuilder(current).apply_all(updates)
        if not builder.changes:
            return LoadedView(ident, current_location, current)
        new = builder.build()
        new_location = self._new_view_file(new, current_location)
        try:
            self._write_view_file(new_location, new)
        except FileIOError as exc:
            raise CommitFailedException(
                f"cannot write the new view metadata file {new_location}: {exc}"
            ) from exc
        try:
            self._swap_view_pointer(ident, current_location, new_location)
        except CommitFailedException:
            self.io.delete_quietly([new_location])
            raise
        except Exception as exc:
            pointer = self._read_view_pointer_quietly(ident)
            if pointer == current_location:
                self.io.delete_quietly([new_location])
                raise CommitFailedException(
                    f"commit of view {identifier_to_string(ident)} failed: {exc}"
                ) from exc
            if pointer != new_location:
                raise CommitStateUnknownException(
                    f"cannot tell whether the commit of view {identifier_to_string(ident)} to {new_location} "
                    f"succeeded: {exc}"
                ) from exc
        return LoadedView(ident, new_location, new)

    def drop_view(self, identifier: Identifier) -> None:
        """Remove a view from the catalog (its metadata files stay, as Java).

        Raises:
            NoSuchViewError: no such view.
        """
        ident = parse_identifier(identifier)
        if not self._delete_view_pointer(ident):
            raise NoSuchViewError(self._no_such_view(ident))

    def rename_view(self, source: Identifier, destination: Identifier) -> None:
        """Give a view another identifier.

        Raises:
            NoSuchViewError: ``source`` does not exist.
            NoSuchNamespaceError: ``destination``'s namespace does not exist.
            ViewAlreadyExistsError: a view or table has ``destination``.
        """
        self._rename_view_pointer(parse_identifier(source), parse_identifier(destination))

    # ---- files ---------------------------------------------------------------------------------

    def _no_such_view(self, ident: tuple[str, ...]) -> str:
        return f"view {identifier_to_string(ident)} does not exist in catalog '{self.name}'"

    def _view_exists_error(self, ident: tuple[str, ...], *, table: bool = False) -> ViewAlreadyExistsError:
        what = "a table" if table else "a view"
        return ViewAlreadyExistsError(f"{what} named {identifier_to_string(ident)} already exists")

    def _read_view_metadata(self, location: str) -> ViewMetadata:
        return loads_view_metadata(self.io.read_bytes(location), location=location)

    def _read_view_pointer_quietly(self, ident: tuple[str, ...]) -> str | None:
        try:
            return self._read_view_pointer(ident)
        except Exception:
            log.warning("checking the commit of view %s failed", identifier_to_string(ident), exc_info=True)
            return None

    @staticmethod
    def _view_compression(metadata: ViewMetadata) -> str:
        codec = (
            metadata.properties.get(METADATA_COMPRESSION, VIEW_METADATA_COMPRESSION_DEFAULT).strip().lower()
        )
        if codec not in ("none", "gzip"):
            raise ValidationError(
                f"view property '{METADATA_COMPRESSION}' must be 'none' or 'gzip', not {codec!r}"
            )
        return codec

    def _new_view_file(self, metadata: ViewMetadata, previous: str | None) -> str:
        version = 0
        if previous is not None:
            number = parse_metadata_version(previous)
            version = number + 1 if number is not None else 0
        name = metadata_file_name(version, compression=self._view_compression(metadata), hadoop=False)
        return metadata_location(metadata.location, metadata.properties, name)

    def _write_view_file(self, location: str, metadata: ViewMetadata) -> None:
        self.io.write_bytes(
            location, dumps_view_metadata(metadata, compression=self._view_compression(metadata))
        )
