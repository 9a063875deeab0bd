"""Optimistic commits: retries, and the clean-up each outcome calls for.

Uses the in-memory catalog's fault injection (``fail_next_commits``, ``commit_then_raise``,
``swap_then_raise``, ``set_before_swap``) and FaultInjectingFileIO. The rules:

- success after retries: one snapshot added; files of failed attempts that the committed
  metadata does not reference are deleted;
- definite failure (retries exhausted, a failed write): every file the commit wrote is deleted,
  data files written by ``table.append`` included;
- unknown outcome: nothing is deleted, and the table (after refresh) may contain the snapshot.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from icefloe import Catalog, CommitFailedException, CommitStateUnknownException, Table
from icefloe.errors import FileIOError, InvalidManifestError, NoSuchTableError, ValidationError
from icefloe.io.faults import FaultInjectingFileIO
from support.catalogs import (
    ARROW_SCHEMA,
    avro_files,
    data_files,
    local,
    memory_backend,
    referenced_metadata_files,
    rows,
    sorted_rows,
    write_parquet_file,
)

FAST_RETRIES = {"commit.retry.min-wait-ms": "1", "commit.retry.max-wait-ms": "5"}


def _table(catalog: Catalog, format_version: int = 2, **properties: str) -> Table:
    return catalog.create_table(
        "db.t",
        ARROW_SCHEMA,
        partition_by=["day"],
        properties={"format-version": str(format_version), **FAST_RETRIES, **properties},
    )


def _metadata_json_files(table: Table) -> set[str]:
    return {str(p) for p in (local(table.location()) / "metadata").glob("*.metadata.json")}


def _expected_metadata_json_files(table: Table) -> set[str]:
    assert table.metadata_location is not None
    logged = {str(local(e.metadata_file)) for e in table.metadata.metadata_log}
    return logged | {str(local(table.metadata_location))}


def _no_orphans(table: Table) -> None:
    """Every Avro file in metadata/ is referenced; every data file is in a snapshot."""
    assert avro_files(table) == referenced_metadata_files(table)
    live = {str(local(f.file_path)) for s in table.metadata.snapshots for f in s.added_data_files(table.io())}
    assert data_files(table) == live
    assert _metadata_json_files(table) == _expected_metadata_json_files(table)


def catalog_state(catalog: Catalog) -> object:
    return catalog.load_table("db.t").metadata


# ---- retried conflicts ------------------------------------------------------------------------

APPENDERS: dict[str, Callable[[Table, int], None]] = {
    "table.append": lambda t, start: t.append(rows(4, start=start)) and None,
    "new_append": lambda t, start: (
        t.new_append()
        .append_file(
            write_parquet_file(t, rows(1, start=start), f"day=2024-01-0{1 + start % 3}/f{start}.parquet")
        )
        .commit()
    ),
}


@pytest.mark.parametrize("appender", list(APPENDERS))
def test_retry_after_failed_commits(memory_catalog: Catalog, format_version: int, appender: str) -> None:
    table = _table(memory_catalog, format_version)
    table.append(rows(3))
    before = table.current_snapshot()
    assert before is not None

    memory_backend(memory_catalog).fail_next_commits(2)
    APPENDERS[appender](table, 10)

    snapshots = table.snapshots()
    assert len(snapshots) == 2  # exactly one snapshot added
    current = table.current_snapshot()
    assert current is not None and current.parent_snapshot_id == before.snapshot_id
    if format_version > 1:
        assert current.sequence_number == before.sequence_number + 1
    assert catalog_state(memory_catalog) == table.metadata
    _no_orphans(table)


def test_retries_exhausted_delete_everything_the_commit_wrote(
    memory_catalog: Catalog, format_version: int
) -> None:
    table = _table(memory_catalog, format_version, **{"commit.retry.num-retries": "2"})
    table.append(rows(3))
    state = table.metadata
    avro_before, data_before = avro_files(table), data_files(table)

    memory_backend(memory_catalog).fail_next_commits(3)  # the first try and both retries
    with pytest.raises(CommitFailedException):
        table.append(rows(6, start=10))

    assert table.metadata == state
    assert catalog_state(memory_catalog) == state
    assert avro_files(table) == avro_before  # new manifests and every attempt's manifest list
    assert data_files(table) == data_before  # the data files table.append wrote
    _no_orphans(table)
    # The table still works, and the next commit goes through.
    table.append(rows(1, start=50))
    assert table.new_scan().count() == 4


def test_retries_exhausted_keep_files_added_by_the_user(memory_catalog: Catalog) -> None:
    """append_file(...) of a user's file: a failed commit deletes the manifests it wrote, but
    never the data file it was handed (it is not the commit's to delete)."""
    table = _table(memory_catalog, **{"commit.retry.num-retries": "0"})
    file = write_parquet_file(table, rows(1), "day=2024-01-01/user.parquet")
    memory_backend(memory_catalog).fail_next_commits(1)
    with pytest.raises(CommitFailedException):
        table.new_append().append_file(file).commit()
    assert local(file.file_path).exists()
    assert avro_files(table) == set()


def test_zero_retries_fail_at_once(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog, **{"commit.retry.num-retries": "0"})
    memory_backend(memory_catalog).fail_next_commits(1)
    with pytest.raises(CommitFailedException):
        table.append(rows(2))
    assert table.current_snapshot() is None
    assert data_files(table) == set()
    assert avro_files(table) == set()


# ---- unknown outcomes ------------------------------------------------------------------------


def test_commit_state_unknown_deletes_nothing(memory_catalog: Catalog, format_version: int) -> None:
    table = _table(memory_catalog, format_version)
    table.append(rows(3))
    before = table.current_snapshot()
    assert before is not None
    data_before = data_files(table)

    memory_backend(memory_catalog).commit_then_raise(1)
    with pytest.raises(CommitStateUnknownException):
        table.append(rows(3, start=10))

    written = data_files(table) - data_before
    assert len(written) == 3  # the data files of the append are all still there
    table.refresh()
    current = table.current_snapshot()
    assert current is not None and current.parent_snapshot_id == before.snapshot_id
    assert {str(local(f.file_path)) for f in current.added_data_files(table.io())} == written
    for path in referenced_metadata_files(table):
        assert Path(path).exists()
    assert sorted(table.new_scan().select("id").to_arrow().column("id").to_pylist()) == [0, 1, 2, 10, 11, 12]
    _no_orphans(table)


def test_lost_swap_answer_is_resolved_by_the_catalog(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    memory_backend(memory_catalog).swap_then_raise(1)
    snapshot = table.append(rows(3))  # the backend re-reads the pointer: committed
    assert snapshot is not None
    assert table.current_snapshot() == snapshot
    assert catalog_state(memory_catalog) == table.metadata
    _no_orphans(table)


# ---- concurrent writers ----------------------------------------------------------------------


def test_concurrent_append_is_retried_on_top(memory_catalog: Catalog, format_version: int) -> None:
    table = _table(memory_catalog, format_version)
    base = table.append(rows(3))
    assert base is not None
    backend = memory_backend(memory_catalog)
    other_snapshot: list[int] = []

    def other_writer(identifier: tuple[str, ...]) -> None:
        if other_snapshot:
            return  # only once
        other = memory_catalog.load_table("db.t")
        snapshot = other.append(rows(2, start=100))
        assert snapshot is not None
        other_snapshot.append(snapshot.snapshot_id)

    backend.set_before_swap(other_writer)
    try:
        ours = table.append(rows(4, start=10))
    finally:
        backend.set_before_swap(None)
    assert ours is not None and other_snapshot

    chain = table.metadata.ancestors_of(ours.snapshot_id)
    assert [s.snapshot_id for s in chain] == [ours.snapshot_id, other_snapshot[0], base.snapshot_id]
    assert table.current_snapshot() == ours
    if format_version > 1:
        assert [s.sequence_number for s in chain] == [3, 2, 1]
    if format_version == 3:
        assert [(s.first_row_id, s.added_rows) for s in chain] == [(5, 4), (3, 2), (0, 3)]
        assert table.metadata.next_row_id == 9
    assert ours.summary["total-records"] == "9"
    assert [h.snapshot_id for h in table.history()] == [s.snapshot_id for s in reversed(chain)]
    ids = sorted(table.new_scan().select("id").to_arrow().column("id").to_pylist())
    assert ids == [0, 1, 2, 10, 11, 12, 13, 100, 101]
    assert catalog_state(memory_catalog) == table.metadata
    _no_orphans(table)


def test_concurrent_property_change_is_kept(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    backend = memory_backend(memory_catalog)
    done: list[bool] = []

    def other_writer(identifier: tuple[str, ...]) -> None:
        if not done:
            done.append(True)
            memory_catalog.load_table("db.t").update_properties().set("other", "yes").commit()

    backend.set_before_swap(other_writer)
    try:
        table.update_properties().set("ours", "yes").commit()
    finally:
        backend.set_before_swap(None)
    assert table.properties()["ours"] == "yes"
    assert table.properties()["other"] == "yes"


def test_table_recreated_during_commit_fails(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    backend = memory_backend(memory_catalog)
    done: list[bool] = []

    def recreate(identifier: tuple[str, ...]) -> None:
        if not done:
            done.append(True)
            memory_catalog.drop_table("db.t")
            memory_catalog.create_table("db.t", ARROW_SCHEMA, properties=FAST_RETRIES)

    backend.set_before_swap(recreate)
    try:
        with pytest.raises(CommitFailedException, match=r"(?i)uuid"):
            table.append(rows(2))
    finally:
        backend.set_before_swap(None)
    assert memory_catalog.load_table("db.t").current_snapshot() is None
    assert data_files(table) == set()


# ---- failed writes ------------------------------------------------------------------------------


def _with_io(table: Table, io: FaultInjectingFileIO, catalog: Catalog) -> Table:
    return Table(table.identifier_tuple, table.metadata, table.metadata_location, io, catalog.backend)


@pytest.mark.parametrize("failing", ["manifest", "manifest-list"])
def test_failed_metadata_write_deletes_the_data_files(memory_catalog: Catalog, failing: str) -> None:
    table = _table(memory_catalog)

    def fail(location: str) -> bool:
        name = location.rsplit("/", 1)[-1]
        is_list = name.startswith("snap-")
        return name.endswith(".avro") and is_list == (failing == "manifest-list")

    faulty = _with_io(table, FaultInjectingFileIO(table.io(), fail), memory_catalog)
    with pytest.raises(FileIOError):
        faulty.append(rows(6))
    assert faulty.current_snapshot() is None
    assert memory_catalog.load_table("db.t").current_snapshot() is None
    assert data_files(table) == set()
    assert avro_files(table) == set()


def test_retry_after_a_commit_failure_reuses_manifests(memory_catalog: Catalog) -> None:
    """A retry rewrites only the manifest list; the data manifests are written once."""
    table = _table(memory_catalog)
    written: list[str] = []

    def record(location: str) -> bool:
        written.append(location.rsplit("/", 1)[-1])
        return False  # fail nothing

    faulty = _with_io(table, FaultInjectingFileIO(table.io(), record), memory_catalog)
    memory_backend(memory_catalog).fail_next_commits(2)
    faulty.append(rows(1))  # one partition: one data file, one manifest
    avro = [name for name in written if name.endswith(".avro")]
    manifests = [name for name in avro if not name.startswith("snap-")]
    lists = [name for name in avro if name.startswith("snap-")]
    assert len(manifests) == 1  # written once, reused by both retries
    assert len(lists) == 3  # one per attempt: the sequence number changes
    assert len(set(lists)) == 3
    assert sorted_rows(faulty.new_scan().to_arrow()) == sorted_rows(rows(1))
    _no_orphans(faulty)


# ---- errors while re-applying on the refreshed table ---------------------------------------


def test_error_while_reapplying_deletes_everything(memory_catalog: Catalog) -> None:
    """The retry cannot read the concurrent writer's manifest list: a definite failure, so the
    files of our attempts (data files, manifests, manifest lists) are deleted."""
    table = _table(memory_catalog)
    table.append(rows(1))
    backend = memory_backend(memory_catalog)
    committed = referenced_metadata_files(table)
    committed_data = data_files(table)

    def damaging_writer(identifier: tuple[str, ...]) -> None:
        if len(committed) > 2:
            return  # only once
        other = memory_catalog.load_table("db.t")
        snapshot = other.append(rows(1, start=100))
        assert snapshot is not None and snapshot.manifest_list is not None
        committed.update(referenced_metadata_files(other))
        committed_data.update(str(local(f.file_path)) for f in snapshot.added_data_files(other.io()))
        path = local(snapshot.manifest_list)
        path.write_bytes(path.read_bytes()[:20])

    backend.set_before_swap(damaging_writer)
    try:
        with pytest.raises(InvalidManifestError):
            table.append(rows(3, start=10))
    finally:
        backend.set_before_swap(None)
    assert len(committed) == 4 and len(committed_data) == 2
    assert avro_files(table) == committed
    assert data_files(table) == committed_data


def test_table_dropped_during_commit_deletes_everything(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    backend = memory_backend(memory_catalog)
    done: list[bool] = []

    def drop(identifier: tuple[str, ...]) -> None:
        if not done:
            done.append(True)
            memory_catalog.drop_table("db.t")

    backend.set_before_swap(drop)
    try:
        with pytest.raises(NoSuchTableError):
            table.append(rows(2))
    finally:
        backend.set_before_swap(None)
    assert data_files(table) == set()
    assert avro_files(table) == set()


def test_commit_to_a_dropped_table_deletes_everything(catalog: Catalog) -> None:
    if catalog.backend.catalog_type == "hadoop":
        pytest.skip("dropping a Hadoop table deletes its folder, as Java's HadoopCatalog does")
    table = _table(catalog)
    table.append(rows(1))
    catalog.drop_table("db.t")  # not purged: the files stay, the catalog forgets the table
    data_before, avro_before = data_files(table), avro_files(table)
    with pytest.raises(NoSuchTableError, match=r"db\.t"):
        table.append(rows(3, start=10))
    assert data_files(table) == data_before
    assert avro_files(table) == avro_before


@pytest.mark.parametrize(
    "name", ["commit.retry.num-retries", "commit.retry.min-wait-ms", "write.summary.partition-limit"]
)
def test_malformed_commit_property_fails_cleanly(memory_catalog: Catalog, name: str) -> None:
    table = _table(memory_catalog, **{name: "lots"})
    with pytest.raises(ValidationError, match=name):
        table.append(rows(3))
    assert table.current_snapshot() is None
    assert data_files(table) == set()
    assert avro_files(table) == set()
    # Setting it right is a commit too, and it works.
    table.update_properties().set(name, "3").commit()
    assert table.append(rows(3)) is not None
