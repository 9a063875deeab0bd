"""Manifest evaluation on partition summaries: never skips a manifest holding a matching row
(property test), prunes by bounds, nulls and NaN (examples)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from icefloe.errors import ValidationError
from icefloe.expressions import ManifestEvaluator, bind
from icefloe.expressions.evaluator import compile_expression
from icefloe.manifests import ListSummaries
from icefloe.scan._summary_filter import SummaryColumns, SummaryFilter
from icefloe.spec.conversions import to_bytes
from icefloe.spec.manifest import FieldSummary, ManifestFile
from icefloe.spec.partitioning import PartitionField, PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.spec.transforms import IdentityTransform
from icefloe.spec.types import DoubleType, FloatType, IcebergType, NestedField

from .strategies import SCHEMA, expressions, rows
from .test_residual import partition_of, specs


def summary(type_: IcebergType, values: list[Any]) -> FieldSummary:
    floating = isinstance(type_, (FloatType, DoubleType))
    present = [v for v in values if v is not None and not (floating and math.isnan(v))]
    return FieldSummary(
        contains_null=any(v is None for v in values),
        contains_nan=any(v is not None and math.isnan(v) for v in values) if floating else None,
        lower_bound=to_bytes(type_, min(present)) if present else None,
        upper_bound=to_bytes(type_, max(present)) if present else None,
    )


def manifest(spec: PartitionSpec, schema: Schema, partitions: list[tuple[Any, ...]]) -> ManifestFile:
    types = [f.field_type for f in spec.partition_type(schema).fields]
    summaries = tuple(summary(t, [p[i] for p in partitions]) for i, t in enumerate(types))
    return ManifestFile("m.avro", 1, spec.spec_id, partitions=summaries)


@settings(max_examples=120, deadline=None)
@given(specs(), expressions(), st.lists(rows(), min_size=1, max_size=4))
def test_manifests_with_matching_rows_are_kept(
    spec: PartitionSpec, expr: Any, row_list: list[dict[str, Any]]
) -> None:
    truth = compile_expression(bind(SCHEMA, expr))
    try:
        file = manifest(spec, SCHEMA, [partition_of(spec, row) for row in row_list])
    except ValidationError:  # hours of extreme timestamps overflow the int partition type
        assume(False)
    if any(truth(row) is True for row in row_list):
        assert ManifestEvaluator(spec, SCHEMA, expr).eval(file)


def _damaged(summary: FieldSummary, how: int) -> FieldSummary:
    """The summary with a bound of another width (undecodable, or a promoted int), or a
    NaN-free list's ``contains_nan`` unknown."""
    if how == 1 and summary.lower_bound is not None:
        return FieldSummary(summary.contains_null, summary.contains_nan, summary.lower_bound + b"\x00", None)
    if how == 2 and summary.upper_bound is not None:
        return FieldSummary(summary.contains_null, None, summary.lower_bound, summary.upper_bound[:4])
    return summary


@settings(max_examples=150, deadline=None)
@given(
    specs(),
    expressions(),
    st.lists(st.tuples(st.lists(rows(), min_size=1, max_size=3), st.integers(0, 4)), min_size=1, max_size=8),
)
def test_the_vectorized_summary_filter_answers_as_the_evaluator(
    spec: PartitionSpec, expr: Any, listed: list[tuple[list[dict[str, Any]], int]]
) -> None:
    """``scan._summary_filter`` decides every manifest of a list at once exactly as
    ``ManifestEvaluator.eval`` decides each: bounds of other widths, rows without summaries
    or with fewer fields, NaN and null summaries included."""
    manifests = []
    for row_list, how in listed:
        try:
            file = manifest(spec, SCHEMA, [partition_of(spec, row) for row in row_list])
        except ValidationError:
            assume(False)
        summaries = file.partitions or ()
        if how == 3:
            file = dataclasses.replace(file, partitions=None)
        elif how == 4:
            file = dataclasses.replace(file, partitions=summaries[:-1])
        else:
            file = dataclasses.replace(file, partitions=tuple(_damaged(f, how) for f in summaries))
        manifests.append(file)
    evaluator = ManifestEvaluator(spec, SCHEMA, expr)
    expected = [evaluator.eval(m) for m in manifests]
    summary_filter = SummaryFilter(evaluator.partition_filter)
    assert summary_filter.mask(SummaryColumns.of(manifests)).tolist() == expected
    # The same summaries as a natively decoded list holds them; sliced past a first row of
    # its own, so that the list's offsets and its records start past 0.
    first = (FieldSummary(True, None, b"\x00", b"\x01"),)
    arrow = ListSummaries.of_arrow(_as_arrow([first, *(m.partitions for m in manifests)]).slice(1))
    assert arrow is not None
    assert summary_filter.mask(SummaryColumns(arrow)).tolist() == expected


def _as_arrow(rows: list[tuple[FieldSummary, ...] | None]) -> pa.Array:
    """Manifest list rows' summaries as the Arrow column the native decoder gives."""
    kind = pa.list_(
        pa.struct(
            [
                pa.field("contains_null", pa.bool_(), nullable=False),
                ("contains_nan", pa.bool_()),
                ("lower_bound", pa.binary()),
                ("upper_bound", pa.binary()),
            ]
        )
    )
    return pa.array(
        [None if row is None else [dataclasses.asdict(summary) for summary in row] for row in rows], type=kind
    )


_S = Schema(NestedField(1, "x", "double"), NestedField(2, "s", "string"), NestedField(3, "n", "int"))
_SPEC = PartitionSpec(tuple(PartitionField(i, 999 + i, IdentityTransform(), f"p{i}") for i in (1, 2, 3)))


@pytest.mark.parametrize(
    ("partitions", "text", "expected"),
    [
        ([(1.0, "a", 1), (2.0, "b", 5)], "n > 5", False),
        ([(1.0, "a", 1), (2.0, "b", 5)], "n >= 5", True),
        ([(1.0, "a", 1), (2.0, "b", 5)], "n IN (7, 8)", False),
        ([(1.0, "a", 1), (2.0, "b", 5)], "n IS NULL", False),
        ([(1.0, "a", None), (2.0, "b", None)], "n IS NOT NULL", False),
        ([(1.0, "a", None), (2.0, "b", None)], "n != 3", False),
        ([(1.0, "ab", 1), (2.0, "ac", 5)], "s LIKE 'b%'", False),
        ([(1.0, "ab", 1), (2.0, "ac", 5)], "s NOT LIKE 'a%'", False),
        ([(math.nan, "a", 1)], "x IS NOT NAN", False),
        ([(math.nan, "a", 1)], "x IS NOT NULL", True),
        ([(math.nan, "a", 1)], "x < 5", False),
        ([(1.0, "a", 1)], "x IS NAN", False),
    ],
)
def test_examples(partitions: list[tuple[Any, ...]], text: str, expected: bool) -> None:
    assert ManifestEvaluator(_SPEC, _S, text).eval(manifest(_SPEC, _S, partitions)) is expected


def test_manifests_without_summaries_are_kept() -> None:
    assert ManifestEvaluator(_SPEC, _S, "n > 5").eval(ManifestFile("m.avro", 1, 0))


def test_partition_fields_of_dropped_columns_are_ignored() -> None:
    spec = PartitionSpec((PartitionField(9, 1000, IdentityTransform(), "gone"), *_SPEC.fields[2:]))
    evaluator = ManifestEvaluator(spec, _S, "n > 5")
    summaries = (FieldSummary(False, None, b"x", b"y"), summary(_S.find_type(3), [1, 5]))  # type: ignore[arg-type]
    assert not evaluator.eval(ManifestFile("m.avro", 1, 0, partitions=summaries))
    assert ManifestEvaluator(spec, _S, "n >= 5").eval(ManifestFile("m.avro", 1, 0, partitions=summaries))


def test_partition_filters_by_partition_field_name() -> None:
    file = manifest(_SPEC, _S, [(1.0, "a", 1), (2.0, "b", 5)])
    assert not ManifestEvaluator.for_partition_filter(_SPEC, _S, "p3 > 5").eval(file)
    assert ManifestEvaluator.for_partition_filter(_SPEC, _S, "NOT (p3 > 5)").eval(file)
