"""icefloe.spark.actions.rewrite_data_files maintenance: expire_snapshots, remove_orphan_files, rewrite_manifests
and rewrite_position_deletes on real tables, with real Spark (local or local-cluster)."""

from __future__ import annotations

import datetime as dt
import os
import time
from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from icefloe import Catalog, Table
from icefloe import spark as isp
from icefloe.errors import ValidationError, ValidationException
from icefloe.io.local import local_path
from icefloe.manifests import read_manifest
from icefloe.spec.conversions import from_bytes
from icefloe.spec.manifest import (
    ContentFile,
    DataFile,
    FileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
)
from icefloe.spec.types import LongType
from icefloe.table.maintenance.orphans import flatten as _flatten
from icefloe.table.maintenance.orphans import location_of as _ident
from icefloe.table.maintenance.orphans import same as _same

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("g", pa.string())])
HOUR_S = 3600


def _rows(table: Table, snapshot_id: int | None = None) -> list[tuple[object, ...]]:
    scan = table.new_scan() if snapshot_id is None else table.new_scan().use_snapshot(snapshot_id)
    return sorted(tuple(r.values()) for r in scan.to_arrow().to_pylist())


def _batch(start: int, count: int = 10) -> pa.Table:
    ids = list(range(start, start + count))
    return pa.table({"id": ids, "g": ["a" if i % 2 else "b" for i in ids]})


def _table(catalog: Catalog, name: str, version: int = 2, batches: int = 4, **props: str) -> Table:
    properties = {"format-version": str(version), "write.delete.mode": "merge-on-read", **props}
    table = catalog.create_table(f"db.{name}", SCHEMA, partition_by=["g"], properties=properties)
    for batch in range(batches):
        table.append(_batch(batch * 10))
    return table


def _files_under(root: str) -> set[str]:
    found: set[str] = set()
    for directory, _, names in os.walk(local_path(root)):
        found.update(os.path.join(directory, n) for n in names)
    return found


def _age(path: str, seconds: int) -> None:
    then = time.time() - seconds
    os.utime(local_path(path), (then, then))


def _live_files(table: Table) -> set[str]:
    """Every file the table's current state reads (data and delete files)."""
    paths = set()
    for task in table.new_scan().plan_files():
        paths.add(local_path(task.file.file_path))
        paths.update(local_path(d.file_path) for d in task.deletes)
    return paths


# ---- expire_snapshots ---------------------------------------------------------------------------


@pytest.mark.every_session
def test_expire_deletes_in_tasks_and_counts_by_kind(spark: SparkSession, catalog: Catalog) -> None:
    table = _table(catalog, "expire")
    table.delete("id IN (1, 2, 3)")  # position deletes
    first = table.snapshots()[0].snapshot_id
    table.new_overwrite().overwrite_by_row_filter("g = 'a'").commit()  # data files go
    table.append(_batch(100))
    kept_rows = _rows(table)
    before = _files_under(table.location())
    lines: list[str] = []
    result = isp.actions.expire_snapshots(
        spark, table, retain_last=1, older_than=dt.datetime.now(dt.UTC), progress=lines.append
    )

    assert len(table.snapshots()) == 1
    assert first in result.expired_snapshot_ids and len(result.expired_snapshot_ids) == 6
    gone = before - _files_under(table.location())
    data_gone = {p for p in gone if p.endswith(".parquet") and not p.endswith("-deletes.parquet")}
    deletes_gone = {p for p in gone if p.endswith("-deletes.parquet")}
    assert result.deleted_data_files_count == len(data_gone) > 0
    assert result.deleted_position_delete_files_count == len(deletes_gone) > 0
    assert result.deleted_equality_delete_files_count == 0
    assert result.deleted_manifest_lists_count == 6
    assert result.deleted_manifests_count == len([p for p in gone if p.endswith(".avro")]) - 6
    assert result.failed_deletes == []
    assert lines and "expired 6 snapshots" in lines[0]
    # What the retained snapshot reads is still there and reads the same.
    assert _live_files(table) <= _files_under(table.location())
    assert _rows(table) == kept_rows


def test_expire_respects_refs_and_retained_snapshots(spark: SparkSession, catalog: Catalog) -> None:
    table = _table(catalog, "expire_refs")
    tagged = table.current_snapshot()
    assert tagged is not None
    table.manage_snapshots().create_tag("keep", tagged.snapshot_id).commit()
    tagged_rows = _rows(table, tagged.snapshot_id)
    tagged_files = _live_files(table)
    table.new_overwrite().overwrite_by_row_filter("g = 'b'").commit()
    table.append(_batch(100))
    result = isp.actions.expire_snapshots(spark, table, older_than=int(time.time() * 1000) + 1)
    assert tagged.snapshot_id not in result.expired_snapshot_ids
    assert result.expired_snapshot_ids  # the ancestors nobody keeps went
    # The tag's files stayed although the main branch no longer reads half of them.
    assert tagged_files <= _files_under(table.location())
    assert _rows(table, tagged.snapshot_id) == tagged_rows
    # A snapshot a ref keeps cannot be expired by id.
    with pytest.raises(ValidationError, match="keep"):
        isp.actions.expire_snapshots(spark, table, snapshot_ids=[tagged.snapshot_id])


def test_expire_without_cleanup_and_gc_disabled(spark: SparkSession, catalog: Catalog) -> None:
    table = _table(catalog, "expire_nogc", batches=3)
    table.new_overwrite().overwrite_by_row_filter("g = 'a'").commit()
    before = _files_under(table.location())
    result = isp.actions.expire_snapshots(
        spark, table, retain_last=1, older_than=dt.datetime.now(dt.UTC), clean_expired_files=False
    )
    assert len(result.expired_snapshot_ids) == 3
    assert result.deleted_data_files_count == result.deleted_manifest_lists_count == 0
    assert _files_under(table.location()) >= before - {local_path(table.metadata_location or "")}
    table.update_properties().set("gc.enabled", "false").commit()
    with pytest.raises(ValidationException, match="GC is disabled"):
        isp.actions.expire_snapshots(spark, table, retain_last=1)


# ---- remove_orphan_files ------------------------------------------------------------------------


def test_remove_orphan_files(spark: SparkSession, catalog: Catalog) -> None:
    table = _table(catalog, "orphans")
    table.delete("id = 5")
    rows = _rows(table)
    root = local_path(table.location())
    # Every file the table made is old; orphans are old too, except one written just now.
    for path in _files_under(table.location()):
        _age(path, 2 * HOUR_S)
    orphan_data = Path(root, "data", "g=a", "orphan.parquet")
    orphan_data.write_bytes(b"x")
    orphan_meta = Path(root, "metadata", "stray-m0.avro")
    orphan_meta.write_bytes(b"x")
    deep = Path(root, "data", "g=z", "x", "y", "z", "w")
    deep.mkdir(parents=True)
    (deep / "deep.parquet").write_bytes(b"x")
    hidden = Path(root, "data", "_temporary")
    hidden.mkdir()
    (hidden / "part-0.parquet").write_bytes(b"x")
    Path(root, "data", ".hidden.crc").write_bytes(b"x")
    old = [
        orphan_data,
        orphan_meta,
        deep / "deep.parquet",
        hidden / "part-0.parquet",
        Path(root, "data", ".hidden.crc"),
    ]
    for old_path in old:
        _age(str(old_path), 2 * HOUR_S)
    fresh = Path(root, "data", "g=b", "in-flight.parquet")
    fresh.write_bytes(b"x")
    expected = sorted(str(p) for p in (orphan_data, orphan_meta, deep / "deep.parquet"))

    cutoff = dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)
    dry = isp.actions.remove_orphan_files(spark, table, older_than=cutoff, dry_run=True)
    assert sorted(local_path(p) for p in dry.orphan_file_locations) == expected
    assert orphan_data.exists()

    result = isp.actions.remove_orphan_files(spark, table, older_than=cutoff)
    assert sorted(local_path(p) for p in result.orphan_file_locations) == expected
    assert result.failed_deletes == []
    assert not orphan_data.exists() and not orphan_meta.exists() and not (deep / "deep.parquet").exists()
    assert (
        fresh.exists() and (hidden / "part-0.parquet").exists() and Path(root, "data", ".hidden.crc").exists()
    )
    assert _rows(table) == rows
    # Everything any snapshot reaches stayed: old snapshots still read.
    for snapshot in table.snapshots():
        _rows(table, snapshot.snapshot_id)
    assert isp.actions.remove_orphan_files(spark, table, older_than=cutoff).orphan_file_locations == []


@pytest.mark.every_session
def test_remove_orphan_files_distributed_listing(spark: SparkSession, catalog: Catalog) -> None:
    # More partition directories than the driver lists itself: the rest is listed in tasks.
    table = catalog.create_table("db.many", SCHEMA, partition_by=["id"], properties={"format-version": "2"})
    table.append(_batch(0, 30))
    root = local_path(table.location())
    for path in _files_under(table.location()):
        _age(path, 2 * HOUR_S)
    orphans = []
    for i in (0, 17, 29):
        orphan = Path(root, "data", f"id={i}", "orphan.parquet")
        orphan.write_bytes(b"x")
        _age(str(orphan), 2 * HOUR_S)
        orphans.append(str(orphan))
    result = isp.actions.remove_orphan_files(
        spark, table, older_than=dt.datetime.now(dt.UTC) - dt.timedelta(hours=1), dry_run=True
    )
    assert sorted(local_path(p) for p in result.orphan_file_locations) == sorted(orphans)


def test_remove_orphan_files_prefix_mismatch_and_checks(spark: SparkSession, catalog: Catalog) -> None:
    table = _table(catalog, "prefixes", batches=1)
    cutoff = int(time.time() * 1000) + 10_000
    # The table's locations are plain paths; listing through a file: URI compares equal.
    uri = "file://" + local_path(table.location())
    assert (
        isp.actions.remove_orphan_files(
            spark, table, older_than=cutoff, location=uri, dry_run=True
        ).orphan_file_locations
        == []
    )
    # A listing under another authority conflicts with metadata that names one.
    valid = _ident("s3a://bucket/t/data/a.parquet", {"s3a": "s3"}, {})
    listed = _ident("s3://other/t/data/a.parquet", {"s3a": "s3"}, {})
    assert valid.path == listed.path and valid.scheme == listed.scheme == "s3"
    assert not _same(valid.authority, listed.authority)
    assert _same(None, "file") and _same("", "s3")
    mapped = _ident("s3://other/t/x", {}, _flatten({"Other, bucket": "b"}, "x"))
    assert mapped.authority == "b"

    with pytest.raises(ValidationError, match="one minute"):
        isp.actions.remove_orphan_files(spark, table, older_than=dt.datetime.now(dt.UTC))
    with pytest.raises(ValidationError, match="prefix_mismatch_mode"):
        isp.actions.remove_orphan_files(spark, table, prefix_mismatch_mode="none")
    table.update_properties().set("gc.enabled", "false").commit()
    with pytest.raises(ValidationException, match="GC is disabled"):
        isp.actions.remove_orphan_files(spark, table)


def test_remove_orphan_files_prefix_mismatch_modes(
    spark: SparkSession, catalog: Catalog, tmp_path: Path
) -> None:
    # Metadata that names its files under an authority the listing does not report.
    table = _table(catalog, "authority", batches=1)
    for path in _files_under(table.location()):
        _age(path, 2 * HOUR_S)
    data_file = next(iter(table.new_scan().plan_files())).file
    moved = data_file.copy(file_path="file://elsewhere" + local_path(data_file.file_path))
    table.new_overwrite().delete_file(data_file).add_file(moved).commit()
    # Only the new spelling remains in metadata (the file itself stays): the overwrite's
    # DELETED entry names the old one, so its manifests are rewritten and the rest expired.
    table.rewrite_manifests().cluster_by(lambda f: 0).commit()
    table.expire_snapshots().retain_last(1).expire_older_than(
        int(time.time() * 1000) + 1
    ).clean_expired_files(False).commit()
    for path in _files_under(table.location()):
        _age(path, 2 * HOUR_S)
    cutoff = dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)
    with pytest.raises(ValidationException, match="authority"):
        isp.actions.remove_orphan_files(spark, table, older_than=cutoff, dry_run=True)
    ignored = isp.actions.remove_orphan_files(
        spark, table, older_than=cutoff, dry_run=True, prefix_mismatch_mode="ignore"
    )
    assert local_path(data_file.file_path) not in {local_path(p) for p in ignored.orphan_file_locations}
    deleted = isp.actions.remove_orphan_files(
        spark, table, older_than=cutoff, dry_run=True, prefix_mismatch_mode="delete"
    )
    assert local_path(data_file.file_path) in {local_path(p) for p in deleted.orphan_file_locations}
    equal = isp.actions.remove_orphan_files(
        spark, table, older_than=cutoff, dry_run=True, equal_authorities={"elsewhere": ""}
    )
    assert local_path(data_file.file_path) not in {local_path(p) for p in equal.orphan_file_locations}


# ---- rewrite_manifests --------------------------------------------------------------------------


@pytest.mark.every_session
@pytest.mark.parametrize("version", [1, 2, 3])
def test_rewrite_manifests_clusters_by_partition(spark: SparkSession, catalog: Catalog, version: int) -> None:
    table = _table(catalog, f"manifests_v{version}", version=version, batches=6)
    if version >= 2:
        table.delete("id IN (3, 4)")
    rows = _rows(table)
    before = table.current_snapshot()
    assert before is not None
    data_before = [m for m in before.all_manifests(table.io()) if m.content == ManifestContent.DATA]
    assert len(data_before) == 6
    entries_before = {
        e.data_file.file_path: (
            e.snapshot_id,
            e.sequence_number,
            e.file_sequence_number,
            e.data_file.first_row_id,
        )
        for m in data_before
        for e in _entries(table, m)
    }
    lines: list[str] = []
    # A tiny target: one manifest per partition (the two partitions are 'a' and 'b').
    result = isp.actions.rewrite_manifests(
        spark, table, target_manifest_size_bytes=4000, progress=lines.append
    )
    assert result.rewritten_manifests_count == 6
    after = table.current_snapshot()
    assert after is not None and after.operation == "replace"
    data_after = [m for m in after.all_manifests(table.io()) if m.content == ManifestContent.DATA]
    assert len(data_after) == result.added_manifests_count >= 2
    for manifest in data_after:
        partitions = {e.data_file.partition for e in _entries(table, manifest)}
        assert len(partitions) == 1  # clustered
        assert all(e.status == 0 or e.status == 1 for e in _entries(table, manifest))
    entries_after = {
        e.data_file.file_path: (
            e.snapshot_id,
            e.sequence_number,
            e.file_sequence_number,
            e.data_file.first_row_id,
        )
        for m in data_after
        for e in _entries(table, m)
    }
    assert entries_after == entries_before
    # No manifest of the job is left unused (v1 commits copies with the snapshot ids filled in).
    used = {local_path(m.manifest_path) for m in after.all_manifests(table.io())}
    written = {p for p in _files_under(table.location()) if os.path.basename(p).startswith("optimized-m-")}
    assert written <= used
    assert bool(written) == (version >= 2)  # v2+ commits the job's manifests as they are
    assert _rows(table) == rows
    if version >= 2:  # delete manifests are kept as they are
        deletes = [
            {m.manifest_path for m in s.all_manifests(table.io()) if m.content == ManifestContent.DELETES}
            for s in (before, after)
        ]
        assert deletes[0] == deletes[1]
    assert lines
    # One manifest within the target: nothing to do.
    table2 = _table(catalog, f"manifests_one_v{version}", version=version, batches=1)
    assert isp.actions.rewrite_manifests(spark, table2).rewritten_manifests_count == 0


def test_rewrite_manifests_default_target_and_filters(spark: SparkSession, catalog: Catalog) -> None:
    table = _table(catalog, "manifests_default", batches=5)
    rows = _rows(table)
    result = isp.actions.rewrite_manifests(spark, table)
    assert (result.rewritten_manifests_count, result.added_manifests_count) == (5, 1)
    assert _rows(table) == rows
    table.append(_batch(200))
    skipped = isp.actions.rewrite_manifests(spark, table, rewrite_if=lambda m: False)
    assert skipped.rewritten_manifests_count == 0
    with pytest.raises(ValidationError, match="spec 7"):
        isp.actions.rewrite_manifests(spark, table, spec_id=7)
    with pytest.raises(ValidationError, match="positive"):
        isp.actions.rewrite_manifests(spark, table, target_manifest_size_bytes=0)


def _entries(table: Table, manifest: ManifestFile) -> list[ManifestEntry]:
    spec = table.specs()[manifest.partition_spec_id]
    return [
        e
        for e in read_manifest(table.io(), manifest, partition_type=spec.partition_type(table.schema()))
        if e.is_live
    ]


# ---- rewrite_position_deletes -------------------------------------------------------------------


def _position_deletes(table: Table) -> list[tuple[ContentFile, int | None]]:
    """(delete file, data sequence number) of the live position delete entries."""
    snapshot = table.current_snapshot()
    assert snapshot is not None
    found = []
    for manifest in snapshot.all_manifests(table.io()):
        if manifest.content == ManifestContent.DELETES:
            for e in _entries(table, manifest):
                if e.data_file.content == FileContent.POSITION_DELETES:
                    found.append((e.data_file, e.sequence_number))
    return found


@pytest.mark.every_session
def test_rewrite_position_deletes_compacts_and_drops_dangling(spark: SparkSession, catalog: Catalog) -> None:
    table = _table(catalog, "posdeletes", batches=3)
    for i in (1, 2, 3, 4, 5, 11, 12, 21):
        table.delete(f"id = {i}")
    before = _position_deletes(table)
    assert len(before) == 8
    rows = _rows(table)
    lines: list[str] = []
    result = isp.actions.rewrite_position_deletes(
        spark, table, options={"min-input-files": "2"}, progress=lines.append
    )
    after = _position_deletes(table)
    assert result.rewritten_delete_files_count == 8
    assert result.added_delete_files_count == len(after) == 2  # one per partition
    assert result.rewritten_bytes_count == sum(f.file_size_in_bytes for f, _ in before)
    assert result.added_bytes_count == sum(f.file_size_in_bytes for f, _ in after)
    by_partition: dict[tuple[object, ...], list[int | None]] = {}
    for file, seq in before:
        by_partition.setdefault(file.partition, []).append(seq)
    for file, seq in after:
        assert seq == max(s for s in by_partition[file.partition] if s is not None)
    current = table.current_snapshot()
    assert current is not None and current.operation == "replace"
    assert _rows(table) == rows
    assert lines
    # Nothing left to do (two files, one per partition, below min-input-files 5).
    assert isp.actions.rewrite_position_deletes(spark, table).rewritten_delete_files_count == 0


def test_rewrite_position_deletes_drops_dangling_deletes(spark: SparkSession, catalog: Catalog) -> None:
    table = _table(catalog, "dangling", batches=2)
    table.delete("id IN (1, 3)")  # batch 0, partition a
    table.delete("id IN (11, 13)")  # batch 1, partition a
    table.delete("id IN (0, 2)")  # batch 0, partition b
    # Drop the data files of batch 0: their deletes become dangling.
    old = [t.file for t in table.new_scan().plan_files() if t.file.record_count and _min_id(t.file) < 10]
    assert len(old) == 2
    _drop(table, old)
    rows = _rows(table)
    result = isp.actions.rewrite_position_deletes(spark, table, options={"rewrite-all": "true"})
    assert result.rewritten_delete_files_count == 3
    after = _position_deletes(table)
    # Partition b only had dangling deletes: no file left. Partition a keeps batch 1's two.
    assert len(after) == 1 and result.added_delete_files_count == 1
    assert after[0][0].record_count == 2
    assert after[0][0].partition == ("a",)
    assert _rows(table) == rows


def test_rewrite_position_deletes_where_and_options(spark: SparkSession, catalog: Catalog) -> None:
    table = _table(catalog, "posdeletes_where", batches=3)
    for i in (1, 2, 3, 4, 5, 6):
        table.delete(f"id = {i}")
    result = isp.actions.rewrite_position_deletes(
        spark, table, where="g = 'a'", options={"rewrite-all": "true"}
    )
    assert result.rewritten_delete_files_count == 3
    partitions = sorted(f.partition for f, _ in _position_deletes(table))
    assert partitions == [("a",), ("b",), ("b",), ("b",)]
    with pytest.raises(ValidationError, match="rewrite-job-order"):
        isp.actions.rewrite_position_deletes(spark, table, options={"rewrite-job-order": "x"})
    with pytest.raises(ValidationError, match="min-input-files"):
        isp.actions.rewrite_position_deletes(spark, table, options={"min-input-files": "x"})
    v1 = _table(catalog, "posdeletes_v1", version=1, batches=1)
    assert isp.actions.rewrite_position_deletes(spark, v1).rewritten_delete_files_count == 0


def test_rewrite_position_deletes_v3_to_deletion_vectors(spark: SparkSession, catalog: Catalog) -> None:
    # A v2 table with position delete files, upgraded to v3.
    table = _table(catalog, "to_dvs", batches=2)
    table.delete("id IN (1, 11)")  # one file for partition a, naming batch 0's and batch 1's files
    table.delete("id IN (0)")
    table.update_properties().set("format-version", "3").commit()
    table.delete("id IN (13)")  # a deletion vector for batch 1's 'a' file, holding 11 too
    rows = _rows(table)
    before = _position_deletes(table)
    assert sum(1 for f, _ in before if f.file_format == FileFormat.PARQUET) == 2
    result = isp.actions.rewrite_position_deletes(spark, table)
    assert result.rewritten_delete_files_count == 2
    assert result.added_delete_files_count == 2  # 11 is dropped: batch 1's 'a' file has its vector
    after = _position_deletes(table)
    assert len(after) == 3
    assert all(f.file_format == FileFormat.PUFFIN for f, _ in after)
    referenced = [f.referenced_data_file for f, _ in after]
    assert len(referenced) == len(set(referenced))  # at most one vector per data file
    assert _rows(table) == rows
    assert isp.actions.rewrite_position_deletes(spark, table).rewritten_delete_files_count == 0


def _min_id(file: ContentFile) -> int:
    assert file.lower_bounds is not None
    return int(from_bytes(LongType(), file.lower_bounds[1]))


def _drop(table: Table, files: list[DataFile]) -> None:
    op = table.new_delete()
    for file in files:
        op = op.delete_file(file)
    op.commit()
