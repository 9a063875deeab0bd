"""``icefloe.actions`` (maintenance without Spark) on real tables: what each action rewrites,
removes and commits, with the Spark actions' options and results."""

from __future__ import annotations

import datetime as dt
import os
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import icefloe
from icefloe import actions
from icefloe.errors import ValidationError
from icefloe.io.local import local_path
from support.catalogs import make_catalog

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("g", pa.string())])


def _table(catalog: icefloe.Catalog, name: str, *, version: int = 2, batches: int = 6) -> icefloe.Table:
    table = catalog.create_table(
        f"db.{name}",
        SCHEMA,
        partition_by=["g"],
        properties={"format-version": str(version), "write.delete.mode": "merge-on-read"},
    )
    for b in range(batches):
        ids = list(range(b * 10, b * 10 + 10))
        table.append(pa.table({"id": ids, "g": ["a" if i % 2 else "b" for i in ids]}, schema=SCHEMA))
    return table


def _rows(table: icefloe.Table) -> list[tuple[object, ...]]:
    return sorted(tuple(r.values()) for r in table.new_scan().to_arrow().to_pylist())


@pytest.fixture
def catalog(warehouse: Path) -> icefloe.Catalog:
    return make_catalog("sql", warehouse)


def test_rewrite_data_files(catalog: icefloe.Catalog) -> None:
    table = _table(catalog, "c")
    table.delete("id IN (3, 14, 27)")
    rows = _rows(table)
    lines: list[str] = []
    result = actions.rewrite_data_files(table, progress=lines.append)
    assert (result.rewritten_data_files_count, result.added_data_files_count, result.commits) == (12, 2, 1)
    assert result.removed_delete_files_count == 2  # attached only to rewritten files
    assert _rows(table) == rows
    summary = table.current_snapshot().summary
    assert summary["operation"] == "replace" and summary["total-delete-files"] == "0"
    assert lines and all(isinstance(line, actions.ProgressLine) for line in lines)
    assert lines[-1].done == lines[-1].total
    assert actions.rewrite_data_files(table).commits == 0  # nothing small enough any more


def test_rewrite_data_files_partial_progress_sort_and_where(catalog: icefloe.Catalog) -> None:
    table = _table(catalog, "p")
    rows = _rows(table)
    partial = actions.rewrite_data_files(
        table, options={"partial-progress.enabled": "true", "partial-progress.max-commits": "2"}
    )
    assert partial.commits == 2 and partial.rewritten_data_files_count == 12
    assert [s.operation for s in table.snapshots()[-2:]] == ["replace", "replace"]
    assert _rows(table) == rows
    for b in range(3):  # small files again, in partition a only
        table.append(pa.table({"id": [100 + b], "g": ["a"]}, schema=SCHEMA))
    only_a = actions.rewrite_data_files(table, where="g = 'a'", options={"min-input-files": "2"})
    assert only_a.rewritten_data_files_count == 4
    sorted_result = actions.rewrite_data_files(
        table, strategy="sort", sort_by=["id DESC"], options={"rewrite-all": "true"}
    )
    assert sorted_result.added_data_files_count == 2
    assert _rows(table) == sorted([*rows, (100, "a"), (101, "a"), (102, "a")])
    for file in table.inspect.files().to_pylist():  # rows in the files in the new order
        ids = pq.read_table(local_path(file["file_path"])).column("id").to_pylist()
        assert ids == sorted(ids, reverse=True) and file["sort_order_id"] is None  # not a table order
    with pytest.raises(ValidationError, match="strategy"):
        actions.rewrite_data_files(table, strategy="zorder")
    with pytest.raises(ValidationError, match="no sort_by"):
        actions.rewrite_data_files(table, strategy="sort")


@pytest.mark.parametrize("version", [2, 3])
def test_rewrite_position_deletes(catalog: icefloe.Catalog, version: int) -> None:
    table = _table(catalog, f"d{version}", version=2)
    table.delete("id IN (3, 5, 14)")
    table.delete("id IN (7, 16, 27)")
    if version == 3:
        table.update_properties().set("format-version", "3").commit()
    rows = _rows(table)
    # A dangling delete: the data file of id 27 goes away (with its deletes still attached).
    dropped = table.inspect.files(filter="readable_metrics.id.lower_bound = 21 AND content = 0").to_pylist()
    table.new_delete().delete_file(dropped[0]["file_path"]).commit()
    rows = [r for r in rows if not (r[1] == dropped[0]["partition"]["g"] and 20 <= r[0] < 30)]
    result = actions.rewrite_position_deletes(table, options={"rewrite-all": "true"})
    assert result.rewritten_delete_files_count == 4 and result.added_delete_files_count >= 1
    assert _rows(table) == rows
    deletes = table.inspect.delete_files().to_pylist()
    formats = {f["file_format"] for f in deletes}
    assert formats == ({"PUFFIN"} if version == 3 else {"PARQUET"})
    positions = table.inspect.position_deletes().to_pylist()
    assert {p["file_path"] for p in positions} <= {
        f["file_path"] for f in table.inspect.data_files().to_pylist()
    }
    assert len(positions) == 5  # 6 deletes, 1 of them dangling


def test_rewrite_manifests_and_expire(catalog: icefloe.Catalog) -> None:
    table = _table(catalog, "m")
    before = len(table.inspect.manifests())
    result = actions.rewrite_manifests(table)
    assert (result.rewritten_manifests_count, result.added_manifests_count) == (before, 1)
    assert table.current_snapshot().operation == "replace" and len(table.inspect.manifests()) == 1
    assert actions.rewrite_manifests(table).rewritten_manifests_count == 0  # one small manifest: nothing
    expired = actions.expire_snapshots(table, older_than=int(time.time() * 1000) + 1, retain_last=1)
    assert len(expired.expired_snapshot_ids) == 6 and expired.deleted_manifest_lists_count == 6
    assert expired.deleted_data_files_count == 0 and len(table.snapshots()) == 1
    table.append(pa.table({"id": [1], "g": ["a"]}, schema=SCHEMA))
    direct = table.expire_snapshots().expire_older_than(int(time.time() * 1000) + 1).retain_last(1).commit()
    assert isinstance(direct, actions.ExpireSnapshotsResult) and len(direct.expired_snapshot_ids) == 1


def test_remove_orphan_files(catalog: icefloe.Catalog) -> None:
    table = _table(catalog, "o", batches=2)
    data = Path(table.location()) / "data"
    orphan = data / "g=a" / "orphan.parquet"
    orphan.write_bytes(b"x")
    hidden = data / "_SUCCESS"
    hidden.write_bytes(b"")
    old = time.time() - 4 * 24 * 3600
    os.utime(orphan, (old, old))
    os.utime(hidden, (old, old))
    found = actions.remove_orphan_files(table, dry_run=True)
    assert found.orphan_file_locations == [f"{table.location()}/data/g=a/orphan.parquet"]
    assert orphan.exists()
    with pytest.raises(ValidationError, match="one minute ago"):
        actions.remove_orphan_files(table, older_than=dt.datetime.now(dt.UTC))
    removed = actions.remove_orphan_files(table)
    assert removed.orphan_file_locations == found.orphan_file_locations and not removed.failed_deletes
    assert not orphan.exists() and hidden.exists()
    assert len(_rows(table)) == 20
