"""Helpers for the Spark tests: comparing Spark's rows with icefloe's own reader."""

from __future__ import annotations

from typing import Any

import pyarrow as pa


def spark_rows(frame: Any) -> list[tuple[Any, ...]]:
    """The rows of a Spark DataFrame as sorted tuples (via Arrow, so types stay exact)."""
    table = frame.toArrow()
    return sorted_tuples(table)


def sorted_tuples(table: pa.Table) -> list[tuple[Any, ...]]:
    rows = [tuple(_plain(v) for v in row.values()) for row in table.to_pylist()]
    return sorted(rows, key=repr)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple((k, _plain(v)) for k, v in value.items())
    if isinstance(value, list):
        return tuple(_plain(v) for v in value)
    if isinstance(value, float) and value != value:
        return "NaN"  # NaN != NaN would make equal rows differ
    return value


def is_connect(spark: Any) -> bool:
    """Whether ``spark`` is a Spark Connect session (its DataFrames are analysed lazily, on the
    server, each time they run)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")
