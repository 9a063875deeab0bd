"""A damaged table fails with a typed error naming the damaged file, and nothing is written.

Each test damages one file of a table with two snapshots (a truncated metadata JSON, manifest
list or manifest, a deleted or truncated data file) and checks that loading, scanning or
appending raises the error type a caller can act on, naming the file in its message and its
``location``; that no file under the table location appeared or changed; and that the
catalog's pointer to the current metadata did not move. Through the SQL catalog (SQLite) and
the Hadoop catalog.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pytest

import icefloe
from icefloe.errors import InvalidDataFileError, InvalidManifestError, InvalidMetadataError
from icefloe.io import local_path

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])
FIRST = pa.table(
    {"id": pa.array(range(0, 20), pa.int64()), "name": [f"a{i}" for i in range(20)]}, schema=SCHEMA
)
SECOND = pa.table(
    {"id": pa.array(range(100, 120), pa.int64()), "name": [f"b{i}" for i in range(20)]}, schema=SCHEMA
)


@dataclass
class Damaged:
    kind: str
    warehouse: Path
    catalog: icefloe.Catalog
    table: icefloe.Table
    table_dir: Path

    def pointer(self) -> object:
        """Where the catalog says the current metadata is, read from the catalog's own storage."""
        if self.kind == "sql":
            with sqlite3.connect(self.warehouse / "catalog.db") as con:
                return con.execute(
                    "SELECT metadata_location, previous_metadata_location FROM iceberg_tables "
                    "WHERE table_namespace = 'db' AND table_name = 't'"
                ).fetchall()
        metadata = self.table_dir / "metadata"
        versions = sorted(p.name for p in metadata.glob("v*.metadata.json"))
        return (metadata / "version-hint.text").read_text(), versions

    def fingerprint(self) -> dict[str, str]:
        """Every file under the table location (hidden ones too) and a hash of its content."""
        return {
            str(p.relative_to(self.table_dir)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in self.table_dir.rglob("*")
            if p.is_file()
        }


@pytest.fixture(params=["sql", "hadoop"])
def subject(request: pytest.FixtureRequest, warehouse: Path) -> Iterator[Damaged]:
    kind = request.param
    if kind == "sql":
        catalog = icefloe.load_catalog(
            "c", type="sql", uri=f"sqlite:///{warehouse / 'catalog.db'}", warehouse=str(warehouse)
        )
    else:
        catalog = icefloe.load_catalog("c", type="hadoop", warehouse=str(warehouse))
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", SCHEMA, partition_by=["bucket(4, id)"])
    table.append(FIRST)
    table.append(SECOND)
    try:
        yield Damaged(kind, warehouse, catalog, table, Path(local_path(table.location())))
    finally:
        catalog.backend.close()


def _truncate(location: str, how: str) -> None:
    path = Path(local_path(location))
    data = path.read_bytes()
    assert len(data) > 16
    path.write_bytes(b"" if how == "empty" else data[: len(data) // 2])


def _assert_names(error: BaseException, location: str) -> None:
    assert location in str(error), f"the message does not name {location}: {error}"
    assert getattr(error, "location", None) == location


def _assert_untouched(subject: Damaged, before: dict[str, str], pointer: object) -> None:
    after = subject.fingerprint()
    assert sorted(set(after) - set(before)) == [], "new files appeared under the table location"
    assert after == before, "files under the table location changed"
    assert subject.pointer() == pointer, "the catalog pointer moved"


def _current_manifest(subject: Damaged) -> str:
    """The manifest holding the files of the current snapshot's own append."""
    snapshot = subject.table.current_snapshot()
    assert snapshot is not None
    own = [
        m for m in snapshot.all_manifests(subject.table.io()) if m.added_snapshot_id == snapshot.snapshot_id
    ]
    assert len(own) == 1
    return own[0].manifest_path


def _scans(table: icefloe.Table) -> dict[str, Callable[[], object]]:
    return {
        "to_arrow": lambda: table.new_scan().to_arrow(),
        "plan_files": lambda: table.new_scan().plan_files(),
        "filtered": lambda: table.new_scan().filter("id >= 100").select("name").to_arrow(),
        "to_batches": lambda: list(table.new_scan().to_batches()),
    }


@pytest.mark.parametrize("how", ["half", "empty"])
def test_truncated_metadata_json_fails_load_naming_it(subject: Damaged, how: str) -> None:
    location = subject.table.metadata_location
    assert location is not None
    _truncate(location, how)
    before, pointer = subject.fingerprint(), subject.pointer()

    with pytest.raises(InvalidMetadataError) as raised:
        subject.catalog.load_table("db.t")
    _assert_names(raised.value, location)
    with pytest.raises(InvalidMetadataError) as raised:
        subject.table.refresh()
    _assert_names(raised.value, location)
    # The table object keeps the metadata it had: it did not half-apply a broken refresh.
    assert subject.table.metadata_location == location
    _assert_untouched(subject, before, pointer)


def test_default_spec_naming_a_missing_column_fails_load_naming_it(subject: Damaged) -> None:
    """Java refuses such a file on load ("Cannot find source column"); icefloe read and scanned it
    and refused it only on the next append."""
    location = subject.table.metadata_location
    assert location is not None
    path = Path(local_path(location))
    document = json.loads(path.read_bytes())
    (spec,) = [s for s in document["partition-specs"] if s["spec-id"] == document["default-spec-id"]]
    spec["fields"][0]["source-id"] = 999
    path.write_text(json.dumps(document))
    before, pointer = subject.fingerprint(), subject.pointer()

    with pytest.raises(InvalidMetadataError) as raised:
        subject.catalog.load_table("db.t")
    _assert_names(raised.value, location)
    assert raised.value.field == "partition-specs[0].fields[0].source-id"
    assert "'id_bucket'" in str(raised.value) and "999" in str(raised.value)
    with pytest.raises(InvalidMetadataError):
        subject.table.refresh()
    _assert_untouched(subject, before, pointer)


@pytest.mark.parametrize("how", ["half", "empty"])
def test_truncated_manifest_list_fails_scans_naming_it(subject: Damaged, how: str) -> None:
    current = subject.table.current_snapshot()
    assert current is not None and current.parent_snapshot_id is not None
    location = current.manifest_list
    _truncate(location, how)
    before, pointer = subject.fingerprint(), subject.pointer()

    for name, scan in _scans(subject.table).items():
        with pytest.raises(InvalidManifestError) as raised:
            scan()
        assert location in str(raised.value), name
        assert raised.value.location == location, name
    with pytest.raises(InvalidManifestError):
        subject.table.new_scan().count()
    # The parent snapshot has its own manifest list: time travel to it is unaffected.
    older = subject.table.new_scan().use_snapshot(current.parent_snapshot_id).to_arrow()
    assert sorted(older.column("id").to_pylist()) == list(range(20))
    _assert_untouched(subject, before, pointer)


@pytest.mark.parametrize("how", ["half", "empty"])
def test_truncated_manifest_fails_scans_naming_it(subject: Damaged, how: str) -> None:
    location = _current_manifest(subject)
    _truncate(location, how)
    before, pointer = subject.fingerprint(), subject.pointer()

    for name, scan in _scans(subject.table).items():
        with pytest.raises(InvalidManifestError) as raised:
            scan()
        assert location in str(raised.value), name
        assert raised.value.location == location, name
    # Files of the first append are listed in another manifest, which is intact.
    first = subject.table.snapshots()[0].snapshot_id
    older = subject.table.new_scan().use_snapshot(first).to_arrow()
    assert sorted(older.column("id").to_pylist()) == list(range(20))
    _assert_untouched(subject, before, pointer)


@pytest.mark.parametrize("how", ["deleted", "half", "empty"])
def test_damaged_data_file_fails_reads_naming_it(subject: Damaged, how: str) -> None:
    current = subject.table.current_snapshot()
    assert current is not None
    added = sorted(f.file_path for f in current.added_data_files(subject.table.io()))
    location = added[0]
    if how == "deleted":
        os.remove(local_path(location))
    else:
        _truncate(location, how)
    before, pointer = subject.fingerprint(), subject.pointer()

    for name, read in {
        "to_arrow": lambda: subject.table.new_scan().to_arrow(),
        "to_batches": lambda: list(subject.table.new_scan().to_batches()),
        "select": lambda: subject.table.new_scan().select("name").to_arrow(),
        "count with residual": lambda: subject.table.new_scan().filter("name >= 'b'").count(),
    }.items():
        with pytest.raises(InvalidDataFileError) as raised:
            read()
        assert location in str(raised.value), name
        assert raised.value.location == location, name
    _assert_untouched(subject, before, pointer)


def test_append_on_truncated_manifest_list_fails_cleanly(subject: Damaged) -> None:
    current = subject.table.current_snapshot()
    assert current is not None
    location = current.manifest_list
    _truncate(location, "half")
    metadata_location = subject.table.metadata_location
    before, pointer = subject.fingerprint(), subject.pointer()

    more = pa.table({"id": pa.array([500, 501], pa.int64()), "name": ["c0", "c1"]}, schema=SCHEMA)
    with pytest.raises(InvalidManifestError) as raised:
        subject.table.append(more)
    _assert_names(raised.value, location)
    # Again on a freshly loaded table, and through the operation API.
    fresh = subject.catalog.load_table("db.t")
    with pytest.raises(InvalidManifestError) as raised:
        fresh.append(more)
    _assert_names(raised.value, location)
    assert fresh.metadata_location == metadata_location
    assert subject.table.metadata_location == metadata_location
    _assert_untouched(subject, before, pointer)


def test_append_retried_onto_a_damaged_snapshot_fails_cleanly(subject: Damaged) -> None:
    stale = subject.catalog.load_table("db.t")
    # The up-to-date table moves main; `stale` still sees the old head.
    subject.table.append(pa.table({"id": pa.array([300], pa.int64()), "name": ["x"]}, schema=SCHEMA))
    current = subject.table.current_snapshot()
    assert current is not None
    _truncate(current.manifest_list, "half")
    before, pointer = subject.fingerprint(), subject.pointer()

    with pytest.raises(InvalidManifestError) as raised:
        # The first attempt fails on the moved branch; the retry re-reads the damaged list.
        stale.append(pa.table({"id": pa.array([400], pa.int64()), "name": ["y"]}, schema=SCHEMA))
    _assert_names(raised.value, current.manifest_list)
    _assert_untouched(subject, before, pointer)
