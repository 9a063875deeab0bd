"""``table.delete`` / ``table.update`` / ``table.upsert`` commit the snapshot Java's DELETE /
UPDATE / MERGE commits, also when they change no row: a ``delete`` when the metadata decides
the delete (Java's metadata-only delete, ``newDelete().deleteFromRowFilter``), else an
``overwrite`` that adds and removes nothing; nothing for a delete whose filter is always false.
The Spark and SQL paths: ``tests/spark/test_row_changes_noop.py``; Java's own snapshots:
``tests/interop/sql_corpus/03_changes_that_change_nothing.sql``."""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
import pytest

from icefloe import Catalog, Table
from icefloe.errors import ValidationException
from icefloe.spec.snapshots import Snapshot
from support.catalogs import ARROW_SCHEMA, rows

MODES = ("copy-on-write", "merge-on-read")


def _table(catalog: Catalog, version: int, mode: str, *, filled: bool = True) -> Table:
    properties = {"format-version": str(version)}
    properties.update({f"write.{kind}.mode": mode for kind in ("delete", "update", "merge")})
    table = catalog.create_table("db.noop", ARROW_SCHEMA, partition_by=["day"], properties=properties)
    if filled:
        table.append(rows(30))  # days 2024-01-01 .. 03, ids 0 .. 29, names a, b, c (or null)
    return table


def _assert_empty(table: Table, snapshot: Snapshot | None, operation: str, parent: Snapshot | None) -> None:
    """``snapshot`` is the table's new current snapshot, of ``operation``, changing nothing."""
    assert snapshot is not None, operation
    assert table.current_snapshot() == snapshot
    assert (snapshot.operation, snapshot.parent_snapshot_id) == (operation, parent and parent.snapshot_id)
    summary = dict(snapshot.summary)
    assert summary["changed-partition-count"] == "0", summary
    assert not [k for k in summary if k.startswith(("added-", "deleted-", "removed-"))], summary
    for key in ("total-records", "total-data-files", "total-delete-files"):
        assert summary[key] == (parent.summary[key] if parent else "0"), key


def _no_ops(table: Table) -> list[tuple[str, Callable[[], Snapshot | None]]]:
    empty = pa.Table.from_pylist([], schema=ARROW_SCHEMA)
    return [
        ("delete", lambda: table.delete("id > 1000")),  # outside every file's bounds
        ("delete", lambda: table.delete("day = '2023-06-01'")),  # a partition that does not exist
        ("overwrite", lambda: table.delete("id = 0 AND score = 1.0")),  # the rows must be read
        ("overwrite", lambda: table.update({"name": "'x'"}, where="id > 1000")),
        ("overwrite", lambda: table.update({"name": "'x'"}, where="id = 0 AND score = 1.0")),
        ("overwrite", lambda: table.upsert(empty, on=["id"]).snapshot),
    ]


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("mode", MODES)
def test_changes_that_change_nothing_commit_what_java_commits(
    memory_catalog: Catalog, version: int, mode: str
) -> None:
    table = _table(memory_catalog, version, mode)
    for operation, change in _no_ops(table):
        parent = table.current_snapshot()
        _assert_empty(table, change(), operation, parent)
    before = len(table.snapshots())
    assert table.delete("false") is None  # always false: nothing, as Java skips it
    assert len(table.snapshots()) == before
    assert len(table.new_scan().to_arrow()) == 30


@pytest.mark.parametrize("mode", MODES)
def test_a_table_without_a_snapshot(memory_catalog: Catalog, mode: str) -> None:
    """No file may match any delete: each is a metadata-only ``delete``, as in Java."""
    table = _table(memory_catalog, 2, mode, filled=False)
    expected = ["delete", "delete", "delete", "overwrite", "overwrite", "overwrite"]
    for (_, change), operation in zip(_no_ops(table), expected, strict=True):
        parent = table.current_snapshot()
        _assert_empty(table, change(), operation, parent)
    assert len(table.snapshots()) == len(expected)


def test_a_delete_of_whole_partitions_is_a_metadata_delete(memory_catalog: Catalog) -> None:
    """As Java: a ``delete`` snapshot that also removes the partition's delete files (a
    merge-on-read table, where a row-level delete would leave them)."""
    table = _table(memory_catalog, 2, "merge-on-read")
    table.delete("id = 3")  # a position delete file in 2024-01-01's partition
    gone = table.delete("day = '2024-01-01'")
    assert gone is not None and gone.operation == "delete"
    assert gone.summary["deleted-data-files"] == "1" and gone.summary["removed-delete-files"] == "1"
    assert sorted(r["id"] for r in table.new_scan().select("id").to_arrow().to_pylist()) == [
        i for i in range(30) if i % 3
    ]
    assert not [d for task in table.new_scan().plan_files() for d in task.deletes]


def test_a_metadata_delete_judges_the_table_it_commits_to(memory_catalog: Catalog) -> None:
    """Java's metadata-only delete applies its filter at commit time: rows appended meanwhile
    that it matches wholly go too; a file it matches in part fails the commit."""
    table = _table(memory_catalog, 2, "copy-on-write")
    day = rows(1).column("day")[0]

    def on_day_one(*ids: int) -> pa.Table:
        batch = rows(len(ids)).set_column(0, "id", pa.array(ids, pa.int64()))
        return batch.set_column(3, "day", pa.array([day] * len(ids)))

    stale = memory_catalog.load_table(table.identifier)
    table.append(on_day_one(300))
    assert stale.delete("day = '2024-01-01'") is not None
    assert not {0, 300} & {r["id"] for r in table.refresh().new_scan().select("id").to_arrow().to_pylist()}
    stale = memory_catalog.load_table(table.identifier)
    table.append(on_day_one(399, 401))
    with pytest.raises(ValidationException, match="some, but not all, rows match"):
        stale.delete("id < 400 AND day = '2024-01-01'")
