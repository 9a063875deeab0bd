"""Split planning: planned file tasks into byte-range splits, splits into balanced task groups.

This is Java's ``TableScanUtil.splitFiles`` + ``TableScanUtil.planTasks``, step for step, so
icefloe plans the same splits and the same groups as Java for the same input order:

1. **Splitting** (``BaseContentScanTask.split``): a data file whose ``split_offsets`` are usable
   (present, strictly increasing, the last one before the end of the file) becomes one split
   per offset, from that offset to the next (the last one to the end of the file). Row groups
   are never cut. Any other file is cut into pieces of ``split_size`` bytes (the last shorter);
   a file of 0 bytes yields no split, as in Java.
2. **Packing** (``BinPacking.PackingIterable`` with largest-bin-first): splits are placed in the
   first open bin they fit (by weight, target ``split_size``); when more than ``lookback`` bins
   are open, the heaviest leaves as a group. A split's weight is ``max(length + delete bytes,
   (1 + deletes) * open_file_cost)``: deletes are read with each split, and every opened file
   costs at least ``open_file_cost``.
3. **Merging** (``BaseCombinedScanTask``): within a group, neighbouring splits of one file whose
   ranges touch become one task (:func:`merge_tasks`), so a reader opens the file once.

Readers read a split's row groups by Parquet's rule (a row group belongs to the split that holds
its midpoint; see :func:`icefloe.arrow.reader.read_parquet`), so reading every split of a file
reads each row group exactly once.

The knobs are the table properties ``read.split.target-size`` (128 MiB),
``read.split.planning-lookback`` (10) and ``read.split.open-file-cost`` (4 MiB); a scan's
``option(...)`` overrides them under the same names or Spark's read-option names
(``split-size``, ``lookback``, ``file-open-cost``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from icefloe.errors import ValidationError
from icefloe.scan.tasks import FileScanTask, usable_split_offsets
from icefloe.spec.manifest import FileFormat
from icefloe.spec.properties import (
    SPLIT_LOOKBACK,
    SPLIT_LOOKBACK_DEFAULT,
    SPLIT_OPEN_FILE_COST,
    SPLIT_OPEN_FILE_COST_DEFAULT,
    SPLIT_SIZE,
    SPLIT_SIZE_DEFAULT,
)

__all__ = [
    "CombinedScanTask",
    "ScanTaskGroup",
    "SplitOptions",
    "merge_tasks",
    "pack",
    "plan_task_groups",
    "split_task",
    "split_tasks",
    "task_weight",
]


# Spark's read options (SparkReadOptions) for the same knobs; they win over the table's.
_SPARK_NAMES = {SPLIT_SIZE: "split-size", SPLIT_LOOKBACK: "lookback", SPLIT_OPEN_FILE_COST: "file-open-cost"}

# Formats Java splits (FileFormat.isSplittable): every data file format.
_SPLITTABLE = frozenset({FileFormat.PARQUET, FileFormat.AVRO, FileFormat.ORC})

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class SplitOptions:
    """How a scan splits and groups its files.

    Attributes:
        split_size: the target bytes per task group (and the piece size for files without
            split offsets); ``read.split.target-size``.
        lookback: how many groups stay open for more splits; ``read.split.planning-lookback``.
        open_file_cost: the least weight of each file a split opens; ``read.split.open-file-cost``.

    Raises:
        ValidationError: when ``split_size`` or ``lookback`` is not positive, or
            ``open_file_cost`` is negative (naming the property).
    """

    split_size: int = SPLIT_SIZE_DEFAULT
    lookback: int = SPLIT_LOOKBACK_DEFAULT
    open_file_cost: int = SPLIT_OPEN_FILE_COST_DEFAULT

    def __post_init__(self) -> None:
        if self.split_size <= 0:
            raise ValidationError(f"invalid split size ({SPLIT_SIZE}): {self.split_size}; must be positive")
        if self.lookback <= 0:
            raise ValidationError(
                f"invalid split planning lookback ({SPLIT_LOOKBACK}): {self.lookback}; must be positive"
            )
        if self.open_file_cost < 0:
            raise ValidationError(
                f"invalid file open cost ({SPLIT_OPEN_FILE_COST}): {self.open_file_cost}; must not be negative"
            )

    @classmethod
    def resolve(
        cls, table_properties: Mapping[str, str], scan_options: Mapping[str, str] | None = None
    ) -> SplitOptions:
        """The options of a scan: its ``option()`` values (Spark's name first, then the
        property's name), else the table property, else Java's default."""
        options = scan_options or {}

        def value(name: str, default: int) -> int:
            for source, key in (
                ("scan option", _SPARK_NAMES[name]),
                ("scan option", name),
                ("table property", name),
            ):
                found = (options if source == "scan option" else table_properties).get(key)
                if found is None:
                    continue
                try:
                    return int(str(found).strip())
                except ValueError:
                    raise ValidationError(f"{source} '{key}' must be an integer, not {found!r}") from None
            return default

        return cls(
            split_size=value(SPLIT_SIZE, SPLIT_SIZE_DEFAULT),
            lookback=value(SPLIT_LOOKBACK, SPLIT_LOOKBACK_DEFAULT),
            open_file_cost=value(SPLIT_OPEN_FILE_COST, SPLIT_OPEN_FILE_COST_DEFAULT),
        )


@dataclass(frozen=True, slots=True)
class CombinedScanTask:
    """A group of splits read together (Java's ``CombinedScanTask`` / ``ScanTaskGroup``).

    ``tasks`` are in planning order, neighbouring splits of one file already merged into one
    range (as Java's ``BaseCombinedScanTask`` does).
    """

    tasks: tuple[FileScanTask, ...]

    def files(self) -> tuple[FileScanTask, ...]:
        """The tasks (Java's ``CombinedScanTask.files()``)."""
        return self.tasks

    @property
    def size_bytes(self) -> int:
        return sum(task.size_bytes for task in self.tasks)

    @property
    def estimated_rows_count(self) -> int:
        return sum(task.estimated_rows_count for task in self.tasks)

    @property
    def files_count(self) -> int:
        return sum(task.files_count for task in self.tasks)

    def __len__(self) -> int:
        return len(self.tasks)

    def __iter__(self) -> Iterator[FileScanTask]:
        return iter(self.tasks)


#: Java's generic name for a group of scan tasks; icefloe's groups are all CombinedScanTasks.
ScanTaskGroup = CombinedScanTask


# ---------------------------------------------------------------------------------------------
# splitting


def split_task(task: FileScanTask, split_size: int) -> list[FileScanTask]:
    """Java's ``FileScanTask.split(splitSize)``: the task's file as splits.

    A task that already covers only part of its file is returned as it is.
    """
    ranges = _split_ranges(task, split_size)
    if ranges is None:
        return [task]
    return [_split(task, start, length) for start, length in ranges]


def _split_ranges(task: FileScanTask, split_size: int) -> list[tuple[int, int]] | None:
    """``(start, length)`` of each split of ``task``; None when it is not split."""
    if split_size <= 0:
        raise ValidationError(f"invalid split size: {split_size}; must be positive")
    file = task.file
    if not task.is_whole_file or file.file_format not in _SPLITTABLE:
        return None
    offsets = usable_split_offsets(file)
    if offsets is not None and all(a < b for a, b in itertools.pairwise(offsets)):
        ends = (*offsets[1:], task.length)
        return [(start, end - start) for start, end in zip(offsets, ends)]
    return [(start, min(split_size, task.length - start)) for start in range(0, task.length, split_size)]


def _split(task: FileScanTask, start: int, length: int) -> FileScanTask:
    return FileScanTask(
        file=task.file,
        deletes=task.deletes,
        residual=task.residual,
        spec=task.spec,
        start=start,
        length=length,
        data_sequence_number=task.data_sequence_number,
    )


def split_tasks(tasks: Iterable[FileScanTask], split_size: int) -> Iterator[FileScanTask]:
    """Java's ``TableScanUtil.splitFiles``: every task's splits, in order."""
    for task in tasks:
        yield from split_task(task, split_size)


# ---------------------------------------------------------------------------------------------
# packing


class _Bin(Generic[T]):
    __slots__ = ("items", "weight")

    def __init__(self) -> None:
        self.items: list[T] = []
        self.weight = 0


def pack(
    items: Iterable[T],
    target_weight: int,
    lookback: int,
    weight: Callable[[T], int],
    *,
    largest_bin_first: bool = True,
) -> Iterator[list[T]]:
    """Java's ``BinPacking.PackingIterable``: stream ``items`` into bins of about ``target_weight``.

    Each item goes into the first open bin it fits (``bin weight + item weight <= target``), or
    a new bin. When more than ``lookback`` bins are open, one leaves: the heaviest (the first of
    equals) with ``largest_bin_first``, else the oldest. At the end the open bins leave oldest
    first. An item heavier than the target gets a bin of its own.
    """
    if lookback <= 0:
        raise ValidationError(f"bin look-back size must be greater than 0: {lookback}")
    bins: list[_Bin[T]] = []
    for item in items:
        item_weight = weight(item)
        for open_bin in bins:
            if open_bin.weight + item_weight <= target_weight:
                open_bin.items.append(item)
                open_bin.weight += item_weight
                break
        else:
            new_bin: _Bin[T] = _Bin()
            new_bin.items.append(item)
            new_bin.weight = item_weight
            bins.append(new_bin)
            if len(bins) > lookback:
                if largest_bin_first:
                    heaviest = max(range(len(bins)), key=lambda i: bins[i].weight)  # first of equals
                    yield bins.pop(heaviest).items
                else:
                    yield bins.pop(0).items
    for open_bin in bins:
        yield open_bin.items


def task_weight(task: FileScanTask, open_file_cost: int) -> int:
    """A split's weight in packing (Java's ``TableScanUtil.planTasks``): its bytes with its
    delete files, at least ``open_file_cost`` per file it opens."""
    return max(task.size_bytes, task.files_count * open_file_cost)


def plan_task_groups(
    tasks: Iterable[FileScanTask], options: SplitOptions | None = None
) -> list[CombinedScanTask]:
    """Split ``tasks``, pack the splits into groups and merge neighbouring splits of a file in
    each group (Java's ``splitFiles`` + ``planTasks``).

    Args:
        tasks: planned tasks (whole files), in planning order; the order decides the groups.
        options: the split size, lookback and open-file cost (default: Java's defaults).
    """
    options = options or SplitOptions()
    cost = options.open_file_cost
    # Splits are packed as (parent, start, length, weight) and become tasks once merged: the
    # same result as splitting into tasks, packing by task_weight and merge_tasks, without
    # building a task per split.
    items: list[tuple[FileScanTask, int, int, int]] = []
    for parent in tasks:
        delete_bytes = parent.size_bytes - parent.length
        floor = parent.files_count * cost
        ranges = _split_ranges(parent, options.split_size)
        if ranges is None:
            items.append((parent, parent.start, parent.length, max(parent.length + delete_bytes, floor)))
            continue
        for start, length in ranges:
            items.append((parent, start, length, max(length + delete_bytes, floor)))
    groups = pack(items, options.split_size, options.lookback, _item_weight)
    return [CombinedScanTask(_merged(group)) for group in groups]


def _item_weight(item: tuple[FileScanTask, int, int, int]) -> int:
    return item[3]


def _merged(items: list[tuple[FileScanTask, int, int, int]]) -> tuple[FileScanTask, ...]:
    """The group's tasks, neighbouring splits of one parent merged (Java's ``mergeTasks``)."""
    merged: list[tuple[FileScanTask, int, int, bool]] = []  # parent, start, length, is a split
    for parent, start, length, _ in items:
        if merged:
            last_parent, last_start, last_length, last_is_split = merged[-1]
            if last_parent is parent and last_is_split and last_start + last_length == start:
                merged[-1] = (parent, last_start, last_length + length, True)
                continue
        # (only splits merge: a task that was not split stays as it is, as in Java)
        is_split = parent.is_whole_file and parent.file.file_format in _SPLITTABLE
        merged.append((parent, start, length, is_split))
    return tuple(
        parent if (start, length) == (parent.start, parent.length) else _split(parent, start, length)
        for parent, start, length, _ in merged
    )


def merge_tasks(tasks: Iterable[FileScanTask]) -> list[FileScanTask]:
    """Java's ``TableScanUtil.mergeTasks``: neighbouring splits of one file whose ranges touch
    become one task (a reader then opens the file once)."""
    merged: list[FileScanTask] = []
    for task in tasks:
        if merged:
            last = merged[-1]
            if (
                not last.is_whole_file
                and not task.is_whole_file
                and last.file.file_path == task.file.file_path
                and last.start + last.length == task.start
            ):
                merged[-1] = _split(last, last.start, last.length + task.length)
                continue
        merged.append(task)
    return merged
