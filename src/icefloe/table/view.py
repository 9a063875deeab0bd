"""View: an Iceberg view as users hold it (Java's ``View`` API in snake_case).

A View holds the metadata it last saw; its own commits replace it, others' appear after
``refresh()``. Changes are operations like a table's: ``view.replace_version()`` (a new query
or schema), ``view.update_properties()``, ``view.update_location()``; each ``commit()`` sends
its updates guarded by ``assert-view-uuid`` to the catalog, and on a concurrent change
(``CommitFailedException``) reloads the view and applies itself again, under the view's
``commit.retry.*`` properties.
"""

from __future__ import annotations

import logging
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from typing import Any, Generic, TypeVar

from icefloe.backends import CatalogBackend, LoadedView
from icefloe.errors import CommitFailedException, ValidationError
from icefloe.spec.properties import (
    COMMIT_NUM_RETRIES,
    COMMIT_NUM_RETRIES_DEFAULT,
    SPARK_QUERY_COLUMN_NAMES,
    int_property,
)
from icefloe.spec.schema import Schema
from icefloe.spec.updates import RemoveProperties, SetLocation, SetProperties, TableUpdate
from icefloe.spec.view_builder import ViewMetadataBuilder
from icefloe.spec.views import (
    AssertViewUUID,
    SQLViewRepresentation,
    ViewHistoryEntry,
    ViewMetadata,
    ViewVersion,
)

__all__ = ["ReplaceViewVersion", "UpdateViewLocation", "UpdateViewProperties", "View", "view_summary"]

log = logging.getLogger(__name__)

R = TypeVar("R")

SPARK_DIALECT = "spark"


def view_summary() -> dict[str, str]:
    """The summary icefloe writes on the view versions it creates."""
    return {"engine-name": "icefloe", "engine-version": _icefloe_version()}


def _icefloe_version() -> str:
    try:
        return package_version("icefloe")
    except PackageNotFoundError:
        return "unknown"


def spark_properties(schema: Schema, representations: Sequence[SQLViewRepresentation]) -> dict[str, str]:
    """What Spark writes beside a spark-dialect query: the query's output column names."""
    if any(r.dialect.lower() == SPARK_DIALECT for r in representations):
        return {SPARK_QUERY_COLUMN_NAMES: ",".join(f.name for f in schema.fields)}
    return {}


class View:
    """An Iceberg view.

    Args:
        identifier: the view's identifier parts.
        metadata: its metadata.
        metadata_location: the file the metadata was read from.
        backend: the catalog backend commits go through.
        catalog_name: prefixes ``name()``.
    """

    def __init__(
        self,
        identifier: tuple[str, ...],
        metadata: ViewMetadata,
        metadata_location: str,
        backend: CatalogBackend,
        *,
        catalog_name: str | None = None,
    ):
        self._identifier = tuple(identifier)
        self._metadata = metadata
        self._metadata_location = metadata_location
        self._backend = backend
        self._catalog_name = catalog_name

    # ---- identity and state ------------------------------------------------------------------

    @property
    def identifier(self) -> str:
        return ".".join(self._identifier)

    @property
    def identifier_tuple(self) -> tuple[str, ...]:
        return self._identifier

    def name(self) -> str:
        return f"{self._catalog_name}.{self.identifier}" if self._catalog_name else self.identifier

    @property
    def metadata(self) -> ViewMetadata:
        return self._metadata

    @property
    def metadata_location(self) -> str:
        return self._metadata_location

    def _loaded(self) -> LoadedView:
        return LoadedView(self._identifier, self._metadata_location, self._metadata)

    def _set_state(self, loaded: LoadedView) -> None:
        self._metadata = loaded.metadata
        self._metadata_location = loaded.metadata_location

    def refresh(self) -> View:
        """Reload the metadata from the catalog; returns the view itself."""
        self._set_state(self._backend.load_view(self._identifier))
        return self

    # ---- Java's View accessors -----------------------------------------------------------------

    def schema(self) -> Schema:
        return self._metadata.schema()

    def schemas(self) -> dict[int, Schema]:
        return self._metadata.schemas_by_id()

    def current_version(self) -> ViewVersion:
        return self._metadata.current_version()

    def versions(self) -> list[ViewVersion]:
        return sorted(self._metadata.versions, key=lambda v: v.version_id)

    def version(self, version_id: int) -> ViewVersion | None:
        return self._metadata.version(version_id)

    def history(self) -> list[ViewHistoryEntry]:
        return list(self._metadata.version_log)

    def properties(self) -> dict[str, str]:
        return dict(self._metadata.properties)

    def location(self) -> str:
        return self._metadata.location

    def uuid(self) -> uuid.UUID:
        return uuid.UUID(self._metadata.view_uuid)

    def sql_for(self, dialect: str) -> SQLViewRepresentation | None:
        """The current version's SQL in ``dialect`` (case-insensitive); as Java, the first SQL
        representation when there is none in that dialect (None when there is no SQL)."""
        if not dialect:
            raise ValidationError("dialect must not be empty")
        version = self.current_version()
        exact = version.sql_for(dialect)
        if exact is not None:
            return exact
        return version.representations[0] if version.representations else None

    # ---- operations ----------------------------------------------------------------------------

    def replace_version(self) -> ReplaceViewVersion:
        """A new version of the view: ``with_query(dialect, sql)``, ``with_schema(schema)``,
        ``with_default_namespace``, ``with_default_catalog``, then ``commit()``."""
        return ReplaceViewVersion(self)

    def update_properties(self) -> UpdateViewProperties:
        return UpdateViewProperties(self)

    def update_location(self) -> UpdateViewLocation:
        return UpdateViewLocation(self)

    def __repr__(self) -> str:
        return f"View({self.name()!r}, version={self._metadata.current_version_id})"


class _ViewUpdate(ABC, Generic[R]):
    """An operation on a view: updates computed from the current metadata, committed with
    ``assert-view-uuid``, recomputed on a fresh view after a concurrent change."""

    def __init__(self, view: View):
        self._view = view
        self._committed = False

    @abstractmethod
    def _updates(self, base: ViewMetadata) -> list[TableUpdate]:
        """The updates that apply this operation to ``base`` (validating it)."""

    @abstractmethod
    def _result(self, metadata: ViewMetadata) -> R:
        """What ``apply()`` returns, given the metadata with the updates applied."""

    def apply(self) -> R:
        """The result on the current metadata, committing nothing."""
        base = self._view.metadata
        return self._result(ViewMetadataBuilder(base).apply_all(self._updates(base)).build())

    def commit(self) -> None:
        """Commit, retrying on concurrent changes.

        Raises:
            CommitFailedException: the retries ran out.
            CommitStateUnknownException: the outcome is unknown.
            ValidationError, ValidationException: the change does not apply.
        """
        if self._committed:
            raise ValidationError("this operation was already committed; create a new one")
        self._committed = True
        view = self._view
        retries = int_property(
            view.metadata.properties, COMMIT_NUM_RETRIES, COMMIT_NUM_RETRIES_DEFAULT, minimum=0
        )
        base = view._loaded()
        # The view this operation was made on: one dropped and re-created meanwhile fails it.
        requirements = [AssertViewUUID(base.metadata.view_uuid)]
        for attempt in range(retries + 1):
            updates = self._updates(base.metadata)
            try:
                view._set_state(view._backend.commit_view(view.identifier_tuple, base, requirements, updates))
                return
            except CommitFailedException:
                if attempt == retries:
                    raise
                log.info("commit to view %s failed; retry %d of %d", view.name(), attempt + 1, retries)
                time.sleep(min(0.1 * 2**attempt, 2.0))
                base = view._backend.load_view(view.identifier_tuple)
                requirements[0].validate(base.metadata)  # re-created meanwhile: no use retrying


class ReplaceViewVersion(_ViewUpdate[ViewVersion]):
    """A new current version: queries per dialect, schema, default namespace and catalog (Java's
    ``ReplaceViewVersion``). Unset namespace and catalog keep the current version's."""

    def __init__(self, view: View):
        super().__init__(view)
        self._queries: dict[str, SQLViewRepresentation] = {}
        self._schema: Schema | None = None
        self._namespace: tuple[str, ...] | None = None
        self._catalog: str | None = None
        self._catalog_set = False

    def with_query(self, dialect: str, sql: str) -> ReplaceViewVersion:
        if not dialect or not sql:
            raise ValidationError("a view query needs a dialect and SQL")
        key = dialect.lower()
        if key in self._queries:
            raise ValidationError(f"a query for dialect {dialect!r} was already given")
        self._queries[key] = SQLViewRepresentation(sql, dialect)
        return self

    def with_schema(self, schema: Schema | Any) -> ReplaceViewVersion:
        from icefloe.arrow.schema import as_iceberg_schema  # lazy: pyarrow, off the path of loading a view

        self._schema = as_iceberg_schema(schema)
        return self

    def with_default_namespace(self, namespace: Sequence[str] | str) -> ReplaceViewVersion:
        self._namespace = tuple(namespace.split(".")) if isinstance(namespace, str) else tuple(namespace)
        return self

    def with_default_catalog(self, catalog: str | None) -> ReplaceViewVersion:
        self._catalog = catalog
        self._catalog_set = True
        return self

    def _updates(self, base: ViewMetadata) -> list[TableUpdate]:
        if not self._queries:
            raise ValidationError("replace_version() needs at least one query (with_query)")
        if self._schema is None:
            raise ValidationError("replace_version() needs the schema of the query (with_schema)")
        current = base.current_version()
        representations = tuple(self._queries.values())
        version = ViewVersion(
            version_id=max(v.version_id for v in base.versions) + 1,
            schema_id=self._schema.schema_id,
            timestamp_ms=int(time.time() * 1000),
            summary=view_summary(),
            representations=representations,
            default_namespace=self._namespace if self._namespace is not None else current.default_namespace,
            default_catalog=self._catalog if self._catalog_set else current.default_catalog,
        )
        builder = ViewMetadataBuilder(base)
        extra = spark_properties(self._schema, representations)
        if extra:
            builder.apply(SetProperties(extra))
        builder.set_current_version(version, self._schema)
        return list(builder.changes)

    def _result(self, metadata: ViewMetadata) -> ViewVersion:
        return metadata.current_version()


class UpdateViewProperties(_ViewUpdate[dict[str, str]]):
    """Set and remove view properties (Java's ``UpdateViewProperties``)."""

    def __init__(self, view: View):
        super().__init__(view)
        self._sets: dict[str, str] = {}
        self._removals: set[str] = set()

    def set(self, key: str, value: str) -> UpdateViewProperties:
        if key in self._removals:
            raise ValidationError(f"view property '{key}' is both set and removed")
        self._sets[key] = value
        return self

    def set_all(self, properties: Mapping[str, str]) -> UpdateViewProperties:
        for key, value in properties.items():
            self.set(key, value)
        return self

    def remove(self, key: str) -> UpdateViewProperties:
        if key in self._sets:
            raise ValidationError(f"view property '{key}' is both set and removed")
        self._removals.add(key)
        return self

    def _updates(self, base: ViewMetadata) -> list[TableUpdate]:
        updates: list[TableUpdate] = []
        if self._sets:
            updates.append(SetProperties(dict(self._sets)))
        if self._removals:
            updates.append(RemoveProperties(tuple(sorted(self._removals))))
        return updates

    def _result(self, metadata: ViewMetadata) -> dict[str, str]:
        return dict(metadata.properties)


class UpdateViewLocation(_ViewUpdate[str]):
    """Move the view's base location (new metadata files go there)."""

    def __init__(self, view: View):
        super().__init__(view)
        self._location: str | None = None

    def set_location(self, location: str) -> UpdateViewLocation:
        if not location:
            raise ValidationError("view location must not be empty")
        self._location = location
        return self

    def _updates(self, base: ViewMetadata) -> list[TableUpdate]:
        if self._location is None:
            raise ValidationError("update_location() needs set_location(location)")
        return [SetLocation(self._location)]

    def _result(self, metadata: ViewMetadata) -> str:
        return metadata.location
