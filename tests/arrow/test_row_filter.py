"""Arrow evaluation of filters agrees with the row evaluator, row by row."""

from __future__ import annotations

import datetime as dt
import math
import uuid
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from expressions.strategies import SCHEMA, expressions, rows, to_arrow
from icefloe.arrow.row_filter import filter_rows, filter_table, to_arrow_expression
from icefloe.errors import InvalidFilterError
from icefloe.expressions import bind, parse
from icefloe.expressions.evaluator import compile_expression
from icefloe.spec.schema import Schema
from icefloe.spec.types import NestedField, StringType, StructType, TimestamptzType, UUIDType


def _matching_positions(table: pa.Table, expr: Any, schema: Schema | None = None) -> list[int]:
    """The positions of the rows ``expr`` keeps, the same for the table and as one batch (a
    batch of its own schema, empty or not), filtered by ``filter_table`` and by the reader's
    ``filter_rows``."""
    indexed = table.append_column("_pos", pa.array(range(table.num_rows), pa.int64()))
    positions = filter_table(indexed, expr, schema).column("_pos").to_pylist()
    batch = indexed.combine_chunks().to_batches()[0]
    expression = to_arrow_expression(expr, schema, arrow_schema=batch.schema)
    for kept in (filter_table(batch, expr, schema), filter_rows(batch, expression)):
        assert isinstance(kept, pa.RecordBatch) and kept.schema == batch.schema
        assert kept.column("_pos").to_pylist() == positions
    assert filter_rows(indexed, expression).column("_pos").to_pylist() == positions
    return positions


@settings(max_examples=150, deadline=None)
@given(st.lists(rows(), min_size=1, max_size=6), expressions())
def test_arrow_agrees_with_the_row_evaluator(row_list: list[dict[str, Any]], expr: Any) -> None:
    bound = bind(SCHEMA, expr)
    predicate = compile_expression(bound)
    expected = [i for i, row in enumerate(row_list) if predicate(row) is True]
    assert _matching_positions(to_arrow(row_list), bound) == expected, str(bound)


def _table() -> pa.Table:
    return pa.table(
        {
            "x": pa.array([1.0, math.nan, None, 5.0, -0.0], pa.float64()),
            "n": pa.array([1, 2, None, 4, 5], pa.int64()),
            "s": pa.array(["apple", "banana", None, "apricot", "b"], pa.large_string()),
        }
    )


_SCHEMA = Schema(
    NestedField(1, "x", "double"), NestedField(2, "n", "long"), NestedField(3, "s", StringType())
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("x != 5", [0, 4]),  # neither the null nor the NaN
        ("NOT (x = 5)", [0, 4]),
        ("x < 2", [0, 4]),  # NaN is not less than anything
        ("x > 2", [3]),  # ... nor greater
        ("x IS NAN", [1]),
        ("x IS NOT NAN", [0, 2, 3, 4]),  # null is not NaN
        ("x NOT IN (1, 5)", [4]),
        ("x = 0", [4]),  # -0.0 equals 0.0
        ("n != 2", [0, 3, 4]),
        ("n NOT IN (1, 2)", [3, 4]),
        ("NOT (n IN (1, 2))", [3, 4]),
        ("n IS NULL OR n > 4", [2, 4]),
        ("s LIKE 'ap%'", [0, 3]),
        ("s NOT LIKE 'ap%'", [1, 4]),
        ("NOT (s LIKE 'ap%')", [1, 4]),
        ("s IN ('b', 'apple')", [0, 4]),
        ("s >= 'b'", [1, 4]),
    ],
)
def test_sql_semantics_on_large_strings_and_doubles(text: str, expected: list[int]) -> None:
    assert _matching_positions(_table(), parse(text), _SCHEMA) == expected


def test_columns_are_found_by_field_id_in_the_read_schema() -> None:
    bound = bind(_SCHEMA, "n > 3")
    renamed = Schema(
        NestedField(1, "x", "double"), NestedField(2, "count", "long"), NestedField(3, "s", "string")
    )
    table = pa.table({"count": pa.array([1, 5], pa.int64())})
    assert filter_table(table, bound, renamed).column("count").to_pylist() == [5]


def test_literals_take_the_column_types_of_the_data() -> None:
    schema = Schema(NestedField(1, "ts", TimestamptzType()), NestedField(2, "u", UUIDType()))
    u = uuid.UUID(int=5)
    table = pa.table(
        {
            "ts": pa.array([0, 86_400_000], pa.timestamp("ms", tz="UTC")),  # another unit
            "u": pa.array([u.bytes, uuid.UUID(int=6).bytes], pa.binary(16)),  # plain storage
        }
    )
    expr = bind(schema, "ts >= '1970-01-02T00:00:00' OR u = UUID '00000000-0000-0000-0000-000000000005'")
    assert filter_table(table, expr).num_rows == 2
    expr = bind(schema, "ts > TIMESTAMPTZ '1970-01-01T00:00:00.000001+00:00'")
    assert filter_table(table, expr).column("ts").to_pylist() == [dt.datetime(1970, 1, 2, tzinfo=dt.UTC)]


def test_dictionary_columns() -> None:
    table = pa.table({"s": pa.array(["a", "b", "a"]).dictionary_encode()})
    schema = Schema(NestedField(1, "s", "string"))
    assert filter_table(table, bind(schema, "s = 'a'")).num_rows == 2


def test_decimals_compare_at_any_precision() -> None:
    table = pa.table({"d": pa.array([Decimal("1.50"), Decimal("2.25")], pa.decimal128(38, 2))})
    schema = Schema(NestedField(1, "d", "decimal(10, 2)"))
    assert filter_table(table, bind(schema, "d > 1.5")).num_rows == 1
    assert filter_table(table, bind(schema, "d >= '1.505'")).num_rows == 1  # exactly d >= 1.51


def test_unbound_filters_need_a_schema() -> None:
    with pytest.raises(InvalidFilterError, match="schema"):
        to_arrow_expression(parse("n > 1"))
    assert str(to_arrow_expression("n > 1", _SCHEMA)) == "(n > 1)"


def test_record_batches_and_nested_fields() -> None:
    schema = Schema(
        NestedField(1, "loc", StructType(NestedField(2, "lat", "double"), NestedField(3, "city", "string")))
    )
    batch = pa.RecordBatch.from_pylist(
        [{"loc": {"lat": 1.0, "city": "Oslo"}}, {"loc": None}, {"loc": {"lat": None, "city": "Rome"}}],
        schema=pa.schema([("loc", pa.struct([("lat", pa.float64()), ("city", pa.string())]))]),
    )
    assert filter_table(batch, bind(schema, "loc.lat IS NULL")).num_rows == 2
    assert filter_table(batch, bind(schema, "loc.city != 'Oslo'")).to_pylist() == [
        {"loc": {"lat": None, "city": "Rome"}}
    ]


def test_uuid_columns_filter_whether_or_not_the_arrow_type_is_known() -> None:
    # The reader produces pa.uuid() columns; Arrow cannot compare that extension type with a
    # 16-byte value, so the filter must compare on the storage either way.
    schema = Schema(NestedField(1, "u", UUIDType()))
    wanted, other = uuid.UUID(int=1 << 127), uuid.UUID(int=5)
    storage = pa.array([wanted.bytes, other.bytes, None], pa.binary(16))
    table = pa.table({"u": pa.ExtensionArray.from_storage(pa.uuid(), storage)})
    bound = bind(schema, parse(f"u = UUID '{wanted}'"))
    for arrow_schema in (None, table.schema):
        expr = to_arrow_expression(bound, schema, arrow_schema=arrow_schema)
        assert table.filter(expr).column("u").to_pylist() == [wanted]
    assert filter_table(table, parse(f"u != UUID '{wanted}'"), schema).column("u").to_pylist() == [other]


@pytest.mark.parametrize("column", ["x", "y"])
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{c} IN (0.0E0, 7.0E0)", [0, 1]),  # -0.0 = 0.0, as for ==
        ("{c} IN (-0.0E0, 7.0E0)", [0, 1]),
        ("{c} IN (-0.0E0, 0.0E0, 1.0E0)", [0, 1, 2]),
        ("{c} NOT IN (0.0E0, 7.0E0)", [2]),  # neither zero, nor NaN, nor null
        ("{c} NOT IN (-0.0E0, 7.0E0)", [2]),
        ("NOT ({c} IN (0.0E0, 7.0E0))", [2]),
    ],
)
def test_in_sets_hold_both_zeros(column: str, text: str, expected: list[int]) -> None:
    """Arrow's is_in hashes floats by their bits (-0.0 is not 0.0 there); filters compare
    with ``==``, where the zeros are equal, and agree with the row evaluator."""
    data = [0.0, -0.0, 1.0, math.nan, None]
    table = pa.table({"x": pa.array(data, pa.float64()), "y": pa.array(data, pa.float32())})
    schema = Schema(NestedField(1, "x", "double"), NestedField(2, "y", "float"))
    bound = bind(schema, text.format(c=column))
    predicate = compile_expression(bound)
    assert [i for i, value in enumerate(data) if predicate({column: value}) is True] == expected
    assert _matching_positions(table, bound) == expected


def _shares_memory(kept: pa.RecordBatch, data: pa.RecordBatch) -> bool:
    return bool(kept.column(0).buffers()[1].address == data.column(0).buffers()[1].address)


def test_a_run_of_most_rows_is_kept_as_a_slice_and_anything_else_is_copied() -> None:
    ids = pa.array(range(100), pa.int64())
    data = pa.RecordBatch.from_arrays([ids, pa.array([f"n{i}" for i in range(100)])], names=["id", "note"])

    def kept(low: int, high: int) -> pa.RecordBatch:
        result = filter_rows(data, (pc.field("id") >= low) & (pc.field("id") < high))
        assert result.schema == data.schema
        assert result.column("id").to_pylist() == list(range(low, high))
        assert result.column("note").to_pylist() == [f"n{i}" for i in range(low, high)]
        return result

    # a range on a sorted column keeping at least half of the rows: no copy
    assert _shares_memory(kept(20, 70), data) and _shares_memory(kept(0, 100), data)
    # a run of fewer than half the rows would hold the rest in memory: copied
    assert not _shares_memory(kept(20, 60), data)
    # rows that are not one run: copied
    scattered = filter_rows(data, pc.field("id").isin([i for i in range(100) if i % 3]))
    assert scattered.column("id").to_pylist() == [i for i in range(100) if i % 3]
    assert not _shares_memory(scattered, data)
    assert kept(50, 50).num_rows == 0


def test_a_table_of_several_chunks_is_filtered_across_them() -> None:
    table = pa.Table.from_batches(
        [
            pa.RecordBatch.from_arrays([pa.array(range(s, s + 10), pa.int64())], names=["id"])
            for s in (0, 10, 20)
        ]
    )
    for low, high in ((5, 25), (12, 15), (0, 30)):
        result = filter_rows(table, (pc.field("id") >= low) & (pc.field("id") < high))
        assert isinstance(result, pa.Table) and result.column("id").to_pylist() == list(range(low, high))
    nulls = pa.table({"id": pa.array([1, None, 3, None], pa.int64())})
    assert filter_rows(nulls, pc.field("id") > 0).column("id").to_pylist() == [1, 3]
