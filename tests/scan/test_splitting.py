"""Split planning (Java's ``TableScanUtil.splitFiles`` + ``planTasks``) and reading a split.

The packing vectors are the behaviour of Java's ``BinPacking`` (its own test suite's cases);
``tests/interop/test_java_splits.py`` compares whole plans with Java's.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icefloe.arrow.reader import ROW_POSITION_ID, read_parquet, row_groups_in_range, split_row_ranges
from icefloe.errors import ValidationError
from icefloe.expressions import always_true
from icefloe.io import load_file_io
from icefloe.scan import (
    CombinedScanTask,
    FileScanTask,
    SplitOptions,
    merge_tasks,
    plan_task_groups,
    split_task,
    task_row_count,
)
from icefloe.scan.splitting import pack, split_tasks, task_weight
from icefloe.spec.manifest import DataFile, DeleteFile, FileContent, FileFormat
from icefloe.spec.partitioning import UNPARTITIONED_SPEC
from icefloe.spec.schema import Schema
from icefloe.spec.types import LongType, NestedField, StringType
from icefloe.write import split_offsets

MiB = 1024 * 1024


def data_file(
    path: str = "s3://b/t/data/f.parquet",
    size: int = 1000,
    offsets: tuple[int, ...] | None = None,
    records: int = 100,
    file_format: FileFormat = FileFormat.PARQUET,
) -> DataFile:
    return DataFile(
        file_path=path,
        file_format=file_format,
        record_count=records,
        file_size_in_bytes=size,
        split_offsets=offsets,
    )


def delete_file(size: int, *, dv_size: int | None = None) -> DeleteFile:
    return DeleteFile(
        file_path=f"s3://b/t/data/d-{size}-{dv_size}.{'puffin' if dv_size else 'parquet'}",
        file_format=FileFormat.PUFFIN if dv_size else FileFormat.PARQUET,
        record_count=1,
        file_size_in_bytes=size,
        content=FileContent.POSITION_DELETES,
        content_offset=4 if dv_size else None,
        content_size_in_bytes=dv_size,
    )


def task(file: DataFile, deletes: tuple[DeleteFile, ...] = ()) -> FileScanTask:
    return FileScanTask(
        file=file,
        deletes=deletes,
        residual=always_true(),
        spec=UNPARTITIONED_SPEC,
        start=0,
        length=file.file_size_in_bytes,
    )


def ranges(tasks: list[FileScanTask]) -> list[tuple[int, int]]:
    return [(t.start, t.length) for t in tasks]


# ---------------------------------------------------------------------------------------------
# options


def test_split_options_defaults_are_javas() -> None:
    options = SplitOptions.resolve({}, {})
    assert (options.split_size, options.lookback, options.open_file_cost) == (128 * MiB, 10, 4 * MiB)


def test_scan_options_override_table_properties_and_spark_names_win() -> None:
    properties = {
        "read.split.target-size": "1000",
        "read.split.planning-lookback": "3",
        "read.split.open-file-cost": "7",
    }
    assert SplitOptions.resolve(properties, {}) == SplitOptions(1000, 3, 7)
    scan = {"read.split.target-size": "2000", "read.split.open-file-cost": "0"}
    assert SplitOptions.resolve(properties, scan) == SplitOptions(2000, 3, 0)
    spark = {**scan, "split-size": "3000", "lookback": "1", "file-open-cost": "9"}
    assert SplitOptions.resolve(properties, spark) == SplitOptions(3000, 1, 9)


@pytest.mark.parametrize(
    ("properties", "options", "message"),
    [
        ({"read.split.target-size": "0"}, {}, r"read\.split\.target-size.*0"),
        ({}, {"split-size": "-5"}, r"read\.split\.target-size.*-5"),
        ({}, {"read.split.planning-lookback": "0"}, r"read\.split\.planning-lookback"),
        ({}, {"read.split.open-file-cost": "-1"}, r"read\.split\.open-file-cost"),
        ({"read.split.target-size": "128m"}, {}, r"table property 'read\.split\.target-size'.*128m"),
        ({}, {"lookback": "ten"}, r"scan option 'lookback'.*ten"),
    ],
)
def test_invalid_split_options_are_named(
    properties: dict[str, str], options: dict[str, str], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        SplitOptions.resolve(properties, options)


# ---------------------------------------------------------------------------------------------
# splitting


def test_split_at_offsets_one_split_per_row_group() -> None:
    parent = task(data_file(size=1000, offsets=(4, 300, 700)))
    splits = split_task(parent, 100)  # the split size does not cut row groups
    assert ranges(splits) == [(4, 296), (300, 400), (700, 300)]
    assert all(s.file is parent.file and s.residual is parent.residual for s in splits)
    assert not any(s.is_whole_file for s in splits)


def test_split_without_offsets_at_the_split_size() -> None:
    assert ranges(split_task(task(data_file(size=1000)), 300)) == [
        (0, 300),
        (300, 300),
        (600, 300),
        (900, 100),
    ]
    assert ranges(split_task(task(data_file(size=1000)), 1000)) == [(0, 1000)]
    assert ranges(split_task(task(data_file(size=1000)), 5000)) == [(0, 1000)]


@pytest.mark.parametrize(
    "offsets",
    [
        (4, 300, 1000),  # the last offset is not before the end: Java drops the list
        (4, 300, 300),  # not strictly increasing
        (4, 700, 300),  # not sorted
        (),
    ],
)
def test_unusable_offsets_fall_back_to_fixed_size(offsets: tuple[int, ...]) -> None:
    assert ranges(split_task(task(data_file(size=1000, offsets=offsets)), 400)) == [
        (0, 400),
        (400, 400),
        (800, 200),
    ]


def test_empty_file_has_no_split_and_parts_are_not_split_again() -> None:
    assert split_task(task(data_file(size=0)), 100) == []
    part = split_task(task(data_file(size=1000)), 300)[1]
    assert split_task(part, 10) == [part]


def test_split_size_must_be_positive() -> None:
    with pytest.raises(ValidationError, match="split size"):
        split_task(task(data_file()), 0)


# ---------------------------------------------------------------------------------------------
# packing


@pytest.mark.parametrize(
    ("items", "target", "lookback", "largest_first", "expected"),
    [
        ([1, 2, 3, 4, 5], 3, 1 << 30, False, [[1, 2], [3], [4], [5]]),
        ([1, 2, 3, 4, 5], 6, 1 << 30, False, [[1, 2, 3], [4], [5]]),
        ([1, 2, 3, 4, 5], 9, 1 << 30, False, [[1, 2, 3], [4, 5]]),
        ([1, 2, 3, 4, 5], 15, 1 << 30, False, [[1, 2, 3, 4, 5]]),
        ([5, 1, 5, 1, 5, 1], 8, 1 << 30, False, [[5, 1, 1, 1], [5], [5]]),
        ([5, 1, 5, 1, 5, 1], 8, 2, False, [[5, 1, 1], [5, 1], [5]]),
        ([5, 1, 5, 1, 5, 1], 8, 1, False, [[5, 1], [5, 1], [5, 1]]),
        ([36, 36, 36, 36, 65, 65, 128], 128, 2, True, [[36, 36, 36], [128], [36, 65], [65]]),
        ([64, 64, 128, 32, 32, 32, 32], 128, 1, True, [[64, 64], [128], [32, 32, 32, 32]]),
        # an item heavier than the target gets a bin of its own
        ([10, 500, 10], 100, 5, True, [[10, 10], [500]]),
        # equal weights: the oldest of the heaviest bins leaves first
        ([6, 6, 6, 1], 10, 2, True, [[6], [6, 1], [6]]),
    ],
)
def test_pack_is_javas_bin_packing(
    items: list[int], target: int, lookback: int, largest_first: bool, expected: list[list[int]]
) -> None:
    assert list(pack(items, target, lookback, lambda x: x, largest_bin_first=largest_first)) == expected


def test_pack_lookback_must_be_positive() -> None:
    with pytest.raises(ValidationError, match="look-back"):
        list(pack([1], 10, 0, lambda x: x))


def test_weight_counts_delete_files_and_the_open_cost() -> None:
    big = task(data_file(size=100 * MiB))
    assert task_weight(big, 4 * MiB) == 100 * MiB
    small = task(data_file(size=1000))
    assert task_weight(small, 4 * MiB) == 4 * MiB
    with_deletes = task(data_file(size=10 * MiB), (delete_file(3 * MiB), delete_file(1000)))
    assert with_deletes.size_bytes == 13 * MiB + 1000
    assert with_deletes.files_count == 3
    assert task_weight(with_deletes, 5 * MiB) == 3 * 5 * MiB  # three files to open
    assert task_weight(with_deletes, 1 * MiB) == 13 * MiB + 1000
    # a deletion vector weighs its blob, not the whole Puffin file
    with_dv = task(data_file(size=10 * MiB), (delete_file(50 * MiB, dv_size=2000),))
    assert with_dv.size_bytes == 10 * MiB + 2000


def test_plan_task_groups_splits_and_packs_in_planning_order() -> None:
    a = data_file("s3://b/a.parquet", size=1000, offsets=(4, 400, 800), records=300)
    b = data_file("s3://b/b.parquet", size=500, records=50)
    c = data_file("s3://b/c.parquet", size=250, offsets=(4,), records=10)
    options = SplitOptions(split_size=1000, lookback=10, open_file_cost=100)
    groups = plan_task_groups([task(a), task(b), task(c)], options)
    # splits: a 396, 400, 200; b 500 (fits, no offsets); c 246
    # bins: [396, 400] -> 200 fits (996); 500 new bin; 246 joins it (746)
    # a's three neighbouring splits in one group are merged back into one range
    assert [[(t.file_path, t.start, t.length) for t in g.tasks] for g in groups] == [
        [("s3://b/a.parquet", 4, 996)],
        [("s3://b/b.parquet", 0, 500), ("s3://b/c.parquet", 4, 246)],
    ]
    assert [g.size_bytes for g in groups] == [996, 746]
    assert [g.files_count for g in groups] == [1, 2]
    assert isinstance(groups[0], CombinedScanTask) and groups[0].files() == groups[0].tasks
    assert [g.estimated_rows_count for g in groups] == [300, 50 + 10]
    # smaller groups: a's splits land in different groups and stay apart
    small = plan_task_groups(
        [task(a), task(b), task(c)], SplitOptions(split_size=500, lookback=1, open_file_cost=0)
    )
    # open bins: [396]; 400 opens a second, the heavier (400) leaves; 200 opens one, [396]
    # leaves; 500 opens one and leaves; 246 joins [200]
    assert [[(t.start, t.length) for t in g.tasks] for g in small] == [
        [(400, 400)],
        [(4, 396)],
        [(0, 500)],
        [(800, 200), (4, 246)],
    ]
    # estimated rows: a's 300 rows over its 996 row-group bytes, per split
    assert [g.estimated_rows_count for g in small] == [
        int(400 / 996 * 300),
        int(396 / 996 * 300),
        50,
        60 + 10,
    ]


def test_plan_task_groups_with_the_open_cost_keeps_small_files_apart() -> None:
    files = [task(data_file(f"s3://b/{i}.parquet", size=10)) for i in range(5)]
    groups = plan_task_groups(files, SplitOptions(split_size=100, lookback=10, open_file_cost=40))
    assert [len(g) for g in groups] == [2, 2, 1]
    assert plan_task_groups([], SplitOptions()) == []


def test_estimated_rows_count_of_whole_files() -> None:
    assert task(data_file(size=1004, offsets=(4,), records=77)).estimated_rows_count == 77
    assert task(data_file(size=1000, records=77)).estimated_rows_count == 77


def test_merge_tasks_joins_neighbouring_splits_of_one_file() -> None:
    a = split_task(task(data_file("s3://b/a.parquet", size=1000)), 250)
    b = split_task(task(data_file("s3://b/b.parquet", size=1000)), 500)
    merged = merge_tasks([a[0], a[1], b[0], a[3], b[1]])
    assert [(t.file_path, t.start, t.length) for t in merged] == [
        ("s3://b/a.parquet", 0, 500),
        ("s3://b/b.parquet", 0, 500),
        ("s3://b/a.parquet", 750, 250),
        ("s3://b/b.parquet", 500, 500),
    ]
    whole = task(data_file("s3://b/c.parquet"))
    assert merge_tasks([whole, whole]) == [whole, whole]  # whole files are not splits
    (all_of_a,) = merge_tasks(a)
    assert (all_of_a.start, all_of_a.length) == (0, 1000)


# ---------------------------------------------------------------------------------------------
# reading a split

SCHEMA = Schema(
    NestedField(1, "n", LongType(), required=True),
    NestedField(2, "s", StringType()),
)
WITH_POS = Schema(*SCHEMA.fields, NestedField(ROW_POSITION_ID, "_pos", LongType()))
ROWS = 2000


@pytest.fixture(scope="module")
def many_groups(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, DataFile]:
    """2000 rows in 40 row groups (dictionary-encoded strings, so groups start at a dictionary page)."""
    path = tmp_path_factory.mktemp("splits") / "f.parquet"
    n = np.arange(ROWS, dtype=np.int64)
    data = pa.table(
        {
            "n": pa.array(n),
            "s": pa.array([None if i % 11 == 0 else f"v{i % 13}" for i in range(ROWS)]),
        },
        schema=pa.schema(
            [
                pa.field("n", pa.int64(), nullable=False, metadata={b"PARQUET:field_id": b"1"}),
                pa.field("s", pa.string(), metadata={b"PARQUET:field_id": b"2"}),
            ]
        ),
    )
    pq.write_table(data, path, row_group_size=50)
    metadata = pq.read_metadata(path)
    assert metadata.num_row_groups == 40
    file = data_file(str(path), size=path.stat().st_size, offsets=split_offsets(metadata), records=ROWS)
    return str(path), file


def read_splits(
    path: str,
    splits: list[FileScanTask],
    *,
    deletes: np.ndarray | None = None,
    row_filter: pc.Expression | None = None,
) -> list[int]:
    positions: list[int] = []
    for split in splits:
        for batch in read_parquet(
            None,
            path,
            projected=WITH_POS,
            byte_range=(split.start, split.length),
            positions_to_delete=deletes,
            row_filter=row_filter,
            batch_size=37,
        ):
            assert batch.column("n").to_pylist() == batch.column("_pos").to_pylist()  # n == position
            positions.extend(batch.column("_pos").to_pylist())
    return positions


@pytest.mark.parametrize("split_size", ["offsets", 97, 999, 4096, 10_000, 1 << 40])
def test_reading_every_split_reads_every_row_once(
    many_groups: tuple[str, DataFile], split_size: object
) -> None:
    path, file = many_groups
    parent = task(
        file if split_size == "offsets" else data_file(path, size=file.file_size_in_bytes, records=ROWS)
    )
    splits = split_task(parent, 1 << 20 if split_size == "offsets" else int(split_size))  # type: ignore[call-overload]
    if split_size == "offsets":
        assert len(splits) == 40
    assert read_splits(path, splits) == list(range(ROWS))


@pytest.mark.parametrize("split_size", ["offsets", 3000])
def test_splits_with_deletes_and_a_filter_read_the_whole_files_rows(
    many_groups: tuple[str, DataFile], split_size: object
) -> None:
    path, file = many_groups
    parent = task(
        file if split_size == "offsets" else data_file(path, size=file.file_size_in_bytes, records=ROWS)
    )
    splits = split_task(parent, 1 << 20 if split_size == "offsets" else int(split_size))  # type: ignore[call-overload]
    # deletes in every part of the file, including whole row groups (50..99, 1000..1049)
    deletes = np.unique(np.concatenate([np.arange(0, ROWS, 7), np.arange(50, 100), np.arange(1000, 1050)]))
    row_filter = (pc.field("n") != 999) & pc.field("s").is_valid()
    expected = [i for i in range(ROWS) if i not in set(deletes.tolist()) and i != 999 and i % 11 != 0]
    assert read_splits(path, splits, deletes=deletes, row_filter=row_filter) == expected
    # a filter that prunes row groups by statistics: only rows 500..549 remain
    narrow = (pc.field("n") >= 500) & (pc.field("n") < 550)
    assert read_splits(path, splits, deletes=deletes, row_filter=narrow) == [
        i for i in range(500, 550) if i not in set(deletes.tolist())
    ]


def test_a_split_reads_only_its_row_groups(many_groups: tuple[str, DataFile]) -> None:
    path, file = many_groups
    splits = split_task(task(file), 1 << 20)
    assert read_splits(path, [splits[3]]) == list(range(150, 200))
    assert read_splits(path, [splits[0], splits[39]]) == [*range(0, 50), *range(1950, 2000)]
    assert split_row_ranges(None, path, splits[3].start, splits[3].length) == [(150, 50)]
    merged = merge_tasks(splits[10:13])
    assert len(merged) == 1
    assert split_row_ranges(None, path, merged[0].start, merged[0].length) == [
        (500, 50),
        (550, 50),
        (600, 50),
    ]
    # a range inside a row group, short of its midpoint, reads nothing
    assert (
        read_splits(path, [FileScanTask(file, (), always_true(), UNPARTITIONED_SPEC, splits[3].start, 2)])
        == []
    )


@settings(max_examples=200, deadline=None)
@given(cuts=st.lists(st.integers(min_value=1, max_value=1 << 20), max_size=30))
def test_any_tiling_of_the_file_selects_each_row_group_once(
    many_groups: tuple[str, DataFile], cuts: list[int]
) -> None:
    path, file = many_groups
    metadata = pq.read_metadata(path)
    size = file.file_size_in_bytes
    bounds = sorted({0, size, *(c % size for c in cuts)})
    selected: list[int] = []
    for start, end in itertools.pairwise(bounds):
        selected.extend(row_groups_in_range(metadata, start, end - start))
    assert selected == list(range(40))


def test_row_count_of_splits(tmp_path: Path, many_groups: tuple[str, DataFile]) -> None:
    path, file = many_groups
    io = load_file_io({}, str(tmp_path))
    splits = split_task(task(file), 1 << 20)
    assert sum(task_row_count(io, s) for s in splits) == ROWS
    assert task_row_count(io, splits[5]) == 50
    deletes = Path(tmp_path) / "deletes.parquet"
    positions = [0, 3, 250, 251, 1999]
    pq.write_table(pa.table({"file_path": [path] * len(positions), "pos": positions}), deletes)
    deleted = replace(splits[5], deletes=(delete_file(deletes.stat().st_size),))
    deleted = replace(deleted, deletes=(replace(deleted.deletes[0], file_path=str(deletes)),))
    assert task_row_count(io, deleted) == 48
    whole = replace(task(file), deletes=deleted.deletes)
    assert task_row_count(io, whole) == ROWS - 5


@st.composite
def _planned(draw: st.DrawFn) -> list[FileScanTask]:
    tasks = []
    for index in range(draw(st.integers(0, 12))):
        size = draw(st.integers(0, 2000))
        kind = draw(st.sampled_from(["none", "offsets", "bad"]))
        offsets: tuple[int, ...] | None = None
        if kind == "offsets" and size > 8:
            cuts = draw(st.lists(st.integers(5, size - 1), max_size=6, unique=True))
            offsets = (4, *sorted(cuts))
        elif kind == "bad":
            offsets = (4, 4, size)
        file = data_file(
            f"s3://b/{index}.parquet", size=size, offsets=offsets, records=draw(st.integers(0, 99))
        )
        deletes = tuple(delete_file(draw(st.integers(1, 900))) for _ in range(draw(st.integers(0, 2))))
        tasks.append(task(file, deletes))
    return tasks


@settings(max_examples=200, deadline=None)
@given(
    tasks=_planned(),
    split_size=st.integers(16, 3000),
    lookback=st.integers(1, 4),
    open_file_cost=st.integers(0, 800),
)
def test_plan_task_groups_is_split_pack_merge(
    tasks: list[FileScanTask], split_size: int, lookback: int, open_file_cost: int
) -> None:
    # the planner's fast path equals the composition of the public steps (Java's algorithm)
    groups = plan_task_groups(tasks, SplitOptions(split_size, lookback, open_file_cost))
    reference = [
        merge_tasks(group)
        for group in pack(
            list(split_tasks(tasks, split_size)),
            split_size,
            lookback,
            lambda t: task_weight(t, open_file_cost),
        )
    ]
    assert [[(t.file_path, t.start, t.length, t.deletes) for t in g.tasks] for g in groups] == [
        [(t.file_path, t.start, t.length, t.deletes) for t in group] for group in reference
    ]
    assert sum(g.size_bytes for g in groups) == sum(t.size_bytes for group in reference for t in group)
