"""Decoding a manifest into a ``DecodedManifest``: natively (``native``), or from fastavro's
records in chunks (``ManifestBuilder``)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from itertools import chain
from operator import itemgetter
from typing import Any

import numpy as np
import pyarrow as pa

from icefloe.errors import InvalidManifestError
from icefloe.manifests import _native as native
from icefloe.manifests._avro_file import read_blocks, read_header, schema_of
from icefloe.manifests.reader import EntryLayout, MetricsMapLayout, entry_layout, gc_paused
from icefloe.scan._columnar._shared import (
    ADDED,
    CONTENTS,
    DATA,
    DELETED,
    EXTRA_NAMES,
    FORMATS,
    MAP_NAMES,
    HotValues,
    float_key,
    inherited_sequence_numbers,
    int64_column,
    null_mask,
    sparse_column,
)
from icefloe.scan._columnar.manifest import DecodedManifest, empty_manifest
from icefloe.scan._columnar.metrics import BoundsColumn, CountsColumn
from icefloe.scan._columnar.native import Unsupported, decoded_from_arrow, decoded_group
from icefloe.scan._columnar.paths import PathColumn
from icefloe.spec.manifest import (
    FileFormat,
    ManifestContent,
    ManifestFile,
)

# ---- building -----------------------------------------------------------------------------------

#: The flat value lists of each metrics map, by name, as the builder extracted them.

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
                for name in EXTRA_NAMES
            },
        }
        self._getters = getters
        self._file_getters = file_getters
        self._columns = {name: [] for name in [*getters, *file_getters]}
        self._maps = {
            name: _MapParts(getattr(layout, name), getattr(layout, name).name in data_file)
            for name in MAP_NAMES
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
            return empty_manifest(manifest), {name: [] for name in MAP_NAMES}
        columns = self._columns
        status_values = columns["status"]
        count = len(status_values)
        status = np.array(status_values, dtype=np.int64)
        if count and (status.min() < 0 or status.max() > DELETED):
            raise ValueError(f"unknown entry status {int(status[(status < 0) | (status > DELETED)][0])}")
        contents = columns["content"]
        if None in contents:
            contents = [0 if c is None else c for c in contents]
        content = np.array(contents, dtype=np.int64)
        if count and (content.min() < 0 or content.max() >= len(CONTENTS)):
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
                value = FORMATS.get(text) or FileFormat.parse(text)
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
            inherit = np.ones(count, dtype=bool) if manifest_seq == 0 else status == ADDED
        seq_array, seq_null = inherited_sequence_numbers(columns["sequence_number"], inherit, manifest_seq)
        file_seq_array, file_seq_null = inherited_sequence_numbers(
            columns["file_sequence_number"], inherit, manifest_seq
        )
        extras = {name: sparse_column(columns[name]) for name in EXTRA_NAMES}
        next_row_id = manifest.first_row_id if manifest.content == ManifestContent.DATA else None
        if next_row_id is not None:
            first_row_ids = extras["first_row_id"] or [None] * count
            assigned = list(first_row_ids)
            for i, (value, st, ct) in enumerate(zip(first_row_ids, status_values, contents)):
                if value is None and ct == DATA and st != DELETED:
                    assigned[i] = next_row_id
                    next_row_id += record_counts[i]
            extras["first_row_id"] = sparse_column(assigned)
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
            snapshot_id=int64_column(snapshot_ids),
            snapshot_null=null_mask(snapshot_ids),
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
            file_path=PathColumn.of(paths),
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
                keys: list[Any] = [float_key(v) if v.__class__ is float else v for v in values]
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
            keys = [tuple(float_key(v) if v.__class__ is float else v for v in t) for t in tuples]
        else:
            keys = tuples
        index = {}
        codes = [index.setdefault(k, len(index)) for k in keys]
        partitions = [()] * len(index)
        for code, value in zip(codes, tuples):
            partitions[code] = value
        return np.array(codes, dtype=np.int32), partitions


def decode_manifest(
    data: bytes, manifest: ManifestFile, *, summary: bool = False
) -> tuple[DecodedManifest, HotValues | None]:
    """Decode the manifest file ``data`` (the file of ``manifest``, its list row): natively
    into Arrow when the native decoder is installed and the file is worth it, else (or when
    it cannot) with fastavro. Returns the decoded manifest and, from fastavro's path, the flat
    values of its metrics maps. ``summary``: only what a summary reads, when decoded natively
    (``DecodedManifest.summary``); fastavro's path decodes everything (a complete manifest
    serves a summary too).

    Raises:
        InvalidManifestError: the file is not a valid manifest, naming it.
        MissingDependencyError: its codec needs a package that is not installed.
    """
    location = manifest.manifest_path
    header = read_header(data, location)
    layout = entry_layout(schema_of(header, location), None, location)
    batch, reason = native.decode(data, header, location)
    if batch is not None:
        try:
            return decoded_from_arrow(batch, layout, manifest, summary=summary), None
        except Unsupported as exc:
            reason = f"{location} ({exc})"
    builder = ManifestBuilder(layout, manifest)
    builder.read(read_blocks(data, header, location, chunk=CHUNK))
    decoded = builder.finish()
    native.report_fallback(reason)
    return decoded


def decode_manifests(
    jobs: list[tuple[bytes, ManifestFile]], *, summary: bool = False
) -> list[tuple[DecodedManifest, HotValues | None]]:
    """``decode_manifest`` for each (data, manifest) of ``jobs``, in order; natively in one call
    when the files share their schema and codec and each is worth decoding natively
    (``native.decode_together``: the native reader is set up once, not once per file)."""
    if len(jobs) > 1 and native.native_available():
        try:
            headers = [read_header(data, manifest.manifest_path) for data, manifest in jobs]
        except InvalidManifestError:
            headers = []  # decoded one by one below, which raises the error in order
        files = [(data, header, m.manifest_path) for (data, m), header in zip(jobs, headers)]
        whole = native.decode_whole(files) if headers else None
        if whole is not None and not summary:
            first = jobs[0][1].manifest_path
            group = decoded_group(
                whole[0],
                entry_layout(schema_of(headers[0], first), None, first),
                [manifest for _, manifest in jobs],
                whole[1],
            )
            if group is not None:
                return [(decoded, None) for decoded in group]
        batches = None if whole is None else _slices(*whole)
        if batches is not None:
            results: list[tuple[DecodedManifest, HotValues | None]] = []
            for (data, manifest), header, batch in zip(jobs, headers, batches):
                location = manifest.manifest_path
                layout = entry_layout(schema_of(header, location), None, location)
                try:
                    results.append((decoded_from_arrow(batch, layout, manifest, summary=summary), None))
                except Unsupported:
                    results.append(decode_manifest(data, manifest, summary=summary))
            return results
    return [decode_manifest(data, manifest, summary=summary) for data, manifest in jobs]


def _slices(batch: pa.RecordBatch, counts: list[int]) -> list[pa.RecordBatch]:
    """``batch`` cut into consecutive slices of ``counts`` rows."""
    starts = itertools.accumulate(counts, initial=0)
    return [batch.slice(start, count) for start, count in zip(starts, counts)]
