"""TableMetadata: the content of a table's metadata JSON file (spec: "Table Metadata").

Immutable. New versions come from ``MetadataBuilder`` (``icefloe.spec.builder``), the one
place where updates turn into metadata.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from icefloe._util.times import format_epoch_ms
from icefloe.errors import InvalidMetadataError, NoSuchSnapshotError, ValidationError
from icefloe.spec.partitioning import PartitionSpec
from icefloe.spec.properties import bool_property, int_property
from icefloe.spec.schema import Schema
from icefloe.spec.snapshots import MAIN_BRANCH, HistoryEntry, MetadataLogEntry, Snapshot, SnapshotRef
from icefloe.spec.sorting import UNSORTED_SORT_ORDER, SortOrder
from icefloe.spec.statistics import PartitionStatisticsFile, StatisticsFile

__all__ = ["SUPPORTED_FORMAT_VERSIONS", "EncryptedKey", "TableMetadata"]

SUPPORTED_FORMAT_VERSIONS = (1, 2, 3)
#: Property names that live in metadata fields rather than in ``properties``.
RESERVED_PROPERTIES = frozenset(
    {
        "format-version",
        "uuid",
        "snapshot-count",
        "current-snapshot-id",
        "current-snapshot-summary",
        "current-snapshot-timestamp-ms",
        "current-schema",
        "default-partition-spec",
        "default-sort-order",
    }
)


@dataclass(frozen=True, slots=True)
class EncryptedKey:
    """An entry of the v3 ``encryption-keys``: a key encryption key wrapped by the table's master
    key in the KMS, or a manifest list's key metadata encrypted by such a key (see
    ``icefloe.io.encryption``)."""

    key_id: str
    encrypted_key_metadata: str
    encrypted_by_id: str | None = None
    properties: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TableMetadata:
    """Every field of the table metadata JSON, in snake_case.

    ``current_snapshot_id`` is None when the table has no current snapshot (JSON -1 or absent).
    """

    format_version: int
    table_uuid: str
    location: str
    last_sequence_number: int
    last_updated_ms: int
    last_column_id: int
    schemas: tuple[Schema, ...]
    current_schema_id: int
    partition_specs: tuple[PartitionSpec, ...]
    default_spec_id: int
    last_partition_id: int
    properties: Mapping[str, str] = field(default_factory=dict)
    current_snapshot_id: int | None = None
    snapshots: tuple[Snapshot, ...] = ()
    snapshot_log: tuple[HistoryEntry, ...] = ()
    metadata_log: tuple[MetadataLogEntry, ...] = ()
    sort_orders: tuple[SortOrder, ...] = (UNSORTED_SORT_ORDER,)
    default_sort_order_id: int = 0
    refs: Mapping[str, SnapshotRef] = field(default_factory=dict)
    statistics: tuple[StatisticsFile, ...] = ()
    partition_statistics: tuple[PartitionStatisticsFile, ...] = ()
    next_row_id: int | None = None
    encryption_keys: tuple[EncryptedKey, ...] = ()
    _snapshots_by_id: dict[int, Snapshot] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.format_version not in SUPPORTED_FORMAT_VERSIONS:
            raise ValidationError(
                f"unsupported format-version {self.format_version}; icefloe supports {SUPPORTED_FORMAT_VERSIONS}"
            )

    # ---- schemas, specs, sort orders ---------------------------------------------------------

    def schema(self) -> Schema:
        """The current schema."""
        return self.schema_by_id(self.current_schema_id)

    def schema_by_id(self, schema_id: int) -> Schema:
        for schema in self.schemas:
            if schema.schema_id == schema_id:
                return schema
        raise ValidationError(f"table has no schema with id {schema_id}")

    def schemas_by_id(self) -> dict[int, Schema]:
        return {s.schema_id: s for s in self.schemas}

    def spec(self) -> PartitionSpec:
        """The default partition spec (used for new data)."""
        return self.spec_by_id(self.default_spec_id)

    def spec_by_id(self, spec_id: int) -> PartitionSpec:
        for spec in self.partition_specs:
            if spec.spec_id == spec_id:
                return spec
        raise ValidationError(f"table has no partition spec with id {spec_id}")

    def specs_by_id(self) -> dict[int, PartitionSpec]:
        return {s.spec_id: s for s in self.partition_specs}

    def sort_order(self) -> SortOrder:
        return self.sort_order_by_id(self.default_sort_order_id)

    def sort_order_by_id(self, order_id: int) -> SortOrder:
        for order in self.sort_orders:
            if order.order_id == order_id:
                return order
        if order_id == 0:
            return UNSORTED_SORT_ORDER
        raise ValidationError(f"table has no sort order with id {order_id}")

    def sort_orders_by_id(self) -> dict[int, SortOrder]:
        return {o.order_id: o for o in self.sort_orders}

    # ---- snapshots ---------------------------------------------------------------------------

    def _by_id(self) -> dict[int, Snapshot]:
        if self._snapshots_by_id is None:
            object.__setattr__(self, "_snapshots_by_id", {s.snapshot_id: s for s in self.snapshots})
        return self._snapshots_by_id  # type: ignore[return-value]

    def snapshot_by_id(self, snapshot_id: int) -> Snapshot | None:
        return self._by_id().get(snapshot_id)

    def snapshot_by_name(self, name: str) -> Snapshot | None:
        """The snapshot a branch or tag points to, or None."""
        ref = self.refs.get(name)
        return None if ref is None else self.snapshot_by_id(ref.snapshot_id)

    def current_snapshot(self) -> Snapshot | None:
        if self.current_snapshot_id is None:
            return None
        return self.snapshot_by_id(self.current_snapshot_id)

    def snapshot(self, id_or_ref: int | str, *, table_name: str | None = None) -> Snapshot:
        """The snapshot with this id, or the one this branch/tag points to.

        Args:
            table_name: the table's name for the message (default: its location).

        Raises:
            NoSuchSnapshotError: naming the table and the id or ref.
        """
        found = (
            self.snapshot_by_id(id_or_ref) if isinstance(id_or_ref, int) else self.snapshot_by_name(id_or_ref)
        )
        if found is None:
            what = (
                f"snapshot id {id_or_ref}" if isinstance(id_or_ref, int) else f"branch or tag '{id_or_ref}'"
            )
            raise NoSuchSnapshotError(f"{self._describe(table_name)} has no {what}")
        return found

    def snapshot_as_of(self, timestamp_ms: int, *, table_name: str | None = None) -> Snapshot:
        """The snapshot that was current at ``timestamp_ms`` (epoch milliseconds, from the
        snapshot log).

        Args:
            table_name: the table's name for the message (default: its location).

        Raises:
            NoSuchSnapshotError: when the table had no snapshot at that time; the message shows
                the time, and the first time there was one, as UTC timestamps.
        """
        chosen: int | None = None
        for entry in self.snapshot_log:
            if entry.timestamp_ms <= timestamp_ms:
                chosen = entry.snapshot_id
        if chosen is None or self.snapshot_by_id(chosen) is None:
            known = [
                e.timestamp_ms for e in self.snapshot_log if self.snapshot_by_id(e.snapshot_id) is not None
            ]
            if chosen is not None:
                since = f"; snapshot {chosen}, current then, was expired"
            elif known:
                since = f"; its history starts at {format_epoch_ms(min(known))}"
            else:
                since = "; it has no snapshot history"
            raise NoSuchSnapshotError(
                f"{self._describe(table_name)} had no snapshot at {format_epoch_ms(timestamp_ms)}{since}"
            )
        return self._by_id()[chosen]

    def _describe(self, table_name: str | None) -> str:
        return f"table {table_name}" if table_name else f"table at {self.location}"

    def ancestors_of(self, snapshot_id: int | None) -> list[Snapshot]:
        """The snapshot and its ancestors, newest first (stops where history was expired)."""
        result: list[Snapshot] = []
        current = self.snapshot_by_id(snapshot_id) if snapshot_id is not None else None
        while current is not None:
            result.append(current)
            if current.parent_snapshot_id is None:
                break
            current = self.snapshot_by_id(current.parent_snapshot_id)
        return result

    def schema_for_snapshot(self, snapshot: Snapshot) -> Schema:
        """The schema a snapshot was written with (the current one if it did not record it,
        as snapshots written before schema ids existed do).

        Raises:
            InvalidMetadataError: the snapshot names a schema the metadata does not have.
        """
        if snapshot.schema_id is None:
            return self.schema()
        schema = self.schemas_by_id().get(snapshot.schema_id)
        if schema is None:
            raise InvalidMetadataError(
                f"snapshot {snapshot.snapshot_id} was written with schema {snapshot.schema_id}, "
                "which the table metadata does not have",
                field="snapshots[].schema-id",
            )
        return schema

    @property
    def main_ref(self) -> SnapshotRef | None:
        return self.refs.get(MAIN_BRANCH)

    def property(self, name: str, default: Any = None) -> Any:
        return self.properties.get(name, default)

    def int_property(self, name: str, default: int) -> int:
        return int_property(self.properties, name, default)

    def bool_property(self, name: str, default: bool) -> bool:
        return bool_property(self.properties, name, default)
