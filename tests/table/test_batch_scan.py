"""``table.new_batch_scan()`` and ``plan_tasks()``: split planning through the table API.

The tables have many row groups per file (``write.parquet.row-group-limit``), so splits cut
files at row-group boundaries; reading through the task groups must return exactly the rows of
a table scan, with deletes and filters, at any split size.
"""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icefloe import Catalog, DataFile, DeleteFile, Snapshot, Table
from icefloe.errors import NoSuchSnapshotError, ValidationError
from icefloe.manifests import ManifestWriter, write_manifest_list
from icefloe.scan import CombinedScanTask
from icefloe.spec.manifest import ManifestContent
from icefloe.spec.snapshots import SnapshotRefType, new_snapshot_id
from icefloe.spec.updates import AddSnapshot, AssertRefSnapshotId, SetSnapshotRef
from icefloe.table.scan import BatchScan, TableScan
from support.catalogs import ARROW_SCHEMA, local, rows, sorted_rows

POSITION_SCHEMA = pa.schema(
    [
        pa.field("file_path", pa.string(), nullable=False, metadata={b"PARQUET:field_id": b"2147483546"}),
        pa.field("pos", pa.int64(), nullable=False, metadata={b"PARQUET:field_id": b"2147483545"}),
    ]
)


def _commit_position_deletes(catalog: Catalog, table: Table, targets: dict[str, list[int]]) -> Snapshot:
    """Commit one unpartitioned position delete file for ``targets`` on main (a row delta)."""
    metadata = table.metadata
    parent = table.current_snapshot()
    assert parent is not None
    path = local(table.location()) / "data" / f"deletes-{len(metadata.snapshots)}.parquet"
    paths = [p for p, positions in targets.items() for _ in positions]
    positions = [pos for values in targets.values() for pos in values]
    pq.write_table(pa.table([paths, positions], schema=POSITION_SCHEMA), path)
    delete: DeleteFile = (
        DataFile.builder(table.spec(), table.schema())
        .of_position_deletes()
        .with_path(str(path))
        .with_format("parquet")
        .with_file_size_in_bytes(path.stat().st_size)
        .with_record_count(len(positions))
        .build()
    )
    snapshot_id = new_snapshot_id()
    io = table.io()
    with ManifestWriter(
        io,
        f"{table.location()}/metadata/deletes-{snapshot_id}.avro",
        spec=table.spec(),
        schema=table.schema(),
        format_version=metadata.format_version,
        snapshot_id=snapshot_id,
        content=ManifestContent.DELETES,
    ) as writer:
        writer.add(delete)
    list_path = f"{table.location()}/metadata/snap-{snapshot_id}-deletes.avro"
    write_manifest_list(
        io,
        list_path,
        format_version=metadata.format_version,
        snapshot_id=snapshot_id,
        parent_snapshot_id=parent.snapshot_id,
        sequence_number=metadata.last_sequence_number + 1,
        manifests=[writer.to_manifest_file(), *parent.all_manifests(io)],
        first_row_id=metadata.next_row_id,
    )
    snapshot = Snapshot(
        snapshot_id=snapshot_id,
        timestamp_ms=parent.timestamp_ms + 1,
        manifest_list=list_path,
        parent_snapshot_id=parent.snapshot_id,
        sequence_number=metadata.last_sequence_number + 1,
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


@pytest.fixture
def table(sql_catalog: Catalog) -> Table:
    """v2, unpartitioned: 300 + 200 rows in two files of 30 and 20 row groups (10 rows each)."""
    table = sql_catalog.create_table(
        "db.t", ARROW_SCHEMA, properties={"format-version": "2", "write.parquet.row-group-limit": "10"}
    )
    table.append(rows(300))
    table.append(rows(200, start=300))
    return table


def _row_groups(task_file: DataFile) -> int:
    return int(pq.read_metadata(local(task_file.file_path)).num_row_groups)


def _ids(data: pa.Table) -> list[int]:
    return sorted(data.column("id").to_pylist())


def test_new_batch_scan_is_the_table_scan_builder(table: Table) -> None:
    scan = table.new_batch_scan()
    assert isinstance(scan, BatchScan)
    refined = scan.filter("id < 10").select("id").case_sensitive(False).option("split-size", "1000")
    assert isinstance(refined, BatchScan)
    assert refined.options == {"split-size": "1000"}
    assert _ids(refined.to_arrow()) == list(range(10))
    assert [f.name for f in refined.schema().fields] == ["id"]
    assert type(table.new_scan()) is TableScan


@pytest.mark.parametrize("split_size", ["1", "500", "3000", "9000", "134217728"])
def test_reading_through_the_groups_returns_the_table_scans_rows(table: Table, split_size: str) -> None:
    files = table.new_scan().plan_files()
    assert sorted(_row_groups(t.file) for t in files) == [20, 30]
    expected = sorted_rows(table.new_scan().to_arrow())
    scan = table.new_batch_scan().option("read.split.target-size", split_size)
    assert sorted_rows(scan.to_arrow()) == expected
    batches = list(scan.to_batches(batch_size=7))
    assert all(b.num_rows <= 7 for b in batches)
    assert sum(b.num_rows for b in batches) == 500
    assert scan.count() == 500


def test_plan_tasks_splits_at_row_groups_and_packs(table: Table) -> None:
    files = {t.file_path: t.file for t in table.new_scan().plan_files()}
    # every split alone: a target below one row group's bytes, and no open-file cost
    groups = table.new_scan().option("split-size", "1").option("file-open-cost", "0").plan_tasks()
    assert all(isinstance(g, CombinedScanTask) for g in groups)
    assert len(groups) == 50
    for group in groups:
        (task,) = group.tasks
        offsets = files[task.file_path].split_offsets
        assert offsets is not None and task.start in offsets
    # the defaults: each split weighs the 4 MiB open cost, so 32 fit in 128 MiB
    default = table.new_scan().plan_tasks()
    # (the newest manifest is planned first; neighbouring splits of one file in a group are
    # merged: the 20 of the second append's file and 12 of the first's, then its other 18)
    assert [[t.file.record_count for t in g.tasks] for g in default] == [[200, 300], [300]]
    (_, head), (tail,) = default[0].tasks, default[1].tasks
    assert head.file_path == tail.file_path and head.start + head.length == tail.start
    total = sum(g.size_bytes for g in default)
    assert total == sum(f.file_size_in_bytes - (f.split_offsets or (0,))[0] for f in files.values())
    # estimated rows: each split's share of its file's row-group bytes, truncated (as Java)
    expected = sum(
        int(t.length / (t.file.file_size_in_bytes - t.file.split_offsets[0]) * t.file.record_count)
        for g in default
        for t in g.tasks
    )
    assert sum(g.estimated_rows_count for g in default) == expected
    assert 400 < expected <= 500
    # without the open cost, the whole (small) table is one group
    (group,) = table.new_scan().option("file-open-cost", "0").plan_tasks()
    assert len(group.tasks) == 2 and group.size_bytes == total
    # a target of about ten row groups
    target = 10 * (group.size_bytes // 50)
    sized = (
        table.new_scan()
        .option("read.split.target-size", str(target))
        .option("file-open-cost", "0")
        .plan_tasks()
    )
    assert all(g.size_bytes <= target or len(g.tasks) == 1 for g in sized)  # (a last split holds the footer)
    assert sum(len(g.tasks) for g in sized) <= 50
    assert 4 <= len(sized) <= 7  # (fewer when the last splits, holding page indexes and footers, are large)


def test_split_options_from_table_properties_and_scan_options(table: Table) -> None:
    table.update_properties().set("read.split.target-size", "1").set(
        "read.split.open-file-cost", "0"
    ).commit()
    scan = table.new_scan()
    assert (scan.target_split_size(), scan.split_lookback(), scan.split_open_file_cost()) == (1, 10, 0)
    assert len(scan.plan_tasks()) == 50
    assert len(scan.option("read.split.target-size", str(1 << 30)).plan_tasks()) == 1
    assert scan.option("split-size", "77").target_split_size() == 77
    with pytest.raises(ValidationError, match=r"read\.split\.planning-lookback"):
        scan.option("lookback", "0").plan_tasks()
    with pytest.raises(ValidationError, match="split-size"):
        scan.option("split-size", "big").plan_tasks()


def test_groups_with_deletes_and_filters(sql_catalog: Catalog, table: Table) -> None:
    first, second = sorted(table.new_scan().plan_files(), key=lambda t: t.file.record_count)
    # positions in several row groups of both files, and one whole row group (100..109)
    _commit_position_deletes(
        sql_catalog,
        table,
        {
            second.file_path: [0, 5, *range(100, 110), 299],
            first.file_path: [0, 199, 42],
        },
    )
    deleted = {0, 5, *range(100, 110), 299, 300, 499, 342}
    assert _ids(table.new_scan().to_arrow()) == [i for i in range(500) if i not in deleted]
    for split_size in ("1", "2000", "100000"):
        scan = table.new_batch_scan().option("split-size", split_size)
        assert sorted_rows(scan.to_arrow()) == sorted_rows(table.new_scan().to_arrow())
        narrow = scan.filter("id >= 95 AND id < 320").select("id")
        assert _ids(narrow.to_arrow()) == [i for i in range(95, 320) if i not in deleted]
        assert narrow.count() == len([i for i in range(95, 320) if i not in deleted])
        groups = scan.plan_tasks()
        assert all(t.deletes for g in groups for t in g.tasks)
    # the delete file's bytes count in every split's weight
    (group,) = table.new_scan().option("file-open-cost", "0").plan_tasks()
    delete_size = group.tasks[0].deletes[0].file_size_in_bytes
    assert group.size_bytes == sum(t.length for t in group.tasks) + len(group.tasks) * delete_size


def test_batch_scan_time_travel(table: Table) -> None:
    first = table.snapshots()[0]
    scan = table.new_batch_scan().use_snapshot(first.snapshot_id).option("split-size", "1")
    assert _ids(scan.to_arrow()) == list(range(300))
    assert len(scan.plan_tasks()) == 30
    assert _ids(table.new_batch_scan().as_of_time(first.timestamp_ms).to_arrow()) == list(range(300))
    assert _ids(table.new_batch_scan().use_ref("main").to_arrow()) == list(range(500))
    with pytest.raises(NoSuchSnapshotError):
        table.new_batch_scan().use_snapshot(1)


def test_batch_scan_of_a_tag(sql_catalog: Catalog, table: Table) -> None:
    first = table.snapshots()[0]
    sql_catalog.backend.commit_table(
        table.identifier_tuple, None, [], [SetSnapshotRef("v1", first.snapshot_id, SnapshotRefType.TAG)]
    )
    table.refresh()
    scan = table.new_batch_scan().use_ref("v1").option("split-size", "4000")
    assert _ids(scan.to_arrow()) == list(range(300))


def test_partitioned_table_and_outputs(sql_catalog: Catalog) -> None:
    table = sql_catalog.create_table(
        "db.p", ARROW_SCHEMA, partition_by=["day"], properties={"write.parquet.row-group-limit": "7"}
    )
    table.append(rows(90))
    scan = table.new_batch_scan().option("split-size", "1500").filter("day = '2024-01-02'")
    assert {t.file.partition for g in scan.plan_tasks() for t in g.tasks} == {
        ((dt.date(2024, 1, 2) - dt.date(1970, 1, 1)).days,)
    }
    assert _ids(scan.to_arrow()) == list(range(1, 90, 3))
    assert scan.to_pandas().shape == (30, 6)
    assert scan.to_polars().shape == (30, 6)
    con = scan.select("id").to_duckdb("t")
    assert con.execute("SELECT count(*), sum(id) FROM t").fetchone() == (30, sum(range(1, 90, 3)))


def test_empty_table(sql_catalog: Catalog) -> None:
    table = sql_catalog.create_table("db.e", ARROW_SCHEMA)
    assert table.new_batch_scan().plan_tasks() == []
    assert table.new_scan().plan_tasks() == []
    assert table.new_batch_scan().to_arrow().num_rows == 0
