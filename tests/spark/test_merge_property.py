"""Spark ``MERGE INTO`` (through ``isp.sql``) and Python ``table.upsert`` against a plain model,
on random change sets.

Each example builds a small table in a few appends (files whose key ranges overlap, a row with
a null key), then runs random MERGE statements: the plain upsert shape (``WHEN MATCHED THEN
UPDATE SET * WHEN NOT MATCHED THEN INSERT *``) and statements made of a random choice of
conditional clauses (matched deletes and updates, conditional inserts, ``NOT MATCHED BY
SOURCE`` deletes and updates), evaluated by the model in Spark's order: the first clause whose
condition holds acts, a null condition does not hold, a null key matches nothing. A twin table
takes every plain upsert through ``table.upsert`` instead and every other statement through
the same Spark MERGE, so Python's deletes meet Spark's reads and the other way round. After
each statement both tables must hold the model's rows, on v2 copy-on-write, v2 merge-on-read
(position deletes) and v3 merge-on-read (deletion vectors).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icefloe import Catalog, Table
from icefloe import spark as isp

SCHEMA = pa.schema([("k", pa.int64()), ("s", pa.string()), ("v", pa.int32())])
CONFIGS = {
    "v2-cow": {"format-version": "2", "mode": "copy-on-write"},
    "v2-mor": {"format-version": "2", "mode": "merge-on-read"},
    "v3-mor": {"format-version": "3", "mode": "merge-on-read"},
}

Row = tuple[Any, Any, Any]  # (k, s, v)


def _lt(value: Any, bound: Any) -> bool | None:
    """SQL's ``value < bound``: None (unknown, which does not hold) when either is null."""
    return None if value is None or bound is None else value < bound


def _gt(value: Any, bound: Any) -> bool | None:
    return None if value is None or bound is None else value > bound


@dataclasses.dataclass(frozen=True)
class Clause:
    """One MERGE clause and what the model does for it. ``holds`` and ``act`` take
    ``(target, source)``; the side a clause kind has not is None. ``act`` gives the row to
    keep, or None for a delete."""

    kind: str  # "matched", "not matched", "not matched by source"
    sql: str
    holds: Callable[[Row | None, Row | None], bool | None]
    act: Callable[[Row | None, Row | None], Row | None]


# The clauses a statement is drawn from, in the order a statement lists them.
CLAUSES = [
    Clause(
        "matched", "WHEN MATCHED AND s.v < -30 THEN DELETE", lambda t, s: _lt(s[2], -30), lambda t, s: None
    ),
    Clause(
        "matched",
        "WHEN MATCHED AND t.v > s.v THEN UPDATE SET v = t.v - s.v",
        lambda t, s: _gt(t[2], s[2]),
        lambda t, s: (t[0], t[1], t[2] - s[2]),
    ),
    Clause(
        "matched", "WHEN MATCHED AND s.v > 20 THEN UPDATE SET *", lambda t, s: _gt(s[2], 20), lambda t, s: s
    ),
    Clause(
        "matched", "WHEN MATCHED THEN UPDATE SET s = s.s", lambda t, s: True, lambda t, s: (t[0], s[1], t[2])
    ),
    Clause(
        "not matched", "WHEN NOT MATCHED AND s.v > 0 THEN INSERT *", lambda t, s: _gt(s[2], 0), lambda t, s: s
    ),
    Clause(
        "not matched",
        "WHEN NOT MATCHED THEN INSERT (k, s, v) VALUES (s.k, 'new', s.v)",
        lambda t, s: True,
        lambda t, s: (s[0], "new", s[2]),
    ),
    Clause(
        "not matched by source",
        "WHEN NOT MATCHED BY SOURCE AND t.v > 40 THEN DELETE",
        lambda t, s: _gt(t[2], 40),
        lambda t, s: None,
    ),
    Clause(
        "not matched by source",
        "WHEN NOT MATCHED BY SOURCE AND t.v < -40 THEN UPDATE SET v = 0",
        lambda t, s: _lt(t[2], -40),
        lambda t, s: (t[0], t[1], 0),
    ),
]
# The plain upsert, which table.upsert also does.
PLAIN = [
    Clause("matched", "WHEN MATCHED THEN UPDATE SET *", lambda t, s: True, lambda t, s: s),
    Clause("not matched", "WHEN NOT MATCHED THEN INSERT *", lambda t, s: True, lambda t, s: s),
]


def _rows(draw: st.DrawFn, keys: list[int | None], tag: str) -> list[Row]:
    """A row per key, each with its own value (a null now and then)."""
    value = st.one_of(st.none(), st.integers(-50, 50))
    values = draw(st.lists(value, min_size=len(keys), max_size=len(keys)))
    return [(k, f"{tag}{i}", v) for i, (k, v) in enumerate(zip(keys, values, strict=True))]


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[list[list[Row]], list[tuple[list[Clause], list[Row]]]]:
    table_keys: list[int | None] = draw(st.lists(st.integers(0, 30), unique=True, min_size=1, max_size=20))
    rows = _rows(draw, [*table_keys, None], "t")
    cut = draw(st.integers(1, len(rows)))
    appends = [rows[:cut], rows[cut:]]
    statements = []
    for number in range(draw(st.integers(2, 3))):
        # The first statement is the plain upsert, so that every example meets table.upsert.
        picked = draw(st.lists(st.sampled_from(range(len(CLAUSES))), unique=True, min_size=1, max_size=4))
        clauses = PLAIN if number == 0 else [CLAUSES[i] for i in sorted(picked)]
        source_keys: list[int | None] = draw(st.lists(st.integers(0, 40), unique=True, max_size=20))
        nulls: list[int | None] = [None] if draw(st.booleans()) else []
        statements.append((clauses, _rows(draw, [*source_keys, *nulls], f"s{number}-")))
    return appends, statements


def _first_acting(clauses: list[Clause], kind: str, t: Row | None, s: Row | None) -> Clause | None:
    return next((c for c in clauses if c.kind == kind and c.holds(t, s)), None)


def _merge_model(model: list[Row], source: list[Row], clauses: list[Clause]) -> list[Row]:
    by_key = {s[0]: s for s in source if s[0] is not None}  # a null key matches nothing
    out: list[Row] = []
    for t in model:
        s = by_key.get(t[0]) if t[0] is not None else None
        kind = "matched" if s is not None else "not matched by source"
        clause = _first_acting(clauses, kind, t, s)
        kept = t if clause is None else clause.act(t, s)
        if kept is not None:
            out.append(kept)
    target_keys = {t[0] for t in model if t[0] is not None}
    for s in source:
        if s[0] is None or s[0] not in target_keys:
            clause = _first_acting(clauses, "not matched", None, s)
            if clause is not None:
                out.append(clause.act(None, s))  # type: ignore[arg-type]
    return out


def _table_rows(table: Table) -> list[Row]:
    rows = table.new_scan().to_arrow().to_pylist()
    return sorted(((r["k"], r["s"], r["v"]) for r in rows), key=repr)


def _arrow(rows: list[Row]) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(SCHEMA.names, r, strict=True)) for r in rows], schema=SCHEMA)


_NAMES = itertools.count()


@pytest.mark.parametrize("config", sorted(CONFIGS))
@settings(
    max_examples=3,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(scenario=scenarios())
def test_spark_merge_and_python_upsert_match_the_model(
    spark: Any, catalog: Catalog, config: str, scenario: tuple[list[list[Row]], list[Any]]
) -> None:
    appends, statements = scenario
    mode = CONFIGS[config]["mode"]
    properties = {
        "format-version": CONFIGS[config]["format-version"],
        **{f"write.{kind}.mode": mode for kind in ("merge", "update", "delete")},
    }
    number = next(_NAMES)
    merged_name, twin_name = f"db.merged_{number}", f"db.twin_{number}"
    merged = catalog.create_table(merged_name, SCHEMA, properties=properties)
    twin = catalog.create_table(twin_name, SCHEMA, properties=properties)
    model: list[Row] = []
    for rows in appends:
        if rows:
            merged.append(_arrow(rows))
            twin.append(_arrow(rows))
            model += rows
    for clauses, source in statements:
        spark.createDataFrame(source, "k long, s string, v int").createOrReplaceTempView("source")
        text = " ".join(c.sql for c in clauses)
        model = _merge_model(model, source, clauses)
        isp.sql(spark, f"MERGE INTO {merged_name} t USING source s ON t.k = s.k {text}", catalog=catalog)
        if clauses is PLAIN:
            catalog.load_table(twin_name).upsert(_arrow(source), on=["k"])
        else:
            isp.sql(spark, f"MERGE INTO {twin_name} t USING source s ON t.k = s.k {text}", catalog=catalog)
        want = sorted(model, key=repr)
        assert _table_rows(catalog.load_table(merged_name)) == want, text
        assert _table_rows(catalog.load_table(twin_name)) == want, text
