"""``table.update`` (Arrow) and ``isp.update`` (Spark) take the same arguments and write the same
rows: the same ``set=`` SQL strings and ``new_values=`` literals, run on copies of one table by
both, leave identical tables (nulls, NaN, decimals, dates, timestamps, strings), or both fail."""

from __future__ import annotations

import datetime as dt
import itertools
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import icefloe
import icefloe.spark as isp
from icefloe.errors import InvalidExpressionError, UnsupportedFeatureError, ValidationError
from support.catalogs import make_catalog
from support.row_expressions import expressions, values_of

UTC = dt.UTC
SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("n", pa.int32()),
        pa.field("amount", pa.float64()),
        pa.field("f", pa.float32()),
        pa.field("price", pa.decimal128(10, 2)),
        pa.field("country", pa.string()),
        pa.field("label", pa.string()),
        pa.field("flag", pa.bool_()),
        pa.field("d", pa.date32()),
        pa.field("ts", pa.timestamp("us", tz="UTC")),
        pa.field("nt", pa.timestamp("us")),
        pa.field("bin", pa.binary()),
    ]
)
ROWS = pa.table(
    {
        "id": [1, 2, 3, 4, 5],
        "n": [3, 0, None, -7, 2147483647],
        "amount": [1.5, -0.0, float("nan"), None, 1234.5678],
        "f": [0.1, None, 2.675, -1.0, 3.0],
        "price": [Decimal("12.34"), Decimal("-0.05"), None, Decimal("99999999.99"), Decimal("0.00")],
        "country": ["DE", "NL", None, "ß", "DE"],
        "label": ["a", "", "x'y", None, "12"],
        "flag": [True, None, False, True, False],
        "d": [dt.date(2024, 2, 29), dt.date(1970, 1, 1), None, dt.date(2000, 1, 1), dt.date(9999, 12, 1)],
        "ts": [
            dt.datetime(2024, 1, 1, 10, tzinfo=UTC),
            None,
            dt.datetime(1969, 12, 31, 23, 59, 59, 5, tzinfo=UTC),
            dt.datetime(2000, 2, 29, tzinfo=UTC),
            dt.datetime(2024, 6, 1, tzinfo=UTC),
        ],
        "nt": [
            dt.datetime(2024, 1, 1, 10),
            dt.datetime(1999, 12, 31, 23),
            None,
            dt.datetime(2024, 6, 1, 12, 30, 15, 250),
            dt.datetime(1970, 1, 1),
        ],
        "bin": [b"\x01", b"", None, b"AB", b"\xff"],
    },
    schema=SCHEMA,
)
_counter = itertools.count()


def _rows(table: icefloe.Table) -> dict[str, tuple[Any, ...]]:
    rows = table.new_scan().to_arrow().sort_by("id")
    return {name: values_of(rows.column(name).combine_chunks()) for name in rows.column_names}


def _both(catalog: icefloe.Catalog, spark: Any, **update: Any) -> tuple[Any, Any]:
    """Each API's outcome of one update on a fresh copy of ROWS: the rows, or the error."""
    outcomes = []
    for api in ("arrow", "spark"):
        table = catalog.create_table(f"db.t{next(_counter)}", SCHEMA)
        table.append(ROWS)
        try:
            if api == "arrow":
                table.update(**update)
            else:
                isp.update(spark, table, **update)
        except UnsupportedFeatureError:
            outcomes.append("unsupported")
            continue
        except Exception as exc:
            outcomes.append(("failed", type(exc).__name__))
            continue
        outcomes.append(_rows(table))
    return outcomes[0], outcomes[1]


def _agree(arrow: Any, spark: Any) -> None:
    if arrow == "unsupported":
        return
    if isinstance(arrow, tuple) or isinstance(spark, tuple):
        assert isinstance(arrow, tuple) and isinstance(spark, tuple), (arrow, spark)
        return
    assert arrow == spark


CASES = [
    {"set": {"amount": "amount * 2", "country": "'ZZ'"}, "where": "country = 'DE'"},
    {"set": {"n": "amount", "price": "price * 1.1"}, "where": "id < 4"},  # DOUBLE -> INT, rounding half up
    {
        "set": {
            "d": "date_add(d, 30)",
            "ts": "CAST(d AS TIMESTAMP)",
            "nt": "TIMESTAMP_NTZ '2030-01-01 10:00:00.5'",
        },
        "where": "id < 5",
    },
    {"set": {"flag": "amount > 1 OR country IS NULL", "label": "concat(country, '-', n, '-', d)"}},
    {"set": {"amount": "CASE WHEN n = 0 THEN NULL ELSE amount / n END", "f": "f * 2"}, "where": "id < 5"},
    {"set": {"label": "country", "country": "label"}},  # every value from the row as it was
    {"set": {"amount": "CAST('NaN' AS DOUBLE)", "label": "upper(trim(label || ' ß '))"}, "where": "id = 1"},
    {"set": {"n": "TRY_CAST(label AS INT)", "price": "CAST(label AS DECIMAL(10,2))"}, "where": "id = 5"},
    {
        "set": {"amount": "round(amount, 1)"},
        "new_values": {
            "label": "x'y",
            "price": Decimal("1.01"),
            "d": dt.date(2030, 5, 6),
            "ts": dt.datetime(2030, 1, 1, 12, tzinfo=UTC),
            "nt": dt.datetime(2030, 1, 1, 12, 30),
            "bin": b"\x00\xff",
            "flag": None,
        },
    },
    {"new_values": {"n": 7, "f": 1.25, "country": "NL"}, "where": "country = 'DE'"},
    {"set": {"f": 2.5, "amount": "f", "price": None}},  # constants in set=; FLOAT widened to DOUBLE
    {"set": {"amount": "amount / 0"}},  # both fail: division by zero (ANSI)
    {"set": {"n": "n + 1"}},  # both fail: overflow
    {"set": {"amount": "'12'"}},  # both refuse: a STRING for a DOUBLE column
]


@pytest.mark.parametrize("update", CASES, ids=[str(c)[:60] for c in CASES])
def test_hand_picked_updates_agree(spark: Any, warehouse: Path, update: dict[str, Any]) -> None:
    catalog = make_catalog("sql", warehouse)
    arrow, spark_rows = _both(catalog, spark, **update)
    assert arrow != "unsupported"
    _agree(arrow, spark_rows)


def test_both_refuse_the_same_mistakes(spark: Any, warehouse: Path) -> None:
    catalog = make_catalog("sql", warehouse)
    table = catalog.create_table("db.refuse", SCHEMA)
    table.append(ROWS)
    head = table.current_snapshot().snapshot_id
    updates = (lambda **kw: table.update(**kw), lambda **kw: isp.update(spark, table, **kw))
    for update in updates:
        with pytest.raises(
            InvalidExpressionError, match="STRING value cannot be assigned to the DOUBLE column"
        ):
            update(set={"amount": "'12'"})
        with pytest.raises(InvalidExpressionError, match=r"ZZ.*in quotes.*new_values="):
            update(set={"country": "ZZ"})  # a literal without quotes is a column name
        with pytest.raises(ValidationError, match="given two new values"):
            update(set={"country": "'a'"}, new_values={"country": "b"})
    assert table.current_snapshot().snapshot_id == head


def test_new_values_do_not_depend_on_the_session_time_zone(spark: Any, warehouse: Path) -> None:
    catalog = make_catalog("sql", warehouse)
    zone = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        arrow, spark_rows = _both(
            catalog,
            spark,
            new_values={
                "ts": dt.datetime(2030, 1, 1, 12, tzinfo=UTC),
                "nt": dt.datetime(2030, 1, 1, 12, 30),
                "d": dt.date(2030, 5, 6),
            },
        )
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)
    assert arrow == spark_rows


_TARGETS = {"amount": "fraction", "n": "integer", "label": "string", "d": "date", "flag": "boolean"}
_COLUMNS = {
    "integer": ["n", "id"],
    "fraction": ["amount", "f", "price"],
    "string": ["country", "label"],
    "boolean": ["flag"],
    "date": ["d"],
    "timestamp": ["ts", "nt"],
}


@settings(
    max_examples=6,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.fixed_dictionaries({column: expressions(kind, 2, _COLUMNS) for column, kind in _TARGETS.items()}))
def test_random_updates_agree(spark: Any, warehouse: Path, assignments: dict[str, str]) -> None:
    catalog = make_catalog("sql", warehouse / f"w{next(_counter)}")
    arrow, spark_rows = _both(catalog, spark, set=assignments, where="id <> 5")
    _agree(arrow, spark_rows)
