"""Row positions in a Parquet file, and deleted positions (private)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["Segments", "as_positions", "deleted_mask", "fully_deleted", "group_positions", "segments"]


# ---------------------------------------------------------------------------------------------
# deletes and positions


def as_positions(values: Any) -> np.ndarray:
    """Sorted unique int64 positions from a set, sequence, numpy or Arrow array."""
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        array = np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.int64)
    elif isinstance(values, np.ndarray):
        array = values.astype(np.int64, copy=False)
    else:
        array = np.fromiter(values, dtype=np.int64, count=len(values))
    if len(array) > 1 and not bool(np.all(array[1:] > array[:-1])):
        # (sort + dedupe: np.unique's hash path is much slower for large arrays)
        array = np.sort(array)
        array = array[np.concatenate(([True], array[1:] != array[:-1]))]
    return array


@dataclass(frozen=True, slots=True)
class Segments:
    """Maps positions in the stream of selected row groups to positions in the file."""

    row_groups: tuple[int, ...]
    stream_starts: np.ndarray  # start of each selected group in the stream
    file_starts: np.ndarray  # start of each selected group in the file
    contiguous: bool  # the selected groups are all groups (stream position == file position)

    def positions(self, stream_start: int, count: int) -> np.ndarray:
        stream = np.arange(stream_start, stream_start + count, dtype=np.int64)
        if self.contiguous:
            return stream
        segment = np.searchsorted(self.stream_starts, stream, side="right") - 1
        result: np.ndarray = stream - self.stream_starts[segment] + self.file_starts[segment]
        return result


def segments(metadata: pq.FileMetaData, row_groups: Sequence[int]) -> Segments:
    counts = np.array(
        [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)], dtype=np.int64
    )
    file_starts = np.concatenate(([0], np.cumsum(counts)[:-1])) if len(counts) else np.zeros(0, np.int64)
    selected = np.array(row_groups, dtype=np.int64)
    selected_counts = counts[selected] if len(selected) else np.zeros(0, np.int64)
    stream_starts = np.concatenate(([0], np.cumsum(selected_counts)[:-1])) if len(selected) else selected
    return Segments(
        tuple(row_groups),
        stream_starts.astype(np.int64),
        file_starts[selected].astype(np.int64) if len(selected) else selected,
        list(row_groups) == list(range(metadata.num_row_groups)),
    )


def deleted_mask(positions: np.ndarray, deletes: np.ndarray) -> np.ndarray:
    """True where a position is in the sorted ``deletes``."""
    index = np.searchsorted(deletes, positions)
    index[index == len(deletes)] = len(deletes) - 1
    return deletes[index] == positions  # type: ignore[no-any-return]


def fully_deleted(metadata: pq.FileMetaData, group: int, file_start: int, deletes: np.ndarray) -> bool:
    rows = metadata.row_group(group).num_rows
    lo, hi = np.searchsorted(deletes, [file_start, file_start + rows])
    return bool(hi - lo == rows)


def group_positions(table: pa.Table) -> dict[str, np.ndarray]:
    if table.num_rows == 0:
        return {}
    encoded = table.column(0).combine_chunks().dictionary_encode()
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    positions = table.column(1).to_numpy()
    order = np.lexsort((positions, codes))
    codes, positions = codes[order], positions[order]
    bounds = np.flatnonzero(np.diff(codes)) + 1
    starts = np.concatenate(([0], bounds))
    ends = np.concatenate((bounds, [len(codes)]))
    names = encoded.dictionary.to_pylist()
    return {names[codes[s]]: np.unique(positions[s:e]) for s, e in zip(starts, ends)}
