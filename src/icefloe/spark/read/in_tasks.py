"""Reading a table's files on Spark with icefloe's Arrow reader in the Spark tasks.

The reader of ``icefloe.spark.reader=icefloe`` (see :mod:`icefloe.spark.read.choice`): for
files the session's Hadoop cannot open (an object store without its connector on the class
path, as PySpark from PyPI) and for encrypted tables, whose files each have their own key
(held in the file's encrypted manifest entry), which Spark's Parquet reader cannot take.

The planned tasks are split at row-group boundaries (``read.split.target-size``) and handed to
Spark tasks, which read them with icefloe's own reader (``scan/reading.py``) through the
table's FileIO (pickled with the tasks: its properties and credentials travel, no executor
needs environment variables or the KMS): each file is decrypted with its key, projected by
field id (renamed, added and promoted columns; name-mapped files; identity-partition values and
initial defaults), its deletes (position, equality, deletion vectors) removed and the filter
applied, with row-group and page skipping.

The frame has the rows and columns :func:`icefloe.spark.read.frames.read_tasks` builds from
Spark's reader (the read schema's columns under their Spark names, uuids as binary), plus the
file and position columns when asked; deletes and ``row_filter`` are already applied. The file
column holds the path as Spark's reader would report it (``reported``), so rows join with
icefloe's files the same way whichever reader read them.
"""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as st

from icefloe.arrow.reader import ROW_POSITION_ID
from icefloe.errors import IcefloeError
from icefloe.expressions import Expression, always_true, bind
from icefloe.expressions.model import AlwaysTrue
from icefloe.expressions.rewrite import unbind
from icefloe.io import FileIO
from icefloe.scan.reading import PositionDeletes, read_batches
from icefloe.scan.splitting import SplitOptions, split_tasks
from icefloe.scan.tasks import FileScanTask
from icefloe.spark.datasource.common import arrow_target, to_spark_batch
from icefloe.spark.jobs import parallelism
from icefloe.spark.types import to_spark_schema
from icefloe.spec import types as it
from icefloe.spec.schema import Schema
from icefloe.spec.table_metadata import TableMetadata

__all__ = ["read_in_tasks"]

#: What opening a file costs, in bytes read (Spark's ``spark.sql.files.openCostInBytes``).
_OPEN_COST = 4 * 1024 * 1024


def read_in_tasks(
    spark: SparkSession,
    io: FileIO,
    metadata: TableMetadata,
    tasks: Sequence[FileScanTask],
    read_schema: Schema,
    rename: Callable[[it.NestedField], str],
    *,
    row_filter: Expression | None = None,
    reported: Callable[[str], str] | None = None,
    file_column: str | None = None,
    position_column: str | None = None,
) -> DataFrame:
    """A DataFrame of the live rows of ``tasks`` that match ``row_filter``, read by icefloe in
    Spark tasks.

    Args:
        io, metadata: the table's.
        tasks: whole-file tasks (their residuals are not applied: ``row_filter`` is).
        read_schema: the columns to read; each is named ``rename(field)``.
        row_filter: the rows to keep, bound to a schema with ``read_schema``'s names and ids
            (None: all live rows).
        reported: a file's location as the file column holds it (default: the location).
        file_column: also a column of this name with each row's file (``reported``).
        position_column: also a column of this name with each row's position in its file.
    """
    spark_schema = to_spark_schema(read_schema, for_read=True, with_ids=False, rename=rename)
    projected = read_schema
    if position_column is not None:
        projected = Schema(
            *read_schema.fields, it.NestedField(ROW_POSITION_ID, position_column, it.LongType())
        )
        spark_schema = spark_schema.add(position_column, st.LongType())
    if file_column is not None:
        spark_schema = spark_schema.add(file_column, st.StringType())
    target = arrow_target(spark_schema)
    names = [rename(f) for f in read_schema.fields] + ([position_column] if position_column else [])
    # The caller's filter, not the tasks' residuals: a rewrite or a row-level change plans with
    # a filter but needs every live row of the files it planned.
    residual = _pushed_filter(row_filter, projected)
    everything = [dataclasses.replace(task, residual=residual) for task in tasks]
    report = reported if reported is not None else str
    splits = list(split_tasks(everything, SplitOptions.resolve(metadata.properties).split_size))
    payload = [pickle.dumps(split) for split in splits]

    def read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        deletes = PositionDeletes(io, metadata)  # each delete file read once per Spark task
        for batch in batches:
            for index in batch.column(0).to_pylist():
                task: FileScanTask = pickle.loads(payload[index])
                reported_file = report(task.file.file_path) if file_column else None
                for rows in read_batches(io, metadata, [task], projected, deletes=deletes):
                    yield _to_spark(rows, names, target, file_column, reported_file)

    count = _partitions(spark, splits, SplitOptions.resolve(metadata.properties).split_size)
    return spark.range(0, len(splits), numPartitions=count).mapInArrow(read, spark_schema)


def _pushed_filter(row_filter: Expression | None, read_schema: Schema) -> Expression:
    """``row_filter`` by column names, for the tasks to skip row groups and pages and drop rows
    early; all rows when its names do not bind back (a column name with a dot): the frame's
    own filter still applies it."""
    if row_filter is None or isinstance(row_filter, AlwaysTrue):
        return always_true()
    pushed = unbind(row_filter)
    try:
        bind(read_schema, pushed, case_sensitive=True)
    except IcefloeError:
        return always_true()
    return pushed


def _partitions(spark: SparkSession, splits: Sequence[FileScanTask], split_size: int) -> int:
    """How many Spark tasks read ``splits``: Spark's own rule for its file scans
    (``FilePartition.maxSplitBytes``: up to the split size each, at least one per core while
    the bytes last, a file costing at least its open cost), so small files share a task rather
    than each paying a task (and, on object stores, a FileIO) of its own."""
    if not splits:
        return 1
    sizes = [split.length + _OPEN_COST for split in splits]
    per_task = min(split_size, max(_OPEN_COST, sum(sizes) // parallelism(spark)))
    return max(1, min(len(splits), -(-sum(sizes) // per_task)))


def _to_spark(
    rows: pa.RecordBatch, names: list[str], target: pa.Schema, file_column: str | None, reported: Any
) -> pa.RecordBatch:
    batch = rows.rename_columns(names)
    if file_column is not None:
        batch = batch.append_column(file_column, pa.repeat(pa.scalar(reported, pa.string()), batch.num_rows))
    return to_spark_batch(batch, target)
