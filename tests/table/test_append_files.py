"""AppendFiles (``new_append()`` / ``new_fast_append()``): files, manifests, branches, staging."""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
import pytest

from icefloe import Catalog, DataFile, Table
from icefloe.errors import ValidationError
from icefloe.manifests import ManifestWriter, read_manifest
from icefloe.spec.manifest import ManifestContent, ManifestEntryStatus
from icefloe.table.snapshots.append import AppendFiles
from support.catalogs import (
    ARROW_SCHEMA,
    avro_files,
    referenced_metadata_files,
    rows,
    sorted_rows,
    write_parquet_file,
)

APPENDS: dict[str, Callable[[Table], AppendFiles]] = {
    "new_append": lambda t: t.new_append(),
    "new_fast_append": lambda t: t.new_fast_append(),
}


@pytest.fixture(params=list(APPENDS))
def new_append(request: pytest.FixtureRequest) -> Callable[[Table], AppendFiles]:
    return APPENDS[request.param]


def _partitioned(catalog: Catalog, format_version: int = 2) -> Table:
    return catalog.create_table(
        "db.t", ARROW_SCHEMA, partition_by=["day"], properties={"format-version": str(format_version)}
    )


def _by_day(data: pa.Table, day: str) -> pa.Table:
    mask = pa.compute.equal(data.column("day"), pa.scalar(pa.scalar(day).cast(pa.date32())))
    return data.filter(mask)


def test_append_files_written_by_pyarrow(
    catalog: Catalog, format_version: int, new_append: Callable[[Table], AppendFiles]
) -> None:
    table = _partitioned(catalog, format_version)
    data = rows(9)
    files = [
        write_parquet_file(table, _by_day(data, day), f"day={day}/part-{i}.parquet")
        for i, day in enumerate(["2024-01-01", "2024-01-02", "2024-01-03"])
    ]
    assert [f.partition for f in files] == [(19723,), (19724,), (19725,)]

    append = new_append(table)
    for file in files:
        assert append.append_file(file) is append  # builder methods chain
    snapshot = append.apply()
    assert table.current_snapshot() is None  # apply() commits nothing
    assert snapshot.operation == "append"
    append.commit()

    current = table.current_snapshot()
    assert current is not None and current.snapshot_id == snapshot.snapshot_id
    assert current.summary["added-data-files"] == "3"
    assert current.summary["added-records"] == "9"
    assert current.summary["changed-partition-count"] == "3"
    assert {f.file_path for f in current.added_data_files(table.io())} == {f.file_path for f in files}
    assert sorted_rows(table.new_scan().to_arrow()) == sorted_rows(data)
    # Pruning works from the metrics the footer gave.
    # ids 7 and 8 are in the files of days 2 and 3; day 1 holds ids 0, 3, 6 (upper bound 6).
    assert len(table.new_scan().filter("id >= 7").plan_files()) == 2
    assert len(table.new_scan().filter("day = '2024-01-02'").plan_files()) == 1


def test_same_path_twice_is_added_once(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA)
    file = write_parquet_file(table, rows(4), "f.parquet")
    table.new_fast_append().append_file(file).append_file(file).commit()
    assert table.current_snapshot().summary["added-data-files"] == "1"  # type: ignore[union-attr]
    assert table.new_scan().count() == 4


def test_append_file_validation(memory_catalog: Catalog) -> None:
    table = _partitioned(memory_catalog)
    file = write_parquet_file(table, rows(1), "day=2024-01-01/f.parquet")
    with pytest.raises(ValidationError, match="spec 5"):
        table.new_append().append_file(file.copy(spec_id=5))
    with pytest.raises(ValidationError, match="DataFile"):
        table.new_append().append_file("not a file")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="partition"):
        builder = DataFile.builder(table.spec(), table.schema()).with_path("x").with_format("parquet")
        builder.with_record_count(1).with_file_size_in_bytes(1).with_partition_path("nope=1").build()


def test_append_manifest(
    catalog: Catalog, format_version: int, new_append: Callable[[Table], AppendFiles]
) -> None:
    table = _partitioned(catalog, format_version)
    data = rows(6)
    files = [
        write_parquet_file(table, _by_day(data, day), f"day={day}/m-{i}.parquet")
        for i, day in enumerate(["2024-01-01", "2024-01-02", "2024-01-03"])
    ]
    location = f"{table.location()}/metadata/external-m0.avro"
    with ManifestWriter(
        table.io(),
        location,
        spec=table.spec(),
        schema=table.schema(),
        format_version=format_version,
        snapshot_id=None if format_version > 1 else 1,
    ) as writer:
        for file in files:
            writer.add(file)
    manifest = writer.to_manifest_file()

    new_append(table).append_manifest(manifest).commit()
    snapshot = table.current_snapshot()
    assert snapshot is not None
    assert snapshot.summary["added-data-files"] == "3"
    assert snapshot.summary["added-records"] == "6"
    # The manifest is copied with this snapshot's id: every entry is ADDED by this snapshot.
    (written,) = snapshot.data_manifests(table.io())
    entries = list(read_manifest(table.io(), written))
    assert {e.status for e in entries} == {ManifestEntryStatus.ADDED}
    assert {e.snapshot_id for e in entries} == {snapshot.snapshot_id}
    assert sorted_rows(table.new_scan().to_arrow()) == sorted_rows(data)


def test_append_manifest_refuses_delete_manifests(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA)
    location = f"{table.location()}/metadata/deletes.avro"
    with ManifestWriter(
        table.io(),
        location,
        spec=table.spec(),
        schema=table.schema(),
        format_version=2,
        snapshot_id=None,
        content=ManifestContent.DELETES,
    ) as writer:
        pass
    with pytest.raises(ValidationError, match="delete manifest"):
        table.new_append().append_manifest(writer.to_manifest_file())


def test_set_custom_summary(catalog: Catalog) -> None:
    table = catalog.create_table("db.t", ARROW_SCHEMA)
    file = write_parquet_file(table, rows(2), "f.parquet")
    table.new_append().append_file(file).set("spark.app.id", "local-1").set("wap.id", "w1").commit()
    summary = dict(table.current_snapshot().summary)  # type: ignore[union-attr]
    assert summary["spark.app.id"] == "local-1"
    assert summary["wap.id"] == "w1"
    assert summary["operation"] == "append"
    assert next(iter(summary)) == "operation"
    # table.append(..., snapshot_properties=...) sets them too.
    table.append(rows(1), snapshot_properties={"source": "unit-test"})
    assert table.current_snapshot().summary["source"] == "unit-test"  # type: ignore[union-attr]


def test_to_branch(catalog: Catalog, format_version: int, new_append: Callable[[Table], AppendFiles]) -> None:
    table = catalog.create_table("db.t", ARROW_SCHEMA, properties={"format-version": str(format_version)})
    main_snapshot = table.append(rows(2))
    assert main_snapshot is not None
    file = write_parquet_file(table, rows(3, start=10), "branch.parquet")
    new_append(table).append_file(file).to_branch("audit").commit()

    # main did not move; the new branch starts at main's head.
    assert table.current_snapshot() == main_snapshot
    audit = table.snapshot("audit")
    assert audit is not None and audit.parent_snapshot_id == main_snapshot.snapshot_id
    assert table.refs()["audit"].is_branch
    assert table.refs()["main"].snapshot_id == main_snapshot.snapshot_id
    assert audit.summary["total-records"] == "5"
    assert [h.snapshot_id for h in table.history()] == [main_snapshot.snapshot_id]  # only main is logged
    assert table.new_scan().count() == 2
    assert table.new_scan().use_ref("audit").count() == 5

    # A second commit to the branch builds on the branch head.
    file2 = write_parquet_file(table, rows(1, start=20), "branch2.parquet")
    new_append(table).append_file(file2).to_branch("audit").commit()
    head = table.snapshot("audit")
    assert head is not None and head.parent_snapshot_id == audit.snapshot_id
    assert table.new_scan().use_ref("audit").count() == 6
    if format_version > 1:
        assert head.sequence_number == audit.sequence_number + 1
    # Reloading shows the same refs.
    assert catalog.load_table("db.t").refs() == table.refs()


def test_to_branch_rejects_tags_and_empty_names(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA)
    with pytest.raises(ValidationError):
        table.new_append().to_branch("")


def test_stage_only(catalog: Catalog, format_version: int) -> None:
    table = catalog.create_table("db.t", ARROW_SCHEMA, properties={"format-version": str(format_version)})
    first = table.append(rows(2))
    assert first is not None
    file = write_parquet_file(table, rows(3, start=10), "staged.parquet")
    append = table.new_fast_append().append_file(file).stage_only()
    staged_id = append.snapshot_id
    append.commit()

    staged = table.snapshot(staged_id)
    assert staged is not None
    assert staged.parent_snapshot_id == first.snapshot_id
    assert table.current_snapshot() == first  # no branch moved
    assert table.refs()["main"].snapshot_id == first.snapshot_id
    assert [h.snapshot_id for h in table.history()] == [first.snapshot_id]
    assert table.new_scan().count() == 2
    assert table.new_scan().use_snapshot(staged_id).count() == 5
    assert staged in table.snapshots()


def test_apply_then_commit_leaves_no_orphans(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA)
    file = write_parquet_file(table, rows(2), "f.parquet")
    append = table.new_append().append_file(file)
    applied = append.apply()
    append.commit()
    assert table.current_snapshot().snapshot_id == applied.snapshot_id  # type: ignore[union-attr]
    assert avro_files(table) == referenced_metadata_files(table)


def test_operation_commits_once(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA)
    append = table.new_append().append_file(write_parquet_file(table, rows(2), "f.parquet"))
    append.commit()
    with pytest.raises(ValidationError, match="already committed"):
        append.commit()
    assert len(table.snapshots()) == 1


def test_empty_append_commits_an_empty_snapshot(memory_catalog: Catalog) -> None:
    # As Java: an AppendFiles with no files still commits a snapshot.
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA)
    table.new_append().commit()
    snapshot = table.current_snapshot()
    assert snapshot is not None
    assert snapshot.summary["total-records"] == "0"
    assert "added-data-files" not in snapshot.summary
    assert table.new_scan().count() == 0
