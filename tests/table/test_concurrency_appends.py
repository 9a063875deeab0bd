"""Two processes append to one table at the same time, 50 times each.

Through the SQL catalog (a SQLite file) and the Hadoop catalog (exclusive creation of
``v<N>.metadata.json``), with ``commit.retry.num-retries`` raised as users do under heavy
contention. Afterwards: exactly 100 snapshots in one linear chain, every row exactly once, no
error escaped the retry loop, and no file of a failed attempt is left behind (every data file,
manifest, manifest list and metadata file on disk is referenced).
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icefloe
from icefloe.io import local_path
from icefloe.manifests import read_manifest

HERE = Path(__file__).resolve().parent
WORKER = HERE / "append_worker.py"
WORKERS = 2
APPENDS = 50
ROWS = 3

TABLE_PROPERTIES = {
    "commit.retry.num-retries": "20",
    # Java's default waits (100 ms doubling up to 60 s) would let a few unlucky retries eat
    # the time budget; short waits keep contention high, which is the point here.
    "commit.retry.min-wait-ms": "5",
    "commit.retry.max-wait-ms": "200",
    # Keep every metadata file in the log, so the log can account for each file on disk.
    "write.metadata.previous-versions-max": "1000",
}


def _catalog_properties(kind: str, warehouse: Path) -> dict[str, str]:
    if kind == "sql":
        return {"type": "sql", "uri": f"sqlite:///{warehouse / 'catalog.db'}", "warehouse": str(warehouse)}
    return {"type": "hadoop", "warehouse": str(warehouse)}


def _start_worker(arguments: dict[str, Any]) -> subprocess.Popen[str]:
    source_root = Path(icefloe.__file__).parents[1]
    env = {**os.environ, "PYTHONPATH": str(source_root)}
    return subprocess.Popen(
        [sys.executable, str(WORKER), json.dumps(arguments)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _run_workers(arguments: dict[str, Any], tmp_path: Path) -> list[dict[str, Any]]:
    """Start the workers, release them together once all are ready, collect their reports."""
    go = tmp_path / "go"
    ready = [tmp_path / f"ready-{w}" for w in range(WORKERS)]
    processes = [
        _start_worker({**arguments, "worker": w, "ready": str(ready[w]), "go": str(go)})
        for w in range(WORKERS)
    ]
    try:
        deadline = time.monotonic() + 60
        while not all(r.exists() for r in ready):
            failed = [p for p in processes if p.poll() is not None]
            assert not failed, f"a worker died before starting: {failed[0].communicate()[1]}"
            assert time.monotonic() < deadline, "workers did not get ready within 60 s"
            time.sleep(0.01)
        go.touch()
        outputs = [p.communicate(timeout=300) for p in processes]
    finally:
        for p in processes:
            if p.poll() is None:
                p.kill()
                p.wait()
    for p, (_, err) in zip(processes, outputs):
        assert p.returncode == 0, f"an error escaped the retry loop:\n{err}"
    return [json.loads(out) for out, _ in outputs]


def _files_under(directory: Path) -> set[str]:
    return {str(p) for p in directory.rglob("*") if p.is_file()}


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sql", "hadoop"])
def test_two_processes_append_fifty_times_each(
    kind: str, warehouse: Path, tmp_path: Path, record_property: Any, request: pytest.FixtureRequest
) -> None:
    properties = _catalog_properties(kind, warehouse)
    catalog = icefloe.load_catalog("concurrent", **properties)
    request.addfinalizer(catalog.backend.close)
    catalog.create_namespace("db")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("worker", pa.int32())])
    created = catalog.create_table("db.t", schema, partition_by=["worker"], properties=TABLE_PROPERTIES)

    started = time.monotonic()
    reports = _run_workers(
        {"name": "concurrent", "catalog": properties, "table": "db.t", "appends": APPENDS, "rows": ROWS},
        tmp_path,
    )
    elapsed = time.monotonic() - started
    retries = sum(r["retries"] for r in reports)
    record_property("retries", retries)
    record_property("seconds", round(elapsed, 1))
    print(f"{kind}: {retries} retries ({[r['retries'] for r in reports]}) in {elapsed:.1f} s")

    table = catalog.load_table("db.t")
    metadata = table.metadata

    # Exactly the 100 snapshots the workers reported, in one linear chain.
    reported = [s for r in reports for s in r["snapshots"]]
    assert len(set(reported)) == WORKERS * APPENDS
    snapshots = sorted(metadata.snapshots, key=lambda s: s.sequence_number)
    assert {s.snapshot_id for s in snapshots} == set(reported)
    assert [s.sequence_number for s in snapshots] == list(range(1, WORKERS * APPENDS + 1))
    assert snapshots[0].parent_snapshot_id is None
    for parent, child in itertools.pairwise(snapshots):
        assert child.parent_snapshot_id == parent.snapshot_id
        assert child.timestamp_ms > parent.timestamp_ms
    assert metadata.current_snapshot_id == snapshots[-1].snapshot_id
    assert [e.snapshot_id for e in metadata.snapshot_log] == [s.snapshot_id for s in snapshots]
    # Summaries were recomputed on each retry's parent, not on the stale one.
    assert [int(s.summary["total-records"]) for s in snapshots] == [
        ROWS * (n + 1) for n in range(WORKERS * APPENDS)
    ]
    assert [int(s.summary["total-data-files"]) for s in snapshots] == list(range(1, WORKERS * APPENDS + 1))
    # Each worker's own snapshots appear in the order it committed them.
    for report in reports:
        positions = [s.snapshot_id for s in snapshots]
        assert [positions.index(s) for s in report["snapshots"]] == sorted(
            positions.index(s) for s in report["snapshots"]
        )

    # Every row exactly once.
    rows = table.new_scan().to_arrow()
    expected_ids = sorted(
        w * 1_000_000 + n * 1000 + k for w in range(WORKERS) for n in range(APPENDS) for k in range(ROWS)
    )
    assert sorted(rows.column("id").to_pylist()) == expected_ids

    # Nothing orphaned: every file on disk is referenced by the final metadata.
    io = table.io()
    manifest_lists = {s.manifest_list for s in snapshots}
    manifests = {m.manifest_path: m for s in snapshots for m in s.all_manifests(io)}
    data_files = {entry.data_file.file_path for m in manifests.values() for entry in read_manifest(io, m)}
    assert len(data_files) == WORKERS * APPENDS
    metadata_files = {e.metadata_file for e in metadata.metadata_log} | {table.metadata_location}
    assert created.metadata_location in metadata_files
    assert len(metadata_files) == WORKERS * APPENDS + 1

    table_dir = Path(local_path(table.location()))
    on_disk_data = _files_under(table_dir / "data")
    assert on_disk_data == {local_path(p) for p in data_files}, "orphaned or missing data files"
    metadata_dir = table_dir / "metadata"
    on_disk_avro = {str(p) for p in metadata_dir.glob("*.avro")}
    referenced_avro = {local_path(p) for p in manifest_lists | set(manifests)}
    assert on_disk_avro == referenced_avro, (
        f"orphaned manifests or manifest lists: {sorted(on_disk_avro - referenced_avro)[:5]}; "
        f"missing: {sorted(referenced_avro - on_disk_avro)[:5]}"
    )
    on_disk_json = {str(p) for p in metadata_dir.glob("*.metadata.json")}
    assert on_disk_json == {local_path(p) for p in metadata_files}, "orphaned metadata files"
    others = _files_under(metadata_dir) - on_disk_avro - on_disk_json
    allowed = {str(metadata_dir / "version-hint.text"), str(metadata_dir / ".version-hint.text.crc")}
    assert others <= (allowed if kind == "hadoop" else set()), f"unexpected files: {sorted(others)}"
    assert _files_under(table_dir) == on_disk_data | _files_under(metadata_dir)
