"""Post-processing the changes of one commit (private; public through ``scan.changelog``):
Spark's ``create_changelog_view`` options on Arrow tables.

- :func:`remove_carryovers`: a copy-on-write commit deletes whole files and writes back their
  unchanged rows; such a row appears as a DELETE and an INSERT with equal values (a carry-over),
  not a change. Pairs of equal DELETE and INSERT rows are dropped (as many pairs as there are:
  two equal DELETEs and one equal INSERT leave one DELETE).
- :func:`compute_updates`: a DELETE and an INSERT with the same identifier values become an
  UPDATE_BEFORE followed by an UPDATE_AFTER.

Rows are compared by value (NaN equals NaN, null equals null, -0.0 is not 0.0), with Arrow's
hash kernels and numpy on the codes; columns of nested types are compared by their Python
values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icefloe.arrow.equality import key_column, normalized_for_equality
from icefloe.errors import ValidationError

__all__ = ["compute_updates", "remove_carryovers"]

_TYPE = "_change_type"
_INSERT = "INSERT"
_DELETE = "DELETE"


def remove_carryovers(changes: pa.Table, columns: Sequence[str]) -> pa.Table:
    """``changes`` (the rows of one commit, with ``_change_type``) without the DELETE / INSERT
    pairs that are equal on ``columns``; the other rows keep their order."""
    found = _change_kinds(changes)
    if found is None:
        return changes
    _, deleted, inserted = found
    codes = row_codes([changes.column(name) for name in columns], changes.num_rows)
    size = int(codes.max()) + 1
    drop = np.zeros(changes.num_rows, dtype=bool)
    # The k-th DELETE of a value is a carry-over when the value has more than k INSERTs (and
    # the other way round).
    for mine, other in ((deleted, inserted), (inserted, deleted)):
        others = np.bincount(codes[other], minlength=size)
        at = np.flatnonzero(mine)
        drop[at] = _ranks(codes[at]) < others[codes[at]]
    if not drop.any():
        return changes
    return changes.filter(pa.array(~drop))


def compute_updates(changes: pa.Table, identifier: Mapping[str, Sequence[int]]) -> pa.Table:
    """``changes`` (the rows of one commit, carry-overs removed) with each DELETE / INSERT
    pair of equal identifier values relabelled UPDATE_BEFORE / UPDATE_AFTER, the
    UPDATE_AFTER moved right after its UPDATE_BEFORE.

    ``identifier``: the identifier columns, each name to its index path (from the top-level
    column down through structs).

    Raises:
        ValidationError: identifier values that both a DELETE and an INSERT have, more than
            once on one side (Spark: the rows must be unique by their identifier).
    """
    found = _change_kinds(changes)
    if found is None:
        return changes
    kinds, deleted, inserted = found
    keys = {name: key_column(changes, path) for name, path in identifier.items()}
    codes = row_codes(list(keys.values()), changes.num_rows)
    size = int(codes.max()) + 1
    deletes = np.bincount(codes[deleted], minlength=size)
    inserts = np.bincount(codes[inserted], minlength=size)
    both = (deletes > 0) & (inserts > 0)
    ambiguous = both & ((deletes > 1) | (inserts > 1))
    if ambiguous.any():
        code = int(np.flatnonzero(ambiguous)[0])
        row = int(np.flatnonzero(codes == code)[0])
        values = {name: key[row].as_py() for name, key in keys.items()}
        raise ValidationError(
            f"cannot compute updates: several changed rows of one commit have the identifier {values}; "
            "the identifier columns must be unique"
        )
    if not both.any():
        return changes
    before = deleted & both[codes]
    after = inserted & both[codes]
    before_at = np.full(size, -1, dtype=np.int64)
    before_at[codes[before]] = np.flatnonzero(before)
    # Order: each row at its index, an UPDATE_AFTER just behind its UPDATE_BEFORE.
    position = np.arange(changes.num_rows, dtype=np.float64)
    position[after] = before_at[codes[after]] + 0.5
    order = np.argsort(position, kind="stable")
    labels = kinds.astype(object)
    labels[before] = "UPDATE_BEFORE"
    labels[after] = "UPDATE_AFTER"
    index = changes.schema.get_field_index(_TYPE)
    relabelled = changes.set_column(index, changes.schema.field(index), pa.array(labels, pa.string()))
    return relabelled.take(pa.array(order))


def _ranks(codes: np.ndarray) -> np.ndarray:
    """For each position, how many earlier positions hold the same code."""
    order = np.argsort(codes, kind="stable")
    ordered = codes[order]
    starts = np.r_[0, np.flatnonzero(ordered[1:] != ordered[:-1]) + 1]
    first = np.repeat(starts, np.diff(np.r_[starts, len(ordered)]))
    ranks = np.empty(len(codes), dtype=np.int64)
    ranks[order] = np.arange(len(codes)) - first
    return ranks


def row_codes(columns: Sequence[pa.Array | pa.ChunkedArray], num_rows: int) -> np.ndarray:
    """One int64 per row, equal for rows equal on ``columns`` (and only for them)."""
    if not columns:
        return np.zeros(num_rows, dtype=np.int64)
    parts = [_column_codes(c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c) for c in columns]
    if len(parts) == 1:
        return parts[0]
    _, inverse = np.unique(np.stack(parts, axis=1), axis=0, return_inverse=True)
    codes: np.ndarray = inverse.reshape(-1).astype(np.int64)
    return codes


def _column_codes(column: pa.Array) -> np.ndarray:
    # As equality deletes compare: extension types by storage, every NaN one value.
    column = normalized_for_equality(column)
    if pa.types.is_nested(column.type):
        column = pa.array([repr(value) for value in column.to_pylist()], pa.string())
    encoded = pc.dictionary_encode(column, null_encoding="encode")
    codes: np.ndarray = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    return codes


def _change_kinds(changes: pa.Table) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The rows' change types, and which are DELETEs and which INSERTs; None when either kind
    is missing (no pair to find)."""
    if changes.num_rows == 0:
        return None
    kinds = changes.column(_TYPE).to_numpy(zero_copy_only=False)
    deleted = kinds == _DELETE
    inserted = kinds == _INSERT
    if not deleted.any() or not inserted.any():
        return None
    return kinds, deleted, inserted
