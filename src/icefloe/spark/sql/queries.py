"""Queries: every icefloe table a statement reads becomes a temporary view over ``isp.read``.

The statement keeps its shape; only its table names change (``db.t`` -> ``_icefloe_<hex> AS
t``), so joins, subqueries, CTEs, window functions and Spark's own tables and views all stay
Spark's. Time travel (``VERSION AS OF``, ``TIMESTAMP AS OF``, ``db.t.branch_x``, ...) and
metadata tables pick what the view reads.

A query's tables reach Spark as DataFrame arguments of ``spark.sql`` (``{name}`` fields):
classic Spark registers and drops them around the call; Spark Connect sends them inside the
query's plan, so the DataFrame returned, analysed later, needs no view at all. Other
statements (conditions of DELETE / UPDATE / MERGE, the source of a write) register
uniquely named temporary views that ``isp.sql`` drops once the statement has run
(``Resolver.views``).
"""

from __future__ import annotations

import uuid
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from sqlglot import exp

from icefloe.errors import UnsupportedFeatureError
from icefloe.spark.read.frames import configured_scan, read
from icefloe.spark.read.metadata_tables import metadata_table_frame
from icefloe.spark.sql.parse import parse
from icefloe.spark.sql.pushdown import named_identifiers, read_columns, where_filter
from icefloe.spark.sql.resolve import Resolver, TableRef, name_parts

__all__ = ["empty_result", "ref_frame", "replace_tables", "run_frames", "run_query", "time_travel", "to_sql"]

_VIEW_PREFIX = "_icefloe_"


def empty_result(spark: SparkSession) -> DataFrame:
    """What a statement without result rows returns (as ``spark.sql`` does for them)."""
    return spark.sql("SELECT 1 AS _ WHERE false").drop("_")


def to_sql(tree: exp.Expression) -> str:
    return tree.sql(dialect="spark")


def time_travel(spark: SparkSession, version: exp.Expression | None) -> dict[str, Any]:
    """``read`` keywords for ``VERSION AS OF`` / ``TIMESTAMP AS OF`` (none without one)."""
    if version is None:
        return {}
    kind = str(version.this).upper()
    value = version.expression
    if kind == "VERSION":
        if isinstance(value, exp.Literal) and not value.is_string:
            return {"snapshot_id": int(value.name)}
        return {"ref": value.name}
    if kind == "TIMESTAMP":
        # Spark evaluates the point in time (a literal, an expression, a string) in the
        # session's time zone, as Java's SparkCatalog does.
        millis = spark.sql(f"SELECT unix_millis(CAST(({to_sql(value)}) AS TIMESTAMP))").first()[0]  # type: ignore[index]
        return {"as_of": int(millis)}
    raise UnsupportedFeatureError(f"time travel '{kind} AS OF' is not supported")


def ref_frame(
    spark: SparkSession,
    resolver: Resolver,
    ref: TableRef,
    travel: dict[str, Any],
    *,
    node: exp.Table | None = None,
    identifiers: frozenset[str] | None = None,
) -> DataFrame:
    """The DataFrame of what a resolved table name reads.

    Given the statement's table ``node`` and the ``identifiers`` it names, only the columns and
    files the statement can use (see :mod:`icefloe.spark.sql.pushdown`)."""
    table = resolver.load(ref.identifier)
    travel = dict(travel)
    if ref.ref is not None:
        travel["ref"] = ref.ref
    if ref.snapshot_id is not None:
        travel["snapshot_id"] = ref.snapshot_id
    if len(travel) > 1:
        raise UnsupportedFeatureError(
            f"'{ref.identifier}' is read with two kinds of time travel: {sorted(travel)}"
        )
    if ref.metadata_table is not None:
        if "as_of" in travel:
            snapshot = table.new_scan().as_of_time(travel.pop("as_of")).snapshot()
            travel["snapshot_id"] = snapshot.snapshot_id if snapshot is not None else None
        return metadata_table_frame(spark, table, ref.metadata_table, **travel)
    if node is None:
        return read(spark, table, **travel)
    schema = configured_scan(spark, table, **travel).table_schema()
    alias = node.alias_or_name
    return read(
        spark,
        table,
        filter=where_filter(spark, schema, node, alias),
        columns=read_columns(schema, identifiers),
        **travel,
    )


def replace_tables(
    spark: SparkSession,
    tree: exp.Expression,
    resolver: Resolver,
    frames: dict[str, DataFrame] | None = None,
) -> exp.Expression:
    """``tree`` with each icefloe table it reads replaced by a uniquely named view of its rows:
    a temporary view (dropped after the statement, see ``Resolver.views``), or, given
    ``frames``, a DataFrame put there under that name for :func:`run_frames`."""
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    identifiers = named_identifiers(tree)

    def swap(node: exp.Expression) -> exp.Expression:
        if not isinstance(node, exp.Table) or not isinstance(node.this, (exp.Identifier, exp.Dot)):
            return node
        parts = name_parts(node)
        if len(parts) == 1 and parts[0].lower() in ctes:
            return node
        ref = resolver.resolve(parts)
        if ref is None:
            view_sql = resolver.view_sql(parts)
            if view_sql is None:
                return node
            # A catalog view: its SQL, with the icefloe tables it reads replaced in turn.
            body = replace_tables(spark, parse(view_sql), resolver, frames)
            alias = node.args.get("alias") or exp.TableAlias(this=exp.to_identifier(parts[-1]))
            return exp.Subquery(this=body, alias=alias)
        travel = time_travel(spark, node.args.get("version"))
        frame = ref_frame(spark, resolver, ref, travel, node=node, identifiers=identifiers)
        view = f"{_VIEW_PREFIX}{uuid.uuid4().hex}"
        if frames is not None:
            frames[view] = frame
        else:
            frame.createOrReplaceTempView(view)
            resolver.views.append(view)
        alias = node.args.get("alias") or exp.TableAlias(this=exp.to_identifier(parts[-1]))
        return exp.Table(this=exp.to_identifier(view), alias=alias)

    # In place on a copy: ``swap`` looks up from a table to its SELECT (``where_filter``).
    return tree.copy().transform(swap, copy=False)


def run_frames(spark: SparkSession, tree: exp.Expression, resolver: Resolver) -> DataFrame:
    """``spark.sql`` of ``tree``, its icefloe tables passed as DataFrame arguments (no view
    outlives the call, and the DataFrame stays valid however late Spark analyses it)."""
    frames: dict[str, DataFrame] = {}
    text = to_sql(replace_tables(spark, tree, resolver, frames))
    if not frames:
        return spark.sql(text)
    text = text.replace("{", "{{").replace("}", "}}")  # braces of the statement are literal
    for name in frames:
        text = text.replace(name, "{" + name + "}")
    arguments: dict[str, Any] = dict(frames)
    return spark.sql(text, **arguments)


def run_query(spark: SparkSession, tree: exp.Expression, resolver: Resolver) -> DataFrame:
    """A SELECT / WITH / VALUES statement with icefloe tables in it, run by Spark."""
    return run_frames(spark, tree, resolver)
