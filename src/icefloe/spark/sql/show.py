"""SHOW NAMESPACES / TABLES / TBLPROPERTIES and DESCRIBE [EXTENDED], shaped as Spark's output."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from sqlglot import exp

from icefloe._util.redaction import redact
from icefloe.errors import ValidationError
from icefloe.spark.sql.parse import ShowStatement
from icefloe.spark.sql.resolve import Resolver, name_parts
from icefloe.spark.types import to_spark_type
from icefloe.spec import properties as props
from icefloe.spec.partitioning import PartitionField
from icefloe.spec.schema import Schema
from icefloe.spec.sorting import NullOrder, SortField
from icefloe.table.table import Table

__all__ = ["describable", "run_describe", "run_show", "spark_table_properties"]


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
    # Spark's ShowTablePropertiesExec: the table's properties without Spark's reserved ones
    # (provider, location, ...: DESCRIBE shows those).
    # Secrets (a table property named like a credential) are masked, as in every listing.
    properties = redact({k: v for k, v in spark_table_properties(table).items() if k not in _SPARK_RESERVED})
    key = tree.args.get("key")
    if key is not None:
        name = key.name
        value = properties.get(name, f"Table {table.name()} does not have property: {name}")
        return spark.createDataFrame([(name, value)], "key string, value string")
    return spark.createDataFrame(sorted(properties.items()), "key string, value string")


#: Spark's ``CatalogV2Util.TABLE_RESERVED_PROPERTIES``.
_SPARK_RESERVED = frozenset({"comment", "location", "owner", "provider", "external", "is_managed_location"})

#: Java's ``SparkTable`` shows these from the metadata, never from the table's properties.
_JAVA_RESERVED = frozenset(
    {
        "provider",
        "format",
        "current-snapshot-id",
        "location",
        "format-version",
        "sort-order",
        "identifier-fields",
    }
)


def spark_table_properties(table: Table) -> dict[str, str]:
    """The properties Java's ``SparkTable.properties()`` gives Spark: the file format, the
    current snapshot, the location, the format version, the sort order and identifier fields,
    then the table's own properties."""
    current = table.current_snapshot()
    own = table.properties()
    out = {
        "format": "iceberg/" + own.get(props.DEFAULT_FILE_FORMAT, props.DEFAULT_FILE_FORMAT_DEFAULT),
        "provider": "iceberg",
        "current-snapshot-id": str(current.snapshot_id) if current else "none",
        "location": str(table.location()),
        props.FORMAT_VERSION: str(table.metadata.format_version),
    }
    order = table.sort_order()
    if not order.is_unsorted:
        out["sort-order"] = ", ".join(_sort_term(f, table.schema()) for f in order.fields)
    identifiers = table.schema().identifier_field_names()
    if identifiers:
        out["identifier-fields"] = "[" + ",".join(identifiers) + "]"
    out.update({k: v for k, v in own.items() if k not in _JAVA_RESERVED})
    return out


def _sort_term(field: SortField, schema: Schema) -> str:
    """A sort field as Java's ``Spark3Util.describe(SortOrder)`` prints it."""
    column = str(schema.find_column_name(field.source_id))
    name = str(field.transform)
    if "[" in name:  # bucket[4] -> bucket(4, c); truncate[2] -> truncate(c, 2), as Java
        base, width = name.rstrip("]").split("[")
        term = f"bucket({width}, {column})" if base == "bucket" else f"truncate({column}, {width})"
    elif field.transform.is_identity:
        term = column
    else:
        term = f"{_PLURAL.get(name, name)}({column})"
    nulls = "NULLS FIRST" if field.null_order == NullOrder.NULLS_FIRST else "NULLS LAST"
    return f"{term} {str(field.direction).upper()} {nulls}"


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
                "[" + ",".join(f"{k}={v}" for k, v in sorted(redact(table.properties()).items())) + "]",
                "",
            ),
        ]
    return spark.createDataFrame(rows, "col_name string, data_type string, comment string")
