"""``icefloe.spark.reader``: icefloe's reader in Spark tasks gives the rows Spark's reader gives
(deletes, renamed / added / promoted columns), settings are checked, and ``auto``'s Hadoop
probe answers without a job, once per session and scheme."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pyarrow as pa
import pytest

from icefloe import Catalog
from icefloe import spark as isp
from icefloe.errors import ValidationError
from icefloe.spark.paths import parse_hadoop_schemes, reported_path, spark_input_path
from icefloe.spark.read import hadoop_probe
from icefloe.spark.read.choice import choose_reader
from icefloe.spec import types as it

SCHEMA = pa.schema([pa.field("id", pa.int32()), pa.field("name", pa.string()), pa.field("x", pa.float32())])


@contextmanager
def _session_setting(spark: Any, key: str, value: str) -> Iterator[None]:
    spark.conf.set(key, value)
    try:
        yield
    finally:
        spark.conf.unset(key)


def _rows(frame: Any) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in frame.collect()), key=repr)


@pytest.mark.parametrize("version", [2, 3])
def test_icefloe_reader_reads_what_spark_reads(spark: Any, catalog: Catalog, version: int) -> None:
    table = catalog.create_table(
        "db.choice",
        SCHEMA,
        partition_by=["name"],
        properties={"format-version": str(version), "write.delete.mode": "merge-on-read"},
    )
    table.append(
        pa.table(
            {"id": pa.array(range(30), pa.int32()), "name": [("a", "b", None)[i % 3] for i in range(30)],
             "x": pa.array([i / 4 for i in range(30)], pa.float32())},
            schema=SCHEMA,
        )
    )  # fmt: skip
    isp.delete(spark, table, "id % 7 = 0")  # position deletes (v2) / deletion vectors (v3)
    (
        table.update_schema()
        .rename_column("name", "label")
        .update_column("id", it.LongType())
        .update_column("x", it.DoubleType())
        .add_column("extra", it.StringType())
        .commit()
    )
    table.append(pa.table({"id": [100], "label": ["z"], "x": [1.5], "extra": ["e"]}))
    table.refresh()

    def both(**kwargs: Any) -> list[list[tuple[Any, ...]]]:
        results = []
        for reader in ("spark", "icefloe"):
            with _session_setting(spark, "icefloe.spark.reader", reader):
                results.append(_rows(isp.read(spark, table, **kwargs)))
        return results

    spark_result, icefloe_result = both()
    assert icefloe_result == spark_result
    assert len(spark_result) == 30 - 5 + 1
    filtered_spark, filtered_icefloe = both(filter="id > 10 AND label = 'a'", columns=["id", "extra"])
    assert filtered_icefloe == filtered_spark and filtered_spark


def test_reader_settings_are_checked(spark: Any, catalog: Catalog) -> None:
    table = catalog.create_table("db.settings", SCHEMA, properties={"icefloe.spark.reader": "fast"})
    table.append(
        pa.table({"id": pa.array([1], pa.int32()), "name": ["a"], "x": pa.array([1.0], pa.float32())})
    )
    tasks = table.new_scan().plan_files()
    with pytest.raises(
        ValidationError, match=r"table property 'icefloe.spark.reader' must be one of auto, spark, icefloe"
    ):
        choose_reader(spark, table.metadata, tasks)
    # The session's setting takes precedence over the table's.
    with _session_setting(spark, "icefloe.spark.reader", "icefloe"):
        assert choose_reader(spark, table.metadata, tasks).kind == "icefloe"
    with _session_setting(spark, "icefloe.spark.reader", "auto"):
        assert choose_reader(spark, table.metadata, tasks).kind == "spark"  # local files
    with pytest.raises(ValidationError, match=r"icefloe\.spark\.hadoop-schemes"):
        parse_hadoop_schemes("s3=s3a,gs")
    assert parse_hadoop_schemes("S3=s3a, gs=gs") == {"s3": "s3a", "gs": "gs"}


def test_hadoop_paths_map_schemes() -> None:
    assert spark_input_path("s3://b/wh/a b.parquet") == "s3a://b/wh/a b.parquet"
    assert reported_path("s3n://b/wh/a b.parquet") == "s3a://b/wh/a%20b.parquet"
    assert reported_path("s3://b/x.parquet", {"s3": "s3"}) == "s3://b/x.parquet"
    assert reported_path("gs://b/x.parquet") == "gs://b/x.parquet"


def test_auto_probes_once_per_session_and_scheme(spark: Any) -> None:
    hadoop_probe.forget(spark)
    before = hadoop_probe.probes_made
    # PySpark's Hadoop has no s3a connector and no made-up scheme...
    assert not hadoop_probe.can_open(spark, "s3a", "some-bucket")
    assert not hadoop_probe.can_open(spark, "s3a", "some-bucket")
    assert not hadoop_probe.can_open(spark, "icefloe-made-up", "host")
    # ...and opens local files (the probe's path is missing: the FileSystem is there).
    assert hadoop_probe.can_open(spark, "file", "")
    assert hadoop_probe.probes_made - before == 3
    assert hadoop_probe.can_open(spark, "file", "")
    assert hadoop_probe.probes_made - before == 3
