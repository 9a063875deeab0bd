"""Operations never let a committed snapshot reference a file they deleted.

Two ways that used to happen: a cache invalidation whose delete failed half-way (the cache
still named the deleted manifest), and ``apply()`` on an operation already staged in a
transaction (re-producing it replaced the files the staged changes reference).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import icefloe
from icefloe import Table
from icefloe.errors import FileIOError, ValidationError
from icefloe.io import LocalFileIO
from icefloe.table.rows.append_data import write_files


class _FlakyDelete(LocalFileIO):
    """Deleting manifest lists fails while ``failing`` is set."""

    failing = False

    def delete(self, location: str) -> None:
        if self.failing and "/snap-" in location:
            raise FileIOError(f"injected failure deleting {location}")
        super().delete(location)


@pytest.fixture
def catalog(tmp_path: Path) -> icefloe.Catalog:
    catalog = icefloe.load_catalog("t", type="memory", warehouse=str(tmp_path))
    catalog.create_namespace("db")
    catalog.create_table("db.t", pa.schema([pa.field("id", pa.int64())]))
    return catalog


def test_a_failed_delete_while_invalidating_does_not_leave_the_cache_naming_deleted_files(
    catalog: icefloe.Catalog,
) -> None:
    loaded = catalog.load_table("db.t")
    io = _FlakyDelete()
    table = Table(loaded.identifier_tuple, loaded.metadata, loaded.metadata_location, io, catalog.backend)
    first = write_files(table, pa.table({"id": [1, 2]}))
    second = write_files(table, pa.table({"id": [3]}))
    append = table.new_fast_append()
    append.append_file(first[0])
    append.apply()  # writes a manifest and a manifest list, cached for the commit
    io.failing = True
    append.append_file(second[0])  # invalidates the cache; deleting the list fails (logged)
    io.failing = False
    append.commit()
    assert sorted(catalog.load_table("db.t").new_scan().to_arrow().column("id").to_pylist()) == [1, 2, 3]


def test_apply_refuses_an_operation_staged_in_a_transaction(catalog: icefloe.Catalog) -> None:
    table = catalog.load_table("db.t")
    files = write_files(table, pa.table({"id": [1, 2]}))
    txn = table.new_transaction()
    append = txn.new_fast_append()
    append.append_file(files[0])
    append.commit()  # staged: its manifests are what the transaction will commit
    txn.update_properties().set("format-version", "3").commit()
    with pytest.raises(ValidationError, match="already committed"):
        append.apply()
    txn.commit_transaction()
    assert catalog.load_table("db.t").new_scan().to_arrow().num_rows == 2
