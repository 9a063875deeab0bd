"""The manifest cache of scan planning: hits, keys that never serve stale content, the
``io.manifest.cache-*`` properties (enabled, budget, largest file, expiry), no thrashing
when a plan is larger than the budget, thread safety, and results callers may mutate."""

from __future__ import annotations

import dataclasses
import gc
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from icefloe.errors import ValidationError
from icefloe.expressions import always_true, greater_than, less_than
from icefloe.io import FileIO, LocalFileIO
from icefloe.manifests import write_manifest_list
from icefloe.scan import _manifest_cache, _parallel, decoded_manifests, plan_files
from icefloe.scan._manifest_cache import (
    CacheSettings,
    ManifestCache,
    cache_for,
    drop_caches,
)
from icefloe.scan.planning import drop_manifest_cache
from icefloe.spec.conversions import to_bytes
from icefloe.spec.manifest import ManifestContent
from icefloe.spec.partitioning import PartitionField, PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.transforms import parse_transform
from icefloe.spec.types import LongType, NestedField
from scan.planning_helpers import (
    EntrySpec,
    ManifestSpec,
    data_file,
    position_delete,
    reference_plan,
    task_signature,
    write_snapshot,
)
from support.native_manifests import native_threshold

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True), NestedField(2, "p", LongType(), required=False)
)
SPEC = PartitionSpec((PartitionField(2, 1000, parse_transform("identity"), "p"),))


def _file(k: int, partition: int = 0) -> Any:
    return data_file(
        f"/data/f{k}.parquet",
        (partition,),
        10,
        value_counts={1: 10},
        null_value_counts={1: 0},
        lower_bounds={1: to_bytes(LongType(), k * 10)},
        upper_bounds={1: to_bytes(LongType(), k * 10 + 9)},
    )


def _table(folder: Path, io: FileIO, manifests: int = 4, files: int = 5) -> tuple[TableMetadata, Snapshot]:
    specs = [
        ManifestSpec(tuple(EntrySpec(_file(m * files + f, m)) for f in range(files)))
        for m in range(manifests)
    ]
    return write_snapshot(folder, io, SCHEMA, SPEC, specs, format_version=2)


@pytest.fixture(autouse=True)
def _fresh_caches() -> Any:
    drop_caches()
    yield
    drop_caches()


def _paths(tasks: list[Any]) -> list[str]:
    return [t.file.file_path for t in tasks]


@pytest.fixture
def decodes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The manifests decoded (not served from the cache), in order."""
    seen: list[str] = []
    decode = _parallel.decode_manifests

    def counting(jobs: list[tuple[bytes, Any]], *, summary: bool = False) -> Any:
        seen.extend(manifest.manifest_path for _, manifest in jobs)
        return decode(jobs, summary=summary)

    monkeypatch.setattr(_parallel, "decode_manifests", counting)
    return seen


def test_second_plan_is_served_from_the_cache(tmp_path: Path, decodes: list[str]) -> None:
    io = LocalFileIO()
    metadata, snapshot = _table(tmp_path, io)
    first = plan_files(io, metadata, snapshot)
    assert len(decodes) == 4
    cache = cache_for(io)
    assert cache is not None and cache.stats().entries == 5  # the manifest list and four manifests
    second = plan_files(io, metadata, snapshot, greater_than("id", 55))
    third = plan_files(io, metadata, snapshot)  # copies of the files cached by the second plan
    assert len(decodes) == 4
    for tasks, row_filter in (
        (first, always_true()),
        (second, greater_than("id", 55)),
        (third, always_true()),
    ):
        expected = reference_plan(io, metadata, snapshot, row_filter)
        assert [task_signature(t) for t in tasks] == [task_signature(t) for t in expected]


def test_fileios_with_equal_properties_share_a_cache(tmp_path: Path, decodes: list[str]) -> None:
    metadata, snapshot = _table(tmp_path, LocalFileIO())
    plan_files(LocalFileIO({"a": "1"}), metadata, snapshot)
    assert len(decodes) == 4
    other = LocalFileIO({"a": "1"})  # a table loaded again gets a new FileIO
    plan_files(other, metadata, snapshot)
    assert len(decodes) == 4
    cache = cache_for(other)
    different = cache_for(LocalFileIO({"a": "2"}))
    assert different is not None and different is not cache and len(different) == 0
    plan_files(LocalFileIO({"a": "2"}), metadata, snapshot)
    assert len(decodes) == 8


def test_a_rewritten_manifest_is_never_served_stale(tmp_path: Path) -> None:
    """A different file at a cached location has a different length (or belongs to another
    snapshot's list): it is read afresh."""
    io = LocalFileIO()
    metadata, snapshot = _table(tmp_path, io, manifests=1, files=3)
    assert _paths(plan_files(io, metadata, snapshot)) == [f"/data/f{k}.parquet" for k in range(3)]
    (manifest,) = snapshot.all_manifests(io)
    # Rewrite the manifest in place with other files (a longer file), and a new snapshot's list.
    other_folder = tmp_path / "other"
    _, other_snapshot = _table(other_folder, io, manifests=1, files=5)
    (other_manifest,) = other_snapshot.all_manifests(io)
    data = Path(other_manifest.manifest_path).read_bytes()
    assert len(data) != manifest.manifest_length
    Path(manifest.manifest_path).write_bytes(data)
    moved = dataclasses.replace(other_manifest, manifest_path=manifest.manifest_path)
    list_path = str(tmp_path / "metadata" / "snap-rewritten.avro")
    write_manifest_list(io, list_path, 2, 4242, None, 9, [moved])
    rewritten = dataclasses.replace(snapshot, snapshot_id=4242, manifest_list=list_path, sequence_number=9)
    assert _paths(plan_files(io, metadata, rewritten)) == [f"/data/f{k}.parquet" for k in range(5)]


def test_a_manifest_list_is_cached_per_snapshot(tmp_path: Path) -> None:
    io = LocalFileIO()
    metadata, snapshot = _table(tmp_path, io, manifests=2, files=2)
    assert len(plan_files(io, metadata, snapshot)) == 4
    # Another snapshot whose list is a different file at the same location.
    (first, _) = snapshot.all_manifests(io)
    assert snapshot.manifest_list is not None
    write_manifest_list(io, snapshot.manifest_list, 2, 777, None, 9, [first], overwrite=True)
    other = dataclasses.replace(snapshot, snapshot_id=777)
    assert len(plan_files(io, metadata, other)) == 2


def test_disabled_cache_plans_the_same(tmp_path: Path) -> None:
    io = LocalFileIO({"io.manifest.cache-enabled": "false"})
    metadata, snapshot = _table(tmp_path, io)
    assert cache_for(io) is None
    expected = [task_signature(t) for t in reference_plan(io, metadata, snapshot, less_than("id", 25))]
    for _ in range(2):
        assert [
            task_signature(t) for t in plan_files(io, metadata, snapshot, less_than("id", 25))
        ] == expected


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("io.manifest.cache-enabled", "yes"),
        ("io.manifest.cache.max-total-bytes", "lots"),
        ("io.manifest.cache.max-content-length", "-1"),
        ("io.manifest.cache.expiration-interval-ms", "1.5"),
    ],
)
def test_invalid_cache_properties_are_named(tmp_path: Path, key: str, value: str) -> None:
    io = LocalFileIO({key: value})
    metadata, snapshot = _table(tmp_path, LocalFileIO(), manifests=1, files=1)
    with pytest.raises(ValidationError, match=key.replace(".", r"\.")):
        plan_files(io, metadata, snapshot)


def test_files_longer_than_the_content_limit_are_not_cached(tmp_path: Path, decodes: list[str]) -> None:
    io = LocalFileIO({"io.manifest.cache.max-content-length": "100"})
    metadata, snapshot = _table(tmp_path, io)
    plan_files(io, metadata, snapshot)
    plan_files(io, metadata, snapshot)
    assert len(decodes) == 8
    cache = cache_for(io)
    assert cache is not None and cache.stats().entries == 1  # only the manifest list


def test_a_plan_larger_than_the_budget_keeps_what_fits(tmp_path: Path, decodes: list[str]) -> None:
    """No thrashing: with room for about half of the manifests, planning again decodes only
    the other half (plain LRU would evict each manifest before its next use)."""
    probe = LocalFileIO()
    metadata, snapshot = _table(tmp_path, probe, manifests=8, files=5)
    plan_files(probe, metadata, snapshot)
    full = cache_for(probe)
    assert full is not None
    budget = full.stats().total_bytes // 2
    io = LocalFileIO({"io.manifest.cache.max-total-bytes": str(budget)})
    decodes.clear()
    plan_files(io, metadata, snapshot)
    assert len(decodes) == 8
    cache = cache_for(io)
    assert cache is not None
    kept = cache.stats().entries - 1  # the manifest list is cached too
    assert 0 < kept < 8 and cache.stats().total_bytes <= budget
    for _ in range(2):
        decodes.clear()
        plan_files(io, metadata, snapshot)
        assert len(decodes) == 8 - kept  # what was cached stays cached
        assert cache.stats().total_bytes <= budget


def test_cache_eviction_and_expiry() -> None:
    now = [0.0]
    cache = ManifestCache(CacheSettings(True, 100, 1000, 1000), clock=lambda: now[0])
    assert cache.put("a", 1, 40) and cache.put("b", 2, 40)
    assert cache.get("a") == 1  # "b" is now the least recently used
    assert cache.put("c", 3, 40)
    assert cache.get("b") is None and cache.get("a") == 1 and cache.get("c") == 3
    assert not cache.put("huge", 4, 101)  # larger than the whole budget
    assert not cache.put("long", 5, 1, content_length=1001)  # a file over the content limit
    # Entries touched by plan 7 are not evicted for plan 7's own misses.
    assert cache.get("a", 7) == 1 and cache.get("c", 7) == 3
    assert not cache.put("d", 6, 40, token=7)
    assert cache.put("d", 6, 40, token=8)  # another plan evicts the least recently used
    assert cache.get("a") is None
    now[0] = 0.5
    assert cache.get("c") == 3
    now[0] = 1.4  # "d" was last used at 0, "c" at 0.5: only "d" has expired
    assert cache.get("d") is None and cache.get("c") == 3
    now[0] = 10.0
    assert cache.get("c") is None and len(cache) == 0
    never = ManifestCache(CacheSettings(True, 100, 1000, 0), clock=lambda: now[0])
    never.put("x", 1, 1)
    now[0] = 1e9
    assert never.get("x") == 1


def test_results_are_the_callers_own(tmp_path: Path) -> None:
    """Files handed out by a plan are fresh objects (cold and warm), and their metrics are
    read-only mappings: nothing a caller does to one plan's files reaches a later plan."""
    io = LocalFileIO()
    metadata, snapshot = _table(tmp_path, io, manifests=1, files=2)
    previous: list[Any] = []
    for _ in range(4):
        tasks = plan_files(io, metadata, snapshot)
        assert tasks[0].file.value_counts == {1: 10}
        assert tasks[0].file.lower_bounds == {1: to_bytes(LongType(), 0)}
        assert all(t.file is not p.file for t in tasks for p in previous)
        with pytest.raises(TypeError):
            tasks[0].file.lower_bounds[1] = b"garbage!"  # type: ignore[index]
        previous = tasks


def test_concurrent_plans_agree(tmp_path: Path) -> None:
    io = LocalFileIO()
    metadata, snapshot = _table(tmp_path, io, manifests=6, files=4)
    filters = [always_true(), less_than("id", 80), greater_than("id", 150), less_than("p", 3)]
    expected = {
        str(f): [task_signature(t) for t in reference_plan(io, metadata, snapshot, f)] for f in filters
    }
    start = threading.Barrier(8)

    def plan(k: int) -> tuple[str, list[Any]]:
        start.wait()
        row_filter = filters[k % len(filters)]
        fresh = LocalFileIO()  # a FileIO per thread, one shared cache
        return str(row_filter), [task_signature(t) for t in plan_files(fresh, metadata, snapshot, row_filter)]

    with ThreadPoolExecutor(8) as pool:
        for _ in range(3):
            drop_manifest_cache()
            for name, signatures in pool.map(plan, range(8)):
                assert signatures == expected[name]


class _OwnIO(LocalFileIO):
    """A FileIO class icefloe does not know: cached per instance, as Java caches per FileIO."""


def test_unknown_fileio_classes_get_a_cache_per_instance(tmp_path: Path) -> None:
    metadata, snapshot = _table(tmp_path, LocalFileIO(), manifests=1, files=1)
    a, b = _OwnIO(), _OwnIO()
    plan_files(a, metadata, snapshot)
    cache_a, cache_b = cache_for(a), cache_for(b)
    assert cache_a is not None and cache_b is not None and cache_a is not cache_b
    assert len(cache_a) == 2 and len(cache_b) == 0
    before = len(_manifest_cache._CACHES)
    del a, cache_a
    gc.collect()
    assert len(_manifest_cache._CACHES) == before - 1  # dropped with its FileIO


def test_delete_manifests_are_cached_too(tmp_path: Path, decodes: list[str]) -> None:
    io = LocalFileIO()
    data = ManifestSpec(tuple(EntrySpec(_file(k, 0)) for k in range(3)))
    deletes = ManifestSpec((EntrySpec(position_delete("/data/d.parquet", (0,))),), ManifestContent.DELETES)
    metadata, snapshot = write_snapshot(tmp_path, io, SCHEMA, SPEC, [data, deletes], format_version=2)
    for _ in range(3):
        tasks = plan_files(io, metadata, snapshot)
        assert [[d.file_path for d in t.deletes] for t in tasks] == [["/data/d.parquet"]] * 3
    assert len(decodes) == 2


def test_summaries_are_cached_apart_from_complete_manifests(tmp_path: Path, decodes: list[str]) -> None:
    """A manifest decoded for a summary (the partitions table) never reaches a plan; a
    complete one cached by a plan serves a summary."""
    io = LocalFileIO()
    metadata, snapshot = _table(tmp_path, io)
    manifests = snapshot.all_manifests(io)
    with native_threshold(1):  # summaries are made natively
        summaries = list(decoded_manifests(io, manifests, summary=True))
        assert [d.summary for d in summaries] == [True] * 4 and len(decodes) == 4
        assert [d.summary for d in decoded_manifests(io, manifests, summary=True)] == [True] * 4
        assert len(decodes) == 4  # served from the cache
        tasks = plan_files(io, metadata, snapshot)
        assert len(decodes) == 8  # decoded again, completely
        expected = reference_plan(io, metadata, snapshot, always_true())
        assert [task_signature(t) for t in tasks] == [task_signature(t) for t in expected]
        drop_caches()
        plan_files(io, metadata, snapshot)
        assert [d.summary for d in decoded_manifests(io, manifests, summary=True)] == [False] * 4
        assert len(decodes) == 12  # the plan's complete manifests served the summary
