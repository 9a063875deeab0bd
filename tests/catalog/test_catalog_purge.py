"""drop_table(purge=True) deletes every file the metadata reaches, wherever it lives."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from catalog_helpers import SCHEMA, new_metadata

from icefloe.catalog import CatalogBackend, HadoopCatalog
from icefloe.io import local_path
from icefloe.manifests import write_manifest, write_manifest_list
from icefloe.spec.manifest import DataFile, FileFormat, ManifestEntry, ManifestEntryStatus
from icefloe.spec.partitioning import UNPARTITIONED_SPEC
from icefloe.spec.snapshots import Snapshot, new_snapshot_id
from icefloe.spec.statistics import StatisticsFile
from icefloe.spec.updates import AddSnapshot, SetProperties, SetSnapshotRef, SetStatistics


def _write(location: str, data: bytes = b"data") -> str:
    path = Path(local_path(location))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return location


def _table_with_files(backend: CatalogBackend, warehouse: Path, **properties: str) -> dict[str, list[str]]:
    """A table with two snapshots: data inside and outside the table directory, a removed
    file, a statistics file. Returns its files by kind."""
    backend.create_namespace("db")
    loaded = backend.create_table("db.t", new_metadata(backend, "db.t", **properties))
    table = loaded.metadata.location
    elsewhere = f"{warehouse}/shared-data"
    data = [
        _write(f"{table}/data/a.parquet"),
        _write(f"{elsewhere}/b.parquet"),
        _write(f"{table}/data/c.parquet"),
    ]
    files = [
        DataFile(file_path=p, file_format=FileFormat.PARQUET, record_count=1, file_size_in_bytes=4)
        for p in data
    ]
    manifests: list[str] = []
    lists: list[str] = []
    parent: int | None = None
    for sequence in (1, 2):
        snapshot_id = new_snapshot_id()
        # The second snapshot removes b (a DELETED entry: its file is still reachable) and adds c.
        removed_b = ManifestEntry(ManifestEntryStatus.DELETED, snapshot_id, files[1], 1, 1)
        entries = files[:2] if sequence == 1 else [removed_b, files[2]]
        manifest = write_manifest(
            backend.io,
            f"{table}/metadata/m{sequence}.avro",
            UNPARTITIONED_SPEC,
            SCHEMA,
            entries,
            format_version=2,
            snapshot_id=snapshot_id,
        )
        manifest_list = f"{table}/metadata/snap-{snapshot_id}.avro"
        write_manifest_list(backend.io, manifest_list, 2, snapshot_id, parent, sequence, [manifest])
        snapshot = Snapshot(
            snapshot_id=snapshot_id,
            timestamp_ms=int(time.time() * 1000),
            manifest_list=manifest_list,
            parent_snapshot_id=parent,
            sequence_number=sequence,
            summary={"operation": "append"},
            schema_id=0,
        )
        loaded = backend.commit_table(
            "db.t", loaded, [], [AddSnapshot(snapshot), SetSnapshotRef("main", snapshot_id)]
        )
        manifests.append(manifest.manifest_path)
        lists.append(manifest_list)
        parent = snapshot_id
    statistics = _write(f"{table}/metadata/stats.puffin", b"PFA1")
    loaded = backend.commit_table(
        "db.t",
        loaded,
        [],
        [SetStatistics(StatisticsFile(parent, statistics, 4, 0)), SetProperties({"x": "y"})],
    )
    metadata = [e.metadata_file for e in loaded.metadata.metadata_log] + [loaded.metadata_location]
    return {"data": data, "manifests": manifests, "lists": lists, "stats": [statistics], "metadata": metadata}


def _existing(locations: list[str]) -> list[str]:
    return [x for x in locations if Path(local_path(x)).exists()]


def test_purge_deletes_everything_reachable(backend: CatalogBackend, warehouse: Path) -> None:
    files = _table_with_files(backend, warehouse)
    assert all(_existing(group) == group for group in files.values())
    backend.drop_table("db.t", purge=True)
    for kind, group in files.items():
        assert _existing(group) == [], kind
    assert not backend.table_exists("db.t")


def test_purge_keeps_data_when_gc_is_disabled(backend: CatalogBackend, warehouse: Path) -> None:
    files = _table_with_files(backend, warehouse, **{"gc.enabled": "false"})
    backend.drop_table("db.t", purge=True)
    outside = [x for x in files["data"] if "/shared-data/" in x]
    if isinstance(backend, HadoopCatalog):  # the table directory goes, as in Java
        assert _existing(files["data"]) == outside
    else:
        assert _existing(files["data"]) == files["data"]
    for kind in ("manifests", "lists", "stats", "metadata"):
        assert _existing(files[kind]) == [], kind


def test_purge_survives_a_missing_manifest(backend: CatalogBackend, warehouse: Path) -> None:
    files = _table_with_files(backend, warehouse)
    Path(local_path(files["manifests"][0])).unlink()
    backend.drop_table("db.t", purge=True)
    assert not backend.table_exists("db.t")
    # What the other manifest reaches is gone; the lost manifest's own files cannot be found.
    assert not Path(local_path(files["data"][2])).exists()
    assert _existing(files["metadata"] + files["lists"] + files["stats"]) == []


@pytest.mark.parametrize("purge", [False, True])
def test_drop_without_purge_keeps_files(backend: CatalogBackend, warehouse: Path, purge: bool) -> None:
    files = _table_with_files(backend, warehouse)
    backend.drop_table("db.t", purge=purge)
    outside = files["data"][1]
    assert Path(local_path(outside)).exists() != purge
