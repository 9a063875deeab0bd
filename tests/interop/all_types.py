"""The all-types table of the interop tests: every primitive type, nested types, nulls, NaN,
-0.0, infinities and extreme values, as an icefloe schema, an Arrow schema and rows.

Limits chosen for the engines, not for icefloe: timestamps start at 0001-01-02 because PySpark
turns timestamps into Python with ``datetime.fromtimestamp``, which fails within a day of
0001-01-01 (Java Iceberg itself reads the value).
"""

from __future__ import annotations

import datetime as dt
import decimal
import uuid
from typing import Any

import pyarrow as pa

from icefloe.spec.types import NestedField

from .normalize import row_sort_key

__all__ = [
    "ALL_TYPES_ARROW",
    "ALL_TYPES_FIELDS",
    "ALL_TYPES_ROWS",
    "all_types_data",
    "field",
    "pyiceberg_null_nested_as_empty",
]

D = decimal.Decimal
UTC = dt.UTC


def field(field_id: int, name: str, typ: str, required: bool = False) -> NestedField:
    return NestedField(field_id, name, typ, required=required)


ALL_TYPES_FIELDS = [
    field(1, "id", "int", required=True),
    field(2, "b", "boolean"),
    field(3, "i", "int"),
    field(4, "l", "long"),
    field(5, "f", "float"),
    field(6, "d", "double"),
    field(7, "dec9", "decimal(9, 2)"),
    field(8, "dec38", "decimal(38, 10)"),
    field(9, "dt", "date"),
    field(10, "ts", "timestamp"),
    field(11, "tstz", "timestamptz"),
    field(12, "s", "string"),
    field(13, "u", "uuid"),
    field(14, "fx", "fixed[16]"),
    field(15, "bin", "binary"),
    field(16, "st", "struct<a: int, b: string, inner: struct<x: double, y: date>>"),
    field(17, "lst", "list<long>"),
    field(18, "lst_st", "list<struct<k: string, v: int>>"),
    field(19, "mp", "map<string, int>"),
    field(20, "mp_st", "map<int, struct<p: double, q: string>>"),
]

ALL_TYPES_ARROW = pa.schema(
    [
        pa.field("id", pa.int32(), nullable=False),
        ("b", pa.bool_()),
        ("i", pa.int32()),
        ("l", pa.int64()),
        ("f", pa.float32()),
        ("d", pa.float64()),
        ("dec9", pa.decimal128(9, 2)),
        ("dec38", pa.decimal128(38, 10)),
        ("dt", pa.date32()),
        ("ts", pa.timestamp("us")),
        ("tstz", pa.timestamp("us", tz="UTC")),
        ("s", pa.string()),
        ("u", pa.uuid()),
        ("fx", pa.binary(16)),
        ("bin", pa.binary()),
        (
            "st",
            pa.struct(
                [
                    ("a", pa.int32()),
                    ("b", pa.string()),
                    ("inner", pa.struct([("x", pa.float64()), ("y", pa.date32())])),
                ]
            ),
        ),
        ("lst", pa.list_(pa.int64())),
        ("lst_st", pa.list_(pa.struct([("k", pa.string()), ("v", pa.int32())]))),
        ("mp", pa.map_(pa.string(), pa.int32())),
        ("mp_st", pa.map_(pa.int32(), pa.struct([("p", pa.float64()), ("q", pa.string())]))),
    ]
)

F32_MAX = 3.4028234663852886e38
F64_MAX = 1.7976931348623157e308
LONG_TEXT = "日本語 ünïcödé 🧊 " * 700  # ~10 KB of multi-byte text: bounds get truncated
ALL_TYPES_ROWS: list[dict[str, Any]] = [
    {
        "id": 1,
        "b": True,
        "i": 7,
        "l": 8,
        "f": 1.5,
        "d": 2.25,
        "dec9": D("1.50"),
        "dec38": D("12345.6789012345"),
        "dt": dt.date(2024, 1, 2),
        "ts": dt.datetime(2024, 1, 2, 3, 4, 5, 123456),
        "tstz": dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC),
        "s": "hello",
        "u": uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"),
        "fx": bytes(range(16)),
        "bin": b"\x00\xff",
        "st": {"a": 1, "b": "x", "inner": {"x": 0.5, "y": dt.date(2000, 2, 29)}},
        "lst": [1, 2, None],
        "lst_st": [{"k": "a", "v": 1}, {"k": None, "v": None}, None],
        "mp": [("a", 1), ("b", None)],
        "mp_st": [(1, {"p": 1.0, "q": "one"}), (2, None)],
    },
    {"id": 2},  # every optional column null, nested ones included
    {  # minimum values; empty strings, binaries, lists and maps
        "id": 3,
        "b": False,
        "i": -(2**31),
        "l": -(2**63),
        "f": -F32_MAX,
        "d": -F64_MAX,
        "dec9": D("-9999999.99"),
        "dec38": D("-9999999999999999999999999999.9999999999"),
        "dt": dt.date(1, 1, 1),
        # not 0001-01-01: see the module docstring
        "ts": dt.datetime(1, 1, 2),
        "tstz": dt.datetime(1, 1, 2, tzinfo=UTC),
        "s": "",
        "u": uuid.UUID(int=0),
        "fx": bytes(16),
        "bin": b"",
        "st": {"a": None, "b": None, "inner": None},
        "lst": [],
        "lst_st": [],
        "mp": [],
        "mp_st": [],
    },
    {  # maximum values; long unicode text, large binary
        "id": 4,
        "b": True,
        "i": 2**31 - 1,
        "l": 2**63 - 1,
        "f": F32_MAX,
        "d": F64_MAX,
        "dec9": D("9999999.99"),
        "dec38": D("9999999999999999999999999999.9999999999"),
        "dt": dt.date(9999, 12, 31),
        "ts": dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
        "tstz": dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        "s": LONG_TEXT,
        "u": uuid.UUID(int=2**128 - 1),
        "fx": b"\xff" * 16,
        "bin": bytes(range(256)) * 40,
        "st": {"a": 2**31 - 1, "b": "🧊", "inner": {"x": float("-inf"), "y": None}},
        "lst": [2**63 - 1, -(2**63)],
        "lst_st": [{"k": "", "v": -1}],
        "mp": [("", 0), ("🧊", 1)],
        "mp_st": [(-(2**31), {"p": float("nan"), "q": ""})],
    },
    {"id": 5, "f": float("nan"), "d": float("nan"), "s": "\u0000nul and \U0010ffff"},
    {  # negative zero, the instant before the epoch
        "id": 6,
        "f": -0.0,
        "d": -0.0,
        "dec9": D("-0.01"),
        "dt": dt.date(1969, 12, 31),
        "ts": dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
        "tstz": dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    },
    {"id": 7, "f": float("inf"), "d": float("inf"), "l": 0, "i": 0},
    {"id": 8, "f": float("-inf"), "d": float("-inf")},
    {"id": 9, "f": 1e-45, "d": 5e-324, "dec38": D("0.0000000001")},  # subnormals, smallest decimal
]


def all_types_data() -> pa.Table:
    return pa.Table.from_pylist(ALL_TYPES_ROWS, schema=ALL_TYPES_ARROW)


def pyiceberg_null_nested_as_empty(rows: list[Any], columns: list[str]) -> list[Any]:
    """PyIceberg 0.12 reads a null list<struct> as [] and a null map<_, struct> as {}
    (apache/iceberg-python#251 / #3833). The rows PyIceberg is expected to return."""
    index = {columns.index("lst_st"): [], columns.index("mp_st"): {}}
    adjusted = []
    for row in rows:
        row = list(row)
        for i, empty in index.items():
            if row[i] is None:
                row[i] = empty
        adjusted.append(row)
    return sorted(adjusted, key=row_sort_key)
