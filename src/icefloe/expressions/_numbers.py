"""Numeric and range conversions behind :meth:`Literal.to` (private).

Values convert exactly: a number between two values of a discrete type (integers, decimals at
a scale, days, microseconds) becomes an :class:`Inexact` with both neighbours; beyond the
type's range the missing neighbour is ``BELOW_MIN`` / ``ABOVE_MAX``. Only conversions to
``float``/``double`` round (to the nearest value, as Java does).
"""

from __future__ import annotations

import math
import struct
import sys
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any, Final

from icefloe.spec.conversions import MICROS_PER_DAY, decimal_from_unscaled
from icefloe.spec.types import (
    DecimalType,
    DoubleType,
    FloatType,
    IcebergType,
    IntegerType,
    LongType,
)

__all__ = [
    "ABOVE_MAX",
    "BELOW_MIN",
    "INT32",
    "INT64",
    "NUMERIC_TYPES",
    "TIME_RANGE",
    "Inexact",
    "Unsupported",
    "between",
    "exact_decimal",
    "fit",
    "number_to",
    "parse_number",
]

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)
TIME_RANGE = (0, MICROS_PER_DAY - 1)
_FLOAT32_MAX = 3.4028234663852886e38
_DOUBLE_MAX = sys.float_info.max
_MAX_EXPONENT = 1000  # decimal exponents beyond this are refused (10**10**9 would never finish)
NUMERIC_TYPES = (IntegerType, LongType, FloatType, DoubleType, DecimalType)


class _Sentinel:
    __slots__ = ("_name",)

    def __init__(self, name: str):
        self._name = name

    def __repr__(self) -> str:
        return self._name

    def __reduce__(self) -> str:
        return self._name


ABOVE_MAX: Final = _Sentinel("ABOVE_MAX")
"""The missing upper neighbour of a value above the maximum of a type."""
BELOW_MIN: Final = _Sentinel("BELOW_MIN")
"""The missing lower neighbour of a value below the minimum of a type."""


@dataclass(frozen=True, slots=True)
class Inexact:
    """A literal that lies strictly between two adjacent values of the target type.

    Attributes:
        lower: the largest value of the type below the literal, or ``BELOW_MIN``.
        upper: the smallest value of the type above the literal, or ``ABOVE_MAX``.
    """

    lower: Any
    upper: Any


class Unsupported(Exception):
    """The literal has no value in the requested type."""


# ---------------------------------------------------------------------------------------------
# Numeric conversions, exact where the target type is discrete


def fit(value: int, bounds: tuple[int, int]) -> Any:
    low, high = bounds
    if value > high:
        return Inexact(high, ABOVE_MAX)
    if value < low:
        return Inexact(BELOW_MIN, low)
    return value


def between(lower: int, bounds: tuple[int, int]) -> Inexact:
    """The conversion of a value strictly between the integers ``lower`` and ``lower + 1``."""
    low, high = bounds
    if lower >= high:
        return Inexact(high, ABOVE_MAX)
    if lower + 1 <= low:
        return Inexact(BELOW_MIN, low)
    return Inexact(lower, lower + 1)


def _to_integers(value: Fraction | float, bounds: tuple[int, int]) -> Any:
    if isinstance(value, float):
        if math.isinf(value):
            return Inexact(bounds[1], ABOVE_MAX) if value > 0 else Inexact(BELOW_MIN, bounds[0])
        value = Fraction(value)
    floor = math.floor(value)
    return fit(floor, bounds) if value.denominator == 1 else between(floor, bounds)


def _scaled(result: Any, scale: int) -> Any:
    def convert(v: Any) -> Any:
        return v if isinstance(v, _Sentinel) else decimal_from_unscaled(v, scale)

    if isinstance(result, Inexact):
        return Inexact(convert(result.lower), convert(result.upper))
    return convert(result)


def _to_double(value: Fraction | float) -> Any:
    if isinstance(value, float):
        return value
    try:
        return float(value)
    except OverflowError:
        return Inexact(_DOUBLE_MAX, math.inf) if value > 0 else Inexact(-math.inf, -_DOUBLE_MAX)


def _to_float(value: Fraction | float) -> Any:
    if isinstance(value, float) and math.isinf(value):
        return value
    double = _to_double(value)
    if isinstance(double, Inexact) or abs(double) > _FLOAT32_MAX:
        # Not Java's AboveMax: +inf is a float value above every finite literal.
        return Inexact(_FLOAT32_MAX, math.inf) if value > 0 else Inexact(-math.inf, -_FLOAT32_MAX)
    return float(struct.unpack("<f", struct.pack("<f", double))[0])


def number_to(value: Fraction | float, type_: IcebergType) -> Any:
    """Convert an exact number (or an infinity) to a numeric type."""
    if isinstance(type_, IntegerType):
        return _to_integers(value, INT32)
    if isinstance(type_, LongType):
        return _to_integers(value, INT64)
    if isinstance(type_, DoubleType):
        return _to_double(value)
    if isinstance(type_, FloatType):
        return _to_float(value)
    if isinstance(type_, DecimalType):
        limit = 10**type_.precision - 1
        if isinstance(value, float) and not math.isinf(value):
            value = Fraction(value)
        scaled = value if isinstance(value, float) else value * 10**type_.scale
        return _scaled(_to_integers(scaled, (-limit, limit)), type_.scale)
    raise Unsupported


def exact_decimal(value: Decimal) -> Fraction:
    exponent = value.as_tuple().exponent
    assert isinstance(exponent, int)
    if abs(exponent) > _MAX_EXPONENT:
        raise ValueError(f"exponent out of range: {value}")
    return Fraction(value)


def parse_number(text: str) -> Fraction | float:
    lowered = text.strip().lower().lstrip("+")
    if lowered in ("inf", "infinity"):
        return math.inf
    if lowered in ("-inf", "-infinity"):
        return -math.inf
    if lowered in ("nan", "-nan"):
        raise ValueError("NaN cannot be compared: use IS NAN")
    try:
        number = Decimal(text.strip())
    except InvalidOperation:
        raise ValueError(f"not a number: {text!r}") from None
    if not number.is_finite():
        raise ValueError(f"not a number: {text!r}")
    return exact_decimal(number)
