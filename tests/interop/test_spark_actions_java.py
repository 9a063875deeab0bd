"""``icefloe.spark.actions.rewrite_data_files`` maintenance against Java Iceberg (1.9.2): after icefloe's
``rewrite_position_deletes``, ``rewrite_manifests`` and ``expire_snapshots`` (Spark tasks
reading and writing, icefloe committing), Java reads every snapshot of the table exactly as
before, lists the same snapshots, and (v3) reads the deletion vectors that replaced position
delete files.

One Spark session for the module (``ICEFLOE_SPARK_MASTER`` picks ``local[2]`` or e.g.
``local-cluster[2,1,1024]``), one Java server.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

import icefloe
from icefloe import spark as isp
from icefloe.spec.manifest import FileFormat, ManifestContent

from .engines import JavaEngine
from .tables import assert_engine_read, expected_rows, hadoop_catalog

pytestmark = pytest.mark.interop

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("g", pa.string())])


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    """The module's Spark session (an already running one is reused and left running)."""
    running = SparkSession.getActiveSession()
    session = isp.local_session(
        os.environ.get("ICEFLOE_SPARK_MASTER", "local[2]"), app_name="icefloe-interop"
    )
    try:
        yield session
    finally:
        if running is None:
            session.stop()


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> icefloe.Catalog:
    cat = hadoop_catalog(tmp_path_factory.mktemp("actions"))
    cat.create_namespace("db")
    return cat


def _build(catalog: icefloe.Catalog, name: str, version: int) -> icefloe.Table:
    table = catalog.create_table(
        f"db.{name}",
        SCHEMA,
        partition_by=["g"],
        properties={"format-version": str(version), "write.delete.mode": "merge-on-read"},
    )
    for batch in range(4):
        ids = list(range(batch * 10, batch * 10 + 10))
        table.append(pa.table({"id": ids, "g": ["a" if i % 2 else "b" for i in ids]}, schema=SCHEMA))
    for deleted in ("1, 11", "2", "3, 25", "30"):
        table.delete(f"id IN ({deleted})")
    return table


def _icefloe_rows(table: icefloe.Table, snapshot_id: int | None = None) -> list[Any]:
    scan = table.new_scan() if snapshot_id is None else table.new_scan().use_snapshot(snapshot_id)
    return expected_rows(scan.to_arrow())


def _java_reads(java: JavaEngine, table: icefloe.Table) -> dict[int, list[Any]]:
    """Java's rows of every snapshot, checked against icefloe's."""
    assert table.metadata_location is not None
    rows = {}
    for snapshot in table.snapshots():
        result = java.read(table.metadata_location, snapshot_id=snapshot.snapshot_id)
        assert result["rows"] == _icefloe_rows(table, snapshot.snapshot_id), snapshot.snapshot_id
        rows[snapshot.snapshot_id] = result["rows"]
    assert_engine_read("java", java.read(table.metadata_location), table, _icefloe_rows(table))
    return rows


def test_maintenance_reads_identically_in_java(
    spark: SparkSession, catalog: icefloe.Catalog, java_engine: JavaEngine
) -> None:
    table = _build(catalog, "v2", 2)
    before = _java_reads(java_engine, table)
    current = before[table.current_snapshot().snapshot_id]  # type: ignore[union-attr]

    deletes = isp.actions.rewrite_position_deletes(spark, table, options={"rewrite-all": "true"})
    assert deletes.rewritten_delete_files_count == 4 and deletes.added_delete_files_count == 2
    after_deletes = _java_reads(java_engine, table)
    assert after_deletes[table.current_snapshot().snapshot_id] == current  # type: ignore[union-attr]
    assert {k: v for k, v in after_deletes.items() if k in before} == before

    manifests = isp.actions.rewrite_manifests(spark, table, target_manifest_size_bytes=5000)
    assert manifests.rewritten_manifests_count == 4
    snapshot = table.current_snapshot()
    assert snapshot is not None
    data = [m for m in snapshot.all_manifests(table.io()) if m.content == ManifestContent.DATA]
    assert len(data) == manifests.added_manifests_count == 2
    after_manifests = _java_reads(java_engine, table)
    assert after_manifests[snapshot.snapshot_id] == current

    expired = isp.actions.expire_snapshots(spark, table, retain_last=1, older_than=dt.datetime.now(dt.UTC))
    assert len(expired.expired_snapshot_ids) == 9
    assert expired.deleted_position_delete_files_count == 4
    assert [s.snapshot_id for s in table.snapshots()] == [snapshot.snapshot_id]
    assert _java_reads(java_engine, table) == {snapshot.snapshot_id: current}


def test_position_deletes_to_deletion_vectors_read_in_java(
    spark: SparkSession, catalog: icefloe.Catalog, java_engine: JavaEngine
) -> None:
    table = _build(catalog, "v3", 2)
    table.update_properties().set("format-version", "3").commit()
    table.delete("id IN (13)")  # a deletion vector that also holds 11's delete
    before = _java_reads(java_engine, table)
    current = before[table.current_snapshot().snapshot_id]  # type: ignore[union-attr]
    result = isp.actions.rewrite_position_deletes(spark, table)
    assert result.rewritten_delete_files_count > 0
    after = _java_reads(java_engine, table)
    assert after[table.current_snapshot().snapshot_id] == current  # type: ignore[union-attr]
    snapshot = table.current_snapshot()
    assert snapshot is not None
    formats = {
        task_delete.file_format for task in table.new_scan().plan_files() for task_delete in task.deletes
    }
    assert formats == {FileFormat.PUFFIN}
