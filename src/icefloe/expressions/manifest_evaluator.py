"""Manifest pruning with the partition field summaries of a manifest list (Java's
``ManifestEvaluator``).

The row filter is projected onto the manifest's partition spec (inclusively, see
:mod:`icefloe.expressions.projection`) and checked against each partition field's
``contains_null``, ``contains_nan`` and lower/upper bounds. A summary's lower bound is null
when the field holds no value other than null or NaN.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from icefloe.errors import ValidationError
from icefloe.expressions._ranges import RangeMightMatch
from icefloe.expressions.binder import bind
from icefloe.expressions.model import BoundReference, Expression
from icefloe.expressions.projection import inclusive_projection
from icefloe.expressions.rewrite import rewrite_not
from icefloe.expressions.visitors import BoundPredicateVisitor, visit
from icefloe.spec.conversions import from_bytes
from icefloe.spec.manifest import FieldSummary, ManifestFile
from icefloe.spec.partitioning import PartitionSpec
from icefloe.spec.schema import Schema

__all__ = ["ManifestEvaluator", "summaries_check"]

Summaries = Sequence[FieldSummary]
Check = Callable[[Summaries], bool]
_UNKNOWN = object()  # a bound that is present but cannot be decoded


def _bound(ref: BoundReference, raw: bytes | None) -> Any:
    """The decoded bound: None when absent, _UNKNOWN when unusable."""
    if raw is None:
        return None
    try:
        value = from_bytes(ref.type, raw)
    except ValidationError:
        return _UNKNOWN
    return _UNKNOWN if value != value else value


class _MightMatch(RangeMightMatch[Check], BoundPredicateVisitor[Check]):
    def always_true(self) -> Check:
        return lambda summaries: True

    def always_false(self) -> Check:
        return lambda summaries: False

    def and_(self, left: Check, right: Check) -> Check:
        return lambda summaries: left(summaries) and right(summaries)

    def or_(self, left: Check, right: Check) -> Check:
        return lambda summaries: left(summaries) or right(summaries)

    def _summary(self, ref: BoundReference, test: Callable[[FieldSummary], bool]) -> Check:
        position = ref.accessor[0]

        def check(summaries: Summaries) -> bool:
            if position >= len(summaries):
                return True  # a malformed list: nothing can be concluded
            return test(summaries[position])

        return check

    def is_null(self, ref: BoundReference) -> Check:
        return self._summary(ref, lambda s: bool(s.contains_null))

    def not_null(self, ref: BoundReference) -> Check:
        nan_possible = ref.is_floating
        return self._summary(
            ref, lambda s: s.lower_bound is not None or (nan_possible and s.contains_nan is not False)
        )

    def is_nan(self, ref: BoundReference) -> Check:
        return self._summary(ref, lambda s: s.contains_nan is not False)

    def not_nan(self, ref: BoundReference) -> Check:
        # Only NaN when there is no bound, no null, and NaN is present.
        return self._summary(
            ref, lambda s: not (s.contains_nan is True and s.lower_bound is None and not s.contains_null)
        )

    def _with_bounds(self, ref: BoundReference, test: Callable[[Any, Any], bool]) -> Check:
        """``test(lower, upper)``, either may be None when unusable, for fields with a value."""

        def check(s: FieldSummary) -> bool:
            if s.lower_bound is None:
                return False  # only nulls and NaN: no comparison is true
            lower, upper = _bound(ref, s.lower_bound), _bound(ref, s.upper_bound)
            return test(None if lower is _UNKNOWN else lower, None if upper is _UNKNOWN else upper)

        return self._summary(ref, check)


class ManifestEvaluator:
    """Whether a manifest may hold files with rows matching a filter.

    Args:
        spec: the partition spec the manifest was written with.
        schema: the table schema.
        row_filter: the filter on rows (bound, unbound or text).
        case_sensitive: how column names are matched when binding.
    """

    def __init__(
        self, spec: PartitionSpec, schema: Schema, row_filter: Expression | str, case_sensitive: bool = True
    ):
        self.partition_filter = inclusive_projection(spec, schema, row_filter, case_sensitive=case_sensitive)
        self._check = visit(self.partition_filter, _MightMatch())

    @classmethod
    def for_partition_filter(
        cls,
        spec: PartitionSpec,
        schema: Schema,
        partition_filter: Expression | str,
        case_sensitive: bool = True,
    ) -> ManifestEvaluator:
        """An evaluator of a filter on partition values, by partition field name (Java's
        ``forPartitionFilter``): ``"sale_date_day >= '2024-01-01'"``."""
        evaluator = cls.__new__(cls)
        bound = bind(spec.partition_type(schema), partition_filter, case_sensitive=case_sensitive)
        evaluator.partition_filter = rewrite_not(bound)
        evaluator._check = visit(evaluator.partition_filter, _MightMatch())
        return evaluator

    def eval(self, manifest: ManifestFile) -> bool:
        """False only if no file in ``manifest`` can hold a matching row."""
        if manifest.partitions is None:
            return True
        return self._check(manifest.partitions)


def summaries_check(partition_filter: Expression) -> Check:
    """``ManifestEvaluator``'s check of one manifest's partition summaries for a bound filter
    on partition values (``partition_filter``): False only if no file can match."""
    return visit(partition_filter, _MightMatch())
