"""``isp.sql``: Iceberg's Spark SQL dialect on icefloe tables, with no Iceberg jar in Spark.

The statement is parsed with sqlglot's Spark dialect, extended with Iceberg's SQL extensions
(:mod:`.parse`); names are resolved against an icefloe catalog (:mod:`.resolve`); then:

- queries (:mod:`.queries`): icefloe tables become temporary views over ``isp.read``; Spark
  runs the rest;
- writes (:mod:`.dml`): INSERT / DELETE / UPDATE / MERGE go to ``isp.write`` / ``delete`` /
  ``update`` / ``merge_into``;
- DDL (:mod:`.ddl`) and SHOW / DESCRIBE (:mod:`.show`) use the catalog and table APIs;
- CALL (:mod:`.procedures`) runs Java's procedures on ``icefloe.spark.actions``;
- a statement naming no icefloe table goes to ``spark.sql`` unchanged.
"""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import DataFrame, SparkSession
from sqlglot import exp
from sqlglot.errors import ParseError

from icefloe.catalog import Catalog
from icefloe.errors import UnsupportedFeatureError
from icefloe.spark.sql import parse as p
from icefloe.spark.sql.ddl import run_alter, run_create, run_drop, run_namespace
from icefloe.spark.sql.dml import run_delete, run_insert, run_merge, run_update
from icefloe.spark.sql.procedures import run_call
from icefloe.spark.sql.queries import run_frames, run_query
from icefloe.spark.sql.resolve import Resolver, name_parts
from icefloe.spark.sql.show import describable, run_describe, run_show

__all__ = ["sql"]

_QUERIES = (exp.Query, exp.Values)


def sql(spark: SparkSession, statement: str, catalog: Catalog | str | None = None) -> DataFrame:
    """Run one Spark SQL statement in Iceberg's dialect, icefloe tables included.

    Args:
        spark: the session (classic or Spark Connect).
        statement: one statement: a query, INSERT / DELETE / UPDATE / MERGE, Iceberg DDL,
            ``CALL <catalog>.system.<procedure>(...)``, or anything Spark runs itself.
        catalog: the icefloe catalog names resolve against (a ``Catalog`` or a catalog name;
            default ``icefloe.load_catalog()``); ``db.t`` and ``<catalog name>.db.t`` both
            name its tables.

    Returns:
        The statement's rows (a query's, a procedure's, SHOW's and DESCRIBE's), or an empty
        DataFrame.

    Raises:
        UnsupportedFeatureError: the statement names an icefloe table in a form icefloe does
            not run (the message names the construct).
    """
    try:
        tree = p.parse(statement)
    except ParseError:
        return spark.sql(statement)  # Spark's own syntax sqlglot does not know
    resolver = Resolver(catalog)
    try:
        return _run(spark, statement, tree, resolver)
    finally:
        for view in resolver.views:  # the statement has run: nothing reads them any more
            spark.catalog.dropTempView(view)


def _run(spark: SparkSession, statement: str, tree: exp.Expression, resolver: Resolver) -> DataFrame:
    if isinstance(tree, p.Call):
        return run_call(spark, tree, resolver)
    if isinstance(tree, p.ShowStatement):
        return run_show(spark, tree, resolver)
    if isinstance(tree, exp.Insert):
        return _maybe(spark, statement, tree, resolver, run_insert)
    if isinstance(tree, exp.Delete):
        return _maybe(spark, statement, tree, resolver, run_delete)
    if isinstance(tree, exp.Update):
        return _maybe(spark, statement, tree, resolver, run_update)
    if isinstance(tree, exp.Merge):
        return _maybe(spark, statement, tree, resolver, run_merge)
    if isinstance(tree, (exp.Create, exp.Drop)) and _namespace_in(tree, resolver):
        return run_namespace(spark, tree, resolver)
    if isinstance(tree, exp.Create) and _creates_icefloe(tree, resolver):
        return run_create(spark, tree, resolver)
    if isinstance(tree, exp.Drop) and _drops_icefloe(tree, resolver):
        return run_drop(spark, tree, resolver)
    if isinstance(tree, exp.Alter) and _names(tree.this, resolver):
        return run_alter(spark, tree, resolver)
    if isinstance(tree, exp.Describe) and describable(resolver, tree):
        return run_describe(spark, tree, resolver)
    if isinstance(tree, _QUERIES):
        return run_query(spark, tree, resolver)
    if isinstance(tree, exp.Command):
        return spark.sql(statement)
    _refuse_icefloe_tables(tree, resolver)
    return spark.sql(statement)


def _names(node: exp.Expression | None, resolver: Resolver) -> bool:
    return isinstance(node, exp.Table) and resolver.resolve(name_parts(node)) is not None


def _maybe(
    spark: SparkSession,
    statement: str,
    tree: exp.Expression,
    resolver: Resolver,
    run: Callable[..., DataFrame],
) -> DataFrame:
    """A write runs through icefloe when its target is an icefloe table, else through Spark
    (with icefloe tables it reads turned into views)."""
    node = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    if _names(node, resolver):
        return run(spark, tree, resolver)
    return run_frames(spark, tree, resolver)


_NAMESPACE_KINDS = ("NAMESPACE", "DATABASE", "SCHEMA")


def _namespace_in(tree: exp.Create | exp.Drop, resolver: Resolver) -> bool:
    """CREATE / DROP NAMESPACE <icefloe catalog>.ns (without the catalog it is Spark's)."""
    if str(tree.args.get("kind", "")).upper() not in _NAMESPACE_KINDS:
        return False
    node = (tree.args.get("tables") or [tree.this])[0] if isinstance(tree, exp.Drop) else tree.this
    parts = name_parts(node) if isinstance(node, exp.Table) else []
    return len(parts) >= 2 and parts[0].lower() == resolver.catalog.name.lower()


def _creates_icefloe(tree: exp.Create, resolver: Resolver) -> bool:
    """CREATE TABLE ... USING iceberg (or no USING) in the icefloe catalog; CREATE VIEW on a
    catalog name (not a temporary view)."""
    kind = str(tree.args.get("kind", "")).upper()
    node = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    if not isinstance(node, exp.Table):
        return False
    parts = name_parts(node)
    if kind == "VIEW":
        temporary = any(
            isinstance(x, exp.TemporaryProperty)
            for x in (tree.args.get("properties") or exp.Properties()).expressions
        )
        return not temporary and len(resolver.strip_catalog(parts)) >= 2 and resolver.has_views()
    if kind != "TABLE":
        return False
    formats = [
        x
        for x in (tree.args.get("properties") or exp.Properties()).expressions
        if isinstance(x, exp.FileFormatProperty)
    ]
    if formats and formats[0].name.lower() != "iceberg":
        return False
    stripped = resolver.strip_catalog(parts)
    if len(stripped) < 2:
        return False
    return resolver.catalog.namespace_exists(".".join(stripped[:-1]))


def _drops_icefloe(tree: exp.Drop, resolver: Resolver) -> bool:
    kind = str(tree.args.get("kind", "")).upper()
    nodes = tree.args.get("tables") or [tree.this]
    for node in nodes:
        if not isinstance(node, exp.Table):
            continue
        identifier = resolver.identifier(name_parts(node))
        if kind == "TABLE" and resolver.exists(identifier):
            return True
        if (
            kind == "VIEW"
            and len(name_parts(node)) >= 2
            and resolver.has_views()
            and resolver.catalog.view_exists(identifier)
        ):
            return True
        if kind == "TABLE" and tree.args.get("exists") and len(resolver.strip_catalog(name_parts(node))) >= 2:
            return resolver.catalog.namespace_exists(".".join(resolver.strip_catalog(name_parts(node))[:-1]))
    return False


def _refuse_icefloe_tables(tree: exp.Expression, resolver: Resolver) -> None:
    for node in tree.find_all(exp.Table):
        if (
            isinstance(node.this, (exp.Identifier, exp.Dot))
            and resolver.resolve(name_parts(node)) is not None
        ):
            raise UnsupportedFeatureError(
                f"'{type(tree).__name__.upper()}' statements on icefloe table '{'.'.join(name_parts(node))}' "
                "are not supported by isp.sql"
            )
