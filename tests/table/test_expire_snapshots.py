"""ExpireSnapshots: which snapshots and refs go, and which files are deleted (checked on disk).

The file rule is reachability (Java's ``ReachableFileCleanup``): after the commit, every file a
retained snapshot reaches (manifest list, manifests, live data and delete files) exists, and
every file that only expired snapshots reached is gone. ``_reach`` computes that from the
table's own files, independently of the code under test, and a randomized history checks it.
"""

from __future__ import annotations

import dataclasses
import os
import random
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pytest

from icefloe import Catalog, CommitFailedException, CommitStateUnknownException, Table
from icefloe.errors import ValidationError, ValidationException
from icefloe.manifests import read_manifest
from icefloe.spec.manifest import DataFile, ManifestEntryStatus
from icefloe.spec.partitioning import PartitionField, PartitionSpec
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.statistics import PartitionStatisticsFile, StatisticsFile
from icefloe.spec.transforms import parse_transform
from icefloe.spec.updates import AddPartitionSpec, AssertTableUUID, SetDefaultSpec
from icefloe.table.maintenance.expire_snapshots import ExpireSnapshots
from icefloe.table.maintenance.reachable_files import file_identity
from support.catalogs import ARROW_SCHEMA, local, memory_backend, rows, sorted_rows, write_parquet_file

FAST_RETRIES = {"commit.retry.min-wait-ms": "1", "commit.retry.max-wait-ms": "5"}
MERGE_ON_READ = {"write.delete.mode": "merge-on-read"}
SRC = Path(__file__).resolve().parents[2] / "src"


# ---- helpers --------------------------------------------------------------------------------------


def _table(catalog: Catalog, format_version: int = 2, name: str = "db.t", **properties: str) -> Table:
    return catalog.create_table(
        name, ARROW_SCHEMA, properties={"format-version": str(format_version), **FAST_RETRIES, **properties}
    )


def _tick() -> None:
    """Let the clock move, so consecutive snapshots have distinct timestamps."""
    time.sleep(0.003)


def _now() -> int:
    _tick()
    return int(time.time() * 1000)


def _appends(table: Table, n: int, *, start: int = 0) -> list[Snapshot]:
    snapshots = []
    for i in range(n):
        _tick()
        snapshot = table.append(rows(2, start=start + 10 * i))
        assert snapshot is not None
        snapshots.append(snapshot)
    return snapshots


def _ids(snapshots: list[Snapshot]) -> list[int]:
    return [s.snapshot_id for s in snapshots]


def _reach(table: Table, snapshot: Snapshot) -> set[str]:
    """Every file ``snapshot`` reaches: its manifest list, manifests and live content files."""
    io = table.io()
    found = {snapshot.manifest_list} if snapshot.manifest_list else set()
    for manifest in snapshot.all_manifests(io):
        found.add(manifest.manifest_path)
        found.update(
            e.data_file.file_path
            for e in read_manifest(io, manifest)
            if e.status != ManifestEntryStatus.DELETED
        )
    return {str(local(p)) for p in found}


def _reach_all(table: Table, snapshots: list[Snapshot]) -> set[str]:
    result: set[str] = set()
    for snapshot in snapshots:
        result |= _reach(table, snapshot)
    return result


def _stats_path(table: Table, name: str) -> str:
    path = local(table.location()) / "metadata" / name
    path.write_bytes(b"stats")
    return str(path)


def _tree(table: Table) -> set[str]:
    root = local(table.location())
    return {str(p) for p in root.rglob("*") if p.is_file() and "metadata.json" not in p.name}


class _Expectation:
    """Records what each snapshot reaches before the expiration, to judge the files after it."""

    def __init__(self, table: Table):
        self.table = table
        self.before = {s.snapshot_id: _reach(table, s) for s in table.metadata.snapshots}

    def check(self, table: Table) -> tuple[set[str], set[str]]:
        """Asserts the reachability rule; returns (kept, deleted)."""
        table.refresh()
        retained = {s.snapshot_id for s in table.metadata.snapshots}
        kept: set[str] = set()
        for snapshot in table.metadata.snapshots:
            kept |= _reach(table, snapshot)
        only_expired: set[str] = set()
        for snapshot_id, reached in self.before.items():
            if snapshot_id not in retained:
                only_expired |= reached
        only_expired -= kept
        missing = sorted(p for p in kept if not Path(p).exists())
        assert not missing, f"files of retained snapshots were deleted: {missing}"
        leftover = sorted(p for p in only_expired if Path(p).exists())
        assert not leftover, f"files only expired snapshots reached were kept: {leftover}"
        return kept, only_expired


# ---- which snapshots expire ---------------------------------------------------------------------


def test_retain_last_and_apply_changes_nothing(catalog: Catalog) -> None:
    table = _table(catalog)
    s1, s2, s3, s4 = _appends(table, 4)
    files_before = _tree(table)
    location = table.metadata_location
    op = table.expire_snapshots().expire_older_than(_now()).retain_last(2)
    assert _ids(op.apply()) == [s1.snapshot_id, s2.snapshot_id]
    assert _ids(op.apply()) == [s1.snapshot_id, s2.snapshot_id]  # repeatable
    assert catalog.load_table("db.t").metadata_location == location == table.metadata_location
    assert _tree(table) == files_before
    assert op.delete_summary is None

    op.commit()
    loaded = catalog.load_table("db.t")
    assert _ids(loaded.snapshots()) == [s3.snapshot_id, s4.snapshot_id]
    assert table.metadata_location == loaded.metadata_location
    assert [e.snapshot_id for e in loaded.history()] == [s3.snapshot_id, s4.snapshot_id]
    assert loaded.scan().to_arrow().num_rows == 8
    assert op.delete_summary is not None and op.delete_summary.manifest_lists == 2


def test_expire_older_than_keeps_newer_and_at_least_one(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    s1, s2, s3 = _appends(table, 3)
    # strictly older than the cutoff expires; a snapshot at the cutoff stays
    assert _ids(table.expire_snapshots().expire_older_than(s2.timestamp_ms).apply()) == [s1.snapshot_id]
    assert _ids(table.expire_snapshots().expire_older_than(s3.timestamp_ms).apply()) == _ids([s1, s2])
    # min-snapshots-to-keep defaults to 1: main's head always stays
    table.expire_snapshots().expire_older_than(_now()).commit()
    assert _ids(table.snapshots()) == [s3.snapshot_id]
    assert sorted_rows(table.scan().to_arrow()) == sorted_rows(
        pa.concat_tables([rows(2), rows(2, start=10), rows(2, start=20)])
    )


def test_defaults_come_from_table_properties(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    s1, s2, _s3 = _appends(table, 3)
    # Java's defaults: snapshots younger than 5 days stay
    assert table.expire_snapshots().apply() == []
    table.update_properties().set("history.expire.max-snapshot-age-ms", "1").set(
        "history.expire.min-snapshots-to-keep", "2"
    ).commit()
    _tick()
    assert _ids(table.expire_snapshots().apply()) == [s1.snapshot_id]
    # the builder overrides the properties
    assert _ids(table.expire_snapshots().retain_last(1).apply()) == _ids([s1, s2])
    assert table.expire_snapshots().expire_older_than(0).apply() == []
    table.update_properties().set("history.expire.max-snapshot-age-ms", "soon").commit()
    with pytest.raises(ValidationError, match=r"history\.expire\.max-snapshot-age-ms"):
        table.expire_snapshots()


def test_expire_snapshot_ids(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    s1, s2, s3, s4 = _appends(table, 4)
    table.manage_snapshots().create_tag("t1", s1.snapshot_id).create_branch("b", s2.snapshot_id).commit()
    op = table.expire_snapshots().expire_snapshot_id(s3.snapshot_id).expire_snapshot_id(123)
    assert _ids(op.apply()) == [s3.snapshot_id]  # unknown ids are ignored, as in Java
    op.commit()
    assert _ids(table.snapshots()) == _ids([s1, s2, s4])
    assert table.snapshot(s4.snapshot_id).parent_snapshot_id == s3.snapshot_id  # type: ignore[union-attr]
    assert table.scan().to_arrow().num_rows == 8  # the head's manifests are intact

    with pytest.raises(
        ValidationError, match=rf"Cannot expire {s1.snapshot_id}. Still referenced by refs: \[t1\]"
    ):
        table.expire_snapshots().expire_snapshot_id(s1.snapshot_id).apply()
    table.manage_snapshots().create_tag("t2", s2.snapshot_id).commit()
    with pytest.raises(ValidationError, match=r"Still referenced by refs: \[b, t2\]"):
        table.expire_snapshots().expire_snapshot_id(s2.snapshot_id).commit()
    with pytest.raises(ValidationError, match=r"refs: \[main\]"):
        table.expire_snapshots().expire_snapshot_id(s4.snapshot_id).commit()
    assert _ids(table.refresh().snapshots()) == _ids([s1, s2, s4])


def test_explicit_id_overrides_branch_retention(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    _s1, s2, _s3 = _appends(table, 3)
    op = table.expire_snapshots().retain_last(3).expire_snapshot_id(s2.snapshot_id)
    assert _ids(op.apply()) == [s2.snapshot_id]


def test_builder_arguments_are_checked(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    _appends(table, 1)
    op = table.expire_snapshots()
    with pytest.raises(
        ValidationError, match="Number of snapshots to retain must be at least 1, cannot be: 0"
    ):
        op.retain_last(0)
    with pytest.raises(ValidationError, match="snapshot id"):
        op.expire_snapshot_id("1")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="milliseconds"):
        op.expire_older_than(1.5)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="callable"):
        op.delete_with("rm")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="Executor"):
        op.execute_delete_with(object())  # type: ignore[arg-type]
    op.commit()
    with pytest.raises(ValidationError, match="already committed"):
        op.retain_last(2)
    with pytest.raises(ValidationError, match="already committed"):
        op.commit()


def test_empty_table(catalog: Catalog) -> None:
    table = _table(catalog)
    op = table.expire_snapshots().expire_older_than(_now())
    assert op.apply() == []
    op.commit()
    assert table.snapshots() == []
    assert op.delete_summary is not None and op.delete_summary.total == 0


# ---- refs -----------------------------------------------------------------------------------------


def test_branches_keep_their_own_retention(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    _s1, s2 = _appends(table, 2)
    table.manage_snapshots().create_branch("dev", s2.snapshot_id).commit()
    for i in range(3):
        _tick()
        file = write_parquet_file(table, rows(1, start=100 + i), f"dev-{i}.parquet")
        table.new_fast_append().to_branch("dev").append_file(file).commit()
    dev_ids = [s.snapshot_id for s in table.metadata.ancestors_of(table.refs()["dev"].snapshot_id)]
    _m3, m4 = _appends(table, 2, start=50)
    table.manage_snapshots().set_min_snapshots_to_keep("dev", 3).commit()

    table.expire_snapshots().expire_older_than(_now()).commit()
    kept = {s.snapshot_id for s in table.snapshots()}
    # main keeps its head (retain_last 1 by default); dev keeps its 3 newest ancestors
    assert kept == {m4.snapshot_id, *dev_ids[:3]}
    assert table.new_scan().use_ref("dev").to_arrow().num_rows == 7
    assert table.scan().to_arrow().num_rows == 8

    # a branch's max-snapshot-age: younger ancestors stay however many there are
    table.manage_snapshots().set_min_snapshots_to_keep("dev", 1).set_max_snapshot_age_ms(
        "dev", 3_600_000
    ).commit()
    assert table.expire_snapshots().expire_older_than(_now()).apply() == []


def test_tags_keep_their_snapshot_and_expired_refs_go(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog, **{"history.expire.max-ref-age-ms": "1"})
    s1, s2, s3, s4 = _appends(table, 4)
    manage = table.manage_snapshots()
    manage.create_tag("keep", s1.snapshot_id).set_max_ref_age_ms("keep", 86_400_000)
    manage.create_tag("old", s2.snapshot_id)  # the table's max ref age (1 ms) applies
    manage.create_branch("stale", s2.snapshot_id)
    manage.create_branch("fresh", s3.snapshot_id).set_max_ref_age_ms("fresh", 86_400_000)
    manage.commit()
    _tick()
    op = table.expire_snapshots().expire_older_than(_now())
    assert _ids(op.apply()) == [s2.snapshot_id]
    op.commit()
    refs = table.refs()
    assert set(refs) == {"main", "keep", "fresh"}  # main never ages out
    assert _ids(table.snapshots()) == _ids([s1, s3, s4])
    assert table.new_scan().use_ref("keep").to_arrow().num_rows == 2
    assert table.new_scan().use_ref("fresh").to_arrow().num_rows == 6


def test_unreferenced_snapshots_expire_by_age_only(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    s1, s2, s3 = _appends(table, 3)
    table.manage_snapshots().rollback_to(s1.snapshot_id).commit()
    # s2, s3 are no longer ancestors of main: retain_last does not protect them
    cutoff = s3.timestamp_ms
    assert _ids(table.expire_snapshots().expire_older_than(cutoff).retain_last(5).apply()) == [s2.snapshot_id]
    assert _ids(table.expire_snapshots().expire_older_than(_now()).retain_last(5).apply()) == _ids([s2, s3])


# ---- gc.enabled -------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["false", "FALSE", "no"])
def test_gc_disabled_refuses(memory_catalog: Catalog, value: str) -> None:
    table = _table(memory_catalog, **{"gc.enabled": value})
    _appends(table, 2)
    with pytest.raises(ValidationException, match=r"Cannot expire snapshots: GC is disabled.*'gc.enabled'"):
        table.expire_snapshots()
    txn = table.new_transaction()
    with pytest.raises(ValidationException, match=r"gc\.enabled"):
        txn.expire_snapshots()


def test_gc_disabled_concurrently_deletes_no_file(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    _appends(table, 2)
    op = table.expire_snapshots().expire_older_than(_now())
    other = memory_catalog.load_table("db.t")
    other.update_properties().set("gc.enabled", "false").commit()
    files = _tree(table)
    op.commit()  # no conflict with a property change: the snapshots go, their files stay
    assert len(memory_catalog.load_table("db.t").snapshots()) == 1
    assert _tree(table) == files
    assert op.delete_summary is not None and not op.delete_summary.complete
    # and once gc is off, a new expiration is refused (also when staged on top of the change)
    with pytest.raises(ValidationException, match=r"'gc\.enabled'"):
        table.refresh().expire_snapshots()
    txn = table.new_transaction()
    txn.update_properties().set("gc.enabled", "true").commit()
    txn.expire_snapshots()  # sees the staged property
    txn2 = table.new_transaction()
    txn2.update_properties().set("gc.enabled", "false").commit()
    with pytest.raises(ValidationException, match=r"gc\.enabled"):
        txn2.expire_snapshots()


# ---- files ------------------------------------------------------------------------------------------


def test_files_deleted_and_kept(catalog: Catalog, format_version: int) -> None:
    table = _table(catalog, format_version, **MERGE_ON_READ)
    a = write_parquet_file(table, rows(3, start=0), "a.parquet")
    b = write_parquet_file(table, rows(3, start=10), "b.parquet")
    c = write_parquet_file(table, rows(3, start=20), "c.parquet")
    table.new_fast_append().append_file(a).append_file(b).commit()  # shared manifest of a and b
    _tick()
    table.new_fast_append().append_file(c).commit()
    _tick()
    table.new_delete().delete_file(a.file_path).commit()  # rewrites the manifest of a and b
    _tick()
    if format_version > 1:
        table.delete("id = 11")  # a position delete file (v2) or deletion vector (v3) on b
        _tick()
    d = write_parquet_file(table, rows(3, start=30), "d.parquet")
    table.new_fast_append().append_file(d).commit()
    head = table.current_snapshot()
    assert head is not None
    expectation = _Expectation(table)

    op = table.expire_snapshots().expire_older_than(_now())
    op.commit()
    assert _ids(table.snapshots()) == [head.snapshot_id]
    _kept, deleted = expectation.check(table)
    assert not Path(a.file_path).exists()  # only expired snapshots had it
    for shared in (b, c, d):
        assert Path(shared.file_path).exists()
    summary = op.delete_summary
    assert summary is not None and summary.complete and summary.failed == ()
    assert summary.data_files == 1
    assert summary.manifest_lists == len(expectation.before) - 1 >= 3
    assert summary.total == len(deleted)
    expected_rows = [r for r in sorted_rows(pa.concat_tables([rows(3, 10), rows(3, 20), rows(3, 30)]))]
    if format_version > 1:
        expected_rows = [r for r in expected_rows if r["id"] != 11]
    assert sorted_rows(catalog.load_table("db.t").scan().to_arrow()) == expected_rows


def test_delete_files_of_expired_snapshots_are_deleted(catalog: Catalog) -> None:
    table = _table(catalog, 2, **MERGE_ON_READ)
    a = write_parquet_file(table, rows(4, start=0), "a.parquet")
    table.new_fast_append().append_file(a).commit()
    _tick()
    table.delete("id = 1")
    _tick()
    delete_files = {f.file_path for f in table.current_snapshot().added_delete_files(table.io())}  # type: ignore[union-attr]
    assert len(delete_files) == 1
    # rewrite a and its deletes into one clean file
    clean = write_parquet_file(
        table, rows(4, start=0).filter(pa.array([True, False, True, True])), "a2.parquet"
    )
    deletes = table.current_snapshot().added_delete_files(table.io())  # type: ignore[union-attr]
    head = table.current_snapshot()
    assert head is not None
    table.new_rewrite().validate_from_snapshot(head.snapshot_id).rewrite_files(
        [a, deletes[0]], [clean]
    ).commit()
    expectation = _Expectation(table)
    op = table.expire_snapshots().expire_older_than(_now())
    op.commit()
    expectation.check(table)
    assert not Path(a.file_path).exists()
    assert not any(Path(p).exists() for p in delete_files)
    assert op.delete_summary is not None and op.delete_summary.position_delete_files == 1
    assert sorted(r["id"] for r in table.scan().to_arrow().to_pylist()) == [0, 2, 3]


def test_a_file_deleted_then_added_again_is_kept(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    a = write_parquet_file(table, rows(2), "a.parquet")
    table.new_fast_append().append_file(a).commit()
    _tick()
    table.new_delete().delete_file(a).commit()
    _tick()
    table.new_fast_append().append_file(a).commit()
    expectation = _Expectation(table)
    table.expire_snapshots().expire_older_than(_now()).commit()
    assert len(table.snapshots()) == 1
    expectation.check(table)
    assert Path(a.file_path).exists()
    assert table.scan().to_arrow().num_rows == 2


def test_a_file_listed_under_another_spelling_is_kept(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    a = write_parquet_file(table, rows(2), "a.parquet")
    table.new_fast_append().append_file(a).commit()
    _tick()
    table.new_delete().delete_file(a).commit()
    _tick()
    # the same file again, as a file: URI (as another tool may have written it)
    table.new_fast_append().append_file(dataclasses.replace(a, file_path=f"file://{a.file_path}")).commit()
    table.expire_snapshots().expire_older_than(_now()).commit()
    assert len(table.snapshots()) == 1
    assert Path(a.file_path).exists()
    assert table.scan().to_arrow().num_rows == 2


def test_file_identity() -> None:
    assert file_identity("/t/x") == file_identity("file:/t/x") == file_identity("file:///t//x")
    assert file_identity("s3a://b/k") == file_identity("s3://b/k") != file_identity("s3://b/j")
    assert file_identity("gs://b/k") == "gs://b/k"
    assert file_identity("file://host/t/x") == "file://host/t/x"


def test_files_of_a_rolled_back_snapshot(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    s1, _ = _appends(table, 2)
    table.manage_snapshots().rollback_to(s1.snapshot_id).commit()
    rolled_back = [s for s in table.snapshots() if s.snapshot_id != s1.snapshot_id]
    added = {str(local(f.file_path)) for f in rolled_back[0].added_data_files(table.io())}
    expectation = _Expectation(table)
    table.expire_snapshots().expire_older_than(_now()).commit()
    expectation.check(table)
    assert not any(Path(p).exists() for p in added)
    assert table.scan().to_arrow().num_rows == 2


def test_statistics_files_of_expired_snapshots(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    s1, s2 = _appends(table, 2)
    old_stats = _stats_path(table, "s1.puffin")
    old_partition_stats = _stats_path(table, "s1-partitions.parquet")
    new_stats = _stats_path(table, "s2.puffin")
    table.update_statistics().set_statistics(StatisticsFile(s1.snapshot_id, old_stats, 5, 1)).set_statistics(
        StatisticsFile(s2.snapshot_id, new_stats, 5, 1)
    ).commit()
    table.update_partition_statistics().set_partition_statistics(
        PartitionStatisticsFile(s1.snapshot_id, old_partition_stats, 5)
    ).commit()
    op = table.expire_snapshots().expire_older_than(_now())
    op.commit()
    assert not Path(old_stats).exists() and not Path(old_partition_stats).exists()
    assert Path(new_stats).exists()
    assert [f.snapshot_id for f in table.statistics_files()] == [s2.snapshot_id]
    assert table.partition_statistics_files() == []
    assert op.delete_summary is not None and op.delete_summary.statistics_files == 2


def test_clean_expired_files_false_keeps_everything(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    _appends(table, 3)
    files = _tree(table)
    op = table.expire_snapshots().expire_older_than(_now()).clean_expired_files(False)
    op.commit()
    assert len(table.snapshots()) == 1
    assert _tree(table) == files
    assert op.delete_summary is None


def test_delete_with_receives_the_paths(catalog: Catalog) -> None:
    table = _table(catalog)
    _s1, s2, _s3 = _appends(table, 3)
    table.manage_snapshots().rollback_to(s2.snapshot_id).commit()  # s3's data file goes too
    expectation = _Expectation(table)
    deleted: list[str] = []
    threads: set[str] = set()

    def delete(path: str) -> None:
        threads.add(threading.current_thread().name)
        deleted.append(path)

    files = _tree(table)
    op = table.expire_snapshots().expire_older_than(_now()).delete_with(delete)
    op.commit()
    assert _tree(table) == files  # nothing deleted but through the function
    assert threads == {threading.current_thread().name}  # without an executor: the caller's thread
    only_expired = set().union(*(r for i, r in expectation.before.items() if i != s2.snapshot_id))
    only_expired -= expectation.before[s2.snapshot_id]
    assert {str(local(p)) for p in deleted} == only_expired
    assert len(deleted) == len(set(deleted))
    assert len([p for p in deleted if p.endswith(".parquet")]) == 1
    assert op.delete_summary is not None and op.delete_summary.total == len(deleted)


def test_execute_delete_with_an_executor(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    _appends(table, 6)
    table.manage_snapshots().rollback_to(table.snapshots()[0].snapshot_id).commit()
    expectation = _Expectation(table)
    threads: set[str] = set()
    io = table.io()

    def delete(path: str) -> None:
        threads.add(threading.current_thread().name)
        io.delete(path)

    with ThreadPoolExecutor(4, thread_name_prefix="mine") as pool:
        table.expire_snapshots().expire_older_than(_now()).delete_with(delete).execute_delete_with(
            pool
        ).plan_with(pool).commit()
    expectation.check(table)
    assert threads and all(name.startswith("mine") for name in threads)


def test_delete_failures_are_collected_not_raised(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    s1, _s2, _s3 = _appends(table, 3)
    table.manage_snapshots().rollback_to(s1.snapshot_id).commit()
    io = table.io()
    calls: dict[str, int] = {}

    def flaky(path: str) -> None:
        calls[path] = calls.get(path, 0) + 1
        if path.endswith(".parquet"):
            raise OSError(f"storage says no to {path}")
        if calls[path] == 1:
            raise OSError("transient")  # retried
        io.delete(path)

    op = table.expire_snapshots().expire_older_than(_now()).delete_with(flaky)
    op.commit()  # the commit succeeded: deletion problems are not raised
    assert _ids(table.refresh().snapshots()) == [s1.snapshot_id]
    summary = op.delete_summary
    assert summary is not None and not summary.complete
    assert len(summary.failed) == 2 and all(p.endswith(".parquet") for p in summary.failed)
    assert all(Path(local(p)).exists() for p in summary.failed)
    assert all(calls[p] == 3 for p in summary.failed)  # Java's three attempts
    assert summary.data_files == 0 and summary.manifest_lists == 2
    assert table.scan().to_arrow().num_rows == 2


def test_missing_files_do_not_crash(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    s1, s2, s3 = _appends(table, 3)
    table.manage_snapshots().rollback_to(s1.snapshot_id).commit()
    # someone already removed s2's manifest list and s3's data file
    assert s2.manifest_list is not None
    local(s2.manifest_list).unlink()
    for file in s3.added_data_files(table.io()):
        local(file.file_path).unlink()
    op = table.expire_snapshots().expire_older_than(_now())
    op.commit()
    assert _ids(table.snapshots()) == [s1.snapshot_id]
    summary = op.delete_summary
    assert summary is not None
    assert not summary.complete  # s2's manifests could not be listed
    assert summary.failed == ()
    assert s3.manifest_list is not None and not local(s3.manifest_list).exists()
    assert table.scan().to_arrow().num_rows == 2


def test_unreadable_retained_manifest_list_deletes_no_content(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    s1, s2, s3 = _appends(table, 3)
    table.manage_snapshots().create_tag("t", s2.snapshot_id).commit()
    table.manage_snapshots().rollback_to(s1.snapshot_id).commit()
    assert s2.manifest_list is not None
    local(s2.manifest_list).write_bytes(b"garbage")  # the tagged snapshot's list is damaged
    added = [str(local(f.file_path)) for f in s3.added_data_files(table.io())]
    op = table.expire_snapshots().expire_older_than(_now())
    op.commit()
    assert s3.snapshot_id not in _ids(table.snapshots())
    assert all(Path(p).exists() for p in added)  # reachability unknown: kept
    assert op.delete_summary is not None and not op.delete_summary.complete
    assert op.delete_summary.manifest_lists == 1 and op.delete_summary.manifests == 0


# ---- commits ------------------------------------------------------------------------------------------


def test_concurrent_append_is_retried_on_fresh_metadata(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    _s1, _s2 = _appends(table, 2)
    op = table.expire_snapshots().expire_older_than(_now() + 1_000)  # everything is old
    other = memory_catalog.load_table("db.t")
    (s3,) = _appends(other, 1, start=100)
    op.commit()  # fails on main's requirement, then re-plans: main's head is now s3
    assert _ids(memory_catalog.load_table("db.t").snapshots()) == [s3.snapshot_id]
    assert table.scan().to_arrow().num_rows == 6


def test_branch_moved_concurrently_is_respected(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    s1, s2, s3 = _appends(table, 3)
    table.manage_snapshots().create_branch("b", s3.snapshot_id).commit()
    op = table.expire_snapshots().expire_older_than(_now())
    assert _ids(op.apply()) == _ids([s1, s2])
    backend = memory_backend(memory_catalog)

    def move_branch(_: tuple[str, ...]) -> None:
        backend.set_before_swap(None)
        memory_catalog.load_table("db.t").manage_snapshots().replace_branch("b", s1.snapshot_id).commit()

    backend.set_before_swap(move_branch)
    expectation = _Expectation(table)
    op.commit()
    loaded = memory_catalog.load_table("db.t")
    assert loaded.refs()["b"].snapshot_id == s1.snapshot_id
    assert _ids(loaded.snapshots()) == _ids([s1, s3])
    expectation.check(loaded)
    assert loaded.new_scan().use_ref("b").to_arrow().num_rows == 2


def test_ref_added_concurrently_on_an_expired_id_fails_the_retry(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    _s1, s2, _s3 = _appends(table, 3)
    op = table.expire_snapshots().expire_snapshot_id(s2.snapshot_id)
    other = memory_catalog.load_table("db.t")
    other.manage_snapshots().create_tag("keep", s2.snapshot_id).commit()
    _appends(other, 1)  # main moved: the retry sees the tag
    with pytest.raises(ValidationError, match=r"Still referenced by refs: \[keep\]"):
        op.commit()
    assert s2.snapshot_id in _ids(memory_catalog.load_table("db.t").snapshots())


def test_failed_commit_deletes_nothing(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    _appends(table, 3)
    files = _tree(table)
    backend = memory_backend(memory_catalog)
    backend.fail_next_commits(10)
    with pytest.raises(CommitFailedException):
        table.expire_snapshots().expire_older_than(_now()).commit()
    assert _tree(table) == files
    backend.fail_next_commits(0)
    backend.commit_then_raise(1)
    with pytest.raises(CommitStateUnknownException):
        table.expire_snapshots().expire_older_than(_now()).commit()
    assert _tree(table) == files  # maybe committed: nothing is deleted
    assert len(table.refresh().snapshots()) == 1


def test_in_a_transaction_files_go_after_the_transaction_commits(catalog: Catalog) -> None:
    table = _table(catalog)
    s1, s2, s3 = _appends(table, 3)
    expectation = _Expectation(table)
    txn = table.new_transaction()
    op = txn.expire_snapshots().expire_older_than(_now())
    assert _ids(op.apply()) == _ids([s1, s2])
    op.commit()
    files = _tree(table)
    s4 = txn.append(rows(2, start=100))
    assert s4 is not None
    assert all(Path(f).exists() for f in files)  # staged: nothing deleted yet
    assert len(catalog.load_table("db.t").snapshots()) == 3
    txn.commit_transaction()
    loaded = catalog.load_table("db.t")
    assert _ids(loaded.snapshots()) == [s3.snapshot_id, s4.snapshot_id]
    expectation.check(loaded)
    assert op.delete_summary is not None and op.delete_summary.manifest_lists == 2
    assert loaded.scan().to_arrow().num_rows == 8


def test_a_transaction_retried_after_a_concurrent_commit(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    s1, s2 = _appends(table, 2)
    txn = table.new_transaction()
    txn.expire_snapshots().expire_older_than(_now() + 1_000).commit()
    txn.update_properties().set("k", "v").commit()
    other = memory_catalog.load_table("db.t")
    (s3,) = _appends(other, 1, start=100)
    expectation = _Expectation(other)
    txn.commit_transaction()  # main moved: re-planned on the fresh metadata, s2 goes too
    loaded = memory_catalog.load_table("db.t")
    assert _ids(loaded.snapshots()) == [s3.snapshot_id]
    assert loaded.properties()["k"] == "v"
    expectation.check(loaded)
    assert not any(Path(local(s.manifest_list)).exists() for s in (s1, s2) if s.manifest_list)


def test_a_failed_transaction_deletes_nothing(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    _appends(table, 3)
    txn = table.new_transaction()
    txn.expire_snapshots().expire_older_than(_now()).commit()
    txn.update_properties().set("k", "v").commit()
    files = _tree(table)
    memory_backend(memory_catalog).fail_next_commits(10)
    with pytest.raises(CommitFailedException):
        txn.commit_transaction()
    assert _tree(table) == files
    assert len(memory_catalog.load_table("db.t").snapshots()) == 3


def test_clean_expired_metadata_removes_unused_specs(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    s1, s2 = _appends(table, 2)
    spec = PartitionSpec((PartitionField(4, 1000, parse_transform("identity"), "day"),), spec_id=1)
    memory_catalog.backend.commit_table(
        table.identifier_tuple,
        None,
        [AssertTableUUID(table.metadata.table_uuid)],
        [AddPartitionSpec(spec), SetDefaultSpec()],
    )
    table.refresh()
    assert table.spec().spec_id == 1
    _tick()
    overwrite = table.overwrite(rows(2, start=50))  # everything rewritten under spec 1
    assert overwrite is not None
    # the overwrite still lists a spec-0 manifest (of its deleted entries): spec 0 is in use
    op = table.expire_snapshots().expire_older_than(_now()).clean_expired_metadata(True)
    assert op.apply() == [s1, s2]
    op.commit()
    assert set(table.specs()) == {0, 1}
    (last,) = _appends(table, 1, start=70)  # carries only the live spec-1 manifest
    assert {m.partition_spec_id for m in last.all_manifests(table.io())} == {1}
    table.expire_snapshots().expire_older_than(_now()).clean_expired_metadata(True).commit()
    assert set(table.specs()) == {1}
    assert table.scan().to_arrow().num_rows == 4
    # without the flag, specs stay
    table2 = _table(memory_catalog, name="db.t2")
    _appends(table2, 2)
    table2.expire_snapshots().expire_older_than(_now()).commit()
    assert set(table2.specs()) == {0}


def test_crash_during_deletion_leaves_a_readable_table(sql_catalog: Catalog, warehouse: Path) -> None:
    table = _table(sql_catalog)
    _appends(table, 3)
    table.manage_snapshots().create_tag("t", table.snapshots()[1].snapshot_id).commit()
    table.manage_snapshots().rollback_to(table.snapshots()[0].snapshot_id).commit()
    _appends(table, 2, start=200)
    refs_rows = {name: sorted_rows(table.new_scan().use_ref(name).to_arrow()) for name in table.refs()}
    script = textwrap.dedent(
        f"""
        import os, time
        import icefloe
        catalog = icefloe.load_catalog("test", type="sql", warehouse={str(warehouse)!r})
        table = catalog.load_table("db.t")
        count = [0]
        def delete(path):
            count[0] += 1
            if count[0] == 3:
                os._exit(17)  # the process dies mid-cleanup
            table.io().delete(path)
        table.expire_snapshots().expire_older_than(int(time.time() * 1000) + 5).delete_with(delete).commit()
        """
    )
    _tick()
    result = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "PYTHONPATH": str(SRC)},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 17, result.stderr
    loaded = sql_catalog.load_table("db.t")
    assert len(loaded.snapshots()) < 6  # the commit happened before the crash
    for name, expected in refs_rows.items():
        assert sorted_rows(loaded.new_scan().use_ref(name).to_arrow()) == expected
    # everything the retained snapshots reach is still there
    for snapshot in loaded.snapshots():
        assert all(Path(p).exists() for p in _reach(loaded, snapshot))


# ---- a randomized history ----------------------------------------------------------------------------


ACTIONS = (
    "append",
    "append",
    "fast",
    "branch-append",
    "delete",
    "overwrite",
    "row-delete",
    "re-add",
    "rollback",
    "ref",
    "rewrite-manifests",
)


def _random_history(table: Table, rng: random.Random, steps: int) -> Iterator[None]:
    """Commits a random mix of operations to ``table``; yields after each."""
    files: list[DataFile] = []
    counter = 0

    def new_file() -> DataFile:
        nonlocal counter
        counter += 1
        file = write_parquet_file(table, rows(3, start=1000 * counter), f"f{counter}.parquet")
        files.append(file)
        return file

    def live_files() -> list[str]:
        return sorted(task.file.file_path for task in table.new_scan().plan_files())

    for _ in range(steps):
        _tick()
        action = rng.choice(ACTIONS)
        head = table.current_snapshot()
        snapshots = table.snapshots()
        if action == "append" or head is None:
            table.new_append().append_file(new_file()).commit()
        elif action == "fast":
            table.new_fast_append().append_file(new_file()).append_file(new_file()).commit()
        elif action == "branch-append":
            branches = [n for n, r in table.refs().items() if r.is_branch and n != "main"]
            if branches:
                table.new_fast_append().to_branch(rng.choice(branches)).append_file(new_file()).commit()
        elif action in ("delete", "overwrite"):
            live = live_files()
            if live:
                victim = rng.choice(live)
                if action == "delete":
                    table.new_delete().delete_file(victim).commit()
                else:
                    table.new_overwrite().delete_file(victim).add_file(new_file()).commit()
        elif action == "row-delete":
            live = live_files()
            if live:
                table.delete(f"id = {1000 * int(Path(rng.choice(live)).stem[1:]) + 1}")
        elif action == "re-add":
            live = set(live_files())
            gone = [f for f in files if f.file_path not in live]
            if gone:
                table.new_fast_append().append_file(rng.choice(gone)).commit()
        elif action == "rollback":
            ancestors = table.metadata.ancestors_of(head.snapshot_id)[1:]
            if ancestors:
                table.manage_snapshots().rollback_to(rng.choice(ancestors).snapshot_id).commit()
        elif action == "ref":
            target = rng.choice(snapshots).snapshot_id
            name = f"r{len(table.refs())}"
            manage = table.manage_snapshots()
            if rng.random() < 0.5:
                manage.create_tag(name, target)
            else:
                manage.create_branch(name, target)
                if rng.random() < 0.5:
                    manage.set_min_snapshots_to_keep(name, rng.randint(1, 3))
            if rng.random() < 0.3:
                manage.set_max_ref_age_ms(name, 1)
            manage.commit()
        elif action == "rewrite-manifests":
            table.rewrite_manifests().cluster_by(lambda f: "all").commit()
        yield


@pytest.mark.parametrize("seed", range(12))
def test_random_histories_keep_exactly_the_reachable_files(sql_catalog: Catalog, seed: int) -> None:
    rng = random.Random(seed)
    table = _table(sql_catalog, 2, **MERGE_ON_READ)
    for _ in _random_history(table, rng, 18):
        pass
    snapshots = table.snapshots()
    refs_rows = {}
    op = table.expire_snapshots()
    if rng.random() < 0.8:
        op.expire_older_than(rng.choice(snapshots[len(snapshots) // 2 :]).timestamp_ms)
    op.retain_last(rng.randint(1, 3))
    referenced = {r.snapshot_id for r in table.refs().values()}
    free = [s.snapshot_id for s in snapshots if s.snapshot_id not in referenced]
    if free and rng.random() < 0.5:
        op.expire_snapshot_id(rng.choice(free))
    expected_expired = _ids(op.apply())
    _tick()
    expectation = _Expectation(table)
    op.commit()
    table.refresh()
    for name in table.refs():
        refs_rows[name] = sorted_rows(table.new_scan().use_ref(name).to_arrow())
    assert set(expected_expired).isdisjoint(_ids(table.snapshots()))
    expectation.check(table)
    for name, expected in refs_rows.items():
        assert sorted_rows(sql_catalog.load_table("db.t").new_scan().use_ref(name).to_arrow()) == expected


def test_expire_snapshots_is_a_pending_update(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    assert isinstance(table.expire_snapshots(), ExpireSnapshots)
    assert isinstance(table.new_transaction().expire_snapshots(), ExpireSnapshots)
