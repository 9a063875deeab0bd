"""Scans apply every kind of row-level delete: equality deletes, deletion vectors and position
delete files written by icefloe's writers, with the spec's sequence-number and partition rules.

Delete snapshots are committed by hand (``row_delta_helpers``), as a row delta would.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from icefloe import Catalog, DataFile, DeleteFile, Table
from icefloe.errors import InvalidDataFileError
from icefloe.io import LocalFileIO
from icefloe.scan import FileScanTask, PositionDeletes, read_batches, task_row_count
from icefloe.spec.partitioning import build_spec
from icefloe.spec.schema import Schema
from icefloe.spec.types import LongType, NestedField, StringType, StructType
from icefloe.spec.updates import AddPartitionSpec, AddSchema, SetCurrentSchema
from icefloe.write import (
    write_data_files,
    write_deletion_vectors,
    write_equality_deletes,
    write_position_deletes_for,
)
from scan.row_delta_helpers import commit_row_delta
from support.catalogs import ARROW_SCHEMA, rows

DAY2 = (dt.date(2024, 1, 2) - dt.date(1970, 1, 1)).days


def _ids(table: Table, **scan: Any) -> list[int]:
    s = table.new_scan()
    for name, value in scan.items():
        s = getattr(s, name)(*value) if isinstance(value, tuple) else getattr(s, name)(value)
    return sorted(s.to_arrow().column("id").to_pylist())


def _eq_deletes(table: Table, columns: list[str], data: pa.Table, **kwargs: Any) -> list[DeleteFile]:
    return write_equality_deletes(
        table.io(),
        table_location=table.location(),
        properties=table.properties(),
        schema=table.schema(),
        spec=kwargs.pop("spec", table.spec()),
        equality_ids=columns,
        data=data,
        **kwargs,
    )


def _new_data(table: Table, data: pa.Table) -> list[DataFile]:
    return write_data_files(
        table.io(),
        table_location=table.location(),
        properties=table.properties(),
        schema=table.schema(),
        spec=table.spec(),
        data=data,
    )


def _files_by_day(table: Table) -> dict[int, DataFile]:
    return {t.file.partition[0]: t.file for t in table.new_scan().plan_files()}


def _check_count(table: Table, expected: list[int], where: str | None = None) -> None:
    scan = table.new_scan() if where is None else table.new_scan().filter(where)
    assert scan.count() == len(expected)
    assert sorted(scan.to_arrow().column("id").to_pylist()) == expected


# ---- equality deletes ------------------------------------------------------------------------


@pytest.fixture(params=[2, 3], ids=["v2", "v3"])
def unpartitioned(request: pytest.FixtureRequest, memory_catalog: Catalog) -> Table:
    table = memory_catalog.create_table(
        "db.t", ARROW_SCHEMA, properties={"format-version": str(request.param)}
    )
    table.append(rows(10))  # names: a b c a b c (null) a b c
    return table


def test_equality_deletes_apply_to_older_data_only(memory_catalog: Catalog, unpartitioned: Table) -> None:
    table = unpartitioned
    deletes = _eq_deletes(table, ["id"], pa.table({"id": [1, 4, 100, 104]}))
    # New rows committed with the deletes have the same sequence number: not deleted.
    same_commit = _new_data(table, rows(6, start=100))
    commit_row_delta(memory_catalog, table, data=same_commit, deletes=deletes)
    table.append(rows(2, start=104))  # newer: not deleted either
    expected = [0, 2, 3, 5, 6, 7, 8, 9, *range(100, 106), 104, 105]
    assert _ids(table) == sorted(expected)
    _check_count(table, sorted(expected))
    _check_count(table, [104, 104, 105, 105], where="id >= 104")
    tasks = table.new_scan().plan_files()
    assert sum(1 for t in tasks if t.deletes) == 1  # only the first file is older


def test_null_values_delete_null_rows(memory_catalog: Catalog, unpartitioned: Table) -> None:
    table = unpartitioned
    deletes = _eq_deletes(table, ["name"], pa.table({"name": pa.array([None, "c"], pa.string())}))
    commit_row_delta(memory_catalog, table, deletes=deletes)
    assert _ids(table) == [0, 1, 3, 4, 7, 9]  # 2, 5, 8 are "c"; 6 has no name
    assert table.new_scan().count() == 6


def test_several_delete_column_sets_and_projection_without_them(
    memory_catalog: Catalog, unpartitioned: Table
) -> None:
    table = unpartitioned
    by_pair = _eq_deletes(table, ["name", "day"], pa.table({"name": ["a"], "day": [dt.date(2024, 1, 1)]}))
    by_id = _eq_deletes(table, ["id"], pa.table({"id": [9, 8]}))
    commit_row_delta(memory_catalog, table, deletes=by_pair + by_id)
    # "a" rows: ids 0, 3, 7 on days 1, 1, 2: 0 and 3 go; 8 and 9 by id.
    assert _ids(table) == [1, 2, 4, 5, 6, 7]
    only_score = table.new_scan().select("score").to_arrow()
    assert only_score.column_names == ["score"]
    assert sorted(only_score.column("score").to_pylist()) == [0.5, 1.0, 2.0, 2.5, 3.0, 3.5]
    assert table.new_scan().count() == 6
    assert table.new_scan().filter("score > 2").count() == 3
    assert table.new_scan().filter("score > 2").select("name").to_arrow().num_rows == 3


def test_partitioned_and_global_equality_deletes(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table(
        "db.t", ARROW_SCHEMA, partition_by=["day"], properties={"format-version": "2"}
    )
    table.append(rows(9))  # day 1: 0 3 6, day 2: 1 4 7, day 3: 2 5 8
    unpartitioned = build_spec(table.schema(), [], spec_id=1)
    memory_catalog.backend.commit_table(table.identifier_tuple, None, [], [AddPartitionSpec(unpartitioned)])
    table.refresh()
    in_day2 = _eq_deletes(table, ["id"], pa.table({"id": [1, 3]}), partition=(DAY2,))
    everywhere = _eq_deletes(table, ["id"], pa.table({"id": [5]}), spec=table.specs()[1])
    commit_row_delta(memory_catalog, table, deletes=in_day2 + everywhere)
    # id 3 is in day 1: the day-2 delete does not reach it; the global one reaches day 3.
    assert _ids(table) == [0, 2, 3, 4, 6, 7, 8]
    by_day = {t.file.partition[0]: {d.file_path for d in t.deletes} for t in table.new_scan().plan_files()}
    assert by_day[DAY2] == {in_day2[0].file_path, everywhere[0].file_path}
    assert by_day[DAY2 - 1] == {everywhere[0].file_path}
    _check_count(table, [2, 3, 4, 6, 7, 8], where="id > 1")


def test_dropped_and_nested_delete_columns(memory_catalog: Catalog) -> None:
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "gone", StringType()),
        NestedField(3, "s", StructType(NestedField(4, "x", LongType()), NestedField(5, "y", StringType()))),
    )
    table = memory_catalog.create_table("db.n", schema, properties={"format-version": "2"})
    table.append(
        pa.table(
            {
                "id": [1, 2, 3, 4],
                "gone": ["a", "b", None, "b"],
                "s": [{"x": 1, "y": "p"}, None, {"x": None, "y": "q"}, {"x": 7, "y": "r"}],
            }
        )
    )
    by_gone = _eq_deletes(table, ["gone"], pa.table({"gone": ["a"]}))
    by_x = _eq_deletes(table, [4], pa.table({"s": [{"x": None}]}), row_schema=table.schema().select("s.x"))
    commit_row_delta(memory_catalog, table, deletes=by_gone + by_x)
    # s.x is null for id 2 (the struct is null) and id 3 (the value is null).
    assert _ids(table) == [4]
    # Drop "gone" from the table: its equality deletes still apply (spec).
    evolved = Schema(schema.fields[0], schema.fields[2], schema_id=1)
    memory_catalog.backend.commit_table(
        table.identifier_tuple, None, [], [AddSchema(evolved, 5), SetCurrentSchema()]
    )
    table.refresh()
    assert table.schema().find_field("gone") is None
    result = table.new_scan().to_arrow()
    assert result.column_names == ["id", "s"]
    assert result.to_pylist() == [{"id": 4, "s": {"x": 7, "y": "r"}}]
    assert table.new_scan().select("s.y").to_arrow().to_pylist() == [{"s": {"y": "r"}}]
    assert table.new_scan().count() == 1


def test_count_of_splits_with_equality_deletes(memory_catalog: Catalog, unpartitioned: Table) -> None:
    table = unpartitioned
    table.update_properties().set("write.parquet.row-group-limit", "100").commit()
    table.append(rows(1000, start=1000))
    deletes = _eq_deletes(table, ["id"], pa.table({"id": list(range(1000, 2000, 3))}))
    commit_row_delta(memory_catalog, table, deletes=deletes)
    scan = table.new_scan().option("read.split.target-size", "2000").option("read.split.open-file-cost", "0")
    groups = scan.plan_tasks()
    tasks = [t for g in groups for t in g.tasks]
    assert any(not t.is_whole_file for t in tasks)
    deletes_cache = PositionDeletes(table.io(), table.metadata)
    assert sum(task_row_count(table.io(), t, deletes_cache) for t in tasks) == 10 + 1000 - 334
    read = [b for b in read_batches(table.io(), table.metadata, tasks, table.schema(), deletes=deletes_cache)]
    ids = sorted(i for b in read for i in b.column(0).to_pylist())
    assert ids == sorted([*range(10), *(i for i in range(1000, 2000) if (i - 1000) % 3)])
    # Without the table metadata, the delete file's own schema is used.
    assert sum(task_row_count(table.io(), t, PositionDeletes(table.io())) for t in tasks) == 676


# ---- deletion vectors and position delete files ------------------------------------------------


@pytest.fixture
def by_day_v3(memory_catalog: Catalog) -> Table:
    table = memory_catalog.create_table(
        "db.t", ARROW_SCHEMA, partition_by=["day"], properties={"format-version": "3"}
    )
    table.append(rows(9))  # day 2 holds ids 1, 4, 7 at positions 0, 1, 2
    return table


def _dvs(table: Table, deletes: dict[DataFile, list[int]]) -> list[DeleteFile]:
    return write_deletion_vectors(
        table.io(), table_location=table.location(), properties=table.properties(), deletes=deletes
    )


def test_deletion_vectors_are_applied(memory_catalog: Catalog, by_day_v3: Table) -> None:
    table = by_day_v3
    files = _files_by_day(table)
    dvs = _dvs(table, {files[DAY2]: [0, 2], files[DAY2 - 1]: [1]})
    assert len({dv.file_path for dv in dvs}) == 1  # one Puffin file for both
    commit_row_delta(memory_catalog, table, deletes=dvs, operation="delete")
    _check_count(table, [0, 2, 4, 5, 6, 8])
    _check_count(table, [4], where="day = '2024-01-02'")
    _check_count(table, [5, 6, 8], where="id > 4")
    by_path = {t.file.file_path: t.deletes for t in table.new_scan().plan_files()}
    assert [d.content_offset for d in by_path[files[DAY2].file_path]] == [dvs[0].content_offset]
    # A newer file in the same partition is not touched by the vector of another file.
    table.append(rows(3, start=100).set_column(3, "day", pa.array([dt.date(2024, 1, 2)] * 3)))
    _check_count(table, [4, 100, 101, 102], where="day = '2024-01-02'")


def test_a_vector_replaces_the_position_delete_files_of_its_data_file(memory_catalog: Catalog) -> None:
    # Tables upgraded from v2 keep their position delete files; a DV written later must hold
    # their deletes too, and readers then ignore the files (spec: "Scan Planning").
    table = memory_catalog.create_table(
        "db.t", ARROW_SCHEMA, partition_by=["day"], properties={"format-version": "2"}
    )
    table.append(rows(9))
    files = _files_by_day(table)
    positions = write_position_deletes_for(
        table.io(),
        table_location=table.location(),
        properties=table.properties(),
        schema=table.schema(),
        specs=table.specs(),
        deletes={files[DAY2]: [0], files[DAY2 - 1]: [0]},
    )
    commit_row_delta(memory_catalog, table, deletes=positions, operation="delete")
    _check_count(table, [2, 3, 4, 5, 6, 7, 8])
    table.update_properties().set("format-version", "3").commit()
    # The vector for day 2 deletes position 2 only: the file's delete of position 0 no longer
    # applies to that data file (a writer would have merged it; this shows the rule).
    commit_row_delta(memory_catalog, table, deletes=_dvs(table, {files[DAY2]: [2]}), operation="delete")
    _check_count(table, [1, 2, 3, 4, 5, 6, 8])
    day2 = next(t for t in table.new_scan().plan_files() if t.file.partition == (DAY2,))
    assert [d.file_format.value for d in day2.deletes] == ["PUFFIN"]


def test_vectors_with_equality_deletes_and_splits(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table(
        "db.t", ARROW_SCHEMA, properties={"format-version": "3", "write.parquet.row-group-limit": "50"}
    )
    table.append(rows(500))
    (data_file,) = [t.file for t in table.new_scan().plan_files()]
    dvs = _dvs(table, {data_file: list(range(0, 500, 2))})  # even ids
    eq = _eq_deletes(table, ["name"], pa.table({"name": ["a"]}))  # ids % 3 == 0, but not nulls
    commit_row_delta(memory_catalog, table, deletes=dvs + eq)
    expected = [i for i in range(500) if i % 2 and not (i % 3 == 0 and i % 7 != 6)]
    _check_count(table, expected)
    scan = table.new_scan().option("read.split.target-size", "1500").option("read.split.open-file-cost", "0")
    tasks = [t for g in scan.plan_tasks() for t in g.tasks]
    assert len(tasks) > 2
    cache = PositionDeletes(table.io(), table.metadata)
    assert sum(task_row_count(table.io(), t, cache) for t in tasks) == len(expected)


def test_a_vector_whose_cardinality_disagrees_is_refused(memory_catalog: Catalog, by_day_v3: Table) -> None:
    table = by_day_v3
    files = _files_by_day(table)
    (dv,) = _dvs(table, {files[DAY2]: [0, 1]})
    wrong = dv.copy(record_count=3)
    commit_row_delta(memory_catalog, table, deletes=[wrong])
    with pytest.raises(InvalidDataFileError, match="holds 2 positions") as raised:
        table.new_scan().to_arrow()
    assert raised.value.location == dv.file_path


def test_missing_delete_files_name_the_file(memory_catalog: Catalog, unpartitioned: Table) -> None:
    table = unpartitioned
    deletes = _eq_deletes(table, ["id"], pa.table({"id": [1]}))
    commit_row_delta(memory_catalog, table, deletes=deletes)
    Path(deletes[0].file_path).unlink()
    with pytest.raises(InvalidDataFileError, match="does not exist") as raised:
        table.new_scan().count()
    assert raised.value.location == deletes[0].file_path


class _CountingIO(LocalFileIO):
    def __init__(self) -> None:
        super().__init__()
        self.opened: dict[str, int] = {}

    def new_input(self, location: str, *, length: int | None = None):  # type: ignore[no-untyped-def]
        self.opened[location] = self.opened.get(location, 0) + 1
        return super().new_input(location, length=length)

    def arrow_filesystem(self, location: str):  # type: ignore[no-untyped-def]
        self.opened[location] = self.opened.get(location, 0) + 1
        return super().arrow_filesystem(location)


def test_each_delete_is_read_once_per_scan(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table(
        "db.t", ARROW_SCHEMA, partition_by=["day"], properties={"format-version": "3"}
    )
    table.append(rows(30))
    files = list(_files_by_day(table).values())
    dvs = _dvs(table, {f: [0] for f in files})
    everywhere = build_spec(table.schema(), [], spec_id=1)
    memory_catalog.backend.commit_table(table.identifier_tuple, None, [], [AddPartitionSpec(everywhere)])
    table.refresh()
    eq = _eq_deletes(table, ["id"], pa.table({"id": [5, 6]}), spec=table.specs()[1])
    commit_row_delta(memory_catalog, table, deletes=dvs + eq)
    io = _CountingIO()
    tasks: list[FileScanTask] = table.new_scan().plan_files()
    assert all(len(t.deletes) == 2 for t in tasks)
    batches = list(read_batches(io, table.metadata, tasks, table.schema()))
    assert sum(b.num_rows for b in batches) == 30 - 3 - 2
    assert io.opened[eq[0].file_path] == 1
    assert io.opened[dvs[0].file_path] == 3  # one read per vector (blob), each once
