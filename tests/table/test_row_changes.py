"""table.delete(where), table.overwrite(data, where), table.replace_partitions(data) and
table.upsert(data, on): the rows they leave, the files and snapshots they commit, per
write.*.mode, on v2 and v3, and their conflicts with concurrent commits."""

from __future__ import annotations

import pyarrow as pa
import pytest

from icefloe import Catalog, Table
from icefloe.errors import ValidationError, ValidationException
from icefloe.spec.manifest import FileContent, FileFormat
from support.catalogs import ARROW_SCHEMA, rows, sorted_rows
from table.manifest_helpers import assert_no_orphans

FAST_RETRIES = {"commit.retry.min-wait-ms": "1", "commit.retry.max-wait-ms": "5"}
MODES = ("copy-on-write", "merge-on-read")


def _table(catalog: Catalog, version: int, mode: str, **properties: str) -> Table:
    props = {
        "format-version": str(version),
        "write.delete.mode": mode,
        "write.update.mode": mode,
        "write.merge.mode": mode,
        **FAST_RETRIES,
        **properties,
    }
    table = catalog.create_table("db.rows", ARROW_SCHEMA, partition_by=["day"], properties=props)
    table.append(rows(30))
    return table


def _ids(table: Table) -> list[int]:
    return sorted(table.new_scan().select("id").to_arrow().column("id").to_pylist())


def _delete_files(table: Table) -> list[object]:
    return [d for task in table.new_scan().plan_files() for d in task.deletes]


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("mode", MODES)
def test_delete_where(catalog: Catalog, version: int, mode: str) -> None:
    table = _table(catalog, version, mode)
    snapshot = table.delete("id < 5")
    assert snapshot is not None
    assert _ids(table) == list(range(5, 30))
    deletes = _delete_files(table)
    if mode == "merge-on-read":
        assert snapshot.operation == "delete"
        assert deletes, "merge-on-read writes delete files"
        kinds = {(d.content, d.file_format) for d in deletes}  # type: ignore[attr-defined]
        expected_format = FileFormat.PUFFIN if version == 3 else FileFormat.PARQUET
        assert kinds == {(FileContent.POSITION_DELETES, expected_format)}
    else:
        assert snapshot.operation == "overwrite"
        assert deletes == []
    # A second delete on the same files: in v3 the vectors are merged (one per data file).
    table.delete("id >= 25")
    assert _ids(table) == list(range(5, 25))
    if mode == "merge-on-read" and version == 3:
        per_file: dict[str, int] = {}
        for task in table.new_scan().plan_files():
            per_file[task.file.file_path] = len(task.deletes)
            assert len(task.deletes) <= 1
    # Every row of a partition: the files go whole, no delete file.
    before = len(_delete_files(table))
    table.delete("day = '2024-01-01'")
    assert _ids(table) == [i for i in range(5, 25) if i % 3 != 0]
    assert len(_delete_files(table)) <= before
    nothing = table.delete("id > 1000")  # no file may match: a metadata-only delete, as in Java
    assert nothing is not None and nothing.operation == "delete"
    assert nothing.summary["changed-partition-count"] == "0"
    assert table.delete("false") is None  # always false: nothing is committed, as in Java
    assert_no_orphans(table)


@pytest.mark.parametrize("mode", MODES)
def test_delete_keeps_rows_where_the_filter_is_null(catalog: Catalog, mode: str) -> None:
    table = _table(catalog, 2, mode)
    table.delete("name = 'a'")
    remaining = sorted_rows(table.new_scan().to_arrow())
    assert all(r["name"] != "a" for r in remaining)
    assert any(r["name"] is None for r in remaining)  # null names are not deleted
    assert len(remaining) == 30 - sum(1 for i in range(30) if i % 7 != 6 and i % 3 == 0)


def test_overwrite_where(catalog: Catalog) -> None:
    table = _table(catalog, 2, "copy-on-write")
    replacement = rows(3, start=100)
    snapshot = table.overwrite(replacement, where="id < 10")
    assert snapshot is not None and snapshot.operation == "overwrite"
    assert _ids(table) == [*range(10, 30), 100, 101, 102]
    table.overwrite(rows(2, start=200))
    assert _ids(table) == [200, 201]
    assert_no_orphans(table)


def test_replace_partitions(catalog: Catalog) -> None:
    table = _table(catalog, 2, "copy-on-write")
    new = rows(3, start=99)  # ids 99, 100, 101: days 1, 2, 3 (99 % 3 == 0 -> 2024-01-01)
    new = new.filter(pa.compute.equal(new.column("id"), 99))
    snapshot = table.replace_partitions(new)
    assert snapshot is not None and snapshot.summary["replace-partitions"] == "true"
    assert _ids(table) == sorted([i for i in range(30) if i % 3 != 0] + [99])


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("mode", MODES)
def test_upsert(catalog: Catalog, version: int, mode: str) -> None:
    table = _table(catalog, version, mode)
    data = rows(4, start=28)  # ids 28, 29 exist; 30, 31 are new
    data = data.set_column(1, "name", pa.array(["zz"] * 4))
    result = table.upsert(data, on=["id"])
    assert (result.rows_updated, result.rows_inserted) == (2, 2)
    assert result.snapshot is not None
    got = {r["id"]: r["name"] for r in table.new_scan().select("id", "name").to_arrow().to_pylist()}
    assert sorted(got) == list(range(32))
    assert [got[i] for i in (28, 29, 30, 31)] == ["zz"] * 4
    assert got[26] == "abc"[26 % 3]  # untouched
    with pytest.raises(ValidationError, match="more than once"):
        table.upsert(pa.concat_tables([rows(1, start=5), rows(1, start=5)]), on=["id"])
    with pytest.raises(ValidationError, match="not a column"):
        table.upsert(rows(1), on=["nope"])
    assert_no_orphans(table)


@pytest.mark.parametrize("mode", MODES)
def test_concurrent_append_matching_the_delete_conflicts_when_serializable(
    catalog: Catalog, mode: str
) -> None:
    table = _table(catalog, 2, mode)
    stale = catalog.load_table(table.identifier)  # a writer that read the table earlier
    # Another writer appends a row matching the delete's filter; the stale writer's delete
    # read the table before it, so serializable isolation fails its commit.
    table.append(rows(1, start=1000).set_column(0, "id", pa.array([3], pa.int64())))
    with pytest.raises(ValidationException, match="Found conflicting files"):
        stale.delete("id < 5")
    table.refresh()
    assert _ids(table).count(3) == 2
    assert_no_orphans(table)


def test_snapshot_isolation_allows_the_concurrent_append(catalog: Catalog) -> None:
    table = _table(catalog, 2, "merge-on-read", **{"write.delete.isolation-level": "snapshot"})
    stale = catalog.load_table(table.identifier)
    table.append(rows(1, start=1000))
    stale.delete("id < 5")
    table.refresh()
    assert _ids(table) == [*range(5, 30), 1000]


def test_concurrent_delete_of_the_same_rows_conflicts(catalog: Catalog) -> None:
    table = _table(catalog, 3, "merge-on-read")
    stale = catalog.load_table(table.identifier)
    table.delete("id = 4")
    with pytest.raises(ValidationException, match=r"conflicting delete files|Found concurrently added DV"):
        stale.delete("id = 7")  # same data file (ids 4 and 7 are both on day 2 of one file)
    table.refresh()
    assert 7 in _ids(table) and 4 not in _ids(table)


def test_bad_mode_property_is_named(catalog: Catalog) -> None:
    table = _table(catalog, 2, "sometimes")
    with pytest.raises(ValidationError, match=r"write\.delete\.mode"):
        table.delete("id < 5")


def test_deletion_vector_summaries_count_vectors_and_their_bytes(catalog: Catalog) -> None:
    table = _table(catalog, 3, "merge-on-read")
    first = table.delete("id < 5")
    assert first is not None
    vectors = [d for task in table.new_scan().plan_files() for d in task.deletes]
    summary = first.summary
    # Java's SnapshotSummary: each vector counts as a DV, with its own blob's bytes.
    assert summary["added-dvs"] == str(len(vectors)) and "added-position-delete-files" not in summary
    assert summary["added-delete-files"] == str(len(vectors))
    assert summary["added-files-size"] == str(sum(v.content_size_in_bytes for v in vectors))  # type: ignore[attr-defined]
    assert summary["added-position-deletes"] == "5"
    second = table.delete("id = 7")  # merges into the vector of id 7's file, replacing it
    assert second is not None
    assert second.summary["added-dvs"] == "1" and second.summary["removed-dvs"] == "1"
    assert second.summary["total-position-deletes"] == "6"


def test_conveniences_stage_in_a_transaction(catalog: Catalog) -> None:
    table = _table(catalog, 2, "merge-on-read")
    before = len(table.snapshots())
    txn = table.new_transaction()
    txn.delete("id < 3")
    txn.upsert(rows(2, start=28).set_column(1, "name", pa.array(["t", "t"])), on=["id"])
    txn.append(rows(1, start=500))
    assert catalog.load_table(table.identifier).current_snapshot() == table.current_snapshot()  # nothing yet
    txn.commit_transaction()
    table.refresh()
    assert len(table.snapshots()) == before + 3
    assert _ids(table) == [*range(3, 30), 500]
    names = {r["id"]: r["name"] for r in table.new_scan().select("id", "name").to_arrow().to_pylist()}
    assert names[28] == names[29] == "t"
