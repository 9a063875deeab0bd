"""Projection of row filters onto partition values (Java's ``Projections`` and the transforms'
``project`` / ``projectStrict``).

For a row filter and a partition spec:

- the **inclusive** projection is true for the partition of every row the filter matches
  (false: no row of the partition can match; used to prune manifests and files);
- the **strict** projection is true only for partitions whose rows all match (used for
  residuals and metadata-only deletes).

Both are bound expressions on the spec's partition struct (``spec.partition_type(schema)``;
references carry the partition field ids and positions). A predicate on a column with several
partition fields is projected through each: inclusive results are and-ed, strict ones or-ed.
Where a transform cannot express a predicate the inclusive projection is ``always_true()`` and
the strict one ``always_false()`` (correct, not pruning).

Time transforms (year, month, day, hour) widen inclusive and narrow strict projections below
the epoch, as Java does, because writers before Iceberg 0.11 rounded pre-1970 values toward
zero. Truncation of ``int``/``long`` follows Java's wrapping arithmetic, where the values
within ``width`` of the type's minimum wrap around to a large partition value; projections
account for that too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from icefloe.expressions.binder import bind
from icefloe.expressions.model import (
    AlwaysFalse,
    AlwaysTrue,
    BoundPredicate,
    BoundReference,
    Expression,
    Operation,
    and_,
    or_,
)
from icefloe.expressions.rewrite import rewrite_not
from icefloe.expressions.visitors import ExpressionVisitor, visit
from icefloe.spec.conversions import decimal_from_unscaled, unscaled_decimal
from icefloe.spec.partitioning import PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.spec.transforms import (
    BucketTransform,
    HourTransform,
    IdentityTransform,
    TimeTransform,
    Transform,
    TruncateTransform,
    UnknownTransform,
)
from icefloe.spec.types import (
    BinaryType,
    DateType,
    DecimalType,
    IcebergType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
    TimestamptzType,
)

__all__ = [
    "inclusive_projection",
    "partition_references",
    "project",
    "project_strict",
    "source_index",
    "strict_projection",
]

Fn = Callable[[Any], Any]
_O = Operation


def _pred(op: Operation, ref: BoundReference, value: Any = None) -> BoundPredicate:
    return BoundPredicate(op, ref, value)


def _set(op: Operation, ref: BoundReference, values: Iterable[Any]) -> Expression:
    distinct = frozenset(values)
    if len(distinct) == 1:
        return _pred(_O.EQ if op == _O.IN else _O.NOT_EQ, ref, next(iter(distinct)))
    return BoundPredicate(op, ref, literals=distinct)


def _int_range(source_type: IcebergType) -> tuple[int, int]:
    """The range of the integer representation of int, long, date, time and timestamps."""
    if isinstance(source_type, (IntegerType, DateType)):
        return -(2**31), 2**31 - 1
    return -(2**63), 2**63 - 1


def _step(source_type: IcebergType, value: Any, delta: int) -> Any:
    """The adjacent value ``delta`` units away, or None outside the type's range."""
    if isinstance(source_type, DecimalType):
        # In units of the scale; truncation of decimals is exact, so no range applies.
        return decimal_from_unscaled(unscaled_decimal(value, source_type.scale) + delta, source_type.scale)
    low, high = _int_range(source_type)
    stepped = value + delta
    return stepped if low <= stepped <= high else None


# ---------------------------------------------------------------------------------------------
# Order-preserving transforms of discrete values: truncate (numbers) and the time transforms


class _Wrap:
    """Java's truncate of int/long near the minimum: values in [low, first) map to ``value``."""

    def __init__(self, first: int, value: int):
        self.first = first
        self.value = value


def _truncate_wrap(transform: TruncateTransform, source_type: IcebergType, f: Fn) -> _Wrap | None:
    if not isinstance(source_type, (IntegerType, LongType)):
        return None
    low = _int_range(source_type)[0]
    width = transform.width
    if low % width == 0:
        return None
    first = -(-low // width) * width  # the first multiple of width at or above the minimum
    return _Wrap(first, f(low))


def _monotone(
    op: Operation, ref: BoundReference, value: Any, f: Fn, source: IcebergType, wrap: _Wrap | None
) -> Expression | None:
    """Inclusive projection: ``x < v`` is ``x <= v - 1`` and so ``f(x) <= f(v - 1)``."""
    if op in (_O.LT, _O.LT_EQ):
        bound = value if op == _O.LT_EQ else _step(source, value, -1)
        if bound is None:
            return AlwaysFalse()
        if wrap is None:
            return _pred(_O.LT_EQ, ref, f(bound))
        if bound < wrap.first:
            return _pred(_O.EQ, ref, wrap.value)
        return or_(_pred(_O.LT_EQ, ref, f(bound)), _pred(_O.EQ, ref, wrap.value))
    if op in (_O.GT, _O.GT_EQ):
        bound = value if op == _O.GT_EQ else _step(source, value, 1)
        if bound is None:
            return AlwaysFalse()
        if wrap is None or bound >= wrap.first:
            return _pred(_O.GT_EQ, ref, f(bound))
        return or_(_pred(_O.GT_EQ, ref, wrap.first), _pred(_O.EQ, ref, wrap.value))
    if op == _O.EQ:
        return _pred(_O.EQ, ref, f(value))
    return None


def _monotone_strict(
    op: Operation, ref: BoundReference, value: Any, f: Fn, source: IcebergType, wrap: _Wrap | None
) -> Expression | None:
    """Strict projection: ``f(x) < f(v)`` implies ``x < v``."""
    if op in (_O.LT, _O.LT_EQ):
        bound = value if op == _O.LT else _step(source, value, 1)
        if bound is None:
            return _pred(_O.NOT_NULL, ref)  # x <= the maximum holds for every value
        if wrap is not None and bound < wrap.first:
            return None
        return _pred(_O.LT, ref, f(bound))
    if op in (_O.GT, _O.GT_EQ):
        bound = value if op == _O.GT else _step(source, value, -1)
        if bound is None:
            return _pred(_O.NOT_NULL, ref)
        if wrap is None:
            return _pred(_O.GT, ref, f(bound))
        # The wrapped partition holds the smallest values: it never satisfies x > bound.
        lower = _pred(_O.GT, ref, f(bound)) if bound >= wrap.first else _pred(_O.GT_EQ, ref, wrap.first)
        return and_(lower, _pred(_O.NOT_EQ, ref, wrap.value))
    if op == _O.NOT_EQ:
        return _pred(_O.NOT_EQ, ref, f(value))
    return None


def _fix_inclusive_time(expr: Expression | None) -> Expression | None:
    """Also match the partition one above a negative one (pre-0.11 writers rounded toward 0)."""
    if not isinstance(expr, BoundPredicate):
        return expr
    op, ref, value = expr.op, expr.term, expr.literal
    if op in (_O.LT, _O.LT_EQ) and value < 0:
        return _pred(op, ref, value + 1)
    if op == _O.EQ and value < 0:
        return _set(_O.IN, ref, (value, value + 1))
    if op == _O.IN:
        assert expr.literals is not None
        return _set(_O.IN, ref, {*expr.literals, *(v + 1 for v in expr.literals if v < 0)})
    return expr


def _fix_strict_time(expr: Expression | None) -> Expression | None:
    if not isinstance(expr, BoundPredicate):
        return expr
    op, ref, value = expr.op, expr.term, expr.literal
    if op in (_O.GT, _O.GT_EQ) and value <= 0:
        return _pred(op, ref, value + 1)
    if op == _O.NOT_EQ and value < 0:
        return _set(_O.NOT_IN, ref, (value, value + 1))
    if op == _O.NOT_IN:
        assert expr.literals is not None
        return _set(_O.NOT_IN, ref, {*expr.literals, *(v + 1 for v in expr.literals if v < 0)})
    return expr


# ---------------------------------------------------------------------------------------------
# The hour of a microsecond timestamp wraps to 32 bits, as Java's (int) cast does: 2**31 hours
# from the epoch (around the years 246,970 and -243,000) the partition values start over at the
# other end. The transform is monotone only between _HOUR_LOW and _HOUR_HIGH; the timestamps
# below that range have partition values at the top of the int range (from f(INT64 minimum)
# up), those above it at the bottom (up to f(INT64 maximum)). Range projections must cover
# these bands too (inclusive) or stay clear of them (strict).

_MICROS_PER_HOUR = 3_600_000_000
_HOUR_LOW, _HOUR_HIGH = -(2**31) * _MICROS_PER_HOUR, 2**31 * _MICROS_PER_HOUR


def _hour_wraps(transform: Transform, source: IcebergType) -> bool:
    return isinstance(transform, HourTransform) and isinstance(source, (TimestampType, TimestamptzType))


def _hour_inclusive(op: Operation, ref: BoundReference, value: Any, f: Fn, source: IcebergType) -> Expression:
    """``x <= b`` (or ``x >= b``): the partitions of the matching values within the range, and
    both wrapped bands (below the range ``x <= b`` always matches; above it ``x >= b`` does)."""
    low, high = _int_range(source)
    parts: list[Expression | None] = []
    if op in (_O.LT, _O.LT_EQ):
        bound = value if op == _O.LT_EQ else _step(source, value, -1)
        if bound is None:
            return AlwaysFalse()
        if bound >= _HOUR_LOW:
            parts.append(_fix_inclusive_time(_pred(_O.LT_EQ, ref, f(min(bound, _HOUR_HIGH - 1)))))
    else:
        bound = value if op == _O.GT_EQ else _step(source, value, 1)
        if bound is None:
            return AlwaysFalse()
        if bound < _HOUR_HIGH:
            parts.append(_pred(_O.GT_EQ, ref, f(max(bound, _HOUR_LOW))))
    parts += [_pred(_O.GT_EQ, ref, f(low)), _pred(_O.LT_EQ, ref, f(high))]
    return or_(*(part for part in parts if part is not None))


def _hour_strict(
    op: Operation, ref: BoundReference, value: Any, f: Fn, source: IcebergType
) -> Expression | None:
    """Partitions within the range whose values all match, and that no wrapped value shares."""
    low, high = _int_range(source)
    if op in (_O.LT, _O.LT_EQ):
        bound = value if op == _O.LT else _step(source, value, 1)
        if bound is None:
            return _pred(_O.NOT_NULL, ref)  # x <= the maximum holds for every value
        if bound <= _HOUR_LOW:
            return None  # the partitions of values below the range hold values within it too
        middle: Expression | None = (
            _pred(_O.LT, ref, f(bound)) if bound < _HOUR_HIGH else _pred(_O.NOT_NULL, ref)
        )
        beyond = _pred(_O.GT, ref, f(high))  # not a partition of values above the range
    else:
        bound = value if op == _O.GT else _step(source, value, -1)
        if bound is None:
            return _pred(_O.NOT_NULL, ref)
        if bound >= _HOUR_HIGH - 1:
            return None  # the partitions of values above the range hold values within it too
        middle = (
            _fix_strict_time(_pred(_O.GT, ref, f(bound))) if bound >= _HOUR_LOW else _pred(_O.NOT_NULL, ref)
        )
        beyond = _pred(_O.LT, ref, f(low))  # nor one of values below it
    return None if middle is None else and_(middle, beyond)


# ---------------------------------------------------------------------------------------------
# Truncated strings and binary


def _truncated(op: Operation, ref: BoundReference, value: Any, f: Fn, width: int) -> Expression | None:
    if op in (_O.LT, _O.LT_EQ):
        return _pred(_O.LT_EQ, ref, f(value))
    if op in (_O.GT, _O.GT_EQ):
        return _pred(_O.GT_EQ, ref, f(value))
    if op == _O.EQ:
        return _pred(_O.EQ, ref, f(value))
    if op == _O.STARTS_WITH:
        return _pred(_O.STARTS_WITH, ref, f(value))
    if op == _O.NOT_STARTS_WITH and len(value) <= width:
        return _pred(_O.NOT_STARTS_WITH, ref, value)
    return None


def _truncated_strict(op: Operation, ref: BoundReference, value: Any, f: Fn, width: int) -> Expression | None:
    if op in (_O.LT, _O.LT_EQ):
        return _pred(_O.LT, ref, f(value))
    if op in (_O.GT, _O.GT_EQ):
        return _pred(_O.GT, ref, f(value))
    if op == _O.NOT_EQ:
        return _pred(_O.NOT_EQ, ref, f(value))
    if op == _O.STARTS_WITH and len(value) <= width:
        return _pred(_O.STARTS_WITH, ref, value)
    if op == _O.NOT_STARTS_WITH:
        return _pred(_O.NOT_STARTS_WITH, ref, f(value))
    return None


# ---------------------------------------------------------------------------------------------
# Per transform


def _project(
    transform: Transform, ref: BoundReference, pred: BoundPredicate, *, strict: bool
) -> Expression | None:
    source = pred.term.type
    op = pred.op
    if transform.is_void or not transform.can_transform(source):
        return None
    if isinstance(transform, IdentityTransform):
        return BoundPredicate(op, ref, pred.literal, pred.literals)
    if op in (_O.IS_NULL, _O.NOT_NULL):
        return _pred(op, ref)  # the other transforms keep nulls null and values non-null
    if op.is_unary:
        return None
    f = transform.bind(source)
    if op.is_set:
        assert pred.literals is not None
        # Any function maps "x in S" into "f(x) in f(S)", and "f(x) not in f(S)" into "x not in S".
        if op != (_O.NOT_IN if strict else _O.IN):
            return None
        projected = _set(op, ref, map(f, pred.literals))
        if isinstance(transform, TimeTransform):
            return _fix_strict_time(projected) if strict else _fix_inclusive_time(projected)
        return projected
    value = pred.literal
    if isinstance(transform, BucketTransform):
        if op == (_O.NOT_EQ if strict else _O.EQ):
            return _pred(op, ref, f(value))
        return None
    if isinstance(transform, TruncateTransform) and isinstance(source, (StringType, BinaryType)):
        width = transform.width
        return _truncated_strict(op, ref, value, f, width) if strict else _truncated(op, ref, value, f, width)
    if isinstance(transform, TruncateTransform):
        wrap = _truncate_wrap(transform, source, f)
        if strict:
            return _monotone_strict(op, ref, value, f, source, wrap)
        return _monotone(op, ref, value, f, source, wrap)
    if isinstance(transform, TimeTransform):
        if _hour_wraps(transform, source) and op in (_O.LT, _O.LT_EQ, _O.GT, _O.GT_EQ):
            return (
                _hour_strict(op, ref, value, f, source)
                if strict
                else _hour_inclusive(op, ref, value, f, source)
            )
        if strict:
            return _fix_strict_time(_monotone_strict(op, ref, value, f, source, None))
        return _fix_inclusive_time(_monotone(op, ref, value, f, source, None))
    return None


def project(transform: Transform, partition_ref: BoundReference, pred: BoundPredicate) -> Expression | None:
    """The inclusive projection of one predicate through ``transform``, or None when the
    transform cannot express it (the projection is then ``always_true()``)."""
    return _project(transform, partition_ref, pred, strict=False)


def project_strict(
    transform: Transform, partition_ref: BoundReference, pred: BoundPredicate
) -> Expression | None:
    """The strict projection of one predicate, or None (the projection is ``always_false()``)."""
    return _project(transform, partition_ref, pred, strict=True)


def partition_references(spec: PartitionSpec, schema: Schema) -> list[BoundReference | None]:
    """References to the partition fields of ``spec``, by position in the partition tuple.

    None for a field no filter on ``schema`` can project to: its source column is gone from the
    schema, or its transform is unknown or no longer applies to the source's type.
    """
    refs: list[BoundReference | None] = []
    for position, pf in enumerate(spec.fields):
        source = schema.find_field(pf.source_id)
        if (
            source is None
            or isinstance(pf.transform, UnknownTransform)
            or not pf.transform.can_transform(source.field_type)
        ):
            refs.append(None)
            continue
        field = NestedField(pf.field_id, pf.name, pf.transform.result_type(source.field_type), required=False)
        refs.append(BoundReference(pf.field_id, field, (position,), (pf.name,), True))
    return refs


def source_index(spec: PartitionSpec, schema: Schema) -> dict[int, list[tuple[Transform, BoundReference]]]:
    """The projectable partition fields of ``spec`` by source field id."""
    index: dict[int, list[tuple[Transform, BoundReference]]] = {}
    for pf, ref in zip(spec.fields, partition_references(spec, schema)):
        if ref is not None:
            index.setdefault(pf.source_id, []).append((pf.transform, ref))
    return index


class _Projector(ExpressionVisitor[Expression]):
    def __init__(self, spec: PartitionSpec, schema: Schema, strict: bool):
        self.parts = source_index(spec, schema)
        self.strict = strict

    def always_true(self) -> Expression:
        return AlwaysTrue()

    def always_false(self) -> Expression:
        return AlwaysFalse()

    def and_(self, left: Expression, right: Expression) -> Expression:
        return and_(left, right)

    def or_(self, left: Expression, right: Expression) -> Expression:
        return or_(left, right)

    def bound_predicate(self, predicate: BoundPredicate) -> Expression:
        parts = self.parts.get(predicate.term.field_id, [])
        if self.strict:
            return or_(*(project_strict(t, ref, predicate) or AlwaysFalse() for t, ref in parts))
        return and_(*(project(t, ref, predicate) or AlwaysTrue() for t, ref in parts))


def _projection(
    spec: PartitionSpec, schema: Schema, expr: Expression | str, case_sensitive: bool, strict: bool
) -> Expression:
    bound = rewrite_not(bind(schema, expr, case_sensitive=case_sensitive))
    return visit(bound, _Projector(spec, schema, strict))


def inclusive_projection(
    spec: PartitionSpec, schema: Schema, expr: Expression | str, *, case_sensitive: bool = True
) -> Expression:
    """The partition filter true for the partition of every matching row (see the module)."""
    return _projection(spec, schema, expr, case_sensitive, strict=False)


def strict_projection(
    spec: PartitionSpec, schema: Schema, expr: Expression | str, *, case_sensitive: bool = True
) -> Expression:
    """The partition filter true only where every row of the partition matches."""
    return _projection(spec, schema, expr, case_sensitive, strict=True)
