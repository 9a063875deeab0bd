"""The row evaluator: SQL three-valued semantics on Python rows."""

from __future__ import annotations

import math
from typing import Any

import pytest

from icefloe.expressions import Evaluator, bind, evaluate
from icefloe.spec.schema import Schema
from icefloe.spec.types import NestedField, StructType

S = Schema(
    NestedField(1, "x", "double"),
    NestedField(2, "n", "long"),
    NestedField(3, "s", "string"),
    NestedField(4, "loc", StructType(NestedField(5, "lat", "double"), NestedField(6, "city", "string"))),
)


@pytest.mark.parametrize(
    ("text", "row", "truth"),
    [
        ("n = 5", {"n": 5}, True),
        ("n != 5", {"n": None}, None),
        ("NOT (n = 5)", {"n": None}, None),
        ("n != 5 OR n IS NULL", {"n": None}, True),
        ("n = 5 AND n IS NOT NULL", {"n": None}, False),
        ("n NOT IN (1, 2)", {"n": None}, None),
        ("x < 1", {"x": math.nan}, None),
        ("x != 1", {"x": math.nan}, None),
        ("x IS NAN", {"x": math.nan}, True),
        ("x IS NAN", {"x": None}, False),
        ("x IS NOT NAN", {"x": None}, True),
        ("x = 0", {"x": -0.0}, True),
        ("s LIKE 'ab%'", {"s": "abc"}, True),
        ("s NOT LIKE 'ab%'", {"s": None}, None),
        ("loc.city = 'Oslo'", {"loc": {"lat": 1.0, "city": "Oslo"}}, True),
        ("loc.city IS NULL", {"loc": None}, True),
        ("loc.lat > 0", {"loc": None}, None),
    ],
)
def test_three_valued_results(text: str, row: dict[str, Any], truth: bool | None) -> None:
    full = {"x": None, "n": None, "s": None, "loc": None, **row}
    evaluator = Evaluator(S, text)
    assert evaluator.truth(full) is truth
    assert evaluator.eval(full) is (truth is True)
    assert evaluate(bind(S, text), full) is (truth is True)


def test_positional_rows() -> None:
    evaluator = Evaluator(S, "loc.city = 'Oslo' AND n > 1")
    assert evaluator.eval((None, 2, None, (1.0, "Oslo")))
    assert not evaluator.eval((None, 2, None, None))


def test_case_insensitive() -> None:
    assert Evaluator(S, "N = 1", case_sensitive=False).eval({"n": 1})
