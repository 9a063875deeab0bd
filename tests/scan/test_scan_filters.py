"""Scan filters, as SQL text and as expressions: every row the scan returns, and only those,
matches the filter, checked against the full table filtered in Python (SQL null semantics).

The sweeps run on the v2 table (filters do not depend on the format version); a few cases run
on every format version."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pyarrow.parquet as pq
import pytest

from icefloe import Table
from icefloe.expressions import (
    and_,
    equal,
    greater_than,
    greater_than_or_equal,
    is_in,
    is_null,
    less_than,
    less_than_or_equal,
    not_,
    not_equal,
    not_in,
    not_null,
    or_,
    starts_with,
)
from support.catalogs import local, sorted_rows

Row = dict[str, Any]
D1, D2, D3 = dt.date(2024, 1, 1), dt.date(2024, 1, 2), dt.date(2024, 1, 3)


def _nn(r: Row, column: str) -> bool:
    return r[column] is not None


# (SQL filter, the same in Python)
FILTERS: list[tuple[str, Callable[[Row], bool]]] = [
    ("id = 5", lambda r: r["id"] == 5),
    ("id == 5", lambda r: r["id"] == 5),
    ("id != 5", lambda r: r["id"] != 5),
    ("id <> 5", lambda r: r["id"] != 5),
    ("id < 10", lambda r: r["id"] < 10),
    ("id <= 10", lambda r: r["id"] <= 10),
    ("id > 70", lambda r: r["id"] > 70),
    ("id >= 70", lambda r: r["id"] >= 70),
    ("10 > id", lambda r: r["id"] < 10),
    ("id IN (1, 5, 64, 1000)", lambda r: r["id"] in (1, 5, 64)),
    ("id NOT IN (1, 2, 3)", lambda r: r["id"] not in (1, 2, 3)),
    ("id BETWEEN 10 AND 20", lambda r: 10 <= r["id"] <= 20),
    ("name IS NULL", lambda r: r["name"] is None),
    ("name IS NOT NULL", lambda r: r["name"] is not None),
    ("name = 'b'", lambda r: r["name"] == "b"),
    ("name != 'b'", lambda r: _nn(r, "name") and r["name"] != "b"),
    ("name LIKE 'a%'", lambda r: _nn(r, "name") and r["name"].startswith("a")),
    ("name NOT LIKE 'a%'", lambda r: _nn(r, "name") and not r["name"].startswith("a")),
    ("name IN ('a', 'c')", lambda r: r["name"] in ("a", "c")),
    ("day = '2024-01-02'", lambda r: r["day"] == D2),
    ("day = DATE '2024-01-02'", lambda r: r["day"] == D2),
    ("day >= '2024-01-02'", lambda r: r["day"] >= D2),
    ("day IN ('2024-01-01', '2024-01-03')", lambda r: r["day"] in (D1, D3)),
    ("day != '2024-01-01'", lambda r: r["day"] != D1),
    ("ts >= '2024-01-02T05:00:00'", lambda r: r["ts"] >= dt.datetime(2024, 1, 2, 5)),
    ("ts < '2024-01-01 10:00:00'", lambda r: r["ts"] < dt.datetime(2024, 1, 1, 10)),
    ("ts = TIMESTAMP '2024-01-03 00:00:00'", lambda r: r["ts"] == dt.datetime(2024, 1, 3)),
    ("amount > '10.50'", lambda r: r["amount"] > Decimal("10.50")),
    ("amount = '12.50'", lambda r: r["amount"] == Decimal("12.50")),
    ("amount <= 5", lambda r: r["amount"] <= 5),
    ("amount < 2.5", lambda r: r["amount"] < Decimal("2.5")),
    ("score >= 30.5", lambda r: r["score"] >= 30.5),
    ("score < 1", lambda r: r["score"] < 1),
    ("id > 5 AND name = 'b'", lambda r: r["id"] > 5 and r["name"] == "b"),
    ("id < 3 OR id > 72", lambda r: r["id"] < 3 or r["id"] > 72),
    ("NOT (id < 70)", lambda r: not r["id"] < 70),
    ("NOT name = 'a'", lambda r: _nn(r, "name") and r["name"] != "a"),
    ("NOT name IS NULL", lambda r: r["name"] is not None),
    (
        "(id < 5 OR id > 70) AND NOT (name IS NULL) AND day <> '2024-01-02'",
        lambda r: (r["id"] < 5 or r["id"] > 70) and r["name"] is not None and r["day"] != D2,
    ),
    (
        "id > 5 and (name = 'a' or name = 'c') and not day = '2024-01-03'",
        lambda r: r["id"] > 5 and r["name"] in ("a", "c") and r["day"] != D3,
    ),
    ("id < 0", lambda r: False),
    ("id >= 0", lambda r: True),
]


@pytest.fixture(scope="module")
def all_rows(events_v2: Table) -> list[Row]:
    return sorted_rows(events_v2.new_scan().to_arrow())


@pytest.fixture(scope="module")
def rows_by_file(events_v2: Table) -> dict[str, list[Row]]:
    """The rows of each data file, read with pyarrow directly."""
    return {
        t.file.file_path: pq.read_table(str(local(t.file.file_path))).to_pylist()
        for t in events_v2.new_scan().plan_files()
    }


@pytest.mark.parametrize(("text", "expected"), FILTERS, ids=[f[0] for f in FILTERS])
def test_sql_filter(
    events_v2: Table,
    all_rows: list[Row],
    rows_by_file: dict[str, list[Row]],
    text: str,
    expected: Callable[[Row], bool],
) -> None:
    scan = events_v2.new_scan().filter(text)
    result = sorted_rows(scan.to_arrow())
    assert result == [r for r in all_rows if expected(r)]
    assert scan.count() == len(result)
    # Planning never drops a file holding a matching row.
    planned = {t.file.file_path for t in scan.plan_files()}
    needed = {path for path, file_rows in rows_by_file.items() if any(expected(r) for r in file_rows)}
    assert needed <= planned


EXPRESSIONS = [
    (equal("id", 5), "id = 5"),
    (not_equal("id", 5), "id != 5"),
    (less_than("id", 10), "id < 10"),
    (less_than_or_equal("id", 10), "id <= 10"),
    (greater_than("id", 70), "id > 70"),
    (greater_than_or_equal("id", 70), "id >= 70"),
    (is_in("id", [1, 5, 64]), "id IN (1, 5, 64)"),
    (not_in("id", [1, 2, 3]), "id NOT IN (1, 2, 3)"),
    (is_null("name"), "name IS NULL"),
    (not_null("name"), "name IS NOT NULL"),
    (starts_with("name", "a"), "name LIKE 'a%'"),
    (equal("day", "2024-01-02"), "day = '2024-01-02'"),
    (greater_than("amount", "10.50"), "amount > '10.50'"),
    (greater_than_or_equal("ts", "2024-01-02T05:00:00"), "ts >= '2024-01-02T05:00:00'"),
    (and_(greater_than("id", 5), equal("name", "b")), "id > 5 AND name = 'b'"),
    (or_(less_than("id", 3), greater_than("id", 72)), "id < 3 OR id > 72"),
    (not_(less_than("id", 70)), "NOT (id < 70)"),
]


@pytest.mark.parametrize(("expr", "text"), EXPRESSIONS, ids=[e[1] for e in EXPRESSIONS])
def test_expression_filter_equals_sql_filter(events_v2: Table, expr: Any, text: str) -> None:
    by_expr = sorted_rows(events_v2.new_scan().filter(expr).to_arrow())
    by_text = sorted_rows(events_v2.new_scan().filter(text).to_arrow())
    assert by_expr == by_text
    assert by_expr  # every case matches some rows (so that equality means something)


def test_filters_combine_with_and(events_v2: Table, all_rows: list[Row]) -> None:
    scan = events_v2.new_scan().filter("id > 10").filter(less_than("id", 20)).filter("name = 'a'")
    expected = [r for r in all_rows if 10 < r["id"] < 20 and r["name"] == "a"]
    assert sorted_rows(scan.to_arrow()) == expected
    assert scan.count() == len(expected)


def test_case_insensitive_filter(events_v2: Table) -> None:
    from icefloe.errors import InvalidFilterError

    with pytest.raises(InvalidFilterError, match="ID"):
        events_v2.new_scan().filter("ID < 3").to_arrow()
    result = events_v2.new_scan().case_sensitive(False).filter("ID < 3").select("ID").to_arrow()
    assert sorted(result.column("id").to_pylist()) == [0, 1, 2]


@pytest.mark.parametrize(
    "text",
    ["id < 10", "day = '2024-01-02' AND amount > '20'", "name IS NULL OR ts >= '2024-01-03T12:00:00'"],
)
def test_filters_on_every_format_version(events: Table, events_v2: Table, text: str) -> None:
    """The same rows in a v1, v2 and v3 table: the same answers (v2's are checked above)."""
    result = sorted_rows(events.new_scan().filter(text).to_arrow())
    assert result
    assert result == sorted_rows(events_v2.new_scan().filter(text).to_arrow())
    assert events.new_scan().filter(text).count() == len(result)
