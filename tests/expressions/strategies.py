"""Hypothesis strategies for expression tests: a schema with every primitive type, rows of
values in icefloe's representation, filters over it, and the rows as Arrow tables.

Value domains are small on purpose, so random filters often hit, miss and straddle values.
"""

from __future__ import annotations

import math
import uuid
from decimal import Decimal
from typing import Any

import pyarrow as pa
from hypothesis import strategies as st

from icefloe.expressions import (
    Expression,
    always_false,
    always_true,
    and_,
    not_,
    or_,
    predicate,
)
from icefloe.expressions.model import Operation
from icefloe.spec.conversions import MICROS_PER_DAY
from icefloe.spec.schema import Schema
from icefloe.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    LongType,
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

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
UUIDS = [uuid.UUID(int=0), uuid.UUID(int=1), uuid.UUID(int=2**127), uuid.UUID(int=2**128 - 1)]

SCHEMA = Schema(
    NestedField(1, "b", BooleanType()),
    NestedField(2, "i", IntegerType()),
    NestedField(3, "l", LongType()),
    NestedField(4, "f", FloatType()),
    NestedField(5, "d", DoubleType()),
    NestedField(6, "dec", DecimalType(9, 2)),
    NestedField(7, "dt", DateType()),
    NestedField(8, "t", TimeType()),
    NestedField(9, "ts", TimestampType()),
    NestedField(10, "tstz", TimestamptzType()),
    NestedField(11, "tsn", TimestampNanoType()),
    NestedField(12, "tstzn", TimestamptzNanoType()),
    NestedField(13, "s", StringType()),
    NestedField(14, "u", UUIDType()),
    NestedField(15, "fx", FixedType(3)),
    NestedField(16, "bin", BinaryType()),
    NestedField(
        17,
        "st",
        StructType(NestedField(18, "a", IntegerType()), NestedField(19, "z", StringType(), required=True)),
    ),
    NestedField(20, "ri", LongType(), required=True),
)

#: Columns filters may name (dotted for the struct's children), with their types.
COLUMNS: dict[str, IcebergType] = {
    **{f.name: f.field_type for f in SCHEMA.fields if f.field_type.is_primitive},
    "st.a": IntegerType(),
    "st.z": StringType(),
}

_small_ints = st.integers(-4, 4)
_floats = st.one_of(
    st.sampled_from([0.0, -0.0, 1.5, -1.5, math.inf, -math.inf, math.nan, 3.4028234663852886e38]),
    st.integers(-4, 4).map(float),
)
_decimals = st.integers(-400, 400).map(lambda n: Decimal(n).scaleb(-2))
_strings = st.text(alphabet="ab\u00e9\U0001f600", max_size=3)


def values(type_: IcebergType) -> st.SearchStrategy[Any]:
    """Non-null values of a column type, from small domains (plus the type's extremes)."""
    if isinstance(type_, BooleanType):
        return st.booleans()
    if isinstance(type_, (IntegerType, DateType)):
        return st.one_of(_small_ints, st.sampled_from([INT_MIN, INT_MAX, INT_MIN + 1]))
    if isinstance(type_, (LongType, TimestampType, TimestamptzType, TimestampNanoType, TimestamptzNanoType)):
        return st.one_of(_small_ints, st.sampled_from([LONG_MIN, LONG_MAX]))
    if isinstance(type_, FloatType):
        return _floats
    if isinstance(type_, DoubleType):
        return st.one_of(_floats, st.sampled_from([0.1, 1e300, -1e300]))
    if isinstance(type_, DecimalType):
        return _decimals
    if isinstance(type_, TimeType):
        return st.one_of(st.integers(0, 4), st.just(MICROS_PER_DAY - 1))
    if isinstance(type_, StringType):
        return _strings
    if isinstance(type_, UUIDType):
        return st.sampled_from(UUIDS)
    if isinstance(type_, FixedType):
        return st.binary(min_size=3, max_size=3).map(lambda b: bytes(x % 3 for x in b))
    if isinstance(type_, BinaryType):
        return st.binary(max_size=3).map(lambda b: bytes(x % 3 for x in b))
    raise AssertionError(type_)


def literals(type_: IcebergType) -> st.SearchStrategy[Any]:
    """Filter values for a column: its own values, and values that need converting (fractions
    for whole-number columns, numbers beyond the range, text for dates)."""
    own = values(type_).filter(lambda v: not (isinstance(v, float) and math.isnan(v)))
    if isinstance(type_, (IntegerType, LongType)):
        return st.one_of(own, st.sampled_from([2.5, -0.5, Decimal("1.5"), 10**20, -(10**20), "3"]))
    if isinstance(type_, DecimalType):
        return st.one_of(own, st.sampled_from([Decimal("0.005"), Decimal("-1.015"), 2, 2.5, 10**12]))
    if isinstance(type_, (FloatType, DoubleType)):
        return st.one_of(own, st.sampled_from([0.1, 1e300, -1e300, 2, Decimal("1.25")]))
    if isinstance(type_, DateType):
        return st.one_of(own, st.sampled_from(["1970-01-02", "1969-12-31"]))
    if isinstance(type_, StringType):
        return st.one_of(own, st.just(""))
    return own


@st.composite
def predicates(draw: st.DrawFn, columns: dict[str, IcebergType] = COLUMNS) -> Expression:
    name = draw(st.sampled_from(sorted(columns)))
    type_ = columns[name]
    ops = [Operation.IS_NULL, Operation.NOT_NULL, Operation.LT, Operation.LT_EQ, Operation.GT]
    ops += [Operation.GT_EQ, Operation.EQ, Operation.NOT_EQ, Operation.IN, Operation.NOT_IN]
    if isinstance(type_, (FloatType, DoubleType)):
        ops += [Operation.IS_NAN, Operation.NOT_NAN]
    if isinstance(type_, StringType):
        ops += [Operation.STARTS_WITH, Operation.NOT_STARTS_WITH]
    op = draw(st.sampled_from(ops))
    if op.is_unary:
        return predicate(op, name)
    if op.is_set:
        return predicate(op, name, draw(st.lists(literals(type_), max_size=4)))
    if op in (Operation.STARTS_WITH, Operation.NOT_STARTS_WITH):
        return predicate(op, name, draw(_strings))
    return predicate(op, name, draw(literals(type_)))


def expressions(columns: dict[str, IcebergType] = COLUMNS) -> st.SearchStrategy[Expression]:
    leaves = st.one_of(predicates(columns), st.sampled_from([always_true(), always_false()]))
    return st.recursive(
        leaves,
        lambda children: st.one_of(
            st.tuples(children, children).map(lambda p: and_(*p)),
            st.tuples(children, children).map(lambda p: or_(*p)),
            children.map(not_),
        ),
        max_leaves=6,
    )


def _optional(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), strategy)


@st.composite
def rows(draw: st.DrawFn) -> dict[str, Any]:
    """A row as a mapping by column name (the struct as a nested mapping or None)."""
    row: dict[str, Any] = {}
    for field in SCHEMA.fields:
        if isinstance(field.field_type, StructType):
            inner = st.fixed_dictionaries({"a": _optional(values(IntegerType())), "z": _strings})
            row[field.name] = draw(_optional(inner))
        elif field.required:
            row[field.name] = draw(values(field.field_type))
        else:
            row[field.name] = draw(_optional(values(field.field_type)))
    return row


ARROW_TYPES: dict[str, pa.DataType] = {
    "b": pa.bool_(),
    "i": pa.int32(),
    "l": pa.int64(),
    "f": pa.float32(),
    "d": pa.float64(),
    "dec": pa.decimal128(9, 2),
    "dt": pa.date32(),
    "t": pa.time64("us"),
    "ts": pa.timestamp("us"),
    "tstz": pa.timestamp("us", tz="UTC"),
    "tsn": pa.timestamp("ns"),
    "tstzn": pa.timestamp("ns", tz="UTC"),
    "s": pa.string(),
    "u": pa.uuid(),
    "fx": pa.binary(3),
    "bin": pa.binary(),
    "st": pa.struct([pa.field("a", pa.int32()), pa.field("z", pa.string(), nullable=False)]),
    "ri": pa.int64(),
}


def to_arrow(row_list: list[dict[str, Any]]) -> pa.Table:
    """The rows as an Arrow table, laid out as icefloe's reader produces them."""
    columns = {}
    for name, arrow_type in ARROW_TYPES.items():
        column = [row[name] for row in row_list]
        if name == "u":
            column = [None if v is None else v.bytes for v in column]
        columns[name] = pa.array(column, arrow_type)
    return pa.table(columns)
