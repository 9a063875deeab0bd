"""The ``files`` and ``entries`` families as Arrow record batches, one per chunk of decoded
manifests.

Each column is built from the ``DecodedManifest``s' arrays, a chunk of manifests at a time
(``_arrays.py``): partition tuples once per distinct tuple then taken per entry, metrics maps
from their flat values, and ``readable_metrics`` by locating every column's value in each map
with one scatter and decoding each column's bounds as a whole array. No Python object is
made per file, and the per-manifest cost is a handful of array concatenations.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from icefloe.arrow.convert import to_arrow_array
from icefloe.arrow.schema import schema_to_arrow
from icefloe.scan._columnar import DecodedManifest
from icefloe.scan._columnar._shared import EXTRA_NAMES, MAP_NAMES, float_key
from icefloe.spec.manifest import ManifestContent
from icefloe.spec.schema import Schema
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.types import NestedField, StructType
from icefloe.table.inspect._arrays import FlatMap, concat_optional, int_array
from icefloe.table.inspect.schemas import (
    READABLE_METRICS,
    entries_schema,
    files_schema,
    partition_type,
    readable_metric_columns,
)

__all__ = ["CHUNK_ENTRIES", "FileRows", "chunks"]

#: Entries turned into Arrow at once: large enough that per-call overheads vanish, small
#: enough that the intermediate arrays of a chunk stay a few MB.
CHUNK_ENTRIES = 32_768

_COUNT_MAPS = ("column_sizes", "value_counts", "null_value_counts", "nan_value_counts")


def chunks(
    manifests: Iterable[DecodedManifest], size: int = CHUNK_ENTRIES
) -> Iterator[list[DecodedManifest]]:
    """The manifests in consecutive groups of about ``size`` entries."""
    chunk: list[DecodedManifest] = []
    entries = 0
    for decoded in manifests:
        chunk.append(decoded)
        entries += decoded.count
        if entries >= size:
            yield chunk
            chunk, entries = [], 0
    if chunk:
        yield chunk


def _column(arrays: Sequence[np.ndarray], dtype: Any) -> np.ndarray:
    return np.concatenate(arrays).astype(dtype, copy=False) if arrays else np.zeros(0, dtype=dtype)


def _mask(masks: Sequence[np.ndarray | None], counts: Sequence[int]) -> np.ndarray | None:
    if all(m is None for m in masks):
        return None
    return np.concatenate([np.zeros(c, dtype=bool) if m is None else m for m, c in zip(masks, counts)])


class FileRows:
    """Builds rows of the files family (``entries=False``) or the entries family of one table."""

    def __init__(self, metadata: TableMetadata, *, entries: bool, readable_metrics: bool = True):
        self.metadata = metadata
        self.entries = entries
        self.schema: Schema = entries_schema(metadata) if entries else files_schema(metadata)
        self.arrow_schema = schema_to_arrow(self.schema)
        self.partition_type: StructType = partition_type(metadata)
        self.with_metrics = readable_metrics
        if entries:
            data_file = self.schema.find_field("data_file")
            assert data_file is not None and isinstance(data_file.field_type, StructType)
            self.file_fields: list[NestedField] = list(data_file.field_type.fields)
            self.file_struct: pa.StructType = self.arrow_schema.field("data_file").type
        else:
            self.file_fields = [f for f in self.schema.fields if f.name != READABLE_METRICS]
            self.file_struct = pa.struct([self.arrow_schema.field(f.name) for f in self.file_fields])
        self.metrics_type: pa.StructType = self.arrow_schema.field(READABLE_METRICS).type
        self.metric_columns = [field for _, field in readable_metric_columns(metadata.schema())]
        self._positions: dict[int, list[int | None]] = {}

    def empty(self) -> pa.Table:
        return self.arrow_schema.empty_table()

    # ---- a chunk of manifests ------------------------------------------------------------------

    def batch(self, chunk: Sequence[DecodedManifest], *, live_only: bool) -> pa.RecordBatch:
        """The rows of the manifests of ``chunk``: their live entries, or all of them."""
        counts = [d.count for d in chunk]
        maps = {name: FlatMap([d.metrics[name] for d in chunk]) for name in MAP_NAMES}
        columns = self._file_columns(chunk, counts, maps)
        arrays: list[pa.Array]
        if self.entries:
            arrays = [
                pa.array(_column([d.status for d in chunk], np.int32), pa.int32()),
                int_array(
                    _column([d.snapshot_id for d in chunk], np.int64),
                    _mask([d.snapshot_null for d in chunk], counts),
                    pa.int64(),
                ),
                int_array(
                    _column([d.sequence_number for d in chunk], np.int64),
                    _mask([d.sequence_null for d in chunk], counts),
                    pa.int64(),
                ),
                int_array(
                    _column([d.file_sequence_number for d in chunk], np.int64),
                    _mask([d.file_sequence_null for d in chunk], counts),
                    pa.int64(),
                ),
                pa.StructArray.from_arrays(columns, fields=list(self.file_struct)),
            ]
        else:
            arrays = columns
        arrays.append(self._readable_metrics(maps, sum(counts)))
        batch = pa.RecordBatch.from_arrays(arrays, schema=self.arrow_schema)
        if live_only:
            live = np.concatenate([d.live() for d in chunk]) if chunk else np.zeros(0, dtype=bool)
            if not live.all():
                batch = batch.filter(pa.array(live))
        return batch

    def _file_columns(
        self, chunk: Sequence[DecodedManifest], counts: list[int], maps: dict[str, FlatMap]
    ) -> list[pa.Array]:
        total = sum(counts)
        formats: list[str] = []
        format_codes = []
        for d in chunk:
            local = np.asarray([_code(formats, str(f)) for f in d.format_values], dtype=np.int32)
            format_codes.append(local[d.formats] if len(local) else np.zeros(d.count, dtype=np.int32))
        first_row_ids = [
            d.extras.get("first_row_id")
            if d.manifest.first_row_id is not None and d.manifest.content == ManifestContent.DATA
            else None  # as Java's reader: no first row ids without the manifest's
            for d in chunk
        ]
        values: dict[str, pa.Array] = {
            "content": pa.array(_column([d.content for d in chunk], np.int32), pa.int32()),
            "file_path": pa.array(
                list(itertools.chain.from_iterable(d.file_path for d in chunk)), pa.string()
            ),
            "file_format": pa.array(formats, pa.string()).take(pa.array(_column(format_codes, np.int32))),
            "spec_id": pa.array(
                np.repeat(np.asarray([d.spec_id for d in chunk], np.int32), counts), pa.int32()
            ),
            "record_count": pa.array(_column([d.record_count for d in chunk], np.int64), pa.int64()),
            "file_size_in_bytes": pa.array(
                _column([d.file_size_in_bytes for d in chunk], np.int64), pa.int64()
            ),
            "first_row_id": concat_optional(first_row_ids, counts, pa.int64()),
        }
        columns: list[pa.Array] = []
        for field in self.file_fields:
            name = field.name
            arrow_type = self.file_struct.field(name).type
            if name in values:
                columns.append(values[name])
            elif name == "partition":
                columns.append(self._partition(chunk, arrow_type))
            elif name in maps:
                columns.append(maps[name].arrow(arrow_type))
            elif name in EXTRA_NAMES:
                columns.append(concat_optional([d.extras.get(name) for d in chunk], counts, arrow_type))
            else:
                raise AssertionError(f"no column for {name}")
        assert all(len(c) == total for c in columns)
        return columns

    # ---- partition ----------------------------------------------------------------------------

    def unified(self, spec_id: int, partitions: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        """Partition tuples of one spec as tuples of the unified partition type (a field the
        spec lacks is null: Java's ``PartitionUtil.coercePartition``)."""
        positions = self._positions.get(spec_id)
        if positions is None:
            spec = self.metadata.spec_by_id(spec_id)
            index = {pf.field_id: i for i, pf in enumerate(spec.fields)}
            positions = self._positions[spec_id] = [index.get(f.field_id) for f in self.partition_type.fields]
        return [tuple(None if p is None else t[p] for p in positions) for t in partitions]

    def _partition(self, chunk: Sequence[DecodedManifest], arrow_type: pa.DataType) -> pa.Array:
        distinct: list[tuple[Any, ...]] = []
        index: dict[tuple[Any, ...], int] = {}
        codes = []
        for d in chunk:
            local = []
            for value in self.unified(d.spec_id, d.partitions):
                key = tuple(float_key(v) if v.__class__ is float else v for v in value)
                code = index.get(key)
                if code is None:
                    code = index[key] = len(distinct)
                    distinct.append(value)
                local.append(code)
            mapping = np.asarray(local, dtype=np.int32)
            codes.append(mapping[d.partition_codes] if len(mapping) else np.zeros(d.count, dtype=np.int32))
        values = to_arrow_array(distinct, self.partition_type, arrow_type)
        return values.take(pa.array(_column(codes, np.int32)))

    # ---- readable metrics ---------------------------------------------------------------------

    def _readable_metrics(self, maps: dict[str, FlatMap], count: int) -> pa.Array:
        if not self.with_metrics:
            return pa.nulls(count, self.metrics_type)
        ids = [f.field_id for f in self.metric_columns]
        where = {name: maps[name].index(ids) for name in MAP_NAMES}
        children = []
        for k, (field, column_field) in enumerate(zip(self.metric_columns, self.metrics_type)):
            metric_type: pa.StructType = column_field.type
            arrays = [maps[name].counts(where[name][:, k]) for name in _COUNT_MAPS]
            for name in ("lower_bounds", "upper_bounds"):
                bound_type = metric_type.field(len(arrays)).type
                arrays.append(maps[name].bounds(where[name][:, k], field.field_type, bound_type))
            children.append(pa.StructArray.from_arrays(arrays, fields=list(metric_type)))
        if not children:
            return pa.StructArray.from_arrays([], fields=[], mask=pa.array(np.zeros(count, dtype=bool)))
        return pa.StructArray.from_arrays(children, fields=list(self.metrics_type))


def _code(values: list[str], value: str) -> int:
    if value not in values:
        values.append(value)
    return values.index(value)
