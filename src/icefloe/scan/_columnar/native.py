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
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icefloe.manifests.reader import EntryLayout, MetricsMapLayout
from icefloe.scan._columnar._shared import ADDED, CONTENTS, DATA, DELETED, FORMATS, MAP_NAMES, NONE
from icefloe.scan._columnar.manifest import DecodedManifest, empty_manifest
from icefloe.scan._columnar.metrics import BoundsColumn, CountsColumn
from icefloe.spec.manifest import FileFormat, ManifestContent, ManifestFile

__all__ = ["Unsupported", "decoded_from_arrow"]


class Unsupported(Exception):
    """The batch holds something this module leaves to fastavro's path."""


def _child(struct: pa.StructArray, name: str) -> pa.Array | None:
    index = struct.type.get_field_index(name)
    return None if index < 0 else struct.field(index)


def _ints(array: pa.Array, what: str) -> np.ndarray:
    """A required integer column as an int64 numpy array of its own."""
    if array.null_count:
        raise Unsupported(f"null {what}")
    return np.array(array.to_numpy(), dtype=np.int64)


def _nullable_ints(array: pa.Array | None, n: int) -> tuple[np.ndarray, np.ndarray | None]:
    """(int64 values with ``NONE`` for nulls, null mask or None); a missing column is all null."""
    if array is None or array.null_count == n:
        return np.full(n, NONE, dtype=np.int64), np.ones(n, dtype=bool)
    if not array.null_count:
        return np.array(array.to_numpy(), dtype=np.int64), None
    mask = np.array(array.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    return np.array(array.fill_null(NONE).to_numpy(), dtype=np.int64), mask


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


def _partitions(
    struct: pa.StructArray, layout: EntryLayout, n: int
) -> tuple[np.ndarray, list[tuple[Any, ...]]]:
    """Partition codes and the distinct tuples, in the order ``ManifestBuilder`` gives them:
    sorted for a single field of plain ints, by first appearance otherwise."""
    if struct.null_count:
        raise Unsupported("null partition")
    names = layout.partition_names
    converters = layout.partition_converters
    columns = []
    for name in names:
        child = _child(struct, name)
        columns.append(pa.nulls(n) if child is None else _stored(child))
    if not columns:
        return np.zeros(n, dtype=np.int32), [()]
    if len(columns) == 1 and converters[0] is None and pa.types.is_integer(columns[0].type):
        column = columns[0]
        if not column.null_count:
            distinct, inverse = np.unique(column.to_numpy(), return_inverse=True)
            return inverse.astype(np.int32).reshape(-1), [(v,) for v in distinct.tolist()]
    key = np.zeros(n, dtype=np.int64)
    radix = 1
    for column in columns:
        encoded = pc.dictionary_encode(_key_of(column), null_encoding="encode")
        size = len(encoded.dictionary)
        key = key * size + encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
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
    firsts = pa.array(first[order])
    values = []
    for column, convert in zip(columns, converters):
        picked = _python(column.take(firsts))
        values.append(picked if convert is None else [convert(v) for v in picked])
    return codes, list(zip(*values))


def _map_column(
    kind: type[CountsColumn | BoundsColumn], array: pa.Array | None, layout: MetricsMapLayout, n: int
) -> CountsColumn | BoundsColumn:
    """A metrics column from a list of key-value records (or an Avro map) per entry."""
    if array is None:
        lengths = np.full(n, -1, dtype=np.int64)
        empty = np.zeros(0, dtype=np.int64)
        if kind is CountsColumn:
            return CountsColumn(lengths, empty, empty)
        return BoundsColumn.from_blob(lengths, empty, b"", np.zeros(1, dtype=np.int64))
    if isinstance(array, pa.MapArray):
        keys_array, values = array.keys, array.items
        offsets = array.offsets.to_numpy()
        keys = np.array([int(k) for k in keys_array.to_pylist()], dtype=np.int64)
    else:
        if not isinstance(array, (pa.ListArray, pa.LargeListArray)):
            raise Unsupported(f"metrics map of type {array.type}")
        offsets = array.offsets.to_numpy()
        items = array.values
        base, end = int(offsets[0]), int(offsets[-1])
        if base or end != len(items):
            items = items.slice(base, end - base)
        if items.null_count:
            raise Unsupported("null metrics pair")
        keys_array = _child(items, layout.key or "key")
        values = _child(items, layout.value or "value")
        if keys_array is None or values is None:
            raise Unsupported("metrics pair without key or value")
        if keys_array.null_count:
            raise Unsupported("null metrics key")
        keys = keys_array.to_numpy()
    lengths = np.diff(offsets).astype(np.int64)
    if array.null_count:
        lengths[np.asarray(array.is_null().to_numpy(zero_copy_only=False), dtype=bool)] = -1
    if values.null_count:
        raise Unsupported("null metrics value")
    if kind is CountsColumn:
        if not pa.types.is_integer(values.type):
            raise Unsupported(f"count of type {values.type}")
        return CountsColumn(lengths, keys, values.to_numpy())
    if not pa.types.is_binary(values.type):
        if not (pa.types.is_large_binary(values.type) or pa.types.is_fixed_size_binary(values.type)):
            raise Unsupported(f"bound of type {values.type}")
        values = values.cast(pa.binary())
    value_offsets = np.frombuffer(
        values.buffers()[1], dtype=np.int32, count=len(values) + 1, offset=values.offset * 4
    ).astype(np.int64)
    start, stop = int(value_offsets[0]), int(value_offsets[-1])
    data = values.buffers()[2]
    blob = b"" if data is None or stop == start else data.slice(start, stop - start).to_pybytes()
    return BoundsColumn.from_blob(lengths, keys, blob, value_offsets - start)


def _sparse(array: pa.Array | None, n: int, *, tuples: bool = False) -> list[Any] | None:
    """The column as a list, or None when every value is null (``sparse_column``). Lists
    become tuples, one object per distinct value (most files of a manifest share theirs)."""
    if array is None or array.null_count == n:
        return None
    values: list[Any] = array.to_pylist()
    if tuples:
        shared: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        return [None if v is None else shared.setdefault(tuple(v), tuple(v)) for v in values]
    return values


def _formats(array: pa.Array) -> tuple[np.ndarray, list[FileFormat]]:
    if array.null_count:
        raise Unsupported("null file_format")
    encoded = pc.dictionary_encode(array)
    texts: list[str] = encoded.dictionary.to_pylist()
    parse: Callable[[str], FileFormat] = FileFormat.parse
    values = [FORMATS.get(text) or parse(text) for text in texts]
    return encoded.indices.to_numpy(zero_copy_only=False).astype(np.int8), values


def decoded_from_arrow(batch: pa.RecordBatch, layout: EntryLayout, manifest: ManifestFile) -> DecodedManifest:
    """The ``DecodedManifest`` of the natively decoded manifest ``batch`` (its list row is
    ``manifest``; ``layout`` is the file's ``entry_layout``).

    Raises:
        Unsupported: decode this manifest with fastavro instead.
    """
    try:
        return _decoded(batch, layout, manifest)
    except Unsupported:
        raise
    except (pa.ArrowException, KeyError, IndexError, TypeError, ValueError, OverflowError) as exc:
        raise Unsupported(f"{type(exc).__name__}: {exc}") from exc


def _decoded(batch: pa.RecordBatch, layout: EntryLayout, manifest: ManifestFile) -> DecodedManifest:
    n = batch.num_rows
    if n == 0:
        return empty_manifest(manifest)
    schema = batch.schema

    def column(name: str) -> pa.Array | None:
        index = schema.get_field_index(name)
        return None if index < 0 else batch.column(index)

    status_array = column(layout.status)
    data_file = column(layout.data_file)
    if status_array is None or not isinstance(data_file, pa.StructArray) or data_file.null_count:
        raise Unsupported("no status or data_file")
    status = _ints(status_array, "status")
    if status.min() < 0 or status.max() > DELETED:
        raise Unsupported("unknown status")
    content_array = _child(data_file, layout.content)
    if content_array is None:
        content = np.zeros(n, dtype=np.int64)
    else:
        content = np.array(content_array.fill_null(0).to_numpy(), dtype=np.int64)
        if content.min() < 0 or content.max() >= len(CONTENTS):
            raise Unsupported("unknown content")
    path_array = _child(data_file, layout.file_path)
    if path_array is None or path_array.null_count or not pa.types.is_string(path_array.type):
        raise Unsupported("file_path")
    paths: list[str] = path_array.to_pylist()
    format_array = _child(data_file, layout.file_format)
    record_array = _child(data_file, layout.record_count)
    size_array = _child(data_file, layout.file_size_in_bytes)
    partition_array = _child(data_file, layout.partition)
    if format_array is None or record_array is None or size_array is None or partition_array is None:
        raise Unsupported("a required data_file field")
    formats, format_values = _formats(format_array)
    records = _ints(record_array, "record_count")
    sizes = _ints(size_array, "file_size_in_bytes")
    assert isinstance(partition_array, pa.StructArray)
    partition_codes, partitions = _partitions(partition_array, layout, n)

    # Inheritance (spec: "Sequence Number Inheritance"), as ManifestBuilder applies it.
    snapshot_ids, snapshot_null = _nullable_ints(column(layout.snapshot_id), n)
    inherited = manifest.added_snapshot_id
    if snapshot_null is not None and inherited is not None:
        snapshot_ids[snapshot_null] = inherited
        snapshot_null = None
    manifest_seq = manifest.sequence_number
    inherit = None
    if manifest_seq is not None and manifest_seq >= 0:
        inherit = np.ones(n, dtype=bool) if manifest_seq == 0 else status == ADDED
    seq, seq_null = _inherited(column(layout.sequence_number), n, inherit, manifest_seq)
    file_seq, file_seq_null = _inherited(column(layout.file_sequence_number), n, inherit, manifest_seq)

    first_row_array = _child(data_file, layout.first_row_id)
    extras = {
        "key_metadata": _sparse(_child(data_file, layout.key_metadata), n),
        "split_offsets": _sparse(_child(data_file, layout.split_offsets), n, tuples=True),
        "equality_ids": _sparse(_child(data_file, layout.equality_ids), n, tuples=True),
        "sort_order_id": _sparse(_child(data_file, layout.sort_order_id), n),
        "first_row_id": _sparse(first_row_array, n),
        "referenced_data_file": _sparse(_child(data_file, layout.referenced_data_file), n),
        "content_offset": _sparse(_child(data_file, layout.content_offset), n),
        "content_size_in_bytes": _sparse(_child(data_file, layout.content_size_in_bytes), n),
    }
    if extras["key_metadata"] is not None:
        extras["key_metadata"] = [v if v is None else bytes(v) for v in extras["key_metadata"]]
    next_row_id = manifest.first_row_id if manifest.content == ManifestContent.DATA else None
    if next_row_id is not None:
        # v3 first row ids: the nulls of live data files, counting up by record counts.
        unknown = (
            np.ones(n, dtype=bool)
            if first_row_array is None or first_row_array.null_count == n
            else np.asarray(first_row_array.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        )
        eligible = unknown & (content == DATA) & (status != DELETED)
        counted = np.where(eligible, records, 0)
        ids = (next_row_id + np.cumsum(counted) - counted).tolist()
        known = extras["first_row_id"] or [None] * n
        assigned = [
            ids[i] if flag else value for i, (flag, value) in enumerate(zip(eligible.tolist(), known))
        ]
        extras["first_row_id"] = None if assigned.count(None) == n else assigned

    metrics = {}
    for name in MAP_NAMES:
        map_layout: MetricsMapLayout = getattr(layout, name)
        kind = BoundsColumn if name.endswith("bounds") else CountsColumn
        metrics[name] = _map_column(kind, _child(data_file, map_layout.name), map_layout, n)
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
    )
