"""Batch reads of the ``icefloe`` data source: icefloe plans on the driver, executors read the
planned task groups with icefloe's own Arrow reader (deletes and residual filters applied).

Filter pushdown (:class:`IcefloePushdownReader`, option ``push-filters=true``) is off by
default: PySpark 4.3 keeps the plan of a scan that pushed filters on the loaded DataFrame and
reuses it for later scans of that DataFrame that push none (``df.filter("a = 1").collect()``
then ``df.collect()`` returns only the ``a = 1`` rows), so pruning by pushed filters is only
safe for DataFrames that are filtered once. (Later Spark versions keep the plan per scan.) The
``filter`` option prunes files in every version. With pushdown on, Spark's simple filters with
the same meaning in Iceberg (comparisons, ``IN``, null checks, ``LIKE 'abc%'`` on columns
other than float / double / uuid / binary) join the scan filter, so planning prunes files with
them and the reader applies them exactly; Spark keeps evaluating the others.
"""

from __future__ import annotations

import datetime as dt
import pickle
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql import datasource as ds
from pyspark.sql import types as st

from icefloe.errors import ValidationError
from icefloe.expressions import (
    Expression,
    always_true,
    and_,
    bind,
    equal,
    greater_than,
    greater_than_or_equal,
    is_in,
    is_null,
    less_than,
    less_than_or_equal,
    not_,
    not_null,
    parse,
    starts_with,
)
from icefloe.io import FileIO
from icefloe.scan import read_batches, referenced_columns
from icefloe.scan.splitting import CombinedScanTask
from icefloe.scan.tasks import FileScanTask
from icefloe.spark.datasource.common import SPLIT_OPTIONS, TableRef, arrow_target, int_option, to_spark_batch
from icefloe.spec import types as it
from icefloe.spec.schema import Schema
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.scan import TableScan
from icefloe.table.table import Table

__all__ = [
    "IcefloePushdownReader",
    "IcefloeReader",
    "ReadOptions",
    "TasksPartition",
    "partitions_of",
    "projection_of",
    "read_partition",
    "to_iceberg_filter",
]


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """The read options of ``spark.read.format("icefloe")`` (see :mod:`icefloe.spark.datasource.source`)."""

    snapshot_id: int | None = None
    as_of_timestamp: int | None = None
    branch: str | None = None
    tag: str | None = None
    filter: str | None = None
    split_options: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> ReadOptions:
        """Raises: ValidationError: a malformed value, or more than one time-travel option."""
        read = cls(
            snapshot_id=int_option(options, "snapshot-id"),
            as_of_timestamp=int_option(options, "as-of-timestamp"),
            branch=options.get("branch") or None,
            tag=options.get("tag") or None,
            filter=options.get("filter") or None,
            split_options=tuple((k, options[k]) for k in SPLIT_OPTIONS if options.get(k)),
        )
        chosen = [
            name
            for name, value in (
                ("snapshot-id", read.snapshot_id),
                ("as-of-timestamp", read.as_of_timestamp),
                ("branch", read.branch),
                ("tag", read.tag),
            )
            if value is not None
        ]
        if len(chosen) > 1:
            raise ValidationError(f"a read takes at most one of {', '.join(chosen)}")
        return read

    def scan(self, table: Table) -> TableScan:
        """The table's scan these options describe (filter option included).

        Raises:
            NoSuchSnapshotError: a snapshot, branch, tag or time the table does not have.
            InvalidFilterError: a malformed filter.
        """
        scan = table.new_scan()
        if self.snapshot_id is not None:
            scan = scan.use_snapshot(self.snapshot_id)
        if self.as_of_timestamp is not None:
            scan = scan.as_of_time(self.as_of_timestamp)
        for name in (self.branch, self.tag):
            if name is not None:
                scan = scan.use_ref(name)
        if self.filter is not None:
            scan = scan.filter(parse(self.filter))
        for key, value in self.split_options:
            scan = scan.option(key, value)
        return scan


class TasksPartition(ds.InputPartition):
    """One Spark task's work: a pickled :class:`CombinedScanTask` (None: nothing to read)."""

    def __init__(self, tasks: bytes | None, metadata_location: str | None = None):
        super().__init__(tasks)
        self.metadata_location = metadata_location

    def tasks(self) -> tuple[FileScanTask, ...]:
        if self.value is None:
            return ()
        group = pickle.loads(self.value)
        assert isinstance(group, CombinedScanTask)
        return group.tasks


def partitions_of(groups: Sequence[CombinedScanTask], metadata_location: str | None = None) -> list[Any]:
    return [TasksPartition(pickle.dumps(group), metadata_location) for group in groups]


def read_partition(
    io: FileIO,
    metadata: TableMetadata,
    tasks: Sequence[FileScanTask],
    *,
    table_schema: Schema,
    projection: Schema,
    row_filter: Expression,
    target: pa.Schema,
) -> Iterator[pa.RecordBatch]:
    """The rows of ``tasks`` as Spark expects them (``target``), deletes and residuals applied."""
    if not tasks:
        return
    needed = referenced_columns(row_filter, table_schema)
    names = [f.name for f in projection.fields]
    read_schema = table_schema.select(*names, *[n for n in needed if n not in names])
    uuid_columns = frozenset(f.name for f in projection.fields if isinstance(f.field_type, it.UUIDType))
    for batch in read_batches(io, metadata, tasks, read_schema):
        if batch.num_rows:
            yield to_spark_batch(batch, target, uuid_columns)


class IcefloeReader(ds.DataSourceReader):
    """Plans in the driver's planning worker; pickled (io, metadata, scan settings) to executors."""

    def __init__(
        self, ref: TableRef, table: Table, options: ReadOptions, spark_schema: st.StructType
    ) -> None:
        self._ref = ref
        self._io = table.io()
        self._metadata = table.metadata
        self._metadata_location = table.metadata_location
        self._options = options
        scan = options.scan(table)
        self._table_schema = scan.table_schema()
        self._projection = projection_of(self._table_schema, spark_schema)
        self._target = arrow_target(spark_schema)
        self._pushed: list[Expression] = []

    def _row_filter(self) -> Expression:
        expr: Expression = parse(self._options.filter) if self._options.filter else always_true()
        for pushed in self._pushed:
            expr = and_(expr, pushed)
        return expr

    def partitions(self) -> list[Any]:
        table = Table(
            tuple(self._ref.identifier.split(".")), self._metadata, self._metadata_location, self._io
        )
        scan = self._options.scan(table)
        for pushed in self._pushed:
            scan = scan.filter(pushed)
        return partitions_of(scan.plan_tasks())

    def read(self, partition: ds.InputPartition) -> Iterator[pa.RecordBatch]:
        tasks = partition.tasks() if isinstance(partition, TasksPartition) else ()
        return read_partition(
            self._io,
            self._metadata,
            tasks,
            table_schema=self._table_schema,
            projection=self._projection,
            row_filter=self._row_filter(),
            target=self._target,
        )


class IcefloePushdownReader(IcefloeReader):
    """:class:`IcefloeReader` that takes Spark's pushed filters (see the module documentation)."""

    def pushFilters(self, filters: list[ds.Filter]) -> Iterator[ds.Filter]:
        self._pushed = []
        for spark_filter in filters:
            translated = to_iceberg_filter(spark_filter, self._table_schema)
            if translated is None:
                yield spark_filter
            else:
                self._pushed.append(translated)


def projection_of(table_schema: Schema, spark_schema: st.StructType) -> Schema:
    """The table columns a (possibly user-given) Spark schema asks for, by name.

    Raises:
        ValidationError: a name the table does not have.
    """
    by_name = {f.name.lower(): f.name for f in table_schema.fields}
    names = []
    for field in spark_schema.fields:
        name = by_name.get(field.name.lower())
        if name is None:
            raise ValidationError(
                f"column '{field.name}' of the given schema is not in the table "
                f"({', '.join(f.name for f in table_schema.fields)})"
            )
        names.append(name)
    return table_schema.select(*names)


# ---------------------------------------------------------------------------------------------
# Spark filters as Iceberg expressions

# Column types whose values compare the same way in Spark and Iceberg. (Not float / double:
# Spark orders NaN above every number and NaN = NaN; not uuid / binary / fixed: Spark sees
# strings / bytes whose forms and order need not match the stored values'.)
_PUSHABLE = (
    it.BooleanType,
    it.IntegerType,
    it.LongType,
    it.DecimalType,
    it.DateType,
    it.TimestampType,
    it.TimestamptzType,
    it.StringType,
)
_COMPARISONS: dict[type[ds.Filter], Any] = {
    ds.EqualTo: equal,
    ds.GreaterThan: greater_than,
    ds.GreaterThanOrEqual: greater_than_or_equal,
    ds.LessThan: less_than,
    ds.LessThanOrEqual: less_than_or_equal,
}


def to_iceberg_filter(spark_filter: ds.Filter, schema: Schema) -> Expression | None:
    """The Iceberg expression that keeps exactly the rows ``spark_filter`` keeps, or None when
    there is none (an unsupported filter, column type or value)."""
    negate = isinstance(spark_filter, ds.Not)
    inner = spark_filter.child if isinstance(spark_filter, ds.Not) else spark_filter
    # Spark's three-valued NOT drops rows whose inner filter is null: Iceberg's NOT of these
    # predicates does too. (NOT of <=> keeps nulls and NOT LIKE is not pushed.)
    if negate and isinstance(inner, (ds.EqualNullSafe, ds.StringStartsWith)):
        return None
    column = _column(inner, schema)
    if column is None:
        return None
    expr = _predicate(inner, column)
    if expr is None:
        return None
    if negate:
        expr = not_(expr)
    try:
        bind(schema, expr)
    except Exception:  # a value that does not convert to the column's type: leave it to Spark
        return None
    return expr


def _column(spark_filter: ds.Filter, schema: Schema) -> str | None:
    attribute = getattr(spark_filter, "attribute", None)
    if not attribute:
        return None
    name = ".".join(attribute)
    field = schema.find_field(name)
    if field is None or not isinstance(field.field_type, _PUSHABLE):
        return None
    if isinstance(spark_filter, ds.StringStartsWith) and not isinstance(field.field_type, it.StringType):
        return None
    return name


def _predicate(spark_filter: ds.Filter, column: str) -> Expression | None:
    if isinstance(spark_filter, ds.IsNull):
        return is_null(column)
    if isinstance(spark_filter, ds.IsNotNull):
        return not_null(column)
    value = getattr(spark_filter, "value", None)
    if isinstance(spark_filter, ds.EqualNullSafe):
        return is_null(column) if value is None else equal(column, _value(value))
    if isinstance(spark_filter, ds.In):
        values = list(value) if isinstance(value, (list, tuple)) else []
        if not values or any(v is None for v in values):
            return None  # x IN (.., NULL) is null, not false, for non-matching x
        return is_in(column, [_value(v) for v in values])
    if value is None:
        return None
    if isinstance(spark_filter, ds.StringStartsWith):
        return starts_with(column, value)
    builder = _COMPARISONS.get(type(spark_filter))
    return builder(column, _value(value)) if builder is not None else None


def _value(value: Any) -> Any:
    # Spark hands zoned timestamps as aware datetimes (any zone): Iceberg takes them as UTC.
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.UTC)
    return value
