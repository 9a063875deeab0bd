"""The commit currency: metadata updates and requirements (the REST spec's ``TableUpdate`` and
``TableRequirement``).

Every change to a table is a list of updates that ``MetadataBuilder`` applies to the base
metadata, guarded by requirements that a catalog checks against the metadata it holds at the
moment of the swap. A failed requirement is a ``RequirementFailedError`` (a ``CommitFailedException``): someone else changed
what this commit depends on, and the operation may be retried on fresh metadata.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from icefloe.errors import RequirementFailedError
from icefloe.spec.partitioning import PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.spec.snapshots import Snapshot, SnapshotRefType
from icefloe.spec.sorting import SortOrder
from icefloe.spec.statistics import PartitionStatisticsFile, StatisticsFile
from icefloe.spec.table_metadata import EncryptedKey, TableMetadata

__all__ = [
    "AddEncryptionKey",
    "AddPartitionSpec",
    "AddSchema",
    "AddSnapshot",
    "AddSortOrder",
    "AssertCreate",
    "AssertCurrentSchemaId",
    "AssertDefaultSortOrderId",
    "AssertDefaultSpecId",
    "AssertLastAssignedFieldId",
    "AssertLastAssignedPartitionId",
    "AssertRefSnapshotId",
    "AssertTableUUID",
    "AssignUUID",
    "RemoveEncryptionKey",
    "RemovePartitionSpecs",
    "RemovePartitionStatistics",
    "RemoveProperties",
    "RemoveSchemas",
    "RemoveSnapshotRef",
    "RemoveSnapshots",
    "RemoveStatistics",
    "SetCurrentSchema",
    "SetDefaultSortOrder",
    "SetDefaultSpec",
    "SetLocation",
    "SetPartitionStatistics",
    "SetProperties",
    "SetSnapshotRef",
    "SetStatistics",
    "TableRequirement",
    "TableUpdate",
    "UpgradeFormatVersion",
]

#: ``SetCurrentSchema(-1)`` etc. mean "the one added earlier in this same change".
LAST_ADDED = -1


class TableUpdate:
    """Base of metadata updates; ``action`` is the REST name."""

    __slots__ = ()
    action: ClassVar[str] = ""


@dataclass(frozen=True, slots=True)
class AssignUUID(TableUpdate):
    action: ClassVar[str] = "assign-uuid"
    uuid: str


@dataclass(frozen=True, slots=True)
class UpgradeFormatVersion(TableUpdate):
    action: ClassVar[str] = "upgrade-format-version"
    format_version: int


@dataclass(frozen=True, slots=True)
class AddSchema(TableUpdate):
    action: ClassVar[str] = "add-schema"
    schema: Schema
    last_column_id: int | None = None


@dataclass(frozen=True, slots=True)
class SetCurrentSchema(TableUpdate):
    action: ClassVar[str] = "set-current-schema"
    schema_id: int = LAST_ADDED


@dataclass(frozen=True, slots=True)
class AddPartitionSpec(TableUpdate):
    action: ClassVar[str] = "add-spec"
    spec: PartitionSpec


@dataclass(frozen=True, slots=True)
class SetDefaultSpec(TableUpdate):
    action: ClassVar[str] = "set-default-spec"
    spec_id: int = LAST_ADDED


@dataclass(frozen=True, slots=True)
class AddSortOrder(TableUpdate):
    action: ClassVar[str] = "add-sort-order"
    sort_order: SortOrder


@dataclass(frozen=True, slots=True)
class SetDefaultSortOrder(TableUpdate):
    action: ClassVar[str] = "set-default-sort-order"
    sort_order_id: int = LAST_ADDED


@dataclass(frozen=True, slots=True)
class AddSnapshot(TableUpdate):
    action: ClassVar[str] = "add-snapshot"
    snapshot: Snapshot


@dataclass(frozen=True, slots=True)
class SetSnapshotRef(TableUpdate):
    action: ClassVar[str] = "set-snapshot-ref"
    ref_name: str
    snapshot_id: int
    type: SnapshotRefType = SnapshotRefType.BRANCH
    min_snapshots_to_keep: int | None = None
    max_snapshot_age_ms: int | None = None
    max_ref_age_ms: int | None = None


@dataclass(frozen=True, slots=True)
class RemoveSnapshots(TableUpdate):
    action: ClassVar[str] = "remove-snapshots"
    snapshot_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class RemoveSnapshotRef(TableUpdate):
    action: ClassVar[str] = "remove-snapshot-ref"
    ref_name: str


@dataclass(frozen=True, slots=True)
class SetLocation(TableUpdate):
    action: ClassVar[str] = "set-location"
    location: str


@dataclass(frozen=True, slots=True)
class SetProperties(TableUpdate):
    action: ClassVar[str] = "set-properties"
    updates: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RemoveProperties(TableUpdate):
    action: ClassVar[str] = "remove-properties"
    removals: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SetStatistics(TableUpdate):
    action: ClassVar[str] = "set-statistics"
    statistics: StatisticsFile


@dataclass(frozen=True, slots=True)
class RemoveStatistics(TableUpdate):
    action: ClassVar[str] = "remove-statistics"
    snapshot_id: int


@dataclass(frozen=True, slots=True)
class SetPartitionStatistics(TableUpdate):
    action: ClassVar[str] = "set-partition-statistics"
    partition_statistics: PartitionStatisticsFile


@dataclass(frozen=True, slots=True)
class RemovePartitionStatistics(TableUpdate):
    action: ClassVar[str] = "remove-partition-statistics"
    snapshot_id: int


@dataclass(frozen=True, slots=True)
class RemovePartitionSpecs(TableUpdate):
    action: ClassVar[str] = "remove-partition-specs"
    spec_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class RemoveSchemas(TableUpdate):
    action: ClassVar[str] = "remove-schemas"
    schema_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class AddEncryptionKey(TableUpdate):
    action: ClassVar[str] = "add-encryption-key"
    encryption_key: EncryptedKey


@dataclass(frozen=True, slots=True)
class RemoveEncryptionKey(TableUpdate):
    action: ClassVar[str] = "remove-encryption-key"
    key_id: str


# ---- requirements --------------------------------------------------------------------------


class TableRequirement:
    """Base of commit requirements; ``validate`` raises RequirementFailedError (a CommitFailedException) when unmet."""

    __slots__ = ()
    type: ClassVar[str] = ""

    def validate(self, base: TableMetadata | None) -> None:
        raise NotImplementedError


def _require_table(base: TableMetadata | None, what: str) -> TableMetadata:
    if base is None:
        raise RequirementFailedError(f"Requirement failed: {what}: the table does not exist")
    return base


@dataclass(frozen=True, slots=True)
class AssertCreate(TableRequirement):
    """The table must not exist yet."""

    type: ClassVar[str] = "assert-create"

    def validate(self, base: TableMetadata | None) -> None:
        if base is not None:
            raise RequirementFailedError("Requirement failed: table already exists")


@dataclass(frozen=True, slots=True)
class AssertTableUUID(TableRequirement):
    type: ClassVar[str] = "assert-table-uuid"
    uuid: str

    def validate(self, base: TableMetadata | None) -> None:
        base = _require_table(base, "table uuid")
        if base.table_uuid != self.uuid:
            # Java's words (its order too: the table's uuid first).
            raise RequirementFailedError(
                f"Requirement failed: UUID does not match: expected {base.table_uuid} != {self.uuid}"
            )


@dataclass(frozen=True, slots=True)
class AssertRefSnapshotId(TableRequirement):
    """The branch or tag must point to ``snapshot_id`` (None: must not exist)."""

    type: ClassVar[str] = "assert-ref-snapshot-id"
    ref: str
    snapshot_id: int | None

    def validate(self, base: TableMetadata | None) -> None:
        base = _require_table(base, f"ref {self.ref}")
        current = base.refs.get(self.ref)
        if current is not None:
            kind = "branch" if current.is_branch else "tag"
            if self.snapshot_id is None:
                raise RequirementFailedError(
                    f"Requirement failed: {kind} {self.ref} was created concurrently"
                )
            if current.snapshot_id != self.snapshot_id:
                raise RequirementFailedError(
                    f"Requirement failed: {kind} {self.ref} has changed: "
                    f"expected id {self.snapshot_id} != {current.snapshot_id}"
                )
        elif self.snapshot_id is not None:
            raise RequirementFailedError(
                f"Requirement failed: branch or tag {self.ref} is missing, expected {self.snapshot_id}"
            )


@dataclass(frozen=True, slots=True)
class AssertLastAssignedFieldId(TableRequirement):
    type: ClassVar[str] = "assert-last-assigned-field-id"
    last_assigned_field_id: int

    def validate(self, base: TableMetadata | None) -> None:
        base = _require_table(base, "last assigned field id")
        if base.last_column_id != self.last_assigned_field_id:
            raise RequirementFailedError(
                f"Requirement failed: last assigned field id changed: "
                f"expected id {self.last_assigned_field_id} != {base.last_column_id}"
            )


@dataclass(frozen=True, slots=True)
class AssertCurrentSchemaId(TableRequirement):
    type: ClassVar[str] = "assert-current-schema-id"
    current_schema_id: int

    def validate(self, base: TableMetadata | None) -> None:
        base = _require_table(base, "current schema id")
        if base.current_schema_id != self.current_schema_id:
            raise RequirementFailedError(
                f"Requirement failed: current schema changed: "
                f"expected id {self.current_schema_id} != {base.current_schema_id}"
            )


@dataclass(frozen=True, slots=True)
class AssertLastAssignedPartitionId(TableRequirement):
    type: ClassVar[str] = "assert-last-assigned-partition-id"
    last_assigned_partition_id: int

    def validate(self, base: TableMetadata | None) -> None:
        base = _require_table(base, "last assigned partition id")
        if base.last_partition_id != self.last_assigned_partition_id:
            raise RequirementFailedError(
                f"Requirement failed: last assigned partition id changed: "
                f"expected id {self.last_assigned_partition_id} != {base.last_partition_id}"
            )


@dataclass(frozen=True, slots=True)
class AssertDefaultSpecId(TableRequirement):
    type: ClassVar[str] = "assert-default-spec-id"
    default_spec_id: int

    def validate(self, base: TableMetadata | None) -> None:
        base = _require_table(base, "default spec id")
        if base.default_spec_id != self.default_spec_id:
            raise RequirementFailedError(
                f"Requirement failed: default partition spec changed: "
                f"expected id {self.default_spec_id} != {base.default_spec_id}"
            )


@dataclass(frozen=True, slots=True)
class AssertDefaultSortOrderId(TableRequirement):
    type: ClassVar[str] = "assert-default-sort-order-id"
    default_sort_order_id: int

    def validate(self, base: TableMetadata | None) -> None:
        base = _require_table(base, "default sort order id")
        if base.default_sort_order_id != self.default_sort_order_id:
            raise RequirementFailedError(
                f"Requirement failed: default sort order changed: "
                f"expected id {self.default_sort_order_id} != {base.default_sort_order_id}"
            )
