"""icefloe.arrow.sql: Spark SQL expressions of rows on Arrow, without Spark. (What Spark itself
gives for the same expressions is checked in test_spark_sql_expressions.py.)"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings

from icefloe.arrow.sql import compile_expression
from icefloe.arrow.sql._types import type_name
from icefloe.errors import ExpressionEvaluationError, InvalidExpressionError, UnsupportedFeatureError
from support.row_expressions import ROWS, expressions, values_of

UTC = dt.UTC


def _values(text: str, rows: pa.Table = ROWS) -> list[Any]:
    return compile_expression(text, rows.schema, column="v").evaluate(rows).to_pylist()


def _type(text: str) -> str:
    return type_name(compile_expression(text, ROWS.schema, column="v").type)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1", "INT"),
        ("3000000000", "BIGINT"),
        ("99999999999999999999", "DECIMAL(20,0)"),
        ("-2147483648", "INT"),  # the sign is part of the literal
        ("1.50", "DECIMAL(3,2)"),
        ("0.001", "DECIMAL(3,3)"),
        ("1e3", "DOUBLE"),
        ("1L", "BIGINT"),
        ("1S", "SMALLINT"),
        ("1Y", "TINYINT"),
        ("1.5D", "DOUBLE"),
        ("1.5F", "FLOAT"),
        ("1.5BD", "DECIMAL(2,1)"),
        ("'a'", "STRING"),
        ("X'0A'", "BINARY"),
        ("DATE '2024-01-01'", "DATE"),
        ("TIMESTAMP '2024-01-01 00:00:00'", "TIMESTAMP"),
        ("TIMESTAMP_NTZ '2024-01-01 00:00:00'", "TIMESTAMP_NTZ"),
        ("NULL", "VOID"),
        ("i + l", "BIGINT"),
        ("i + 1.5", "DECIMAL(12,1)"),
        ("1 + 1.5", "DECIMAL(3,1)"),  # an integer literal next to a decimal: only its digits
        ("1L + 1.5", "DECIMAL(3,1)"),
        ("i / 2", "DOUBLE"),
        ("i div 2", "BIGINT"),
        ("price * price", "DECIMAL(21,4)"),
        ("price / 3", "DECIMAL(14,6)"),
        ("big + price", "DECIMAL(38,9)"),
        ("big * big", "DECIMAL(38,6)"),  # past 38 digits the scale gives way, down to 6
        ("price % 3", "DECIMAL(3,2)"),
        ("f + 1", "DOUBLE"),
        ("f * f", "FLOAT"),
        ("'1' + i", "BIGINT"),  # a string next to an integer is read as a BIGINT
        ("'1' + 1.5", "DOUBLE"),
        ("CASE WHEN b THEN 1 ELSE 'a' END", "BIGINT"),
        ("coalesce(i, l, 1.5)", "DECIMAL(21,1)"),
        ("round(price, 1)", "DECIMAL(10,1)"),
        ("round(price, -1)", "DECIMAL(9,0)"),
        ("floor(x)", "BIGINT"),
        ("ceil(price)", "DECIMAL(9,0)"),
        ("floor(x, 1)", "DECIMAL(17,1)"),
        ("length(s)", "INT"),
        ("concat(s, i)", "STRING"),
        ("concat(bin, bin)", "BINARY"),
        ("d + 1", "DATE"),
        ("datediff(d, d)", "INT"),
        ("greatest(i, l, 1.5)", "DECIMAL(21,1)"),
        ("nullif(i, l)", "INT"),
        ("coalesce(big, CAST(price AS DECIMAL(38,18)))", "DECIMAL(38,10)"),  # Spark 4 keeps integral digits
    ],
)
def test_types_are_sparks(text: str, expected: str) -> None:
    assert _type(text) == expected


def test_arithmetic_and_nulls() -> None:
    assert _values("l - 1")[:4] == [9, -2, None, -1]
    assert _values("i * 2", ROWS.slice(0, 4)) == [14, -6, 0, None]
    assert _values("x * 2")[:2] == [3.0, -0.0]
    assert _values("i / 2")[:3] == [3.5, -1.5, 0.0]  # always a double
    assert _values("i div 2")[:3] == [3, -1, 0]  # truncated
    assert _values("i % 2")[:3] == [1, -1, 0]  # the sign of the dividend
    assert _values("price * 2")[:3] == [Decimal("24.68"), Decimal("-0.10"), None]
    assert _values("price / 3")[0] == Decimal("4.113333")  # rounded half up at scale 6
    assert _values("-price")[1] == Decimal("0.05")
    assert _values("NULL + 1") == [None] * 6
    # zeros keep their sign (an IEEE double has two)
    assert [str(v) for v in _values("-0.0D", ROWS.slice(0, 1)) + _values("-x", ROWS.slice(1, 1))] == [
        "-0.0",
        "0.0",
    ]
    assert str(_values("x * 1", ROWS.slice(1, 1))[0]) == "-0.0"


def test_logic_is_three_valued() -> None:
    assert _values("b AND NULL") == [None, False, None, None, False, None]
    assert _values("b OR NULL") == [True, None, None, True, None, None]
    assert _values("NOT b") == [False, True, None, False, True, None]
    assert _values("i IN (7, NULL)")[:4] == [True, None, None, None]
    assert _values("i IN (7, 0)")[:4] == [True, False, True, None]
    assert _values("i <=> NULL")[3] is True


def test_nan_is_sparks() -> None:
    # NaN equals NaN and is above every number (Iceberg and IEEE leave it unordered).
    assert _values("x = x")[2] is True
    assert _values("x > 1e300D")[2] is True
    assert _values("greatest(x, 1D)")[2] != _values("greatest(x, 1D)")[2]  # NaN
    assert _values("least(x, 1D)")[2] == 1.0


def test_strings() -> None:
    assert _values("upper(s)")[3] == "STRASSE"  # Java's full case mapping, not Arrow's ẞ
    assert _values("lower(t)")[2] == "οδος"  # final sigma
    assert _values("lower(upper(s))")[3] == "straße"  # Spark drops the inner case mapping
    assert _values("trim(s)")[1] == "padded"
    assert _values("substring(s, -3, 2)")[0:2] == ["N", "ed"]  # from 3 before the end: NL has 2
    assert _values("substring(s, 0, 1)")[0] == "N"
    assert _values("substring(s, 2, -1)")[0] == ""
    assert _values("length(s)")[3] == 6
    assert _values("s || '!'")[:3] == ["NL!", " padded !", None]
    assert _values("replace(s, 'a', 'XX')")[3] == "strXXße"
    assert _values("'it''s'")[0] == "it's"  # Spark 4 reads a doubled quote as a quote
    assert _values("'a\\tb'")[0] == "a\tb"


def test_conditionals_evaluate_only_the_rows_that_reach_them() -> None:
    # i is 0 on one row: dividing there would fail, but no branch that divides reaches it.
    assert _values("CASE WHEN i = 0 THEN NULL ELSE 10 div i END")[:4] == [1, -3, None, None]
    assert _values("i <> 0 AND 10 / i > 1")[:3] == [True, False, False]
    assert _values("i = 0 OR 10 / i > 1")[:3] == [True, False, True]
    assert _values("coalesce(i, 10 div 0)", ROWS.slice(0, 3)) == [7, -3, 0]
    assert _values("i IN (7, -3, 0, 10 div i)", ROWS.slice(0, 3)) == [True, True, True]  # stops at a match
    # Spark evaluates the second operand only where the first is not null (the divisor first), and
    # its optimizer drops what a NULL or a FALSE constant decides.
    assert _values("l + 10 div i", ROWS.slice(2, 2)) == [None, None]  # l is null where i is 0
    assert _values("(10 div i) / CAST(NULL AS INT)") == [None] * 6
    assert _values("(10 div i > 0) AND FALSE") == [False] * 6
    with pytest.raises(ExpressionEvaluationError, match="DIVIDE_BY_ZERO"):
        _values("10 div i")
    with pytest.raises(ExpressionEvaluationError, match="DIVIDE_BY_ZERO"):
        _values("x / 0")  # a double too, as in Spark's ANSI mode


def test_ansi_errors_name_the_column_and_the_value() -> None:
    with pytest.raises(ExpressionEvaluationError, match=r"set v = i \+ 1: \[ARITHMETIC_OVERFLOW\]"):
        _values("i + 1")
    with pytest.raises(ExpressionEvaluationError, match=r"CAST_INVALID_INPUT.*'NL'"):
        _values("CAST(s AS INT)")
    assert _values("TRY_CAST(s AS INT)") == [None, None, None, None, 12, None]
    with pytest.raises(ExpressionEvaluationError, match="NUMERIC_VALUE_OUT_OF_RANGE"):
        _values("price * 100000000000000000000000000000")
    with pytest.raises(ExpressionEvaluationError, match="CAST_OVERFLOW"):
        _values("CAST(x AS INT)")


def test_casts() -> None:
    assert _values("CAST(price AS INT)")[:2] == [12, 0]
    assert _values("CAST(price AS DECIMAL(4,1))", ROWS.slice(0, 3)) == [
        Decimal("12.3"),
        Decimal("-0.1"),
        None,
    ]
    assert _values("CAST(f AS DECIMAL(10,5))")[0] == Decimal("0.10000")  # through 0.10000000149011612
    assert _values("CAST(d AS STRING)")[:2] == ["2024-02-29", "1970-01-01"]
    assert _values("CAST(ts AS STRING)")[3] == "2000-02-29 00:00:00.5"
    assert _values("TRY_CAST(s AS DATE)")[5] == dt.date(2024, 2, 29)
    assert _values("CAST('2024-01-01 10:00:00+02:00' AS TIMESTAMP)")[0] == dt.datetime(
        2024, 1, 1, 8, tzinfo=UTC
    )
    assert _values("CAST(' TRUE ' AS BOOLEAN)")[0] is True
    assert _values("CAST('1.555' AS DECIMAL(5,2))")[0] == Decimal("1.56")
    assert _values("CAST(ts AS DATE)")[1] == dt.date(1969, 12, 31)


def test_dates() -> None:
    assert _values("date_add(d, 1)", ROWS.slice(0, 3)) == [dt.date(2024, 3, 1), dt.date(1970, 1, 2), None]
    assert _values("date_sub(d, 1)", ROWS.slice(0, 1)) == [dt.date(2024, 2, 28)]
    assert _values("d + 1", ROWS.slice(0, 1)) == [dt.date(2024, 3, 1)]
    assert _values("datediff(d, DATE '2024-01-01')")[0] == 59
    assert _values("year(ts)")[:2] == [2024, 1969]
    assert _values("month('2024-05-07')")[0] == 5
    today = _values("current_date()")[0]
    assert today == dt.datetime.now(UTC).date() or today == dt.datetime.now(UTC).date() - dt.timedelta(days=1)


def test_unknown_columns_say_how_to_write_a_literal() -> None:
    with pytest.raises(InvalidExpressionError) as raised:
        compile_expression("ZZ", ROWS.schema, column="country")
    message = str(raised.value)
    assert "set country = ZZ" in message and "ZZ is not a column" in message
    assert "'ZZ'" in message and "new_values=" in message
    with pytest.raises(InvalidExpressionError, match="NL is not a column"):
        compile_expression("coalesce(s, NL)", ROWS.schema, column="s")


def test_case_sensitivity_is_the_calls() -> None:
    assert compile_expression("I + 1", ROWS.schema, column="v", case_sensitive=False).type == pa.int32()
    with pytest.raises(InvalidExpressionError, match="I is not a column"):
        compile_expression("I + 1", ROWS.schema, column="v")


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("i +", InvalidExpressionError),
        ("b AND 1", InvalidExpressionError),  # Spark refuses a number as a boolean
        ("s + t", InvalidExpressionError),
        ("x div 2", InvalidExpressionError),
        ("CAST(d AS INT)", InvalidExpressionError),
        ("CASE WHEN NULL THEN 1 END", InvalidExpressionError),
        ("greatest(s, i)", InvalidExpressionError),  # no string promotion there
        ("date_add(d, 1L)", InvalidExpressionError),
        ("rand()", UnsupportedFeatureError),
        ("i IN (SELECT 1)", UnsupportedFeatureError),
        ("CAST(x AS STRING)", UnsupportedFeatureError),
        ("sum(i)", UnsupportedFeatureError),
        ("d + INTERVAL 1 DAY", UnsupportedFeatureError),
        ("substring(s, i)", UnsupportedFeatureError),
        ("i = 7 IN (1)", UnsupportedFeatureError),  # Spark reads (i = 7) IN (1), sqlglot i = (7 IN (1))
        ("'a' || 1 + 2", UnsupportedFeatureError),  # Spark reads ('a' || 1) + 2
        ("b = i < l", UnsupportedFeatureError),  # Spark reads (b = i) < l
    ],
)
def test_refused(text: str, error: type[Exception]) -> None:
    with pytest.raises(error, match="set v = "):
        compile_expression(text, ROWS.schema, column="v").evaluate(ROWS)


def test_store_assignment_is_sparks() -> None:
    field = pa.field("amount", pa.float64())
    with pytest.raises(
        InvalidExpressionError, match="STRING value cannot be assigned to the DOUBLE column amount"
    ):
        compile_expression("'12'", ROWS.schema, column="amount", target=field)
    narrow = pa.field("n", pa.int32(), nullable=False)
    expression = compile_expression("x * 1", ROWS.schema, column="n", target=narrow)
    rows = ROWS.slice(0, 2)
    assert expression.assign(expression.evaluate(rows), narrow).to_pylist() == [1, 0]  # truncated
    with pytest.raises(ExpressionEvaluationError, match="cannot be assigned to column n"):
        expression.assign(expression.evaluate(ROWS.slice(4, 1)), narrow)  # 1e300
    with pytest.raises(ExpressionEvaluationError, match="column n is required"):
        expression.assign(expression.evaluate(ROWS.slice(3, 1)), narrow)
    text = compile_expression("d", ROWS.schema, column="s", target=pa.field("s", pa.string()))
    assert text.assign(text.evaluate(rows), pa.field("s", pa.string())).to_pylist() == [
        "2024-02-29",
        "1970-01-01",
    ]


def test_columns_of_other_arrow_types() -> None:
    rows = pa.table(
        {
            "code": pa.array([b"ab", b"cd"], pa.binary(2)),
            "name": pa.array(["x", None], pa.large_string()),
            "address": pa.array([{"city": "Oslo"}, None], pa.struct([("city", pa.string())])),
        }
    )
    assert _values("code || X'00'", rows) == [b"ab\x00", b"cd\x00"]  # fixed is BINARY, as in Spark
    assert _values("upper(name)", rows) == ["X", None]
    assert _values("upper(address.city)", rows) == ["OSLO", None]


@settings(max_examples=60, deadline=None)
@given(expressions())
def test_each_row_gets_the_value_it_gets_alone(text: str) -> None:
    """The evaluator works on whole arrays and on subsets of them; a row's value does not depend
    on the other rows (nor does whether it fails)."""
    try:
        expression = compile_expression(text, ROWS.schema, column="v", case_sensitive=False)
    except (InvalidExpressionError, UnsupportedFeatureError):
        return
    singles = []
    for n in range(ROWS.num_rows):
        try:
            singles.append(("ok", values_of(expression.evaluate(ROWS.slice(n, 1)))))
        except (ExpressionEvaluationError, UnsupportedFeatureError) as exc:
            singles.append(("failed", type(exc).__name__))
    try:
        whole = values_of(expression.evaluate(ROWS))
    except (ExpressionEvaluationError, UnsupportedFeatureError):
        assert any(kind == "failed" for kind, _ in singles) or "current_" in text
        return
    if "current_" not in text:
        assert [("ok", (v,)) for v in whole] == singles
