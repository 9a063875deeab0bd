"""Spark pipelines on S3 tables (moto's server on 127.0.0.1), read through icefloe's reader in
the Spark tasks (PySpark from PyPI has no s3a connector), and other engines on the same bucket:

1. a stream reads an S3 table's appends across triggers into an S3 table, each micro-batch
   committed once (a replayed batch commits nothing);
2. write-audit-publish: ``spark.wap.id`` stages a snapshot, ``spark.wap.branch`` writes to a
   branch that ``isp.read`` follows; main does not change until ``cherrypick_snapshot`` /
   ``fast_forward`` publish them;
3. what Spark writes and MERGEs (merge-on-read) reads identically in PyIceberg, and in DuckDB
   while it has no deletes;
4. a table PyIceberg writes to S3 is changed from Spark (``isp.delete``), and PyIceberg reads
   the change.

Catalogs reach the Spark workers through ``isp.register(spark, catalogs=...)`` (pickled with
the data source), never as plan options.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icefloe
from icefloe import spark as isp
from icefloe.spark.datasource.writer import EPOCH_ID_KEY
from icefloe.table.table import Table
from interop.engines import DuckDBEngine, PyIcebergEngine, ensure_environment
from interop.normalize import normalize_arrow, normalize_rows
from support.catalogs import ARROW_SCHEMA, rows
from support.s3_tables import fileio_properties, s3_sql_catalog
from support.spark import sorted_tuples, spark_rows

_IDS = pa.schema([pa.field("id", pa.int64()), pa.field("s", pa.string())])


def _ids(ids: list[int]) -> pa.Table:
    return pa.table({"id": ids, "s": [f"v{i}" for i in ids]}, schema=_IDS)


@pytest.fixture
def s3_catalog(s3_properties: dict[str, str], tmp_path: Path) -> Iterator[icefloe.Catalog]:
    # A name of its own per test: the data source's registered catalogs are process-wide.
    yield s3_sql_catalog(f"s3_pipes_{uuid.uuid4().hex[:8]}", s3_properties, tmp_path)


def _in_bucket(table: Table, s3_properties: dict[str, str]) -> bool:
    paths = [t.file.file_path for t in table.refresh().new_scan().plan_files()]
    paths += [d.file_path for t in table.new_scan().plan_files() for d in t.deletes]
    return bool(paths) and all(p.startswith(f"s3://{s3_properties['test.bucket']}/wh/") for p in paths)


# ---- 1. streaming ---------------------------------------------------------------------------


def test_stream_from_s3_table_into_s3_table_commits_each_batch_once(
    spark: Any, s3_catalog: icefloe.Catalog, s3_properties: dict[str, str], tmp_path: Path
) -> None:
    source = s3_catalog.create_table("db.src", _IDS)
    target = s3_catalog.create_table("db.dst", _IDS)
    isp.register(spark, catalogs={s3_catalog.name: s3_catalog})
    checkpoint = tmp_path / "chk"
    secret = s3_properties["s3.secret-access-key"]

    def trigger() -> None:
        query = (
            spark.readStream.format("icefloe")
            .option("catalog", s3_catalog.name)
            .load("db.src")
            .writeStream.format("icefloe")
            .option("catalog", s3_catalog.name)
            .option("checkpointLocation", str(checkpoint))
            .outputMode("append")
            .trigger(availableNow=True)
            .start("db.dst")
        )
        query.awaitTermination()
        query.stop()
        assert query.exception() is None
        # The catalog's credentials travel pickled, not in the query's description.
        assert secret not in str(query.recentProgress)

    source.append(_ids([1, 2]))
    trigger()
    source.append(_ids([3]))
    source.append(_ids([4, 5]))
    trigger()
    expected = [(i, f"v{i}") for i in range(1, 6)]
    assert sorted_tuples(target.refresh().new_scan().to_arrow()) == expected
    assert [s.summary[EPOCH_ID_KEY] for s in target.snapshots()] == ["0", "1"]
    assert _in_bucket(target, s3_properties)

    # Spark lost the record of batch 1 after its commit (a driver crash): the replayed batch
    # commits nothing (and no trigger commits an empty batch).
    for name in ("1", ".1.crc"):
        (checkpoint / "commits" / name).unlink(missing_ok=True)
    trigger()
    assert len(target.refresh().snapshots()) == 2
    assert spark_rows(isp.read(spark, target)) == expected


# ---- 2. write-audit-publish -----------------------------------------------------------------


@pytest.mark.every_session
def test_write_audit_publish_on_s3(
    spark: Any, s3_catalog: icefloe.Catalog, s3_properties: dict[str, str]
) -> None:
    table = s3_catalog.create_table("db.w", _IDS, properties={"write.wap.enabled": "true"})
    table.append(_ids([1]))
    published = table.current_snapshot()

    def main_rows() -> list[tuple[Any, ...]]:
        return sorted_tuples(table.refresh().new_scan().to_arrow())

    def sql(statement: str) -> Any:
        return isp.sql(spark, statement, catalog=s3_catalog)

    try:
        # spark.wap.id: the write is staged, main and reads stay as they were.
        spark.conf.set("spark.wap.id", "audit-1")
        staged = isp.write(spark.createDataFrame(_ids([2]).to_pandas()), table)
        assert staged is not None and staged.summary["wap.id"] == "audit-1"
        assert table.refresh().current_snapshot() == published
        assert spark_rows(isp.read(spark, table)) == [(1, "v1")]
        spark.conf.unset("spark.wap.id")

        # spark.wap.branch: writes go to the branch, which the session's reads follow.
        spark.conf.set("spark.wap.branch", "audit")
        isp.write(spark.createDataFrame(_ids([3, 4]).to_pandas()), table)
        assert spark_rows(isp.read(spark, table)) == [(1, "v1"), (3, "v3"), (4, "v4")]
        assert main_rows() == [(1, "v1")]
        assert table.current_snapshot() == published
    finally:
        spark.conf.unset("spark.wap.id")
        spark.conf.unset("spark.wap.branch")

    sql(f"CALL system.cherrypick_snapshot('db.w', {staged.snapshot_id})")
    assert main_rows() == [(1, "v1"), (2, "v2")]
    # The branch forked before the cherry-pick: fast-forward cannot apply, so publish its
    # commit by cherry-picking it too (main then holds every audited row).
    branch_head = table.refresh().metadata.refs["audit"].snapshot_id
    sql(f"CALL system.cherrypick_snapshot('db.w', {branch_head})")
    assert main_rows() == [(1, "v1"), (2, "v2"), (3, "v3"), (4, "v4")]
    assert spark_rows(isp.read(spark, table)) == main_rows()
    assert _in_bucket(table, s3_properties)


def test_fast_forward_publishes_an_s3_branch(spark: Any, s3_catalog: icefloe.Catalog) -> None:
    table = s3_catalog.create_table("db.ff", _IDS, properties={"write.wap.enabled": "true"})
    table.append(_ids([1]))
    try:
        spark.conf.set("spark.wap.branch", "audit")
        isp.write(spark.createDataFrame(_ids([2]).to_pandas()), table)
        isp.delete(spark, table, "id = 1")
        assert spark_rows(isp.read(spark, table)) == [(2, "v2")]
    finally:
        spark.conf.unset("spark.wap.branch")
    assert sorted_tuples(table.refresh().new_scan().to_arrow()) == [(1, "v1")]
    isp.sql(spark, "CALL system.fast_forward('db.ff', 'main', 'audit')", catalog=s3_catalog)
    assert sorted_tuples(table.refresh().new_scan().to_arrow()) == [(2, "v2")]


# ---- 3 and 4. other engines on the same bucket -----------------------------------------------

_PYICEBERG_READ = """
from pyiceberg.table import StaticTable
table = StaticTable.from_metadata(location, properties=s3)
result = normalize_arrow(table.scan(selected_fields=tuple(columns)).to_arrow())["rows"]
"""

_DUCKDB_S3 = """
if not state.get("s3"):
    con.execute(f"LOAD '{httpfs}'")
    state["s3"] = True
con.execute(
    "CREATE OR REPLACE SECRET moto (TYPE s3, KEY_ID ?, SECRET ?, REGION ?, ENDPOINT ?, "
    "URL_STYLE 'path', USE_SSL false)".replace("?", "'{}'").format(key, secret, region, endpoint)
)
result = con.execute(f"SELECT {', '.join(columns)} FROM iceberg_scan('{location}')").fetchall()
"""


def _httpfs_extension() -> str:
    python = ensure_environment("duckdb-httpfs")
    site = next(python.parent.parent.glob("lib/python3*/site-packages")) / "duckdb_extension_httpfs"
    return str(next(site.rglob("*.duckdb_extension")))


def _pyiceberg_rows(
    engine: PyIcebergEngine, location: str, s3_properties: dict[str, str], columns: list[str]
) -> list[Any]:
    return list(
        engine.exec(_PYICEBERG_READ, location=location, s3=fileio_properties(s3_properties), columns=columns)
    )


def _duckdb_rows(
    engine: DuckDBEngine, location: str, s3_properties: dict[str, str], columns: list[str]
) -> list[Any]:
    found = engine.exec(
        _DUCKDB_S3,
        httpfs=_httpfs_extension(),
        key=s3_properties["s3.access-key-id"],
        secret=s3_properties["s3.secret-access-key"],
        region=s3_properties["s3.region"],
        endpoint=s3_properties["s3.endpoint"].removeprefix("http://"),
        location=location,
        columns=columns,
    )
    return normalize_rows(found)


def _icefloe_rows(table: Table, columns: list[str]) -> list[Any]:
    return list(normalize_arrow(table.refresh().new_scan().select(*columns).to_arrow())["rows"])


COLUMNS = ["id", "name", "ts", "day", "amount", "score"]


def test_spark_writes_and_merges_on_s3_other_engines_read_the_same(
    spark: Any,
    s3_catalog: icefloe.Catalog,
    s3_properties: dict[str, str],
    pyiceberg_engine: PyIcebergEngine,
    duckdb_engine: DuckDBEngine,
) -> None:
    table = s3_catalog.create_table(
        "db.shared",
        ARROW_SCHEMA,
        partition_by=["name"],
        properties={"format-version": "2", "write.merge.mode": "merge-on-read"},
    )
    isp.write(spark.createDataFrame(rows(120).to_pandas()).repartition(2), table)
    written = table.refresh().metadata_location
    assert written is not None and _in_bucket(table, s3_properties)
    expected = _icefloe_rows(table, COLUMNS)
    assert len(expected) == 120
    assert _pyiceberg_rows(pyiceberg_engine, written, s3_properties, COLUMNS) == expected
    assert _duckdb_rows(duckdb_engine, written, s3_properties, COLUMNS) == expected

    source = spark.createDataFrame(rows(20, start=110).to_pandas()).selectExpr(
        "id", "name", "ts", "day", "amount", "-score AS score", "id % 4 = 0 AS gone"
    )
    (
        isp.merge_into(source, table, "t.id = s.id")
        .when_matched("s.gone")
        .delete()
        .when_matched()
        .update({"score": "s.score"})
        .when_not_matched()
        .insert({c: f"s.{c}" for c in COLUMNS})
        .merge()
    )
    merged = table.refresh().metadata_location
    assert merged is not None and merged != written
    assert any(t.deletes for t in table.new_scan().plan_files()), "merge-on-read wrote delete files"
    changed = _icefloe_rows(table, COLUMNS)
    assert len(changed) == 130 - len([i for i in range(110, 120) if i % 4 == 0])  # matched and gone
    assert _pyiceberg_rows(pyiceberg_engine, merged, s3_properties, COLUMNS) == changed
    # Spark (deletes applied in its tasks) agrees too.
    assert spark_rows(isp.read(spark, table, columns=["id", "score"])) == sorted_tuples(
        table.new_scan().select("id", "score").to_arrow()
    )


_PYICEBERG_WRITE = """
from pyiceberg.catalog.sql import SqlCatalog
catalog = SqlCatalog("pyi", uri=uri, warehouse=warehouse, **s3)
catalog.create_namespace("src")
data = pa.table({"id": list(range(90)), "s": [f"v{i}" for i in range(90)]})
table = catalog.create_table("src.t", schema=data.schema, properties={"write.delete.mode": "merge-on-read"})
table.append(data)
result = table.metadata_location
"""


def test_table_pyiceberg_writes_to_s3_is_changed_from_spark(
    spark: Any,
    s3_catalog: icefloe.Catalog,
    s3_properties: dict[str, str],
    pyiceberg_engine: PyIcebergEngine,
    tmp_path: Path,
) -> None:
    location = pyiceberg_engine.exec(
        _PYICEBERG_WRITE,
        uri=f"sqlite:///{tmp_path / 'pyiceberg.db'}",
        warehouse=f"s3://{s3_properties['test.bucket']}/pyiceberg",
        s3=fileio_properties(s3_properties),
    )
    assert str(location).startswith(f"s3://{s3_properties['test.bucket']}/pyiceberg/")
    table = s3_catalog.register_table("db.from_pyiceberg", str(location))
    assert spark_rows(isp.read(spark, table)) == sorted_tuples(_ids(list(range(90))))

    isp.delete(spark, table, "id % 3 = 0")
    isp.write(spark.createDataFrame(_ids([100]).to_pandas()), table)
    changed = table.refresh().metadata_location
    assert changed is not None and changed != location
    expected = [[i, f"v{i}"] for i in [*range(90), 100] if i % 3]
    assert any(t.deletes for t in table.new_scan().plan_files()), "merge-on-read wrote delete files"
    assert sorted(_pyiceberg_rows(pyiceberg_engine, changed, s3_properties, ["id", "s"])) == expected
    assert sorted(_icefloe_rows(table, ["id", "s"])) == expected
