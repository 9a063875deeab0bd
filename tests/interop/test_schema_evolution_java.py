"""Schema evolution across icefloe and Java Iceberg (on Spark), in both directions.

- icefloe evolves a table (add, rename, widen ``int`` -> ``long``, ``float`` -> ``double`` and a
  decimal's precision, delete, make optional; on v3 also columns with default values) and
  appends between the steps; Java must read every snapshot exactly as icefloe does, each with
  the schema it was written with, and the current state with the current schema.
- Java evolves a table with ``ALTER TABLE ... ADD / RENAME / ALTER COLUMN ... TYPE / DROP
  COLUMN / DROP NOT NULL`` between inserts; icefloe must see Java's schemas (same field ids and
  types) and read every snapshot as Java does. icefloe then evolves that table further and Java
  reads the result.

One Java engine session serves the whole module.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icefloe
from icefloe.arrow.schema import schema_to_arrow

from .engines import JavaEngine
from .tables import assert_same_rows, hadoop_catalog, own_rows

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("schema-evolution")


@pytest.fixture(scope="module")
def java_catalog(java_engine: JavaEngine, warehouse: Path) -> str:
    return java_engine.hadoop_catalog(warehouse)


@pytest.fixture(scope="module")
def catalog(warehouse: Path, java_catalog: str) -> icefloe.Catalog:
    cat = hadoop_catalog(warehouse)
    cat.create_namespace("db")
    return cat


INITIAL = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("i", pa.int32()),
        pa.field("f", pa.float32()),
        pa.field("d", pa.decimal128(9, 2)),
        pa.field("s", pa.string()),
        pa.field("x", pa.string()),
        pa.field("req", pa.int32(), nullable=False),
    ]
)


def _rows(table: icefloe.Table, first_id: int, **overrides: Any) -> pa.Table:
    """Three rows for the table's current schema; ``overrides`` replace column values."""
    schema = schema_to_arrow(table.schema())
    data: dict[str, list[Any]] = {}
    for field in schema:
        ids = range(first_id, first_id + 3)
        if field.name in overrides:
            data[field.name] = list(overrides[field.name])
        elif pa.types.is_integer(field.type):
            data[field.name] = [n * 10 for n in ids]
        elif pa.types.is_floating(field.type):
            data[field.name] = [n + 0.25 for n in ids]
        elif pa.types.is_decimal(field.type):
            data[field.name] = [Decimal(n) + Decimal("0.5") for n in ids]
        else:
            data[field.name] = [f"{field.name}{n}" if n % 3 else None for n in ids]
    data["id"] = list(range(first_id, first_id + 3))
    return pa.Table.from_pydict(data, schema=schema)


def _assert_java_reads_like_icefloe(java: JavaEngine, table: icefloe.Table) -> None:
    table_dir = Path(table.location().removeprefix("file:"))
    snapshots = table.snapshots()
    assert snapshots
    for snapshot in snapshots:
        ours = own_rows(table, snapshot_id=snapshot.snapshot_id)
        theirs = java.read(table_dir, snapshot_id=snapshot.snapshot_id)
        assert theirs["columns"] == ours["columns"], f"snapshot {snapshot.snapshot_id}"
        assert_same_rows(f"java at snapshot {snapshot.snapshot_id}", theirs["rows"], ours["rows"])
    ours = own_rows(table)
    theirs = java.read(table_dir)
    assert theirs["columns"] == ours["columns"] == table.schema().column_names
    assert_same_rows("java at the current snapshot", theirs["rows"], ours["rows"])
    assert theirs["snapshot_ids"] == sorted(s.snapshot_id for s in snapshots)


@pytest.mark.parametrize("version", [2, 3])
def test_java_reads_every_snapshot_of_a_table_icefloe_evolves(
    catalog: icefloe.Catalog, java_engine: JavaEngine, java_catalog: str, version: int
) -> None:
    table = catalog.create_table(
        f"db.evolved_v{version}", INITIAL, properties={"format-version": str(version)}
    )
    table.append(_rows(table, 0))

    table.update_schema().add_column("note", "string", "added by icefloe").commit()
    table.append(_rows(table, 3))

    table.update_schema().rename_column("s", "label").commit()
    table.append(_rows(table, 6))

    table.update_schema().update_column("i", "long").update_column("f", "double").update_column(
        "d", "decimal(12, 2)"
    ).commit()
    # Values only the widened types hold.
    table.append(
        _rows(table, 9, i=[2**40, -(2**40), 1], f=[1e300, 0.1, -2.5], d=[Decimal("1234567890.12")] * 3)
    )

    table.update_schema().delete_column("x").make_column_optional("req").commit()
    table.append(_rows(table, 12, req=[None, 5, None]))

    if version >= 3:
        table.update_schema().add_required_column("region", "string", default="eu").add_column(
            "score", "int", default=7
        ).commit()
        table.append(_rows(table, 15, region=["us", "eu", "apac"]))

    assert table.schema().column_names == ["id", "i", "f", "d", "label", "req", "note"] + (
        ["region", "score"] if version >= 3 else []
    )
    _assert_java_reads_like_icefloe(java_engine, table)
    # Java sees the same schema (ids included) through its catalog.
    java_fields = java_engine.exec(
        "schema = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, name).schema()\n"
        "result = [[f.fieldId(), f.name(), f.type().toString(), f.isRequired()] for f in schema.columns()]",
        name=f"{java_catalog}.db.evolved_v{version}",
    )
    assert java_fields == [[f.field_id, f.name, str(f.field_type), f.required] for f in table.schema().fields]


def test_icefloe_reads_every_snapshot_of_a_table_java_evolves(
    catalog: icefloe.Catalog, java_engine: JavaEngine, java_catalog: str
) -> None:
    name = f"{java_catalog}.db.java_evolved"

    def insert(first: int, columns: str, values: str) -> None:
        rows = ", ".join(values.format(n=n, s=f"'s{n}'") for n in range(first, first + 3))
        java_engine.sql(f"INSERT INTO {name} ({columns}) VALUES {rows}")

    java_engine.sql(
        f"CREATE TABLE {name} (id bigint NOT NULL, i int, f float, d decimal(9, 2), s string, x string, "
        "req int NOT NULL) USING iceberg TBLPROPERTIES ('format-version' = '2')"
    )
    base_cols = "id, i, f, d, s, x, req"
    insert(0, base_cols, "({n}, {n}, CAST({n}.5 AS FLOAT), {n}.25BD, {s}, {s}, {n})")
    java_engine.sql(f"ALTER TABLE {name} ADD COLUMN note string COMMENT 'added by java'")
    insert(3, base_cols + ", note", "({n}, {n}, CAST({n}.5 AS FLOAT), {n}.25BD, {s}, {s}, {n}, {s})")
    java_engine.sql(f"ALTER TABLE {name} RENAME COLUMN s TO label")
    insert(
        6,
        "id, i, f, d, label, x, req, note",
        "({n}, {n}, CAST({n}.5 AS FLOAT), {n}.25BD, {s}, {s}, {n}, {s})",
    )
    java_engine.sql(
        f"ALTER TABLE {name} ALTER COLUMN i TYPE bigint",
        f"ALTER TABLE {name} ALTER COLUMN f TYPE double",
        f"ALTER TABLE {name} ALTER COLUMN d TYPE decimal(12, 2)",
    )
    insert(
        9,
        "id, i, f, d, label, x, req, note",
        "({n}, 1099511627776, 1e300, 1234567890.12BD, {s}, {s}, {n}, {s})",
    )
    java_engine.sql(f"ALTER TABLE {name} DROP COLUMN x", f"ALTER TABLE {name} ALTER COLUMN req DROP NOT NULL")
    insert(12, "id, i, f, d, label, req, note", "({n}, {n}, 0.1D, 1.5BD, {s}, NULL, {s})")

    table = catalog.load_table("db.java_evolved")
    schema = table.schema()
    assert [(f.field_id, f.name, str(f.field_type), f.required) for f in schema.fields] == [
        (1, "id", "long", True),
        (2, "i", "long", False),
        (3, "f", "double", False),
        (4, "d", "decimal(12, 2)", False),
        (5, "label", "string", False),
        (7, "req", "int", False),
        (8, "note", "string", False),
    ]
    assert schema.field("note").doc == "added by java"
    assert len(table.snapshots()) == 5
    _assert_java_reads_like_icefloe(java_engine, table)
    # The old-file values read through the promotions exactly.
    first = own_rows(table, snapshot_id=table.snapshots()[0].snapshot_id)
    assert first["columns"] == ["id", "i", "f", "d", "s", "x", "req"]
    current = {r[0]: r for r in own_rows(table)["rows"]}
    assert current[1][:4] == [1, 1, 1.5, "1.25"]
    assert current[9][1:4] == [1099511627776, 1e300, "1234567890.12"]

    # icefloe carries on where Java left off; Java reads the result.
    table.update_schema().add_column("extra", "date").rename_column("label", "tag").commit()
    extra = [dt.date(2024, 1, 1), None, dt.date(2024, 3, 1)]
    table.append(_rows(table, 15, extra=extra))
    _assert_java_reads_like_icefloe(java_engine, table)
    described = java_engine.sql(f"SELECT * FROM {name} WHERE id = 15")
    assert described["columns"] == ["id", "i", "f", "d", "tag", "req", "note", "extra"]
    assert described["rows"][0][-1] == "2024-01-01"
