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

import dataclasses
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
from icefloe.spec import types as it
from icefloe.spec.manifest import DataFile
from icefloe.spec.properties import SPARK_HADOOP_SCHEMES, SPARK_READER
from icefloe.spec.schema import Schema, index_by_id
from icefloe.spec.table_metadata import TableMetadata

__all__ = ["FileReader", "choose_reader", "hadoop_schemes", "nan_safe_options"]

_READERS = ("auto", "spark", "icefloe")


@dataclass(frozen=True, slots=True)
class FileReader:
    """The reader chosen for a read, and the Hadoop form of its locations."""

    kind: Literal["spark", "icefloe"]
    schemes: Mapping[str, str]
    #: Options of Spark's Parquet reader for these files (see :func:`nan_safe_options`).
    parquet_options: Mapping[str, str] = dataclasses.field(default_factory=dict)

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


def choose_reader(
    spark: SparkSession,
    metadata: TableMetadata,
    tasks: Sequence[FileScanTask],
    read_schema: Schema | None = None,
) -> FileReader:
    """The reader of ``tasks``' files (data files and the delete files Spark would read), for
    the columns of ``read_schema`` (None: any of the table's).

    Raises:
        ValidationError: a malformed ``icefloe.spark.reader`` or ``icefloe.spark.hadoop-schemes``.
    """
    choice = _reader_setting(spark, metadata)
    schemes = hadoop_schemes(spark, metadata)
    if choice == "icefloe" or _encrypted(tasks):
        return FileReader("icefloe", schemes)
    if choice != "spark":
        stores = {_store(location, schemes) for location in _locations(tasks)}
        if not all(store is None or can_open(spark, *store) for store in sorted(stores, key=str)):
            return FileReader("icefloe", schemes)
    return FileReader("spark", schemes, nan_safe_options(metadata, tasks, read_schema))


#: Parquet-mr's row-group and page skipping by statistics, column indexes and dictionaries.
_SKIPPING_OFF = {
    "parquet.filter.stats.enabled": "false",
    "parquet.filter.columnindex.enabled": "false",
    "parquet.filter.dictionary.enabled": "false",
}


def nan_safe_options(
    metadata: TableMetadata, tasks: Sequence[FileScanTask], read_schema: Schema | None = None
) -> Mapping[str, str]:
    """Spark's Parquet reader skipping off where a float or double column may hold NaN.

    Parquet's statistics leave NaN out of a column's min and max, and parquet-mr's skipping
    compares the filter's value with them as if nothing else were there: ``x > 100`` or
    ``x = double('NaN')`` skip row groups whose only match is a NaN, which Spark orders above
    every number (measured on Spark 4.x). icefloe's own reader keeps them; so does Spark's once
    it evaluates each row. Reads without float columns (Spark pushes filters only on the
    columns it reads) and files without NaN (known from their ``nan_value_counts``; files
    Spark's writer wrote have none, so they may) keep the skipping."""
    schemas = [read_schema] if read_schema is not None else metadata.schemas
    float_ids = {
        field.field_id
        for schema in schemas
        for field in index_by_id(schema).values()
        if isinstance(field.field_type, (it.FloatType, it.DoubleType))
    }
    return _SKIPPING_OFF if any(_may_hold_nan(task.file, float_ids) for task in tasks) else {}


def _may_hold_nan(file: DataFile, float_ids: set[int]) -> bool:
    """Whether one of the columns may hold NaN in ``file``: its NaN count says so, or the file
    has the column (or no value counts) and no NaN count for it."""
    nans = file.nan_value_counts or {}
    values = file.value_counts
    for field_id in float_ids:
        count = nans.get(field_id)
        if count is None and (values is None or field_id in values):
            return True
        if count:
            return True
    return False


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
