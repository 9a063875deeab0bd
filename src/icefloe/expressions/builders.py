"""Functions that build unbound predicates, as Java's ``Expressions`` does.

Columns are names (``"country"``, ``"location.lat"``) or :class:`Reference` objects; values are
Python values or :class:`Literal` objects (see :func:`icefloe.expressions.literals.literal`).
Set predicates fold: ``is_in(c, [])`` is ``always_false()``, ``is_in(c, [v])`` is
``equal(c, v)``, and likewise for ``not_in``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from icefloe.errors import InvalidFilterError
from icefloe.expressions.literals import Literal, StringLiteral, literal
from icefloe.expressions.model import (
    AlwaysFalse,
    AlwaysTrue,
    Expression,
    Operation,
    Reference,
    UnboundPredicate,
)

__all__ = [
    "equal",
    "greater_than",
    "greater_than_or_equal",
    "is_in",
    "is_nan",
    "is_null",
    "less_than",
    "less_than_or_equal",
    "not_equal",
    "not_in",
    "not_nan",
    "not_null",
    "not_starts_with",
    "predicate",
    "ref",
    "starts_with",
]

Term = str | Reference


def ref(name: str) -> Reference:
    """A column reference by (dotted) name."""
    return Reference(name)


def _term(term: Term) -> Reference:
    if isinstance(term, Reference):
        return term
    if isinstance(term, str):
        return Reference(term)
    raise InvalidFilterError(f"a column must be a name or a Reference, not {term!r}")


def _unary(op: Operation, term: Term) -> UnboundPredicate:
    return UnboundPredicate(op, _term(term))


def _compare(op: Operation, term: Term, value: Any) -> UnboundPredicate:
    reference = _term(term)
    try:
        lit = literal(value)
    except InvalidFilterError as e:
        raise InvalidFilterError(f"filter on '{reference.name}': {e}") from None
    return UnboundPredicate(op, reference, lit)


def is_null(term: Term) -> UnboundPredicate:
    return _unary(Operation.IS_NULL, term)


def not_null(term: Term) -> UnboundPredicate:
    return _unary(Operation.NOT_NULL, term)


def is_nan(term: Term) -> UnboundPredicate:
    return _unary(Operation.IS_NAN, term)


def not_nan(term: Term) -> UnboundPredicate:
    return _unary(Operation.NOT_NAN, term)


def less_than(term: Term, value: Any) -> UnboundPredicate:
    return _compare(Operation.LT, term, value)


def less_than_or_equal(term: Term, value: Any) -> UnboundPredicate:
    return _compare(Operation.LT_EQ, term, value)


def greater_than(term: Term, value: Any) -> UnboundPredicate:
    return _compare(Operation.GT, term, value)


def greater_than_or_equal(term: Term, value: Any) -> UnboundPredicate:
    return _compare(Operation.GT_EQ, term, value)


def equal(term: Term, value: Any) -> UnboundPredicate:
    return _compare(Operation.EQ, term, value)


def not_equal(term: Term, value: Any) -> UnboundPredicate:
    return _compare(Operation.NOT_EQ, term, value)


def _prefix(op: Operation, term: Term, prefix: str | StringLiteral) -> UnboundPredicate:
    if not isinstance(prefix, (str, StringLiteral)):
        raise InvalidFilterError(f"{op.name.lower()} needs a string prefix, not {prefix!r}")
    return _compare(op, term, prefix)


def starts_with(term: Term, prefix: str | StringLiteral) -> UnboundPredicate:
    """Strings that begin with ``prefix`` (SQL ``LIKE 'prefix%'``)."""
    return _prefix(Operation.STARTS_WITH, term, prefix)


def not_starts_with(term: Term, prefix: str | StringLiteral) -> UnboundPredicate:
    return _prefix(Operation.NOT_STARTS_WITH, term, prefix)


def _set(op: Operation, term: Term, values: Iterable[Any]) -> Expression:
    reference = _term(term)
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise InvalidFilterError(f"{op.name.lower()} on '{reference.name}' needs a collection of values")
    try:
        literals: frozenset[Literal] = frozenset(literal(v) for v in values)
    except InvalidFilterError as e:
        raise InvalidFilterError(f"filter on '{reference.name}': {e}") from None
    if not literals:
        return AlwaysFalse() if op == Operation.IN else AlwaysTrue()
    if len(literals) == 1:
        single_op = Operation.EQ if op == Operation.IN else Operation.NOT_EQ
        return UnboundPredicate(single_op, reference, next(iter(literals)))
    return UnboundPredicate(op, reference, literals=literals)


def is_in(term: Term, values: Iterable[Any]) -> Expression:
    """Values in ``values``; an empty collection is ``always_false()``, one value ``equal``."""
    return _set(Operation.IN, term, values)


def not_in(term: Term, values: Iterable[Any]) -> Expression:
    """Values not in ``values`` (nulls never match); empty is ``always_true()``, one value
    ``not_equal``."""
    return _set(Operation.NOT_IN, term, values)


def predicate(op: Operation, term: Term, value: Any = None) -> Expression:
    """A predicate of any operation: no value for unary ones, a collection for ``IN`` / ``NOT IN``."""
    if op.is_unary:
        if value is not None:
            raise InvalidFilterError(f"{op.name} takes no value")
        return _unary(op, term)
    if op.is_set:
        return _set(op, term, value)
    if op in (Operation.STARTS_WITH, Operation.NOT_STARTS_WITH):
        return _prefix(op, term, value)
    return _compare(op, term, value)
