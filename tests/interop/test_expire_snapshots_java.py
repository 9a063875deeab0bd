"""Snapshot expiration by icefloe and by Java Iceberg (1.9.2, on Spark) agree.

Two tables get the same history from icefloe: appends sharing manifests, a file delete, a
position delete, an overwrite, a rolled-back snapshot, tags and branches with their own
retention, refs that are old enough to expire. Then:

- on the first, Java's ``expireSnapshots().apply()`` and icefloe's ``apply()`` name the same
  snapshots for the same inputs (and refuse the same referenced id, with the same message);
  icefloe commits, and Java reads every ref of the result identically;
- Java commits its own expiration of the second table (with refs left, Java cleans files by
  reachability): both tables keep the same snapshots, refs and data files, and as many delete
  files, manifests and manifest lists.

One Java engine session serves the whole module.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import icefloe
from icefloe import Table
from icefloe.errors import ValidationError
from support.catalogs import local, write_parquet_file

from .engines import EngineError, JavaEngine
from .tables import hadoop_catalog

pytestmark = pytest.mark.interop

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])
DAY_MS = 86_400_000


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("expire")


@pytest.fixture(scope="module")
def java_catalog(java_engine: JavaEngine, warehouse: Path) -> str:
    return java_engine.hadoop_catalog(warehouse)


@pytest.fixture(scope="module")
def catalog(warehouse: Path, java_catalog: str) -> icefloe.Catalog:
    cat = hadoop_catalog(warehouse)
    cat.create_namespace("db")
    return cat


def _data(ids: list[int]) -> pa.Table:
    return pa.table({"id": ids, "name": [f"n{i}" for i in ids]}, schema=SCHEMA)


def _tick() -> None:
    time.sleep(0.005)


def _build(catalog: icefloe.Catalog, name: str) -> tuple[Table, dict[str, int], int]:
    """The shared history; returns the table, its snapshots by role, and the expiry cutoff."""
    table = catalog.create_table(
        name, SCHEMA, properties={"format-version": "2", "write.delete.mode": "merge-on-read"}
    )
    roles: dict[str, int] = {}

    def file(n: int, ids: list[int]) -> icefloe.DataFile:
        return write_parquet_file(table, _data(ids), f"f{n}.parquet")

    def head(role: str) -> None:
        snapshot = table.current_snapshot()
        assert snapshot is not None
        roles[role] = snapshot.snapshot_id
        _tick()

    f1 = file(1, [1, 2])
    table.new_fast_append().append_file(f1).append_file(file(2, [3, 4])).commit()  # one manifest
    head("s1")
    f3 = file(3, [5, 6])
    table.new_fast_append().append_file(f3).commit()
    head("s2")
    table.new_delete().delete_file(f1).commit()
    head("s3")
    table.delete("id = 3")  # a position delete file
    head("s4")
    table.new_fast_append().append_file(file(4, [7, 8])).commit()
    head("s5")
    table.new_fast_append().append_file(file(6, [9])).commit()
    head("s6")
    table.manage_snapshots().rollback_to(roles["s5"]).commit()  # s6: no ref reaches it
    table.new_overwrite().delete_file(f3).add_file(file(7, [50, 60])).commit()
    head("s7")
    manage = table.manage_snapshots()
    manage.create_tag("t_keep", roles["s2"]).set_max_ref_age_ms("t_keep", DAY_MS)
    manage.create_tag("t_old", roles["s1"]).set_max_ref_age_ms("t_old", 1)
    manage.create_branch("dev", roles["s3"]).set_min_snapshots_to_keep("dev", 2)
    manage.create_branch("stale", roles["s2"]).set_max_ref_age_ms("stale", 1)
    manage.commit()
    table.new_fast_append().to_branch("dev").append_file(file(5, [100])).commit()
    dev = table.snapshot("dev")
    assert dev is not None
    roles["d1"] = dev.snapshot_id
    _tick()
    table.new_fast_append().append_file(file(8, [70])).commit()
    head("s8")
    cutoff = int(time.time() * 1000)
    _tick()
    return table, roles, cutoff


_JAVA_EXPIRE = """
catalog = jvm.org.apache.iceberg.hadoop.HadoopCatalog(sc._jsc.hadoopConfiguration(), warehouse)
table = catalog.loadTable(jvm.org.apache.iceberg.catalog.TableIdentifier.parse(identifier))
op = table.expireSnapshots().expireOlderThan(older_than).retainLast(retain_last)
for snapshot_id in ids:
    op = op.expireSnapshotId(int(snapshot_id))
if commit:
    op.commit()
    table.refresh()
    result = sorted(str(s.snapshotId()) for s in table.snapshots())
else:
    result = sorted(str(s.snapshotId()) for s in op.apply())
"""

_JAVA_REFS = """
catalog = jvm.org.apache.iceberg.hadoop.HadoopCatalog(sc._jsc.hadoopConfiguration(), warehouse)
table = catalog.loadTable(jvm.org.apache.iceberg.catalog.TableIdentifier.parse(identifier))
refs = {}
for entry in table.refs().entrySet():
    ref = entry.getValue()
    refs[str(entry.getKey())] = [
        str(ref.snapshotId()), "tag" if ref.isTag() else "branch",
        None if ref.minSnapshotsToKeep() is None else int(ref.minSnapshotsToKeep()),
        None if ref.maxRefAgeMs() is None else str(ref.maxRefAgeMs()),
    ]
result = {"refs": refs, "snapshots": sorted(str(s.snapshotId()) for s in table.snapshots())}
"""


def _java_expire(
    engine: JavaEngine,
    warehouse: Path,
    identifier: str,
    *,
    older_than: int,
    retain_last: int = 1,
    ids: tuple[int, ...] = (),
    commit: bool = False,
) -> set[int]:
    result = engine.exec(
        _JAVA_EXPIRE,
        warehouse=str(warehouse),
        identifier=identifier,
        older_than=older_than,
        retain_last=retain_last,
        ids=[str(i) for i in ids],
        commit=commit,
    )
    return {int(i) for i in result}


def _icefloe_refs(table: Table) -> dict[str, list[Any]]:
    return {
        name: [
            str(ref.snapshot_id),
            "tag" if ref.is_tag else "branch",
            ref.min_snapshots_to_keep,
            None if ref.max_ref_age_ms is None else str(ref.max_ref_age_ms),
        ]
        for name, ref in table.refs().items()
    }


def _ids(result: dict[str, Any]) -> list[int]:
    return sorted(int(row[0]) for row in result["rows"])


def _files(table: Table) -> dict[str, Any]:
    """What is on disk: data files by name, and counts of the other kinds."""
    root = local(table.location())
    data = [p.name for p in (root / "data").rglob("*.parquet")]
    avro = [p.name for p in (root / "metadata").glob("*.avro")]
    return {
        "data": sorted(n for n in data if n.startswith("f")),
        "deletes": len([n for n in data if not n.startswith("f")]),
        "manifest_lists": len([n for n in avro if n.startswith("snap-")]),
        "manifests": len([n for n in avro if not n.startswith("snap-")]),
    }


def _ref_rows(table: Table) -> dict[str, list[int]]:
    return {
        name: sorted(r["id"] for r in table.new_scan().use_ref(name).to_arrow().to_pylist())
        for name in table.refs()
    }


def test_icefloe_and_java_expire_the_same_snapshots(
    java_engine: JavaEngine, java_catalog: str, catalog: icefloe.Catalog, warehouse: Path
) -> None:
    table, roles, cutoff = _build(catalog, "db.sel")

    # the same inputs select the same snapshots
    cases: list[tuple[int, int, tuple[int, ...]]] = [
        (cutoff, 1, ()),
        (cutoff, 3, ()),
        (roles["s5"], 1, ()),
        (0, 1, ()),
        (0, 1, (roles["s4"],)),
        (cutoff, 2, (roles["s1"], roles["s7"])),
    ]
    for older_than, retain_last, ids in cases:
        op = table.expire_snapshots().expire_older_than(older_than).retain_last(retain_last)
        for snapshot_id in ids:
            op.expire_snapshot_id(snapshot_id)
        ours = {s.snapshot_id for s in op.apply()}
        theirs = _java_expire(
            java_engine, warehouse, "db.sel", older_than=older_than, retain_last=retain_last, ids=ids
        )
        assert ours == theirs, (older_than, retain_last, ids)

    # both refuse to expire a snapshot a ref keeps, with the same message
    referenced = roles["s2"]
    with pytest.raises(EngineError) as java_error:
        _java_expire(java_engine, warehouse, "db.sel", older_than=0, ids=(referenced,))
    with pytest.raises(ValidationError) as our_error:
        table.expire_snapshots().expire_snapshot_id(referenced).apply()
    assert (
        f"Cannot expire {referenced}. Still referenced by refs: [t_keep]" in java_error.value.engine_message
    )
    assert str(our_error.value) == f"Cannot expire {referenced}. Still referenced by refs: [t_keep]"

    # icefloe commits; Java sees the same refs and snapshots, and reads every ref the same
    expected = {s.snapshot_id for s in table.expire_snapshots().expire_older_than(cutoff).apply()}
    assert expected == {roles[r] for r in ("s1", "s4", "s5", "s6", "s7")}
    rows_before = _ref_rows(table)
    table.expire_snapshots().expire_older_than(cutoff).commit()
    assert set(table.refs()) == {"main", "t_keep", "dev"}
    seen = java_engine.exec(_JAVA_REFS, warehouse=str(warehouse), identifier="db.sel")
    assert seen["refs"] == _icefloe_refs(table)
    assert seen["snapshots"] == sorted(str(s.snapshot_id) for s in table.snapshots())
    name = f"{java_catalog}.db.sel"
    assert _ids(java_engine.sql(f"SELECT id FROM {name}")) == rows_before["main"]
    assert _ids(java_engine.sql(f"SELECT id FROM {name}.branch_dev")) == rows_before["dev"]
    assert _ids(java_engine.sql(f"SELECT id FROM {name}.tag_t_keep")) == rows_before["t_keep"]
    assert _ref_rows(catalog.load_table("db.sel")) == {k: rows_before[k] for k in ("main", "t_keep", "dev")}


def test_icefloe_and_java_delete_the_same_files(
    java_engine: JavaEngine, java_catalog: str, catalog: icefloe.Catalog, warehouse: Path
) -> None:
    ours, our_roles, our_cutoff = _build(catalog, "db.ours")
    theirs, their_roles, their_cutoff = _build(catalog, "db.theirs")
    assert _files(ours) == _files(theirs)
    rows_before = _ref_rows(ours)
    assert _ref_rows(theirs) == rows_before

    op = ours.expire_snapshots().expire_older_than(our_cutoff)
    op.commit()
    kept = _java_expire(java_engine, warehouse, "db.theirs", older_than=their_cutoff, commit=True)
    theirs = catalog.load_table("db.theirs")

    def roles_of(table: Table, roles: dict[str, int]) -> set[str]:
        live = {s.snapshot_id for s in table.snapshots()}
        return {role for role, snapshot_id in roles.items() if snapshot_id in live}

    assert kept == {s.snapshot_id for s in theirs.snapshots()}
    assert roles_of(ours, our_roles) == roles_of(theirs, their_roles) == {"s2", "s3", "s8", "d1"}
    assert set(ours.refs()) == set(theirs.refs()) == {"main", "t_keep", "dev"}
    on_disk = _files(ours)
    assert on_disk == _files(theirs)
    # f6: only the rolled-back snapshot had it; f1 and f3 stay for the tagged snapshot
    assert on_disk["data"] == [f"f{n}.parquet" for n in (1, 2, 3, 4, 5, 7, 8)]
    assert on_disk["deletes"] == 1
    assert on_disk["manifest_lists"] == 4
    summary = op.delete_summary
    assert summary is not None and summary.complete and summary.data_files == 1
    assert _ref_rows(ours) == _ref_rows(theirs) == {k: rows_before[k] for k in ("main", "t_keep", "dev")}
    name = f"{java_catalog}.db.ours"
    assert _ids(java_engine.sql(f"SELECT id FROM {name}.branch_dev")) == rows_before["dev"]


def test_icefloe_expires_a_table_java_wrote(
    java_engine: JavaEngine, java_catalog: str, catalog: icefloe.Catalog, warehouse: Path
) -> None:
    name = f"{java_catalog}.db.jwritten"
    java_engine.sql(
        f"CREATE TABLE {name} (id bigint) USING iceberg "
        "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')",
        f"INSERT INTO {name} VALUES (1), (2)",
        f"INSERT INTO {name} VALUES (3)",
        f"DELETE FROM {name} WHERE id = 1",
        f"ALTER TABLE {name} CREATE TAG t1",
        f"INSERT INTO {name} VALUES (4)",
        f"DELETE FROM {name} WHERE id = 3",
        f"INSERT INTO {name} VALUES (5)",
    )
    table = catalog.load_table("db.jwritten")
    before = {"main": _ids(java_engine.sql(f"SELECT id FROM {name}"))}
    before["t1"] = _ids(java_engine.sql(f"SELECT id FROM {name} VERSION AS OF 't1'"))
    cutoff = int(time.time() * 1000) + 1
    _tick()
    io = table.io()
    rows_of = {
        str(local(f.file_path)): sorted(pq.read_table(local(f.file_path)).column("id").to_pylist())
        for s in table.snapshots()
        for f in s.added_data_files(io)
    }
    deleted: list[str] = []

    def delete(path: str) -> None:
        deleted.append(str(local(path)))
        io.delete(path)

    op = table.expire_snapshots().expire_older_than(cutoff).delete_with(delete)
    expired = {s.snapshot_id for s in op.apply()}
    assert expired == _java_expire(java_engine, warehouse, "db.jwritten", older_than=cutoff)
    assert len(expired) == len(table.snapshots()) - 2
    op.commit()
    summary = op.delete_summary
    assert summary is not None and summary.complete and summary.failed == ()
    # Spark writes a file per task, so the first DELETE drops the file of row 1 whole: only
    # expired snapshots had it. Row 3's file stays for the tag.
    assert summary.manifest_lists == len(expired) and summary.data_files == 1
    assert summary.position_delete_files == 0
    assert [rows_of[p] for p in deleted if p in rows_of] == [[1]]
    # Java reads both refs of what is left: no file they need was deleted
    assert _ids(java_engine.sql(f"SELECT id FROM {name}")) == before["main"] == [2, 4, 5]
    assert _ids(java_engine.sql(f"SELECT id FROM {name} VERSION AS OF 't1'")) == before["t1"] == [2, 3]
    seen = java_engine.exec(_JAVA_REFS, warehouse=str(warehouse), identifier="db.jwritten")
    assert seen["snapshots"] == sorted(str(s.snapshot_id) for s in table.snapshots())
