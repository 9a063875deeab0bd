"""CALL <catalog>.system.<procedure>(...): Java's stored procedures on icefloe's actions.

Arguments are named (``table => 'db.t'``) or positional, in Java's order; each procedure
returns a DataFrame with the columns and types of Java's procedure output
(``org.apache.iceberg.spark.procedures``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from sqlglot import exp

from icefloe.errors import UnsupportedFeatureError, ValidationError
from icefloe.spark import actions
from icefloe.spark.sql.queries import to_sql
from icefloe.spark.sql.resolve import Resolver
from icefloe.table.table import Table

__all__ = ["PROCEDURES", "run_call"]


@dataclass(frozen=True)
class Procedure:
    params: tuple[str, ...]  # Java's parameter names, in order
    output: str  # Java's output schema (Spark DDL)
    run: Callable[[SparkSession, Resolver, dict[str, Any]], list[tuple[Any, ...]]]


def _table(resolver: Resolver, args: dict[str, Any]) -> Table:
    if "table" not in args:
        raise ValidationError("the procedure needs a 'table' argument")
    parts = str(args["table"]).split(".")
    ref = resolver.resolve(parts)
    if ref is None or ref.metadata_table or ref.ref or ref.snapshot_id:
        raise ValidationError(f"'{args['table']}' is not an icefloe table")
    return resolver.load(ref.identifier)


def _ids(table: Table, before: int | None) -> tuple[int | None, int | None]:
    current = table.current_snapshot()
    return before, current.snapshot_id if current else None


def _current(table: Table) -> int | None:
    snapshot = table.current_snapshot()
    return snapshot.snapshot_id if snapshot else None


def _expire(spark: SparkSession, resolver: Resolver, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    r = actions.expire_snapshots(
        spark,
        _table(resolver, args),
        older_than=args.get("older_than"),
        retain_last=args.get("retain_last"),
        snapshot_ids=args.get("snapshot_ids") or (),
    )
    return [
        (
            r.deleted_data_files_count,
            r.deleted_position_delete_files_count,
            r.deleted_equality_delete_files_count,
            r.deleted_manifests_count,
            r.deleted_manifest_lists_count,
            r.deleted_statistics_files_count,
        )
    ]


def _orphans(spark: SparkSession, resolver: Resolver, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    r = actions.remove_orphan_files(
        spark,
        _table(resolver, args),
        older_than=args.get("older_than"),
        location=args.get("location"),
        dry_run=bool(args.get("dry_run", False)),
        equal_schemes=args.get("equal_schemes"),
        equal_authorities=args.get("equal_authorities"),
        prefix_mismatch_mode=str(args.get("prefix_mismatch_mode", "error")).lower(),
    )
    return [(path,) for path in r.orphan_file_locations]


def _rewrite_data(spark: SparkSession, resolver: Resolver, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    sort_order = args.get("sort_order")
    r = actions.rewrite_data_files(
        spark,
        _table(resolver, args),
        strategy=str(args.get("strategy", "sort" if sort_order else "binpack")).lower(),
        sort_by=[s.strip() for s in sort_order.split(",")] if sort_order else None,
        where=args.get("where"),
        options=args.get("options"),
    )
    return [
        (
            r.rewritten_data_files_count,
            r.added_data_files_count,
            r.rewritten_bytes_count,
            len(r.failed_groups),
            r.removed_delete_files_count,
        )
    ]


def _rewrite_manifests(
    spark: SparkSession, resolver: Resolver, args: dict[str, Any]
) -> list[tuple[Any, ...]]:
    r = actions.rewrite_manifests(spark, _table(resolver, args), spec_id=args.get("spec_id"))
    return [(r.rewritten_manifests_count, r.added_manifests_count)]


def _rewrite_deletes(spark: SparkSession, resolver: Resolver, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    r = actions.rewrite_position_deletes(
        spark, _table(resolver, args), where=args.get("where"), options=args.get("options")
    )
    return [
        (
            r.rewritten_delete_files_count,
            r.added_delete_files_count,
            r.rewritten_bytes_count,
            r.added_bytes_count,
        )
    ]


def _rollback(spark: SparkSession, resolver: Resolver, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    table = _table(resolver, args)
    before = _current(table)
    table.manage_snapshots().rollback_to(int(args["snapshot_id"])).commit()
    return [(before, _current(table))]


def _millis(value: Any) -> int:
    if isinstance(value, dt.datetime):
        value = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return int(value.timestamp() * 1000)
    return int(value)


def _rollback_time(spark: SparkSession, resolver: Resolver, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    table = _table(resolver, args)
    before = _current(table)
    table.manage_snapshots().rollback_to_time(_millis(args["timestamp"])).commit()
    return [(before, _current(table))]


def _set_current(spark: SparkSession, resolver: Resolver, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    table = _table(resolver, args)
    before = _current(table)
    if (args.get("snapshot_id") is None) == (args.get("ref") is None):
        raise ValidationError("set_current_snapshot takes either snapshot_id or ref")
    target = args.get("snapshot_id")
    if target is None:
        found = table.snapshot(str(args["ref"]))
        if found is None:
            raise ValidationError(f"set_current_snapshot: no ref '{args['ref']}'")
        target = found.snapshot_id
    table.manage_snapshots().set_current_snapshot(int(target)).commit()
    return [(before, _current(table))]


def _cherrypick(spark: SparkSession, resolver: Resolver, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    table = _table(resolver, args)
    source = int(args["snapshot_id"])
    table.manage_snapshots().cherrypick(source).commit()
    return [(source, _current(table))]


def _publish(spark: SparkSession, resolver: Resolver, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    table = _table(resolver, args)
    wap_id = str(args["wap_id"])
    staged = [s for s in table.snapshots() if s.summary.get("wap.id") == wap_id]
    if not staged:
        raise ValidationError(f"publish_changes: no snapshot with wap.id '{wap_id}'")
    before = _current(table)
    table.manage_snapshots().cherrypick(staged[-1].snapshot_id).commit()
    return [(before, _current(table))]


def _fast_forward(spark: SparkSession, resolver: Resolver, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    table = _table(resolver, args)
    branch, to = str(args["branch"]), str(args["to"])
    before = table.snapshot(branch)
    table.manage_snapshots().fast_forward_branch(branch, to).commit()
    after = table.snapshot(branch)
    return [(branch, before.snapshot_id if before else None, after.snapshot_id if after else None)]


def _ancestors(spark: SparkSession, resolver: Resolver, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    table = _table(resolver, args)
    snapshot_id = args.get("snapshot_id")
    current = table.snapshot(int(snapshot_id)) if snapshot_id is not None else table.current_snapshot()
    by_id = {s.snapshot_id: s for s in table.snapshots()}
    rows = []
    while current is not None:
        rows.append((current.snapshot_id, current.timestamp_ms))
        current = by_id.get(current.parent_snapshot_id) if current.parent_snapshot_id is not None else None
    return rows


def _register(spark: SparkSession, resolver: Resolver, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    identifier = resolver.identifier(str(args["table"]).split("."))
    table = resolver.catalog.register_table(identifier, str(args["metadata_file"]))
    resolver.forget(identifier)
    snapshot = table.current_snapshot()
    summary = snapshot.summary if snapshot else {}
    return [(_current(table), int(summary.get("total-records", 0)), int(summary.get("total-data-files", 0)))]


def _add_files(spark: SparkSession, resolver: Resolver, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    table = _table(resolver, args)
    source = str(args["source_table"])
    if not source.lower().startswith("`parquet`.") and not source.lower().startswith("parquet."):
        raise UnsupportedFeatureError(
            f"add_files from '{source}': only parquet.`<path>` sources are supported"
        )
    path = source.split(".", 1)[1].strip("`")
    files = [r[0] for r in spark.read.parquet(path).selectExpr("input_file_name()").distinct().collect()]
    before = {tuple(f.partition) for f in _data_files(table)}
    table.add_files(sorted(files), check_duplicate_files=bool(args.get("check_duplicate_files", True)))
    changed = {tuple(f.partition) for f in _data_files(table)} - before
    return [(len(files), len(changed))]


def _data_files(table: Table) -> list[Any]:
    snapshot = table.current_snapshot()
    if snapshot is None:
        return []
    return [task.file for task in table.new_scan().plan_files()]


_SNAPSHOT_PAIR = "previous_snapshot_id bigint, current_snapshot_id bigint"

PROCEDURES: dict[str, Procedure] = {
    "expire_snapshots": Procedure(
        ("table", "older_than", "retain_last", "max_concurrent_deletes", "stream_results", "snapshot_ids"),
        "deleted_data_files_count bigint, deleted_position_delete_files_count bigint, "
        "deleted_equality_delete_files_count bigint, deleted_manifest_files_count bigint, "
        "deleted_manifest_lists_count bigint, deleted_statistics_files_count bigint",
        _expire,
    ),
    "remove_orphan_files": Procedure(
        (
            "table",
            "older_than",
            "location",
            "dry_run",
            "max_concurrent_deletes",
            "file_list_view",
            "equal_schemes",
            "equal_authorities",
            "prefix_mismatch_mode",
        ),
        "orphan_file_location string",
        _orphans,
    ),
    "rewrite_data_files": Procedure(
        ("table", "strategy", "sort_order", "options", "where"),
        "rewritten_data_files_count int, added_data_files_count int, rewritten_bytes_count bigint, "
        "failed_data_files_count int, removed_delete_files_count int",
        _rewrite_data,
    ),
    "rewrite_manifests": Procedure(
        ("table", "use_caching", "spec_id"),
        "rewritten_manifests_count int, added_manifests_count int",
        _rewrite_manifests,
    ),
    "rewrite_position_delete_files": Procedure(
        ("table", "options", "where"),
        "rewritten_delete_files_count int, added_delete_files_count int, rewritten_bytes_count bigint, "
        "added_bytes_count bigint",
        _rewrite_deletes,
    ),
    "rollback_to_snapshot": Procedure(("table", "snapshot_id"), _SNAPSHOT_PAIR, _rollback),
    "rollback_to_timestamp": Procedure(("table", "timestamp"), _SNAPSHOT_PAIR, _rollback_time),
    "set_current_snapshot": Procedure(("table", "snapshot_id", "ref"), _SNAPSHOT_PAIR, _set_current),
    "cherrypick_snapshot": Procedure(
        ("table", "snapshot_id"), "source_snapshot_id bigint, current_snapshot_id bigint", _cherrypick
    ),
    "publish_changes": Procedure(("table", "wap_id"), _SNAPSHOT_PAIR, _publish),
    "fast_forward": Procedure(
        ("table", "branch", "to"),
        "branch_updated string, previous_ref bigint, updated_ref bigint",
        _fast_forward,
    ),
    "ancestors_of": Procedure(("table", "snapshot_id"), "snapshot_id bigint, timestamp bigint", _ancestors),
    "register_table": Procedure(
        ("table", "metadata_file"),
        "current_snapshot_id bigint, total_records_count bigint, total_data_files_count bigint",
        _register,
    ),
    "add_files": Procedure(
        ("table", "source_table", "partition_filter", "check_duplicate_files", "parallelism"),
        "added_files_count bigint, changed_partition_count bigint",
        _add_files,
    ),
}


def _value(spark: SparkSession, node: exp.Expression) -> Any:
    """An argument's value: literals directly, anything else (map(...), array(...), casts,
    TIMESTAMP '...') evaluated by Spark."""
    if isinstance(node, exp.Literal):
        return (
            node.name
            if node.is_string
            else int(node.name)
            if node.name.lstrip("-").isdigit()
            else float(node.name)
        )
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Null):
        return None
    value = spark.sql(f"SELECT {to_sql(node)} AS v").first()[0]  # type: ignore[index]
    if isinstance(value, dict) or not isinstance(value, (list, tuple)):
        return value
    return list(value)


def run_call(spark: SparkSession, tree: Any, resolver: Resolver) -> DataFrame:
    """CALL [catalog.]system.<name>(args)."""
    parts = [i.name for i in tree.this.expressions]
    if len(parts) < 2 or parts[-2].lower() != "system":
        raise UnsupportedFeatureError(f"CALL {'.'.join(parts)}: procedures live in <catalog>.system")
    if len(parts) == 3 and parts[0].lower() != resolver.catalog.name.lower():
        raise ValidationError(
            f"CALL {'.'.join(parts)}: catalog '{parts[0]}' is not '{resolver.catalog.name}'"
        )
    name = parts[-1].lower()
    procedure = PROCEDURES.get(name)
    if procedure is None:
        raise UnsupportedFeatureError(f"procedure '{name}' is not supported by icefloe")
    args: dict[str, Any] = {}
    for position, arg in enumerate(tree.expressions):
        if isinstance(arg, exp.Kwarg):
            key = arg.this.name.lower()
            if key not in procedure.params:
                raise ValidationError(
                    f"procedure '{name}' has no parameter '{key}' (it has {list(procedure.params)})"
                )
            args[key] = _value(spark, arg.expression)
        else:
            if position >= len(procedure.params):
                raise ValidationError(f"procedure '{name}' takes at most {len(procedure.params)} arguments")
            args[procedure.params[position]] = _value(spark, arg)
    rows = procedure.run(spark, resolver, args)
    return spark.createDataFrame(rows, procedure.output)
