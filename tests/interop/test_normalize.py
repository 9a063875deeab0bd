"""The value forms of normalize.py (no engine needed)."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import uuid
from typing import Any

import pyarrow as pa

from .normalize import arrow_rows, normalize_arrow, normalize_rows, normalize_value


class FakeRow(tuple):  # the parts of pyspark.sql.Row that normalize_value relies on
    __fields__: tuple[str, ...] = ()

    def __new__(cls, **kwargs: Any) -> FakeRow:
        row = super().__new__(cls, kwargs.values())
        row.__fields__ = tuple(kwargs)
        return row

    def asDict(self, recursive: bool = False) -> dict[str, Any]:
        return dict(zip(self.__fields__, self))


def test_scalars() -> None:
    utc_plus_2 = dt.timezone(dt.timedelta(hours=2))
    cases = [
        (None, None),
        (True, True),
        (7, 7),
        ("x", "x"),
        (1.5, 1.5),
        (float("nan"), "NaN"),
        (float("inf"), "Infinity"),
        (float("-inf"), "-Infinity"),
        (decimal.Decimal("1.500"), "1.5"),
        (decimal.Decimal("1E+2"), "100"),
        (decimal.Decimal("-0.00"), "0"),
        (decimal.Decimal("0.000100"), "0.0001"),
        (dt.datetime(2024, 1, 2, 3, 4, 5, 6), "2024-01-02T03:04:05.000006"),
        (dt.datetime(2024, 1, 2, 5, 4, 5, tzinfo=utc_plus_2), "2024-01-02T03:04:05"),
        (dt.date(1970, 1, 1), "1970-01-01"),
        (dt.time(12, 30, 0, 1), "12:30:00.000001"),
        (b"\x00\xab", "00ab"),
        (bytearray(b""), ""),
        (uuid.UUID(int=1), "00000000-0000-0000-0000-000000000001"),
    ]
    for value, expected in cases:
        assert normalize_value(value) == expected, value


def test_negative_zero_keeps_its_sign_in_the_text() -> None:
    assert json.dumps(normalize_value(-0.0)) == "-0.0"
    assert normalize_rows([[0.0], [-0.0]]) == [[-0.0], [0.0]]
    assert json.dumps(normalize_rows([[0.0], [-0.0]])) == "[[-0.0], [0.0]]"


def test_nested_values() -> None:
    value = {"b": [1.0, float("nan")], 2: {"x": b"\x01"}, dt.date(2024, 1, 1): None}
    assert normalize_value(value) == {"2": {"x": "01"}, "2024-01-01": None, "b": [1.0, "NaN"]}
    assert list(normalize_value(value)) == ["2", "2024-01-01", "b"]
    assert normalize_value(FakeRow(x=1, y=decimal.Decimal("2.0"))) == {"x": 1, "y": "2"}
    # a list of two-field structs from Spark is not a map
    assert normalize_value([FakeRow(k="a", v=1)]) == [{"k": "a", "v": 1}]
    assert normalize_value((1, "a")) == [1, "a"]


def test_rows_are_sorted_by_their_json_text() -> None:
    rows = [[2, "b"], [1, None], [10, "a"]]
    assert normalize_rows(rows) == [[1, None], [10, "a"], [2, "b"]]
    assert normalize_rows(rows, sort=False) == rows


def test_arrow_tables_normalise_like_engine_rows() -> None:
    table = pa.table(
        {
            "id": pa.array([2, 1], pa.int64()),
            "m": pa.array([[("b", 2), ("a", 1)], []], pa.map_(pa.string(), pa.int32())),
            "s": pa.array(
                [{"x": 1.0, "y": None}, None], pa.struct([("x", pa.float64()), ("y", pa.float64())])
            ),
            "l": pa.array(
                [[{"k": "a", "v": 1}], None], pa.list_(pa.struct([("k", pa.string()), ("v", pa.int32())]))
            ),
            "ts": pa.array([dt.datetime(2024, 1, 1, tzinfo=dt.UTC), None], pa.timestamp("us", "UTC")),
            "d": pa.array([decimal.Decimal("1.10"), None], pa.decimal128(9, 2)),
        }
    )
    assert arrow_rows(table) == [
        [2, {"a": 1, "b": 2}, {"x": 1.0, "y": None}, [{"k": "a", "v": 1}], "2024-01-01T00:00:00", "1.1"],
        [1, {}, None, None, None, None],
    ]
    assert normalize_arrow(table) == {
        "columns": ["id", "m", "s", "l", "ts", "d"],
        "rows": [
            [1, {}, None, None, None, None],
            [2, {"a": 1, "b": 2}, {"x": 1.0, "y": None}, [{"k": "a", "v": 1}], "2024-01-01T00:00:00", "1.1"],
        ],
    }
    # the same data as Spark would hand it over
    spark_rows = [
        [
            2,
            {"b": 2, "a": 1},
            FakeRow(x=1.0, y=None),
            [FakeRow(k="a", v=1)],
            dt.datetime(2024, 1, 1),
            decimal.Decimal("1.10"),
        ],
        [1, {}, None, None, None, None],
    ]
    assert normalize_rows(spark_rows) == normalize_arrow(table)["rows"]
