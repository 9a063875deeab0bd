"""``EntryMetrics``: one manifest entry's metrics read straight from the decoded columns (how
small manifests' files are checked) agree with the entry's dicts, whatever the layout."""

from __future__ import annotations

from typing import Any

import pytest

from icefloe.expressions import InclusiveMetricsEvaluator
from icefloe.scan._columnar.metrics import BoundsColumn, CountsColumn, EntryMetrics
from icefloe.spec.conversions import to_bytes
from icefloe.spec.schema import Schema
from icefloe.spec.types import LongType, NestedField, StringType

# Per entry: the pairs of its map, or None (no map). Entry 0 repeats field 1 (the last counts,
# as a dict built from the pairs keeps it); entry 2 has an empty map.
PAIRS: list[list[tuple[int, Any]] | None] = [[(1, 5), (2, 7), (1, 6)], None, [], [(2, 0), (3, 2**40)]]
BOUNDS: list[list[tuple[int, bytes]] | None] = [
    [(1, b"\x01" * 8), (3, b"abc")],
    [(3, b"")],
    None,
    [(1, b"\x02" * 8)],
]
UNIFORM: list[list[tuple[int, Any]] | None] = [[(1, 10), (2, 0)], [(1, 20), (2, 3)]]


def _counts(pairs: list[list[tuple[int, Any]] | None]) -> CountsColumn:
    lengths = [-1 if p is None else len(p) for p in pairs]
    return CountsColumn(lengths, [k for p in pairs if p for k, _ in p], [v for p in pairs if p for _, v in p])


def _bounds(pairs: list[list[tuple[int, bytes]] | None]) -> BoundsColumn:
    lengths = [-1 if p is None else len(p) for p in pairs]
    return BoundsColumn(lengths, [k for p in pairs if p for k, _ in p], [v for p in pairs if p for _, v in p])


@pytest.mark.parametrize(
    "column",
    [
        _counts(PAIRS),
        _counts(UNIFORM),
        _counts([[(1, None), (2, 3)], [(1, 2**70), (2, 4)]]),  # a malformed file's values, as stored
        _bounds(BOUNDS),
        _bounds([[(1, b"ab")], [(1, b"cd")]]),
    ],
    ids=["counts", "uniform-counts", "malformed-counts", "bounds", "uniform-bounds"],
)
def test_one_value_reads_as_the_entry_dict_gives_it(column: CountsColumn | BoundsColumn) -> None:
    for i in range(column.count):
        expected = column.entry(i)
        assert column.entry_is_empty(i) == (not expected)
        for field_id in (1, 2, 3, 4):
            assert column.value(i, field_id) == (None if expected is None else expected.get(field_id))


def test_entry_metrics_are_the_entry_maps() -> None:
    counts, bounds = _counts(PAIRS), _bounds(BOUNDS)
    columns = {
        "value_counts": counts,
        "null_value_counts": counts,
        "nan_value_counts": counts,
        "lower_bounds": bounds,
        "upper_bounds": bounds,
    }
    for i in range(4):
        view = EntryMetrics(columns, i, 100 + i)
        assert view.record_count == 100 + i
        for name, column in columns.items():
            expected, got = column.entry(i), getattr(view, name)
            if expected is None:
                assert got is None
            else:
                assert got is not None and dict(got) == expected and bool(got) == bool(expected)
                assert len(got) == len(expected) and list(got) == list(expected)


def test_small_manifest_files_are_checked_from_their_columns() -> None:
    schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "s", StringType(), required=False))
    lower = [[(1, to_bytes(LongType(), low)), (2, b"a")] for low in (0, 100, 200)]
    upper = [[(1, to_bytes(LongType(), low + 99)), (2, b"m")] for low in (0, 100, 200)]
    values = [[(1, 100), (2, 100)]] * 3
    nulls = [[(1, 0), (2, 100)], [(1, 0), (2, 0)], [(1, 0), (2, 3)]]
    columns = {
        "value_counts": _counts(values),
        "null_value_counts": _counts(nulls),
        "nan_value_counts": _counts([[]] * 3),
        "lower_bounds": _bounds(lower),
        "upper_bounds": _bounds(upper),
    }

    def kept(text: str) -> list[int]:
        evaluator = InclusiveMetricsEvaluator(schema, text)
        return [i for i in range(3) if evaluator.eval(EntryMetrics(columns, i, 100))]

    assert kept("id >= 150 AND id < 250") == [1, 2]
    assert kept("id = 99") == [0]
    assert kept("s IS NOT NULL") == [1, 2]  # entry 0 holds only nulls
    assert kept("s > 'n'") == []
    assert [
        InclusiveMetricsEvaluator(schema, "id > 0").eval(EntryMetrics(columns, 0, records))
        for records in (0, -1)
    ] == [False, True]  # no rows; an unknown count cannot be trusted
