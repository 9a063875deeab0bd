"""Arithmetic as Spark's ANSI mode does it: ``+ - * / div %`` and unary minus.

Types follow Spark: integers keep their common type and fail on overflow; ``/`` divides as
DOUBLE unless a decimal takes part; ``div`` gives a BIGINT; decimals get the precision and scale
of Spark's ``DecimalPrecision`` (at most 38 digits, the scale giving way down to 6) and are
rounded half up, failing when the result does not fit. Any division by zero fails. A date plus
or minus an INT adds days.

Decimals are computed exactly in 256-bit decimals (76 digits); the few operand types whose exact
result needs more raise :class:`UnsupportedFeatureError`.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import pyarrow as pa
import pyarrow.compute as pc

from icefloe.arrow.sql import _types as t
from icefloe.arrow.sql._ast import Call
from icefloe.arrow.sql._casts import fit_decimal, scalar_text
from icefloe.arrow.sql._coerce import cast_to, decimal_operands, promote_strings
from icefloe.arrow.sql._values import Compiled, Context, Value, operands, run_guarded, zero_of

__all__ = ["add_days", "arithmetic", "negate"]

_WIDE = 76  # digits of a 256-bit decimal
_CHECKED = {"+": pc.add_checked, "-": pc.subtract_checked, "*": pc.multiply_checked}
_PLAIN = {"+": pc.add, "-": pc.subtract, "*": pc.multiply}


def _any(value: Value) -> bool:
    if isinstance(value, pa.Scalar):
        return bool(value.as_py())
    return bool(pc.any(value).as_py())


def _first(value: Value, mask: Value) -> str:
    if isinstance(value, pa.Scalar):
        return scalar_text(value)
    if isinstance(mask, pa.Scalar):
        return scalar_text(value[0])
    return scalar_text(pc.filter(value, mask)[0])


def arithmetic(ctx: Context, node: Call, left: Compiled, right: Compiled) -> Compiled:
    """``left <op> right`` for ``+ - * / div %``."""
    op = node.name
    left, right = promote_strings(ctx, node, left, right)
    if op in "+-" and t.DATE in (left.type, right.type):
        return _date_arithmetic(ctx, node, left, right)
    if left.type == t.NULL and right.type == t.NULL:
        left, right = cast_to(ctx, node, left, t.DOUBLE), cast_to(ctx, node, right, t.DOUBLE)
    elif left.type == t.NULL:
        left = cast_to(ctx, node, left, right.type)
    elif right.type == t.NULL:
        right = cast_to(ctx, node, right, left.type)
    if not (t.is_numeric(left.type) and t.is_numeric(right.type)):
        ctx.invalid(node, f"{op} needs numbers, not {t.type_name(left.type)} and {t.type_name(right.type)}")
    if op == "/" and not (t.is_decimal(left.type) or t.is_decimal(right.type)):
        left, right = cast_to(ctx, node, left, t.DOUBLE), cast_to(ctx, node, right, t.DOUBLE)
    if op == "div" and t.is_integral(left.type) and t.is_integral(right.type):
        left, right = cast_to(ctx, node, left, t.LONG), cast_to(ctx, node, right, t.LONG)
    left, right = decimal_operands(ctx, node, left, right)
    if t.is_decimal(left.type) and t.is_decimal(right.type):
        return _decimal(ctx, node, left, right)
    if op == "div" and (left.type in (t.FLOAT, t.DOUBLE) or right.type in (t.FLOAT, t.DOUBLE)):
        ctx.invalid(
            node,
            f"div needs integers or decimals, not {t.type_name(left.type)} and {t.type_name(right.type)}",
        )
    common = t.wider_type(left.type, right.type)
    assert common is not None
    left, right = cast_to(ctx, node, left, common), cast_to(ctx, node, right, common)
    return _binary(op, common, left, right, _numbers(ctx, node, op, common))


def _binary(
    op: str, type_: pa.DataType, left: Compiled, right: Compiled, compute: Callable[[Value, Value], Value]
) -> Compiled:
    """``compute`` of the operands as Spark evaluates them: the left one first, and the right one
    only where it is not null; for ``/ div %`` the divisor first (Spark's DivModLike)."""
    run_left, run_right, left_type, right_type = left.run, right.run, left.type, right.type

    def evaluate(rows: pa.Table) -> Value:
        if op in ("/", "div", "%"):
            y, x = operands(rows, run_right, run_left, left_type)
        else:
            x, y = operands(rows, run_left, run_right, right_type)
        return compute(x, y)

    return Compiled(type_, evaluate, foldable=left.foldable and right.foldable)


def _zero_divisor(ctx: Context, node: Call, x: Value, y: Value, error: str) -> None:
    """Spark's ANSI division fails on a zero divisor (of a dividend that is not null)."""
    zero = pc.and_(pc.equal(y, zero_of(y.type)), pc.is_valid(x))
    if _any(pc.fill_null(zero, False)):
        ctx.failed(node, f"[{error}] {_first(x, zero)} {node.name} 0: division by zero")


def _numbers(ctx: Context, node: Call, op: str, type_: pa.DataType) -> Callable[[Value, Value], Value]:
    """The operation on two values of the integral or floating type ``type_``."""
    integral = t.is_integral(type_)
    overflow = f"[ARITHMETIC_OVERFLOW] {node.sql} overflows {t.type_name(type_)}"

    def compute(x: Value, y: Value) -> Value:
        if op in _CHECKED:
            if integral:
                return run_guarded(ctx, node, lambda: _CHECKED[op](x, y), overflow)
            return _PLAIN[op](x, y)
        if op == "%":
            _zero_divisor(ctx, node, x, y, "REMAINDER_BY_ZERO")
            return pc.remainder(x, y)  # the sign of the dividend, as Java's %
        _zero_divisor(ctx, node, x, y, "DIVIDE_BY_ZERO")
        if op == "/":
            return pc.divide(x, y)
        low = pa.scalar(-(2**63), t.LONG)  # div: BIGINT, truncated
        if _any(pc.fill_null(pc.and_(pc.equal(x, low), pc.equal(y, -1)), False)):
            ctx.failed(node, f"[ARITHMETIC_OVERFLOW] {node.sql}: overflow in integral divide")
        return pc.divide(x, y)

    return compute


def negate(ctx: Context, node: Call, child: Compiled) -> Compiled:
    """Unary minus (a string is read as a DOUBLE)."""
    if child.type in (t.STRING, t.NULL):
        child = cast_to(ctx, node, child, t.DOUBLE)
    if not t.is_numeric(child.type):
        ctx.invalid(node, f"- needs a number, not {t.type_name(child.type)}")
    run, type_ = child.run, child.type
    if t.is_integral(type_):
        message = f"[ARITHMETIC_OVERFLOW] {node.sql} overflows {t.type_name(type_)}"
        return Compiled(
            type_,
            lambda rows: run_guarded(ctx, node, lambda: pc.negate_checked(run(rows)), message),
            foldable=child.foldable,
        )
    return Compiled(type_, lambda rows: pc.negate(run(rows)), foldable=child.foldable)


# ---- decimals -----------------------------------------------------------------------------------


def decimal_result(op: str, a: pa.DataType, b: pa.DataType) -> pa.DataType:
    """Spark's result type of a decimal operation (``allowPrecisionLoss``, the default)."""
    p1, s1, p2, s2 = a.precision, a.scale, b.precision, b.scale
    if op in "+-":
        scale = max(s1, s2)
        return t.adjusted_decimal(max(p1 - s1, p2 - s2) + scale + 1, scale)
    if op == "*":
        return t.adjusted_decimal(p1 + p2 + 1, s1 + s2)
    if op == "/":
        scale = max(6, s1 + p2 + 1)
        return t.adjusted_decimal(p1 - s1 + s2 + scale, scale)
    if op == "%":
        scale = max(s1, s2)
        return t.adjusted_decimal(min(p1 - s1, p2 - s2) + scale, scale)
    return t.LONG  # div


def _decimal(ctx: Context, node: Call, left: Compiled, right: Compiled) -> Compiled:
    op = node.name
    a, b = left.type, right.type
    result = decimal_result(op, a, b)
    if op in "+-" and max(a.precision - a.scale, b.precision - b.scale) + max(a.scale, b.scale) + 1 > _WIDE:
        ctx.unsupported(node, f"{t.type_name(a)} {op} {t.type_name(b)} needs more than {_WIDE} digits")
    finish = _finisher(ctx, node, result)

    def compute(x: Value, y: Value) -> Value:
        wx, wy = _wide(x, a), _wide(y, b)
        if op in "+-":
            return finish(_PLAIN[op](wx, wy))
        if op == "*":
            return finish(pc.multiply(wx, _fitting(ctx, node, wy, b, _WIDE - a.precision - 1)))
        if op == "%":
            _zero_divisor(ctx, node, x, y, "REMAINDER_BY_ZERO")
            return finish(pc.remainder(wx, wy))
        _zero_divisor(ctx, node, x, y, "DIVIDE_BY_ZERO")
        if op == "/":
            return finish(_divide(ctx, node, wx, wy, result.scale + 1))
        quotient = pc.trunc(_divide(ctx, node, wx, wy, 0))
        return _to_long(ctx, node, quotient)

    return _binary(op, result, left, right, compute)


def _wide(value: Value, type_: pa.DataType) -> Value:
    return pc.cast(value, pa.decimal256(type_.precision, type_.scale))


def _fitting(ctx: Context, node: Call, value: Value, type_: pa.DataType, digits: int) -> Value:
    """``value`` as a decimal of at most ``digits`` digits (the operands of a multiplication may
    have 75 digits between them), when its values allow; else unsupported."""
    if type_.precision <= digits:
        return value
    largest = (pc.max(pc.abs(value)) if not isinstance(value, pa.Scalar) else pc.abs(value)).as_py()
    unscaled = 0 if largest is None else int(largest.scaleb(type_.scale))
    needed = max(len(str(unscaled)), type_.scale, 1)
    if needed > digits:
        ctx.unsupported(node, f"the product of these decimals needs more than {_WIDE} digits")
    return pc.cast(value, pa.decimal256(needed, type_.scale))


def _divide(ctx: Context, node: Call, x: Value, y: Value, scale: int) -> Value:
    """``x / y`` truncated to at least ``scale`` digits (Arrow's decimal division truncates at
    ``max(4, s1 + p2 - s2 + 1)``: the dividend is scaled up to reach ``scale``)."""
    p1, s1, p2, s2 = x.type.precision, x.type.scale, y.type.precision, y.type.scale
    s1_up = max(s1, scale + s2 - p2 - 1)
    arrow_scale = max(4, s1_up + p2 - s2 + 1)
    if p1 - s1 + s2 + arrow_scale > _WIDE:
        ctx.unsupported(node, f"the quotient needs more than {_WIDE} digits")
    dividend = pc.cast(x, pa.decimal256(p1 - s1 + s1_up, s1_up))
    return pc.divide(dividend, y)


def _finisher(ctx: Context, node: Call, result: pa.DataType) -> Callable[[Value], Value]:
    return lambda exact: fit_decimal(ctx, node, exact, result)


def _to_long(ctx: Context, node: Call, quotient: Value) -> Value:
    wide = pc.cast(quotient, pa.decimal256(_WIDE, quotient.type.scale))
    bound = pa.scalar(Decimal(2**63), pa.decimal256(_WIDE, 0)).cast(wide.type)
    out = pc.fill_null(pc.or_(pc.greater_equal(wide, bound), pc.less(wide, pc.negate(bound))), False)
    if _any(out):
        ctx.failed(node, f"[ARITHMETIC_OVERFLOW] {node.sql}: overflow in integral divide")
    return pc.cast(quotient, options=pc.CastOptions(t.LONG, allow_decimal_truncate=True))


# ---- dates --------------------------------------------------------------------------------------


def _date_arithmetic(ctx: Context, node: Call, left: Compiled, right: Compiled) -> Compiled:
    """``date + n``, ``n + date``, ``date - n`` (n an INT, SMALLINT or TINYINT): days added."""
    if left.type == t.DATE and right.type in (t.INT, t.SHORT, t.BYTE, t.NULL):
        return add_days(ctx, node, left, cast_to(ctx, node, right, t.INT), subtract=node.name == "-")
    if node.name == "+" and right.type == t.DATE and left.type in (t.INT, t.SHORT, t.BYTE, t.NULL):
        return add_days(ctx, node, right, cast_to(ctx, node, left, t.INT), subtract=False)
    ctx.unsupported(
        node,
        f"{t.type_name(left.type)} {node.name} {t.type_name(right.type)} is not supported (dates take INT days)",
    )


def add_days(ctx: Context, node: Call, date: Compiled, days: Compiled, *, subtract: bool) -> Compiled:
    """``date_add`` / ``date_sub``: a DATE and an INT number of days. A result past the DATE
    range (an INT of days) fails, where Spark 4 wraps around to a date of another era."""
    run_date, run_days = date.run, cast_to(ctx, node, days, t.INT).run
    operation = pc.subtract_checked if subtract else pc.add_checked

    def compute(rows: pa.Table) -> Value:
        start, count = operands(rows, run_date, run_days, t.INT)
        base = pc.cast(start, pa.int32())
        shifted = run_guarded(
            ctx, node, lambda: operation(base, count), "[DATETIME_OVERFLOW] the date is out of range"
        )
        return pc.cast(shifted, t.DATE)

    return Compiled(t.DATE, compute, foldable=date.foldable and days.foldable)
