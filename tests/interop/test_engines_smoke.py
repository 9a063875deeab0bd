"""The interop harness end to end: Java writes a table, all three engines read it and agree."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .engines import DuckDBEngine, EngineError, JavaEngine, PyIcebergEngine

pytestmark = pytest.mark.interop

COLUMNS = ["id", "name", "price", "ts", "d", "f", "dbl", "payload", "tags", "point", "items"]


@pytest.fixture(scope="module")
def table(java_engine: JavaEngine, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A v2 table with two snapshots, written by Java through a Hadoop catalog."""
    warehouse = tmp_path_factory.mktemp("smoke-warehouse")
    cat = java_engine.hadoop_catalog(warehouse)
    java_engine.sql(
        f"""CREATE TABLE {cat}.db.smoke (
              id bigint, name string, price decimal(9, 2), ts timestamp, d date,
              f float, dbl double, payload binary,
              tags map<string, int>, point struct<x: double, y: double>, items array<string>)
            USING iceberg TBLPROPERTIES ('format-version' = '2')""",
        f"""INSERT INTO {cat}.db.smoke VALUES
              (1, 'one', 1.50, timestamp'2024-01-02 03:04:05.123456', date'2024-01-02',
               cast(1.1 as float), 2.5, X'00ff', map('a', 1, 'b', 2), named_struct('x', 1.0, 'y', -2.0),
               array('p', 'q')),
              (2, NULL, -0.10, NULL, date'1970-01-01',
               cast('NaN' as float), cast('-Infinity' as double), X'', map(), NULL, array())""",
    )
    first = java_engine.sql(f"SELECT snapshot_id FROM {cat}.db.smoke.snapshots")["rows"]
    java_engine.sql(
        f"""INSERT INTO {cat}.db.smoke VALUES
              (3, 'three', 100.00, timestamp'1969-12-31 23:59:59', NULL,
               cast('-0.0' as float), cast('-0.0' as double), NULL, NULL, named_struct('x', cast('NaN' as double), 'y', 0.0),
               NULL)"""
    )
    return {"dir": warehouse / "db" / "smoke", "first_snapshot": first[0][0], "catalog": cat}


EXPECTED_CURRENT = [
    [
        1,
        "one",
        "1.5",
        "2024-01-02T03:04:05.123456",
        "2024-01-02",
        1.100000023841858,
        2.5,
        "00ff",
        {"a": 1, "b": 2},
        {"x": 1.0, "y": -2.0},
        ["p", "q"],
    ],
    [2, None, "-0.1", None, "1970-01-01", "NaN", "-Infinity", "", {}, None, []],
    [3, "three", "100", "1969-12-31T23:59:59", None, -0.0, -0.0, None, None, {"x": "NaN", "y": 0.0}, None],
]


def _engines(java: JavaEngine, pyiceberg: PyIcebergEngine, duckdb: DuckDBEngine) -> dict[str, Any]:
    return {"java": java, "pyiceberg": pyiceberg, "duckdb": duckdb}


def test_all_engines_read_the_same_rows(
    table: dict[str, Any],
    java_engine: JavaEngine,
    pyiceberg_engine: PyIcebergEngine,
    duckdb_engine: DuckDBEngine,
) -> None:
    results = {
        name: engine.read(table["dir"])
        for name, engine in _engines(java_engine, pyiceberg_engine, duckdb_engine).items()
    }
    assert results["java"]["columns"] == COLUMNS
    assert results["java"]["rows"] == EXPECTED_CURRENT
    for name in ("pyiceberg", "duckdb"):
        assert results[name] == results["java"], name
    # ``==`` treats -0.0 and 0.0 alike, their text does not: every engine keeps the sign of zero
    # (written as a string cast: Spark parses the literal -0.0 as a decimal, which has no -0).
    assert all(str(r["rows"][2][5]) == "-0.0" and str(r["rows"][2][6]) == "-0.0" for r in results.values())
    assert len(results["java"]["snapshot_ids"]) == 2
    assert results["java"]["current_snapshot_id"] in results["java"]["snapshot_ids"]
    assert table["first_snapshot"] in results["java"]["snapshot_ids"]


def test_all_engines_read_an_old_snapshot_with_a_filter_and_columns(
    table: dict[str, Any],
    java_engine: JavaEngine,
    pyiceberg_engine: PyIcebergEngine,
    duckdb_engine: DuckDBEngine,
) -> None:
    first = table["first_snapshot"]
    expected = {"columns": ["name", "id"], "rows": [["one", 1]]}
    got = {
        "java": java_engine.read(table["dir"], snapshot_id=first, where="id < 2", columns=["name", "id"]),
        "pyiceberg": pyiceberg_engine.read(
            table["dir"], snapshot_id=first, where="id < 2", columns=["name", "id"]
        ),
        "duckdb": duckdb_engine.read(table["dir"], snapshot_id=first, where="id < 2", columns=["name", "id"]),
    }
    for name, result in got.items():
        assert {"columns": result["columns"], "rows": result["rows"]} == expected, name
        assert result["current_snapshot_id"] != first, name
        assert first in result["snapshot_ids"], name
    assert len({(r["current_snapshot_id"], tuple(r["snapshot_ids"])) for r in got.values()}) == 1


def test_a_metadata_file_reads_like_its_table_directory(
    table: dict[str, Any], duckdb_engine: DuckDBEngine
) -> None:
    metadata = Path(table["dir"]) / "metadata"
    version = (metadata / "version-hint.text").read_text().strip()
    assert duckdb_engine.read(metadata / f"v{version}.metadata.json") == duckdb_engine.read(table["dir"])


def test_sql_returns_the_last_statement_rows(table: dict[str, Any], java_engine: JavaEngine) -> None:
    cat = table["catalog"]
    result = java_engine.sql(
        f"SELECT id, price FROM {cat}.db.smoke WHERE id > 1 ORDER BY id DESC", sort=False
    )
    assert result == {"columns": ["id", "price"], "rows": [[3, "100"], [2, "-0.1"]]}


def test_exec_reaches_each_engine_api(
    table: dict[str, Any],
    java_engine: JavaEngine,
    pyiceberg_engine: PyIcebergEngine,
    duckdb_engine: DuckDBEngine,
) -> None:
    assert java_engine.exec("result = jvm.org.apache.iceberg.IcebergBuild.version()").startswith("1.9.2")
    assert java_engine.exec("result = spark.conf.get('spark.sql.session.timeZone')") == "UTC"
    code = "result = StaticTable.from_metadata(path).metadata.format_version"
    path = str(sorted((Path(table["dir"]) / "metadata").glob("v*.metadata.json"))[-1])
    assert pyiceberg_engine.exec(code, path=path) == 2
    assert duckdb_engine.exec("result = con.sql('SELECT x + 1 FROM range(3) t(x)').fetchall()") == [
        [1],
        [2],
        [3],
    ]
    # state survives between calls
    duckdb_engine.exec("state['n'] = n", n=41)
    assert duckdb_engine.exec("result = state['n'] + 1") == 42


def test_failures_carry_the_engine_error_text(
    java_engine: JavaEngine, duckdb_engine: DuckDBEngine, tmp_path: Path
) -> None:
    with pytest.raises(EngineError, match="TABLE_OR_VIEW_NOT_FOUND") as info:
        java_engine.sql("SELECT * FROM no_such_table")
    assert info.value.engine == "java"
    assert info.value.error_type
    with pytest.raises(EngineError, match="ZeroDivisionError"):
        duckdb_engine.exec("result = 1 / 0")
    with pytest.raises(FileNotFoundError):
        duckdb_engine.read(tmp_path / "missing")
    # the servers are still usable afterwards
    assert java_engine.sql("SELECT 1 AS one")["rows"] == [[1]]
    assert duckdb_engine.ping() < 5
