"""Applying equality deletes to Arrow data: an anti-join on the delete columns.

A data row is deleted when, for some delete row, every delete column is equal (spec:
"Equality Delete Files"), with the equality Java applies (``StructLikeSet`` over Iceberg's
comparators):

- null equals null (a null delete value matches ``col IS NULL``);
- a column inside a struct is null where the struct is null;
- floating point values compare by their bits with NaNs made canonical
  (``Double.doubleToLongBits``): NaN equals NaN, and -0.0 does not equal 0.0.

:class:`EqualityDeleteSet` encodes the distinct delete keys once; :meth:`~EqualityDeleteSet.deleted`
then answers a whole batch with Arrow's ``index_in`` per column and numpy on the combined codes,
never a Python loop per row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["EqualityDeleteSet", "key_column", "normalized_for_equality"]

_CANONICAL_NAN = {
    4: np.array([0x7FC00000], dtype=np.uint32).view(np.int32)[0],
    8: np.array([0x7FF8000000000000], dtype=np.uint64).view(np.int64)[0],
}


def key_column(data: pa.RecordBatch | pa.Table, index_path: Sequence[int]) -> pa.Array:
    """The column at ``index_path`` (indices from the top-level column down through structs),
    null wherever an enclosing struct is null."""
    column: Any = data.column(index_path[0])
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    for index in index_path[1:]:
        # flatten() merges the struct's validity into its children
        column = column.flatten()[index]
    return column


def normalized_for_equality(array: pa.Array | pa.ChunkedArray) -> pa.Array:
    """``array`` in a form whose Arrow equality is Iceberg's delete equality."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if isinstance(array.type, pa.BaseExtensionType):
        array = array.storage
    if pa.types.is_dictionary(array.type):
        array = array.cast(array.type.value_type)
    if pa.types.is_floating(array.type):
        width = array.type.bit_width // 8
        int_type = pa.int32() if width == 4 else pa.int64()
        values = pc.fill_null(array, 0).to_numpy(zero_copy_only=False)
        if width == 2:  # half floats: widen first (their bits would not match Java's anyway)
            values = values.astype(np.float32)
            width, int_type = 4, pa.int32()
        bits = values.view(np.int32 if width == 4 else np.int64).copy()
        bits[np.isnan(values)] = _CANONICAL_NAN[width]
        mask = array.is_null().to_numpy(zero_copy_only=False) if array.null_count else None
        return pa.array(bits, type=int_type, mask=mask)
    return array


class EqualityDeleteSet:
    """The delete keys of equality delete files that share their delete columns.

    Args:
        field_ids: the delete columns' field ids (for callers; order matches ``keys``).
        keys: one array per delete column, all of one length: the delete rows' values.
    """

    def __init__(self, field_ids: Sequence[int], keys: Sequence[pa.Array | pa.ChunkedArray]):
        if len(field_ids) != len(keys) or not keys:
            raise ValueError("an equality delete set needs one key array per delete column")
        self.field_ids = tuple(field_ids)
        normalized = [normalized_for_equality(k) for k in keys]
        # Per column, the distinct values (null included once) the data is looked up in.
        self._dictionaries = [pc.unique(column) for column in normalized]
        # Combining column codes pairwise, each step keeping only the combinations the delete
        # rows have, keeps the codes below (distinct rows) ** 2: no overflow.
        self._steps: list[tuple[int, np.ndarray]] = []
        combined = self._codes(normalized[0], 0)
        for index in range(1, len(normalized)):
            radix = len(self._dictionaries[index])
            combined = combined * radix + self._codes(normalized[index], index)
            known = np.unique(combined)
            self._steps.append((radix, known))
            combined = np.searchsorted(known, combined)
        self._distinct = len(np.unique(combined)) if len(combined) else 0

    def _codes(self, column: pa.Array, index: int) -> np.ndarray:
        codes = pc.index_in(column, value_set=self._dictionaries[index], skip_nulls=False)
        return np.asarray(codes.to_numpy(zero_copy_only=False), dtype=np.int64)

    def __len__(self) -> int:
        """The number of distinct delete keys."""
        return self._distinct

    def deleted(self, columns: Sequence[pa.Array | pa.ChunkedArray]) -> np.ndarray:
        """Per data row, whether some delete row equals it on every delete column.

        Args:
            columns: the data's delete columns, in ``field_ids`` order, of the types the keys
                were read with.
        """
        if len(columns) != len(self._dictionaries):
            raise ValueError(f"expected {len(self._dictionaries)} key columns, got {len(columns)}")
        count = len(columns[0])
        if self._distinct == 0 or count == 0:
            return np.zeros(count, dtype=bool)
        codes, candidate = self._lookup(normalized_for_equality(columns[0]), 0)
        for index, (radix, known) in enumerate(self._steps, start=1):
            more, found = self._lookup(normalized_for_equality(columns[index]), index)
            candidate &= found
            combined = codes * radix + more
            at = np.minimum(np.searchsorted(known, combined), len(known) - 1)
            candidate &= known[at] == combined
            codes = at
        return candidate

    def _lookup(self, column: pa.Array, index: int) -> tuple[np.ndarray, np.ndarray]:
        """Codes of the column's values in the delete values (0 where absent) and where present."""
        codes = pc.index_in(column, value_set=self._dictionaries[index], skip_nulls=False)
        found = codes.is_valid().to_numpy(zero_copy_only=False)
        values = np.asarray(pc.fill_null(codes, 0).to_numpy(zero_copy_only=False), dtype=np.int64)
        return values, np.asarray(found, dtype=bool)
