"""ViewMetadataBuilder: the one place where view updates become ``ViewMetadata``.

It follows Java's ``ViewMetadata.Builder``:

- an added schema equal to an existing one (ignoring its id) reuses that id, else gets the
  highest id + 1 (from 0); a version equal to an existing one (ignoring id and timestamp)
  reuses it, else gets the highest id + 1; ``-1`` means "the schema / version added earlier in
  this change";
- a version may hold one SQL representation per dialect (case-insensitive);
- making a version current appends to the version log, stamped with the version's own time
  when it was added in the same change, else now;
- a new current version may not drop a dialect the previous one had, unless the property
  ``replace.drop-dialect.allowed`` is true;
- versions beyond ``version.history.num-entries`` (default 10) expire, newest ids kept, the
  current one always; the version log is cut after the last entry naming an expired version.
"""

from __future__ import annotations

import time
import uuid as uuid_module
from collections.abc import Iterable

from icefloe.errors import ValidationError, ValidationException
from icefloe.spec.properties import (
    VIEW_REPLACE_DROP_DIALECT_ALLOWED,
    VIEW_REPLACE_DROP_DIALECT_ALLOWED_DEFAULT,
    VIEW_VERSION_HISTORY_SIZE,
    VIEW_VERSION_HISTORY_SIZE_DEFAULT,
    bool_property,
    int_property,
)
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
from icefloe.spec.views import (
    SUPPORTED_VIEW_FORMAT_VERSIONS,
    AddViewVersion,
    SetCurrentViewVersion,
    ViewHistoryEntry,
    ViewMetadata,
    ViewVersion,
)

__all__ = ["ViewMetadataBuilder", "new_view_metadata"]

_RESERVED = frozenset({"format-version"})


def _now_ms() -> int:
    return int(time.time() * 1000)


class ViewMetadataBuilder:
    """Applies view updates to a base ``ViewMetadata`` (or to nothing, for a new view)."""

    def __init__(self, base: ViewMetadata | None):
        self.base = base
        self.changes: list[TableUpdate] = []
        self._last_added_schema_id: int | None = None
        self._last_added_version_id: int | None = None
        self._added_version_ids: set[int] = set()
        self._history_entry: ViewHistoryEntry | None = None
        if base is None:
            self.view_uuid: str | None = None
            self.format_version = SUPPORTED_VIEW_FORMAT_VERSIONS[-1]
            self.location: str | None = None
            self.schemas: list[Schema] = []
            self.versions: list[ViewVersion] = []
            self.version_log: list[ViewHistoryEntry] = []
            self.properties: dict[str, str] = {}
            self.current_version_id: int | None = None
            self._previous: ViewVersion | None = None
        else:
            self.view_uuid = base.view_uuid
            self.format_version = base.format_version
            self.location = base.location
            self.schemas = list(base.schemas)
            self.versions = list(base.versions)
            self.version_log = list(base.version_log)
            self.properties = dict(base.properties)
            self.current_version_id = base.current_version_id
            self._previous = base.current_version()

    # ---- updates -------------------------------------------------------------------------------

    def apply_all(self, updates: Iterable[TableUpdate]) -> ViewMetadataBuilder:
        for update in updates:
            self.apply(update)
        return self

    def apply(self, update: TableUpdate) -> ViewMetadataBuilder:
        if isinstance(update, AssignUUID):
            self._assign_uuid(update)
        elif isinstance(update, UpgradeFormatVersion):
            self._upgrade_format_version(update)
        elif isinstance(update, AddSchema):
            self.add_schema(update.schema)
        elif isinstance(update, SetLocation):
            self._set_location(update)
        elif isinstance(update, SetProperties):
            self._set_properties(update)
        elif isinstance(update, RemoveProperties):
            self._remove_properties(update)
        elif isinstance(update, AddViewVersion):
            self.add_version(update.view_version)
        elif isinstance(update, SetCurrentViewVersion):
            self.set_current_version_id(update.view_version_id)
        else:
            raise ValidationError(f"update {update.action!r} does not apply to a view")
        return self

    def _assign_uuid(self, update: AssignUUID) -> None:
        if update.uuid == self.view_uuid:
            return
        if self.view_uuid is not None:
            raise ValidationException(f"cannot reassign view uuid {self.view_uuid} to {update.uuid}")
        try:
            self.view_uuid = str(uuid_module.UUID(update.uuid))
        except ValueError:
            raise ValidationError(f"view uuid {update.uuid!r} is not a UUID") from None
        self.changes.append(update)

    def _upgrade_format_version(self, update: UpgradeFormatVersion) -> None:
        version = update.format_version
        if version not in SUPPORTED_VIEW_FORMAT_VERSIONS:
            raise ValidationError(
                f"unsupported view format-version {version}; icefloe supports {list(SUPPORTED_VIEW_FORMAT_VERSIONS)}"
            )
        if version < self.format_version:
            raise ValidationException(
                f"cannot downgrade view format-version {self.format_version} to {version}"
            )
        if version != self.format_version:
            self.format_version = version
            self.changes.append(update)

    def _set_location(self, update: SetLocation) -> None:
        location = update.location.rstrip("/") or update.location
        if not location:
            raise ValidationError("view location must not be empty")
        if location != self.location:
            self.location = location
            self.changes.append(SetLocation(location))

    def _set_properties(self, update: SetProperties) -> None:
        reserved = sorted(set(update.updates) & _RESERVED)
        if reserved:
            raise ValidationError(f"view properties {reserved} are reserved")
        if not update.updates:
            return
        for key, value in update.updates.items():
            if not isinstance(value, str):
                raise ValidationError(f"view property '{key}' must be a string, not {value!r}")
        self.properties.update(update.updates)
        self.changes.append(update)

    def _remove_properties(self, update: RemoveProperties) -> None:
        if not update.removals:
            return
        for key in update.removals:
            self.properties.pop(key, None)
        self.changes.append(update)

    def add_schema(self, schema: Schema) -> int:
        """Add ``schema`` (or find an equal one); returns its id."""
        for existing in self.schemas:
            if existing.same_structure(schema):
                return existing.schema_id
        new_id = max((s.schema_id for s in self.schemas), default=-1) + 1
        added = schema.replace(schema_id=new_id) if schema.schema_id != new_id else schema
        self.schemas.append(added)
        self._last_added_schema_id = new_id
        self.changes.append(AddSchema(added))
        return new_id

    def add_version(self, version: ViewVersion) -> int:
        """Add ``version`` (or find an equal one); returns its id."""
        if version.schema_id == LAST_ADDED:
            if self._last_added_schema_id is None:
                raise ValidationException("cannot add a view version with schema -1: no schema was added")
            version = _with(version, schema_id=self._last_added_schema_id)
        new_id = version.version_id
        for existing in self.versions:
            if existing.same_definition(version):
                self._last_added_version_id = (
                    existing.version_id if existing.version_id in self._added_version_ids else None
                )
                return existing.version_id
            new_id = max(new_id, existing.version_id + 1)
        if new_id != version.version_id:
            version = _with(version, version_id=new_id)
        if version.schema_id not in {s.schema_id for s in self.schemas}:
            raise ValidationError(f"cannot add view version {new_id}: unknown schema {version.schema_id}")
        if not version.representations:
            raise ValidationError(f"view version {new_id} has no representation")
        dialects = [r.dialect.lower() for r in version.representations]
        duplicate = next((d for d in dialects if dialects.count(d) > 1), None)
        if duplicate is not None:
            raise ValidationError(
                f"Invalid view version: Cannot add multiple queries for dialect {duplicate}"
            )
        self.versions.append(version)
        self._added_version_ids.add(new_id)
        self._last_added_version_id = new_id
        recorded = (
            _with(version, schema_id=LAST_ADDED)
            if self._last_added_schema_id is not None and version.schema_id == self._last_added_schema_id
            else version
        )
        self.changes.append(AddViewVersion(recorded))
        return new_id

    def set_current_version_id(self, version_id: int) -> None:
        if version_id == LAST_ADDED:
            if self._last_added_version_id is None:
                raise ValidationException("cannot set the last added view version: no version was added")
            version_id = self._last_added_version_id
        if version_id == self.current_version_id:
            return
        version = next((v for v in self.versions if v.version_id == version_id), None)
        if version is None:
            raise ValidationError(f"cannot set current view version to unknown version {version_id}")
        self.current_version_id = version_id
        self.changes.append(
            SetCurrentViewVersion(LAST_ADDED if version_id == self._last_added_version_id else version_id)
        )
        stamp = version.timestamp_ms if version_id in self._added_version_ids else _now_ms()
        self._history_entry = ViewHistoryEntry(stamp, version_id)

    def set_current_version(self, version: ViewVersion, schema: Schema) -> int:
        """Add ``schema`` and ``version`` (with that schema) and make it current (Java's
        ``setCurrentVersion``); returns the version's id."""
        schema_id = self.add_schema(schema)
        version_id = self.add_version(_with(version, schema_id=schema_id))
        self.set_current_version_id(version_id)
        return version_id

    # ---- building ------------------------------------------------------------------------------

    def build(self) -> ViewMetadata:
        """The new metadata.

        Raises:
            ValidationError: no location, no version, a bad history size property.
            ValidationException: the new current version drops a dialect of the previous one.
        """
        if not self.location:
            raise ValidationError("invalid view: no location")
        if not self.versions or self.current_version_id is None:
            raise ValidationError("invalid view: no versions were added")
        history = list(self.version_log)
        if self._history_entry is not None:
            history.append(self._history_entry)
        by_id = {v.version_id: v for v in self.versions}
        current = by_id[self.current_version_id]
        allowed = bool_property(
            self.properties, VIEW_REPLACE_DROP_DIALECT_ALLOWED, VIEW_REPLACE_DROP_DIALECT_ALLOWED_DEFAULT
        )
        if self._previous is not None and not allowed:
            dropped = sorted(self._previous.dialects() - current.dialects())
            if dropped:
                raise ValidationException(
                    f"cannot replace the view: the new version drops dialect(s) {dropped} "
                    f"({VIEW_REPLACE_DROP_DIALECT_ALLOWED}=false)"
                )
        size = int_property(self.properties, VIEW_VERSION_HISTORY_SIZE, VIEW_VERSION_HISTORY_SIZE_DEFAULT)
        if size <= 0:
            raise ValidationError(f"view property '{VIEW_VERSION_HISTORY_SIZE}' must be positive, not {size}")
        keep = max(len(self._added_version_ids | {self.current_version_id}), size)
        versions = self.versions
        if len(versions) > keep:
            newest = sorted(by_id, reverse=True)
            kept_ids = {self.current_version_id}
            for version_id in newest:
                if len(kept_ids) >= keep:
                    break
                kept_ids.add(version_id)
            # Java's order: the current version first, then the newest.
            versions = [current] + [by_id[i] for i in newest if i in kept_ids and i != current.version_id]
            history = _cut_history(history, kept_ids)
        return ViewMetadata(
            view_uuid=self.view_uuid or str(uuid_module.uuid4()),
            format_version=self.format_version,
            location=self.location,
            schemas=tuple(self.schemas),
            current_version_id=self.current_version_id,
            versions=tuple(versions),
            version_log=tuple(history),
            properties=dict(self.properties),
        )


def _cut_history(history: list[ViewHistoryEntry], kept: set[int]) -> list[ViewHistoryEntry]:
    """The log after its last entry naming an expired version (Java's ``updateHistory``)."""
    result: list[ViewHistoryEntry] = []
    for entry in history:
        if entry.version_id in kept:
            result.append(entry)
        else:
            result.clear()
    return result


def _with(version: ViewVersion, **changes: int) -> ViewVersion:
    return ViewVersion(
        version_id=changes.get("version_id", version.version_id),
        schema_id=changes.get("schema_id", version.schema_id),
        timestamp_ms=version.timestamp_ms,
        summary=version.summary,
        representations=version.representations,
        default_namespace=version.default_namespace,
        default_catalog=version.default_catalog,
    )


def new_view_metadata(
    schema: Schema,
    version: ViewVersion,
    location: str,
    properties: dict[str, str] | None = None,
    *,
    view_uuid: str | None = None,
) -> ViewMetadata:
    """The metadata of a new view: ``version`` (with ``schema``) current, ``properties`` set."""
    builder = ViewMetadataBuilder(None)
    builder.apply(AssignUUID(view_uuid or str(uuid_module.uuid4())))
    builder.apply(SetLocation(location))
    builder.set_current_version(version, schema)
    builder.apply(SetProperties(dict(properties or {})))
    return builder.build()
