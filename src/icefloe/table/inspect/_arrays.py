"""Columns of many decoded manifests at once, and Arrow arrays from them.

A ``DecodedManifest`` keeps metrics maps as a layout code per entry, offsets and flat values
(bounds concatenated in one ``bytes``). ``FlatMap`` joins one map of a chunk of manifests into
flat keys, values and per-entry offsets, from which both the Arrow map column and the
per-column metrics of ``readable_metrics`` come with a few numpy passes over the whole chunk:
the cost is per chunk, not per manifest or per file.
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

__all__ = ["FlatMap", "concat_optional", "int_array"]


def int_array(values: np.ndarray, nulls: np.ndarray | None, type_: pa.DataType) -> pa.Array:
    """An int array of ``values`` (null where ``nulls`` is set)."""
    return pa.array(values.astype(type_.to_pandas_dtype(), copy=False), type=type_, mask=nulls)


def concat_optional(
    columns: Sequence[list[Any] | None], counts: Sequence[int], type_: pa.DataType
) -> pa.Array:
    """An optional field's column over several manifests (None: no entry of that manifest has
    the field)."""
    total = sum(counts)
    if all(c is None for c in columns):
        return pa.nulls(total, type_)
    values: list[Any] = []
    for column, count in zip(columns, counts):
        values.extend([None] * count if column is None else column)
    if pa.types.is_list(type_):
        values = [None if v is None else list(v) for v in values]
    return pa.array(values, type=type_)


def _keys(column: MapColumn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lengths, keys, valid) of one manifest's map column: keys flat, one per value."""
    codes = column.codes
    starts = column.starts
    n = len(codes)
    valid = codes >= 0
    lengths = np.diff(starts)
    if column.uniform is not None:
        return lengths, np.tile(np.asarray(column.layouts[0], dtype=np.int32), n), valid
    flat = np.asarray([k for layout in column.layouts for k in layout], dtype=np.int32)
    layout_starts = np.zeros(len(column.layouts) + 1, dtype=np.int64)
    np.cumsum([len(layout) for layout in column.layouts], out=layout_starts[1:])
    first = layout_starts[np.where(valid, codes, 0)] - starts[:-1]
    index = np.repeat(first, lengths) + np.arange(int(starts[-1]), dtype=np.int64)
    return lengths, flat[index] if len(index) else np.zeros(0, dtype=np.int32), valid


class FlatMap:
    """One metrics map of a chunk of manifests: per entry a (possibly null) map, as flat
    ``keys`` and ``values`` (counts: int64; bounds: ``blob`` + ``value_offsets``) with
    ``offsets`` per entry."""

    def __init__(self, columns: Sequence[MapColumn]):
        parts = [_keys(c) for c in columns]
        lengths = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, dtype=np.int64)
        self.count = len(lengths)
        self.offsets = np.zeros(self.count + 1, dtype=np.int64)
        np.cumsum(lengths, out=self.offsets[1:])
        self.keys = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, dtype=np.int32)
        self.valid = np.concatenate([p[2] for p in parts]) if parts else np.zeros(0, dtype=bool)
        self.lengths = lengths
        self.is_bounds = bool(columns) and isinstance(columns[0], BoundsColumn)
        if self.is_bounds:
            bounds = [c for c in columns if isinstance(c, BoundsColumn)]
            self.blob = b"".join(c.blob for c in bounds)
            value_offsets = [np.zeros(1, dtype=np.int64)]
            base = 0
            for c in bounds:
                value_offsets.append(c.offsets[1:] + base)
                base += len(c.blob)
            self.value_offsets = np.concatenate(value_offsets)
            self.values = np.zeros(0, dtype=np.int64)
        else:
            counts = [c.values for c in columns if isinstance(c, CountsColumn)]
            if any(v.dtype == object for v in counts):  # a malformed file: Python ints, maybe None
                self.values = np.concatenate([v.astype(object) for v in counts])
            else:
                self.values = np.concatenate(counts) if counts else np.zeros(0, dtype=np.int64)
            self.blob = b""
            self.value_offsets = np.zeros(1, dtype=np.int64)

    # ---- the map column -----------------------------------------------------------------------

    def arrow(self, type_: pa.MapType) -> pa.Array:
        """The ``map<int, long>`` / ``map<int, binary>`` column (null where an entry has none)."""
        if self.is_bounds:
            items = _binary_array(self.blob, self.value_offsets, type_.item_type)
        elif self.values.dtype == object:
            items = pa.array(self.values.tolist(), type=type_.item_type)
        else:
            items = pa.array(self.values, type=type_.item_type)
        mask = None if self.valid.all() else pa.array(~self.valid)
        return pa.MapArray.from_arrays(
            pa.array(self.offsets.astype(np.int32)),
            pa.array(self.keys, type=type_.key_type),
            items,
            type=type_,
            mask=mask,
        )

    # ---- one column's metric per entry ------------------------------------------------------

    def index(self, field_ids: Sequence[int]) -> np.ndarray:
        """For each entry and each of ``field_ids``, the index of its value (-1: absent); a key
        repeated in one map counts at its last position, as a dict of the pairs keeps it."""
        result = np.full((self.count, len(field_ids)), -1, dtype=np.int64)
        if not len(self.keys) or not len(field_ids):
            return result
        # Keys may be huge (delete files carry metrics of reserved ids like 2147483546):
        # find them among the wanted ids by binary search, not a dense lookup table.
        ids = np.asarray(field_ids, dtype=np.int64)
        order = np.argsort(ids)
        sorted_ids = ids[order]
        keys = self.keys.astype(np.int64)
        at = np.clip(np.searchsorted(sorted_ids, keys), 0, len(sorted_ids) - 1)
        column = np.where(sorted_ids[at] == keys, order[at], -1)
        wanted = column >= 0
        rows = np.repeat(np.arange(self.count, dtype=np.int64), self.lengths)
        flat = np.arange(len(self.keys), dtype=np.int64)
        result[rows[wanted], column[wanted]] = flat[wanted]
        return result

    def counts(self, index: np.ndarray) -> pa.Array:
        """The long value at ``index`` per entry (null where -1)."""
        present = index >= 0
        if self.values.dtype == object:
            loose = [
                int(self.values[i]) if ok and self.values[i] is not None else None
                for i, ok in zip(index, present)
            ]
            return pa.array(loose, pa.int64())
        picked = (
            self.values[np.where(present, index, 0)] if len(self.values) else np.zeros(len(index), np.int64)
        )
        return pa.array(picked, type=pa.int64(), mask=~present)

    def bounds(self, index: np.ndarray, type_: IcebergType, arrow_type: pa.DataType) -> pa.Array:
        """The bound at ``index`` per entry decoded to the column's type (Java's
        ``Conversions.fromByteBuffer``; a 4-byte bound of a long / double column was written
        before a type promotion)."""
        present = index >= 0
        safe = np.where(present, index, 0)
        start = self.value_offsets[safe] if len(self.value_offsets) > 1 else np.zeros(len(index), np.int64)
        length = (
            np.where(present, self.value_offsets[safe + 1] - start, 0)
            if len(self.value_offsets) > 1
            else start
        )
        return decode_bounds(self.blob, present, start, length, type_, arrow_type)


def _binary_array(blob: bytes, offsets: np.ndarray, type_: pa.DataType) -> pa.Array:
    return pa.Array.from_buffers(
        type_, len(offsets) - 1, [None, pa.py_buffer(offsets.astype(np.int32).tobytes()), pa.py_buffer(blob)]
    )


# ---- bounds decoded to the column's type ------------------------------------------------------

_FIXED: dict[type, tuple[str, int]] = {
    IntegerType: ("<i4", 4),
    DateType: ("<i4", 4),
    FloatType: ("<f4", 4),
    DoubleType: ("<f8", 8),
    TimeType: ("<i8", 8),
    TimestampType: ("<i8", 8),
    TimestamptzType: ("<i8", 8),
    TimestampNanoType: ("<i8", 8),
    TimestamptzNanoType: ("<i8", 8),
    LongType: ("<i8", 8),
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


def decode_bounds(
    data: bytes,
    present: np.ndarray,
    start: np.ndarray,
    length: np.ndarray,
    type_: IcebergType,
    arrow_type: pa.DataType,
) -> pa.Array:
    """Serialized values (``data[start:start + length]`` where ``present``) decoded to
    ``type_``, as an array of ``arrow_type``."""
    n = len(present)
    blob = np.frombuffer(data, dtype=np.uint8)
    fixed = _FIXED.get(type(type_))
    if fixed is not None:
        dtype, width = fixed
        ok = present & (length == width)
        if int(ok.sum()) == int(present.sum()):
            gathered, _ = _gather(blob, np.where(ok, start, 0), np.where(ok, width, 0))
            numbers = np.zeros(n, dtype=dtype)
            numbers[ok] = gathered.view(dtype)
            plain = pa.array(numbers, mask=~ok)
            return plain if plain.type == arrow_type else plain.cast(arrow_type)
    elif arrow_type in (pa.string(), pa.binary()):
        gathered, offsets = _gather(blob, start, np.where(present, length, 0))
        validity = None if present.all() else pa.array(present).buffers()[1]
        array = pa.Array.from_buffers(
            arrow_type,
            n,
            [validity, pa.py_buffer(offsets.astype(np.int32).tobytes()), pa.py_buffer(gathered.tobytes())],
            null_count=int(n - present.sum()),
        )
        if not isinstance(type_, StringType):
            return array
        try:
            array.validate(full=True)
            return array
        except pa.ArrowInvalid:
            pass  # not UTF-8: decoded value by value below
    values: list[Any] = []
    for ok, a, size in zip(present.tolist(), start.tolist(), length.tolist()):
        values.append(_decode(type_, data[a : a + size]) if ok else None)
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
