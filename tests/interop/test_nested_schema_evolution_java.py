"""Nested schema evolution across icefloe, Java Iceberg (on Spark) and PyIceberg, both directions.

- icefloe evolves a table with nested fields (adds into a struct, a list's element struct and a
  map's value struct, renames, a promotion, moves, a delete, identifier fields) and appends
  between the steps; Java and PyIceberg must see the same schema (ids, names, types, order,
  requiredness, docs, identifier fields) and read the same rows, every snapshot for Java.
- Java evolves a table with ``ALTER TABLE ... ADD COLUMN point.z``, ``RENAME COLUMN``,
  ``ALTER COLUMN ... FIRST / AFTER`` and ``SET IDENTIFIER FIELDS``; icefloe must see Java's
  schema and read Java's rows, then evolve it further for Java to read.

One Java and one PyIceberg engine session serve the whole module.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icefloe
from icefloe.serde.schema_json import schema_to_json

from .engines import JavaEngine, PyIcebergEngine
from .tables import assert_same_rows, hadoop_catalog, own_rows

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("nested-schema-evolution")


@pytest.fixture(scope="module")
def java_catalog(java_engine: JavaEngine, warehouse: Path) -> str:
    return java_engine.hadoop_catalog(warehouse)


@pytest.fixture(scope="module")
def catalog(warehouse: Path, java_catalog: str) -> icefloe.Catalog:
    cat = hadoop_catalog(warehouse)
    cat.create_namespace("db")
    return cat


def _canonical(obj: Any) -> Any:
    """A schema's spec JSON without what writers may spell differently (schema ids, absent vs.
    null docs and defaults, the order of identifier ids)."""
    if isinstance(obj, dict):
        out = {
            k: _canonical(v)
            for k, v in obj.items()
            if k not in ("schema-id", "identifier-field-ids") and v is not None
        }
        if "identifier-field-ids" in obj:
            out["identifier-field-ids"] = sorted(obj["identifier-field-ids"])
        return out
    if isinstance(obj, list):
        return [_canonical(v) for v in obj]
    return obj


def _java_schema(java: JavaEngine, name: str) -> Any:
    return java.exec(
        "t = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, name)\n"
        "result = json.loads(jvm.org.apache.iceberg.SchemaParser.toJson(t.schema()))",
        name=name,
    )


def _pyiceberg_schema(py: PyIcebergEngine, table: icefloe.Table) -> Any:
    return py.exec(
        "result = json.loads(StaticTable.from_metadata(path).schema().model_dump_json())",
        path=table.metadata_location,
    )


def _table_dir(table: icefloe.Table) -> Path:
    return Path(table.location().removeprefix("file:"))


def _assert_engines_agree(
    java: JavaEngine, py: PyIcebergEngine, java_name: str, table: icefloe.Table, *, every_snapshot: bool
) -> None:
    ours = _canonical(schema_to_json(table.schema()))
    assert ours["identifier-field-ids"] == sorted(table.schema().identifier_field_ids)
    assert _canonical(_java_schema(java, java_name)) == ours
    assert _canonical(_pyiceberg_schema(py, table)) == ours
    table_dir = _table_dir(table)
    if every_snapshot:
        for snapshot in table.snapshots():
            theirs = java.read(table_dir, snapshot_id=snapshot.snapshot_id)
            mine = own_rows(table, snapshot_id=snapshot.snapshot_id)
            assert theirs["columns"] == mine["columns"], f"snapshot {snapshot.snapshot_id}"
            assert_same_rows(f"java at snapshot {snapshot.snapshot_id}", theirs["rows"], mine["rows"])
    mine = own_rows(table)
    for engine, theirs in (("java", java.read(table_dir)), ("pyiceberg", py.read(table_dir))):
        assert theirs["columns"] == mine["columns"] == table.schema().column_names, engine
        assert_same_rows(f"{engine} at the current snapshot", theirs["rows"], mine["rows"])


INITIAL = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("point", pa.struct([pa.field("x", pa.float64()), pa.field("y", pa.float64())])),
        pa.field(
            "locations", pa.list_(pa.struct([pa.field("lat", pa.float64()), pa.field("lon", pa.float64())]))
        ),
        pa.field("attrs", pa.map_(pa.string(), pa.struct([pa.field("v", pa.int32())]))),
        pa.field("note", pa.string()),
    ]
)


def _rows(table: icefloe.Table, first: int) -> pa.Table:
    """Three rows for the table's current schema, whatever its nested fields are now.

    Lists and maps are never null: PyIceberg 0.12 reads a null ``list<struct>`` or map of
    structs as empty (with or without schema evolution), so they would not compare."""
    schema = table.new_scan().to_arrow().schema

    def value(field_type: pa.DataType, n: int) -> Any:
        if pa.types.is_struct(field_type):
            return {f.name: value(f.type, n) for f in field_type}
        if pa.types.is_map(field_type):
            return [(f"k{n}", value(field_type.item_type, n))]
        if pa.types.is_list(field_type):
            return [value(field_type.value_type, n), value(field_type.value_type, n + 100)]
        if pa.types.is_timestamp(field_type):
            return dt.datetime(2024, 1, 1, tzinfo=dt.UTC) + dt.timedelta(hours=n)
        if pa.types.is_integer(field_type):
            return n * 10
        if pa.types.is_floating(field_type):
            return n + 0.5
        return f"s{n}"

    def nullable(field: pa.Field) -> bool:
        return field.name != "id" and not (pa.types.is_list(field.type) or pa.types.is_map(field.type))

    data = {
        f.name: [value(f.type, n) if (n % 3 or not nullable(f)) else None for n in range(first, first + 3)]
        for f in schema
    }
    data["id"] = list(range(first, first + 3))
    return pa.Table.from_pydict(data, schema=schema)


def test_java_and_pyiceberg_read_a_table_icefloe_evolves_nested(
    catalog: icefloe.Catalog, java_engine: JavaEngine, pyiceberg_engine: PyIcebergEngine, java_catalog: str
) -> None:
    table = catalog.create_table("db.icefloe_nested", INITIAL)
    table.append(_rows(table, 0))

    (
        table.update_schema()
        .add_column("point.z", "double", "height")
        .add_column("alt", "double", parent="locations")
        .add_column("attrs.w", "long")
        .add_column("ts", "timestamptz")
        .rename_column("point.x", "px")
        .update_column("attrs.v", "long")
        .move_first("point.y")
        .move_after("ts", "id")
        .allow_incompatible_changes()
        .set_identifier_fields("id")
        .commit()
    )
    assert [f.name for f in table.schema().field("point").field_type.fields] == ["y", "px", "z"]  # type: ignore[attr-defined]
    table.append(_rows(table, 3))

    (
        table.update_schema()
        .rename_column("locations.lat", "latitude")
        .move_before("locations.alt", "locations.lat")
        .delete_column("point.z")
        .add_column("point.tags", "list<string>")
        .update_column_doc("attrs.w", "weight")
        .commit()
    )
    table.append(_rows(table, 6))
    assert table.schema().column_names == ["id", "ts", "point", "locations", "attrs", "note"]
    _assert_engines_agree(
        java_engine, pyiceberg_engine, f"{java_catalog}.db.icefloe_nested", table, every_snapshot=True
    )


def test_icefloe_reads_and_evolves_a_table_java_evolves_nested(
    catalog: icefloe.Catalog, java_engine: JavaEngine, pyiceberg_engine: PyIcebergEngine, java_catalog: str
) -> None:
    name = f"{java_catalog}.db.java_nested"
    java_engine.sql(
        f"CREATE TABLE {name} (id bigint NOT NULL, point struct<x: double, y: double>, "
        "locs array<struct<lat: double, lon: double>>, tag string) USING iceberg "
        "TBLPROPERTIES ('format-version' = '2')",
        f"INSERT INTO {name} VALUES (1, named_struct('x', 1.0D, 'y', 2.0D), "
        "array(named_struct('lat', 1.5D, 'lon', 2.5D)), 'a'), (2, NULL, array(), NULL)",
        f"ALTER TABLE {name} ADD COLUMN point.z double COMMENT 'height'",
        f"ALTER TABLE {name} ADD COLUMN locs.element.alt double",
        f"ALTER TABLE {name} RENAME COLUMN point.x TO px",
        f"ALTER TABLE {name} ALTER COLUMN point.y FIRST",
        f"ALTER TABLE {name} ALTER COLUMN tag AFTER id",
        f"ALTER TABLE {name} SET IDENTIFIER FIELDS id",
        f"INSERT INTO {name} VALUES (3, 'c', named_struct('y', 32.0D, 'px', 31.0D, 'z', 33.0D), "
        "array(named_struct('lat', 3.5D, 'lon', 4.5D, 'alt', 5.5D)))",
    )
    table = catalog.load_table("db.java_nested")
    schema = table.schema()
    assert schema.column_names == ["id", "tag", "point", "locs"]
    assert [f.name for f in schema.field("point").field_type.fields] == ["y", "px", "z"]  # type: ignore[attr-defined]
    assert schema.field("point.z").doc == "height"
    assert schema.identifier_field_ids == (schema.field("id").field_id,)
    _assert_engines_agree(java_engine, pyiceberg_engine, name, table, every_snapshot=True)
    current = {row[0]: row for row in own_rows(table)["rows"]}
    assert current[1][2] == {"y": 2.0, "px": 1.0, "z": None}  # renamed and added nested fields

    # icefloe carries on where Java left off; Java and PyIceberg read the result.
    last_id = table.metadata.last_column_id
    (
        table.update_schema()
        .add_column("point.w", "string")
        .rename_column("locs.alt", "altitude")
        .move_before("point.w", "point.y")
        .move_first("locs.lon")
        .commit()
    )
    assert table.schema().field("point.w").field_id == last_id + 1
    table.append(_rows(table, 4))
    _assert_engines_agree(java_engine, pyiceberg_engine, name, table, every_snapshot=True)
    described = java_engine.sql(f"SELECT point.w, locs[0].altitude FROM {name} WHERE id = 4")
    assert described["rows"] == [["s4", 4.5]]
