"""icefloe.spark.actions.rewrite_data_files: compaction keeps every live row, applies deletes, drops the delete
files it made useless, honours the options, and commits through new_rewrite()."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icefloe import Catalog, Table
from icefloe import spark as isp
from icefloe.errors import ValidationError
from icefloe.io.local import local_path

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("g", pa.string())])


def _small_files(catalog: Catalog, version: int = 2) -> Table:
    table = catalog.create_table(
        "db.compact",
        SCHEMA,
        partition_by=["g"],
        properties={"format-version": str(version), "write.delete.mode": "merge-on-read"},
    )
    for batch in range(6):
        ids = list(range(batch * 10, batch * 10 + 10))
        table.append(pa.table({"id": ids, "g": ["a" if i % 2 else "b" for i in ids]}))
    return table


def _rows(table: Table) -> list[tuple[object, ...]]:
    return sorted(tuple(r.values()) for r in table.new_scan().to_arrow().to_pylist())


@pytest.mark.every_session
@pytest.mark.parametrize("version", [2, 3])
def test_binpack_compacts_and_applies_deletes(spark: object, catalog: Catalog, version: int) -> None:
    table = _small_files(catalog, version)
    table.delete("id IN (0, 7, 14, 21, 28, 35, 42, 49, 56)")
    before = _rows(table)
    assert len(table.new_scan().plan_files()) == 12
    result = isp.actions.rewrite_data_files(spark, table)
    assert result.commits == 1 and result.rewritten_data_files_count == 12
    tasks = table.new_scan().plan_files()
    assert len(tasks) == 2 and all(not t.deletes for t in tasks)
    assert _rows(table) == before
    assert table.current_snapshot().operation == "replace"
    # Nothing left to do: a second run commits nothing.
    assert isp.actions.rewrite_data_files(spark, table).commits == 0


def test_sort_strategy_and_partial_progress(spark: object, catalog: Catalog) -> None:
    table = _small_files(catalog)
    before = _rows(table)
    result = isp.actions.rewrite_data_files(
        spark,
        table,
        strategy="sort",
        sort_by=["id DESC"],
        options={"partial-progress.enabled": "true", "partial-progress.max-commits": "2"},
    )
    assert result.commits == 2
    assert _rows(table) == before
    for task in table.new_scan().plan_files():
        ids = pq.read_table(local_path(task.file.file_path)).column("id").to_pylist()
        assert ids == sorted(ids, reverse=True)


def test_options_and_errors(spark: object, catalog: Catalog) -> None:
    table = _small_files(catalog)
    assert isp.actions.rewrite_data_files(spark, table, options={"min-input-files": "7"}).commits == 0
    result = isp.actions.rewrite_data_files(spark, table, where="g = 'a'")
    assert result.rewritten_data_files_count == 6
    with pytest.raises(ValidationError, match="strategy"):
        isp.actions.rewrite_data_files(spark, table, strategy="zorder")
    with pytest.raises(ValidationError, match="min-input-files"):
        isp.actions.rewrite_data_files(spark, table, options={"min-input-files": "x"})
