"""Residuals: for rows of a partition, the residual matches exactly the rows the filter
matches (property test), and is constant where the partition decides (examples)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from icefloe.expressions import ResidualEvaluator, bind, reference_for_id
from icefloe.expressions.evaluator import compile_expression
from icefloe.spec.partitioning import PartitionField, PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.spec.transforms import DayTransform, IdentityTransform, TruncateTransform
from icefloe.spec.types import DateType, NestedField, StringType, TimestampType

from .strategies import SCHEMA, expressions, rows
from .test_projection import transforms

_SOURCES = [f.field_id for f in SCHEMA.fields if f.field_type.is_primitive] + [18, 19]


@st.composite
def specs(draw: st.DrawFn) -> PartitionSpec:
    fields = []
    for i, source in enumerate(draw(st.lists(st.sampled_from(_SOURCES), min_size=1, max_size=3))):
        transform = draw(transforms(SCHEMA.find_type(source)))  # type: ignore[arg-type]
        fields.append(PartitionField(source, 1000 + i, transform, f"p{i}"))
    return PartitionSpec(tuple(fields))


def partition_of(spec: PartitionSpec, row: dict[str, Any]) -> tuple[Any, ...]:
    values = []
    for pf in spec.fields:
        ref = reference_for_id(SCHEMA, pf.source_id)
        values.append(pf.transform.apply(ref.type, ref.get(row)))
    return tuple(values)


@settings(max_examples=120, deadline=None)
@given(specs(), expressions(), st.lists(rows(), min_size=1, max_size=4))
def test_residuals_select_the_same_rows(
    spec: PartitionSpec, expr: Any, row_list: list[dict[str, Any]]
) -> None:
    evaluator = ResidualEvaluator(spec, SCHEMA, expr)
    truth = compile_expression(bind(SCHEMA, expr))
    for row in row_list:
        residual = evaluator.residual_for(partition_of(spec, row))
        assert (compile_expression(residual)(row) is True) == (truth(row) is True), str(residual)


_S = Schema(
    NestedField(1, "d", DateType()), NestedField(2, "ts", TimestampType()), NestedField(3, "s", StringType())
)
_SPEC = PartitionSpec(
    (
        PartitionField(1, 1000, IdentityTransform(), "d"),
        PartitionField(2, 1001, DayTransform(), "ts_day"),
        PartitionField(3, 1002, TruncateTransform(2), "s2"),
    )
)


def test_residual_examples() -> None:
    evaluator = ResidualEvaluator(
        _SPEC, _S, "d = '2024-01-01' AND ts >= '2024-01-01T10:00:00' AND s LIKE 'a%'"
    )
    day = 19723  # 2024-01-01
    assert str(evaluator.residual_for((day, day, "ab"))) == "ts >= TIMESTAMP '2024-01-01T10:00:00'"
    assert str(evaluator.residual_for((day, day + 1, "ab"))) == "TRUE"
    assert str(evaluator.residual_for((day + 1, day + 1, "ab"))) == "FALSE"
    assert str(evaluator.residual_for((day, day + 1, "ba"))) == "FALSE"
    assert str(evaluator.residual_for((None, day + 1, "ab"))) == "FALSE"


def test_unpartitioned_residual_is_the_filter() -> None:
    evaluator = ResidualEvaluator(PartitionSpec(), _S, "NOT (s = 'x')")
    assert str(evaluator.residual_for(())) == "s != 'x'"
