"""Reading an encrypted table's files on Spark: icefloe's Arrow reader in the executors.

Spark's Parquet reader takes one decryption key per job (through a JVM crypto factory), but an
encrypted Iceberg table has a key per file, held in the file's (encrypted) manifest entry. So
the planned tasks are split at row-group boundaries (``read.split.target-size``) and handed to
Spark tasks, which read them with icefloe's own reader (``scan/reading.py``): each file is
decrypted with its key, projected by field id, its deletes (position, equality, deletion
vectors) removed and its residual applied. The keys travel to the executors inside the pickled
tasks; no executor needs the KMS.

The frame has the rows and columns :func:`icefloe.spark.read.frames.read_tasks` builds from
Spark's reader (every live row, the tasks' residuals left to the caller's filter; the read
schema's columns under their Spark names, uuids as binary), plus the file and position columns
when asked; deletes are already applied.
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
from icefloe.expressions import always_true
from icefloe.io import FileIO
from icefloe.scan.reading import PositionDeletes, read_batches
from icefloe.scan.splitting import SplitOptions, split_tasks
from icefloe.scan.tasks import FileScanTask
from icefloe.spark.datasource.common import arrow_target, to_spark_batch
from icefloe.spark.paths import reported_path
from icefloe.spark.types import to_spark_schema
from icefloe.spec import types as it
from icefloe.spec.schema import Schema
from icefloe.spec.table_metadata import TableMetadata

__all__ = ["needs_icefloe_reader", "read_decrypting"]


def needs_icefloe_reader(metadata: TableMetadata, tasks: Sequence[FileScanTask]) -> bool:
    """Whether Spark's Parquet reader cannot read these tasks: some file (data or delete) is
    encrypted."""
    return any(
        task.file.key_metadata is not None or any(d.key_metadata is not None for d in task.deletes)
        for task in tasks
    )


def read_decrypting(
    spark: SparkSession,
    io: FileIO,
    metadata: TableMetadata,
    tasks: Sequence[FileScanTask],
    read_schema: Schema,
    rename: Callable[[it.NestedField], str],
    *,
    file_column: str | None = None,
    position_column: str | None = None,
) -> DataFrame:
    """A DataFrame of the live rows of ``tasks`` (deletes applied, residuals not), read by
    icefloe in Spark tasks.

    Args:
        io, metadata: the table's.
        tasks: whole-file tasks.
        read_schema: the columns to read; each is named ``rename(field)``.
        file_column: also a column of this name with each row's file, as Spark reports paths.
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
    # Every live row, as Spark's reader gives: the caller applies its filter (row-level changes
    # need the rows a task's residual would drop).
    everything = [dataclasses.replace(task, residual=always_true()) for task in tasks]
    splits = list(split_tasks(everything, SplitOptions.resolve(metadata.properties).split_size))
    payload = [pickle.dumps(split) for split in splits]

    def read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        deletes = PositionDeletes(io, metadata)  # each delete file read once per Spark task
        for batch in batches:
            for index in batch.column(0).to_pylist():
                task: FileScanTask = pickle.loads(payload[index])
                reported = reported_path(task.file.file_path) if file_column else None
                for rows in read_batches(io, metadata, [task], projected, deletes=deletes):
                    yield _to_spark(rows, names, target, file_column, reported)

    count = max(len(splits), 1)
    return spark.range(0, len(splits), numPartitions=count).mapInArrow(read, spark_schema)


def _to_spark(
    rows: pa.RecordBatch, names: list[str], target: pa.Schema, file_column: str | None, reported: Any
) -> pa.RecordBatch:
    batch = rows.rename_columns(names)
    if file_column is not None:
        batch = batch.append_column(file_column, pa.repeat(pa.scalar(reported, pa.string()), batch.num_rows))
    return to_spark_batch(batch, target)
