"""Spark session settings icefloe relies on, and a loopback session for local work."""

from __future__ import annotations

import os
import sys

from pyspark.sql import SparkSession

__all__ = ["configure_reads", "local_session"]

# Read Parquet columns by field id when the read schema carries ids (fields without ids are
# still matched by name, so other reads in the session are unaffected).
_READ_SETTINGS = {"spark.sql.parquet.fieldId.read.enabled": "true"}


def configure_reads(spark: SparkSession) -> None:
    """Turn on what icefloe's reads need in ``spark`` (runtime SQL settings)."""
    for key, value in _READ_SETTINGS.items():
        if spark.conf.get(key, None) != value:
            spark.conf.set(key, value)


def local_session(
    master: str = "local[2]", app_name: str = "icefloe", config: dict[str, str] | None = None
) -> SparkSession:
    """A Spark session bound to 127.0.0.1, its Python workers on this interpreter.

    Args:
        master: ``local[N]``, or ``local-cluster[workers,cores,memoryMB]`` for separate
            executor processes.
        app_name: the application name.
        config: more Spark settings.
    """
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
    )
    for key, value in {**_READ_SETTINGS, **(config or {})}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
