"""Row-level changes that change no row commit the snapshot Java Iceberg 1.9.2 commits (so the
two histories, ``snapshots`` counts and time travel by ordinal stay the same), through
``isp.delete`` / ``isp.update`` / ``isp.merge_into`` and ``isp.sql``, in both write modes, v2
and v3, partitioned and not, and on a table without a snapshot:

- DELETE that the metadata decides (a missing partition, a value outside every file's bounds,
  no files): a ``delete`` snapshot; DELETE that must read rows: an ``overwrite``; DELETE whose
  condition is always false: nothing.
- UPDATE, MERGE: an ``overwrite`` (UPDATE ... WHERE 1 = 0 too); a MERGE of only NOT MATCHED
  clauses: an ``append``.

Each snapshot adds and removes nothing: its summary has ``changed-partition-count`` 0 and the
parent's totals. Java's own snapshots for the same statements are compared by
``tests/interop/test_sql_corpus_java.py`` (``sql_corpus/03_changes_that_change_nothing.sql``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest

from icefloe import Catalog, Table
from icefloe import spark as isp
from icefloe.spec.snapshots import Snapshot

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("p", pa.string()), pa.field("v", pa.string())])
EMPTY_SOURCE = "SELECT 1L AS id, 'a' AS p, 'q' AS v WHERE false"
NO_MATCH = "SELECT 5L AS id, 'a' AS p, 'q' AS v"


def _table(catalog: Catalog, version: int, mode: str, partitioned: bool, rows: bool = True) -> Table:
    table = catalog.create_table(
        "db.noop",
        SCHEMA,
        partition_by=["p"] if partitioned else [],
        properties={
            "format-version": str(version),
            "write.delete.mode": mode,
            "write.update.mode": mode,
            "write.merge.mode": mode,
        },
    )
    if rows:
        table.append(pa.table({"id": [2, 4, 6, 8], "p": ["a", "a", "b", "b"], "v": ["w", "x", "y", "z"]}))
    return table


def _assert_empty(table: Table, snapshot: Snapshot | None, operation: str, parent: Snapshot | None) -> None:
    """``snapshot`` is the table's new current snapshot, of ``operation``, changing nothing."""
    assert snapshot is not None, operation
    current = table.refresh().current_snapshot()
    assert current is not None and current.snapshot_id == snapshot.snapshot_id
    assert snapshot.operation == operation
    assert snapshot.parent_snapshot_id == (parent.snapshot_id if parent else None)
    summary = dict(snapshot.summary)
    assert summary["changed-partition-count"] == "0", summary
    for key in ("added-data-files", "deleted-data-files", "added-delete-files", "removed-delete-files"):
        assert key not in summary, summary
    for key in ("total-records", "total-data-files", "total-delete-files"):
        assert summary[key] == (parent.summary[key] if parent else "0"), key


def _cases(table: Table, spark: Any) -> list[tuple[str, Callable[[], Snapshot | None]]]:
    """(operation Java commits, the change) for each no-op change through the DataFrame API."""
    return [
        ("delete", lambda: isp.delete(spark, table, "id > 1000")),
        ("delete", lambda: isp.delete(spark, table, "p = 'zz'")),
        ("overwrite", lambda: isp.delete(spark, table, "id % 100 = 57")),
        ("overwrite", lambda: isp.update(spark, table, {"v": "'x'"}, "id > 1000")),
        ("overwrite", lambda: isp.update(spark, table, {"v": "'x'"}, "1 = 0")),
        ("overwrite", lambda: isp.merge_into(spark.sql(EMPTY_SOURCE), table, "t.id = s.id")
         .when_matched().update_all().when_not_matched().insert_all().merge()),
        ("overwrite", lambda: isp.merge_into(spark.sql(NO_MATCH), table, "t.id = s.id")
         .when_matched().delete().merge()),
        ("append", lambda: isp.merge_into(spark.sql(EMPTY_SOURCE), table, "t.id = s.id")
         .when_not_matched().insert_all().merge()),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("version", "mode", "partitioned"),
    [
        (2, "copy-on-write", True),
        (2, "merge-on-read", False),
        (3, "copy-on-write", False),
        (3, "merge-on-read", True),
    ],
)
def test_changes_that_change_nothing_commit_what_java_commits(
    spark: Any, catalog: Catalog, version: int, mode: str, partitioned: bool
) -> None:
    table = _table(catalog, version, mode, partitioned)
    for operation, change in _cases(table, spark):
        parent = table.refresh().current_snapshot()
        _assert_empty(table, change(), operation, parent)
    assert sorted(r["id"] for r in table.new_scan().to_arrow().to_pylist()) == [2, 4, 6, 8]


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_a_table_without_a_snapshot(spark: Any, catalog: Catalog, mode: str) -> None:
    table = _table(catalog, 2, mode, partitioned=True, rows=False)
    expected = ["delete", "delete", "overwrite", "overwrite", "overwrite", "overwrite", "overwrite", "append"]
    for (operation, change), want in zip(_cases(table, spark), expected, strict=True):
        assert operation == want
        parent = table.refresh().current_snapshot()
        _assert_empty(table, change(), operation, parent)
    assert len(table.snapshots()) == len(expected)


def test_a_condition_always_false_deletes_nothing_and_commits_nothing(spark: Any, catalog: Catalog) -> None:
    table = _table(catalog, 2, "merge-on-read", partitioned=True)
    before = len(table.snapshots())
    for where in (
        "1 = 0",
        "false",
        "id = NULL",
        "NOT (id = NULL)",
        "p = 'a' AND 1 > 2",
        "NOT (1 = 1) OR NULL",
    ):
        assert isp.delete(spark, table, where) is None, where
    isp.sql(spark, "DELETE FROM db.noop WHERE 'a' = 'b'", catalog=catalog)
    assert len(table.refresh().snapshots()) == before
    assert len(table.new_scan().to_arrow()) == 4
    # Unknown under a NOT is not false: NOT (id = 2 AND NULL) is unknown for 2, true for the rest.
    deleted = isp.delete(spark, table, "NOT (id = 2 AND NULL)")
    assert deleted is not None and deleted.operation == "delete"  # position deletes (merge-on-read)
    assert table.new_scan().to_arrow().column("id").to_pylist() == [2]


def test_isp_sql_commits_java_s_snapshots(spark: Any, catalog: Catalog) -> None:
    table = _table(catalog, 3, "merge-on-read", partitioned=True)
    statements = [
        ("delete", "DELETE FROM db.noop WHERE p = 'zz'"),
        ("overwrite", "DELETE FROM db.noop WHERE id = 3"),  # within a file's bounds
        ("overwrite", "UPDATE db.noop SET v = 'x' WHERE id % 100 = 57"),
        ("overwrite", f"MERGE INTO db.noop t USING ({NO_MATCH}) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v"),
        ("append", "MERGE INTO db.noop t USING (SELECT 2L AS id, 'a' AS p, 'q' AS v) s ON t.id = s.id "
                   "WHEN NOT MATCHED THEN INSERT *"),
    ]  # fmt: skip
    for operation, statement in statements:
        parent = table.refresh().current_snapshot()
        isp.sql(spark, statement, catalog=catalog)
        _assert_empty(table, table.refresh().current_snapshot(), operation, parent)
    count = isp.sql(spark, "SELECT count(*) FROM db.noop.snapshots", catalog=catalog).collect()[0][0]
    assert count == 1 + len(statements)
