"""Helpers for the tests of the file-removing operations (overwrite, delete, replace
partitions, rewrite, row delta) and their conflict scenarios.

The table mirrors the one of Java's ``TestOverwriteWithValidation``: ``id long`` and
``date date``, partitioned by ``identity(date)``; data files exist only in manifests, with
``id`` bounds as metrics (so row filters on ``id`` can be judged by metrics, filters on
``date`` by the partition).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa

from icefloe import Catalog, DataFile, Table
from icefloe.manifests import read_manifest
from icefloe.spec.conversions import to_bytes
from icefloe.spec.manifest import DeleteFile, ManifestEntryStatus, Metrics
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.types import LongType

SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), pa.field("date", pa.date32(), nullable=False)]
)
FAST_RETRIES = {"commit.retry.min-wait-ms": "1", "commit.retry.max-wait-ms": "5"}
DAY_1, DAY_2, DAY_3 = "2018-06-08", "2018-06-09", "2018-06-10"


def make_table(catalog: Catalog, format_version: int, name: str = "db.ops", **properties: str) -> Table:
    return catalog.create_table(
        name,
        SCHEMA,
        partition_by=["date"],
        properties={"format-version": str(format_version), **FAST_RETRIES, **properties},
    )


def _days(day: str) -> int:
    return (dt.date.fromisoformat(day) - dt.date(1970, 1, 1)).days


def data_file(
    table: Table, name: str, day: str, ids: tuple[int, int] = (0, 9), records: int = 10
) -> DataFile:
    """A data file of ``day`` whose ids lie in ``ids`` (inclusive bounds)."""
    metrics = Metrics(
        record_count=records,
        value_counts={1: records, 2: records},
        null_value_counts={1: 0, 2: 0},
        lower_bounds={1: to_bytes(LongType(), ids[0])},
        upper_bounds={1: to_bytes(LongType(), ids[1])},
    )
    file: DataFile = (
        DataFile.builder(table.spec(), table.schema())
        .with_path(f"/path/to/data-{name}.parquet")
        .with_format("parquet")
        .with_file_size_in_bytes(100)
        .with_partition([_days(day)] if table.spec().fields else [])
        .with_metrics(metrics)
        .build()
    )
    return file


def position_deletes(table: Table, name: str, day: str, referenced: DataFile | None = None) -> DeleteFile:
    builder = (
        DataFile.builder(table.spec(), table.schema())
        .with_path(f"/path/to/pos-{name}.parquet")
        .with_format("parquet")
        .with_file_size_in_bytes(10)
        .with_record_count(1)
        .with_partition([_days(day)])
        .of_position_deletes()
    )
    if referenced is not None:
        builder = builder.with_referenced_data_file(referenced.file_path)
    file: DeleteFile = builder.build()
    return file


def equality_deletes(table: Table, name: str, day: str) -> DeleteFile:
    file: DeleteFile = (
        DataFile.builder(table.spec(), table.schema())
        .with_path(f"/path/to/eq-{name}.parquet")
        .with_format("parquet")
        .with_file_size_in_bytes(10)
        .with_record_count(1)
        .with_partition([_days(day)])
        .of_equality_deletes(1)
        .build()
    )
    return file


def deletion_vector(table: Table, name: str, referenced: DataFile, offset: int = 4) -> DeleteFile:
    file: DeleteFile = (
        DataFile.builder(table.spec(), table.schema())
        .with_path(f"/path/to/dv-{name}.puffin")
        .with_format("puffin")
        .with_file_size_in_bytes(100)
        .with_record_count(1)
        .with_partition(list(referenced.partition))
        .of_position_deletes()
        .with_referenced_data_file(referenced.file_path)
        .with_content_offset(offset)
        .with_content_size_in_bytes(40)
        .build()
    )
    return file


def append(table: Table, *files: DataFile) -> Snapshot:
    op = table.new_fast_append()
    for file in files:
        op.append_file(file)
    op.commit()
    return current(table)


def add_deletes(table: Table, *deletes: DeleteFile) -> Snapshot:
    op = table.new_row_delta()
    for delete in deletes:
        op.add_deletes(delete)
    op.commit()
    return current(table)


def current(table: Table) -> Snapshot:
    snapshot = table.current_snapshot()
    assert snapshot is not None
    return snapshot


def live_paths(table: Table, snapshot: Snapshot | None = None) -> set[str]:
    """Names (stems) of the live data and delete files of a snapshot."""
    snapshot = snapshot or table.current_snapshot()
    if snapshot is None:
        return set()
    names = set()
    for manifest in snapshot.all_manifests(table.io()):
        for entry in read_manifest(table.io(), manifest):
            if entry.status != ManifestEntryStatus.DELETED:
                names.add(Path(entry.data_file.file_path).stem)
    return names


def statuses(table: Table, snapshot: Snapshot | None = None) -> dict[str, tuple[str, int | None, int | None]]:
    """Per file name in the snapshot's manifests: (status, snapshot id, data sequence number)."""
    snapshot = snapshot or table.current_snapshot()
    assert snapshot is not None
    result = {}
    for manifest in snapshot.all_manifests(table.io()):
        for entry in read_manifest(table.io(), manifest):
            result[Path(entry.data_file.file_path).stem] = (
                entry.status.name,
                entry.snapshot_id,
                entry.sequence_number,
            )
    return result
