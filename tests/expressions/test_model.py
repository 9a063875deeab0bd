"""The expression model and its builders: immutability, equality, folding, negation, text."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from icefloe.errors import InvalidFilterError
from icefloe.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    Not,
    Operation,
    Or,
    Reference,
    UnboundPredicate,
    always_false,
    always_true,
    and_,
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
    predicate,
    ref,
    starts_with,
)
from icefloe.expressions.literals import IntLiteral, StringLiteral

A, B, C = equal("a", 1), equal("b", 2), equal("c", 3)


def test_constants_are_singletons() -> None:
    assert always_true() is AlwaysTrue() and always_false() is AlwaysFalse()
    assert pickle.loads(pickle.dumps(AlwaysTrue())) is AlwaysTrue()
    assert AlwaysTrue() != AlwaysFalse()


def test_folding() -> None:
    assert and_(always_false(), A) == always_false()
    assert and_(always_true(), A) == A
    assert and_() == always_true()
    assert or_(always_true(), A) == always_true()
    assert or_(always_false(), A) == A
    assert or_() == always_false()
    assert not_(not_(A)) == A
    assert not_(always_true()) == always_false()
    assert is_in("a", [1]) == equal("a", 1)
    assert is_in("a", [1, 1]) == equal("a", 1)
    assert is_in("a", []) == always_false()
    assert not_in("a", [1]) == not_equal("a", 1)
    assert not_in("a", []) == always_true()


def test_grouping_does_not_change_equality() -> None:
    assert And(And(A, B), C) == And(A, And(B, C))
    assert hash(And(And(A, B), C)) == hash(And(A, And(B, C)))
    assert And(A, B) != And(B, A)
    assert And(A, B) != Or(A, B)
    assert and_(A, B, C) == And(And(A, B), C)


def test_long_chains_stay_shallow() -> None:
    chain = or_(*(equal("a", i) for i in range(5000)))
    depth, node = 0, chain
    while isinstance(node, Or):
        node, depth = node.left, depth + 1
    assert depth <= 13
    assert chain.depth <= 13  # type: ignore[attr-defined]
    assert parse(str(chain)) == chain
    grown = always_false()
    for i in range(2000):
        grown = or_(grown, equal("a", i))  # rebalanced as it grows
    assert grown.depth <= 64  # type: ignore[attr-defined]
    assert grown == chain.__class__(grown.left, grown.right)  # type: ignore[attr-defined]
    assert parse(str(grown)) == or_(*(equal("a", i) for i in range(2000)))


def test_operators() -> None:
    assert and_(A, B) == (A & B)
    assert or_(A, B) == (A | B)
    assert Not(A) == ~A


def test_expressions_are_immutable_values() -> None:
    pred = equal("a", 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        pred.op = Operation.LT  # type: ignore[misc]
    assert pred == UnboundPredicate(Operation.EQ, Reference("a"), IntLiteral(1))
    assert pred == UnboundPredicate(Operation.EQ, "a", 1)  # type: ignore[arg-type]
    assert len({pred, equal("a", 1), equal("a", 2)}) == 2
    assert pickle.loads(pickle.dumps(and_(pred, is_in("b", ["x", "y"])))) == and_(
        pred, is_in("b", ["x", "y"])
    )


def test_negation() -> None:
    pairs = [
        (less_than("a", 1), greater_than_or_equal("a", 1)),
        (less_than_or_equal("a", 1), greater_than("a", 1)),
        (equal("a", 1), not_equal("a", 1)),
        (is_null("a"), not_null("a")),
        (is_nan("a"), not_nan("a")),
        (starts_with("a", "x"), not_starts_with("a", "x")),
        (is_in("a", [1, 2]), not_in("a", [1, 2])),
    ]
    for positive, negative in pairs:
        assert positive.negate() == negative
        assert negative.negate() == positive
    assert and_(A, B).negate() == or_(A.negate(), B.negate())
    assert Not(A).negate() == A


def test_operation_helpers() -> None:
    assert Operation.LT.flip() == Operation.GT
    assert Operation.EQ.flip() == Operation.EQ
    assert Operation.IS_NULL.is_unary and Operation.IN.is_set and Operation.STARTS_WITH.is_literal
    assert Operation("not-starts-with") == Operation.NOT_STARTS_WITH


def test_text() -> None:
    assert str(and_(or_(A, B), C)) == "(a = 1 OR b = 2) AND c = 3"
    assert str(or_(and_(A, B), C)) == "(a = 1 AND b = 2) OR c = 3"
    assert str(not_(or_(A, B))) == "NOT (a = 1 OR b = 2)"
    assert str(is_in("a", ["y", "x"])) == "a IN ('x', 'y')"
    assert str(starts_with("a", "50%_off\\")) == "a LIKE '50\\%\\_off\\\\%'"
    assert str(equal("my col", 1)) == "`my col` = 1"
    assert str(equal("or", 1)) == "`or` = 1"
    assert str(equal("date", "x")) == "date = 'x'"
    assert str(ref("a.b")) == "a.b"


def test_predicate_builder() -> None:
    assert predicate(Operation.LT, "a", 1) == less_than("a", 1)
    assert predicate(Operation.IS_NULL, "a") == is_null("a")
    assert predicate(Operation.IN, "a", [1, 2]) == is_in("a", [1, 2])
    with pytest.raises(InvalidFilterError, match="takes no value"):
        predicate(Operation.IS_NULL, "a", 1)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: equal("a", None), "filter on 'a': a filter value cannot be None: use is_null"),
        (lambda: starts_with("a", 5), "needs a string prefix"),  # type: ignore[arg-type]
        (lambda: is_in("a", "abc"), "needs a collection of values"),
        (lambda: equal(5, 1), "a column must be a name"),  # type: ignore[arg-type]
        (lambda: ref(""), "non-empty string"),
        (lambda: UnboundPredicate(Operation.IN, Reference("a"), StringLiteral("x")), "non-empty set"),
        (lambda: UnboundPredicate(Operation.STARTS_WITH, Reference("a"), IntLiteral(1)), "string prefix"),
        (lambda: and_(A, "b = 1"), "not an expression"),  # type: ignore[arg-type]
    ],
)
def test_invalid_constructions(build: object, message: str) -> None:
    with pytest.raises(InvalidFilterError) as info:
        build()  # type: ignore[operator]
    assert message in str(info.value)
