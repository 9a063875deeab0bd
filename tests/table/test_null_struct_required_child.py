"""A null optional struct whose child is required: Arrow marks the child null under the null
parent (``flatten()``, Parquet readers), Parquet writers refuse nulls in a non-nullable field.
Writing such rows, and writing again what a scan of them returns, must work."""

from __future__ import annotations

import decimal
from pathlib import Path

import pyarrow as pa

from icefloe.spec.schema import Schema
from icefloe.spec.types import (
    DecimalType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
)
from support.catalogs import make_catalog

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(
        2,
        "s",
        StructType(
            NestedField(3, "a", LongType(), required=True),
            NestedField(
                4, "inner", StructType(NestedField(5, "x", IntegerType(), required=True)), required=True
            ),
            NestedField(6, "tags", ListType(7, StringType(), element_required=True), required=True),
            NestedField(8, "m", MapType(9, StringType(), 10, LongType(), value_required=True), required=True),
            NestedField(11, "d", DecimalType(9, 2), required=True),
            NestedField(12, "note", StringType(), required=False),
        ),
        required=False,
    ),
)
ROWS = [
    {
        "id": 1,
        "s": {
            "a": 10,
            "inner": {"x": 1},
            "tags": ["t"],
            "m": [("k", 1)],
            "d": decimal.Decimal("1.50"),
            "note": None,
        },
    },
    {"id": 2, "s": None},
    {
        "id": 3,
        "s": {"a": 30, "inner": {"x": 3}, "tags": [], "m": [], "d": decimal.Decimal("0.00"), "note": "n"},
    },
    {"id": 4, "s": None},
]


def _flattened_nulls(data: pa.Table) -> pa.Table:
    """DATA with its struct rebuilt from ``flatten()``: the children are null under null rows."""
    column = data.column("s").combine_chunks()
    children = column.flatten()
    rebuilt = pa.StructArray.from_arrays(children, fields=list(column.type), mask=column.is_null())
    return data.set_column(1, data.schema.field("s"), rebuilt)


def test_null_struct_with_required_children_writes_and_rewrites(tmp_path: Path) -> None:
    catalog = make_catalog("sql", tmp_path)
    table = catalog.create_table("db.t", SCHEMA)
    arrow_schema = table.new_scan().to_arrow().schema
    data = _flattened_nulls(pa.Table.from_pylist(ROWS, schema=arrow_schema))
    assert data.column("s").chunk(0).field(0).null_count == 2  # what used to fail the write

    table.append(data)
    first = table.new_scan().to_arrow().sort_by("id")
    assert first.to_pylist() == ROWS

    # What the scan returned goes back in as it is (the shape a copy or compaction writes).
    table.overwrite(first)
    assert table.new_scan().to_arrow().sort_by("id").to_pylist() == ROWS
    assert table.current_snapshot().summary["operation"] == "overwrite"
