"""Spark session settings icefloe relies on, and a loopback session for local work."""

from __future__ import annotations

import importlib.util
import json
import os
import sys

from pyspark.sql import SparkSession

from icefloe.errors import MissingDependencyError

__all__ = ["configure_reads", "local_session"]

# Read Parquet columns by field id when the read schema carries ids (fields without ids are
# still matched by name, so other reads in the session are unaffected).
_READ_SETTINGS = {"spark.sql.parquet.fieldId.read.enabled": "true"}


def configure_reads(spark: SparkSession) -> None:
    """Turn on what icefloe's reads need in ``spark`` (runtime SQL settings)."""
    for key, value in _READ_SETTINGS.items():
        if spark.conf.get(key, None) != value:
            spark.conf.set(key, value)


# PySpark's Connect client: the modules its `connect` extra installs (grpcio, grpcio-status,
# googleapis-common-protos, zstandard).
_CONNECT_CLIENT = {
    "grpc": "grpcio",
    "grpc_status": "grpcio-status",
    "google.rpc": "googleapis-common-protos",
    "zstandard": "zstandard",
}


def _require_connect_client() -> None:
    """Raise MissingDependencyError naming what a Connect session lacks, before PySpark starts a
    server it could not talk to."""
    missing = [package for module, package in _CONNECT_CLIENT.items() if not _importable(module)]
    if missing:
        raise MissingDependencyError(
            f"a Spark Connect session needs PySpark's Connect client ({', '.join(missing)} missing): "
            "pip install 'icefloe[connect]'"
        )


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:  # (a parent package, e.g. google, is missing)
        return False


def local_session(
    master: str = "local[2]",
    app_name: str = "icefloe",
    config: dict[str, str] | None = None,
    *,
    connect: bool = False,
) -> SparkSession:
    """A Spark session bound to 127.0.0.1, its Python workers on this interpreter.

    Args:
        master: ``local[N]``, or ``local-cluster[workers,cores,memoryMB]`` for separate
            executor processes.
        app_name: the application name.
        config: more Spark settings.
        connect: a Spark Connect session: PySpark starts a local Spark Connect server with
            ``master`` and connects to it (PySpark's ``connect`` extra). icefloe needs nothing
            installed on the server.
    """
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    server = {  # settings of the driver (and of a local Connect server's driver)
        "spark.app.name": app_name,
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.ui.enabled": "false",
    }
    session = {  # SQL settings of the session
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": "4",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        **_READ_SETTINGS,
    }
    for key, value in (config or {}).items():
        (session if key.startswith("spark.sql.") else server)[key] = value
    if connect:
        _require_connect_client()
        # PySpark starts the local server with these (a Connect session may only set SQL
        # settings: the others would warn that they cannot be modified).
        os.environ["PYSPARK_REMOTE_INIT_CONF_LEN"] = "1"
        os.environ["PYSPARK_REMOTE_INIT_CONF_0"] = json.dumps(server)
        builder = SparkSession.builder.remote(master)
        settings = session
    else:
        builder = SparkSession.builder.master(master)
        settings = {**server, **session}
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    if not connect:  # a Connect session has no SparkContext; its server logs on its own
        spark.sparkContext.setLogLevel("ERROR")
    return spark
