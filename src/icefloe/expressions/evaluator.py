"""Evaluate a bound expression on single rows of Python values (tests, debugging, partitions).

Rows are mappings by column name (nested mappings for structs, as ``pyarrow`` ``to_pylist``
gives) or sequences by position (nested sequences; partition tuples), holding values in
icefloe's representation (see :mod:`icefloe.spec.types`). Evaluation is three-valued as
described in :mod:`icefloe.expressions.model`; a row matches when the result is true. For many
rows use :mod:`icefloe.arrow.row_filter`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from icefloe.expressions.binder import bind
from icefloe.expressions.model import BoundReference, Expression
from icefloe.expressions.visitors import BoundPredicateVisitor, visit
from icefloe.spec.schema import Schema
from icefloe.spec.types import StructType

__all__ = ["Evaluator", "compile_expression", "evaluate"]

Truth = bool | None
RowPredicate = Callable[[Any], Truth]


def _comparable_getter(ref: BoundReference) -> Callable[[Any], Any]:
    """The column's value, or None where comparisons are unknown (null, and NaN)."""
    get = ref.get
    if not ref.is_floating:
        return get

    def get_number(row: Any) -> Any:
        value = get(row)
        return None if value is None or value != value else value

    return get_number


class _Compiler(BoundPredicateVisitor[RowPredicate]):
    def always_true(self) -> RowPredicate:
        return lambda row: True

    def always_false(self) -> RowPredicate:
        return lambda row: False

    def not_(self, child: RowPredicate) -> RowPredicate:
        def negated(row: Any) -> Truth:
            result = child(row)
            return None if result is None else not result

        return negated

    def and_(self, left: RowPredicate, right: RowPredicate) -> RowPredicate:
        def both(row: Any) -> Truth:
            a = left(row)
            if a is False:
                return False
            b = right(row)
            if b is False:
                return False
            return None if a is None or b is None else True

        return both

    def or_(self, left: RowPredicate, right: RowPredicate) -> RowPredicate:
        def either(row: Any) -> Truth:
            a = left(row)
            if a is True:
                return True
            b = right(row)
            if b is True:
                return True
            return None if a is None or b is None else False

        return either

    def is_null(self, ref: BoundReference) -> RowPredicate:
        get = ref.get
        return lambda row: get(row) is None

    def not_null(self, ref: BoundReference) -> RowPredicate:
        get = ref.get
        return lambda row: get(row) is not None

    def is_nan(self, ref: BoundReference) -> RowPredicate:
        get = ref.get

        def nan(row: Any) -> Truth:
            value = get(row)
            return value is not None and value != value

        return nan

    def not_nan(self, ref: BoundReference) -> RowPredicate:
        get = ref.get

        def not_nan(row: Any) -> Truth:
            value = get(row)
            return value is None or value == value

        return not_nan

    def _compare(self, ref: BoundReference, test: Callable[[Any], bool]) -> RowPredicate:
        get = _comparable_getter(ref)

        def compare(row: Any) -> Truth:
            value = get(row)
            return None if value is None else test(value)

        return compare

    def lt(self, ref: BoundReference, value: Any) -> RowPredicate:
        return self._compare(ref, lambda x: bool(x < value))

    def lt_eq(self, ref: BoundReference, value: Any) -> RowPredicate:
        return self._compare(ref, lambda x: bool(x <= value))

    def gt(self, ref: BoundReference, value: Any) -> RowPredicate:
        return self._compare(ref, lambda x: bool(x > value))

    def gt_eq(self, ref: BoundReference, value: Any) -> RowPredicate:
        return self._compare(ref, lambda x: bool(x >= value))

    def eq(self, ref: BoundReference, value: Any) -> RowPredicate:
        return self._compare(ref, lambda x: bool(x == value))

    def not_eq(self, ref: BoundReference, value: Any) -> RowPredicate:
        return self._compare(ref, lambda x: bool(x != value))

    def starts_with(self, ref: BoundReference, prefix: str) -> RowPredicate:
        return self._compare(ref, lambda x: bool(x.startswith(prefix)))

    def not_starts_with(self, ref: BoundReference, prefix: str) -> RowPredicate:
        return self._compare(ref, lambda x: not x.startswith(prefix))

    def in_(self, ref: BoundReference, values: frozenset[Any]) -> RowPredicate:
        return self._compare(ref, lambda x: x in values)

    def not_in(self, ref: BoundReference, values: frozenset[Any]) -> RowPredicate:
        return self._compare(ref, lambda x: x not in values)


def compile_expression(expr: Expression) -> RowPredicate:
    """A function giving the three-valued result (True, False or None for unknown) of a bound
    expression on a row.

    Raises:
        InvalidFilterError: ``expr`` is not bound.
    """
    return visit(expr, _Compiler())


def evaluate(expr: Expression, row: Any) -> bool:
    """Whether a row matches a bound expression (the expression is true for it)."""
    return compile_expression(expr)(row) is True


class Evaluator:
    """Binds a filter once and evaluates it on many rows (Java's ``Evaluator``).

    Args:
        struct: the schema (or struct type) of the rows.
        expr: the filter, bound or unbound, or filter text.
        case_sensitive: how column names are matched when binding.
    """

    def __init__(self, struct: Schema | StructType, expr: Expression | str, *, case_sensitive: bool = True):
        self.expr = bind(struct, expr, case_sensitive=case_sensitive)
        self._predicate = compile_expression(self.expr)

    def eval(self, row: Any) -> bool:
        """Whether the row matches."""
        return self._predicate(row) is True

    def truth(self, row: Any) -> Truth:
        """The three-valued result: True, False, or None when unknown (SQL's NULL)."""
        return self._predicate(row)
