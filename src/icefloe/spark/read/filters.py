"""Bound icefloe expressions as Spark column expressions.

The result keeps Iceberg's semantics where Spark's differ, as the Arrow row filter does (the two
are tested against each other): a comparison with NaN is false (Spark orders NaN above every
number), ``!=`` and ``NOT IN`` exclude NaN and nulls. Literals are typed as their column, so
Spark neither widens the column (a float compared with a double literal) nor, in ANSI mode,
refuses the comparison.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from icefloe.expressions import Expression
from icefloe.expressions.model import BoundReference
from icefloe.expressions.visitors import BoundPredicateVisitor, visit
from icefloe.spark.types import to_spark_type
from icefloe.spec import types as it

__all__ = ["spark_literal", "to_spark_filter"]

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DATE = dt.date(1970, 1, 1)


def spark_literal(field_type: it.IcebergType, value: Any) -> Column:
    """A Spark literal of ``value`` (icefloe's representation of a ``field_type`` value), typed
    as the column it is compared with."""
    if isinstance(field_type, it.DateType):
        return F.lit(_EPOCH_DATE + dt.timedelta(days=value))
    if isinstance(field_type, it.TimestampType):
        text = (_EPOCH + dt.timedelta(microseconds=value)).isoformat(sep=" ")
        return F.expr(f"TIMESTAMP_NTZ '{text}'")
    if isinstance(field_type, it.TimestamptzType):
        return F.timestamp_micros(F.lit(value))
    if isinstance(field_type, it.UUIDType):
        return F.lit(str(value))
    if isinstance(field_type, (it.BinaryType, it.FixedType)):
        return F.lit(bytearray(value))
    return F.lit(value).cast(to_spark_type(field_type))


class _ToSpark(BoundPredicateVisitor[Column]):
    def __init__(self, column: Callable[[BoundReference], Column]):
        self._column = column

    def always_true(self) -> Column:
        return F.lit(True)

    def always_false(self) -> Column:
        return F.lit(False)

    def not_(self, child: Column) -> Column:
        return ~child

    def and_(self, left: Column, right: Column) -> Column:
        return left & right

    def or_(self, left: Column, right: Column) -> Column:
        return left | right

    def is_null(self, ref: BoundReference) -> Column:
        return self._column(ref).isNull()

    def not_null(self, ref: BoundReference) -> Column:
        return self._column(ref).isNotNull()

    def is_nan(self, ref: BoundReference) -> Column:
        return F.isnan(self._column(ref)) & self._column(ref).isNotNull()

    def not_nan(self, ref: BoundReference) -> Column:
        column = self._column(ref)
        return column.isNull() | ~F.isnan(column)

    def _compare(self, ref: BoundReference, result: Column) -> Column:
        # Spark orders NaN above every number and says NaN = NaN; Iceberg compares NaN as unknown.
        return result & ~F.isnan(self._column(ref)) if ref.is_floating else result

    def lt(self, ref: BoundReference, value: Any) -> Column:
        return self._compare(ref, self._column(ref) < spark_literal(ref.type, value))

    def lt_eq(self, ref: BoundReference, value: Any) -> Column:
        return self._compare(ref, self._column(ref) <= spark_literal(ref.type, value))

    def gt(self, ref: BoundReference, value: Any) -> Column:
        return self._compare(ref, self._column(ref) > spark_literal(ref.type, value))

    def gt_eq(self, ref: BoundReference, value: Any) -> Column:
        return self._compare(ref, self._column(ref) >= spark_literal(ref.type, value))

    def eq(self, ref: BoundReference, value: Any) -> Column:
        return self._compare(ref, self._column(ref) == spark_literal(ref.type, value))

    def not_eq(self, ref: BoundReference, value: Any) -> Column:
        return self._compare(ref, self._column(ref) != spark_literal(ref.type, value))

    def in_(self, ref: BoundReference, values: frozenset[Any]) -> Column:
        literals = [spark_literal(ref.type, v) for v in sorted(values, key=repr)]
        return self._compare(ref, self._column(ref).isin(*literals))

    def not_in(self, ref: BoundReference, values: frozenset[Any]) -> Column:
        column = self._column(ref)
        literals = [spark_literal(ref.type, v) for v in sorted(values, key=repr)]
        return self._compare(ref, column.isNotNull() & ~column.isin(*literals))

    def starts_with(self, ref: BoundReference, prefix: str) -> Column:
        return self._column(ref).startswith(F.lit(prefix))

    def not_starts_with(self, ref: BoundReference, prefix: str) -> Column:
        return ~self._column(ref).startswith(F.lit(prefix))


def to_spark_filter(expr: Expression, column: Callable[[BoundReference], Column]) -> Column:
    """``expr`` (bound) as a Spark boolean column.

    Args:
        expr: a bound expression.
        column: the Spark column of a bound reference (the caller knows how columns are named).
    """
    return visit(expr, _ToSpark(column))
