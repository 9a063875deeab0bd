"""Residual filters: what remains of a row filter for the rows of one partition (Java's
``ResidualEvaluator``).

A predicate whose strict projection holds for the partition becomes ``always_true()``; one
whose inclusive projection does not hold becomes ``always_false()``; the others remain. The
residual of a partition is therefore ``always_true()`` when all its rows match and
``always_false()`` when none can.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

from icefloe.expressions.binder import bind
from icefloe.expressions.evaluator import RowPredicate, compile_expression
from icefloe.expressions.model import AlwaysFalse, AlwaysTrue, BoundPredicate, Expression, and_, or_
from icefloe.expressions.projection import project, project_strict, source_index
from icefloe.expressions.rewrite import rewrite_not
from icefloe.expressions.visitors import ExpressionVisitor, visit
from icefloe.spec.partition_values import partition_key
from icefloe.spec.partitioning import PartitionSpec
from icefloe.spec.schema import Schema

__all__ = ["ResidualEvaluator"]

_CACHE_SIZE = 4096


class _Residual(ExpressionVisitor[Expression]):
    def __init__(self, evaluator: ResidualEvaluator, partition: Sequence[Any]):
        self.evaluator = evaluator
        self.partition = partition

    def always_true(self) -> Expression:
        return AlwaysTrue()

    def always_false(self) -> Expression:
        return AlwaysFalse()

    def and_(self, left: Expression, right: Expression) -> Expression:
        return and_(left, right)

    def or_(self, left: Expression, right: Expression) -> Expression:
        return or_(left, right)

    def bound_predicate(self, predicate: BoundPredicate) -> Expression:
        strict, inclusive = self.evaluator._projections(predicate)
        if any(check(self.partition) is True for check in strict):
            return AlwaysTrue()
        if any(check(self.partition) is not True for check in inclusive):
            return AlwaysFalse()
        return predicate


class ResidualEvaluator:
    """Computes residual filters per partition.

    Args:
        spec: the partition spec of the partitions asked about.
        schema: the table schema.
        expr: the row filter (bound, unbound or text).
        case_sensitive: how column names are matched when binding.
    """

    def __init__(
        self, spec: PartitionSpec, schema: Schema, expr: Expression | str, case_sensitive: bool = True
    ):
        self.spec = spec
        self.expr = rewrite_not(bind(schema, expr, case_sensitive=case_sensitive))
        self._parts = source_index(spec, schema)
        self._compiled: dict[BoundPredicate, tuple[list[RowPredicate], list[RowPredicate]]] = {}
        self._cache: dict[Hashable, Expression] = {}

    def _projections(self, predicate: BoundPredicate) -> tuple[list[RowPredicate], list[RowPredicate]]:
        found = self._compiled.get(predicate)
        if found is None:
            strict: list[RowPredicate] = []
            inclusive: list[RowPredicate] = []
            for transform, ref in self._parts.get(predicate.term.field_id, []):
                projected = project_strict(transform, ref, predicate)
                if projected is not None:
                    strict.append(compile_expression(projected))
                projected = project(transform, ref, predicate)
                if projected is not None:
                    inclusive.append(compile_expression(projected))
            found = self._compiled[predicate] = (strict, inclusive)
        return found

    def residual_for(self, partition: Sequence[Any]) -> Expression:
        """The filter rows of ``partition`` (a tuple in spec field order) must still pass,
        bound to the table schema."""
        if not self._parts:
            return self.expr
        key: Hashable = partition_key(partition)  # -0.0 is not 0.0 (the spec's equality)
        try:
            cached = self._cache.get(key)
        except TypeError:  # unhashable values: no caching
            return visit(self.expr, _Residual(self, partition))
        if cached is None:
            if len(self._cache) >= _CACHE_SIZE:
                self._cache.clear()
            cached = self._cache[key] = visit(self.expr, _Residual(self, partition))
        return cached
