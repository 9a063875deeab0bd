"""Manifests decoded by worker processes: the same tasks as decoding in-process, the same
errors (naming the file), and a plan that survives a dead worker or an abandoned plan."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from icefloe.errors import InvalidManifestError, ValidationError
from icefloe.expressions import always_true, greater_than, less_than
from icefloe.io import LocalFileIO
from icefloe.scan import _parallel, plan_files
from icefloe.scan._manifest_cache import drop_caches
from icefloe.spec.conversions import to_bytes
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
    reference_plan,
    task_signature,
    write_snapshot,
)

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True), NestedField(2, "p", LongType(), required=False)
)
SPEC = PartitionSpec((PartitionField(2, 1000, parse_transform("identity"), "p"),))
NO_CACHE = {"io.manifest.cache-enabled": "false"}


def _file(k: int, partition: int) -> Any:
    return data_file(
        f"/data/f{k}.parquet",
        (partition,),
        10,
        value_counts={1: 10},
        null_value_counts={1: 0},
        lower_bounds={1: to_bytes(LongType(), k)},
        upper_bounds={1: to_bytes(LongType(), k + 3)},
        split_offsets=(4,),
    )


@pytest.fixture
def table(tmp_path: Path) -> tuple[TableMetadata, Snapshot]:
    manifests = [
        ManifestSpec(tuple(EntrySpec(_file(m * 10 + f, m % 3)) for f in range(10)), codec="gzip")
        for m in range(12)
    ]
    return write_snapshot(tmp_path, LocalFileIO(), SCHEMA, SPEC, manifests, format_version=2)


@pytest.fixture(autouse=True)
def _every_plan_in_parallel(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(_parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(_parallel, "PARALLEL_MIN_BYTES_COLD_START", 0)
    drop_caches()
    yield
    drop_caches()


def _signatures(tasks: list[Any]) -> list[Any]:
    return [task_signature(t) for t in tasks]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_workers_plan_what_the_planning_thread_plans(
    table: tuple[TableMetadata, Snapshot], workers: str
) -> None:
    metadata, snapshot = table
    parallel = LocalFileIO({**NO_CACHE, "scan.planning.worker-processes": workers})
    for row_filter in (always_true(), less_than("id", 35), greater_than("p", 0)):
        expected = _signatures(reference_plan(LocalFileIO(), metadata, snapshot, row_filter))
        assert _signatures(plan_files(parallel, metadata, snapshot, row_filter)) == expected
    pool = _parallel._POOL
    assert pool is not None and len(pool.workers) == int(workers) and not pool.broken


def test_workers_started_from_a_fresh_interpreter(
    table: tuple[TableMetadata, Snapshot], monkeypatch: pytest.MonkeyPatch
) -> None:
    """When forking is not safe (another thread is running, not Linux), workers start with
    ``forkserver`` and plan the same."""
    metadata, snapshot = table
    monkeypatch.setattr(_parallel, "_start_method", lambda: "forkserver")
    monkeypatch.setattr(_parallel, "_POOL", None)
    io = LocalFileIO({**NO_CACHE, "scan.planning.worker-processes": "1"})
    expected = _signatures(reference_plan(LocalFileIO(), metadata, snapshot, less_than("id", 60)))
    assert _signatures(plan_files(io, metadata, snapshot, less_than("id", 60))) == expected
    pool = _parallel._POOL
    assert pool is not None and not pool.broken
    pool.close()


def test_a_corrupt_manifest_fails_as_without_workers(table: tuple[TableMetadata, Snapshot]) -> None:
    metadata, snapshot = table
    io = LocalFileIO({**NO_CACHE, "scan.planning.worker-processes": "1"})
    manifests = snapshot.all_manifests(io)
    victim = manifests[7].manifest_path
    data = bytearray(Path(victim).read_bytes())
    middle = len(data) - 200
    data[middle : middle + 8] = b"\xff" * 8
    Path(victim).write_bytes(bytes(data))
    with pytest.raises(InvalidManifestError) as raised:
        plan_files(io, metadata, snapshot)
    assert raised.value.location == victim
    # The pool is still usable after the failed plan.
    intact = dataclasses.replace(snapshot)
    others = [m for m in manifests if m.manifest_path != victim]
    assert len(plan_files(io, metadata, intact, manifest_filter=lambda m: m in others)) == 110


def test_a_dead_worker_does_not_lose_manifests(table: tuple[TableMetadata, Snapshot]) -> None:
    metadata, snapshot = table
    io = LocalFileIO({**NO_CACHE, "scan.planning.worker-processes": "1"})
    expected = _signatures(reference_plan(LocalFileIO(), metadata, snapshot))
    assert _signatures(plan_files(io, metadata, snapshot)) == expected
    pool = _parallel._POOL
    assert pool is not None
    pool.workers[0].process.kill()
    pool.workers[0].process.join()
    assert _signatures(plan_files(io, metadata, snapshot)) == expected
    # The broken pool is replaced by the next plan that wants one.
    assert _signatures(plan_files(io, metadata, snapshot)) == expected
    assert _parallel._POOL is not None and _parallel._POOL is not pool


def test_an_abandoned_plan_leaves_the_pool_clean(table: tuple[TableMetadata, Snapshot]) -> None:
    metadata, snapshot = table
    io = LocalFileIO({**NO_CACHE, "scan.planning.worker-processes": "1"})
    seen = []

    def stop_early(entry: Any) -> bool:
        seen.append(entry)
        if len(seen) == 15:
            raise RuntimeError("the caller gives up")
        return True

    with pytest.raises(RuntimeError, match="gives up"):
        plan_files(io, metadata, snapshot, entry_filter=stop_early)
    expected = _signatures(reference_plan(LocalFileIO(), metadata, snapshot))
    assert _signatures(plan_files(io, metadata, snapshot)) == expected


def test_small_plans_stay_in_process(
    table: tuple[TableMetadata, Snapshot], monkeypatch: pytest.MonkeyPatch
) -> None:
    metadata, snapshot = table
    monkeypatch.setattr(_parallel, "PARALLEL_MIN_BYTES", 1 << 40)
    # Both thresholds: which one applies depends on whether forking is safe, and a thread
    # another test left running (a Spark session's) makes it unsafe.
    monkeypatch.setattr(_parallel, "PARALLEL_MIN_BYTES_COLD_START", 1 << 40)
    monkeypatch.setattr(_parallel, "_POOL", None)
    plan_files(LocalFileIO(NO_CACHE), metadata, snapshot)
    assert _parallel._POOL is None


@pytest.mark.parametrize(("value", "expected"), [("0", 0), ("3", 3), (" AUTO ", None)])
def test_worker_processes_property(value: str, expected: int | None) -> None:
    size = _parallel.pool_size({"scan.planning.worker-processes": value})
    assert size == expected if expected is not None else 0 <= size <= 7


@pytest.mark.parametrize("value", ["-1", "many"])
def test_invalid_worker_processes_property(value: str) -> None:
    with pytest.raises(ValidationError, match=r"scan\.planning\.worker-processes"):
        _parallel.pool_size({"scan.planning.worker-processes": value})


def test_jobs_and_answers_larger_than_the_pipe(tmp_path: Path) -> None:
    """Manifests of several hundred KB each: a job (a group of them) and an answer (their
    decoded columns) each fill the pipe many times over, and the pool neither stalls nor
    loses anything."""
    long = "/data/" + "d" * 400
    manifests = [
        ManifestSpec(
            tuple(
                EntrySpec(dataclasses.replace(_file(m * 1500 + f, m), file_path=f"{long}/{m}-{f}.parquet"))
                for f in range(1500)
            ),
            codec="uncompressed",
        )
        for m in range(4)
    ]
    io = LocalFileIO({**NO_CACHE, _parallel.WORKER_PROCESSES: "1"})
    metadata, snapshot = write_snapshot(tmp_path, io, SCHEMA, SPEC, manifests, format_version=2)
    assert min(m.manifest_length for m in snapshot.all_manifests(io)) > 600_000
    expected = reference_plan(io, metadata, snapshot, always_true())
    assert _signatures(plan_files(io, metadata, snapshot)) == _signatures(expected)
