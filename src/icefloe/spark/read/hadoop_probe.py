"""Whether a Spark session's Hadoop can open a scheme, found without the JVM and without a job.

``icefloe.spark.reader=auto`` reads object-store files with Spark's own Parquet reader when the
session has the connector for their scheme (EMR, Dataproc, Databricks, a Spark with
``hadoop-aws``) and with icefloe's reader in the Spark tasks otherwise (PySpark from PyPI has no
s3a connector). The answer cannot come from the JVM gateway (Spark Connect has none), and a
failed read job per query would cost seconds. So a probe only *analyses* a Parquet read of a
path that does not exist under the location's bucket: resolving the relation makes Hadoop load
the scheme's FileSystem and look the path up, on the driver, with no task.

- "No FileSystem for scheme" / a ``ClassNotFoundException`` of the FileSystem: no connector;
- ``PATH_NOT_FOUND``, or no error at all (a FileSystem that says every path exists): the
  connector is there and reaches the bucket;
- anything else (access denied, an unknown host): Spark's reader would fail the same way, so
  the answer is no and icefloe's reader (with the catalog's FileIO properties) reads.

The answer is kept per session, scheme and authority (bucket), so each read does not probe
again; a session whose Hadoop settings change after a probe (``spark.conf.set("fs.x.impl")``)
keeps the first answer (:func:`forget` drops them).
"""

from __future__ import annotations

import threading
import uuid
import weakref
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import types as st

__all__ = ["can_open", "forget", "probes_made"]

_PROBE_SCHEMA = st.StructType([st.StructField("_icefloe_probe", st.IntegerType())])
_FOUND_MARKERS = ("PATH_NOT_FOUND", "Path does not exist")

_lock = threading.Lock()
_answers: weakref.WeakKeyDictionary[Any, dict[tuple[str, str], bool]] = weakref.WeakKeyDictionary()
#: Probes run in this process (the tests check that a session probes a scheme once).
probes_made = 0


def can_open(spark: SparkSession, scheme: str, authority: str) -> bool:
    """Whether ``spark`` opens ``scheme://authority/...`` through Hadoop (cached per session)."""
    key = (scheme.lower(), authority)
    with _lock:
        known = _answers.get(spark, {}).get(key)
    if known is not None:
        return known
    answer = _probe(spark, scheme, authority)
    with _lock:
        _answers.setdefault(spark, {})[key] = answer
    return answer


def forget(spark: SparkSession) -> None:
    """Drop the answers kept for ``spark`` (the next read probes again)."""
    with _lock:
        _answers.pop(spark, None)


def _probe(spark: SparkSession, scheme: str, authority: str) -> bool:
    global probes_made
    with _lock:
        probes_made += 1
    missing = f"{scheme}://{authority}/_icefloe_probe_{uuid.uuid4().hex}/missing.parquet"
    try:
        # A classic session resolves the relation here; a Connect session when asked for the
        # schema (an analysis request, no job).
        _ = spark.read.schema(_PROBE_SCHEMA).parquet(missing).schema
    except Exception as error:  # what the JVM raised, as classic and Connect wrap it
        return any(marker in str(error) for marker in _FOUND_MARKERS)
    return True
