"""Maintenance procedures: expire_snapshots, remove_orphan_files, rewrite_data_files,
rewrite_manifests, rewrite_position_delete_files (on ``icefloe.spark.actions``)."""

from __future__ import annotations

from pyspark.sql import SparkSession

from icefloe.spark import actions
from icefloe.spark.sql.procedures.common import Args, Procedure, Rows, table_arg
from icefloe.spark.sql.resolve import Resolver

__all__ = ["MAINTENANCE"]


def _expire(spark: SparkSession, resolver: Resolver, args: Args) -> Rows:
    r = actions.expire_snapshots(
        spark,
        table_arg(resolver, args),
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


def _orphans(spark: SparkSession, resolver: Resolver, args: Args) -> Rows:
    r = actions.remove_orphan_files(
        spark,
        table_arg(resolver, args),
        older_than=args.get("older_than"),
        location=args.get("location"),
        dry_run=bool(args.get("dry_run", False)),
        equal_schemes=args.get("equal_schemes"),
        equal_authorities=args.get("equal_authorities"),
        prefix_mismatch_mode=str(args.get("prefix_mismatch_mode", "error")).lower(),
    )
    return [(path,) for path in r.orphan_file_locations]


def _rewrite_data(spark: SparkSession, resolver: Resolver, args: Args) -> Rows:
    sort_order = args.get("sort_order")
    r = actions.rewrite_data_files(
        spark,
        table_arg(resolver, args),
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


def _rewrite_manifests(spark: SparkSession, resolver: Resolver, args: Args) -> Rows:
    r = actions.rewrite_manifests(spark, table_arg(resolver, args), spec_id=args.get("spec_id"))
    return [(r.rewritten_manifests_count, r.added_manifests_count)]


def _rewrite_deletes(spark: SparkSession, resolver: Resolver, args: Args) -> Rows:
    r = actions.rewrite_position_deletes(
        spark, table_arg(resolver, args), where=args.get("where"), options=args.get("options")
    )
    return [
        (
            r.rewritten_delete_files_count,
            r.added_delete_files_count,
            r.rewritten_bytes_count,
            r.added_bytes_count,
        )
    ]


MAINTENANCE: dict[str, Procedure] = {
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
}
