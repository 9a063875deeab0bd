"""Which reader reads a table's files in Spark, and how Hadoop names their locations.

Two readers produce the same frame (:func:`icefloe.spark.read.frames.read_tasks`):

- ``spark``: Spark's own Parquet reader (``spark.read.parquet``), the fast one, for locations
  the session's Hadoop opens (local files; object stores with their connector, the Iceberg
  scheme mapped to Hadoop's by ``icefloe.spark.hadoop-schemes``, default ``s3=s3a,s3n=s3a``);
- ``icefloe``: icefloe's Arrow reader in the Spark tasks (:mod:`icefloe.spark.read.in_tasks`),
  through the table's FileIO, for everything else; encrypted tables always (a key per file).

``icefloe.spark.reader`` = ``auto`` (default) | ``spark`` | ``icefloe`` chooses, as a Spark
session setting or a table property; the session's wins, as Java's Spark settings take the
session's over the table's. ``auto`` takes Spark's reader when every file is local or on a
scheme the session's Hadoop opens (:mod:`icefloe.spark.read.hadoop_probe`, asked once per
session and bucket).
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pyspark.sql import SparkSession

from icefloe.errors import ValidationError
from icefloe.io.fileio import split_scheme
from icefloe.scan.tasks import FileScanTask
from icefloe.spark.paths import DEFAULT_HADOOP_SCHEMES, hadoop_scheme, parse_hadoop_schemes, reported_path
from icefloe.spark.read.hadoop_probe import can_open
from icefloe.spec.properties import SPARK_HADOOP_SCHEMES, SPARK_READER
from icefloe.spec.table_metadata import TableMetadata

__all__ = ["FileReader", "choose_reader", "hadoop_schemes"]

_READERS = ("auto", "spark", "icefloe")


@dataclass(frozen=True, slots=True)
class FileReader:
    """The reader chosen for a read, and the Hadoop form of its locations."""

    kind: Literal["spark", "icefloe"]
    schemes: Mapping[str, str]

    def reported_path(self, location: str) -> str:
        """The file column's value for rows of ``location`` (both readers report this)."""
        return reported_path(location, self.schemes)


def _setting(spark: SparkSession, metadata: TableMetadata, key: str) -> tuple[str | None, str]:
    """(value, where it was set) of a setting: the session's, else the table property."""
    value = spark.conf.get(key, None)
    if value is not None:
        return value, "Spark session setting"
    return metadata.properties.get(key), "table property"


def hadoop_schemes(spark: SparkSession, metadata: TableMetadata) -> Mapping[str, str]:
    """The Iceberg-to-Hadoop scheme mapping of a read (``icefloe.spark.hadoop-schemes``)."""
    value, _ = _setting(spark, metadata, SPARK_HADOOP_SCHEMES)
    return DEFAULT_HADOOP_SCHEMES if value is None else parse_hadoop_schemes(value)


def _reader_setting(spark: SparkSession, metadata: TableMetadata) -> str:
    value, where = _setting(spark, metadata, SPARK_READER)
    choice = (value or "auto").strip().lower()
    if choice not in _READERS:
        raise ValidationError(f"{where} '{SPARK_READER}' must be one of {', '.join(_READERS)}, not {value!r}")
    return choice


def choose_reader(spark: SparkSession, metadata: TableMetadata, tasks: Sequence[FileScanTask]) -> FileReader:
    """The reader of ``tasks``' files (data files and the delete files Spark would read).

    Raises:
        ValidationError: a malformed ``icefloe.spark.reader`` or ``icefloe.spark.hadoop-schemes``.
    """
    choice = _reader_setting(spark, metadata)
    schemes = hadoop_schemes(spark, metadata)
    if choice == "icefloe" or _encrypted(tasks):
        return FileReader("icefloe", schemes)
    if choice == "spark":
        return FileReader("spark", schemes)
    stores = {_store(location, schemes) for location in _locations(tasks)}
    opens = all(store is None or can_open(spark, *store) for store in sorted(stores, key=str))
    return FileReader("spark" if opens else "icefloe", schemes)


def _encrypted(tasks: Sequence[FileScanTask]) -> bool:
    """Whether some file (data or delete) is encrypted: Spark's reader takes no key per file."""
    return any(
        task.file.key_metadata is not None or any(d.key_metadata is not None for d in task.deletes)
        for task in tasks
    )


def _locations(tasks: Sequence[FileScanTask]) -> set[str]:
    return {task.file.file_path for task in tasks} | {d.file_path for t in tasks for d in t.deletes}


def _store(location: str, schemes: Mapping[str, str]) -> tuple[str, str] | None:
    """(Hadoop scheme, authority) of a location; None for a local file."""
    scheme, _ = split_scheme(location)
    if scheme in (None, "file"):
        return None
    return hadoop_scheme(scheme, schemes), urllib.parse.urlsplit(location).netloc
