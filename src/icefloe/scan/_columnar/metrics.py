"""Metrics maps (column sizes, value / null / NaN counts, bounds) as columns: a layout code per
entry, offsets, and the values (counts in an int64 array, bounds in one ``bytes``)."""

from __future__ import annotations

import itertools
import struct
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

# ---- metrics maps -----------------------------------------------------------------------------


class MapColumn:
    """What every metrics column has: per entry a layout code (-1: no map) into the distinct
    tuples of field ids, and the start of the entry's values (``starts``, n + 1 of them).
    ``uniform`` is the width when every entry has the same (single) layout."""

    __slots__ = ("codes", "layouts", "starts", "uniform")

    def _set_layout(self, lengths: list[int], keys: list[Any]) -> None:
        """``lengths``: per entry the number of pairs, -1 for no map; ``keys``: all keys."""
        n = len(lengths)
        starts = np.zeros(n + 1, dtype=np.int64)
        if n:
            np.cumsum(np.maximum(np.array(lengths, dtype=np.int64), 0), out=starts[1:])
        self.starts = starts
        self.uniform: int | None = None
        width = lengths[0] if n else 0
        if width > 0 and lengths.count(width) == n:
            grid = np.array(keys, dtype=np.int64).reshape(n, width)
            if (grid == grid[0]).all():
                self.codes = np.zeros(n, dtype=np.int32)
                self.layouts: list[tuple[int, ...]] = [tuple(grid[0].tolist())]
                self.uniform = width
                return
        codes: list[int] = []
        index: dict[tuple[int, ...], int] = {}
        layouts: list[tuple[int, ...]] = []
        start_list = starts.tolist()
        for i, length in enumerate(lengths):
            if length < 0:
                codes.append(-1)
                continue
            entry_keys = tuple(keys[start_list[i] : start_list[i + 1]])
            code = index.get(entry_keys)
            if code is None:
                code = index[entry_keys] = len(layouts)
                layouts.append(entry_keys)
            codes.append(code)
        self.codes = np.array(codes, dtype=np.int32)
        self.layouts = layouts

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
        n = len(self.codes)
        if self.uniform is not None:  # one layout for every entry (the usual case)
            position = self.position_in(self.layouts[0], field_id)
            if position < 0:
                return np.zeros(n, dtype=bool), np.zeros(n, dtype=np.int64)
            return np.ones(n, dtype=bool), self.starts[:-1] + position
        by_layout = [self.position_in(keys, field_id) for keys in self.layouts]
        pos = np.array([*by_layout, -1])[self.codes]  # code -1 picks the trailing -1
        present = pos >= 0
        return present, self.starts[:-1] + np.where(present, pos, 0)

    def _maps(self, indices: Sequence[int], values: Sequence[Any]) -> list[dict[int, Any] | None]:
        """The dicts of ``indices`` from the flat ``values`` (one per key, in entry order)."""
        width = self.uniform
        if width is not None:
            keys = self.layouts[0]
            if len(indices) == len(self.codes):  # every entry: no selection to make
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
        return self.codes.nbytes + self.starts.nbytes + sum(64 + 32 * len(k) for k in self.layouts)

    def entry(self, i: int) -> dict[int, Any] | None:
        """The dict of entry ``i`` alone (None: the entry has no map)."""
        code = int(self.codes[i])
        if code < 0:
            return None
        start, end = int(self.starts[i]), int(self.starts[i + 1])
        return dict(zip(self.layouts[code], self._values(start, end)))

    def _values(self, start: int, end: int) -> list[Any]:
        raise NotImplementedError

    def lazy_maps(self, indices: Sequence[int]) -> list[LazyMetrics | None]:
        """A lazily decoded map per entry in ``indices`` (None for an entry without one)."""
        if self.uniform is not None:
            return [LazyMetrics(self, i) for i in indices]
        codes = self.codes.tolist()
        return [None if codes[i] < 0 else LazyMetrics(self, i) for i in indices]


class LazyMetrics(Mapping[int, Any]):
    """One file's metrics map (field id -> count or bound), decoded from its manifest's
    columns on first use.

    Planning hands out a ``DataFile`` per kept entry; building its six metrics dicts eagerly
    was most of the cost of planning many files, and most callers never look at them. This
    mapping keeps a reference to the column and the entry; it pickles (and compares) as the
    plain dict it stands for."""

    __slots__ = ("_column", "_dict", "_index")

    def __init__(self, column: MapColumn, index: int):
        self._column = column
        self._index = index
        self._dict: dict[int, Any] | None = None

    def _load(self) -> dict[int, Any]:
        found = self._dict
        if found is None:
            found = self._dict = self._column.entry(self._index) or {}
        return found

    def __getitem__(self, key: int) -> Any:
        return self._load()[key]

    def __iter__(self) -> Iterator[int]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())

    def __contains__(self, key: object) -> bool:
        return key in self._load()

    def get(self, key: int, default: Any = None) -> Any:
        return self._load().get(key, default)

    def copy(self) -> dict[int, Any]:
        return dict(self._load())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyMetrics):
            other = other._load()
        return self._load() == other

    __hash__ = None  # type: ignore[assignment]  # a mutable-mapping stand-in: unhashable like dict

    def __repr__(self) -> str:
        return repr(self._load())

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (self._load(),))


class CountsColumn(MapColumn):
    """An int-valued metrics map (column sizes, value / null / NaN counts) of every entry."""

    __slots__ = ("values",)

    def __init__(self, lengths: list[int], keys: list[Any], values: list[Any]):
        self._set_layout(lengths, keys)
        try:
            self.values: np.ndarray = np.array(values, dtype=np.int64)
        except (TypeError, OverflowError):  # nulls or huge values in a malformed file: keep them
            self.values = np.array(values, dtype=object)

    def _values(self, start: int, end: int) -> list[Any]:
        return self.values[start:end].tolist()  # type: ignore[no-any-return]

    def get(self, field_id: int) -> tuple[np.ndarray, np.ndarray]:
        """(present, value) of ``field_id`` per entry; the value is 0 where not present."""
        present, index = self.positions(field_id)
        if not len(self.values):
            return present, np.zeros(len(present), dtype=np.int64)
        values = self.values[index.clip(0, len(self.values) - 1)]
        if values.dtype == object:  # a malformed file: only ints count as known
            known = present & np.array([isinstance(v, int) for v in values], dtype=bool)
            return known, np.array([v if isinstance(v, int) else 0 for v in values], dtype=np.int64)
        return present, np.where(present, values, 0)

    def maps(self, indices: Sequence[int], values: list[Any] | None = None) -> list[dict[int, Any] | None]:
        """The dict of each entry in ``indices`` (None for an entry without the map).
        ``values``: the flat values as a list, when the caller has it already."""
        return self._maps(indices, self.values.tolist() if values is None else values)

    def nbytes(self) -> int:
        return self._nbytes() + self.values.nbytes


class BoundsColumn(MapColumn):
    """A bytes-valued metrics map (lower / upper bounds) of every entry: the values
    concatenated in ``blob``, value ``j`` at ``blob[offsets[j]:offsets[j + 1]]``."""

    __slots__ = ("blob", "offsets")

    def __init__(self, lengths: list[int], keys: list[Any], values: list[Any]):
        self._set_layout(lengths, keys)
        try:
            self.blob: bytes = b"".join(values)
        except TypeError:  # a null bound in a malformed file: stored empty (undecodable)
            values = [b"" if v is None else v for v in values]
            self.blob = b"".join(values)
        self.offsets: np.ndarray = np.zeros(len(values) + 1, dtype=np.int64)
        if values:
            np.cumsum(np.fromiter(map(len, values), dtype=np.int64, count=len(values)), out=self.offsets[1:])

    def fixed(self, field_id: int, dtype: str, width: int) -> np.ndarray | None:
        """The bounds of ``field_id`` as an array of ``dtype``, when every entry has the same
        layout, holds the field and every bound is ``width`` bytes (a manifest of number-like
        columns): a view of the blob, no copy. None otherwise."""
        n = len(self.codes)
        if self.uniform is None or not n or len(self.blob) != width * (len(self.offsets) - 1):
            return None
        position = self.position_in(self.layouts[0], field_id)
        if position < 0:
            return None
        return np.frombuffer(self.blob, dtype=dtype).reshape(n, self.uniform)[:, position]

    def raw(self, field_id: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(present, start, length) of the serialized bound of ``field_id`` per entry."""
        present, index = self.positions(field_id)
        if len(self.offsets) < 2:
            zeros = np.zeros(len(present), dtype=np.int64)
            return present, zeros, zeros
        index = index.clip(0, len(self.offsets) - 2)
        start = self.offsets[index]
        return present, start, np.where(present, self.offsets[index + 1] - start, 0)

    def maps(
        self, indices: Sequence[int], values: Sequence[Any] | None = None
    ) -> list[dict[int, Any] | None]:
        """The dict of each entry in ``indices`` (None for an entry without the map).
        ``values``: the flat values as a list of bytes, when the caller has it already."""
        if values is None:
            blob = self.blob
            width = self.uniform
            if width is not None and len(indices) < len(self.codes):
                # Slice only the selected entries' bounds out of the blob.
                selected = np.asarray(indices, dtype=np.int64)
                value_index = (selected[:, None] * width + np.arange(width)).ravel()
                starts = self.offsets[value_index].tolist()
                ends = self.offsets[value_index + 1].tolist()
                picked = [blob[a:b] for a, b in zip(starts, ends)]
                keys = self.layouts[0]
                return [dict(zip(keys, row)) for row in zip(*[iter(picked)] * width)]
            values = self._all_values()
        return self._maps(indices, values)

    def _values(self, start: int, end: int) -> list[Any]:
        offsets = self.offsets[start : end + 1].tolist()
        blob = self.blob
        return [blob[a:b] for a, b in itertools.pairwise(offsets)]

    def _all_values(self) -> list[bytes] | tuple[bytes, ...]:
        """Every bound as its own bytes object, in order."""
        count = len(self.offsets) - 1
        if count <= 0:
            return []
        if len(self.blob) % count == 0:
            width = len(self.blob) // count
            if width and (np.diff(self.offsets) == width).all():
                # All the same width (ints, longs, dates, timestamps, doubles): one C call.
                return struct.unpack(f"{width}s" * count, self.blob)
        blob = self.blob
        return [blob[a:b] for a, b in itertools.pairwise(self.offsets.tolist())]

    def nbytes(self) -> int:
        return self._nbytes() + len(self.blob) + self.offsets.nbytes
