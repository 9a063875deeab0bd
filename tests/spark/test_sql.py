"""``isp.sql``: Iceberg's Spark SQL on icefloe tables, one rich scenario per statement family.

Expected answers are computed independently: plain Python over the rows each step leaves, and
icefloe's own table API (scans, metadata) for what DDL and procedures changed.
"""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession

from icefloe import Catalog
from icefloe import spark as isp
from icefloe.errors import UnsupportedFeatureError, ValidationError


def _rows(df: DataFrame) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in df.collect())


def _table_rows(catalog: Catalog, name: str, **scan: str) -> list[tuple[Any, ...]]:
    table = catalog.load_table(name)
    s = table.new_scan()
    if "ref" in scan:
        s = s.use_ref(scan["ref"])
    return sorted(tuple(r.values()) for r in s.to_arrow().to_pylist())


@pytest.mark.slow
@pytest.mark.every_session
def test_queries_writes_and_time_travel(spark: SparkSession, catalog: Catalog) -> None:
    def q(statement: str) -> DataFrame:
        return isp.sql(spark, statement, catalog=catalog)

    q(
        "CREATE TABLE db.t (id bigint NOT NULL COMMENT 'key', s string, p string) USING iceberg "
        "PARTITIONED BY (p, bucket(4, id)) TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')"
    )
    table = catalog.load_table("db.t")
    key = table.schema().find_field("id")
    assert key is not None and key.required and key.doc == "key"
    assert [str(f.transform) for f in table.spec().fields] == ["identity", "bucket[4]"]
    assert table.properties()["write.delete.mode"] == "merge-on-read"

    q("INSERT INTO db.t VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'y')")
    first = catalog.load_table("db.t").current_snapshot().snapshot_id  # type: ignore[union-attr]
    q(f"INSERT INTO {catalog.name}.db.t (p, s, id) SELECT 'y', 'd', 4")
    assert _table_rows(catalog, "db.t") == [(1, "a", "x"), (2, "b", "x"), (3, "c", "y"), (4, "d", "y")]

    # queries: aggregates, joins with a temp view, subqueries, CTEs, time travel, metadata tables
    assert _rows(q("SELECT p, count(*) FROM db.t GROUP BY p")) == [("x", 2), ("y", 2)]
    spark.createDataFrame([(1, "one"), (4, "four")], "k long, name string").createOrReplaceTempView("names")
    assert _rows(q("SELECT t.id, n.name FROM db.t t JOIN names n ON t.id = n.k")) == [(1, "one"), (4, "four")]
    assert _rows(q("WITH c AS (SELECT id FROM db.t WHERE p = 'x') SELECT max(id) FROM c")) == [(2,)]
    assert _rows(q(f"SELECT count(*) FROM db.t VERSION AS OF {first}")) == [(3,)]
    assert _rows(q(f"SELECT count(*) FROM db.t.snapshot_id_{first}")) == [(3,)]
    assert _rows(q("SELECT count(*) FROM db.t.snapshots")) == [(2,)]
    assert _rows(q("SELECT operation FROM db.t.snapshots")) == [("append",), ("append",)]
    assert _rows(q("SELECT id FROM db.t WHERE id IN (SELECT k FROM names)")) == [(1,), (4,)]

    # DML
    q("DELETE FROM db.t AS z WHERE z.id = 2")
    q("UPDATE db.t SET s = upper(s) WHERE p = 'y'")
    assert _table_rows(catalog, "db.t") == [(1, "a", "x"), (3, "C", "y"), (4, "D", "y")]
    spark.createDataFrame(
        [(1, "a2", "x", "U"), (3, None, "y", "D"), (7, "g", "z", "I")],
        "id long, s string, p string, op string",
    ).createOrReplaceTempView("changes")
    q(
        "MERGE INTO db.t AS tgt USING changes AS src ON tgt.id = src.id "
        "WHEN MATCHED AND src.op = 'D' THEN DELETE "
        "WHEN MATCHED THEN UPDATE SET tgt.s = src.s "
        "WHEN NOT MATCHED THEN INSERT (id, s, p) VALUES (src.id, src.s, src.p) "
        "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET s = 'untouched'"
    )
    assert _table_rows(catalog, "db.t") == [(1, "a2", "x"), (4, "untouched", "y"), (7, "g", "z")]

    # INSERT OVERWRITE: static partition, then dynamic
    q("INSERT OVERWRITE db.t PARTITION (p = 'x') SELECT 10, 'ten'")
    assert _table_rows(catalog, "db.t") == [(4, "untouched", "y"), (7, "g", "z"), (10, "ten", "x")]
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        q("INSERT OVERWRITE db.t SELECT 11, 'eleven', 'z'")
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    assert _table_rows(catalog, "db.t") == [(4, "untouched", "y"), (10, "ten", "x"), (11, "eleven", "z")]

    # branches: create, write to, read from
    q("ALTER TABLE db.t CREATE BRANCH dev")
    q("INSERT INTO db.t.branch_dev VALUES (20, 'dev', 'x')")
    assert _rows(q("SELECT id FROM db.t.branch_dev WHERE id > 10")) == [(11,), (20,)]
    assert _rows(q("SELECT id FROM db.t VERSION AS OF 'dev' WHERE id > 10")) == [(11,), (20,)]
    assert _rows(q("SELECT id FROM db.t WHERE id > 10")) == [(11,)]
    assert _rows(q("SELECT name, type FROM db.t.refs")) == [("dev", "BRANCH"), ("main", "BRANCH")]

    # row changes on the branch (delete: merge-on-read; update and merge: copy-on-write)
    # leave main as it was
    main_before = _table_rows(catalog, "db.t")
    q("DELETE FROM db.t.branch_dev WHERE id = 4")
    q("UPDATE db.t.branch_dev SET s = 'dev2' WHERE id = 20")
    q(
        "MERGE INTO db.t.branch_dev t USING (SELECT 10 AS id, 'm' AS s, 'x' AS p UNION ALL "
        "SELECT 30, 'n', 'y') s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )
    assert _table_rows(catalog, "db.t", ref="dev") == [
        (10, "m", "x"),
        (11, "eleven", "z"),
        (20, "dev2", "x"),
        (30, "n", "y"),
    ]
    assert _table_rows(catalog, "db.t") == main_before
    dev_ops = [s.operation for s in catalog.load_table("db.t").snapshots()][-3:]
    assert dev_ops == ["delete", "overwrite", "overwrite"]
    q("ALTER TABLE db.t CREATE TAG frozen")
    with pytest.raises(ValidationError, match="tag"):
        q("DELETE FROM db.t.tag_frozen WHERE id = 20")
    with pytest.raises(UnsupportedFeatureError, match="nope"):
        q("SELECT * FROM db.t.nope")
    # Spark's own statements pass through
    assert _rows(q("SELECT count(*) FROM names")) == [(2,)]
