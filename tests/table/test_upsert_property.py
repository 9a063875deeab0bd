"""``table.upsert`` / ``delete`` / ``update`` against a plain Python model, on random change sets.

Each example builds a small table in a few appends (files whose key ranges overlap), then
runs random upserts (keys new and existing, rows with null keys, on one long key, one string
key or both), deletes and updates, and after each compares the table row for row with a dict
model. On v2 copy-on-write, v2 merge-on-read (position deletes) and v3 merge-on-read
(deletion vectors): later changes meet the deletes earlier ones wrote.
"""

from __future__ import annotations

import datetime as dt
import re
import tempfile
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icefloe import Table
from icefloe.errors import ValidationError
from icefloe.spec.conversions.binary import from_bytes
from icefloe.spec.types import IntegerType
from icefloe.table.rows.upsert_keys import IN_LIMIT
from support.catalogs import make_catalog

SCHEMA = pa.schema([("k", pa.int64()), ("s", pa.string()), ("v", pa.int32())])
KEYS = {"long": ("k",), "string": ("s",), "pair": ("k", "s")}
# Strings whose code point (UTF-8 byte) order differs from a case-insensitive or locale order,
# and longer ones whose bounds are truncated (to 16 characters by default).
STRINGS = [
    "",
    "A",
    "Z",
    "a",
    "ab",
    "b",
    "z",
    "é",
    "ü",
    "中",
    "a\u0301",
    "k" * 16 + "a",
    "k" * 16 + "b",
    "k" * 17,
]
CONFIGS = {
    "v2-cow": {"format-version": "2", "write.merge.mode": "copy-on-write"},
    "v2-mor": {"format-version": "2", "write.merge.mode": "merge-on-read"},
    "v3-mor": {"format-version": "3", "write.merge.mode": "merge-on-read"},
}

Row = tuple[Any, Any, Any]


def _key_values(kind: str) -> st.SearchStrategy[tuple[Any, ...]]:
    ints, strings = st.integers(0, 24), st.sampled_from(STRINGS)
    if kind == "long":
        return st.tuples(ints)
    if kind == "string":
        return st.tuples(strings)
    return st.tuples(ints, strings)


def _rows(kind: str, keys: list[tuple[Any, ...]], values: list[int], null_keys: int) -> list[Row]:
    """Rows for ``keys`` (one each, the other key column free), then rows with a null key."""
    out: list[Row] = []
    for i, key in enumerate(keys):
        fields = dict(zip(KEYS[kind], key, strict=True))
        out.append((fields.get("k", i), fields.get("s", f"x{i}"), values[i % len(values)]))
    for i in range(null_keys):
        column = KEYS[kind][i % len(KEYS[kind])]
        out.append((None if column == "k" else i, None if column == "s" else "n", values[i % len(values)]))
    return out


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[str, list[list[Row]], list[tuple[str, Any]]]:
    kind = draw(st.sampled_from(sorted(KEYS)))
    keys = _key_values(kind)
    values = st.lists(st.integers(-50, 50), min_size=1, max_size=8)
    table_keys = draw(st.lists(keys, unique=True, max_size=14))
    rows = _rows(kind, table_keys, draw(values), draw(st.integers(0, 2)))
    cuts = sorted(draw(st.lists(st.integers(0, len(rows)), max_size=2)))
    appends = [rows[a:b] for a, b in zip([0, *cuts], [*cuts, len(rows)], strict=True)]
    ops: list[tuple[str, Any]] = []
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["upsert", "upsert", "delete", "update"]))
        if op == "upsert":
            change = _rows(
                kind, draw(st.lists(keys, unique=True, max_size=10)), draw(values), draw(st.integers(0, 1))
            )
            ops.append(("upsert", change))
        else:
            ops.append((op, draw(st.integers(-50, 50))))
    return kind, appends, ops


def _table_rows(table: Table) -> list[Row]:
    rows = table.new_scan().to_arrow().to_pylist()
    return sorted(((r["k"], r["s"], r["v"]) for r in rows), key=repr)


def _arrow(rows: list[Row]) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(SCHEMA.names, r, strict=True)) for r in rows], schema=SCHEMA)


def _key(kind: str, row: Row) -> tuple[Any, ...] | None:
    key = tuple(row[SCHEMA.names.index(c)] for c in KEYS[kind])
    return None if any(v is None for v in key) else key


def _upsert_model(kind: str, model: list[Row], change: list[Row]) -> tuple[list[Row], int]:
    incoming = {_key(kind, r): r for r in change if _key(kind, r) is not None}
    kept = [r for r in model if _key(kind, r) not in incoming]
    return kept + change, len(model) - len(kept)


@pytest.mark.parametrize("config", sorted(CONFIGS))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=scenarios())
def test_row_changes_match_the_model(config: str, scenario: tuple[str, list[list[Row]], list[Any]]) -> None:
    kind, appends, ops = scenario
    with tempfile.TemporaryDirectory() as warehouse:
        catalog = make_catalog("memory", warehouse)
        properties = {**CONFIGS[config]}
        mode = properties["write.merge.mode"]
        properties |= {"write.delete.mode": mode, "write.update.mode": mode}
        table = catalog.create_table("db.t", SCHEMA, properties=properties)
        model: list[Row] = []
        for rows in appends:
            if rows:
                table.append(_arrow(rows))
                model += rows
        for op, arg in ops:
            if op == "upsert":
                model, updated = _upsert_model(kind, model, arg)
                result = table.upsert(_arrow(arg), on=list(KEYS[kind]))
                assert (result.rows_updated, result.rows_inserted) == (updated, len(arg) - updated)
            elif op == "delete":
                table.delete(f"v < {arg}")
                model = [r for r in model if r[2] is None or r[2] >= arg]
            else:
                table.update(where=f"v > {arg}", new_values={"v": 99})
                model = [(k, s, 99) if v is not None and v > arg else (k, s, v) for k, s, v in model]
            assert _table_rows(table) == sorted(model, key=repr), (op, arg)
        catalog.backend.close()


@pytest.mark.parametrize("kind", sorted(KEYS))
def test_a_duplicate_source_key_fails_naming_it(kind: str, tmp_path: Any) -> None:
    catalog = make_catalog("memory", tmp_path)
    table = catalog.create_table("db.t", SCHEMA, properties={"write.merge.mode": "merge-on-read"})
    table.append(_arrow([(1, "a", 1), (2, "b", 2)]))
    before = table.current_snapshot()
    change = _arrow([(2, "b", 20), (3, "c", 30), (2, "b", 21)])
    named = {"long": "{'k': 2}", "string": "{'s': 'b'}", "pair": "{'k': 2, 's': 'b'}"}[kind]
    with pytest.raises(ValidationError, match=re.escape(f"key {named} more than once")):
        table.upsert(change, on=list(KEYS[kind]))
    assert table.current_snapshot() == before  # nothing committed
    assert _table_rows(table) == [(1, "a", 1), (2, "b", 2)]


@pytest.mark.parametrize("column", ["d", "t"])
def test_upsert_on_a_date_or_timestamp_key(column: str, tmp_path: Any) -> None:
    """Temporal keys: their bounds decode to days / microseconds, compared with the values'."""
    schema = pa.schema([("d", pa.date32()), ("t", pa.timestamp("us")), ("v", pa.int32())])
    day, micros = dt.date(2024, 1, 1), dt.datetime(2024, 1, 1)

    def table_of(offsets: list[int], v: int) -> pa.Table:
        return pa.table(
            {
                "d": [day + dt.timedelta(days=i) for i in offsets],
                "t": [micros + dt.timedelta(microseconds=7 * i) for i in offsets],
                "v": [v] * len(offsets),
            },
            schema=schema,
        )

    catalog = make_catalog("memory", tmp_path)
    table = catalog.create_table("db.t", schema, properties={"write.merge.mode": "merge-on-read"})
    table.append(table_of([0, 1, 2], 1))
    table.append(table_of([10, 11, 12], 1))
    result = table.upsert(table_of([2, 5, 10], 2), on=[column])
    assert (result.rows_updated, result.rows_inserted) == (2, 1)
    got = sorted((r["d"], r["v"]) for r in table.new_scan().to_arrow().to_pylist())
    want = sorted(
        [(day + dt.timedelta(days=i), 1) for i in (0, 1, 11, 12)]
        + [(day + dt.timedelta(days=i), 2) for i in (2, 5, 10)]
    )
    assert got == want


def test_the_bounds_of_every_key_column_decide_which_files_are_read(tmp_path: Any) -> None:
    """A ``(k, day)`` key: three files hold the same k range on days 1, 2 and 3. Keys of days
    1 and 3 span the middle file's k and day ranges (more keys than the filter lists one by
    one, so planning keeps it), yet no key can be in it: it is never opened (gone from storage
    here) and gets no deletes."""
    schema = pa.schema([("k", pa.int64()), ("day", pa.int32()), ("v", pa.int32())])
    catalog = make_catalog("memory", tmp_path)
    table = catalog.create_table(
        "db.t", schema, properties={"format-version": "3", "write.merge.mode": "merge-on-read"}
    )
    n = 2000
    for day in (1, 2, 3):
        table.append(pa.table({"k": range(n), "day": [day] * n, "v": [0] * n}, schema=schema))
    files = {t.file.file_path: t.file for t in table.new_scan().plan_files()}
    (middle,) = [path for path, file in files.items() if from_bytes(IntegerType(), file.lower_bounds[2]) == 2]
    table.io().delete(middle)
    keys = IN_LIMIT + 500
    change = pa.table(
        {"k": [i % n for i in range(keys)], "day": [1 if i % 2 else 3 for i in range(keys)], "v": [7] * keys},
        schema=schema,
    )
    result = table.upsert(change, on=["k", "day"])
    assert (result.rows_updated, result.rows_inserted) == (keys, 0)
    deleted = {d.referenced_data_file for t in table.refresh().new_scan().plan_files() for d in t.deletes}
    assert deleted == set(files) - {middle}
