"""REST TableUpdate / TableRequirement JSON: every class round-trips; field names follow the OpenAPI
spec (and Java's MetadataUpdateParser); malformed requests name the field."""

from __future__ import annotations

from typing import Any

import pytest

from icefloe.errors import InvalidMetadataError, ValidationError
from icefloe.serde import requirement_from_json, requirement_to_json, update_from_json, update_to_json
from icefloe.spec import updates as updates_module
from icefloe.spec.partitioning import PartitionField, PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.spec.snapshots import Snapshot, SnapshotRefType
from icefloe.spec.sorting import SortDirection, SortField, SortOrder
from icefloe.spec.statistics import BlobMetadata, PartitionStatisticsFile, StatisticsFile
from icefloe.spec.table_metadata import EncryptedKey
from icefloe.spec.transforms import parse_transform
from icefloe.spec.types import LongType, NestedField, StringType
from icefloe.spec.updates import (
    AddEncryptionKey,
    AddPartitionSpec,
    AddSchema,
    AddSnapshot,
    AddSortOrder,
    AssertCreate,
    AssertCurrentSchemaId,
    AssertDefaultSortOrderId,
    AssertDefaultSpecId,
    AssertLastAssignedFieldId,
    AssertLastAssignedPartitionId,
    AssertRefSnapshotId,
    AssertTableUUID,
    AssignUUID,
    RemoveEncryptionKey,
    RemovePartitionSpecs,
    RemovePartitionStatistics,
    RemoveProperties,
    RemoveSchemas,
    RemoveSnapshotRef,
    RemoveSnapshots,
    RemoveStatistics,
    SetCurrentSchema,
    SetDefaultSortOrder,
    SetDefaultSpec,
    SetLocation,
    SetPartitionStatistics,
    SetProperties,
    SetSnapshotRef,
    SetStatistics,
    TableRequirement,
    TableUpdate,
    UpgradeFormatVersion,
)

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True), NestedField(2, "s", StringType()), schema_id=1
)
SPEC = PartitionSpec((PartitionField(1, 1000, parse_transform("bucket[8]"), "id_bucket"),), spec_id=1)
ORDER = SortOrder((SortField(2, parse_transform("identity"), SortDirection.DESC),), order_id=1)
SNAPSHOT = Snapshot(
    snapshot_id=9,
    timestamp_ms=1700000000000,
    manifest_list="s3://b/t/metadata/snap-9.avro",
    parent_snapshot_id=8,
    sequence_number=4,
    summary={"operation": "append", "added-records": "10"},
    schema_id=1,
)
STATS = StatisticsFile(9, "s3://b/t/metadata/9.stats", 100, 50, (BlobMetadata("t", 9, 4, (1,)),))

UPDATES: list[TableUpdate] = [
    AssignUUID("9c12d441-03fe-4693-9a96-a0705ddf69c1"),
    UpgradeFormatVersion(3),
    AddSchema(SCHEMA, last_column_id=2),
    AddSchema(SCHEMA),
    SetCurrentSchema(-1),
    SetCurrentSchema(1),
    AddPartitionSpec(SPEC),
    SetDefaultSpec(1),
    AddSortOrder(ORDER),
    SetDefaultSortOrder(-1),
    AddSnapshot(SNAPSHOT),
    SetSnapshotRef("main", 9),
    SetSnapshotRef("audit", 8, SnapshotRefType.BRANCH, 3, 86_400_000, 604_800_000),
    SetSnapshotRef("v1", 8, SnapshotRefType.TAG, max_ref_age_ms=1000),
    RemoveSnapshots((7, 8)),
    RemoveSnapshotRef("audit"),
    SetLocation("s3://b/new"),
    SetProperties({"a": "1", "b": "x"}),
    RemoveProperties(("a", "c")),
    SetStatistics(STATS),
    RemoveStatistics(9),
    SetPartitionStatistics(PartitionStatisticsFile(9, "s3://b/p.parquet", 10)),
    RemovePartitionStatistics(9),
    RemovePartitionSpecs((0, 2)),
    RemoveSchemas((0,)),
    AddEncryptionKey(EncryptedKey("k1", "c2VjcmV0", "kek", {"p": "v"})),
    RemoveEncryptionKey("k1"),
]

REQUIREMENTS: list[TableRequirement] = [
    AssertCreate(),
    AssertTableUUID("9c12d441-03fe-4693-9a96-a0705ddf69c1"),
    AssertRefSnapshotId("main", 9),
    AssertRefSnapshotId("new-branch", None),
    AssertLastAssignedFieldId(2),
    AssertCurrentSchemaId(1),
    AssertLastAssignedPartitionId(1000),
    AssertDefaultSpecId(1),
    AssertDefaultSortOrderId(0),
]


def _classes(base: type) -> set[type]:
    return {
        obj
        for name in updates_module.__all__
        if isinstance(obj := getattr(updates_module, name), type)
        and issubclass(obj, base)
        and obj is not base
    }


def test_every_update_and_requirement_class_is_covered() -> None:
    assert {type(u) for u in UPDATES} == _classes(TableUpdate)
    assert {type(r) for r in REQUIREMENTS} == _classes(TableRequirement)


@pytest.mark.parametrize("update", UPDATES, ids=lambda u: type(u).__name__)
def test_update_round_trip(update: TableUpdate) -> None:
    written = update_to_json(update)
    assert next(iter(written)) == "action" and written["action"] == update.action
    assert update_from_json(written) == update


@pytest.mark.parametrize("requirement", REQUIREMENTS, ids=lambda r: f"{type(r).__name__}")
def test_requirement_round_trip(requirement: TableRequirement) -> None:
    written = requirement_to_json(requirement)
    assert written["type"] == requirement.type
    assert requirement_from_json(written) == requirement


@pytest.mark.parametrize(
    ("update", "expected"),
    [
        (AssignUUID("u"), {"action": "assign-uuid", "uuid": "u"}),
        (UpgradeFormatVersion(2), {"action": "upgrade-format-version", "format-version": 2}),
        (SetCurrentSchema(-1), {"action": "set-current-schema", "schema-id": -1}),
        (SetDefaultSpec(3), {"action": "set-default-spec", "spec-id": 3}),
        (SetDefaultSortOrder(1), {"action": "set-default-sort-order", "sort-order-id": 1}),
        (
            SetSnapshotRef("audit", 8, SnapshotRefType.BRANCH, 3),
            {
                "action": "set-snapshot-ref",
                "ref-name": "audit",
                "snapshot-id": 8,
                "type": "branch",
                "min-snapshots-to-keep": 3,
            },
        ),
        (RemoveSnapshots((7, 8)), {"action": "remove-snapshots", "snapshot-ids": [7, 8]}),
        (RemoveSnapshotRef("x"), {"action": "remove-snapshot-ref", "ref-name": "x"}),
        (SetLocation("s3://x"), {"action": "set-location", "location": "s3://x"}),
        (SetProperties({"a": "1"}), {"action": "set-properties", "updates": {"a": "1"}}),
        (RemoveProperties(("a",)), {"action": "remove-properties", "removals": ["a"]}),
        (RemoveStatistics(9), {"action": "remove-statistics", "snapshot-id": 9}),
        (RemovePartitionStatistics(9), {"action": "remove-partition-statistics", "snapshot-id": 9}),
        (RemovePartitionSpecs((1,)), {"action": "remove-partition-specs", "spec-ids": [1]}),
        (RemoveSchemas((1,)), {"action": "remove-schemas", "schema-ids": [1]}),
        (RemoveEncryptionKey("k"), {"action": "remove-encryption-key", "key-id": "k"}),
        (
            AddEncryptionKey(EncryptedKey("k", "eA==")),
            {
                "action": "add-encryption-key",
                "encryption-key": {"key-id": "k", "encrypted-key-metadata": "eA=="},
            },
        ),
    ],
    ids=lambda v: getattr(v, "action", ""),
)
def test_update_field_names(update: TableUpdate, expected: dict[str, Any]) -> None:
    assert update_to_json(update) == expected


def test_nested_objects_use_the_metadata_forms() -> None:
    add_schema = update_to_json(AddSchema(SCHEMA, last_column_id=2))
    assert add_schema["schema"]["schema-id"] == 1 and add_schema["last-column-id"] == 2
    assert "last-column-id" not in update_to_json(AddSchema(SCHEMA))
    assert update_to_json(AddPartitionSpec(SPEC))["spec"] == {
        "spec-id": 1,
        "fields": [{"name": "id_bucket", "transform": "bucket[8]", "source-id": 1, "field-id": 1000}],
    }
    assert update_to_json(AddSortOrder(ORDER))["sort-order"]["fields"][0]["direction"] == "desc"
    assert update_to_json(AddSnapshot(SNAPSHOT))["snapshot"]["sequence-number"] == 4
    set_stats = update_to_json(SetStatistics(STATS))
    assert (
        set_stats["snapshot-id"] == 9 and set_stats["statistics"]["statistics-path"] == STATS.statistics_path
    )


def test_requirement_field_names() -> None:
    assert requirement_to_json(AssertRefSnapshotId("main", None)) == {
        "type": "assert-ref-snapshot-id",
        "ref": "main",
        "snapshot-id": None,
    }
    assert requirement_to_json(AssertLastAssignedPartitionId(1000)) == {
        "type": "assert-last-assigned-partition-id",
        "last-assigned-partition-id": 1000,
    }
    assert requirement_to_json(AssertCreate()) == {"type": "assert-create"}
    assert requirement_from_json({"type": "assert-ref-snapshot-id", "ref": "b"}) == AssertRefSnapshotId(
        "b", None
    )


def test_legacy_java_spellings_are_read() -> None:
    assert update_from_json({"action": "set-properties", "updated": {"a": "1"}}) == SetProperties({"a": "1"})
    assert update_from_json({"action": "remove-properties", "removed": ["a"]}) == RemoveProperties(("a",))


def test_add_spec_without_spec_id() -> None:
    # The OpenAPI spec makes spec-id read-only: clients may omit it.
    update = update_from_json(
        {
            "action": "add-spec",
            "spec": {
                "fields": [{"name": "id_bucket", "transform": "bucket[8]", "source-id": 1, "field-id": 1000}]
            },
        }
    )
    assert isinstance(update, AddPartitionSpec) and update.spec.fields == SPEC.fields


@pytest.mark.parametrize(
    ("obj", "field"),
    [
        ({"uuid": "x"}, "action"),
        ({"action": "drop-table"}, "action"),
        ({"action": 5}, "action"),
        ({"action": "assign-uuid"}, "uuid"),
        (
            {"action": "add-schema", "schema": {"type": "struct", "fields": [{"id": 1}]}},
            "schema.fields[0].name",
        ),
        ({"action": "add-snapshot"}, "snapshot"),
        ({"action": "set-snapshot-ref", "ref-name": "b", "snapshot-id": 1, "type": "leaf"}, "type"),
        ({"action": "remove-snapshots", "snapshot-ids": [1, "2"]}, "snapshot-ids[1]"),
        ({"action": "set-properties", "updates": {"a": 1}}, "updates.a"),
        ({"action": "set-statistics", "snapshot-id": 1}, "statistics"),
        ([], ""),
    ],
)
def test_malformed_updates(obj: Any, field: str) -> None:
    with pytest.raises(InvalidMetadataError) as info:
        update_from_json(obj, location="POST /v1/namespaces/db/tables/t")
    assert (info.value.field or "") == field
    assert "POST /v1/namespaces/db/tables/t" in str(info.value)


@pytest.mark.parametrize(
    ("obj", "field"),
    [
        ({}, "type"),
        ({"type": "assert-nothing"}, "type"),
        ({"type": "assert-table-uuid"}, "uuid"),
        ({"type": "assert-current-schema-id", "current-schema-id": "1"}, "current-schema-id"),
        ({"type": "assert-ref-snapshot-id", "snapshot-id": 1}, "ref"),
    ],
)
def test_malformed_requirements(obj: Any, field: str) -> None:
    with pytest.raises(InvalidMetadataError) as info:
        requirement_from_json(obj)
    assert info.value.field == field


def test_unknown_classes_are_refused_when_writing() -> None:
    class Custom(TableUpdate):
        action = "custom"

    class CustomRequirement(TableRequirement):
        type = "assert-custom"

    with pytest.raises(ValidationError):
        update_to_json(Custom())
    with pytest.raises(ValidationError):
        requirement_to_json(CustomRequirement())
