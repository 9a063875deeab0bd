"""Helpers for the changelog scan tests: a small table, row-level commits made with icefloe's
own writers (equality deletes, deletion vectors, position deletes, compaction), and the
independent oracle: the changes of a snapshot computed by diffing full time-travel reads of
the snapshot and its parent.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from icefloe import Catalog, Table
from icefloe.expressions import Expression
from icefloe.spec.manifest import DataFile, DeleteFile
from icefloe.write import (
    write_data_files,
    write_deletion_vectors,
    write_equality_deletes,
    write_position_deletes,
)
from support.catalogs import make_catalog

__all__ = [
    "SCHEMA",
    "add_rows_and_delete_some",
    "changes_by_ordinal",
    "compact_partition",
    "counter",
    "data",
    "equality_delete",
    "expected_changes",
    "new_table",
    "set_mode",
]

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("cat", pa.string()),
        pa.field("v", pa.int64()),
        pa.field("f", pa.float64()),
    ]
)
COLUMNS = tuple(SCHEMA.names)


def data(ids: Iterable[int], *, cat: str | None = None, v: int = 0) -> pa.Table:
    """Rows with ``ids``; ``cat`` cycles a, b, c unless given; ``v`` = id + ``v``."""
    ids = list(ids)
    return pa.table(
        {
            "id": ids,
            "cat": [cat if cat is not None else "abc"[i % 3] for i in ids],
            "v": [i + v for i in ids],
            "f": [None if i % 5 == 4 else float(i) / 4 for i in ids],
        },
        schema=SCHEMA,
    )


def new_table(
    warehouse: Path,
    format_version: int,
    *,
    name: str = "t",
    catalog: Catalog | None = None,
    **properties: str,
) -> Table:
    cat = catalog or make_catalog("sql", warehouse)
    return cat.create_table(
        f"db.{name}",
        SCHEMA,
        partition_by=["cat"],
        properties={"format-version": str(format_version), **properties},
    )


def set_mode(table: Table, mode: str) -> None:
    """Row-level changes by ``copy-on-write`` or ``merge-on-read``."""
    op = table.update_properties()
    for key in ("write.delete.mode", "write.update.mode", "write.merge.mode"):
        op = op.set(key, mode)
    op.commit()


def _common(table: Table) -> dict[str, Any]:
    return {"table_location": table.location(), "properties": table.properties(), "schema": table.schema()}


def equality_delete(table: Table, ids: Sequence[int], *, cat: str, insert: pa.Table | None = None) -> None:
    """One row delta: an equality delete of ``ids`` (on ``id``) in partition ``cat``, and
    ``insert``'s rows added in the same commit (they are not deleted: same sequence number)."""
    io = table.io()
    deletes = write_equality_deletes(
        io,
        spec=table.spec(),
        equality_ids=["id"],
        data=pa.table({"id": pa.array(list(ids), pa.int64())}),
        partition=(cat,),
        **_common(table),
    )
    op = table.new_row_delta()
    for delete in deletes:
        op.add_deletes(delete)
    if insert is not None:
        for file in write_data_files(io, spec=table.spec(), data=insert, **_common(table)):
            op.add_rows(file)
    op.commit()


def add_rows_and_delete_some(table: Table, rows: pa.Table, positions: Sequence[int]) -> list[DataFile]:
    """One row delta adding ``rows`` (one partition) as data files and deleting ``positions``
    of the first file in the same commit (a deletion vector in v3, a position delete file in
    v2)."""
    io = table.io()
    files = write_data_files(io, spec=table.spec(), data=rows, **_common(table))
    first = files[0]
    deletes: list[DeleteFile]
    if table.format_version() >= 3:
        deletes = write_deletion_vectors(
            io,
            table_location=table.location(),
            properties=table.properties(),
            deletes={first: list(positions)},
        )
    else:
        deletes = write_position_deletes(
            io,
            spec=table.spec(),
            deletes={first.file_path: list(positions)},
            partition=first.partition,
            **_common(table),
        )
    op = table.new_row_delta()
    for file in files:
        op.add_rows(file)
    for delete in deletes:
        op.add_deletes(delete)
    op.commit()
    return files


def compact_partition(table: Table, cat: str) -> bool:
    """Rewrite the live rows of partition ``cat`` into new files, removing its data and delete
    files (a ``replace`` snapshot). False when the partition has no files."""
    tasks = table.new_scan().filter(f"cat = '{cat}'").plan_files()
    if not tasks:
        return False
    rows = table.new_scan().filter(f"cat = '{cat}'").to_arrow()
    old: dict[tuple[str, int | None], Any] = {}
    for task in tasks:
        old[(task.file.file_path, None)] = task.file
        for delete in task.deletes:
            old[(delete.file_path, delete.content_offset)] = delete
    new = (
        write_data_files(table.io(), spec=table.spec(), data=rows, **_common(table)) if rows.num_rows else []
    )
    current = table.current_snapshot()
    assert current is not None
    op = table.new_rewrite().validate_from_snapshot(current.snapshot_id)
    op.rewrite_files(list(old.values()), list(new)).commit()
    return True


def counter(
    rows: pa.Table | list[dict[str, Any]], columns: Sequence[str] = COLUMNS
) -> Counter[tuple[Any, ...]]:
    """The rows as a multiset of value tuples (NaN-free data: plain equality is right)."""
    listed = rows.to_pylist() if isinstance(rows, pa.Table) else rows
    return Counter(tuple(row[c] for c in columns) for row in listed)


def changes_by_ordinal(
    changes: pa.Table, columns: Sequence[str] = COLUMNS
) -> dict[int, dict[str, Counter[tuple[Any, ...]]]]:
    """Per change ordinal, per change type, the multiset of rows."""
    result: dict[int, dict[str, Counter[tuple[Any, ...]]]] = {}
    for row in changes.to_pylist():
        kinds = result.setdefault(row["_change_ordinal"], {})
        kinds.setdefault(row["_change_type"], Counter())[tuple(row[c] for c in columns)] += 1
    return result


def _rows_at(table: Table, snapshot_id: int | None, row_filter: Expression | str | None) -> pa.Table:
    if snapshot_id is None or table.metadata.snapshot_by_id(snapshot_id) is None:
        return pa.table({name: pa.array([], SCHEMA.field(name).type) for name in COLUMNS})
    scan = table.new_scan().use_snapshot(snapshot_id)
    if row_filter is not None:
        scan = scan.filter(row_filter)
    return scan.to_arrow()


def expected_changes(
    table: Table,
    snapshot_id: int,
    row_filter: Expression | str | None = None,
    columns: Sequence[str] = COLUMNS,
) -> tuple[Counter[tuple[Any, ...]], Counter[tuple[Any, ...]]]:
    """The oracle for one snapshot: the rows of its parent and its own rows (matching
    ``row_filter``), as multisets, read by full time-travel scans. An expired (or absent)
    parent reads as empty."""
    snapshot = table.metadata.snapshot_by_id(snapshot_id)
    assert snapshot is not None
    before = counter(_rows_at(table, snapshot.parent_snapshot_id, row_filter), columns)
    after = counter(_rows_at(table, snapshot_id, row_filter), columns)
    return before, after
