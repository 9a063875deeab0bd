"""Tables whose metrics are worth checking: every primitive type and their edge values.

Used by the metrics tests and by the Java cross-check, which compares icefloe's metrics of
these very rows with Java Iceberg's.
"""

from __future__ import annotations

import datetime as dt
import itertools
import uuid
from decimal import Decimal

import pyarrow as pa

from icefloe.arrow.schema import schema_to_arrow, to_requested_schema
from icefloe.spec.schema import Schema, assign_fresh_ids
from icefloe.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

NAN = float("nan")
INF = float("inf")
MAX_CP = "\U0010ffff"

# (id, name, type, values), 6 rows each; ids are renumbered as Java would (see _java_ids)
_PRIMITIVES: list[tuple[int, str, object, list[object]]] = [
    (1, "b", BooleanType(), [True, False, None, True, True, False]),
    (2, "b_true", BooleanType(), [True, True, None, True, None, True]),
    (3, "i", IntegerType(), [5, -(2**31), None, 2**31 - 1, 0, -7]),
    (4, "l", LongType(), [2**63 - 1, -(2**63), 0, None, 42, -1]),
    (5, "f", FloatType(), [1.5, NAN, -0.0, 0.0, None, -2.25]),
    (6, "f_negzero", FloatType(), [-0.0, None, -0.0, None, None, None]),
    (7, "f_poszero", FloatType(), [0.0, 0.0, None, 0.0, 0.0, 0.0]),
    (8, "f_nan_only", FloatType(), [NAN, None, NAN, NAN, None, NAN]),
    (9, "f_inf", FloatType(), [INF, -INF, NAN, 1.0, None, 0.0]),
    (10, "d", DoubleType(), [1e300, NAN, -0.0, 0.0, None, -1e-300]),
    (11, "d_zeros", DoubleType(), [0.0, -0.0, 0.0, None, 0.0, -0.0]),
    (12, "d_nan_only", DoubleType(), [NAN, NAN, NAN, NAN, NAN, NAN]),
    (13, "d_inf", DoubleType(), [-INF, 2.0, INF, None, NAN, -3.0]),
    (
        14,
        "dec9",
        DecimalType(9, 2),
        [
            Decimal("1234567.89"),
            Decimal("-9999999.99"),
            None,
            Decimal("0.01"),
            Decimal("0"),
            Decimal("-0.50"),
        ],
    ),
    (
        15,
        "dec18",
        DecimalType(18, 4),
        [
            Decimal("99999999999999.9999"),
            Decimal("-1.0000"),
            None,
            Decimal("0"),
            Decimal("12.3456"),
            Decimal("-99999999999999.9999"),
        ],
    ),
    (
        16,
        "dec38",
        DecimalType(38, 10),
        [
            Decimal("9999999999999999999999999999.9999999999"),
            Decimal("-9999999999999999999999999999.9999999999"),
            Decimal("0E-10"),
            None,
            Decimal("-1.5"),
            Decimal("123.0000000001"),
        ],
    ),
    (
        17,
        "dt",
        DateType(),
        [
            dt.date(1970, 1, 1),
            dt.date(1969, 12, 31),
            dt.date(1, 1, 1),
            dt.date(9999, 12, 31),
            None,
            dt.date(2024, 2, 29),
        ],
    ),
    (
        18,
        "ts",
        TimestampType(),
        [
            dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
            dt.datetime(2024, 3, 10, 12, 0),
            None,
            dt.datetime(1900, 1, 1),
            dt.datetime(2262, 4, 11),
            dt.datetime(1970, 1, 1),
        ],
    ),
    (
        19,
        "tstz",
        TimestamptzType(),
        [
            dt.datetime(2000, 1, 1, tzinfo=dt.UTC),
            None,
            dt.datetime(1960, 6, 1, 0, 0, 0, 1, tzinfo=dt.UTC),
            dt.datetime(2030, 1, 1, tzinfo=dt.UTC),
            None,
            dt.datetime(1970, 1, 1, tzinfo=dt.UTC),
        ],
    ),
    (20, "s", StringType(), ["b", "a", None, "", "abc", "ab"]),
    (21, "s_empty", StringType(), ["", None, "", "", None, ""]),
    (22, "s_nulls", StringType(), [None, None, None, None, None, None]),
    # 20 code points, multi-byte: truncation keeps 16 code points, the upper bound rounds up
    (
        23,
        "s_long",
        StringType(),
        [
            "héllo wörld ünïcødé ✓",
            "日本語のテキストはここで十六文字を超えます",
            "short",
            None,
            "éééééééééééééééééééé",
            "a",
        ],
    ),
    # the upper bound must skip code points that cannot be incremented
    (24, "s_maxcp", StringType(), ["a" + MAX_CP * 20, "a", None, "Z" * 3, "a" + MAX_CP * 15 + "b", "0"]),
    (25, "s_nobound", StringType(), [MAX_CP * 17, MAX_CP * 16, None, MAX_CP, MAX_CP * 20, MAX_CP * 18]),
    (
        26,
        "s_surrogate",
        StringType(),
        ["\ud7ff" * 17, "\ud7ff", None, "\ud7ff" * 16, "\ud7ff" * 2, "\ud7ff" * 20],
    ),
    (
        28,
        "fx",
        FixedType(20),
        [b"\xff" * 20, b"\x00" * 20, None, b"\x01" + b"\xff" * 19, b"\x7f" * 20, b"\x80" + b"\x00" * 19],
    ),
    (29, "bin", BinaryType(), [b"", b"\x00", None, b"\x01" + b"\xff" * 30, b"\xff" * 40, b"abc"]),
    (
        30,
        "bin_nobound",
        BinaryType(),
        [b"\xff" * 17, b"\xff" * 16 + b"\x00", None, b"\xff" * 16 + b"\x01", b"\xff" * 20, b"\xff" * 18],
    ),
    (31, "bin_nulls", BinaryType(), [None, None, None, None, None, None]),
]

# Types the Java engine (Spark 3.5, Iceberg 1.9.2) cannot write from a DataFrame (no time or
# nanosecond types in Spark; its uuid writer fails on Spark strings): checked against Java's
# footer metrics only.
_NOT_IN_SPARK: list[tuple[int, str, object, list[object]]] = [
    (
        27,
        "uuid",
        UUIDType(),
        [
            uuid.UUID(int=0),
            uuid.UUID("ffffffff-ffff-ffff-ffff-ffffffffffff"),
            None,
            uuid.UUID("80000000-0000-0000-0000-000000000000"),
            uuid.UUID("7fffffff-ffff-ffff-ffff-ffffffffffff"),
            uuid.UUID("12345678-1234-5678-1234-567812345678"),
        ],
    ),
    (
        40,
        "t",
        TimeType(),
        [dt.time(0, 0), dt.time(23, 59, 59, 999999), None, dt.time(12, 30), dt.time(0, 0, 0, 1), dt.time(6)],
    ),
    (
        41,
        "ts_ns",
        TimestampNanoType(),
        [-1, 0, None, 1_700_000_000_123_456_789, -5_000_000_000_000_000_000, 7],
    ),
    (42, "tstz_ns", TimestamptzNanoType(), [None, 3, -3, 2**62, None, -(2**62)]),
]


def _java_ids(schema: Schema) -> Schema:
    # The ids Java gives a new table of this schema: the Java tests create tables from it.
    return assign_fresh_ids(schema, itertools.count(1).__next__)


def primitive_schema(*, spark_types_only: bool = False) -> Schema:
    """Field ids in column order, 1..n."""
    columns = _PRIMITIVES if spark_types_only else _PRIMITIVES + _NOT_IN_SPARK
    return _java_ids(Schema(*(NestedField(fid, name, t) for fid, name, t, _ in columns)))


def primitive_table(*, spark_types_only: bool = False) -> pa.Table:
    """Six rows of every primitive type (``spark_types_only``: without time and nanosecond
    timestamps), conformed to :func:`primitive_schema`."""
    schema = primitive_schema(spark_types_only=spark_types_only)
    columns = _PRIMITIVES if spark_types_only else _PRIMITIVES + _NOT_IN_SPARK
    target = schema_to_arrow(schema)
    arrays = []
    for (_, _name, _, values), field in zip(columns, target):
        storage = field.type.storage_type if isinstance(field.type, pa.BaseExtensionType) else field.type
        if isinstance(field.type, pa.BaseExtensionType):
            raw = pa.array([None if v is None else v.bytes for v in values], storage)  # type: ignore[attr-defined]
            arrays.append(pa.ExtensionArray.from_storage(field.type, raw))
        elif pa.types.is_timestamp(field.type) and field.type.unit == "ns":
            arrays.append(pa.array(values, pa.int64()).cast(field.type))
        else:
            arrays.append(pa.array(values, storage))
    return to_requested_schema(pa.Table.from_arrays(arrays, schema=target), schema)


def nested_schema() -> Schema:
    return _java_ids(
        Schema(
            NestedField(1, "id", LongType(), required=True),
            NestedField(
                2,
                "st",
                StructType(
                    NestedField(3, "x", DoubleType()),
                    NestedField(4, "y", IntegerType()),
                    NestedField(
                        5,
                        "inner",
                        StructType(NestedField(6, "z", FloatType()), NestedField(7, "w", StringType())),
                    ),
                ),
            ),
            NestedField(8, "lst", ListType(9, IntegerType(), element_required=False)),
            NestedField(10, "m", MapType(11, StringType(), 12, DoubleType(), value_required=False)),
            NestedField(
                13,
                "lst_st",
                ListType(14, StructType(NestedField(15, "q", LongType())), element_required=False),
            ),
        )
    )


def nested_table() -> pa.Table:
    rows = [
        {
            "id": 1,
            "st": {"x": 1.5, "y": 1, "inner": {"z": NAN, "w": "a"}},
            "lst": [1, None, 3],
            "m": {"k": 1.0},
            "lst_st": [{"q": 1}],
        },
        {"id": 2, "st": None, "lst": None, "m": None, "lst_st": None},
        {"id": 3, "st": {"x": None, "y": None, "inner": None}, "lst": [], "m": {}, "lst_st": []},
        {
            "id": 4,
            "st": {"x": NAN, "y": 9, "inner": {"z": -0.0, "w": None}},
            "lst": [7],
            "m": {"a": NAN, "b": None},
            "lst_st": [None, {"q": None}],
        },
        {
            "id": 5,
            "st": {"x": -4.0, "y": -2, "inner": {"z": None, "w": "zz"}},
            "lst": [None],
            "m": {"z": -1.0},
            "lst_st": [{"q": 5}],
        },
    ]
    schema = nested_schema()
    target = schema_to_arrow(schema)
    for row in rows:
        if row["m"] is not None:
            row["m"] = list(row["m"].items())
    return to_requested_schema(pa.Table.from_pylist(rows, schema=target), schema)
