"""Data files without field ids, read through the table's name mapping (private).

Files registered with ``add_files`` (or written before a table was migrated to Iceberg) carry
no Parquet field ids. Spark's id matching cannot read them: with ids requested and none in
the file it fails. The table's ``schema.name-mapping.default`` says which names each field id
had; such files are read by name (Spark infers the file's own schema) and each column is
rebuilt into the read schema's shape and types here, nested structs, lists and maps included,
with fields the file lacks as nulls. Only tables that have a name mapping pay for the footer
reads that tell the two kinds of files apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from icefloe.arrow.schema import apply_name_mapping, field_id_of
from icefloe.io import FileIO
from icefloe.serde.name_mapping_json import loads_name_mapping
from icefloe.spark.paths import spark_input_path
from icefloe.spark.read.choice import FileReader
from icefloe.spark.types import to_spark_type
from icefloe.spec import types as it
from icefloe.spec.properties import DEFAULT_NAME_MAPPING
from icefloe.spec.schema import Schema
from icefloe.spec.table_metadata import TableMetadata

__all__ = ["read_by_names", "split_by_ids"]


def split_by_ids(
    io: FileIO, metadata: TableMetadata, paths: Sequence[str]
) -> tuple[list[str], dict[pa.Schema, list[str]]]:
    """The files with field ids, and the files without, grouped by their schema with the
    mapping's ids applied. Without a name mapping every file counts as having ids."""
    text = metadata.properties.get(DEFAULT_NAME_MAPPING)
    if not text or not paths:
        return list(paths), {}
    mapping = loads_name_mapping(text)

    def footer(path: str) -> pa.Schema:
        with io.new_input(path).open() as stream:
            return pq.read_schema(stream)

    with ThreadPoolExecutor(max_workers=8) as pool:
        schemas = list(pool.map(footer, paths))
    with_ids: list[str] = []
    without: dict[pa.Schema, list[str]] = {}
    for path, schema in zip(paths, schemas, strict=True):
        if any(field_id_of(f) is not None for f in schema):
            with_ids.append(path)
        else:
            without.setdefault(apply_name_mapping(schema, mapping), []).append(path)
    return with_ids, without


def read_by_names(
    spark: SparkSession,
    paths: Sequence[str],
    mapped: pa.Schema,
    read_schema: Schema,
    rename: Any,
    locate_columns: list[Column],
    reader: FileReader,
) -> DataFrame:
    """The rows of files without ids that share the schema ``mapped`` (their Arrow schema with
    the mapping's ids), as columns of ``read_schema`` named by ``rename(field)``."""
    frame = (
        spark.read.options(**reader.parquet_options)
        .option("recursiveFileLookup", "true")
        .option("mergeSchema", "false")
        .parquet(*[spark_input_path(p, reader.schemes) for p in paths])
    )
    by_id = {field_id_of(f): f for f in mapped}
    columns = []
    for field in read_schema.fields:
        source = by_id.get(field.field_id)
        if source is None:
            column = F.lit(None).cast(to_spark_type(field.field_type, for_read=True))
        else:
            column = _convert(F.col(f"`{source.name}`"), source.type, field.field_type)
        columns.append(column.alias(rename(field)))
    return frame.select(*columns, *locate_columns)


def _convert(expr: Column, arrow_type: pa.DataType, target: it.IcebergType) -> Column:
    """``expr`` (a file column of ``arrow_type``, ids from the mapping) as ``target``."""
    if isinstance(target, it.StructType) and pa.types.is_struct(arrow_type):
        children = {field_id_of(f): f for f in arrow_type}
        fields = []
        for child in target.fields:
            source = children.get(child.field_id)
            value = (
                F.lit(None).cast(to_spark_type(child.field_type, for_read=True))
                if source is None
                else _convert(expr.getField(source.name), source.type, child.field_type)
            )
            fields.append(value.alias(child.name))
        return F.when(expr.isNull(), F.lit(None)).otherwise(F.struct(*fields))
    if isinstance(target, it.ListType) and (
        pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type)
    ):
        element = arrow_type.value_type
        return F.transform(expr, lambda e: _convert(e, element, target.element_type))
    if isinstance(target, it.MapType) and pa.types.is_map(arrow_type):
        key_type, item_type = arrow_type.key_type, arrow_type.item_type
        keys = F.transform(F.map_keys(expr), lambda k: _convert(k, key_type, target.key_type))
        values = F.transform(F.map_values(expr), lambda v: _convert(v, item_type, target.value_type))
        return F.map_from_arrays(keys, values)
    return expr.cast(to_spark_type(target, for_read=True))
