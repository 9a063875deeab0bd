"""The seed's read accessors of Table, on every catalog kind."""

from __future__ import annotations

import uuid
from pathlib import Path

import pyarrow as pa
import pytest

from icefloe import Catalog, HistoryEntry, PartitionSpec, Schema, Snapshot, SnapshotRef, SortOrder, Table
from icefloe.io import FileIO
from icefloe.io.encryption import EncryptionManager
from icefloe.io.locations import LocationProvider
from icefloe.spec.manifest import FileContent, ManifestContent
from icefloe.spec.types import LongType, NestedField, StringType
from support.catalogs import ARROW_SCHEMA, data_files, local, rows


def _table(catalog: Catalog, format_version: int = 2, **kwargs: object) -> Table:
    return catalog.create_table(
        "db.t",
        ARROW_SCHEMA,
        partition_by=["day"],
        sort_by=["id DESC NULLS LAST"],
        properties={"format-version": str(format_version), "owner": "etl"},
        **kwargs,  # type: ignore[arg-type]
    )


def test_new_table_accessors(catalog: Catalog, warehouse: Path) -> None:
    table = _table(catalog)
    assert table.name() == "test.db.t"
    assert table.identifier == "db.t"
    assert table.format_version() == 2
    assert [f.name for f in table.schema().fields] == ARROW_SCHEMA.names
    assert table.schema().find_field("id").required  # type: ignore[union-attr]
    assert not table.schema().find_field("name").required  # type: ignore[union-attr]
    assert isinstance(table.schemas(), dict)
    assert list(table.schemas()) == [table.schema().schema_id]
    assert table.schemas()[table.schema().schema_id] == table.schema()

    spec = table.spec()
    assert isinstance(spec, PartitionSpec)
    assert [(f.name, str(f.transform)) for f in spec.fields] == [("day", "identity")]
    assert table.specs() == {spec.spec_id: spec}

    order = table.sort_order()
    assert isinstance(order, SortOrder)
    assert order.order_id == 1
    assert len(order.fields) == 1
    assert list(table.sort_orders()) == [1]  # only the fresh order, as Java's newTableMetadata
    assert table.sort_orders()[1] == order

    assert table.properties()["owner"] == "etl"
    assert "format-version" not in table.properties()  # not a stored property
    table.properties()["owner"] = "changed"  # a copy: the table is not changed through it
    assert table.properties()["owner"] == "etl"

    assert Path(table.location()) == warehouse / "db" / "t"
    assert table.current_snapshot() is None
    assert table.snapshots() == []
    assert table.history() == []
    assert table.refs() == {}
    assert table.snapshot(1) is None
    assert table.snapshot("main") is None
    assert isinstance(table.uuid(), uuid.UUID)
    assert str(table.uuid()) == table.metadata.table_uuid
    assert table.statistics_files() == []
    assert table.partition_statistics_files() == []
    assert isinstance(table.io(), FileIO)
    assert table.metadata_location is not None
    assert table.io().exists(table.metadata_location)


def test_location_provider_and_encryption(catalog: Catalog) -> None:
    table = _table(catalog)
    provider = table.location_provider()
    assert isinstance(provider, LocationProvider)
    location = provider.new_data_location("f.parquet", "day=2024-01-01")
    assert location == f"{table.location()}/data/day=2024-01-01/f.parquet"

    table.update_properties().set("write.data.path", f"{table.location()}/elsewhere").commit()
    assert table.location_provider().new_data_location("f.parquet").endswith("/elsewhere/f.parquet")
    table.append(rows(2))
    assert all("/elsewhere/" in f.file_path for f in table.current_snapshot().added_data_files(table.io()))  # type: ignore[union-attr]

    encryption = table.encryption()
    assert isinstance(encryption, EncryptionManager)
    # Plaintext (as Java's default): files pass through unchanged both ways.
    some_file = table.io().new_input(table.metadata_location)  # type: ignore[arg-type]
    assert encryption.decrypt(some_file) is some_file
    out = table.io().new_output(f"{table.location()}/scratch.bin")
    encrypted = encryption.encrypt(out)
    assert encrypted.encrypting_output_file is out
    assert encrypted.key_metadata is None


def test_snapshot_accessors_after_appends(catalog: Catalog, format_version: int) -> None:
    table = _table(catalog, format_version)
    first = table.append(rows(3))
    second = table.append(rows(3, start=3))
    assert isinstance(first, Snapshot) and isinstance(second, Snapshot)

    assert table.current_snapshot() == second
    assert table.snapshots() == [first, second]  # oldest first
    assert table.snapshot(first.snapshot_id) == first
    assert table.snapshot("main") == second
    assert table.snapshot(12345) is None
    assert table.snapshot("no-such-branch") is None
    assert second.parent_snapshot_id == first.snapshot_id
    assert first.parent_snapshot_id is None

    history = table.history()
    assert all(isinstance(h, HistoryEntry) for h in history)
    assert [h.snapshot_id for h in history] == [first.snapshot_id, second.snapshot_id]
    assert [h.timestamp_ms for h in history] == [first.timestamp_ms, second.timestamp_ms]
    assert first.timestamp_ms < second.timestamp_ms

    refs = table.refs()
    assert list(refs) == ["main"]
    assert isinstance(refs["main"], SnapshotRef)
    assert refs["main"].snapshot_id == second.snapshot_id
    assert refs["main"].is_branch


def test_snapshot_file_methods(catalog: Catalog, format_version: int) -> None:
    table = _table(catalog, format_version)
    first = table.append(rows(6))  # three days: three files
    second = table.append(rows(1, start=10))
    assert first is not None and second is not None
    io = table.io()

    added_first = first.added_data_files(io)
    assert len(added_first) == 3
    assert {f.content for f in added_first} == {FileContent.DATA}
    assert sum(f.record_count for f in added_first) == 6
    assert {str(local(f.file_path)) for f in added_first} < data_files(table)
    assert first.removed_data_files(io) == []
    assert first.added_delete_files(io) == []
    assert first.removed_delete_files(io) == []

    manifests = second.all_manifests(io)
    assert len(manifests) == 2  # a fast append keeps the parent's manifest
    assert second.data_manifests(io) == manifests
    assert second.delete_manifests(io) == []
    assert {m.content for m in manifests} == {ManifestContent.DATA}
    assert {m.added_snapshot_id for m in manifests} == {first.snapshot_id, second.snapshot_id}
    # Only the files the snapshot itself added, not those of its parent's manifests.
    added_second = second.added_data_files(io)
    assert [f.record_count for f in added_second] == [1]
    assert {f.file_path for f in added_second}.isdisjoint({f.file_path for f in added_first})


def test_table_sees_own_commits_at_once_and_others_after_refresh(catalog: Catalog) -> None:
    writer = _table(catalog)
    reader = catalog.load_table("db.t")
    writer.append(rows(2))
    assert writer.current_snapshot() is not None  # own commit: visible at once
    assert writer.metadata_location != reader.metadata_location
    assert reader.current_snapshot() is None  # another Table object: not yet
    assert reader.new_scan().to_arrow().num_rows == 0

    assert reader.refresh() is reader
    assert reader.current_snapshot() == writer.current_snapshot()
    assert reader.metadata_location == writer.metadata_location
    assert reader.new_scan().to_arrow().num_rows == 2

    writer.update_properties().set("k", "v").commit()
    assert writer.properties()["k"] == "v"
    assert "k" not in reader.properties()
    reader.refresh()
    assert reader.properties()["k"] == "v"


def test_load_table_returns_the_same_state(catalog: Catalog) -> None:
    table = _table(catalog)
    table.append(rows(3))
    loaded = catalog.load_table("db.t")
    assert loaded.metadata == table.metadata
    assert loaded.uuid() == table.uuid()
    assert loaded.schemas() == table.schemas()
    assert loaded.specs() == table.specs()
    assert loaded.sort_orders() == table.sort_orders()
    assert loaded.snapshots() == table.snapshots()
    assert loaded.history() == table.history()


def test_schema_from_icefloe_schema_gets_fresh_ids(catalog: Catalog) -> None:
    schema = Schema(NestedField(7, "id", LongType(), required=True), NestedField(9, "s", StringType()))
    table = catalog.create_table("db.ids", schema)
    # As Java's newTableMetadata: ids are reassigned from 1 in order.
    assert [(f.field_id, f.name, f.required) for f in table.schema().fields] == [
        (1, "id", True),
        (2, "s", False),
    ]
    table.append(pa.table({"id": [1, 2], "s": ["x", None]}))
    assert table.new_scan().to_arrow().to_pylist() == [{"id": 1, "s": "x"}, {"id": 2, "s": None}]


@pytest.mark.parametrize("ref", [0, -1])
def test_snapshot_unknown_ids(catalog: Catalog, ref: int) -> None:
    table = _table(catalog)
    table.append(rows(1))
    assert table.snapshot(ref) is None
