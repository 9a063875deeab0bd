"""Applying a scan's delete files to Spark rows (private to the Spark reader).

Which delete files apply to which data file is icefloe's planning (the delete index: sequence
numbers, partitions, deletion vectors taking over from position files); Spark only removes
the rows:

- position deletes and deletion vectors are decoded on the executors, by icefloe's own reader,
  into (file, position) rows and anti-joined on the data rows' file and row index;
- equality delete files are read by Spark's Parquet reader (by field id), paired with the data
  files each applies to, and anti-joined on (file, delete columns), nulls matching nulls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import reduce

import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as st

from icefloe.io import FileIO
from icefloe.scan._deletes import PositionDeletes
from icefloe.scan.tasks import FileScanTask
from icefloe.spark.jobs import parallelism
from icefloe.spark.paths import reported_path, spark_input_path
from icefloe.spark.types import to_spark_schema, uuid_string
from icefloe.spec import types as it
from icefloe.spec.manifest import DeleteFile, FileContent
from icefloe.spec.schema import Schema, prune_columns
from icefloe.spec.table_metadata import TableMetadata

__all__ = ["apply", "equality_field_ids"]

_FILE = "_icefloe_file"
_POS = "_icefloe_pos"
_DELETE_FILE = "_icefloe_delete_file"
_KEY_FILE = "_icefloe_key_file"
_KEY_PREFIX = "_icefloe_e"


def _equality_deletes(task: FileScanTask) -> list[DeleteFile]:
    return [d for d in task.deletes if d.content == FileContent.EQUALITY_DELETES]


def equality_field_ids(tasks: Sequence[FileScanTask]) -> set[int]:
    """The columns the tasks' equality deletes compare (they must be read with the data)."""
    return {i for task in tasks for d in _equality_deletes(task) for i in (d.equality_ids or ())}


def apply(
    spark: SparkSession,
    frame: DataFrame,
    tasks: Sequence[FileScanTask],
    io: FileIO,
    metadata: TableMetadata,
    read_schema: Schema,
    column_by_id: Callable[[int], Column],
    schemes: Mapping[str, str],
) -> DataFrame:
    """``frame`` (with the file and position columns) without the rows the tasks' deletes
    delete; ``schemes`` maps Iceberg schemes to Hadoop's (``spark/paths.py``)."""
    positional = [t for t in tasks if any(d.content == FileContent.POSITION_DELETES for d in t.deletes)]
    if positional:
        frame = frame.join(
            _deleted_positions(spark, positional, io, schemes), on=[_FILE, _POS], how="left_anti"
        )
    groups: dict[tuple[int, ...], dict[str, set[str]]] = {}
    files: dict[str, DeleteFile] = {}
    for task in tasks:
        for delete in _equality_deletes(task):
            ids = tuple(sorted(delete.equality_ids or ()))
            groups.setdefault(ids, {}).setdefault(delete.file_path, set()).add(task.file.file_path)
            files[delete.file_path] = delete
    for ids, applies_to in groups.items():
        frame = _anti_join_equality(
            spark, frame, ids, applies_to, metadata, read_schema, column_by_id, schemes
        )
    return frame


def _deleted_positions(
    spark: SparkSession, tasks: Sequence[FileScanTask], io: FileIO, schemes: Mapping[str, str]
) -> DataFrame:
    """(file, position) rows of every deleted position of the tasks' data files."""
    # Tasks sharing delete files sit next to each other, so one executor reads each file once.
    ordered = sorted(range(len(tasks)), key=lambda i: tuple(d.file_path for d in tasks[i].deletes))
    tasks = [tasks[i] for i in ordered]
    reported = [reported_path(t.file.file_path, schemes) for t in tasks]
    slices = max(1, min(len(tasks), parallelism(spark) * 2))

    def positions(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        cache = PositionDeletes(io)
        for batch in batches:
            for index in batch.column(0).to_pylist():
                found = cache.for_task(tasks[index])
                if found is None or len(found) == 0:
                    continue
                yield pa.RecordBatch.from_arrays(
                    [pa.array([reported[index]] * len(found), pa.string()), pa.array(found, pa.int64())],
                    names=[_FILE, _POS],
                )

    # Schemas as StructTypes, not DDL text (Spark Connect would ask the server to parse it).
    index = st.StructType([st.StructField("i", st.IntegerType())])
    indexes = spark.createDataFrame([(i,) for i in range(len(tasks))], index).repartition(slices)
    located = st.StructType([st.StructField(_FILE, st.StringType()), st.StructField(_POS, st.LongType())])
    return indexes.mapInArrow(positions, located)


def _anti_join_equality(
    spark: SparkSession,
    frame: DataFrame,
    ids: tuple[int, ...],
    applies_to: dict[str, set[str]],
    metadata: TableMetadata,
    read_schema: Schema,
    column_by_id: Callable[[int], Column],
    schemes: Mapping[str, str],
) -> DataFrame:
    """``frame`` without the rows matching an equality delete of one set of delete columns."""
    source = _schema_with(ids, read_schema, metadata)
    delete_schema = prune_columns(source, set(ids))
    spark_schema = to_spark_schema(
        delete_schema, for_read=True, rename=lambda f: f"{_KEY_PREFIX}{f.field_id}"
    )
    keys = (
        spark.read.schema(spark_schema)
        .option("recursiveFileLookup", "true")
        .parquet(*[spark_input_path(p, schemes) for p in applies_to])
        .select(
            F.col("_metadata.file_path").alias(_DELETE_FILE),
            *[_key_column(delete_schema, i).alias(f"{_KEY_PREFIX}{i}") for i in ids],
        )
    )
    pairs = spark.createDataFrame(
        [
            (reported_path(d, schemes), reported_path(f, schemes))
            for d, data in applies_to.items()
            for f in data
        ],
        f"{_DELETE_FILE} string, {_KEY_FILE} string",
    )
    keys = keys.join(pairs, on=_DELETE_FILE).drop(_DELETE_FILE).distinct()
    matches = [frame[_FILE] == keys[_KEY_FILE]] + [
        column_by_id(i).eqNullSafe(keys[f"{_KEY_PREFIX}{i}"]) for i in ids
    ]
    return frame.join(keys, on=reduce(lambda a, b: a & b, matches), how="left_anti")


def _schema_with(ids: tuple[int, ...], read_schema: Schema, metadata: TableMetadata) -> Schema:
    """The read schema if it has every delete column, else the newest table schema that does
    (a dropped column's deletes still apply)."""
    for schema in (read_schema, *reversed(metadata.schemas)):
        if all(schema.find_field(i) is not None for i in ids):
            return schema
    missing = [i for i in ids if read_schema.find_field(i) is None]
    raise ValueError(f"equality delete columns {missing} are in no table schema")


def _key_column(schema: Schema, field_id: int) -> Column:
    chain = [schema.field(field_id)]
    parent = schema.parent_id(field_id)
    while parent is not None:
        chain.insert(0, schema.field(parent))
        parent = schema.parent_id(parent)
    column = F.col(f"`{_KEY_PREFIX}{chain[0].field_id}`")
    for inner in chain[1:]:
        column = column.getField(inner.name)
    if isinstance(chain[-1].field_type, it.UUIDType):
        column = uuid_string(column)
    return column
