"""Merging appends (``new_append()``): Java's TestMergeAppend scenarios for v1, v2 and v3.

Manifests merge per ``commit.manifest-merge.enabled``, ``commit.manifest.min-count-to-merge``
and ``commit.manifest.target-size-bytes``: grouped by partition spec, bin-packed from the end
by manifest length, a bin holding the newest manifest merged only once it has enough
manifests, every other bin of two or more always. Merged entries keep their snapshot ids and
sequence numbers; DELETED entries of earlier snapshots are dropped; retries reuse merged
manifests and delete the ones they no longer use.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

import pytest

from icefloe import Catalog, CommitFailedException, Table
from icefloe.errors import FileIOError, ValidationError
from icefloe.io import FileIO
from icefloe.io.faults import FaultInjectingFileIO
from icefloe.manifests import ManifestWriter, read_manifest
from icefloe.spec.manifest import ManifestContent
from icefloe.table.snapshots.manifest_merge import MergeOptions, pack_end
from support.catalogs import ARROW_SCHEMA, avro_files, local, memory_backend, referenced_metadata_files, rows
from table.manifest_helpers import (
    ADDED,
    DELETED,
    ENABLED,
    EXISTING,
    MIN_COUNT,
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
    write_added_manifest,
)

# ---- bin packing ------------------------------------------------------------------------------


def test_pack_end_keeps_order_and_underfills_the_front() -> None:
    # From the end: 3+3 fit in 6, then 2 starts a new bin, 2+1 fit, 5 alone.
    assert pack_end([5, 1, 2, 3, 3], lambda w: w, 6) == [[5], [1, 2], [3, 3]]
    assert pack_end([1, 1, 1, 1], lambda w: w, 2) == [[1, 1], [1, 1]]
    assert pack_end([1, 1, 1], lambda w: w, 2) == [[1], [1, 1]]  # the first bin is the short one
    assert pack_end([], lambda w: w, 10) == []
    # An item heavier than the target gets a bin of its own.
    assert pack_end([1, 20, 1], lambda w: w, 10) == [[1], [20], [1]]
    assert pack_end([3, 3, 3], lambda w: w, 0) == [[3], [3], [3]]


def test_pack_end_lookback_and_largest_bin_first() -> None:
    # A look-back of 1 (what merging uses) keeps the items in order; a longer one lets a later
    # item join an earlier open bin, which reorders them.
    assert pack_end([4, 1, 5, 5], lambda w: w, 6, lookback=1) == [[4], [1, 5], [5]]
    assert pack_end([4, 1, 5, 5], lambda w: w, 6, lookback=2) == [[4], [5], [1, 5]]
    # When too many bins are open, the oldest is closed, or the heaviest with largest_bin_first.
    assert pack_end([1, 6, 2, 5], lambda w: w, 6, lookback=2) == [[6], [1, 2], [5]]
    assert pack_end([1, 6, 2, 5], lambda w: w, 6, lookback=2, largest_bin_first=True) == [[2], [1, 5], [6]]
    with pytest.raises(ValueError, match="look-back"):
        pack_end([1], lambda w: w, 6, lookback=0)


def test_merge_options_from_properties() -> None:
    assert MergeOptions.from_properties({}) == MergeOptions(True, 100, 8 * 1024 * 1024)
    assert MergeOptions.from_properties({ENABLED: "false", MIN_COUNT: "3", TARGET: "1000"}) == MergeOptions(
        False, 3, 1000
    )
    with pytest.raises(ValidationError, match=MIN_COUNT):
        MergeOptions.from_properties({MIN_COUNT: "many"})
    with pytest.raises(ValidationError, match=ENABLED):
        MergeOptions.from_properties({ENABLED: "yes"})


# ---- merging: thresholds, statuses, sequence numbers --------------------------------------------


def test_empty_table_append(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version)
    snapshot = commit_append(table, fake_file(table, "a"), fake_file(table, "b"))
    assert table.metadata.last_sequence_number == seq_of(format_version, 1)
    (manifest,) = manifests_of(table)
    sid, s1 = snapshot.snapshot_id, seq_of(format_version, 1)
    assert entries_of(table, manifest) == [(ADDED, sid, s1, s1, "a"), (ADDED, sid, s1, s1, "b")]
    # Java 1.9's append summary: no manifest counts.
    assert not any(key.startswith("manifests-") for key in snapshot.summary)


def test_merge_with_existing_manifest(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version, **{MIN_COUNT: "1"})
    first = commit_append(table, fake_file(table, "a"), fake_file(table, "b"))
    (initial,) = manifests_of(table)
    second = commit_append(table, fake_file(table, "c"), fake_file(table, "d"))
    (merged,) = manifests_of(table)
    assert merged.manifest_path != initial.manifest_path
    s1, s2 = seq_of(format_version, 1), seq_of(format_version, 2)
    assert entries_of(table, merged) == [
        (ADDED, second.snapshot_id, s2, s2, "c"),
        (ADDED, second.snapshot_id, s2, s2, "d"),
        (EXISTING, first.snapshot_id, s1, s1, "a"),
        (EXISTING, first.snapshot_id, s1, s1, "b"),
    ]
    assert (merged.added_files_count, merged.existing_files_count, merged.deleted_files_count) == (2, 2, 0)
    assert merged.added_snapshot_id == second.snapshot_id
    assert merged.min_sequence_number == s1 and merged.sequence_number == s2
    # The summary counts what this snapshot added, not what the merge carried.
    assert second.summary["added-data-files"] == "2"
    assert second.summary["total-data-files"] == "4"
    # The initial manifest still belongs to the first snapshot.
    assert [m.manifest_path for m in manifests_of(table, first)] == [initial.manifest_path]


def test_manifests_merge_into_one_once_min_count_allows(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version)
    s = [commit_append(table, fake_file(table, name)) for name in ("a", "b", "c")]
    # Below the default minimum of 100 manifests the newest bin is left alone.
    assert [entries_of(table, m)[0][4] for m in manifests_of(table)] == ["c", "b", "a"]
    set_props(table, {MIN_COUNT: "1"})
    last = commit_append(table, fake_file(table, "d"))
    (merged,) = manifests_of(table)
    seq = [seq_of(format_version, n) for n in (1, 2, 3, 4)]
    assert entries_of(table, merged) == [
        (ADDED, last.snapshot_id, seq[3], seq[3], "d"),
        (EXISTING, s[2].snapshot_id, seq[2], seq[2], "c"),
        (EXISTING, s[1].snapshot_id, seq[1], seq[1], "b"),
        (EXISTING, s[0].snapshot_id, seq[0], seq[0], "a"),
    ]


def test_min_merge_count(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version, **{MIN_COUNT: "4"})
    ids = [commit_append(table, fake_file(table, name), fast=True).snapshot_id for name in ("a", "b")]
    ids.append(commit_append(table, fake_file(table, "c")).snapshot_id)  # 3 manifests: still below 4
    unmerged = {m.manifest_path for m in manifests_of(table)}
    assert len(unmerged) == 3
    last = commit_append(table, fake_file(table, "d"))  # the newest bin now holds 4 manifests
    (merged,) = manifests_of(table)
    assert merged.manifest_path not in unmerged
    seq = [seq_of(format_version, n) for n in (1, 2, 3, 4)]
    assert [(e[0], e[1], e[2], e[4]) for e in entries_of(table, merged)] == [
        (ADDED, last.snapshot_id, seq[3], "d"),
        (EXISTING, ids[2], seq[2], "c"),
        (EXISTING, ids[1], seq[1], "b"),
        (EXISTING, ids[0], seq[0], "a"),
    ]


def test_manifest_merge_min_count_bins(memory_catalog: Catalog, format_version: int) -> None:
    """Java's testManifestMergeMinCount: three appended manifests, a target that fits two of
    them: the bins are [m1] and [m2, m3]; the second does not hold the newest manifest, so it
    merges even below the minimum count."""
    table = make_table(memory_catalog, format_version)
    sid = None if format_version > 1 else 1  # v1 entries need a snapshot id (copied anyway)
    manifests = [
        write_added_manifest(table, f"m-{n}", [fake_file(table, n)], snapshot_id=sid) for n in ("a", "c", "d")
    ]
    # Room for two of them (v1 copies are a few bytes longer than the originals), not three.
    target = 2 * max(m.manifest_length for m in manifests) + 100
    assert 3 * min(m.manifest_length for m in manifests) > target
    set_props(table, {MIN_COUNT: "2", TARGET: str(target)})
    append = table.new_append()
    for manifest in manifests:
        append.append_manifest(manifest)
    append.commit()
    snap1 = table.current_snapshot()
    assert snap1 is not None
    first, second = manifests_of(table)
    s1 = seq_of(format_version, 1)
    assert entries_of(table, first) == [(ADDED, snap1.snapshot_id, s1, s1, "a")]
    assert entries_of(table, second) == [
        (ADDED, snap1.snapshot_id, s1, s1, "c"),
        (ADDED, snap1.snapshot_id, s1, s1, "d"),
    ]
    if format_version > 1:  # used as it is in v2+, copied in v1 (as Java)
        assert first.manifest_path == manifests[0].manifest_path
    else:
        assert first.manifest_path != manifests[0].manifest_path
    # Committed as they are, the appended manifests became the table's: those the merge
    # replaced are garbage. Copied ones (v1) stay the caller's, untouched.
    assert local(manifests[1].manifest_path).exists() == (format_version == 1)
    assert local(manifests[2].manifest_path).exists() == (format_version == 1)
    callers = {str(local(m.manifest_path)) for m in manifests} if format_version == 1 else set()
    assert avro_files(table) - callers == referenced_metadata_files(table)


def test_manifest_do_not_merge_min_count(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version, **{MIN_COUNT: "4"})
    sid = None if format_version > 1 else 1
    written = [
        write_added_manifest(table, "m-ab", [fake_file(table, "a"), fake_file(table, "b")], snapshot_id=sid),
        write_added_manifest(table, "m-c", [fake_file(table, "c")], snapshot_id=sid),
        write_added_manifest(table, "m-d", [fake_file(table, "d")], snapshot_id=sid),
    ]
    append = table.new_append()
    for manifest in written:
        append.append_manifest(manifest)
    append.commit()
    snapshot = table.current_snapshot()
    assert snapshot is not None
    manifests = manifests_of(table)
    assert [[e[4] for e in entries_of(table, m)] for m in manifests] == [["a", "b"], ["c"], ["d"]]
    same_paths = [m.manifest_path for m in manifests] == [m.manifest_path for m in written]
    assert same_paths == (format_version > 1)
    assert snapshot.summary["added-data-files"] == "4"
    assert snapshot.summary["total-data-files"] == "4"


def test_merge_size_target_prevents_merging(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version, **{TARGET: "10", MIN_COUNT: "1"})
    first = commit_append(table, fake_file(table, "a"), fake_file(table, "b"))
    (initial,) = manifests_of(table)
    second = commit_append(table, fake_file(table, "c"), fake_file(table, "d"))
    new, old = manifests_of(table)
    assert old == initial
    s2 = seq_of(format_version, 2)
    assert entries_of(table, new) == [
        (ADDED, second.snapshot_id, s2, s2, "c"),
        (ADDED, second.snapshot_id, s2, s2, "d"),
    ]
    assert {e[1] for e in entries_of(table, old)} == {first.snapshot_id}


def test_merge_disabled(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version, **{MIN_COUNT: "1", ENABLED: "false"})
    for name in ("a", "b", "c"):
        commit_append(table, fake_file(table, name))
    assert len(manifests_of(table)) == 3


def test_fast_append_never_merges(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version, **{MIN_COUNT: "1"})
    for name in ("a", "b", "c"):
        commit_append(table, fake_file(table, name), fast=True)
    assert len(manifests_of(table)) == 3
    commit_append(table, fake_file(table, "d"))  # a merging append merges them all
    assert len(manifests_of(table)) == 1
    assert table.current_snapshot().summary["total-data-files"] == "4"  # type: ignore[union-attr]


def test_merge_drops_deleted_entries_of_earlier_snapshots(
    memory_catalog: Catalog, format_version: int
) -> None:
    table = make_table(memory_catalog, format_version, **{MIN_COUNT: "1"})
    base = commit_append(table, fake_file(table, "a"), fake_file(table, "b"))
    RemoveFiles(table, ["/path/to/a.parquet"]).commit()
    delete = table.current_snapshot()
    assert delete is not None
    (rewritten,) = manifests_of(table)
    assert [(e[0], e[1], e[4]) for e in entries_of(table, rewritten)] == [
        (DELETED, delete.snapshot_id, "a"),
        (EXISTING, base.snapshot_id, "b"),
    ]
    last = commit_append(table, fake_file(table, "c"), fake_file(table, "d"))
    (merged,) = manifests_of(table)
    s1, s3 = seq_of(format_version, 1), seq_of(format_version, 3)
    assert entries_of(table, merged) == [
        (ADDED, last.snapshot_id, s3, s3, "c"),
        (ADDED, last.snapshot_id, s3, s3, "d"),
        (EXISTING, base.snapshot_id, s1, s1, "b"),
    ]
    assert last.summary["total-data-files"] == "3"


def test_manifests_without_live_files_are_dropped(memory_catalog: Catalog, format_version: int) -> None:
    """Java's MergingSnapshotProducer keeps only manifests with live files (or its own),
    whether or not merging is enabled; a fast append keeps them all."""
    table = make_table(memory_catalog, format_version, **{ENABLED: "false"})
    commit_append(table, fake_file(table, "a"))
    commit_append(table, fake_file(table, "b"), fast=True)
    RemoveFiles(table, ["/path/to/a.parquet"]).commit()
    assert len(manifests_of(table)) == 2  # one holds only the DELETED entry of a
    commit_append(table, fake_file(table, "c"), fast=True)
    assert len(manifests_of(table)) == 3
    commit_append(table, fake_file(table, "d"))
    manifests = manifests_of(table)
    assert [[e[4] for e in entries_of(table, m)] for m in manifests] == [["d"], ["c"], ["b"]]


def test_merges_keep_partition_specs_apart(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version, **{MIN_COUNT: "1"})
    commit_append(table, fake_file(table, "a"), fake_file(table, "b"))
    (initial,) = manifests_of(table)
    new_spec = add_spec(table, ["bucket(16, id)", "bucket(4, name)"])
    last = commit_append(table, fake_file(table, "y", spec=new_spec))
    new, old = manifests_of(table)
    assert (new.partition_spec_id, old.partition_spec_id) == (new_spec.spec_id, 0)
    assert old == initial  # a bin of one manifest is never rewritten
    s2 = seq_of(format_version, 2)
    assert entries_of(table, new) == [(ADDED, last.snapshot_id, s2, s2, "y")]


def test_older_spec_manifests_merge_below_min_count(memory_catalog: Catalog, format_version: int) -> None:
    """Java's testChangedPartitionSpecMergeExisting: the bin of the old spec does not hold the
    newest manifest, so its two manifests merge although the minimum count is 100."""
    table = make_table(memory_catalog, format_version)
    id1 = commit_append(table, fake_file(table, "a")).snapshot_id
    id2 = commit_append(table, fake_file(table, "b"), fast=True).snapshot_id
    old_manifests = {m.manifest_path for m in manifests_of(table)}
    new_spec = add_spec(table, ["bucket(16, id)", "bucket(4, name)"])
    last = commit_append(table, fake_file(table, "y", spec=new_spec))
    new, merged = manifests_of(table)
    assert merged.manifest_path not in old_manifests
    assert merged.partition_spec_id == 0 and new.partition_spec_id == new_spec.spec_id
    s1, s2, s3 = (seq_of(format_version, n) for n in (1, 2, 3))
    assert entries_of(table, new) == [(ADDED, last.snapshot_id, s3, s3, "y")]
    assert entries_of(table, merged) == [(EXISTING, id2, s2, s2, "b"), (EXISTING, id1, s1, s1, "a")]


# ---- retries and cleanup -----------------------------------------------------------------------


def test_failed_commit_deletes_the_merged_manifest(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version, **{MIN_COUNT: "1", "commit.retry.num-retries": "2"})
    base = commit_append(table, fake_file(table, "a"))
    memory_backend(memory_catalog).fail_next_commits(5)
    append = table.new_append().append_file(fake_file(table, "b"))
    pending = append.apply()
    (merged,) = pending.all_manifests(table.io())
    assert local(merged.manifest_path).exists()
    assert [(e[0], e[1], e[4]) for e in entries_of(table, merged)] == [
        (ADDED, pending.snapshot_id, "b"),
        (EXISTING, base.snapshot_id, "a"),
    ]
    with pytest.raises(CommitFailedException):
        append.commit()
    assert table.refresh().current_snapshot() == base
    assert not local(merged.manifest_path).exists()
    assert_no_orphans(table)


def test_retries_reuse_the_merged_manifest(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version, **{MIN_COUNT: "1"})
    base = commit_append(table, fake_file(table, "a"))
    memory_backend(memory_catalog).fail_next_commits(3)
    append = table.new_append().append_file(fake_file(table, "b"))
    (pending,) = append.apply().all_manifests(table.io())
    append.commit()  # 3 failures, then success: every attempt packs the same bin
    snapshot = table.current_snapshot()
    assert snapshot is not None and snapshot.snapshot_id == append.snapshot_id
    assert [m.manifest_path for m in manifests_of(table)] == [pending.manifest_path]
    s1, s2 = seq_of(format_version, 1), seq_of(format_version, 2)
    assert entries_of(table, manifests_of(table)[0]) == [
        (ADDED, snapshot.snapshot_id, s2, s2, "b"),
        (EXISTING, base.snapshot_id, s1, s1, "a"),
    ]
    assert_no_orphans(table)


def test_retry_deletes_merged_manifests_it_no_longer_uses(
    memory_catalog: Catalog, format_version: int
) -> None:
    table = make_table(memory_catalog, format_version, **{MIN_COUNT: "2"})
    first = commit_append(table, fake_file(table, "a"))
    append = table.new_append().append_file(fake_file(table, "b"))
    (stale,) = append.apply().all_manifests(table.io())  # merges [b, a]
    other = memory_catalog.load_table("db.t")
    concurrent = commit_append(other, fake_file(other, "c"), fast=True)
    append.commit()  # conflicts, retries on [b, c, a]: another bin, another merged manifest
    (merged,) = manifests_of(table)
    assert merged.manifest_path != stale.manifest_path
    assert not local(stale.manifest_path).exists()
    assert [(e[0], e[1], e[4]) for e in entries_of(table, merged)] == [
        (ADDED, append.snapshot_id, "b"),
        (EXISTING, concurrent.snapshot_id, "c"),
        (EXISTING, first.snapshot_id, "a"),
    ]
    assert_no_orphans(table)


def test_appended_manifest_survives_a_failed_commit(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version, **{"commit.retry.num-retries": "1"})
    sid = None if format_version > 1 else 1
    manifest = write_added_manifest(
        table, "external", [fake_file(table, "a"), fake_file(table, "b")], snapshot_id=sid
    )
    memory_backend(memory_catalog).fail_next_commits(5)
    with pytest.raises(CommitFailedException):
        table.new_append().append_manifest(manifest).commit()
    assert table.current_snapshot() is None
    # The caller's manifest stays; whatever the commit wrote (v1's copy, lists) is gone.
    assert avro_files(table) == {str(local(manifest.manifest_path))}


def test_merged_appended_manifest_is_cleaned_up(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version, **{MIN_COUNT: "1"})
    sid = None if format_version > 1 else 1
    manifest1 = write_added_manifest(
        table, "manifest-file-1", [fake_file(table, "a"), fake_file(table, "b")], snapshot_id=sid
    )
    snap1 = table.new_append().append_manifest(manifest1)
    snap1.commit()
    (committed,) = manifests_of(table)
    assert (committed.manifest_path == manifest1.manifest_path) == (format_version > 1)
    manifest2 = write_added_manifest(
        table, "manifest-file-2", [fake_file(table, "c"), fake_file(table, "d")], snapshot_id=sid
    )
    snap2 = table.new_append().append_manifest(manifest2)
    snap2.commit()
    (merged,) = manifests_of(table)
    s1, s2 = seq_of(format_version, 1), seq_of(format_version, 2)
    assert entries_of(table, merged) == [
        (ADDED, snap2.snapshot_id, s2, s2, "c"),
        (ADDED, snap2.snapshot_id, s2, s2, "d"),
        (EXISTING, snap1.snapshot_id, s1, s1, "a"),
        (EXISTING, snap1.snapshot_id, s1, s1, "b"),
    ]
    # v2+: manifest-file-2 was the table's once committed, and the merge replaced it; v1
    # committed a copy, so the caller's file stays.
    assert local(manifest2.manifest_path).exists() == (format_version == 1)
    assert local(manifest1.manifest_path).exists()  # the first snapshot still uses it (or, v1, caller's)


def test_invalid_append_manifest(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version)
    base = commit_append(table, fake_file(table, "a"))
    with ManifestWriter(
        table.io(),
        f"{table.location()}/metadata/existing.avro",
        spec=table.spec(),
        schema=table.schema(),
        format_version=format_version,
        snapshot_id=base.snapshot_id,
    ) as writer:
        writer.existing(fake_file(table, "a"), base.snapshot_id, 1, 1)
    with pytest.raises(ValidationError, match="with existing files"):
        table.new_append().append_manifest(writer.to_manifest_file())
    with ManifestWriter(
        table.io(),
        f"{table.location()}/metadata/deleted.avro",
        spec=table.spec(),
        schema=table.schema(),
        format_version=format_version,
        snapshot_id=base.snapshot_id,
    ) as writer:
        writer.delete(fake_file(table, "a"), base.snapshot_id, 1, 1)
    with pytest.raises(ValidationError, match="with deleted files"):
        table.new_append().append_manifest(writer.to_manifest_file())
    assert table.current_snapshot() == base


# ---- transactions, delete manifests, row lineage, real data --------------------------------------


def test_transaction_of_two_merging_appends(memory_catalog: Catalog, format_version: int) -> None:
    table = make_table(memory_catalog, format_version, **{MIN_COUNT: "2"})
    first = commit_append(table, fake_file(table, "a"))
    txn = table.new_transaction()
    middle = txn.new_append()
    middle.append_file(fake_file(table, "b")).commit()
    last = txn.new_append()
    last.append_file(fake_file(table, "c")).commit()
    txn.commit_transaction()
    s1, s2, s3 = (seq_of(format_version, n) for n in (1, 2, 3))
    (merged,) = manifests_of(table)
    assert entries_of(table, merged) == [
        (ADDED, last.snapshot_id, s3, s3, "c"),
        (EXISTING, middle.snapshot_id, s2, s2, "b"),
        (EXISTING, first.snapshot_id, s1, s1, "a"),
    ]
    middle_snapshot = table.snapshot(middle.snapshot_id)
    assert middle_snapshot is not None
    (middle_merged,) = manifests_of(table, middle_snapshot)
    assert [(e[0], e[4]) for e in entries_of(table, middle_merged)] == [(ADDED, "b"), (EXISTING, "a")]
    assert_no_orphans(table)


@pytest.mark.parametrize("format_version", [2])
def test_delete_manifests_merge_apart_from_data_manifests(
    memory_catalog: Catalog, format_version: int
) -> None:
    table = make_table(memory_catalog, format_version, **{MIN_COUNT: "1"})
    first = commit_append(table, fake_file(table, "a"))
    AddDeletes(table, [fake_position_deletes(table, "a1")]).commit()
    d1 = table.current_snapshot()
    AddDeletes(table, [fake_position_deletes(table, "a2")]).commit()
    d2 = table.current_snapshot()
    assert d1 is not None and d2 is not None
    assert [m.content for m in manifests_of(table)] == [
        ManifestContent.DELETES,
        ManifestContent.DELETES,
        ManifestContent.DATA,
    ]
    last = commit_append(table, fake_file(table, "b"))
    data, deletes = manifests_of(table)
    assert (data.content, deletes.content) == (ManifestContent.DATA, ManifestContent.DELETES)
    assert entries_of(table, data) == [
        (ADDED, last.snapshot_id, 4, 4, "b"),
        (EXISTING, first.snapshot_id, 1, 1, "a"),
    ]
    assert entries_of(table, deletes) == [
        (EXISTING, d2.snapshot_id, 3, 3, "a2-deletes"),
        (EXISTING, d1.snapshot_id, 2, 2, "a1-deletes"),
    ]
    assert last.summary["total-delete-files"] == "2"


def test_v3_merges_keep_row_ids(memory_catalog: Catalog) -> None:
    table = make_table(memory_catalog, 3, **{MIN_COUNT: "3"})
    assigned: dict[str, int] = {}
    for n, records in enumerate((5, 7, 11, 13, 17, 19, 23)):
        before = table.metadata.next_row_id or 0
        snapshot = commit_append(table, fake_file(table, f"f{n}", records=records))
        assert snapshot.first_row_id == before
        assert table.metadata.next_row_id == before + (snapshot.added_rows or 0)
        spans = []
        for manifest in manifests_of(table):
            for entry in read_manifest(table.io(), manifest):
                file = entry.data_file
                assert file.first_row_id is not None
                # A file keeps the row ids it was first given, however often it is merged.
                assert assigned.setdefault(file.file_path, file.first_row_id) == file.first_row_id
                spans.append((file.first_row_id, file.first_row_id + file.record_count))
        spans.sort()
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))  # disjoint
        assert spans[-1][1] <= table.metadata.next_row_id  # type: ignore[operator]
    assert len(manifests_of(table)) < 7  # merged on the way


def test_merged_tables_read_the_same(catalog: Catalog, format_version: int) -> None:
    table = catalog.create_table(
        "db.t",
        ARROW_SCHEMA,
        partition_by=["bucket(4, id)"],
        properties={"format-version": str(format_version), MIN_COUNT: "3"},
    )
    for n in range(6):
        table.append(rows(10, start=10 * n))
    manifests = manifests_of(table)
    assert len(manifests) < 6 and any(m.existing_files_count for m in manifests)
    assert table.new_scan().count() == 60
    assert sorted(r["id"] for r in table.new_scan().filter("id >= 55").to_arrow().to_pylist()) == list(
        range(55, 60)
    )
    # Metrics survive the merge: a point lookup plans only files whose bounds hold the value.
    planned = table.new_scan().filter("id = 42").plan_files()
    assert 1 <= len(planned) < 6
    assert_no_orphans(table)


def test_changing_the_append_after_apply_rewrites_merges(
    memory_catalog: Catalog, format_version: int
) -> None:
    """apply() merged an old-spec bin; adding a file afterwards deletes what apply() wrote, so
    the commit must write that merge again rather than reuse the deleted file."""
    table = make_table(memory_catalog, format_version)
    commit_append(table, fake_file(table, "a"))
    commit_append(table, fake_file(table, "b"), fast=True)
    new_spec = add_spec(table, ["bucket(16, id)", "bucket(4, name)"])
    append = table.new_append().append_file(fake_file(table, "y", spec=new_spec))
    _, applied_merge = append.apply().all_manifests(table.io())
    assert local(applied_merge.manifest_path).exists()
    append.append_file(fake_file(table, "z", spec=new_spec))
    assert not local(applied_merge.manifest_path).exists()
    append.commit()
    new, merged = manifests_of(table)
    assert all(local(m.manifest_path).exists() for m in (new, merged))
    assert [e[4] for e in entries_of(table, new)] == ["y", "z"]
    assert [e[4] for e in entries_of(table, merged)] == ["b", "a"]
    assert_no_orphans(table)


class _FailingDeletes(FaultInjectingFileIO):
    """Fails the first ``n`` delete_many calls (writes and reads pass through)."""

    def __init__(self, inner: FileIO, n: int):
        super().__init__(inner, lambda _: False)
        self.left = n

    def delete_many(self, locations: Iterable[str]) -> None:
        if self.left:
            self.left -= 1
            raise FileIOError("injected: cannot delete")
        super().delete_many(locations)


def test_failing_to_delete_an_unused_merge_does_not_fail_the_commit(memory_catalog: Catalog) -> None:
    table = make_table(memory_catalog, 2, **{MIN_COUNT: "2"})
    commit_append(table, fake_file(table, "a"))
    io = _FailingDeletes(table.io(), 1)
    faulty = Table(
        table.identifier_tuple, table.metadata, table.metadata_location, io, memory_catalog.backend
    )
    append = faulty.new_append().append_file(fake_file(table, "b"))
    (stale,) = append.apply().all_manifests(table.io())
    other = memory_catalog.load_table("db.t")
    commit_append(other, fake_file(other, "c"), fast=True)
    append.commit()  # the retry's eager delete of the stale merge fails; the commit does not
    assert io.left == 0
    assert [e[4] for e in entries_of(faulty, manifests_of(faulty)[0])] == ["b", "c", "a"]
    assert not local(stale.manifest_path).exists()  # deleted by the cleanup after the commit
    assert_no_orphans(faulty)
