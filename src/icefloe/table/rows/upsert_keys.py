"""The keys of an upsert's source, arranged so that each data file meets only the keys its
bounds allow.

An upsert of a million keys into a table of many files must not build a million-key hash
table per file (nor read a file no key can match). The keys are sorted once by their first
column; a file's lower / upper bounds of that column then pick a contiguous slice of them by
binary search (``for_file``), which the bounds of the other key columns narrow further; it is
empty for a file no key can match (which is then never read), and the file's rows are matched
against that slice alone: ``pc.is_in`` for one key column, a semi join for several. Columns
whose bounds cannot be compared with Arrow values here (floating point, decimals, binary, ...)
prune nothing: every key meets every file.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icefloe.errors import ValidationError
from icefloe.expressions import (
    Expression,
    always_true,
    and_,
    greater_than_or_equal,
    is_in,
    less_than_or_equal,
    not_null,
)
from icefloe.spec.conversions.binary import from_bytes
from icefloe.spec.manifest import DataFile
from icefloe.spec.types import (
    DateType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
    TimestamptzType,
)

__all__ = ["SourceKeys"]

#: Keys listed one by one in the upsert's filter up to this many; more are pruned by range.
IN_LIMIT = 1000

#: Types whose bounds decode (``from_bytes``) to the integers their Arrow values view as.
_INTEGRAL = (IntegerType, LongType, DateType, TimestampType, TimestamptzType)


class SourceKeys:
    """The non-null keys of an upsert's source rows, sorted by the first key column."""

    def __init__(self, keys: pa.Table, fields: Sequence[NestedField]) -> None:
        self.names = list(keys.column_names)
        self.fields = list(fields)
        self._field_id = self.fields[0].field_id
        self.table, self._sorted = _sorted_keys(keys, self.fields[0])
        # The other key columns as their bounds compare, once (None: a type not compared).
        self._others = [
            (field, _bound_comparable(self.table.column(name), field))
            for name, field in zip(self.names[1:], self.fields[1:], strict=True)
        ]

    @property
    def num_rows(self) -> int:
        return int(self.table.num_rows)

    def duplicate(self) -> dict[str, Any] | None:
        """A key that appears more than once, or None."""
        if self.num_rows < 2:
            return None
        if len(self.names) == 1 and self._sorted is not None:
            values = self._sorted
            repeated = np.flatnonzero(values[1:] == values[:-1])
            if not repeated.size:
                return None
            return dict(self.table.slice(int(repeated[0]), 1).to_pylist()[0])
        counts = self.table.group_by(self.names).aggregate([([], "count_all")])
        if counts.num_rows == self.num_rows:
            return None
        row = counts.filter(pc.greater(counts.column("count_all"), 1)).slice(0, 1).to_pylist()[0]
        row.pop("count_all", None)
        return dict(row)

    def check_unique(self) -> None:
        """Raises ValidationError naming a key that appears more than once."""
        duplicate = self.duplicate()
        if duplicate is not None:
            raise ValidationError(f"upsert data holds the key {duplicate} more than once")

    def row_filter(self) -> Expression:
        """A filter selecting the rows that may match the keys: an IN list per key column (or
        its min..max range for many keys), for planning to prune files and for conflict
        checks."""
        result: Expression = always_true()
        if not self.num_rows:
            return result
        for name in self.names:
            column = self.table.column(name)
            if self.num_rows <= IN_LIMIT:
                result = and_(result, is_in(name, pc.unique(column).to_pylist()))
            else:
                low_high = pc.min_max(column)
                low, high = low_high["min"].as_py(), low_high["max"].as_py()
                result = and_(result, greater_than_or_equal(name, low), less_than_or_equal(name, high))
            result = and_(result, not_null(name))
        return result

    def for_file(self, file: DataFile) -> pa.Table | None:
        """The keys the file's bounds allow: a slice by the first key column's, then narrowed by
        the other columns' (a column without bounds, or of a type not compared here, allows
        every key); None when no key can match the file."""
        if self._sorted is None:
            return self.table if self.num_rows else None
        start, stop = 0, self.num_rows
        type_ = self.fields[0].field_type
        lower = (file.lower_bounds or {}).get(self._field_id)
        upper = (file.upper_bounds or {}).get(self._field_id)
        if lower is not None:
            start = int(np.searchsorted(self._sorted, from_bytes(type_, lower), side="left"))
        if upper is not None:
            stop = int(np.searchsorted(self._sorted, from_bytes(type_, upper), side="right"))
        if stop <= start:
            return None
        return self._within_other_bounds(start, stop, file)

    def _within_other_bounds(self, start: int, stop: int, file: DataFile) -> pa.Table | None:
        """The keys ``start:stop`` less those whose second, third, ... column lies outside the
        file's bounds of that column (a file of one day's rows meets only that day's keys of an
        ``(id, day)`` key); None when none is left."""
        keys = self.table.slice(start, stop - start)
        mask: pa.Array | None = None
        for field, comparable in self._others:
            if comparable is None:
                continue
            values = comparable.slice(start, stop - start)
            lower = (file.lower_bounds or {}).get(field.field_id)
            upper = (file.upper_bounds or {}).get(field.field_id)
            for bound, compare in ((lower, pc.greater_equal), (upper, pc.less_equal)):
                if bound is not None:
                    inside = compare(values, pa.scalar(from_bytes(field.field_type, bound), values.type))
                    mask = inside if mask is None else pc.and_(mask, inside)
        if mask is None:
            return keys
        kept = keys.filter(pc.fill_null(mask, False))
        return kept if kept.num_rows else None

    def matched_positions(self, live: pa.Table, keys: pa.Table) -> np.ndarray:
        """The ``_pos`` of the rows of ``live`` (key columns and ``_pos``) whose key is one of
        ``keys``, ascending."""
        if len(self.names) == 1:
            name = self.names[0]
            mask = pc.is_in(live.column(name), value_set=keys.column(name))
            selected = live.column("_pos").filter(mask)
            return np.asarray(selected.to_numpy(), dtype=np.int64)
        joined = live.select([*self.names, "_pos"]).join(keys, keys=self.names, join_type="left semi")
        return np.sort(np.asarray(joined.column("_pos").to_numpy(), dtype=np.int64))


def _sorted_keys(keys: pa.Table, first: NestedField) -> tuple[pa.Table, np.ndarray | None]:
    """The keys sorted by their first column, and that column as :func:`_searchable` gives it."""
    name = keys.column_names[0]
    if keys.num_rows == 0:
        return keys, None
    column = keys.column(name)
    if keys.num_columns == 1 and pa.types.is_integer(column.type) and isinstance(first.field_type, _INTEGRAL):
        # One integer key: numpy's radix sort of the values themselves, no index and take.
        values = np.sort(np.asarray(column.to_numpy(), dtype=np.int64), kind="stable")
        return pa.table({name: pa.array(values).cast(column.type)}), values
    table = keys.sort_by(name).combine_chunks()
    return table, _searchable(table.column(name), first)


def _bound_comparable(column: pa.ChunkedArray | pa.Array, field: NestedField) -> pa.Array | None:
    """A key column as Arrow values that compare with its decoded bounds (days, microseconds,
    integers, strings), or None for a type whose bounds are not compared here."""
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    type_ = field.field_type
    if isinstance(type_, _INTEGRAL):
        if pa.types.is_date32(array.type):
            return array.view(pa.int32())
        if pa.types.is_timestamp(array.type) and array.type.unit == "us":
            return array.view(pa.int64())
        return array if pa.types.is_integer(array.type) else None
    if isinstance(type_, StringType) and (
        pa.types.is_string(array.type) or pa.types.is_large_string(array.type)
    ):
        return array  # Arrow compares strings by their UTF-8 bytes, as Iceberg's bounds order them
    return None


def _searchable(column: pa.ChunkedArray | pa.Array, field: NestedField) -> np.ndarray | None:
    """The sorted first key column as a numpy array that bounds can be searched in: integers
    for integral and temporal types, Python strings for strings; None for other types."""
    values = _bound_comparable(column, field)
    if values is None:
        return None
    if isinstance(field.field_type, StringType):
        # Python compares str by code point, which is UTF-8 byte order: Arrow's sort order and
        # the order of Iceberg's bounds.
        return np.asarray(values.to_numpy(zero_copy_only=False), dtype=object)
    return np.asarray(values.to_numpy(), dtype=np.int64)
