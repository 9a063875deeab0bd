"""ManageSnapshots: branches, tags, rollback, cherry-pick, retention, conflicts."""

from __future__ import annotations

import datetime as dt

import pytest

from icefloe import Catalog, Table
from icefloe.errors import (
    CommitFailedException,
    NoSuchSnapshotError,
    UnknownSnapshotError,
    ValidationError,
    ValidationException,
)
from icefloe.spec.snapshots import SnapshotRefType
from support.catalogs import ARROW_SCHEMA, rows, sorted_rows


def _table_with_snapshots(catalog: Catalog, n: int = 3) -> tuple[Table, list[int]]:
    table = catalog.create_table("db.t", ARROW_SCHEMA)
    ids = []
    for i in range(n):
        snapshot = table.append(rows(2, start=10 * i))
        assert snapshot is not None
        ids.append(snapshot.snapshot_id)
    return table, ids


def test_branches_and_tags(catalog: Catalog) -> None:
    table, (s1, s2, s3) = _table_with_snapshots(catalog)
    table.manage_snapshots().create_branch("dev").create_tag("v1", s1).create_branch("old", s2).commit()
    refs = catalog.load_table("db.t").refs()
    assert refs["dev"].snapshot_id == s3 and refs["dev"].type == SnapshotRefType.BRANCH
    assert refs["v1"].snapshot_id == s1 and refs["v1"].type == SnapshotRefType.TAG
    assert refs["old"].snapshot_id == s2
    assert table.new_scan().use_ref("v1").to_arrow().num_rows == 2

    table.manage_snapshots().replace_tag("v1", s2).rename_branch("old", "older").replace_branch(
        "dev", "v1"
    ).commit()
    refs = catalog.load_table("db.t").refs()
    assert refs["v1"].snapshot_id == s2
    assert "old" not in refs and refs["older"].snapshot_id == s2
    assert refs["dev"].snapshot_id == s2

    table.manage_snapshots().replace_branch("dev", s1).remove_tag("v1").remove_branch("older").commit()
    refs = catalog.load_table("db.t").refs()
    assert set(refs) == {"main", "dev"} and refs["dev"].snapshot_id == s1
    assert table.current_snapshot().snapshot_id == s3  # type: ignore[union-attr]


def test_ref_errors_name_the_ref(memory_catalog: Catalog) -> None:
    table, (s1, s2, _) = _table_with_snapshots(memory_catalog)
    table.manage_snapshots().create_branch("b", s1).create_tag("t", s1).commit()
    cases = [
        (lambda m: m.remove_branch("main"), "main"),
        (lambda m: m.rename_branch("main", "x"), "main"),
        (lambda m: m.create_branch("b"), "b"),
        (lambda m: m.create_tag("b", s1), "b"),
        (lambda m: m.remove_branch("t"), "t"),
        (lambda m: m.remove_tag("b"), "b"),
        (lambda m: m.remove_tag("nope"), "nope"),
        (lambda m: m.rename_branch("b", "t"), "t"),
        (lambda m: m.replace_tag("b", s2), "b"),
        (lambda m: m.replace_branch("t", s2), "t"),
        (lambda m: m.replace_branch("b", "nope"), "nope"),
        (lambda m: m.create_tag("x", 12345), "x"),
        (lambda m: m.set_min_snapshots_to_keep("t", 2), "t"),
        (lambda m: m.set_max_snapshot_age_ms("nope", 2), "nope"),
        (lambda m: m.set_max_ref_age_ms("nope", 2), "nope"),
    ]
    for call, name in cases:
        with pytest.raises(ValidationError, match=name):
            call(table.manage_snapshots())
    with pytest.raises(ValidationError):
        table.manage_snapshots().set_min_snapshots_to_keep("b", 0)
    assert set(memory_catalog.load_table("db.t").refs()) == {"main", "b", "t"}


def test_an_unknown_snapshot_id_is_a_bad_argument_that_java_code_also_catches(
    memory_catalog: Catalog,
) -> None:
    """``except ValidationError`` (a bad argument) catches rollback_to(42): the table has no
    snapshot 42. Java raises ValidationException there, so that catches it too."""
    table, _ = _table_with_snapshots(memory_catalog)
    calls = {
        "roll back to": lambda m: m.rollback_to(42),
        "set the current snapshot to": lambda m: m.set_current_snapshot(42),
        "cherry-pick": lambda m: m.cherrypick(42),
        "point tag 'v9' at": lambda m: m.create_tag("v9", 42),
        "point branch 'b9' at": lambda m: m.create_branch("b9", 42),
    }
    for action, call in calls.items():
        try:
            call(table.manage_snapshots())
        except ValidationError as e:  # what a Python user writes for a bad argument
            error: Exception = e
        else:
            pytest.fail(f"{action}: no error")
        assert isinstance(error, UnknownSnapshotError) and error.snapshot_id == 42
        assert isinstance(error, NoSuchSnapshotError) and isinstance(error, LookupError)
        assert isinstance(error, ValidationException)  # Java's type for it
        assert str(error) == (
            f"cannot {action} snapshot 42: table {table.name()} has no snapshot with this id (unknown snapshot id)"
        )
    assert table.current_snapshot() is not None and set(table.refs()) == {"main"}


def test_a_conflict_is_not_a_bad_argument(memory_catalog: Catalog) -> None:
    """ValidationException (a conflict with the table's state) and ValidationError (a bad
    argument) are unrelated: one except clause does not catch the other."""
    table, (s1, _, s3) = _table_with_snapshots(memory_catalog)
    table.manage_snapshots().rollback_to(s1).commit()
    with pytest.raises(ValidationException) as info:
        table.manage_snapshots().rollback_to(s3)  # exists, but not an ancestor any more
    assert not isinstance(info.value, ValidationError) and not isinstance(info.value, ValueError)
    assert str(info.value).startswith(f"cannot roll back table {table.name()} to snapshot {s3}: ")
    assert not issubclass(ValidationException, ValidationError)
    assert not issubclass(ValidationError, ValidationException)


def test_ref_and_time_errors_name_the_table_and_show_utc_times(memory_catalog: Catalog) -> None:
    table, (s1, _, _) = _table_with_snapshots(memory_catalog)
    table.manage_snapshots().create_tag("v1", s1).commit()
    name = table.name()
    with pytest.raises(ValidationError) as info:
        table.manage_snapshots().create_branch("v1")
    assert str(info.value) == f"cannot create branch 'v1': table {name} already has a tag named 'v1'"
    with pytest.raises(ValidationError) as info:
        table.manage_snapshots().create_branch("b").rename_branch("b", "main")
    assert (
        str(info.value)
        == f"cannot rename branch 'b' to 'main': table {name} already has a branch named 'main'"
    )
    with pytest.raises(ValidationError) as info:
        table.manage_snapshots().remove_branch("nope")
    assert str(info.value) == f"table {name} has no branch 'nope'"
    first = min(s.timestamp_ms for s in table.snapshots())
    with pytest.raises(NoSuchSnapshotError) as info:
        table.manage_snapshots().rollback_to_time(first)
    iso = dt.datetime.fromtimestamp(first / 1000, dt.UTC).isoformat(timespec="milliseconds")
    assert str(info.value) == (
        f"cannot roll back table {name}: no snapshot in its history is older than {iso.replace('+00:00', 'Z')}"
    )
    assert isinstance(info.value, ValidationError)


def test_calls_see_earlier_calls(memory_catalog: Catalog) -> None:
    table, (s1, _, _) = _table_with_snapshots(memory_catalog)
    manage = table.manage_snapshots().create_branch("a", s1).rename_branch("a", "b")
    with pytest.raises(ValidationError, match="a"):
        manage.remove_branch("a")
    manage.rollback_to(s1).create_branch("at-rollback").commit()
    refs = table.refs()
    assert refs["b"].snapshot_id == s1 and "a" not in refs
    assert refs["at-rollback"].snapshot_id == s1
    assert table.current_snapshot().snapshot_id == s1  # type: ignore[union-attr]


def test_retention_settings(catalog: Catalog) -> None:
    table, (s1, _, _) = _table_with_snapshots(catalog)
    table.manage_snapshots().create_branch("b", s1).create_tag("t", s1).commit()
    table.manage_snapshots().set_min_snapshots_to_keep("b", 3).set_max_snapshot_age_ms(
        "b", 1000
    ).set_max_ref_age_ms("t", 5000).set_max_ref_age_ms("b", 7000).commit()
    refs = catalog.load_table("db.t").refs()
    assert (refs["b"].min_snapshots_to_keep, refs["b"].max_snapshot_age_ms, refs["b"].max_ref_age_ms) == (
        3,
        1000,
        7000,
    )
    assert refs["t"].max_ref_age_ms == 5000
    # Moving and renaming a branch keeps its retention.
    table.manage_snapshots().replace_branch("b", "main").rename_branch("b", "c").commit()
    ref = catalog.load_table("db.t").refs()["c"]
    assert (ref.snapshot_id, ref.min_snapshots_to_keep, ref.max_ref_age_ms) == (
        table.current_snapshot().snapshot_id,  # type: ignore[union-attr]
        3,
        7000,
    )


def test_commits_to_a_branch_keep_its_retention(catalog: Catalog) -> None:
    table, _ = _table_with_snapshots(catalog)
    table.manage_snapshots().set_min_snapshots_to_keep("main", 5).set_max_ref_age_ms("main", 9000).commit()
    table.append(rows(1, start=100))  # a snapshot producer moves main
    table.new_delete().delete_from_row_filter("id = 100").commit()
    ref = catalog.load_table("db.t").refs()["main"]
    assert (ref.min_snapshots_to_keep, ref.max_ref_age_ms) == (5, 9000)


def test_fast_forward(memory_catalog: Catalog) -> None:
    table, (s1, _, s3) = _table_with_snapshots(memory_catalog)
    table.manage_snapshots().create_branch("b", s1).commit()
    table.manage_snapshots().fast_forward_branch("b", "main").commit()
    assert table.refs()["b"].snapshot_id == s3
    # A branch that diverged cannot be fast-forwarded.
    table.new_fast_append().to_branch("b").append_file(
        table.current_snapshot().added_data_files(table.io())[0]
    ).commit()  # type: ignore[union-attr]
    head_b = table.refs()["b"].snapshot_id
    table.append(rows(1, start=100))
    with pytest.raises(ValidationException, match="fast-forward"):
        table.manage_snapshots().fast_forward_branch("main", "b")
    assert table.refs()["b"].snapshot_id == head_b


def test_set_current_and_rollback(catalog: Catalog) -> None:
    table, (_, s2, s3) = _table_with_snapshots(catalog)
    manage = table.manage_snapshots().rollback_to(s2)
    assert manage.apply().snapshot_id == s2  # type: ignore[union-attr]
    assert table.current_snapshot().snapshot_id == s3  # type: ignore[union-attr]
    manage.commit()
    assert catalog.load_table("db.t").current_snapshot().snapshot_id == s2  # type: ignore[union-attr]
    assert len(table.new_scan().to_arrow()) == 4
    # s3 is no longer an ancestor: rollback refuses it, set_current_snapshot accepts it.
    with pytest.raises(ValidationException, match=str(s3)):
        table.manage_snapshots().rollback_to(s3)
    table.manage_snapshots().set_current_snapshot(s3).commit()
    assert table.current_snapshot().snapshot_id == s3  # type: ignore[union-attr]
    assert [h.snapshot_id for h in table.history()][-3:] == [s3, s2, s3]
    with pytest.raises(ValidationException, match="unknown snapshot"):
        table.manage_snapshots().set_current_snapshot(42)


def test_rollback_to_time(memory_catalog: Catalog) -> None:
    table, (s1, s2, s3) = _table_with_snapshots(memory_catalog)
    ts = {s.snapshot_id: s.timestamp_ms for s in table.snapshots()}
    table.manage_snapshots().rollback_to_time(ts[s3]).commit()  # strictly older: s2
    assert table.current_snapshot().snapshot_id == s2  # type: ignore[union-attr]
    with pytest.raises(ValidationError, match="older than"):
        table.manage_snapshots().rollback_to_time(ts[s1])


def _staged_append(table: Table, start: int, n: int = 2) -> int:
    """Write ``n`` rows as a staged (unpublished) append; returns its snapshot id."""
    txn = table.new_transaction()
    snapshot = txn.append(rows(n, start=start))
    assert snapshot is not None
    txn.commit_transaction()
    # Move main back: the append becomes an orphan snapshot, as a staged WAP write.
    table.manage_snapshots().rollback_to(snapshot.parent_snapshot_id).commit()  # type: ignore[arg-type]
    return snapshot.snapshot_id


def test_cherrypick_append(catalog: Catalog) -> None:
    table, (_, _, s3) = _table_with_snapshots(catalog)
    staged = _staged_append(table, start=100)
    table.append(rows(1, start=200))  # main moves on: not a fast-forward any more
    table.manage_snapshots().cherrypick(staged).commit()
    current = catalog.load_table("db.t").current_snapshot()
    assert current is not None and current.snapshot_id != staged
    assert current.operation == "append"
    assert current.summary["source-snapshot-id"] == str(staged)
    assert current.summary["added-data-files"] == "1"
    ids = [r["id"] for r in sorted_rows(table.new_scan().to_arrow())]
    assert ids == [0, 1, 10, 11, 20, 21, 100, 101, 200]
    # Picking it again (or an ancestor) is refused.
    with pytest.raises(ValidationException, match="already picked"):
        table.manage_snapshots().cherrypick(staged)
    with pytest.raises(ValidationException, match="already an ancestor"):
        table.manage_snapshots().cherrypick(s3)


def test_cherrypick_fast_forward(memory_catalog: Catalog) -> None:
    table, (_, _, s3) = _table_with_snapshots(memory_catalog)
    staged = _staged_append(table, start=100)
    assert table.current_snapshot().snapshot_id == s3  # type: ignore[union-attr]
    count = len(table.snapshots())
    table.manage_snapshots().cherrypick(staged).commit()
    assert table.current_snapshot().snapshot_id == staged  # type: ignore[union-attr]
    assert len(table.snapshots()) == count


def test_cherrypick_dynamic_overwrite(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA, partition_by=["day"])
    table.append(rows(6))  # days 1, 2, 3
    base_id = table.current_snapshot().snapshot_id  # type: ignore[union-attr]
    table.replace_partitions(rows(1, start=0))  # replaces day 1 only
    picked = table.current_snapshot()
    assert picked is not None and picked.summary.get("replace-partitions") == "true"
    table.manage_snapshots().rollback_to(base_id).commit()
    table.append(rows(1, start=1))  # day 2: not a replaced partition, not a fast-forward
    table.manage_snapshots().cherrypick(picked.snapshot_id).commit()
    current = table.current_snapshot()
    assert current is not None and current.operation == "overwrite"
    assert current.summary["source-snapshot-id"] == str(picked.snapshot_id)
    ids = [r["id"] for r in sorted_rows(table.new_scan().to_arrow())]
    assert ids == [0, 1, 1, 2, 4, 5]  # day-1 rows 3 replaced by row 0; 1 re-added on day 2


def test_cherrypick_dynamic_overwrite_of_changed_partition_is_refused(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA, partition_by=["day"])
    table.append(rows(6))
    base_id = table.current_snapshot().snapshot_id  # type: ignore[union-attr]
    table.replace_partitions(rows(1, start=0))
    picked = table.current_snapshot().snapshot_id  # type: ignore[union-attr]
    table.manage_snapshots().rollback_to(base_id).commit()
    table.append(rows(1, start=3))  # day 1 again: the partition the overwrite replaced
    with pytest.raises(ValidationException, match="changed partition"):
        table.manage_snapshots().cherrypick(picked)


def test_cherrypick_unsupported_operation(memory_catalog: Catalog) -> None:
    table, (s1, _, _) = _table_with_snapshots(memory_catalog)
    table.delete(where="id = 0")
    deleted = table.current_snapshot().snapshot_id  # type: ignore[union-attr]
    table.manage_snapshots().rollback_to(s1).commit()
    with pytest.raises(ValidationException, match="not append, dynamic overwrite, or fast-forward"):
        table.manage_snapshots().cherrypick(deleted)


def test_create_branch_in_empty_table(catalog: Catalog) -> None:
    table = catalog.create_table("db.t", ARROW_SCHEMA)
    table.manage_snapshots().create_branch("b").commit()
    loaded = catalog.load_table("db.t")
    assert loaded.current_snapshot() is None
    branch = loaded.snapshot("b")
    assert branch is not None and branch.operation == "append"


def test_in_transaction(memory_catalog: Catalog) -> None:
    table, (s1, _, _) = _table_with_snapshots(memory_catalog)
    txn = table.new_transaction()
    snapshot = txn.append(rows(1, start=500))
    assert snapshot is not None
    txn.manage_snapshots().create_tag("new", snapshot.snapshot_id).create_branch("b", s1).commit()
    assert "new" not in table.refs()
    txn.commit_transaction()
    assert memory_catalog.load_table("db.t").refs()["new"].snapshot_id == snapshot.snapshot_id


def test_concurrent_ref_change_conflicts(catalog: Catalog) -> None:
    table, (s1, s2, _) = _table_with_snapshots(catalog)
    table.manage_snapshots().create_branch("b", s1).commit()
    manage = table.manage_snapshots().replace_branch("b", s2)
    other = catalog.load_table("db.t")
    other.manage_snapshots().remove_branch("b").create_branch("b", s1).set_max_ref_age_ms("b", 10).commit()
    other.new_fast_append().to_branch("b").commit()
    with pytest.raises(CommitFailedException, match="'b'"):
        manage.commit()
    assert catalog.load_table("db.t").refs()["b"].snapshot_id == other.refs()["b"].snapshot_id


def test_concurrent_append_then_rollback_revalidates(catalog: Catalog) -> None:
    table, (s1, _, _) = _table_with_snapshots(catalog)
    manage = table.manage_snapshots().rollback_to(s1)
    other = catalog.load_table("db.t")
    other.append(rows(1, start=900))  # s1 is still an ancestor: the retry succeeds
    manage.commit()
    assert catalog.load_table("db.t").current_snapshot().snapshot_id == s1  # type: ignore[union-attr]


def test_concurrent_rollback_invalidates_rollback(catalog: Catalog) -> None:
    table, (s1, s2, _) = _table_with_snapshots(catalog)
    manage = table.manage_snapshots().rollback_to(s2)
    other = catalog.load_table("db.t")
    other.manage_snapshots().rollback_to(s1).commit()
    with pytest.raises(ValidationException, match=str(s2)):
        manage.commit()
    assert catalog.load_table("db.t").current_snapshot().snapshot_id == s1  # type: ignore[union-attr]


def test_committed_operation_is_frozen(memory_catalog: Catalog) -> None:
    table, (s1, _, _) = _table_with_snapshots(memory_catalog)
    manage = table.manage_snapshots().create_tag("t", s1)
    manage.commit()
    with pytest.raises(ValidationError):
        manage.create_tag("u", s1)
