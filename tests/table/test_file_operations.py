"""new_overwrite(), new_delete(), new_replace_partitions(), new_rewrite(), new_row_delta():
what each commits (entries, statuses, sequence numbers, summaries), on every catalog kind."""

from __future__ import annotations

import pytest

from icefloe import Catalog
from icefloe.errors import ValidationError, ValidationException
from table.manifest_helpers import assert_no_orphans
from table.ops_helpers import (
    DAY_1,
    DAY_2,
    add_deletes,
    append,
    current,
    data_file,
    deletion_vector,
    equality_deletes,
    live_paths,
    make_table,
    position_deletes,
    statuses,
)


def test_overwrite_by_row_filter_replaces_a_partition(catalog: Catalog) -> None:
    table = make_table(catalog, 2)
    a, b = data_file(table, "a", DAY_1), data_file(table, "b", DAY_2)
    first = append(table, a, b)
    c = data_file(table, "c", DAY_2)
    table.new_overwrite().overwrite_by_row_filter(f"date = '{DAY_2}'").add_file(c).commit()
    snapshot = current(table)
    assert snapshot.operation == "overwrite"
    assert live_paths(table) == {"data-a", "data-c"}
    entries = statuses(table)
    assert entries["data-b"] == ("DELETED", snapshot.snapshot_id, first.sequence_number)
    assert entries["data-a"] == ("EXISTING", first.snapshot_id, first.sequence_number)
    assert entries["data-c"] == ("ADDED", snapshot.snapshot_id, snapshot.sequence_number)
    summary = snapshot.summary
    assert summary["added-data-files"] == "1" and summary["deleted-data-files"] == "1"
    assert summary["total-data-files"] == "2" and summary["total-records"] == "20"
    # The scan sees the new files only.
    assert {t.file.file_path for t in table.new_scan().plan_files()} == {a.file_path, c.file_path}
    assert_no_orphans(table)


def test_overwrite_filter_matching_part_of_a_file_fails(catalog: Catalog) -> None:
    table = make_table(catalog, 2)
    append(table, data_file(table, "a", DAY_1, ids=(0, 9)))
    with pytest.raises(ValidationException, match=r"some, but not all, rows match filter.*data-a"):
        table.new_overwrite().overwrite_by_row_filter("id < 5").commit()
    # Metrics prove whole files: ids 0..9 all match id < 10.
    table.new_overwrite().overwrite_by_row_filter("id < 10").commit()
    assert live_paths(table) == set()
    assert_no_orphans(table)


def test_delete_files_by_path_file_and_filter(catalog: Catalog, format_version: int) -> None:
    table = make_table(catalog, format_version)
    a, b, c = (data_file(table, n, d) for n, d in (("a", DAY_1), ("b", DAY_2), ("c", DAY_2)))
    append(table, a, b, c)
    table.new_delete().delete_file(a.file_path).commit()
    assert current(table).operation == "delete"
    assert live_paths(table) == {"data-b", "data-c"}
    table.new_delete().delete_file(b).commit()
    table.new_delete().delete_from_row_filter(f"date = '{DAY_2}'").commit()
    assert live_paths(table) == set()
    assert current(table).summary["total-data-files"] == "0"
    # A file that is not there: ignored unless validate_files_exist().
    table.new_delete().delete_file(a.file_path).commit()
    with pytest.raises(ValidationException, match="Missing required files to delete: /path/to/data-a"):
        table.new_delete().delete_file(a.file_path).validate_files_exist().commit()
    assert_no_orphans(table)


def test_delete_by_filter_also_removes_matching_delete_files(catalog: Catalog) -> None:
    table = make_table(catalog, 2)
    a, b = data_file(table, "a", DAY_1), data_file(table, "b", DAY_2)
    append(table, a, b)
    add_deletes(table, position_deletes(table, "pa", DAY_1, a), position_deletes(table, "pb", DAY_2, b))
    table.new_delete().delete_from_row_filter(f"date = '{DAY_1}'").commit()
    assert live_paths(table) == {"data-b", "pos-pb"}
    assert current(table).summary["removed-delete-files"] == "1"


def test_replace_partitions(catalog: Catalog, format_version: int) -> None:
    table = make_table(catalog, format_version)
    append(table, data_file(table, "a", DAY_1), data_file(table, "b", DAY_2), data_file(table, "c", DAY_2))
    table.new_replace_partitions().add_file(data_file(table, "d", DAY_2)).commit()
    snapshot = current(table)
    assert snapshot.operation == "overwrite" and snapshot.summary["replace-partitions"] == "true"
    assert live_paths(table) == {"data-a", "data-d"}
    # Idempotent: the same replacement again leaves the same files.
    table.new_replace_partitions().add_file(data_file(table, "d", DAY_2)).commit()
    assert live_paths(table) == {"data-a", "data-d"}
    with pytest.raises(ValidationException, match="conflicts with existing partition: date=2018-06-08"):
        table.new_replace_partitions().add_file(data_file(table, "e", DAY_1)).validate_append_only().commit()
    assert_no_orphans(table)


def test_replace_partitions_of_an_unpartitioned_table_replaces_everything(catalog: Catalog) -> None:
    table = catalog.create_table("db.flat", make_table(catalog, 2, name="db.x").schema())
    append(table, data_file(table, "a", DAY_1), data_file(table, "b", DAY_2))
    table.new_replace_partitions().add_file(data_file(table, "c", DAY_1)).commit()
    assert live_paths(table) == {"data-c"}


def test_rewrite_keeps_rows_and_can_keep_sequence_numbers(catalog: Catalog) -> None:
    table = make_table(catalog, 2)
    a, b = data_file(table, "a", DAY_1), data_file(table, "b", DAY_1)
    first = append(table, a, b)
    append(table, data_file(table, "other", DAY_2))
    merged = data_file(table, "ab", DAY_1, records=20)
    table.new_rewrite().rewrite_files([a, b], [merged], data_sequence_number=first.sequence_number).commit()
    snapshot = current(table)
    assert snapshot.operation == "replace"
    assert live_paths(table) == {"data-ab", "data-other"}
    assert statuses(table)["data-ab"] == ("ADDED", snapshot.snapshot_id, first.sequence_number)
    assert snapshot.summary["total-records"] == "30"
    # The files are gone now: rewriting them again is stale.
    with pytest.raises(ValidationException, match="Missing required files to delete"):
        table.new_rewrite().rewrite_files([a], [data_file(table, "a2", DAY_1)]).commit()
    with pytest.raises(ValidationError, match="files to delete cannot be empty"):
        table.new_rewrite().add_file(data_file(table, "x", DAY_1)).commit()
    assert_no_orphans(table)


def test_row_delta_operations_and_summaries(catalog: Catalog) -> None:
    table = make_table(catalog, 2)
    a = data_file(table, "a", DAY_1)
    table.new_row_delta().add_rows(a).commit()
    assert current(table).operation == "overwrite"  # as Java 1.9 names a row delta of rows only
    pos, eq = position_deletes(table, "p", DAY_1, a), equality_deletes(table, "e", DAY_1)
    table.new_row_delta().add_deletes(pos).add_deletes(eq).commit()
    snapshot = current(table)
    assert snapshot.operation == "delete"
    assert snapshot.summary["added-position-delete-files"] == "1"
    assert snapshot.summary["added-equality-delete-files"] == "1"
    assert snapshot.summary["total-delete-files"] == "2"
    b = data_file(table, "b", DAY_1)
    table.new_row_delta().add_rows(b).remove_deletes(pos).commit()
    assert current(table).operation == "overwrite"
    assert live_paths(table) == {"data-a", "data-b", "eq-e"}


def test_delete_files_need_the_right_format(catalog: Catalog) -> None:
    v1, v2, v3 = (make_table(catalog, v, name=f"db.v{v}") for v in (1, 2, 3))
    a1 = data_file(v1, "a", DAY_1)
    with pytest.raises(ValidationError, match="need format version 2"):
        v1.new_row_delta().add_deletes(position_deletes(v1, "p", DAY_1, a1))
    a3 = data_file(v3, "a", DAY_1)
    with pytest.raises(ValidationError, match="take deletion vectors"):
        v3.new_row_delta().add_deletes(position_deletes(v3, "p", DAY_1, a3))
    a2 = data_file(v2, "a", DAY_1)
    with pytest.raises(ValidationError, match="deletion vectors need format version 3"):
        v2.new_row_delta().add_deletes(deletion_vector(v2, "d", a2))
    op = v3.new_row_delta().add_deletes(deletion_vector(v3, "d1", a3))
    with pytest.raises(ValidationError, match="two deletion vectors for data file"):
        op.add_deletes(deletion_vector(v3, "d2", a3, offset=100))


def test_delete_files_below_every_live_data_sequence_number_are_dropped(catalog: Catalog) -> None:
    table = make_table(catalog, 2)
    a = data_file(table, "a", DAY_1)
    append(table, a)
    read_at = add_deletes(table, position_deletes(table, "p", DAY_1, a))
    # A compaction applied the deletes: the new file gets a new sequence number; the
    # position deletes can no longer apply to any live file and go with the commit.
    rewrite = table.new_rewrite().validate_from_snapshot(read_at.snapshot_id)
    rewrite.rewrite_files([a], [data_file(table, "a2", DAY_1, records=9)]).commit()
    assert live_paths(table) == {"data-a2"}
    assert current(table).summary["removed-position-delete-files"] == "1"


def test_stage_only_and_branches(catalog: Catalog) -> None:
    table = make_table(catalog, 2)
    a = data_file(table, "a", DAY_1)
    main = append(table, a)
    table.new_delete().delete_file(a).to_branch("audit").commit()
    assert current(table).snapshot_id == main.snapshot_id
    audit = table.snapshot("audit")
    assert audit is not None and live_paths(table, audit) == set()
    staged = table.new_overwrite().add_file(data_file(table, "b", DAY_2)).stage_only()
    staged.commit()
    assert current(table).snapshot_id == main.snapshot_id
    assert len(table.snapshots()) == 3


def test_apply_returns_the_snapshot_without_committing(catalog: Catalog) -> None:
    table = make_table(catalog, 2)
    a = data_file(table, "a", DAY_1)
    main = append(table, a)
    snapshot = table.new_delete().delete_file(a).apply()
    assert snapshot.parent_snapshot_id == main.snapshot_id and snapshot.operation == "delete"
    assert current(table).snapshot_id == main.snapshot_id
