"""``create_changelog_view``: a temporary view of a table's changes, as Java's procedure.

The rows come from icefloe's incremental changelog scan (``table.new_incremental_changelog_scan()``)
with Java's columns: the table's, ``_change_type``, ``_change_ordinal`` and
``_commit_snapshot_id``. As in Java:

- ``options``: ``start-snapshot-id`` (exclusive) / ``end-snapshot-id`` (inclusive), or
  ``start-timestamp`` / ``end-timestamp`` (epoch milliseconds: the oldest ancestor committed
  at or after the start; the snapshot current at the end);
- by default each commit's carry-overs (a row a copy-on-write commit deleted and re-inserted
  unchanged) are removed;
- ``compute_updates`` (default: true when ``identifier_columns`` is given) pairs a DELETE and an
  INSERT of one commit with the same identifier values into ``UPDATE_BEFORE`` /
  ``UPDATE_AFTER``; the identifier columns default to the table's identifier fields;
- ``net_changes``: across the whole range, a row inserted and deleted later (or deleted and
  inserted back) cancels out (Java's ``RemoveNetCarryoverIterator``);
- the view is named ``changelog_view``, default ```<table>_changes``` (returned as Java does,
  backquotes included).

The changes are computed when the procedure runs (the view holds them, as a DataFrame of
collected rows).
"""

from __future__ import annotations

import itertools
from typing import Any

import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql import types as st

from icefloe.errors import ValidationError
from icefloe.scan.changelog import CHANGE_ORDINAL, CHANGE_TYPE, COMMIT_SNAPSHOT_ID
from icefloe.spark.sql.procedures.common import Args, Procedure, Rows, string_map, table_arg
from icefloe.spark.sql.resolve import Resolver
from icefloe.spark.types import to_spark_schema
from icefloe.table.incremental_scan import IncrementalChangelogScan
from icefloe.table.table import Table

__all__ = ["CHANGELOG"]

_CHANGE_COLUMNS = [
    st.StructField(CHANGE_TYPE, st.StringType(), False),
    st.StructField(CHANGE_ORDINAL, st.IntegerType(), False),
    st.StructField(COMMIT_SNAPSHOT_ID, st.LongType(), False),
]


def _ranged(table: Table, options: dict[str, str]) -> IncrementalChangelogScan:
    scan = table.new_incremental_changelog_scan()
    if "start-snapshot-id" in options:
        scan = scan.from_snapshot_exclusive(int(options["start-snapshot-id"]))
    elif "start-timestamp" in options:
        start = int(options["start-timestamp"])
        current = table.current_snapshot()
        oldest = None  # the oldest ancestor of the current snapshot at or after ``start``
        for ancestor in table.metadata.ancestors_of(current.snapshot_id if current else None):
            if ancestor.timestamp_ms < start:
                break
            oldest = ancestor
        if oldest is None:
            raise ValidationError(f"create_changelog_view: no snapshot of {table.name()} after {start}")
        scan = scan.from_snapshot_inclusive(oldest.snapshot_id)
    if "end-snapshot-id" in options:
        scan = scan.to_snapshot(int(options["end-snapshot-id"]))
    elif "end-timestamp" in options:
        end = table.new_scan().as_of_time(int(options["end-timestamp"])).snapshot()
        if end is None:
            raise ValidationError(
                f"create_changelog_view: no snapshot of {table.name()} at {options['end-timestamp']}"
            )
        scan = scan.to_snapshot(end.snapshot_id)
    return scan


def _net(changes: pa.Table, data_columns: list[str]) -> pa.Table:
    """Java's net changes: among rows equal in every data column, ordered by change ordinal
    (a DELETE before an INSERT of the same commit), a row of the opposite kind to the first
    one cancels one of them; what is left of a run stays (as copies of its first row)."""
    rows = changes.to_pylist()

    def key(row: dict[str, Any]) -> str:
        return repr([row[c] for c in data_columns])

    kept: list[dict[str, Any]] = []
    ordered = sorted(rows, key=lambda r: (key(r), r[CHANGE_ORDINAL], r[CHANGE_TYPE]))
    for _, group in itertools.groupby(ordered, key=key):
        first: dict[str, Any] | None = None
        count = 0
        for row in group:
            if first is None:
                first, count = row, 1
            elif row[CHANGE_TYPE] != first[CHANGE_TYPE]:
                count -= 1
                if count == 0:
                    first = None
            else:
                count += 1
        if first is not None:
            kept.extend([first] * count)
    return pa.Table.from_pylist(kept, schema=changes.schema)


def _create_changelog_view(spark: SparkSession, resolver: Resolver, args: Args) -> Rows:
    table = table_arg(resolver, args)
    scan = _ranged(table, string_map(args, "options"))
    net = bool(args.get("net_changes", False))
    identifiers = args.get("identifier_columns")
    compute = bool(args.get("compute_updates", identifiers is not None))
    if compute and net:
        raise ValidationError("Not support net changes with update images")
    if compute:
        columns = [str(c).strip("`") for c in identifiers or table.schema().identifier_field_names()]
        if not columns:
            raise ValidationError(
                "Cannot compute the update images because identifier columns are not set "
                f"(table {table.name()} has no identifier fields)"
            )
        scan = scan.compute_updates(*columns)
    elif not net:
        scan = scan.remove_carryovers()
    changes = scan.to_arrow()
    data_columns = [f.name for f in table.schema().fields]
    if net:
        changes = _net(changes, data_columns)
    schema = st.StructType([*to_spark_schema(table.schema(), with_ids=False).fields, *_CHANGE_COLUMNS])
    view = str(args.get("changelog_view") or f"`{table.name().split('.')[-1]}_changes`")
    spark.createDataFrame(changes, schema=schema).createOrReplaceTempView(view)
    return [(view,)]


CHANGELOG: dict[str, Procedure] = {
    "create_changelog_view": Procedure(
        ("table", "changelog_view", "options", "compute_updates", "identifier_columns", "net_changes"),
        "changelog_view string",
        _create_changelog_view,
    ),
}
