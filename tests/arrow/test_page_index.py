"""Page-index pruning (``icefloe.arrow.page_index``): reads that skip pages through DataFusion
return exactly what pyarrow's reader returns, row for row and in order, and are taken only
where they are safe and worth it."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icefloe.arrow import page_index
from icefloe.arrow.page_index import Compare, PagePredicate, page_predicate, worth_reading
from icefloe.arrow.reader import read_parquet
from icefloe.arrow.row_filter import to_arrow_expression
from icefloe.arrow.schema import schema_to_arrow
from icefloe.expressions import (
    and_,
    bind,
    equal,
    greater_than,
    greater_than_or_equal,
    is_in,
    is_nan,
    is_null,
    less_than,
    less_than_or_equal,
    not_,
    not_equal,
    not_in,
    not_null,
    or_,
    starts_with,
)
from icefloe.spec.schema import Schema
from icefloe.spec.types import (
    DateType,
    DoubleType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
)
from support.page_reads import page_reads

pytest.importorskip("datafusion")

ROWS = 60_000  # one row group, of pages of about 2,000 rows
EPOCH = dt.datetime(2024, 1, 1)

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "k", IntegerType(), required=False),
    NestedField(3, "d", DateType(), required=False),
    NestedField(4, "ts", TimestamptzType(), required=False),
    NestedField(5, "local", TimestampType(), required=False),
    NestedField(6, "s", StringType(), required=False),
    NestedField(7, "amount", DoubleType(), required=False),
)


def _columns() -> list[pa.Array]:
    rng = np.random.default_rng(7)
    ids = np.arange(ROWS, dtype=np.int64)
    k = rng.integers(0, 1000, ROWS).astype(np.int32)
    k_null = rng.random(ROWS) < 0.05
    seconds = ids * 10  # sorted: ten seconds a row
    micros = seconds * 1_000_000 + int((EPOCH - dt.datetime(1970, 1, 1)).total_seconds()) * 1_000_000
    days = (micros // 86_400_000_000).astype(np.int32)
    strings = [None if i % 97 == 0 else f"key-{i:07d}" for i in range(ROWS)]
    amount = rng.normal(0, 100, ROWS)
    amount[::101] = np.nan
    return [
        pa.array(ids),
        pa.array(k, mask=k_null),
        pa.array(days, pa.date32()),
        pa.array(micros, pa.timestamp("us", tz="UTC"), mask=ids % 89 == 0),
        pa.array(micros, pa.timestamp("us")),
        pa.array(strings, pa.string()),
        pa.array(amount),
    ]


@pytest.fixture(autouse=True)
def _small_files_are_worth_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Row groups of ROWS rows are worth reading by pages here (files of the size it takes in
    production would slow the tests)."""
    monkeypatch.setattr(page_index, "MIN_ROWS", ROWS // 2)


@pytest.fixture(scope="module")
def data_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pages") / "data.parquet"
    table = pa.Table.from_arrays(_columns(), schema=schema_to_arrow(SCHEMA))
    # small pages, many of them, in one row group: as parquet-mr writes a 128 MB group
    pq.write_table(table, path, row_group_size=ROWS, data_page_size=8 << 10, write_page_index=True)
    return path


def _read(path: Path, expr: Any, *, pages: bool, schema: Schema = SCHEMA, **kwargs: Any) -> pa.Table:
    bound = bind(schema, expr)
    batches = read_parquet(
        None,
        str(path),
        projected=schema,
        row_filter=to_arrow_expression(bound, schema),
        page_filter=page_predicate(bound, schema) if pages else None,
        **kwargs,
    )
    return pa.Table.from_batches(list(batches), schema=schema_to_arrow(schema))


def _assert_same(found: pa.Table, expected: pa.Table, expr: Any) -> None:
    """The same schema, rows and order (NaN equal to NaN)."""
    assert found.schema == expected.schema, str(expr)
    assert found.num_rows == expected.num_rows, str(expr)
    for name in expected.column_names:
        a, b = found.column(name), expected.column(name)
        if pa.types.is_floating(b.type):
            assert a.is_null().equals(b.is_null()), (str(expr), name)
            x, y = a.fill_null(0).to_numpy(), b.fill_null(0).to_numpy()
            assert np.array_equal(x, y, equal_nan=True), (str(expr), name)
        else:
            assert a.equals(b), (str(expr), name)


def _ts(row: int) -> str:
    return (EPOCH + dt.timedelta(seconds=10 * row)).isoformat() + "+00:00"


def _local(row: int) -> str:
    return (EPOCH + dt.timedelta(seconds=10 * row)).isoformat()


def _day(row: int) -> str:
    return (EPOCH + dt.timedelta(seconds=10 * row)).date().isoformat()


def _random_predicate(rng: random.Random, depth: int = 0) -> Any:
    if depth < 2 and rng.random() < 0.35:
        left, right = _random_predicate(rng, depth + 1), _random_predicate(rng, depth + 1)
        combine = rng.choice([and_, and_, or_])
        found = combine(left, right)
        return not_(found) if rng.random() < 0.1 else found
    row = rng.choice([0, 1, 96, 97, ROWS // 3, ROWS // 2, ROWS - 2, ROWS - 1, ROWS + 5, rng.randrange(ROWS)])
    width = rng.choice([1, 10, 500, 3000])
    column = rng.choice(["id", "k", "d", "ts", "local", "s", "amount"])
    if column == "id":
        return rng.choice(
            [
                and_(greater_than_or_equal("id", row), less_than("id", row + width)),
                equal("id", row),
                is_in("id", [row, row + width, 3]),
                less_than_or_equal("id", width),
                greater_than("id", ROWS - width),
                not_equal("id", row),
                not_in("id", [row]),
            ]
        )
    if column == "k":
        return rng.choice([equal("k", row % 1000), is_null("k"), not_null("k"), less_than("k", 2)])
    if column == "d":
        return rng.choice(
            [equal("d", _day(row)), and_(greater_than("d", _day(row)), less_than("d", _day(row + 9000)))]
        )
    if column == "ts":
        return rng.choice(
            [
                and_(greater_than_or_equal("ts", _ts(row)), less_than("ts", _ts(row + width))),
                equal("ts", _ts(row)),
                is_null("ts"),
            ]
        )
    if column == "local":
        return and_(greater_than("local", _local(row)), less_than_or_equal("local", _local(row + width)))
    if column == "s":
        return rng.choice(
            [
                equal("s", f"key-{row:07d}"),
                and_(greater_than_or_equal("s", f"key-{row:07d}"), less_than("s", f"key-{row + width:07d}")),
                is_in("s", [f"key-{row:07d}", "zzz"]),
                is_null("s"),
                starts_with("s", f"key-{row:07d}"[:-2]),
            ]
        )
    return rng.choice([greater_than("amount", 250.0), is_nan("amount"), equal("amount", -0.0)])


def test_reads_that_skip_pages_return_what_pyarrow_reads(
    data_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken = page_reads(monkeypatch)
    rng = random.Random(15)
    for _ in range(50):
        expr = _random_predicate(rng)
        expected = _read(data_file, expr, pages=False)
        found = _read(data_file, expr, pages=True)
        _assert_same(found, expected, expr)
    assert sum(taken) >= 20  # most of those filters are selective enough for DataFusion


@pytest.mark.parametrize(
    "expr",
    [
        and_(greater_than_or_equal("id", 30_000), less_than("id", 30_100)),
        is_in("s", ["key-0000005", "key-0059999"]),
        and_(equal("k", 3), less_than("ts", _ts(5_000))),
        or_(equal("id", 7), equal("s", "key-0050000")),
        and_(greater_than("local", _local(5)), less_than("local", _local(400))),
        equal("d", _day(50_000)),
    ],
    ids=str,
)
def test_selective_reads_go_through_datafusion(
    data_file: Path, expr: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken = page_reads(monkeypatch)
    found = _read(data_file, expr, pages=True)
    assert sum(taken) == 1
    _assert_same(found, _read(data_file, expr, pages=False), expr)
    assert 0 < found.num_rows < ROWS // 5, str(expr)


@pytest.mark.parametrize(
    "expr",
    [
        greater_than_or_equal("id", 1000),  # keeps most rows: pyarrow reads faster
        greater_than("amount", 300.0),  # doubles are not pushed
        not_equal("id", 5),
        or_(equal("id", 5), greater_than("amount", 1.0)),  # a side not pushed: neither is the OR
    ],
    ids=str,
)
def test_filters_that_keep_most_rows_or_cannot_be_pushed_read_with_pyarrow(
    data_file: Path, expr: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken = page_reads(monkeypatch)
    found = _read(data_file, expr, pages=True)
    assert sum(taken) == 0
    _assert_same(found, _read(data_file, expr, pages=False), expr)


def test_reads_needing_row_positions_or_a_split_read_with_pyarrow(
    data_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken = page_reads(monkeypatch)
    expr = and_(greater_than_or_equal("id", 1000), less_than("id", 1100))
    deleted = _read(data_file, expr, pages=True, positions_to_delete=[1000, 1050])
    assert deleted.column("id").to_pylist() == [i for i in range(1000, 1100) if i not in (1000, 1050)]
    assert sum(taken) == 0
    # a split holding one of two row groups: DataFusion would read the other one's rows too
    two_groups = tmp_path / "two-groups.parquet"
    table = pa.Table.from_arrays(_columns(), schema=schema_to_arrow(SCHEMA))
    pq.write_table(table, two_groups, row_group_size=ROWS // 2, data_page_size=8 << 10, write_page_index=True)
    size = two_groups.stat().st_size  # each half holds one group's midpoint
    halves = [_read(two_groups, expr, pages=True, byte_range=r) for r in ((0, size // 2), (size // 2, size))]
    assert [half.num_rows for half in halves] == [100, 0]
    assert sum(taken) == 0
    _read(two_groups, expr, pages=True)  # the whole file
    assert sum(taken) == 1


def test_columns_are_pushed_by_field_id_under_their_file_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file written before a rename: the filter names the new column, the file the old one."""
    taken = page_reads(monkeypatch)
    old = Schema(NestedField(1, "ident", LongType(), required=True), NestedField(6, "Label", StringType()))
    ids = np.arange(ROWS, dtype=np.int64)
    table = pa.Table.from_arrays(
        [pa.array(ids), pa.array([f"v{i}" for i in range(ROWS)])], schema=schema_to_arrow(old)
    )
    path = tmp_path / "renamed.parquet"
    pq.write_table(table, path, row_group_size=ROWS, data_page_size=8 << 10, write_page_index=True)
    current = Schema(NestedField(1, "id", LongType(), required=True), NestedField(6, "label", StringType()))
    expr = or_(equal("id", 17), equal("label", "v50001"))
    found = _read(path, expr, pages=True, schema=current)
    assert sum(taken) == 1
    assert found.column("id").to_pylist() == [17, 50_001]
    _assert_same(found, _read(path, expr, pages=False, schema=current), expr)


def test_files_without_a_page_index_or_of_small_row_groups_are_not_worth_it(tmp_path: Path) -> None:
    table = pa.Table.from_arrays(_columns(), schema=schema_to_arrow(SCHEMA))
    bound = bind(SCHEMA, equal("id", 5))
    predicate = page_predicate(bound, SCHEMA)
    assert predicate is not None
    cases = {
        "indexed.parquet": (dict(row_group_size=ROWS, write_page_index=True), True),
        "unindexed.parquet": (dict(row_group_size=ROWS, write_page_index=False), False),
        "small-groups.parquet": (dict(row_group_size=ROWS // 4, write_page_index=True), False),
    }
    for name, (options, expected) in cases.items():
        path = tmp_path / name
        pq.write_table(table, path, **options)
        metadata = pq.ParquetFile(path).metadata
        groups = list(range(metadata.num_row_groups))
        columns = page_index.leaf_columns(metadata, list(pq.ParquetFile(path).schema_arrow))
        assert (
            worth_reading(metadata, groups[:1] if len(groups) > 1 else groups, columns, predicate) is expected
        ), name


def test_the_estimate_reads_a_range_on_one_column_as_one_range(data_file: Path) -> None:
    metadata = pq.ParquetFile(data_file).metadata
    columns = page_index.leaf_columns(metadata, list(pq.ParquetFile(data_file).schema_arrow))

    def worth(expr: Any) -> bool:
        predicate = page_predicate(bind(SCHEMA, expr), SCHEMA)
        assert predicate is not None
        return worth_reading(metadata, [0], columns, predicate)

    assert worth(and_(greater_than_or_equal("id", ROWS // 2), less_than("id", ROWS // 2 + 1000)))
    assert not worth(and_(greater_than_or_equal("id", 1000), less_than("id", ROWS - 1000)))
    assert worth(less_than("id", ROWS // 10))
    assert not worth(or_(less_than("id", ROWS // 5), greater_than("id", ROWS - ROWS // 5)))
    # equality: a few rows per value, or the values' share of an integer column's range
    assert worth(equal("s", "key-0000005"))
    assert worth(equal("k", 3))  # k: 0 .. 999
    assert worth(is_in("k", list(range(200))))
    assert not worth(is_in("k", list(range(300))))
    assert worth(is_in("k", [-5, *range(1000, 1300)]))  # none of those values is in the range


def test_what_is_pushed() -> None:
    nested = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "x", DoubleType()),
        NestedField(3, "s", StructType(NestedField(4, "n", LongType()))),
    )

    def pushed(expr: Any) -> Any:
        return page_predicate(bind(nested, expr), nested)

    assert pushed(equal("id", 5)) == Compare(1, LongType(), "=", (5,))
    assert pushed(greater_than("x", 1.0)) is None  # floats: NaN and -0.0 compare differently
    assert pushed(equal("s.n", 3)) is None  # only top-level columns
    assert pushed(not_in("id", [1])) is None
    assert pushed(and_(equal("id", 5), greater_than("x", 1.0))) == Compare(1, LongType(), "=", (5,))
    assert pushed(or_(equal("id", 5), greater_than("x", 1.0))) is None
    assert pushed(or_(equal("id", 5), is_in("id", [9, 7]))) == PagePredicate(
        "any", (Compare(1, LongType(), "=", (5,)), Compare(1, LongType(), "in", (7, 9)))
    )
    # NOT is pushed into its predicates first: not (id < 5) is id >= 5
    assert pushed(not_(less_than("id", 5))) == Compare(1, LongType(), ">=", (5,))


def _read_in_child(path: Path, expr: Any, queue: Any) -> None:
    found = _read(path, expr, pages=True)
    queue.put(found.column("id").to_pylist())


def test_a_process_forked_after_a_datafusion_read_reads_with_pyarrow(data_file: Path) -> None:
    """DataFusion's runtime does not survive a fork (its threads stay in the parent): a child
    that used it would hang."""
    import multiprocessing

    expr = and_(greater_than_or_equal("id", 2000), less_than("id", 2003))
    assert _read(data_file, expr, pages=True).num_rows == 3  # DataFusion runs in this process
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_read_in_child, args=(data_file, expr, queue))
    child.start()
    child.join(timeout=60)
    if child.is_alive():
        child.kill()
        pytest.fail("the forked child hung")
    assert child.exitcode == 0
    assert queue.get(timeout=5) == [2000, 2001, 2002]


def test_reads_in_threads_at_once(data_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The process's one DataFusion session serves reads from several threads at once (as
    ``to_arrow()`` reads four files at a time)."""
    from concurrent.futures import ThreadPoolExecutor

    taken = page_reads(monkeypatch)
    filters = [
        and_(greater_than_or_equal("id", start), less_than("id", start + 50))
        for start in range(0, 56_000, 3500)
    ]
    with ThreadPoolExecutor(4) as pool:
        found = list(pool.map(lambda expr: _read(data_file, expr, pages=True), filters))
    assert sum(taken) == len(filters)
    for start, table in zip(range(0, 56_000, 3500), found):
        assert table.column("id").to_pylist() == list(range(start, start + 50))


def test_a_path_datafusion_would_read_as_a_pattern_is_read_with_pyarrow(
    data_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken = page_reads(monkeypatch)
    expr = equal("id", 12)
    for directory in ("name=a*b", "name=a?b", "name=[ab]"):
        path = tmp_path / directory / "data.parquet"
        path.parent.mkdir()
        path.write_bytes(data_file.read_bytes())
        assert _read(path, expr, pages=True).column("id").to_pylist() == [12]
    assert taken == [False, False, False]
    assert _read(data_file, expr, pages=True).column("id").to_pylist() == [12]
    assert taken[-1] is True


# ---- found in review: order, fork, failures, odd files -----------------------------------------


def test_rows_keep_the_files_order_over_several_row_groups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A filter repeating a term makes DataFusion factor it out and, with several partitions,
    merge them in any order: the read runs one partition."""
    taken = page_reads(monkeypatch)
    monkeypatch.setattr(page_index, "MIN_ROWS", 1000)
    path = tmp_path / "groups.parquet"
    table = pa.Table.from_arrays(_columns(), schema=schema_to_arrow(SCHEMA))
    pq.write_table(table, path, row_group_size=ROWS // 4, data_page_size=8 << 10, write_page_index=True)
    key = ["key-0000097" if i % 97 == 0 else f"key-{i:07d}" for i in range(0, ROWS, 1000)]
    expr = or_(
        or_(and_(is_in("s", key), less_than("id", ROWS // 3)), equal("id", 5)),
        and_(is_in("s", key), greater_than("id", ROWS * 2 // 3)),
    )
    for _ in range(5):  # (the order of merged partitions varies from run to run)
        found = _read(path, expr, pages=True)
        _assert_same(found, _read(path, expr, pages=False), expr)
    assert taken == [True] * 5


_OUTSIDE_USE_THEN_FORK = """
import multiprocessing, sys
import datafusion
import pyarrow as pa
from icefloe.arrow import page_index
from icefloe.arrow.page_index import page_predicate
from icefloe.arrow.reader import read_parquet
from icefloe.arrow.row_filter import to_arrow_expression
from icefloe.expressions import bind, equal
from icefloe.spec.schema import Schema
from icefloe.spec.types import LongType, NestedField

def read(queue):
    page_index.MIN_ROWS = 1000
    schema = Schema(NestedField(1, "id", LongType(), required=True))
    bound = bind(schema, equal("id", 12))
    batches = read_parquet(None, sys.argv[1], projected=schema, row_filter=to_arrow_expression(bound, schema),
                           page_filter=page_predicate(bound, schema))
    queue.put([i for b in batches for i in b.column(0).to_pylist()])

if __name__ == "__main__":
    datafusion.SessionContext().sql("select 1").collect()  # the application's own use
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=read, args=(queue,))
    child.start()
    child.join(timeout=60)
    if child.is_alive():
        child.kill()
        print("hung")
    else:
        print(child.exitcode, queue.get(timeout=5))
"""


def test_a_child_of_a_process_that_ran_datafusion_itself_reads_with_pyarrow(
    data_file: Path, tmp_path: Path
) -> None:
    """The application ran DataFusion, not icefloe: its runtime is in the child all the same."""
    import subprocess
    import sys

    script = tmp_path / "fork.py"
    script.write_text(_OUTSIDE_USE_THEN_FORK)
    done = subprocess.run(
        [sys.executable, str(script), str(data_file)], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "0 [12]", done.stderr


def test_a_file_datafusion_cannot_read_is_read_by_pyarrow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DataFusion checks that strings are UTF-8, pyarrow does not: rows are read ahead, so the
    failure comes before any row is handed on, and pyarrow reads the file."""
    taken = page_reads(monkeypatch)
    strings = [f"v{i}".encode() for i in range(ROWS)]
    strings[ROWS - 10] = b"\xff\xfe not utf-8"
    schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "s", StringType()))
    table = pa.Table.from_arrays(
        [pa.array(np.arange(ROWS, dtype=np.int64)), pa.array(strings, pa.binary()).view(pa.string())],
        schema=schema_to_arrow(schema),
    )
    path = tmp_path / "bad-utf8.parquet"
    pq.write_table(table, path, row_group_size=ROWS, data_page_size=4 << 10, write_page_index=True)
    expr = or_(less_than("id", 100), greater_than("id", ROWS - 20))
    found = _read(path, expr, pages=True, schema=schema)
    assert found.column("id").to_pylist() == [*range(100), *range(ROWS - 19, ROWS)]
    assert taken == [False]


def test_files_with_a_repeated_field_id_or_without_ids_are_not_pushed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken = page_reads(monkeypatch)
    schema = Schema(NestedField(1, "id", LongType(), required=True))
    ids = np.arange(ROWS, dtype=np.int64)
    field_id = {b"PARQUET:field_id": b"1"}
    repeated = pa.Table.from_arrays(
        [pa.array(ids), pa.array(ids[::-1].copy())],
        schema=pa.schema(
            [pa.field("id", pa.int64(), False, field_id), pa.field("old", pa.int64(), False, field_id)]
        ),
    )
    path = tmp_path / "repeated.parquet"
    pq.write_table(repeated, path, row_group_size=ROWS, data_page_size=4 << 10, write_page_index=True)
    assert _read(path, equal("id", 12), pages=True, schema=schema).column("id").to_pylist() == [12]
    assert taken == [False]
    # no field ids: columns are matched by the table's name mapping, which the filter does not use
    plain = tmp_path / "plain.parquet"
    pq.write_table(
        pa.table({"id": ids}), plain, row_group_size=ROWS, data_page_size=4 << 10, write_page_index=True
    )
    from icefloe.spec.name_mapping import create_mapping_from_schema

    found = _read(
        plain, equal("id", 12), pages=True, schema=schema, name_mapping=create_mapping_from_schema(schema)
    )
    assert found.column("id").to_pylist() == [12]
    assert taken == [False, False]


def test_promoted_and_missing_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An int column read as long (literals that do not fit an int are not pushed), and a
    column added after the file was written (all null)."""
    taken = page_reads(monkeypatch)
    written = Schema(NestedField(1, "id", IntegerType(), required=True))
    path = tmp_path / "ints.parquet"
    table = pa.Table.from_arrays([pa.array(np.arange(ROWS, dtype=np.int32))], schema=schema_to_arrow(written))
    pq.write_table(table, path, row_group_size=ROWS, data_page_size=4 << 10, write_page_index=True)
    current = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "added", StringType()))
    cases = [
        (and_(greater_than_or_equal("id", 500), less_than("id", 510)), list(range(500, 510)), True),
        (or_(equal("id", 7), equal("id", 1 << 40)), [7], False),  # 2**40 is no int: not pushed
        (and_(equal("id", 9), is_null("added")), [9], True),
        (and_(equal("id", 9), not_null("added")), [], True),
        (or_(equal("id", 9), equal("added", "x")), [9], False),  # the file lacks "added"
    ]
    for expr, ids, pushed in cases:
        del taken[:]
        found = _read(path, expr, pages=True, schema=current)
        assert found.column("id").to_pylist() == ids, str(expr)
        _assert_same(found, _read(path, expr, pages=False, schema=current), expr)
        assert taken == [pushed], str(expr)


def test_files_of_any_name_are_read(data_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not only ``.parquet``: Impala writes ``.parq``, and a file needs no extension at all."""
    taken = page_reads(monkeypatch)
    for name in ("data.parq", "data"):
        path = tmp_path / name
        path.write_bytes(data_file.read_bytes())
        assert _read(path, equal("id", 12), pages=True).column("id").to_pylist() == [12]
    assert taken == [True, True]
