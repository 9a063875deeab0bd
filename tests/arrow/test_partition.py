"""Grouping Arrow rows by partition."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

from icefloe.arrow.partition import partition_keys, source_column, transform_array
from icefloe.arrow.schema import to_requested_schema
from icefloe.errors import ValidationError
from icefloe.spec.conversions import days_from_civil
from icefloe.spec.partitioning import PartitionField, PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.spec.transforms import parse_transform
from icefloe.spec.types import (
    DateType,
    DecimalType,
    IntegerType,
    ListType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzType,
    UUIDType,
)

SCHEMA = Schema(
    NestedField(1, "id", LongType()),
    NestedField(2, "d", DateType()),
    NestedField(3, "ts", TimestamptzType()),
    NestedField(4, "name", StringType()),
    NestedField(5, "s", StructType(NestedField(6, "x", IntegerType()))),
    NestedField(7, "u", UUIDType()),
    NestedField(8, "dec", DecimalType(9, 2)),
    NestedField(9, "l", ListType(10, IntegerType())),
)


def spec(*terms: tuple[str, int]) -> PartitionSpec:
    return PartitionSpec(
        tuple(
            PartitionField(source, 1000 + i, parse_transform(t), f"p{i}")
            for i, (t, source) in enumerate(terms)
        )
    )


def table(rows: list[dict]) -> pa.Table:
    return to_requested_schema(pa.Table.from_pylist(rows), SCHEMA.select(*rows[0].keys()) if rows else SCHEMA)


def test_identity_groups_sorted_with_nulls_first():
    data = table(
        [{"id": 1, "name": "b"}, {"id": 2, "name": None}, {"id": 3, "name": "a"}, {"id": 4, "name": "b"}]
    )
    groups = partition_keys(data, spec(("identity", 4)), SCHEMA)
    assert [(key, part.column("id").to_pylist()) for key, part in groups] == [
        ((None,), [2]),
        (("a",), [3]),
        (("b",), [1, 4]),
    ]


def test_values_use_icefloe_representation():
    u = uuid.UUID(int=7)
    data = table(
        [
            {
                "id": 1,
                "d": dt.date(2024, 3, 1),
                "ts": dt.datetime(2024, 3, 1, 10, 30, tzinfo=dt.UTC),
                "u": u.bytes,
                "dec": Decimal("1.50"),
            }
        ]
    )
    groups = partition_keys(
        data,
        spec(("identity", 2), ("identity", 3), ("identity", 7), ("identity", 8), ("day", 3), ("month", 2)),
        SCHEMA,
    )
    day = days_from_civil(2024, 3, 1)
    assert [key for key, _ in groups] == [
        (day, day * 86_400_000_000 + (10 * 60 + 30) * 60_000_000, u, Decimal("1.50"), day, 54 * 12 + 2)
    ]


def test_multiple_fields_and_row_order_within_groups():
    rows = [{"id": i, "name": "ab"[i % 2], "d": dt.date(2024, 1, 1 + i % 3)} for i in range(12)]
    groups = partition_keys(table(rows), spec(("identity", 4), ("day", 2)), SCHEMA)
    assert len(groups) == 6
    seen = []
    for key, part in groups:
        ids = part.column("id").to_pylist()
        assert ids == sorted(ids)  # relative order kept
        for i in ids:
            assert key == ("ab"[i % 2], days_from_civil(2024, 1, 1 + i % 3))
        seen += ids
    assert sorted(seen) == list(range(12))
    assert [key for key, _ in groups] == sorted(key for key, _ in groups)


TIME_CASES = [
    (transform, source_type)
    for transform in ("year", "month", "day", "hour")
    for source_type in (TimestampType(), TimestamptzType(), TimestampNanoType(), DateType())
    if parse_transform(transform).can_transform(source_type)
]


@pytest.mark.parametrize(("transform", "source_type"), TIME_CASES, ids=[f"{t}-{s}" for t, s in TIME_CASES])
def test_vectorized_time_transforms_match_transform_apply(transform, source_type):
    t = parse_transform(transform)
    rng = np.random.default_rng(5)
    if isinstance(source_type, DateType):
        values = [*rng.integers(-800_000, 800_000, 300).tolist(), -1, 0, 1, -719_528, None]
        arrow_type = pa.date32()
    else:
        scale = 1000 if isinstance(source_type, TimestampNanoType) else 1
        span = 10**17 // 1000 * scale
        values = [*rng.integers(-span, span, 300).tolist(), -1, 0, 1, -scale, None]
        arrow_type = {
            TimestampType(): pa.timestamp("us"),
            TimestamptzType(): pa.timestamp("us", tz="UTC"),
            TimestampNanoType(): pa.timestamp("ns"),
        }[source_type]
    array = pa.array(values, arrow_type)
    field = PartitionField(1, 1000, t, "p")
    result = transform_array(array, field, source_type)
    expected = [t.apply(source_type, v) for v in values]
    got = result.cast(pa.int32()).to_pylist() if pa.types.is_date(result.type) else result.to_pylist()
    assert got == expected


def test_bucket_and_truncate_match_the_scalar_transforms():
    rows = [{"id": i, "name": f"name-{i % 5}", "u": uuid.UUID(int=i % 3).bytes} for i in range(50)] + [
        {"id": 50, "name": None, "u": None}
    ]
    data = table(rows)
    groups = partition_keys(data, spec(("bucket[4]", 1), ("truncate[3]", 4), ("bucket[8]", 7)), SCHEMA)
    bucket4, trunc3, bucket8 = (parse_transform(t) for t in ("bucket[4]", "truncate[3]", "bucket[8]"))
    total = 0
    for key, part in groups:
        for row in part.to_pylist():
            u = row["u"]
            assert key == (
                bucket4.apply(LongType(), row["id"]),
                trunc3.apply(StringType(), row["name"]),
                bucket8.apply(UUIDType(), u),
            )
            total += 1
    assert total == 51


def test_nested_source_column_and_null_parent():
    data = table([{"id": 1, "s": {"x": 5}}, {"id": 2, "s": None}, {"id": 3, "s": {"x": None}}])
    assert source_column(data, SCHEMA, 6).to_pylist() == [5, None, None]
    groups = partition_keys(data, spec(("identity", 6)), SCHEMA)
    assert [(key, part.column("id").to_pylist()) for key, part in groups] == [((None,), [2, 3]), ((5,), [1])]


def test_void_unpartitioned_and_empty():
    data = table([{"id": 1}, {"id": 2}])
    assert [key for key, _ in partition_keys(data, spec(("void", 1)), SCHEMA)] == [(None,)]
    ((key, part),) = partition_keys(data, PartitionSpec(), SCHEMA)
    assert key == () and part.num_rows == 2
    assert partition_keys(data.slice(0, 0), spec(("identity", 1)), SCHEMA) == []


def test_chunked_input():
    data = pa.concat_tables(
        [table([{"id": 1, "name": "a"}]), table([{"id": 2, "name": "a"}, {"id": 3, "name": "b"}])]
    )
    assert data.column("name").num_chunks == 2
    groups = partition_keys(data, spec(("identity", 4)), SCHEMA)
    assert [(key, part.column("id").to_pylist()) for key, part in groups] == [(("a",), [1, 2]), (("b",), [3])]


def test_errors():
    data = table([{"id": 1}])
    with pytest.raises(ValidationError, match="inside a list or map"):
        partition_keys(data, spec(("identity", 10)), SCHEMA)
    with pytest.raises(ValidationError, match="'name' is not in the data"):
        partition_keys(data, spec(("identity", 4)), SCHEMA)
    with pytest.raises(ValidationError, match="99"):
        partition_keys(data, spec(("identity", 99)), SCHEMA)
    with pytest.raises(ValidationError, match="hour"):
        partition_keys(table([{"d": dt.date(2020, 1, 1)}]), spec(("hour", 2)), SCHEMA)


@pytest.mark.parametrize(
    ("terms", "rows"),
    [
        # few groups: combined codes counted directly, a radix sort
        ((("bucket[7]", 1), ("truncate[1]", 4), ("identity", 2)), 5_000),
        # more than 2**16 groups; a combined code space past 2**62 (compacted between fields)
        ((("identity", 1), ("identity", 4), ("bucket[2147483647]", 1), ("bucket[2147483647]", 4)), 70_000),
    ],
)
def test_many_fields_and_groups_match_a_reference_grouping(terms, rows):
    rng = np.random.default_rng(9)
    ids = rng.permutation(rows).tolist()
    names = [None if i % 97 == 0 else f"n{i % 1013}-{i}" for i in ids]
    days = [None if i % 89 == 0 else int(d) for i, d in zip(ids, rng.integers(-400, 400, rows))]
    data = table(
        [
            {"id": i, "name": n, "d": dt.date(1970, 1, 1) + dt.timedelta(days=d) if d is not None else None}
            for i, n, d in zip(ids, names, days)
        ]
    )
    partition_spec = spec(*terms)
    groups = partition_keys(data, partition_spec, SCHEMA)

    functions = [parse_transform(t).bind(SCHEMA.find_field(source).field_type) for t, source in terms]
    sources = {1: ids, 4: names, 2: days}
    expected: dict[tuple, list[int]] = {}
    for row in range(rows):
        key = tuple(f(sources[source][row]) for f, (_, source) in zip(functions, terms))
        expected.setdefault(key, []).append(ids[row])
    assert len(groups) == len(expected)
    assert {key: part.column("id").to_pylist() for key, part in groups} == expected
    assert [key for key, _ in groups] == sorted(
        expected, key=lambda k: tuple((v is not None, v or 0) for v in k)
    )
