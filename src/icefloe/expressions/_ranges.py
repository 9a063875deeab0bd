"""Inclusive ("might match") comparisons in terms of a lower and an upper bound.

Both the file-metrics evaluator and the manifest evaluator decide comparisons the same way
once they know a range that holds every comparable value; they differ only in where the
bounds come from. Each supplies ``_with_bounds(ref, test)``; the predicates live here once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

from icefloe.expressions.model import BoundReference

__all__ = ["IN_PREDICATE_LIMIT", "RangeMightMatch"]

#: IN lists longer than this are not checked against bounds (as Java).
IN_PREDICATE_LIMIT = 200

C = TypeVar("C")


class RangeMightMatch(Generic[C]):
    """Mixin: ``test(lower, upper)`` receives the decoded bounds (either may be None, unknown)."""

    def _with_bounds(self, ref: BoundReference, test: Callable[[Any, Any], bool]) -> C:
        raise NotImplementedError

    def lt(self, ref: BoundReference, value: Any) -> C:
        return self._with_bounds(ref, lambda lo, hi: lo is None or lo < value)

    def lt_eq(self, ref: BoundReference, value: Any) -> C:
        return self._with_bounds(ref, lambda lo, hi: lo is None or lo <= value)

    def gt(self, ref: BoundReference, value: Any) -> C:
        return self._with_bounds(ref, lambda lo, hi: hi is None or hi > value)

    def gt_eq(self, ref: BoundReference, value: Any) -> C:
        return self._with_bounds(ref, lambda lo, hi: hi is None or hi >= value)

    def eq(self, ref: BoundReference, value: Any) -> C:
        return self._with_bounds(
            ref, lambda lo, hi: (lo is None or lo <= value) and (hi is None or value <= hi)
        )

    def not_eq(self, ref: BoundReference, value: Any) -> C:
        # Bounds equal to the value mean every comparable value is the value.
        return self._with_bounds(ref, lambda lo, hi: not (lo is not None and lo == hi == value))

    def in_(self, ref: BoundReference, values: frozenset[Any]) -> C:
        if len(values) > IN_PREDICATE_LIMIT:
            return self._with_bounds(ref, lambda lo, hi: True)
        return self._with_bounds(
            ref, lambda lo, hi: any((lo is None or lo <= v) and (hi is None or v <= hi) for v in values)
        )

    def not_in(self, ref: BoundReference, values: frozenset[Any]) -> C:
        return self._with_bounds(ref, lambda lo, hi: not (lo is not None and lo == hi and lo in values))

    def starts_with(self, ref: BoundReference, prefix: str) -> C:
        n = len(prefix)
        return self._with_bounds(
            ref, lambda lo, hi: (lo is None or lo[:n] <= prefix) and (hi is None or hi[:n] >= prefix)
        )

    def not_starts_with(self, ref: BoundReference, prefix: str) -> C:
        # Values between two bounds that both start with the prefix start with it too.
        return self._with_bounds(
            ref,
            lambda lo, hi: lo is None or hi is None or not (lo.startswith(prefix) and hi.startswith(prefix)),
        )
