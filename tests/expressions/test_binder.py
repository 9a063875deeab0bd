"""Binding: column resolution, literal conversion, folding, errors; rewrite_not, unbind and
referenced_field_ids."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icefloe.errors import InvalidFilterError
from icefloe.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    BoundPredicate,
    Not,
    Operation,
    bind,
    equal,
    greater_than,
    is_in,
    is_nan,
    is_null,
    less_than,
    not_,
    not_in,
    not_null,
    parse,
    reference_for_id,
    referenced_field_ids,
    rewrite_not,
    starts_with,
    unbind,
)
from icefloe.expressions.evaluator import compile_expression
from icefloe.expressions.visitors import ExpressionVisitor, visit
from icefloe.spec.schema import Schema
from icefloe.spec.types import (
    DateType,
    DecimalType,
    DoubleType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestamptzType,
)

from .strategies import SCHEMA, expressions, rows

S = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "sale_date", DateType()),
    NestedField(3, "ts", TimestamptzType()),
    NestedField(4, "amount", DecimalType(10, 2)),
    NestedField(5, "name", StringType()),
    NestedField(6, "score", DoubleType()),
    NestedField(7, "n", IntegerType()),
    NestedField(
        8,
        "location",
        StructType(NestedField(9, "lat", DoubleType(), required=True), NestedField(10, "city", StringType())),
        required=True,
    ),
    NestedField(11, "opt", StructType(NestedField(12, "req", LongType(), required=True))),
    NestedField(13, "tags", ListType(14, StringType())),
    NestedField(15, "props", MapType(16, StringType(), 17, StructType(NestedField(18, "v", LongType())))),
)


def _bound(text: str) -> BoundPredicate:
    result = bind(S, text)
    assert isinstance(result, BoundPredicate)
    return result


def test_quoted_literals_convert_to_the_column_type() -> None:
    assert _bound("sale_date = '2023-01-01'").literal == 19358
    assert _bound("ts >= '2024-03-10T00:00:00'").literal == 1_710_028_800_000_000
    assert _bound("amount > '10.50'").literal == Decimal("10.50")
    assert _bound("amount > 10.5").literal == Decimal("10.50")
    assert _bound("n = '7'").literal == 7


def test_references_carry_ids_paths_and_nullability() -> None:
    pred = _bound("location.lat > 1")
    assert (pred.term.field_id, pred.term.accessor, pred.term.path) == (9, (7, 0), ("location", "lat"))
    assert not pred.term.produces_null
    assert _bound("opt.req = 1").term.produces_null  # required inside an optional struct
    assert reference_for_id(S, 10).name == "location.city"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("id IS NULL", "FALSE"),
        ("id IS NOT NULL", "TRUE"),
        ("location.lat IS NULL", "FALSE"),
        ("opt.req IS NULL", "opt.req IS NULL"),
        ("n < 1e20", "n <= 2147483647"),
        ("n > 1e20", "n > 2147483647"),  # false for every int, unknown for null
        ("n >= -1e20", "n >= -2147483648"),
        ("n = 1e20", "n > 2147483647"),
        ("n != 1e20", "n <= 2147483647"),  # true for every int, unknown for null
        ("id != 1e20", "TRUE"),  # required
        ("score != DOUBLE 'Infinity'", "score != DOUBLE 'Infinity'"),
        ("n > 2.5", "n >= 3"),
        ("n >= 2.5", "n >= 3"),
        ("n < 2.5", "n <= 2"),
        ("n <= -2.5", "n <= -3"),
        ("n = 2.5", "n > 2 AND n < 3"),
        ("id = 2.5", "FALSE"),  # required: never unknown
        ("n IN (2.5, 3.5)", "n > 2 AND n < 3"),
        ("n IN (2.5, 3, 3.0)", "n = 3"),
        ("n NOT IN (2.5, 3.5)", "n <= 2 OR n >= 3"),
        ("n NOT IN (2.5, 3, 4)", "n NOT IN (3, 4)"),
        ("amount = 10.505", "amount > 10.50 AND amount < 10.51"),
        ("amount < 10.505", "amount <= 10.50"),
        ("amount > 99999999.995", "amount > 99999999.99"),
        ("sale_date < TIMESTAMP '2024-01-01T10:00:00'", "sale_date <= DATE '2024-01-01'"),
        ("sale_date > TIMESTAMP '2024-01-01T10:00:00'", "sale_date >= DATE '2024-01-02'"),
        ("score < 1e400", "score <= 1.7976931348623157e+308"),
        (
            "ts = '2024-01-01T00:00:00.0000001'",
            "ts > TIMESTAMPTZ '2024-01-01T00:00:00+00:00' AND ts < TIMESTAMPTZ '2024-01-01T00:00:00.000001+00:00'",
        ),
        ("score != 1.5 AND NOT (n = 1)", "score != 1.5E0 AND NOT (n = 1)"),
    ],
)
def test_binding_folds_what_the_schema_decides(text: str, expected: str) -> None:
    assert str(bind(S, text)) == expected


@pytest.mark.parametrize(
    ("column", "literal"),
    [
        ("n", "2.5"),  # between two ints
        ("n", "1e20"),  # above the maximum
        ("n", "-1e20"),  # below the minimum
        ("amount", "10.505"),
        ("amount", "-99999999.995"),
        ("ts", "'2024-01-01T00:00:00.0000001'"),
        ("score", "1e400"),  # beyond the doubles
    ],
)
@pytest.mark.parametrize("value", [None, 0, "nan"])
def test_literals_no_value_equals_stay_unknown_for_null_and_nan(
    column: str, literal: str, value: Any
) -> None:
    """A comparison with a null (or NaN) is unknown whatever the literal, so NOT keeps such rows
    out: ``NOT (x = 2.5)`` matches what ``x != 2.5`` matches, and ``NOT (x < -1e20)`` what
    ``x >= -1e20`` matches (as in SQL). Binding must not fold these to TRUE / FALSE."""
    if value == "nan":
        if column != "score":
            return
        value = float("nan")
    elif value == 0:
        value = {"n": 0, "amount": Decimal("0.00"), "ts": 0, "score": 0.0}[column]
    row = {column: value}
    pairs = [
        (f"NOT ({column} = {literal})", f"{column} != {literal}"),
        (f"NOT ({column} != {literal})", f"{column} = {literal}"),
        (f"NOT ({column} IN ({literal}, {literal}))", f"{column} NOT IN ({literal}, {literal})"),
        (f"NOT ({column} NOT IN ({literal}, {literal}))", f"{column} IN ({literal}, {literal})"),
        (f"NOT ({column} < {literal})", f"{column} >= {literal}"),
        (f"NOT ({column} <= {literal})", f"{column} > {literal}"),
        (f"NOT ({column} > {literal})", f"{column} <= {literal}"),
        (f"NOT ({column} >= {literal})", f"{column} < {literal}"),
    ]
    for negated, direct in pairs:
        a, b = compile_expression(bind(S, negated))(row), compile_expression(bind(S, direct))(row)
        assert a is b, (negated, direct, a, b)
        if value is None or value != value:
            assert a is None, negated  # unknown: no match, negated or not


def test_a_literal_out_of_range_for_a_float_column() -> None:
    schema = Schema(NestedField(1, "f", "float"))
    assert str(bind(schema, "f < 1e300")) == "f <= 3.4028234663852886e+38"
    assert str(bind(schema, "f > 1e300")) == "f >= DOUBLE 'Infinity'"
    assert str(bind(schema, "f != 1e300")) == "f <= 3.4028234663852886e+38 OR f >= DOUBLE 'Infinity'"


def test_case_insensitive_binding() -> None:
    assert bind(S, "LOCATION.Lat > 1", case_sensitive=False) == bind(S, "location.lat > 1")
    with pytest.raises(InvalidFilterError, match=r"column 'LOCATION\.Lat' not found"):
        bind(S, "LOCATION.Lat > 1")


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("missing = 1", "column 'missing' not found in schema; columns are: id, sale_date"),
        ("sale_date = 'yesterday'", "filter on column 'sale_date': cannot convert 'yesterday' to date"),
        ("amount > 'ten'", "filter on column 'amount': cannot convert 'ten' to decimal(10, 2): not a number"),
        ("name = 5", "filter on column 'name': cannot compare a string column with 5"),
        ("score = 'NaN'", "NaN cannot be compared: use IS NAN"),
        ("n LIKE 'a%'", "LIKE / starts_with needs a string column; 'n' is int"),
        ("name IS NAN", "IS [NOT] NAN needs a float or double column; 'name' is string"),
        ("location = 1", "column 'location' of type struct<lat: double, city: string> cannot be compared"),
        ("tags.element = 'x'", "column 'tags.element' is inside a list"),
        ("props.value.v = 1", "column 'props.value.v' is inside a map"),
        ("id IN (1, 'x')", "filter on column 'id': cannot convert 'x' to long"),
    ],
)
def test_binding_errors_name_the_column_and_literal(expr: str, message: str) -> None:
    with pytest.raises(InvalidFilterError) as info:
        bind(S, expr)
    assert message in str(info.value)


def test_nan_literals_are_refused_when_built() -> None:
    with pytest.raises(InvalidFilterError, match="filter on 'score': NaN cannot be compared"):
        equal("score", float("nan"))


def test_struct_columns_can_be_tested_for_null() -> None:
    assert str(bind(S, "opt IS NULL")) == "opt IS NULL"
    assert bind(S, "location IS NULL") == AlwaysFalse()


def test_rebinding_resolves_field_ids() -> None:
    bound = bind(S, "n > 5")
    renamed = Schema(NestedField(7, "count", LongType()))  # renamed and promoted to long
    rebound = bind(renamed, bound)
    assert str(rebound) == "count > 5"
    assert isinstance(rebound, BoundPredicate) and rebound.term.type == LongType()
    with pytest.raises(InvalidFilterError, match="field id 7"):
        bind(Schema(NestedField(1, "x", "int")), bound)


def test_binding_to_a_struct_type() -> None:
    partition = StructType(NestedField(1000, "day", DateType()))
    assert str(bind(partition, "day = '2024-01-01'")) == "day = DATE '2024-01-01'"


def test_rewrite_not() -> None:
    expr = bind(S, "NOT (n < 5 OR (name IS NULL AND NOT score IN (1, 2)))")
    rewritten = rewrite_not(expr)
    assert str(rewritten) == "n >= 5 AND (name IS NOT NULL OR score IN (1.0E0, 2.0E0))"
    unbound = rewrite_not(not_(starts_with("a", "x") | is_in("b", [1, 2])))
    assert str(unbound) == "a NOT LIKE 'x%' AND b NOT IN (1, 2)"
    assert rewrite_not(not_(AlwaysTrue())) == AlwaysFalse()


class _HasNot(ExpressionVisitor[bool]):
    def always_true(self) -> bool:
        return False

    def always_false(self) -> bool:
        return False

    def not_(self, child: bool) -> bool:
        return True

    def and_(self, left: bool, right: bool) -> bool:
        return left or right

    def or_(self, left: bool, right: bool) -> bool:
        return left or right

    def unbound_predicate(self, predicate: Any) -> bool:
        return False

    def bound_predicate(self, predicate: Any) -> bool:
        return False


@settings(max_examples=150, deadline=None)
@given(expressions(), st.lists(rows(), min_size=1, max_size=4))
def test_rewrite_not_keeps_three_valued_results(expr: Any, row_list: list[dict[str, Any]]) -> None:
    bound = bind(SCHEMA, expr)
    rewritten = rewrite_not(bound)
    assert not visit(rewritten, _HasNot())
    before, after = compile_expression(bound), compile_expression(rewritten)
    for row in row_list:
        assert before(row) == after(row)


def test_unbind_and_referenced_field_ids() -> None:
    bound = bind(S, "n > 5 AND (location.city LIKE 'a%' OR NOT (amount = 1.5))")
    assert referenced_field_ids(bound) == {7, 10, 4}
    unbound = unbind(bound)
    assert unbound == parse("n > 5 AND (location.city LIKE 'a%' OR NOT (amount = 1.50))")
    assert bind(S, unbound) == bound
    with pytest.raises(InvalidFilterError, match="expected a bound expression"):
        referenced_field_ids(unbound)


def test_bound_predicates_print_typed_literals() -> None:
    assert str(bind(S, "ts < '2024-01-01T00:00:00' AND sale_date IN ('2024-01-01', '2024-01-02')")) == (
        "ts < TIMESTAMPTZ '2024-01-01T00:00:00+00:00' AND sale_date IN (DATE '2024-01-01', DATE '2024-01-02')"
    )


def test_bound_predicate_shapes() -> None:
    ref = reference_for_id(S, 7)
    assert BoundPredicate(Operation.IN, ref, literals=[1, 2]).literals == frozenset({1, 2})
    with pytest.raises(InvalidFilterError, match="takes exactly one value"):
        BoundPredicate(Operation.LT, ref)
    with pytest.raises(InvalidFilterError, match="takes no value"):
        BoundPredicate(Operation.IS_NULL, ref, 1)


def test_builders_bind() -> None:
    expr = (greater_than("n", 1) & less_than("n", 5)) | ~is_null("name") | is_nan("score")
    assert str(bind(S, expr)) == "(n > 1 AND n < 5) OR NOT (name IS NULL) OR score IS NAN"
    assert bind(S, not_in("id", [])) == AlwaysTrue()
    assert bind(S, not_null("opt")) == bind(S, "opt IS NOT NULL")
    assert isinstance(bind(S, not_(equal("n", 1))), Not)
