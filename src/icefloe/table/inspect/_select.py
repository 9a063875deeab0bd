"""Row filters and column selection on a metadata table's Arrow rows."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from icefloe.arrow.row_filter import to_arrow_expression
from icefloe.arrow.schema import schema_to_arrow
from icefloe.expressions import AlwaysTrue, Expression, bind, parse, referenced_field_ids
from icefloe.spec.schema import Schema

__all__ = ["bound_filter", "filter_rows", "select_columns"]

_ROW = "__icefloe_row"


def bound_filter(
    row_filter: Expression | str | None, schema: Schema, *, case_sensitive: bool
) -> Expression | None:
    """The filter bound to the metadata table's schema (None: every row).

    Raises:
        InvalidFilterError: naming the column or literal it gets wrong.
    """
    if row_filter is None:
        return None
    expr = parse(row_filter) if isinstance(row_filter, str) else row_filter
    bound = bind(schema, expr, case_sensitive=case_sensitive)
    return None if isinstance(bound, AlwaysTrue) else bound


def filter_rows(data: pa.Table, bound: Expression | None, schema: Schema) -> pa.Table:
    """The rows of ``data`` that match ``bound`` (icefloe's semantics: unknown does not match).

    The expression runs on the columns it references only, then the rows are taken from all
    columns (Arrow's expression engine does not take every type a metadata table holds)."""
    if bound is None or data.num_rows == 0:
        return data
    ids = referenced_field_ids(bound)
    top = [f.name for f in schema.fields if any(i in ids for i in _ids_under(f.field_id, schema))]
    narrow = data.select(top).append_column(_ROW, pa.array(range(data.num_rows), pa.int64()))
    kept = narrow.filter(to_arrow_expression(bound, schema, arrow_schema=narrow.schema))
    return data.take(kept.column(_ROW))


def _ids_under(field_id: int, schema: Schema) -> set[int]:
    name = schema.find_column_name(field_id)
    assert name is not None
    return set(schema.select(name).id_to_name())


def select_columns(
    data: pa.Table, schema: Schema, columns: Sequence[str] | None, *, case_sensitive: bool
) -> pa.Table:
    """``data`` with only the named columns (dotted names select nested fields), in the
    metadata table's order.

    Raises:
        ValidationError: naming a column the metadata table does not have.
    """
    if not columns:
        return data
    pruned = schema.select(*columns, case_sensitive=case_sensitive)
    target = schema_to_arrow(pruned)
    arrays = [_project(data.column(field.name), field.type) for field in target]
    return pa.Table.from_arrays(arrays, schema=target)


def _project(column: pa.ChunkedArray, target: pa.DataType) -> pa.ChunkedArray:
    if column.type.equals(target, check_metadata=True) or not pa.types.is_struct(target):
        return column
    chunks = []
    for chunk in column.chunks:
        children = [
            _project(pa.chunked_array([chunk.field(field.name)]), field.type).combine_chunks()
            for field in target
        ]
        chunks.append(pa.StructArray.from_arrays(children, fields=list(target), mask=chunk.is_null()))
    return pa.chunked_array(chunks, type=target)
