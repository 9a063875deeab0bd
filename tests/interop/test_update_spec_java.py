"""Partition spec evolution across icefloe, Java Iceberg (on Spark) and PyIceberg, both ways.

- icefloe evolves a table (unpartitioned -> day(ts) -> + bucket(4, id) -> - day(ts) -> ...) and
  appends between the steps; Java and PyIceberg must read every snapshot, and filtered scans,
  exactly as icefloe does, and Java must see icefloe's specs (ids included). Java then inserts
  into the table (with icefloe's current spec) and icefloe reads that.
- Java evolves a table with ``ALTER TABLE ... ADD / DROP / REPLACE PARTITION FIELD`` between
  inserts; icefloe must see Java's specs and read every snapshot as Java does, then evolve the
  table further (reusing Java's field ids in v2), append, and Java reads the result.

One Java engine session serves the whole module.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icefloe

from .engines import JavaEngine, PyIcebergEngine
from .tables import assert_same_rows, hadoop_catalog, own_rows

pytestmark = pytest.mark.interop

BASE = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)

ARROW = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("ts", pa.timestamp("us", tz="UTC")),
        pa.field("category", pa.string()),
        pa.field("data", pa.string()),
    ]
)

# (icefloe filter, Spark SQL filter, PyIceberg filter)
FILTERS = [
    ("id = 13", "id = 13", "id = 13"),
    ("id IN (2, 6, 10, 14, 18)", "id IN (2, 6, 10, 14, 18)", "id IN (2, 6, 10, 14, 18)"),
    (
        "ts >= '2024-01-06T00:00:00+00:00' AND ts < '2024-01-11T00:00:00+00:00'",
        "ts >= TIMESTAMP '2024-01-06 00:00:00' AND ts < TIMESTAMP '2024-01-11 00:00:00'",
        "ts >= '2024-01-06T00:00:00+00:00' AND ts < '2024-01-11T00:00:00+00:00'",
    ),
    ("category = 'b' AND id > 6", "category = 'b' AND id > 6", "category = 'b' AND id > 6"),
    ("data IS NULL", "data IS NULL", "data IS NULL"),
]


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("spec-evolution")


@pytest.fixture(scope="module")
def java_catalog(java_engine: JavaEngine, warehouse: Path) -> str:
    return java_engine.hadoop_catalog(warehouse)


@pytest.fixture(scope="module")
def catalog(warehouse: Path, java_catalog: str) -> icefloe.Catalog:
    cat = hadoop_catalog(warehouse)
    cat.create_namespace("db")
    return cat


def _rows(start: int, n: int) -> pa.Table:
    """Rows ``start .. start+n-1``: a day apart, categories a/b/c, every 5th ``data`` null."""
    ids = list(range(start, start + n))
    return pa.table(
        {
            "id": ids,
            "ts": [BASE + dt.timedelta(days=i, hours=i) for i in ids],
            "category": ["abc"[i % 3] for i in ids],
            "data": [None if i % 5 == 4 else f"d{i}" for i in ids],
        },
        schema=ARROW,
    )


def _table_dir(table: icefloe.Table) -> Path:
    return Path(table.location().removeprefix("file:"))


def _java_specs(java: JavaEngine, name: str) -> dict[str, Any]:
    return dict(
        java.exec(
            "t = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, name)\n"
            "specs = t.specs()\n"
            "result = {\n"
            "    'default': t.spec().specId(),\n"
            "    'last_partition_id': t.operations().current().lastAssignedPartitionId(),\n"
            "    'specs': [[[f.sourceId(), f.fieldId(), f.transform().toString(), f.name()]\n"
            "               for f in specs.get(i).fields()] for i in sorted(specs.keySet())],\n"
            "}",
            name=name,
        )
    )


def _own_specs(table: icefloe.Table) -> dict[str, Any]:
    return {
        "default": table.spec().spec_id,
        "last_partition_id": table.metadata.last_partition_id,
        "specs": [
            [[f.source_id, f.field_id, str(f.transform), f.name] for f in spec.fields]
            for _, spec in sorted(table.specs().items())
        ],
    }


def _assert_java_reads_like_icefloe(java: JavaEngine, table: icefloe.Table) -> None:
    table_dir = _table_dir(table)
    for snapshot in table.snapshots():
        ours = own_rows(table, snapshot_id=snapshot.snapshot_id)
        theirs = java.read(table_dir, snapshot_id=snapshot.snapshot_id)
        assert_same_rows(f"java at snapshot {snapshot.snapshot_id}", theirs["rows"], ours["rows"])
    ours = own_rows(table)
    theirs = java.read(table_dir)
    assert theirs["columns"] == ours["columns"]
    assert_same_rows("java at the current snapshot", theirs["rows"], ours["rows"])
    for own_filter, spark_filter, _ in FILTERS:
        theirs = java.read(table_dir, where=spark_filter)
        assert_same_rows(
            f"java where {spark_filter}", theirs["rows"], own_rows(table, where=own_filter)["rows"]
        )


def _spec_ids_of_files(table: icefloe.Table) -> list[int]:
    return sorted(task.file.spec_id for task in table.new_scan().plan_files())


@pytest.mark.parametrize("version", [1, 2])
def test_java_and_pyiceberg_read_a_table_icefloe_evolves(
    catalog: icefloe.Catalog,
    java_engine: JavaEngine,
    java_catalog: str,
    pyiceberg_engine: PyIcebergEngine,
    version: int,
) -> None:
    table = catalog.create_table(f"db.evolved_v{version}", ARROW, properties={"format-version": str(version)})
    table.append(_rows(0, 4))
    table.update_spec().add_field("day(ts)").commit()
    table.append(_rows(4, 4))
    table.update_spec().add_field("bucket(4, id)").add_field("category").commit()
    table.append(_rows(8, 4))
    table.update_spec().remove_field("day(ts)").rename_field("id_bucket_4", "shard").commit()
    table.append(_rows(12, 4))
    table.update_spec().add_field("truncate(2, data)").remove_field("category").commit()
    table.append(_rows(16, 4))
    assert table.spec().spec_id == 4
    assert _spec_ids_of_files(table).count(4) >= 1

    name = f"{java_catalog}.db.evolved_v{version}"
    assert _java_specs(java_engine, name) == _own_specs(table)
    _assert_java_reads_like_icefloe(java_engine, table)

    table_dir = _table_dir(table)
    theirs = pyiceberg_engine.read(table_dir)
    assert_same_rows("pyiceberg at the current snapshot", theirs["rows"], own_rows(table)["rows"])
    for own_filter, _, pyiceberg_filter in FILTERS:
        theirs = pyiceberg_engine.read(table_dir, where=pyiceberg_filter)
        assert_same_rows(
            f"pyiceberg where {pyiceberg_filter}", theirs["rows"], own_rows(table, where=own_filter)["rows"]
        )

    # Java writes with icefloe's current spec; icefloe reads it.
    java_engine.sql(f"INSERT INTO {name} VALUES (100, TIMESTAMP '2024-02-01 10:00:00', 'z', 'java')")
    table.refresh()
    java_files = [t.file for t in table.new_scan().filter("id = 100").plan_files()]
    assert [f.spec_id for f in java_files] == [4]
    [row] = own_rows(table, where="id = 100")["rows"]
    assert (row[0], row[2], row[3]) == (100, "z", "java")
    _assert_java_reads_like_icefloe(java_engine, table)


@pytest.mark.parametrize("version", [1, 2])
def test_icefloe_evolves_a_table_java_evolved(
    catalog: icefloe.Catalog, java_engine: JavaEngine, java_catalog: str, version: int
) -> None:
    name = f"{java_catalog}.db.java_evolved_v{version}"

    def insert(start: int) -> None:
        values = ", ".join(
            f"({i}, TIMESTAMP '{(BASE + dt.timedelta(days=i, hours=i)).strftime('%Y-%m-%d %H:%M:%S')}', "
            f"'{'abc'[i % 3]}', {'NULL' if i % 5 == 4 else repr(f'd{i}')})"
            for i in range(start, start + 4)
        )
        java_engine.sql(f"INSERT INTO {name} VALUES {values}")

    java_engine.sql(
        f"CREATE TABLE {name} (id bigint NOT NULL, ts timestamp, category string, data string) USING iceberg "
        f"PARTITIONED BY (days(ts)) TBLPROPERTIES ('format-version' = '{version}')"
    )
    insert(0)
    java_engine.sql(f"ALTER TABLE {name} ADD PARTITION FIELD bucket(4, id) AS shard")
    insert(4)
    java_engine.sql(f"ALTER TABLE {name} REPLACE PARTITION FIELD ts_day WITH hours(ts)")
    insert(8)
    java_engine.sql(f"ALTER TABLE {name} DROP PARTITION FIELD shard")
    insert(12)

    table = catalog.load_table(f"db.java_evolved_v{version}")
    assert _own_specs(table) == _java_specs(java_engine, name)
    assert len(table.specs()) == 4
    _assert_java_reads_like_icefloe(java_engine, table)

    # icefloe carries on: the bucket field Java dropped comes back (v2: with Java's field id),
    # the hour field goes, the category is added.
    table.update_spec().add_field("bucket(4, id)").remove_field("hours(ts)").add_field("category").commit()
    spec = table.spec()
    shard = next(f for f in spec.fields if str(f.transform) == "bucket[4]")
    first_shard = next(f for f in table.specs()[1].fields if f.name == "shard")
    if version >= 2:
        assert (shard.field_id, shard.name) == (first_shard.field_id, "shard")
        assert [str(f.transform) for f in spec.fields] == ["bucket[4]", "identity"]
    else:
        assert shard.field_id > first_shard.field_id
        assert [str(f.transform) for f in spec.fields] == ["void", "void", "void", "bucket[4]", "identity"]
    table.append(_rows(16, 4))
    assert _spec_ids_of_files(table).count(spec.spec_id) >= 1
    assert _java_specs(java_engine, name) == _own_specs(table)
    _assert_java_reads_like_icefloe(java_engine, table)

    # Java writes with icefloe's spec; icefloe reads every row.
    insert(20)
    table.refresh()
    assert sorted(r[0] for r in own_rows(table)["rows"]) == list(range(24))
    assert {t.file.spec_id for t in table.new_scan().filter("id >= 16").plan_files()} == {spec.spec_id}
    _assert_java_reads_like_icefloe(java_engine, table)
