"""The ``partitions`` metadata table (Java's ``PartitionsTable``): per partition of the unified
partition type, the counts and sizes of its live data and delete files and the snapshot that
last added one.

Aggregated column-wise: each manifest's distinct partition tuples get a table-wide group
number (one dictionary lookup per distinct tuple, not per file), then the counts are summed
per group with numpy. Partitions of different specs that coerce to the same tuple of the
unified type are one row, as in Java; its ``spec_id`` is that of the last file counted. A
partition is listed when a live file (data or delete) is in it: one whose files were all removed
is not, and one left with only delete files is (data counts zero), as Java's ``PartitionsTable``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pyarrow as pa

from icefloe.arrow.convert import to_arrow_array
from icefloe.arrow.schema import schema_to_arrow
from icefloe.scan._columnar import DecodedManifest
from icefloe.scan._columnar._shared import float_key
from icefloe.spec.manifest import FileContent
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.inspect.files import FileRows
from icefloe.table.inspect.schemas import partition_type, partitions_schema

__all__ = ["partitions"]

_DATA = int(FileContent.DATA)
_POSITION = int(FileContent.POSITION_DELETES)
_EQUALITY = int(FileContent.EQUALITY_DELETES)


def _key(partition: tuple[Any, ...]) -> tuple[Any, ...]:
    """A dictionary key: floats by their bits (-0.0 is not 0.0, as partition values)."""
    return tuple(float_key(v) if v.__class__ is float else v for v in partition)


class _Groups:
    """Running sums per group (partition), grown as new partitions appear."""

    def __init__(self) -> None:
        self.index: dict[tuple[Any, ...], int] = {}
        self.partitions: list[tuple[Any, ...]] = []
        self.size = 0
        self._columns: dict[str, np.ndarray] = {}

    def column(self, name: str, fill: int = 0) -> np.ndarray:
        array = self._columns.get(name)
        if array is None or len(array) < self.size:
            grown = np.full(max(self.size, 16) * 2, fill, dtype=np.int64)
            if array is not None:
                grown[: len(array)] = array
            array = self._columns[name] = grown
        return array

    def codes(self, partitions: list[tuple[Any, ...]]) -> np.ndarray:
        codes = []
        for partition in partitions:
            key = _key(partition)
            code = self.index.get(key)
            if code is None:
                code = self.index[key] = len(self.partitions)
                self.partitions.append(partition)
            codes.append(code)
        self.size = len(self.partitions)
        return np.asarray(codes, dtype=np.int64)


def partitions(metadata: TableMetadata, manifests: Iterable[DecodedManifest]) -> pa.Table:
    """The rows of the partitions table for the live entries of ``manifests``."""
    rows = FileRows(metadata, entries=False, readable_metrics=False)
    unified = partition_type(metadata)
    snapshots = sorted(metadata.snapshots, key=lambda s: s.snapshot_id)
    snapshot_ids = np.asarray([s.snapshot_id for s in snapshots], dtype=np.int64)
    snapshot_times = np.asarray([s.timestamp_ms for s in snapshots], dtype=np.int64)
    groups = _Groups()
    for decoded in manifests:
        live = decoded.live()
        if not live.any():
            continue
        # Only the partitions of live entries: a manifest also holds the deleted entries of
        # the commit that wrote it, and a partition whose files all went is not listed (Java
        # lists a partition once a live data or delete file is in it).
        used, inverse = np.unique(decoded.partition_codes[live], return_inverse=True)
        present = [decoded.partitions[code] for code in used.tolist()]
        group = groups.codes(rows.unified(decoded.spec_id, present))[inverse.reshape(-1)]
        content = decoded.content[live]
        records = decoded.record_count[live]
        sizes = decoded.file_size_in_bytes[live]
        for name, kind in (("data", _DATA), ("position", _POSITION), ("equality", _EQUALITY)):
            mask = content == kind
            if mask.any():
                np.add.at(groups.column(f"{name}_records"), group[mask], records[mask])
                np.add.at(groups.column(f"{name}_files"), group[mask], 1)
                if kind == _DATA:
                    np.add.at(groups.column("data_bytes"), group[mask], sizes[mask])
        spec_of = groups.column("spec_of_last", -1)
        spec_of[group] = decoded.spec_id  # numpy assigns in order: the last write wins
        # The commit time of each entry's snapshot (an expired snapshot counts for nothing).
        ids = decoded.snapshot_id[live]
        known = np.zeros(len(ids), dtype=bool)
        times = np.full(len(ids), -1, dtype=np.int64)
        if len(snapshot_ids):
            where = np.clip(np.searchsorted(snapshot_ids, ids), 0, len(snapshot_ids) - 1)
            known = snapshot_ids[where] == ids
            if decoded.snapshot_null is not None:
                known &= ~decoded.snapshot_null[live]
            times = np.where(known, snapshot_times[where], -1)
        _update_latest(groups, group[known], times[known], ids[known])
    return _table(metadata, groups, unified)


def _update_latest(groups: _Groups, group: np.ndarray, times: np.ndarray, ids: np.ndarray) -> None:
    """Java's ``Partition.update``: a group takes an entry's snapshot when its commit time is
    later than the group's; of equal times the first entry wins."""
    if not len(group):
        return
    order = np.lexsort((np.arange(len(group)), -times, group))  # by group, newest first, then order
    first = np.ones(len(order), dtype=bool)
    first[1:] = group[order][1:] != group[order][:-1]
    picked = order[first]
    latest = groups.column("latest", -1)
    latest_id = groups.column("latest_id", 0)
    newer = times[picked] > latest[group[picked]]
    latest[group[picked][newer]] = times[picked][newer]
    latest_id[group[picked][newer]] = ids[picked][newer]


def _table(metadata: TableMetadata, groups: _Groups, unified: Any) -> pa.Table:
    schema = partitions_schema(metadata)
    arrow_schema = schema_to_arrow(schema)
    n = groups.size

    def col(name: str, fill: int = 0) -> np.ndarray:
        return groups.column(name, fill)[:n]

    latest = col("latest", -1)
    columns: dict[str, pa.Array] = {
        "record_count": pa.array(col("data_records"), pa.int64()),
        "file_count": pa.array(col("data_files").astype(np.int32), pa.int32()),
        "total_data_file_size_in_bytes": pa.array(col("data_bytes"), pa.int64()),
        "position_delete_record_count": pa.array(col("position_records"), pa.int64()),
        "position_delete_file_count": pa.array(col("position_files").astype(np.int32), pa.int32()),
        "equality_delete_record_count": pa.array(col("equality_records"), pa.int64()),
        "equality_delete_file_count": pa.array(col("equality_files").astype(np.int32), pa.int32()),
        "last_updated_at": pa.array(latest * 1000, pa.int64(), mask=latest < 0).cast(
            pa.timestamp("us", tz="UTC")
        ),
        "last_updated_snapshot_id": pa.array(col("latest_id"), pa.int64(), mask=latest < 0),
    }
    if "partition" in arrow_schema.names:
        columns["partition"] = to_arrow_array(
            groups.partitions, unified, arrow_schema.field("partition").type
        )
        columns["spec_id"] = pa.array(col("spec_of_last", -1).astype(np.int32), pa.int32())
    return pa.Table.from_arrays([columns[name] for name in arrow_schema.names], schema=arrow_schema)
