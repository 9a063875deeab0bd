"""Changelog scans over random histories, checked against an independent oracle.

Each history mixes appends, copy-on-write and merge-on-read deletes and upserts (position
deletes in v2, deletion vectors in v3), overwrites, equality deletes committed with inserts,
rows added and deleted by one commit, and compactions (``replace`` snapshots). For every
snapshot of the changelog, the rows of the snapshot and of its parent are read by full
time-travel scans, and:

- every DELETE row was live in the parent, and parent - DELETEs + INSERTs = the snapshot
  (as multisets: the raw changelog accounts for every row, carry-overs included);
- with carry-overs removed, DELETEs = parent - snapshot and INSERTs = snapshot - parent
  (all columns selected: carry-overs are equal whole rows);
- every row carries its snapshot's ordinal and id; ``replace`` snapshots change nothing and
  have no ordinal.

The same holds with a filter (partition and metrics pruning, residuals) and a projection.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pyarrow.compute as pc
import pytest

from icefloe import Table
from scan.changelog_helpers import (
    COLUMNS,
    add_rows_and_delete_some,
    changes_by_ordinal,
    compact_partition,
    data,
    equality_delete,
    expected_changes,
    new_table,
    set_mode,
)


def _current_ids(table: Table) -> list[int]:
    if table.current_snapshot() is None:
        return []
    ids: list[int] = table.new_scan().select("id").to_arrow().column("id").to_pylist()
    return sorted(ids)


def _random_history(table: Table, rng: random.Random, steps: int) -> list[str]:
    """Commit ``steps`` random operations; returns their names (for failure messages)."""
    row_level = table.format_version() >= 2
    next_id = 0
    done: list[str] = []
    kinds = ["append", "delete", "upsert", "overwrite", "compact"]
    if row_level:
        kinds += ["equality", "same-commit"]
    for step in range(steps):
        kind = "append" if step < 2 else rng.choice(kinds)
        if kind in ("delete", "upsert") and row_level:
            mode = rng.choice(["copy-on-write", "merge-on-read"])
            set_mode(table, mode)
            kind = f"{kind}/{mode}"
        ids = _current_ids(table)
        if kind == "append" or not ids:
            n = rng.randint(1, 7)
            table.append(data(range(next_id, next_id + n)))
            next_id += n
            kind = "append"
        elif kind.startswith("delete"):
            victims = rng.sample(ids, k=min(len(ids), rng.randint(1, 3)))
            table.delete(f"id IN ({', '.join(map(str, victims))})")
        elif kind.startswith("upsert"):
            changed = rng.sample(ids, k=min(len(ids), rng.randint(1, 3)))
            rows = data([*changed, next_id], v=100 * (step + 1))
            next_id += 1
            table.upsert(rows, on=["id"])
        elif kind == "overwrite":
            cat = rng.choice("abc")
            table.overwrite(data(range(next_id, next_id + 2), cat=cat, v=7), where=f"cat = '{cat}'")
            next_id += 2
        elif kind == "compact":
            compact_partition(table, rng.choice("abc"))
        elif kind == "equality":
            cat = rng.choice("abc")
            in_cat = [i for i in ids if "abc"[i % 3] == cat] or ids[:1]
            victims = [*rng.sample(in_cat, k=min(len(in_cat), 2)), 10000 + step]
            reinserted = data(victims[:1], cat=cat, v=1000 * (step + 1)) if rng.random() < 0.5 else None
            equality_delete(table, victims, cat=cat, insert=reinserted)
        elif kind == "same-commit":
            cat = rng.choice("abc")
            n = rng.randint(2, 5)
            add_rows_and_delete_some(table, data(range(next_id, next_id + n), cat=cat), [0, n - 1])
            next_id += n
        done.append(kind)
    return done


def check_changelog(
    table: Table, row_filter: str | None = None, columns: Sequence[str] = COLUMNS, history: object = None
) -> int:
    """Check the whole changelog of ``table`` against the oracle; returns the rows checked."""
    scan = table.new_incremental_changelog_scan()
    if row_filter is not None:
        scan = scan.filter(row_filter)
    if tuple(columns) != COLUMNS:
        scan = scan.select(*columns)
    raw_table = scan.to_arrow()
    raw = changes_by_ordinal(raw_table, columns)
    clean = changes_by_ordinal(scan.remove_carryovers().to_arrow(), columns)
    snapshots = scan.snapshots()
    assert len(raw_table) == scan.count()
    # Every row is tagged with its snapshot.
    for ordinal, snapshot in enumerate(snapshots):
        rows = raw_table.filter(pc.equal(raw_table.column("_change_ordinal"), ordinal))
        assert set(rows.column("_commit_snapshot_id").to_pylist()) <= {snapshot.snapshot_id}
    ordinals = raw_table.column("_change_ordinal").to_pylist()
    assert ordinals == sorted(ordinals), "rows come in ordinal order"
    for ordinal, snapshot in enumerate(snapshots):
        before, after = expected_changes(table, snapshot.snapshot_id, row_filter, columns)
        deleted = raw.get(ordinal, {}).get("DELETE", Counter())
        inserted = raw.get(ordinal, {}).get("INSERT", Counter())
        context = f"snapshot {ordinal} ({snapshot.operation}) of {history}"
        assert not (deleted - before), f"{context}: deleted rows that were not live"
        assert before - deleted + inserted == after, context
        if tuple(columns) == COLUMNS:
            # (Carry-overs are whole rows: projected, an update can look like one.)
            assert clean.get(ordinal, {}).get("DELETE", Counter()) == before - after, context
            assert clean.get(ordinal, {}).get("INSERT", Counter()) == after - before, context
    for snapshot in table.snapshots():
        if snapshot.operation == "replace":
            assert snapshot not in snapshots
            before, after = expected_changes(table, snapshot.snapshot_id, row_filter, columns)
            assert before == after
    return len(raw_table)


@pytest.mark.parametrize("format_version", [1, 2, 3], ids=lambda v: f"v{v}")
@pytest.mark.parametrize("seed", range(6))
def test_random_histories_match_time_travel_diffs(tmp_path: Path, format_version: int, seed: int) -> None:
    rng = random.Random(1000 * format_version + seed)
    table = new_table(tmp_path, format_version)
    history = _random_history(table, rng, steps=12)
    assert check_changelog(table, history=history) > 0
    check_changelog(table, "cat = 'a'", history=history)
    check_changelog(table, "v > 10 AND v < 1000", columns=("id", "cat"), history=history)
