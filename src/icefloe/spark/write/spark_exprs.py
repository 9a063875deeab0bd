"""Iceberg partition transforms and sort orders as Spark SQL expressions (private).

The Spark-writer path of ``isp.write`` (``spark_writer.py``) hands rows to Spark's own
Parquet writer, partitioned by Spark columns. Those columns only have to *group* rows exactly as
icefloe's transforms do: each file's partition tuple is then computed from the file's own rows
with icefloe's transforms, never parsed back from Spark's directory names. So the expressions
below are chosen for exact grouping, independent of the session time zone:

* time transforms use floor division of ``unix_micros`` / ``unix_date`` (Spark's ``div``
  truncates towards zero, Iceberg's transforms floor), ``timestamp_ntz`` values through
  ``cast(.. as date)`` and ``hour()``, which ignore the time zone;
* string (and binary) groups are prefixed with ``v``: Spark writes an empty-string partition
  value as null, which would merge the two groups.

A transform without an exact grouping here (``bucket``: Spark has no seed-0 Murmur3 over
Iceberg's byte forms; identity / truncate of float, double and decimal) returns None, and the
write goes through icefloe's own writer instead.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from icefloe.spec import types as it
from icefloe.spec.partitioning import PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.spec.sorting import NullOrder, SortDirection, SortOrder
from icefloe.spec.transforms import (
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    Transform,
    TruncateTransform,
    VoidTransform,
    YearTransform,
)

__all__ = ["partition_group_columns", "sort_columns", "source_sql"]

_MICROS_PER_DAY = 86_400_000_000
_MICROS_PER_HOUR = 3_600_000_000
_TIME_TRANSFORMS = (YearTransform, MonthTransform, DayTransform, HourTransform)
# Identity groups that are the value itself (Spark compares them exactly).
_PLAIN_IDENTITY = (it.BooleanType, it.IntegerType, it.LongType, it.DateType, it.TimestampType)


def source_sql(schema: Schema, source_id: int) -> str | None:
    """The Spark SQL reference to a source column (backquoted names joined by dots), or None
    when it is missing or inside a list or map."""

    def walk(struct: it.StructType, prefix: list[str]) -> list[str] | None:
        for field in struct.fields:
            quoted = [*prefix, "`" + field.name.replace("`", "``") + "`"]
            if field.field_id == source_id:
                return quoted
            if isinstance(field.field_type, it.StructType):
                found = walk(field.field_type, quoted)
                if found is not None:
                    return found
        return None

    path = walk(schema.as_struct(), [])
    return ".".join(path) if path else None


def _floor_div(value: str, divisor: int) -> str:
    return f"(({value}) div {divisor} - (CASE WHEN ({value}) % {divisor} < 0 THEN 1 ELSE 0 END))"


def _days(column: str, source: it.IcebergType) -> str | None:
    if isinstance(source, it.DateType):
        return f"unix_date({column})"
    if isinstance(source, it.TimestamptzType):
        return _floor_div(f"unix_micros({column})", _MICROS_PER_DAY)
    if isinstance(source, it.TimestampType):
        return f"unix_date(cast({column} AS date))"
    return None


def transform_sql(transform: Transform, column: str, source: it.IcebergType) -> str | None:
    """A Spark SQL expression that groups rows exactly as ``transform`` does, or None."""
    if isinstance(transform, IdentityTransform):
        if isinstance(source, it.StringType):
            return f"concat('v', {column})"
        if isinstance(source, it.BinaryType):
            return f"concat('v', hex({column}))"
        if isinstance(source, it.TimestamptzType):
            return f"unix_micros({column})"
        return column if isinstance(source, _PLAIN_IDENTITY) else None
    if isinstance(transform, TruncateTransform):
        width = transform.width
        if isinstance(source, (it.IntegerType, it.LongType)):
            return _floor_div(column, width)
        if isinstance(source, it.StringType):
            return f"concat('v', substring({column}, 1, {width}))"  # code points, as Iceberg
        if isinstance(source, it.BinaryType):
            return f"concat('v', hex(substring({column}, 1, {width})))"  # bytes
        return None
    if isinstance(transform, _TIME_TRANSFORMS):
        days = _days(column, source)
        if days is None:
            return None
        if isinstance(transform, HourTransform):
            if isinstance(source, it.TimestamptzType):
                return _floor_div(f"unix_micros({column})", _MICROS_PER_HOUR)
            if isinstance(source, it.TimestampType):
                return f"({days} * 24 + hour({column}))"
            return None
        if isinstance(transform, DayTransform):
            return days
        date = f"date_from_unix_date({days})"
        if isinstance(transform, YearTransform):
            return f"year({date})"
        return f"(year({date}) * 12 + month({date}))"
    return None


def partition_group_columns(spec: PartitionSpec, schema: Schema) -> list[tuple[str, Column]] | None:
    """``(name, column)`` pairs that group rows as ``spec`` partitions them (void fields
    need none), or None when some field has no exact Spark grouping."""
    columns: list[tuple[str, Column]] = []
    for index, field in enumerate(spec.fields):
        if isinstance(field.transform, VoidTransform):
            continue
        source = schema.find_field(field.source_id)
        column = source_sql(schema, field.source_id)
        if source is None or column is None:
            return None
        expression = transform_sql(field.transform, column, source.field_type)
        if expression is None:
            return None
        columns.append((f"_icefloe_partition_{index}", F.expr(expression)))
    return columns


def sort_columns(order: SortOrder | None, schema: Schema) -> list[Column] | None:
    """The table's sort order as Spark sort columns (identity fields only), [] when unsorted,
    or None when a field cannot be expressed (a transform, a field inside a list or map)."""
    if order is None:
        return []
    columns = []
    for field in order.fields:
        column = source_sql(schema, field.source_id)
        if column is None or not isinstance(field.transform, IdentityTransform):
            return None
        expr = F.expr(column)
        ascending = field.direction == SortDirection.ASC
        nulls_first = field.null_order == NullOrder.NULLS_FIRST
        if ascending:
            columns.append(expr.asc_nulls_first() if nulls_first else expr.asc_nulls_last())
        else:
            columns.append(expr.desc_nulls_first() if nulls_first else expr.desc_nulls_last())
    return columns
