"""Reading tasks concurrently: the same batches in the same order as reading them in turn,
errors where reading in turn raises them, bounded buffering, and string columns kept
dictionary-encoded on request."""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections.abc import Iterator

import pandas as pd
import pyarrow as pa
import pytest

from icefloe import Catalog, Table
from icefloe.errors import InvalidDataFileError, UnsupportedFeatureError, ValidationError
from icefloe.scan import read_batches
from icefloe.scan._concurrent import ordered
from support.catalogs import ARROW_SCHEMA, local, rows

# ---- the ordered pipeline ----------------------------------------------------------------------


def test_items_come_in_source_order() -> None:
    def source(k: int) -> Iterator[int]:
        for i in range(5):
            time.sleep(0.001 * ((k * 7 + i) % 3))  # sources finish in another order
            yield k * 10 + i

    items = list(ordered([lambda k=k: source(k) for k in range(12)], ahead=4, buffered=2))
    assert items == [k * 10 + i for k in range(12) for i in range(5)]


def test_only_the_first_source_starts_before_the_first_item() -> None:
    started: list[int] = []

    def source(k: int) -> Iterator[int]:
        started.append(k)
        yield k

    items = ordered([lambda k=k: source(k) for k in range(5)], ahead=4, buffered=1)
    assert next(items) == 0
    time.sleep(0.05)
    assert started == [0]
    assert list(items) == [1, 2, 3, 4]
    assert sorted(started) == [0, 1, 2, 3, 4]


def test_eager_starts_ahead_sources_before_the_first_item() -> None:
    started: list[int] = []
    gate = threading.Event()

    def source(k: int) -> Iterator[int]:
        started.append(k)
        if k == 0:
            gate.wait(5)  # the first item waits until the others have started
        yield k

    items = ordered([lambda k=k: source(k) for k in range(6)], ahead=3, buffered=1, eager=True)
    first = threading.Thread(target=lambda: gate.set() if _waited_for(started, 3) else None)
    first.start()
    assert next(items) == 0
    first.join()
    assert sorted(started[:3]) == [0, 1, 2]
    assert list(items) == [1, 2, 3, 4, 5]


def test_eager_reads_a_single_source_in_the_callers_thread() -> None:
    threads: list[str] = []

    def source() -> Iterator[int]:
        threads.append(threading.current_thread().name)
        yield from (1, 2)

    assert list(ordered([source], ahead=4, buffered=1, eager=True)) == [1, 2]
    assert threads == [threading.current_thread().name]
    assert list(ordered([source, source], ahead=4, buffered=1, eager=True)) == [1, 2, 1, 2]
    assert all(name.startswith("icefloe-read") for name in threads[1:])


def _eager_sum() -> int:
    return sum(ordered([lambda k=k: iter([k, k]) for k in range(6)], ahead=3, buffered=1, eager=True))


def test_eager_calls_work_in_a_forked_child() -> None:
    # the parent's shared pool has threads; a forked child has none and must make its own
    assert _eager_sum() == 30
    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.apply_async(_eager_sum).get(timeout=30) == 30


def _waited_for(started: list[int], count: int) -> bool:
    deadline = time.monotonic() + 5
    while len(started) < count and time.monotonic() < deadline:
        time.sleep(0.005)
    return len(started) >= count


def test_a_source_holds_a_bounded_number_of_items() -> None:
    made: list[int] = []

    def endless() -> Iterator[int]:
        while True:
            made.append(1)
            yield len(made)

    items = ordered([endless], ahead=2, buffered=3)
    assert next(items) == 1
    time.sleep(0.1)
    assert len(made) <= 1 + 3 + 1  # the one taken, the queue, the one waiting to be put
    items.close()  # the thread stops at its next item
    time.sleep(0.2)
    count = len(made)
    time.sleep(0.1)
    assert len(made) == count


def test_an_error_comes_after_the_items_before_it() -> None:
    def failing() -> Iterator[int]:
        yield 10
        raise RuntimeError("boom")

    items = ordered([lambda: iter([1, 2]), failing, lambda: iter([3])], ahead=3, buffered=1)
    assert next(items) == 1
    assert next(items) == 2
    assert next(items) == 10
    with pytest.raises(RuntimeError, match="boom"):
        next(items)


def test_threads_end_with_the_consumer() -> None:
    before = threading.active_count()

    def slow() -> Iterator[int]:
        for i in range(1000):
            time.sleep(0.001)
            yield i

    items = ordered([slow] * 6, ahead=4, buffered=2)
    next(items)
    next(items)
    items.close()
    deadline = time.monotonic() + 5
    while threading.active_count() > before and time.monotonic() < deadline:
        time.sleep(0.02)
    assert threading.active_count() <= before


# ---- reading tables ----------------------------------------------------------------------------


@pytest.fixture
def many_files(memory_catalog: Catalog) -> Table:
    table = memory_catalog.create_table("db.many", ARROW_SCHEMA, partition_by=["day"])
    for start in range(0, 120, 12):
        table.append(rows(12, start=start))
    return table


def test_concurrent_reads_equal_reads_in_turn(many_files: Table) -> None:
    tasks = many_files.new_scan().plan_files()
    assert len(tasks) >= 10
    schema = many_files.schema()
    args = (many_files.io(), many_files.metadata, tasks, schema)
    in_turn = list(read_batches(*args, batch_size=3, read_ahead=1))
    concurrent = list(read_batches(*args, batch_size=3, read_ahead=6))
    assert [b.to_pylist() for b in concurrent] == [b.to_pylist() for b in in_turn]
    assert sum(b.num_rows for b in concurrent) == 120


def test_a_missing_file_fails_after_the_rows_before_it(many_files: Table) -> None:
    tasks = many_files.new_scan().plan_files()
    local(tasks[5].file.file_path).unlink()
    batches = read_batches(many_files.io(), many_files.metadata, tasks, many_files.schema(), read_ahead=4)
    seen = 0
    with pytest.raises(InvalidDataFileError, match="does not exist") as raised:
        for batch in batches:
            seen += batch.num_rows
    assert seen == sum(t.file.record_count for t in tasks[:5])
    assert tasks[5].file.file_path.removeprefix("file://") in str(raised.value)


def test_dictionary_columns(many_files: Table) -> None:
    plain = many_files.new_scan().to_arrow()
    encoded = many_files.new_scan().to_arrow(dictionary_columns=["name"])
    assert pa.types.is_dictionary(encoded.schema.field("name").type)
    assert encoded.schema.field("name").type.value_type == pa.string()
    assert encoded.column("name").to_pylist() == plain.column("name").to_pylist()
    others = [n for n in plain.schema.names if n != "name"]
    assert encoded.select(others).equals(plain.select(others))
    # True: every string column; selection and filters keep it.
    selected = many_files.new_scan().filter("id < 30").select("name", "id").to_arrow(dictionary_columns=True)
    assert pa.types.is_dictionary(selected.schema.field("name").type)
    assert sorted(selected.column("id").to_pylist()) == list(range(30))
    batches = list(many_files.new_scan().to_batches(batch_size=5, dictionary_columns=True))
    assert all(pa.types.is_dictionary(b.schema.field("name").type) for b in batches)
    frame = many_files.new_scan().to_pandas(dictionary_columns=["name"])
    assert isinstance(frame["name"].dtype, pd.CategoricalDtype)
    assert (
        frame["name"].astype(object).where(frame["name"].notna(), None).tolist()
        == plain.column("name").to_pylist()
    )


def test_dictionary_columns_of_other_types_or_unknown_names_fail(many_files: Table) -> None:
    with pytest.raises(ValidationError, match="'id'"):
        many_files.new_scan().to_arrow(dictionary_columns=["id"])
    with pytest.raises(ValidationError, match="'nope'"):
        many_files.new_scan().to_arrow(dictionary_columns=["nope"])
    with pytest.raises(UnsupportedFeatureError):
        many_files.new_incremental_changelog_scan().to_arrow(dictionary_columns=True)
