"""The ``isp.sql`` differential corpus: every statement of ``sql_corpus/*.sql`` runs on Java
Iceberg 1.9.2 on Spark 3.5 and through ``isp.sql`` on PySpark, each on its own warehouse with
identical starting data (none: the corpus creates its tables).

After each statement: a query's rows must be equal (normalised, sorted); a statement that
changes a table must leave the same rows, read by Java from both warehouses (Java reads
icefloe's tables through a second Hadoop catalog), and the same history: the operations of
the snapshots the statement added, in order (a DML statement that changes nothing commits a
snapshot in Java, or does not, and so must icefloe), or, where it removed some (expiry), the
number of snapshots left; history differences are reported together at the end. At the end PyIceberg and DuckDB read every icefloe table and must see Java's rows.

Placeholders: ``{cat}`` each side's catalog name; ``{snap[db.t][i]}`` the i-th snapshot id
(oldest first, negative from the end) and ``{ts[db.t][i]}`` its commit time as a timestamp
literal, each from that side's own table; ``{wh}`` the side's warehouse path.
A ``-- @no-result`` line before a statement: its rows are not compared (snapshot ids, file
counts); the table contents still are. A ``-- @any-operation`` line: of the snapshots the
statement leaves, only their number is compared, not their operations (a copy-on-write change
is a ``delete`` or an ``overwrite`` depending on whether a touched file keeps rows, which
depends on how each side's writer laid the rows out). A ``-- @any-history`` line: the
history is not compared after the statement (a maintenance procedure that finds work in one
side's file layout and none in the other's).
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from sqlglot import exp
from sqlglot.errors import ParseError

import icefloe
from icefloe import spark as isp
from icefloe.spark.sql.parse import Call, parse

from .engines import DuckDBEngine, JavaEngine, PyIcebergEngine, metadata_file
from .normalize import normalize_rows
from .tables import hadoop_catalog

pytestmark = [pytest.mark.interop, pytest.mark.slow]

CORPUS = Path(__file__).parent / "sql_corpus"
MIN_STATEMENTS = 150


def corpus_statements() -> list[tuple[str, str, bool, str]]:
    """(file, statement, compare result, history: ``operations``, ``count`` or ``none``) for
    every statement, in order."""
    out = []
    for path in sorted(CORPUS.glob("*.sql")):
        compare, history = True, "operations"
        current: list[str] = []
        for line in path.read_text().splitlines():
            stripped = line.strip()
            if stripped == "-- @no-result":
                compare = False
                continue
            if stripped in ("-- @any-operation", "-- @any-history"):
                history = "count" if stripped == "-- @any-operation" else "none"
                continue
            if stripped.startswith("--") or not stripped:
                continue
            current.append(line)
            if stripped.endswith(";"):
                out.append((path.name, "\n".join(current).rstrip().rstrip(";"), compare, history))
                current, compare, history = [], True, "operations"
    return out


class _Snapshots:
    def __init__(self, catalog: icefloe.Catalog, kind: str) -> None:
        self.catalog, self.kind = catalog, kind

    def __getitem__(self, identifier: str) -> _Index:
        return _Index(self.catalog.load_table(identifier), self.kind)


class _Index:
    def __init__(self, table: icefloe.Table, kind: str) -> None:
        self.table, self.kind = table, kind

    def __getitem__(self, index: str) -> str:
        snapshot = self.table.snapshots()[int(index)]
        if self.kind == "snap":
            return str(snapshot.snapshot_id)
        moment = dt.datetime.fromtimestamp(snapshot.timestamp_ms / 1000, dt.UTC)
        return f"TIMESTAMP '{moment.strftime('%Y-%m-%d %H:%M:%S.%f')[:-3]}'"


@pytest.fixture(scope="module")
def sides(tmp_path_factory: pytest.TempPathFactory, java_engine: JavaEngine) -> Iterator[dict[str, Any]]:
    java_wh = tmp_path_factory.mktemp("java_wh")
    ice_wh = tmp_path_factory.mktemp("icefloe_wh")
    java_cat = java_engine.hadoop_catalog(java_wh)
    ice_in_java = java_engine.hadoop_catalog(ice_wh)
    java_view = hadoop_catalog(java_wh, "java_view")  # icefloe's view of Java's warehouse
    ice = hadoop_catalog(ice_wh, "ice")
    ice.create_namespace("db")
    java_engine.sql(f"CREATE NAMESPACE {java_cat}.db")
    yield {
        "java_cat": java_cat,
        "ice_in_java": ice_in_java,
        "java_view": java_view,
        "ice": ice,
        "java_wh": java_wh,
        "ice_wh": ice_wh,
    }


def _fill(statement: str, catalog_name: str, catalog: icefloe.Catalog, warehouse: Path) -> str:
    return statement.format(
        cat=catalog_name, snap=_Snapshots(catalog, "snap"), ts=_Snapshots(catalog, "ts"), wh=warehouse
    )


def _targets(statement: str, ice: icefloe.Catalog) -> list[str]:
    """The icefloe tables a (filled, icefloe-side) statement may change."""
    try:
        tree = parse(statement)
    except ParseError:  # Spark's own syntax (RESET key): it names no table
        return []
    if isinstance(tree, exp.Query | exp.Values | exp.Describe):
        return []
    names = set()
    if isinstance(tree, Call):
        names |= {
            a.expression.name for a in tree.expressions if isinstance(a, exp.Kwarg) and a.this.name == "table"
        }
        names |= {a.name for a in tree.expressions[:1] if isinstance(a, exp.Literal)}
    for node in tree.find_all(exp.Table):
        parts = [p.name for p in node.parts]
        if parts and parts[0] == ice.name:
            parts = parts[1:]
        if len(parts) >= 2:
            names.add(".".join(parts[:2]))
    return sorted(n for n in names if ice.table_exists(n))


def _history(java: JavaEngine, table: str) -> list[str]:
    """The operations of the table's snapshots (every branch, staged ones too), oldest first."""
    found = java.sql(f"SELECT operation FROM {table}.snapshots ORDER BY committed_at", sort=False)
    return [row[0] for row in found["rows"]]


def test_corpus_matches_java(
    spark: SparkSession,
    java_engine: JavaEngine,
    sides: dict[str, Any],
    pyiceberg_engine: PyIcebergEngine,
    duckdb_engine: DuckDBEngine,
) -> None:
    ice: icefloe.Catalog = sides["ice"]
    statements = corpus_statements()
    assert len(statements) >= MIN_STATEMENTS, len(statements)
    started = time.monotonic()
    compared = 0
    histories: list[str] = []  # the differences in history, reported together
    seen: dict[str, tuple[list[str], list[str]]] = {}  # each table's history on both sides
    for number, (source, template, compare, history) in enumerate(statements):
        where = f"{source} #{number}: {template}"
        java_sql = _fill(template, sides["java_cat"], sides["java_view"], sides["java_wh"])
        ice_sql = _fill(template, ice.name, ice, sides["ice_wh"])
        expected = java_engine.sql(java_sql)
        got = isp.sql(spark, ice_sql, catalog=ice)
        rows = normalize_rows(got.collect())
        if compare:
            assert rows == expected["rows"], f"{where}\nicefloe: {rows}\njava:    {expected['rows']}"
            compared += bool(rows)
        for name in _targets(ice_sql, ice):
            java_rows = java_engine.sql(f"SELECT * FROM {sides['java_cat']}.{name}")
            ice_rows = java_engine.sql(f"SELECT * FROM {sides['ice_in_java']}.{name}")
            assert ice_rows == java_rows, f"{where}: table {name} differs"
            java_history = _history(java_engine, f"{sides['java_cat']}.{name}")
            ice_history = _history(java_engine, f"{sides['ice_in_java']}.{name}")
            java_before, ice_before = seen.get(name, ([], []))
            seen[name] = (java_history, ice_history)
            if history == "none":
                continue
            grown = (
                java_history[: len(java_before)] == java_before
                and ice_history[: len(ice_before)] == ice_before
            )
            if grown:  # the snapshots this statement added
                java_new, ice_new = java_history[len(java_before) :], ice_history[len(ice_before) :]
                same = ice_new == java_new if history == "operations" else len(ice_new) == len(java_new)
            else:  # snapshots were removed: how many are left
                java_new, ice_new = java_history, ice_history
                same = len(ice_history) == len(java_history)
            if not same:
                histories.append(
                    f"{where}: {name}'s new snapshots differ\n  icefloe: {ice_new}\n  java:    {java_new}"
                )
    assert not histories, "\n".join(histories)
    for ident in ice.list_tables("db"):
        name = ".".join(ident)
        table = ice.load_table(name)
        assert table.metadata_location is not None
        expected = java_engine.read(metadata_file(table.metadata_location))
        for engine in (pyiceberg_engine, duckdb_engine):
            assert engine.read(table.metadata_location)["rows"] == expected["rows"], (engine, name)
    assert compared > len(statements) // 3  # the comparisons saw rows, not just empty results
    print(f"{len(statements)} statements ({compared} non-empty results) in {time.monotonic() - started:.0f}s")
