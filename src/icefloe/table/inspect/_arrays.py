"""Arrow arrays straight from a decoded manifest's columns (no object per file).

A ``DecodedManifest`` keeps metrics maps as a layout code per entry, offsets and flat values
(bounds concatenated in one ``bytes``); these functions turn them into Arrow map arrays and
into the typed columns of ``readable_metrics`` with numpy index arithmetic.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from icefloe.arrow.convert import to_arrow_array
from icefloe.scan._columnar import BoundsColumn, CountsColumn
from icefloe.scan._columnar.metrics import MapColumn
from icefloe.spec.conversions import from_bytes
from icefloe.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DoubleType,
    FloatType,
    IcebergType,
    IntegerType,
    LongType,
    StringType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
)

__all__ = [
    "bounds_map",
    "counts_map",
    "decoded_bounds",
    "int_array",
    "metric_counts",
    "optional_column",
]


def int_array(values: np.ndarray, nulls: np.ndarray | None, type_: pa.DataType) -> pa.Array:
    """An int array of ``values`` (null where ``nulls`` is set)."""
    return pa.array(values.astype(type_.to_pandas_dtype(), copy=False), type=type_, mask=nulls)


def _keys(column: MapColumn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(offsets, keys, valid) of the map of every entry: keys flat, one per value."""
    codes = column.codes
    starts = column.starts
    n = len(codes)
    valid = codes >= 0
    if column.uniform is not None:
        keys = np.tile(np.asarray(column.layouts[0], dtype=np.int32), n)
        return starts, keys, valid
    flat = np.asarray([k for layout in column.layouts for k in layout], dtype=np.int32)
    layout_starts = np.zeros(len(column.layouts) + 1, dtype=np.int64)
    np.cumsum([len(layout) for layout in column.layouts], out=layout_starts[1:])
    lengths = np.diff(starts)
    first = layout_starts[np.where(valid, codes, 0)] - starts[:-1]
    index = np.repeat(first, lengths) + np.arange(int(starts[-1]), dtype=np.int64)
    return starts, flat[index] if len(index) else np.zeros(0, dtype=np.int32), valid


def _map_array(
    offsets: np.ndarray, keys: pa.Array, items: pa.Array, valid: np.ndarray, type_: pa.MapType
) -> pa.Array:
    mask = None if valid.all() else pa.array(~valid)
    return pa.MapArray.from_arrays(pa.array(offsets.astype(np.int32)), keys, items, type=type_, mask=mask)


def counts_map(column: CountsColumn, type_: pa.MapType) -> pa.Array:
    """A ``map<int, long>`` array of a counts column (null where an entry has no map)."""
    offsets, keys, valid = _keys(column)
    values = column.values
    if values.dtype == object:  # a malformed file: nulls or huge numbers as Python ints
        items = pa.array(values.tolist(), type=type_.item_type)
    else:
        items = pa.array(values, type=type_.item_type)
    return _map_array(offsets, pa.array(keys, type=type_.key_type), items, valid, type_)


def bounds_map(column: BoundsColumn, type_: pa.MapType) -> pa.Array:
    """A ``map<int, binary>`` array of a bounds column."""
    offsets, keys, valid = _keys(column)
    items = _binary(column.blob, column.offsets, type_.item_type)
    return _map_array(offsets, pa.array(keys, type=type_.key_type), items, valid, type_)


def _binary(blob: bytes, offsets: np.ndarray, type_: pa.DataType) -> pa.Array:
    count = len(offsets) - 1
    return pa.Array.from_buffers(
        type_, count, [None, pa.py_buffer(offsets.astype(np.int32).tobytes()), pa.py_buffer(blob)]
    )


def optional_column(values: Sequence[Any] | None, count: int, type_: pa.DataType) -> pa.Array:
    """A column of an optional field (None: no entry has it)."""
    if values is None:
        return pa.nulls(count, type_)
    if isinstance(type_, (pa.ListType,)):
        return pa.array([None if v is None else list(v) for v in values], type=type_)
    return pa.array(values, type=type_)


def metric_counts(column: CountsColumn, field_id: int) -> pa.Array:
    """The count of ``field_id`` per entry as a long array (null where absent)."""
    present, values = column.get(field_id)
    return pa.array(values, type=pa.int64(), mask=~present)


# ---- bounds decoded to the column's type ------------------------------------------------------

_FIXED: dict[type, tuple[str, int, pa.DataType]] = {
    IntegerType: ("<i4", 4, pa.int32()),
    DateType: ("<i4", 4, pa.date32()),
    FloatType: ("<f4", 4, pa.float32()),
    DoubleType: ("<f8", 8, pa.float64()),
    TimeType: ("<i8", 8, pa.time64("us")),
    TimestampType: ("<i8", 8, pa.timestamp("us")),
    TimestamptzType: ("<i8", 8, pa.timestamp("us", tz="UTC")),
    TimestampNanoType: ("<i8", 8, pa.timestamp("ns")),
    TimestamptzNanoType: ("<i8", 8, pa.timestamp("ns", tz="UTC")),
    LongType: ("<i8", 8, pa.int64()),
}


def _gather(blob: np.ndarray, start: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The bytes of each (start, length) slice of ``blob``, concatenated, and their offsets."""
    offsets = np.zeros(len(start) + 1, dtype=np.int64)
    np.cumsum(length, out=offsets[1:])
    total = int(offsets[-1])
    if not total:
        return np.zeros(0, dtype=np.uint8), offsets
    index = np.repeat(start - offsets[:-1], length) + np.arange(total, dtype=np.int64)
    return blob[index], offsets


def decoded_bounds(
    column: BoundsColumn, field_id: int, type_: IcebergType, arrow_type: pa.DataType
) -> pa.Array:
    """The bound of ``field_id`` per entry, decoded to the column's type (Java's
    ``Conversions.fromByteBuffer``; a 4-byte bound of a long / 4-byte float of a double
    column was written before a type promotion)."""
    present, start, length = column.raw(field_id)
    n = len(present)
    blob = np.frombuffer(column.blob, dtype=np.uint8)
    fixed = _FIXED.get(type(type_))
    if fixed is not None:
        dtype, width, _ = fixed
        ok = present & (length == width)
        if ok.sum() == present.sum():
            data, _ = _gather(blob, np.where(ok, start, 0), np.where(ok, width, 0))
            values = np.zeros(n, dtype=dtype)
            values[ok] = data.view(dtype)
            return pa.array(values, mask=~ok).cast(arrow_type) if n else pa.nulls(0, arrow_type)
    if isinstance(type_, (StringType, BinaryType)):
        data, offsets = _gather(blob, start, np.where(present, length, 0))
        target = pa.string() if isinstance(type_, StringType) else pa.binary()
        array = pa.Array.from_buffers(
            target,
            n,
            [
                pa.array(present).buffers()[1] if not present.all() else None,
                pa.py_buffer(offsets.astype(np.int32).tobytes()),
                pa.py_buffer(data.tobytes()),
            ],
            null_count=int((~present).sum()),
        )
        if isinstance(type_, StringType):
            try:
                array.validate(full=True)
            except pa.ArrowInvalid:  # not UTF-8: decoded value by value, as Java would
                return _one_by_one(column, present, start, length, type_, arrow_type)
        return array
    return _one_by_one(column, present, start, length, type_, arrow_type)


def _one_by_one(
    column: BoundsColumn,
    present: np.ndarray,
    start: np.ndarray,
    length: np.ndarray,
    type_: IcebergType,
    arrow_type: pa.DataType,
) -> pa.Array:
    blob = column.blob
    values: list[Any] = []
    for ok, a, size in zip(present.tolist(), start.tolist(), length.tolist()):
        values.append(_decode(type_, blob[a : a + size]) if ok else None)
    return to_arrow_array(values, type_, arrow_type)


def _decode(type_: IcebergType, data: bytes) -> Any:
    if isinstance(type_, LongType) and len(data) == 4:
        return int.from_bytes(data, "little", signed=True)
    if isinstance(type_, DoubleType) and len(data) == 4:
        return float(np.frombuffer(data, dtype="<f4")[0])
    if isinstance(type_, StringType):
        return data.decode("utf-8", errors="replace")
    if isinstance(type_, BooleanType):
        return bool(data[0]) if data else None
    return from_bytes(type_, data)
