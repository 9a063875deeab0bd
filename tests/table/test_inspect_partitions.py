"""``table.inspect.partitions()``: which partitions it lists once files are removed (Java's
``PartitionsTable`` lists a partition while a live data or delete file is in it), on v1, v2
and v3 tables. Java's rows for the same states: ``tests/interop/test_metadata_tables_java.py``."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from icefloe import Catalog, Table

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("p", pa.string())])


def _table(catalog: Catalog, version: int) -> Table:
    table = catalog.create_table(
        "db.parts",
        SCHEMA,
        partition_by=["p"],
        properties={"format-version": str(version), "write.delete.mode": "merge-on-read"},
    )
    table.append(pa.table({"id": [1, 2, 3, 4, 5], "p": ["a", "a", "b", "c", "d"]}, schema=SCHEMA))
    return table


def _rows(table: Table) -> dict[Any, tuple[int, ...]]:
    """Per partition value: spec id, data records, data files, delete files."""
    found = table.inspect.partitions().to_pylist()
    return {
        r["partition"]["p"]: (
            r["spec_id"],
            r["record_count"],
            r["file_count"],
            r["position_delete_file_count"] + r["equality_delete_file_count"],
        )
        for r in found
    }


def _data_file(table: Table, partition: str) -> Any:
    return next(t.file for t in table.new_scan().plan_files() if t.file.partition == (partition,))


@pytest.mark.parametrize("version", [1, 2, 3])
def test_a_partition_whose_files_were_removed_is_not_listed(memory_catalog: Catalog, version: int) -> None:
    table = _table(memory_catalog, version)
    table.delete("p = 'b'")  # the partition's only file, by its partition
    table.delete("id = 4")  # the only row of c's file: the file goes whole
    table.overwrite(pa.table({"id": [6], "p": ["e"]}, schema=SCHEMA), "p = 'd'")  # replaced
    assert _rows(table) == {"a": (0, 2, 1, 0), "e": (0, 1, 1, 0)}
    table.delete("id > 0")
    assert table.inspect.partitions().num_rows == 0


@pytest.mark.parametrize("version", [2, 3])
def test_a_partition_left_with_only_delete_files_is_listed(memory_catalog: Catalog, version: int) -> None:
    table = _table(memory_catalog, version)
    table.delete("id = 1")  # a delete file (position deletes or a deletion vector) in a
    assert _rows(table)["a"] == (0, 2, 1, 1)
    table.new_delete().delete_file(_data_file(table, "a")).commit()  # its delete file stays
    assert _rows(table) == {"a": (0, 0, 0, 1), "b": (0, 1, 1, 0), "c": (0, 1, 1, 0), "d": (0, 1, 1, 0)}


def test_unpartitioned_table_without_files_has_no_row(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table("db.flat", SCHEMA, properties={"format-version": "2"})
    table.append(pa.table({"id": [1, 2], "p": ["a", "b"]}, schema=SCHEMA))
    assert table.inspect.partitions().column("record_count").to_pylist() == [2]
    table.delete("id > 0")
    assert table.inspect.partitions().num_rows == 0
