"""``ManifestEvaluator`` over a whole manifest list at once.

For the partition filter of one spec and a manifest list's rows, ``SummaryFilter.mask`` gives,
per row, whether the manifest may hold matching files: exactly what ``ManifestEvaluator.eval``
answers for each row, in numpy operations over the list's partition field summaries.

The summaries are turned into arrays once per manifest list (``SummaryColumns``, kept with the
list in the manifest cache), their bounds decoded once per field and type, so planning a
table again costs a few array operations, not one evaluation per manifest: a table of one
manifest per day lists thousands of distinct summaries.

Comparisons on number-like partition fields (identity on numbers, dates and timestamps; the
day, month, hour, year and bucket transforms) are vectorized with ``_metrics_filter``'s
formulas; anything else (strings, decimals, ``starts_with`` ...) is evaluated row by row by
``ManifestEvaluator``'s own check, so the semantics stay in one place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from icefloe.errors import ValidationError
from icefloe.expressions import BoundPredicate, BoundReference, Expression
from icefloe.expressions.manifest_evaluator import summaries_check
from icefloe.expressions.visitors import visit
from icefloe.manifests import ListSummaries, SummaryField
from icefloe.scan._metrics_filter import NUMERIC_TYPES, Vectorized
from icefloe.spec.conversions import from_bytes
from icefloe.spec.manifest import FieldSummary, ManifestFile

__all__ = ["SummaryColumns", "SummaryFilter"]


class SummaryColumns:
    """The partition field summaries of a manifest list's rows (``ListSummaries``: built from
    the natively decoded list, or from its rows) with their bounds decoded to numbers, once per
    field position and type."""

    def __init__(self, summaries: ListSummaries):
        self.n = summaries.n
        self._summaries = summaries
        #: Rows without summaries: their manifests may always match (``ManifestEvaluator.eval``).
        self.without_summaries = summaries.without_summaries
        self._bounds: dict[tuple[int, Any, str], tuple[np.ndarray, np.ndarray]] = {}

    @classmethod
    def of(cls, manifests: Sequence[ManifestFile]) -> SummaryColumns:
        """The summary columns of manifest list rows already built."""
        return cls(ListSummaries.of_rows([m.partitions for m in manifests]))

    def weight(self) -> int:
        """About the bytes this holds once every field is built (for the manifest cache)."""
        return 256 + 96 * self.n

    def field(self, position: int) -> SummaryField:
        return self._summaries.field(position)

    def bound(self, ref: BoundReference, which: str) -> tuple[np.ndarray, np.ndarray]:
        """(known, value) per row of the field's ``which`` ("lower" / "upper") bound, as
        ``ManifestEvaluator`` reads it: unknown where absent, undecodable or NaN."""
        position = ref.accessor[0]
        key = (position, ref.type, which)
        found = self._bounds.get(key)
        if found is None:
            field = self.field(position)
            found = self._bounds[key] = _decode(ref, field, which)
        return found

    def rows(self) -> list[tuple[FieldSummary, ...] | None]:
        return self._summaries.rows()


def _decode(ref: BoundReference, field: SummaryField, which: str) -> tuple[np.ndarray, np.ndarray]:
    dtype_name, width = NUMERIC_TYPES[type(ref.type)]
    dtype = np.dtype(dtype_name)
    is_float = dtype.kind == "f"
    fixed = field.fixed(which, dtype)
    if fixed is not None:
        usual, raw_values = fixed
        values = raw_values.astype(np.float64 if is_float else np.int64)
    else:
        raws = field.bounds(which)
        values = np.zeros(len(raws), dtype=np.float64 if is_float else np.int64)
        usual = np.array([b is not None and len(b) == width for b in raws], dtype=bool)
        if usual.any():
            joined = b"".join([b for b, u in zip(raws, usual.tolist()) if u])  # type: ignore[misc]
            values[usual] = np.frombuffer(joined, dtype=dtype)
    known = usual.copy()
    # Promoted fields keep bounds of the old width; other widths are undecodable: both as
    # ``from_bytes`` decides, one row at a time (rare).
    odd = np.flatnonzero(field.present(which) & ~usual).tolist()
    if odd:
        raws = field.bounds(which)
        for i in odd:
            raw = raws[i]
            if raw is None:
                continue
            try:
                values[i] = from_bytes(ref.type, raw)
            except (ValidationError, OverflowError):
                continue
            known[i] = True
    if is_float:
        known &= ~np.isnan(values)  # NaN bounds are unusable
    return known, values


Mask = Callable[[SummaryColumns], np.ndarray]


class _Masks(Vectorized):
    """The manifest evaluator's checks (``manifest_evaluator._MightMatch``) on whole columns."""

    def __init__(self) -> None:
        pass  # no schema: predicates that are not vectorized go to ``_per_entry`` below

    def _per_entry(self, predicate: BoundPredicate) -> Mask:
        check = summaries_check(predicate)

        def mask(columns: SummaryColumns) -> np.ndarray:
            return np.fromiter(
                (rows is None or check(rows) for rows in columns.rows()), dtype=bool, count=columns.n
            )

        return mask

    def _by_field(self, ref: BoundReference, test: Callable[[SummaryField], np.ndarray]) -> Mask:
        """``test`` of the field's summaries, where the row has them."""
        position = ref.accessor[0]

        def mask(columns: SummaryColumns) -> np.ndarray:
            field = columns.field(position)
            result: np.ndarray = field.unknown | test(field)
            return result

        return mask

    def is_null(self, ref: BoundReference) -> Mask:
        return self._by_field(ref, lambda f: f.contains_null)

    def not_null(self, ref: BoundReference) -> Mask:
        if ref.is_floating:
            return self._by_field(ref, lambda f: f.lower_present | (f.nan != 0))
        return self._by_field(ref, lambda f: f.lower_present)

    def is_nan(self, ref: BoundReference) -> Mask:
        return self._by_field(ref, lambda f: f.nan != 0)

    def not_nan(self, ref: BoundReference) -> Mask:
        # Only NaN: NaN present, no bound and no null.
        return self._by_field(ref, lambda f: ~((f.nan == 1) & ~f.lower_present & ~f.contains_null))

    def _with_bounds(
        self,
        ref: BoundReference,
        test: Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray],
    ) -> Mask:
        position = ref.accessor[0]

        def mask(columns: SummaryColumns) -> np.ndarray:
            field = columns.field(position)
            lk, lo = columns.bound(ref, "lower")
            hk, hi = columns.bound(ref, "upper")
            # No lower bound: only nulls and NaN, which no comparison matches.
            result: np.ndarray = field.unknown | (field.lower_present & test(lk, lo, hk, hi))
            return result

        return mask


class SummaryFilter:
    """Per manifest list row, whether its manifest may hold files matching ``partition_filter``
    (a filter on one spec's partition values: ``ManifestEvaluator.partition_filter``)."""

    def __init__(self, partition_filter: Expression):
        self._mask = visit(partition_filter, _Masks())

    def mask(self, columns: SummaryColumns) -> np.ndarray:
        """False only for the rows whose manifest holds no file that can match (rows of other
        specs get answers too: the caller keeps the rows of this filter's spec)."""
        result: np.ndarray = self._mask(columns) | columns.without_summaries
        return result
