"""Metadata tables from Spark: ``isp.read(spark, "db.t.files")`` and
``spark.read.format("icefloe").load("db.t.files")``.

An identifier whose last part is one of Java's metadata table names (``files``, ``entries``,
``partitions``, ... any case) names that metadata table of the table before it, unless a table
of that full name exists (as Java's catalogs resolve them). The rows are ``table.inspect``'s
(built on the driver from the decoded manifests; they are metadata, small next to the data),
with Java's Spark schema: the same names, types and nullability (a uuid as a string).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as st

from icefloe.catalog import Catalog
from icefloe.errors import NoSuchNamespaceError, NoSuchTableError
from icefloe.expressions import Expression
from icefloe.spark.types import to_spark_schema
from icefloe.table.inspect import METADATA_TABLES
from icefloe.table.table import Table

__all__ = [
    "metadata_table_arrow",
    "metadata_table_frame",
    "metadata_table_spark_schema",
    "split_metadata_table",
]


def split_metadata_table(identifier: str, catalog: Callable[[], Catalog]) -> tuple[str, str] | None:
    """(table identifier, metadata table name) when ``identifier`` names a metadata table."""
    head, _, last = identifier.rpartition(".")
    if not head or last.lower() not in METADATA_TABLES:
        return None
    found = catalog()
    try:
        if found.table_exists(identifier):
            return None
        if not found.table_exists(head):
            return None
    except (NoSuchTableError, NoSuchNamespaceError):
        return None
    return head, last.lower()


def metadata_table_spark_schema(table: Table, name: str) -> st.StructType:
    """Java's Spark schema of a metadata table."""
    return to_spark_schema(table.inspect.schema(name), with_ids=False)


def metadata_table_arrow(
    table: Table,
    name: str,
    *,
    snapshot_id: int | None = None,
    ref: str | None = None,
    filter: Expression | str | None = None,
    columns: Sequence[str] | None = None,
    case_sensitive: bool = True,
) -> pa.Table:
    """The rows as Spark takes them: uuid values as strings."""
    options: dict[str, Any] = {"filter": filter, "columns": columns, "case_sensitive": case_sensitive}
    if snapshot_id is not None or ref is not None:
        options.update(snapshot_id=snapshot_id, ref=ref)
    arrow = table.inspect.table(name, **options)
    return pa.Table.from_arrays(
        [_uuids_as_strings(c.combine_chunks()) for c in arrow.columns],
        names=arrow.column_names,
    )


def metadata_table_frame(
    spark: SparkSession,
    table: Table,
    name: str,
    *,
    snapshot_id: int | None = None,
    ref: str | None = None,
    filter: Expression | str | None = None,
    columns: Sequence[str] | None = None,
    case_sensitive: bool = True,
) -> DataFrame:
    """A DataFrame of a metadata table, with Java's Spark schema."""
    arrow = metadata_table_arrow(
        table,
        name,
        snapshot_id=snapshot_id,
        ref=ref,
        filter=filter,
        columns=columns,
        case_sensitive=case_sensitive,
    )
    schema = metadata_table_spark_schema(table, name)
    if columns:
        schema = _narrowed(schema, arrow.schema)
    return spark.createDataFrame(arrow, schema=schema)


def _narrowed(schema: st.StructType, arrow: pa.Schema) -> st.StructType:
    """The Spark schema restricted to the nested fields the Arrow schema kept."""
    fields = []
    for field in schema.fields:
        if field.name not in arrow.names:
            continue
        target = arrow.field(field.name).type
        data_type = field.dataType
        if isinstance(data_type, st.StructType) and pa.types.is_struct(target):
            data_type = _narrowed(data_type, pa.schema(list(target)))
        fields.append(st.StructField(field.name, data_type, field.nullable))
    return st.StructType(fields)


def _uuids_as_strings(array: pa.Array) -> pa.Array:
    """``array`` with every uuid (also nested in structs) as its canonical string."""
    type_ = array.type
    if isinstance(type_, pa.BaseExtensionType) and type_.extension_name == "arrow.uuid":
        values = array.storage.to_pylist()
        return pa.array([None if v is None else str(uuid.UUID(bytes=v)) for v in values], pa.string())
    if pa.types.is_struct(type_) and _has_uuid(type_):
        children = [_uuids_as_strings(array.field(i)) for i in range(type_.num_fields)]
        fields = [
            pa.field(type_.field(i).name, c.type, type_.field(i).nullable) for i, c in enumerate(children)
        ]
        return pa.StructArray.from_arrays(children, fields=fields, mask=array.is_null())
    return array


def _has_uuid(type_: pa.DataType) -> bool:
    if isinstance(type_, pa.BaseExtensionType):
        return bool(type_.extension_name == "arrow.uuid")
    if pa.types.is_struct(type_):
        return any(_has_uuid(type_.field(i).type) for i in range(type_.num_fields))
    return False
