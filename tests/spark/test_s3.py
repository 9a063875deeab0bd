"""Tables on S3 (moto's server on 127.0.0.1) from Spark: the table's FileIO, with its endpoint
and credentials, travels to the executors (pickled) and writes and reads objects there.

``isp.write`` writes through icefloe's writer in Spark tasks; ``format("icefloe")`` reads
through icefloe's reader in Spark tasks. ``isp.read`` hands files to Spark's own Parquet reader,
which needs Hadoop's s3a connector (not shipped with PySpark): it refuses with a clear error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import botocore.session
import pytest
from pyspark.sql import functions as F

import icefloe
from icefloe import spark as isp
from icefloe.errors import UnsupportedFeatureError
from support.catalogs import ARROW_SCHEMA, rows
from support.spark import sorted_tuples, spark_rows


@pytest.fixture
def s3_catalog(s3_properties: dict[str, str], tmp_path: Path) -> icefloe.Catalog:
    properties = {k: v for k, v in s3_properties.items() if k != "test.bucket"}
    catalog = icefloe.load_catalog(
        "s3_spark",
        type="sql",
        uri=f"sqlite:///{tmp_path / 'catalog.db'}",
        warehouse=f"s3://{s3_properties['test.bucket']}/wh",
        **properties,
    )
    catalog.create_namespace("db")
    return catalog


def _objects(s3_properties: dict[str, str], prefix: str) -> list[str]:
    client = botocore.session.get_session().create_client(
        "s3",
        endpoint_url=s3_properties["s3.endpoint"],
        region_name=s3_properties["s3.region"],
        aws_access_key_id=s3_properties["s3.access-key-id"],
        aws_secret_access_key=s3_properties["s3.secret-access-key"],
    )
    listed = client.list_objects_v2(Bucket=s3_properties["test.bucket"], Prefix=prefix)
    # Keys ending in "/" are the empty directory markers Arrow's S3 filesystem leaves behind
    # when it deletes a folder's last object: not files.
    return sorted(item["Key"] for item in listed.get("Contents", []) if not item["Key"].endswith("/"))


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
    stored = _objects(s3_properties, "wh/db/events/data/")
    assert sorted("s3://" + s3_properties["test.bucket"] + "/" + key for key in stored) == sorted(data_files)
    assert sorted_tuples(table.new_scan().to_arrow()) == sorted_tuples(data)

    # Reading on the executors through the data source, with the catalog named by options.
    isp.register(spark)
    options = {"catalog": s3_catalog.name, **{f"catalog.{k}": v for k, v in s3_catalog.properties.items()}}
    read = spark.read.format("icefloe").options(**options).load("db.events")
    assert spark_rows(read) == sorted_tuples(data)
    filtered = spark.read.format("icefloe").options(**options).option("filter", "id < 10").load("db.events")
    assert spark_rows(filtered) == sorted_tuples(data.slice(0, 10))

    # Spark's own Parquet reader cannot open s3:// here: a typed error says what to do.
    with pytest.raises(UnsupportedFeatureError, match="format\\('icefloe'\\)"):
        isp.read(spark, table).collect()


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
    assert _objects(s3_properties, "wh/db/failing/data/") == []
