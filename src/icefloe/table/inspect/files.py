"""The ``files`` and ``entries`` families as Arrow record batches, one per decoded manifest.

Each column is built from the ``DecodedManifest``'s arrays (``_arrays.py``): partition tuples
once per distinct tuple then taken per entry, metrics maps from their flat values, and
``readable_metrics`` by decoding each column's bounds as a whole array. No Python object is
made per file, so a table of 200,000 files costs a few numpy passes per manifest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from icefloe.arrow.convert import to_arrow_array
from icefloe.arrow.schema import schema_to_arrow
from icefloe.scan._columnar import DecodedManifest
from icefloe.scan._columnar._shared import EXTRA_NAMES
from icefloe.spec.manifest import ManifestContent
from icefloe.spec.schema import Schema
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.types import NestedField, StructType
from icefloe.table.inspect._arrays import (
    bounds_map,
    counts_map,
    decoded_bounds,
    int_array,
    metric_counts,
    optional_column,
)
from icefloe.table.inspect.schemas import (
    READABLE_METRICS,
    entries_schema,
    files_schema,
    partition_type,
    readable_metric_columns,
)

__all__ = ["FileRows"]

_COUNT_MAPS = {
    "column_sizes": "column_size",
    "value_counts": "value_count",
    "null_value_counts": "null_value_count",
    "nan_value_counts": "nan_value_count",
}


@dataclass
class _PartitionMapping:
    """Where each field of the unified partition type is in one spec's tuples."""

    positions: list[int | None]


class FileRows:
    """Builds rows of the files family (``entries=False``) or the entries family of one table."""

    def __init__(self, metadata: TableMetadata, *, entries: bool, readable_metrics: bool = True):
        self.metadata = metadata
        self.entries = entries
        self.schema: Schema = entries_schema(metadata) if entries else files_schema(metadata)
        self.arrow_schema = schema_to_arrow(self.schema)
        self.partition_type: StructType = partition_type(metadata)
        self.with_metrics = readable_metrics
        file_fields = (
            self.schema.find_field("data_file").field_type.fields  # type: ignore[union-attr]
            if entries
            else [f for f in self.schema.fields if f.name != READABLE_METRICS]
        )
        self.file_fields: list[NestedField] = list(file_fields)
        self.file_struct = (
            pa.struct(
                [self.arrow_schema.field("data_file").type.field(i) for i in range(len(self.file_fields))]
            )
            if entries
            else None
        )
        metrics_field = self.arrow_schema.field(READABLE_METRICS)
        self.metrics_type: pa.StructType = metrics_field.type
        self.metric_columns = readable_metric_columns(metadata.schema())
        self._mappings: dict[int, _PartitionMapping] = {}

    # ---- one manifest -------------------------------------------------------------------------

    def batch(self, decoded: DecodedManifest, *, live_only: bool) -> pa.RecordBatch:
        """The rows of one manifest: its live entries, or all of them (``live_only=False``)."""
        columns = self._file_columns(decoded)
        arrays: list[pa.Array]
        if self.entries:
            assert self.file_struct is not None
            arrays = [
                pa.array(decoded.status.astype(np.int32), type=pa.int32()),
                int_array(decoded.snapshot_id, decoded.snapshot_null, pa.int64()),
                int_array(decoded.sequence_number, decoded.sequence_null, pa.int64()),
                int_array(decoded.file_sequence_number, decoded.file_sequence_null, pa.int64()),
                pa.StructArray.from_arrays(columns, fields=list(self.file_struct)),
            ]
        else:
            arrays = columns
        arrays.append(self._readable_metrics(decoded))
        batch = pa.RecordBatch.from_arrays(arrays, schema=self.arrow_schema)
        if live_only:
            live = decoded.live()
            if not live.all():
                batch = batch.filter(pa.array(live))
        return batch

    def empty(self) -> pa.Table:
        return self.arrow_schema.empty_table()

    def _file_columns(self, decoded: DecodedManifest) -> list[pa.Array]:
        n = decoded.count
        extras = decoded.extras
        first_row_ids = extras.get("first_row_id")
        if decoded.manifest.first_row_id is None or decoded.manifest.content != ManifestContent.DATA:
            first_row_ids = None  # as Java's reader: no first row ids without the manifest's
        values: dict[str, Any] = {
            "content": pa.array(decoded.content.astype(np.int32), type=pa.int32()),
            "file_path": pa.array(decoded.file_path, type=pa.string()),
            "file_format": pa.array([str(f) for f in decoded.format_values], type=pa.string()).take(
                pa.array(decoded.formats.astype(np.int32))
            )
            if n
            else pa.array([], type=pa.string()),
            "spec_id": pa.array(np.full(n, decoded.spec_id, dtype=np.int32), type=pa.int32()),
            "record_count": pa.array(decoded.record_count, type=pa.int64()),
            "file_size_in_bytes": pa.array(decoded.file_size_in_bytes, type=pa.int64()),
            "first_row_id": first_row_ids,
        }
        columns: list[pa.Array] = []
        for field in self.file_fields:
            arrow_type = self._file_type(field.name)
            name = field.name
            if name == "partition":
                columns.append(self._partition(decoded, arrow_type))
            elif name in ("lower_bounds", "upper_bounds"):
                columns.append(bounds_map(decoded.bounds(name), arrow_type))
            elif name in _COUNT_MAPS:
                columns.append(counts_map(decoded.counts(name), arrow_type))
            elif name in EXTRA_NAMES:
                columns.append(optional_column(values.get(name, extras.get(name)), n, arrow_type))
            else:
                columns.append(values[name])
        return columns

    def _file_type(self, name: str) -> pa.DataType:
        if self.file_struct is not None:
            return self.file_struct.field(name).type
        return self.arrow_schema.field(name).type

    # ---- partition ----------------------------------------------------------------------------

    def _mapping(self, spec_id: int) -> _PartitionMapping:
        found = self._mappings.get(spec_id)
        if found is None:
            spec = self.metadata.spec_by_id(spec_id)
            index = {pf.field_id: i for i, pf in enumerate(spec.fields)}
            found = self._mappings[spec_id] = _PartitionMapping(
                [index.get(f.field_id) for f in self.partition_type.fields]
            )
        return found

    def unified(self, spec_id: int, partitions: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        """Partition tuples of one spec as tuples of the unified partition type (a field the
        spec lacks is null: Java's ``PartitionUtil.coercePartition``)."""
        positions = self._mapping(spec_id).positions
        return [tuple(None if p is None else t[p] for p in positions) for t in partitions]

    def _partition(self, decoded: DecodedManifest, arrow_type: pa.DataType) -> pa.Array:
        distinct = to_arrow_array(
            self.unified(decoded.spec_id, decoded.partitions), self.partition_type, arrow_type
        )
        return distinct.take(pa.array(decoded.partition_codes, type=pa.int32()))

    # ---- readable metrics ---------------------------------------------------------------------

    def _readable_metrics(self, decoded: DecodedManifest) -> pa.Array:
        n = decoded.count
        if not self.with_metrics:
            return pa.nulls(n, self.metrics_type)
        children = []
        for (_, field), column_field in zip(self.metric_columns, self.metrics_type):
            metric_type: pa.StructType = column_field.type
            arrays = [metric_counts(decoded.counts(name), field.field_id) for name in _COUNT_MAPS]
            for name in ("lower_bounds", "upper_bounds"):
                bound_type = metric_type.field(len(arrays)).type
                arrays.append(
                    decoded_bounds(decoded.bounds(name), field.field_id, field.field_type, bound_type)
                )
            children.append(pa.StructArray.from_arrays(arrays, fields=list(metric_type)))
        if not children:
            return pa.StructArray.from_arrays([], fields=[], mask=pa.array(np.zeros(n, dtype=bool)))
        return pa.StructArray.from_arrays(children, fields=list(self.metrics_type))
