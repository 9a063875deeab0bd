"""How Spark spreads rows over write tasks before they are written (private).

Each write task writes at least one file per partition it holds. Rows arriving in many small
tasks (a batch read from many files, a join's 200 shuffle partitions) would give many small
files per partition, so, as Java's Spark writer does (``SparkWriteConf`` /
``SparkWriteUtil``), writes first cluster the rows (``write.distribution-mode``):

* ``hash``: rows of one partition go to one task (a rebalance on the partition transforms, which
  adaptive query execution coalesces into tasks of about the advisory size and splits where one
  partition is too large);
* ``range``: rows ordered by partition and sort order across tasks (sorted tables);
* ``none``: rows stay where they are.

The mode comes from the session (``spark.sql.iceberg.distribution-mode``), else the table
property of the command (``write.distribution-mode``; ``write.delete.distribution-mode`` /
``write.update.distribution-mode`` / ``write.merge.distribution-mode`` for row-level changes),
else Java's defaults: appends and overwrites ``range`` for sorted tables, ``hash`` for
partitioned ones, ``none`` otherwise; row-level changes ``hash``. Unpartitioned tables cluster
copy-on-write rewrites by the file rows came from (one new file per rewritten file).

Partition transforms Spark can compute exactly cluster by Spark expressions
(``spark_exprs.py``); the others (``bucket`` ...) by icefloe's transforms in an Arrow UDF.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from icefloe.arrow.transforms import apply_transform
from icefloe.errors import ValidationError
from icefloe.spark.types import to_spark_type
from icefloe.spark.write.spark_exprs import sort_columns, source_sql, transform_sql
from icefloe.spec import types as it
from icefloe.spec.properties import distribution_mode_property
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.transforms import IdentityTransform, Transform, VoidTransform

__all__ = ["DISTRIBUTION_MODE_CONF", "NO_DISTRIBUTION", "Distribution", "distribute", "distribution_for"]

#: Session setting that overrides every table's distribution mode (Java's name).
DISTRIBUTION_MODE_CONF = "spark.sql.iceberg.distribution-mode"
MODES = ("none", "hash", "range")
_CLUSTER = "_icefloe_cluster_"


@dataclass(frozen=True)
class Distribution:
    """How a write clusters its rows.

    Attributes:
        mode: ``none``, ``hash`` or ``range``.
        by_file: cluster (or order) by the data file rows came from instead of the partition:
            copy-on-write rewrites of an unpartitioned table.
    """

    mode: str
    by_file: bool = False


#: Rows stay in the tasks they are in (compaction, which spreads its rows itself).
NO_DISTRIBUTION = Distribution("none")


def distribution_for(
    spark: SparkSession, metadata: TableMetadata, command: str = "write", *, copy_on_write: bool = True
) -> Distribution:
    """Java's distribution for ``command`` (``write``, ``delete``, ``update``, ``merge``) on a
    table; ``copy_on_write`` says whether a row-level command rewrites files (else it writes
    only new rows beside delete files).

    Raises:
        ValidationError: an unknown mode in the session setting or the table property.
    """
    partitioned = any(not isinstance(f.transform, VoidTransform) for f in metadata.spec().fields)
    sorted_table = bool(metadata.sort_order().fields)
    configured = _configured(spark, metadata, distribution_mode_property(command))
    if command == "write" or (command == "merge" and copy_on_write):
        if configured is None:
            if command == "merge" and partitioned:
                return Distribution("hash")
            if command == "merge":
                configured = _configured(spark, metadata, distribution_mode_property("write"))
        if configured is None:
            return Distribution("range" if sorted_table else "hash" if partitioned else "none")
        if configured == "range" and not partitioned and not sorted_table:
            return NO_DISTRIBUTION
        if configured == "hash" and not partitioned:
            return NO_DISTRIBUTION
        return Distribution(configured)
    mode = configured or "hash"
    if mode == "none":
        return NO_DISTRIBUTION
    if copy_on_write:  # delete / update rewriting files
        if mode == "hash":
            return Distribution("hash", by_file=not partitioned)
        return Distribution("range", by_file=not partitioned and not sorted_table)
    # merge-on-read update / merge: new rows cluster by their partition
    return Distribution(mode) if partitioned else NO_DISTRIBUTION


def _configured(spark: SparkSession, metadata: TableMetadata, table_property: str) -> str | None:
    session = spark.conf.get(DISTRIBUTION_MODE_CONF, None)
    for source, value in (
        (DISTRIBUTION_MODE_CONF, session),
        (table_property, metadata.properties.get(table_property)),
    ):
        if value is None:
            continue
        mode = value.strip().lower()
        if mode not in MODES:
            raise ValidationError(f"{source} must be one of {', '.join(MODES)}, not {value!r}")
        return mode
    return None


def distribute(
    frame: DataFrame, metadata: TableMetadata, distribution: Distribution, *, file_column: str | None = None
) -> DataFrame:
    """``frame`` (the table's columns, plus ``file_column`` when given) spread over tasks as
    ``distribution`` says; the result has the same columns."""
    if distribution.mode == "none":
        return frame
    if distribution.by_file:
        if file_column is None:
            return frame
        if distribution.mode == "hash":
            return frame.hint("rebalance", file_column)
        return frame.repartitionByRange(F.col(file_column))
    clustering = _partition_columns(metadata)
    if distribution.mode == "range":
        order = [column.asc_nulls_first() for column in clustering]
        order += sort_columns(metadata.sort_order(), metadata.schema()) or []
        return frame.repartitionByRange(*order) if order else frame
    if not clustering:
        return frame
    names = [f"{_CLUSTER}{n}" for n in range(len(clustering))]
    clustered = frame.select(
        "*", *[column.alias(name) for column, name in zip(clustering, names, strict=True)]
    )
    return clustered.hint("rebalance", *names).drop(*names)


def _partition_columns(metadata: TableMetadata) -> list[Column]:
    """A Spark column per partition field that has the same value on rows of one partition."""
    schema = metadata.schema()
    columns = []
    for field in metadata.spec().fields:
        if isinstance(field.transform, VoidTransform):
            continue
        source = schema.find_field(field.source_id)
        reference = source_sql(schema, field.source_id)
        if source is None or reference is None:
            continue  # a source inside a list or map cannot partition; nothing to cluster by
        exact = transform_sql(field.transform, reference, source.field_type)
        if exact is not None:
            columns.append(F.expr(exact))
        elif isinstance(field.transform, IdentityTransform):
            columns.append(F.expr(reference))  # equal partitions have equal values
        else:
            columns.append(_transform_udf(field.transform, source.field_type)(F.expr(reference)))
    return columns


def _transform_udf(transform: Transform, source_type: it.IcebergType) -> Callable[[Column], Column]:
    """icefloe's ``transform`` (``bucket``, ``truncate`` of a decimal) as a Spark function, on
    Arrow batches in the Python workers."""
    result_type = to_spark_type(transform.result_type(source_type), with_ids=False)
    uuids = isinstance(source_type, it.UUIDType)

    def apply(values: pa.Array) -> pa.Array:
        if uuids:  # Spark holds uuids as strings
            values = pa.array(
                [None if v is None else uuid.UUID(v).bytes for v in values.to_pylist()], pa.binary(16)
            )
        return apply_transform(transform, source_type, values)

    return F.arrow_udf(apply, result_type)  # type: ignore[attr-defined,no-any-return]
