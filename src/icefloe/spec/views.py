"""Views (``format/view-spec.md``): the content of a view's metadata file, and its updates.

A view is a stored query: versions, each with SQL in one or more dialects, a schema, and the
default catalog and namespace its unqualified names resolve against; a log of which version
was current when. Immutable, like ``TableMetadata``; new versions come from
``ViewMetadataBuilder`` (``spec/view_builder.py``).

Views share the REST catalog's update currency with tables: ``assign-uuid``,
``upgrade-format-version``, ``add-schema``, ``set-location``, ``set-properties`` and
``remove-properties`` are the table updates of ``spec/updates.py``; ``add-view-version`` and
``set-current-view-version`` are here, with the one view requirement, ``assert-view-uuid``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from icefloe.errors import RequirementFailedError, ValidationError
from icefloe.spec.schema import Schema
from icefloe.spec.updates import (
    LAST_ADDED,
    AddSchema,
    AssignUUID,
    RemoveProperties,
    SetLocation,
    SetProperties,
    TableUpdate,
    UpgradeFormatVersion,
)

__all__ = [
    "SUPPORTED_VIEW_FORMAT_VERSIONS",
    "VIEW_UPDATE_TYPES",
    "AddViewVersion",
    "AssertViewUUID",
    "SQLViewRepresentation",
    "SetCurrentViewVersion",
    "ViewHistoryEntry",
    "ViewMetadata",
    "ViewRequirement",
    "ViewVersion",
]

SUPPORTED_VIEW_FORMAT_VERSIONS = (1,)
SQL_REPRESENTATION = "sql"


@dataclass(frozen=True, slots=True)
class SQLViewRepresentation:
    """A view's query as SQL of one dialect (``"spark"``, ``"trino"``, ...)."""

    sql: str
    dialect: str
    type: ClassVar[str] = SQL_REPRESENTATION


@dataclass(frozen=True, slots=True)
class ViewVersion:
    """One definition of a view. Versions are immutable: a new query is a new version.

    Attributes:
        version_id: the version's id (1, 2, ...).
        schema_id: the id of the schema of the query's output.
        timestamp_ms: when the version was created.
        summary: e.g. ``engine-name``, ``engine-version``.
        representations: the query, at most one per dialect.
        default_namespace: where unqualified table names in the query resolve.
        default_catalog: the catalog they resolve in; None: the catalog holding the view.
    """

    version_id: int
    schema_id: int
    timestamp_ms: int
    summary: Mapping[str, str] = field(default_factory=dict)
    representations: tuple[SQLViewRepresentation, ...] = ()
    default_namespace: tuple[str, ...] = ()
    default_catalog: str | None = None

    def sql_for(self, dialect: str) -> SQLViewRepresentation | None:
        """The representation of ``dialect`` (case-insensitive), or None."""
        wanted = dialect.lower()
        for representation in self.representations:
            if representation.dialect.lower() == wanted:
                return representation
        return None

    def dialects(self) -> set[str]:
        """The dialects of this version's SQL, lower-cased."""
        return {r.dialect.lower() for r in self.representations}

    def same_definition(self, other: ViewVersion) -> bool:
        """Equal but for id and timestamp (Java's ``sameViewVersion``): adding such a version
        reuses the existing one."""
        return (
            dict(self.summary) == dict(other.summary)
            and self.representations == other.representations
            and self.default_catalog == other.default_catalog
            and self.default_namespace == other.default_namespace
            and self.schema_id == other.schema_id
        )


@dataclass(frozen=True, slots=True)
class ViewHistoryEntry:
    """An entry of the version log: ``version_id`` became current at ``timestamp_ms``."""

    timestamp_ms: int
    version_id: int


@dataclass(frozen=True, slots=True)
class ViewMetadata:
    """Every field of a view metadata file, in snake_case."""

    view_uuid: str
    format_version: int
    location: str
    schemas: tuple[Schema, ...]
    current_version_id: int
    versions: tuple[ViewVersion, ...]
    version_log: tuple[ViewHistoryEntry, ...] = ()
    properties: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.format_version not in SUPPORTED_VIEW_FORMAT_VERSIONS:
            raise ValidationError(
                f"unsupported view format-version {self.format_version}; icefloe supports "
                f"{SUPPORTED_VIEW_FORMAT_VERSIONS}"
            )

    def version(self, version_id: int) -> ViewVersion | None:
        for version in self.versions:
            if version.version_id == version_id:
                return version
        return None

    def current_version(self) -> ViewVersion:
        version = self.version(self.current_version_id)
        if version is None:
            raise ValidationError(
                f"view has no version {self.current_version_id} (versions: "
                f"{sorted(v.version_id for v in self.versions)})"
            )
        return version

    def schemas_by_id(self) -> dict[int, Schema]:
        return {s.schema_id: s for s in self.schemas}

    def schema(self) -> Schema:
        """The schema of the current version."""
        schema_id = self.current_version().schema_id
        schema = self.schemas_by_id().get(schema_id)
        if schema is None:
            raise ValidationError(f"view has no schema {schema_id} (the current version's schema)")
        return schema


# ---- updates and the requirement ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AddViewVersion(TableUpdate):
    """Add a version; ``schema_id`` -1 means the schema added earlier in the same change."""

    action: ClassVar[str] = "add-view-version"
    view_version: ViewVersion


@dataclass(frozen=True, slots=True)
class SetCurrentViewVersion(TableUpdate):
    """Make a version current; -1 means the version added earlier in the same change."""

    action: ClassVar[str] = "set-current-view-version"
    view_version_id: int = LAST_ADDED


#: The updates a view commit may carry (the REST spec's ``ViewUpdate``).
VIEW_UPDATE_TYPES: tuple[type[TableUpdate], ...] = (
    AssignUUID,
    UpgradeFormatVersion,
    AddSchema,
    SetLocation,
    SetProperties,
    RemoveProperties,
    AddViewVersion,
    SetCurrentViewVersion,
)


class ViewRequirement:
    """Base of view commit requirements; ``validate`` raises RequirementFailedError (a CommitFailedException) when unmet."""

    __slots__ = ()
    type: ClassVar[str] = ""

    def validate(self, base: ViewMetadata | None) -> None:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class AssertViewUUID(ViewRequirement):
    """The view must be the one with this uuid (not dropped and re-created)."""

    type: ClassVar[str] = "assert-view-uuid"
    uuid: str

    def validate(self, base: ViewMetadata | None) -> None:
        if base is None:
            raise RequirementFailedError("Requirement failed: view UUID: the view does not exist")
        if base.view_uuid != self.uuid:
            # Java's words (its order too: the view's uuid first).
            raise RequirementFailedError(
                f"Requirement failed: view UUID does not match: expected {base.view_uuid} != {self.uuid}"
            )
