"""The SQL filter parser: every construct, round trips through ``str``, and errors that name
the position and the token."""

from __future__ import annotations

import uuid
from decimal import Decimal

import pytest
from hypothesis import given, settings

from icefloe.errors import InvalidFilterError
from icefloe.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    and_,
    bind,
    equal,
    greater_than,
    greater_than_or_equal,
    is_in,
    is_nan,
    is_null,
    less_than,
    less_than_or_equal,
    not_,
    not_equal,
    not_in,
    not_nan,
    not_null,
    not_starts_with,
    or_,
    parse,
    starts_with,
    unbind,
)
from icefloe.expressions.literals import (
    BinaryLiteral,
    DateLiteral,
    DecimalLiteral,
    FloatLiteral,
    IntLiteral,
    StringLiteral,
    TimeLiteral,
    TimestampLiteral,
    TimestampNanoLiteral,
    TimestamptzLiteral,
    TimestamptzNanoLiteral,
    UUIDLiteral,
)

from .strategies import SCHEMA, expressions

CASES = [
    ("a = 1", equal("a", 1)),
    ("a == 1", equal("a", 1)),
    ("a != 1", not_equal("a", 1)),
    ("a <> 1", not_equal("a", 1)),
    ("a < 1", less_than("a", 1)),
    ("a <= 1", less_than_or_equal("a", 1)),
    ("a > 1", greater_than("a", 1)),
    ("a >= 1", greater_than_or_equal("a", 1)),
    ("1 < a", greater_than("a", 1)),
    ("1 >= a", less_than_or_equal("a", 1)),
    ("'x' = a", equal("a", "x")),
    ("a = -5", equal("a", -5)),
    ("a = +5", equal("a", 5)),
    ("a = 1.50", equal("a", DecimalLiteral(Decimal("1.50")))),
    ("a = -1.50", equal("a", DecimalLiteral(Decimal("-1.50")))),
    ("a = .5", equal("a", DecimalLiteral(Decimal("0.5")))),
    ("a = 1.5e3", equal("a", 1500.0)),
    ("a = 1E-2", equal("a", 0.01)),
    ("a = -2.5e0", equal("a", -2.5)),
    ("a = 123456789012345678901234567890", equal("a", IntLiteral(123456789012345678901234567890))),
    ("a = 'it''s'", equal("a", "it's")),
    ("a = ''", equal("a", "")),
    ("a = TRUE", equal("a", True)),
    ("a = false", equal("a", False)),
    ("a", equal("a", True)),
    ("NOT a", not_(equal("a", True))),
    ("a = X'00FF'", equal("a", b"\x00\xff")),
    ("a = x''", equal("a", b"")),
    ("a = DATE '2024-01-01'", equal("a", DateLiteral(19723))),
    ("a = date '1969-12-31'", equal("a", DateLiteral(-1))),
    ("a = TIME '10:00:00.5'", equal("a", TimeLiteral(36_000_500_000))),
    ("a = TIMESTAMP '1970-01-01T00:00:01'", equal("a", TimestampLiteral(1_000_000))),
    ("a = TIMESTAMP '1970-01-01 00:00:01.000000001'", equal("a", TimestampNanoLiteral(1_000_000_001))),
    ("a = TIMESTAMP '1970-01-01T01:00:00+01:00'", equal("a", TimestamptzLiteral(0))),
    ("a = TIMESTAMPTZ '1970-01-01T00:00:00'", equal("a", TimestamptzLiteral(0))),
    ("a = TIMESTAMP_NS '1970-01-01T00:00:00.000001'", equal("a", TimestampNanoLiteral(1000))),
    ("a = TIMESTAMPTZ_NS '1970-01-01T00:00:00Z'", equal("a", TimestamptzNanoLiteral(0))),
    ("a = DECIMAL '1.50'", equal("a", DecimalLiteral(Decimal("1.50")))),
    ("a = DECIMAL '5'", equal("a", DecimalLiteral(Decimal("5")))),
    ("a = DOUBLE 'Infinity'", equal("a", FloatLiteral(float("inf")))),
    ("a = DOUBLE '-Infinity'", equal("a", FloatLiteral(float("-inf")))),
    ("a = UUID '00000000-0000-0000-0000-000000000001'", equal("a", UUIDLiteral(uuid.UUID(int=1)))),
    ("a IN (1, 2, 3)", is_in("a", [1, 2, 3])),
    ("a in (1)", equal("a", 1)),
    ("a IN ()", AlwaysFalse()),
    ("a NOT IN (1, 2)", not_in("a", [1, 2])),
    ("a NOT IN ()", AlwaysTrue()),
    ("a IS NULL", is_null("a")),
    ("a is not null", not_null("a")),
    ("a IS NAN", is_nan("a")),
    ("a IS NOT NAN", not_nan("a")),
    ("a LIKE 'ab%'", starts_with("a", "ab")),
    ("a NOT LIKE 'ab%'", not_starts_with("a", "ab")),
    ("a LIKE 'a\\%b\\_c\\\\%'", starts_with("a", "a%b_c\\")),
    ("a LIKE 'abc'", equal("a", "abc")),
    ("a NOT LIKE 'abc'", not_equal("a", "abc")),
    ("a LIKE '%'", starts_with("a", "")),
    ("a BETWEEN 1 AND 5", and_(greater_than_or_equal("a", 1), less_than_or_equal("a", 5))),
    ("a NOT BETWEEN 1 AND 5", not_(and_(greater_than_or_equal("a", 1), less_than_or_equal("a", 5)))),
    ("a = 1 AND b = 2 OR c = 3", or_(and_(equal("a", 1), equal("b", 2)), equal("c", 3))),
    ("a = 1 AND (b = 2 OR c = 3)", and_(equal("a", 1), or_(equal("b", 2), equal("c", 3)))),
    ("NOT (a = 1 OR b = 2)", not_(or_(equal("a", 1), equal("b", 2)))),
    ("NOT NOT a = 1", equal("a", 1)),
    ("TRUE", AlwaysTrue()),
    ("FALSE OR a = 1", equal("a", 1)),
    ("TRUE AND a = 1", equal("a", 1)),
    ("((a = 1))", equal("a", 1)),
    ("loc.lat > 1", greater_than("loc.lat", 1)),
    ("`weird name` = 1", equal("weird name", 1)),
    ('"double quoted"."x" = 1', equal("double quoted.x", 1)),
    ("`a``b` = 1", equal("a`b", 1)),
    ("`and` = 1", equal("and", 1)),
    ("date = '2024-01-01'", equal("date", "2024-01-01")),
    ("date = DATE '2024-01-01'", equal("date", DateLiteral(19723))),
    ("a = '\U0001f600'", equal("a", "\U0001f600")),
    ("città = 1", equal("città", 1)),
    ("_x$1 = 1", equal("_x$1", 1)),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_parse(text: str, expected: object) -> None:
    parsed = parse(text)
    assert parsed == expected
    assert parse(str(parsed)) == parsed


def test_keywords_are_case_insensitive() -> None:
    assert parse("a is NoT nULl aNd b In (1, 2) oR NOT c lIkE 'x%'") == or_(
        and_(not_null("a"), is_in("b", [1, 2])), not_(starts_with("c", "x"))
    )


def test_literal_kinds_survive_round_trips() -> None:
    expr = parse("a IN (1, 1.0, 1e0, '1', DATE '1970-01-02', X'01')")
    assert {type(lit) for lit in expr.literals} == {  # type: ignore[attr-defined]
        IntLiteral,
        DecimalLiteral,
        FloatLiteral,
        StringLiteral,
        DateLiteral,
        BinaryLiteral,
    }
    assert parse(str(expr)) == expr


@settings(max_examples=300, deadline=None)
@given(expressions())
def test_random_expressions_round_trip(expr: object) -> None:
    assert parse(str(expr)) == expr
    bound = bind(SCHEMA, expr)  # type: ignore[arg-type]
    assert bind(SCHEMA, parse(str(bound))) == bound
    assert bind(SCHEMA, unbind(bound)) == bound


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the filter is empty at position 0"),
        ("a =", "expected a column or a value at position 3 (found end of input)"),
        ("a = 1 b", "expected AND, OR or the end of the filter at position 6 (found 'b')"),
        ("a = 'open", "unterminated ' quote at position 4"),
        ("a = 1 AND", "at position 9 (found end of input)"),
        ("a ! 1", "unexpected character '!' at position 2"),
        ("(a = 1", "expected ')' at position 6"),
        ("a = NULL", "comparison with NULL is never true: use IS NULL"),
        ("a IN (1, NULL)", "NULL is not a value here"),
        ("a = b", "comparing two columns is not supported at position 0"),
        ("a = NaN", "to test for NaN use IS NAN"),
        ("1 = 2", "a comparison needs a column on one side"),
        ("a LIKE '%abc'", "only prefix patterns ('abc%') are supported"),
        ("a LIKE 'a_c%'", "only prefix patterns"),
        ("a LIKE 'a%c'", "only prefix patterns"),
        ("a LIKE 5", "LIKE needs a quoted pattern"),
        ("5 LIKE 'a%'", "LIKE needs a column on its left"),
        ("a IS 5", "expected NULL or NAN after IS"),
        ("a NOT IS NULL", "expected IN, LIKE or BETWEEN after NOT"),
        ("a BETWEEN 1 OR 2", "expected AND"),
        ("a IN (b)", "expected a value, not a column"),
        ("a = DATE '2024-13-01'", "invalid DATE literal"),
        ("a = TIMESTAMP_NTZ '2024-01-01T00:00:00Z'", "cannot have an offset"),
        ("a = TIME '10:00:00.0000001'", "microsecond precision"),
        ("a = DOUBLE 'NaN'", "NaN cannot be compared"),
        ("a = X'0'", "position 4"),
        ("and = 1", "unexpected keyword AND at position 0"),
        ("5", "expected a comparison after the value"),
        # Double quotes name a column (as in SQL): say so, not "comparing two columns".
        (
            'name = "a"',
            "\"a\" is a column name (double quotes name columns); a string takes single quotes: 'a'",
        ),
        ('"it\'s" < name', "a string takes single quotes: 'it''s' (comparing two columns"),
        ("name IN (\"a\", 'b')", 'expected a value, not a column; "a" is a column name'),
        # Functions are not part of the grammar: name the function, not "two columns".
        ("d > current_date()", "functions are not supported in filters: current_date(...)"),
        ("d > current_date()", "at position 4 (found 'current_date')"),
        ("day(ts) = 19000", "functions are not supported in filters: day(...)"),
        ("d = DATE('2024-01-01')", "written as DATE '...'"),
    ],
)
def test_errors_name_position_and_token(text: str, message: str) -> None:
    with pytest.raises(InvalidFilterError, match="cannot parse filter") as info:
        parse(text)
    assert message in str(info.value)


def test_only_strings_parse() -> None:
    with pytest.raises(InvalidFilterError, match="must be a string"):
        parse(5)  # type: ignore[arg-type]
