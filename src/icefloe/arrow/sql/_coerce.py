"""Spark's implicit casts between compiled nodes (``AnsiTypeCoercion``): the common type of the
operands of an operator, the decimals integers become next to decimals, and the types function
arguments are cast to."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from icefloe.arrow.sql import _types as t
from icefloe.arrow.sql._ast import Node
from icefloe.arrow.sql._casts import cast_value
from icefloe.arrow.sql._values import Compiled, Context, Value, constant
from icefloe.errors import ExpressionEvaluationError

__all__ = ["cast_to", "common_type", "decimal_operands", "expect", "promote_strings", "to_common"]


def cast_to(ctx: Context, node: Node, compiled: Compiled, target: pa.DataType) -> Compiled:
    """``compiled`` cast to ``target`` (an implicit, ANSI cast)."""
    if compiled.type == target:
        return compiled
    if compiled.type == t.NULL or compiled.is_null_constant:
        return constant(None, target)
    run, source = compiled.run, compiled.type
    if compiled.value is not None:  # a constant stays one (folded now, unless that fails)
        try:
            value = cast_value(ctx, node, compiled.value, source, target, safe=False)
        except ExpressionEvaluationError:
            pass
        else:
            return Compiled(target, lambda rows: value, foldable=True, value=value)

    def cast(rows: pa.Table) -> Value:
        return cast_value(ctx, node, run(rows), source, target, safe=False)

    return Compiled(target, cast, foldable=compiled.foldable)


def _wider_for_string(a: pa.DataType, b: pa.DataType) -> pa.DataType | None:
    """``findWiderTypeForString`` (only when exactly one side is a string)."""
    if (a == t.STRING) == (b == t.STRING):
        return None
    return t.wider_type(a, b) if t.NULL not in (a, b) else None


def promote_strings(ctx: Context, node: Node, left: Compiled, right: Compiled) -> tuple[Compiled, Compiled]:
    """A string next to another atomic type is cast to the type they meet as (BIGINT next to an
    integral type, DOUBLE next to a fractional one, else that type), as for every binary
    operator in Spark."""
    promoted = _wider_for_string(left.type, right.type)
    if promoted is None:
        return left, right
    return cast_to(ctx, node, left, promoted), cast_to(ctx, node, right, promoted)


def _literal_decimal(compiled: Compiled) -> pa.DataType | None:
    """The decimal an integer literal becomes next to a decimal: only the digits it has."""
    literal = compiled.literal
    if literal is None or not literal.integral_literal or literal.type == t.BYTE or literal.value is None:
        return None
    return t.decimal(max(len(str(abs(int(literal.value)))), 1), 0)


def decimal_operands(ctx: Context, node: Node, left: Compiled, right: Compiled) -> tuple[Compiled, Compiled]:
    """``DecimalPrecision``'s casts for a binary operator with a decimal side: an integer becomes
    a decimal (a literal only as wide as its digits), a decimal next to a FLOAT or DOUBLE a
    DOUBLE."""
    a, b = left.type, right.type
    if a == b or not (t.is_decimal(a) or t.is_decimal(b)):
        return left, right
    if t.is_decimal(b) and t.is_integral(a):
        return cast_to(ctx, node, left, _literal_decimal(left) or t.decimal_for(a)), right
    if t.is_decimal(a) and t.is_integral(b):
        return left, cast_to(ctx, node, right, _literal_decimal(right) or t.decimal_for(b))
    if t.is_decimal(b) and a in (t.FLOAT, t.DOUBLE):
        return left, cast_to(ctx, node, right, t.DOUBLE)
    if t.is_decimal(a) and b in (t.FLOAT, t.DOUBLE):
        return cast_to(ctx, node, left, t.DOUBLE), right
    return left, right


def common_type(
    ctx: Context, node: Node, types: Sequence[pa.DataType], *, strings: bool = True
) -> pa.DataType:
    """The type values of ``types`` meet as (CASE, COALESCE, IN ...); ``strings``: with string
    promotion (GREATEST and LEAST have none)."""
    found = t.wider_types(list(types)) if strings else t.tightest_types(list(types))
    if found is None:
        ctx.invalid(node, "Spark finds no common type of " + ", ".join(t.type_name(x) for x in types))
    return found


def to_common(
    ctx: Context, node: Node, children: Sequence[Compiled], *, strings: bool = True
) -> list[Compiled]:
    target = common_type(ctx, node, [c.type for c in children], strings=strings)
    return [cast_to(ctx, node, c, target) for c in children]


_EXPECTED = {
    "string": (t.STRING,),
    "boolean": (t.BOOLEAN,),
    "date": (t.DATE,),
    "int": (t.INT, t.SHORT, t.BYTE),
}


def expect(ctx: Context, node: Node, compiled: Compiled, kind: str) -> Compiled:
    """A function argument cast to what the function takes (``ImplicitTypeCasts``):

    - ``string``: any atomic type (as text);
    - ``numeric``: numbers; a string is read as a DOUBLE;
    - ``boolean``: booleans; a string is read as one;
    - ``date``: dates; a string or a timestamp becomes its date;
    - ``int``: INT, SMALLINT or TINYINT; a string is read as an INT.
    """
    source = compiled.type
    if kind == "numeric":
        if t.is_numeric(source):
            return compiled
        if source in (t.STRING, t.NULL):
            return cast_to(ctx, node, compiled, t.DOUBLE)
    elif source in _EXPECTED[kind]:
        return compiled
    elif source == t.NULL:
        return cast_to(ctx, node, compiled, _EXPECTED[kind][0])
    elif kind == "string" and t.is_atomic(source):
        return cast_to(ctx, node, compiled, t.STRING)
    elif kind in ("boolean", "int") and source == t.STRING:
        return cast_to(ctx, node, compiled, _EXPECTED[kind][0])
    elif kind == "date" and source in (t.STRING, t.TIMESTAMP, t.TIMESTAMP_NTZ):
        return cast_to(ctx, node, compiled, t.DATE)
    wanted = {"numeric": "a number", "int": "an INT"}.get(kind, f"a {kind.upper()}")
    ctx.invalid(node, f"{node.sql} needs {wanted}, not {t.type_name(source)}")
