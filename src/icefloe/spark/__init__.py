"""icefloe on Spark: read, write, change and maintain Iceberg tables from PySpark, no JVM jar.

icefloe plans on the driver; Spark's own Parquet reader reads the files (by field id) and Spark
tasks write them; the driver commits one snapshot per job. See :func:`read`.
"""

from __future__ import annotations

from icefloe.spark import actions
from icefloe.spark.datasource.source import register
from icefloe.spark.read.frames import read
from icefloe.spark.rows.changes import delete, update
from icefloe.spark.rows.merge import merge_into
from icefloe.spark.session import configure_reads, local_session
from icefloe.spark.sql import sql
from icefloe.spark.write.frames import write

__all__ = [
    "actions",
    "configure_reads",
    "delete",
    "local_session",
    "merge_into",
    "read",
    "register",
    "sql",
    "update",
    "write",
]
