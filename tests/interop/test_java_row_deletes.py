"""Row-level deletes across engines.

1. Java (Iceberg 1.9.2 on Spark) writes merge-on-read DELETE, UPDATE and MERGE: position delete
   files on v2, deletion vectors on v3. icefloe reads every snapshot exactly as Java does (rows,
   counts, filters) and plans the same delete files for each data file.
2. icefloe writes position deletes (v2), equality deletes (v2) and deletion vectors (v3) with
   its writers, committed by hand as a row delta would (``scan/row_delta_helpers.py``; the
   ``new_row_delta()`` operation is being built beside this), and Java reads them identically;
   so do PyIceberg and DuckDB where they support the kind.

Engine limitations (asserted, so a newer engine that lifts one makes the test say so):

- PyIceberg 0.12 refuses equality deletes ("does not yet support equality deletes");
- DuckDB 1.5.5 applies an equality delete file to every partition, not only its own
  (``test_duckdb_equality_deletes_ignore_partitions``, a strict xfail).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import icefloe
from icefloe.spec.manifest import DataFile, FileContent, FileFormat
from icefloe.spec.partitioning import build_spec
from icefloe.spec.updates import AddPartitionSpec
from icefloe.write import (
    write_data_files,
    write_deletion_vectors,
    write_equality_deletes,
    write_position_deletes_for,
)
from scan.row_delta_helpers import commit_row_delta

from .engines import DuckDBEngine, EngineError, JavaEngine, PyIcebergEngine
from .java_tables import current_snapshot_id
from .tables import (
    assert_engine_read,
    assert_same_rows,
    eq,
    expected_rows,
    gt,
    hadoop_catalog,
    java_planned_files,
    lt,
    own_planned_files,
    own_rows,
)

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("row-deletes")


@pytest.fixture(scope="module")
def java_catalog(java_engine: JavaEngine, warehouse: Path) -> str:
    return java_engine.hadoop_catalog(warehouse)


@pytest.fixture(scope="module")
def catalog(warehouse: Path, java_catalog: str) -> icefloe.Catalog:
    cat = hadoop_catalog(warehouse)
    cat.create_namespace("ice")
    return cat


# ----------------------------------------------------------------------------------------------
# Java writes, icefloe reads


@dataclass
class JavaTable:
    name: str
    dir: Path
    snapshots: list[int] = field(default_factory=list)

    @property
    def identifier(self) -> str:
        return self.name.split(".", 1)[1]


def _run(java: JavaEngine, table: JavaTable, *statements: str) -> None:
    for statement in statements:
        java.sql(statement.format(t=table.name))
        snapshot_id = current_snapshot_id(table.dir)
        if not table.snapshots or table.snapshots[-1] != snapshot_id:
            table.snapshots.append(snapshot_id)


_ROWS = """SELECT id, element_at(array('CN', 'US', 'BR'), cast(id % 3 + 1 AS int)) AS country, id * 0.5 AS amount,
                  if(id % 5 = 0, NULL, concat('n', id)) AS note
           FROM range({lo}, {hi})"""


def _merge_on_read(java: JavaEngine, java_catalog: str, warehouse: Path, version: int) -> JavaTable:
    table = JavaTable(f"{java_catalog}.db.mor_v{version}", warehouse / "db" / f"mor_v{version}")
    java.sql(
        f"""CREATE TABLE {table.name} (id bigint, country string, amount double, note string)
            USING iceberg PARTITIONED BY (country)
            TBLPROPERTIES ('format-version' = '{version}', 'write.delete.mode' = 'merge-on-read',
                           'write.update.mode' = 'merge-on-read', 'write.merge.mode' = 'merge-on-read')"""
    )
    _run(
        java,
        table,
        "INSERT INTO {t} " + _ROWS.format(lo=0, hi=40),
        "INSERT INTO {t} " + _ROWS.format(lo=40, hi=60),
        "DELETE FROM {t} WHERE id % 4 = 0",
        "UPDATE {t} SET amount = -amount, note = 'updated' WHERE country = 'US' AND id < 30",
        """MERGE INTO {t} t
           USING (SELECT id, 'CN' AS country, id * 2.0 AS amount, 'merged' AS note FROM range(10, 80, 5)) s
           ON t.id = s.id
           WHEN MATCHED AND s.id % 2 = 0 THEN DELETE
           WHEN MATCHED THEN UPDATE SET t.note = s.note, t.amount = s.amount
           WHEN NOT MATCHED THEN INSERT *""",
        # Files that already have deletes get more: v3 merges them into one new vector.
        "DELETE FROM {t} WHERE id IN (1, 2, 3, 41, 57)",
        "UPDATE {t} SET note = concat(note, '!') WHERE amount > 20",
    )
    return table


def _large_v3(java: JavaEngine, java_catalog: str, warehouse: Path) -> JavaTable:
    """One data file of 150,000 rows: its vectors hold bitset, run and array containers and
    positions in three 16-bit chunks."""
    table = JavaTable(f"{java_catalog}.db.large_v3", warehouse / "db" / "large_v3")
    java.sql(
        f"""CREATE TABLE {table.name} (id bigint, s string) USING iceberg
            TBLPROPERTIES ('format-version' = '3', 'write.delete.mode' = 'merge-on-read')"""
    )
    _run(
        java,
        table,
        "INSERT INTO {t} SELECT /*+ COALESCE(1) */ id, concat('s', id) FROM range(0, 150000) ORDER BY id",
        "DELETE FROM {t} WHERE (id % 3 = 0 AND id < 70000) OR id IN (140001, 140007)",
        "DELETE FROM {t} WHERE id BETWEEN 100000 AND 120000 OR id = 149999",
    )
    return table


class _JavaTables:
    def __init__(self, java: JavaEngine, java_catalog: str, warehouse: Path) -> None:
        self._args = (java, java_catalog, warehouse)
        self._built: dict[str, JavaTable] = {}

    def __getitem__(self, name: str) -> JavaTable:
        if name not in self._built:
            java, java_catalog, warehouse = self._args
            if name == "large_v3":
                self._built[name] = _large_v3(java, java_catalog, warehouse)
            else:
                self._built[name] = _merge_on_read(java, java_catalog, warehouse, int(name[-1]))
        return self._built[name]


@pytest.fixture(scope="module")
def java_tables(java_engine: JavaEngine, java_catalog: str, warehouse: Path) -> _JavaTables:
    return _JavaTables(java_engine, java_catalog, warehouse)


def _delete_kinds(table: icefloe.Table, snapshot_id: int) -> set[tuple[int, str]]:
    tasks = table.new_scan().use_snapshot(snapshot_id).plan_files()
    return {(int(d.content), d.file_format.value) for t in tasks for d in t.deletes}


@pytest.mark.parametrize("version", [2, 3])
def test_merge_on_read_tables_read_like_java_at_every_snapshot(
    java_tables: _JavaTables, catalog: icefloe.Catalog, java_engine: JavaEngine, version: int
) -> None:
    jt = java_tables[f"mor_v{version}"]
    table = catalog.load_table(jt.identifier)
    assert [s.snapshot_id for s in table.snapshots()] == jt.snapshots
    operations = [table.snapshot(s).operation for s in jt.snapshots]  # type: ignore[union-attr]
    assert operations == ["append", "append", "delete", "overwrite", "overwrite", "delete", "overwrite"]
    kinds = _delete_kinds(table, jt.snapshots[-1])
    assert kinds == ({(1, "PARQUET")} if version == 2 else {(1, "PUFFIN")})
    for snapshot_id in jt.snapshots:
        want = java_engine.read(jt.dir, snapshot_id=snapshot_id)
        got = own_rows(table, snapshot_id=snapshot_id)
        assert got["columns"] == want["columns"]
        assert_same_rows(f"snapshot {snapshot_id}", got["rows"], want["rows"])
        scan = table.new_scan().use_snapshot(snapshot_id)
        assert scan.count() == len(want["rows"])
        assert own_planned_files(table, None, snapshot_id=snapshot_id) == java_planned_files(
            java_engine, jt.dir, None, snapshot_id=snapshot_id
        ), f"snapshot {snapshot_id}"


@pytest.mark.parametrize("version", [2, 3])
def test_merge_on_read_filters_like_java(
    java_tables: _JavaTables, catalog: icefloe.Catalog, java_engine: JavaEngine, version: int
) -> None:
    jt = java_tables[f"mor_v{version}"]
    table = catalog.load_table(jt.identifier)
    filters = [
        (eq("country", "US"), "country = 'US'"),
        (lt("amount", 0.0), "amount < 0"),
        (gt("id", 30), "id > 30"),
        (eq("note", "merged"), "note = 'merged'"),
    ]
    for flt, spark in filters:
        want = java_engine.read(jt.dir, where=spark)["rows"]
        assert own_rows(table, where=flt.icefloe())["rows"] == want, spark
        assert table.new_scan().filter(flt.icefloe()).count() == len(want), spark
        assert own_planned_files(table, flt) == java_planned_files(java_engine, jt.dir, flt), spark


def test_v3_vectors_of_one_file_merge_and_replace_each_other(
    java_tables: _JavaTables, catalog: icefloe.Catalog
) -> None:
    jt = java_tables["mor_v3"]
    table = catalog.load_table(jt.identifier)
    for snapshot_id in jt.snapshots:
        tasks = table.new_scan().use_snapshot(snapshot_id).plan_files()
        for task in tasks:  # at most one vector per data file, referencing it
            assert len(task.deletes) <= 1
            assert all(d.referenced_data_file == task.file.file_path for d in task.deletes)
    last_delete = table.snapshot(jt.snapshots[-2])
    assert last_delete is not None
    removed = last_delete.removed_delete_files(table.io())
    assert removed and all(d.file_format == FileFormat.PUFFIN for d in removed)


def test_large_vectors_read_like_java(
    java_tables: _JavaTables, catalog: icefloe.Catalog, java_engine: JavaEngine
) -> None:
    jt = java_tables["large_v3"]
    table = catalog.load_table(jt.identifier)
    for snapshot_id in jt.snapshots:
        want = java_engine.sql(
            f"SELECT count(*), sum(id), min(id), max(id) FROM {jt.name} VERSION AS OF {snapshot_id}"
        )["rows"][0]
        ids = table.new_scan().use_snapshot(snapshot_id).select("id").to_arrow().column("id")
        got = [len(ids), sum(ids.to_pylist()), min(ids.to_pylist()), max(ids.to_pylist())]
        assert got == want, snapshot_id
        assert table.new_scan().use_snapshot(snapshot_id).count() == want[0]
    dvs = [d for t in table.new_scan().plan_files() for d in t.deletes]
    assert len(dvs) == 1 and dvs[0].record_count == 150_000 - want[0]


# ----------------------------------------------------------------------------------------------
# icefloe writes, every engine reads

_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("country", pa.string()),
        ("note", pa.string()),
        ("amount", pa.float64()),
    ]
)


def _data(lo: int, hi: int) -> pa.Table:
    rows = [
        {
            "id": i,
            "country": ["CN", "US", "BR"][i % 3],
            "note": None if i % 4 == 0 else f"n{i % 5}",
            "amount": i * 0.25,
        }
        for i in range(lo, hi)
    ]
    return pa.Table.from_pylist(rows, schema=_SCHEMA)


@pytest.fixture(scope="module")
def engines(
    java_engine: JavaEngine, pyiceberg_engine: PyIcebergEngine, duckdb_engine: DuckDBEngine
) -> dict[str, Any]:
    return {"java": java_engine, "pyiceberg": pyiceberg_engine, "duckdb": duckdb_engine}


def _assert_reads(
    engines: dict[str, Any], table: icefloe.Table, rows: list[Any], names: tuple[str, ...]
) -> None:
    assert_same_rows("icefloe", own_rows(table)["rows"], rows)
    assert table.new_scan().count() == len(rows)
    for name in names:
        result = engines[name].read(table.metadata_location)
        assert_engine_read(name, result, table, rows, [f.name for f in table.schema().fields])


def _files_by_country(table: icefloe.Table) -> dict[str, list[DataFile]]:
    result: dict[str, list[DataFile]] = {}
    for task in table.new_scan().plan_files():
        result.setdefault(task.file.partition[0], []).append(task.file)
    return result


def _positions_of(table: icefloe.Table, file: DataFile, ids: set[int]) -> list[int]:
    """Positions in FILE of the rows with these ids (files are written in input order)."""
    column = pq.read_table(file.file_path.removeprefix("file:"), columns=["id"]).column("id").to_pylist()
    return [pos for pos, value in enumerate(column) if value in ids]


def test_icefloe_position_deletes_read_everywhere(catalog: icefloe.Catalog, engines: dict[str, Any]) -> None:
    table = catalog.create_table(
        "ice.pos_v2", _SCHEMA, partition_by=["country"], properties={"format-version": "2"}
    )
    table.append(_data(0, 30))
    table.append(_data(30, 45))
    gone = {0, 4, 5, 13, 30, 31, 44}
    deletes = {
        file: _positions_of(table, file, gone)
        for files in _files_by_country(table).values()
        for file in files
    }
    written = write_position_deletes_for(
        table.io(),
        table_location=table.location(),
        properties=table.properties(),
        schema=table.schema(),
        specs=table.specs(),
        deletes={f: p for f, p in deletes.items() if p},
    )
    assert all(d.content == FileContent.POSITION_DELETES for d in written)
    commit_row_delta(catalog, table, deletes=written, operation="delete")
    rows = expected_rows(_data(0, 45), lambda r: r["id"] not in gone)
    _assert_reads(engines, table, rows, ("java", "pyiceberg", "duckdb"))
    location = table.location().removeprefix("file:")
    assert own_planned_files(table, None) == java_planned_files(engines["java"], location, None)


def _equality_table(catalog: icefloe.Catalog) -> tuple[icefloe.Table, list[Any]]:
    """v2, partitioned by country: equality deletes by id within CN, by (note, country) with a
    null note within US, and a global one (unpartitioned spec) by amount; plus rows committed
    with the deletes (same sequence number: kept) and after them (kept)."""
    table = catalog.create_table(
        "ice.eq_v2", _SCHEMA, partition_by=["country"], properties={"format-version": "2"}
    )
    table.append(_data(0, 30))
    table.append(_data(30, 45))
    catalog.backend.commit_table(
        table.identifier_tuple,
        None,
        [],
        [_add_unpartitioned_spec(table)],
    )
    table.refresh()
    common = {
        "table_location": table.location(),
        "properties": table.properties(),
        "schema": table.schema(),
    }
    by_id = write_equality_deletes(
        table.io(),
        spec=table.spec(),
        equality_ids=["id"],
        data=pa.table({"id": [0, 1, 3, 33, 100]}),
        partition=("CN",),
        **common,
    )
    by_note = write_equality_deletes(
        table.io(),
        spec=table.spec(),
        equality_ids=["note", "country"],
        data=pa.table({"note": pa.array([None, "n2"], pa.string()), "country": ["US", "US"]}),
        row_schema=table.schema().select("note", "country"),
        **common,
    )
    global_spec = table.specs()[1]
    by_amount = write_equality_deletes(
        table.io(),
        spec=global_spec,
        equality_ids=["amount"],
        data=pa.table({"amount": [2.5, 10.0, 25.0]}),
        **common,
    )
    same_commit = write_data_files(table.io(), spec=table.spec(), data=_data(100, 103), **common)
    commit_row_delta(
        catalog, table, data=same_commit, deletes=by_id + by_note + by_amount, operation="overwrite"
    )
    table.append(_data(200, 203).set_column(3, "amount", pa.array([2.5, 10.0, 25.0])))

    def kept(row: dict[str, Any]) -> bool:
        i = row["id"]
        if i >= 100:
            return True
        if row["country"] == "CN" and i in {0, 1, 3, 33, 100}:
            return False
        if row["country"] == "US" and row["note"] in (None, "n2"):
            return False
        return row["amount"] not in (2.5, 10.0, 25.0)

    everything = pa.concat_tables(
        [_data(0, 45), _data(100, 103), _data(200, 203).set_column(3, "amount", pa.array([2.5, 10.0, 25.0]))]
    )
    return table, expected_rows(everything, kept)


def _add_unpartitioned_spec(table: icefloe.Table) -> AddPartitionSpec:
    return AddPartitionSpec(build_spec(table.schema(), [], spec_id=1))


@pytest.fixture(scope="module")
def equality_table(catalog: icefloe.Catalog) -> tuple[icefloe.Table, list[Any]]:
    return _equality_table(catalog)


def test_icefloe_equality_deletes_read_like_java(
    equality_table: tuple[icefloe.Table, list[Any]], engines: dict[str, Any], java_engine: JavaEngine
) -> None:
    table, rows = equality_table
    assert {int(d.content) for t in table.new_scan().plan_files() for d in t.deletes} == {2}
    _assert_reads(engines, table, rows, ("java",))
    # Filters and the earlier snapshots too.
    location = table.metadata_location
    want = java_engine.read(location, where="country = 'US'")["rows"]
    assert own_rows(table, where="country = 'US'")["rows"] == want
    assert table.new_scan().filter("country = 'US'").count() == len(want)
    for snapshot in table.snapshots()[:-1]:
        java = java_engine.read(location, snapshot_id=snapshot.snapshot_id)["rows"]
        assert_same_rows(
            str(snapshot.snapshot_id), own_rows(table, snapshot_id=snapshot.snapshot_id)["rows"], java
        )


def test_pyiceberg_refuses_equality_deletes(
    equality_table: tuple[icefloe.Table, list[Any]], pyiceberg_engine: PyIcebergEngine
) -> None:
    table, _ = equality_table
    with pytest.raises(EngineError, match="does not yet support equality deletes"):
        pyiceberg_engine.read(table.metadata_location)


@pytest.mark.xfail(strict=True, reason="DuckDB 1.5.5 applies equality deletes to every partition")
def test_duckdb_equality_deletes_ignore_partitions(
    equality_table: tuple[icefloe.Table, list[Any]], duckdb_engine: DuckDBEngine
) -> None:
    table, rows = equality_table
    assert_same_rows("duckdb", duckdb_engine.read(table.metadata_location)["rows"], rows)


def test_icefloe_deletion_vectors_read_everywhere(catalog: icefloe.Catalog, engines: dict[str, Any]) -> None:
    table = catalog.create_table(
        "ice.dv_v3", _SCHEMA, partition_by=["country"], properties={"format-version": "3"}
    )
    table.append(_data(0, 30))
    table.append(_data(30, 45))
    gone = {0, 4, 5, 13, 30, 31, 44}
    deletes = {
        file: _positions_of(table, file, gone)
        for files in _files_by_country(table).values()
        for file in files
    }
    written = write_deletion_vectors(
        table.io(),
        table_location=table.location(),
        properties=table.properties(),
        deletes={f: p for f, p in deletes.items() if p},
    )
    assert len({d.file_path for d in written}) == 1 and len(written) > 2
    commit_row_delta(catalog, table, deletes=written, operation="delete")
    rows = expected_rows(_data(0, 45), lambda r: r["id"] not in gone)
    _assert_reads(engines, table, rows, ("java", "pyiceberg", "duckdb"))
    location = table.location().removeprefix("file:")
    assert own_planned_files(table, None) == java_planned_files(engines["java"], location, None)


@pytest.mark.parametrize("version", [2, 3])
def test_row_level_conveniences_read_everywhere_at_every_snapshot(
    catalog: icefloe.Catalog, engines: dict[str, Any], version: int
) -> None:
    """table.delete (merge-on-read and copy-on-write), upsert, overwrite and
    replace_partitions, as icefloe commits them: every snapshot reads identically in Java,
    and the current one in PyIceberg and DuckDB (position deletes and deletion vectors)."""
    table = catalog.create_table(
        f"ice.conveniences_v{version}",
        _SCHEMA,
        partition_by=["country"],
        properties={
            "format-version": str(version),
            "write.delete.mode": "merge-on-read",
            "write.merge.mode": "merge-on-read",
        },
    )
    table.append(_data(0, 40))
    model = {r["id"]: r for r in _data(0, 40).to_pylist()}
    steps: list[tuple[int, list[Any]]] = []

    def record() -> None:
        snapshot = table.current_snapshot()
        assert snapshot is not None
        steps.append((snapshot.snapshot_id, sorted(model.values(), key=lambda r: r["id"])))

    record()
    table.delete("id < 6 OR id = 20")  # merge-on-read: delete files
    model = {k: v for k, v in model.items() if not (k < 6 or k == 20)}
    record()
    table.delete("id = 7 OR id = 8")  # in v3, merged into the files' existing vectors
    model = {k: v for k, v in model.items() if k not in (7, 8)}
    record()
    update = _data(30, 45).set_column(2, "note", pa.array(["upserted"] * 15))
    result = table.upsert(update, on=["id"])
    assert (result.rows_updated, result.rows_inserted) == (10, 5)
    model.update({r["id"]: r for r in update.to_pylist()})
    record()
    cow = table.update_properties()
    cow.set("write.delete.mode", "copy-on-write").commit()
    table.delete("amount > 9.5")  # copy-on-write: files rewritten
    model = {k: v for k, v in model.items() if not (v["amount"] is not None and v["amount"] > 9.5)}
    record()
    table.overwrite(_data(100, 103), where="country = 'BR'")
    model = {k: v for k, v in model.items() if v["country"] != "BR"}
    model.update({r["id"]: r for r in _data(100, 103).to_pylist()})
    record()
    table.replace_partitions(_data(200, 201))  # id 200: country BR ("CN", "US", "BR")[200 % 3]
    model = {k: v for k, v in model.items() if v["country"] != "BR"}
    model.update({r["id"]: r for r in _data(200, 201).to_pylist()})
    record()
    names = [f.name for f in table.schema().fields]
    for snapshot_id, rows in steps:
        expected = expected_rows(pa.Table.from_pylist(rows, schema=_SCHEMA))
        assert_same_rows(f"icefloe@{snapshot_id}", own_rows(table, snapshot_id=snapshot_id)["rows"], expected)
        java = engines["java"].read(table.metadata_location, snapshot_id=snapshot_id)
        assert_engine_read("java", java, table, expected, names)
    _assert_reads(
        engines,
        table,
        expected_rows(pa.Table.from_pylist(steps[-1][1], schema=_SCHEMA)),
        ("pyiceberg", "duckdb"),
    )
