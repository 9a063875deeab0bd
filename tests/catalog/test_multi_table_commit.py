"""catalog.commit_transaction([txn_a, txn_b]): both tables move or neither does (SQL: one
database transaction; in-memory: under its lock), conflicts retry both, failures delete what
was written, Hadoop refuses."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from icefloe.errors import (
    CommitFailedException,
    CommitStateUnknownException,
    UnsupportedFeatureError,
    ValidationError,
)
from support.catalogs import files_under, make_catalog, memory_backend

SCHEMA = pa.schema([("id", pa.int64())])


def data(*ids: int) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64())})


@pytest.fixture(params=["sql", "memory"])
def catalog(request: pytest.FixtureRequest, tmp_path: Path):  # type: ignore[no-untyped-def]
    cat = make_catalog(request.param, tmp_path / "wh")
    cat.create_table("db.a", SCHEMA)
    cat.create_table("db.b", SCHEMA)
    yield cat
    cat.close()


def ids(catalog, name: str) -> list[int]:  # type: ignore[no-untyped-def]
    return sorted(catalog.load_table(name).new_scan().to_arrow().column("id").to_pylist())


def test_both_tables_move_together_and_a_conflict_retries_both(catalog) -> None:  # type: ignore[no-untyped-def]
    a, b = catalog.load_table("db.a"), catalog.load_table("db.b")
    txn_a, txn_b = a.new_transaction(), b.new_transaction()
    txn_a.append(data(1, 2))
    txn_b.append(data(3))
    txn_b.update_properties().set("moved", "yes").commit()
    # Someone appends to b meanwhile: the multi-table commit conflicts, reloads, re-applies.
    catalog.load_table("db.b").append(data(4))
    catalog.commit_transaction([txn_a, txn_b])
    assert ids(catalog, "db.a") == [1, 2]
    assert ids(catalog, "db.b") == [3, 4]
    assert catalog.load_table("db.b").properties()["moved"] == "yes"
    assert a.metadata_location == catalog.load_table("db.a").metadata_location  # the Table saw its commit


def test_a_failed_requirement_changes_neither_table_and_deletes_the_files(catalog, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    a, b = catalog.load_table("db.a"), catalog.load_table("db.b")
    before = files_under(tmp_path / "wh")
    txn_a, txn_b = a.new_transaction(), b.new_transaction()
    txn_a.append(data(1))
    txn_b.update_schema().add_column("x", "string").commit()
    # b's schema changes concurrently: txn_b's add-column conflicts for good (a validation).
    catalog.load_table("db.b").update_schema().add_column("x", "int").commit()
    with pytest.raises(Exception, match="x"):
        catalog.commit_transaction([txn_a, txn_b])
    assert ids(catalog, "db.a") == []
    assert catalog.load_table("db.a").metadata_location == a.metadata_location
    written = files_under(tmp_path / "wh") - before
    assert all("metadata" in f and f.endswith(".metadata.json") for f in written), written  # b's own commit


def test_an_interrupted_commit_leaves_both_old_or_both_new(tmp_path: Path) -> None:
    catalog = make_catalog("memory", tmp_path / "wh")
    catalog.create_table("db.a", SCHEMA)
    catalog.create_table("db.b", SCHEMA)
    backend = memory_backend(catalog)

    def interrupt(identifier: tuple[str, ...]) -> None:
        raise CommitFailedException(f"interrupted before swapping {identifier}")

    for step in ("before-swap", "swap-then-lost"):
        a, b = catalog.load_table("db.a"), catalog.load_table("db.b")
        txn_a, txn_b = a.new_transaction(), b.new_transaction()
        txn_a.update_properties().set("gen", step).commit()
        txn_b.update_properties().set("gen", step).commit()
        txn_a.update_properties().set("commit.retry.num-retries", "0").commit()
        if step == "before-swap":
            backend.set_before_swap(interrupt)
            with pytest.raises(CommitFailedException):
                catalog.commit_transaction([txn_a, txn_b])
            backend.set_before_swap(None)
        else:
            backend.swap_then_raise(1)  # swapped, then the answer lost: settled by re-reading
            catalog.commit_transaction([txn_a, txn_b])
        gens = {catalog.load_table(n).properties().get("gen") for n in ("db.a", "db.b")}
        assert len(gens) == 1, gens
    catalog.close()


def test_an_error_during_the_swap_is_settled_by_reading_the_pointers(tmp_path: Path) -> None:
    catalog = make_catalog("memory", tmp_path / "wh")
    catalog.create_table("db.a", SCHEMA)
    catalog.create_table("db.b", SCHEMA)
    backend = memory_backend(catalog)
    txn_a = catalog.load_table("db.a").new_transaction()
    txn_b = catalog.load_table("db.b").new_transaction()
    txn_a.append(data(1))
    txn_b.append(data(2))
    calls = []

    def lose_once(identifier: tuple[str, ...]) -> None:
        calls.append(identifier)
        if len(calls) == 1:
            raise CommitStateUnknownException("the answer was lost")

    # Nothing moved: the pointers say so, the attempt counts as failed and is retried.
    backend.set_before_swap(lose_once)
    catalog.commit_transaction([txn_a, txn_b])
    backend.set_before_swap(None)
    assert ids(catalog, "db.a") == [1] and ids(catalog, "db.b") == [2]
    assert len(calls) == 3  # one failed attempt (a), then a and b
    catalog.close()


def test_creates_in_a_multi_table_commit_and_bad_input(tmp_path: Path) -> None:
    catalog = make_catalog("sql", tmp_path / "wh")
    catalog.create_table("db.a", SCHEMA)
    txn_new = catalog.create_table_transaction("db.new", SCHEMA)
    txn_new.append(data(7))
    txn_a = catalog.load_table("db.a").new_transaction()
    txn_a.append(data(8))
    catalog.commit_transaction([txn_new, txn_a])
    assert ids(catalog, "db.new") == [7] and ids(catalog, "db.a") == [8]
    t1 = catalog.load_table("db.a").new_transaction()
    t2 = catalog.load_table("db.a").new_transaction()
    with pytest.raises(ValidationError, match="one transaction per table"):
        catalog.commit_transaction([t1, t2])
    catalog.close()
    hadoop = make_catalog("hadoop", tmp_path / "h")
    hadoop.create_table("db.a", SCHEMA)
    hadoop.create_table("db.b", SCHEMA)
    ta, tb = hadoop.load_table("db.a").new_transaction(), hadoop.load_table("db.b").new_transaction()
    ta.update_properties().set("k", "v").commit()
    tb.update_properties().set("k", "v").commit()
    with pytest.raises(UnsupportedFeatureError, match="several tables atomically"):
        hadoop.commit_transaction([ta, tb])
