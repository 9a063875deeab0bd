"""``table.inspect``: every metadata table equals Java Iceberg's (1.9.2, ``spark.table("h.db.t.<name>")``)
row for row, with the same schema (names, types, nullability), for tables Java wrote and tables
icefloe wrote, at the current state and at older snapshots.

The tables: v1 partitioned by a date and a bucket, then the bucket dropped (a void field) and a
truncate added (evolved specs), a copy-on-write delete, a tag, a branch with its own commit and
an expired snapshot (Java); v2 merge-on-read with position deletes, an update and a branch
(Java); v3 unpartitioned with deletion vectors (Java); v2 and v3 tables some of whose
partitions lost all their files (a metadata-only delete, a copy-on-write delete and MERGE) or
kept only delete files (Java, and icefloe); v2 partitioned by day then by country
(evolved spec), with position deletes, equality deletes, a tag, a branch commit and an expired
snapshot (icefloe); v3 with deletion vectors and nested, decimal, binary and NaN columns
(icefloe).

One Java engine session serves the module; Spark reads every metadata table of a table in one
request. Older snapshots are compared on the two tables with evolved specs (j_v1, i_v2).
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icefloe
from icefloe.table.inspect import METADATA_TABLES
from icefloe.write.deletes import write_equality_deletes
from support.spark_schema import spark_schema_json, without_metadata

from .engines import JavaEngine
from .normalize import normalize_arrow
from .tables import assert_same_rows, hadoop_catalog

pytestmark = [pytest.mark.interop, pytest.mark.slow]

#: The metadata tables that show one snapshot's content (the others span the table).
PER_SNAPSHOT = (
    "entries",
    "files",
    "data_files",
    "delete_files",
    "manifests",
    "partitions",
    "position_deletes",
)


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("metadata-tables")


@pytest.fixture(scope="module")
def java_catalog(java_engine: JavaEngine, warehouse: Path) -> str:
    return java_engine.hadoop_catalog(warehouse)


@pytest.fixture(scope="module")
def catalog(warehouse: Path, java_catalog: str) -> icefloe.Catalog:
    cat = hadoop_catalog(warehouse)
    cat.create_namespace_if_not_exists("db")
    return cat


# ---- the tables -----------------------------------------------------------------------------


def _java_v1(java: JavaEngine, cat: str) -> str:
    t = f"{cat}.db.j_v1"
    rows = """SELECT id, if(id % 5 = 0, NULL, concat('name-', id)), date_add(date'2024-01-01', cast(id % 3 AS int)),
                     cast(id * 1.25 AS decimal(10, 2)), timestamp_seconds(1700000000 + id * 5000), id * 0.5D
              FROM range({lo}, {hi})"""
    java.sql(
        f"""CREATE TABLE {t} (id bigint, name string, d date, amount decimal(10, 2), ts timestamp, x double)
            USING iceberg PARTITIONED BY (d, bucket(4, id)) TBLPROPERTIES ('format-version' = '1')""",
        f"INSERT INTO {t} " + rows.format(lo=0, hi=12),
        f"INSERT INTO {t} " + rows.format(lo=12, hi=20),
        f"DELETE FROM {t} WHERE id = 3",
        f"ALTER TABLE {t} CREATE TAG first_tag",
        f"ALTER TABLE {t} DROP PARTITION FIELD bucket(4, id)",
        f"ALTER TABLE {t} ADD PARTITION FIELD truncate(2, name)",
        f"INSERT INTO {t} " + rows.format(lo=20, hi=26),
        f"ALTER TABLE {t} CREATE BRANCH dev",
        f"INSERT INTO {t}.branch_dev " + rows.format(lo=26, hi=28),
    )
    return t


def _java_v2(java: JavaEngine, cat: str) -> str:
    t = f"{cat}.db.j_v2"
    java.sql(
        f"""CREATE TABLE {t} (id bigint, country string, amount double, note string)
            USING iceberg PARTITIONED BY (country)
            TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read',
                           'write.update.mode' = 'merge-on-read')""",
        f"""INSERT INTO {t} SELECT id, element_at(array('CN', 'US', 'BR'), cast(id % 3 + 1 AS int)),
                   if(id = 4, CAST('NaN' AS double), id * 0.5), if(id % 4 = 0, NULL, concat('n', id))
            FROM range(0, 30)""",
        f"DELETE FROM {t} WHERE id IN (1, 2, 7)",
        f"UPDATE {t} SET note = 'changed' WHERE id = 10",
        f"ALTER TABLE {t} CREATE BRANCH audit",
        f"DELETE FROM {t} WHERE country = 'BR' AND id > 20",
    )
    return t


def _java_v3(java: JavaEngine, cat: str) -> str:
    t = f"{cat}.db.j_v3"
    java.sql(
        f"""CREATE TABLE {t} (id bigint, label string, flag boolean)
            USING iceberg TBLPROPERTIES ('format-version' = '3', 'write.delete.mode' = 'merge-on-read')""",
        f"INSERT INTO {t} SELECT id, concat('l', id), id % 2 = 0 FROM range(0, 20)",
        f"INSERT INTO {t} SELECT id, concat('l', id), id % 2 = 0 FROM range(20, 25)",
        f"DELETE FROM {t} WHERE id % 7 = 0",
        f"DELETE FROM {t} WHERE id = 8",
    )
    return t


def _java_gone(java: JavaEngine, cat: str, version: int) -> str:
    """Partitions whose files all went: ``b`` by a metadata-only delete, ``d`` by a
    copy-on-write MERGE; ``a`` keeps only the delete file of its removed data file (a
    copy-on-write delete leaves it, in Java 1.9.2)."""
    t = f"{cat}.db.j_gone_v{version}"
    java.sql(
        f"""CREATE TABLE {t} (id bigint, p string) USING iceberg PARTITIONED BY (p)
            TBLPROPERTIES ('format-version' = '{version}', 'write.delete.mode' = 'merge-on-read')""",
        f"INSERT INTO {t} VALUES (1, 'a'), (2, 'a'), (3, 'b'), (4, 'c'), (5, 'd'), (6, 'd')",
        f"DELETE FROM {t} WHERE id = 1",
        f"ALTER TABLE {t} SET TBLPROPERTIES ('write.delete.mode' = 'copy-on-write')",
        f"DELETE FROM {t} WHERE p = 'a' AND id % 1 = 0",
        f"DELETE FROM {t} WHERE p = 'b'",
        f"MERGE INTO {t} t USING (SELECT 5L AS id UNION ALL SELECT 6L) s ON t.id = s.id WHEN MATCHED THEN DELETE",
    )
    return t


def _icefloe_gone(catalog: icefloe.Catalog) -> icefloe.Table:
    """As :func:`_java_gone`, written by icefloe: ``b`` deleted by its partition, ``d``
    replaced by ``e`` in an overwrite, ``a`` left with its position delete file only."""
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("p", pa.string())])
    table = catalog.create_table(
        "db.i_gone",
        schema,
        partition_by=["p"],
        properties={"format-version": "2", "write.delete.mode": "merge-on-read"},
    )
    table.append(pa.table({"id": [1, 2, 3, 4, 5, 6], "p": ["a", "a", "b", "c", "d", "d"]}, schema=schema))
    table.delete("id = 1")
    a_file = next(t.file for t in table.new_scan().plan_files() if t.file.partition == ("a",))
    table.new_delete().delete_file(a_file).commit()
    table.delete("p = 'b'")
    table.overwrite(pa.table({"id": [7], "p": ["e"]}, schema=schema), "p = 'd'")
    return table


def _expire_first(table: icefloe.Table) -> None:
    """Expire the oldest snapshot (no ref points at it): history keeps a hole."""
    table.refresh()
    first = table.snapshots()[0].snapshot_id
    table.expire_snapshots().expire_snapshot_id(first).commit()


def _icefloe_v2(catalog: icefloe.Catalog) -> icefloe.Table:
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("country", pa.string()),
            pa.field("ts", pa.timestamp("us", tz="UTC")),
            pa.field("score", pa.float32()),
        ]
    )
    table = catalog.create_table(
        "db.i_v2",
        schema,
        partition_by=["day(ts)"],
        properties={"format-version": "2", "write.delete.mode": "merge-on-read"},
    )
    start = dt.datetime(2024, 3, 1, tzinfo=dt.UTC)

    def batch(lo: int, hi: int) -> pa.Table:
        ids = list(range(lo, hi))
        return pa.table(
            {
                "id": ids,
                "country": [None if i % 6 == 0 else ("NL", "VN")[i % 2] for i in ids],
                "ts": [start + dt.timedelta(hours=7 * i) for i in ids],
                "score": [float("nan") if i == 5 else i / 3 for i in ids],
            },
            schema=schema,
        )

    table.append(batch(0, 10))
    table.append(batch(10, 20))
    table.update_spec().add_field("country").commit()
    table.append(batch(20, 30))
    table.delete("id IN (3, 4, 25)")  # position deletes
    spec = table.spec()
    deletes = write_equality_deletes(
        table.io(),
        table_location=table.location(),
        properties=table.properties(),
        schema=table.schema(),
        spec=spec,
        equality_ids=["id"],
        data=pa.table({"id": pa.array([21], pa.int64())}),
        partition=((dt.date(2024, 3, 7) - dt.date(1970, 1, 1)).days, "VN"),  # where row 21 is
    )
    delta = table.new_row_delta()
    for delete in deletes:
        delta.add_deletes(delete)
    delta.commit()
    table.manage_snapshots().create_tag("t1", table.current_snapshot().snapshot_id).commit()
    table.manage_snapshots().create_branch("dev", table.current_snapshot().snapshot_id).commit()
    table.append(batch(30, 32), branch="dev")
    table.delete("id = 31", branch="dev")
    table.append(batch(32, 35))
    _expire_first(table)
    return table


def _icefloe_v3(catalog: icefloe.Catalog) -> icefloe.Table:
    schema = pa.schema(
        [
            pa.field("id", pa.int32(), nullable=False),
            pa.field("loc", pa.struct([pa.field("lat", pa.float64()), pa.field("lon", pa.float64())])),
            pa.field("price", pa.decimal128(9, 3)),
            pa.field("blob", pa.binary()),
            pa.field("day", pa.date32()),
        ]
    )
    table = catalog.create_table(
        "db.i_v3",
        schema,
        partition_by=["bucket(2, id)"],
        properties={"format-version": "3", "write.delete.mode": "merge-on-read"},
    )

    def batch(lo: int, hi: int) -> pa.Table:
        ids = list(range(lo, hi))
        return pa.table(
            {
                "id": pa.array(ids, pa.int32()),
                "loc": [{"lat": float("nan") if i == 2 else i * 1.5, "lon": -i * 0.25} for i in ids],
                "price": [decimal.Decimal(i) / 8 for i in ids],
                "blob": [bytes([i, 255 - i]) for i in ids],
                "day": [dt.date(2024, 1, 1) + dt.timedelta(days=i) for i in ids],
            },
            schema=schema,
        )

    table.append(batch(0, 12))
    table.append(batch(12, 20))
    table.delete("id IN (1, 14)")
    table.delete("id = 2")  # merges into the existing vector
    return table


# ---- comparing --------------------------------------------------------------------------------

_JAVA_READ = """
out = {}
for name, snapshot_id in requests:
    reader = spark.read.format("iceberg")
    if snapshot_id is not None:
        reader = reader.option("snapshot-id", str(snapshot_id))
    df = reader.load(table + "." + name)
    out[name + "@" + str(snapshot_id)] = {
        "schema": df.schema.jsonValue(),
        "rows": normalize_rows([list(r) for r in df.collect()]),
    }
result = out
"""


def _requests(table: icefloe.Table, older_snapshot: bool) -> list[tuple[str, int | None]]:
    """Every metadata table now, and (``older_snapshot``) the per-snapshot ones at a snapshot in
    the middle of the history (before the later deletes, specs and branches)."""
    snapshots = [s.snapshot_id for s in table.snapshots()]
    middle = {snapshots[len(snapshots) // 2]} if older_snapshot else set()
    older = sorted(middle - {table.current_snapshot().snapshot_id})
    return [(name, None) for name in METADATA_TABLES] + [(n, s) for s in older for n in PER_SNAPSHOT]


def _assert_same(java: JavaEngine, java_name: str, table: icefloe.Table, *, older_snapshot: bool) -> None:
    table.refresh()
    requests = _requests(table, older_snapshot)
    found = java.exec(_JAVA_READ, table=java_name, requests=[list(r) for r in requests])
    for name, snapshot_id in requests:
        label = f"{java_name}.{name} @ {snapshot_id}"
        want = found[f"{name}@{snapshot_id}"]
        ours = table.inspect.table(name, snapshot_id=snapshot_id)
        got_schema = spark_schema_json(ours.schema)
        want_schema = without_metadata(want["schema"])
        got_text, want_text = json.dumps(got_schema, sort_keys=True), json.dumps(want_schema, sort_keys=True)
        assert got_text == want_text, (
            f"{label}: schema differs\n  icefloe: {got_text}\n  java:    {want_text}"
        )
        rows = normalize_arrow(ours)["rows"]
        if name == "metadata_log_entries":
            rows, want_rows = _same_location_form(rows, want["rows"])
        else:
            want_rows = want["rows"]
        assert_same_rows(label, rows, want_rows)


def _same_location_form(ours: list[Any], theirs: list[Any]) -> tuple[list[Any], list[Any]]:
    """The current metadata file's location in one spelling (``file:`` or not) on both sides."""

    def plain(rows: list[Any]) -> list[Any]:
        fixed = [[r[0], r[1].removeprefix("file:"), *r[2:]] for r in rows]
        return sorted(fixed, key=lambda r: json.dumps(r, sort_keys=True))

    return plain(ours), plain(theirs)


def test_java_tables(java_engine: JavaEngine, java_catalog: str, catalog: icefloe.Catalog) -> None:
    """Tables Java wrote: v1 with evolved specs, v2 with position deletes, v3 with DVs, and
    partitions left without files or with only delete files."""
    names = [
        _java_v1(java_engine, java_catalog),
        _java_v2(java_engine, java_catalog),
        _java_v3(java_engine, java_catalog),
        _java_gone(java_engine, java_catalog, 2),
        _java_gone(java_engine, java_catalog, 3),
    ]
    v1 = catalog.load_table("db.j_v1")
    _expire_first(v1)
    for name in names:  # an older snapshot where specs evolved (v1)
        table = catalog.load_table(name.split(".", 1)[1])
        _assert_same(java_engine, name, table, older_snapshot=name.endswith("j_v1"))


def test_icefloe_tables(java_engine: JavaEngine, java_catalog: str, catalog: icefloe.Catalog) -> None:
    """Tables icefloe wrote: v2 with evolved specs and every kind of delete, v3 with DVs, v2
    with partitions left without files or with only a delete file."""
    tables = ((_icefloe_v2(catalog), True), (_icefloe_v3(catalog), False), (_icefloe_gone(catalog), True))
    for table, older_snapshot in tables:
        _assert_same(java_engine, f"{java_catalog}.{table.identifier}", table, older_snapshot=older_snapshot)


def test_filters_and_columns(catalog: icefloe.Catalog, java_catalog: str) -> None:
    """Row filters and column selection apply to the metadata table's columns."""
    table = catalog.load_table("db.i_v3")
    files = table.inspect.files(
        columns=["file_path", "readable_metrics.id"], filter="readable_metrics.id.lower_bound >= 12"
    )
    assert files.schema.names == ["file_path", "readable_metrics"]
    assert files.schema.field("readable_metrics").type.num_fields == 1
    assert {row["readable_metrics"]["id"]["lower_bound"] >= 12 for row in files.to_pylist()} == {True}
    deletes = table.inspect.files(filter="content = 1")
    assert deletes.num_rows == len(table.inspect.delete_files())
    assert table.inspect.partitions(
        filter="partition.id_bucket = 0", columns=["record_count"]
    ).schema.names == ["record_count"]


def test_partitions_without_files_are_not_listed(catalog: icefloe.Catalog, java_catalog: str) -> None:
    """What the comparisons above saw, spelled out: no row for a partition whose files all went
    (no ``spec_id`` -1, no zero counts), a row of zero data counts for one left with only a
    delete file."""
    for name in ("db.j_gone_v2", "db.j_gone_v3", "db.i_gone"):
        table = catalog.load_table(name)
        rows = {
            r["partition"]["p"]: (
                r["spec_id"],
                r["record_count"],
                r["file_count"],
                r["position_delete_file_count"],
            )
            for r in table.inspect.partitions().to_pylist()
        }
        assert "b" not in rows and "d" not in rows, (name, rows)
        assert rows["a"] == (0, 0, 0, 1), (name, rows)
        assert rows["c"] == (0, 1, 1, 0), (name, rows)
