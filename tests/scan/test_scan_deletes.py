"""Scans of tables with delete files.

icefloe has no row-level delete operation yet, so the delete snapshots here are committed
through the catalog by hand, as another engine's row delta would be: a position delete file
written with pyarrow, a delete manifest, a manifest list, and the snapshot.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icefloe import Catalog, DataFile, DeleteFile, Snapshot, Table
from icefloe.expressions import always_true
from icefloe.io import LocalFileIO
from icefloe.manifests import ManifestWriter, write_manifest_list
from icefloe.scan import FileScanTask, PositionDeletes, task_row_count
from icefloe.spec.manifest import ManifestContent
from icefloe.spec.partitioning import PartitionSpec
from icefloe.spec.snapshots import new_snapshot_id
from icefloe.spec.updates import AddSnapshot, AssertRefSnapshotId, SetSnapshotRef
from support.catalogs import ARROW_SCHEMA, local, rows, sorted_rows

POSITION_SCHEMA = pa.schema(
    [
        pa.field("file_path", pa.string(), nullable=False, metadata={b"PARQUET:field_id": b"2147483546"}),
        pa.field("pos", pa.int64(), nullable=False, metadata={b"PARQUET:field_id": b"2147483545"}),
    ]
)


def _commit_deletes(catalog: Catalog, table: Table, deletes: list[DeleteFile]) -> Snapshot:
    """Commit a snapshot adding ``deletes`` on top of main, as Java's RowDelta would."""
    metadata = table.metadata
    parent = table.current_snapshot()
    assert parent is not None
    snapshot_id = new_snapshot_id()
    sequence_number = metadata.last_sequence_number + 1
    io = table.io()
    manifest_path = f"{table.location()}/metadata/deletes-{snapshot_id}-m0.avro"
    with ManifestWriter(
        io,
        manifest_path,
        spec=table.spec(),
        schema=table.schema(),
        format_version=metadata.format_version,
        snapshot_id=snapshot_id,
        content=ManifestContent.DELETES,
    ) as writer:
        for delete in deletes:
            writer.add(delete)
    list_path = f"{table.location()}/metadata/snap-{snapshot_id}-1-deletes.avro"
    write_manifest_list(
        io,
        list_path,
        format_version=metadata.format_version,
        snapshot_id=snapshot_id,
        parent_snapshot_id=parent.snapshot_id,
        sequence_number=sequence_number,
        manifests=[writer.to_manifest_file(), *parent.all_manifests(io)],
        first_row_id=metadata.next_row_id,
    )
    snapshot = Snapshot(
        snapshot_id=snapshot_id,
        timestamp_ms=parent.timestamp_ms + 1,
        manifest_list=list_path,
        parent_snapshot_id=parent.snapshot_id,
        sequence_number=sequence_number,
        summary={"operation": "delete"},
        schema_id=metadata.current_schema_id,
        first_row_id=metadata.next_row_id,
        added_rows=0 if metadata.next_row_id is not None else None,
    )
    catalog.backend.commit_table(
        table.identifier_tuple,
        None,
        [AssertRefSnapshotId("main", parent.snapshot_id)],
        [AddSnapshot(snapshot), SetSnapshotRef("main", snapshot_id)],
    )
    table.refresh()
    return snapshot


def _position_deletes(table: Table, name: str, targets: dict[str, list[int]], partition: str) -> DeleteFile:
    path = local(table.location()) / "data" / partition / name
    file_paths = [p for p, positions in targets.items() for _ in positions]
    positions = [pos for p in targets.values() for pos in p]
    pq.write_table(pa.table([file_paths, positions], schema=POSITION_SCHEMA), path)
    delete: DeleteFile = (
        DataFile.builder(table.spec(), table.schema())
        .of_position_deletes()
        .with_path(str(path))
        .with_format("parquet")
        .with_file_size_in_bytes(path.stat().st_size)
        .with_record_count(len(positions))
        .with_partition_path(partition)
        .build()
    )
    return delete


def _file_of_day(table: Table, day: dt.date) -> str:
    days = (day - dt.date(1970, 1, 1)).days
    (task,) = [t for t in table.new_scan().plan_files() if t.file.partition == (days,)]
    return task.file.file_path


@pytest.fixture(params=[2, 3], ids=["v2", "v3"])
def deleted(request: pytest.FixtureRequest, memory_catalog: Catalog) -> tuple[Catalog, Table, Snapshot]:
    table = memory_catalog.create_table(
        "db.t", ARROW_SCHEMA, partition_by=["day"], properties={"format-version": str(request.param)}
    )
    before = table.append(rows(9))  # day 2024-01-02 holds ids 1, 4, 7 at positions 0, 1, 2
    assert before is not None
    target = _file_of_day(table, dt.date(2024, 1, 2))
    delete = _position_deletes(
        table, "deletes-1.parquet", {target: [0, 2], "s3://elsewhere/x.parquet": [0]}, "day=2024-01-02"
    )
    _commit_deletes(memory_catalog, table, [delete])
    return memory_catalog, table, before


def test_position_deletes_are_applied(deleted: tuple[Catalog, Table, Snapshot]) -> None:
    _, table, _ = deleted
    assert sorted(table.new_scan().select("id").to_arrow().column("id").to_pylist()) == [0, 2, 3, 4, 5, 6, 8]
    assert table.new_scan().count() == 7  # from metadata minus the deleted positions
    assert table.new_scan().filter("day = '2024-01-02'").count() == 1
    assert table.new_scan().filter("id > 3").count() == 4  # 4, 5, 6, 8
    assert sorted(table.new_scan().filter("id > 3").to_arrow().column("id").to_pylist()) == [4, 5, 6, 8]
    tasks = table.new_scan().plan_files()
    with_deletes = [t for t in tasks if t.deletes]
    assert len(with_deletes) == 1
    assert with_deletes[0].file.partition == ((dt.date(2024, 1, 2) - dt.date(1970, 1, 1)).days,)
    batches = list(table.new_scan().to_batches(batch_size=1))
    assert all(b.num_rows <= 1 for b in batches)
    assert sum(b.num_rows for b in batches) == 7


def test_time_travel_before_the_deletes(deleted: tuple[Catalog, Table, Snapshot]) -> None:
    _, table, before = deleted
    scan = table.new_scan().use_snapshot(before.snapshot_id)
    assert scan.count() == 9
    assert all(not t.deletes for t in scan.plan_files())
    assert sorted(scan.select("id").to_arrow().column("id").to_pylist()) == list(range(9))


def test_deletes_do_not_apply_to_newer_files(deleted: tuple[Catalog, Table, Snapshot]) -> None:
    _, table, _ = deleted
    newer = rows(3, start=100).set_column(3, "day", pa.array([dt.date(2024, 1, 2)] * 3))
    table.append(newer)  # a new file of day 2 with rows at positions 0, 1, 2 again
    ids = sorted(
        table.new_scan().filter("day = '2024-01-02'").select("id").to_arrow().column("id").to_pylist()
    )
    assert ids == [4, 100, 101, 102]
    assert table.new_scan().filter("day = '2024-01-02'").count() == 4
    assert table.new_scan().count() == 10


def test_equality_deletes_without_field_ids_are_applied_by_name(memory_catalog: Catalog) -> None:
    # A delete file written without Parquet field ids (as some tools do): its columns are matched
    # to the delete columns by name.
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA, properties={"format-version": "2"})
    table.append(rows(3))
    path = local(table.location()) / "data" / "eq-deletes.parquet"
    pq.write_table(pa.table({"id": pa.array([0], pa.int64())}), path)
    delete: DeleteFile = (
        DataFile.builder(table.spec(), table.schema())
        .of_equality_deletes(1)
        .with_path(str(path))
        .with_format("parquet")
        .with_file_size_in_bytes(path.stat().st_size)
        .with_record_count(1)
        .build()
    )
    _commit_deletes(memory_catalog, table, [delete])
    assert sorted(table.new_scan().to_arrow().column("id").to_pylist()) == [1, 2]
    assert table.new_scan().count() == 2
    assert table.new_scan().filter("id < 2").count() == 1
    assert sorted_rows(
        table.new_scan().use_snapshot(table.snapshots()[0].snapshot_id).to_arrow()
    ) == sorted_rows(rows(3))


class _CountingIO(LocalFileIO):
    """Counts how often each location is opened (through either access path)."""

    def __init__(self) -> None:
        super().__init__()
        self.opened: dict[str, int] = {}

    def _count(self, location: str) -> None:
        self.opened[location] = self.opened.get(location, 0) + 1

    def new_input(self, location: str, *, length: int | None = None):  # type: ignore[no-untyped-def]
        self._count(location)
        return super().new_input(location, length=length)

    def arrow_filesystem(self, location: str):  # type: ignore[no-untyped-def]
        self._count(location)
        return super().arrow_filesystem(location)


def test_a_delete_file_shared_by_many_data_files_is_read_once_per_scan(tmp_path: Path) -> None:
    path = tmp_path / "deletes.parquet"
    pq.write_table(
        pa.table([["a.parquet", "a.parquet", "b.parquet"], [0, 3, 1]], schema=POSITION_SCHEMA), path
    )
    spec = PartitionSpec()
    delete = (
        DataFile.builder(spec)
        .of_position_deletes()
        .with_path(str(path))
        .with_format("parquet")
        .with_file_size_in_bytes(path.stat().st_size)
        .with_record_count(3)
        .build()
    )

    def task(data_path: str) -> FileScanTask:
        data = (
            DataFile.builder(spec)
            .with_path(data_path)
            .with_format("parquet")
            .with_file_size_in_bytes(100)
            .with_record_count(10)
            .build()
        )
        return FileScanTask(data, (delete,), always_true(), spec, 0, 100)

    io = _CountingIO()
    deletes = PositionDeletes(io)
    assert deletes.for_task(task("a.parquet")).tolist() == [0, 3]
    assert deletes.for_task(task("b.parquet")).tolist() == [1]
    assert deletes.for_task(task("c.parquet")) is None
    assert io.opened == {str(path): 1}
    assert task_row_count(io, task("a.parquet"), deletes) == 8
