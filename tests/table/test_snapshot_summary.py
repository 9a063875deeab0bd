"""Snapshot summaries (as Java 1.9 writes them), sequence numbers and v3 row lineage."""

from __future__ import annotations

import pyarrow as pa
import pytest

from icefloe import Catalog
from icefloe.manifests import read_manifest
from support.catalogs import ARROW_SCHEMA, rows

# Java 1.9.2 (Spark INSERT of (1,'a'),(2,'b'),(3,'b') into a table PARTITIONED BY (s) with
# write.summary.partition-limit=10) writes, engine keys aside:
#   added-data-files=2, added-records=3, added-files-size=..., changed-partition-count=2,
#   partition-summaries-included=true,
#   partitions.s=a=added-data-files=1,added-records=1,added-files-size=...,
#   partitions.s=b=added-data-files=1,added-records=2,added-files-size=...,
#   total-records=3, total-files-size=..., total-data-files=2, total-delete-files=0,
#   total-position-deletes=0, total-equality-deletes=0
# Without the limit (default 0) the partition-summaries-included and partitions.* keys are
# absent; an unpartitioned table counts one changed partition, and with a limit it says
# partition-summaries-included=true but writes no partitions.* key.

SIMPLE = pa.schema([pa.field("id", pa.int64()), pa.field("s", pa.string())])
DATA = pa.table({"id": [1, 2, 3], "s": ["a", "b", "b"]}, schema=SIMPLE)


def _sizes(catalog: Catalog, snapshot_id: int, table_name: str) -> dict[str, int]:
    table = catalog.load_table(table_name)
    snapshot = table.snapshot(snapshot_id)
    assert snapshot is not None
    return {
        table.spec().partition_to_path(f.partition, table.schema()): f.file_size_in_bytes
        for f in snapshot.added_data_files(table.io())
    }


@pytest.mark.parametrize("format_version", [1, 2, 3])
def test_partitioned_summary_with_partition_limit(catalog: Catalog, format_version: int) -> None:
    table = catalog.create_table(
        "db.p",
        SIMPLE,
        partition_by=["s"],
        properties={"write.summary.partition-limit": "10", "format-version": str(format_version)},
    )
    snapshot = table.append(DATA)
    assert snapshot is not None
    sizes = _sizes(catalog, snapshot.snapshot_id, "db.p")
    total = sizes["s=a"] + sizes["s=b"]
    assert dict(snapshot.summary) == {
        "operation": "append",
        "added-data-files": "2",
        "added-records": "3",
        "added-files-size": str(total),
        "changed-partition-count": "2",
        "partition-summaries-included": "true",
        "partitions.s=a": f"added-data-files=1,added-records=1,added-files-size={sizes['s=a']}",
        "partitions.s=b": f"added-data-files=1,added-records=2,added-files-size={sizes['s=b']}",
        "total-records": "3",
        "total-files-size": str(total),
        "total-data-files": "2",
        "total-delete-files": "0",
        "total-position-deletes": "0",
        "total-equality-deletes": "0",
    }
    # Java's key order: operation, counts, partition keys, totals.
    keys = list(snapshot.summary)
    assert keys.index("changed-partition-count") < keys.index("partitions.s=a") < keys.index("total-records")


def test_partition_limit_exceeded_or_default(memory_catalog: Catalog) -> None:
    default = memory_catalog.create_table("db.q", SIMPLE, partition_by=["s"])
    snapshot = default.append(DATA)
    assert snapshot is not None
    assert snapshot.summary["changed-partition-count"] == "2"
    assert "partition-summaries-included" not in snapshot.summary
    assert not any(k.startswith("partitions.") for k in snapshot.summary)

    small = memory_catalog.create_table(
        "db.r", SIMPLE, partition_by=["s"], properties={"write.summary.partition-limit": "1"}
    )
    snapshot = small.append(DATA)
    assert snapshot is not None
    assert snapshot.summary["changed-partition-count"] == "2"
    assert "partition-summaries-included" not in snapshot.summary
    assert not any(k.startswith("partitions.") for k in snapshot.summary)


def test_unpartitioned_summary(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table("db.u", SIMPLE)
    snapshot = table.append(DATA)
    assert snapshot is not None
    size = sum(f.file_size_in_bytes for f in snapshot.added_data_files(table.io()))
    assert dict(snapshot.summary) == {
        "operation": "append",
        "added-data-files": "1",
        "added-records": "3",
        "added-files-size": str(size),
        "changed-partition-count": "1",
        "total-records": "3",
        "total-files-size": str(size),
        "total-data-files": "1",
        "total-delete-files": "0",
        "total-position-deletes": "0",
        "total-equality-deletes": "0",
    }
    limited = memory_catalog.create_table(
        "db.v", SIMPLE, properties={"write.summary.partition-limit": "10", "format-version": "3"}
    )
    snapshot = limited.append(DATA)
    assert snapshot is not None
    assert snapshot.summary["partition-summaries-included"] == "true"
    assert not any(k.startswith("partitions.") for k in snapshot.summary)


def test_totals_accumulate(catalog: Catalog, format_version: int) -> None:
    table = catalog.create_table(
        "db.t", ARROW_SCHEMA, partition_by=["day"], properties={"format-version": str(format_version)}
    )
    first = table.append(rows(6))
    second = table.append(rows(2, start=6))
    assert first is not None and second is not None
    size_1 = sum(f.file_size_in_bytes for f in first.added_data_files(table.io()))
    size_2 = sum(f.file_size_in_bytes for f in second.added_data_files(table.io()))
    assert second.summary["added-data-files"] == "2"
    assert second.summary["added-records"] == "2"
    assert second.summary["changed-partition-count"] == "2"
    assert second.summary["total-records"] == "8"
    assert second.summary["total-data-files"] == "5"
    assert second.summary["total-files-size"] == str(size_1 + size_2)
    assert second.summary["total-delete-files"] == "0"


def test_sequence_numbers(catalog: Catalog, format_version: int) -> None:
    table = catalog.create_table("db.t", ARROW_SCHEMA, properties={"format-version": str(format_version)})
    snapshots = [table.append(rows(2, start=i * 2)) for i in range(3)]
    assert all(s is not None for s in snapshots)
    expected = [0, 0, 0] if format_version == 1 else [1, 2, 3]
    assert [s.sequence_number for s in snapshots] == expected  # type: ignore[union-attr]
    assert table.metadata.last_sequence_number == expected[-1]

    io = table.io()
    last = table.current_snapshot()
    assert last is not None
    manifests = last.all_manifests(io)
    by_snapshot = {m.added_snapshot_id: m for m in manifests}
    assert len(by_snapshot) == 3
    for snapshot, seq in zip(snapshots, expected):
        manifest = by_snapshot[snapshot.snapshot_id]  # type: ignore[union-attr]
        assert manifest.sequence_number == seq
        assert manifest.min_sequence_number == seq
        for entry in read_manifest(io, manifest):
            assert entry.sequence_number == seq  # inherited from the manifest list
            assert entry.file_sequence_number == seq
    tasks = table.new_scan().plan_files()
    assert sorted(t.data_sequence_number for t in tasks) == expected


def test_v3_row_lineage(catalog: Catalog) -> None:
    table = catalog.create_table("db.t", ARROW_SCHEMA, properties={"format-version": "3"})
    assert table.metadata.next_row_id == 0
    first = table.append(rows(5))
    assert first is not None
    assert (first.first_row_id, first.added_rows) == (0, 5)
    assert table.metadata.next_row_id == 5
    second = table.append(rows(3, start=5))
    assert second is not None
    assert (second.first_row_id, second.added_rows) == (5, 3)
    assert table.metadata.next_row_id == 8
    # Row ids of the summary are not summary keys (as Java): first-row-id lives on the snapshot.
    assert "first-row-id" not in second.summary
    manifests = {m.added_snapshot_id: m for m in second.all_manifests(table.io())}
    assert manifests[first.snapshot_id].first_row_id == 0
    assert manifests[second.snapshot_id].first_row_id == 5
    reloaded = catalog.load_table("db.t")
    assert reloaded.metadata.next_row_id == 8
    assert reloaded.snapshot(second.snapshot_id) == second


@pytest.mark.parametrize("format_version", [1, 2])
def test_no_row_lineage_before_v3(memory_catalog: Catalog, format_version: int) -> None:
    table = memory_catalog.create_table(
        "db.t", ARROW_SCHEMA, properties={"format-version": str(format_version)}
    )
    snapshot = table.append(rows(5))
    assert snapshot is not None
    assert snapshot.first_row_id is None and snapshot.added_rows is None
    assert table.metadata.next_row_id is None


def test_snapshot_schema_id_and_timestamps(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA)
    first = table.append(rows(1))
    second = table.append(rows(1, start=1))
    assert first is not None and second is not None
    assert first.schema_id == second.schema_id == table.schema().schema_id
    assert second.timestamp_ms > first.timestamp_ms
    assert table.metadata.last_updated_ms >= second.timestamp_ms
