"""The tables Java Iceberg (on Spark) writes for ``test_java_writes.py``.

Each builder runs Spark SQL through a Hadoop catalog of the java engine and returns a
:class:`JavaTable`: its Spark name, its folder, the snapshot ids its statements made (in commit
order) and a handful of filters to compare icefloe's and Java's answers with.
"""

from __future__ import annotations

import datetime as dt
import decimal
import gzip
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .engines import JavaEngine, metadata_file
from .tables import Filter, and_, eq, ge, gt, in_, is_null, lt, ne, not_null, or_, starts_with

__all__ = [
    "BUILDERS",
    "JAVA_READ",
    "JavaTable",
    "current_snapshot_id",
    "java_read",
    "run",
]

UTC = dt.UTC  # Spark's TIMESTAMP is Iceberg's timestamptz: filters on Java's `ts` are instants


@dataclass
class JavaTable:
    """A table Java wrote: its Spark name, folder and snapshot ids in commit order."""

    name: str  # e.g. "h1.db.v1_part"
    dir: Path
    snapshots: list[int] = field(default_factory=list)
    filters: list[Filter] = field(default_factory=list)

    @property
    def identifier(self) -> str:
        return self.name.split(".", 1)[1]


def current_snapshot_id(table_dir: Path) -> int:
    path = metadata_file(table_dir)
    opener: Callable[..., Any] = gzip.open if path.endswith(".gz.metadata.json") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return int(json.load(f)["current-snapshot-id"])


def run(java: JavaEngine, table: JavaTable, *statements: str) -> None:
    """Runs each statement (``{t}`` is the table's name) and records the snapshot it made."""
    for statement in statements:
        java.sql(statement.format(t=table.name))
        snapshot_id = current_snapshot_id(table.dir)
        if not table.snapshots or table.snapshots[-1] != snapshot_id:
            table.snapshots.append(snapshot_id)


def create(java: JavaEngine, java_catalog: str, warehouse: Path, name: str, ddl: str) -> JavaTable:
    table = JavaTable(f"{java_catalog}.db.{name}", warehouse / "db" / name)
    java.sql(ddl.format(t=table.name))
    return table


# ----------------------------------------------------------------------------------------------
# the tables Java writes


def v1_partitioned(java_engine: JavaEngine, java_catalog: str, warehouse: Path) -> JavaTable:
    """v1, partitioned by identity(date) and bucket: appends, a copy-on-write row delete (a
    rewrite) and a whole-partition delete (files removed from metadata only)."""
    table = create(
        java_engine,
        java_catalog,
        warehouse,
        "v1_part",
        """CREATE TABLE {t} (id bigint, name string, d date, amount decimal(10, 2), ts timestamp)
           USING iceberg PARTITIONED BY (d, bucket(4, id)) TBLPROPERTIES ('format-version' = '1')""",
    )
    rows = """SELECT id, if(id % 7 = 0, NULL, concat('name-', id)), date_add(date'2024-01-01', cast(id % 4 AS int)),
                     cast(id * 1.25 AS decimal(10, 2)), timestamp_seconds(1700000000 + id * 5000)
              FROM range({lo}, {hi})"""
    run(
        java_engine,
        table,
        "INSERT INTO {t} " + rows.format(lo=0, hi=20),
        "INSERT INTO {t} " + rows.format(lo=20, hi=32),
        "DELETE FROM {t} WHERE id = 3",
        "DELETE FROM {t} WHERE d = date'2024-01-02'",
    )
    table.filters = [
        eq("d", dt.date(2024, 1, 3)),
        in_("id", [4, 5, 27]),
        and_(ge("amount", decimal.Decimal("10.00")), lt("ts", dt.datetime(2023, 11, 15, 12, tzinfo=UTC))),
        is_null("name"),
        starts_with("name", "name-1"),
    ]
    return table


def v2_merge_on_read(java_engine: JavaEngine, java_catalog: str, warehouse: Path) -> JavaTable:
    """v2 with merge-on-read DELETE and UPDATE: Java writes position delete files."""
    table = create(
        java_engine,
        java_catalog,
        warehouse,
        "v2_mor",
        """CREATE TABLE {t} (id bigint, country string, amount double, note string)
           USING iceberg PARTITIONED BY (country)
           TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read',
                          'write.update.mode' = 'merge-on-read')""",
    )
    rows = """SELECT id, element_at(array('CN', 'US', 'BR'), cast(id % 3 + 1 AS int)), id * 0.5,
                     if(id % 5 = 0, NULL, concat('n', id))
              FROM range({lo}, {hi})"""
    run(
        java_engine,
        table,
        "INSERT INTO {t} " + rows.format(lo=0, hi=30),
        "INSERT INTO {t} " + rows.format(lo=30, hi=45),
        "DELETE FROM {t} WHERE id % 4 = 0",
        "UPDATE {t} SET amount = -amount, note = 'updated' WHERE country = 'US' AND id < 20",
        "DELETE FROM {t} WHERE id IN (1, 2, 41)",
        # A whole partition: a metadata-only delete removing its data and delete files.
        "DELETE FROM {t} WHERE country = 'BR'",
    )
    table.filters = [
        eq("country", "US"),
        lt("amount", 0.0),
        eq("note", "updated"),
        and_(eq("country", "CN"), gt("id", 30)),
        or_(is_null("note"), eq("id", 5)),
    ]
    return table


def v2_schema_evolution(java_engine: JavaEngine, java_catalog: str, warehouse: Path) -> JavaTable:
    """Renamed, added, promoted, dropped and re-added columns between inserts."""
    table = create(
        java_engine,
        java_catalog,
        warehouse,
        "v2_evolve",
        """CREATE TABLE {t} (id int, name string, price float, qty int)
           USING iceberg TBLPROPERTIES ('format-version' = '2')""",
    )
    run(
        java_engine,
        table,
        "INSERT INTO {t} VALUES (1, 'a', 1.5, 10), (2, 'b', 2.5, NULL), (3, NULL, NULL, 30)",
        "ALTER TABLE {t} RENAME COLUMN name TO title",
        "ALTER TABLE {t} ADD COLUMN added string",
        "ALTER TABLE {t} ALTER COLUMN id TYPE bigint",
        "ALTER TABLE {t} ALTER COLUMN price TYPE double",
        "INSERT INTO {t} VALUES (4, 'd', 4.25, 40, 'new'), (5000000000, 'e', 1e300, NULL, NULL)",
        # qty dropped and a new qty (another field id) added: old rows must read it as null.
        "ALTER TABLE {t} DROP COLUMN qty",
        "ALTER TABLE {t} ADD COLUMN qty string",
        "INSERT INTO {t} VALUES (6, 'f', 6.0, 'later', 'six')",
    )
    table.filters = [
        gt("id", 1),
        eq("title", "a"),
        is_null("added"),
        not_null("qty"),
        ge("price", 2.0),
    ]
    return table


def v2_spec_evolution(java_engine: JavaEngine, java_catalog: str, warehouse: Path) -> JavaTable:
    """Partition spec evolution (identity -> + days(ts) -> - identity) and a sort order."""
    table = create(
        java_engine,
        java_catalog,
        warehouse,
        "v2_specs",
        """CREATE TABLE {t} (id bigint, category string, ts timestamp, v double)
           USING iceberg PARTITIONED BY (category) TBLPROPERTIES ('format-version' = '2')""",
    )
    rows = """SELECT id, element_at(array('a', 'b', 'c'), cast(id % 3 + 1 AS int)),
                     timestamp_seconds(1704067200 + id * 40000), id / 3.0
              FROM range({lo}, {hi}) ORDER BY id DESC"""
    run(
        java_engine,
        table,
        "INSERT INTO {t} " + rows.format(lo=0, hi=15),
        "ALTER TABLE {t} ADD PARTITION FIELD days(ts)",
        "INSERT INTO {t} " + rows.format(lo=15, hi=30),
        "ALTER TABLE {t} WRITE ORDERED BY id DESC NULLS LAST, category",
        "INSERT INTO {t} " + rows.format(lo=30, hi=40),
        "ALTER TABLE {t} DROP PARTITION FIELD category",
        "INSERT INTO {t} " + rows.format(lo=40, hi=50),
    )
    table.filters = [
        eq("category", "b"),
        ge("ts", dt.datetime(2024, 1, 8, tzinfo=UTC)),
        and_(eq("category", "a"), lt("ts", dt.datetime(2024, 1, 12, 6, tzinfo=UTC))),
        in_("id", [1, 16, 31, 49]),
        ne("category", "c"),
    ]
    return table


def v3_appends(java_engine: JavaEngine, java_catalog: str, warehouse: Path) -> JavaTable:
    """A v3 table Java appends to (row lineage: first-row-id on snapshots and manifests)."""
    table = create(
        java_engine,
        java_catalog,
        warehouse,
        "v3_append",
        """CREATE TABLE {t} (id bigint, name string, d date, payload struct<a: int, b: array<string>>,
                               tags map<string, double>)
           USING iceberg PARTITIONED BY (months(d)) TBLPROPERTIES ('format-version' = '3')""",
    )
    rows = """SELECT id, concat('v3-', id), date_add(date'2023-12-20', cast(id * 3 AS int)),
                     named_struct('a', cast(id AS int), 'b', array(cast(id AS string), 'x')),
                     map('k', id * 1.5D)
              FROM range({lo}, {hi})"""
    run(
        java_engine,
        table,
        "INSERT INTO {t} " + rows.format(lo=0, hi=12),
        "INSERT INTO {t} " + rows.format(lo=12, hi=25),
        "INSERT INTO {t} VALUES (100, NULL, NULL, NULL, NULL)",
    )
    table.filters = [ge("d", dt.date(2024, 1, 15)), eq("name", "v3-7"), is_null("d")]
    return table


def v2_gzip_metadata(java_engine: JavaEngine, java_catalog: str, warehouse: Path) -> JavaTable:
    """Metadata JSON written gzip-compressed (``vN.gz.metadata.json``)."""
    table = create(
        java_engine,
        java_catalog,
        warehouse,
        "v2_gzip",
        """CREATE TABLE {t} (id bigint, s string) USING iceberg
           TBLPROPERTIES ('format-version' = '2', 'write.metadata.compression-codec' = 'gzip')""",
    )
    run(
        java_engine,
        table,
        "INSERT INTO {t} SELECT id, repeat('z', cast(id AS int)) FROM range(0, 10)",
        "INSERT INTO {t} VALUES (10, NULL)",
    )
    table.filters = [gt("id", 7), is_null("s")]
    return table


BUILDERS = {
    "v1_partitioned": v1_partitioned,
    "v2_merge_on_read": v2_merge_on_read,
    "v2_schema_evolution": v2_schema_evolution,
    "v2_spec_evolution": v2_spec_evolution,
    "v3_appends": v3_appends,
    "v2_gzip_metadata": v2_gzip_metadata,
}


JAVA_READ = """
reader = spark.read.format("iceberg")
if snapshot_id is not None:
    reader = reader.option("snapshot-id", str(snapshot_id))
df = reader.load(path)
if where is not None:
    df = df.where(where)
result = {"columns": df.columns, "rows": normalize_rows([list(r) for r in df.collect()])}
"""


def java_read(
    java: JavaEngine, jt: JavaTable, *, snapshot_id: int | None = None, where: str | None = None
) -> Any:
    """Java's rows (and columns) through Spark, like ``java_engine.read``, for any table.

    ``java_engine.read`` itself cannot read a table with gzip-compressed metadata: the harness
    (``_servers/serve.py``, ``_read_result``) opens the metadata file as plain UTF-8 JSON to
    report the snapshot ids. Spark reads it fine.
    """
    return java.exec(JAVA_READ, path=metadata_file(jt.dir), snapshot_id=snapshot_id, where=where)["rows"]
