"""Incremental append scans (Java's ``BaseIncrementalAppendScan``).

The history below mixes icefloe's own appends with snapshots committed by hand through the
catalog, as other engines write them: a position delete, an overwrite that adds a file, a
manifest rewrite (``replace``) and a merging append whose one manifest holds the appended files
next to EXISTING entries of older ones. Java's rules: only ``append`` snapshots in the range
count; each one's files come from the manifests it wrote; deletes are not applied.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icefloe import Catalog, DataFile, DeleteFile, Snapshot, Table
from icefloe.errors import NoSuchSnapshotError, SnapshotNotAncestorError, ValidationError
from icefloe.manifests import ManifestWriter, read_manifest, write_manifest_list
from icefloe.spec.manifest import ManifestContent, ManifestFile
from icefloe.spec.snapshots import SnapshotRefType, new_snapshot_id
from icefloe.spec.updates import AddSnapshot, AssertRefSnapshotId, RemoveSnapshots, SetSnapshotRef
from support.catalogs import ARROW_SCHEMA, local, rows, write_parquet_file

POSITION_SCHEMA = pa.schema(
    [
        pa.field("file_path", pa.string(), nullable=False, metadata={b"PARQUET:field_id": b"2147483546"}),
        pa.field("pos", pa.int64(), nullable=False, metadata={b"PARQUET:field_id": b"2147483545"}),
    ]
)


# ---------------------------------------------------------------------------------------------
# committing snapshots by hand


def _write_manifest(
    table: Table,
    snapshot_id: int,
    name: str,
    *,
    added: list[DataFile | DeleteFile] = (),  # type: ignore[assignment]
    existing_from: list[ManifestFile] = (),  # type: ignore[assignment]
    content: ManifestContent = ManifestContent.DATA,
) -> ManifestFile:
    """A manifest of ``snapshot_id``: ``added`` files as ADDED, the live entries of
    ``existing_from`` as EXISTING (keeping their snapshot and sequence numbers)."""
    io = table.io()
    with ManifestWriter(
        io,
        f"{table.location()}/metadata/{name}-{snapshot_id}.avro",
        spec=table.spec(),
        schema=table.schema(),
        format_version=table.format_version(),
        snapshot_id=snapshot_id,
        content=content,
    ) as writer:
        for file in added:
            writer.add(file)
        for manifest in existing_from:
            for entry in read_manifest(io, manifest):
                if entry.is_live:
                    assert entry.snapshot_id is not None
                    writer.existing(
                        entry.data_file, entry.snapshot_id, entry.sequence_number, entry.file_sequence_number
                    )
    return writer.to_manifest_file()


def _commit(
    catalog: Catalog, table: Table, operation: str, manifests: list[ManifestFile], snapshot_id: int
) -> Snapshot:
    """Commit a snapshot on main with exactly ``manifests``."""
    metadata = table.metadata
    parent = table.current_snapshot()
    assert parent is not None
    sequence_number = metadata.last_sequence_number + 1
    list_path = f"{table.location()}/metadata/snap-{snapshot_id}-1-{operation}.avro"
    write_manifest_list(
        table.io(),
        list_path,
        format_version=metadata.format_version,
        snapshot_id=snapshot_id,
        parent_snapshot_id=parent.snapshot_id,
        sequence_number=sequence_number,
        manifests=manifests,
        first_row_id=metadata.next_row_id,
    )
    snapshot = Snapshot(
        snapshot_id=snapshot_id,
        timestamp_ms=parent.timestamp_ms + 1,
        manifest_list=list_path,
        parent_snapshot_id=parent.snapshot_id,
        sequence_number=sequence_number,
        summary={"operation": operation},
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


def _parent_manifests(table: Table) -> list[ManifestFile]:
    parent = table.current_snapshot()
    assert parent is not None
    return parent.all_manifests(table.io())


def _data_file(table: Table, data: pa.Table, name: str) -> DataFile:
    day = data.column("day")[0].as_py()
    return write_parquet_file(table, data, f"day={day.isoformat()}/{name}.parquet")


def _one_day(n: int, start: int) -> pa.Table:
    """``n`` rows with ids ``start ..``, all on 2024-01-01 (one partition, one file)."""
    data = rows(n, start=start)
    return data.set_column(3, "day", pa.array([data.column("day")[0].as_py()] * n, pa.date32()))


@dataclass
class History:
    catalog: Catalog
    table: Table
    s1: Snapshot  # append 0..8 (three files, one per day)
    s2: Snapshot  # append 10..18
    s3: Snapshot  # delete: position deletes on one of s1's files
    s4: Snapshot  # overwrite: adds a file of 100..104 (not an append)
    s5: Snapshot  # append 20..28
    s6: Snapshot  # replace: every data manifest rewritten into one of EXISTING entries
    s7: Snapshot  # append (merging): one manifest with 30..34 ADDED and everything else EXISTING


@pytest.fixture
def history(sql_catalog: Catalog) -> History:
    catalog = sql_catalog
    table = catalog.create_table(
        "db.t", ARROW_SCHEMA, partition_by=["day"], properties={"format-version": "2"}
    )
    s1 = table.append(rows(9))
    s2 = table.append(rows(9, start=10))
    assert s1 is not None and s2 is not None

    # s3: delete positions 0 and 1 of an s1 file (ids 0 and 3 on 2024-01-01)
    target = next(f for f in s1.added_data_files(table.io()) if 0 in range(9) and f.partition == (19723,))
    deletes_path = local(table.location()) / "data" / "day=2024-01-01" / "deletes.parquet"
    pq.write_table(pa.table([[target.file_path] * 2, [0, 1]], schema=POSITION_SCHEMA), deletes_path)
    delete: DeleteFile = (
        DataFile.builder(table.spec(), table.schema())
        .of_position_deletes()
        .with_path(str(deletes_path))
        .with_format("parquet")
        .with_file_size_in_bytes(deletes_path.stat().st_size)
        .with_record_count(2)
        .with_partition_path("day=2024-01-01")
        .build()
    )
    sid = new_snapshot_id()
    deletes_manifest = _write_manifest(table, sid, "deletes", added=[delete], content=ManifestContent.DELETES)
    s3 = _commit(catalog, table, "delete", [deletes_manifest, *_parent_manifests(table)], sid)

    sid = new_snapshot_id()
    overwrite_file = _data_file(table, _one_day(5, 100), "overwrite")
    added = _write_manifest(table, sid, "overwrite", added=[overwrite_file])
    s4 = _commit(catalog, table, "overwrite", [added, *_parent_manifests(table)], sid)

    s5 = table.append(rows(9, start=20))
    assert s5 is not None

    sid = new_snapshot_id()
    parent = _parent_manifests(table)
    data_manifests = [m for m in parent if m.content == ManifestContent.DATA]
    rewritten = _write_manifest(table, sid, "rewritten", existing_from=data_manifests)
    s6 = _commit(catalog, table, "replace", [rewritten, *(m for m in parent if m not in data_manifests)], sid)

    sid = new_snapshot_id()
    parent = _parent_manifests(table)
    data_manifests = [m for m in parent if m.content == ManifestContent.DATA]
    merged = _write_manifest(
        table,
        sid,
        "merged",
        added=[_data_file(table, _one_day(5, 30), "merged")],
        existing_from=data_manifests,
    )
    s7 = _commit(catalog, table, "append", [merged, *(m for m in parent if m not in data_manifests)], sid)
    return History(catalog, table, s1, s2, s3, s4, s5, s6, s7)


def ids(scan: object) -> list[int]:
    data = scan.select("id").to_arrow()  # type: ignore[attr-defined]
    return sorted(data.column("id").to_pylist())


A1 = list(range(9))
A2 = list(range(10, 19))
A5 = list(range(20, 29))
A7 = list(range(30, 35))


# ---------------------------------------------------------------------------------------------
# ranges


def test_only_append_snapshots_of_the_range_count(history: History) -> None:
    h = history
    scan = h.table.new_incremental_append_scan()
    assert ids(scan.from_snapshot_exclusive(h.s1.snapshot_id)) == A2 + A5 + A7
    assert ids(scan.from_snapshot_inclusive(h.s1.snapshot_id)) == A1 + A2 + A5 + A7
    assert ids(scan) == A1 + A2 + A5 + A7  # no start: the whole ancestry
    assert ids(scan.from_snapshot_exclusive(h.s2.snapshot_id).to_snapshot(h.s6.snapshot_id)) == A5
    assert ids(scan.from_snapshot_exclusive(h.s3.snapshot_id).to_snapshot(h.s4.snapshot_id)) == []
    assert ids(scan.from_snapshot_inclusive(h.s4.snapshot_id).to_snapshot(h.s5.snapshot_id)) == A5
    assert ids(scan.to_snapshot(h.s2.snapshot_id)) == A1 + A2
    assert [s.snapshot_id for s in scan.from_snapshot_exclusive(h.s1.snapshot_id).snapshots()] == [
        h.s2.snapshot_id,
        h.s5.snapshot_id,
        h.s7.snapshot_id,
    ]


def test_files_rewritten_or_merged_later_are_still_found(history: History) -> None:
    # s5's files are EXISTING entries of s6's and s7's manifests by now; s7's own files share
    # a manifest with every older file. Each comes from the manifest its snapshot wrote.
    h = history
    scan = h.table.new_incremental_append_scan().from_snapshot_exclusive(h.s4.snapshot_id)
    tasks = scan.plan_files()
    assert sorted(t.file.record_count for t in tasks) == [3, 3, 3, 5]
    assert ids(scan) == A5 + A7
    assert all(t.data_sequence_number in (h.s5.sequence_number, h.s7.sequence_number) for t in tasks)


def test_deletes_are_not_applied(history: History) -> None:
    h = history
    assert 0 not in ids(h.table.new_scan())  # the table scan applies the position deletes
    scan = h.table.new_incremental_append_scan().from_snapshot_inclusive(h.s1.snapshot_id)
    assert all(t.deletes == () for t in scan.plan_files())
    assert ids(scan.to_snapshot(h.s3.snapshot_id)) == A1 + A2  # the rows as they were appended
    assert scan.to_snapshot(h.s3.snapshot_id).count() == 18


def test_filter_select_count_and_tasks(history: History) -> None:
    h = history
    scan = h.table.new_incremental_append_scan().from_snapshot_exclusive(h.s1.snapshot_id)
    filtered = scan.filter("id >= 15 AND id < 32")
    assert ids(filtered) == [15, 16, 17, 18, *A5, 30, 31]
    assert filtered.count() == 4 + 9 + 2
    # partition pruning: only 2024-01-01 files (ids = 0 mod 3 in appends; all of s7's)
    day = scan.filter("day = '2024-01-01'")
    assert {t.file.partition for t in day.plan_files()} == {(19723,)}
    assert ids(day) == [i for i in A2 + A5 if i % 3 == 0] + A7
    data = scan.select("name", "id").to_arrow()
    assert data.column_names == ["id", "name"]  # in schema order, as a table scan
    assert data.num_rows == 9 + 9 + 5
    groups = scan.option("read.split.target-size", "1000").plan_tasks()
    by_file: dict[str, list[tuple[int, int]]] = {}
    for group in groups:
        for task in group.tasks:
            by_file.setdefault(task.file_path, []).append((task.start, task.length))
    files = {t.file_path: t.file for t in scan.plan_files()}
    assert by_file.keys() == files.keys()
    for path, parts in by_file.items():  # each file's splits tile it, from its first row group
        parts.sort()
        offsets = files[path].split_offsets
        assert parts[0][0] == (offsets[0] if offsets else 0)
        assert all(a + n == b for (a, n), (b, _) in itertools.pairwise(parts))
        assert parts[-1][0] + parts[-1][1] == files[path].file_size_in_bytes
    assert scan.to_pandas().shape == (23, 6)


def test_empty_ranges(history: History) -> None:
    h = history
    scan = h.table.new_incremental_append_scan()
    # From a snapshot to itself: nothing (Java rejects this range instead).
    assert scan.from_snapshot_exclusive(h.s7.snapshot_id).plan_files() == []
    assert scan.from_snapshot_exclusive(h.s7.snapshot_id).to_arrow().num_rows == 0
    assert scan.from_snapshot_exclusive(h.s5.snapshot_id).to_snapshot(h.s6.snapshot_id).plan_files() == []


def test_empty_table(sql_catalog: Catalog) -> None:
    table = sql_catalog.create_table("db.empty", ARROW_SCHEMA)
    assert table.new_incremental_append_scan().plan_files() == []
    assert table.new_incremental_append_scan().to_arrow().num_rows == 0
    with pytest.raises(NoSuchSnapshotError, match="no current snapshot"):
        table.new_incremental_append_scan().from_snapshot_exclusive(42).plan_files()


# ---------------------------------------------------------------------------------------------
# errors


def test_missing_snapshots_are_named(history: History) -> None:
    scan = history.table.new_incremental_append_scan()
    with pytest.raises(NoSuchSnapshotError, match="123"):
        scan.from_snapshot_inclusive(123)
    with pytest.raises(NoSuchSnapshotError, match="456"):
        scan.to_snapshot(456)
    with pytest.raises(NoSuchSnapshotError, match="'nope'"):
        scan.to_snapshot("nope")
    # An exclusive start may be an expired snapshot; one that was never a parent is refused.
    unknown = scan.from_snapshot_exclusive(789)
    with pytest.raises(SnapshotNotAncestorError, match="789") as failure:
        unknown.plan_files()
    assert failure.value.snapshot_id == 789
    assert failure.value.end_snapshot_id == history.s7.snapshot_id
    assert isinstance(failure.value, ValidationError)


def test_a_start_on_another_branch_is_refused(history: History) -> None:
    h = history
    h.catalog.backend.commit_table(
        h.table.identifier_tuple, None, [], [SetSnapshotRef("b", h.s2.snapshot_id, SnapshotRefType.BRANCH)]
    )
    h.table.refresh()
    file = _data_file(h.table, _one_day(2, 50), "branch")
    h.table.new_append().to_branch("b").append_file(file).commit()
    on_branch = h.table.snapshot("b")
    assert on_branch is not None and on_branch.parent_snapshot_id == h.s2.snapshot_id
    scan = h.table.new_incremental_append_scan()
    for start in (scan.from_snapshot_exclusive, scan.from_snapshot_inclusive):
        with pytest.raises(SnapshotNotAncestorError, match=str(on_branch.snapshot_id)):
            start(on_branch.snapshot_id).plan_files()
    # Ranges along the branch, by id or by name.
    assert ids(scan.from_snapshot_exclusive(h.s1.snapshot_id).to_snapshot("b")) == [*A2, 50, 51]
    assert ids(scan.to_snapshot(on_branch.snapshot_id)) == [*A1, *A2, 50, 51]
    with pytest.raises(SnapshotNotAncestorError, match=str(h.s5.snapshot_id)):
        scan.from_snapshot_inclusive(h.s5.snapshot_id).to_snapshot("b").plan_files()


def test_an_expired_start_is_accepted_exclusively(history: History) -> None:
    h = history
    h.catalog.backend.commit_table(h.table.identifier_tuple, None, [], [RemoveSnapshots((h.s1.snapshot_id,))])
    h.table.refresh()
    assert h.table.snapshot(h.s1.snapshot_id) is None
    scan = h.table.new_incremental_append_scan()
    assert ids(scan.from_snapshot_exclusive(h.s1.snapshot_id)) == A2 + A5 + A7
    assert ids(scan) == A2 + A5 + A7  # history now starts at s2
    with pytest.raises(NoSuchSnapshotError, match=str(h.s1.snapshot_id)):
        scan.from_snapshot_inclusive(h.s1.snapshot_id)


def test_v1_appends(sql_catalog: Catalog) -> None:
    table = sql_catalog.create_table("db.v1", ARROW_SCHEMA, properties={"format-version": "1"})
    snapshots = [table.append(rows(4, start=10 * i)) for i in range(4)]
    assert all(s is not None for s in snapshots)
    scan = table.new_incremental_append_scan()
    first, second, third, _ = (s.snapshot_id for s in snapshots if s is not None)
    assert ids(scan.from_snapshot_exclusive(first).to_snapshot(third)) == [10, 11, 12, 13, 20, 21, 22, 23]
    assert ids(scan.from_snapshot_inclusive(second)) == [10, 11, 12, 13, 20, 21, 22, 23, 30, 31, 32, 33]
    assert scan.from_snapshot_inclusive(second).count() == 12
