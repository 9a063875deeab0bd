"""S3 misbehaving under a Spark job: the fault-injecting proxy (``tests/support/fault_proxy.py``)
answers a share of every request 503 / 500 or cuts the connection, on the driver (metadata,
manifests, commits) and in the tasks (icefloe's writer and its reader in Spark tasks; on
``local-cluster`` separate executor processes). Retries inside the FileIO carry the job through:
the rows written, read and merged are exactly the expected ones."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

import icefloe
from icefloe import spark as isp
from support.fault_proxy import Fault, FaultProxy, random_faults
from support.s3_tables import fileio_properties

pytest.importorskip("botocore")


class _CountingFaults:
    """``random_faults``, counting what it injected (requests come from executor processes too,
    all through the proxy in this one)."""

    def __init__(self, share: float, seed: int):
        self._draw = random_faults(share, seed=seed)
        self._lock = threading.Lock()
        self.injected = 0

    def __call__(self, method: str, path: str) -> Fault:
        fault = self._draw(method, path)
        if fault is not None:
            with self._lock:
                self.injected += 1
        return fault


@pytest.fixture
def faulty_catalog(moto_endpoint: str, s3_properties: dict[str, str], tmp_path: Path) -> Iterator[Any]:
    with FaultProxy(moto_endpoint) as proxy:
        properties = fileio_properties(s3_properties)
        properties["s3.endpoint"] = proxy.endpoint
        catalog = icefloe.load_catalog(
            "faulty_spark",
            type="sql",
            uri=f"sqlite:///{tmp_path / 'catalog.db'}",
            warehouse=f"s3://{s3_properties['test.bucket']}/wh",
            **properties,
        )
        catalog.create_namespace("db")
        yield catalog, proxy


@pytest.mark.every_session
def test_spark_write_read_and_merge_through_a_faulty_s3(spark: SparkSession, faulty_catalog: Any) -> None:
    catalog, proxy = faulty_catalog
    table = catalog.create_table(
        "db.flaky",
        pa.schema([pa.field("id", pa.int64()), pa.field("v", pa.string())]),
        properties={"format-version": "2", "write.merge.mode": "merge-on-read"},
    )
    faults = _CountingFaults(0.08, seed=28)
    proxy.fault = faults

    isp.write(spark.range(0, 400, numPartitions=4).selectExpr("id", "concat('v', id) AS v"), table)
    source = spark.range(350, 450, numPartitions=2).selectExpr("id", "concat('new', id) AS v")
    isp.merge_into(
        source, table, "t.id = s.id"
    ).when_matched().update_all().when_not_matched().insert_all().merge()
    table.refresh()
    expected = {i: f"v{i}" for i in range(350)} | {i: f"new{i}" for i in range(350, 450)}
    assert {r.id: r.v for r in isp.read(spark, table).collect()} == expected
    assert faults.injected >= 5, "the faults must really hit the job"

    proxy.fault = None  # the same table, read without faults and by the plain-Python reader
    plain = catalog.load_table("db.flaky").new_scan().to_arrow()
    assert dict(zip(plain["id"].to_pylist(), plain["v"].to_pylist(), strict=True)) == expected
