"""Spark's CAST on Arrow arrays, ANSI mode: a value that does not convert is an error (CAST), or
null (TRY_CAST); the session time zone is UTC.

What each conversion does is Spark's, not Arrow's: a string is read by Spark's rules
(``_text.py``), a double becomes a decimal through its shortest decimal form (Java's
``Double.toString``, then rounded half up), a fractional number becomes an integer by truncation,
with Spark's bounds. Conversions Spark has but this module does not (a double to STRING, a
number to TIMESTAMP) raise :class:`UnsupportedFeatureError`.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icefloe.arrow.sql import _text
from icefloe.arrow.sql import _types as t
from icefloe.arrow.sql._ast import Node
from icefloe.arrow.sql._values import Context, Value, as_array, null_of, zero_of

__all__ = ["cast_value", "fit_decimal", "rescale", "scalar_text"]

_MICROS_PER_DAY = 86_400_000_000
_LONG_BOUND = float(2**63)


def scalar_text(value: pa.Scalar | None) -> str:
    """A value as error messages show it."""
    if value is None:
        return "NULL"
    python = value.as_py()
    return repr(python) if isinstance(python, str) else str(python)


def cast_value(
    ctx: Context, node: Node, value: Value, source: pa.DataType, target: pa.DataType, *, safe: bool
) -> Value:
    """``CAST(value AS target)`` (``TRY_CAST`` when ``safe``) of a value of Spark type ``source``."""
    if source == target:
        return value
    if source == t.NULL:
        return null_of(target) if isinstance(value, pa.Scalar) else pa.nulls(len(value), target)
    if isinstance(value, pa.Scalar):
        return _cast_array(ctx, node, as_array(value, 1), source, target, safe)[0]
    return _cast_array(ctx, node, value, source, target, safe)


class _Failure:
    """Collects what a conversion could not do, then fails (or nulls) as Spark does."""

    def __init__(self, ctx: Context, node: Node, source: pa.DataType, target: pa.DataType, safe: bool):
        self.ctx, self.node, self.source, self.target, self.safe = ctx, node, source, target, safe

    def _first(self, array: pa.Array, mask: pa.Array) -> str:
        return scalar_text(pc.filter(array, mask)[0])

    def check(self, array: pa.Array, result: pa.Array, *, bad: pa.Array, kind: str) -> pa.Array:
        """``result`` with nulls where ``bad`` (TRY_CAST), or Spark's error for the first bad
        value: ``kind`` is ``malformed`` or ``overflow``."""
        if not pc.any(bad).as_py():
            return result
        if self.safe:
            return pc.if_else(bad, pa.scalar(None, result.type), result)
        names = f"{t.type_name(self.source)} to {t.type_name(self.target)}"
        value = self._first(array, bad)
        if kind == "overflow":
            self.ctx.failed(self.node, f"[CAST_OVERFLOW] the value {value} does not fit when cast {names}")
        self.ctx.failed(
            self.node, f"[CAST_INVALID_INPUT] the value {value} cannot be cast {names}: it is malformed"
        )

    def unknown(self, array: pa.Array, mask: pa.Array) -> None:
        if pc.any(mask).as_py():
            self.ctx.unsupported(
                self.node,
                f"the value {self._first(array, mask)} cannot be cast to {t.type_name(self.target)} here: "
                "the form is one Spark reads, which is not implemented (a time zone name, a time "
                "without a date, a hexadecimal number)",
            )


def _cast_array(
    ctx: Context, node: Node, array: pa.Array, source: pa.DataType, target: pa.DataType, safe: bool
) -> pa.Array:
    failure = _Failure(ctx, node, source, target, safe)
    if not t.can_ansi_cast(source, target):
        ctx.invalid(node, f"Spark cannot cast {t.type_name(source)} to {t.type_name(target)}")
    if target == t.STRING:
        return _to_string(ctx, node, array, source)
    if source == t.STRING:
        return _from_string(failure, array, target)
    if target == t.BOOLEAN:
        return pc.not_equal(array, zero_of(source))
    if t.is_numeric(target):
        if source == t.BOOLEAN:
            return _from_integral(failure, pc.if_else(array, 1, 0).cast(t.BYTE), t.BYTE, target)
        if t.is_integral(source):
            return _from_integral(failure, array, source, target)
        if source in (t.FLOAT, t.DOUBLE):
            return _from_floating(failure, array, source, target)
        if t.is_decimal(source):
            return _from_decimal(failure, array, source, target)
    if source == t.DATE and target in (t.TIMESTAMP, t.TIMESTAMP_NTZ):
        days = pc.cast(pc.cast(array, pa.int32()), pa.int64())
        return pc.cast(pc.multiply(days, _MICROS_PER_DAY), target)
    if source in (t.TIMESTAMP, t.TIMESTAMP_NTZ):
        micros = pc.cast(array, pa.int64())
        if target == t.DATE:
            days = np.floor_divide(
                np.asarray(pc.fill_null(micros, 0).to_numpy(zero_copy_only=False)), _MICROS_PER_DAY
            )
            dates = pa.array(days, pa.int32()).cast(t.DATE)
            return pc.if_else(pc.is_valid(array), dates, pa.scalar(None, t.DATE))
        if target in (t.TIMESTAMP, t.TIMESTAMP_NTZ):
            return pc.cast(micros, target)  # the same wall clock and instant in UTC
    ctx.unsupported(node, f"casts from {t.type_name(source)} to {t.type_name(target)} are not implemented")


def _to_string(ctx: Context, node: Node, array: pa.Array, source: pa.DataType) -> pa.Array:
    if t.is_integral(source) or source == t.BOOLEAN:
        return pc.cast(array, t.STRING)
    if t.is_decimal(source):
        return _plain_decimal_text(array)
    if source == t.BINARY:
        try:
            return pc.cast(array, t.STRING)
        except pa.ArrowInvalid:
            ctx.unsupported(node, "binary values that are not UTF-8 text cannot be cast to STRING here")
    formatted = None
    if source == t.DATE:
        formatted = _text.format_date(array)
    elif source in (t.TIMESTAMP, t.TIMESTAMP_NTZ):
        formatted = _text.format_timestamp(array)
    else:
        ctx.unsupported(
            node,
            f"casts from {t.type_name(source)} to STRING are not implemented (Spark writes doubles as "
            "Java does, 1.0E20)",
        )
    if formatted is None:
        ctx.unsupported(
            node, f"{t.type_name(source)} values outside the years 1 to 9999 cannot be cast to STRING here"
        )
    return formatted


def _plain_decimal_text(array: pa.Array) -> pa.Array:
    """Decimals as Spark writes them: plain digits with the scale's fraction (``0.00000001``,
    where Arrow writes ``1E-8``; those few values, below a millionth, are written one by one)."""
    text = pc.cast(array, t.STRING)
    scientific = pc.fill_null(pc.match_substring(text, "E"), False)
    if not pc.any(scientific).as_py():
        return text
    plain = [format(value, "f") for value in pc.filter(array, scientific).to_pylist()]
    return pc.replace_with_mask(text, scientific, pa.array(plain, t.STRING))


def _from_string(failure: _Failure, array: pa.Array, target: pa.DataType) -> pa.Array:
    if target == t.BINARY:
        return pc.cast(array, t.BINARY)
    overflow = None
    if t.is_integral(target):
        parsed = _text.parse_integral(array, target)
    elif target in (t.FLOAT, t.DOUBLE):
        parsed = _text.parse_floating(array, target)
    elif t.is_decimal(target):
        parsed, overflow = _text.parse_decimal(array, target)
    elif target == t.BOOLEAN:
        parsed = _text.parse_boolean(array)
    elif target == t.DATE:
        parsed = _text.parse_date(array)
    else:
        parsed = _text.parse_timestamp(array, with_zone=target == t.TIMESTAMP)
    failure.unknown(array, parsed.unknown)
    result = failure.check(array, parsed.values, bad=parsed.bad, kind="malformed")
    if overflow is not None:
        result = failure.check(array, result, bad=overflow, kind="overflow")
    return result


def _integral_bounds(target: pa.DataType) -> tuple[int, int]:
    info = np.iinfo(target.to_pandas_dtype())
    return int(info.min), int(info.max)


def _from_integral(failure: _Failure, array: pa.Array, source: pa.DataType, target: pa.DataType) -> pa.Array:
    if target in (t.FLOAT, t.DOUBLE):
        return pc.cast(array, target, safe=False)
    wide = pc.cast(array, t.LONG)
    if t.is_integral(target):
        low, high = _integral_bounds(target)
        bad = pc.fill_null(pc.or_(pc.less(wide, low), pc.greater(wide, high)), False)
        kept = pc.if_else(bad, pa.scalar(0, t.LONG), wide)
        return failure.check(array, pc.cast(kept, target), bad=bad, kind="overflow")
    digits = target.precision - target.scale
    exact = pa.decimal256(76, target.scale)  # Arrow casts integers only to decimals with 19 integral digits
    if digits >= 19:
        return pc.cast(pc.cast(wide, exact), target)
    bad = pc.fill_null(
        pc.greater_equal(pc.abs(wide), 10**digits), False
    )  # abs(min) is not reached: digits < 19
    kept = pc.if_else(bad, pa.scalar(0, t.LONG), wide)
    return failure.check(array, pc.cast(pc.cast(kept, exact), target), bad=bad, kind="overflow")


def _from_floating(failure: _Failure, array: pa.Array, source: pa.DataType, target: pa.DataType) -> pa.Array:
    if target in (t.FLOAT, t.DOUBLE):
        return pc.cast(array, target, safe=False)
    doubles = pc.cast(array, t.DOUBLE)
    finite = pc.fill_null(pc.is_finite(doubles), False)
    if t.is_decimal(target):  # Spark: BigDecimal(Double.toString(x)); NaN and infinities are null
        text = pc.if_else(finite, pc.cast(doubles, t.STRING), "0")
        values, overflow = _text.decimal_from_text(text, target)
        values = pc.if_else(finite, values, pa.scalar(None, target))
        return failure.check(array, values, bad=pc.and_(overflow, finite), kind="overflow")
    low, high = _integral_bounds(target)
    truncated = pc.trunc(doubles)
    if target == t.LONG:  # Spark compares with the bounds as doubles: 2^63 itself saturates
        fits = pc.and_(pc.greater_equal(truncated, -_LONG_BOUND), pc.less_equal(truncated, _LONG_BOUND))
    else:
        fits = pc.and_(pc.greater_equal(truncated, float(low)), pc.less_equal(truncated, float(high)))
    fits = pc.and_(finite, pc.fill_null(fits, False))
    bad = pc.and_(pc.is_valid(doubles), pc.invert(fits))
    clipped = pc.if_else(fits, pc.min_element_wise(truncated, float(2**63 - 1024)), 0.0)
    values = pc.cast(clipped, t.LONG, safe=False)
    if target == t.LONG:
        values = pc.if_else(
            pc.fill_null(pc.greater_equal(truncated, _LONG_BOUND), False), pa.scalar(high, t.LONG), values
        )
    result = pc.if_else(pc.is_valid(doubles), pc.cast(values, target, safe=False), pa.scalar(None, target))
    return failure.check(array, result, bad=bad, kind="overflow")


def _from_decimal(failure: _Failure, array: pa.Array, source: pa.DataType, target: pa.DataType) -> pa.Array:
    if target in (t.FLOAT, t.DOUBLE):  # through the exact text: correctly rounded, as BigDecimal.doubleValue
        return pc.cast(pc.cast(array, t.STRING), target)
    if t.is_integral(target):
        low, high = _integral_bounds(target)
        wide = pa.decimal256(76, source.scale)
        values = pc.cast(array, wide)
        bad = pc.fill_null(
            pc.or_(
                pc.less_equal(values, pa.scalar(Decimal(low - 1), pa.decimal256(76, 0)).cast(wide)),
                pc.greater_equal(values, pa.scalar(Decimal(high + 1), pa.decimal256(76, 0)).cast(wide)),
            ),
            False,
        )
        kept = pc.if_else(bad, pa.scalar(0, wide), values)
        result = pc.cast(kept, options=pc.CastOptions(target, allow_decimal_truncate=True))
        return failure.check(array, result, bad=bad, kind="overflow")
    values, overflow = rescale(array, target)
    return failure.check(array, values, bad=overflow, kind="overflow")


def rescale(array: pa.Array, target: pa.DataType) -> tuple[pa.Array, pa.Array]:
    """Decimals rounded half up to ``target``'s scale, and where they do not fit its precision
    (nulls there)."""
    wide = pa.decimal256(76, max(array.type.scale, target.scale))
    values = pc.cast(array, wide)
    if target.scale < array.type.scale:
        values = pc.round(values, ndigits=target.scale, round_mode="half_towards_infinity")
    bound = pa.scalar(Decimal(10 ** (target.precision - target.scale)), pa.decimal256(76, 0)).cast(wide)
    fits = pc.fill_null(pc.less(pc.abs(values), bound), True)
    kept = pc.if_else(fits, values, pa.scalar(0, wide))
    result = pc.cast(kept, options=pc.CastOptions(target, allow_decimal_truncate=True))
    return pc.if_else(fits, result, pa.scalar(None, target)), pc.invert(fits)


def fit_decimal(ctx: Context, node: Node, value: Value, result: pa.DataType) -> Value:
    """An exact decimal result rounded half up to ``result``, failing as Spark does when it does
    not fit (``NUMERIC_VALUE_OUT_OF_RANGE``)."""
    array = as_array(value, 1) if isinstance(value, pa.Scalar) else value
    values, overflow = rescale(array, result)
    overflow = pc.and_(overflow, pc.is_valid(array))
    if pc.any(overflow).as_py():
        ctx.failed(
            node,
            f"[NUMERIC_VALUE_OUT_OF_RANGE] {scalar_text(pc.filter(array, overflow)[0])} cannot be "
            f"represented as {t.type_name(result)}",
        )
    return values[0] if isinstance(value, pa.Scalar) else values
