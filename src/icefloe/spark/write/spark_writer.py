"""``isp.write`` through Spark's own Parquet writer (private).

Handing Spark's rows to Python (``mapInArrow``) costs about as much CPU as writing them: Spark
converts every value into Arrow vectors one by one. For the tables Spark's writer can write as
valid Iceberg data files, this path skips the hand-over and has Spark write the files itself:

* every column carries its field id (``parquet.field.id`` metadata, which Spark writes on
  top-level columns and struct fields; list elements and map keys / values it cannot label,
  so tables with lists or maps take icefloe's writer);
* timestamps as INT64 microseconds, dates and times never rebased (the session settings are
  set for the write and restored after), decimals as INT32 / INT64 / FIXED by precision;
* rows are grouped by Spark expressions that partition exactly as the table's spec does
  (``spark_exprs.py``), and sorted by the table's sort order within each file;
* files roll by rows (``maxRecordsPerFile``): the target size over the table's average bytes per
  row, or over an estimate from the schema for a table without data.

Spark writes into a staging folder of its own under the data location (its commit protocol
keeps failed and duplicate task attempts out). Each file is then described as ``add_files``
describes an imported file: metrics from the footer (Java's ``ParquetUtil.fileMetrics``: no NaN
counts), the partition tuple from the file's own values with icefloe's transforms (proving
every row has it), and moved to the location the table's LocationProvider gives it.

A table this path cannot write (object-store locations, uuid / fixed / time / nanosecond /
variant / geometry types, lists and maps, required fields inside structs, bucket partitions
or other groupings Spark cannot reproduce exactly, codecs other than zstd / snappy / gzip /
uncompressed) is written by icefloe's writer; the table property ``icefloe.spark.writer``
(``auto``, ``icefloe``, ``spark``) chooses explicitly.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import shutil
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pyarrow.parquet as pq
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from icefloe.errors import IcefloeError, UnsupportedFeatureError, ValidationError
from icefloe.io import FileIO, load_location_provider
from icefloe.io.local import local_path
from icefloe.io.locations import DefaultLocationProvider
from icefloe.spark.jobs import delete_paths, tagged, wait_until_gone
from icefloe.spark.types import FIELD_ID_KEY, to_spark_type
from icefloe.spark.write.spark_exprs import partition_group_columns, sort_columns
from icefloe.spec import types as it
from icefloe.spec.encryption import is_encrypted
from icefloe.spec.manifest import DataFile
from icefloe.spec.name_mapping import create_mapping_from_schema
from icefloe.spec.properties import DEFAULT_FILE_FORMAT, DEFAULT_FILE_FORMAT_DEFAULT, SPARK_WRITER
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.rows.parquet_import import ImportProblem, ImportTarget, describe_parquet_file
from icefloe.write import MetricsConfig, file_name_prefix
from icefloe.write.options import ParquetWriteOptions

__all__ = ["SPARK_WRITER", "spark_writer_blocker", "write_with_spark"]

#: Table property choosing the writer of ``isp.write``: ``auto`` (Spark's when it can write
#: the table, else icefloe's), ``icefloe`` or ``spark`` (an error when it cannot).
_WRITERS = ("auto", "icefloe", "spark")

_LEAF_TYPES = (
    it.BooleanType, it.IntegerType, it.LongType, it.FloatType, it.DoubleType, it.DecimalType,
    it.DateType, it.TimestampType, it.TimestamptzType, it.StringType, it.BinaryType,
)  # fmt: skip
# pyarrow codec name (ParquetWriteOptions) -> Spark's "compression" option
_CODECS = {"zstd": "zstd", "snappy": "snappy", "gzip": "gzip", "none": "uncompressed"}
# Bytes per value on disk for a table without data, before compression (files come out
# smaller than the target rather than larger); strings and binary are a guess.
_WIDTHS: dict[type, float] = {
    it.BooleanType: 0.125, it.IntegerType: 4, it.LongType: 8, it.FloatType: 4, it.DoubleType: 8,
    it.DateType: 4, it.TimestampType: 8, it.TimestamptzType: 8, it.StringType: 16, it.BinaryType: 16,
}  # fmt: skip
# Settings Spark's writer must have for Iceberg files; the session's are restored afterwards.
_SESSION_SETTINGS = {
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.sql.parquet.datetimeRebaseModeInWrite": "CORRECTED",
    "spark.sql.parquet.int96RebaseModeInWrite": "CORRECTED",
    "spark.sql.parquet.fieldId.write.enabled": "true",
    "spark.sql.parquet.writeLegacyFormat": "false",
}
_SETTINGS_LOCK = threading.Lock()
_NULL_MARKER = "icefloe: required column "
_NULL_MESSAGE = re.compile(re.escape(_NULL_MARKER) + r"'(.*?)' has a null value")
_ARRIVAL = "_icefloe_arrival"
_SPARK_FILE = re.compile(r"part-(\d+)-.*\.parquet$")


def spark_writer_blocker(metadata: TableMetadata) -> str | None:
    """Why Spark's writer cannot write this table's files (None: it can), or raise when the
    table property asks for it and it cannot.

    Raises:
        ValidationError: a malformed ``icefloe.spark.writer``.
        UnsupportedFeatureError: ``icefloe.spark.writer=spark`` on a table it cannot write.
    """
    choice = metadata.properties.get(SPARK_WRITER, "auto").strip().lower()
    if choice not in _WRITERS:
        raise ValidationError(
            f"table property '{SPARK_WRITER}' must be one of {', '.join(_WRITERS)}, not {choice!r}"
        )
    if choice == "icefloe":
        return f"table property {SPARK_WRITER}=icefloe"
    reason = _blocker(metadata)
    if reason is not None and choice == "spark":
        raise UnsupportedFeatureError(
            f"table property {SPARK_WRITER}=spark, but Spark's writer cannot: {reason}"
        )
    return reason


def _blocker(metadata: TableMetadata) -> str | None:
    properties = metadata.properties
    if is_encrypted(properties):
        return "the table is encrypted: each file has its own key, which Spark's Parquet writer cannot take"
    if properties.get(DEFAULT_FILE_FORMAT, DEFAULT_FILE_FORMAT_DEFAULT).lower() != "parquet":
        return "the table's file format is not Parquet"
    try:
        options = ParquetWriteOptions.from_properties(properties)
    except IcefloeError as exc:
        return str(exc)
    if options.compression not in _CODECS:
        return f"codec {options.compression}"
    data_location = DefaultLocationProvider.for_table(metadata.location, properties).data_location
    try:
        folder = local_path(data_location)
    except ValidationError:
        return f"data location {data_location} is not on the local file system"
    if ":" in folder:
        return f"data location {folder} holds a ':', which Hadoop paths cannot"
    probe = load_location_provider(metadata.location, properties).new_data_location("probe.parquet")
    try:
        local_path(probe)
    except ValidationError:
        return f"data files go to {probe}, not on the local file system"
    schema = metadata.schema()
    for field in schema.fields:
        reason = _type_blocker(field.field_type, field.name, top_level=True, required=field.required)
        if reason is not None:
            return reason
    if partition_group_columns(metadata.spec(), schema) is None:
        return f"partition spec {metadata.spec()}"
    if sort_columns(metadata.sort_order(), schema) is None:
        return f"sort order {metadata.sort_order()}"
    return None


def _type_blocker(field_type: it.IcebergType, name: str, *, top_level: bool, required: bool) -> str | None:
    if isinstance(field_type, it.StructType):
        if required and top_level:
            return f"required struct column '{name}'"
        for child in field_type.fields:
            if child.required:
                return f"required field '{name}.{child.name}' inside a struct"
            reason = _type_blocker(child.field_type, f"{name}.{child.name}", top_level=False, required=False)
            if reason is not None:
                return reason
        return None
    if not isinstance(field_type, _LEAF_TYPES):
        return f"column '{name}' of type {field_type}"
    return None


def write_with_spark(
    prepared: DataFrame, metadata: TableMetadata, io: FileIO, operation_id: str
) -> tuple[list[DataFile], Callable[[Sequence[str]], None]]:
    """Write ``prepared`` (the table's columns in its order and Spark types) with Spark's writer.

    Returns:
        the files and ``cleanup(committed=paths)``, as ``write_data_frame`` does.

    Raises:
        ValidationError: a null in a required column (naming it).
        Any error of the Spark job, after deleting every file it wrote.
    """
    options = ParquetWriteOptions.from_properties(metadata.properties)
    data_location = DefaultLocationProvider.for_table(metadata.location, metadata.properties).data_location
    staging = local_path(f"{data_location}/icefloe-staging-{operation_id}")
    frame, group_names = _frame(prepared, metadata)
    writer = frame.write.mode("error")
    for key, value in _writer_options(options, _rows_per_file(metadata, options)).items():
        writer = writer.option(key, value)
    if group_names:
        writer = writer.partitionBy(*group_names)
    spark = prepared.sparkSession
    try:
        with _SessionSettings(spark), tagged(spark, "write"):
            writer.parquet(staging)
    except BaseException as exc:
        # Tasks Spark is killing may still write into the staging folder for a moment.
        wait_until_gone(lambda: _remove_folder(staging))
        found = _NULL_MESSAGE.search(str(exc))
        if found is not None:
            raise ValidationError(f"required column '{found.group(1)}' has null value(s)") from None
        raise
    moved: list[str] = []
    try:
        files = _describe_and_move(io, metadata, staging, operation_id, moved)
    except BaseException:
        delete_paths(io, moved)
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)

    def cleanup(committed: Sequence[str]) -> None:
        keep = set(committed)
        delete_paths(io, [f.file_path for f in files if f.file_path not in keep])

    return files, cleanup


def _frame(prepared: DataFrame, metadata: TableMetadata) -> tuple[DataFrame, list[str]]:
    """The columns labelled with field ids, required ones checked, plus the grouping columns
    (sorted as the table's sort order within them)."""
    schema = metadata.schema()
    columns: list[Column] = []
    for field in schema.fields:
        column = F.col(f"`{field.name}`")
        nullable = prepared.schema[field.name].nullable
        if field.required and nullable:
            column = _checked_required(column, field)
        elif not field.required and not nullable:
            column = F.when(column.isNotNull(), column)  # an optional field stays optional in the file
        spark_type = to_spark_type(field.field_type, column=field.name, with_ids=True)
        columns.append(column.cast(spark_type).alias(field.name, metadata={FIELD_ID_KEY: field.field_id}))
    groups = partition_group_columns(metadata.spec(), schema) or []
    frame = prepared.select(*columns, *[column.alias(name) for name, column in groups])
    order = sort_columns(metadata.sort_order(), schema) or []
    if groups:
        # Spark's writer sorts each task's rows by the grouping columns unless they already
        # are, and its sort is not stable: rows arriving sorted (a rewrite's sort strategy)
        # would lose their order. A sort with the arrival order as the last key keeps it.
        frame = (
            frame.withColumn(_ARRIVAL, F.monotonically_increasing_id())
            .sortWithinPartitions(*[F.col(name) for name, _ in groups], *order, F.col(_ARRIVAL))
            .drop(_ARRIVAL)
        )
    elif order:
        frame = frame.sortWithinPartitions(*order)
    return frame, [name for name, _ in groups]


def _checked_required(column: Column, field: it.NestedField) -> Column:
    """The column, failing the job on a null, and non-nullable in Spark's schema (so the file
    marks it required): a null raises; the coalesce default is never used."""
    message = f"{_NULL_MARKER}'{field.name}' has a null value"
    checked = F.when(column.isNull(), F.raise_error(F.lit(message))).otherwise(column)
    return F.coalesce(checked, _zero(field.field_type))


def _zero(field_type: it.IcebergType) -> Column:
    spark_type = to_spark_type(field_type, with_ids=False)
    if isinstance(field_type, it.BooleanType):
        return F.lit(False)
    if isinstance(field_type, (it.StringType,)):
        return F.lit("")
    if isinstance(field_type, it.BinaryType):
        return F.expr("X''")
    if isinstance(field_type, it.DateType):
        return F.expr("DATE'1970-01-01'")
    if isinstance(field_type, it.TimestamptzType):
        return F.expr("TIMESTAMP_LTZ'1970-01-01 00:00:00Z'")
    if isinstance(field_type, it.TimestampType):
        return F.expr("TIMESTAMP_NTZ'1970-01-01 00:00:00'")
    return F.lit(0).cast(spark_type)


def _rows_per_file(metadata: TableMetadata, options: ParquetWriteOptions) -> int:
    """Rows per file that reach the target size: measured on the table's data when it has
    some, else estimated from the schema (uncompressed widths: files err on the small side)."""
    snapshot = metadata.current_snapshot()
    summary = snapshot.summary if snapshot is not None else {}
    try:
        records = int(summary.get("total-records", "0"))
        size = int(summary.get("total-files-size", "0"))
    except ValueError:
        records = size = 0
    if records >= 1000 and size > 0:
        per_row = size / records
    else:
        per_row = sum(_width(leaf) for leaf in _leaves(metadata.schema().as_struct()))
    return max(1, math.ceil(options.target_file_size_bytes / max(per_row, 0.125)))


def _leaves(struct: it.StructType) -> Iterator[it.IcebergType]:
    for field in struct.fields:
        if isinstance(field.field_type, it.StructType):
            yield from _leaves(field.field_type)
        else:
            yield field.field_type


def _width(field_type: it.IcebergType) -> float:
    if isinstance(field_type, it.DecimalType):
        return 4 if field_type.precision <= 9 else 8 if field_type.precision <= 18 else 16
    return _WIDTHS.get(type(field_type), 16)


def _writer_options(options: ParquetWriteOptions, rows_per_file: int) -> dict[str, str]:
    result = {
        "compression": _CODECS[options.compression],
        "maxRecordsPerFile": str(rows_per_file),
        "parquet.block.size": str(options.row_group_size_bytes),
        "parquet.page.size": str(options.page_size_bytes),
        "parquet.page.row.count.limit": str(options.page_row_limit),
        "parquet.dictionary.page.size": str(options.dict_size_bytes),
        "parquet.enable.summary-metadata": "false",
        "mapreduce.fileoutputcommitter.marksuccessfuljobs": "false",
    }
    if options.compression == "zstd" and options.compression_level is not None:
        result["parquet.compression.codec.zstd.level"] = str(options.compression_level)
    return result


class _SessionSettings:
    """Set :data:`_SESSION_SETTINGS` on the session while icefloe writes run, then restore them.

    Spark's Parquet writer reads these from the session when a write starts, not from the
    write's options. Concurrent writes (threads sharing the session) overlap: the first one in
    sets them, the last one out restores the session's own values.
    """

    _active: dict[int, tuple[int, dict[str, str | None]]] = {}  # id(session) -> (writes, before)

    def __init__(self, spark: SparkSession):
        self.spark = spark

    def __enter__(self) -> None:
        key = id(self.spark)
        with _SETTINGS_LOCK:
            count, before = self._active.get(key, (0, {}))
            if count == 0:
                # One request for all of them (a round trip each on Spark Connect), and only
                # the settings that differ are set and later restored.
                current = self.spark.conf.getAll
                before = {
                    name: current.get(name)
                    for name, value in _SESSION_SETTINGS.items()
                    if current.get(name) != value
                }
                for name in before:
                    self.spark.conf.set(name, _SESSION_SETTINGS[name])
            self._active[key] = (count + 1, before)

    def __exit__(self, *exc: object) -> None:
        key = id(self.spark)
        with _SETTINGS_LOCK:
            count, before = self._active[key]
            if count > 1:
                self._active[key] = (count - 1, before)
                return
            del self._active[key]
            for name, value in before.items():
                if value is None:
                    self.spark.conf.unset(name)
                else:
                    self.spark.conf.set(name, value)


def _remove_folder(path: str) -> bool:
    """Remove the folder; whether there was one."""
    if not os.path.exists(path):
        return False
    shutil.rmtree(path, ignore_errors=True)
    return True


def _describe_and_move(
    io: FileIO, metadata: TableMetadata, staging: str, operation_id: str, moved: list[str]
) -> list[DataFile]:
    """Describe each file Spark wrote (skipping empty ones) and move it where the table's
    LocationProvider puts it, named as Java names data files; ``moved`` collects the new paths."""
    schema = metadata.schema()
    target = ImportTarget(
        schema=schema,
        spec=metadata.spec(),
        format_version=metadata.format_version,
        name_mapping=create_mapping_from_schema(schema),
        metrics=MetricsConfig.from_properties(metadata.properties, schema, sort_order=metadata.sort_order()),
    )
    written = sorted(_spark_files(staging))
    with ThreadPoolExecutor(max_workers=min(8, max(1, len(written)))) as pool:
        described = list(pool.map(lambda path: _describe(io, path, target), written))
    locations = load_location_provider(metadata.location, metadata.properties)
    sort_order = metadata.sort_order()
    counters: dict[int, int] = {}
    files: list[DataFile] = []
    for path, data_file in zip(written, described, strict=True):
        if data_file is None:
            continue
        found = _SPARK_FILE.search(os.path.basename(path))
        task = int(found.group(1)) if found else 0
        counters[task] = counters.get(task, 0) + 1
        name = f"{file_name_prefix(task, 0, operation_id)}-{counters[task]:05d}.parquet"
        partition_path = (
            target.spec.partition_to_path(data_file.partition, schema) if target.spec.fields else None
        )
        location = locations.new_data_location(name, partition_path)
        destination = local_path(location)
        os.makedirs(os.path.dirname(destination), exist_ok=True)
        shutil.move(path, destination)
        moved.append(location)
        changes: dict[str, Any] = {"file_path": location}
        if sort_order.fields:
            changes["sort_order_id"] = sort_order.order_id
        files.append(dataclasses.replace(data_file, **changes))
    return files


def _spark_files(staging: str) -> Iterator[str]:
    """The data files under the staging folder (not Spark's hidden ``.crc`` companions)."""
    for folder, _, names in os.walk(staging):
        for name in names:
            if name.endswith(".parquet") and not name.startswith((".", "_")):
                yield os.path.join(folder, name)


def _describe(io: FileIO, path: str, target: ImportTarget) -> DataFile | None:
    if pq.read_metadata(path).num_rows == 0:
        return None  # Spark writes an empty file for a task without rows
    try:
        data_file, _ = describe_parquet_file(io, path, target)
    except ImportProblem as exc:  # a grouping that differs from the spec would be a bug here
        raise IcefloeError(f"Spark wrote a data file icefloe cannot register: {path} {exc}") from exc
    return data_file
