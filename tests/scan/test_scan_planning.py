"""plan_files(): pruning by partition values and column bounds, residuals, count()."""

from __future__ import annotations

import datetime as dt
import pickle
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

from icefloe import Catalog, Table
from icefloe.errors import InvalidDataFileError, ValidationError
from icefloe.expressions import AlwaysTrue, BoundPredicate
from icefloe.scan import FileScanTask
from support.catalogs import ARROW_SCHEMA, local, rows, sorted_rows

DAY_2 = (dt.date(2024, 1, 2) - dt.date(1970, 1, 1)).days


def test_full_plan(events: Table) -> None:
    tasks = events.new_scan().plan_files()
    assert len(tasks) == 9  # three appends of three days
    assert all(isinstance(t, FileScanTask) for t in tasks)
    for task in tasks:
        assert task.deletes == ()
        assert isinstance(task.residual, AlwaysTrue)
        assert task.start == 0
        assert task.length == task.file.file_size_in_bytes
        assert task.file_path == task.file.file_path
        assert task.spec == events.spec()
    assert sum(t.record_count for t in tasks) == 75


def test_partition_pruning(events: Table) -> None:
    tasks = events.new_scan().filter("day = '2024-01-02'").plan_files()
    assert len(tasks) == 3
    assert {t.file.partition for t in tasks} == {(DAY_2,)}
    # The partition decides the filter: nothing left to apply to the rows.
    assert all(isinstance(t.residual, AlwaysTrue) for t in tasks)
    assert len(events.new_scan().filter("day > '2024-01-03'").plan_files()) == 0
    assert len(events.new_scan().filter("day IN ('2024-01-01', '2024-01-03')").plan_files()) == 6


def test_metrics_pruning(events: Table) -> None:
    # The first append holds ids 0..29, the second 30..59, the third 60..74.
    assert len(events.new_scan().filter("id < 10").plan_files()) == 3
    assert len(events.new_scan().filter("id >= 60").plan_files()) == 3
    assert len(events.new_scan().filter("id = 45").plan_files()) == 3  # bounds of the 3 files of append 2
    assert len(events.new_scan().filter("id > 1000").plan_files()) == 0
    assert len(events.new_scan().filter("id < 10 AND day = '2024-01-02'").plan_files()) == 1
    assert len(events.new_scan().filter("name IS NULL").plan_files()) <= 9
    # amount is id * 1.25: only ids 73, 74 (days 2 and 3 of the last append) are above 90.
    assert len(events.new_scan().filter("amount > '90'").plan_files()) == 2


def test_residuals(events: Table) -> None:
    (task,) = events.new_scan().filter("day = '2024-01-02' AND id < 10").plan_files()
    assert isinstance(task.residual, BoundPredicate)
    assert task.residual.term.field.name == "id"  # type: ignore[attr-defined]
    # A filter the partition cannot decide stays whole.
    for task in events.new_scan().filter("name = 'a'").plan_files():
        assert isinstance(task.residual, BoundPredicate)
    # OR across partition and data columns: the partition decides it for day 2's files.
    tasks = events.new_scan().filter("day = '2024-01-02' OR id > 70").plan_files()
    by_day = {t.file.partition[0]: t.residual for t in tasks}
    assert isinstance(by_day[DAY_2], AlwaysTrue)
    assert all(not isinstance(r, AlwaysTrue) for d, r in by_day.items() if d != DAY_2)


def test_pruned_scans_equal_python_filtering(events: Table) -> None:
    everything = sorted_rows(events.new_scan().to_arrow())
    cases = {
        "id < 10 AND day = '2024-01-02'": lambda r: r["id"] < 10 and r["day"] == dt.date(2024, 1, 2),
        "day = '2024-01-02' OR id > 70": lambda r: r["day"] == dt.date(2024, 1, 2) or r["id"] > 70,
        "amount > '90'": lambda r: r["amount"] > 90,
    }
    for text, keep in cases.items():
        assert sorted_rows(events.new_scan().filter(text).to_arrow()) == [r for r in everything if keep(r)], (
            text
        )


def test_count_from_metadata_reads_no_data_file(catalog: Catalog, tmp_path: Path) -> None:
    table = catalog.create_table("db.t", ARROW_SCHEMA, partition_by=["day"])
    table.append(rows(30))
    assert table.new_scan().count() == 30
    assert table.new_scan().filter("day = '2024-01-02'").count() == 10
    # Move the data files away: counting by metadata still works; reading rows does not.
    data = local(table.location()) / "data"
    shutil.move(data, tmp_path / "moved")
    assert table.new_scan().count() == 30
    assert table.new_scan().filter("day = '2024-01-02'").count() == 10
    assert table.new_scan().filter("day > '2024-01-05'").count() == 0
    with pytest.raises(InvalidDataFileError, match="does not exist"):
        table.new_scan().filter("id > 3").count()
    shutil.move(tmp_path / "moved", data)
    assert table.new_scan().filter("id > 3").count() == 26  # reads the id column


def test_count_with_filters(events: Table) -> None:
    assert events.new_scan().count() == 75
    assert events.new_scan().filter("id < 10").count() == 10
    assert events.new_scan().filter("name IS NULL").count() == len([i for i in range(75) if i % 7 == 6])
    assert events.new_scan().filter("id < 10 AND day = '2024-01-02'").count() == 3  # 1, 4, 7
    assert events.new_scan().filter("id < 0").count() == 0


def test_empty_table_plans_nothing(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA)
    scan = table.new_scan()
    assert scan.snapshot() is None
    assert scan.plan_files() == []
    assert scan.count() == 0
    result = scan.to_arrow()
    assert result.num_rows == 0
    assert result.schema.names == ARROW_SCHEMA.names
    assert list(scan.to_batches()) == []


def test_plan_with_transform_partitions(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table(
        "db.t", ARROW_SCHEMA, partition_by=["hour(ts)", "bucket(4, id)", "truncate(1, name)"]
    )
    data = rows(48)
    table.append(data)
    all_tasks = table.new_scan().plan_files()
    everything = sorted_rows(table.new_scan().to_arrow())
    cases = {
        "ts >= '2024-01-02T12:00:00'": lambda r: r["ts"] >= dt.datetime(2024, 1, 2, 12),
        "ts < '2024-01-01T03:00:00'": lambda r: r["ts"] < dt.datetime(2024, 1, 1, 3),
        "id = 17": lambda r: r["id"] == 17,
        "id IN (3, 4)": lambda r: r["id"] in (3, 4),
        "name = 'c'": lambda r: r["name"] == "c",
        "name LIKE 'c%'": lambda r: r["name"] is not None and r["name"].startswith("c"),
    }
    for text, keep in cases.items():
        scan = table.new_scan().filter(text)
        expected = [r for r in everything if keep(r)]
        assert sorted_rows(scan.to_arrow()) == expected, text
        assert len(scan.plan_files()) < len(all_tasks), text
        assert scan.count() == len(expected), text


def test_plan_of_null_partition(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA, partition_by=["name"])
    table.append(rows(14))  # ids 6 and 13 have no name
    nulls = table.new_scan().filter("name IS NULL")
    (task,) = nulls.plan_files()
    assert task.file.partition == (None,)
    assert sorted(nulls.to_arrow().column("id").to_pylist()) == [6, 13]
    assert table.new_scan().filter("name = 'a'").count() == 4
    assert len(table.new_scan().filter("name IS NOT NULL").plan_files()) == 3


def test_nan_and_infinities(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table("db.t", pa.schema([("id", pa.int64()), ("x", pa.float64())]))
    table.append(pa.table({"id": [1, 2, 3, 4], "x": [1.0, float("nan"), float("inf"), None]}))
    table.append(pa.table({"id": [5], "x": [2.0]}))
    assert sorted(table.new_scan().filter("x IS NAN").to_arrow().column("id").to_pylist()) == [2]
    assert sorted(table.new_scan().filter("x IS NOT NAN").to_arrow().column("id").to_pylist()) == [1, 3, 4, 5]
    assert sorted(table.new_scan().filter("x > 1.5").to_arrow().column("id").to_pylist()) == [3, 5]
    assert len(table.new_scan().filter("x IS NAN").plan_files()) == 1


_STATS = (
    "column_sizes",
    "value_counts",
    "null_value_counts",
    "nan_value_counts",
    "lower_bounds",
    "upper_bounds",
)


def test_planned_files_carry_column_stats_decoded_on_use(events: Table) -> None:
    stored = {f.file_path: f for s in events.snapshots() for f in s.added_data_files(events.io())}
    tasks = events.new_scan().filter("id < 50").plan_files()
    assert tasks
    for task in tasks:
        full = stored[task.file.file_path]
        assert task.file.record_count == full.record_count
        assert task.file.partition == full.partition
        assert task.file.split_offsets == full.split_offsets
        for name in _STATS:
            planned, expected = getattr(task.file, name), getattr(full, name)
            # Equal to the manifest's, as a mapping and as a dict; pickles as a plain dict.
            assert planned == expected and dict(planned) == expected
            assert sorted(planned) == sorted(expected) and len(planned) == len(expected)
            restored = pickle.loads(pickle.dumps(planned))
            assert type(restored) is dict and restored == expected
        copy = pickle.loads(pickle.dumps(task.file))
        assert all(getattr(copy, name) == getattr(full, name) for name in _STATS)
    # Only the named columns' (case-insensitively, when the scan is).
    schema = events.schema()
    id_field, name_field = schema.find_field("id"), schema.find_field("name")
    assert id_field is not None and name_field is not None
    scan = events.new_scan().case_sensitive(False).include_column_stats("ID", "Name")
    for task in scan.plan_files():
        full = stored[task.file.file_path]
        for name in _STATS:
            kept = getattr(task.file, name)
            expected = {
                k: v for k, v in getattr(full, name).items() if k in {id_field.field_id, name_field.field_id}
            }
            assert kept == expected
        assert task.file.lower_bounds and id_field.field_id in task.file.lower_bounds
    with pytest.raises(ValidationError, match="nope"):
        events.new_scan().include_column_stats("nope").plan_files()
