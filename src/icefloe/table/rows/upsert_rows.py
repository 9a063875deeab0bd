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

import pyarrow as pa
import pyarrow.compute as pc

from icefloe.arrow.schema import to_requested_schema
from icefloe.errors import ValidationError
from icefloe.expressions import always_false
from icefloe.scan import FileScanTask
from icefloe.spec.manifest import DataFile
from icefloe.spec.snapshots import Snapshot
from icefloe.table.rows.append_data import to_arrow_input, write_files
from icefloe.table.rows.row_changes import (
    MERGE_ON_READ,
    FoundRows,
    Matcher,
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
from icefloe.table.rows.upsert_keys import SourceKeys

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
    source_keys = SourceKeys(
        key_table.filter(_no_null_keys(key_table, keys)),
        [schema.find_field(k) for k in keys],  # type: ignore[misc]
    )
    source_keys.check_unique()

    def matcher_for(task: FileScanTask) -> Matcher | None:
        file_keys = source_keys.for_file(task.file)
        if file_keys is None:
            return None
        return lambda live: source_keys.matched_positions(live, file_keys)

    key_filter = source_keys.row_filter()
    found = find_rows(
        target,
        key_filter,
        None,
        read_ids=[f.field_id for f in source_keys.fields],
        case_sensitive=True,
        branch=branch,
        matcher_for=matcher_for,
    )
    matched = found.matched_rows
    if matched > source_keys.num_rows:  # before writing anything
        raise ValidationError(
            f"upsert: {matched} rows of the table match the {source_keys.num_rows} keys of the data; "
            "a key must match at most one row"
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
