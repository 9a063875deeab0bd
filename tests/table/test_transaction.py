"""Transactions: several operations, one new metadata version, all or nothing."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from icefloe import Catalog, CommitFailedException, Table, Transaction
from icefloe.errors import ValidationError
from support.catalogs import (
    ARROW_SCHEMA,
    avro_files,
    data_files,
    local,
    memory_backend,
    referenced_metadata_files,
    rows,
    write_parquet_file,
)

FAST_RETRIES = {"commit.retry.min-wait-ms": "1", "commit.retry.max-wait-ms": "5"}


def _table(catalog: Catalog, format_version: int = 2, **properties: str) -> Table:
    return catalog.create_table(
        "db.t", ARROW_SCHEMA, properties={"format-version": str(format_version), **FAST_RETRIES, **properties}
    )


def test_two_appends_and_a_property_update_commit_atomically(catalog: Catalog, format_version: int) -> None:
    table = _table(catalog, format_version)
    base = table.append(rows(2))
    assert base is not None
    before_location = table.metadata_location
    log_before = len(table.metadata.metadata_log)

    txn = table.new_transaction()
    assert isinstance(txn, Transaction)
    txn.new_append().append_file(write_parquet_file(table, rows(3, start=10), "a.parquet")).commit()
    txn.new_fast_append().append_file(write_parquet_file(table, rows(4, start=20), "b.parquet")).commit()
    txn.update_properties().set("owner", "txn").commit()

    # Nothing is visible before commit_transaction, neither here nor in the catalog.
    assert table.metadata_location == before_location
    assert table.current_snapshot() == base
    assert "owner" not in table.properties()
    reloaded = catalog.load_table("db.t")
    assert reloaded.metadata_location == before_location
    assert reloaded.new_scan().count() == 2
    # ... but the transaction sees its own staged changes.
    assert txn.metadata.properties["owner"] == "txn"
    assert len(txn.metadata.snapshots) == 3

    txn.commit_transaction()

    assert table.properties()["owner"] == "txn"
    assert len(table.metadata.metadata_log) == log_before + 1  # one new metadata version
    snapshots = table.snapshots()
    assert len(snapshots) == 3
    first, second = snapshots[1], snapshots[2]
    assert first.parent_snapshot_id == base.snapshot_id
    assert second.parent_snapshot_id == first.snapshot_id
    assert table.current_snapshot() == second
    if format_version > 1:
        assert (first.sequence_number, second.sequence_number) == (2, 3)
    if format_version == 3:
        assert (first.first_row_id, first.added_rows, second.first_row_id, second.added_rows) == (2, 3, 5, 4)
        assert table.metadata.next_row_id == 9
    assert second.summary["total-records"] == "9"
    # The intermediate snapshot never was the table's state: it is not in the snapshot log.
    assert [h.snapshot_id for h in table.history()] == [base.snapshot_id, second.snapshot_id]
    assert catalog.load_table("db.t").metadata == table.metadata
    assert table.new_scan().count() == 9


def test_transaction_append_data_sees_staged_properties(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    txn = table.new_transaction()
    txn.update_properties().set("write.parquet.compression-codec", "gzip").commit()
    snapshot = txn.append(rows(5))
    assert snapshot is not None
    assert snapshot.snapshot_id in {s.snapshot_id for s in txn.metadata.snapshots}
    assert table.current_snapshot() is None
    assert txn.append(rows(0)) is None  # empty data stages nothing
    txn.commit_transaction()
    assert table.current_snapshot() == snapshot
    (file,) = snapshot.added_data_files(table.io())
    assert pq.read_metadata(local(file.file_path)).row_group(0).column(0).compression == "GZIP"


def test_transaction_commits_once(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    txn = table.new_transaction()
    txn.append(rows(1))
    txn.commit_transaction()
    with pytest.raises(ValidationError, match="already committed"):
        txn.commit_transaction()
    with pytest.raises(ValidationError, match="already committed"):
        txn.update_properties().set("a", "b").commit()
    assert len(table.snapshots()) == 1


def test_empty_transaction_changes_nothing(catalog: Catalog) -> None:
    table = _table(catalog)
    before = table.metadata_location
    table.new_transaction().commit_transaction()
    assert table.metadata_location == before
    assert catalog.load_table("db.t").metadata_location == before


def test_transaction_retries_reapply_every_operation(memory_catalog: Catalog, format_version: int) -> None:
    table = _table(memory_catalog, format_version)
    base = table.append(rows(1))
    assert base is not None
    backend = memory_backend(memory_catalog)
    txn = table.new_transaction()
    txn.append(rows(2, start=10))
    txn.append(rows(2, start=20))
    txn.update_properties().set("k", "v").commit()

    # A concurrent writer commits first; then one more injected failure.
    memory_catalog.load_table("db.t").append(rows(1, start=99))
    backend.fail_next_commits(1)
    txn.commit_transaction()

    chain = table.metadata.ancestors_of(table.metadata.current_snapshot_id)
    assert len(chain) == 4
    assert chain[-1] == base
    assert chain[1].summary["added-records"] == "2"
    assert chain[2].summary["added-records"] == "1"  # the concurrent writer's snapshot
    assert table.properties()["k"] == "v"
    assert [h.snapshot_id for h in table.history()] == [
        s.snapshot_id for s in reversed(chain) if s != chain[1]
    ]
    assert sorted(table.new_scan().select("id").to_arrow().column("id").to_pylist()) == [
        0,
        10,
        11,
        20,
        21,
        99,
    ]
    if format_version > 1:
        assert [s.sequence_number for s in chain] == [4, 3, 2, 1]
    assert avro_files(table) == referenced_metadata_files(table)


def test_failed_transaction_deletes_all_its_files(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog, **{"commit.retry.num-retries": "1"})
    table.append(rows(1))
    avro_before, data_before = avro_files(table), data_files(table)
    state = table.metadata

    txn = table.new_transaction()
    txn.append(rows(3, start=10))
    txn.append(rows(3, start=20))
    txn.update_properties().set("k", "v").commit()
    memory_backend(memory_catalog).fail_next_commits(2)
    with pytest.raises(CommitFailedException):
        txn.commit_transaction()

    assert table.metadata == state
    assert memory_catalog.load_table("db.t").metadata == state
    assert avro_files(table) == avro_before
    assert data_files(table) == data_before


def test_transaction_on_a_branch(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    main = table.append(rows(1))
    txn = table.new_transaction()
    for start, name in ((5, "x.parquet"), (8, "y.parquet")):
        file = write_parquet_file(table, rows(2, start=start), name)
        txn.new_append().append_file(file).to_branch("dev").commit()
    txn.commit_transaction()
    assert table.current_snapshot() == main
    dev = table.snapshot("dev")
    assert dev is not None
    assert table.metadata.ancestors_of(dev.snapshot_id)[-1] == main
    assert len(table.metadata.ancestors_of(dev.snapshot_id)) == 3
    assert table.new_scan().use_ref("dev").count() == 5


def test_operations_cannot_change_after_staging(memory_catalog: Catalog) -> None:
    """Changing a staged operation would change (or delete) what the transaction commits."""
    table = _table(memory_catalog)
    first = write_parquet_file(table, rows(2), "a.parquet")
    second = write_parquet_file(table, rows(2, start=5), "b.parquet")
    txn = table.new_transaction()
    append = txn.new_append().append_file(first)
    append.commit()
    with pytest.raises(ValidationError, match="committed"):
        append.append_file(second)
    with pytest.raises(ValidationError, match="committed"):
        append.set("k", "v")
    with pytest.raises(ValidationError, match="committed"):
        append.to_branch("other")
    update = txn.update_properties().set("a", "1")
    update.commit()
    with pytest.raises(ValidationError, match="committed"):
        update.set("b", "2")
    txn.commit_transaction()
    # What was staged is what got committed, and it is readable.
    assert sorted(table.new_scan().select("id").to_arrow().column("id").to_pylist()) == [0, 1]
    assert table.properties()["a"] == "1" and "b" not in table.properties()
    assert avro_files(table) == referenced_metadata_files(table)


def test_operation_created_before_an_own_commit_needs_no_retry(memory_catalog: Catalog) -> None:
    """An operation applies to the table's state when it commits (as Java's do), so the
    table's own commits in between are no conflict, even with retries disabled."""
    table = _table(memory_catalog, **{"commit.retry.num-retries": "0"})
    append = table.new_append().append_file(write_parquet_file(table, rows(1), "early.parquet"))
    update = table.update_properties().set("early", "yes")
    between = table.append(rows(1, start=10))
    assert between is not None
    append.commit()
    update.commit()
    current = table.current_snapshot()
    assert current is not None and current.parent_snapshot_id == between.snapshot_id
    assert table.new_scan().count() == 2
    assert table.properties()["early"] == "yes"
