"""Spark SQL expressions of rows, run by Spark and by icefloe's Arrow evaluator on the same rows,
for the differential tests: the outcome of each side is its type and values, or the kind of error
it raised."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pyarrow as pa

from icefloe.arrow.sql import compile_expression
from icefloe.arrow.sql._types import type_name
from icefloe.errors import ExpressionEvaluationError, InvalidExpressionError, UnsupportedFeatureError

UTC = dt.UTC

#: Rows with the awkward values of each type: nulls, NaN, -0.0, extremes, leap days, non-ASCII.
ROWS = pa.table(
    {
        "id": pa.array([1, 2, 3, 4, 5, 6], pa.int64()),
        "i": pa.array([7, -3, 0, None, 2147483647, -2147483648], pa.int32()),
        "l": pa.array([10, -1, None, 0, 9223372036854775807, 3], pa.int64()),
        "x": pa.array([1.5, -0.0, float("nan"), None, 1e300, -2.675], pa.float64()),
        "f": pa.array([0.1, None, -1.5, float("inf"), 3.0, 2.675], pa.float32()),
        "price": pa.array(
            [
                Decimal("12.34"),
                Decimal("-0.05"),
                None,
                Decimal("99999999.99"),
                Decimal("0.00"),
                Decimal("2.50"),
            ],
            pa.decimal128(10, 2),
        ),
        "big": pa.array(
            [
                Decimal("1.0000000001"),
                None,
                Decimal("-12345678901234567890.5"),
                Decimal("0"),
                Decimal("3.3333333333"),
                Decimal("7"),
            ],
            pa.decimal128(38, 10),
        ),
        "s": pa.array(["NL", " padded ", None, "straße", "12", "2024-02-29"]),
        "t": pa.array(["a%b", "", "ΟΔΟΣ", None, "xYz", "-7"]),
        "b": pa.array([True, False, None, True, False, None]),
        "d": pa.array(
            [
                dt.date(2024, 2, 29),
                dt.date(1970, 1, 1),
                None,
                dt.date(1, 1, 1),
                dt.date(9999, 12, 31),
                dt.date(1969, 12, 31),
            ]
        ),
        "ts": pa.array(
            [
                dt.datetime(2024, 1, 1, 10, 0, tzinfo=UTC),
                dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
                None,
                dt.datetime(2000, 2, 29, 0, 0, 0, 500000, tzinfo=UTC),
                dt.datetime(2024, 12, 31, 23, 59, 59, tzinfo=UTC),
                dt.datetime(1900, 1, 1, 0, 0, 0, 1, tzinfo=UTC),
            ],
            pa.timestamp("us", tz="UTC"),
        ),
        "nt": pa.array(
            [
                dt.datetime(2024, 1, 1, 10, 0),
                None,
                dt.datetime(1999, 12, 31, 23, 0),
                dt.datetime(2024, 6, 1, 12, 30, 15, 250),
                dt.datetime(1970, 1, 1),
                dt.datetime(2100, 3, 1),
            ],
            pa.timestamp("us"),
        ),
        "bin": pa.array([b"\x01\x02", b"", None, b"AB", b"\xff", b"xyz"], pa.binary()),
    }
)


@dataclass(frozen=True)
class Outcome:
    """What one side did with an expression: a type and values, or an error (``failed``: it
    raised what Spark raises for bad input; ``unsupported``: icefloe does not implement it)."""

    type: str | None = None
    values: tuple[Any, ...] = ()
    failed: str | None = None
    unsupported: str | None = None


def _plain(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, dt.datetime):
        epoch = dt.datetime(1970, 1, 1, tzinfo=value.tzinfo)
        return ("ts", value.tzinfo is not None, (value - epoch) // dt.timedelta(microseconds=1))
    return value


def values_of(array: pa.Array) -> tuple[Any, ...]:
    if pa.types.is_timestamp(array.type):  # compare instants / wall clocks as integers
        return tuple(None if v is None else ("ts", v) for v in array.cast(pa.int64()).to_pylist())
    if pa.types.is_date(array.type):
        return tuple(None if v is None else ("date", v) for v in array.cast(pa.int32()).to_pylist())
    return tuple(_plain(v) for v in array.to_pylist())


def icefloe_outcome(expression: str, rows: pa.Table = ROWS) -> Outcome:
    try:
        compiled = compile_expression(expression, rows.schema, column="v", case_sensitive=False)
        values = compiled.evaluate(rows)
    except UnsupportedFeatureError as exc:
        return Outcome(unsupported=str(exc))
    except (InvalidExpressionError, ExpressionEvaluationError) as exc:
        return Outcome(failed=str(exc))
    return Outcome(type_name(compiled.type).lower(), values_of(values))


def spark_frame(spark: Any, rows: pa.Table = ROWS) -> Any:
    """``rows`` as a Spark DataFrame of the same Spark types (Arrow's zone-less timestamps are
    TIMESTAMP_NTZ)."""
    from pyspark.sql import functions as F

    frame = spark.createDataFrame(rows)
    for field in rows.schema:
        if pa.types.is_timestamp(field.type) and field.type.tz is None:
            frame = frame.withColumn(field.name, F.col(field.name).cast("timestamp_ntz"))
    return frame


def spark_outcomes(spark: Any, frame: Any, expressions: Sequence[str]) -> list[Outcome]:
    """Spark's outcome of each expression: one query for all, halved until the queries that
    fail are single expressions (whose error is the outcome)."""
    try:
        return _spark_batch(frame, expressions)
    except Exception:
        if len(expressions) == 1:
            return [_spark_error(frame, expressions[0])]
    half = len(expressions) // 2
    return spark_outcomes(spark, frame, expressions[:half]) + spark_outcomes(spark, frame, expressions[half:])


def _spark_batch(frame: Any, expressions: Sequence[str]) -> list[Outcome]:
    selected = frame.orderBy("id").selectExpr(*[f"{e} AS c{n}" for n, e in enumerate(expressions)])
    types = [f.dataType.simpleString() for f in selected.schema.fields]
    table = selected.toArrow()
    return [Outcome(types[n], values_of(table.column(n).combine_chunks())) for n in range(len(expressions))]


def _spark_error(frame: Any, expression: str) -> Outcome:
    try:
        return _spark_batch(frame, [expression])[0]
    except Exception as exc:
        if type(exc).__name__ == "ParseException":  # Spark's parser refuses a form sqlglot reads
            return Outcome(unsupported=f"Spark cannot parse {expression}")
        return Outcome(failed=(str(exc).splitlines() or [type(exc).__name__])[0][:300])


def mismatches(spark: Any, frame: Any, expressions: Sequence[str], *, rows: pa.Table = ROWS) -> list[str]:
    """The expressions on which icefloe and Spark disagree (an unsupported construct is not a
    disagreement: icefloe raises rather than compute it). Those icefloe computes go to Spark in
    one query; those it fails on one by one (Spark fails a whole query for one error)."""
    found: list[str] = []
    ours: dict[str, Outcome] = {}
    for expression in expressions:
        try:
            ours[expression] = icefloe_outcome(expression, rows)
        except Exception as exc:  # an untyped error is a bug whatever Spark says
            found.append(f"{expression}: icefloe raised {type(exc).__name__}: {exc}")
    computed = [e for e, o in ours.items() if o.unsupported is None and o.failed is None]
    failing = [e for e, o in ours.items() if o.failed is not None]
    theirs = dict(zip(computed, spark_outcomes(spark, frame, computed), strict=True)) if computed else {}
    theirs.update({e: _spark_error(frame, e) for e in failing})
    for expression, spark_outcome in theirs.items():
        mine = ours[expression]
        if spark_outcome.unsupported is not None:
            continue
        if (mine.failed is None) != (spark_outcome.failed is None):
            found.append(
                f"{expression}: Spark {spark_outcome.failed or (spark_outcome.type, spark_outcome.values)}, "
                f"icefloe {mine.failed or (mine.type, mine.values)}"
            )
        elif mine.failed is None and (mine.type, mine.values) != (spark_outcome.type, spark_outcome.values):
            # (zeros compare equal whatever their sign: Spark's optimizer takes 0.0 and -0.0 for the
            # same constant when it folds branches, which an evaluator of the written expression
            # cannot follow; test_sql_expressions.py checks that signs are kept)
            found.append(
                f"{expression}: Spark {spark_outcome.type} {spark_outcome.values}, icefloe {mine.type} {mine.values}"
            )
    return found


# ---- random expressions ---------------------------------------------------------------------------
# A grammar of Spark SQL over ROWS' columns, by the kind of value each part gives, so that most
# expressions are well typed (and the others check that both sides refuse the same ones).

from hypothesis import strategies as st  # noqa: E402

_COLUMNS = {
    "integer": ["i", "l", "id"],
    "fraction": ["x", "f", "price", "big"],
    "string": ["s", "t"],
    "boolean": ["b"],
    "date": ["d"],
    "timestamp": ["ts", "nt"],
}
_LITERALS = {
    "integer": ["0", "1", "-1", "2", "7", "-2147483648", "3000000000", "1L", "3S", "1Y", "NULL"],
    "fraction": [
        "1.5",
        "-0.25",
        "100.005",
        "0.001",
        "1e3",
        "2.5D",
        "-0.0D",
        "0.1F",
        "1BD",
        "CAST('NaN' AS DOUBLE)",
        "NULL",
    ],
    "string": [
        "'a'",
        "''",
        "'NL'",
        "' x '",
        "'12'",
        "'-3'",
        "'2024-01-31'",
        "'2024-01-31 10:00:00'",
        "'ß'",
        "'1.5'",
        "'true'",
        "NULL",
    ],
    "boolean": ["TRUE", "FALSE", "NULL"],
    "date": ["DATE '2024-02-29'", "DATE '1970-01-01'", "NULL"],
    "timestamp": ["TIMESTAMP '2024-01-01 10:00:00'", "TIMESTAMP_NTZ '2024-01-01 10:00:00.5'", "NULL"],
}
_CAST_TYPES = {
    "integer": ["INT", "BIGINT", "SMALLINT", "TINYINT"],
    "fraction": ["DOUBLE", "FLOAT", "DECIMAL(10,2)", "DECIMAL(5,1)", "DECIMAL(38,18)", "DECIMAL(3,0)"],
    "string": ["STRING"],
    "boolean": ["BOOLEAN"],
    "date": ["DATE"],
    "timestamp": ["TIMESTAMP", "TIMESTAMP_NTZ"],
}
_KINDS = list(_COLUMNS)
_SEARCHED = ["'a'", "'N'", "' '"]
_REPLACEMENTS = ["'x'", "''"]


@st.composite
def expressions(
    draw: Any, kind: str | None = None, depth: int = 3, columns: dict[str, list[str]] | None = None
) -> str:
    """A Spark SQL expression giving a value of ``kind`` (any kind when None) over ``columns``
    (kind -> column names; ROWS' by default)."""
    columns = columns or _COLUMNS
    kind = kind or draw(st.sampled_from(_KINDS))
    if depth <= 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(columns.get(kind, []) + _LITERALS[kind]))
    sub = lambda k=kind: draw(expressions(k, depth - 1, columns))  # noqa: E731
    choices: list[Any] = [
        lambda: f"CAST({sub(draw(st.sampled_from(_KINDS)))} AS {draw(st.sampled_from(_CAST_TYPES[kind]))})",
        lambda: f"TRY_CAST({sub('string')} AS {draw(st.sampled_from(_CAST_TYPES[kind]))})",
        lambda: f"coalesce({sub()}, {sub()})",
        lambda: f"CASE WHEN {sub('boolean')} THEN {sub()} ELSE {sub()} END",
        lambda: f"if({sub('boolean')}, {sub()}, {sub()})",
        lambda: f"nullif({sub()}, {sub()})",
    ]
    if kind in ("integer", "fraction"):
        ops = ["+", "-", "*", "/", "%"] + (["div"] if kind == "integer" else [])
        choices += [
            lambda: (
                f"({sub()} {draw(st.sampled_from(ops))} {sub(draw(st.sampled_from(['integer', 'fraction'])))})"
            ),
            lambda: f"-{sub()}",
            lambda: f"abs({sub()})",
            lambda: f"round({sub()}, {draw(st.integers(-2, 3))})",
            lambda: f"{draw(st.sampled_from(['floor', 'ceil']))}({sub()})",
            lambda: f"{draw(st.sampled_from(['greatest', 'least']))}({sub()}, {sub()})",
        ]
    if kind == "integer":
        choices += [
            lambda: f"length({sub('string')})",
            lambda: f"{draw(st.sampled_from(['year', 'month', 'day']))}({sub('date')})",
            lambda: f"datediff({sub('date')}, {sub('date')})",
        ]
    if kind == "string":
        choices += [
            lambda: f"{draw(st.sampled_from(['upper', 'lower', 'trim', 'ltrim', 'rtrim']))}({sub()})",
            lambda: f"substring({sub()}, {draw(st.integers(-4, 4))}, {draw(st.integers(-1, 4))})",
            lambda: f"substr({sub()}, {draw(st.integers(-4, 4))})",
            lambda: f"concat({sub()}, {sub(draw(st.sampled_from(['string', 'integer', 'date'])))})",
            lambda: f"({sub()} || {sub()})",
            lambda: (
                f"replace({sub()}, {draw(st.sampled_from(_SEARCHED))}, {draw(st.sampled_from(_REPLACEMENTS))})"
            ),
        ]
    if kind == "boolean":
        other = draw(st.sampled_from(_KINDS))
        choices += [
            lambda: (
                f"({sub(other)} {draw(st.sampled_from(['=', '<>', '<', '<=', '>', '>=', '<=>']))} {sub(other)})"
            ),
            lambda: f"({sub()} {draw(st.sampled_from(['AND', 'OR']))} {sub()})",
            lambda: f"NOT {sub()}",
            lambda: f"{sub(other)} IS {draw(st.sampled_from(['', 'NOT ']))}NULL",
            lambda: f"{sub(other)} IN ({sub(other)}, {draw(st.sampled_from(_LITERALS[other]))})",
            lambda: f"{sub(other)} BETWEEN {sub(other)} AND {sub(other)}",
        ]
    if kind == "date":
        choices += [
            lambda: f"date_add({sub()}, {draw(st.integers(-400, 400))})",
            lambda: f"date_sub({sub()}, {draw(st.integers(-400, 400))})",
            lambda: f"({sub()} + {draw(st.integers(-40, 40))})",
        ]
    return draw(st.sampled_from(choices))()  # type: ignore[no-any-return]
