"""Projections through partition transforms: soundness on random values (a matching row's
partition matches the inclusive projection; a partition matching the strict projection holds
only matching rows), and the projections Java produces (examples)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icefloe.expressions import bind, inclusive_projection, strict_projection
from icefloe.expressions.evaluator import compile_expression
from icefloe.spec.partitioning import PartitionField, PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.spec.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    Transform,
    TruncateTransform,
    VoidTransform,
    YearTransform,
)
from icefloe.spec.types import (
    BinaryType,
    DateType,
    DecimalType,
    IcebergType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampNanoType,
    TimestamptzType,
)

from .strategies import COLUMNS, predicates, values

_TIME_TYPES = (DateType, TimestamptzType, TimestampNanoType)


def transforms(type_: IcebergType) -> st.SearchStrategy[Transform]:
    options: list[st.SearchStrategy[Transform]] = [st.just(IdentityTransform()), st.just(VoidTransform())]
    if BucketTransform(2).can_transform(type_):
        options.append(st.integers(1, 8).map(BucketTransform))
    if TruncateTransform(2).can_transform(type_):
        options.append(st.integers(1, 5).map(TruncateTransform))
    if YearTransform().can_transform(type_):
        time = [YearTransform(), MonthTransform(), DayTransform()]
        options.append(
            st.sampled_from([*time, HourTransform()] if HourTransform().can_transform(type_) else time)
        )
    return st.one_of(options)


@st.composite
def cases(draw: st.DrawFn) -> tuple[Schema, PartitionSpec, Any, Any]:
    name = draw(st.sampled_from([n for n in COLUMNS if "." not in n]))
    type_ = COLUMNS[name]
    schema = Schema(NestedField(1, name, type_))
    chosen = draw(st.lists(transforms(type_), min_size=1, max_size=2, unique=True))
    spec = PartitionSpec(tuple(PartitionField(1, 1000 + i, t, f"p{i}") for i, t in enumerate(chosen)))
    value = draw(st.one_of(st.none(), values(type_)))
    expr = draw(predicates({name: type_}))
    return schema, spec, value, expr


@settings(max_examples=600, deadline=None)
@given(cases())
def test_projections_are_sound(case: tuple[Schema, PartitionSpec, Any, Any]) -> None:
    schema, spec, value, expr = case
    row = (value,)
    partition = tuple(pf.transform.apply(schema.fields[0].field_type, value) for pf in spec.fields)
    truth = compile_expression(bind(schema, expr))(row)
    inclusive = inclusive_projection(spec, schema, expr)
    strict = strict_projection(spec, schema, expr)
    if truth is True:
        assert compile_expression(inclusive)(partition) is True, f"{inclusive} of {expr} rejects {partition}"
    if compile_expression(strict)(partition) is True:
        assert truth is True, f"{strict} of {expr} accepts {partition} for {value!r}"


# ---------------------------------------------------------------------------------------------
# Examples

SCHEMA = Schema(
    NestedField(1, "id", LongType()),
    NestedField(2, "ts", TimestamptzType()),
    NestedField(3, "name", StringType()),
    NestedField(4, "d", DateType()),
    NestedField(5, "amount", DecimalType(10, 2)),
    NestedField(6, "n", IntegerType()),
    NestedField(7, "raw", BinaryType()),
)


def _spec(*fields: tuple[int, Transform]) -> PartitionSpec:
    return PartitionSpec(tuple(PartitionField(s, 1000 + i, t, f"p{i}") for i, (s, t) in enumerate(fields)))


@pytest.mark.parametrize(
    ("field", "text", "inclusive", "strict"),
    [
        ((1, IdentityTransform()), "id > 5", "p0 > 5", "p0 > 5"),
        ((1, VoidTransform()), "id > 5", "TRUE", "FALSE"),
        ((1, BucketTransform(16)), "id = 34", "p0 = 3", "FALSE"),
        ((1, BucketTransform(16)), "id != 34", "TRUE", "p0 != 3"),
        ((1, BucketTransform(16)), "id IS NULL", "p0 IS NULL", "p0 IS NULL"),
        # Java's truncate wraps the longs below -9223372036854775800 around to 9223372036854775806.
        ((1, TruncateTransform(10)), "id < 100", "p0 <= 90 OR p0 = 9223372036854775806", "p0 < 100"),
        ((1, TruncateTransform(10)), "id <= 100", "p0 <= 100 OR p0 = 9223372036854775806", "p0 < 100"),
        ((1, TruncateTransform(10)), "id > 100", "p0 >= 100", "p0 > 100 AND p0 != 9223372036854775806"),
        ((1, TruncateTransform(10)), "id >= 100", "p0 >= 100", "p0 > 90 AND p0 != 9223372036854775806"),
        ((1, TruncateTransform(2)), "id < 100", "p0 <= 98", "p0 < 100"),  # no wrapping for even widths
        ((1, TruncateTransform(10)), "id = 15", "p0 = 10", "FALSE"),
        ((1, TruncateTransform(10)), "id IN (15, 17, 25)", "p0 IN (10, 20)", "FALSE"),
        ((5, TruncateTransform(50)), "amount < 1", "p0 <= 0.50", "p0 < 1.00"),
        ((3, TruncateTransform(2)), "name LIKE 'abc%'", "p0 LIKE 'ab%'", "FALSE"),
        ((3, TruncateTransform(3)), "name LIKE 'ab%'", "p0 LIKE 'ab%'", "p0 LIKE 'ab%'"),
        ((3, TruncateTransform(2)), "name NOT LIKE 'abc%'", "TRUE", "p0 NOT LIKE 'ab%'"),
        ((3, TruncateTransform(2)), "name < 'abc'", "p0 <= 'ab'", "p0 < 'ab'"),
        ((7, TruncateTransform(1)), "raw = X'0102'", "p0 = X'01'", "FALSE"),
        (
            (2, DayTransform()),
            "ts >= '2024-03-10T00:00:00'",
            "p0 >= DATE '2024-03-10'",
            "p0 > DATE '2024-03-09'",
        ),
        (
            (2, DayTransform()),
            "ts < '2024-03-10T00:00:00'",
            "p0 <= DATE '2024-03-09'",
            "p0 < DATE '2024-03-10'",
        ),
        ((2, DayTransform()), "ts = '2024-03-10T10:00:00'", "p0 = DATE '2024-03-10'", "FALSE"),
        ((2, MonthTransform()), "ts > '2024-03-10T10:00:00'", "p0 >= 650", "p0 > 650"),
        ((2, YearTransform()), "ts < '2024-01-01T00:00:00'", "p0 <= 53", "p0 < 54"),
        ((2, HourTransform()), "ts != '1970-01-01T05:00:00'", "TRUE", "p0 != 5"),
        ((4, MonthTransform()), "d < '1969-12-15'", "p0 <= 0", "p0 < -1"),  # widened below 1970
        ((4, DayTransform()), "d = '1969-12-31'", "p0 IN (DATE '1969-12-31', DATE '1970-01-01')", "FALSE"),
        ((4, YearTransform()), "d > '1969-06-01'", "p0 >= -1", "p0 > 0"),  # narrowed below 1970
        ((6, TruncateTransform(3)), "n < -2147483646", "p0 = 2147483647", "p0 < -2147483646"),
    ],
)
def test_projection_examples(field: tuple[int, Transform], text: str, inclusive: str, strict: str) -> None:
    spec = _spec(field)
    assert str(inclusive_projection(spec, SCHEMA, text)) == inclusive
    assert str(strict_projection(spec, SCHEMA, text)) == strict


def test_several_partition_fields_of_one_column_combine() -> None:
    spec = _spec((2, DayTransform()), (2, HourTransform()))
    text = "ts > '2024-03-10T10:30:00'"
    # The hour's projections also cover (or avoid) the partitions that wrapped hours take, see
    # test_hour_projections_account_for_the_32_bit_wrap.
    assert str(inclusive_projection(spec, SCHEMA, text)) == (
        "p0 >= DATE '2024-03-10' AND (p1 >= 475018 OR p1 >= 1732919507 OR p1 <= -1732919508)"
    )
    assert str(strict_projection(spec, SCHEMA, text)) == (
        "p0 > DATE '2024-03-10' OR (p1 > 475018 AND p1 < 1732919507)"
    )


_HOUR = 3_600_000_000
_WRAP_EDGES = [
    -(2**63),
    -(2**63) + 1,
    -(2**31) * _HOUR - 1,  # the last hour that wraps to the top of the int range
    -(2**31) * _HOUR,
    -_HOUR - 1,
    -1,
    0,
    475018 * _HOUR,
    (2**31 - 1) * _HOUR,
    2**31 * _HOUR - 1,
    2**31 * _HOUR,  # the first hour that wraps to the bottom
    2**63 - 1,
]


@pytest.mark.parametrize("op", ["<", "<=", ">", ">="])
@pytest.mark.parametrize("literal", _WRAP_EDGES)
def test_hour_projections_account_for_the_32_bit_wrap(op: str, literal: int) -> None:
    """hour() of a microsecond timestamp wraps to 32 bits as Java's int cast does (so partition
    values match Java's): it is monotone only within 2**31 hours of the epoch. The projections of
    a range must hold for the partitions of every matching value, wrapped or not (inclusive),
    and only for partitions all of whose values match (strict)."""
    spec = _spec((2, HourTransform()))
    hour = HourTransform().bind(TimestamptzType())
    text = f"ts {op} {literal}"
    inclusive = compile_expression(inclusive_projection(spec, SCHEMA, text))
    strict = compile_expression(strict_projection(spec, SCHEMA, text))
    row = compile_expression(bind(SCHEMA, text))
    values = [v + d for v in _WRAP_EDGES for d in (-_HOUR, -1, 0, 1, _HOUR) if -(2**63) <= v + d < 2**63]
    partitions: dict[int, list[int]] = {}
    for value in values:
        partitions.setdefault(hour(value), []).append(value)
    for value in values:
        matches = row((None, value)) is True
        partition = (hour(value),)
        if matches:
            assert inclusive(partition) is True, (value, partition)
        if strict(partition) is True:
            assert all(row((None, v)) is True for v in partitions[partition[0]]), (value, partition)


def test_not_is_pushed_down_before_projecting() -> None:
    spec = _spec((1, BucketTransform(16)))
    assert str(inclusive_projection(spec, SCHEMA, "NOT (id != 34)")) == "p0 = 3"
    assert str(inclusive_projection(spec, SCHEMA, "NOT (id = 34) OR name = 'x'")) == "TRUE"
