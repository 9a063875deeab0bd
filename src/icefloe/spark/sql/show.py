"""SHOW NAMESPACES / TABLES / TBLPROPERTIES and DESCRIBE [EXTENDED], shaped as Spark's output."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from sqlglot import exp

from icefloe.errors import ValidationError
from icefloe.spark.sql.parse import ShowStatement
from icefloe.spark.sql.resolve import Resolver, name_parts
from icefloe.spark.types import to_spark_type
from icefloe.spec.partitioning import PartitionField
from icefloe.spec.schema import Schema
from icefloe.table.table import Table

__all__ = ["describable", "run_describe", "run_show"]


def run_show(spark: SparkSession, tree: ShowStatement, resolver: Resolver) -> DataFrame:
    kind = tree.args["kind"]
    target = tree.this
    catalog = resolver.catalog
    if kind == "namespaces":
        parent = resolver.strip_catalog(name_parts(target)) if target is not None else []
        names = [(".".join(ns),) for ns in catalog.list_namespaces(tuple(parent))]
        return spark.createDataFrame(names, "namespace string")
    if kind == "tables":
        if target is None:
            raise ValidationError("SHOW TABLES needs IN <namespace> for an icefloe catalog")
        namespace = ".".join(resolver.strip_catalog(name_parts(target)))
        rows = [(namespace, ident[-1], False) for ident in catalog.list_tables(namespace)]
        return spark.createDataFrame(rows, "namespace string, tableName string, isTemporary boolean")
    table = _table(resolver, target)
    properties = sorted(table.properties().items())
    return spark.createDataFrame(properties, "key string, value string")


def _table(resolver: Resolver, node: exp.Expression) -> Table:
    if not isinstance(node, exp.Table):
        raise ValidationError(f"'{node}' is not a table name")
    parts = name_parts(node)
    ref = resolver.resolve(parts)
    if ref is None or ref.metadata_table or ref.ref or ref.snapshot_id:
        raise ValidationError(f"'{'.'.join(parts)}' is not an icefloe table")
    return resolver.load(ref.identifier)


def spark_term(part: PartitionField, schema: Schema) -> str:
    """A partition field as Spark prints it: ``region``, ``bucket(4, id)``, ``days(ts)``."""
    column = schema.find_column_name(part.source_id)
    transform = part.transform
    if transform.is_identity:
        return str(column)
    name = str(transform)
    if "[" in name:  # bucket[4] / truncate[2]
        base, width = name.rstrip("]").split("[")
        return f"{base}({width}, {column})"
    return f"{_PLURAL.get(name, name)}({column})"


_PLURAL = {"year": "years", "month": "months", "day": "days", "hour": "hours"}


def describable(resolver: Resolver, tree: exp.Describe) -> bool:
    return isinstance(tree.this, exp.Table) and resolver.resolve(name_parts(tree.this)) is not None


def run_describe(spark: SparkSession, tree: exp.Describe, resolver: Resolver) -> DataFrame:
    """Spark's DESCRIBE rows: each column, then Java's ``# Partitioning`` section; EXTENDED adds
    ``# Metadata Columns``-free table information (name, location, provider, properties)."""
    table = _table(resolver, tree.this)
    rows: list[tuple[str, str, str | None]] = []
    for field in table.schema().fields:
        rows.append((field.name, to_spark_type(field.field_type).simpleString(), field.doc))
    # Spark 3.5's DescribeTableExec: identity-only partitioning lists the partition columns,
    # any other transform lists the terms.
    schema = table.schema()
    parts = [f for f in table.spec().fields if not f.transform.is_void]
    if parts and all(f.transform.is_identity for f in parts):
        rows += [("# Partition Information", "", ""), ("# col_name", "data_type", "comment")]
        for part in parts:
            source = schema.find_field(part.source_id)
            assert source is not None
            rows.append(
                (
                    str(schema.find_column_name(part.source_id)),
                    to_spark_type(source.field_type).simpleString(),
                    source.doc,
                )
            )
    elif parts:
        rows += [("", "", ""), ("# Partitioning", "", "")]
        rows += [(f"Part {i}", spark_term(part, schema), "") for i, part in enumerate(parts)]
    if str(tree.args.get("style", "")).upper() in ("EXTENDED", "FORMATTED"):
        current = table.current_snapshot()
        rows += [
            ("", "", ""),
            ("# Metadata Columns", "", ""),
            ("", "", ""),
            ("# Detailed Table Information", "", ""),
            ("Name", str(table.name()), ""),
            ("Type", "MANAGED", ""),
            ("Location", str(table.location()), ""),
            ("Provider", "iceberg", ""),
            ("Current Snapshot", str(current.snapshot_id) if current else "", ""),
            (
                "Table Properties",
                "[" + ",".join(f"{k}={v}" for k, v in sorted(table.properties().items())) + "]",
                "",
            ),
        ]
    return spark.createDataFrame(rows, "col_name string, data_type string, comment string")
