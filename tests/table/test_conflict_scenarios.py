"""Conflict scenarios of Java's TestOverwriteWithValidation, TestReplacePartitions,
TestRowDelta, TestRewriteFiles and TestTransaction, re-expressed as a table: each scenario
sets up a table, lets a "concurrent" writer commit after the operation's starting snapshot,
then commits the operation; the outcome (commit, or ValidationException with Java's message)
is Java's.

Each scenario is a function of (catalog) that returns the operation to commit; ``OUTCOMES``
says what Java does with it. The operation is built on a table object loaded *before* the
concurrent commit (as a writer that read the table earlier), so the commit refreshes, retries
on the new parent and re-runs the validations there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from icefloe import Catalog, Table
from icefloe.errors import ValidationException
from table.ops_helpers import (
    DAY_1,
    DAY_2,
    add_deletes,
    append,
    current,
    data_file,
    deletion_vector,
    equality_deletes,
    make_table,
    position_deletes,
)

OK = None
Scenario = Callable[[Catalog], Any]
SCENARIOS: dict[str, tuple[Scenario, str | None]] = {}


def scenario(expected: str | None) -> Callable[[Scenario], Scenario]:
    """Register a scenario with Java's outcome: OK, or a regex of the ValidationException."""

    def register(fn: Scenario) -> Scenario:
        SCENARIOS[fn.__name__] = (fn, expected)
        return fn

    return register


def _stale(catalog: Catalog, table: Table) -> Table:
    """The same table as another writer sees it now (before the next commit)."""
    return catalog.load_table(table.identifier)


DAY_2_FILTER = f"date = '{DAY_2}'"
DAY_2_ID_RANGE = f"date = '{DAY_2}' AND id >= 10 AND id < 20"


# ---- TestOverwriteWithValidation ---------------------------------------------------------------


@scenario(OK)
def overwrite_empty_table_validated(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    return (
        t.new_overwrite()
        .add_file(data_file(t, "2", DAY_2))
        .overwrite_by_row_filter(DAY_2_FILTER)
        .validate_added_files_match_overwrite_filter()
        .validate_no_conflicting_data()
    )


@scenario(OK)
def overwrite_compatible_addition_validated(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    base = append(t, data_file(t, "2", DAY_2))
    writer = _stale(catalog, t)
    append(t, data_file(t, "1", DAY_1))  # another partition
    return (
        writer.new_overwrite()
        .overwrite_by_row_filter(DAY_2_FILTER)
        .add_file(data_file(writer, "2m", DAY_2))
        .validate_from_snapshot(base.snapshot_id)
        .validate_no_conflicting_data()
    )


@scenario("Found conflicting files that can contain records matching")
def overwrite_incompatible_addition_validated(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    base = append(t, data_file(t, "1", DAY_1))
    writer = _stale(catalog, t)
    append(t, data_file(t, "2", DAY_2))
    return (
        writer.new_overwrite()
        .overwrite_by_row_filter(DAY_2_FILTER)
        .add_file(data_file(writer, "2m", DAY_2))
        .validate_from_snapshot(base.snapshot_id)
        .validate_no_conflicting_data()
    )


@scenario(OK)
def overwrite_incompatible_addition_not_validated(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    base = append(t, data_file(t, "1", DAY_1))
    writer = _stale(catalog, t)
    append(t, data_file(t, "2", DAY_2))
    return (
        writer.new_overwrite()
        .overwrite_by_row_filter(DAY_2_FILTER)
        .add_file(data_file(writer, "2m", DAY_2))
        .validate_from_snapshot(base.snapshot_id)
    )


@scenario("Found conflicting files that can contain records matching")
def overwrite_without_starting_snapshot_checks_all_history(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    append(t, data_file(t, "2", DAY_2))
    return t.new_overwrite().overwrite_by_row_filter(DAY_2_FILTER).validate_no_conflicting_data()


@scenario(OK)
def overwrite_compatible_addition_by_id_range(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    base = append(t, data_file(t, "a", DAY_2, ids=(10, 19)))
    writer = _stale(catalog, t)
    append(t, data_file(t, "b", DAY_2, ids=(30, 39)))  # same day, ids outside the range
    return (
        writer.new_overwrite()
        .overwrite_by_row_filter(DAY_2_ID_RANGE)
        .add_file(data_file(writer, "am", DAY_2, ids=(10, 19)))
        .validate_from_snapshot(base.snapshot_id)
        .validate_no_conflicting_data()
    )


@scenario("Found conflicting files that can contain records matching")
def overwrite_incompatible_addition_by_id_range(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    base = append(t, data_file(t, "a", DAY_2, ids=(10, 19)))
    writer = _stale(catalog, t)
    append(t, data_file(t, "b", DAY_2, ids=(15, 25)))
    return (
        writer.new_overwrite()
        .overwrite_by_row_filter(DAY_2_ID_RANGE)
        .add_file(data_file(writer, "am", DAY_2, ids=(10, 19)))
        .validate_from_snapshot(base.snapshot_id)
        .validate_no_conflicting_data()
    )


@scenario("Cannot append file with rows that do not match filter")
def overwrite_strict_validation_of_added_files(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    return (
        t.new_overwrite()
        .overwrite_by_row_filter(DAY_2_FILTER)
        .add_file(data_file(t, "1", DAY_1))
        .validate_added_files_match_overwrite_filter()
    )


@scenario("Found conflicting deleted files that can contain records matching")
def overwrite_incompatible_deletion_validated(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    f2 = data_file(t, "2", DAY_2)
    base = append(t, data_file(t, "1", DAY_1), f2)
    writer = _stale(catalog, t)
    t.new_delete().delete_file(f2).commit()
    return (
        writer.new_overwrite()
        .overwrite_by_row_filter(DAY_2_FILTER)
        .add_file(data_file(writer, "2m", DAY_2))
        .validate_from_snapshot(base.snapshot_id)
        .validate_no_conflicting_deletes()
    )


@scenario(OK)
def overwrite_compatible_deletion_validated(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    f1 = data_file(t, "1", DAY_1)
    base = append(t, f1, data_file(t, "2", DAY_2))
    writer = _stale(catalog, t)
    t.new_delete().delete_file(f1).commit()
    return (
        writer.new_overwrite()
        .overwrite_by_row_filter(DAY_2_FILTER)
        .add_file(data_file(writer, "2m", DAY_2))
        .validate_from_snapshot(base.snapshot_id)
        .validate_no_conflicting_deletes()
    )


@scenario("Found conflicting deleted files that can contain records matching")
def overwrite_incompatible_rewrite_validated(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    f2 = data_file(t, "2", DAY_2)
    base = append(t, f2)
    writer = _stale(catalog, t)
    t.new_rewrite().rewrite_files([f2], [data_file(t, "2r", DAY_2)]).commit()
    return (
        writer.new_overwrite()
        .overwrite_by_row_filter(DAY_2_FILTER)
        .validate_from_snapshot(base.snapshot_id)
        .validate_no_conflicting_deletes()
    )


@scenario("Found new conflicting delete files that can apply to records matching")
def overwrite_concurrent_conflicting_position_deletes(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    f2 = data_file(t, "2", DAY_2)
    base = append(t, f2)
    writer = _stale(catalog, t)
    add_deletes(t, position_deletes(t, "p2", DAY_2, f2))
    return (
        writer.new_overwrite()
        .overwrite_by_row_filter(DAY_2_FILTER)
        .validate_from_snapshot(base.snapshot_id)
        .validate_no_conflicting_deletes()
    )


@scenario(OK)
def overwrite_concurrent_non_conflicting_position_deletes(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    f1 = data_file(t, "1", DAY_1)
    base = append(t, f1, data_file(t, "2", DAY_2))
    writer = _stale(catalog, t)
    add_deletes(t, position_deletes(t, "p1", DAY_1, f1))
    return (
        writer.new_overwrite()
        .overwrite_by_row_filter(DAY_2_FILTER)
        .validate_from_snapshot(base.snapshot_id)
        .validate_no_conflicting_deletes()
    )


@scenario("Found new conflicting delete files that can apply to records matching")
def overwrite_concurrent_conflicting_equality_deletes(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    base = append(t, data_file(t, "2", DAY_2))
    writer = _stale(catalog, t)
    add_deletes(t, equality_deletes(t, "e2", DAY_2))
    return (
        writer.new_overwrite()
        .overwrite_by_row_filter(DAY_2_FILTER)
        .validate_from_snapshot(base.snapshot_id)
        .validate_no_conflicting_deletes()
    )


@scenario("Cannot commit, found new delete for replaced data file")
def overwrite_deleted_file_got_new_position_deletes(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    f2 = data_file(t, "2", DAY_2)
    base = append(t, f2)
    writer = _stale(catalog, t)
    add_deletes(t, position_deletes(t, "p2", DAY_2, f2))
    return (
        writer.new_overwrite()
        .delete_file(f2)
        .add_file(data_file(writer, "2m", DAY_2))
        .validate_from_snapshot(base.snapshot_id)
        .validate_no_conflicting_deletes()
    )


@scenario("Cannot determine history between starting snapshot")
def overwrite_starting_snapshot_not_an_ancestor(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    append(t, data_file(t, "1", DAY_1))
    t.new_delete().delete_file(data_file(t, "1", DAY_1)).to_branch("side").commit()
    side = t.snapshot("side")
    assert side is not None
    append(t, data_file(t, "2", DAY_2))
    return (
        t.new_overwrite()
        .overwrite_by_row_filter(DAY_2_FILTER)
        .validate_from_snapshot(side.snapshot_id)
        .validate_no_conflicting_data()
    )


# ---- TestReplacePartitions ------------------------------------------------------------------


@scenario(OK)
def replace_partitions_concurrent_append_elsewhere(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    base = append(t, data_file(t, "2", DAY_2))
    writer = _stale(catalog, t)
    append(t, data_file(t, "1", DAY_1))
    return (
        writer.new_replace_partitions()
        .add_file(data_file(writer, "2m", DAY_2))
        .validate_from_snapshot(base.snapshot_id)
        .validate_no_conflicting_data()
        .validate_no_conflicting_deletes()
    )


@scenario("Found conflicting files that can contain records matching partitions \\[date=2018-06-09\\]")
def replace_partitions_concurrent_append_same_partition(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    base = append(t, data_file(t, "2", DAY_2))
    writer = _stale(catalog, t)
    append(t, data_file(t, "2b", DAY_2))
    return (
        writer.new_replace_partitions()
        .add_file(data_file(writer, "2m", DAY_2))
        .validate_from_snapshot(base.snapshot_id)
        .validate_no_conflicting_data()
    )


@scenario(OK)
def replace_partitions_concurrent_append_not_validated(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    base = append(t, data_file(t, "2", DAY_2))
    writer = _stale(catalog, t)
    append(t, data_file(t, "2b", DAY_2))
    return (
        writer.new_replace_partitions()
        .add_file(data_file(writer, "2m", DAY_2))
        .validate_from_snapshot(base.snapshot_id)
    )


@scenario("Found conflicting deleted files that can apply to records matching partitions")
def replace_partitions_concurrent_delete_same_partition(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    f2 = data_file(t, "2", DAY_2)
    base = append(t, f2, data_file(t, "2b", DAY_2))
    writer = _stale(catalog, t)
    t.new_delete().delete_file(f2).commit()
    return (
        writer.new_replace_partitions()
        .add_file(data_file(writer, "2m", DAY_2))
        .validate_from_snapshot(base.snapshot_id)
        .validate_no_conflicting_deletes()
    )


@scenario("Found new conflicting delete files that can apply to records matching partitions")
def replace_partitions_concurrent_deletes_same_partition(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    f2 = data_file(t, "2", DAY_2)
    base = append(t, f2)
    writer = _stale(catalog, t)
    add_deletes(t, position_deletes(t, "p2", DAY_2, f2))
    return (
        writer.new_replace_partitions()
        .add_file(data_file(writer, "2m", DAY_2))
        .validate_from_snapshot(base.snapshot_id)
        .validate_no_conflicting_deletes()
    )


@scenario("Found conflicting files that can contain records matching TRUE")
def replace_partitions_unpartitioned_concurrent_append(catalog: Catalog) -> Any:
    t = catalog.create_table("db.flat", make_table(catalog, 2, name="db.x").schema())
    base = append(t, data_file(t, "a", DAY_1))
    writer = _stale(catalog, t)
    append(t, data_file(t, "b", DAY_1))
    return (
        writer.new_replace_partitions()
        .add_file(data_file(writer, "c", DAY_1))
        .validate_from_snapshot(base.snapshot_id)
        .validate_no_conflicting_data()
    )


@scenario("Cannot commit file that conflicts with existing partition")
def replace_partitions_append_only_with_existing_partition(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    append(t, data_file(t, "2", DAY_2))
    return t.new_replace_partitions().add_file(data_file(t, "2m", DAY_2)).validate_append_only()


@scenario(OK)
def replace_partitions_append_only_new_partition(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    append(t, data_file(t, "2", DAY_2))
    return t.new_replace_partitions().add_file(data_file(t, "1", DAY_1)).validate_append_only()


# ---- TestRowDelta ---------------------------------------------------------------------------


@scenario(OK)
def row_delta_deletes_for_existing_file(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    f1 = data_file(t, "1", DAY_1)
    base = append(t, f1)
    writer = _stale(catalog, t)
    append(t, data_file(t, "2", DAY_2))
    return (
        writer.new_row_delta()
        .add_deletes(position_deletes(writer, "p1", DAY_1, f1))
        .validate_from_snapshot(base.snapshot_id)
        .validate_data_files_exist([f1.file_path])
        .validate_deleted_files()
    )


@scenario("Cannot commit, missing data files")
def row_delta_referenced_file_removed_by_overwrite(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    f1 = data_file(t, "1", DAY_1)
    base = append(t, f1)
    writer = _stale(catalog, t)
    t.new_overwrite().delete_file(f1).add_file(data_file(t, "1o", DAY_1)).commit()
    return (
        writer.new_row_delta()
        .add_deletes(position_deletes(writer, "p1", DAY_1, f1))
        .validate_from_snapshot(base.snapshot_id)
        .validate_data_files_exist([f1.file_path])
    )


@scenario(OK)
def row_delta_referenced_file_removed_by_overwrite_that_only_deletes(catalog: Catalog) -> Any:
    # An overwrite that only removes files is a "delete" snapshot (Java names it so), which
    # validate_data_files_exist skips unless validate_deleted_files() is set.
    t = make_table(catalog, 2)
    f1 = data_file(t, "1", DAY_1)
    base = append(t, f1)
    writer = _stale(catalog, t)
    t.new_overwrite().delete_file(f1).commit()
    return (
        writer.new_row_delta()
        .add_deletes(position_deletes(writer, "p1", DAY_1, f1))
        .validate_from_snapshot(base.snapshot_id)
        .validate_data_files_exist([f1.file_path])
    )


@scenario("Cannot commit, missing data files")
def row_delta_referenced_file_removed_by_rewrite(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    f1 = data_file(t, "1", DAY_1)
    base = append(t, f1)
    writer = _stale(catalog, t)
    t.new_rewrite().rewrite_files([f1], [data_file(t, "1r", DAY_1)]).commit()
    return (
        writer.new_row_delta()
        .add_deletes(position_deletes(writer, "p1", DAY_1, f1))
        .validate_from_snapshot(base.snapshot_id)
        .validate_data_files_exist([f1.file_path])
    )


@scenario(OK)
def row_delta_referenced_file_removed_by_delete_not_validated(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    f1 = data_file(t, "1", DAY_1)
    base = append(t, f1)
    writer = _stale(catalog, t)
    t.new_delete().delete_file(f1).commit()
    return (
        writer.new_row_delta()
        .add_deletes(position_deletes(writer, "p1", DAY_1, f1))
        .validate_from_snapshot(base.snapshot_id)
        .validate_data_files_exist([f1.file_path])
    )


@scenario("Cannot commit, missing data files")
def row_delta_referenced_file_removed_by_delete_validated(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    f1 = data_file(t, "1", DAY_1)
    base = append(t, f1)
    writer = _stale(catalog, t)
    t.new_delete().delete_file(f1).commit()
    return (
        writer.new_row_delta()
        .add_deletes(position_deletes(writer, "p1", DAY_1, f1))
        .validate_from_snapshot(base.snapshot_id)
        .validate_data_files_exist([f1.file_path])
        .validate_deleted_files()
    )


@scenario("Found conflicting files that can contain records matching")
def row_delta_conflicting_append_serializable(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    f1 = data_file(t, "1", DAY_1)
    base = append(t, f1)
    writer = _stale(catalog, t)
    append(t, data_file(t, "1b", DAY_1))
    return (
        writer.new_row_delta()
        .add_deletes(position_deletes(writer, "p1", DAY_1, f1))
        .validate_from_snapshot(base.snapshot_id)
        .conflict_detection_filter(f"date = '{DAY_1}'")
        .validate_no_conflicting_data_files()
    )


@scenario(OK)
def row_delta_non_conflicting_append_serializable(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    f1 = data_file(t, "1", DAY_1)
    base = append(t, f1)
    writer = _stale(catalog, t)
    append(t, data_file(t, "2", DAY_2))
    return (
        writer.new_row_delta()
        .add_deletes(position_deletes(writer, "p1", DAY_1, f1))
        .validate_from_snapshot(base.snapshot_id)
        .conflict_detection_filter(f"date = '{DAY_1}'")
        .validate_no_conflicting_data_files()
    )


@scenario("Found new conflicting delete files that can apply to records matching")
def row_delta_conflicting_deletes(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    f1 = data_file(t, "1", DAY_1)
    base = append(t, f1)
    writer = _stale(catalog, t)
    add_deletes(t, position_deletes(t, "p1a", DAY_1, f1))
    return (
        writer.new_row_delta()
        .add_deletes(position_deletes(writer, "p1b", DAY_1, f1))
        .validate_from_snapshot(base.snapshot_id)
        .conflict_detection_filter(f"date = '{DAY_1}'")
        .validate_no_conflicting_delete_files()
    )


@scenario("Cannot commit, found new delete for replaced data file")
def row_delta_removed_file_got_concurrent_deletes(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    f1 = data_file(t, "1", DAY_1)
    base = append(t, f1)
    writer = _stale(catalog, t)
    add_deletes(t, position_deletes(t, "p1", DAY_1, f1))
    return (
        writer.new_row_delta()
        .remove_rows(f1)
        .add_rows(data_file(writer, "1u", DAY_1))
        .validate_from_snapshot(base.snapshot_id)
        .validate_no_conflicting_delete_files()
    )


@scenario("Found concurrently added DV for /path/to/data-1.parquet")
def row_delta_concurrent_dv_for_same_file(catalog: Catalog) -> Any:
    t = make_table(catalog, 3)
    f1 = data_file(t, "1", DAY_1)
    base = append(t, f1)
    writer = _stale(catalog, t)
    add_deletes(t, deletion_vector(t, "a", f1))
    return (
        writer.new_row_delta()
        .add_deletes(deletion_vector(writer, "b", f1))
        .validate_from_snapshot(base.snapshot_id)
    )


@scenario(OK)
def row_delta_concurrent_dv_for_other_file(catalog: Catalog) -> Any:
    t = make_table(catalog, 3)
    f1, f2 = data_file(t, "1", DAY_1), data_file(t, "2", DAY_2)
    base = append(t, f1, f2)
    writer = _stale(catalog, t)
    add_deletes(t, deletion_vector(t, "a", f2))
    return (
        writer.new_row_delta()
        .add_deletes(deletion_vector(writer, "b", f1))
        .validate_from_snapshot(base.snapshot_id)
    )


# ---- TestRewriteFiles ---------------------------------------------------------------------


@scenario("Found concurrently added DV for /path/to/data-1.parquet")
def rewrite_deletes_into_dv_with_concurrent_dv_for_same_file(catalog: Catalog) -> Any:
    # Position deletes of a table upgraded to v3, rewritten as a deletion vector, while another
    # writer adds a DV for the same data file: two DVs for one file would lose deletes.
    t = make_table(catalog, 2)
    f1 = data_file(t, "1", DAY_1)
    append(t, f1)
    p1 = position_deletes(t, "p1", DAY_1, f1)
    add_deletes(t, p1)
    t.update_properties().set("format-version", "3").commit()
    base = current(t)
    writer = _stale(catalog, t)
    add_deletes(t, deletion_vector(t, "a", f1))
    return (
        writer.new_rewrite()
        .delete_file(p1)
        .add_file(deletion_vector(writer, "b", f1))
        .validate_from_snapshot(base.snapshot_id)
    )


@scenario(OK)
def rewrite_deletes_into_dv_with_concurrent_dv_for_other_file(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    f1, f2 = data_file(t, "1", DAY_1), data_file(t, "2", DAY_2)
    append(t, f1, f2)
    p1 = position_deletes(t, "p1", DAY_1, f1)
    add_deletes(t, p1)
    t.update_properties().set("format-version", "3").commit()
    base = current(t)
    writer = _stale(catalog, t)
    add_deletes(t, deletion_vector(t, "a", f2))
    return (
        writer.new_rewrite()
        .delete_file(p1)
        .add_file(deletion_vector(writer, "b", f1))
        .validate_from_snapshot(base.snapshot_id)
    )


@scenario("Missing required files to delete")
def rewrite_file_removed_concurrently(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    f1 = data_file(t, "1", DAY_1)
    append(t, f1)
    writer = _stale(catalog, t)
    t.new_delete().delete_file(f1).commit()
    return writer.new_rewrite().rewrite_files([f1], [data_file(writer, "1r", DAY_1)])


@scenario("Cannot commit, found new delete for replaced data file")
def rewrite_file_got_concurrent_position_deletes(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    f1 = data_file(t, "1", DAY_1)
    base = append(t, f1)
    writer = _stale(catalog, t)
    add_deletes(t, position_deletes(t, "p1", DAY_1, f1))
    return (
        writer.new_rewrite()
        .rewrite_files([f1], [data_file(writer, "1r", DAY_1)])
        .validate_from_snapshot(base.snapshot_id)
    )


@scenario(OK)
def rewrite_keeping_sequence_number_ignores_concurrent_equality_deletes(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    f1 = data_file(t, "1", DAY_1)
    base = append(t, f1)
    writer = _stale(catalog, t)
    add_deletes(t, equality_deletes(t, "e1", DAY_1))
    return (
        writer.new_rewrite()
        .rewrite_files([f1], [data_file(writer, "1r", DAY_1)], data_sequence_number=base.sequence_number)
        .validate_from_snapshot(base.snapshot_id)
    )


@scenario("Cannot commit, found new delete for replaced data file")
def rewrite_new_sequence_number_with_concurrent_equality_deletes(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    f1 = data_file(t, "1", DAY_1)
    base = append(t, f1)
    writer = _stale(catalog, t)
    add_deletes(t, equality_deletes(t, "e1", DAY_1))
    return (
        writer.new_rewrite()
        .rewrite_files([f1], [data_file(writer, "1r", DAY_1)])
        .validate_from_snapshot(base.snapshot_id)
    )


@scenario(OK)
def rewrite_with_concurrent_append(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    f1 = data_file(t, "1", DAY_1)
    base = append(t, f1)
    writer = _stale(catalog, t)
    append(t, data_file(t, "1b", DAY_1))
    return (
        writer.new_rewrite()
        .rewrite_files([f1], [data_file(writer, "1r", DAY_1)])
        .validate_from_snapshot(base.snapshot_id)
    )


# ---- TestTransaction ------------------------------------------------------------------------


@scenario("Missing required files to delete")
def transaction_rewrite_of_file_deleted_concurrently(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    f1 = data_file(t, "1", DAY_1)
    append(t, f1)
    writer = _stale(catalog, t)
    txn = writer.new_transaction()
    txn.new_append().append_file(data_file(writer, "x", DAY_2)).commit()
    txn.new_rewrite().rewrite_files([f1], [data_file(writer, "1r", DAY_1)]).commit()
    t.new_delete().delete_file(f1).commit()
    return txn


@scenario(OK)
def transaction_of_append_and_overwrite_retries_on_concurrent_append(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    base = append(t, data_file(t, "2", DAY_2))
    writer = _stale(catalog, t)
    txn = writer.new_transaction()
    txn.new_append().append_file(data_file(writer, "1", DAY_1)).commit()
    txn.new_overwrite().overwrite_by_row_filter(DAY_2_FILTER).add_file(
        data_file(writer, "2m", DAY_2)
    ).validate_from_snapshot(base.snapshot_id).validate_no_conflicting_data().commit()
    append(t, data_file(t, "3", "2018-06-10"))
    return txn


@scenario("Found conflicting files that can contain records matching")
def transaction_overwrite_conflict_found_on_retry(catalog: Catalog) -> Any:
    t = make_table(catalog, 2)
    base = append(t, data_file(t, "1", DAY_1))
    writer = _stale(catalog, t)
    txn = writer.new_transaction()
    txn.new_overwrite().overwrite_by_row_filter(DAY_2_FILTER).add_file(
        data_file(writer, "2m", DAY_2)
    ).validate_from_snapshot(base.snapshot_id).validate_no_conflicting_data().commit()
    append(t, data_file(t, "2", DAY_2))
    return txn


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_scenario_has_javas_outcome(catalog: Catalog, name: str) -> None:
    build, expected = SCENARIOS[name]
    operation = build(catalog)
    table_name = "db.flat" if "unpartitioned" in name else "db.ops"
    before = catalog.load_table(table_name)
    before_snapshot = before.current_snapshot()

    def commit() -> None:
        if hasattr(operation, "commit_transaction"):
            operation.commit_transaction()
        else:
            operation.commit()

    if expected is None:
        commit()
        after = catalog.load_table(table_name)
        head = current(after)
        assert before_snapshot is None or head.snapshot_id != before_snapshot.snapshot_id
    else:
        with pytest.raises(ValidationException, match=expected):
            commit()
        after = catalog.load_table(table_name)
        # Nothing changed: the table is still at the concurrent writer's snapshot.
        assert after.current_snapshot() == before_snapshot
