"""Order-preserving bytes (``spec.conversions.sortable``): sorting the bytes sorts the values."""

from __future__ import annotations

import math
import uuid
from decimal import Decimal
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from icefloe.spec.conversions import sortable_bytes, sortable_tuple
from icefloe.spec.types import (
    BinaryType,
    BooleanType,
    DecimalType,
    DoubleType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    StructType,
    UUIDType,
)

CASES: list[tuple[Any, st.SearchStrategy[Any]]] = [
    (LongType(), st.integers(-(2**63), 2**63 - 1)),
    (IntegerType(), st.integers(-(2**31), 2**31 - 1)),
    (BooleanType(), st.booleans()),
    (DoubleType(), st.floats(allow_nan=False)),
    (DecimalType(38, 4), st.decimals(min_value=Decimal("-1e33"), max_value=Decimal("1e33"), places=4)),
    (StringType(), st.text()),
    (BinaryType(), st.binary()),
    (UUIDType(), st.uuids()),
]


def _key(field_type: Any, value: Any) -> Any:
    """What the bytes must order like: nulls first, then the values (uuids as bytes, strings
    by code point, -0.0 below 0.0)."""
    if value is None:
        return (0,)
    if isinstance(value, uuid.UUID):
        return (1, value.bytes)
    if isinstance(value, float):
        return (1, value, math.copysign(1.0, value))
    return (1, value)


def _check(field_type: Any, values: list[Any]) -> None:
    by_bytes = sorted(values, key=lambda v: sortable_bytes(field_type, v))
    by_value = sorted(values, key=lambda v: _key(field_type, v))
    assert [_key(field_type, v) for v in by_bytes] == [_key(field_type, v) for v in by_value]


@given(st.data())
def test_bytes_sort_as_the_values_of_every_type(data: st.DataObject) -> None:
    for field_type, values in CASES:
        _check(field_type, data.draw(st.lists(st.one_of(st.none(), values), max_size=20)))


def test_edges() -> None:
    _check(DoubleType(), [math.inf, -math.inf, 0.0, -0.0, 1e-308, -1e-308, None])
    assert sortable_bytes(DoubleType(), math.nan) > sortable_bytes(DoubleType(), math.inf)
    _check(StringType(), ["", "a", "a\x00", "a\x00b", "ab", "\U0010ffff", None])
    _check(BinaryType(), [b"", b"\x00", b"\x00\x00", b"\x00\xff", b"\x01", None])


@given(
    st.lists(st.tuples(st.one_of(st.none(), st.text(max_size=3)), st.one_of(st.none(), st.integers(-5, 5))))
)
def test_tuples_sort_field_by_field(rows: list[tuple[Any, Any]]) -> None:
    struct = StructType(NestedField(1, "s", StringType()), NestedField(2, "i", LongType()))
    by_bytes = sorted(rows, key=lambda r: sortable_tuple(struct, r))
    by_value = sorted(rows, key=lambda r: tuple(_key(None, v) for v in r))
    assert by_bytes == by_value
