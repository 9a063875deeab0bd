"""Tables on S3 (moto's server on 127.0.0.1) from Spark: the table's FileIO, with its endpoint
and credentials, travels to the executors (pickled) and writes and reads objects there.

``isp.write`` writes through icefloe's writer in Spark tasks; ``format("icefloe")`` reads
through icefloe's reader in Spark tasks. PySpark from PyPI has no Hadoop s3a connector, so
``icefloe.spark.reader=auto`` finds (by one probe per session and bucket) that Spark's Parquet
reader cannot open ``s3a://`` and reads through icefloe's reader in the tasks: every read path
on top (row-level changes, SQL, maintenance) works on S3. Results are compared with icefloe's
plain-Python reader.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F

import icefloe
from icefloe import spark as isp
from icefloe.spark.read import hadoop_probe
from icefloe.table.table import Table
from support.catalogs import ARROW_SCHEMA, rows
from support.s3_tables import s3_sql_catalog, stored_locations
from support.spark import sorted_tuples, spark_rows

MODES = ("copy-on-write", "merge-on-read")


@pytest.fixture
def s3_catalog(s3_properties: dict[str, str], tmp_path: Path) -> icefloe.Catalog:
    return s3_sql_catalog("s3_spark", s3_properties, tmp_path)


@pytest.mark.every_session
def test_spark_writes_and_reads_a_table_on_s3(
    spark: Any, s3_catalog: icefloe.Catalog, s3_properties: dict[str, str]
) -> None:
    table = s3_catalog.create_table("db.events", ARROW_SCHEMA, partition_by=["day(ts)"])
    data = rows(300)
    frame = spark.createDataFrame(data.to_pandas()).repartition(3)

    snapshot = isp.write(frame, table)
    assert snapshot is not None and snapshot.summary["added-records"] == "300"
    data_files = [task.file.file_path for task in table.new_scan().plan_files()]
    assert data_files and all(
        p.startswith(f"s3://{s3_properties['test.bucket']}/wh/db/events/data/") for p in data_files
    )
    assert stored_locations(s3_properties, "wh/db/events/data/") == set(data_files)
    assert sorted_tuples(table.new_scan().to_arrow()) == sorted_tuples(data)

    # Reading on the executors through the data source, with the catalog named by options.
    isp.register(spark)
    options = {"catalog": s3_catalog.name, **{f"catalog.{k}": v for k, v in s3_catalog.properties.items()}}
    read = spark.read.format("icefloe").options(**options).load("db.events")
    assert spark_rows(read) == sorted_tuples(data)
    filtered = spark.read.format("icefloe").options(**options).option("filter", "id < 10").load("db.events")
    assert spark_rows(filtered) == sorted_tuples(data.slice(0, 10))

    # isp.read: auto finds no s3a connector (one probe for the bucket) and reads in the tasks.
    probes = hadoop_probe.probes_made
    assert spark_rows(isp.read(spark, table)) == sorted_tuples(data)
    assert spark_rows(isp.read(spark, table, filter="id < 10")) == sorted_tuples(data.slice(0, 10))
    pruned = isp.read(spark, table, columns=["id", "name"], filter="score > 0.5")
    expected = table.new_scan().filter("score > 0.5").select("id", "name").to_arrow()
    assert pruned.columns == ["id", "name"] and spark_rows(pruned) == sorted_tuples(expected)
    assert hadoop_probe.probes_made - probes <= 1  # once per session and bucket (0: asked before)


def test_time_travel_and_forced_spark_reader_on_s3(spark: Any, s3_catalog: icefloe.Catalog) -> None:
    table = s3_catalog.create_table("db.travel", ARROW_SCHEMA)
    data = rows(100)
    table.append(data)
    probes = hadoop_probe.probes_made
    first = table.current_snapshot()
    assert first is not None
    isp.write(spark.createDataFrame(rows(20, start=1000).to_pandas()), table)
    assert spark_rows(isp.read(spark, table, snapshot_id=first.snapshot_id)) == sorted_tuples(data)
    added = isp.read(spark, table, from_snapshot_id=first.snapshot_id)
    assert spark_rows(added) == sorted_tuples(rows(20, start=1000))
    assert hadoop_probe.probes_made - probes <= 1

    # Spark's reader forced: it cannot open s3a:// here, and says so.
    spark.conf.set("icefloe.spark.reader", "spark")
    try:
        with pytest.raises(Exception, match=r"S3AFileSystem|No FileSystem"):
            isp.read(spark, table).collect()
    finally:
        spark.conf.unset("icefloe.spark.reader")


@pytest.mark.every_session
def test_failed_spark_write_to_s3_leaves_no_objects(
    spark: Any, s3_catalog: icefloe.Catalog, s3_properties: dict[str, str]
) -> None:
    table = s3_catalog.create_table("db.failing", ARROW_SCHEMA)
    frame = spark.createDataFrame(rows(200).to_pandas()).repartition(2)
    # One task fails after the other may have written its file: the job commits nothing and
    # the files it wrote are removed from the bucket.
    failing = frame.withColumn("id", F.expr("if(id = 150, raise_error('boom'), id)"))
    with pytest.raises(Exception, match="boom"):
        isp.write(failing, table)
    assert table.current_snapshot() is None
    assert stored_locations(s3_properties, "wh/db/failing/data/") == set()


def _changes_table(catalog: icefloe.Catalog, version: int, mode: str) -> Table:
    table = catalog.create_table(
        "db.changes",
        rows(0).schema,
        partition_by=["name"],
        properties={
            "format-version": str(version),
            "write.delete.mode": mode,
            "write.update.mode": mode,
            "write.merge.mode": mode,
        },
    )
    table.append(rows(60))
    return table


def _ids(table: Table) -> list[tuple[Any, ...]]:
    return sorted(
        tuple(r.values()) for r in table.refresh().new_scan().select("id", "score").to_arrow().to_pylist()
    )


@pytest.mark.parametrize(
    ("version", "mode"), [(2, "copy-on-write"), (2, "merge-on-read"), (3, "merge-on-read")]
)
def test_row_changes_on_s3(spark: Any, s3_catalog: icefloe.Catalog, version: int, mode: str) -> None:
    table = _changes_table(s3_catalog, version, mode)
    expected = {r["id"]: r["score"] for r in rows(60).to_pylist()}

    isp.delete(spark, table, "id < 5 OR id = 40")
    for i in [*range(5), 40]:
        del expected[i]
    isp.update(spark, table, set={"score": "score + 100"}, where="id >= 50")
    for i in range(50, 60):
        expected[i] = None if expected[i] is None else expected[i] + 100
    source = spark.createDataFrame(
        [(6, -1.0, "U"), (7, 0.0, "D"), (500, 5.0, "I")], "id long, score double, op string"
    )
    (
        isp.merge_into(source, table, "t.id = s.id")
        .when_matched("s.op = 'D'")
        .delete()
        .when_matched()
        .update({"score": "s.score"})
        .when_not_matched()
        .insert({"id": "s.id", "score": "s.score"})
        .merge()
    )
    del expected[7]
    expected[6] = -1.0
    expected[500] = 5.0
    assert _ids(table) == sorted(expected.items())
    if mode == "merge-on-read":
        deletes = {d.content for t in table.new_scan().plan_files() for d in t.deletes}
        assert deletes, "merge-on-read commits delete files"
    # Spark (through icefloe's reader, deletes applied in the tasks) agrees with icefloe.
    assert sorted(tuple(r) for r in isp.read(spark, table, columns=["id", "score"]).collect()) == sorted(
        expected.items()
    )


def test_sql_and_maintenance_on_s3(spark: Any, s3_catalog: icefloe.Catalog) -> None:
    table = _changes_table(s3_catalog, 2, "merge-on-read")
    first = table.current_snapshot()
    assert first is not None

    def sql(statement: str) -> Any:
        return isp.sql(spark, statement, catalog=s3_catalog)

    assert sql("SELECT count(*) FROM db.changes WHERE id < 10").collect()[0][0] == 10
    sql("DELETE FROM db.changes WHERE id < 10")
    sql("UPDATE db.changes SET score = -1 WHERE id = 20")
    sql("MERGE INTO db.changes t USING (SELECT 21 AS id) s ON t.id = s.id WHEN MATCHED THEN DELETE")
    assert sql("SELECT count(*) FROM db.changes").collect()[0][0] == 49
    assert sql(f"SELECT count(*) FROM db.changes VERSION AS OF {first.snapshot_id}").collect()[0][0] == 60
    assert sql("SELECT score FROM db.changes WHERE id = 20").collect()[0][0] == -1
    files = sql("SELECT count(*) FROM db.changes.data_files").collect()[0][0]
    assert files == len(table.refresh().new_scan().plan_files())

    # An overwrite of whole files: the condition is checked against the rows read on S3.
    replacement = spark.createDataFrame(rows(3, start=900).to_pandas()).withColumn("name", F.lit("a"))
    isp.write(replacement, table, mode="overwrite", where="name = 'a'")
    expected = sorted_tuples(table.refresh().new_scan().to_arrow())
    assert all(r[1] != "a" or r[0] >= 900 for r in expected)

    result = isp.actions.rewrite_data_files(spark, table, options={"min-input-files": "1"})
    assert result.rewritten_data_files_count > 0
    assert sorted_tuples(table.refresh().new_scan().to_arrow()) == expected
    assert spark_rows(isp.read(spark, table)) == expected
