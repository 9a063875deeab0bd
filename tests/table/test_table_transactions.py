"""Create and replace transactions (Java's ``createTransaction`` / ``replaceTransaction`` /
``createOrReplaceTransaction``): nothing reaches the catalog before ``commit_transaction()``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pytest

from icefloe import Catalog, CommitFailedException, Table, Transaction
from icefloe.backends import InMemoryCatalogBackend, LoadedTable
from icefloe.catalog.catalog import Catalog as CatalogFacade
from icefloe.errors import NoSuchNamespaceError, NoSuchTableError, TableAlreadyExistsError, ValidationError
from icefloe.spec.snapshots import SnapshotRefType
from icefloe.spec.updates import (
    AssertCreate,
    AssertLastAssignedFieldId,
    AssertRefSnapshotId,
    AssertTableUUID,
    SetSnapshotRef,
    TableRequirement,
    TableUpdate,
)
from icefloe.table.rows.append_data import write_files
from support.catalogs import ARROW_SCHEMA, files_under, local, memory_backend, rows, sorted_rows

FAST_RETRIES = {"commit.retry.min-wait-ms": "1", "commit.retry.max-wait-ms": "5"}


def _props(format_version: int = 2, **extra: str) -> dict[str, str]:
    return {"format-version": str(format_version), **FAST_RETRIES, **extra}


def _table_with_history(catalog: Catalog, format_version: int = 2) -> Table:
    """db.t with two appends on main, a branch 'audit' at the first and a tag 'v1' at the second."""
    table = catalog.create_table(
        "db.t", ARROW_SCHEMA, partition_by=["day(ts)"], properties=_props(format_version)
    )
    first = table.append(rows(3))
    second = table.append(rows(2, start=10))
    assert first is not None and second is not None
    # (through the commit currency: manage_snapshots() is not this test's subject)
    catalog.backend.commit_table(
        "db.t",
        None,
        [],
        [
            SetSnapshotRef("audit", first.snapshot_id, SnapshotRefType.BRANCH),
            SetSnapshotRef("v1", second.snapshot_id, SnapshotRefType.TAG),
        ],
    )
    return table.refresh()


# ---- create ------------------------------------------------------------------------------------


def test_create_append_and_properties_commit_atomically(catalog: Catalog, format_version: int) -> None:
    txn = catalog.create_table_transaction(
        "db.t", ARROW_SCHEMA, partition_by=["day"], sort_by=["id"], properties=_props(format_version)
    )
    assert isinstance(txn, Transaction)
    txn.append(rows(5))
    fast = txn.new_fast_append()
    for file in write_files(txn, rows(2, start=100)):
        fast.append_file(file)
    fast.commit()
    txn.update_properties().set("owner", "etl").commit()

    # Nothing exists before the commit, but the transaction sees its own changes.
    assert not catalog.table_exists("db.t")
    assert len(txn.metadata.snapshots) == 2
    assert txn.metadata.properties["owner"] == "etl"

    txn.commit_transaction()

    table = catalog.load_table("db.t")
    assert table.metadata.metadata_log == ()  # one metadata version holds everything
    assert table.format_version() == format_version
    assert table.properties()["owner"] == "etl"
    assert [f.name for f in table.spec().fields] == ["day"]
    assert table.sort_order().is_sorted
    assert len(table.snapshots()) == 2
    assert table.current_snapshot() is not None
    assert table.current_snapshot().summary["total-records"] == "7"  # type: ignore[union-attr]
    assert sorted_rows(table.new_scan().to_arrow()) == sorted_rows(
        pa.concat_tables([rows(5), rows(2, start=100)]).cast(table.new_scan().to_arrow().schema)
    )
    # The transaction's table is the committed table.
    assert txn.table.metadata_location == table.metadata_location
    assert txn.table.uuid() == table.uuid()


def test_create_without_operations_creates_an_empty_table(catalog: Catalog) -> None:
    txn = catalog.create_table_transaction("db.t", ARROW_SCHEMA, properties={"owner": "x"})
    assert not catalog.table_exists("db.t")
    txn.commit_transaction()
    table = catalog.load_table("db.t")
    assert table.current_snapshot() is None
    assert table.properties() == {"owner": "x", "write.parquet.compression-codec": "zstd"}
    assert table.schema().column_names == list(ARROW_SCHEMA.names)


def test_create_refuses_an_existing_table_or_missing_namespace_at_once(catalog: Catalog) -> None:
    catalog.create_table("db.t", ARROW_SCHEMA)
    with pytest.raises(TableAlreadyExistsError):
        catalog.create_table_transaction("db.t", ARROW_SCHEMA)
    with pytest.raises(NoSuchNamespaceError):
        catalog.create_table_transaction("nope.t", ARROW_SCHEMA)


def test_create_conflict_at_commit_deletes_everything_written(catalog: Catalog, warehouse: Path) -> None:
    before = files_under(warehouse)
    txn = catalog.create_table_transaction("db.t", ARROW_SCHEMA, properties=_props())
    txn.append(rows(4))
    txn.append(rows(4, start=10))
    ours = files_under(warehouse) - before
    assert any(f.endswith(".parquet") for f in ours) and any(f.endswith(".avro") for f in ours)

    winner = catalog.create_table("db.t", ARROW_SCHEMA)  # someone else creates it meanwhile
    winner.append(rows(1, start=99))
    theirs = files_under(warehouse) - before - ours

    with pytest.raises(TableAlreadyExistsError):
        txn.commit_transaction()

    # Our data files, manifests and manifest lists are gone; the winner's table is intact.
    assert files_under(warehouse) == before | theirs
    table = catalog.load_table("db.t")
    assert table.uuid() == winner.uuid()
    assert [r["id"] for r in table.new_scan().to_arrow().to_pylist()] == [99]


def test_create_retries_a_failed_commit_and_cleans_up_when_retries_run_out(
    memory_catalog: Catalog, warehouse: Path
) -> None:
    backend = memory_backend(memory_catalog)
    txn = memory_catalog.create_table_transaction("db.t", ARROW_SCHEMA, properties=_props())
    txn.append(rows(3))
    backend.fail_next_commits(1)
    txn.commit_transaction()  # the retry creates the table
    assert memory_catalog.load_table("db.t").new_scan().count() == 3

    before = files_under(warehouse)
    txn = memory_catalog.create_table_transaction(
        "db.u", ARROW_SCHEMA, properties=_props(**{"commit.retry.num-retries": "2"})
    )
    txn.append(rows(3))
    backend.fail_next_commits(10)
    with pytest.raises(CommitFailedException):
        txn.commit_transaction()
    assert not memory_catalog.table_exists("db.u")
    assert files_under(warehouse) == before  # every file the transaction wrote is deleted


def test_committed_transaction_cannot_be_committed_again(catalog: Catalog) -> None:
    txn = catalog.create_table_transaction("db.t", ARROW_SCHEMA)
    txn.commit_transaction()
    with pytest.raises(ValidationError):
        txn.commit_transaction()


# ---- replace -----------------------------------------------------------------------------------


def test_replace_keeps_uuid_history_and_refs_but_not_main(catalog: Catalog, format_version: int) -> None:
    table = _table_with_history(catalog, format_version)
    old = table.metadata
    old_schema = table.schema()
    new_schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),  # kept: keeps its id
            pa.field("name", pa.string()),  # kept
            pa.field("ts", pa.timestamp("us")),  # kept
            pa.field("note", pa.string()),  # new: an id above last-column-id
        ]
    )
    txn = catalog.replace_table_transaction(
        "db.t", new_schema, partition_by=["day(ts)", "name"], properties={"owner": "new"}
    )
    data = pa.table(
        {"id": [1, 2], "name": ["x", "x"], "ts": [1_700_000_000_000_000] * 2, "note": ["a", "b"]},
        schema=new_schema,
    )
    txn.append(data)
    assert catalog.load_table("db.t").metadata_location == table.metadata_location  # not yet
    txn.commit_transaction()

    replaced = catalog.load_table("db.t")
    meta = replaced.metadata
    assert meta.table_uuid == old.table_uuid
    # Every old snapshot is kept; main now holds only the new one, which has no parent.
    assert {s.snapshot_id for s in old.snapshots} < {s.snapshot_id for s in meta.snapshots}
    current = replaced.current_snapshot()
    assert current is not None and current.parent_snapshot_id is None
    assert len(meta.snapshots) == len(old.snapshots) + 1
    assert meta.refs["audit"] == old.refs["audit"]
    assert meta.refs["v1"] == old.refs["v1"]
    assert meta.refs["main"].snapshot_id == current.snapshot_id
    assert [e.snapshot_id for e in replaced.history()][: len(old.snapshot_log)] == [
        e.snapshot_id for e in old.snapshot_log
    ]
    # Fresh ids reuse the old ones by name; the old schema stays.
    schema = replaced.schema()
    for name in ("id", "name", "ts"):
        assert schema.field(name).field_id == old_schema.field(name).field_id
    assert schema.field("note").field_id == old.last_column_id + 1
    assert meta.last_column_id == old.last_column_id + 1
    assert old_schema.schema_id in replaced.schemas()
    assert schema.schema_id != old_schema.schema_id
    # The day(ts) partition field keeps its id (v2+); v1 carries the old field forward.
    fields = {f.name: f for f in replaced.spec().fields}
    assert fields["ts_day"].field_id == old.spec().fields[0].field_id
    assert replaced.properties()["owner"] == "new"
    assert all(replaced.properties()[k] == v for k, v in old.properties.items())  # added, none removed
    # Only the new rows are current; the old ones stay readable by time travel and branch.
    assert sorted(r["id"] for r in replaced.new_scan().to_arrow().to_pylist()) == [1, 2]
    assert replaced.new_scan().use_ref("audit").count() == 3
    assert replaced.new_scan().use_snapshot(old.current_snapshot_id).count() == 5  # type: ignore[arg-type]


def test_replace_without_append_leaves_no_current_snapshot(catalog: Catalog) -> None:
    table = _table_with_history(catalog)
    txn = catalog.replace_table_transaction("db.t", ARROW_SCHEMA)
    txn.commit_transaction()
    replaced = catalog.load_table("db.t")
    assert replaced.current_snapshot() is None
    assert "main" not in replaced.refs()
    assert replaced.new_scan().count() == 0
    assert len(replaced.snapshots()) == len(table.snapshots())
    assert replaced.spec().is_unpartitioned


def test_replace_with_the_same_definition_reuses_schema_spec_and_order(catalog: Catalog) -> None:
    table = catalog.create_table("db.t", ARROW_SCHEMA, partition_by=["day"], sort_by=["id DESC"])
    table.append(rows(3))
    before = table.metadata
    txn = catalog.replace_table_transaction("db.t", ARROW_SCHEMA, partition_by=["day"], sort_by=["id DESC"])
    txn.commit_transaction()
    after = catalog.load_table("db.t").metadata
    assert after.current_schema_id == before.current_schema_id and len(after.schemas) == 1
    assert after.default_spec_id == before.default_spec_id and len(after.partition_specs) == 1
    assert after.default_sort_order_id == before.default_sort_order_id
    assert after.last_column_id == before.last_column_id
    assert after.current_snapshot_id is None


def test_replace_of_a_v1_table_carries_old_partition_fields_as_void(catalog: Catalog) -> None:
    table = catalog.create_table("db.t", ARROW_SCHEMA, partition_by=["day", "name"], properties=_props(1))
    old = table.spec()
    txn = catalog.replace_table_transaction("db.t", ARROW_SCHEMA, partition_by=["name", "bucket(4, id)"])
    txn.commit_transaction()
    spec = catalog.load_table("db.t").spec()
    assert [(f.name, str(f.transform), f.field_id) for f in spec.fields] == [
        ("day", "void", old.fields[0].field_id),
        ("name", "identity", old.fields[1].field_id),
        ("id_bucket", "bucket[4]", old.last_assigned_field_id + 1),
    ]


def test_replace_upgrades_format_version_and_refuses_a_downgrade(catalog: Catalog) -> None:
    catalog.create_table("db.t", ARROW_SCHEMA, properties=_props(1))
    catalog.replace_table_transaction(
        "db.t", ARROW_SCHEMA, properties={"format-version": "2"}
    ).commit_transaction()
    assert catalog.load_table("db.t").format_version() == 2
    with pytest.raises(ValidationError, match="downgrade"):
        catalog.replace_table_transaction("db.t", ARROW_SCHEMA, properties={"format-version": "1"})


def test_replace_with_a_location(sql_catalog: Catalog, tmp_path: Path) -> None:
    table = sql_catalog.create_table("db.t", ARROW_SCHEMA)
    table.append(rows(2))
    elsewhere = str(tmp_path / "elsewhere")
    txn = sql_catalog.replace_table_transaction("db.t", ARROW_SCHEMA, location=elsewhere)
    txn.append(rows(1))
    txn.commit_transaction()
    replaced = sql_catalog.load_table("db.t")
    assert replaced.location() == elsewhere
    current = replaced.current_snapshot()
    assert current is not None and local(current.manifest_list or "").is_relative_to(elsewhere)


def test_replace_of_a_missing_table_fails_at_once(catalog: Catalog) -> None:
    with pytest.raises(NoSuchTableError):
        catalog.replace_table_transaction("db.t", ARROW_SCHEMA)


def test_replace_of_a_vanished_table_fails_and_deletes_what_it_wrote(
    catalog: Catalog, warehouse: Path
) -> None:
    table = catalog.create_table("db.t", ARROW_SCHEMA, properties=_props())
    table.append(rows(2))
    txn = catalog.replace_table_transaction("db.t", ARROW_SCHEMA)
    txn.append(rows(3, start=10))
    catalog.drop_table("db.t", purge=True)
    left = files_under(warehouse)
    with pytest.raises(NoSuchTableError):
        txn.commit_transaction()
    assert files_under(warehouse) <= left
    assert not any(f.endswith((".parquet", ".avro")) for f in files_under(warehouse))
    assert not catalog.table_exists("db.t")


def test_replace_of_a_recreated_table_fails(memory_catalog: Catalog) -> None:
    memory_catalog.create_table("db.t", ARROW_SCHEMA, properties=_props())
    txn = memory_catalog.replace_table_transaction("db.t", ARROW_SCHEMA)
    txn.append(rows(1))
    memory_catalog.drop_table("db.t")
    other = memory_catalog.create_table("db.t", ARROW_SCHEMA, properties=_props())
    with pytest.raises(CommitFailedException, match="re-created"):
        txn.commit_transaction()
    assert memory_catalog.load_table("db.t").uuid() == other.uuid()
    assert memory_catalog.load_table("db.t").current_snapshot() is None


def test_replace_retries_on_a_concurrent_commit_and_reapplies_everything(catalog: Catalog) -> None:
    table = _table_with_history(catalog)
    txn = catalog.replace_table_transaction("db.t", ARROW_SCHEMA, partition_by=["name"])
    txn.append(rows(4, start=50))
    # Concurrent commits: one to main, one to the branch.
    other = catalog.load_table("db.t")
    concurrent = other.append(rows(1, start=90))
    other.new_append().append_file(
        next(iter(other.current_snapshot().added_data_files(other.io())))  # type: ignore[union-attr]
    ).to_branch("audit").commit()
    txn.commit_transaction()

    replaced = catalog.load_table("db.t")
    meta = replaced.metadata
    assert concurrent is not None and replaced.snapshot(concurrent.snapshot_id) is not None
    current = replaced.current_snapshot()
    assert current is not None and current.parent_snapshot_id is None
    # The replacement was computed again on the fresh table: sequence numbers stay unique.
    numbers = [s.sequence_number for s in meta.snapshots]
    assert len(set(numbers)) == len(numbers)
    assert current.sequence_number == max(numbers)
    assert meta.refs["audit"].snapshot_id == other.refs()["audit"].snapshot_id
    assert sorted(r["id"] for r in replaced.new_scan().to_arrow().to_pylist()) == [50, 51, 52, 53]
    assert table.uuid() == replaced.uuid()


# ---- create or replace -------------------------------------------------------------------------


def test_create_or_replace_creates_then_replaces(catalog: Catalog) -> None:
    txn = catalog.create_or_replace_table_transaction("db.t", ARROW_SCHEMA, properties=_props())
    txn.append(rows(2))
    txn.commit_transaction()
    created = catalog.load_table("db.t")
    assert created.new_scan().count() == 2

    txn = catalog.create_or_replace_table_transaction("db.t", ARROW_SCHEMA, partition_by=["day"])
    txn.append(rows(3, start=10))
    txn.commit_transaction()
    replaced = catalog.load_table("db.t")
    assert replaced.uuid() == created.uuid()
    assert replaced.new_scan().count() == 3
    assert len(replaced.snapshots()) == 2


# ---- what the catalog is asked -----------------------------------------------------------------


class _RecordingCatalog(InMemoryCatalogBackend):
    """An in-memory catalog that records the requirements of each commit."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.requirements: list[list[TableRequirement]] = []

    def commit_table(
        self,
        identifier: object,
        base: LoadedTable | None,
        requirements: Sequence[TableRequirement],
        updates: Sequence[TableUpdate],
    ) -> LoadedTable:
        self.requirements.append(list(requirements))
        return super().commit_table(identifier, base, requirements, updates)  # type: ignore[arg-type]


def test_requirements_sent_to_the_catalog(warehouse: Path) -> None:
    backend = _RecordingCatalog("rec", {"warehouse": str(warehouse)})
    catalog = CatalogFacade("rec", backend)
    catalog.create_namespace("db")
    txn = catalog.create_table_transaction("db.t", ARROW_SCHEMA)
    txn.append(rows(2))
    txn.update_properties().set("a", "b").commit()
    txn.commit_transaction()
    assert backend.requirements[-1] == [AssertCreate()]

    table = catalog.load_table("db.t")
    txn = catalog.replace_table_transaction("db.t", ARROW_SCHEMA)
    txn.append(rows(1))
    txn.commit_transaction()
    sent = backend.requirements[-1]
    assert sent[0] == AssertTableUUID(table.metadata.table_uuid)
    assert AssertLastAssignedFieldId(table.metadata.last_column_id) in sent
    # main as it was before the replacement (not the "no main" state the append saw)
    assert AssertRefSnapshotId("main", table.metadata.current_snapshot_id) in sent
    assert [r for r in sent if isinstance(r, AssertRefSnapshotId)] == [
        AssertRefSnapshotId("main", table.metadata.current_snapshot_id)
    ]


def test_schema_and_property_changes_inside_create_and_replace_transactions(catalog: Catalog) -> None:
    # Their requirements describe the defined table, not the catalog's: they must not be sent.
    txn = catalog.create_table_transaction("db.t", ARROW_SCHEMA, properties=_props())
    txn.update_schema().add_column("extra", "string").commit()
    txn.append(rows(2).append_column("extra", pa.array(["a", "b"])))
    txn.commit_transaction()
    table = catalog.load_table("db.t")
    assert table.schema().field("extra").field_id == len(ARROW_SCHEMA) + 1

    table.append(rows(1, start=10).append_column("extra", pa.array(["c"])))
    txn = catalog.replace_table_transaction("db.t", ARROW_SCHEMA, properties=_props(3))
    txn.update_schema().add_column("later", "long").commit()
    txn.append(rows(2, start=20).append_column("later", pa.array([1, 2])))
    txn.commit_transaction()
    replaced = catalog.load_table("db.t")
    assert replaced.format_version() == 3
    assert replaced.schema().column_names == [*ARROW_SCHEMA.names, "later"]
    # "extra" left the schema; "later" gets an id above every id the table ever used.
    assert replaced.schema().field("later").field_id == table.metadata.last_column_id + 1
    assert sorted(r["later"] for r in replaced.new_scan().to_arrow().to_pylist()) == [1, 2]
