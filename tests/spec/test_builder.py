import pytest

from icefloe.errors import CommitFailedException, ValidationError, ValidationException
from icefloe.spec.builder import MetadataBuilder, new_table_metadata
from icefloe.spec.partitioning import build_spec
from icefloe.spec.schema import Schema
from icefloe.spec.snapshots import Snapshot, SnapshotRefType
from icefloe.spec.sorting import build_sort_order
from icefloe.spec.types import DateType, LongType, NestedField, StringType, TimestampNanoType
from icefloe.spec.updates import (
    AddPartitionSpec,
    AddSchema,
    AddSnapshot,
    AssertCreate,
    AssertCurrentSchemaId,
    AssertRefSnapshotId,
    AssertTableUUID,
    RemoveSnapshotRef,
    RemoveSnapshots,
    SetCurrentSchema,
    SetDefaultSpec,
    SetProperties,
    SetSnapshotRef,
    UpgradeFormatVersion,
)

SCHEMA = Schema(
    NestedField(7, "id", LongType(), required=True),
    NestedField(8, "country", StringType()),
    NestedField(9, "day", DateType()),
)


def _table(version: int = 2, **props: str):
    spec = build_spec(SCHEMA, ["country"])
    order = build_sort_order(SCHEMA, ["id"])
    return new_table_metadata(SCHEMA, spec, order, "/wh/db/t/", {"format-version": str(version), **props})


def _snap(snapshot_id: int, parent: int | None, seq: int, ts: int, first_row_id=None, added_rows=None):
    return Snapshot(
        snapshot_id,
        ts,
        f"/m{snapshot_id}.avro",
        parent,
        seq,
        {"operation": "append"},
        0,
        first_row_id=first_row_id,
        added_rows=added_rows,
    )


def _commit(md, *snaps):
    builder = MetadataBuilder(
        md, metadata_location=f"/wh/db/t/metadata/v{len(md.metadata_log) + 1}.metadata.json"
    )
    for snap in snaps:
        builder.apply(AddSnapshot(snap)).apply(SetSnapshotRef("main", snap.snapshot_id))
    return builder.build()


def test_new_table_assigns_fresh_ids_and_strips_format_version() -> None:
    md = _table(1, owner="me")
    assert md.format_version == 1
    assert [f.field_id for f in md.schema().fields] == [1, 2, 3]
    assert md.spec().fields[0].source_id == 2 and md.spec().fields[0].field_id == 1000
    assert md.sort_order().fields[0].source_id == 1 and md.sort_order().order_id == 1
    assert md.properties == {
        "write.parquet.compression-codec": "zstd",
        "owner": "me",
    }  # Java's default for new tables
    assert md.location == "/wh/db/t"
    assert md.last_column_id == 3 and md.last_partition_id == 1000
    assert md.current_snapshot() is None and md.next_row_id is None


def test_v3_types_need_v3() -> None:
    schema = Schema(NestedField(1, "ts", TimestampNanoType()))
    with pytest.raises(ValidationError, match="format-version 3"):
        new_table_metadata(schema, build_spec(schema, None), build_sort_order(schema, None), "/t", {})
    md = new_table_metadata(
        schema, build_spec(schema, None), build_sort_order(schema, None), "/t", {"format-version": "3"}
    )
    assert md.next_row_id == 0


def test_snapshot_log_and_metadata_log() -> None:
    md = _commit(_table(), _snap(1, None, 1, 1000))
    md = _commit(md, _snap(2, 1, 2, 2000))
    assert [e.snapshot_id for e in md.snapshot_log] == [1, 2]
    assert [e.metadata_file for e in md.metadata_log] == [
        "/wh/db/t/metadata/v1.metadata.json",
        "/wh/db/t/metadata/v2.metadata.json",
    ]
    assert md.last_sequence_number == 2 and md.last_updated_ms == 2000
    assert md.snapshot_as_of(1500).snapshot_id == 1


def test_intermediate_snapshots_of_one_commit_leave_no_log_entry() -> None:
    md = _commit(_table(), _snap(1, None, 1, 1000), _snap(2, 1, 2, 1001))
    assert [e.snapshot_id for e in md.snapshot_log] == [2]
    assert md.current_snapshot_id == 2


def test_removing_a_snapshot_drops_the_history_before_it() -> None:
    md = _table()
    for i in range(1, 4):
        md = _commit(md, _snap(i, i - 1 or None, i, 1000 * i))
    md = MetadataBuilder(md).apply(RemoveSnapshots((2,))).build()
    assert [e.snapshot_id for e in md.snapshot_log] == [3]
    assert {s.snapshot_id for s in md.snapshots} == {1, 3}
    with pytest.raises(ValidationException, match="current snapshot"):
        MetadataBuilder(md).apply(RemoveSnapshots((3,))).build()


def test_previous_versions_max_trims_the_metadata_log() -> None:
    md = _table(**{"write.metadata.previous-versions-max": "2"})
    for i in range(1, 6):
        md = _commit(md, _snap(i, i - 1 or None, i, 1000 * i))
    assert len(md.metadata_log) == 2


def test_sequence_numbers_must_grow_in_v2() -> None:
    md = _commit(_table(), _snap(1, None, 1, 1000))
    with pytest.raises(ValidationException, match="sequence number"):
        _commit(md, _snap(2, 1, 1, 2000))


def test_row_lineage_in_v3() -> None:
    md = _commit(_table(3), _snap(1, None, 1, 1000, first_row_id=0, added_rows=10))
    assert md.next_row_id == 10
    with pytest.raises(ValidationException, match="behind"):
        _commit(md, _snap(2, 1, 2, 2000, first_row_id=5, added_rows=1))
    with pytest.raises(ValidationException, match="first-row-id"):
        _commit(md, _snap(3, 1, 2, 2000))


def test_schemas_and_specs_are_reused_when_equal() -> None:
    md = _table()
    evolved = md.schema().replace(fields=[*md.schema().fields, NestedField(4, "extra", LongType())])
    md2 = MetadataBuilder(md).apply(AddSchema(evolved)).apply(SetCurrentSchema()).build()
    assert md2.current_schema_id == 1 and md2.last_column_id == 4
    md3 = MetadataBuilder(md2).apply(AddSchema(md.schema())).apply(SetCurrentSchema()).build()
    assert md3.current_schema_id == 0 and len(md3.schemas) == 2
    same_spec = MetadataBuilder(md).apply(AddPartitionSpec(md.spec())).apply(SetDefaultSpec()).build()
    assert same_spec is md  # nothing changed


def test_reserved_properties_and_upgrades() -> None:
    md = _table(1)
    with pytest.raises(ValidationError, match="reserved"):
        MetadataBuilder(md).apply(SetProperties({"format-version": "2"}))
    upgraded = MetadataBuilder(md).apply(UpgradeFormatVersion(3)).build()
    assert upgraded.format_version == 3 and upgraded.next_row_id == 0
    with pytest.raises(ValidationException, match="downgrade"):
        MetadataBuilder(upgraded).apply(UpgradeFormatVersion(2))


def test_refs_tags_and_removal() -> None:
    md = _commit(_table(), _snap(1, None, 1, 1000))
    md = MetadataBuilder(md).apply(SetSnapshotRef("v1", 1, SnapshotRefType.TAG)).build()
    assert md.refs["v1"].is_tag and md.snapshot("v1").snapshot_id == 1
    md = MetadataBuilder(md).apply(RemoveSnapshotRef("main")).build()
    assert md.current_snapshot() is None
    with pytest.raises(ValidationException, match="unknown snapshot"):
        MetadataBuilder(md).apply(SetSnapshotRef("b", 99))


def test_requirements() -> None:
    md = _commit(_table(), _snap(1, None, 1, 1000))
    AssertTableUUID(md.table_uuid).validate(md)
    AssertRefSnapshotId("main", 1).validate(md)
    AssertRefSnapshotId("new-branch", None).validate(md)
    AssertCurrentSchemaId(0).validate(md)
    for failing in (
        AssertTableUUID("00000000-0000-0000-0000-000000000000"),
        AssertRefSnapshotId("main", 2),
        AssertRefSnapshotId("main", None),
        AssertRefSnapshotId("gone", 1),
        AssertCurrentSchemaId(1),
        AssertCreate(),
    ):
        with pytest.raises(CommitFailedException):
            failing.validate(md)
    AssertCreate().validate(None)
