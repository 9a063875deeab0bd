"""``table.upsert(data, on=[...])``: MERGE INTO the table from Arrow data on key columns.

The rows of ``data`` whose key matches a table row replace it (WHEN MATCHED UPDATE SET *), the
others are inserted (WHEN NOT MATCHED INSERT *), in one snapshot per ``write.merge.mode``,
through the commit path of ``row_changes.py``. As Java's MERGE, an upsert that changes nothing
(no key matches and nothing is new, or empty ``data``) still commits its snapshot (an
``overwrite`` without files).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icefloe.arrow.schema import to_requested_schema
from icefloe.errors import ValidationError
from icefloe.expressions import (
    Expression,
    always_false,
    always_true,
    and_,
    greater_than_or_equal,
    is_in,
    less_than_or_equal,
    not_null,
)
from icefloe.spec.manifest import DataFile
from icefloe.spec.snapshots import Snapshot
from icefloe.table.rows.append_data import to_arrow_input, write_files
from icefloe.table.rows.row_changes import (
    MERGE_ON_READ,
    FoundRows,
    RowChangeTarget,
    WrittenFiles,
    branch_head,
    change_isolation,
    change_mode,
    commit_row_change,
    find_rows,
    rewrite_remainders,
    write_change_deletes,
)

__all__ = ["UpsertResult", "upsert_rows"]


@dataclass(frozen=True, slots=True)
class UpsertResult:
    """What ``upsert`` did: rows updated (matched a key) and inserted, and the snapshot."""

    rows_updated: int
    rows_inserted: int
    snapshot: Snapshot | None


def upsert_rows(
    target: RowChangeTarget,
    data: Any,
    on: Sequence[str],
    *,
    case_sensitive: bool = True,
    snapshot_properties: Mapping[str, str] | None = None,
    branch: str | None = None,
) -> UpsertResult:
    """Insert the rows of ``data`` whose ``on`` key is new, and replace the table's rows whose
    key matches a row of ``data`` (MERGE ... WHEN MATCHED UPDATE / WHEN NOT MATCHED INSERT),
    in one snapshot per ``write.merge.mode``. A null key never matches. The snapshot is
    committed even when nothing changes (empty ``data``), as Java's MERGE commits one.

    Raises:
        ValidationError: no key columns, an unknown key column, a key appearing twice in
            ``data``, or a key matching more than one row of the table.
    """
    if not on:
        raise ValidationError("upsert needs the key columns: on=[...]")
    metadata = target.metadata
    schema = metadata.schema()
    keys = []
    for name in on:
        found_field = schema.find_field(name, case_sensitive=case_sensitive)
        if found_field is None or schema.find_column_name(found_field.field_id) is None:
            raise ValidationError(f"upsert key column {name!r} is not a column of the table")
        keys.append(schema.find_column_name(found_field.field_id) or name)
    arrow = to_arrow_input(data)
    source = arrow.read_all() if isinstance(arrow, pa.RecordBatchReader) else arrow
    source = to_requested_schema(source, schema)
    mode, isolation = change_mode(metadata, "merge"), change_isolation(metadata, "merge")
    if source.num_rows == 0:  # a MERGE from an empty source: Java commits it all the same
        snapshot = commit_row_change(
            target,
            FoundRows(branch_head(metadata, branch)),
            WrittenFiles(),
            mode=mode,
            isolation=isolation,
            conflict_filter=always_false(),
            snapshot_properties=snapshot_properties,
            branch=branch,
        )
        return UpsertResult(0, 0, snapshot)
    key_table = source.select(keys)
    non_null = key_table.filter(_no_null_keys(key_table, keys))
    counts = non_null.group_by(keys).aggregate([([], "count_all")])
    if counts.num_rows != non_null.num_rows:
        duplicate = counts.filter(pc.greater(counts.column("count_all"), 1)).slice(0, 1).to_pylist()[0]
        duplicate.pop("count_all", None)
        raise ValidationError(f"upsert data holds the key {duplicate} more than once")

    def matcher(live: pa.Table) -> np.ndarray:
        joined = live.select([*keys, "_pos"]).join(non_null, keys=keys, join_type="left semi")
        return np.asarray(joined.column("_pos").to_numpy(), dtype=np.int64)

    key_filter = _key_filter(non_null, keys)
    found = find_rows(
        target,
        key_filter,
        matcher,
        read_ids=[schema.find_field(k).field_id for k in keys],  # type: ignore[union-attr]
        case_sensitive=True,
        branch=branch,
    )
    written = WrittenFiles()
    new_rows: list[DataFile] = []
    try:
        if mode == MERGE_ON_READ:
            write_change_deletes(target, found, written)
        else:
            rewrite_remainders(target, found, written)
        new_rows = write_files(target, source)  # type: ignore[arg-type]
    except Exception:
        target.io().delete_quietly(written.paths() + [f.file_path for f in new_rows])
        raise
    matched = found.matched_rows
    if matched > non_null.num_rows:
        target.io().delete_quietly(written.paths() + [f.file_path for f in new_rows])
        raise ValidationError(
            f"upsert: {matched} rows of the table match the {non_null.num_rows} keys of the data; "
            "a key must match at most one row"
        )
    snapshot = commit_row_change(
        target,
        found,
        written,
        mode=mode,
        isolation=isolation,
        conflict_filter=key_filter,
        new_rows=new_rows,
        snapshot_properties=snapshot_properties,
        branch=branch,
    )
    return UpsertResult(matched, source.num_rows - matched, snapshot)


def _no_null_keys(keys_table: pa.Table, keys: Sequence[str]) -> pa.Array:
    mask = pc.is_valid(keys_table.column(keys[0]))
    for name in keys[1:]:
        mask = pc.and_(mask, pc.is_valid(keys_table.column(name)))
    return mask


#: Keys listed one by one in the upsert's filter up to this many; more are pruned by range.
_IN_LIMIT = 1000


def _key_filter(keys_table: pa.Table, keys: Sequence[str]) -> Expression:
    """A filter selecting the rows that may match the keys: an IN list per key column (or
    its min..max range for many keys), for planning to prune files and for conflict checks."""
    result: Expression = always_true()
    for name in keys:
        column = keys_table.column(name)
        values = pc.unique(column).to_pylist()
        if not values:
            continue
        if len(values) <= _IN_LIMIT:
            result = and_(result, is_in(name, values))
        else:
            low, high = pc.min(column).as_py(), pc.max(column).as_py()
            result = and_(result, greater_than_or_equal(name, low), less_than_or_equal(name, high))
        result = and_(result, not_null(name))
    return result
