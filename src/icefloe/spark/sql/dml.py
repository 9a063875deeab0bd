"""Writes: INSERT INTO / OVERWRITE, DELETE FROM, UPDATE and MERGE INTO on icefloe tables.

Each maps onto the DataFrame API (``isp.write``, ``isp.delete``, ``isp.update``,
``isp.merge_into``), which decide copy-on-write or merge-on-read from ``write.*.mode`` and
check conflicts per the isolation level. The statement's expressions stay Spark SQL: their
target alias is rewritten to what the API expects (no alias for DELETE / UPDATE, ``t`` and
``s`` for MERGE) and icefloe tables in subqueries become views (:mod:`.queries`).
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as st
from sqlglot import exp

from icefloe.errors import UnsupportedFeatureError, ValidationError
from icefloe.spark.rows.changes import delete, update
from icefloe.spark.rows.merge import MergeBuilder, merge_into
from icefloe.spark.sql.queries import empty_result, replace_tables, to_sql
from icefloe.spark.sql.resolve import Resolver, TableRef, name_parts
from icefloe.spark.types import to_spark_type
from icefloe.spark.write.frames import write
from icefloe.spec.schema import Schema
from icefloe.table.table import Table

__all__ = ["run_delete", "run_insert", "run_merge", "run_update", "target"]

_OVERWRITE_MODE = "spark.sql.sources.partitionOverwriteMode"


def target(resolver: Resolver, node: exp.Expression, statement: str) -> tuple[Table, TableRef, str]:
    """The icefloe table a write names, its resolution and the alias its columns may carry."""
    table = node.this if isinstance(node, exp.Schema) else node
    if not isinstance(table, exp.Table):
        raise UnsupportedFeatureError(f"{statement} into '{to_sql(table)}' is not supported")
    parts = name_parts(table)
    ref = resolver.resolve(parts)
    if ref is None:
        raise ValidationError(f"{statement}: '{'.'.join(parts)}' is not an icefloe table")
    if ref.metadata_table is not None or ref.snapshot_id is not None:
        raise UnsupportedFeatureError(f"{statement} cannot write to '{'.'.join(parts)}' (read-only)")
    alias = table.alias or parts[-1]
    return resolver.load(ref.identifier), ref, alias


def _requalify(tree: exp.Expression, names: dict[str, str | None]) -> exp.Expression:
    """Column qualifiers renamed (``names[old] = new``) or dropped (``None``)."""

    def swap(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column) and node.table and node.table.lower() in names:
            new = names[node.table.lower()]
            column = exp.column(node.this.copy())
            return exp.column(node.this.copy(), table=new) if new else column
        return node

    return tree.copy().transform(swap)


def _expression(
    spark: SparkSession, tree: exp.Expression | None, resolver: Resolver, names: dict[str, str | None]
) -> str | None:
    if tree is None:
        return None
    return to_sql(replace_tables(spark, _requalify(tree, names), resolver))


def run_insert(spark: SparkSession, tree: exp.Insert, resolver: Resolver) -> DataFrame:
    """INSERT INTO / INSERT OVERWRITE [PARTITION (...)] [(columns)] query-or-VALUES."""
    node = tree.this
    table, ref, _ = target(resolver, node, "INSERT")
    schema = table.metadata.schema()
    names = [f.name for f in schema.fields]
    source = tree.expression
    if isinstance(source, exp.Values):
        query = f"SELECT * FROM {to_sql(source)}"
    else:
        query = to_sql(replace_tables(spark, source, resolver))
    df = spark.sql(query)
    table_node = node.this if isinstance(node, exp.Schema) else node
    partition = table_node.args.get("partition")
    static: dict[str, str] = {}
    dynamic_columns: list[str] = []
    for item in partition.expressions if partition is not None else []:
        if isinstance(item, exp.EQ):
            static[item.this.name] = to_sql(item.expression)
        else:
            dynamic_columns.append(item.name)
    lowered = {s.lower() for s in static}
    if isinstance(node, exp.Schema):  # INSERT INTO t (a, b): by the listed names
        columns = [c.name for c in node.expressions]
    elif tree.args.get("by_name"):
        columns = list(df.columns)
    else:  # by position, static partition columns left out
        columns = [n for n in names if n.lower() not in lowered][: len(df.columns)]
    if len(columns) != len(df.columns):
        raise ValidationError(
            f"INSERT into '{ref.identifier}': {len(df.columns)} values for {len(columns)} columns {columns}"
        )
    df = _typed_nulls(df.toDF(*columns), schema)
    for column, value in static.items():
        df = df.selectExpr("*", f"{value} AS `{column}`")
    branch = ref.ref
    if not tree.args.get("overwrite"):
        write(df, table, "append", branch=branch)
        return empty_result(spark)
    mode = str(spark.conf.get(_OVERWRITE_MODE, "static") or "static").lower()
    if mode == "dynamic" and (dynamic_columns or not static) and table.spec().fields:
        write(df, table, "overwrite-partitions", branch=branch)
    elif static:
        where = " AND ".join(f"`{c}` = {v}" for c, v in static.items())
        write(df, table, "overwrite", where=where, branch=branch)
    else:
        write(df, table, "overwrite", branch=branch)
    return empty_result(spark)


def _typed_nulls(df: DataFrame, schema: Schema) -> DataFrame:
    """Untyped NULL columns (``VALUES (NULL, ...)``) cast to the table column's type, as
    Spark's store assignment does."""
    by_name = {f.name.lower(): f for f in schema.fields}
    for field in df.schema.fields:
        target = by_name.get(field.name.lower())
        if isinstance(field.dataType, st.NullType) and target is not None:
            df = df.withColumn(field.name, F.lit(None).cast(to_spark_type(target.field_type)))
    return df


def run_delete(spark: SparkSession, tree: exp.Delete, resolver: Resolver) -> DataFrame:
    table, ref, alias = target(resolver, tree.this, "DELETE FROM")
    where = tree.args.get("where")
    condition = _expression(spark, where.this if where else None, resolver, {alias.lower(): None})
    delete(spark, table, where=condition, branch=ref.ref)
    return empty_result(spark)


def run_update(spark: SparkSession, tree: exp.Update, resolver: Resolver) -> DataFrame:
    table, ref, alias = target(resolver, tree.this, "UPDATE")
    names: dict[str, str | None] = {alias.lower(): None}
    assignments: dict[str, Any] = {}
    for eq in tree.expressions:
        assignments[eq.this.name] = _expression(spark, eq.expression, resolver, names)
    where = tree.args.get("where")
    update(
        spark,
        table,
        set=assignments,
        where=_expression(spark, where.this if where else None, resolver, names),
        branch=ref.ref,
    )
    return empty_result(spark)


def _merge_source(spark: SparkSession, using: exp.Expression, resolver: Resolver) -> tuple[DataFrame, str]:
    if isinstance(using, exp.Table):
        alias = using.alias or name_parts(using)[-1]
        bare = using.copy()
        bare.set("alias", None)
        query = exp.select("*").from_(bare)
    elif isinstance(using, exp.Subquery):
        alias = using.alias
        query = using.this
    else:
        raise UnsupportedFeatureError(f"MERGE INTO ... USING {to_sql(using)} is not supported")
    return spark.sql(to_sql(replace_tables(spark, query, resolver))), alias


def run_merge(spark: SparkSession, tree: exp.Merge, resolver: Resolver) -> DataFrame:
    """MERGE INTO t USING source ON ... WHEN [NOT] MATCHED [BY SOURCE|TARGET] [AND ...] THEN ..."""
    table, ref, alias = target(resolver, tree.this, "MERGE INTO")
    source, source_alias = _merge_source(spark, tree.args["using"], resolver)
    names: dict[str, str | None] = {alias.lower(): "t", source_alias.lower(): "s"}
    on = _expression(spark, tree.args["on"], resolver, names)
    builder: MergeBuilder = merge_into(source, table, on or "true", branch=ref.ref)
    whens = tree.args.get("whens")
    for when in whens.expressions if whens is not None else []:
        condition = _expression(spark, when.args.get("condition"), resolver, names)
        then = when.args["then"]
        if when.args.get("matched"):
            clause = builder.when_matched(condition)
        elif when.args.get("source"):
            clause = builder.when_not_matched_by_source(condition)
        else:
            clause = builder.when_not_matched(condition)
        if isinstance(then, exp.Var) and then.name.upper() == "DELETE":
            builder = clause.delete()
        elif isinstance(then, exp.Update):
            if len(then.expressions) == 1 and isinstance(then.expressions[0], exp.Star):
                builder = clause.update_all()
            else:
                builder = clause.update(
                    {
                        eq.this.name: _expression(spark, eq.expression, resolver, names) or ""
                        for eq in then.expressions
                    }
                )
        elif isinstance(then, exp.Insert):
            if isinstance(then.this, exp.Star):
                builder = clause.insert_all()
            else:
                columns = [c.name for c in then.this.expressions]
                values = [_expression(spark, v, resolver, names) or "" for v in then.expression.expressions]
                builder = clause.insert(dict(zip(columns, values, strict=True)))
        else:
            raise UnsupportedFeatureError(f"MERGE clause 'THEN {to_sql(then)}' is not supported")
    builder.merge()
    return empty_result(spark)
