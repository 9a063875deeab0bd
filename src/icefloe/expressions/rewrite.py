"""Rewrites and queries of expressions: ``rewrite_not``, ``unbind``, ``referenced_field_ids``."""

from __future__ import annotations

from icefloe.expressions.literals import literal_for
from icefloe.expressions.model import (
    AlwaysFalse,
    AlwaysTrue,
    BoundPredicate,
    Expression,
    Reference,
    UnboundPredicate,
    and_,
    not_,
    or_,
)
from icefloe.expressions.visitors import ExpressionVisitor, visit

__all__ = ["referenced_field_ids", "rewrite_not", "unbind"]


class _RebuildVisitor(ExpressionVisitor[Expression]):
    """Rebuilds the tree with folding; subclasses change what they need."""

    def always_true(self) -> Expression:
        return AlwaysTrue()

    def always_false(self) -> Expression:
        return AlwaysFalse()

    def and_(self, left: Expression, right: Expression) -> Expression:
        return and_(left, right)

    def or_(self, left: Expression, right: Expression) -> Expression:
        return or_(left, right)

    def unbound_predicate(self, predicate: UnboundPredicate) -> Expression:
        return predicate

    def bound_predicate(self, predicate: BoundPredicate) -> Expression:
        return predicate


class _RewriteNot(_RebuildVisitor):
    def not_(self, child: Expression) -> Expression:
        return child.negate()


def rewrite_not(expr: Expression) -> Expression:
    """The same filter without ``Not`` nodes: negations pushed into the predicates
    (``NOT (a < 5 OR b IS NULL)`` is ``a >= 5 AND b IS NOT NULL``).

    Exact under icefloe's semantics (see :mod:`icefloe.expressions.model`): a negated
    predicate is unknown wherever the predicate is.
    """
    return visit(expr, _RewriteNot())


class _Unbind(_RebuildVisitor):
    def not_(self, child: Expression) -> Expression:
        return not_(child)

    def bound_predicate(self, predicate: BoundPredicate) -> Expression:
        type_ = predicate.term.type
        lit = None if predicate.literal is None else literal_for(type_, predicate.literal)
        lits = (
            None
            if predicate.literals is None
            else frozenset(literal_for(type_, v) for v in predicate.literals)
        )
        return UnboundPredicate(predicate.op, Reference(predicate.term.name), lit, lits)


def unbind(expr: Expression) -> Expression:
    """The expression with bound predicates turned back into predicates by column name, with
    literals of the columns' types (``str`` of the result equals ``str`` of ``expr``)."""
    return visit(expr, _Unbind())


class _FieldIds(ExpressionVisitor[frozenset[int]]):
    def always_true(self) -> frozenset[int]:
        return frozenset()

    def always_false(self) -> frozenset[int]:
        return frozenset()

    def not_(self, child: frozenset[int]) -> frozenset[int]:
        return child

    def and_(self, left: frozenset[int], right: frozenset[int]) -> frozenset[int]:
        return left | right

    def or_(self, left: frozenset[int], right: frozenset[int]) -> frozenset[int]:
        return left | right

    def bound_predicate(self, predicate: BoundPredicate) -> frozenset[int]:
        return frozenset((predicate.term.field_id,))


def referenced_field_ids(expr: Expression) -> frozenset[int]:
    """The field ids the bound predicates of ``expr`` read.

    Raises:
        InvalidFilterError: ``expr`` holds unbound predicates (bind it first).
    """
    return visit(expr, _FieldIds())
