"""One text form per value, whichever engine produced it.

Used on both sides of an interop comparison: inside the engine servers (Spark rows, PyIceberg's
Arrow tables, DuckDB tuples) and in icefloe's own tests (icefloe's Arrow tables), so that

    normalize_arrow(icefloe_table)["rows"] == java_engine.read(path)["rows"]

holds exactly when the engines see the same data. The result is plain JSON (no NaN tokens).

Rules:

- ``None``, ``bool``, ``int`` and ``str`` stay as they are.
- floats: NaN, Infinity and -Infinity become the strings ``"NaN"``, ``"Infinity"`` and
  ``"-Infinity"``; other floats stay floats. Zero keeps its sign: ``-0.0`` stays ``-0.0`` (JSON
  text ``-0.0``). Java Iceberg on Spark, PyIceberg and DuckDB all hand a stored ``-0.0`` back as
  ``-0.0`` (checked on a float and a double column), so a writer that loses the sign is a bug
  worth seeing. Python's ``==`` treats ``-0.0 == 0.0``, but the row order below (by JSON text)
  does not, so a lost sign shows up as a mismatch when it matters for ordering.
- ``Decimal``: the value in plain positional notation without trailing zeros (``"1.5"``,
  ``"100"``, ``"0"``). Engines disagree on scale and exponents, not on values.
- ``datetime``: naive UTC ``isoformat()``; aware values are converted to UTC first. So
  ``timestamp`` and ``timestamptz`` holding the same instant print the same.
  (nanosecond ``pandas.Timestamp`` values keep their nanoseconds.)
- ``date`` and ``time``: ``isoformat()``.
- ``bytes``: lowercase hex. ``UUID``: its canonical string.
- maps: dicts whose keys are the normalised keys as text (strings as they are, other values as
  their JSON text), sorted. Arrow hands maps over as lists of ``(key, value)`` tuples: use
  :func:`arrow_rows` / :func:`normalize_arrow`, which know the schema (an empty map stays a map).
- structs: dicts of field name to value (a Spark ``Row`` is turned into its dict).
- lists and tuples: lists.
- anything else: ``str(value)``.

Rows are sorted by their JSON text (``json.dumps(row, sort_keys=True)``).

This module must import nothing outside the standard library at import time: the engine servers
load it into their own environments.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["arrow_rows", "normalize_arrow", "normalize_rows", "normalize_value", "row_sort_key"]


def _map_key(key: Any) -> str:
    norm = normalize_value(key)
    if isinstance(norm, str):
        return norm
    return json.dumps(norm, sort_keys=True)


def _normalize_map(pairs: Iterable[tuple[Any, Any]]) -> dict[str, Any]:
    items = [(_map_key(k), normalize_value(v)) for k, v in pairs]
    items.sort(key=lambda kv: kv[0])
    return dict(items)


def _is_spark_row(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(value, "asDict") and hasattr(value, "__fields__")


def normalize_value(value: Any) -> Any:
    """Returns the engine-independent JSON form of one value (see the module docstring)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if isinstance(value, decimal.Decimal):
        if value.is_nan():
            return "NaN"
        if value.is_infinite():
            return "Infinity" if value > 0 else "-Infinity"
        if value == 0:
            return "0"
        return format(value.normalize(), "f")
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return value.isoformat()
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, Mapping):  # dicts, and the lazily decoded metrics of planned files
        return _normalize_map(value.items())
    if _is_spark_row(value):
        return {str(k): normalize_value(v) for k, v in value.asDict(recursive=False).items()}
    if isinstance(value, (list, tuple)):
        return [normalize_value(v) for v in value]
    return str(value)


def row_sort_key(row: Any) -> str:
    """The sort key of a normalised row: its JSON text with sorted keys."""
    return json.dumps(row, sort_keys=True)


def normalize_rows(rows: Iterable[Sequence[Any]], *, sort: bool = True) -> list[list[Any]]:
    """Normalises every value of every row; sorts the rows by their JSON text unless told not to."""
    out = [[normalize_value(v) for v in row] for row in rows]
    if sort:
        out.sort(key=row_sort_key)
    return out


def _from_arrow(value: Any, typ: Any) -> Any:
    import pyarrow as pa

    if value is None:
        return None
    if pa.types.is_map(typ):
        return _normalize_map((k, _from_arrow(v, typ.item_type)) for k, v in value)
    if pa.types.is_list(typ) or pa.types.is_large_list(typ) or pa.types.is_fixed_size_list(typ):
        return [_from_arrow(v, typ.value_type) for v in value]
    if pa.types.is_struct(typ):
        return {f.name: _from_arrow(value[f.name], f.type) for f in typ}
    return normalize_value(value)


def arrow_rows(table: Any) -> list[list[Any]]:
    """The normalised rows of a ``pyarrow.Table`` (or ``RecordBatch``) in their stored order.

    Unlike :func:`normalize_value` on ``to_pylist()`` output, this knows the schema: maps become
    dicts even when empty, and a list of two-field structs is never mistaken for a map.
    """
    columns = [table.column(i).to_pylist() for i in range(table.num_columns)]
    types = [field.type for field in table.schema]
    return [[_from_arrow(col[r], typ) for col, typ in zip(columns, types)] for r in range(table.num_rows)]


def normalize_arrow(table: Any, *, sort: bool = True) -> dict[str, Any]:
    """``{"columns": [...], "rows": [...]}`` of a ``pyarrow.Table``, rows normalised and sorted.

    The same shape (and value forms) as the ``columns`` and ``rows`` of an engine's ``read``.
    """
    rows = arrow_rows(table)
    if sort:
        rows.sort(key=row_sort_key)
    return {"columns": list(table.schema.names), "rows": rows}
