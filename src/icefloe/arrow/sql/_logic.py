"""Comparisons, boolean logic and the conditional forms, with Spark's semantics.

- Comparisons cast both sides to their common type (a string next to a number is read as a
  number); NaN equals NaN and is larger than every number, as in Spark.
- AND, OR and NOT follow three-valued logic; the right side of AND (OR) is only evaluated on
  the rows where the left side is not false (not true), as Spark evaluates it: ``b <> 0 AND a /
  b > 1`` does not divide by zero.
- CASE, IF, COALESCE and NVL2 evaluate each branch only on the rows that reach it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from icefloe.arrow.sql import _types as t
from icefloe.arrow.sql._ast import Call, Node
from icefloe.arrow.sql._coerce import (
    cast_to,
    decimal_operands,
    expect,
    promote_strings,
    to_common,
)
from icefloe.arrow.sql._values import Compiled, Context, Value, as_array, constant, null_of, on_rows, operands

__all__ = [
    "between",
    "case",
    "coalesce",
    "comparison",
    "extremum",
    "in_list",
    "is_null",
    "logical",
    "negation",
    "nullif",
    "nvl2",
]

_COMPARE: dict[str, Callable[[Value, Value], Value]] = {
    "=": pc.equal, "<>": pc.not_equal, "<": pc.less, "<=": pc.less_equal, ">": pc.greater,
    ">=": pc.greater_equal,
}  # fmt: skip


def _foldable(*children: Compiled) -> bool:
    return all(c.foldable for c in children)


def _orderable(t_: pa.DataType) -> bool:
    return t.is_atomic(t_) or t_ == t.NULL


def comparison(ctx: Context, node: Call, left: Compiled, right: Compiled, op: str | None = None) -> Compiled:
    """``= <> < <= > >= <=>`` of two values, cast to their common type."""
    op = op or node.name
    left, right = promote_strings(ctx, node, left, right)
    left, right = decimal_operands(ctx, node, left, right)
    common = t.wider_type(left.type, right.type)
    if common is None or not _orderable(common):
        ctx.invalid(node, f"Spark cannot compare {t.type_name(left.type)} with {t.type_name(right.type)}")
    if common == t.NULL:  # NULL compared with NULL: unknown (and true for <=>)
        return constant(True if op == "<=>" else None, t.BOOLEAN)
    left, right = cast_to(ctx, node, left, common), cast_to(ctx, node, right, common)
    compare = _comparer(op, floating=common in (t.FLOAT, t.DOUBLE))
    run_left, run_right, right_type = left.run, right.run, right.type

    def evaluate(rows: pa.Table) -> Value:
        if op == "<=>":  # null-safe: both sides always
            return compare(run_left(rows), run_right(rows))
        return compare(*operands(rows, run_left, run_right, right_type))

    return Compiled(t.BOOLEAN, evaluate, foldable=_foldable(left, right))


def _comparer(op: str, *, floating: bool) -> Callable[[Value, Value], Value]:
    """A comparison with Spark's NaN rules on floating types (NaN = NaN, NaN above all)."""
    if op == "<=>":
        equal = _comparer("=", floating=floating)

        def null_safe(x: Value, y: Value) -> Value:
            both_null = pc.and_(pc.is_null(x), pc.is_null(y))
            return pc.if_else(both_null, True, pc.fill_null(equal(x, y), False))

        return null_safe
    plain = _COMPARE[op]
    if not floating:
        return plain

    def with_nan(x: Value, y: Value) -> Value:
        nan_x, nan_y = pc.is_nan(x), pc.is_nan(y)
        if op == "=":
            return pc.or_(plain(x, y), pc.and_(nan_x, nan_y))
        if op == "<>":
            return pc.and_(plain(x, y), pc.invert(pc.and_(nan_x, nan_y)))
        if op in ("<", "<="):  # x below y: y NaN and x not, or plain (NaN never below)
            result = pc.or_(plain(x, y), pc.and_(nan_y, pc.invert(nan_x)))
            return pc.or_(result, pc.and_(nan_x, nan_y)) if op == "<=" else result
        result = pc.or_(plain(x, y), pc.and_(nan_x, pc.invert(nan_y)))
        return pc.or_(result, pc.and_(nan_x, nan_y)) if op == ">=" else result

    return with_nan


def negation(ctx: Context, node: Call, child: Compiled) -> Compiled:
    child = expect(ctx, node, child, "boolean")
    run = child.run
    return Compiled(t.BOOLEAN, lambda rows: pc.invert(run(rows)), foldable=child.foldable)


def logical(ctx: Context, node: Call, left: Compiled, right: Compiled) -> Compiled:
    """AND / OR, three-valued, the right side evaluated only where it decides."""
    left, right = promote_strings(ctx, node, left, right)
    left, right = expect(ctx, node, left, "boolean"), expect(ctx, node, right, "boolean")
    conjunction = node.name == "and"
    run_left, run_right = left.run, right.run

    def compute(rows: pa.Table) -> Value:
        first = run_left(rows)
        # the rows where the left side does not decide alone (AND: not false; OR: not true)
        open_ = pc.fill_null(first if conjunction else pc.invert(first), True)
        if isinstance(first, pa.Scalar):
            if not open_.as_py():
                return first
            second = run_right(rows)
        else:
            second = on_rows(rows, open_, run_right, t.BOOLEAN)
        return pc.and_kleene(first, second) if conjunction else pc.or_kleene(first, second)

    return Compiled(t.BOOLEAN, compute, foldable=_foldable(left, right))


def is_null(ctx: Context, node: Call, child: Compiled, *, negated: bool = False) -> Compiled:
    run = child.run

    def compute(rows: pa.Table) -> Value:
        value = run(rows)
        result = pa.scalar(not value.is_valid) if isinstance(value, pa.Scalar) else pc.is_null(value)
        return pc.invert(result) if negated else result

    return Compiled(t.BOOLEAN, compute, foldable=child.foldable)


def in_list(ctx: Context, node: Call, value: Compiled, items: Sequence[Compiled]) -> Compiled:
    """``value IN (items)``: true on a match, else null when the value or an item is null."""
    if not items:
        ctx.invalid(node, "IN needs at least one value")
    value, *rest = to_common(ctx, node, [value, *items])
    if value.type == t.NULL:
        return constant(None, t.BOOLEAN)
    if not _orderable(value.type):
        ctx.invalid(node, f"Spark cannot compare {t.type_name(value.type)} values")
    equal = _comparer("=", floating=value.type in (t.FLOAT, t.DOUBLE))
    run_value, runs = value.run, [c.run for c in rest]

    def compute(rows: pa.Table) -> Value:
        # As Spark's In: nothing is compared with a null value, and a row stops at its first match
        # (the items after it are not evaluated: `1 IN (1, 1 div 0)` is true).
        n = rows.num_rows
        present = _as_mask(pc.is_valid(as_array(run_value(rows), n)), n)
        remaining, matched, seen_null = (
            present,
            pa.repeat(pa.scalar(False), n),
            pa.repeat(pa.scalar(False), n),
        )
        for run in runs:
            compare = functools.partial(_equal_on, equal, run_value, run)
            equals = as_array(on_rows(rows, remaining, compare, t.BOOLEAN), n)
            hit = pc.and_(remaining, pc.fill_null(equals, False))
            seen_null = pc.or_(seen_null, pc.and_(remaining, pc.is_null(equals)))
            matched, remaining = pc.or_(matched, hit), pc.and_(remaining, pc.invert(hit))
        unknown = pc.or_(pc.invert(present), seen_null)
        return pc.if_else(matched, True, pc.if_else(unknown, pa.scalar(None, t.BOOLEAN), False))

    return Compiled(t.BOOLEAN, compute)  # (never folded: it computes arrays of the rows)


def _equal_on(
    equal: Callable[[Value, Value], Value],
    run_value: Callable[[pa.Table], Value],
    run_item: Callable[[pa.Table], Value],
    rows: pa.Table,
) -> Value:
    return equal(run_value(rows), run_item(rows))


def between(ctx: Context, node: Call, value: Compiled, low: Compiled, high: Compiled) -> Compiled:
    """``value BETWEEN low AND high``: Spark's ``value >= low AND value <= high``."""
    above = comparison(ctx, node, value, low, ">=")
    below = comparison(ctx, node, value, high, "<=")
    return logical(ctx, Call(node.sql, "and", node.args), above, below)


def _as_mask(value: Value, length: int) -> pa.Array:
    return pc.fill_null(as_array(value, length), False)


def case(
    ctx: Context,
    node: Node,
    whens: Sequence[tuple[Compiled, Compiled]],
    otherwise: Compiled | None,
    *,
    null_conditions: bool = False,
) -> Compiled:
    """``CASE WHEN c1 THEN v1 ... ELSE e END``: the values cast to their common type, each
    condition evaluated on the rows no earlier condition took, each value on the rows it gives.
    ``null_conditions``: a NULL condition is allowed (IF's, not CASE's, as in Spark)."""
    accepted = (t.BOOLEAN, t.NULL) if null_conditions else (t.BOOLEAN,)
    for condition, _ in whens:
        if condition.type not in accepted:
            ctx.invalid(node, f"a CASE or IF condition must be a BOOLEAN, not {t.type_name(condition.type)}")
    whens = [(cast_to(ctx, node, condition, t.BOOLEAN), value) for condition, value in whens]
    values = to_common(ctx, node, [v for _, v in whens] + ([otherwise] if otherwise is not None else []))
    type_ = values[0].type if values else t.NULL
    if type_ == t.NULL:  # every branch is NULL
        return constant(None, t.NULL)
    same = _same_constant([v.value for v in values] + ([] if otherwise is not None else [null_of(type_)]))
    if same is not None:  # Spark's SimplifyConditionals: one value whatever the conditions say
        return constant(same.as_py(), type_)
    branches = [(condition.run, value.run) for (condition, _), value in zip(whens, values, strict=False)]
    default = values[-1].run if otherwise is not None else None

    def compute(rows: pa.Table) -> Value:
        n = rows.num_rows
        remaining = pa.repeat(pa.scalar(True), n)
        result: Value = null_of(type_)
        for run_condition, run_value in branches:
            taken = pc.and_(remaining, _as_mask(on_rows(rows, remaining, run_condition, t.BOOLEAN), n))
            result = pc.if_else(taken, on_rows(rows, taken, run_value, type_), result)
            remaining = pc.and_(remaining, pc.invert(taken))
        if default is not None:
            result = pc.if_else(remaining, on_rows(rows, remaining, default, type_), result)
        return result if n else pa.array([], type_)

    return Compiled(type_, compute)  # (never folded: it computes arrays of the rows)


def _same_constant(values: list[pa.Scalar | None]) -> pa.Scalar | None:
    first = values[0]
    if first is None or any(v is None or not v.equals(first) for v in values[1:]):
        return None
    return first


def simple_case(
    ctx: Context,
    node: Node,
    operand: Compiled,
    whens: Sequence[tuple[Compiled, Compiled]],
    otherwise: Compiled | None,
) -> Compiled:
    """``CASE x WHEN a THEN ...``: Spark's ``CASE WHEN x = a THEN ...``."""
    conditions = [(comparison(ctx, Call(node.sql, "=", ()), operand, key), value) for key, value in whens]
    return case(ctx, node, conditions, otherwise)


def coalesce(ctx: Context, node: Call, children: Sequence[Compiled]) -> Compiled:
    """The first non-null argument; each evaluated only on the rows still null."""
    if not children:
        ctx.invalid(node, "coalesce needs at least one argument")
    children = to_common(ctx, node, children)
    type_, runs = children[0].type, [c.run for c in children]
    if type_ == t.NULL:
        return constant(None, t.NULL)

    def compute(rows: pa.Table) -> Value:
        result = runs[0](rows)
        for run in runs[1:]:
            missing = _as_mask(
                pc.is_null(result) if not isinstance(result, pa.Scalar) else pa.scalar(not result.is_valid),
                rows.num_rows,
            )
            result = pc.coalesce(result, on_rows(rows, missing, run, type_))
        return result

    return Compiled(type_, compute, foldable=_foldable(*children))


def nullif(ctx: Context, node: Call, left: Compiled, right: Compiled) -> Compiled:
    """``nullif(a, b)``: null where ``a = b``, else ``a`` (of ``a``'s type)."""
    equal = comparison(ctx, node, left, right, "=")
    if left.is_null_constant:  # Spark's If(a = b, NULL, a), whose NULL = b folds away
        return constant(None, left.type)
    run_left, run_equal, type_ = left.run, equal.run, left.type
    if type_ == t.NULL:
        return constant(None, t.NULL)

    def compute(rows: pa.Table) -> Value:
        value, same = run_left(rows), run_equal(rows)
        return pc.if_else(pc.fill_null(same, False), null_of(type_), value)

    return Compiled(type_, compute, foldable=_foldable(left, right))


def nvl2(ctx: Context, node: Call, test: Compiled, present: Compiled, absent: Compiled) -> Compiled:
    """``nvl2(a, b, c)``: ``b`` where ``a`` is not null, else ``c``."""
    return case(ctx, node, [(is_null(ctx, node, test, negated=True), present)], absent)


def extremum(ctx: Context, node: Call, children: Sequence[Compiled]) -> Compiled:
    """``greatest`` / ``least``: nulls skipped; NaN is the greatest value."""
    if len(children) < 2:
        ctx.invalid(node, f"{node.name} needs at least two arguments")
    children = to_common(ctx, node, children, strings=False)
    type_ = children[0].type
    if type_ == t.NULL:
        return constant(None, t.NULL)
    if not _orderable(type_):
        ctx.invalid(node, f"{node.name} cannot order {t.type_name(type_)} values")
    greatest = node.name == "greatest"
    combine = pc.max_element_wise if greatest else pc.min_element_wise
    runs = [c.run for c in children]
    floating = type_ in (t.FLOAT, t.DOUBLE)

    # Arrow orders dates, timestamps and booleans only as their integers
    as_integer = {t.DATE: pa.int32(), t.BOOLEAN: pa.int8()}.get(
        type_, pa.int64() if type_ in (t.TIMESTAMP, t.TIMESTAMP_NTZ) else None
    )
    if type_ == t.BINARY:
        ctx.unsupported(node, f"{node.name} of BINARY values is not implemented")

    def compute(rows: pa.Table) -> Value:
        values = [run(rows) for run in runs]
        if as_integer is not None:
            return pc.cast(combine(*[pc.cast(v, as_integer) for v in values], skip_nulls=True), type_)
        result = combine(*values, skip_nulls=True)
        if floating and greatest:  # Arrow skips NaN; Spark orders it above every number
            nan = pc.fill_null(pc.is_nan(values[0]), False)
            for value in values[1:]:
                nan = pc.or_(nan, pc.fill_null(pc.is_nan(value), False))
            result = pc.if_else(nan, pa.scalar(float("nan"), type_), result)
        return result

    return Compiled(type_, compute, foldable=_foldable(*children))
