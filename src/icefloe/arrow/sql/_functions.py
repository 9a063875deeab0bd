"""Spark SQL's common functions on Arrow arrays, each with Spark's argument casts, result type
and edge cases (ANSI mode, UTC session time zone).

Strings: ``concat`` (and ``||``), ``upper``, ``lower``, ``trim`` / ``ltrim`` / ``rtrim`` / ``btrim``,
``substring`` / ``substr``, ``length``, ``replace``. Numbers: ``abs``, ``round``, ``floor``,
``ceil``. Dates: ``current_date``, ``current_timestamp`` / ``now``, ``date_add``, ``date_sub``,
``datediff``, ``year``, ``month``, ``day``. The conditional ones (``coalesce``, ``nvl``,
``nullif``, ``nvl2``, ``if``, ``greatest``, ``least``) are in ``_logic.py``.

``upper`` and ``lower`` map non-ASCII text with Python's full Unicode case mapping, which is
Java's (``ß`` becomes ``SS``; Arrow's simple mapping would give ``ẞ``): that part runs per value,
the ASCII values on the whole array.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from icefloe.arrow.sql import _types as t
from icefloe.arrow.sql._arith import add_days
from icefloe.arrow.sql._ast import Call
from icefloe.arrow.sql._casts import cast_value, fit_decimal
from icefloe.arrow.sql._coerce import cast_to, expect
from icefloe.arrow.sql._logic import coalesce, extremum, is_null, nullif, nvl2
from icefloe.arrow.sql._text import decimal_from_text
from icefloe.arrow.sql._values import (
    Compiled,
    Context,
    Value,
    constant,
    elementwise,
    null_of,
    operands,
    run_guarded,
)
from icefloe.errors import ExpressionEvaluationError

__all__ = ["FUNCTIONS"]

Function = Callable[[Context, Call, list[Compiled]], Compiled]
_ROUND_DOWN_LIMIT = 1e17  # doubles this large have no fractional digits (17 significant at most)


def _arity(ctx: Context, node: Call, args: Sequence[Compiled], low: int, high: int | None = None) -> None:
    high = low if high is None else high
    if not low <= len(args) <= high:
        wanted = str(low) if low == high else f"{low} to {high}"
        ctx.invalid(node, f"{node.name} takes {wanted} arguments, not {len(args)}")


def _exactly(ctx: Context, node: Call, args: list[Compiled], count: int) -> list[Compiled]:
    _arity(ctx, node, args, count)
    return args


def _unary(type_: pa.DataType, child: Compiled, compute: Callable[[Value], Value]) -> Compiled:
    run = child.run
    return Compiled(type_, lambda rows: compute(run(rows)), foldable=child.foldable)


def _constant(ctx: Context, node: Call, compiled: Compiled, what: str) -> Any:
    """The value of an argument Spark requires to be a constant (a literal)."""
    value = compiled.run(pa.table({})) if compiled.foldable else None
    if not isinstance(value, pa.Scalar):
        ctx.unsupported(node, f"the {what} of {node.name} must be a constant here")
    return value.as_py()


# ---- strings ------------------------------------------------------------------------------------


def _concat(ctx: Context, node: Call, args: list[Compiled]) -> Compiled:
    if not args:
        return constant("", t.STRING)
    binary = all(a.type == t.BINARY for a in args)
    args = args if binary else [expect(ctx, node, a, "string") for a in args]
    runs = [a.run for a in args]
    separator = pa.scalar(b"" if binary else "", t.BINARY if binary else t.STRING)
    return Compiled(
        t.BINARY if binary else t.STRING,
        lambda rows: pc.binary_join_element_wise(*[run(rows) for run in runs], separator),
        foldable=all(a.foldable for a in args),
    )


def _case_mapped(upper: bool) -> Function:
    def function(ctx: Context, node: Call, args: list[Compiled]) -> Compiled:
        _arity(ctx, node, args, 1)
        child = expect(ctx, node, args[0], "string")
        return _unary(t.STRING, child, lambda value: _map_case(value, upper))

    return function


@elementwise
def _map_case(value: pa.Array, upper: bool) -> pa.Array:
    mapped = pc.ascii_upper(value) if upper else pc.ascii_lower(value)
    other = pc.invert(pc.fill_null(pc.string_is_ascii(value), True))
    if not pc.any(other).as_py():
        return mapped
    texts = pc.filter(value, other).to_pylist()
    return pc.replace_with_mask(
        mapped, other, pa.array([s.upper() if upper else s.lower() for s in texts], t.STRING)
    )


def _trim(ctx: Context, node: Call, args: list[Compiled]) -> Compiled:
    _arity(ctx, node, args, 1, 2)
    side = node.option or "both"
    if node.name in ("ltrim", "rtrim"):
        side = "leading" if node.name == "ltrim" else "trailing"
    child = expect(ctx, node, args[0], "string")
    characters = (
        " " if len(args) == 1 else _constant(ctx, node, expect(ctx, node, args[1], "string"), "characters")
    )
    if characters is None:
        return constant(None, t.STRING)
    trim = {"both": pc.utf8_trim, "leading": pc.utf8_ltrim, "trailing": pc.utf8_rtrim}[side]
    if characters == "":
        return child
    return _unary(t.STRING, child, lambda value: trim(value, characters=characters))


def _substring(ctx: Context, node: Call, args: list[Compiled]) -> Compiled:
    """Spark's ``substringSQL``: 1-based, 0 counts as 1, a negative start counts from the end, a
    length below 1 gives ''. Arrow's slices count from the end the same way."""
    _arity(ctx, node, args, 2, 3)
    child = args[0] if args[0].type == t.BINARY else expect(ctx, node, args[0], "string")
    start = _constant(ctx, node, _to_int(ctx, node, args[1]), "position")
    length = _constant(ctx, node, _to_int(ctx, node, args[2]), "length") if len(args) == 3 else None
    if start is None or (len(args) == 3 and length is None):
        return constant(None, child.type)
    if length is not None and length <= 0:
        return _unary(child.type, child, lambda value: _empty_like(value, child.type))
    if start > 0:
        begin, stop = start - 1, None if length is None else start - 1 + length
    elif start == 0:
        begin, stop = 0, length
    else:
        begin, stop = start, start + length if length is not None and start + length < 0 else None
    slicer = pc.binary_slice if child.type == t.BINARY else pc.utf8_slice_codeunits
    return _unary(child.type, child, lambda value: slicer(value, begin, stop))


def _empty_like(value: Value, type_: pa.DataType) -> Value:
    empty = pa.scalar(b"" if type_ == t.BINARY else "", type_)
    return pc.if_else(pc.is_valid(value), empty, null_of(type_))


def _to_int(ctx: Context, node: Call, compiled: Compiled) -> Compiled:
    """An INT argument of a function that takes any number (Spark casts it: 2.5 is 2)."""
    if t.is_numeric(compiled.type) or compiled.type in (t.STRING, t.NULL):
        return cast_to(ctx, node, compiled, t.INT)
    ctx.invalid(node, f"{node.name} needs an INT, not {t.type_name(compiled.type)}")


def _length(ctx: Context, node: Call, args: list[Compiled]) -> Compiled:
    _arity(ctx, node, args, 1)
    child = args[0] if args[0].type == t.BINARY else expect(ctx, node, args[0], "string")
    measure = pc.binary_length if child.type == t.BINARY else pc.utf8_length
    return _unary(t.INT, child, lambda value: pc.cast(measure(value), t.INT))


def _replace(ctx: Context, node: Call, args: list[Compiled]) -> Compiled:
    _arity(ctx, node, args, 2, 3)
    child = expect(ctx, node, args[0], "string")
    search = _constant(ctx, node, expect(ctx, node, args[1], "string"), "search string")
    replacement = (
        _constant(ctx, node, expect(ctx, node, args[2], "string"), "replacement") if len(args) == 3 else ""
    )
    if search is None or replacement is None:
        return constant(None, t.STRING)
    if search == "":
        return child
    return _unary(t.STRING, child, lambda value: pc.replace_substring(value, search, replacement))


# ---- numbers ------------------------------------------------------------------------------------


def _abs(ctx: Context, node: Call, args: list[Compiled]) -> Compiled:
    _arity(ctx, node, args, 1)
    child = expect(ctx, node, args[0], "numeric")
    if t.is_integral(child.type):
        message = f"[ARITHMETIC_OVERFLOW] {node.sql} overflows {t.type_name(child.type)}"
        return _unary(
            child.type, child, lambda value: run_guarded(ctx, node, lambda: pc.abs_checked(value), message)
        )
    return _unary(child.type, child, pc.abs)


def _rounded_type(type_: pa.DataType, scale: int) -> pa.DataType:
    """``RoundBase.dataType`` of a decimal: one more integral digit, at most ``scale`` digits."""
    integral = type_.precision - type_.scale + 1
    if scale < 0:
        return t.decimal(min(max(integral, -scale + 1), t.MAX_PRECISION), 0)
    kept = min(type_.scale, scale)
    return t.decimal(min(integral + kept, t.MAX_PRECISION), kept)


def _round(ctx: Context, node: Call, args: list[Compiled]) -> Compiled:
    """``round(x, d)``: half up. Decimals get Spark's narrower decimal; doubles are rounded in
    their shortest decimal form (Spark's ``BigDecimal(x)``: ``round(2.675D, 2)`` is 2.68)."""
    _arity(ctx, node, args, 1, 2)
    child = expect(ctx, node, args[0], "numeric")
    scale = 0 if len(args) == 1 else _constant(ctx, node, cast_to(ctx, node, args[1], t.INT), "scale")
    if scale is None:
        return constant(None, child.type)
    type_ = child.type
    if t.is_decimal(type_):
        return _decimal_rounding(
            ctx, node, child, _rounded_type(type_, scale), scale, "half_towards_infinity"
        )
    if t.is_integral(type_):
        if scale >= 0:
            return child
        wide = cast_to(ctx, node, child, t.decimal(20, 0))
        rounded = _decimal_rounding(ctx, node, wide, t.decimal(21, 0), scale, "half_towards_infinity")
        return _checked_narrowing(ctx, node, rounded, type_)
    if not -21 <= scale <= 20:
        ctx.unsupported(node, f"rounding a {t.type_name(type_)} to {scale} digits is not implemented")
    return _unary(type_, child, lambda value: _round_double(value, scale, type_))


def _decimal_rounding(
    ctx: Context, node: Call, child: Compiled, result: pa.DataType, scale: int, mode: str
) -> Compiled:
    source = child.type

    def compute(value: Value) -> Value:
        rounded = pc.round(pc.cast(value, pa.decimal256(76, source.scale)), ndigits=scale, round_mode=mode)
        return fit_decimal(ctx, node, rounded, result)

    return _unary(result, child, compute)


def _checked_narrowing(ctx: Context, node: Call, compiled: Compiled, target: pa.DataType) -> Compiled:
    def compute(value: Value) -> Value:
        try:
            return cast_value(ctx, node, value, compiled.type, target, safe=False)
        except ExpressionEvaluationError as exc:  # Spark reports it as an arithmetic overflow
            ctx.failed(node, f"[ARITHMETIC_OVERFLOW] {node.sql} overflows {t.type_name(target)} ({exc})")

    return _unary(target, compiled, compute)


@elementwise
def _round_double(array: pa.Array, scale: int, type_: pa.DataType) -> pa.Array:
    doubles = pc.cast(array, t.DOUBLE)
    limit = _ROUND_DOWN_LIMIT * 10.0 ** max(-scale, 0)
    changing = pc.fill_null(pc.and_(pc.is_finite(doubles), pc.less(pc.abs(doubles), limit)), False)
    text = pc.if_else(changing, pc.cast(doubles, t.STRING), "0")
    exact, _ = decimal_from_text(text, t.decimal(38, max(scale, 0) + 1), round_mode="towards_zero")
    rounded = pc.round(exact, ndigits=scale, round_mode="half_towards_infinity")
    back = pc.cast(pc.cast(rounded, t.STRING), t.DOUBLE)
    return pc.cast(pc.if_else(changing, back, doubles), type_)


def _floor_ceil(ctx: Context, node: Call, args: list[Compiled]) -> Compiled:
    """``floor`` / ``ceil``: a BIGINT of a number (a decimal stays a decimal, with one more
    digit); with a scale, Spark's rounding type of the number as a decimal."""
    _arity(ctx, node, args, 1, 2)
    child = expect(ctx, node, args[0], "numeric")
    mode = "down" if node.name == "floor" else "up"
    if len(args) == 2:
        scale = _constant(ctx, node, cast_to(ctx, node, args[1], t.INT), "scale")
        decimal = child if t.is_decimal(child.type) else cast_to(ctx, node, child, t.decimal_for(child.type))
        if scale is None:
            return constant(None, _rounded_type(decimal.type, 0))
        return _decimal_rounding(ctx, node, decimal, _rounded_type(decimal.type, scale), scale, mode)
    if t.is_decimal(child.type):
        if child.type.scale == 0:
            return child
        return _decimal_rounding(
            ctx, node, child, t.decimal(min(child.type.precision - child.type.scale + 1, 38), 0), 0, mode
        )
    if t.is_integral(child.type):
        return cast_to(ctx, node, child, t.LONG)
    function = pc.floor if mode == "down" else pc.ceil

    @elementwise
    def compute(value: pa.Array) -> pa.Array:
        whole = pc.cast(function(value), t.DOUBLE)
        nan = pc.fill_null(pc.is_nan(whole), False)  # Spark: NaN becomes 0
        whole = pc.if_else(nan, 0.0, whole)
        out = pc.fill_null(pc.or_(pc.greater(whole, float(2**63)), pc.less(whole, -float(2**63))), False)
        if pc.any(out).as_py():
            ctx.failed(node, f"[ARITHMETIC_OVERFLOW] {node.sql} overflows BIGINT")
        return cast_value(ctx, node, whole, t.DOUBLE, t.LONG, safe=False)

    return _unary(t.LONG, child, compute)


# ---- dates --------------------------------------------------------------------------------------


def _now(ctx: Context) -> dt.datetime:
    if ctx.now is None:
        ctx.now = dt.datetime.now(dt.UTC)
    now: dt.datetime = ctx.now
    return now


def _current_date(ctx: Context, node: Call, args: list[Compiled]) -> Compiled:
    _arity(ctx, node, args, 0)
    return constant(_now(ctx).date(), t.DATE)


def _current_timestamp(ctx: Context, node: Call, args: list[Compiled]) -> Compiled:
    _arity(ctx, node, args, 0)
    return constant(_now(ctx), t.TIMESTAMP)


def _date_add(ctx: Context, node: Call, args: list[Compiled]) -> Compiled:
    _arity(ctx, node, args, 2)
    date, days = expect(ctx, node, args[0], "date"), expect(ctx, node, args[1], "int")
    return add_days(ctx, node, date, days, subtract=node.name == "date_sub")


def _datediff(ctx: Context, node: Call, args: list[Compiled]) -> Compiled:
    _arity(ctx, node, args, 2)
    end, start = (expect(ctx, node, a, "date") for a in args)
    run_end, run_start = end.run, start.run

    def compute(rows: pa.Table) -> Value:
        last, first = operands(rows, run_end, run_start, t.DATE)
        return pc.cast(pc.subtract(pc.cast(last, pa.int32()), pc.cast(first, pa.int32())), t.INT)

    return Compiled(t.INT, compute, foldable=end.foldable and start.foldable)


def _date_field(field: Callable[..., Value]) -> Function:
    def function(ctx: Context, node: Call, args: list[Compiled]) -> Compiled:
        _arity(ctx, node, args, 1)
        child = expect(ctx, node, args[0], "date")
        return _unary(t.INT, child, lambda value: pc.cast(field(value), t.INT))

    return function


def _implicit_date(ctx: Context, node: Call, args: list[Compiled]) -> Compiled:
    return expect(ctx, node, args[0], "date")


FUNCTIONS: dict[str, Function] = {
    "concat": _concat,
    "||": _concat,
    "upper": _case_mapped(upper=True),
    "lower": _case_mapped(upper=False),
    "trim": _trim,
    "ltrim": _trim,
    "rtrim": _trim,
    "substring": _substring,
    "length": _length,
    "replace": _replace,
    "abs": _abs,
    "round": _round,
    "floor": _floor_ceil,
    "ceil": _floor_ceil,
    "current_date": _current_date,
    "current_timestamp": _current_timestamp,
    "date_add": _date_add,
    "date_sub": _date_add,
    "datediff": _datediff,
    "year": _date_field(pc.year),
    "month": _date_field(pc.month),
    "day": _date_field(pc.day),
    "implicit_date": _implicit_date,
    "coalesce": coalesce,
    "greatest": extremum,
    "least": extremum,
    "nullif": lambda ctx, node, args: nullif(ctx, node, *_exactly(ctx, node, args, 2)),
    "nvl2": lambda ctx, node, args: nvl2(ctx, node, *_exactly(ctx, node, args, 3)),
    "is_null": lambda ctx, node, args: is_null(ctx, node, *_exactly(ctx, node, args, 1)),
    "is_not_null": lambda ctx, node, args: is_null(ctx, node, *_exactly(ctx, node, args, 1), negated=True),
}
