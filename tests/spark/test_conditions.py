"""Spark SQL conditions (``icefloe.spark.rows.conditions``): the Iceberg filter pushed from a Spark
expression must be true, false and unknown on exactly the rows where Spark finds the expression
so (when it converts wholly), and true wherever Spark finds it true (when only a part converts).

Judged against Spark itself: one Spark job computes every expression on every row; icefloe's
scan (planning, metrics pruning and the residual) selects the rows of the pushed filter and of
its negation. The rows carry the cases where Spark and Iceberg differ: nulls, NaN, infinities,
float literals that a float column cannot hold, and zone-less timestamps.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from icefloe import Catalog, Table
from icefloe import spark as isp
from icefloe.expressions import Expression, not_
from icefloe.expressions.model import AlwaysTrue
from icefloe.spark.rows.conditions import merge_target_filter, table_condition

UTC = dt.UTC
SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("i", pa.int32()),
        pa.field("f", pa.float32()),
        pa.field("d", pa.float64()),
        pa.field("dec", pa.decimal128(10, 2)),
        pa.field("s", pa.string()),
        pa.field("day", pa.date32()),
        pa.field("ts", pa.timestamp("us")),
        pa.field("tstz", pa.timestamp("us", tz="UTC")),
        pa.field("b", pa.bool_()),
        pa.field("st", pa.struct([pa.field("x", pa.int32())])),
    ]
)
NAN = float("nan")
INF = float("inf")


def _row(
    id: int, i: Any, f: Any, d: Any, dec: Any, s: Any, day: Any, ts: Any, tstz: Any, b: Any, x: Any
) -> dict:
    return {
        "id": id, "i": i, "f": f, "d": d, "dec": dec, "s": s, "day": day, "ts": ts, "tstz": tstz, "b": b,
        "st": None if x == "null" else {"x": x},
    }  # fmt: skip


ROWS = [
    _row(1, 1, 1.5, 1.1, Decimal("1.10"), "apple", dt.date(2024, 1, 1), dt.datetime(2024, 1, 1, 0, 0),
         dt.datetime(2024, 1, 1, 0, 0, tzinfo=UTC), True, 1),
    _row(2, 2, NAN, NAN, Decimal("2.00"), "apricot", dt.date(2024, 1, 2), dt.datetime(2024, 1, 1, 23, 30),
         dt.datetime(2024, 1, 1, 23, 30, tzinfo=UTC), False, 2),
    _row(3, None, None, None, None, None, None, None, None, None, None),
    _row(4, -5, -INF, INF, Decimal("-3.25"), "banana", dt.date(2023, 12, 31), dt.datetime(2023, 12, 31, 12, 0),
         dt.datetime(2023, 12, 31, 23, 0, tzinfo=UTC), True, "null"),
    _row(5, 100, 1.1, -0.0, Decimal("100.00"), "", dt.date(2024, 2, 29), dt.datetime(2024, 2, 29, 6, 0),
         dt.datetime(2024, 2, 29, 6, 0, tzinfo=UTC), False, 5),
    _row(6, 2147483647, 0.0, 2.5, Decimal("0.01"), "a%b_c", dt.date(1969, 12, 31), dt.datetime(1969, 12, 31, 23, 59),
         dt.datetime(1970, 1, 1, 0, 30, tzinfo=UTC), None, -1),
    _row(7, -2147483648, 16777216.0, 1e300, Decimal("99999999.99"), "Apple", dt.date(2024, 1, 1),
         dt.datetime(2024, 1, 1, 0, 0, 0, 1), dt.datetime(2024, 6, 1, 22, 0, tzinfo=UTC), True, None),
]  # fmt: skip

# Expressions whose every part converts: pushed must equal Spark's truth, row by row.
EXACT = [
    "id = 3", "id <> 3", "id != 3", "5 > id", "id BETWEEN 2 AND 5", "id NOT BETWEEN 2 AND 5",
    "id IN (1, 4, 7)", "id NOT IN (1, 4)", "i > 0", "i <= 2147483647", "i = 2147483647",
    "f > 1", "f < 1", "f = 1.5", "f >= 0", "f <> 1.5", "f IN (1.5, 0)", "f NOT IN (1.5)", "isnan(f)",
    "NOT isnan(d)", "d > 1.1", "d <= 1.1", "d = 1.1", "d = 0", "d > 1e299", "d <> 2.5",
    "dec > 1.1", "dec = 100", "dec < -3.2", "dec >= 0.01",
    "s = 'apple'", "s <> 'apple'", "s LIKE 'ap%'", "s NOT LIKE 'ap%'", "s LIKE 'apple'", "s > 'b'",
    "s IS NULL", "s IS NOT NULL", "s IN ('apple', 'banana')",
    "day = '2024-01-01'", "day > DATE '2024-01-01'", "day < '1970-01-01'",
    "ts >= '2024-01-01'", "ts < TIMESTAMP_NTZ '2024-01-01 00:00:00.000001'", "ts = '2024-01-01T00:00:00'",
    "tstz >= '2024-01-01 00:00:00'", "tstz < TIMESTAMP '2024-01-01T23:30:00Z'",
    "tstz > '2024-01-01T00:00:00+01:00'", "tstz <= '1970-01-01 00:30'",
    "b", "NOT b", "b = true", "b <> false", "st.x > 0", "st.x IS NULL", "ID = 3", "`st`.`x` = 2",
    "id = 3 OR (f > 1 AND NOT d < 2)", "NOT (s = 'apple' OR i > 10)", "(id < 3) AND NOT (f = 1.5)",
    "i <=> 2", "NOT (d <=> 2.5)", "true", "NOT false",
]  # fmt: skip

# Expressions of which only part (or nothing) converts: pushed must hold wherever Spark's does.
PARTIAL = [
    "id % 2 = 0", "id % 2 = 0 AND s LIKE 'a%'", "upper(s) = 'APPLE'", "cast(i AS bigint) + 1 > 3 AND day >= '2024-01-01'",
    "f > 1.1", "f = 1.1", "i > 1.5", "i = 3000000000", "d = d", "s = 'it''s'", "s LIKE 'a_%'",
    "dec = 1.105", "cast(i AS string) = '2'", "ts > TIMESTAMP '2024-01-01 00:00:00'", "s ILIKE 'APP%'",
    "coalesce(i, 0) = 0 OR id = 1", "i IN (1, NULL)", "length(s) > 4 OR f < 0",
]  # fmt: skip


@pytest.fixture(scope="module")
def conditions_table(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Table:
    from support.catalogs import make_catalog

    catalog: Catalog = make_catalog("sql", tmp_path_factory.mktemp("conditions"))
    table = catalog.create_table("db.conditions", SCHEMA, partition_by=["day(tstz)", "b"])
    data = pa.Table.from_pylist(ROWS, schema=SCHEMA)
    for start in range(0, len(ROWS), 2):  # several files per partition: metrics prune too
        table.append(data.slice(start, 2))
    return table


def _spark_truths(spark: Any, table: Table, expressions: list[str]) -> dict[str, dict[int, Any]]:
    frame = isp.read(spark, table)
    columns = ["id", *[f"({e}) AS c{n}" for n, e in enumerate(expressions)]]
    result: dict[str, dict[int, Any]] = {e: {} for e in expressions}
    for row in frame.selectExpr(*columns).collect():
        for n, expression in enumerate(expressions):
            result[expression][row["id"]] = row[f"c{n}"]
    return result


def _ids(table: Table, expr: Expression) -> set[int]:
    return set(table.new_scan().filter(expr).select("id").to_arrow().column("id").to_pylist())


def test_exact_conditions_agree_with_spark_on_every_row(spark: Any, conditions_table: Table) -> None:
    spark.conf.set("spark.sql.session.timeZone", "Europe/Amsterdam")  # zone-less strings read here
    try:
        truths = _spark_truths(spark, conditions_table, EXACT)
        schema = conditions_table.schema()
        for expression in EXACT:
            condition = table_condition(spark, schema, expression)
            assert condition.exact, expression
            want_true = {i for i, t in truths[expression].items() if t is True}
            want_false = {i for i, t in truths[expression].items() if t is False}
            assert _ids(conditions_table, condition.pushed) == want_true, expression
            assert _ids(conditions_table, not_(condition.pushed)) == want_false, expression
    finally:
        spark.conf.unset("spark.sql.session.timeZone")


def test_partial_conditions_keep_every_row_spark_selects(spark: Any, conditions_table: Table) -> None:
    truths = _spark_truths(spark, conditions_table, PARTIAL)
    schema = conditions_table.schema()
    pruned_somewhere = False
    for expression in PARTIAL:
        condition = table_condition(spark, schema, expression)
        assert not condition.exact, expression
        kept = _ids(conditions_table, condition.pushed)
        want = {i for i, t in truths[expression].items() if t is True}
        assert want <= kept, expression
        pruned_somewhere |= len(kept) < len(ROWS)
    assert pruned_somewhere  # the convertible parts did prune


def test_what_converts(spark: Any, conditions_table: Table) -> None:
    schema = conditions_table.schema()
    assert str(table_condition(spark, schema, "id % 2 = 0 AND s = 'x'").pushed) == "s = 'x'"
    assert isinstance(table_condition(spark, schema, "id % 100 = 0").pushed, AlwaysTrue)
    # A column Spark cannot resolve is Spark's to report, when the rows are filtered.
    assert not table_condition(spark, schema, "nope = 1").exact
    merge = merge_target_filter(
        spark,
        schema,
        "t.id = s.id AND t.s = 'apple' AND s.v > 1 AND i > 0",
        target_alias="t",
        source_alias="s",
        source_columns=["id", "v", "i"],
    )
    assert str(merge) == "s = 'apple'"  # i is ambiguous (the source has one): Spark decides
