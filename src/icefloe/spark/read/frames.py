"""``icefloe.spark.read.frames``: plan on the driver with icefloe, read the bytes with Spark's Parquet.

The planned data files go to ``spark.read.parquet`` with a read schema whose struct fields carry
their Iceberg field ids, so Spark matches columns by id (renames, dropped and re-added names,
added columns all read right) and still prunes columns, pushes filters and skips row groups.
On top of the file rows, in Spark:

- per-file constants: identity-partition values and v3 initial defaults of columns a file
  lacks (told by its metrics), through the file's ``_metadata.file_path``;
- promoted columns (int -> long, float -> double, wider decimals): files are grouped by the
  type their footer stores and read as that type, then cast (Spark's vectorized reader cannot
  widen dictionary-encoded columns);
- the scan filter (Iceberg's NaN and null semantics);
- position deletes and deletion vectors as an anti-join on (file, ``_metadata.row_index``),
  equality deletes as an anti-join on the delete columns (see :mod:`icefloe.spark.read.deletes`).

Files the session's Hadoop cannot open (an object store without its connector) and encrypted
files (a key per file, which Spark's Parquet reader cannot take) are read by icefloe's reader in
the Spark tasks instead (:mod:`icefloe.spark.read.in_tasks`: deletes and the filter applied
there), and the scan filter is applied on top as here. Which reader reads is
``icefloe.spark.reader`` (:mod:`icefloe.spark.read.choice`).

Spark pushes filters into Parquet by column *name*. A name that once belonged to another
column (``a`` renamed to ``b``, then a new ``a`` added) would make Spark skip row groups using
the old column's statistics; such columns are read under a private name, which Spark cannot
push into any file, and renamed afterwards.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as st

from icefloe.catalog import load_catalog
from icefloe.errors import UnsupportedFeatureError
from icefloe.expressions import Expression, bind
from icefloe.expressions.model import AlwaysTrue, BoundReference
from icefloe.expressions.visitors import ExpressionVisitor, visit
from icefloe.io import FileIO
from icefloe.scan.tasks import FileScanTask
from icefloe.spark.paths import spark_input_path
from icefloe.spark.read import deletes as _deletes
from icefloe.spark.read.choice import FileReader, choose_reader
from icefloe.spark.read.filters import spark_literal, to_spark_filter
from icefloe.spark.read.in_tasks import read_in_tasks
from icefloe.spark.read.metadata_tables import metadata_table_frame, split_metadata_table
from icefloe.spark.read.name_mapped import read_by_names, split_by_ids
from icefloe.spark.session import configure_reads
from icefloe.spark.tables import resolve_table
from icefloe.spark.types import to_spark_schema, to_spark_type, uuid_string
from icefloe.spark.wap import wap_read_branch
from icefloe.spec import types as it
from icefloe.spec.schema import Schema, index_by_name, prune_columns
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.table import Table

__all__ = ["FILE_COLUMN", "POSITION_COLUMN", "configured_scan", "read", "read_tasks"]

#: Helper columns the reader adds (and drops): the file a row came from, as Spark reports it,
#: and the row's position in that file.
FILE_COLUMN = "_icefloe_file"
POSITION_COLUMN = "_icefloe_pos"
_PRIVATE_PREFIX = "_icefloe_f"
_EPOCH_DATE = dt.date(1970, 1, 1)


def read(
    spark: SparkSession,
    table: Table | str,
    filter: Expression | str | None = None,
    columns: Sequence[str] | None = None,
    snapshot_id: int | None = None,
    ref: str | None = None,
    as_of: int | dt.datetime | None = None,
    from_snapshot_id: int | None = None,
    to_snapshot_id: int | None = None,
    *,
    case_sensitive: bool = True,
) -> DataFrame:
    """A Spark DataFrame of a table's rows.

    A :class:`Table` is read as the metadata it holds: the table as it was when it was loaded
    or last refreshed, plus its own commits. Commits by others (another process, job or
    ``Table`` object) appear after ``table.refresh()``, as in Java. An identifier string is
    loaded from the catalog at this call, so it reads the latest commit.

    Args:
        spark: the session.
        table: a :class:`Table`, or an identifier resolved through ``icefloe.load_catalog()``;
            ``"db.t.files"`` (any of Java's metadata table names after the table's) reads that
            metadata table of ``db.t`` (``filter``, ``columns`` and time travel apply to it).
        filter: rows to keep (an expression or SQL string); it also prunes files and row groups.
        columns: the columns to return (default: all), in the table's column order.
        snapshot_id, ref, as_of: time travel: a snapshot id, a branch or tag, or the snapshot
            that was current at a time: epoch milliseconds or a ``datetime``, where a naive
            datetime (no ``tzinfo``) is taken as UTC, not local time. At most one.
        from_snapshot_id, to_snapshot_id: an incremental read: the rows appended after
            ``from_snapshot_id`` (exclusive) up to ``to_snapshot_id`` (default: current).
        case_sensitive: how column names in ``filter`` and ``columns`` are matched.

    Without time travel, a table with ``write.wap.enabled=true`` is read at the branch
    ``spark.wap.branch`` names, once it exists (write-audit-publish, see ``spark/wap.py``).
    """
    split = split_metadata_table(table, load_catalog) if isinstance(table, str) else None
    if split is not None:  # "db.t.files": a metadata table
        base = resolve_table(split[0])
        if as_of is not None:
            snapshot_id = base.new_scan().as_of_time(as_of).snapshot().snapshot_id  # type: ignore[union-attr]
        return metadata_table_frame(
            spark,
            base,
            split[1],
            snapshot_id=snapshot_id,
            ref=ref,
            filter=filter,
            columns=columns,
            case_sensitive=case_sensitive,
        )
    resolved = resolve_table(table)
    scan = configured_scan(
        spark,
        resolved,
        snapshot_id=snapshot_id,
        ref=ref,
        as_of=as_of,
        from_snapshot_id=from_snapshot_id,
        to_snapshot_id=to_snapshot_id,
    )
    scan = scan.case_sensitive(case_sensitive)
    if filter is not None:
        scan = scan.filter(filter)
    if columns is not None:
        scan = scan.select(*columns)
    table_schema = scan.table_schema()
    bound = bind(table_schema, scan.row_filter, case_sensitive=case_sensitive)
    return read_tasks(
        spark,
        resolved.metadata,
        resolved.io(),
        scan.plan_files(),
        table_schema=table_schema,
        projection=scan.schema(),
        row_filter=bound,
    )


def configured_scan(
    spark: SparkSession,
    resolved: Table,
    *,
    snapshot_id: int | None = None,
    ref: str | None = None,
    as_of: int | dt.datetime | None = None,
    from_snapshot_id: int | None = None,
    to_snapshot_id: int | None = None,
) -> Any:
    """The scan :func:`read` plans for these time-travel arguments (its ``table_schema()`` is
    the schema the read's columns and filter are by)."""
    incremental = from_snapshot_id is not None or to_snapshot_id is not None
    if incremental and (snapshot_id is not None or ref is not None or as_of is not None):
        raise UnsupportedFeatureError(
            "an incremental read (from_snapshot_id / to_snapshot_id) cannot also time travel "
            "(snapshot_id / ref / as_of)"
        )
    scan: Any
    if incremental:
        scan = resolved.new_incremental_append_scan()
        if from_snapshot_id is not None:
            scan = scan.from_snapshot_exclusive(from_snapshot_id)
        if to_snapshot_id is not None:
            scan = scan.to_snapshot(to_snapshot_id)
    else:
        scan = resolved.new_scan()
        if snapshot_id is None and ref is None and as_of is None:
            ref = wap_read_branch(spark, resolved)  # write-audit-publish: the WAP branch
        if snapshot_id is not None:
            scan = scan.use_snapshot(snapshot_id)
        if ref is not None:
            scan = scan.use_ref(ref)
        if as_of is not None:
            scan = scan.as_of_time(as_of)
    return scan


def read_tasks(
    spark: SparkSession,
    metadata: TableMetadata,
    io: FileIO,
    tasks: Sequence[FileScanTask],
    *,
    table_schema: Schema,
    projection: Schema,
    row_filter: Expression | None = None,
    keep_file_columns: bool = False,
) -> DataFrame:
    """A DataFrame of the rows of planned tasks (whole files), deletes and filter applied.

    Args:
        metadata, io: the table's.
        tasks: whole-file tasks, as ``plan_files()`` returns them.
        table_schema: the schema the filter is bound to (the scan's).
        projection: the columns to return.
        row_filter: a filter bound to ``table_schema`` (None: all rows).
        keep_file_columns: also return :data:`FILE_COLUMN` and :data:`POSITION_COLUMN` (for
            row-level changes, which need to know where each row lives).
    """
    configure_reads(spark)
    row_filter = row_filter if row_filter is not None else AlwaysTrue()
    equality_ids = _deletes.equality_field_ids(tasks)
    needed = set(projection.id_to_name()) | _referenced_ids(row_filter) | equality_ids
    read_schema = prune_columns(table_schema, needed)
    names = _SparkNames(read_schema, metadata)
    output = to_spark_schema(projection)
    if not tasks:
        empty = spark.createDataFrame([], output)
        if keep_file_columns:
            empty = empty.withColumn(FILE_COLUMN, F.lit(None).cast("string"))
            empty = empty.withColumn(POSITION_COLUMN, F.lit(None).cast("long"))
        return empty

    reader = choose_reader(spark, metadata, tasks, read_schema)
    if reader.kind == "icefloe":
        # icefloe reads the files in the executors, deletes and filter included.
        frame = read_in_tasks(
            spark,
            io,
            metadata,
            tasks,
            read_schema,
            names.rename,
            row_filter=row_filter,
            reported=reader.reported_path,
            file_column=FILE_COLUMN if keep_file_columns else None,
            position_column=POSITION_COLUMN if keep_file_columns else None,
        )
        frame = _present(frame, read_schema, names, [])
        if not isinstance(row_filter, AlwaysTrue):
            frame = frame.filter(to_spark_filter(row_filter, names.column))
    else:
        frame = _read_with_spark(
            spark, io, metadata, tasks, read_schema, names, row_filter, keep_file_columns, reader
        )
    selected = [names.column_for_field(f).alias(f.name) for f in projection.fields]
    if keep_file_columns:
        selected += [F.col(FILE_COLUMN), F.col(POSITION_COLUMN)]
    return frame.select(*selected)


def _read_with_spark(
    spark: SparkSession,
    io: FileIO,
    metadata: TableMetadata,
    tasks: Sequence[FileScanTask],
    read_schema: Schema,
    names: _SparkNames,
    row_filter: Expression,
    keep_file_columns: bool,
    reader: FileReader,
) -> DataFrame:
    """The rows of plaintext files through Spark's Parquet reader, constants, filter and
    deletes applied in Spark."""
    constants = _constants(read_schema, tasks, metadata, reader)
    # Spark reads the file and row-index columns only when something joins on them.
    locate = keep_file_columns or bool(constants) or any(t.deletes for t in tasks)
    frame = _read_files(
        spark, io, [t.file.file_path for t in tasks], read_schema, names, metadata, reader, locate=locate
    )
    frame = _present(frame, read_schema, names, constants)
    if not isinstance(row_filter, AlwaysTrue):
        frame = frame.filter(to_spark_filter(row_filter, names.column))
    return _deletes.apply(spark, frame, tasks, io, metadata, read_schema, names.column_by_id, reader.schemes)


# ---------------------------------------------------------------------------------------------
# Column names


class _SparkNames:
    """The Spark name of each top-level column of the read schema: its own, or a private one
    when another column ever had that name (see the module docstring)."""

    def __init__(self, read_schema: Schema, metadata: TableMetadata):
        self.schema = read_schema
        ids_by_name: dict[str, set[int]] = {}
        for schema in metadata.schemas:
            for name, field_id in index_by_name(schema).items():
                ids_by_name.setdefault(name.lower(), set()).add(field_id)
        self.names: dict[int, str] = {}
        for field in read_schema.fields:
            reused = any(
                len(ids_by_name.get(name.lower(), ())) > 1
                for name in [field.name, *(f"{field.name}.{n}" for n in _inner_names(field))]
            )
            self.names[field.field_id] = f"{_PRIVATE_PREFIX}{field.field_id}" if reused else field.name

    def rename(self, field: it.NestedField) -> str:
        return self.names[field.field_id]

    def column_for_field(self, field: it.NestedField) -> Column:
        return F.col(f"`{self.names[field.field_id]}`")

    def column(self, ref: BoundReference) -> Column:
        """The Spark column of a reference bound to the read schema (or a schema with the same
        ids)."""
        return self.column_by_id(ref.field_id)

    def column_by_id(self, field_id: int) -> Column:
        """The Spark column of a field of the read schema: the top-level column, then struct
        fields by name."""
        if self.schema.find_field(field_id) is None:
            raise UnsupportedFeatureError(f"column id {field_id} is not in the read schema")
        chain = _field_chain(self.schema, field_id)
        column = F.col(f"`{self.names[chain[0].field_id]}`")
        for inner in chain[1:]:
            column = column.getField(inner.name)
        return column


def _inner_names(field: it.NestedField) -> list[str]:
    if not isinstance(field.field_type, it.NestedType):
        return []
    return list(index_by_name(it.StructType(it.NestedField(0, "x", field.field_type))).keys())


def _field_chain(schema: Schema, field_id: int) -> list[it.NestedField]:
    """The fields from the top-level column down to ``field_id`` (structs only)."""
    chain = [schema.field(field_id)]
    parent = schema.parent_id(field_id)
    while parent is not None:
        parent_field = schema.field(parent)
        if not isinstance(parent_field.field_type, it.StructType):
            raise UnsupportedFeatureError(
                f"column '{schema.find_column_name(field_id)}' is inside a list or map; "
                "filters and delete keys can only reach struct fields"
            )
        chain.insert(0, parent_field)
        parent = schema.parent_id(parent)
    return chain


class _References(ExpressionVisitor[set[int]]):
    def always_true(self) -> set[int]:
        return set()

    def always_false(self) -> set[int]:
        return set()

    def not_(self, child: set[int]) -> set[int]:
        return child

    def and_(self, left: set[int], right: set[int]) -> set[int]:
        return left | right

    def or_(self, left: set[int], right: set[int]) -> set[int]:
        return left | right

    def bound_predicate(self, predicate: Any) -> set[int]:
        return {predicate.term.field_id}


def _referenced_ids(expr: Expression) -> set[int]:
    return visit(expr, _References())


# ---------------------------------------------------------------------------------------------
# Reading files


def _promoted_ids(read_schema: Schema, metadata: TableMetadata) -> dict[int, it.PrimitiveType]:
    """Top-level primitive columns whose type some older schema stored differently."""
    promoted: dict[int, it.PrimitiveType] = {}
    for field in read_schema.fields:
        if not isinstance(field.field_type, it.PrimitiveType):
            continue
        for schema in metadata.schemas:
            old = schema.find_field(field.field_id)
            if old is not None and old.field_type != field.field_type:
                promoted[field.field_id] = field.field_type
    return promoted


def _stored_type(arrow_type: pa.DataType) -> it.PrimitiveType | None:
    if pa.types.is_int32(arrow_type):
        return it.IntegerType()
    if pa.types.is_float32(arrow_type):
        return it.FloatType()
    if pa.types.is_decimal(arrow_type):
        return it.DecimalType(arrow_type.precision, arrow_type.scale)
    return None


def _file_types(io: FileIO, paths: Sequence[str], ids: Iterable[int]) -> list[tuple[Any, ...]]:
    """Per file, the stored type of each promoted column (None: stored as the current type,
    or absent)."""
    wanted = list(ids)

    def footer(path: str) -> tuple[Any, ...]:
        with io.new_input(path).open() as stream:
            schema = pq.read_schema(stream)
        by_id: dict[int, pa.DataType] = {}
        for arrow_field in schema:
            raw = (arrow_field.metadata or {}).get(b"PARQUET:field_id")
            if raw is not None:
                by_id[int(raw)] = arrow_field.type
        return tuple(_stored_type(by_id[i]) if i in by_id else None for i in wanted)

    with ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(footer, paths))


def _read_files(
    spark: SparkSession,
    io: FileIO,
    paths: Sequence[str],
    read_schema: Schema,
    names: _SparkNames,
    metadata: TableMetadata,
    reader: FileReader,
    *,
    locate: bool,
) -> DataFrame:
    """One DataFrame over the files, columns named by ``names``; with ``locate``, also each
    row's file and position."""
    locate_columns = (
        [F.col("_metadata.file_path").alias(FILE_COLUMN), F.col("_metadata.row_index").alias(POSITION_COLUMN)]
        if locate
        else []
    )
    paths, without_ids = split_by_ids(io, metadata, paths)
    frames = [
        read_by_names(spark, group, mapped, read_schema, names.rename, locate_columns, reader)
        for mapped, group in without_ids.items()
    ]
    promoted = _promoted_ids(read_schema, metadata)
    groups: dict[tuple[Any, ...], list[str]] = {}
    if promoted:
        for path, stored in zip(paths, _file_types(io, paths, promoted), strict=True):
            groups.setdefault(stored, []).append(path)
    elif paths:
        groups[()] = list(paths)
    for stored, group in groups.items():
        narrowed = dict(zip(promoted, stored, strict=True)) if promoted else {}
        schema = to_spark_schema(read_schema, for_read=True, rename=names.rename)
        if any(t is not None for t in narrowed.values()):
            schema = st.StructType(
                [_with_type(f, narrowed.get(int(f.metadata["parquet.field.id"]))) for f in schema.fields]
            )
        frame = (
            spark.read.schema(schema)
            .options(**reader.parquet_options)
            # Explicit files: no partition discovery from ``name=value`` directories.
            .option("recursiveFileLookup", "true")
            .parquet(*[spark_input_path(p, reader.schemes) for p in group])
        )
        columns = [
            F.col(f"`{f.name}`")
            .cast(
                to_spark_type(
                    read_schema.field(int(f.metadata["parquet.field.id"])).field_type, for_read=True
                )
            )
            .alias(f.name)
            if narrowed.get(int(f.metadata["parquet.field.id"])) is not None
            else F.col(f"`{f.name}`")
            for f in schema.fields
        ]
        frames.append(frame.select(*columns, *locate_columns))
    result = frames[0]
    for other in frames[1:]:
        result = result.unionByName(other)
    return result


def _with_type(field: st.StructField, stored: it.PrimitiveType | None) -> st.StructField:
    if stored is None:
        return field
    return st.StructField(field.name, to_spark_type(stored), field.nullable, field.metadata)


# ---------------------------------------------------------------------------------------------
# Presenting columns: per-file constants, uuids


@dataclass(frozen=True, slots=True)
class _Constant:
    field: it.NestedField
    by_file: dict[str, Any]  # reported path -> value (icefloe representation)


def _has(file: Any, field_id: int) -> bool:
    """Whether a data file's metrics show it has column ``field_id``."""
    return any(
        metric and field_id in metric
        for metric in (file.value_counts, file.column_sizes, file.null_value_counts)
    )


def _lacks(file: Any, field_id: int) -> bool:
    """Whether a data file's metrics show it has no column ``field_id`` (unknown: False)."""
    for metric in (file.value_counts, file.column_sizes, file.null_value_counts):
        if metric and field_id in metric:
            return False
    return bool(file.value_counts or file.column_sizes) and file.record_count > 0


def _constants(
    read_schema: Schema, tasks: Sequence[FileScanTask], metadata: TableMetadata, reader: FileReader
) -> list[_Constant]:
    """Identity-partition values and initial defaults to fill into files that lack a column.

    Identity-partition values are filled for every file whose metrics do not show the column
    (filling a file that has it changes nothing: its values are the partition's); initial
    defaults only for files whose metrics show the column missing.
    """
    found: dict[int, dict[str, Any]] = {}
    top_level = {f.field_id: f for f in read_schema.fields if isinstance(f.field_type, it.PrimitiveType)}
    for task in tasks:
        file = task.file
        for position, partition_field in enumerate(task.spec.fields):
            field_id = partition_field.source_id
            if field_id in top_level and partition_field.transform.is_identity and not _has(file, field_id):
                found.setdefault(field_id, {})[reader.reported_path(file.file_path)] = file.partition[
                    position
                ]
        for field_id, field in top_level.items():
            if field.initial_default is not None and field_id not in found and _lacks(file, field_id):
                found.setdefault(field_id, {})[reader.reported_path(file.file_path)] = field.initial_default
    return [_Constant(top_level[i], values) for i, values in found.items()]


def _present(
    frame: DataFrame, read_schema: Schema, names: _SparkNames, constants: list[_Constant]
) -> DataFrame:
    """Fill per-file constants and turn uuids into strings, keeping column names."""
    replacements: dict[str, Column] = {}
    for constant in constants:
        name = names.rename(constant.field)
        pairs: list[Column] = []
        for path, value in constant.by_file.items():
            if value is not None:
                pairs += [F.lit(path), spark_literal(constant.field.field_type, value)]
        if pairs:
            lookup = F.element_at(F.create_map(*pairs), F.col(FILE_COLUMN))
            replacements[name] = F.coalesce(F.col(f"`{name}`"), lookup)
    for field in read_schema.fields:
        name = names.rename(field)
        if isinstance(field.field_type, it.UUIDType):
            replacements[name] = uuid_string(replacements.get(name, F.col(f"`{name}`")))
        elif _has_nested_uuid(field.field_type):
            raise UnsupportedFeatureError(
                f"column '{field.name}': uuid values inside nested types are not read by Spark"
            )
    if not replacements:
        return frame
    return frame.withColumns(replacements)


def _has_nested_uuid(field_type: it.IcebergType) -> bool:
    if isinstance(field_type, it.StructType):
        return any(
            isinstance(f.field_type, it.UUIDType) or _has_nested_uuid(f.field_type) for f in field_type.fields
        )
    if isinstance(field_type, it.ListType):
        return isinstance(field_type.element_type, it.UUIDType) or _has_nested_uuid(field_type.element_type)
    if isinstance(field_type, it.MapType):
        return any(
            isinstance(t, it.UUIDType) or _has_nested_uuid(t)
            for t in (field_type.key_type, field_type.value_type)
        )
    return False
