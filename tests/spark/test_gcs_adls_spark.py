"""Spark pipelines on GCS and ADLS (gcp-storage-emulator and Azurite on 127.0.0.1): the table's
FileIO properties (Java's names) travel pickled to the executors, which write, read and change
the table through icefloe's writer and its reader in the tasks (PySpark from PyPI has no Hadoop
``gs`` / ``abfss`` connector, so ``auto`` picks icefloe's reader). Results are checked with the
plain-Python reader."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession
from tests.conftest import AZURITE_ACCOUNT, AZURITE_KEY

import icefloe
from icefloe import spark as isp

pytest.importorskip("gcsfs")
pytest.importorskip("adlfs")

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("v", pa.string())])


def _gcs(endpoint: str) -> tuple[str, dict[str, str]]:
    from icefloe.io.fsspecfs import FsspecFileIO

    properties = {"gcs.service.host": endpoint, "gcs.no-auth": "true", "gcs.project-id": "icefloe"}
    bucket = f"icefloe-{uuid.uuid4().hex[:10]}"
    FsspecFileIO(properties).filesystem("gs").mkdir(bucket)
    return f"gs://{bucket}/wh", properties


def _adls(endpoint: str) -> tuple[str, dict[str, str]]:
    import azure.storage.blob

    container = f"icefloe-{uuid.uuid4().hex[:10]}"
    connection = (
        f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};AccountKey={AZURITE_KEY};"
        f"BlobEndpoint={endpoint}/{AZURITE_ACCOUNT};"
    )
    azure.storage.blob.BlobServiceClient.from_connection_string(connection).create_container(container)
    properties = {
        f"adls.connection-string.{AZURITE_ACCOUNT}": f"{endpoint}/{AZURITE_ACCOUNT}",
        "adls.auth.shared-key.account.name": AZURITE_ACCOUNT,
        "adls.auth.shared-key.account.key": AZURITE_KEY,
    }
    return f"abfss://{container}@{AZURITE_ACCOUNT}.dfs.core.windows.net/wh", properties


@pytest.fixture(params=["gcs", "adls"])
def store_catalog(request: Any, tmp_path: Path) -> icefloe.Catalog:
    if request.param == "gcs":
        warehouse, properties = _gcs(request.getfixturevalue("gcs_endpoint"))
    else:
        warehouse, properties = _adls(request.getfixturevalue("azurite_endpoint"))
    catalog = icefloe.load_catalog(
        f"spark_{request.param}",
        type="sql",
        uri=f"sqlite:///{tmp_path / 'catalog.db'}",
        warehouse=warehouse,
        **properties,
    )
    catalog.create_namespace("db")
    return catalog


def _plain(table: Any) -> dict[int, str]:
    rows = table.new_scan().to_arrow()
    return dict(zip(rows["id"].to_pylist(), rows["v"].to_pylist(), strict=True))


@pytest.mark.every_session
def test_spark_pipeline_on_gcs_and_adls(spark: SparkSession, store_catalog: icefloe.Catalog) -> None:
    table = store_catalog.create_table(
        "db.events", SCHEMA, properties={"format-version": "3", "write.delete.mode": "merge-on-read"}
    )
    isp.write(spark.range(0, 200, numPartitions=2).selectExpr("id", "concat('v', id) AS v"), table)
    assert all(task.file.file_path.startswith(table.location()) for task in table.new_scan().plan_files())

    isp.delete(spark, table, "id % 10 = 0")  # deletion vectors, written in the tasks
    source = spark.range(190, 210).selectExpr("id", "concat('new', id) AS v")
    isp.merge_into(
        source, table, "t.id = s.id"
    ).when_matched().update_all().when_not_matched().insert_all().merge()
    table.refresh()
    expected = {i: f"v{i}" for i in range(190) if i % 10} | {i: f"new{i}" for i in range(190, 210)}
    assert {r.id: r.v for r in isp.read(spark, table).collect()} == expected
    sql = isp.sql(spark, "SELECT count(*) FROM db.events WHERE id >= 100", catalog=store_catalog).collect()
    assert sql[0][0] == sum(1 for i in expected if i >= 100)
    assert _plain(store_catalog.load_table("db.events")) == expected
