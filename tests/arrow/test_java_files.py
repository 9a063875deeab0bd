"""Reading Parquet files written by Java Iceberg 1.9.2 on Spark 3.5 (fixtures/).

The fixtures come from a Hadoop-catalog table made with Spark SQL:

    CREATE TABLE h.db.t (id bigint, name string, price decimal(10,2), d date, ts timestamp,
        tsntz timestamp_ntz, loc struct<lat: double, lon: double>,
        pts array<struct<x: int, y: string>>, attrs map<string, int>, tags array<string>,
        b binary, f float, flag boolean)
      USING iceberg TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')
    INSERT INTO h.db.t VALUES
      (1, 'a', 1.23, date'2024-01-02', timestamp'2024-01-02 03:04:05.123456',
       timestamp_ntz'2024-01-02 03:04:05', named_struct('lat', 1.5, 'lon', -2.5),
       array(named_struct('x', 1, 'y', 'p'), named_struct('x', 2, 'y', null)),
       map('k1', 1, 'k2', null), array('t1', null), X'0102', 1.5, true),
      (2, null, ...all null...),
      (3, 'c', -0.5, date'1969-12-31', timestamp'1969-12-31 23:59:59.999999',
       timestamp_ntz'2000-02-29 00:00:00', named_struct('lat', null, 'lon', 0.0), array(), map(),
       array('x'), X'', -0.0, false)
    DELETE FROM h.db.t WHERE id = 2     -- a position delete file (merge-on-read)

Spark wrote row 1 to ``java_nested_1.parquet`` and rows 2, 3 to ``java_nested_2.parquet``; the
delete file deletes position 0 of the latter.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs

from icefloe.arrow.convert import from_arrow_array
from icefloe.arrow.reader import read_parquet, read_position_deletes
from icefloe.arrow.schema import arrow_to_schema, schema_to_arrow
from icefloe.spec.conversions import days_from_civil
from icefloe.spec.schema import Schema
from icefloe.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
)

FIXTURES = Path(__file__).parent / "fixtures"
FS = pafs.LocalFileSystem()

# the table schema from the table's metadata JSON
TABLE_SCHEMA = Schema(
    NestedField(1, "id", LongType()),
    NestedField(2, "name", StringType()),
    NestedField(3, "price", DecimalType(10, 2)),
    NestedField(4, "d", DateType()),
    NestedField(5, "ts", TimestamptzType()),
    NestedField(6, "tsntz", TimestampType()),
    NestedField(
        7, "loc", StructType(NestedField(14, "lat", DoubleType()), NestedField(15, "lon", DoubleType()))
    ),
    NestedField(
        8,
        "pts",
        ListType(
            16, StructType(NestedField(17, "x", IntegerType()), NestedField(18, "y", StringType())), False
        ),
    ),
    NestedField(9, "attrs", MapType(19, StringType(), 20, IntegerType(), False)),
    NestedField(10, "tags", ListType(21, StringType(), False)),
    NestedField(11, "b", BinaryType()),
    NestedField(12, "f", FloatType()),
    NestedField(13, "flag", BooleanType()),
)


def micros(days: int, hours: int = 0, minutes: int = 0, seconds: int = 0, fraction: int = 0) -> int:
    return ((days * 24 + hours) * 60 + minutes) * 60_000_000 + seconds * 1_000_000 + fraction


def read_all(name: str, projected: Schema, **options) -> pa.Table:
    batches = list(read_parquet(FS, str(FIXTURES / name), projected=projected, **options))
    return pa.Table.from_batches(batches, schema=schema_to_arrow(projected))


def values(table: pa.Table, schema: Schema) -> list[dict]:
    columns = {f.name: from_arrow_array(table.column(f.name), f.field_type) for f in schema.fields}
    return [dict(zip(columns, row)) for row in zip(*columns.values())]


def test_the_files_schema_is_the_tables_by_id():
    file_schema = arrow_to_schema(pa.parquet.read_schema(FIXTURES / "java_nested_1.parquet"))
    # same ids, names and types (Spark marks some fields required that the table has optional)
    assert file_schema.id_to_name() == TABLE_SCHEMA.id_to_name()
    for field_id in TABLE_SCHEMA.id_to_name():
        assert str(file_schema.find_type(field_id)) == str(TABLE_SCHEMA.find_type(field_id))


def test_values_in_icefloe_representation():
    rows = values(read_all("java_nested_1.parquet", TABLE_SCHEMA), TABLE_SCHEMA) + values(
        read_all("java_nested_2.parquet", TABLE_SCHEMA), TABLE_SCHEMA
    )
    day = days_from_civil(2024, 1, 2)
    assert rows[0] == {
        "id": 1,
        "name": "a",
        "price": Decimal("1.23"),
        "d": day,
        "ts": micros(day, 3, 4, 5, 123456),
        "tsntz": micros(day, 3, 4, 5),
        "loc": {"lat": 1.5, "lon": -2.5},
        "pts": [{"x": 1, "y": "p"}, {"x": 2, "y": None}],
        "attrs": {"k1": 1, "k2": None},
        "tags": ["t1", None],
        "b": b"\x01\x02",
        "f": 1.5,
        "flag": True,
    }
    assert rows[1] == {"id": 2, **{f.name: None for f in TABLE_SCHEMA.fields[1:]}}
    assert rows[2] == {
        "id": 3,
        "name": "c",
        "price": Decimal("-0.50"),
        "d": -1,
        "ts": -1,
        "tsntz": micros(days_from_civil(2000, 2, 29)),
        "loc": {"lat": None, "lon": 0.0},
        "pts": [],
        "attrs": {},
        "tags": ["x"],
        "b": b"",
        "f": -0.0,
        "flag": False,
    }


def test_position_deletes_written_by_java():
    deletes = read_position_deletes(FS, str(FIXTURES / "java_position_deletes.parquet"))
    assert len(deletes) == 1
    ((data_file, positions),) = deletes.items()
    assert data_file.endswith("/db/t/data/" + data_file.rsplit("/", 1)[1])
    assert positions.tolist() == [0]
    result = read_all("java_nested_2.parquet", TABLE_SCHEMA, positions_to_delete=positions)
    assert result.column("id").to_pylist() == [3]


def test_an_evolved_projection_of_a_java_file():
    evolved = Schema(
        NestedField(1, "id", LongType()),
        NestedField(
            7,
            "location",
            StructType(
                NestedField(15, "longitude", DoubleType()),
                NestedField(30, "alt", IntegerType(), initial_default=0),
            ),
        ),
        NestedField(
            8,
            "points",
            ListType(
                16,
                StructType(NestedField(18, "label", StringType()), NestedField(31, "w", LongType())),
                False,
            ),
        ),
        NestedField(12, "f", DoubleType()),
        NestedField(40, "added", StringType(), initial_default="dflt"),
    )
    result = read_all("java_nested_1.parquet", evolved, row_filter=pc.field("location", "longitude") < 0)
    assert result.to_pylist() == [
        {
            "id": 1,
            "location": {"longitude": -2.5, "alt": 0},
            "points": [{"label": "p", "w": None}, {"label": None, "w": None}],
            "f": 1.5,
            "added": "dflt",
        }
    ]
