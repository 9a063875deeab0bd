"""File pruning with column metrics: value, null and NaN counts and lower/upper bounds.

:class:`InclusiveMetricsEvaluator` answers "may rows of this file match?" (False: skip the
file); :class:`StrictMetricsEvaluator` answers "do all rows of this file match?" (True: e.g.
delete the whole file). Both are sound for any valid metrics, including missing metrics and
truncated bounds: a lower bound may be a prefix of the smallest value, an upper bound a
truncated-and-incremented value above the largest. Bounds never hold NaN (a NaN bound, as old
ORC writers produced, is ignored). Semantics are those of :mod:`icefloe.expressions.model`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from icefloe.errors import ValidationError
from icefloe.expressions._ranges import RangeMightMatch
from icefloe.expressions.binder import bind
from icefloe.expressions.model import BoundReference, Expression
from icefloe.expressions.rewrite import rewrite_not
from icefloe.expressions.visitors import BoundPredicateVisitor, visit
from icefloe.spec.conversions import from_bytes
from icefloe.spec.schema import Schema

__all__ = ["FileMetrics", "InclusiveMetricsEvaluator", "StrictMetricsEvaluator"]


class FileMetrics(Protocol):
    """What the evaluators read of a file: a ``ContentFile``, or a view of a manifest entry's
    metrics that has the same attributes (maps need only ``get``)."""

    @property
    def record_count(self) -> int: ...

    @property
    def value_counts(self) -> Mapping[int, int] | None: ...

    @property
    def null_value_counts(self) -> Mapping[int, int] | None: ...

    @property
    def nan_value_counts(self) -> Mapping[int, int] | None: ...

    @property
    def lower_bounds(self) -> Mapping[int, bytes] | None: ...

    @property
    def upper_bounds(self) -> Mapping[int, bytes] | None: ...


class _Stats:
    """The metrics of one file, decoded on demand."""

    __slots__ = ("lower_bounds", "nan_counts", "null_counts", "upper_bounds", "value_counts")

    def __init__(self, file: FileMetrics):
        self.value_counts: Mapping[int, int] = file.value_counts or {}
        self.null_counts: Mapping[int, int] = file.null_value_counts or {}
        self.nan_counts: Mapping[int, int] = file.nan_value_counts or {}
        self.lower_bounds: Mapping[int, bytes] = file.lower_bounds or {}
        self.upper_bounds: Mapping[int, bytes] = file.upper_bounds or {}

    def nulls(self, ref: BoundReference) -> int | None:
        """The number of nulls, None when unknown."""
        if not ref.produces_null:
            return 0
        return self.null_counts.get(ref.field_id)

    def nans(self, ref: BoundReference) -> int | None:
        if not ref.is_floating:
            return 0
        return self.nan_counts.get(ref.field_id)

    def nulls_only(self, ref: BoundReference) -> bool:
        values, nulls = self.value_counts.get(ref.field_id), self.nulls(ref)
        return values is not None and nulls is not None and values - nulls <= 0

    def nans_only(self, ref: BoundReference) -> bool:
        values, nans = self.value_counts.get(ref.field_id), self.nans(ref)
        return values is not None and nans is not None and values - nans <= 0

    def none_comparable(self, ref: BoundReference) -> bool:
        """Whether every value is null or NaN, so no comparison can be true."""
        values, nulls, nans = self.value_counts.get(ref.field_id), self.nulls(ref), self.nans(ref)
        if values is None or nulls is None:
            return False
        return values - nulls - (nans or 0) <= 0

    def all_comparable(self, ref: BoundReference) -> bool:
        """Whether no value is null or NaN (known from the counts)."""
        return self.nulls(ref) == 0 and self.nans(ref) == 0

    def _bound(self, bounds: Mapping[int, bytes], ref: BoundReference) -> Any:
        raw = bounds.get(ref.field_id)
        if raw is None:
            return None
        try:
            value = from_bytes(ref.type, raw)
        except ValidationError:
            return None  # an undecodable bound tells nothing
        return None if value != value else value  # NaN bounds are unreliable

    def lower(self, ref: BoundReference) -> Any:
        return self._bound(self.lower_bounds, ref)

    def upper(self, ref: BoundReference) -> Any:
        return self._bound(self.upper_bounds, ref)


Check = Callable[[_Stats], bool]


class _Combining(BoundPredicateVisitor[Check]):
    """And/or/constants for both evaluators (``rewrite_not`` removed every NOT)."""

    def and_(self, left: Check, right: Check) -> Check:
        return lambda stats: left(stats) and right(stats)

    def or_(self, left: Check, right: Check) -> Check:
        return lambda stats: left(stats) or right(stats)


class _MightMatch(RangeMightMatch[Check], _Combining):
    def always_true(self) -> Check:
        return lambda stats: True

    def always_false(self) -> Check:
        return lambda stats: False

    def is_null(self, ref: BoundReference) -> Check:
        return lambda stats: stats.nulls(ref) != 0

    def not_null(self, ref: BoundReference) -> Check:
        return lambda stats: not stats.nulls_only(ref)

    def is_nan(self, ref: BoundReference) -> Check:
        return lambda stats: stats.nans(ref) != 0 and not stats.nulls_only(ref)

    def not_nan(self, ref: BoundReference) -> Check:
        return lambda stats: not stats.nans_only(ref)

    def _with_bounds(self, ref: BoundReference, test: Callable[[Any, Any], bool]) -> Check:
        """``test(lower, upper)`` (either may be None) decides when some value is comparable."""
        return lambda stats: not stats.none_comparable(ref) and test(stats.lower(ref), stats.upper(ref))


class _MustMatch(_Combining):
    def always_true(self) -> Check:
        return lambda stats: True

    def always_false(self) -> Check:
        return lambda stats: False

    def is_null(self, ref: BoundReference) -> Check:
        return lambda stats: stats.nulls_only(ref)

    def not_null(self, ref: BoundReference) -> Check:
        return lambda stats: stats.nulls(ref) == 0

    def is_nan(self, ref: BoundReference) -> Check:
        return lambda stats: stats.nans_only(ref)

    def not_nan(self, ref: BoundReference) -> Check:
        return lambda stats: stats.nans(ref) == 0 or stats.nulls_only(ref)

    def _with_bounds(self, ref: BoundReference, test: Callable[[Any, Any], bool]) -> Check:
        """``test(lower, upper)`` (either may be None) decides when all values are comparable."""
        return lambda stats: stats.all_comparable(ref) and test(stats.lower(ref), stats.upper(ref))

    def lt(self, ref: BoundReference, value: Any) -> Check:
        return self._with_bounds(ref, lambda lo, hi: hi is not None and hi < value)

    def lt_eq(self, ref: BoundReference, value: Any) -> Check:
        return self._with_bounds(ref, lambda lo, hi: hi is not None and hi <= value)

    def gt(self, ref: BoundReference, value: Any) -> Check:
        return self._with_bounds(ref, lambda lo, hi: lo is not None and lo > value)

    def gt_eq(self, ref: BoundReference, value: Any) -> Check:
        return self._with_bounds(ref, lambda lo, hi: lo is not None and lo >= value)

    def eq(self, ref: BoundReference, value: Any) -> Check:
        return self._with_bounds(ref, lambda lo, hi: lo is not None and lo == hi == value)

    def not_eq(self, ref: BoundReference, value: Any) -> Check:
        return self._with_bounds(
            ref, lambda lo, hi: (lo is not None and lo > value) or (hi is not None and hi < value)
        )

    def in_(self, ref: BoundReference, values: frozenset[Any]) -> Check:
        return self._with_bounds(ref, lambda lo, hi: lo is not None and lo == hi and lo in values)

    def not_in(self, ref: BoundReference, values: frozenset[Any]) -> Check:
        return self._with_bounds(
            ref,
            lambda lo, hi: all((lo is not None and v < lo) or (hi is not None and v > hi) for v in values),
        )

    def starts_with(self, ref: BoundReference, prefix: str) -> Check:
        return self._with_bounds(
            ref,
            lambda lo, hi: (
                lo is not None and hi is not None and lo.startswith(prefix) and hi.startswith(prefix)
            ),
        )

    def not_starts_with(self, ref: BoundReference, prefix: str) -> Check:
        n = len(prefix)
        return self._with_bounds(
            ref, lambda lo, hi: (lo is not None and lo[:n] > prefix) or (hi is not None and hi[:n] < prefix)
        )


class InclusiveMetricsEvaluator:
    """Whether a file may hold rows matching a filter (Java's ``InclusiveMetricsEvaluator``).

    Args:
        schema: the table schema the file's field ids belong to.
        expr: the filter (bound, unbound or text).
        case_sensitive: how column names are matched when binding.
    """

    def __init__(self, schema: Schema, expr: Expression | str, case_sensitive: bool = True):
        self.expr = rewrite_not(bind(schema, expr, case_sensitive=case_sensitive))
        self._check = visit(self.expr, _MightMatch())

    def eval(self, file: FileMetrics) -> bool:
        """False only if no row of ``file`` can match; True if some row may."""
        if file.record_count == 0:
            return False
        if file.record_count < 0:
            return True  # unknown count (imported Avro files): the metrics cannot be trusted
        return self._check(_Stats(file))


class StrictMetricsEvaluator:
    """Whether all rows of a file match a filter (Java's ``StrictMetricsEvaluator``).

    Args:
        schema: the table schema the file's field ids belong to.
        expr: the filter (bound, unbound or text).
        case_sensitive: how column names are matched when binding.
    """

    def __init__(self, schema: Schema, expr: Expression | str, case_sensitive: bool = True):
        self.expr = rewrite_not(bind(schema, expr, case_sensitive=case_sensitive))
        self._check = visit(self.expr, _MustMatch())

    def eval(self, file: FileMetrics) -> bool:
        """True only if every row of ``file`` matches; False if some row may not."""
        if file.record_count == 0:
            return True
        if file.record_count < 0:
            return False
        return self._check(_Stats(file))
