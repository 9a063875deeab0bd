"""``table.rewrite_manifests()``: Java's TestRewriteManifests scenarios for v1, v2 and v3.

Clustering rewrites live entries as EXISTING (snapshot ids, sequence numbers and first row ids
kept) into manifests grouped by key and spec; added and deleted manifests must hold exactly the
same live files; a deleted manifest that a concurrent commit removed fails the commit, a
concurrently added manifest is kept, and retries reuse what they can.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from icefloe import Catalog, CommitFailedException, Table
from icefloe.errors import UnsupportedFeatureError, ValidationError, ValidationException
from icefloe.manifests import ManifestWriter, read_manifest
from icefloe.spec.manifest import ContentFile, ManifestContent, ManifestEntry, ManifestFile
from support.catalogs import ARROW_SCHEMA, avro_files, local, memory_backend, referenced_metadata_files, rows
from table.manifest_helpers import (
    ADDED,
    DELETED,
    EXISTING,
    TARGET,
    AddDeletes,
    RemoveFiles,
    add_spec,
    assert_no_orphans,
    commit_append,
    entries_of,
    fake_file,
    fake_position_deletes,
    make_table,
    manifests_of,
    seq_of,
    set_props,
)

TOTALS = (
    "total-records",
    "total-files-size",
    "total-data-files",
    "total-delete-files",
    "total-position-deletes",
    "total-equality-deletes",
)


def _names(table: Table, manifest: ManifestFile) -> list[str]:
    return [e[4] for e in entries_of(table, manifest)]


def _live(table: Table, manifest: ManifestFile) -> dict[str, ManifestEntry]:
    return {e.data_file.file_path: e for e in read_manifest(table.io(), manifest) if e.is_live}


def _existing_manifest(
    table: Table,
    name: str,
    entries: Sequence[tuple[ContentFile, int, int | None, int | None]],
    *,
    content: ManifestContent = ManifestContent.DATA,
    snapshot_id: int | None = None,
) -> ManifestFile:
    """A manifest of EXISTING entries (file, snapshot id, data seq, file seq) written outside
    a commit, as a rewrite action would write it."""
    with ManifestWriter(
        table.io(),
        f"{table.location()}/metadata/{name}.avro",
        spec=table.spec(),
        schema=table.schema(),
        format_version=table.format_version(),
        snapshot_id=snapshot_id,
        content=content,
    ) as writer:
        for file, sid, seq, file_seq in entries:
            writer.existing(file, sid, seq, file_seq)
    return writer.to_manifest_file()


def _summary(table: Table) -> dict[str, str]:
    snapshot = table.current_snapshot()
    assert snapshot is not None
    return dict(snapshot.summary)


def _validate_summary(table: Table, replaced: int, kept: int, created: int, entries: int) -> None:
    summary = _summary(table)
    assert summary["operation"] == "replace"
    assert summary["manifests-replaced"] == str(replaced)
    assert summary["manifests-kept"] == str(kept)
    assert summary["manifests-created"] == str(created)
    assert summary["entries-processed"] == str(entries)


def _unchanged(table: Table, before: Any) -> None:
    table.refresh()
    assert table.current_snapshot() == before


# ---- clustering ---------------------------------------------------------------------------------


def test_cluster_by_constant_consolidates(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version)
    a = commit_append(table, fake_file(table, "a", records=3), fast=True)
    b = commit_append(table, fake_file(table, "b", records=4), fast=True)
    before = {
        path: e.data_file.first_row_id for m in manifests_of(table) for path, e in _live(table, m).items()
    }
    parent_summary = _summary(table)
    table.rewrite_manifests().cluster_by(lambda f: "file").commit()

    snapshot = table.current_snapshot()
    assert snapshot is not None
    (manifest,) = manifests_of(table)
    s1, s2, s3 = (seq_of(format_version, n) for n in (1, 2, 3))
    assert entries_of(table, manifest) == [
        (EXISTING, b.snapshot_id, s2, s2, "b"),
        (EXISTING, a.snapshot_id, s1, s1, "a"),
    ]
    assert (manifest.added_snapshot_id, manifest.sequence_number, manifest.min_sequence_number) == (
        snapshot.snapshot_id,
        s3,
        s1,
    )
    after = {path: e.data_file.first_row_id for path, e in _live(table, manifest).items()}
    assert after == before  # v3: the rows keep their ids (None before v3)
    if format_version == 3:
        assert None not in after.values()
    # Java 1.9's replace summary, totals carried from the parent.
    assert _summary(table) == {
        "operation": "replace",
        "manifests-created": "1",
        "manifests-kept": "0",
        "manifests-replaced": "2",
        "entries-processed": "2",
        "changed-partition-count": "0",
        **{key: parent_summary[key] for key in TOTALS},
    }


def test_cluster_by_path_splits(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version)
    append = commit_append(table, fake_file(table, "a"), fake_file(table, "b"), fast=True)
    table.rewrite_manifests().cluster_by(lambda f: f.file_path).commit()
    found = sorted(entries_of(table, m) for m in manifests_of(table))
    s1 = seq_of(format_version, 1)
    assert found == [
        [(EXISTING, append.snapshot_id, s1, s1, "a")],
        [(EXISTING, append.snapshot_id, s1, s1, "b")],
    ]
    _validate_summary(table, replaced=1, kept=0, created=2, entries=2)


def test_cluster_by_partition(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version)
    commit_append(table, fake_file(table, "a0", 0), fake_file(table, "b1", 1), fast=True)
    commit_append(table, fake_file(table, "c0", 0), fake_file(table, "d2", 2), fast=True)
    table.rewrite_manifests().cluster_by(lambda f: f.partition).commit()
    by_partition = {}
    for manifest in manifests_of(table):
        entries = list(read_manifest(table.io(), manifest))
        partitions = {e.data_file.partition for e in entries}
        assert len(partitions) == 1
        (summary,) = manifest.partitions or ()
        assert summary.lower_bound == summary.upper_bound  # one partition value per manifest
        by_partition[partitions.pop()] = sorted(_names(table, manifest))
    assert by_partition == {(0,): ["a0", "c0"], (1,): ["b1"], (2,): ["d2"]}
    _validate_summary(table, replaced=2, kept=0, created=3, entries=4)


def test_rewrite_if_keeps_the_other_manifests(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version)
    a = commit_append(table, fake_file(table, "a"), fast=True)
    b = commit_append(table, fake_file(table, "b"), fast=True)
    c = commit_append(table, fake_file(table, "c"), fast=True)
    (kept,) = [m for m in manifests_of(table) if _names(table, m) == ["a"]]
    table.rewrite_manifests().cluster_by(lambda f: "file").rewrite_if(
        lambda m: _names(table, m) != ["a"]
    ).commit()
    merged, unchanged = manifests_of(table)
    assert unchanged == kept
    s1, s2, s3 = (seq_of(format_version, n) for n in (1, 2, 3))
    assert entries_of(table, unchanged) == [(ADDED, a.snapshot_id, s1, s1, "a")]
    assert entries_of(table, merged) == [
        (EXISTING, c.snapshot_id, s3, s3, "c"),
        (EXISTING, b.snapshot_id, s2, s2, "b"),
    ]
    _validate_summary(table, replaced=2, kept=1, created=1, entries=2)


def test_target_size_splits_manifests(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version, **{TARGET: "1"})
    append = commit_append(table, *(fake_file(table, n) for n in "abc"), fast=True)
    table.rewrite_manifests().cluster_by(lambda f: "file").commit()
    manifests = manifests_of(table)
    assert sorted(_names(table, m)[0] for m in manifests) == ["a", "b", "c"]
    assert all(m.existing_files_count == 1 for m in manifests)
    assert {e[1] for m in manifests for e in entries_of(table, m)} == {append.snapshot_id}
    assert_no_orphans(table)  # the first, oversized manifest was deleted


def test_target_size_limits_a_cluster(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version)
    files = [fake_file(table, f"f{n:02d}") for n in range(40)]
    commit_append(table, *files, fast=True)
    (single,) = manifests_of(table)
    set_props(table, {TARGET: str(single.manifest_length // 3)})
    table.rewrite_manifests().cluster_by(lambda f: "file").commit()
    manifests = manifests_of(table)
    assert 3 <= len(manifests) <= 6
    assert sorted(n for m in manifests for n in _names(table, m)) == [f"f{n:02d}" for n in range(40)]


def test_clustering_keeps_partition_specs_apart(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version)
    commit_append(table, fake_file(table, "a"), fake_file(table, "b"))
    new_spec = add_spec(table, ["bucket(16, id)", "bucket(4, name)"])
    commit_append(table, fake_file(table, "y", spec=new_spec))
    commit_append(table, fake_file(table, "z", spec=new_spec))
    assert len(manifests_of(table)) == 3
    table.rewrite_manifests().cluster_by(lambda f: "file").commit()
    manifests = manifests_of(table)
    assert sorted((m.partition_spec_id, m.existing_files_count) for m in manifests) == [
        (0, 2),
        (new_spec.spec_id, 2),
    ]


def test_cluster_key_must_be_hashable_and_set(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version)
    before = commit_append(table, fake_file(table, "a"))
    with pytest.raises(ValidationError, match="returned None"):
        table.rewrite_manifests().cluster_by(lambda f: None).commit()
    with pytest.raises(ValidationError, match="unhashable"):
        table.rewrite_manifests().cluster_by(lambda f: [f.file_path]).commit()
    with pytest.raises(ValidationError, match="function"):
        table.rewrite_manifests().cluster_by("file_path")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="function"):
        table.rewrite_manifests().rewrite_if(True)  # type: ignore[arg-type]
    _unchanged(table, before)
    assert_no_orphans(table)


def test_a_rewrite_that_failed_halfway_starts_over(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version)
    for name in "abc":
        commit_append(table, fake_file(table, name), fast=True)
    calls = 0

    def flaky(file: object) -> str:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise RuntimeError("transient")
        return "file"

    rewrite = table.rewrite_manifests().cluster_by(flaky)
    with pytest.raises(RuntimeError, match="transient"):
        rewrite.apply()
    rewrite.commit()  # plans again from scratch: no file may be lost
    (manifest,) = manifests_of(table)
    assert sorted(_names(table, manifest)) == ["a", "b", "c"]
    _validate_summary(table, replaced=3, kept=0, created=1, entries=3)
    assert_no_orphans(table)


# ---- concurrency ------------------------------------------------------------------------------


def test_concurrent_rewrite_forces_a_full_rewrite(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version)
    a = commit_append(table, fake_file(table, "a"), fast=True)
    b = commit_append(table, fake_file(table, "b"), fast=True)
    rewrite = table.rewrite_manifests().cluster_by(lambda f: "file")
    rewrite.apply()  # plans a rewrite of both manifests
    # Another rewrite replaces the manifest of b meanwhile.
    table.rewrite_manifests().cluster_by(lambda f: "file").rewrite_if(
        lambda m: _names(table, m) != ["a"]
    ).commit()
    assert len(manifests_of(table)) == 2
    rewrite.commit()  # the manifest of b is gone: everything is rewritten again
    (manifest,) = manifests_of(table)
    s1, s2 = seq_of(format_version, 1), seq_of(format_version, 2)
    assert sorted(entries_of(table, manifest)) == sorted(
        [(EXISTING, a.snapshot_id, s1, s1, "a"), (EXISTING, b.snapshot_id, s2, s2, "b")]
    )
    assert_no_orphans(table)


def test_append_during_rewrite_is_kept(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version)
    a = commit_append(table, fake_file(table, "a"), fast=True)
    rewrite = table.rewrite_manifests().cluster_by(lambda f: "file")
    rewrite.apply()
    b = commit_append(table, fake_file(table, "b"), fast=True)
    rewrite.commit()
    rewritten, kept = manifests_of(table)
    s1, s2 = seq_of(format_version, 1), seq_of(format_version, 2)
    assert entries_of(table, rewritten) == [(EXISTING, a.snapshot_id, s1, s1, "a")]
    assert entries_of(table, kept) == [(ADDED, b.snapshot_id, s2, s2, "b")]
    assert_no_orphans(table)


def test_rewrite_during_append(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version)
    a = commit_append(table, fake_file(table, "a"), fast=True)
    append = table.new_fast_append().append_file(fake_file(table, "b"))
    append.apply()
    table.rewrite_manifests().cluster_by(lambda f: "file").commit()
    assert len(manifests_of(table)) == 1
    append.commit()
    new, rewritten = manifests_of(table)
    assert [(e[0], e[1], e[4]) for e in entries_of(table, new)] == [(ADDED, append.snapshot_id, "b")]
    assert [(e[0], e[1], e[4]) for e in entries_of(table, rewritten)] == [(EXISTING, a.snapshot_id, "a")]


def test_retry_keeps_a_concurrently_appended_manifest(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version)
    a = commit_append(table, fake_file(table, "a"), fast=True)
    b = commit_append(table, fake_file(table, "b"), fast=True)
    backend = memory_backend(memory_catalog)
    concurrent: list[int] = []

    def other_writer(identifier: tuple[str, ...]) -> None:
        if not concurrent:  # once: our first swap then fails, and the rewrite is retried
            other = memory_catalog.load_table("db.t")
            concurrent.append(commit_append(other, fake_file(other, "c"), fast=True).snapshot_id)

    backend.set_before_swap(other_writer)
    try:
        table.rewrite_manifests().cluster_by(lambda f: "file").commit()
    finally:
        backend.set_before_swap(None)
    rewritten, kept = manifests_of(table)
    s1, s2, s3 = (seq_of(format_version, n) for n in (1, 2, 3))
    assert entries_of(table, rewritten) == [
        (EXISTING, b.snapshot_id, s2, s2, "b"),
        (EXISTING, a.snapshot_id, s1, s1, "a"),
    ]
    assert entries_of(table, kept) == [(ADDED, concurrent[0], s3, s3, "c")]
    snapshot = table.current_snapshot()
    assert snapshot is not None and snapshot.parent_snapshot_id == concurrent[0]
    assert snapshot.summary["total-data-files"] == "3"
    _validate_summary(table, replaced=2, kept=1, created=1, entries=2)
    assert_no_orphans(table)


# ---- adding and deleting manifests ------------------------------------------------------------


def _two_snapshots(table: Table) -> tuple[Any, ManifestFile, Any]:
    """a, b in one manifest (first snapshot); c, d in another (second)."""
    first = commit_append(table, fake_file(table, "a"), fake_file(table, "b"), fast=True)
    (manifest,) = manifests_of(table)
    second = commit_append(table, fake_file(table, "c"), fake_file(table, "d"), fast=True)
    return first, manifest, second


def test_basic_manifest_replacement(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version)
    first, original, second = _two_snapshots(table)
    live = _live(table, original)
    s1 = seq_of(format_version, 1) if format_version > 1 else None
    new1 = _existing_manifest(
        table, "manifest-file-1", [(live["/path/to/a.parquet"].data_file, first.snapshot_id, s1, s1)]
    )
    new2 = _existing_manifest(
        table, "manifest-file-2", [(live["/path/to/b.parquet"].data_file, first.snapshot_id, s1, s1)]
    )
    table.rewrite_manifests().delete_manifest(original).add_manifest(new1).add_manifest(new2).commit()
    manifests = manifests_of(table)
    assert len(manifests) == 3
    same_paths = [m.manifest_path for m in manifests[:2]] == [new1.manifest_path, new2.manifest_path]
    assert same_paths == (format_version > 1)  # v1 cannot inherit: copies
    _validate_summary(table, replaced=1, kept=1, created=2, entries=0)
    s1, s2 = seq_of(format_version, 1), seq_of(format_version, 2)
    assert entries_of(table, manifests[0]) == [(EXISTING, first.snapshot_id, s1, s1, "a")]
    assert entries_of(table, manifests[1]) == [(EXISTING, first.snapshot_id, s1, s1, "b")]
    assert entries_of(table, manifests[2]) == [
        (ADDED, second.snapshot_id, s2, s2, "c"),
        (ADDED, second.snapshot_id, s2, s2, "d"),
    ]
    if format_version == 3:  # as-is: the manifest carries the files' row ids
        assert {e.data_file.first_row_id for m in manifests[:2] for e in read_manifest(table.io(), m)} == {
            e.data_file.first_row_id for e in live.values()
        }


def test_added_entries_take_the_tables_ids(memory_catalog: Catalog, format_version: int) -> None:
    """ADDED entries (or EXISTING ones without sequence numbers / row ids) of an added manifest
    take what the table has for the file: the manifest is copied with those filled in."""
    table = make_table(memory_catalog, format_version)
    first, original, _ = _two_snapshots(table)
    live = _live(table, original)
    path = f"{table.location()}/metadata/added-entries.avro"
    with ManifestWriter(
        table.io(),
        path,
        spec=table.spec(),
        schema=table.schema(),
        format_version=format_version,
        snapshot_id=None if format_version > 1 else 1,
    ) as writer:
        writer.add(fake_file(table, "a"))  # no row id, no sequence number, no snapshot id
        writer.add(fake_file(table, "b"))
    added = writer.to_manifest_file()
    table.rewrite_manifests().delete_manifest(original).add_manifest(added).commit()
    copy = manifests_of(table)[0]
    assert copy.manifest_path != added.manifest_path
    s1 = seq_of(format_version, 1)
    assert entries_of(table, copy) == [
        (EXISTING, first.snapshot_id, s1, s1, "a"),
        (EXISTING, first.snapshot_id, s1, s1, "b"),
    ]
    assert {p: e.data_file.first_row_id for p, e in _live(table, copy).items()} == {
        p: e.data_file.first_row_id for p, e in live.items()
    }
    assert local(added.manifest_path).exists()  # the caller's file is left alone
    assert avro_files(table) - {str(local(path))} == referenced_metadata_files(table)


def test_replacement_with_a_concurrent_append(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version)
    first = commit_append(table, fake_file(table, "a"), fake_file(table, "b"), fast=True)
    (original,) = manifests_of(table)
    live = _live(table, original)
    s1 = seq_of(format_version, 1) if format_version > 1 else None
    rewrite = table.rewrite_manifests().delete_manifest(original)
    for name in ("a", "b"):
        rewrite.add_manifest(
            _existing_manifest(
                table, f"m-{name}", [(live[f"/path/to/{name}.parquet"].data_file, first.snapshot_id, s1, s1)]
            )
        )
    second = commit_append(table, fake_file(table, "c"), fake_file(table, "d"), fast=True)
    rewrite.commit()
    manifests = manifests_of(table)
    assert [_names(table, m) for m in manifests] == [["a"], ["b"], ["c", "d"]]
    assert {e[1] for e in entries_of(table, manifests[2])} == {second.snapshot_id}
    _validate_summary(table, replaced=1, kept=1, created=2, entries=0)


def test_replacement_with_a_concurrent_delete_elsewhere(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version)
    first, original, second = _two_snapshots(table)
    live = _live(table, original)
    s1 = seq_of(format_version, 1) if format_version > 1 else None
    rewrite = table.rewrite_manifests().delete_manifest(original)
    for name in ("a", "b"):
        rewrite.add_manifest(
            _existing_manifest(
                table, f"m-{name}", [(live[f"/path/to/{name}.parquet"].data_file, first.snapshot_id, s1, s1)]
            )
        )
    RemoveFiles(table, ["/path/to/c.parquet"]).commit()
    deleting = table.current_snapshot()
    assert deleting is not None
    rewrite.commit()
    manifests = manifests_of(table)
    assert [(e[0], e[1], e[4]) for e in entries_of(table, manifests[2])] == [
        (DELETED, deleting.snapshot_id, "c"),
        (EXISTING, second.snapshot_id, "d"),
    ]
    _validate_summary(table, replaced=1, kept=1, created=2, entries=0)


def test_replacing_a_manifest_removed_concurrently_fails(
    memory_catalog: Catalog, format_version: int
) -> None:
    table = make_table(memory_catalog, format_version)
    first = commit_append(table, fake_file(table, "a"), fake_file(table, "b"), fast=True)
    (original,) = manifests_of(table)
    live = _live(table, original)
    s1 = seq_of(format_version, 1) if format_version > 1 else None
    added = [
        _existing_manifest(
            table, f"m-{name}", [(live[f"/path/to/{name}.parquet"].data_file, first.snapshot_id, s1, s1)]
        )
        for name in ("a", "b")
    ]
    rewrite = table.rewrite_manifests().delete_manifest(original)
    for manifest in added:
        rewrite.add_manifest(manifest)
    table.rewrite_manifests().cluster_by(lambda f: f.file_path).commit()  # replaces the original
    current = table.current_snapshot()
    assert current is not None
    expected = f"Deleted manifest {original.manifest_path} could not be found in the latest snapshot {current.snapshot_id}"
    with pytest.raises(ValidationException, match=expected):
        rewrite.commit()
    _unchanged(table, current)
    # Nothing of the failed rewrite is left; the caller's manifests are.
    assert avro_files(table) - {str(local(m.manifest_path)) for m in added} == referenced_metadata_files(
        table
    )
    assert all(local(m.manifest_path).exists() for m in added)


def test_invalid_usage(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version)
    first = commit_append(table, fake_file(table, "a"), fake_file(table, "b"), fast=True)
    (original,) = manifests_of(table)
    live = _live(table, original)
    file_a, file_b = live["/path/to/a.parquet"].data_file, live["/path/to/b.parquet"].data_file
    sid = first.snapshot_id
    s1 = seq_of(format_version, 1) if format_version > 1 else None

    with ManifestWriter(
        table.io(),
        f"{table.location()}/metadata/deleted.avro",
        spec=table.spec(),
        schema=table.schema(),
        format_version=format_version,
        snapshot_id=None,
    ) as writer:
        writer.delete(file_a, sid, s1, s1)
    with pytest.raises(ValidationError, match="with deleted files"):
        table.rewrite_manifests().add_manifest(writer.to_manifest_file())

    def attempt(*entries: tuple[ContentFile, int, int | None, int | None], name: str) -> None:
        rewrite = table.rewrite_manifests().delete_manifest(original)
        rewrite.add_manifest(_existing_manifest(table, name, entries))
        rewrite.commit()

    with pytest.raises(ValidationException, match=r"same number of active files: 0 \(new\), 2 \(old\)"):
        table.rewrite_manifests().delete_manifest(original).commit()
    with pytest.raises(ValidationException, match=r"same number of active files: 1 \(new\), 2 \(old\)"):
        attempt((file_a, sid, s1, s1), name="missing-b")
    with pytest.raises(ValidationException, match=r"x\.parquet in added manifest .* is not a live file"):
        attempt((file_a, sid, s1, s1), (fake_file(table, "x"), sid, s1, s1), name="unknown-x")
    with pytest.raises(ValidationException, match=r"a\.parquet in added manifest .* is added twice"):
        attempt((file_a, sid, s1, s1), (file_a, sid, s1, s1), name="twice-a")
    with pytest.raises(ValidationException, match="has snapshot id 7, but the table has"):
        attempt((file_a, 7, s1, s1), (file_b, sid, s1, s1), name="wrong-snapshot")
    with pytest.raises(ValidationException, match="has partition"):
        attempt((file_a.copy(partition=(5,)), sid, s1, s1), (file_b, sid, s1, s1), name="wrong-partition")
    if format_version > 1:
        with pytest.raises(ValidationException, match="has data sequence number 9, but the table has 1"):
            attempt((file_a, sid, 9, 9), (file_b, sid, s1, s1), name="wrong-sequence")
    if format_version == 3:
        with pytest.raises(ValidationException, match="has first row id 1000, but the table has"):
            attempt((file_a.copy(first_row_id=1000), sid, s1, s1), (file_b, sid, s1, s1), name="wrong-row-id")
    _unchanged(table, first)
    assert [m.manifest_path for m in manifests_of(table)] == [original.manifest_path]


def test_failed_replacement_keeps_the_added_manifest(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version, **{"commit.retry.num-retries": "1"})
    a = commit_append(table, fake_file(table, "a"), fast=True)
    b = commit_append(table, fake_file(table, "b"), fast=True)
    manifests = manifests_of(table)
    live = {**_live(table, manifests[0]), **_live(table, manifests[1])}
    s1, s2 = (seq_of(format_version, n) if format_version > 1 else None for n in (1, 2))
    combined = _existing_manifest(
        table,
        "manifest-file",
        [
            (live["/path/to/a.parquet"].data_file, a.snapshot_id, s1, s1),
            (live["/path/to/b.parquet"].data_file, b.snapshot_id, s2, s2),
        ],
    )
    memory_backend(memory_catalog).fail_next_commits(5)
    rewrite = table.rewrite_manifests().delete_manifest(manifests[0]).delete_manifest(manifests[1])
    with pytest.raises(CommitFailedException):
        rewrite.add_manifest(combined).commit()
    assert local(combined.manifest_path).exists()
    _unchanged(table, b)
    assert avro_files(table) - {str(local(combined.manifest_path))} == referenced_metadata_files(table)


def test_failed_clustering_cleans_up(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version, **{"commit.retry.num-retries": "1"})
    commit_append(table, fake_file(table, "a"), fast=True)
    before = commit_append(table, fake_file(table, "b"), fast=True)
    memory_backend(memory_catalog).fail_next_commits(5)
    with pytest.raises(CommitFailedException):
        table.rewrite_manifests().cluster_by(lambda f: f.file_path).commit()
    _unchanged(table, before)
    assert_no_orphans(table)


def test_branches_and_empty_tables_are_refused(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version)
    with pytest.raises(ValidationException, match="no current snapshot"):
        table.rewrite_manifests().cluster_by(lambda f: "x").commit()
    commit_append(table, fake_file(table, "a"))
    with pytest.raises(UnsupportedFeatureError, match="someBranch"):
        table.rewrite_manifests().to_branch("someBranch")
    table.rewrite_manifests().to_branch("main").cluster_by(lambda f: "x").commit()
    assert table.current_snapshot().operation == "replace"  # type: ignore[union-attr]


# ---- delete manifests (v2+) ------------------------------------------------------------------------


@pytest.mark.parametrize("format_version", [2])
def test_clustering_preserves_delete_manifests(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version)
    append = commit_append(table, fake_file(table, "a"), fake_file(table, "b"))
    AddDeletes(table, [fake_position_deletes(table, "a1"), fake_position_deletes(table, "a2")]).commit()
    deletes = table.current_snapshot()
    assert deletes is not None
    (delete_manifest,) = [m for m in manifests_of(table) if m.content == ManifestContent.DELETES]
    table.rewrite_manifests().cluster_by(lambda f: f.file_path).commit()
    _validate_summary(table, replaced=1, kept=1, created=2, entries=2)
    manifests = manifests_of(table)
    data = sorted(entries_of(table, m) for m in manifests if m.content == ManifestContent.DATA)
    assert data == [[(EXISTING, append.snapshot_id, 1, 1, "a")], [(EXISTING, append.snapshot_id, 1, 1, "b")]]
    assert [m for m in manifests if m.content == ManifestContent.DELETES] == [delete_manifest]
    assert entries_of(table, delete_manifest) == [
        (ADDED, deletes.snapshot_id, 2, 2, "a1-deletes"),
        (ADDED, deletes.snapshot_id, 2, 2, "a2-deletes"),
    ]


@pytest.mark.parametrize("format_version", [2])
def test_replacing_delete_manifests(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version)
    append = commit_append(table, fake_file(table, "a"), fake_file(table, "b"))
    (data_manifest,) = manifests_of(table)
    AddDeletes(table, [fake_position_deletes(table, "a1"), fake_position_deletes(table, "a2")]).commit()
    deletes = table.current_snapshot()
    assert deletes is not None
    (original,) = [m for m in manifests_of(table) if m.content == ManifestContent.DELETES]
    live = _live(table, original)
    new = [
        _existing_manifest(
            table,
            f"delete-manifest-{name}",
            [(live[f"/path/to/{name}-deletes.parquet"].data_file, deletes.snapshot_id, 2, 2)],
            content=ManifestContent.DELETES,
        )
        for name in ("a1", "a2")
    ]
    table.rewrite_manifests().delete_manifest(original).add_manifest(new[0]).add_manifest(new[1]).commit()
    manifests = manifests_of(table)
    assert [m.manifest_path for m in manifests] == [
        new[0].manifest_path,
        new[1].manifest_path,
        data_manifest.manifest_path,
    ]
    assert entries_of(table, manifests[0]) == [(EXISTING, deletes.snapshot_id, 2, 2, "a1-deletes")]
    assert entries_of(table, manifests[2]) == [
        (ADDED, append.snapshot_id, 1, 1, "a"),
        (ADDED, append.snapshot_id, 1, 1, "b"),
    ]
    _validate_summary(table, replaced=1, kept=1, created=2, entries=0)
    assert table.current_snapshot().summary["total-delete-files"] == "2"  # type: ignore[union-attr]


# ---- transactions and real data ---------------------------------------------------------------


def test_rewrite_in_a_transaction(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version)
    a = commit_append(table, fake_file(table, "a"), fast=True)
    txn = table.new_transaction()
    append = txn.new_fast_append()
    append.append_file(fake_file(table, "b")).commit()
    txn.rewrite_manifests().cluster_by(lambda f: "file").commit()
    assert table.current_snapshot() == a  # nothing committed yet
    txn.commit_transaction()
    (manifest,) = manifests_of(table)
    s1, s2 = seq_of(format_version, 1), seq_of(format_version, 2)
    assert entries_of(table, manifest) == [
        (EXISTING, append.snapshot_id, s2, s2, "b"),
        (EXISTING, a.snapshot_id, s1, s1, "a"),
    ]
    assert [s.operation for s in table.snapshots()] == ["append", "append", "replace"]
    assert_no_orphans(table)


def test_rewritten_tables_read_the_same(catalog: Catalog, format_version: int) -> None:
    table = catalog.create_table(
        "db.t", ARROW_SCHEMA, partition_by=["day"], properties={"format-version": str(format_version)}
    )
    for n in range(4):
        table.append(rows(9, start=9 * n))
    expected = sorted(r["id"] for r in table.new_scan().to_arrow().to_pylist())
    planned_before = len(table.new_scan().filter("day = '2024-01-02'").plan_files())
    totals = {key: _summary(table)[key] for key in ("total-records", "total-data-files")}
    table.rewrite_manifests().cluster_by(lambda f: f.partition).commit()
    assert len(manifests_of(table)) == 3  # one per day
    assert sorted(r["id"] for r in table.new_scan().to_arrow().to_pylist()) == expected
    assert len(table.new_scan().filter("day = '2024-01-02'").plan_files()) == planned_before
    assert {key: _summary(table)[key] for key in totals} == totals
    assert_no_orphans(table)
