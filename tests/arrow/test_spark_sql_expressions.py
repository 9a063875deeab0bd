"""icefloe.arrow.sql against Spark itself: the same expressions on the same rows (nulls, NaN,
-0.0, decimals, dates, timestamps, strings), selected by Spark and evaluated by icefloe, give
the same type and values, or fail on both sides. icefloe may refuse a construct it does not
implement (UnsupportedFeatureError), never compute it differently."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.row_expressions import expressions, icefloe_outcome, mismatches, spark_frame

CORPUS = [
    line.strip()
    for line in (Path(__file__).parent / "row_expressions_corpus.txt")
    .read_text(encoding="utf-8")
    .splitlines()
    if line.strip() and not line.startswith("#")
]


@pytest.fixture(scope="module")
def frame(spark: Any) -> Any:
    if str(spark.conf.get("spark.sql.ansi.enabled", "true")).lower() != "true":
        pytest.skip("the evaluator follows Spark 4's default, ANSI mode")
    return spark_frame(spark)


def test_hand_picked_expressions_agree_with_spark(spark: Any, frame: Any) -> None:
    assert mismatches(spark, frame, CORPUS) == []
    unsupported = [e for e in CORPUS if icefloe_outcome(e).unsupported]
    # The corpus also holds what is refused on purpose (doubles as text, hexadecimal numbers,
    # time zone names, intervals, forms Spark groups otherwise than sqlglot); the rest is computed.
    assert len(unsupported) <= 30, unsupported


@settings(
    max_examples=8,
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
@given(st.lists(expressions(), min_size=40, max_size=40))
def test_random_expressions_agree_with_spark(spark: Any, frame: Any, texts: list[str]) -> None:
    assert mismatches(spark, frame, texts) == []
