"""Iceberg schemas to and from Arrow schemas (spec Appendix A, "Parquet", as pyarrow sees it).

Iceberg types map to one Arrow type each, so batches produced for one Iceberg schema always
concatenate:

==================  =====================================================================
Iceberg             Arrow
==================  =====================================================================
boolean             ``bool``
int / long          ``int32`` / ``int64``
float / double      ``float32`` / ``float64``
decimal(P, S)       ``decimal128(P, S)``
date                ``date32``
time                ``time64("us")``
timestamp(tz)       ``timestamp("us")`` / ``timestamp("us", tz="UTC")``
timestamp(tz)_ns    ``timestamp("ns")`` / ``timestamp("ns", tz="UTC")``
string              ``string`` (32-bit offsets; ``large_string``/``string_view`` accepted on input)
uuid                ``pa.uuid()`` (extension over ``binary(16)``; Parquet ``FIXED[16]`` + ``UUID``)
fixed(L)            ``binary(L)`` (``fixed_size_binary``)
binary              ``binary`` (32-bit offsets; ``large_binary`` accepted on input)
unknown             ``null`` (never stored in data files)
struct / list / map ``struct`` / ``list`` (element field ``element``) / ``map`` (``key``, ``value``)
==================  =====================================================================

Every field carries its Iceberg id in the field metadata key ``PARQUET:field_id`` (list
elements and map keys/values included), which pyarrow writes as the Parquet field id and
reads back from Parquet files. Required fields are ``nullable=False``.

Reading the other way, :func:`arrow_to_schema` takes ids from that metadata (or the
``field_id`` key), else from a name mapping; :func:`arrow_to_schema_fresh` ignores ids and
also accepts the Arrow types that pandas and polars produce (``large_string``,
``string_view``, dictionaries, ``large_list``, small and unsigned integers, second and
millisecond timestamps, ``date64``).

:func:`to_requested_schema` conforms incoming data (a pyarrow Table or RecordBatch, matched by
column name) to a table schema before it is written.
"""

from __future__ import annotations

import pyarrow as pa

from icefloe.arrow._project import WriteRules, project_columns
from icefloe.arrow._types import (
    FIELD_ID_KEY,
    apply_name_mapping,
    arrow_to_schema,
    arrow_to_schema_fresh,
    arrow_type_to_iceberg,
    field_id_of,
    field_to_arrow,
    schema_to_arrow,
    type_to_arrow,
)
from icefloe.errors import ValidationError
from icefloe.spec.schema import Schema

__all__ = [
    "FIELD_ID_KEY",
    "apply_name_mapping",
    "arrow_to_schema",
    "arrow_to_schema_fresh",
    "arrow_type_to_iceberg",
    "as_iceberg_schema",
    "field_id_of",
    "field_to_arrow",
    "schema_to_arrow",
    "to_requested_schema",
    "type_to_arrow",
]


def to_requested_schema(
    data: pa.Table | pa.RecordBatch, schema: Schema, *, include_field_ids: bool = True
) -> pa.Table | pa.RecordBatch:
    """Conform ``data`` to a table schema before writing it.

    Columns (and struct fields, at any depth) are matched by name, case-sensitively, and cast
    to ``schema_to_arrow(schema)``. Allowed conversions are the lossless ones: the same
    Iceberg type in another Arrow form (``large_string``, dictionaries, ``int8``, ``date64``,
    ...), the Iceberg promotions (int -> long, float -> double), long -> int and decimal
    precision/scale changes when every value fits, timestamp unit changes that lose nothing
    (within naive or within zoned timestamps), ``binary``/``fixed`` -> ``uuid`` or
    ``fixed(L)`` of the right length, and all-null columns to any optional column. double ->
    float is allowed too (Python floats are doubles) and rounds to the nearest float.

    A column the data lacks is filled with its ``write_default``, or nulls when it is
    optional; unknown-typed columns are all nulls.

    Args:
        data: the rows to write.
        schema: the table schema.
        include_field_ids: whether the result's fields carry ``PARQUET:field_id`` metadata.

    Returns:
        the same kind of object (Table or RecordBatch) with exactly the table's Arrow schema.

    Raises:
        ValidationError: naming the column: an extra column, a missing required column
            without write-default, a null in a required column, or a value/type that does
            not convert.
    """
    target = schema_to_arrow(schema, include_field_ids=include_field_ids)
    if isinstance(data, pa.RecordBatch):
        return _conform_batch(data, schema, target)
    if not isinstance(data, pa.Table):
        raise ValidationError(f"expected a pyarrow Table or RecordBatch, not {type(data).__name__}")
    batches = [_conform_batch(b, schema, target) for b in data.to_batches()]
    if not batches:
        # still check the columns of an empty table
        empty = [pa.nulls(0, f.type) for f in data.schema]
        _conform_batch(pa.RecordBatch.from_arrays(empty, schema=data.schema), schema, target)
    # (not target.empty_table(): pyarrow cannot build empty nested arrays of extension types)
    return pa.Table.from_batches(batches, schema=target)


def _conform_batch(batch: pa.RecordBatch, schema: Schema, target: pa.Schema) -> pa.RecordBatch:
    columns = project_columns(
        batch.columns, list(batch.schema), schema.as_struct(), list(target), batch.num_rows, WriteRules()
    )
    return pa.RecordBatch.from_arrays(columns, schema=target)


def as_iceberg_schema(schema: object) -> Schema:
    """``schema`` itself when it is an icefloe Schema; a pyarrow Schema with fresh field ids.

    Raises:
        ValidationError: neither.
    """
    if isinstance(schema, Schema):
        return schema
    if isinstance(schema, pa.Schema):
        return arrow_to_schema_fresh(schema)
    raise ValidationError(
        f"schema must be an icefloe Schema or a pyarrow Schema, not {type(schema).__name__}"
    )
