"""The parsed tree compiled against a table's Arrow schema: each node becomes its Spark type and
a function of the rows (``_values.Compiled``). Columns resolve here (``case_sensitive`` as the
call says); constants are folded once, as Spark's optimizer folds them."""

from __future__ import annotations

import functools
from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc

from icefloe.arrow.sql import _types as t
from icefloe.arrow.sql._arith import arithmetic, negate
from icefloe.arrow.sql._ast import Call, Case, Cast, Column, Literal, Node
from icefloe.arrow.sql._casts import cast_value
from icefloe.arrow.sql._functions import FUNCTIONS
from icefloe.arrow.sql._logic import (
    between,
    case,
    comparison,
    in_list,
    is_null,
    logical,
    negation,
    simple_case,
)
from icefloe.arrow.sql._values import Compiled, Context, Value, as_array, constant
from icefloe.errors import ExpressionEvaluationError

__all__ = ["compile_node"]

_EMPTY = pa.table({})
_ARITHMETIC = {"+", "-", "*", "/", "div", "%"}
_COMPARISONS = {"=", "<>", "<", "<=", ">", ">=", "<=>"}
# Spark's NullIntolerant expressions (null when an argument is null): with a NULL constant among
# their arguments, its optimizer makes them NULL without evaluating the others (NullPropagation).
_NULL_INTOLERANT = (_ARITHMETIC | _COMPARISONS | {
    "neg", "not", "upper", "lower", "length", "substring", "replace", "trim", "ltrim", "rtrim", "abs",
    "floor", "ceil", "date_add", "date_sub", "datediff", "year", "month", "day", "implicit_date",
}) - {"<=>"}  # fmt: skip


_CASE_MAPPINGS = {"upper", "lower"}


def compile_node(ctx: Context, node: Node) -> Compiled:
    compiled = _compile(ctx, node)
    if compiled.foldable and compiled.value is None:
        try:
            value = compiled.run(_EMPTY)
        except ExpressionEvaluationError:
            return compiled  # fails only if a row reaches it, as in Spark
        if isinstance(value, pa.Scalar):
            return Compiled(compiled.type, lambda rows: value, compiled.literal, foldable=True, value=value)
    return compiled


def _compile(ctx: Context, node: Node) -> Compiled:
    if isinstance(node, Column):
        return _column(ctx, node)
    if isinstance(node, Literal):
        scalar = pa.scalar(node.value, type=node.type) if node.type != t.NULL else pa.scalar(None)
        return Compiled(node.type, lambda rows: scalar, literal=node, foldable=True, value=scalar)
    if isinstance(node, Cast):
        return _cast(ctx, node)
    if isinstance(node, Case):
        whens = [(compile_node(ctx, c), compile_node(ctx, v)) for c, v in node.whens]
        otherwise = None if node.otherwise is None else compile_node(ctx, node.otherwise)
        if node.operand is not None:
            return simple_case(ctx, node, compile_node(ctx, node.operand), whens, otherwise)
        return case(ctx, node, whens, otherwise, null_conditions=node.if_form)
    assert isinstance(node, Call)
    if node.name in _CASE_MAPPINGS and len(node.args) == 1:
        inner = node.args[0]
        while isinstance(inner, Call) and inner.name in _CASE_MAPPINGS and len(inner.args) == 1:
            inner = inner.args[0]  # Spark's SimplifyCaseConversionExpressions: lower(upper(x)) is lower(x)
        node = Call(node.sql, node.name, (inner,))
    args = [compile_node(ctx, a) for a in node.args]
    compiled = _call(ctx, node, args)  # (types are checked even where the result is folded away)
    return _simplified(node, args, compiled)


def _simplified(node: Call, args: list[Compiled], compiled: Compiled) -> Compiled:
    """What Spark's optimizer makes of a call with constant arguments, where that decides whether
    the other arguments are evaluated: NULL for a null-intolerant call with a NULL argument
    (NullPropagation), and ``x AND FALSE`` / ``x OR TRUE`` without ``x`` (BooleanSimplification)."""
    if node.name in _NULL_INTOLERANT and any(a.is_null_constant for a in args):
        return constant(None, compiled.type)
    if node.name in ("and", "or") and any(a.is_boolean_constant(node.name == "or") for a in args):
        return constant(node.name == "or", t.BOOLEAN)
    return compiled


def _call(ctx: Context, node: Call, args: list[Compiled]) -> Compiled:
    name = node.name
    if name in _ARITHMETIC:
        return arithmetic(ctx, node, args[0], args[1])
    if name in _COMPARISONS:
        return comparison(ctx, node, args[0], args[1])
    if name in ("and", "or"):
        return logical(ctx, node, args[0], args[1])
    if name == "not":
        return negation(ctx, node, args[0])
    if name == "neg":
        return negate(ctx, node, args[0])
    if name == "in":
        return in_list(ctx, node, args[0], args[1:])
    if name == "between":
        return between(ctx, node, args[0], args[1], args[2])
    if name == "is_null" and len(args) == 1:
        return is_null(ctx, node, args[0])
    function = FUNCTIONS.get(name)
    if function is None:
        ctx.unsupported(node, f"{name} is not supported in row expressions")
    return function(ctx, node, args)


def _cast(ctx: Context, node: Cast) -> Compiled:
    child = compile_node(ctx, node.child)
    source, target = child.type, node.to
    if not t.is_spark_type(source):
        ctx.unsupported(node, f"{t.type_name(source)} values cannot be cast")
    if not t.can_ansi_cast(source, target):
        ctx.invalid(node, f"Spark cannot cast {t.type_name(source)} to {t.type_name(target)}")
    if child.is_null_constant:
        return constant(None, target)
    run, safe = child.run, node.safe

    def compute(rows: pa.Table) -> Value:
        return cast_value(ctx, node, run(rows), source, target, safe=safe)

    return Compiled(target, compute, foldable=child.foldable)


def _field_of(array: pa.Array, *, index: int) -> pa.Array:
    return pc.struct_field(array, [index])


def _match(ctx: Context, wanted: str, names: list[str]) -> list[str]:
    if ctx.case_sensitive:
        return [n for n in names if n == wanted]
    return [n for n in names if n.lower() == wanted.lower()]


def _column(ctx: Context, node: Column) -> Compiled:
    """A column (or a field of a struct column: ``address.city``) as Spark reads it."""
    head, *path = node.parts
    found = _match(ctx, head, ctx.schema.names)
    if not found:
        quoted = "'" + node.sql.replace("'", "\\'") + "'"
        ctx.invalid(
            node,
            f"{node.sql} is not a column of the table (columns: {', '.join(ctx.schema.names)}); a string "
            f"literal is written in quotes ({quoted}), or given in new_values=",
        )
    if len(found) > 1:
        ctx.invalid(node, f"{head} names more than one column: {', '.join(found)}")
    name = found[0]
    type_ = ctx.schema.field(name).type
    steps: list[Callable[[pa.Array], pa.Array]] = []
    for part in path:
        if not pa.types.is_struct(type_):
            ctx.invalid(node, f"{node.sql}: {t.type_name(type_)} has no field {part}")
        names = [type_.field(i).name for i in range(type_.num_fields)]
        match = _match(ctx, part, names)
        if len(match) != 1:
            ctx.invalid(node, f"{node.sql}: no field {part} (fields: {', '.join(names)})")
        index = names.index(match[0])
        steps.append(functools.partial(_field_of, index=index))
        type_ = type_.field(index).type
    spark_type = t.spark_type_of_column(type_)

    def read(rows: pa.Table) -> Value:
        array = as_array(rows.column(name), rows.num_rows)
        for step in steps:
            array = step(array)
        return array if spark_type == type_ else pc.cast(array, spark_type)

    return Compiled(spark_type, read)
