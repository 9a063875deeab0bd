"""``table.update(set={...}, where=...)``: change column values of the rows matching a filter,
in one snapshot per ``write.update.mode`` (as Spark's ``UPDATE``).

``where`` is icefloe's filter grammar (or an expression); rows where it is null stay as they
are. Each ``set`` entry names a top-level column and its new value:

- a literal: a Python value (``10``, ``"NL"``, ``None``, ``datetime``, ``Decimal`` ...) or a
  ``pyarrow.Scalar``, cast to the column's type;
- a ``pyarrow.compute.Expression`` computed from the row: ``pc.field("amount") * 2``,
  ``pc.utf8_upper(pc.field("country"))`` (icefloe's filter grammar has no arithmetic, so
  computed values are Arrow's);
- a callable taking the matched rows (a ``pyarrow.Table`` with every column) and returning an
  array or a scalar: ``lambda rows: pc.multiply(rows["amount"], 2)``.

Every new value is computed from the row as it was (``set={"a": pc.field("b"), "b":
pc.field("a")}`` swaps). How the change is written follows ``write.update.mode``:
``copy-on-write`` rewrites the files of the matched rows; ``merge-on-read`` deletes the old
rows by position (deletion vectors in v3) and adds the new ones; isolation per
``write.update.isolation-level``. An update that matches no row still commits a snapshot (an
``overwrite`` without files), as Java's UPDATE does, so the two histories stay the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

import pyarrow as pa
import pyarrow.compute as pc

from icefloe.arrow.schema import schema_to_arrow, to_requested_schema
from icefloe.errors import ValidationError
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

__all__ = ["SetValue", "update_rows"]

#: A new value: a literal, a ``pc.Expression`` of the row, or a function of the matched rows
#: (``Callable[[pa.Table], pa.Array | scalar]``); literals may be of any type, hence ``Any``.
SetValue: TypeAlias = Any


def update_rows(
    target: RowChangeTarget,
    set: Mapping[str, SetValue],
    where: Expression | str | None = None,
    *,
    case_sensitive: bool = True,
    snapshot_properties: Mapping[str, str] | None = None,
    branch: str | None = None,
) -> Snapshot | None:
    """Set columns of the rows matching ``where`` (every row when None); returns the snapshot,
    committed also when no row matched (an ``overwrite`` without files, as Java's UPDATE
    commits one). See the module docstring.

    Raises:
        ValidationError: no ``set``, an unknown column, a value that does not fit its column.
    """
    if not set:
        raise ValidationError("update needs the columns to change: set={column: value}")
    metadata = target.metadata
    schema = metadata.schema()
    columns = _columns(schema, set, case_sensitive)
    row_filter = always_true() if where is None else (parse(where) if isinstance(where, str) else where)
    matched: list[pa.Table] = []
    found = find_rows(
        target, row_filter, None, read_ids=None, case_sensitive=case_sensitive, branch=branch, matched=matched
    )
    arrow_schema = schema_to_arrow(schema)
    rows = (
        pa.concat_tables([to_requested_schema(t, schema) for t in matched])
        if matched
        else arrow_schema.empty_table()
    )
    updated = _apply(rows, columns, arrow_schema)
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


def _columns(schema: Schema, values: Mapping[str, SetValue], case_sensitive: bool) -> dict[str, SetValue]:
    """The ``set`` entries by the table's own column names."""
    by_name: dict[str, SetValue] = {}
    for name, value in values.items():
        field = schema.as_struct().field_by_name(name, case_sensitive=case_sensitive)
        if field is None:
            raise ValidationError(
                f"update: '{name}' is not a top-level column of the table; columns: {schema.column_names}"
            )
        by_name[field.name] = value
    return by_name


def _apply(rows: pa.Table, values: dict[str, SetValue], arrow_schema: pa.Schema) -> pa.Table:
    """``rows`` with the new values, each computed from the rows as they were."""
    computed: dict[str, pa.ChunkedArray | pa.Array] = {}
    for name, value in values.items():
        target = arrow_schema.field(name).type
        try:
            computed[name] = _value(rows, name, value, target)
        except (
            pa.ArrowInvalid,
            pa.ArrowTypeError,
            pa.ArrowNotImplementedError,
            TypeError,
            ValueError,
        ) as exc:
            raise ValidationError(
                f"update: the new value of column '{name}' does not fit it ({target}): {exc}"
            ) from exc
    result = rows
    for name, array in computed.items():
        result = result.set_column(result.schema.get_field_index(name), arrow_schema.field(name), array)
    return result


def _value(rows: pa.Table, name: str, value: SetValue, target: pa.DataType) -> pa.ChunkedArray | pa.Array:
    n = rows.num_rows
    if isinstance(value, pc.Expression):
        # Imported here: pyarrow.dataset imports pandas (0.3 s and 60 MB), which importing
        # icefloe, and planning, never need.
        import pyarrow.dataset as pads

        computed = pads.dataset(rows).to_table(columns={name: value}).column(name)
        return computed.cast(target)
    if callable(value):
        produced = value(rows)
        if isinstance(produced, (pa.Array, pa.ChunkedArray)):
            if len(produced) != n:
                raise ValueError(f"the function returned {len(produced)} values for {n} rows")
            return produced.cast(target)
        value = produced
    scalar = value if isinstance(value, pa.Scalar) else pa.scalar(value)
    if scalar.type != target:
        scalar = scalar.cast(target)
    return pa.repeat(scalar, n)
