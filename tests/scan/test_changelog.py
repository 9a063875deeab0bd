"""Incremental changelog scans (``table.new_incremental_changelog_scan()``): scenarios.

Java's ``BaseIncrementalChangelogScan`` semantics (the tasks, ordinals, commit snapshot ids,
``replace`` snapshots skipped), extended to row-level deletes: position deletes (v2), deletion
vectors (v3) and equality deletes. Random histories are checked against time-travel diffs in
``test_changelog_random.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from icefloe import Table
from icefloe.errors import (
    InvalidDataFileError,
    NoSuchSnapshotError,
    SnapshotNotAncestorError,
    UnsupportedFeatureError,
    ValidationError,
)
from icefloe.scan import (
    AddedRowsScanTask,
    ChangelogOperation,
    DeletedDataFileScanTask,
    DeletedRowsScanTask,
)
from icefloe.scan._changelog_updates import remove_carryovers
from icefloe.spec.manifest import FileFormat
from icefloe.spec.schema import Schema
from icefloe.spec.types import DoubleType, ListType, LongType, NestedField, StringType
from scan.changelog_helpers import (
    add_rows_and_delete_some,
    compact_partition,
    data,
    equality_delete,
    new_table,
    set_mode,
)
from scan.test_changelog_random import check_changelog
from support.catalogs import make_catalog


def _snapshot_id(table: Table) -> int:
    snapshot = table.current_snapshot()
    assert snapshot is not None
    return snapshot.snapshot_id


def _changes(scan: object, *columns: str) -> list[tuple[object, ...]]:
    """(ordinal, change type, values...) of each row, sorted."""
    rows = scan.to_arrow().to_pylist()  # type: ignore[attr-defined]
    return sorted((r["_change_ordinal"], r["_change_type"], *(r[c] for c in columns)) for r in rows)


@pytest.fixture(params=[1, 2, 3], ids=lambda v: f"v{v}")
def any_version(request: pytest.FixtureRequest) -> int:
    return int(request.param)


@pytest.fixture(params=[2, 3], ids=lambda v: f"v{v}")
def row_level_version(request: pytest.FixtureRequest) -> int:
    return int(request.param)


# ---- appends, overwrites, copy-on-write ----------------------------------------------------------


def test_appends_are_inserts_in_ordinal_order(tmp_path: Path, any_version: int) -> None:
    table = new_table(tmp_path, any_version)
    table.append(data(range(3)))
    first = _snapshot_id(table)
    table.append(data(range(3, 5)))
    second = _snapshot_id(table)
    scan = table.new_incremental_changelog_scan()

    tasks = scan.plan_files()
    assert all(isinstance(t, AddedRowsScanTask) for t in tasks)
    assert [t.change_ordinal for t in tasks] == [0, 0, 0, 1, 1]
    assert {t.commit_snapshot_id for t in tasks} == {first, second}
    assert all(t.operation == ChangelogOperation.INSERT and t.deletes == () for t in tasks)

    result = scan.to_arrow()
    assert result.schema.names == [
        "id",
        "cat",
        "v",
        "f",
        "_change_type",
        "_change_ordinal",
        "_commit_snapshot_id",
    ]
    assert result.schema.field("_change_ordinal").type == pa.int32()
    assert result.schema.field("_commit_snapshot_id").type == pa.int64()
    assert _changes(scan, "id") == [(0, "INSERT", i) for i in range(3)] + [(1, "INSERT", i) for i in (3, 4)]
    by_ordinal = {r["_change_ordinal"]: r["_commit_snapshot_id"] for r in result.to_pylist()}
    assert by_ordinal == {0: first, 1: second}
    assert scan.count() == 5
    assert scan.snapshots() == [table.snapshot(first), table.snapshot(second)]


def test_empty_table_and_empty_range(tmp_path: Path) -> None:
    table = new_table(tmp_path, 2)
    scan = table.new_incremental_changelog_scan()
    assert scan.plan_files() == []
    assert scan.to_arrow().num_rows == 0
    assert scan.to_arrow().schema.names[-3:] == ["_change_type", "_change_ordinal", "_commit_snapshot_id"]
    table.append(data(range(2)))
    current = _snapshot_id(table)
    assert table.new_incremental_changelog_scan().from_snapshot_exclusive(current).plan_files() == []


def test_overwrite_deletes_the_removed_files_rows(tmp_path: Path, any_version: int) -> None:
    table = new_table(tmp_path, any_version)
    table.append(data(range(6)))
    table.overwrite(data([100, 101], cat="a"), where="cat = 'a'")
    scan = table.new_incremental_changelog_scan().from_snapshot_exclusive(table.snapshots()[0].snapshot_id)
    tasks = scan.plan_files()
    assert [type(t) for t in tasks] == [DeletedDataFileScanTask, AddedRowsScanTask]
    assert _changes(scan, "id", "cat") == [
        (0, "DELETE", 0, "a"),
        (0, "DELETE", 3, "a"),
        (0, "INSERT", 100, "a"),
        (0, "INSERT", 101, "a"),
    ]


def test_copy_on_write_delete_shows_carryovers_unless_removed(tmp_path: Path, any_version: int) -> None:
    table = new_table(tmp_path, any_version)
    table.append(data(range(6)))
    set_mode(table, "copy-on-write")
    table.delete("id = 3")
    start = table.snapshots()[0].snapshot_id
    scan = table.new_incremental_changelog_scan().from_snapshot_exclusive(start)
    # As Java's scan and Spark's ``changes`` table: the rewritten file's other row is a
    # DELETE and an INSERT (a carry-over).
    assert _changes(scan, "id") == [(0, "DELETE", 0), (0, "DELETE", 3), (0, "INSERT", 0)]
    assert _changes(scan.remove_carryovers(), "id") == [(0, "DELETE", 3)]
    # Selecting columns does not change what a carry-over is (whole rows are compared).
    assert _changes(scan.remove_carryovers().select("id"), "id") == [(0, "DELETE", 3)]
    assert scan.remove_carryovers().select("id").to_arrow().schema.names == [
        "id",
        "_change_type",
        "_change_ordinal",
        "_commit_snapshot_id",
    ]


def test_copy_on_write_update_computes_updates(tmp_path: Path, any_version: int) -> None:
    table = new_table(tmp_path, any_version)
    table.append(data(range(6)))
    set_mode(table, "copy-on-write")
    table.upsert(data([0, 7], v=50), on=["id"])
    scan = table.new_incremental_changelog_scan().from_snapshot_exclusive(table.snapshots()[0].snapshot_id)
    updates = scan.compute_updates("id").to_arrow().to_pylist()
    assert [(r["_change_type"], r["id"], r["v"]) for r in updates] == [
        ("UPDATE_BEFORE", 0, 0),
        ("UPDATE_AFTER", 0, 50),
        ("INSERT", 7, 57),
    ]


# ---- merge-on-read ---------------------------------------------------------------------------------


def test_merge_on_read_deletes_are_deleted_rows_tasks(tmp_path: Path, row_level_version: int) -> None:
    table = new_table(tmp_path, row_level_version)
    table.append(data(range(9)))
    set_mode(table, "merge-on-read")
    table.delete("id = 3")
    table.delete("id = 6")  # the same file again: only the newly deleted row
    scan = table.new_incremental_changelog_scan().from_snapshot_exclusive(table.snapshots()[0].snapshot_id)
    tasks = scan.plan_files()
    assert [type(t) for t in tasks] == [DeletedRowsScanTask, DeletedRowsScanTask]
    first, second = tasks
    assert isinstance(first, DeletedRowsScanTask) and isinstance(second, DeletedRowsScanTask)
    assert first.existing_deletes == ()
    assert len(first.added_deletes) == 1 and len(second.added_deletes) == 1
    assert len(second.existing_deletes) == 1
    expected_format = FileFormat.PUFFIN if row_level_version >= 3 else FileFormat.PARQUET
    assert second.added_deletes[0].file_format == expected_format
    assert _changes(scan, "id") == [(0, "DELETE", 3), (1, "DELETE", 6)]


def test_merge_on_read_update_computes_updates(tmp_path: Path, row_level_version: int) -> None:
    table = new_table(tmp_path, row_level_version)
    table.append(data(range(6)))
    set_mode(table, "merge-on-read")
    table.upsert(data([1, 4, 9], v=10), on=["id"])
    scan = table.new_incremental_changelog_scan().from_snapshot_exclusive(table.snapshots()[0].snapshot_id)
    assert _changes(scan, "id", "v") == [
        (0, "DELETE", 1, 1),
        (0, "DELETE", 4, 4),
        (0, "INSERT", 1, 11),
        (0, "INSERT", 4, 14),
        (0, "INSERT", 9, 19),
    ]
    rows = scan.compute_updates("id").to_arrow().to_pylist()
    kinds = [(r["_change_type"], r["id"]) for r in rows]
    assert sorted(kinds) == [
        ("INSERT", 9),
        ("UPDATE_AFTER", 1),
        ("UPDATE_AFTER", 4),
        ("UPDATE_BEFORE", 1),
        ("UPDATE_BEFORE", 4),
    ]
    # Each UPDATE_AFTER follows its UPDATE_BEFORE.
    for index, (kind, key) in enumerate(kinds):
        if kind == "UPDATE_BEFORE":
            assert kinds[index + 1] == ("UPDATE_AFTER", key)


def test_equality_deletes_and_reinserts_in_one_commit(tmp_path: Path, row_level_version: int) -> None:
    table = new_table(tmp_path, row_level_version)
    table.append(data(range(9)))
    start = _snapshot_id(table)
    # Delete ids 0, 3 (and 99, absent) of partition a; insert a new version of 3 in the same
    # commit: the equality delete does not apply to rows of its own commit.
    equality_delete(table, [0, 3, 99], cat="a", insert=data([3], cat="a", v=500))
    scan = table.new_incremental_changelog_scan().from_snapshot_exclusive(start)
    tasks = scan.plan_files()
    assert {type(t) for t in tasks} == {DeletedRowsScanTask, AddedRowsScanTask}
    added = [t for t in tasks if isinstance(t, AddedRowsScanTask)]
    assert all(t.deletes == () for t in added)
    assert _changes(scan, "id", "v") == [(0, "DELETE", 0, 0), (0, "DELETE", 3, 3), (0, "INSERT", 3, 503)]
    rows = scan.compute_updates("id").to_arrow().to_pylist()
    assert [(r["_change_type"], r["id"], r["v"]) for r in rows] == [
        ("DELETE", 0, 0),
        ("UPDATE_BEFORE", 3, 3),
        ("UPDATE_AFTER", 3, 503),
    ]
    # Later position deletes apply after the equality deletes: deleted rows are not deleted again.
    set_mode(table, "merge-on-read")
    table.delete("cat = 'a' AND id < 7")
    later = table.new_incremental_changelog_scan().from_snapshot_exclusive(_snapshot_id(table.refresh()))
    assert later.plan_files() == []
    check_changelog(table)


def test_rows_added_and_deleted_by_one_commit_are_no_change(tmp_path: Path, row_level_version: int) -> None:
    table = new_table(tmp_path, row_level_version)
    table.append(data(range(3)))
    start = _snapshot_id(table)
    add_rows_and_delete_some(table, data(range(10, 15), cat="b"), [0, 2])
    scan = table.new_incremental_changelog_scan().from_snapshot_exclusive(start)
    (task,) = scan.plan_files()
    assert isinstance(task, AddedRowsScanTask) and len(task.deletes) == 1
    assert _changes(scan, "id") == [(0, "INSERT", 11), (0, "INSERT", 13), (0, "INSERT", 14)]


def test_removed_file_excludes_rows_deleted_before(tmp_path: Path, row_level_version: int) -> None:
    table = new_table(tmp_path, row_level_version)
    table.append(data(range(9)))
    set_mode(table, "merge-on-read")
    table.delete("id = 0")
    equality_delete(table, [6], cat="a")
    start = _snapshot_id(table)
    table.overwrite(data([50], cat="a"), where="cat = 'a'")
    scan = table.new_incremental_changelog_scan().from_snapshot_exclusive(start)
    removed = [t for t in scan.plan_files() if isinstance(t, DeletedDataFileScanTask)]
    assert len(removed) == 1 and len(removed[0].existing_deletes) == 2
    assert _changes(scan, "id") == [(0, "DELETE", 3), (0, "INSERT", 50)]
    check_changelog(table)


# ---- ranges, filters, projections -------------------------------------------------------------------


def test_ranges(tmp_path: Path) -> None:
    table = new_table(tmp_path, 2)
    ids = []
    for start in range(0, 8, 2):
        table.append(data(range(start, start + 2)))
        ids.append(_snapshot_id(table))
    scan = table.new_incremental_changelog_scan()
    assert _changes(scan.from_snapshot_exclusive(ids[1]), "id") == [
        (0, "INSERT", 4),
        (0, "INSERT", 5),
        (1, "INSERT", 6),
        (1, "INSERT", 7),
    ]
    assert _changes(scan.from_snapshot_inclusive(ids[1]).to_snapshot(ids[2]), "id") == [
        (0, "INSERT", 2),
        (0, "INSERT", 3),
        (1, "INSERT", 4),
        (1, "INSERT", 5),
    ]
    assert _changes(scan.to_snapshot(ids[0]), "id") == [(0, "INSERT", 0), (0, "INSERT", 1)]
    table.manage_snapshots().create_tag("t1", ids[1]).commit()
    assert _changes(scan.from_snapshot_exclusive("t1").to_snapshot(ids[2]), "id") == [
        (0, "INSERT", 4),
        (0, "INSERT", 5),
    ]
    with pytest.raises(SnapshotNotAncestorError):
        scan.from_snapshot_inclusive(ids[3]).to_snapshot(ids[1]).plan_files()
    with pytest.raises(NoSuchSnapshotError):
        scan.to_snapshot(12345)
    with pytest.raises(NoSuchSnapshotError):
        scan.from_snapshot_inclusive(12345)


def test_filters_and_projections(tmp_path: Path, row_level_version: int) -> None:
    table = new_table(tmp_path, row_level_version)
    table.append(data(range(12)))
    set_mode(table, "merge-on-read")
    table.delete("id IN (1, 3, 4)")
    scan = table.new_incremental_changelog_scan().filter("cat = 'b'")
    # Partition pruning: only the files of partition b.
    assert {t.file.partition for t in scan.plan_files()} == {("b",)}
    assert _changes(scan.select("id"), "id") == [(0, "INSERT", i) for i in (1, 4, 7, 10)] + [
        (1, "DELETE", 1),
        (1, "DELETE", 4),
    ]
    # A filter on a column that is not selected; the residual applies to every kind of task.
    filtered = table.new_incremental_changelog_scan().filter("v >= 3 AND v <= 5").select("id")
    assert filtered.to_arrow().schema.names == [
        "id",
        "_change_type",
        "_change_ordinal",
        "_commit_snapshot_id",
    ]
    assert _changes(filtered, "id") == [
        (0, "INSERT", 3),
        (0, "INSERT", 4),
        (0, "INSERT", 5),
        (1, "DELETE", 3),
        (1, "DELETE", 4),
    ]
    check_changelog(table, "v >= 3 AND v <= 5", columns=("id", "v"))
    with pytest.raises(UnsupportedFeatureError):
        scan.plan_tasks()


# ---- compaction, expiry -----------------------------------------------------------------------------


def test_compaction_snapshots_are_skipped(tmp_path: Path, row_level_version: int) -> None:
    table = new_table(tmp_path, row_level_version)
    table.append(data(range(6)))
    set_mode(table, "merge-on-read")
    table.delete("id = 0")
    assert compact_partition(table, "a")
    compaction = _snapshot_id(table)
    assert table.snapshot(compaction).operation == "replace"  # type: ignore[union-attr]
    table.delete("id = 3")
    scan = table.new_incremental_changelog_scan()
    assert compaction not in {s.snapshot_id for s in scan.snapshots()}
    assert compaction not in {t.commit_snapshot_id for t in scan.plan_files()}
    # The delete after the compaction deletes a row of the compacted file.
    assert _changes(scan, "id")[-1] == (2, "DELETE", 3)
    assert table.new_incremental_changelog_scan().from_snapshot_inclusive(compaction).count() == 1
    check_changelog(table)


def test_expired_snapshots(tmp_path: Path, row_level_version: int) -> None:
    table = new_table(tmp_path, row_level_version)
    table.append(data(range(6)))
    first = _snapshot_id(table)
    set_mode(table, "merge-on-read")
    table.delete("id = 0")
    second = _snapshot_id(table)
    table.overwrite(data([20], cat="a"), where="cat = 'a'")
    third = _snapshot_id(table)
    expire = table.expire_snapshots().expire_snapshot_id(first).expire_snapshot_id(second)
    expire.clean_expired_files(False).commit()
    scan = table.new_incremental_changelog_scan()
    # An expired start works exclusively when it is the parent of a remaining ancestor.
    assert _changes(scan.from_snapshot_exclusive(second), "id") == [(0, "DELETE", 3), (0, "INSERT", 20)]
    # The whole remaining ancestry: the oldest snapshot's parent state comes from its own
    # manifests, so the row deleted before it is not deleted again.
    assert [s.snapshot_id for s in scan.snapshots()] == [third]
    assert _changes(scan, "id") == [(0, "DELETE", 3), (0, "INSERT", 20)]
    with pytest.raises(NoSuchSnapshotError):
        scan.from_snapshot_inclusive(second)
    with pytest.raises(SnapshotNotAncestorError):
        scan.from_snapshot_exclusive(first).plan_files()


def test_deleted_rows_of_cleaned_files_cannot_be_read(tmp_path: Path) -> None:
    table = new_table(tmp_path, 2)
    table.append(data(range(6)))
    first = _snapshot_id(table)
    table.overwrite(data([20], cat="a"), where="cat = 'a'")
    table.expire_snapshots().expire_snapshot_id(first).commit()  # deletes the removed file
    scan = table.new_incremental_changelog_scan()
    (removed,) = [t for t in scan.plan_files() if isinstance(t, DeletedDataFileScanTask)]
    with pytest.raises(InvalidDataFileError, match="does not exist") as raised:
        scan.to_arrow()
    assert removed.file_path in str(raised.value)


# ---- updates -------------------------------------------------------------------------------------------


def test_compute_updates_needs_unique_identifiers(tmp_path: Path) -> None:
    table = new_table(tmp_path, 2)
    table.append(data(range(3)))
    scan = table.new_incremental_changelog_scan()
    with pytest.raises(ValidationError, match="no identifier fields"):
        scan.compute_updates()
    with pytest.raises(ValidationError):
        scan.compute_updates("nope")
    # Two inserts and a delete of one key in one commit cannot be paired.
    set_mode(table, "copy-on-write")
    table.overwrite(data([0, 0], cat="a", v=9), where="cat = 'a'")
    start = table.snapshots()[0].snapshot_id
    with pytest.raises(ValidationError, match="identifier"):
        scan.from_snapshot_exclusive(start).compute_updates("id").to_arrow()


def test_compute_updates_refuses_columns_inside_lists_and_maps(tmp_path: Path) -> None:
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "tags", ListType(3, StringType())),
    )
    table = make_catalog("sql", tmp_path).create_table("db.tagged", schema)
    with pytest.raises(ValidationError, match=r"'tags\.element' is inside a list or map"):
        table.new_incremental_changelog_scan().compute_updates("tags.element")


def test_carryovers_match_nans_of_any_bit_pattern() -> None:
    # A rewrite that canonicalises NaNs still carries the row over unchanged.
    quiet_nan, other_nan = np.array([0x7FF8000000000000, 0x7FF8000000000001], dtype=np.int64).view(np.float64)
    changes = pa.table(
        {
            "id": [1, 1, 2],
            "f": pa.array([other_nan, quiet_nan, 1.0]),
            "_change_type": ["DELETE", "INSERT", "DELETE"],
        }
    )
    kept = remove_carryovers(changes, ["id", "f"])
    assert kept.column("id").to_pylist() == [2]


def test_compute_updates_defaults_to_the_identifier_fields(tmp_path: Path) -> None:
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "cat", StringType()),
        NestedField(3, "v", LongType()),
        NestedField(4, "f", DoubleType()),
        identifier_field_ids=(1,),
    )
    table = make_catalog("sql", tmp_path).create_table("db.keyed", schema, partition_by=["cat"])
    table.append(data(range(4)))
    set_mode(table, "merge-on-read")
    table.upsert(data([2], v=1), on=["id"])
    rows = table.new_incremental_changelog_scan().compute_updates().to_arrow().to_pylist()
    assert [(r["_change_ordinal"], r["_change_type"], r["id"], r["v"]) for r in rows][-2:] == [
        (1, "UPDATE_BEFORE", 2, 2),
        (1, "UPDATE_AFTER", 2, 3),
    ]
