"""Metrics evaluators: never skip a file with a matching row, never claim all rows match
wrongly (property tests on random files), and prune what Java prunes (examples)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icefloe.expressions import (
    InclusiveMetricsEvaluator,
    StrictMetricsEvaluator,
    bind,
    reference_for_id,
)
from icefloe.expressions.evaluator import compile_expression
from icefloe.expressions.model import BoundReference
from icefloe.spec.conversions import to_bytes
from icefloe.spec.manifest import DataFile, FileFormat
from icefloe.spec.schema import Schema
from icefloe.spec.types import BinaryType, DoubleType, FloatType, NestedField, StringType

from .strategies import SCHEMA, expressions, rows

LEAVES: list[BoundReference] = [reference_for_id(SCHEMA, fid) for fid in (*range(1, 17), 18, 19, 20)]


def _truncate_upper(value: Any, length: int) -> Any:
    """A truncated upper bound: a prefix with its last unit incremented (None: no bound)."""
    if len(value) <= length:
        return value
    prefix = value[:length]
    if isinstance(value, str):
        for i in range(len(prefix) - 1, -1, -1):
            if ord(prefix[i]) < 0x10FFFF and not 0xD7FF <= ord(prefix[i]) < 0xDFFF:
                return prefix[:i] + chr(ord(prefix[i]) + 1)
        return None
    for i in range(len(prefix) - 1, -1, -1):
        if prefix[i] < 255:
            return prefix[:i] + bytes([prefix[i] + 1])
    return None


def data_file(row_list: list[dict[str, Any]], truncate: int | None, drop: frozenset[str]) -> DataFile:
    """A data file with exact metrics of ``row_list`` (bounds of strings and binary truncated to
    ``truncate`` units, the metric kinds in ``drop`` left out)."""
    value_counts, null_counts, nan_counts, lower, upper = {}, {}, {}, {}, {}
    for ref in LEAVES:
        column = [ref.get(row) for row in row_list]
        value_counts[ref.field_id] = len(column)
        null_counts[ref.field_id] = sum(v is None for v in column)
        floating = isinstance(ref.type, (FloatType, DoubleType))
        if floating:
            nan_counts[ref.field_id] = sum(v is not None and math.isnan(v) for v in column)
        present = [v for v in column if v is not None and not (floating and math.isnan(v))]
        if not present:
            continue
        low, high = min(present), max(present)
        if truncate is not None and isinstance(ref.type, (StringType, BinaryType)):
            low, high = low[:truncate], _truncate_upper(high, truncate)
        lower[ref.field_id] = to_bytes(ref.type, low)
        if high is not None:
            upper[ref.field_id] = to_bytes(ref.type, high)
    return DataFile(
        file_path="data.parquet",
        file_format=FileFormat.PARQUET,
        record_count=len(row_list),
        file_size_in_bytes=1,
        value_counts=None if "values" in drop else value_counts,
        null_value_counts=None if "nulls" in drop else null_counts,
        nan_value_counts=None if "nans" in drop else nan_counts,
        lower_bounds=None if "lower" in drop else lower,
        upper_bounds=None if "upper" in drop else upper,
    )


@settings(max_examples=200, deadline=None)
@given(
    st.lists(rows(), min_size=1, max_size=5),
    expressions(),
    st.one_of(st.none(), st.integers(1, 2)),
    st.frozensets(st.sampled_from(["values", "nulls", "nans", "lower", "upper"]), max_size=2),
)
def test_metrics_evaluators_are_sound(
    row_list: list[dict[str, Any]], expr: Any, truncate: int | None, drop: frozenset[str]
) -> None:
    file = data_file(row_list, truncate, drop)
    bound = bind(SCHEMA, expr)
    truth = compile_expression(bound)
    results = [truth(row) for row in row_list]
    if any(r is True for r in results):
        assert InclusiveMetricsEvaluator(SCHEMA, bound).eval(file), f"skipped a matching file: {bound}"
    if StrictMetricsEvaluator(SCHEMA, bound).eval(file):
        assert all(r is True for r in results), f"claimed all rows match: {bound}"


# ---------------------------------------------------------------------------------------------
# Examples

_S = Schema(
    NestedField(1, "id", "long", required=True),
    NestedField(2, "name", "string"),
    NestedField(3, "score", "double"),
    NestedField(4, "empty", "int"),
)


def _file(**metrics: Any) -> DataFile:
    return DataFile(
        "f.parquet",
        FileFormat.PARQUET,
        record_count=metrics.pop("records", 10),
        file_size_in_bytes=1,
        **metrics,
    )


_FILE = _file(
    value_counts={1: 10, 2: 10, 3: 10, 4: 10},
    null_value_counts={1: 0, 2: 2, 3: 0, 4: 10},
    nan_value_counts={3: 3},
    lower_bounds={1: to_bytes(_S.find_type(1), 30), 2: b"ab", 3: to_bytes(_S.find_type(3), 1.0)},
    upper_bounds={1: to_bytes(_S.find_type(1), 79), 2: b"ad", 3: to_bytes(_S.find_type(3), 2.0)},
)


@pytest.mark.parametrize(
    ("text", "might", "must"),
    [
        ("id < 30", False, False),
        ("id <= 30", True, False),
        ("id > 79", False, False),
        ("id >= 30", True, True),
        ("id < 80", True, True),
        ("id = 5", False, False),
        ("id != 5", True, True),
        ("id IN (1, 2, 100)", False, False),
        ("id NOT IN (1, 2, 100)", True, True),
        ("id IS NULL", False, False),
        ("empty IS NULL", True, True),
        ("empty = 1", False, False),
        ("empty IS NOT NULL", False, False),
        ("name LIKE 'ac%'", True, False),
        ("name LIKE 'ae%'", False, False),
        ("name LIKE 'a%'", True, False),  # nulls do not match
        ("name NOT LIKE 'a%'", False, False),
        ("name > 'ad'", False, False),  # the upper bound may be a truncated value, never below one
        ("score IS NAN", True, False),
        ("score > 2", False, False),
        ("score >= 1", True, False),  # NaN rows do not match
        ("score IS NOT NULL", True, True),
    ],
)
def test_examples(text: str, might: bool, must: bool) -> None:
    assert InclusiveMetricsEvaluator(_S, text).eval(_FILE) is might
    assert StrictMetricsEvaluator(_S, text).eval(_FILE) is must


def test_files_without_rows_or_metrics() -> None:
    empty = _file(records=0)
    assert not InclusiveMetricsEvaluator(_S, "id > 1").eval(empty)
    assert StrictMetricsEvaluator(_S, "id > 1").eval(empty)
    unknown = _file()
    assert InclusiveMetricsEvaluator(_S, "id > 1 AND name = 'x'").eval(unknown)
    assert not StrictMetricsEvaluator(_S, "name IS NOT NULL").eval(unknown)
    assert StrictMetricsEvaluator(_S, "id IS NOT NULL").eval(unknown)  # required: never null
    imported = _file(records=-1, value_counts={1: 0}, null_value_counts={1: 0})
    assert InclusiveMetricsEvaluator(_S, "id = 1").eval(imported)


def test_nan_bounds_are_ignored() -> None:
    nan = to_bytes(_S.find_type(3), math.nan)
    file = _file(value_counts={3: 10}, null_value_counts={3: 0}, lower_bounds={3: nan}, upper_bounds={3: nan})
    assert InclusiveMetricsEvaluator(_S, "score < 0").eval(file)
    assert InclusiveMetricsEvaluator(_S, "score > 0").eval(file)
    assert not StrictMetricsEvaluator(_S, "score > 0").eval(file)


def test_nan_only_columns_match_only_is_nan() -> None:
    file = _file(value_counts={3: 10}, null_value_counts={3: 0}, nan_value_counts={3: 10})
    assert InclusiveMetricsEvaluator(_S, "score IS NAN").eval(file)
    assert StrictMetricsEvaluator(_S, "score IS NAN").eval(file)
    for text in ("score < 1", "score != 1", "score IN (1, 2)", "score NOT IN (1, 2)", "score IS NOT NAN"):
        assert not InclusiveMetricsEvaluator(_S, text).eval(file), text


def test_long_in_lists_are_not_checked() -> None:
    values = ", ".join(str(v) for v in range(1000, 1300))
    assert InclusiveMetricsEvaluator(_S, f"id IN ({values})").eval(_FILE)
    assert not InclusiveMetricsEvaluator(_S, "id IN (1000, 1001)").eval(_FILE)


def test_case_insensitive_binding() -> None:
    assert not InclusiveMetricsEvaluator(_S, "ID < 30", False).eval(_FILE)
