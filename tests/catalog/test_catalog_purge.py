"""drop_table(purge=True) deletes every file the metadata reaches, wherever it lives."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest
from catalog_helpers import SCHEMA, new_metadata

import icefloe
from icefloe.backends import CatalogBackend, HadoopCatalogBackend, InMemoryCatalogBackend
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
    if isinstance(backend, HadoopCatalogBackend):  # the table directory goes, as in Java
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


def test_purge_of_a_table_with_damaged_metadata_warns_once_naming_the_file(
    backend: CatalogBackend, warehouse: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """As Java, the table is dropped and its files are left; one warning line says why, naming
    the damaged file, without a traceback (the problem is the file, not icefloe)."""
    if isinstance(backend, InMemoryCatalogBackend):
        pytest.skip("the in-memory catalog keeps the metadata it wrote: it never rereads the file")
    files = _table_with_files(backend, warehouse)
    current = files["metadata"][-1]
    path = Path(local_path(current))
    path.write_bytes(path.read_bytes()[:100])
    with caplog.at_level(logging.WARNING, logger="icefloe"):
        backend.drop_table("db.t", purge=True)
    assert not backend.table_exists("db.t")
    (record,) = [r for r in caplog.records if r.levelno >= logging.WARNING]
    message = record.getMessage()
    assert record.exc_info is None and "\n" not in message
    assert current in message and "db.t" in message and "truncated" in message
    outside = files["data"][1]  # not under the table directory: left in every catalog
    assert Path(local_path(outside)).exists()


def test_catalog_purge_table_on_damaged_hadoop_metadata_prints_no_traceback(
    warehouse: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """Through the user-facing Catalog, with logging not configured (Python prints warnings to
    stderr): one line, not a traceback."""
    catalog = icefloe.load_catalog("lake", type="hadoop", warehouse=str(warehouse))
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", SCHEMA)
    location = table.metadata_location
    assert location is not None
    Path(local_path(location)).write_text('{"format-version": 2, "table-uuid": ')
    root = logging.getLogger()
    handlers = root.handlers[:]
    for handler in handlers:  # pytest's own capture handlers: leave logging unconfigured
        root.removeHandler(handler)
    try:
        catalog.purge_table("db.t")
    finally:
        for handler in handlers:
            root.addHandler(handler)
    assert not catalog.table_exists("db.t")
    err = capfd.readouterr().err
    assert "Traceback" not in err
    (line,) = err.strip().splitlines()
    assert location in line and "db.t" in line
