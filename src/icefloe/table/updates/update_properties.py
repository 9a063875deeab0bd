"""UpdateProperties: set and remove table properties (Java's ``UpdateProperties``).

``format-version`` is not a stored property: setting it upgrades the table's format version
(never downgrades). Other reserved names (``uuid``, ``snapshot-count``, ...) are refused.
Setting and removing one key in the same update is refused (as Java). A metrics mode for a
column (``write.metadata.metrics.column.<name>``) must name a column of the current schema
(as Java's ``MetricsConfig.validate``). Conflicts resolve by re-applying the same sets and
removals to the fresh metadata.
"""

from __future__ import annotations

from icefloe.errors import ValidationError, ValidationException
from icefloe.spec.properties import DEFAULT_FILE_FORMAT, METRICS_MODE_COLUMN_CONF_PREFIX
from icefloe.spec.table_metadata import RESERVED_PROPERTIES, SUPPORTED_FORMAT_VERSIONS, TableMetadata
from icefloe.spec.updates import RemoveProperties, SetProperties, TableUpdate, UpgradeFormatVersion
from icefloe.table.operation import Changes, PendingUpdate, TableOperations

__all__ = ["UpdateProperties"]

FORMAT_VERSION = "format-version"
#: The data file formats ``write.format.default`` may name (Java's FileFormat data formats).
DATA_FILE_FORMATS = ("parquet", "avro", "orc")


class UpdateProperties(PendingUpdate[dict[str, str]]):
    """``table.update_properties().set("k", "v").remove("x").commit()``."""

    def __init__(self, transaction: TableOperations, *, autocommit: bool):
        super().__init__(transaction, autocommit=autocommit)
        self._updates: dict[str, str] = {}
        self._removals: set[str] = set()
        self._format_version: int | None = None

    def set(self, key: str, value: str) -> UpdateProperties:
        self._check_mutable()
        if not isinstance(key, str) or not key:
            raise ValidationError(f"property name must be a non-empty string, not {key!r}")
        if not isinstance(value, str):
            raise ValidationError(f"property '{key}': value must be a string, not {value!r}")
        if key in self._removals:
            raise ValidationError(f"cannot set and remove property '{key}' in one update")
        if key == FORMAT_VERSION:
            self._format_version = _parse_version(value)
            return self
        if key in RESERVED_PROPERTIES:
            raise ValidationError(f"property '{key}' is reserved and cannot be set")
        self._updates[key] = value
        return self

    def remove(self, key: str) -> UpdateProperties:
        self._check_mutable()
        if key in self._updates:
            raise ValidationError(f"cannot set and remove property '{key}' in one update")
        if key in RESERVED_PROPERTIES:
            raise ValidationError(f"property '{key}' is reserved and cannot be removed")
        self._removals.add(key)
        return self

    def default_format(self, file_format: str) -> UpdateProperties:
        """Set ``write.format.default``: ``"parquet"``, ``"avro"`` or ``"orc"`` (any case; an
        enum member with such a ``value`` or ``name`` works too).

        Raises:
            ValidationError: not a data file format.
        """
        name = getattr(file_format, "value", getattr(file_format, "name", file_format))
        if not isinstance(name, str) or name.lower() not in DATA_FILE_FORMATS:
            raise ValidationError(
                f"invalid default file format {file_format!r}; expected one of {list(DATA_FILE_FORMATS)}"
            )
        return self.set(DEFAULT_FILE_FORMAT, name.lower())

    def _produce(self, base: TableMetadata) -> Changes:
        schema = base.schema()
        for key in self._updates:
            # Only the keys this update sets: a stale key another writer left must not block it.
            if key.startswith(METRICS_MODE_COLUMN_CONF_PREFIX):
                column = key[len(METRICS_MODE_COLUMN_CONF_PREFIX) :]
                if schema.find_field(column) is None:
                    raise ValidationException(
                        f"invalid metrics config: could not find column '{column}' from table property "
                        f"'{key}' in schema {schema.schema_id} (columns: {schema.column_names})"
                    )
        updates: list[TableUpdate] = []
        if self._format_version is not None and self._format_version != base.format_version:
            if self._format_version < base.format_version:
                raise ValidationError(
                    f"cannot downgrade format-version from {base.format_version} to {self._format_version}"
                )
            updates.append(UpgradeFormatVersion(self._format_version))
        if self._updates:
            updates.append(SetProperties(dict(self._updates)))
        if self._removals:
            updates.append(RemoveProperties(tuple(sorted(self._removals))))
        return Changes(updates)

    def _result(self, base: TableMetadata, changes: Changes) -> dict[str, str]:
        return dict(changes.apply_to(base).properties)


def _parse_version(value: str) -> int:
    try:
        version = int(value)
    except ValueError:
        raise ValidationError(f"format-version must be an integer, not {value!r}") from None
    if version not in SUPPORTED_FORMAT_VERSIONS:
        raise ValidationError(
            f"unsupported format-version {version}; icefloe supports {list(SUPPORTED_FORMAT_VERSIONS)}"
        )
    return version
