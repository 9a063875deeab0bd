"""Scans of icefloe's own tables skip pages by the page index icefloe writes, where that is
safe, and ``read.parquet.page-index.enabled`` turns it off."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from icefloe import Table
from icefloe.arrow import page_index
from icefloe.errors import ValidationError
from support.catalogs import local, make_catalog, rows
from support.page_reads import page_reads

pytest.importorskip("datafusion")

ROWS = 30_000


@pytest.fixture
def table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Table:
    """One data file of one row group of pages of 500 rows."""
    monkeypatch.setattr(page_index, "MIN_ROWS", ROWS // 2)  # production-sized files would be slow
    catalog = make_catalog("hadoop", tmp_path / "warehouse")
    created = catalog.create_table(
        "db.t",
        rows(1).schema,
        properties={"write.parquet.page-row-limit": "500", "format-version": "2"},
    )
    created.append(rows(ROWS))
    return created


def test_icefloe_writes_a_page_index(table: Table) -> None:
    (task,) = table.new_scan().plan_files()
    footer = pq.ParquetFile(local(task.file.file_path)).metadata
    assert footer.num_row_groups == 1
    group = footer.row_group(0)
    assert all(
        group.column(c).has_column_index and group.column(c).has_offset_index
        for c in range(group.num_columns)
    )


def test_selective_scans_skip_pages(table: Table, monkeypatch: pytest.MonkeyPatch) -> None:
    taken = page_reads(monkeypatch)
    found = table.new_scan().filter("id >= 12000 AND id < 12010").to_arrow()
    assert taken == [True]
    assert found.column("id").to_pylist() == list(range(12000, 12010))
    assert found.equals(rows(10, start=12000).cast(found.schema))
    batches = list(table.new_scan().filter("name = 'a' AND id < 30").select("id").to_batches())
    assert [b.column("id").to_pylist() for b in batches] == [
        [i for i in range(30) if i % 3 == 0 and i % 7 != 6]
    ]
    assert taken == [True, True]


def test_rows_deleted_by_position_are_read_with_pyarrow(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    table.update_properties().set("write.delete.mode", "merge-on-read").commit()
    table.delete("id = 12003")
    taken = page_reads(monkeypatch)
    found = table.new_scan().filter("id >= 12000 AND id < 12010").to_arrow()
    assert found.column("id").to_pylist() == [i for i in range(12000, 12010) if i != 12003]
    assert taken == []  # (positions are pyarrow's: page_batches was not asked)


def test_the_table_property_turns_it_off(table: Table, monkeypatch: pytest.MonkeyPatch) -> None:
    taken = page_reads(monkeypatch)
    table.update_properties().set("read.parquet.page-index.enabled", "false").commit()
    found = table.new_scan().filter("id = 7").to_arrow()
    assert found.column("id").to_pylist() == [7]
    assert taken == []
    table.update_properties().set("read.parquet.page-index.enabled", "True").commit()
    assert table.new_scan().filter("id = 7").to_arrow().column("id").to_pylist() == [7]
    assert taken == [True]
    table.update_properties().set("read.parquet.page-index.enabled", "sometimes").commit()
    with pytest.raises(ValidationError, match=r"read\.parquet\.page-index\.enabled"):
        table.new_scan().filter("id = 7").to_arrow()
