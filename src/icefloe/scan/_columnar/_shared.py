"""Constants and column helpers the decoded manifest and its builder share."""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from icefloe.spec.manifest import (
    FileContent,
    FileFormat,
    ManifestEntryStatus,
)

STATUSES = tuple(ManifestEntryStatus)
CONTENTS = tuple(FileContent)
FORMATS = {f.value: f for f in FileFormat}
ADDED = int(ManifestEntryStatus.ADDED)
DELETED = int(ManifestEntryStatus.DELETED)
DATA = int(FileContent.DATA)
NONE = -(2**63)  # the stand-in for null in int64 columns that keep a null mask
MAP_NAMES = (
    "column_sizes",
    "value_counts",
    "null_value_counts",
    "nan_value_counts",
    "lower_bounds",
    "upper_bounds",
)
EXTRA_NAMES = (
    "key_metadata",
    "split_offsets",
    "equality_ids",
    "sort_order_id",
    "first_row_id",
    "referenced_data_file",
    "content_offset",
    "content_size_in_bytes",
)


def int64_column(values: list[Any]) -> np.ndarray:
    """An int64 array of Python ints; None becomes ``NONE`` (callers keep a null mask)."""
    try:
        return np.array(values, dtype=np.int64)
    except (TypeError, OverflowError):
        return np.array([NONE if v is None else v for v in values], dtype=np.int64)


def inherited_sequence_numbers(
    values: list[Any], inherit: np.ndarray | None, manifest_seq: int | None
) -> tuple[np.ndarray, np.ndarray | None]:
    """A sequence number column and its null mask, nulls in ``inherit`` set to the manifest's."""
    if None not in values:
        return np.array(values, dtype=np.int64), None
    null = np.array([v is None for v in values], dtype=bool)
    array = int64_column(values)
    if inherit is not None:
        taken = null & inherit
        array[taken] = manifest_seq
        null &= ~taken
    return array, (null if null.any() else None)


def null_mask(values: list[Any]) -> np.ndarray | None:
    if None not in values:
        return None
    return np.array([v is None for v in values], dtype=bool)


def sparse_column(values: list[Any]) -> list[Any] | None:
    """The column, or None when every value is None (most optional fields, most of the time)."""
    return None if values.count(None) == len(values) else values


def float_key(value: float) -> tuple[str, bytes]:
    """Partition values are equal when their bits are (spec): -0.0 is not 0.0, NaNs differ."""
    return ("\x00float", struct.pack(">d", value))


#: Values of the hot columns per name, for the caller's own use (planning keeps them).
HotValues = dict[str, list[Any]]
