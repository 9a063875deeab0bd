"""What the compiled expression works with: values (an Arrow array of the rows, or a scalar
for a constant), the compiled form of a node, and the context errors name.

An expression runs on a table of rows; parts that Spark evaluates only for some rows (the
branches of CASE, the right side of AND ...) run on the subset of rows that reach them
(:func:`on_rows`), so that an error of a branch not taken (a division by zero) is not raised,
as in Spark.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, NoReturn, TypeAlias

import pyarrow as pa
import pyarrow.compute as pc

from icefloe.arrow.sql import _types as t
from icefloe.arrow.sql._ast import Literal, Node
from icefloe.errors import ExpressionEvaluationError, InvalidExpressionError, UnsupportedFeatureError

__all__ = [
    "Compiled",
    "Context",
    "Value",
    "as_array",
    "constant",
    "elementwise",
    "null_of",
    "on_rows",
    "operands",
    "run_guarded",
    "zero_of",
]

#: The value of an expression over rows: one per row, or one for every row (a constant).
Value: TypeAlias = "pa.Array | pa.Scalar"


@dataclass(frozen=True)
class Compiled:
    """A node compiled against the table: its Spark type, and the function computing its value
    from a table of rows. ``literal`` is the node when it is a literal (Spark treats literals
    apart in a few places: decimal precision, arguments that must be constants)."""

    type: pa.DataType
    run: Callable[[pa.Table], Value]
    literal: Literal | None = None
    foldable: bool = False  # a constant (a literal, or an expression of literals only)
    value: pa.Scalar | None = None  # the constant's value, once folded

    @property
    def is_null_constant(self) -> bool:
        return self.value is not None and not self.value.is_valid

    def is_boolean_constant(self, expected: bool) -> bool:
        return self.value is not None and self.value.is_valid and self.value.as_py() is expected


@dataclass
class Context:
    """The expression being compiled and where it goes, for error messages.

    Attributes:
        column: the column the expression gives a value to.
        text: the expression as written.
        schema: the table's Arrow schema (the rows an expression reads).
        case_sensitive: how column names resolve.
        now: the time CURRENT_TIMESTAMP and CURRENT_DATE return (one for the whole call, as
            Spark's one per query), set on first use.
    """

    column: str
    text: str
    schema: pa.Schema
    case_sensitive: bool = True
    now: Any = field(default=None)

    def _where(self, node: Node | None) -> str:
        part = "" if node is None or node.sql == self.text else f" (in {node.sql})"
        return f"set {self.column} = {self.text}{part}"

    def invalid(self, node: Node | None, problem: str) -> NoReturn:
        raise InvalidExpressionError(f"{self._where(node)}: {problem}")

    def unsupported(self, node: Node | None, problem: str) -> NoReturn:
        raise UnsupportedFeatureError(f"{self._where(node)}: {problem}")

    def failed(self, node: Node | None, problem: str) -> NoReturn:
        raise ExpressionEvaluationError(f"{self._where(node)}: {problem}")


def as_array(value: Value, length: int) -> pa.Array:
    """``value`` as an array of ``length`` values (a constant repeated)."""
    if isinstance(value, pa.Scalar):
        return pa.repeat(value, length)
    if isinstance(value, pa.ChunkedArray):
        return value.combine_chunks()
    return value


def zero_of(type_: pa.DataType) -> pa.Scalar:
    """0 of a numeric type."""
    return pa.scalar(Decimal(0) if pa.types.is_decimal(type_) else 0, type_)


def null_of(type_: pa.DataType) -> pa.Scalar:
    return pa.scalar(None, type=type_)


def constant(value: Any, type_: pa.DataType) -> Compiled:
    """A constant of a Spark type (a Python value)."""
    scalar = pa.scalar(value, type=type_) if type_ != t.NULL else pa.scalar(None)
    return Compiled(type_, lambda rows: scalar, foldable=True, value=scalar)


def on_rows(rows: pa.Table, mask: pa.Array, run: Callable[[pa.Table], Value], type_: pa.DataType) -> Value:
    """``run`` on the rows where ``mask`` is true (a boolean array without nulls), its values
    in place and nulls elsewhere: the rows a branch does not reach are not computed."""
    selected = pc.sum(mask).as_py() or 0
    if selected == len(mask):
        return run(rows)
    if selected == 0:
        return null_of(type_)
    values = as_array(run(rows.filter(mask)), selected)
    positions = pc.subtract(pc.cumulative_sum(mask.cast(pa.int64())), 1)
    return pc.take(values, pc.if_else(mask, positions, pa.scalar(None, pa.int64())))


def operands(
    rows: pa.Table,
    run_first: Callable[[pa.Table], Value],
    run_second: Callable[[pa.Table], Value],
    second_type: pa.DataType,
) -> tuple[Value, Value]:
    """The operands of a null-intolerant binary operator as Spark evaluates them: the second only
    on the rows where the first is not null (``NULL + 1 div 0`` is null, not an error)."""
    first = run_first(rows)
    if isinstance(first, pa.Scalar):
        return first, run_second(rows) if first.is_valid else null_of(second_type)
    return first, on_rows(rows, pc.is_valid(first), run_second, second_type)


def elementwise(function: Callable[..., pa.Array]) -> Callable[..., Value]:
    """``function`` of an array (and more arguments) applied to a value: a scalar goes through
    as a one-value array."""

    def apply(value: Value, *args: Any) -> Value:
        if isinstance(value, pa.Scalar):
            return function(as_array(value, 1), *args)[0]
        return function(value, *args)

    return apply


def run_guarded(ctx: Context, node: Node, compute: Callable[[], Value], problem: str) -> Value:
    """``compute()``, an Arrow error turned into Spark's (``problem`` says which)."""
    try:
        return compute()
    except (pa.ArrowInvalid, OverflowError) as exc:
        ctx.failed(node, f"{problem} ({exc})")
