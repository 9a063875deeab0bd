"""Snapshot-history procedures: rollback_to_snapshot, rollback_to_timestamp,
set_current_snapshot, cherrypick_snapshot, publish_changes, fast_forward, ancestors_of."""

from __future__ import annotations

from pyspark.sql import SparkSession

from icefloe.errors import ValidationError, ValidationException
from icefloe.spark.sql.procedures.common import Args, Procedure, Rows, current_id, millis, table_arg
from icefloe.spark.sql.resolve import Resolver
from icefloe.spark.wap import STAGED_WAP_ID

__all__ = ["HISTORY"]


def _rollback(spark: SparkSession, resolver: Resolver, args: Args) -> Rows:
    table = table_arg(resolver, args)
    before = current_id(table)
    table.manage_snapshots().rollback_to(int(args["snapshot_id"])).commit()
    return [(before, current_id(table))]


def _rollback_time(spark: SparkSession, resolver: Resolver, args: Args) -> Rows:
    table = table_arg(resolver, args)
    before = current_id(table)
    table.manage_snapshots().rollback_to_time(millis(args["timestamp"])).commit()
    return [(before, current_id(table))]


def _set_current(spark: SparkSession, resolver: Resolver, args: Args) -> Rows:
    table = table_arg(resolver, args)
    before = current_id(table)
    if (args.get("snapshot_id") is None) == (args.get("ref") is None):
        raise ValidationError("set_current_snapshot takes either snapshot_id or ref")
    target = args.get("snapshot_id")
    if target is None:
        found = table.snapshot(str(args["ref"]))
        if found is None:
            raise ValidationError(f"set_current_snapshot: no ref '{args['ref']}'")
        target = found.snapshot_id
    table.manage_snapshots().set_current_snapshot(int(target)).commit()
    return [(before, current_id(table))]


def _cherrypick(spark: SparkSession, resolver: Resolver, args: Args) -> Rows:
    table = table_arg(resolver, args)
    source = int(args["snapshot_id"])
    table.manage_snapshots().cherrypick(source).commit()
    return [(source, current_id(table))]


def _publish(spark: SparkSession, resolver: Resolver, args: Args) -> Rows:
    """The one snapshot staged with the write-audit-publish id, cherry-picked onto main."""
    table = table_arg(resolver, args)
    wap_id = str(args["wap_id"])
    staged = [s for s in table.snapshots() if s.summary.get(STAGED_WAP_ID) == wap_id]
    if len(staged) > 1:
        raise ValidationException(
            f"Cannot apply non-unique WAP ID. Found multiple snapshots with WAP ID '{wap_id}'"
        )
    if not staged:
        raise ValidationException(f"Cannot apply unknown WAP ID '{wap_id}'")
    table.manage_snapshots().cherrypick(staged[0].snapshot_id).commit()
    return [(staged[0].snapshot_id, current_id(table))]


def _fast_forward(spark: SparkSession, resolver: Resolver, args: Args) -> Rows:
    table = table_arg(resolver, args)
    branch, to = str(args["branch"]), str(args["to"])
    before = table.snapshot(branch)
    table.manage_snapshots().fast_forward_branch(branch, to).commit()
    after = table.snapshot(branch)
    return [(branch, before.snapshot_id if before else None, after.snapshot_id if after else None)]


def _ancestors(spark: SparkSession, resolver: Resolver, args: Args) -> Rows:
    table = table_arg(resolver, args)
    snapshot_id = args.get("snapshot_id")
    current = table.snapshot(int(snapshot_id)) if snapshot_id is not None else table.current_snapshot()
    by_id = {s.snapshot_id: s for s in table.snapshots()}
    rows = []
    while current is not None:
        rows.append((current.snapshot_id, current.timestamp_ms))
        current = by_id.get(current.parent_snapshot_id) if current.parent_snapshot_id is not None else None
    return rows


_SNAPSHOT_PAIR = "previous_snapshot_id bigint, current_snapshot_id bigint"

HISTORY: dict[str, Procedure] = {
    "rollback_to_snapshot": Procedure(("table", "snapshot_id"), _SNAPSHOT_PAIR, _rollback),
    "rollback_to_timestamp": Procedure(("table", "timestamp"), _SNAPSHOT_PAIR, _rollback_time),
    "set_current_snapshot": Procedure(("table", "snapshot_id", "ref"), _SNAPSHOT_PAIR, _set_current),
    "cherrypick_snapshot": Procedure(
        ("table", "snapshot_id"), "source_snapshot_id bigint, current_snapshot_id bigint", _cherrypick
    ),
    "publish_changes": Procedure(
        ("table", "wap_id"), "source_snapshot_id bigint, current_snapshot_id bigint", _publish
    ),
    "fast_forward": Procedure(
        ("table", "branch", "to"),
        "branch_updated string, previous_ref bigint, updated_ref bigint",
        _fast_forward,
    ),
    "ancestors_of": Procedure(("table", "snapshot_id"), "snapshot_id bigint, timestamp bigint", _ancestors),
}
