"""icefloe's REST server judged by three independent clients over 127.0.0.1: Java Iceberg 1.9.2
on Spark 3.5 (``spark.sql.catalog.r.type=rest``), PyIceberg 0.12's ``RestCatalog`` and DuckDB
1.5.5's iceberg extension. Each writes through the server; icefloe and the other two read what it
wrote identically (PyIceberg also through the server's scan planning). Then 3 engines x 4 writers append to one table at once: nothing lost, nothing
duplicated, one line of history.

One server for the module: ``python -m icefloe.rest`` with two worker processes over a SQLite
catalog (so every commit also proves the workers agree)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

import icefloe
from support.rest import ServerProcess

from .engines import DuckDBEngine, JavaEngine, PyIcebergEngine
from .normalize import normalize_arrow, normalize_rows

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with ServerProcess(tmp_path_factory.mktemp("rest-engines") / "wh", workers=2) as process:
        yield process


@pytest.fixture(scope="module")
def catalog(server: ServerProcess) -> Iterator[icefloe.Catalog]:
    cat = icefloe.load_catalog("r", type="rest", uri=server.url)
    yield cat
    cat.close()


@pytest.fixture(scope="module")
def spark_catalog(java_engine: JavaEngine, server: ServerProcess) -> str:
    return java_engine.rest_catalog(server.url)


@pytest.fixture(scope="module")
def duck(duckdb_engine: DuckDBEngine, server: ServerProcess) -> str:
    return duckdb_engine.rest_attach(server.url, "ice")


PYICEBERG_READ = """
from pyiceberg.catalog.rest import RestCatalog
table = RestCatalog("r", uri=uri, **{"scan-planning-mode": mode}).load_table(name)
result = normalize_arrow(table.scan(selected_fields=tuple(columns)).to_arrow())["rows"]
"""


def read_everywhere(
    name: str,
    columns: list[str],
    catalog: icefloe.Catalog,
    java_engine: JavaEngine,
    spark_catalog: str,
    pyiceberg_engine: PyIcebergEngine,
    duckdb_engine: DuckDBEngine,
    duck: str,
    uri: str,
) -> dict[str, list[Any]]:
    cols = ", ".join(columns)
    return {
        "icefloe": normalize_arrow(catalog.load_table(name).new_scan().select(*columns).to_arrow())["rows"],
        "icefloe-server-planned": normalize_arrow(
            catalog.load_table(name).new_scan().select(*columns).option("planning", "server").to_arrow()
        )["rows"],
        "java": java_engine.sql(f"SELECT {cols} FROM {spark_catalog}.{name}")["rows"],
        "pyiceberg": pyiceberg_engine.exec(
            PYICEBERG_READ, uri=uri, name=name, columns=columns, mode="client"
        ),
        # PyIceberg asking icefloe's server to plan (POST .../plan), deletes included
        "pyiceberg-server-planned": pyiceberg_engine.exec(
            PYICEBERG_READ, uri=uri, name=name, columns=columns, mode="server"
        ),
        "duckdb": normalize_rows(
            duckdb_engine.exec(f"result = con.execute('SELECT {cols} FROM {duck}.{name}').fetchall()")
        ),
    }


def test_java_writes_through_icefloes_server(
    server: ServerProcess,
    catalog: icefloe.Catalog,
    java_engine: JavaEngine,
    spark_catalog: str,
    pyiceberg_engine: PyIcebergEngine,
    duckdb_engine: DuckDBEngine,
    duck: str,
) -> None:
    r = spark_catalog
    java_engine.sql(
        f"CREATE NAMESPACE IF NOT EXISTS {r}.sp",
        f"CREATE TABLE {r}.sp.t (id bigint, data string) USING iceberg PARTITIONED BY (data) "
        "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')",
        f"INSERT INTO {r}.sp.t VALUES (1, 'a'), (2, 'b'), (3, 'c'), (5, 'e')",
        f"MERGE INTO {r}.sp.t t USING (SELECT 2 AS id, 'bb' AS data UNION ALL SELECT 4, 'd') s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET t.data = s.data WHEN NOT MATCHED THEN INSERT *",
        f"DELETE FROM {r}.sp.t WHERE id = 1",
        f"ALTER TABLE {r}.sp.t ADD COLUMN extra int",
        f"INSERT INTO {r}.sp.t VALUES (6, 'f', 60)",
        f"CREATE VIEW {r}.sp.v (vid COMMENT 'the id', vdata) AS SELECT id, data FROM {r}.sp.t WHERE id > 2",
    )
    assert java_engine.sql(f"SELECT vid FROM {r}.sp.v")["rows"] == [[3], [4], [5], [6]]
    # Metadata tables (Spark first asks for table "snapshots" in namespace "sp.t") and procedures.
    snapshots = java_engine.sql(f"SELECT count(*) FROM {r}.sp.t.snapshots")["rows"][0][0]
    assert snapshots == 4  # insert, merge, delete, insert
    assert java_engine.sql(f"SELECT count(*) FROM {r}.sp.t.files")["rows"][0][0] >= 1
    java_engine.sql(
        f"CALL {r}.system.expire_snapshots(table => 'sp.t', retain_last => 100)"
    )  # an empty commit
    java_engine.sql(f"CALL {r}.system.rewrite_data_files(table => 'sp.t')")
    expected = [[2, "bb", None], [3, "c", None], [4, "d", None], [5, "e", None], [6, "f", 60]]
    reads = read_everywhere(
        "sp.t",
        ["id", "data", "extra"],
        catalog,
        java_engine,
        r,
        pyiceberg_engine,
        duckdb_engine,
        duck,
        server.url,
    )
    assert reads == {engine: expected for engine in reads}
    view = catalog.load_view("sp.v")
    assert view.sql_for("spark").sql == f"SELECT id, data FROM {r}.sp.t WHERE id > 2"
    assert [f.name for f in view.schema().fields] == ["vid", "vdata"]
    assert view.schema().fields[0].doc == "the id"


PYICEBERG_WRITES = """
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType
from pyiceberg.view.metadata import SQLViewRepresentation, ViewVersion
c = RestCatalog("r", uri=uri)
c.create_namespace_if_not_exists("py")
t = c.create_table("py.t", Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "s", StringType(), required=False)))
t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "s": ["a", "b", "c"]}))
t.overwrite(pa.table({"id": pa.array([4], pa.int64()), "s": ["d"]}), overwrite_filter="id = 1")
t.delete("id = 2")
with t.update_schema() as update:
    update.add_column("n", LongType())
t.append(pa.table({"id": pa.array([5], pa.int64()), "s": ["e"], "n": pa.array([50], pa.int64())}))
version = ViewVersion(version_id=1, schema_id=1, timestamp_ms=1, summary={}, default_namespace=["py"],
    representations=[SQLViewRepresentation(type="sql", sql="SELECT id FROM py.t", dialect="spark")])
c.create_view("py.v", Schema(NestedField(1, "id", LongType(), required=False)), version)
result = [c.view_exists("py.v"), [list(i) for i in c.list_views("py")], c.table_exists("py.t")]
"""


def test_pyiceberg_writes_through_icefloes_server(
    server: ServerProcess,
    catalog: icefloe.Catalog,
    java_engine: JavaEngine,
    spark_catalog: str,
    pyiceberg_engine: PyIcebergEngine,
    duckdb_engine: DuckDBEngine,
    duck: str,
) -> None:
    assert pyiceberg_engine.exec(PYICEBERG_WRITES, uri=server.url) == [True, [["py", "v"]], True]
    expected = [[3, "c", None], [4, "d", None], [5, "e", 50]]
    reads = read_everywhere(
        "py.t",
        ["id", "s", "n"],
        catalog,
        java_engine,
        spark_catalog,
        pyiceberg_engine,
        duckdb_engine,
        duck,
        server.url,
    )
    assert reads == {engine: expected for engine in reads}
    assert catalog.load_view("py.v").sql_for("spark").sql == "SELECT id FROM py.t"
    assert java_engine.sql(f"SELECT id FROM {spark_catalog}.py.v")["rows"] == [[3], [4], [5]]


def test_duckdb_writes_through_icefloes_server(
    server: ServerProcess,
    catalog: icefloe.Catalog,
    java_engine: JavaEngine,
    spark_catalog: str,
    pyiceberg_engine: PyIcebergEngine,
    duckdb_engine: DuckDBEngine,
    duck: str,
) -> None:
    duckdb_engine.exec(
        f"con.execute('CREATE SCHEMA IF NOT EXISTS {duck}.dk')\n"
        f"con.execute('CREATE TABLE {duck}.dk.t (id BIGINT, s VARCHAR)')\n"
        f"con.execute(\"INSERT INTO {duck}.dk.t VALUES (1, 'a'), (2, 'b'), (3, 'c')\")\n"
        f"con.execute(\"INSERT INTO {duck}.dk.t VALUES (4, 'd')\")\n"
        f"con.execute('DELETE FROM {duck}.dk.t WHERE id = 2')\n"
    )
    expected = [[1, "a"], [3, "c"], [4, "d"]]
    reads = read_everywhere(
        "dk.t",
        ["id", "s"],
        catalog,
        java_engine,
        spark_catalog,
        pyiceberg_engine,
        duckdb_engine,
        duck,
        server.url,
    )
    assert reads == {engine: expected for engine in reads}


def test_icefloe_writes_and_the_engines_read(
    server: ServerProcess,
    catalog: icefloe.Catalog,
    java_engine: JavaEngine,
    spark_catalog: str,
    pyiceberg_engine: PyIcebergEngine,
    duckdb_engine: DuckDBEngine,
    duck: str,
) -> None:
    catalog.create_namespace_if_not_exists("ice")
    table = catalog.create_table(
        "ice.t", pa.schema([("id", pa.int64()), ("s", pa.string())]), partition_by=["s"]
    )
    table.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "s": ["x", "y", "x"]}))
    table.delete("id = 2")
    catalog.create_view("ice.v", pa.schema([("id", pa.int64())]), "SELECT id FROM ice.t WHERE s = 'x'")
    expected = [[1, "x"], [3, "x"]]
    reads = read_everywhere(
        "ice.t",
        ["id", "s"],
        catalog,
        java_engine,
        spark_catalog,
        pyiceberg_engine,
        duckdb_engine,
        duck,
        server.url,
    )
    assert reads == {engine: expected for engine in reads}
    assert java_engine.sql(f"SELECT id FROM {spark_catalog}.ice.v")["rows"] == [[1], [3]]


JAVA_WRITERS = """
import threading
errors = []
def write(w):
    for k in range(rounds):
        try:
            spark.sql(f"INSERT INTO {table} VALUES ({base + w * 100 + k})")
        except Exception as e:
            errors.append(str(e)[:300])
threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
[t.start() for t in threads]; [t.join() for t in threads]
result = errors
"""

PYICEBERG_WRITERS = """
import threading, time
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import CommitFailedException
errors = []
def write(w):
    catalog = RestCatalog(f"w{w}", uri=uri)
    for k in range(rounds):
        for attempt in range(60):
            try:
                catalog.load_table(name).append(pa.table({"id": pa.array([base + w * 100 + k], pa.int64())}))
                break
            except CommitFailedException:
                time.sleep(0.05 * (1 + attempt % 5))
        else:
            errors.append(f"writer {w} gave up")
threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
[t.start() for t in threads]; [t.join() for t in threads]
result = errors
"""

DUCKDB_WRITERS = """
import threading, time
errors = []
def write(w):
    cursor = con.cursor()
    for k in range(rounds):
        for attempt in range(60):
            try:
                cursor.execute(f"INSERT INTO {table} VALUES ({base + w * 100 + k})")
                break
            except Exception as e:
                if "commit" not in str(e).lower():
                    errors.append(str(e)[:300]); break
                time.sleep(0.05 * (1 + attempt % 5))
threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
[t.start() for t in threads]; [t.join() for t in threads]
result = errors
"""


def test_three_engines_times_four_writers_lose_and_duplicate_nothing(
    server: ServerProcess,
    catalog: icefloe.Catalog,
    java_engine: JavaEngine,
    spark_catalog: str,
    pyiceberg_engine: PyIcebergEngine,
    duckdb_engine: DuckDBEngine,
    duck: str,
) -> None:
    rounds, writers = 3, 4
    catalog.create_namespace_if_not_exists("conc")
    catalog.create_table(
        "conc.t",
        pa.schema([("id", pa.int64())]),
        properties={
            "commit.retry.num-retries": "60",
            "commit.retry.min-wait-ms": "20",
            "commit.retry.max-wait-ms": "500",
        },
    )
    errors: dict[str, Any] = {}
    jobs = {
        "java": lambda: java_engine.exec(
            JAVA_WRITERS, table=f"{spark_catalog}.conc.t", base=10_000, rounds=rounds, writers=writers
        ),
        "pyiceberg": lambda: pyiceberg_engine.exec(
            PYICEBERG_WRITERS, uri=server.url, name="conc.t", base=20_000, rounds=rounds, writers=writers
        ),
        "duckdb": lambda: duckdb_engine.exec(
            DUCKDB_WRITERS, table=f"{duck}.conc.t", base=30_000, rounds=rounds, writers=writers
        ),
    }

    def run(engine: str) -> None:
        errors[engine] = jobs[engine]()

    threads = [threading.Thread(target=run, args=(engine,)) for engine in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == {"java": [], "pyiceberg": [], "duckdb": []}
    table = catalog.load_table("conc.t")
    ids = table.new_scan().to_arrow().column("id").to_pylist()
    expected = {
        base + w * 100 + k for base in (10_000, 20_000, 30_000) for w in range(writers) for k in range(rounds)
    }
    assert len(ids) == len(expected) and set(ids) == expected  # nothing lost, nothing twice
    chain, snapshot = [], table.current_snapshot()
    while snapshot is not None:
        chain.append(snapshot)
        snapshot = table.snapshot(snapshot.parent_snapshot_id) if snapshot.parent_snapshot_id else None
    assert len(chain) == len(table.snapshots()) == len(expected)  # one line of history
