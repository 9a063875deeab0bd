"""Building a ``DecodedManifest`` from a manifest natively decoded into Arrow.

``manifests._native`` decodes the file into one Arrow record batch whose column names are the
file's Avro field names; ``EntryLayout`` (found by field id in the writer schema, as for
fastavro's records) says which column holds what. Every column is then taken whole, in a few
Arrow and numpy calls per manifest: scalars as copied numpy arrays (a view would keep the
whole decoded batch alive), inheritance applied with numpy, partition tuples
dictionary-encoded by Arrow (floats keyed by their bits), metrics maps from the list arrays'
offsets, keys and values, without a Python statement per value.

The result is equal, field by field, to what ``decoder.ManifestBuilder`` builds from
fastavro's records. Anything unusual (a null where the spec requires a value, an unknown
status or content, a value type this module does not expect) raises ``Unsupported``; the
caller then decodes the file with fastavro, which raises today's error for an invalid file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icefloe.arrow.buffers import int64_array, null_mask, numpy_view
from icefloe.manifests.reader import EntryLayout, MetricsMapLayout
from icefloe.scan._columnar._shared import (
    ADDED,
    CONTENTS,
    DATA,
    DELETED,
    EXTRA_NAMES,
    FORMATS,
    MAP_NAMES,
    NONE,
)
from icefloe.scan._columnar.manifest import DecodedManifest, empty_manifest
from icefloe.scan._columnar.metrics import BoundsColumn, CountsColumn
from icefloe.scan._columnar.paths import PathColumn
from icefloe.spec.manifest import FileFormat, ManifestContent, ManifestFile

__all__ = ["Unsupported", "decoded_from_arrow", "decoded_group"]


class Unsupported(Exception):
    """The batch holds something this module leaves to fastavro's path."""


_MISSING = -1


@dataclass(frozen=True, slots=True)
class _Plan:
    """Where a batch of one writer schema keeps each field: column indices (``_MISSING``:
    absent), found once per schema (arrow-avro maps one Avro schema to one Arrow schema)."""

    layout: EntryLayout  # kept, so that the cache's key (its id) is not reused
    columns: int
    status: int
    snapshot_id: int
    sequence_number: int
    file_sequence_number: int
    data_file: int
    fields: dict[str, int]  # data_file child indices, by EntryLayout attribute name
    partition: tuple[int, ...]  # partition struct child index of each partition field
    maps: tuple[tuple[int, int, int], ...]  # per metrics map: data_file child, key, value


_DATA_FILE_FIELDS = (
    "content",
    "file_path",
    "file_format",
    "partition",
    "record_count",
    "file_size_in_bytes",
    *EXTRA_NAMES,
)
_PLANS: dict[int, _Plan] = {}
_PLANS_LIMIT = 512


def _index(struct_type: pa.DataType, name: str) -> int:
    index: int = struct_type.get_field_index(name)
    return _MISSING if index < 0 else index


def _plan(schema: pa.Schema, layout: EntryLayout) -> _Plan:
    found = _PLANS.get(id(layout))
    if found is not None and found.layout is layout and found.columns == len(schema):
        return found
    data_file = _index(schema, layout.data_file)
    if data_file == _MISSING or not pa.types.is_struct(schema.field(data_file).type):
        raise Unsupported("no data_file record")
    df_type = schema.field(data_file).type
    fields = {name: _index(df_type, getattr(layout, name)) for name in _DATA_FILE_FIELDS}
    partition: tuple[int, ...] = ()
    if fields["partition"] != _MISSING:
        partition_type = df_type.field(fields["partition"]).type
        if not pa.types.is_struct(partition_type):
            raise Unsupported("partition is not a record")
        partition = tuple(_index(partition_type, name) for name in layout.partition_names)
    maps = []
    for name in MAP_NAMES:
        map_layout: MetricsMapLayout = getattr(layout, name)
        child = _index(df_type, map_layout.name)
        key = value = _MISSING
        if child != _MISSING:
            kind = df_type.field(child).type
            if pa.types.is_map(kind):
                key, value = 0, 1
            elif (pa.types.is_list(kind) or pa.types.is_large_list(kind)) and pa.types.is_struct(
                kind.value_type
            ):
                key = _index(kind.value_type, map_layout.key or "key")
                value = _index(kind.value_type, map_layout.value or "value")
            if key == _MISSING or value == _MISSING:
                raise Unsupported(f"metrics map {map_layout.name} of type {kind}")
        maps.append((child, key, value))
    plan = _Plan(
        layout=layout,
        columns=len(schema),
        status=_index(schema, layout.status),
        snapshot_id=_index(schema, layout.snapshot_id),
        sequence_number=_index(schema, layout.sequence_number),
        file_sequence_number=_index(schema, layout.file_sequence_number),
        data_file=data_file,
        fields=fields,
        partition=partition,
        maps=tuple(maps),
    )
    if len(_PLANS) >= _PLANS_LIMIT:
        _PLANS.clear()
    _PLANS[id(layout)] = plan
    return plan


def _view(array: pa.Array) -> np.ndarray:
    """``numpy_view`` of a column planning can read."""
    found = numpy_view(array)
    if found is None:
        raise Unsupported(f"a column of type {array.type}")
    return found


def _ints(array: pa.Array, what: str) -> np.ndarray:
    """A required integer column as an int64 numpy array of its own."""
    if array.null_count:
        raise Unsupported(f"null {what}")
    return _view(array).astype(np.int64)


def _nullable_ints(array: pa.Array | None, n: int) -> tuple[np.ndarray, np.ndarray | None]:
    """(int64 values with ``NONE`` for nulls, null mask or None); a missing column is all null."""
    if array is None or array.null_count == n:
        return np.full(n, NONE, dtype=np.int64), np.ones(n, dtype=bool)
    values = _view(array).astype(np.int64)
    mask = null_mask(array)
    if mask is not None:
        values[mask] = NONE
    return values, mask


def _inherited(
    array: pa.Array | None, n: int, inherit: np.ndarray | None, manifest_seq: int | None
) -> tuple[np.ndarray, np.ndarray | None]:
    values, null = _nullable_ints(array, n)
    if null is None:
        return values, None
    if inherit is not None:
        taken = null & inherit
        values[taken] = manifest_seq
        null = null & ~taken
    return values, (null if null.any() else None)


def _stored(array: pa.Array) -> pa.Array:
    """Temporal values as the ints Avro stores (icefloe's partition values)."""
    kind = array.type
    if pa.types.is_date32(kind) or pa.types.is_time32(kind):
        return array.view(pa.int32())
    if pa.types.is_timestamp(kind) or pa.types.is_time64(kind) or pa.types.is_date64(kind):
        return array.view(pa.int64())
    return array


def _key_of(array: pa.Array) -> pa.Array:
    """What partition values are grouped by: floats by their bits (spec: -0.0 is not 0.0)."""
    if pa.types.is_float32(array.type):
        return array.view(pa.int32())
    if pa.types.is_float64(array.type):
        return array.view(pa.int64())
    return array


def _python(array: pa.Array) -> list[Any]:
    values: list[Any] = array.to_pylist()
    if pa.types.is_fixed_size_binary(array.type) or pa.types.is_binary(array.type):
        return [v if v is None else bytes(v) for v in values]
    return values


def _partitions(struct: pa.StructArray, plan: _Plan, n: int) -> tuple[np.ndarray, list[tuple[Any, ...]]]:
    """Partition codes and the distinct tuples, in the order ``ManifestBuilder`` gives them:
    sorted for a single field of plain ints, by first appearance otherwise."""
    if struct.null_count:
        raise Unsupported("null partition")
    converters = plan.layout.partition_converters
    children = struct.flatten() if plan.partition else []
    columns = [pa.nulls(n) if i == _MISSING else _stored(children[i]) for i in plan.partition]
    if not columns:
        return np.zeros(n, dtype=np.int32), [()]
    if len(columns) == 1 and converters[0] is None and pa.types.is_integer(columns[0].type):
        column = columns[0]
        if not column.null_count:
            distinct, inverse = np.unique(_view(column), return_inverse=True)
            return inverse.astype(np.int32).reshape(-1), [(v,) for v in distinct.tolist()]
    key = np.zeros(n, dtype=np.int64)
    radix = 1
    for column in columns:
        encoded = pc.dictionary_encode(_key_of(column), null_encoding="encode")
        size = len(encoded.dictionary)
        key = key * size + _view(encoded.indices).astype(np.int64)
        radix *= size
        if radix > 1 << 31:  # renumber (codes < n) so that the mixed-radix key never overflows
            distinct, key = np.unique(key, return_inverse=True)
            key = key.reshape(-1).astype(np.int64)
            radix = len(distinct)
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    codes = rank[inverse.reshape(-1)].astype(np.int32)
    firsts = int64_array(first[order])
    values = []
    for column, convert in zip(columns, converters):
        picked = _python(column.take(firsts))
        values.append(picked if convert is None else [convert(v) for v in picked])
    return codes, list(zip(*values))


def _empty_map(kind: type[CountsColumn | BoundsColumn], n: int) -> CountsColumn | BoundsColumn:
    lengths = np.full(n, -1, dtype=np.int64)
    empty = np.zeros(0, dtype=np.int64)
    if kind is CountsColumn:
        return CountsColumn(lengths, empty, empty)
    return BoundsColumn.from_blob(lengths, empty, b"", np.zeros(1, dtype=np.int64))


class _Layouts:
    """The last metrics map's offsets and keys, so that the next map of the manifest with the
    same ones (the usual case) takes its layout rather than working it out again."""

    def __init__(self) -> None:
        self.offsets: np.ndarray | None = None
        self.keys: np.ndarray | None = None
        self.column: CountsColumn | BoundsColumn | None = None

    def same(self, offsets: np.ndarray, keys: np.ndarray) -> CountsColumn | BoundsColumn | None:
        if (
            self.column is not None
            and self.offsets is not None
            and self.keys is not None
            and np.array_equal(offsets, self.offsets)
            and np.array_equal(keys, self.keys)
        ):
            return self.column
        return None

    def remember(self, offsets: np.ndarray, keys: np.ndarray, column: CountsColumn | BoundsColumn) -> None:
        self.offsets, self.keys, self.column = offsets, keys, column


def _map_column(
    kind: type[CountsColumn | BoundsColumn], array: pa.Array, key: int, value: int, layouts: _Layouts
) -> CountsColumn | BoundsColumn:
    """A metrics column from a list of key-value records (or an Avro map) per entry."""
    offsets = _view(array.offsets)
    base, end = int(offsets[0]), int(offsets[-1])
    if isinstance(array, pa.MapArray):
        keys_array = array.keys.slice(base, end - base)
        values = array.items.slice(base, end - base)
        keys = np.array([int(k) for k in keys_array.to_pylist()], dtype=np.int64)
    else:
        items = array.values
        if base or end != len(items):
            items = items.slice(base, end - base)
        if items.null_count:
            raise Unsupported("null metrics pair")
        pair = items.flatten()
        keys_array, values = pair[key], pair[value]
        if keys_array.null_count:
            raise Unsupported("null metrics key")
        keys = _view(keys_array)
    if values.null_count:
        raise Unsupported("null metrics value")
    missing = null_mask(array)
    like = None if missing is not None else layouts.same(offsets, keys)
    lengths = np.diff(offsets) if like is None else offsets  # (unused with a known layout)
    if missing is not None:
        lengths = lengths.astype(np.int64)
        lengths[missing] = -1
    column: CountsColumn | BoundsColumn
    if kind is CountsColumn:
        if not pa.types.is_integer(values.type):
            raise Unsupported(f"count of type {values.type}")
        column = CountsColumn(lengths, keys, _view(values), layout_of=like)
    else:
        column = _bounds(lengths, keys, values, like)
    if missing is None and like is None:
        layouts.remember(offsets, keys, column)
    return column


def _bounds(
    lengths: np.ndarray, keys: np.ndarray, values: pa.Array, like: BoundsColumn | CountsColumn | None
) -> BoundsColumn:
    if not pa.types.is_binary(values.type):
        if not (pa.types.is_large_binary(values.type) or pa.types.is_fixed_size_binary(values.type)):
            raise Unsupported(f"bound of type {values.type}")
        values = values.cast(pa.binary())
    _, offset_buffer, data = values.buffers()
    value_offsets = np.frombuffer(
        offset_buffer, dtype=np.int32, count=len(values) + 1, offset=values.offset * 4
    )
    start, stop = int(value_offsets[0]), int(value_offsets[-1])
    blob = b"" if data is None or stop == start else data.slice(start, stop - start).to_pybytes()
    return BoundsColumn.from_blob(lengths, keys, blob, value_offsets.astype(np.int64) - start, layout_of=like)


def _tuples(array: pa.Array, n: int) -> list[Any] | None:
    """A list column as tuples, one object per distinct value (most files of a manifest share
    theirs: split offsets, equality ids)."""
    if array.null_count == n:
        return None
    shared: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    if not array.null_count:
        offsets = _view(array.offsets)
        width = int(offsets[1] - offsets[0])
        if bool((np.diff(offsets) == width).all()):
            flat = array.values.slice(int(offsets[0]), width * n).to_pylist()
            rows = list(zip(*[iter(flat)] * width)) if width else [()] * n
            if len(set(rows)) == 1:
                return [rows[0]] * n
            return list(map(shared.setdefault, rows, rows))
    return [None if v is None else shared.setdefault(tuple(v), tuple(v)) for v in array.to_pylist()]


def _sparse(array: pa.Array | None, n: int) -> list[Any] | None:
    """The column as a list, or None when every value is null (``sparse_column``)."""
    if array is None or array.null_count == n:
        return None
    values: list[Any] = array.to_pylist()
    return values


def _formats(array: pa.Array) -> tuple[np.ndarray, list[FileFormat]]:
    if array.null_count:
        raise Unsupported("null file_format")
    texts = array.to_pylist()  # short strings: cheaper than an Arrow kernel call
    parse: Callable[[str], FileFormat] = FileFormat.parse
    distinct = set(texts)
    if len(distinct) == 1:  # the usual case: one format for the whole manifest
        (text,) = distinct
        return np.zeros(len(texts), dtype=np.int8), [FORMATS.get(text) or parse(text)]
    codes: dict[str, int] = {}
    indices = [codes.setdefault(text, len(codes)) for text in texts]
    values = [FORMATS.get(text) or parse(text) for text in codes]
    return np.array(indices, dtype=np.int8), values


def decoded_from_arrow(
    batch: pa.RecordBatch, layout: EntryLayout, manifest: ManifestFile, *, summary: bool = False
) -> DecodedManifest:
    """The ``DecodedManifest`` of the natively decoded manifest ``batch`` (its list row is
    ``manifest``; ``layout`` is the file's ``entry_layout``). ``summary``: only the columns a
    summary reads (``DecodedManifest.summary``): file paths, formats, metrics maps and the
    optional fields, most of the work, are left out.

    Raises:
        Unsupported: decode this manifest with fastavro instead.
    """
    try:
        return _decoded(batch, layout, manifest, summary)
    except Unsupported:
        raise
    except (pa.ArrowException, KeyError, IndexError, TypeError, ValueError, OverflowError) as exc:
        raise Unsupported(f"{type(exc).__name__}: {exc}") from exc


def decoded_group(
    batch: pa.RecordBatch, layout: EntryLayout, manifests: list[ManifestFile], counts: list[int]
) -> list[DecodedManifest] | None:
    """The ``DecodedManifest`` of each of several manifests natively decoded together into
    ``batch`` (``counts``: their entries, in order; one writer schema, ``layout``): the same
    as ``decoded_from_arrow`` of each slice, with the metrics maps and optional fields, most
    of the work and most of it a fixed cost per call, converted once for all of them. None
    when they must be converted one by one (v3 first row ids to assign, metrics maps of
    several layouts, anything ``Unsupported``)."""
    if any(m.first_row_id is not None and m.content == ManifestContent.DATA for m in manifests):
        return None
    n = batch.num_rows
    try:
        if n == 0 or sum(counts) != n:
            return None
        plan = _plan(batch.schema, layout)
        data_file = batch.columns[plan.data_file]
        if data_file.null_count:
            return None
        empty = np.zeros(n, dtype=np.int64)
        metrics, extras = _metrics_and_extras(data_file.flatten(), plan, None, empty, empty, empty)
        results = []
        start = 0
        for manifest, count in zip(manifests, counts):
            end = start + count
            sliced = {name: column.rows(start, end) for name, column in metrics.items()}
            if any(column is None for column in sliced.values()):
                return None
            own = {name: _rows(values, start, end) for name, values in extras.items()}
            given = (sliced, own)
            results.append(_decoded(batch.slice(start, count), layout, manifest, False, given))  # type: ignore[arg-type]
            start = end
        return results
    except (Unsupported, pa.ArrowException, KeyError, IndexError, TypeError, ValueError, OverflowError):
        return None


def _rows(values: list[Any] | None, start: int, end: int) -> list[Any] | None:
    """Entries ``start`` to ``end`` of an optional field (None when every one is null)."""
    if values is None:
        return None
    part = values[start:end]
    return None if part.count(None) == len(part) else part


def _decoded(
    batch: pa.RecordBatch,
    layout: EntryLayout,
    manifest: ManifestFile,
    summary: bool,
    given: tuple[dict[str, CountsColumn | BoundsColumn], dict[str, list[Any] | None]] | None = None,
) -> DecodedManifest:
    n = batch.num_rows
    if n == 0:
        return empty_manifest(manifest)
    plan = _plan(batch.schema, layout)
    columns = batch.columns

    def column(index: int) -> pa.Array | None:
        return None if index == _MISSING else columns[index]

    status_array = column(plan.status)
    data_file = columns[plan.data_file]
    if status_array is None or data_file.null_count:
        raise Unsupported("no status, or a null data_file")
    children = data_file.flatten()

    def child(name: str) -> pa.Array | None:
        index = plan.fields[name]
        return None if index == _MISSING else children[index]

    status = _ints(status_array, "status")
    if status.min() < 0 or status.max() > DELETED:
        raise Unsupported("unknown status")
    content_array = child("content")
    if content_array is None:
        content = np.zeros(n, dtype=np.int64)
    else:
        content = _view(content_array).astype(np.int64)
        content_nulls = null_mask(content_array)
        if content_nulls is not None:
            content[content_nulls] = 0
        if content.min() < 0 or content.max() >= len(CONTENTS):
            raise Unsupported("unknown content")
    path_array = child("file_path")
    if path_array is None or path_array.null_count or not pa.types.is_string(path_array.type):
        raise Unsupported("file_path")
    format_array = child("file_format")
    record_array = child("record_count")
    size_array = child("file_size_in_bytes")
    partition_array = child("partition")
    if format_array is None or record_array is None or size_array is None:
        raise Unsupported("a required data_file field")
    if partition_array is None and plan.layout.partition_names:
        raise Unsupported("no partition record")  # (an empty one is not decoded: no column)
    if summary:
        if format_array.null_count:
            raise Unsupported("null file_format")
        paths = PathColumn.of([])
        format_values: list[FileFormat] = []
        formats = np.zeros(n, dtype=np.int8)
    else:
        paths = PathColumn.of(path_array.to_pylist())
        formats, format_values = _formats(format_array)
    records = _ints(record_array, "record_count")
    sizes = _ints(size_array, "file_size_in_bytes")
    if partition_array is None:  # an unpartitioned manifest
        partition_codes, partitions = np.zeros(n, dtype=np.int32), [()]
    else:
        partition_codes, partitions = _partitions(partition_array, plan, n)

    # Inheritance (spec: "Sequence Number Inheritance"), as ManifestBuilder applies it.
    snapshot_ids, snapshot_null = _nullable_ints(column(plan.snapshot_id), n)
    inherited = manifest.added_snapshot_id
    if snapshot_null is not None and inherited is not None:
        snapshot_ids[snapshot_null] = inherited
        snapshot_null = None
    manifest_seq = manifest.sequence_number
    inherit = None
    if manifest_seq is not None and manifest_seq >= 0:
        inherit = np.ones(n, dtype=bool) if manifest_seq == 0 else status == ADDED
    seq, seq_null = _inherited(column(plan.sequence_number), n, inherit, manifest_seq)
    file_seq, file_seq_null = _inherited(column(plan.file_sequence_number), n, inherit, manifest_seq)
    if summary:
        metrics: dict[str, CountsColumn | BoundsColumn] = {}
        extras: dict[str, list[Any] | None] = dict.fromkeys(EXTRA_NAMES)
    elif given is not None:
        metrics, extras = given
    else:
        metrics, extras = _metrics_and_extras(children, plan, manifest, status, content, records)
    return DecodedManifest(
        manifest=manifest,
        count=n,
        status=status.astype(np.int8),
        content=content.astype(np.int8),
        snapshot_id=snapshot_ids,
        snapshot_null=snapshot_null,
        sequence_number=seq,
        sequence_null=seq_null,
        file_sequence_number=file_seq,
        file_sequence_null=file_seq_null,
        record_count=records,
        file_size_in_bytes=sizes,
        partition_codes=partition_codes,
        partitions=partitions,
        formats=formats,
        format_values=format_values,
        file_path=paths,
        metrics=metrics,
        extras=extras,
        summary=summary,
    )


def _metrics_and_extras(
    children: list[pa.Array],
    plan: _Plan,
    manifest: ManifestFile | None,
    status: np.ndarray,
    content: np.ndarray,
    records: np.ndarray,
) -> tuple[dict[str, CountsColumn | BoundsColumn], dict[str, list[Any] | None]]:
    """The six metrics maps and the optional fields (v3 first row ids assigned)."""
    n = len(status)

    def child(name: str) -> pa.Array | None:
        index = plan.fields[name]
        return None if index == _MISSING else children[index]

    split_offsets, equality_ids = child("split_offsets"), child("equality_ids")
    first_row_array = child("first_row_id")
    extras = {
        "key_metadata": _sparse(child("key_metadata"), n),
        "split_offsets": None if split_offsets is None else _tuples(split_offsets, n),
        "equality_ids": None if equality_ids is None else _tuples(equality_ids, n),
        "sort_order_id": _sparse(child("sort_order_id"), n),
        "first_row_id": _sparse(first_row_array, n),
        "referenced_data_file": _sparse(child("referenced_data_file"), n),
        "content_offset": _sparse(child("content_offset"), n),
        "content_size_in_bytes": _sparse(child("content_size_in_bytes"), n),
    }
    if extras["key_metadata"] is not None:
        extras["key_metadata"] = [v if v is None else bytes(v) for v in extras["key_metadata"]]
    next_row_id = (
        manifest.first_row_id if manifest is not None and manifest.content == ManifestContent.DATA else None
    )
    if next_row_id is not None:
        # v3 first row ids: the nulls of live data files, counting up by record counts.
        nulls = None if first_row_array is None else null_mask(first_row_array)
        if first_row_array is None or first_row_array.null_count == n:
            unknown = np.ones(n, dtype=bool)
        else:
            unknown = np.zeros(n, dtype=bool) if nulls is None else nulls
        eligible = unknown & (content == DATA) & (status != DELETED)
        counted = np.where(eligible, records, 0)
        ids = (next_row_id + np.cumsum(counted) - counted).tolist()
        known = extras["first_row_id"] or [None] * n
        assigned = [
            ids[i] if flag else value for i, (flag, value) in enumerate(zip(eligible.tolist(), known))
        ]
        extras["first_row_id"] = None if assigned.count(None) == n else assigned

    metrics: dict[str, CountsColumn | BoundsColumn] = {}
    layouts = _Layouts()
    for name, (index, key, value) in zip(MAP_NAMES, plan.maps):
        kind = BoundsColumn if name.endswith("bounds") else CountsColumn
        if index == _MISSING:
            metrics[name] = _empty_map(kind, n)
        else:
            metrics[name] = _map_column(kind, children[index], key, value, layouts)
    return metrics, extras
