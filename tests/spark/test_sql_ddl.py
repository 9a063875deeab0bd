"""``isp.sql`` DDL, Iceberg's ALTER TABLE extensions, SHOW / DESCRIBE and CALL procedures,
checked against icefloe's own table API."""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession

from icefloe import Catalog
from icefloe import spark as isp
from icefloe.errors import UnsupportedFeatureError, ValidationError


def _rows(df: DataFrame) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in df.collect())


@pytest.mark.slow
def test_ddl_extensions_and_procedures(spark: SparkSession, catalog: Catalog) -> None:
    def q(statement: str) -> DataFrame:
        return isp.sql(spark, statement, catalog=catalog)

    q(
        "CREATE TABLE db.s (id bigint NOT NULL, name string, ts timestamp) USING iceberg PARTITIONED BY (days(ts))"
    )
    q(
        "INSERT INTO db.s VALUES (1, 'a', TIMESTAMP '2024-01-01 00:00:00'), (2, 'b', TIMESTAMP '2024-01-02 00:00:00')"
    )
    q("ALTER TABLE db.s ADD COLUMN n int COMMENT 'count' AFTER id")
    q("ALTER TABLE db.s RENAME COLUMN name TO label")
    q("ALTER TABLE db.s ALTER COLUMN n TYPE bigint")
    q("ALTER TABLE db.s ALTER COLUMN ts FIRST")
    q("ALTER TABLE db.s SET TBLPROPERTIES ('k'='v', 'k2'='v2')")
    q("ALTER TABLE db.s UNSET TBLPROPERTIES ('k2')")
    q("ALTER TABLE db.s ADD PARTITION FIELD bucket(4, id) AS b")
    q("ALTER TABLE db.s REPLACE PARTITION FIELD ts_day WITH hours(ts)")
    q("ALTER TABLE db.s WRITE DISTRIBUTED BY PARTITION LOCALLY ORDERED BY id DESC")
    q("ALTER TABLE db.s SET IDENTIFIER FIELDS id")
    table = catalog.load_table("db.s")
    schema = table.schema()
    assert [f.name for f in schema.fields] == ["ts", "id", "n", "label"]
    n = schema.find_field("n")
    assert n is not None and str(n.field_type) == "long" and n.doc == "count"
    assert table.properties()["k"] == "v" and "k2" not in table.properties()
    assert table.properties()["write.distribution-mode"] == "hash"
    assert [(f.name, str(f.transform)) for f in table.spec().fields] == [
        ("b", "bucket[4]"),
        ("ts_hour", "hour"),
    ]
    assert [(str(f.direction), str(f.null_order)) for f in table.sort_order().fields] == [
        ("desc", "nulls-last")
    ]
    assert schema.identifier_field_names() == ["id"]

    assert _rows(q("SHOW TABLES IN db")) == [("db", "s", False)]
    assert ("db",) in _rows(q("SHOW NAMESPACES"))
    assert ("k", "v") in _rows(q("SHOW TBLPROPERTIES db.s"))
    described = _rows(q("DESCRIBE db.s"))
    assert ("Part 0", "bucket(4, id)", "") in described and ("n", "bigint", "count") in described

    # branches and tags, then procedures on snapshots
    first = table.current_snapshot()
    assert first is not None
    q("INSERT INTO db.s (id, label) VALUES (3, 'c')")
    q(f"ALTER TABLE db.s CREATE TAG before AS OF VERSION {first.snapshot_id} RETAIN 2 DAYS")
    q("ALTER TABLE db.s CREATE BRANCH b WITH SNAPSHOT RETENTION 3 SNAPSHOTS")
    refs = catalog.load_table("db.s").refs()
    assert refs["before"].snapshot_id == first.snapshot_id and refs["before"].max_ref_age_ms == 2 * 86_400_000
    assert refs["b"].min_snapshots_to_keep == 3
    result = q(f"CALL system.rollback_to_snapshot('db.s', {first.snapshot_id})")
    assert result.columns == ["previous_snapshot_id", "current_snapshot_id"]
    assert result.collect()[0][1] == first.snapshot_id
    assert _rows(q("SELECT id FROM db.s")) == [(1,), (2,)]
    result = q(f"CALL {catalog.name}.system.set_current_snapshot(table => 'db.s', ref => 'b')")
    assert _rows(q("SELECT id FROM db.s")) == [(1,), (2,), (3,)]
    ancestors = q("CALL system.ancestors_of(table => 'db.s')")
    assert ancestors.columns == ["snapshot_id", "timestamp"] and ancestors.count() == 2
    expired = q(
        "CALL system.expire_snapshots(table => 'db.s', older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)"
    )
    assert expired.columns[0] == "deleted_data_files_count"
    rewritten = q("CALL system.rewrite_data_files(table => 'db.s', options => map('min-input-files', '1'))")
    assert rewritten.columns == [
        "rewritten_data_files_count",
        "added_data_files_count",
        "rewritten_bytes_count",
        "failed_data_files_count",
        "removed_delete_files_count",
    ]
    assert _rows(q("SELECT id FROM db.s")) == [(1,), (2,), (3,)]
    q("ALTER TABLE db.s DROP BRANCH b")
    q("ALTER TABLE db.s DROP TAG IF EXISTS before")
    assert set(catalog.load_table("db.s").refs()) == {"main"}

    # CTAS, RTAS, DROP
    q("CREATE TABLE db.c USING iceberg PARTITIONED BY (label) AS SELECT id, label FROM db.s WHERE id > 1")
    assert _rows(q("SELECT * FROM db.c")) == [(2, "b"), (3, "c")]
    q("REPLACE TABLE db.c USING iceberg AS SELECT id * 10 AS x FROM db.s")
    assert _rows(q("SELECT * FROM db.c")) == [(10,), (20,), (30,)]
    q("DROP TABLE db.c PURGE")
    assert not catalog.table_exists("db.c")

    # catalog views: created from a query, read (joined) like a table, dropped
    q("CREATE VIEW db.big AS SELECT id, label FROM db.s WHERE id > 1")
    assert catalog.view_exists("db.big")
    assert _rows(q("SELECT v.label FROM db.big v JOIN db.s s ON v.id = s.id")) == [("b",), ("c",)]
    q("DROP VIEW db.big")
    assert not catalog.view_exists("db.big")

    with pytest.raises(UnsupportedFeatureError, match="compute_table_stats"):
        q("CALL system.compute_table_stats('db.s')")
    with pytest.raises(ValidationError, match="not a table of Spark's session catalog"):
        q("CALL system.migrate('db.s')")  # an icefloe table, not one of Spark's
    with pytest.raises(ValidationError, match="no parameter 'bogus'"):
        q("CALL system.expire_snapshots(table => 'db.s', bogus => 1)")
