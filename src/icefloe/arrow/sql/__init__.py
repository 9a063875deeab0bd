"""Spark SQL expressions of a table's rows, evaluated on Arrow (``table.update(set=...)``).

``compile_expression("amount * 2", schema, column="amount")`` parses Spark SQL (sqlglot's Spark
dialect, the dialect ``isp.update`` takes), resolves the columns against the rows' Arrow schema,
types every node as Spark types it, and returns a :class:`RowExpression`;
``expression.evaluate(rows)`` computes it on a ``pyarrow.Table`` with ``pyarrow.compute`` (whole
arrays, no Python per row), and :func:`assign` gives the values to a column as Spark's
``UPDATE`` does (store assignment).

The semantics are Spark 4's defaults: ANSI mode (an overflow, a division by zero, a string that
does not cast are errors; ``TRY_CAST`` gives null), ``spark.sql.storeAssignmentPolicy=ANSI`` and
the session time zone UTC. Supported: columns and struct fields, literals (numbers with Spark's
types and suffixes, strings, booleans, NULL, ``DATE '...'``, ``TIMESTAMP '...'``,
``TIMESTAMP_NTZ '...'``, ``X'...'``), arithmetic (``+ - * / div %``, unary minus), ``||``,
comparisons (``= == <> != < <= > >= <=>``), ``AND OR NOT``, ``IS [NOT] NULL``, ``IS [NOT]
TRUE/FALSE``, ``IS [NOT] DISTINCT FROM``, ``[NOT] IN``, ``[NOT] BETWEEN``, ``CASE``, ``CAST``,
``TRY_CAST``, ``x::type`` and the functions of ``_functions.py`` and ``_logic.py``. Anything
else raises :class:`~icefloe.errors.UnsupportedFeatureError` naming the column and the construct;
nothing is evaluated differently from Spark without an error.

Evaluation follows Spark's order: the second operand of a null-intolerant operator is computed
only where the first is not null (for ``/ div %`` the divisor first), CASE / IF / COALESCE /
AND / OR / IN only where they are reached, and what Spark's optimizer folds away before running
(a NULL argument of a null-intolerant call, ``x AND FALSE``, CASE branches that are all one
constant, ``lower(upper(x))``) is not computed; so an error is raised where Spark raises one.
Known differences: a ``date_add`` past the DATE range fails (Spark 4 wraps around); the sign of a
zero may differ where Spark's optimizer folds constant branches; and Spark's optimizer has more
rewrites than these (``(a + 1) + 2`` becomes ``a + 3``), after which a part that would fail may
not run at all: such an expression can fail here where Spark does not.
Forms that sqlglot groups otherwise than Spark's parser (``a = b IS NULL``,
``a = b < c``, ``'a' || 1 + 2``) are refused with a request for parentheses.

Errors: :class:`~icefloe.errors.InvalidExpressionError` (does not parse, an unknown column,
types Spark refuses, a value its column cannot take), :class:`~icefloe.errors.ExpressionEvaluationError`
(a row fails as it would in Spark), each naming the column.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from icefloe.arrow.sql import _types as t
from icefloe.arrow.sql._casts import cast_value
from icefloe.arrow.sql._compile import compile_node
from icefloe.arrow.sql._parse import parse_sql
from icefloe.arrow.sql._values import Compiled, Context, as_array
from icefloe.errors import ExpressionEvaluationError, InvalidExpressionError, UnsupportedFeatureError

__all__ = ["RowExpression", "can_store_assign", "compile_expression", "type_name"]

can_store_assign = t.can_store_assign  # Spark's canANSIStoreAssign, on the Arrow forms of Spark types
type_name = t.type_name


@dataclass(frozen=True)
class RowExpression:
    """A Spark SQL expression compiled against a table's rows.

    Attributes:
        text: the expression as written.
        type: its value's Spark type (the Arrow form: ``int32`` is INT).
    """

    text: str
    type: pa.DataType
    _compiled: Compiled
    _context: Context

    def evaluate(self, rows: pa.Table) -> pa.Array:
        """The value for each row of ``rows`` (a table with the schema it was compiled for)."""
        combined = rows.combine_chunks()
        return as_array(self._compiled.run(combined), rows.num_rows)

    def assign(self, values: pa.Array, field: pa.Field) -> pa.Array:
        """``values`` (of :attr:`type`) as the column ``field`` takes them: Spark's ANSI store
        assignment (a cast that fails on overflow), then the column's own Arrow type.

        Raises:
            ExpressionEvaluationError: a value does not fit, or a null for a required column.
        """
        ctx, column = self._context, field.name
        target = t.spark_type_of_column(field.type)
        result = values
        if self.type != field.type and self.type != target:
            try:
                result = cast_value(ctx, None, values, self.type, target, safe=False)  # type: ignore[arg-type]
            except ExpressionEvaluationError as exc:
                raise ExpressionEvaluationError(
                    f"{exc}; the value cannot be assigned to column {column} ({t.type_name(target)})"
                ) from exc
        if result.type != field.type:
            try:
                result = pc.cast(result, field.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                ctx.failed(None, f"the value cannot be written to column {column} ({field.type}): {exc}")
        if not field.nullable and result.null_count:
            ctx.failed(
                None, f"column {column} is required, and the new value is null in {result.null_count} rows"
            )
        return result


def compile_expression(
    text: str, schema: pa.Schema, *, column: str, target: pa.Field | None = None, case_sensitive: bool = True
) -> RowExpression:
    """Compile the Spark SQL expression ``text`` over rows of ``schema``.

    Args:
        column: the column the value is for (error messages name it).
        target: the field the value is assigned to: checked now that Spark's store assignment
            allows it (``canANSIStoreAssign``).
        case_sensitive: whether column names must match in case.

    Raises:
        InvalidExpressionError, UnsupportedFeatureError: see the module docstring.
    """
    ctx = Context(column=column, text=text, schema=schema, case_sensitive=case_sensitive)
    try:
        tree = parse_sql(text)
    except (InvalidExpressionError, UnsupportedFeatureError) as exc:
        raise type(exc)(f"set {column} = {text}: {exc}") from exc
    compiled = compile_node(ctx, tree)
    expression = RowExpression(text, compiled.type, compiled, ctx)
    if target is not None:
        _check_assignable(ctx, compiled.type, target)
    return expression


def _check_assignable(ctx: Context, source: pa.DataType, field: pa.Field) -> None:
    target = t.spark_type_of_column(field.type)
    if source in (field.type, target) or source == t.NULL:
        return
    if not t.is_spark_type(target):
        ctx.unsupported(
            None, f"column {field.name} ({field.type}) can only take a value of its own type here"
        )
    if not t.can_store_assign(source, target):
        raise InvalidExpressionError(
            f"set {field.name} = {ctx.text}: a {t.type_name(source)} value cannot be assigned to the "
            f"{t.type_name(target)} column {field.name} (Spark's store assignment; CAST converts explicitly)"
        )
