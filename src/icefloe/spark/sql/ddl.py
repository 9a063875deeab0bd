"""DDL: CREATE / REPLACE / DROP TABLE, ALTER TABLE (Spark's and Iceberg's clauses), views.

Types in column definitions are Spark SQL types: Spark itself parses them (one ``CAST(NULL AS
type)`` query per statement), then :func:`icefloe.spark.types.iceberg_type_from_spark` maps
them as Java's ``SparkSchemaUtil`` does (``timestamp`` -> ``timestamptz``, ``timestamp_ntz``
-> ``timestamp``). Partition and sort terms keep Spark's form (``bucket(16, id)``,
``days(ts)``), which ``create_table`` and ``update_spec`` read.
"""

from __future__ import annotations

import itertools
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as st
from sqlglot import exp

from icefloe.errors import TableAlreadyExistsError, UnsupportedFeatureError, ValidationError
from icefloe.expressions import always_true
from icefloe.spark.jobs import removed_unless_committed
from icefloe.spark.sql import parse as p
from icefloe.spark.sql.queries import empty_result, replace_tables, to_sql
from icefloe.spark.sql.resolve import Resolver, name_parts
from icefloe.spark.types import iceberg_type_from_spark, schema_from_spark
from icefloe.spark.write.frames import write_data_frame
from icefloe.spec import properties as props
from icefloe.spec import types as it
from icefloe.spec.schema import Schema, assign_fresh_ids
from icefloe.table.table import Table

__all__ = ["run_alter", "run_create", "run_drop", "run_namespace", "term"]

#: Spark's partition transform names (and sqlglot's names for them) -> the term's function.
_TRANSFORMS = {
    "trunc": "truncate",
    "truncate": "truncate",
    "bucket": "bucket",
    "years": "years",
    "year": "years",
    "months": "months",
    "month": "months",
    "days": "days",
    "day": "days",
    "date": "days",
    "hours": "hours",
    "hour": "hours",
}


def term(node: exp.Expression) -> str:
    """A partition or sort term in the Spark form icefloe reads (``bucket(16, id)``, ``id``)."""
    if isinstance(node, (exp.Column, exp.Identifier)):
        return ".".join(part.name for part in node.parts) if isinstance(node, exp.Column) else node.name
    if isinstance(node, (exp.PartitionedByBucket, exp.PartitionByTruncate)):
        kind = "bucket" if isinstance(node, exp.PartitionedByBucket) else "truncate"
        return f"{kind}({node.expression.name}, {term(node.this)})"
    if isinstance(node, exp.Func):
        name = node.name if isinstance(node, exp.Anonymous) else node.sql_name()
        function = _TRANSFORMS.get(name.lower())
        if function is None:
            raise UnsupportedFeatureError(f"partition transform '{to_sql(node)}' is not supported")
        args = [a for a in node.args.values() if isinstance(a, exp.Expression)]
        args += [a for v in node.args.values() if isinstance(v, list) for a in v]
        literals = [a.name for a in args if isinstance(a, exp.Literal)]
        columns = [term(a) for a in args if isinstance(a, (exp.Column, exp.Identifier))]
        return f"{function}({', '.join(literals + columns)})"
    raise UnsupportedFeatureError(f"partition term '{to_sql(node)}' is not supported")


def _spark_types(spark: SparkSession, kinds: list[exp.DataType]) -> list[st.DataType]:
    if not kinds:
        return []
    casts = ", ".join(f"CAST(NULL AS {to_sql(k)}) AS c{i}" for i, k in enumerate(kinds))
    return [f.dataType for f in spark.sql(f"SELECT {casts}").schema.fields]


def _column_defs(
    spark: SparkSession, defs: list[exp.ColumnDef]
) -> list[tuple[str, it.IcebergType, bool, str | None]]:
    """(name, type, required, comment) of each column definition."""
    types = _spark_types(spark, [d.args["kind"] for d in defs])
    out = []
    for column, spark_type in zip(defs, types, strict=True):
        required = any(isinstance(c.kind, exp.NotNullColumnConstraint) for c in column.constraints)
        comments = [
            c.kind.this.name for c in column.constraints if isinstance(c.kind, exp.CommentColumnConstraint)
        ]
        out.append(
            (
                column.name,
                iceberg_type_from_spark(spark_type, column=column.name),
                required,
                comments[0] if comments else None,
            )
        )
    return out


def _schema(columns: list[tuple[str, it.IcebergType, bool, str | None]]) -> Schema:
    struct = it.StructType(*[it.NestedField(0, n, t, required=r, doc=d) for n, t, r, d in columns])
    return assign_fresh_ids(struct, itertools.count(1).__next__)


def _table_options(properties: exp.Properties | None) -> dict[str, Any]:
    options: dict[str, Any] = {"properties": {}}
    for prop in properties.expressions if properties is not None else []:
        if isinstance(prop, exp.FileFormatProperty):
            if prop.name.lower() != "iceberg":
                raise UnsupportedFeatureError(
                    f"CREATE TABLE ... USING {prop.name}: icefloe tables are iceberg"
                )
        elif isinstance(prop, exp.PartitionedByProperty):
            options["partition_by"] = [term(t) for t in prop.this.expressions]
        elif isinstance(prop, exp.LocationProperty):
            options["location"] = prop.this.name
        elif isinstance(prop, exp.SchemaCommentProperty):
            options["properties"]["comment"] = prop.this.name
        elif isinstance(prop, exp.Property):
            options["properties"][prop.name] = prop.args["value"].name
        else:
            raise UnsupportedFeatureError(f"CREATE TABLE option '{to_sql(prop)}' is not supported")
    return options


def run_create(spark: SparkSession, tree: exp.Create, resolver: Resolver) -> DataFrame:
    """CREATE [OR REPLACE] TABLE [IF NOT EXISTS] (columns | AS query); REPLACE TABLE; views."""
    kind = str(tree.args.get("kind", "")).upper()
    if kind == "VIEW":
        return _create_view(spark, tree, resolver)
    node = tree.this
    table_node = node.this if isinstance(node, exp.Schema) else node
    identifier = resolver.identifier(name_parts(table_node))
    options = _table_options(tree.args.get("properties"))
    query = tree.expression
    df = spark.sql(to_sql(replace_tables(spark, query, resolver))) if query is not None else None
    if df is not None:
        schema = assign_fresh_ids(schema_from_spark(df.schema), itertools.count(1).__next__)
    else:
        schema = _schema(_column_defs(spark, [c for c in node.expressions if isinstance(c, exp.ColumnDef)]))
    exists = resolver.exists(identifier)
    replace = bool(tree.args.get("replace")) or str(tree.args.get("kind", "")).upper() == "REPLACE"
    resolver.forget(identifier)
    if exists and not replace:
        if tree.args.get("exists"):
            return empty_result(spark)
        raise TableAlreadyExistsError(f"table '{identifier}' already exists")
    if df is None and not exists:
        resolver.catalog.create_table(identifier, schema, **options)
        return empty_result(spark)
    # CTAS / RTAS are atomic, as Java's staged tables: the table appears (or is replaced)
    # with its rows in one commit of a create / replace transaction.
    if not replace:
        txn = resolver.catalog.create_table_transaction(identifier, schema, **options)
    elif tree.args.get("replace") and str(tree.args.get("kind", "")).upper() != "REPLACE":
        txn = resolver.catalog.create_or_replace_table_transaction(identifier, schema, **options)
    else:
        txn = resolver.catalog.replace_table_transaction(identifier, schema, **options)
    if df is None:
        txn.commit_transaction()
        return empty_result(spark)
    files, cleanup = write_data_frame(df, txn)
    with removed_unless_committed(lambda: cleanup(committed=())):
        # Java's snapshots: CTAS appends, RTAS overwrites every row (an `overwrite`, or a
        # `delete` without rows); each commits one also when the query has no rows.
        if replace:
            overwrite = txn.new_overwrite().overwrite_by_row_filter(always_true())
            for file in files:
                overwrite.add_file(file)
            overwrite.commit()
        else:
            append = txn.new_append()
            for file in files:
                append.append_file(file)
            append.commit()
        txn.commit_transaction()
    cleanup(committed=[f.file_path for f in files])
    return empty_result(spark)


def _create_view(spark: SparkSession, tree: exp.Create, resolver: Resolver) -> DataFrame:
    identifier = resolver.identifier(name_parts(tree.this))
    query = tree.expression
    df = spark.sql(to_sql(replace_tables(spark, query, resolver)))
    schema = assign_fresh_ids(schema_from_spark(df.schema), itertools.count(1).__next__)
    if resolver.catalog.view_exists(identifier):
        if tree.args.get("exists"):
            return empty_result(spark)
        if not tree.args.get("replace"):
            raise TableAlreadyExistsError(f"view '{identifier}' already exists")
        resolver.catalog.drop_view(identifier)
    namespace = identifier.rsplit(".", 1)[0]
    resolver.catalog.create_view(
        identifier, schema, to_sql(query), dialect="spark", default_namespace=namespace
    )
    return empty_result(spark)


def run_drop(spark: SparkSession, tree: exp.Drop, resolver: Resolver) -> DataFrame:
    """DROP TABLE [IF EXISTS] t [PURGE]; DROP VIEW [IF EXISTS] v."""
    kind = str(tree.args.get("kind", "")).upper()
    for node in tree.args.get("tables") or [tree.this]:
        identifier = resolver.identifier(name_parts(node))
        if kind == "VIEW":
            if resolver.catalog.view_exists(identifier):
                resolver.catalog.drop_view(identifier)
            elif not tree.args.get("exists"):
                raise ValidationError(f"DROP VIEW: no view '{identifier}'")
            continue
        if resolver.exists(identifier):
            resolver.catalog.drop_table(identifier, purge=bool(tree.args.get("purge")))
            resolver.forget(identifier)
        elif not tree.args.get("exists"):
            raise ValidationError(f"DROP TABLE: no table '{identifier}'")
    return empty_result(spark)


def run_namespace(spark: SparkSession, tree: exp.Create | exp.Drop, resolver: Resolver) -> DataFrame:
    """CREATE NAMESPACE [IF NOT EXISTS] cat.ns / DROP NAMESPACE [IF EXISTS] cat.ns."""
    node = (tree.args.get("tables") or [tree.this])[0] if isinstance(tree, exp.Drop) else tree.this
    namespace = ".".join(name_parts(node)[1:])
    exists = resolver.catalog.namespace_exists(namespace)
    if isinstance(tree, exp.Create):
        if not (exists and tree.args.get("exists")):
            resolver.catalog.create_namespace(namespace)
    elif exists or not tree.args.get("exists"):
        resolver.catalog.drop_namespace(namespace)
    return empty_result(spark)


def _column_name(node: exp.Expression) -> str:
    if isinstance(node, exp.Column):
        return ".".join(part.name for part in node.parts)
    return node.name


def run_alter(spark: SparkSession, tree: exp.Alter, resolver: Resolver) -> DataFrame:
    """ALTER TABLE: each action in one transaction (all or nothing)."""
    parts = name_parts(tree.this)
    ref = resolver.resolve(parts)
    if ref is None or ref.metadata_table or ref.ref or ref.snapshot_id:
        raise ValidationError(f"ALTER TABLE: '{'.'.join(parts)}' is not an icefloe table")
    table = resolver.load(ref.identifier)
    actions = tree.args.get("actions") or []
    renames = [a for a in actions if isinstance(a, exp.AlterRename)]
    if renames:
        resolver.catalog.rename_table(ref.identifier, resolver.identifier(name_parts(renames[0].this)))
        resolver.forget(ref.identifier)
        return empty_result(spark)
    txn = table.new_transaction()
    for action in actions:
        _alter(spark, txn, table, action)
    txn.commit_transaction()
    resolver.forget(ref.identifier)
    return empty_result(spark)


def _alter(spark: SparkSession, txn: Any, table: Table, action: exp.Expression) -> None:
    if isinstance(action, (exp.ColumnDef, exp.Schema)):
        _add_columns(spark, txn, [action] if isinstance(action, exp.ColumnDef) else list(action.expressions))
    elif isinstance(action, exp.Drop) and str(action.args.get("kind", "")).upper() == "COLUMN":
        update = txn.update_schema()
        for column in action.args.get("tables") or [action.this]:
            update = update.delete_column(_column_name(column))
        update.commit()
    elif isinstance(action, exp.RenameColumn):
        txn.update_schema().rename_column(_column_name(action.this), _column_name(action.args["to"])).commit()
    elif isinstance(action, exp.AlterColumn):
        _alter_column(spark, txn, action)
    elif isinstance(action, p.MoveColumn):
        name = _column_name(action.this)
        update = txn.update_schema()
        if action.args.get("first"):
            update.move_first(name).commit()
        else:
            update.move_after(name, _column_name(action.args["after"])).commit()
    elif isinstance(action, exp.AlterSet):
        update = txn.update_properties()
        for properties in action.expressions:
            for prop in properties.expressions:
                update = update.set(prop.name, prop.args["value"].name)
        update.commit()
    elif isinstance(action, p.UnsetProperties):
        update = txn.update_properties()
        for key in action.expressions:
            update = update.remove(key.name)
        update.commit()
    elif isinstance(action, p.PartitionField):
        _partition_field(txn, action)
    elif isinstance(action, p.WriteOrder):
        _write_order(txn, action)
    elif isinstance(action, p.IdentifierFields):
        names = [_column_name(c) for c in action.expressions]
        current = table.schema().identifier_field_names()
        if action.args["action"] == "drop":
            missing = [n for n in names if n not in current]
            if missing:
                raise ValidationError(f"DROP IDENTIFIER FIELDS: {missing} are not identifier fields")
            names = [n for n in current if n not in names]
        txn.update_schema().set_identifier_fields(names).commit()
    elif isinstance(action, p.BranchOrTag):
        _branch_or_tag(txn, table, action)
    else:
        raise UnsupportedFeatureError(f"ALTER TABLE action '{to_sql(action)}' is not supported")


def _add_columns(spark: SparkSession, txn: Any, defs: list[exp.ColumnDef]) -> None:
    update = txn.update_schema()
    for column, (name, typ, required, doc) in zip(defs, _column_defs(spark, defs), strict=True):
        parent, _, leaf = name.rpartition(".")
        if required:
            update = update.allow_incompatible_changes().add_required_column(name, typ, doc)
        else:
            update = update.add_column(leaf, typ, doc, parent=parent or None)
        position = column.args.get("position")
        if position is not None:
            where = str(position.args.get("position", "")).upper()
            if where == "FIRST":
                update = update.move_first(name)
            elif where == "AFTER":
                update = update.move_after(name, _column_name(position.this))
    update.commit()


def _alter_column(spark: SparkSession, txn: Any, action: exp.AlterColumn) -> None:
    name = _column_name(action.this)
    update = txn.update_schema()
    if action.args.get("dtype") is not None:
        spark_type = _spark_types(spark, [action.args["dtype"]])[0]
        update = update.update_column(name, iceberg_type_from_spark(spark_type, column=name))
    if action.args.get("comment") is not None:
        update = update.update_column_doc(name, action.args["comment"].name)
    if action.args.get("drop") and action.args.get("allow_null"):
        update = update.make_column_optional(name)
    elif action.args.get("allow_null") is False or (
        action.args.get("allow_null") and not action.args.get("drop")
    ):
        update = update.require_column(name)
    update.commit()


def _partition_field(txn: Any, action: p.PartitionField) -> None:
    kind = action.args["action"]
    update = txn.update_spec()
    name = action.args.get("name")
    if kind == "add":
        update.add_field(term(action.this), None, name.name if name else None).commit()
    elif kind == "drop":
        update.remove_field(term(action.this)).commit()
    else:
        update = update.remove_field(term(action.this))
        update.add_field(term(action.args["to"]), None, name.name if name else None).commit()


def _write_order(txn: Any, action: p.WriteOrder) -> None:
    """Java's SetWriteDistributionAndOrdering: the sort order and write.distribution-mode."""
    order = txn.replace_sort_order()
    for item in action.expressions:
        null_order = "nulls-first" if item.args.get("nulls_first") else "nulls-last"
        order = (order.desc if item.args.get("desc") else order.asc)(term(item.this), null_order)
    order.commit()
    if action.args.get("distributed"):
        mode = "hash"
    elif action.args.get("locally") or action.args.get("unordered"):
        mode = "none"
    else:
        mode = "range"
    txn.update_properties().set(props.WRITE_DISTRIBUTION_MODE, mode).commit()


def _branch_or_tag(txn: Any, table: Table, action: p.BranchOrTag) -> None:
    kind, what = action.args["kind"], action.args["action"]
    name = action.this.name
    refs = table.refs()
    manage = txn.manage_snapshots()
    if what == "drop":
        if name not in refs:
            if action.args.get("exists"):
                return
            raise ValidationError(f"DROP {kind.upper()}: no {kind} '{name}'")
        (manage.remove_branch if kind == "branch" else manage.remove_tag)(name).commit()
        return
    current = table.current_snapshot()
    snapshot_id = action.args.get("snapshot_id") or (current.snapshot_id if current else None)
    exists = name in refs
    if exists and what == "create":
        if action.args.get("exists"):
            return
        raise ValidationError(f"CREATE {kind.upper()}: '{name}' already exists")
    if not exists and what == "replace":
        raise ValidationError(f"REPLACE {kind.upper()}: no {kind} '{name}'")
    if kind == "branch":
        manage = (
            manage.replace_branch(name, snapshot_id) if exists else manage.create_branch(name, snapshot_id)
        )
    else:
        if snapshot_id is None:
            raise ValidationError(f"CREATE TAG '{name}': the table has no snapshot")
        manage = manage.replace_tag(name, snapshot_id) if exists else manage.create_tag(name, snapshot_id)
    if action.args.get("max_ref_age_ms"):
        manage = manage.set_max_ref_age_ms(name, action.args["max_ref_age_ms"])
    if action.args.get("min_snapshots_to_keep"):
        manage = manage.set_min_snapshots_to_keep(name, action.args["min_snapshots_to_keep"])
    if action.args.get("max_snapshot_age_ms"):
        manage = manage.set_max_snapshot_age_ms(name, action.args["max_snapshot_age_ms"])
    manage.commit()
