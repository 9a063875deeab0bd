"""``table.update(set={...}, where=..., new_values={...})``: change column values of the rows
matching a filter, in one snapshot per ``write.update.mode`` (as Spark's ``UPDATE``).

``where`` is icefloe's filter grammar (or an expression); rows where it is null stay as they
are. Each ``set`` entry names a top-level column and how to compute its new value from the row:

- a string: a Spark SQL expression of the row, meaning what it means in ``isp.update`` and
  Spark's ``UPDATE ... SET``: ``"amount * 2"``, ``"'ZZ'"`` (a string literal is quoted: an
  unquoted ``ZZ`` is a column, and a column the table lacks is an error naming it),
  ``"CASE WHEN amount > 100 THEN 'big' ELSE size END"``, ``"upper(trim(country))"``,
  ``"CAST(code AS INT)"``. It is evaluated on Arrow (``icefloe.arrow.sql``) with Spark 4's
  defaults: ANSI mode (an overflow, a division by zero, a string that does not cast fail the
  update; ``TRY_CAST`` gives null), the session time zone UTC, and the value assigned to the
  column as Spark assigns it (store assignment ANSI: a DOUBLE goes into an INT column, rounded
  toward zero and checked for overflow; a STRING does not go into a DOUBLE column without a
  CAST). Constructs it does not implement raise :class:`UnsupportedFeatureError` naming them;
- a ``pyarrow.compute.Expression`` computed from the row: ``pc.field("amount") * 2`` (Arrow's
  semantics, cast to the column's type);
- a callable taking the matched rows (a ``pyarrow.Table`` with every column) and returning an
  array or a scalar: ``lambda rows: pc.multiply(rows["amount"], 2)``;
- any other value (a number, ``None``, a ``datetime``, a ``pyarrow.Scalar``): a constant.

``new_values`` maps columns to literal values (delta-rs's name): Python values or
``pyarrow.Scalar``\\ s, cast to the column's type (``{"country": "ZZ"}`` stores ``ZZ``). A column
is in ``set`` or in ``new_values``, not both.

Every new value is computed from the row as it was (``set={"a": "b", "b": "a"}`` swaps). How
the change is written follows ``write.update.mode``: ``copy-on-write`` rewrites the files of
the matched rows; ``merge-on-read`` deletes the old rows by position (deletion vectors in v3)
and adds the new ones; isolation per ``write.update.isolation-level``. An update that matches
no row still commits a snapshot (an ``overwrite`` without files), as Java's UPDATE does, so the
two histories stay the same.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

import pyarrow as pa
import pyarrow.compute as pc

from icefloe.arrow.schema import schema_to_arrow, to_requested_schema
from icefloe.arrow.sql import RowExpression, compile_expression
from icefloe.errors import ExpressionEvaluationError, ValidationError
from icefloe.expressions import Expression, always_true, parse
from icefloe.spec.schema import Schema
from icefloe.spec.snapshots import Snapshot
from icefloe.table.rows.append_data import write_files
from icefloe.table.rows.row_changes import (
    MERGE_ON_READ,
    RowChangeTarget,
    WrittenFiles,
    change_isolation,
    change_mode,
    commit_row_change,
    find_rows,
    rewrite_remainders,
    write_change_deletes,
)

__all__ = ["SetValue", "UpdatedColumns", "literal_scalar", "update_rows", "updated_columns"]

#: A ``set=`` value: a Spark SQL string, a ``pc.Expression`` of the row, a function of the
#: matched rows (``Callable[[pa.Table], pa.Array | scalar]``) or a constant; hence ``Any``.
SetValue: TypeAlias = Any
_ARROW_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError, ValueError)


def update_rows(
    target: RowChangeTarget,
    set: Mapping[str, SetValue] | None = None,
    where: Expression | str | None = None,
    *,
    new_values: Mapping[str, Any] | None = None,
    case_sensitive: bool = True,
    snapshot_properties: Mapping[str, str] | None = None,
    branch: str | None = None,
) -> Snapshot | None:
    """Set columns of the rows matching ``where`` (every row when None); returns the snapshot,
    committed also when no row matched (an ``overwrite`` without files, as Java's UPDATE
    commits one). See the module docstring.

    Raises:
        ValidationError: no column to set, an unknown column, a column in both ``set`` and
            ``new_values``, a value that does not fit its column.
        InvalidExpressionError: a ``set`` string that does not parse, names a column the table
            does not have, or gives a value its column cannot take (before any file is read).
        ExpressionEvaluationError: a ``set`` string fails on a row as it would in Spark.
        UnsupportedFeatureError: a ``set`` string uses what the Arrow evaluator does not have.
    """
    metadata = target.metadata
    schema = metadata.schema()
    arrow_schema = schema_to_arrow(schema)
    columns = updated_columns(schema, set, new_values, case_sensitive)
    computed: dict[str, Any] = {
        name: _compiled(value, name, arrow_schema, case_sensitive) if isinstance(value, str) else value
        for name, value in columns.computed.items()
    }  # (compiled before any file is read: a bad expression fails at once)
    computed.update({name: _Literal(value) for name, value in columns.literal.items()})
    row_filter = always_true() if where is None else (parse(where) if isinstance(where, str) else where)
    matched: list[pa.Table] = []
    found = find_rows(
        target, row_filter, None, read_ids=None, case_sensitive=case_sensitive, branch=branch, matched=matched
    )
    rows = (
        pa.concat_tables([to_requested_schema(t, schema) for t in matched])
        if matched
        else arrow_schema.empty_table()
    )
    updated = _apply(rows, computed, arrow_schema)
    mode = change_mode(metadata, "update")
    written = WrittenFiles()
    new_rows = []
    try:
        if mode == MERGE_ON_READ:
            write_change_deletes(target, found, written)
        else:
            rewrite_remainders(target, found, written)
        new_rows = write_files(target, updated)  # type: ignore[arg-type]
    except Exception:
        target.io().delete_quietly(written.paths() + [f.file_path for f in new_rows])
        raise
    return commit_row_change(
        target,
        found,
        written,
        mode=mode,
        isolation=change_isolation(metadata, "update"),
        conflict_filter=row_filter,
        new_rows=new_rows,
        snapshot_properties=snapshot_properties,
        branch=branch,
    )


@dataclass(frozen=True)
class UpdatedColumns:
    """What an update sets, by the table's own column names: ``computed`` (the ``set=``
    entries: SQL strings, expressions, functions, constants) and ``literal`` (``new_values=``)."""

    computed: dict[str, SetValue]
    literal: dict[str, Any]


def updated_columns(
    schema: Schema,
    set: Mapping[str, SetValue] | None,
    new_values: Mapping[str, Any] | None,
    case_sensitive: bool,
) -> UpdatedColumns:
    """The ``set`` and ``new_values`` entries by the table's own column names; shared with
    ``isp.update``, which takes the same arguments.

    Raises:
        ValidationError: nothing to set, an unknown column, a column given twice, an expression
            in ``new_values``.
    """
    if not set and not new_values:
        raise ValidationError(
            "update needs the columns to change: set={column: SQL expression} or new_values={column: value}"
        )
    result = UpdatedColumns({}, {})
    for entries, into in ((set or {}, result.computed), (new_values or {}, result.literal)):
        for name, value in entries.items():
            field = schema.as_struct().field_by_name(name, case_sensitive=case_sensitive)
            if field is None:
                raise ValidationError(
                    f"update: '{name}' is not a top-level column of the table; columns: {schema.column_names}"
                )
            if field.name in result.computed or field.name in result.literal:
                raise ValidationError(
                    f"update: column '{field.name}' is given two new values (set= and new_values= take "
                    "different columns)"
                )
            if into is result.literal and (isinstance(value, pc.Expression) or callable(value)):
                raise ValidationError(
                    f"update: new_values= takes values; the expression for '{field.name}' goes in set="
                )
            into[field.name] = value
    return result


@dataclass(frozen=True)
class _Literal:
    """A ``new_values`` entry: a value, never an expression."""

    value: Any


def _compiled(text: str, name: str, arrow_schema: pa.Schema, case_sensitive: bool) -> RowExpression:
    return compile_expression(
        text, arrow_schema, column=name, target=arrow_schema.field(name), case_sensitive=case_sensitive
    )


def _apply(rows: pa.Table, values: dict[str, Any], arrow_schema: pa.Schema) -> pa.Table:
    """``rows`` with the new values, each computed from the rows as they were."""
    computed: dict[str, pa.ChunkedArray | pa.Array] = {}
    for name, value in values.items():
        field = arrow_schema.field(name)
        if isinstance(value, RowExpression):
            computed[name] = value.assign(value.evaluate(rows), field)
            continue
        try:
            computed[name] = _value(rows, name, value, field.type)
        except ExpressionEvaluationError:
            raise
        except _ARROW_ERRORS as exc:
            raise ValidationError(
                f"update: the new value of column '{name}' does not fit it ({field.type}): {exc}"
            ) from exc
    result = rows
    for name, array in computed.items():
        result = result.set_column(result.schema.get_field_index(name), arrow_schema.field(name), array)
    return result


def literal_scalar(value: Any, target: pa.DataType) -> pa.Scalar:
    """A literal value (a Python value or a ``pyarrow.Scalar``) as a scalar of ``target``.

    Raises:
        ValueError, TypeError, ``pyarrow.ArrowInvalid``: it does not convert (a lossy cast is
            refused: 1.5 is not an integer).
    """
    scalar = value if isinstance(value, pa.Scalar) else pa.scalar(value)
    if scalar.type != target:
        scalar = scalar.cast(target)
    return scalar


def _value(rows: pa.Table, name: str, value: Any, target: pa.DataType) -> pa.ChunkedArray | pa.Array:
    n = rows.num_rows
    if isinstance(value, _Literal):
        return pa.repeat(literal_scalar(value.value, target), n)
    if isinstance(value, pc.Expression):
        return _arrow_expression(rows, name, value).cast(target)
    if callable(value):
        return _function_value(rows, value, target)
    return pa.repeat(literal_scalar(value, target), n)


def _arrow_expression(rows: pa.Table, name: str, expression: pc.Expression) -> pa.ChunkedArray:
    # Imported here: pyarrow.dataset imports pandas (0.3 s and 60 MB), which importing
    # icefloe, and planning, never need.
    import pyarrow.dataset as pads

    return pads.dataset(rows).to_table(columns={name: expression}).column(name)


def _function_value(rows: pa.Table, function: Callable[[pa.Table], Any], target: pa.DataType) -> Any:
    produced = function(rows)
    if isinstance(produced, (pa.Array, pa.ChunkedArray)):
        if len(produced) != rows.num_rows:
            raise ValueError(f"the function returned {len(produced)} values for {rows.num_rows} rows")
        return produced.cast(target)
    return pa.repeat(literal_scalar(produced, target), rows.num_rows)
