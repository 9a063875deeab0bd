"""Metrics maps (column sizes, value / null / NaN counts, bounds) as columns: a layout code per
entry, offsets, and the values (counts in an integer array, bounds in one ``bytes``).

Kept compact, since a process-wide cache holds them for every decoded entry and planned files
decode their maps from them: when every entry has the same layout (the usual case) no code or
offset is stored per entry; counts are stored in the narrowest integer type that holds them;
bounds of one width (the usual case for number-like columns) store no offsets.
"""

from __future__ import annotations

import itertools
import struct
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

# ---- metrics maps -----------------------------------------------------------------------------


_NARROW = ((np.int16, -(2**15), 2**15 - 1), (np.int32, -(2**31), 2**31 - 1))


def _narrowest(values: np.ndarray) -> type[np.signedinteger[Any]] | None:
    """The smallest integer type holding every value (counts are mostly small), or None."""
    if not values.size:
        return None
    low, high = int(values.min()), int(values.max())
    for kind, smallest, largest in _NARROW:
        if smallest <= low and high <= largest:
            return kind
    return None


class MapColumn:
    """What every metrics column has: per entry a layout code (-1: no map) into the distinct
    tuples of field ids, and the start of the entry's values (``starts``, n + 1 of them).
    ``uniform`` is the width when every entry has the same (single) layout, 0 when every
    entry's map is empty; then neither codes nor starts are stored (they are computed when
    asked for)."""

    __slots__ = ("_codes", "_starts", "count", "layouts", "uniform")
    count: int
    uniform: int | None
    layouts: list[tuple[int, ...]]
    _codes: np.ndarray | None
    _starts: np.ndarray | None

    def _copy_layout(self, other: MapColumn) -> None:
        """Take the layout of ``other`` (the same lengths and keys: maps of one manifest
        usually hold the same columns)."""
        self.count = other.count
        self.uniform = other.uniform
        self.layouts = other.layouts
        self._codes = other._codes
        self._starts = other._starts

    def _slice_layout(self, other: MapColumn, start: int, end: int) -> tuple[int, int] | None:
        """Take the layout of entries ``start`` to ``end`` of ``other``; returns the range of
        their values, or None when the slice would not be laid out as the entries alone are
        (several layouts: decode them alone)."""
        if other.uniform is None and other.layouts:
            return None
        self.count = end - start
        self.uniform = other.uniform
        self.layouts = other.layouts
        if other.uniform is not None:
            self._codes = self._starts = None
            return start * other.uniform, end * other.uniform
        assert other._codes is not None and other._starts is not None  # no entry has the map
        self._codes = other._codes[start:end].copy()
        self._starts = np.zeros(end - start + 1, dtype=np.int64)
        return 0, 0

    def _set_layout(self, lengths: Sequence[int] | np.ndarray, keys: Sequence[Any] | np.ndarray) -> None:
        """``lengths``: per entry the number of pairs, -1 for no map; ``keys``: all keys."""
        n = len(lengths)
        self.count = n
        self.uniform = None
        self._codes = None
        self._starts = None
        length_array = np.asarray(lengths, dtype=np.int64)
        width = int(length_array[0]) if n else -1
        if width >= 0 and bool((length_array == width).all()):
            grid = np.asarray(keys).reshape(n, width)
            if not width or bool((grid == grid[0]).all()):
                self.layouts = [tuple(grid[0].tolist()) if width else ()]
                self.uniform = width
                return
        starts = np.zeros(n + 1, dtype=np.int64)
        if width == -1 and bool((length_array == -1).all()):  # no entry has the map
            self._starts = starts
            self._codes = np.full(n, -1, dtype=np.int32)
            self.layouts = []
            return
        if n:
            np.cumsum(np.maximum(length_array, 0), out=starts[1:])
        self._starts = starts
        key_list = keys.tolist() if isinstance(keys, np.ndarray) else keys
        codes: list[int] = []
        index: dict[tuple[int, ...], int] = {}
        layouts: list[tuple[int, ...]] = []
        start_list = starts.tolist()
        for i, length in enumerate(length_array.tolist()):
            if length < 0:
                codes.append(-1)
                continue
            entry_keys = tuple(key_list[start_list[i] : start_list[i + 1]])
            code = index.get(entry_keys)
            if code is None:
                code = index[entry_keys] = len(layouts)
                layouts.append(entry_keys)
            codes.append(code)
        self._codes = np.array(codes, dtype=np.int32)
        self.layouts = layouts

    @property
    def codes(self) -> np.ndarray:
        """The layout code of each entry (-1: the entry has no map)."""
        if self._codes is None:
            return np.zeros(self.count, dtype=np.int32)
        return self._codes

    @property
    def starts(self) -> np.ndarray:
        """Where each entry's values start (and, last, where they end)."""
        if self._starts is None:
            return np.arange(self.count + 1, dtype=np.int64) * (self.uniform or 0)
        return self._starts

    def position_in(self, keys: tuple[int, ...], field_id: int) -> int:
        """Where ``field_id`` is in a layout, -1 if absent. A field id repeated in one map
        counts at its last position, as a dict built from the pairs keeps it."""
        position = -1
        for k, key in enumerate(keys):
            if key == field_id:
                position = k
        return position

    def positions(self, field_id: int) -> tuple[np.ndarray, np.ndarray]:
        """(present, index of the value) of ``field_id`` per entry."""
        n = self.count
        if self.uniform is not None:  # one layout for every entry (the usual case)
            position = self.position_in(self.layouts[0], field_id)
            if position < 0:
                return np.zeros(n, dtype=bool), np.zeros(n, dtype=np.int64)
            return np.ones(n, dtype=bool), np.arange(n, dtype=np.int64) * self.uniform + position
        by_layout = [self.position_in(keys, field_id) for keys in self.layouts]
        pos = np.array([*by_layout, -1])[self.codes]  # code -1 picks the trailing -1
        present = pos >= 0
        return present, self.starts[:-1] + np.where(present, pos, 0)

    def _maps(self, indices: Sequence[int], values: Sequence[Any]) -> list[dict[int, Any] | None]:
        """The dicts of ``indices`` from the flat ``values`` (one per key, in entry order)."""
        width = self.uniform
        if width == 0:  # every entry has an empty map
            return [{} for _ in indices]
        if width is not None:
            keys = self.layouts[0]
            if len(indices) == self.count:  # every entry: no selection to make
                return [dict(zip(keys, row)) for row in zip(*[iter(values)] * width)]
            return [dict(zip(keys, values[i * width : i * width + width])) for i in indices]
        starts = self.starts.tolist()
        codes = self.codes.tolist()
        layouts = self.layouts
        return [
            None if codes[i] < 0 else dict(zip(layouts[codes[i]], values[starts[i] : starts[i + 1]]))
            for i in indices
        ]

    def _nbytes(self) -> int:
        stored = sum(a.nbytes for a in (self._codes, self._starts) if a is not None)
        return 64 + stored + sum(64 + 32 * len(k) for k in self.layouts)

    def has_map(self, i: int) -> bool:
        """Whether entry ``i`` has this map."""
        return self.uniform is not None or int(self.codes[i]) >= 0

    def entry(self, i: int) -> dict[int, Any] | None:
        """The dict of entry ``i`` alone (None: the entry has no map)."""
        width = self.uniform
        if width is not None:
            return dict(zip(self.layouts[0], self._values(i * width, i * width + width)))
        code = int(self.codes[i])
        if code < 0:
            return None
        starts = self.starts
        return dict(zip(self.layouts[code], self._values(int(starts[i]), int(starts[i + 1]))))

    def value(self, i: int, field_id: int) -> Any:
        """Entry ``i``'s value for ``field_id``, as ``entry(i).get(field_id)`` gives it, without
        building the entry's dict (None: the entry has no map, or no value for the field)."""
        width = self.uniform
        if width is not None:
            position = self.position_in(self.layouts[0], field_id)
            start = i * width
        else:
            code = int(self.codes[i])
            if code < 0:
                return None
            position = self.position_in(self.layouts[code], field_id)
            start = int(self.starts[i])
        if position < 0:
            return None
        return self._value(start + position)

    def entry_is_empty(self, i: int) -> bool:
        """Whether entry ``i``'s map holds no pair (or the entry has no map)."""
        width = self.uniform
        if width is not None:
            return width == 0
        code = int(self.codes[i])
        return code < 0 or not self.layouts[code]

    def _values(self, start: int, end: int) -> list[Any]:
        raise NotImplementedError

    def _value(self, j: int) -> Any:
        """Value ``j`` of the flat values, as ``_values`` gives it."""
        raise NotImplementedError


class CountsColumn(MapColumn):
    """An int-valued metrics map (column sizes, value / null / NaN counts) of every entry."""

    __slots__ = ("values",)

    def __init__(
        self,
        lengths: Sequence[int] | np.ndarray,
        keys: Sequence[Any] | np.ndarray,
        values: Sequence[Any] | np.ndarray,
        *,
        layout_of: MapColumn | None = None,
    ):
        """``layout_of``: a column known to have the same lengths and keys."""
        if layout_of is None:
            self._set_layout(lengths, keys)
        else:
            self._copy_layout(layout_of)
        if isinstance(values, np.ndarray):
            array = values.astype(np.int64, copy=False)
        else:
            try:
                array = np.array(values, dtype=np.int64)
            except (TypeError, OverflowError):  # nulls or huge values in a malformed file: keep them
                self.values: np.ndarray = np.array(values, dtype=object)
                return
        narrow = _narrowest(array)
        if narrow is not None:
            array = array.astype(narrow)  # a copy either way: never a view of decoder memory
        elif array.base is not None:
            array = array.copy()
        self.values = array

    def _values(self, start: int, end: int) -> list[Any]:
        return self.values[start:end].tolist()  # type: ignore[no-any-return]

    def _value(self, j: int) -> Any:
        value = self.values[j]
        return value.item() if isinstance(value, np.generic) else value  # object: as stored

    def rows(self, start: int, end: int) -> CountsColumn | None:
        """The column of entries ``start`` to ``end`` alone (None: see ``_slice_layout``)."""
        column = CountsColumn.__new__(CountsColumn)
        span = column._slice_layout(self, start, end)
        if span is None or self.values.dtype == object:
            return None
        values = self.values[span[0] : span[1]]
        narrow = _narrowest(values)
        column.values = values.astype(narrow) if narrow is not None else values.copy()
        return column

    def get(self, field_id: int) -> tuple[np.ndarray, np.ndarray]:
        """(present, value) of ``field_id`` per entry (int64); the value is 0 where not present."""
        present, index = self.positions(field_id)
        if not len(self.values):
            return present, np.zeros(len(present), dtype=np.int64)
        values = self.values[index.clip(0, len(self.values) - 1)]
        if values.dtype == object:  # a malformed file: only ints count as known
            known = present & np.array([isinstance(v, int) for v in values], dtype=bool)
            return known, np.array([v if isinstance(v, int) else 0 for v in values], dtype=np.int64)
        return present, np.where(present, values, 0).astype(np.int64, copy=False)

    def maps(self, indices: Sequence[int], values: list[Any] | None = None) -> list[dict[int, Any] | None]:
        """The dict of each entry in ``indices`` (None for an entry without the map).
        ``values``: the flat values as a list, when the caller has it already."""
        return self._maps(indices, self.values.tolist() if values is None else values)

    def nbytes(self) -> int:
        return self._nbytes() + self.values.nbytes


class BoundsColumn(MapColumn):
    """A bytes-valued metrics map (lower / upper bounds) of every entry: the values
    concatenated in ``blob``, value ``j`` at ``blob[offsets[j]:offsets[j + 1]]``. When every
    value has one width, no offsets are stored (``width``)."""

    __slots__ = ("_offsets", "blob", "size", "width")

    def __init__(
        self, lengths: Sequence[int] | np.ndarray, keys: Sequence[Any] | np.ndarray, values: Sequence[Any]
    ):
        self._set_layout(lengths, keys)
        try:
            blob = b"".join(values)
        except TypeError:  # a null bound in a malformed file: stored empty (undecodable)
            values = [b"" if v is None else v for v in values]
            blob = b"".join(values)
        offsets = np.zeros(len(values) + 1, dtype=np.int64)
        if values:
            np.cumsum(np.fromiter(map(len, values), dtype=np.int64, count=len(values)), out=offsets[1:])
        self._set_values(blob, offsets)

    @classmethod
    def from_blob(
        cls,
        lengths: np.ndarray,
        keys: np.ndarray,
        blob: bytes,
        offsets: np.ndarray,
        *,
        layout_of: MapColumn | None = None,
    ) -> BoundsColumn:
        """The column of values already concatenated: value ``j`` is
        ``blob[offsets[j]:offsets[j + 1]]`` (``offsets`` starts at 0). ``layout_of``: a column
        known to have the same lengths and keys."""
        column = cls.__new__(cls)
        if layout_of is None:
            column._set_layout(lengths, keys)
        else:
            column._copy_layout(layout_of)
        column._set_values(blob, offsets)
        return column

    def rows(self, start: int, end: int) -> BoundsColumn | None:
        """The column of entries ``start`` to ``end`` alone (None: see ``_slice_layout``)."""
        column = BoundsColumn.__new__(BoundsColumn)
        span = column._slice_layout(self, start, end)
        if span is None:
            return None
        first, last = span
        if self.width is not None:
            blob = self.blob[first * self.width : last * self.width]
            offsets = np.arange(last - first + 1, dtype=np.int64) * self.width
        else:
            offsets = self.offsets[first : last + 1]
            blob = self.blob[int(offsets[0]) : int(offsets[-1])]
            offsets = offsets - offsets[0]
        column._set_values(blob, offsets)
        return column

    def _set_values(self, blob: bytes, offsets: np.ndarray) -> None:
        self.blob: bytes = blob
        self.size = len(offsets) - 1
        self.width: int | None = None
        self._offsets: np.ndarray | None = None
        if self.size > 0 and len(blob) % self.size == 0:
            width = len(blob) // self.size
            if width and bool((np.diff(offsets) == width).all()):
                self.width = width
                return
        self._offsets = offsets.astype(np.int64, copy=True)

    @property
    def offsets(self) -> np.ndarray:
        if self._offsets is None:
            return np.arange(self.size + 1, dtype=np.int64) * (self.width or 0)
        return self._offsets

    def fixed(self, field_id: int, dtype: str, width: int) -> np.ndarray | None:
        """The bounds of ``field_id`` as an array of ``dtype``, when every entry has the same
        layout, holds the field and every bound is ``width`` bytes (a manifest of number-like
        columns): a view of the blob, no copy. None otherwise."""
        n = self.count
        if self.uniform is None or not n or self.width != width:
            return None
        position = self.position_in(self.layouts[0], field_id)
        if position < 0:
            return None
        return np.frombuffer(self.blob, dtype=dtype).reshape(n, self.uniform)[:, position]

    def raw(self, field_id: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(present, start, length) of the serialized bound of ``field_id`` per entry."""
        present, index = self.positions(field_id)
        if self.size < 1:
            zeros = np.zeros(len(present), dtype=np.int64)
            return present, zeros, zeros
        index = index.clip(0, self.size - 1)
        if self.width is not None:
            return present, index * self.width, np.where(present, self.width, 0)
        offsets = self.offsets
        start = offsets[index]
        return present, start, np.where(present, offsets[index + 1] - start, 0)

    def maps(
        self, indices: Sequence[int], values: Sequence[Any] | None = None
    ) -> list[dict[int, Any] | None]:
        """The dict of each entry in ``indices`` (None for an entry without the map).
        ``values``: the flat values as a list of bytes, when the caller has it already."""
        if values is None:
            blob = self.blob
            width = self.uniform
            if width and len(indices) < self.count:
                # Slice only the selected entries' bounds out of the blob.
                selected = np.asarray(indices, dtype=np.int64)
                value_index = (selected[:, None] * width + np.arange(width)).ravel()
                offsets = self.offsets
                starts = offsets[value_index].tolist()
                ends = offsets[value_index + 1].tolist()
                picked = [blob[a:b] for a, b in zip(starts, ends)]
                keys = self.layouts[0]
                return [dict(zip(keys, row)) for row in zip(*[iter(picked)] * width)]
            values = self._all_values()
        return self._maps(indices, values)

    def _values(self, start: int, end: int) -> list[Any]:
        blob = self.blob
        width = self.width
        if width is not None:
            return [blob[a : a + width] for a in range(start * width, end * width, width)]
        offsets = self.offsets[start : end + 1].tolist()
        return [blob[a:b] for a, b in itertools.pairwise(offsets)]

    def _value(self, j: int) -> bytes:
        width = self.width
        if width is not None:
            return self.blob[j * width : j * width + width]
        offsets = self.offsets
        return self.blob[int(offsets[j]) : int(offsets[j + 1])]

    def _all_values(self) -> list[bytes] | tuple[bytes, ...]:
        """Every bound as its own bytes object, in order."""
        if self.size <= 0:
            return []
        if self.width is not None:
            # All the same width (ints, longs, dates, timestamps, doubles): one C call.
            return struct.unpack(f"{self.width}s" * self.size, self.blob)
        blob = self.blob
        return [blob[a:b] for a, b in itertools.pairwise(self.offsets.tolist())]

    def nbytes(self) -> int:
        offsets = 0 if self._offsets is None else self._offsets.nbytes
        return self._nbytes() + len(self.blob) + offsets


# ---- one entry's metrics, without building its dicts ------------------------------------------


class EntryMap(Mapping[int, Any]):
    """Entry ``index`` of a metrics column as a read-only mapping; ``get`` reads one value
    straight from the column (what checking a file's metrics does), the rest builds the
    entry's dict."""

    __slots__ = ("_column", "_index")

    def __init__(self, column: MapColumn, index: int):
        self._column = column
        self._index = index

    def get(self, key: int, default: Any = None) -> Any:
        value = self._column.value(self._index, key)
        return default if value is None else value

    def _dict(self) -> dict[int, Any]:
        return self._column.entry(self._index) or {}

    def __getitem__(self, key: int) -> Any:
        return self._dict()[key]

    def __iter__(self) -> Iterator[int]:
        return iter(self._dict())

    def __len__(self) -> int:
        return len(self._dict())

    def __bool__(self) -> bool:  # without building the dict (``metrics or {}``)
        return not self._column.entry_is_empty(self._index)


class EntryMetrics:
    """The record count and metrics maps of entry ``index`` of a decoded manifest, as a
    metrics evaluator reads them from a file (``record_count``, ``value_counts`` ...
    ``upper_bounds``), without building the file or its dicts: checking the few files of
    small manifests one by one (planning's small-manifest path)."""

    __slots__ = (
        "lower_bounds",
        "nan_value_counts",
        "null_value_counts",
        "record_count",
        "upper_bounds",
        "value_counts",
    )

    def __init__(self, columns: Mapping[str, MapColumn], index: int, record_count: int):
        def view(name: str) -> EntryMap | None:
            column = columns[name]
            return EntryMap(column, index) if column.has_map(index) else None

        self.record_count = record_count
        self.value_counts = view("value_counts")
        self.null_value_counts = view("null_value_counts")
        self.nan_value_counts = view("nan_value_counts")
        self.lower_bounds = view("lower_bounds")
        self.upper_bounds = view("upper_bounds")
