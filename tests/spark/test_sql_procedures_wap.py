"""``isp.sql`` procedures that bring Spark's Parquet tables into icefloe (``snapshot``,
``migrate``) and ``create_changelog_view``: one scenario each, answers from plain Python over
the rows written and icefloe's own table API."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession

from icefloe import Catalog
from icefloe import spark as isp
from icefloe.errors import ValidationError, ValidationException


def _rows(df: DataFrame) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in df.collect())


def _table_rows(catalog: Catalog, name: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(r.values()) for r in catalog.load_table(name).new_scan().to_arrow().to_pylist())


@pytest.mark.slow
def test_snapshot_and_migrate_parquet_tables(spark: SparkSession, catalog: Catalog, tmp_path: Path) -> None:
    def q(statement: str) -> DataFrame:
        return isp.sql(spark, statement, catalog=catalog)

    # Spark's tables in a database of their own, under tmp_path (managed ones included)
    db = f"parquet_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE DATABASE {db} LOCATION '{tmp_path / 'spark_db'}'")
    src, ext, managed = f"{db}.src", f"{db}.ext", f"{db}.man"
    try:
        spark.sql(f"CREATE TABLE {src} (id bigint, v string) USING parquet")
        spark.sql(f"INSERT INTO {src} VALUES (1, 'a'), (2, 'b')")
        spark.sql(f"INSERT INTO {src} VALUES (3, NULL)")
        files = spark.table(src).inputFiles()
        source_rows = _rows(spark.table(src))

        # snapshot: a new icefloe table over the source's files; the source stays as it was
        result = q(
            f"CALL system.snapshot(source_table => '{src}', table => 'db.snap', properties => map('k', 'v'))"
        )
        assert result.columns == ["imported_files_count"]
        assert _rows(result) == [(len(files),)]
        table = catalog.load_table("db.snap")
        assert table.properties()["gc.enabled"] == "false" and table.properties()["k"] == "v"
        assert sorted(t.file.file_path for t in table.new_scan().plan_files()) == sorted(files)
        assert _rows(q("SELECT * FROM db.snap")) == source_rows
        q("INSERT INTO db.snap VALUES (4, 'd')")
        q("DELETE FROM db.snap WHERE id = 1")
        assert _rows(spark.table(src)) == source_rows
        assert _table_rows(catalog, "db.snap") == [(2, "b"), (3, None), (4, "d")]

        # a path-based source; positional arguments
        folder = tmp_path / "plain"
        spark.createDataFrame([(7, "x")], "id long, v string").write.parquet(str(folder))
        q(f"CALL {catalog.name}.system.snapshot(source_table => 'parquet.`{folder}`', table => 'db.snap2')")
        assert _table_rows(catalog, "db.snap2") == [(7, "x")]
        with pytest.raises(ValidationError, match="overlap"):
            q(f"CALL system.snapshot('parquet.`{folder}`', 'db.snap3', '{folder}/inner')")
        assert not catalog.table_exists("db.snap3")

        # migrate an external table: the icefloe table takes its name and files, the source
        # becomes <name>_backup_ (dropped with drop_backup; an external table's files stay)
        location = tmp_path / "ext"
        spark.sql(f"CREATE TABLE {ext} (id bigint, s string) USING parquet LOCATION '{location}'")
        spark.sql(f"INSERT INTO {ext} VALUES (10, 'p'), (11, 'q')")
        assert _rows(q(f"CALL system.migrate('{ext}', map('m', '1'))")) == [
            (len(spark.read.parquet(str(location)).inputFiles()),)
        ]
        migrated = catalog.load_table(ext)
        assert migrated.location().rstrip("/").endswith(str(location))
        assert migrated.properties()["migrated"] == "true" and migrated.properties()["m"] == "1"
        assert _rows(q(f"SELECT * FROM {ext}")) == [(10, "p"), (11, "q")]
        assert spark.catalog.tableExists(f"{ext}_backup_")

        # a managed table: its backup keeps the files, so drop_backup is refused up front
        spark.sql(f"CREATE TABLE {managed} (id bigint) USING parquet")
        spark.sql(f"INSERT INTO {managed} VALUES (5)")
        with pytest.raises(ValidationError, match="drop_backup"):
            q(f"CALL system.migrate(table => '{managed}', drop_backup => true)")
        assert spark.catalog.tableExists(managed) and not catalog.table_exists(managed)
        q(f"CALL system.migrate(table => '{managed}', backup_table_name => 'man_old')")
        assert _table_rows(catalog, managed) == [(5,)]
        assert _rows(spark.table(f"{db}.man_old")) == [(5,)]
        assert not spark.catalog.tableExists(managed)
    finally:
        spark.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")


@pytest.mark.slow
def test_create_changelog_view(spark: SparkSession, catalog: Catalog) -> None:
    def q(statement: str) -> DataFrame:
        return isp.sql(spark, statement, catalog=catalog)

    q("CREATE TABLE db.c (id bigint NOT NULL, v string, p string) USING iceberg PARTITIONED BY (p)")
    q("INSERT INTO db.c VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'y')")
    q("UPDATE db.c SET v = 'B' WHERE id = 2")  # copy-on-write: id 1 is a carry-over
    q("DELETE FROM db.c WHERE id = 3")
    q("INSERT INTO db.c VALUES (3, 'c', 'y')")
    snaps = [s.snapshot_id for s in catalog.load_table("db.c").snapshots()]

    def changes(view: str) -> list[tuple[Any, ...]]:
        return _rows(spark.sql(f"SELECT id, v, _change_type, _change_ordinal FROM {view}"))

    result = q("CALL system.create_changelog_view('db.c')")
    assert result.columns == ["changelog_view"] and _rows(result) == [("`c_changes`",)]
    assert spark.table("c_changes").columns == [
        "id",
        "v",
        "p",
        "_change_type",
        "_change_ordinal",
        "_commit_snapshot_id",
    ]
    assert changes("c_changes") == [
        (1, "a", "INSERT", 0),
        (2, "B", "INSERT", 1),
        (2, "b", "DELETE", 1),
        (2, "b", "INSERT", 0),
        (3, "c", "DELETE", 2),
        (3, "c", "INSERT", 0),
        (3, "c", "INSERT", 3),
    ]
    assert {r[0] for r in spark.sql("SELECT DISTINCT _commit_snapshot_id FROM c_changes").collect()} == set(
        snaps
    )

    q(
        "CALL system.create_changelog_view(table => 'db.c', changelog_view => 'ups', identifier_columns => array('id'))"
    )
    assert changes("ups") == [
        (1, "a", "INSERT", 0),
        (2, "B", "UPDATE_AFTER", 1),
        (2, "b", "INSERT", 0),
        (2, "b", "UPDATE_BEFORE", 1),
        (3, "c", "DELETE", 2),
        (3, "c", "INSERT", 0),
        (3, "c", "INSERT", 3),
    ]
    # net changes (as Java: a row's run restarts after its changes cancel out): 2's first
    # version is gone, 1 and 3 keep their last insert
    q("CALL system.create_changelog_view(table => 'db.c', changelog_view => 'net', net_changes => true)")
    assert changes("net") == [(1, "a", "INSERT", 1), (2, "B", "INSERT", 1), (3, "c", "INSERT", 3)]
    q(
        f"CALL system.create_changelog_view('db.c', 'ranged', "
        f"map('start-snapshot-id', '{snaps[0]}', 'end-snapshot-id', '{snaps[2]}'))"
    )
    assert changes("ranged") == [(2, "B", "INSERT", 0), (2, "b", "DELETE", 0), (3, "c", "DELETE", 1)]
    # from a time: the oldest ancestor at or after it starts the range (inclusive)
    second_ms = catalog.load_table("db.c").snapshots()[1].timestamp_ms
    q(
        f"CALL system.create_changelog_view('db.c', 'timed', "
        f"map('start-timestamp', '{second_ms}', 'end-snapshot-id', '{snaps[2]}'))"
    )
    assert changes("timed") == changes("ranged")
    with pytest.raises(ValidationError, match="net changes"):
        q("CALL system.create_changelog_view(table => 'db.c', net_changes => true, compute_updates => true)")


@pytest.mark.slow
def test_write_audit_publish(spark: SparkSession, catalog: Catalog) -> None:
    def q(statement: str) -> DataFrame:
        return isp.sql(spark, statement, catalog=catalog)

    q("CREATE TABLE db.w (id bigint, v string) USING iceberg TBLPROPERTIES ('write.wap.enabled'='true')")
    q("INSERT INTO db.w VALUES (1, 'a')")
    published = catalog.load_table("db.w").current_snapshot()
    try:
        # spark.wap.id: INSERT and isp.write stage snapshots; main and reads stay as they were
        spark.conf.set("spark.wap.id", "audit-1")
        q("INSERT INTO db.w VALUES (2, 'b')")
        staged = catalog.load_table("db.w").snapshots()[-1]
        assert staged.summary["wap.id"] == "audit-1"
        assert catalog.load_table("db.w").current_snapshot() == published
        assert _rows(q("SELECT * FROM db.w")) == [(1, "a")]
        spark.conf.set("spark.wap.id", "audit-2")
        snapshot = isp.write(
            spark.createDataFrame([(3, "c")], "id long, v string"), catalog.load_table("db.w")
        )
        assert snapshot is not None and snapshot.summary["wap.id"] == "audit-2"
        assert _table_rows(catalog, "db.w") == [(1, "a")]
        spark.conf.set("spark.wap.id", "audit-3")  # row changes are staged too
        q("DELETE FROM db.w WHERE id = 1")
        assert catalog.load_table("db.w").snapshots()[-1].summary["wap.id"] == "audit-3"
        assert _table_rows(catalog, "db.w") == [(1, "a")]
        spark.conf.unset("spark.wap.id")

        result = q("CALL system.publish_changes('db.w', 'audit-1')")
        assert result.columns == ["source_snapshot_id", "current_snapshot_id"]
        [(source, current)] = _rows(result)
        assert (
            source == staged.snapshot_id
            and current == catalog.load_table("db.w").current_snapshot().snapshot_id
        )  # type: ignore[union-attr]
        assert _table_rows(catalog, "db.w") == [(1, "a"), (2, "b")]
        q(f"CALL system.cherrypick_snapshot('db.w', {snapshot.snapshot_id})")
        assert _table_rows(catalog, "db.w") == [(1, "a"), (2, "b"), (3, "c")]
        with pytest.raises(ValidationException, match="unknown WAP ID"):
            q("CALL system.publish_changes('db.w', 'nothing')")

        # spark.wap.branch: writes go to the branch, reads follow it once it exists
        spark.conf.set("spark.wap.branch", "audit")
        q("INSERT INTO db.w VALUES (4, 'd')")
        isp.write(spark.createDataFrame([(5, "e")], "id long, v string"), catalog.load_table("db.w"))
        assert _rows(q("SELECT id FROM db.w")) == [(1,), (2,), (3,), (4,), (5,)]
        assert _rows(isp.read(spark, catalog.load_table("db.w"), columns=["id"])) == [
            (1,),
            (2,),
            (3,),
            (4,),
            (5,),
        ]
        q("UPDATE db.w SET v = 'D' WHERE id = 4")
        q(
            "MERGE INTO db.w t USING (SELECT 5L AS id, 'E' AS v) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v"
        )
        assert _table_rows(catalog, "db.w") == [(1, "a"), (2, "b"), (3, "c")]  # main
        with pytest.raises(ValidationException, match="both branch and WAP branch"):
            q("INSERT INTO db.w.branch_other VALUES (6, 'f')")
        spark.conf.set("spark.wap.id", "x")
        with pytest.raises(ValidationException, match="both WAP ID and branch"):
            q("INSERT INTO db.w VALUES (6, 'f')")
    finally:
        spark.conf.unset("spark.wap.id")
        spark.conf.unset("spark.wap.branch")
    q("CALL system.fast_forward('db.w', 'main', 'audit')")
    assert _table_rows(catalog, "db.w") == [(1, "a"), (2, "b"), (3, "c"), (4, "D"), (5, "E")]


def _icefloe_views(spark: SparkSession) -> list[str]:
    return [t.name for t in spark.catalog.listTables() if t.isTemporary and t.name.startswith("_icefloe_")]


@pytest.mark.slow
def test_atomic_ctas_properties_and_views(spark: SparkSession, catalog: Catalog) -> None:
    def q(statement: str) -> DataFrame:
        return isp.sql(spark, statement, catalog=catalog)

    q(
        "CREATE TABLE db.a (id bigint NOT NULL, s string) USING iceberg TBLPROPERTIES ('format-version'='1', 'k'='v')"
    )
    q("INSERT INTO db.a VALUES (1, 'x'), (2, 'y')")

    # CTAS / RTAS whose query fails: no table appears, the replaced one keeps its rows
    failing = "SELECT id, CAST(raise_error('boom') AS string) AS s FROM db.a WHERE id > 1"
    with pytest.raises(Exception, match="boom"):
        q(f"CREATE TABLE db.bad USING iceberg AS {failing}")
    assert not catalog.table_exists("db.bad")
    q("CREATE TABLE db.copy USING iceberg AS SELECT * FROM db.a")
    copy = catalog.load_table("db.copy")
    assert len(copy.snapshots()) == 1 and _table_rows(catalog, "db.copy") == [(1, "x"), (2, "y")]
    with pytest.raises(Exception, match="boom"):
        q(f"REPLACE TABLE db.copy USING iceberg AS {failing}")
    assert _table_rows(catalog, "db.copy") == [(1, "x"), (2, "y")]
    q("CREATE OR REPLACE TABLE db.copy USING iceberg AS SELECT id FROM db.a WHERE id = 2")
    assert _table_rows(catalog, "db.copy") == [(2,)]

    # SHOW TBLPROPERTIES: Java's SparkTable properties, one key, a missing key; format-version
    # set through TBLPROPERTIES upgrades the table
    q("ALTER TABLE db.a SET IDENTIFIER FIELDS id")
    q("ALTER TABLE db.a WRITE ORDERED BY s DESC, id")
    q("ALTER TABLE db.a SET TBLPROPERTIES ('format-version'='2')")
    shown = dict(_rows(q("SHOW TBLPROPERTIES db.a")))
    current = catalog.load_table("db.a").current_snapshot()
    assert current is not None
    assert {
        k: shown[k]
        for k in ("format", "current-snapshot-id", "format-version", "sort-order", "identifier-fields", "k")
    } == {
        "format": "iceberg/parquet",
        "current-snapshot-id": str(current.snapshot_id),
        "format-version": "2",
        "sort-order": "s DESC NULLS LAST, id ASC NULLS FIRST",
        "identifier-fields": "[id]",
        "k": "v",
    }
    assert "location" not in shown and "provider" not in shown
    assert _rows(q("SHOW TBLPROPERTIES db.a ('k')")) == [("k", "v")]
    assert _rows(q("SHOW TBLPROPERTIES db.a ('nope')")) == [
        ("nope", f"Table {catalog.name}.db.a does not have property: nope")
    ]

    # no temporary view outlives a statement; a query's DataFrame still runs later
    before = _icefloe_views(spark)
    lazy = q("SELECT a.id, c.id FROM db.a a JOIN db.copy c ON a.id = c.id")
    q("DELETE FROM db.a WHERE id IN (SELECT id FROM db.copy)")
    q("INSERT INTO db.a SELECT id + 10, 'z' FROM db.copy")
    assert _icefloe_views(spark) == before
    assert _rows(lazy) == [(2, 2)]  # read as the tables were when the query was made
    assert _rows(q("SELECT id FROM db.a WHERE s LIKE '{%' OR id > 0")) == [(1,), (12,)]
