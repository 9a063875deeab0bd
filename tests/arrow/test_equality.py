"""Equality delete matching on Arrow data: null equals null, floats by bits, structs' nulls."""

from __future__ import annotations

import datetime as dt
import math
import struct
import uuid
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icefloe.arrow.equality import EqualityDeleteSet, key_column


def _key(value: Any) -> Any:
    """Java's equality for one value: doubles by their canonical bits."""
    if isinstance(value, float):
        return ("f", struct.pack(">d", math.nan if math.isnan(value) else value))
    return value


def _reference(deletes: list[tuple[Any, ...]], rows: list[tuple[Any, ...]]) -> list[bool]:
    keys = {tuple(_key(v) for v in row) for row in deletes}
    return [tuple(_key(v) for v in row) in keys for row in rows]


def test_null_equals_null_and_all_columns_must_match() -> None:
    deletes = EqualityDeleteSet([1, 2], [pa.array([1, None, 3]), pa.array(["a", "b", None])])
    assert len(deletes) == 3
    data = [pa.array([1, 1, None, None, 3, 3, 2]), pa.array(["a", "b", "b", None, None, "x", "a"])]
    assert deletes.deleted(data).tolist() == [True, False, True, False, True, False, False]


def test_floats_compare_by_bits() -> None:
    deletes = EqualityDeleteSet([1], [pa.array([float("nan"), -0.0], pa.float64())])
    data = pa.array([float("nan"), 0.0, -0.0, 1.0, None], pa.float64())
    assert deletes.deleted([data]).tolist() == [True, False, True, False, False]
    floats = EqualityDeleteSet([1], [pa.array([0.0, None], pa.float32())])
    assert floats.deleted([pa.array([-0.0, 0.0, None], pa.float32())]).tolist() == [False, True, True]


@pytest.mark.parametrize(
    ("arrow_type", "values"),
    [
        (pa.string(), ["x", "y", None]),
        (pa.binary(), [b"\x00", b"", None]),
        (pa.binary(4), [b"abcd", b"abce", None]),
        (pa.decimal128(9, 2), [Decimal("1.25"), Decimal("-3.00"), None]),
        (pa.date32(), [dt.date(2024, 1, 1), dt.date(1969, 12, 31), None]),
        (
            pa.timestamp("us", tz="UTC"),
            [dt.datetime(2024, 1, 1, tzinfo=dt.UTC), dt.datetime(1, 1, 1, tzinfo=dt.UTC), None],
        ),
        (pa.time64("us"), [dt.time(1, 2, 3), dt.time(0), None]),
        (pa.bool_(), [True, False, None]),
        (pa.uuid(), [uuid.UUID(int=1).bytes, uuid.UUID(int=2).bytes, None]),
    ],
)
def test_every_primitive_type(arrow_type: pa.DataType, values: list[Any]) -> None:
    if isinstance(arrow_type, pa.BaseExtensionType):
        keys = pa.ExtensionArray.from_storage(
            arrow_type, pa.array([*values[:1], None], arrow_type.storage_type)
        )
        data = pa.ExtensionArray.from_storage(arrow_type, pa.array(values, arrow_type.storage_type))
    else:
        keys = pa.array([*values[:1], None], arrow_type)
        data = pa.array(values, arrow_type)
    assert EqualityDeleteSet([1], [keys]).deleted([data]).tolist() == [True, False, True]


def test_struct_children_are_null_where_the_struct_is() -> None:
    struct_array = pa.StructArray.from_arrays(
        [pa.array([1, 2, None])], names=["x"], mask=pa.array([False, True, False])
    )
    batch = pa.RecordBatch.from_arrays([pa.array([10, 20, 30]), struct_array], names=["id", "s"])
    column = key_column(batch, [1, 0])
    assert column.to_pylist() == [1, None, None]
    deletes = EqualityDeleteSet([5], [pa.array([None], pa.int64())])
    assert deletes.deleted([column]).tolist() == [False, True, True]
    table = pa.Table.from_batches([batch, batch])
    assert key_column(table, [0]).to_pylist() == [10, 20, 30, 10, 20, 30]


def test_empty_inputs() -> None:
    deletes = EqualityDeleteSet([1], [pa.array([], pa.int64())])
    assert len(deletes) == 0
    assert deletes.deleted([pa.array([1, None])]).tolist() == [False, False]
    assert EqualityDeleteSet([1], [pa.array([1])]).deleted([pa.array([], pa.int64())]).tolist() == []
    with pytest.raises(ValueError, match="one key array"):
        EqualityDeleteSet([1, 2], [pa.array([1])])


def test_chunked_keys_and_many_columns() -> None:
    rng = np.random.default_rng(3)
    columns = [rng.integers(0, 50, 2000) for _ in range(4)]
    deletes = [pa.chunked_array([c[:700], c[700:1000]]) for c in columns]
    data = [pa.array(c) for c in columns]
    mask = EqualityDeleteSet([1, 2, 3, 4], deletes).deleted(data)
    expected = _reference(
        list(zip(*(c[:1000].tolist() for c in columns))), list(zip(*(c.tolist() for c in columns)))
    )
    assert mask.tolist() == expected
    assert mask[:1000].all()


_VALUES = st.one_of(st.none(), st.integers(-3, 3))
_FLOATS = st.one_of(st.none(), st.sampled_from([0.0, -0.0, 1.5, float("nan"), float("inf")]))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(_VALUES, _FLOATS, st.one_of(st.none(), st.sampled_from(["a", "b", ""]))), max_size=20),
    st.lists(st.tuples(_VALUES, _FLOATS, st.one_of(st.none(), st.sampled_from(["a", "b", ""]))), max_size=40),
)
def test_matches_java_semantics_on_random_rows(
    deletes: list[tuple[Any, ...]], rows: list[tuple[Any, ...]]
) -> None:
    def arrays(data: list[tuple[Any, ...]]) -> list[pa.Array]:
        columns = list(zip(*data)) if data else [(), (), ()]
        types = [pa.int64(), pa.float64(), pa.string()]
        return [pa.array(list(c), t) for c, t in zip(columns, types)]

    got = EqualityDeleteSet([1, 2, 3], arrays(deletes)).deleted(arrays(rows))
    assert got.tolist() == _reference(deletes, rows)
