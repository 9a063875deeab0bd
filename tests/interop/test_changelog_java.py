"""icefloe's changelog scans against Java Iceberg's (Spark's ``changes`` table and its
``create_changelog_view`` procedure), on tables without delete files (Java 1.9 throws for
snapshots with delete files).

- Java writes: appends, copy-on-write DELETE / UPDATE / MERGE, a dynamic partition overwrite
  and a compaction (``rewrite_data_files``: a ``replace`` snapshot, skipped by both). icefloe's
  changelog of the table (all of it, and a range) must equal ``SELECT * FROM t.changes`` row
  for row, ordinals and commit snapshot ids included; with carry-overs removed and with
  updates computed it must equal ``create_changelog_view`` (its defaults, and
  ``compute_updates``).
- icefloe writes (appends, copy-on-write deletes, upserts and overwrites): Java's ``changes``
  of the table must equal icefloe's changelog.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icefloe
from scan.changelog_helpers import data, set_mode

from .engines import JavaEngine
from .normalize import normalize_arrow
from .tables import hadoop_catalog

pytestmark = pytest.mark.interop

COLUMNS = ("id", "cat", "v", "_change_type", "_change_ordinal", "_commit_snapshot_id")
SELECT = ", ".join(COLUMNS)


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("changelog")


@pytest.fixture(scope="module")
def java_catalog(java_engine: JavaEngine, warehouse: Path) -> str:
    return java_engine.hadoop_catalog(warehouse)


@pytest.fixture(scope="module")
def catalog(warehouse: Path, java_catalog: str) -> icefloe.Catalog:
    return hadoop_catalog(warehouse)


def _own(scan: Any) -> list[Any]:
    table: pa.Table = scan.to_arrow()
    return list(normalize_arrow(table.select(list(COLUMNS)))["rows"])


def _java_range(java: JavaEngine, name: str, start: int, end: int) -> list[Any]:
    code = (
        "df = spark.read.format('iceberg').option('start-snapshot-id', str(start))"
        ".option('end-snapshot-id', str(end)).load(name + '.changes')\n"
        "result = normalize_rows([list(r) for r in df.select(*columns).collect()])"
    )
    return list(java.exec(code, name=name, start=start, end=end, columns=list(COLUMNS)))


@pytest.fixture(scope="module")
def java_written(java_engine: JavaEngine, java_catalog: str, catalog: icefloe.Catalog) -> icefloe.Table:
    name = f"{java_catalog}.db.java_cow"
    java_engine.sql(
        f"CREATE TABLE {name} (id bigint, cat string, v bigint) USING iceberg PARTITIONED BY (cat) "
        "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='copy-on-write', "
        "'write.update.mode'='copy-on-write', 'write.merge.mode'='copy-on-write')",
        f"INSERT INTO {name} SELECT id, element_at(array('a', 'b', 'c'), cast(id % 3 + 1 AS int)), id "
        "FROM range(0, 12)",
        f"INSERT INTO {name} VALUES (100, 'a', 100), (101, 'b', 101)",
        f"DELETE FROM {name} WHERE id IN (3, 4)",
        f"UPDATE {name} SET v = v + 1000 WHERE id IN (1, 6)",
        f"CALL {java_catalog}.system.rewrite_data_files(table => 'db.java_cow', "
        "options => map('rewrite-all', 'true'))",
        f"MERGE INTO {name} t USING (SELECT 2L AS id, 'c' AS cat, 7L AS v UNION ALL "
        "SELECT 200L, 'c', 200L) s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *",
        f"INSERT OVERWRITE {name} SELECT * FROM {name} WHERE cat = 'b' AND id > 50",
    )
    return catalog.load_table("db.java_cow")


def test_changes_of_a_java_table(
    java_engine: JavaEngine, java_catalog: str, java_written: icefloe.Table
) -> None:
    table = java_written
    operations = [s.operation for s in table.snapshots()]
    assert "replace" in operations and "overwrite" in operations
    name = f"{java_catalog}.db.java_cow"
    want = java_engine.sql(f"SELECT {SELECT} FROM {name}.changes")["rows"]
    scan = table.new_incremental_changelog_scan()
    assert _own(scan) == want
    assert len(want) > 20
    ids = [s.snapshot_id for s in table.snapshots()]
    assert _own(scan.from_snapshot_exclusive(ids[1]).to_snapshot(ids[4])) == _java_range(
        java_engine, name, ids[1], ids[4]
    )


def test_changelog_views_of_a_java_table(
    java_engine: JavaEngine, java_catalog: str, java_written: icefloe.Table
) -> None:
    scan = java_written.new_incremental_changelog_scan()
    java_engine.sql(
        f"CALL {java_catalog}.system.create_changelog_view(table => 'db.java_cow', changelog_view => 'cl_plain')"
    )
    want = java_engine.sql(f"SELECT {SELECT} FROM cl_plain")["rows"]
    assert _own(scan.remove_carryovers()) == want
    java_engine.sql(
        f"CALL {java_catalog}.system.create_changelog_view(table => 'db.java_cow', "
        "changelog_view => 'cl_updates', compute_updates => true, identifier_columns => array('id'))"
    )
    want = java_engine.sql(f"SELECT {SELECT} FROM cl_updates")["rows"]
    got = _own(scan.compute_updates("id"))
    assert got == want
    assert any("UPDATE_AFTER" in row for row in got)


def test_java_reads_changes_of_an_icefloe_table(
    java_engine: JavaEngine, java_catalog: str, catalog: icefloe.Catalog
) -> None:
    catalog.create_namespace("ice")
    table = catalog.create_table(
        "ice.cow",
        data([]).schema.remove(3),
        partition_by=["cat"],
        properties={"format-version": "2"},
    )
    set_mode(table, "copy-on-write")

    def rows(ids: range | list[int], v: int = 0) -> pa.Table:
        return data(ids, v=v).drop_columns(["f"])

    table.append(rows(range(9)))
    table.append(rows(range(9, 12)))
    table.delete("id IN (0, 4)")
    table.upsert(rows([5, 20], v=30), on=["id"])
    table.overwrite(rows([30, 33], v=1).set_column(1, "cat", pa.array(["a", "a"])), where="cat = 'a'")
    want = java_engine.sql(f"SELECT {SELECT} FROM {java_catalog}.ice.cow.changes")["rows"]
    assert _own(table.new_incremental_changelog_scan()) == want
    assert len({row[4] for row in want}) == 5
