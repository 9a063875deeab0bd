"""Manifests decoded into a compact columnar form: what planning filters, caches and turns
into ``DataFile`` / ``DeleteFile`` objects.

A ``DecodedManifest`` holds every entry of one manifest, with the manifest list's inheritance
applied exactly as ``read_manifest`` applies it (snapshot id, sequence numbers, v3 first row
ids), in arrays:

- scalars (status, record count, size, sequence numbers, ...) as numpy arrays;
- partition tuples dictionary-encoded: a code per entry into the distinct tuples (a manifest
  usually holds a handful of partitions, so partition predicates run once per distinct tuple);
- each metrics map as a layout code per entry (the tuple of field ids it has; usually one for
  the whole manifest), the offset of its values, and the values: counts in an int64 array,
  bounds concatenated in one ``bytes`` with offsets.

That is a fraction of the memory of the equivalent ``DataFile`` objects (each holds six
dicts), lets metrics filters read one column's bounds as a numpy array, and is cheap to build:
the columns are pulled out of fastavro's records with C-level iteration (``map``,
``itemgetter``, ``chain``), not a Python statement per value. Files are materialized only for
the entries a plan keeps.
"""

from __future__ import annotations

import dataclasses
import itertools
import struct
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter
from typing import Any

import numpy as np

from icefloe.errors import InvalidManifestError
from icefloe.manifests.reader import EntryLayout, MetricsMapLayout, gc_paused, manifest_records
from icefloe.spec.manifest import (
    ContentFile,
    DataFile,
    DeleteFile,
    FileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
)

__all__ = [
    "CHUNK",
    "BoundsColumn",
    "CountsColumn",
    "DecodedManifest",
    "HotValues",
    "ManifestBuilder",
    "decode_manifest",
]

_STATUSES = tuple(ManifestEntryStatus)
_CONTENTS = tuple(FileContent)
_FORMATS = {f.value: f for f in FileFormat}
_ADDED = int(ManifestEntryStatus.ADDED)
_DELETED = int(ManifestEntryStatus.DELETED)
_DATA = int(FileContent.DATA)
_NONE = -(2**63)  # the stand-in for null in int64 columns that keep a null mask
_MAP_NAMES = (
    "column_sizes",
    "value_counts",
    "null_value_counts",
    "nan_value_counts",
    "lower_bounds",
    "upper_bounds",
)
_EXTRA_NAMES = (
    "key_metadata",
    "split_offsets",
    "equality_ids",
    "sort_order_id",
    "first_row_id",
    "referenced_data_file",
    "content_offset",
    "content_size_in_bytes",
)


def _int64(values: list[Any]) -> np.ndarray:
    """An int64 array of Python ints; None becomes ``_NONE`` (callers keep a null mask)."""
    try:
        return np.array(values, dtype=np.int64)
    except (TypeError, OverflowError):
        return np.array([_NONE if v is None else v for v in values], dtype=np.int64)


def _inherited(
    values: list[Any], inherit: np.ndarray | None, manifest_seq: int | None
) -> tuple[np.ndarray, np.ndarray | None]:
    """A sequence number column and its null mask, nulls in ``inherit`` set to the manifest's."""
    if None not in values:
        return np.array(values, dtype=np.int64), None
    null = np.array([v is None for v in values], dtype=bool)
    array = _int64(values)
    if inherit is not None:
        taken = null & inherit
        array[taken] = manifest_seq
        null &= ~taken
    return array, (null if null.any() else None)


def _nulls(values: list[Any]) -> np.ndarray | None:
    if None not in values:
        return None
    return np.array([v is None for v in values], dtype=bool)


def _sparse(values: list[Any]) -> list[Any] | None:
    """The column, or None when every value is None (most optional fields, most of the time)."""
    return None if values.count(None) == len(values) else values


def _float_key(value: float) -> tuple[str, bytes]:
    """Partition values are equal when their bits are (spec): -0.0 is not 0.0, NaNs differ."""
    return ("\x00float", struct.pack(">d", value))


# ---- metrics maps -----------------------------------------------------------------------------


class _MapColumn:
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

    def __init__(self, column: _MapColumn, index: int):
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


class CountsColumn(_MapColumn):
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


class BoundsColumn(_MapColumn):
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


# ---- the decoded manifest ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class DecodedManifest:
    """Every entry of one manifest, inheritance applied (see the module docstring).

    Attributes:
        manifest: the manifest list row it was decoded for.
        count: the number of entries.
        status: ``ManifestEntryStatus`` values (int8).
        content: ``FileContent`` values (int8).
        snapshot_id / sequence_number / file_sequence_number: after inheritance (int64; null
            where the matching ``*_null`` mask is set; no mask: no nulls).
        record_count / file_size_in_bytes: int64.
        partition_codes: int32 codes into ``partitions`` (the distinct tuples, icefloe values).
        formats: int8 codes into ``format_values``.
        file_path: the paths.
        metrics: the six metrics maps, by ``ContentFile`` field name.
        extras: the optional fields (``key_metadata``, ``split_offsets``, ...), each a list per
            entry, or None when no entry has the field.
    """

    manifest: ManifestFile
    count: int
    status: np.ndarray
    content: np.ndarray
    snapshot_id: np.ndarray
    snapshot_null: np.ndarray | None
    sequence_number: np.ndarray
    sequence_null: np.ndarray | None
    file_sequence_number: np.ndarray
    file_sequence_null: np.ndarray | None
    record_count: np.ndarray
    file_size_in_bytes: np.ndarray
    partition_codes: np.ndarray
    partitions: list[tuple[Any, ...]]
    formats: np.ndarray
    format_values: list[FileFormat]
    file_path: list[str]
    metrics: dict[str, CountsColumn | BoundsColumn]
    extras: dict[str, list[Any] | None]

    @property
    def spec_id(self) -> int:
        return self.manifest.partition_spec_id

    def __reduce__(self) -> tuple[Any, ...]:
        # Positional reconstruction: the dataclass default walks fields() on every unpickle,
        # and worker processes send one of these per manifest.
        return (DecodedManifest, tuple(getattr(self, f) for f in _DECODED_FIELDS))

    def live(self) -> np.ndarray:
        """Whether each entry is live (not DELETED)."""
        live: np.ndarray = self.status != _DELETED
        return live

    def counts(self, name: str) -> CountsColumn:
        column = self.metrics[name]
        assert isinstance(column, CountsColumn)
        return column

    def bounds(self, name: str) -> BoundsColumn:
        column = self.metrics[name]
        assert isinstance(column, BoundsColumn)
        return column

    def nbytes(self) -> int:
        """An estimate of the memory this object holds (for the cache's budget)."""
        arrays = (
            self.status,
            self.content,
            self.snapshot_id,
            self.sequence_number,
            self.file_sequence_number,
            self.record_count,
            self.file_size_in_bytes,
            self.partition_codes,
            self.formats,
        )
        total = 1024 + sum(a.nbytes + 112 for a in arrays)
        total += sum(m.nbytes() for m in self.metrics.values())
        total += sum(map(sys.getsizeof, self.file_path)) + 8 * len(self.file_path)
        total += sum(64 + 40 * len(p) for p in self.partitions)
        for values in self.extras.values():
            if values is not None:
                # A list slot per entry, and about a small tuple / string / int per value.
                total += 8 * len(values) + 64 * (len(values) - values.count(None))
        return total

    # ---- materialization ---------------------------------------------------------------------

    def sequence_numbers(self, indices: Sequence[int]) -> list[int | None]:
        """The data sequence number of each entry in ``indices`` (after inheritance)."""
        values = self.sequence_number.tolist()
        nulls = self.sequence_null
        if nulls is None:
            return [values[i] for i in indices]
        null = nulls.tolist()
        return [None if null[i] else values[i] for i in indices]

    def files(
        self,
        indices: Sequence[int],
        hot: HotValues | None = None,
        *,
        stats: bool | frozenset[int] = True,
    ) -> list[ContentFile]:
        """The ``DataFile`` / ``DeleteFile`` of each entry in ``indices``, equal field by field
        to what ``read_manifest`` gives for it. ``hot``: the builder's flat value lists, while
        the plan that decoded this manifest has them (saves converting the arrays back when
        ``stats`` selects columns; with all stats, the maps are ``LazyMetrics``).

        ``stats``: which column metrics the files keep: all (True), none (False: the six
        metrics maps are None, as Java's ``copyWithoutStats``; building a file then costs a
        fraction), or those of the given field ids (Java's ``copyWithStats``)."""
        if stats is False:
            none: list[Any] = [None] * len(indices)
            column_sizes = value_counts = null_counts = nan_counts = lower = upper = none
        elif stats is True:
            # Decoded on first use: most planned files' metrics are never looked at.
            metrics = self.metrics
            column_sizes, value_counts, null_counts, nan_counts, lower, upper = (
                metrics[name].lazy_maps(indices) for name in _MAP_NAMES
            )
        else:
            metrics = self.metrics
            column_sizes, value_counts, null_counts, nan_counts, lower, upper = (
                _only(metrics[name].maps(indices, None if hot is None else hot[name]), stats)
                for name in _MAP_NAMES
            )
        paths = self.file_path
        records = self.record_count.tolist()
        sizes = self.file_size_in_bytes.tolist()
        contents = self.content.tolist()
        formats = self.formats.tolist()
        format_values = self.format_values
        parts = self.partition_codes.tolist()
        partitions = self.partitions
        spec_id = self.manifest.partition_spec_id
        extras = [self.extras[name] for name in _EXTRA_NAMES]
        plain = all(e is None for e in extras)
        rows: list[tuple[Any, ...]] = []
        if not plain:
            # The optional fields of each entry, as a tuple (zip does the work in C).
            rows = list(zip(*(itertools.repeat(None, self.count) if e is None else e for e in extras)))
        result: list[ContentFile] = []
        append = result.append
        for k, i in enumerate(indices):
            content = contents[i]
            cls = DataFile if content == _DATA else DeleteFile
            head = (
                paths[i],
                format_values[formats[i]],
                records[i],
                sizes[i],
                partitions[parts[i]],
                _CONTENTS[content],
                spec_id,
                column_sizes[k],
                value_counts[k],
                null_counts[k],
                nan_counts[k],
                lower[k],
                upper[k],
            )
            if plain:
                append(cls(*head))
            else:
                append(cls(*head, *rows[i]))
        return result

    def entries(self, indices: Sequence[int], files: Sequence[ContentFile]) -> list[ManifestEntry]:
        """The ``ManifestEntry`` of each entry in ``indices`` (``files`` are their files)."""
        statuses = self.status.tolist()
        snapshots = self.snapshot_id.tolist()
        snapshot_null = None if self.snapshot_null is None else self.snapshot_null.tolist()
        seqs = self.sequence_numbers(indices)
        file_seqs = self.file_sequence_number.tolist()
        file_seq_null = None if self.file_sequence_null is None else self.file_sequence_null.tolist()
        return [
            ManifestEntry(
                _STATUSES[statuses[i]],
                None if snapshot_null is not None and snapshot_null[i] else snapshots[i],
                file,
                seqs[k],
                None if file_seq_null is not None and file_seq_null[i] else file_seqs[i],
            )
            for k, (i, file) in enumerate(zip(indices, files))
        ]


def _only(maps: list[dict[int, Any] | None], stats: bool | frozenset[int]) -> list[dict[int, Any] | None]:
    """The maps, narrowed to the field ids of ``stats`` unless it is a bool (True: all)."""
    if isinstance(stats, bool):
        return maps
    return [None if m is None else {k: v for k, v in m.items() if k in stats} for m in maps]


_DECODED_FIELDS = tuple(f.name for f in dataclasses.fields(DecodedManifest))


# ---- building -----------------------------------------------------------------------------------

#: The flat value lists of each metrics map, by name, as the builder extracted them.
HotValues = dict[str, list[Any]]

#: Records decoded before their columns are pulled out: few enough to stay in the CPU cache
#: (decoding a whole block first and then extracting is a quarter slower; chunks of 16 were
#: the fastest, measured on manifests of 13 columns with full metrics).
CHUNK = 16


def _getter(name: str, present: bool) -> Any:
    """A function reading field ``name`` of a stored record; None for a field the file lacks
    (its value is None in every record)."""
    return itemgetter(name) if present else None


class _MapParts:
    """The columns of one metrics map while a manifest is being decoded."""

    __slots__ = ("get", "key", "keys", "lengths", "string_keys", "value", "values")

    def __init__(self, layout: MetricsMapLayout, present: bool):
        self.get = _getter(layout.name, present)
        self.string_keys = layout.key is None or layout.value is None  # an Avro map
        self.key = itemgetter(layout.key or "key")
        self.value = itemgetter(layout.value or "value")
        self.lengths: list[int] = []
        self.keys: list[Any] = []
        self.values: list[Any] = []

    def add(self, files: list[dict[str, Any]]) -> None:
        if self.get is None:
            self.lengths.extend(itertools.repeat(-1, len(files)))
            return
        raws = list(map(self.get, files))
        if None in raws:
            self.lengths.extend([-1 if r is None else len(r) for r in raws])
        else:
            self.lengths.extend(map(len, raws))
        if self.string_keys:
            for m in filter(None, raws):
                self.keys.extend(map(int, m))
                self.values.extend(m.values())
            return
        flat = list(chain.from_iterable(filter(None, raws)))
        self.keys.extend(map(self.key, flat))
        self.values.extend(map(self.value, flat))


class ManifestBuilder:
    """Turns the stored records of one manifest into a ``DecodedManifest``: ``add`` the
    records (in file order, any chunking), then ``finish()``.

    The columns are pulled out of each chunk of records as it comes, so the records can be
    dropped right away (decoding keeps a few in the CPU cache instead of all of them in memory).

    Raises (from ``add`` and ``finish``):
        InvalidManifestError: an entry is invalid (a missing required value, an unknown status,
            content or file format), naming the manifest.
    """

    def __init__(self, layout: EntryLayout, manifest: ManifestFile):
        self.layout = layout
        self.manifest = manifest
        self.location = manifest.manifest_path
        self._columns: dict[str, list[Any]] = {}
        self._getters: dict[str, Any] = {}
        self._maps: dict[str, _MapParts] = {}
        self._partition_names = layout.partition_names
        self._single = len(layout.partition_names) == 1 and layout.partition_converters[0] is None
        self._started = False

    def _start(self, first: dict[str, Any]) -> None:
        layout = self.layout
        data_file = first[layout.data_file]
        getters = {
            "status": itemgetter(layout.status),
            "snapshot_id": _getter(layout.snapshot_id, layout.snapshot_id in first),
            "sequence_number": _getter(layout.sequence_number, layout.sequence_number in first),
            "file_sequence_number": _getter(
                layout.file_sequence_number, layout.file_sequence_number in first
            ),
        }
        file_getters = {
            "content": _getter(layout.content, layout.content in data_file),
            "file_path": itemgetter(layout.file_path),
            "file_format": itemgetter(layout.file_format),
            "partition": itemgetter(layout.partition),
            "record_count": itemgetter(layout.record_count),
            "file_size_in_bytes": itemgetter(layout.file_size_in_bytes),
            **{
                name: _getter(getattr(layout, name), getattr(layout, name) in data_file)
                for name in _EXTRA_NAMES
            },
        }
        self._getters = getters
        self._file_getters = file_getters
        self._columns = {name: [] for name in [*getters, *file_getters]}
        self._maps = {
            name: _MapParts(getattr(layout, name), getattr(layout, name).name in data_file)
            for name in _MAP_NAMES
        }
        self._started = True

    def add(self, records: list[dict[str, Any]]) -> None:
        try:
            for start in range(0, len(records), CHUNK):
                self._add(records[start : start + CHUNK])
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            raise InvalidManifestError(
                f"{self.location} has an invalid entry ({type(exc).__name__}: {exc})", location=self.location
            ) from exc

    def _add(self, records: list[dict[str, Any]]) -> None:
        if not records:
            return
        if not self._started:
            self._start(records[0])
        columns = self._columns
        for name, get in self._getters.items():
            columns[name].extend(itertools.repeat(None, len(records)) if get is None else map(get, records))
        files = list(map(itemgetter(self.layout.data_file), records))
        for name, get in self._file_getters.items():
            columns[name].extend(itertools.repeat(None, len(files)) if get is None else map(get, files))
        for parts in self._maps.values():
            parts.add(files)

    def read(self, blocks: Iterable[list[dict[str, Any]]]) -> None:
        """``add`` every record of ``blocks``, decoding them (when the blocks are decoded
        lazily) with the garbage collector paused: none of the records is in a cycle."""
        with gc_paused():
            for block in blocks:
                self.add(block)

    def finish(self) -> tuple[DecodedManifest, HotValues]:
        """The decoded manifest, and the flat value lists of its metrics maps."""
        try:
            return self._finish()
        except (KeyError, IndexError, TypeError, ValueError, OverflowError, AttributeError) as exc:
            raise InvalidManifestError(
                f"{self.location} has an invalid entry ({type(exc).__name__}: {exc})", location=self.location
            ) from exc

    def _finish(self) -> tuple[DecodedManifest, HotValues]:
        manifest = self.manifest
        if not self._started:
            return _empty(manifest), {name: [] for name in _MAP_NAMES}
        columns = self._columns
        status_values = columns["status"]
        count = len(status_values)
        status = np.array(status_values, dtype=np.int64)
        if count and (status.min() < 0 or status.max() > _DELETED):
            raise ValueError(f"unknown entry status {int(status[(status < 0) | (status > _DELETED)][0])}")
        contents = columns["content"]
        if None in contents:
            contents = [0 if c is None else c for c in contents]
        content = np.array(contents, dtype=np.int64)
        if count and (content.min() < 0 or content.max() >= len(_CONTENTS)):
            raise ValueError(f"unknown file content {int(content[(content < 0) | (content >= 3)][0])}")
        paths = columns["file_path"]
        if set(map(type, paths)) - {str}:
            raise TypeError(f"a file_path is not a string: {next(p for p in paths if type(p) is not str)!r}")
        format_index: dict[Any, int] = {}
        format_values: list[FileFormat] = []
        format_codes = []
        for text in columns["file_format"]:
            code = format_index.get(text)
            if code is None:
                value = _FORMATS.get(text) or FileFormat.parse(text)
                code = format_index[text] = len(format_values)
                format_values.append(value)
            format_codes.append(code)
        record_counts = columns["record_count"]
        sizes = columns["file_size_in_bytes"]
        record_array = np.array(record_counts, dtype=np.int64)
        size_array = np.array(sizes, dtype=np.int64)
        partition_codes, partitions = self._partitions(columns["partition"])

        # Inheritance (spec: "Sequence Number Inheritance"), as read_manifest applies it.
        snapshot_ids = columns["snapshot_id"]
        inherited = manifest.added_snapshot_id
        if inherited is not None and None in snapshot_ids:
            snapshot_ids = [inherited if s is None else s for s in snapshot_ids]
        manifest_seq = manifest.sequence_number
        inherit = None  # which null sequence numbers take the manifest's
        if manifest_seq is not None and manifest_seq >= 0:
            # v1 (sequence number 0): every entry; otherwise the ADDED ones.
            inherit = np.ones(count, dtype=bool) if manifest_seq == 0 else status == _ADDED
        seq_array, seq_null = _inherited(columns["sequence_number"], inherit, manifest_seq)
        file_seq_array, file_seq_null = _inherited(columns["file_sequence_number"], inherit, manifest_seq)
        extras = {name: _sparse(columns[name]) for name in _EXTRA_NAMES}
        next_row_id = manifest.first_row_id if manifest.content == ManifestContent.DATA else None
        if next_row_id is not None:
            first_row_ids = extras["first_row_id"] or [None] * count
            assigned = list(first_row_ids)
            for i, (value, st, ct) in enumerate(zip(first_row_ids, status_values, contents)):
                if value is None and ct == _DATA and st != _DELETED:
                    assigned[i] = next_row_id
                    next_row_id += record_counts[i]
            extras["first_row_id"] = _sparse(assigned)
        for name in ("split_offsets", "equality_ids"):
            values = extras[name]
            if values is not None:
                extras[name] = [None if v is None else tuple(v) for v in values]

        metrics: dict[str, CountsColumn | BoundsColumn] = {}
        hot: HotValues = {}
        for name, parts in self._maps.items():
            kind = BoundsColumn if name.endswith("bounds") else CountsColumn
            metrics[name] = kind(parts.lengths, parts.keys, parts.values)
            hot[name] = parts.values
        decoded = DecodedManifest(
            manifest=manifest,
            count=count,
            status=status.astype(np.int8),
            content=content.astype(np.int8),
            snapshot_id=_int64(snapshot_ids),
            snapshot_null=_nulls(snapshot_ids),
            sequence_number=seq_array,
            sequence_null=seq_null,
            file_sequence_number=file_seq_array,
            file_sequence_null=file_seq_null,
            record_count=record_array,
            file_size_in_bytes=size_array,
            partition_codes=partition_codes,
            partitions=partitions,
            formats=np.array(format_codes, dtype=np.int8),
            format_values=format_values,
            file_path=paths,
            metrics=metrics,
            extras=extras,
        )
        return decoded, hot

    def _partitions(self, stored: list[Any]) -> tuple[np.ndarray, list[tuple[Any, ...]]]:
        """Dictionary-encoded partition tuples (a float is keyed by its bits)."""
        layout = self.layout
        names = self._partition_names
        if self._single:
            name = names[0]
            values = [p.get(name) for p in stored]
            kinds = set(map(type, values))
            if kinds == {int} and len(values) > 1:
                # Plain ints (dates, hours, buckets, identity ints): encoded by numpy.
                distinct, inverse = np.unique(np.array(values, dtype=np.int64), return_inverse=True)
                return inverse.astype(np.int32).reshape(-1), [(v,) for v in distinct.tolist()]
            if float in kinds:
                keys: list[Any] = [_float_key(v) if v.__class__ is float else v for v in values]
            else:
                keys = values
            index: dict[Any, int] = {}
            codes = [index.setdefault(k, len(index)) for k in keys]
            partitions: list[tuple[Any, ...]] = [()] * len(index)
            for code, value in zip(codes, values):
                partitions[code] = (value,)
            return np.array(codes, dtype=np.int32), partitions
        tuples = list(map(layout.partition_of, stored))
        if any(v.__class__ is float for t in set(tuples) for v in t):
            keys = [tuple(_float_key(v) if v.__class__ is float else v for v in t) for t in tuples]
        else:
            keys = tuples
        index = {}
        codes = [index.setdefault(k, len(index)) for k in keys]
        partitions = [()] * len(index)
        for code, value in zip(codes, tuples):
            partitions[code] = value
        return np.array(codes, dtype=np.int32), partitions


def _empty(manifest: ManifestFile) -> DecodedManifest:
    empty = CountsColumn([], [], [])
    empty_bounds = BoundsColumn([], [], [])
    i64 = np.zeros(0, dtype=np.int64)
    return DecodedManifest(
        manifest=manifest,
        count=0,
        status=np.zeros(0, dtype=np.int8),
        content=np.zeros(0, dtype=np.int8),
        snapshot_id=i64,
        snapshot_null=None,
        sequence_number=i64,
        sequence_null=None,
        file_sequence_number=i64,
        file_sequence_null=None,
        record_count=i64,
        file_size_in_bytes=i64,
        partition_codes=np.zeros(0, dtype=np.int32),
        partitions=[],
        formats=np.zeros(0, dtype=np.int8),
        format_values=[],
        file_path=[],
        metrics={name: (empty_bounds if name.endswith("bounds") else empty) for name in _MAP_NAMES},
        extras={name: None for name in _EXTRA_NAMES},
    )


def decode_manifest(data: bytes, manifest: ManifestFile) -> tuple[DecodedManifest, HotValues]:
    """Decode the manifest file ``data`` (the file of ``manifest``, its list row).

    Raises:
        InvalidManifestError: the file is not a valid manifest, naming it.
        MissingDependencyError: its codec needs a package that is not installed.
    """
    layout, blocks = manifest_records(data, manifest.manifest_path, chunk=CHUNK)
    builder = ManifestBuilder(layout, manifest)
    builder.read(blocks)
    return builder.finish()
