"""Tree walks over expressions.

:class:`ExpressionVisitor` sees the tree bottom-up (children first): override the methods for
the nodes you expect. :class:`BoundPredicateVisitor` splits bound predicates by operation, the
shape of Java's ``BoundVisitor``. Public verbs (``bind``, ``rewrite_not``, the evaluators) are
built on these.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from icefloe.errors import InvalidFilterError
from icefloe.expressions.model import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    BoundPredicate,
    BoundReference,
    Expression,
    Not,
    Operation,
    Or,
    UnboundPredicate,
)

__all__ = ["BoundPredicateVisitor", "ExpressionVisitor", "visit"]

T = TypeVar("T")


class ExpressionVisitor(Generic[T]):
    """A bottom-up visitor; the default predicate methods reject the predicate kind."""

    def always_true(self) -> T:
        raise NotImplementedError

    def always_false(self) -> T:
        raise NotImplementedError

    def not_(self, child: T) -> T:
        raise NotImplementedError

    def and_(self, left: T, right: T) -> T:
        raise NotImplementedError

    def or_(self, left: T, right: T) -> T:
        raise NotImplementedError

    def unbound_predicate(self, predicate: UnboundPredicate) -> T:
        raise InvalidFilterError(f"expected a bound expression, found unbound predicate {predicate}")

    def bound_predicate(self, predicate: BoundPredicate) -> T:
        raise InvalidFilterError(f"expected an unbound expression, found bound predicate {predicate}")


def visit(expr: Expression, visitor: ExpressionVisitor[T]) -> T:
    """Walk ``expr`` bottom-up with ``visitor`` and return the root's result."""
    if isinstance(expr, BoundPredicate):
        return visitor.bound_predicate(expr)
    if isinstance(expr, UnboundPredicate):
        return visitor.unbound_predicate(expr)
    if isinstance(expr, And):
        return visitor.and_(visit(expr.left, visitor), visit(expr.right, visitor))
    if isinstance(expr, Or):
        return visitor.or_(visit(expr.left, visitor), visit(expr.right, visitor))
    if isinstance(expr, Not):
        return visitor.not_(visit(expr.child, visitor))
    if isinstance(expr, AlwaysTrue):
        return visitor.always_true()
    if isinstance(expr, AlwaysFalse):
        return visitor.always_false()
    raise InvalidFilterError(f"not an expression: {expr!r}")


class BoundPredicateVisitor(ExpressionVisitor[T]):
    """Dispatches bound predicates to one method per operation."""

    def is_null(self, ref: BoundReference) -> T:
        raise NotImplementedError

    def not_null(self, ref: BoundReference) -> T:
        raise NotImplementedError

    def is_nan(self, ref: BoundReference) -> T:
        raise NotImplementedError

    def not_nan(self, ref: BoundReference) -> T:
        raise NotImplementedError

    def lt(self, ref: BoundReference, value: Any) -> T:
        raise NotImplementedError

    def lt_eq(self, ref: BoundReference, value: Any) -> T:
        raise NotImplementedError

    def gt(self, ref: BoundReference, value: Any) -> T:
        raise NotImplementedError

    def gt_eq(self, ref: BoundReference, value: Any) -> T:
        raise NotImplementedError

    def eq(self, ref: BoundReference, value: Any) -> T:
        raise NotImplementedError

    def not_eq(self, ref: BoundReference, value: Any) -> T:
        raise NotImplementedError

    def starts_with(self, ref: BoundReference, prefix: str) -> T:
        raise NotImplementedError

    def not_starts_with(self, ref: BoundReference, prefix: str) -> T:
        raise NotImplementedError

    def in_(self, ref: BoundReference, values: frozenset[Any]) -> T:
        raise NotImplementedError

    def not_in(self, ref: BoundReference, values: frozenset[Any]) -> T:
        raise NotImplementedError

    def bound_predicate(self, predicate: BoundPredicate) -> T:
        op, ref = predicate.op, predicate.term
        if op.is_unary:
            return getattr(self, _METHODS[op])(ref)  # type: ignore[no-any-return]
        if op.is_set:
            return getattr(self, _METHODS[op])(ref, predicate.literals)  # type: ignore[no-any-return]
        return getattr(self, _METHODS[op])(ref, predicate.literal)  # type: ignore[no-any-return]


_METHODS = {
    Operation.IS_NULL: "is_null",
    Operation.NOT_NULL: "not_null",
    Operation.IS_NAN: "is_nan",
    Operation.NOT_NAN: "not_nan",
    Operation.LT: "lt",
    Operation.LT_EQ: "lt_eq",
    Operation.GT: "gt",
    Operation.GT_EQ: "gt_eq",
    Operation.EQ: "eq",
    Operation.NOT_EQ: "not_eq",
    Operation.STARTS_WITH: "starts_with",
    Operation.NOT_STARTS_WITH: "not_starts_with",
    Operation.IN: "in_",
    Operation.NOT_IN: "not_in",
}
