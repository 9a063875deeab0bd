"""``InclusiveMetricsEvaluator`` over a whole decoded manifest at once.

For a row filter and a ``DecodedManifest``, ``MetricsFilter.might_match`` gives, per entry,
whether the file may hold matching rows: exactly what ``InclusiveMetricsEvaluator.eval``
answers for each file, in numpy operations over the manifest's columns.

Predicates on number-like columns (int, long, date, time, timestamps, float, double) are
evaluated on arrays: the counts of the referenced column, and its bounds decoded with one
``frombuffer`` per manifest. Any other predicate (strings, decimals, uuids, binary, booleans,
``starts_with``) is evaluated per entry by ``InclusiveMetricsEvaluator`` itself, on a view of
the entry holding only the referenced column's metrics, so the semantics stay in one place.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from icefloe.errors import ValidationError
from icefloe.expressions import (
    AlwaysTrue,
    BoundPredicate,
    BoundReference,
    Expression,
    InclusiveMetricsEvaluator,
    bind,
    rewrite_not,
)
from icefloe.expressions.visitors import BoundPredicateVisitor, visit
from icefloe.scan._columnar import DecodedManifest
from icefloe.scan._columnar.metrics import EntryMetrics
from icefloe.spec.conversions import from_bytes
from icefloe.spec.schema import Schema
from icefloe.spec.types import (
    DateType,
    DoubleType,
    FloatType,
    IcebergType,
    IntegerType,
    LongType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
)

__all__ = ["NUMERIC_TYPES", "SMALL_MANIFEST", "MetricsFilter", "Vectorized"]

#: Manifests of at most this many entries are checked file by file, by the evaluator itself:
#: on a few entries (a table of small appends has a manifest a file) building the files and
#: evaluating them costs less than numpy's calls on tiny arrays.
SMALL_MANIFEST = 3
#: IN lists longer than this are not checked against bounds (as Java and the evaluator).
_IN_LIMIT = 200

# Number-like types: (numpy dtype of the usual serialized form, its width in bytes).
NUMERIC_TYPES: dict[type[IcebergType], tuple[str, int]] = {
    IntegerType: ("<i4", 4),
    DateType: ("<i4", 4),
    LongType: ("<i8", 8),
    TimeType: ("<i8", 8),
    TimestampType: ("<i8", 8),
    TimestamptzType: ("<i8", 8),
    TimestampNanoType: ("<i8", 8),
    TimestamptzNanoType: ("<i8", 8),
    FloatType: ("<f4", 4),
    DoubleType: ("<f8", 8),
}
_INT64 = (-(2**63), 2**63 - 1)


class _Column:
    """The metrics of one column in one manifest, as arrays (computed on first use)."""

    def __init__(self, decoded: DecodedManifest, ref: BoundReference):
        self.decoded = decoded
        self.ref = ref
        self.field_id = ref.field_id
        self.n = decoded.count
        self._counts: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._bounds: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def _count(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        found = self._counts.get(name)
        if found is None:
            found = self._counts[name] = self.decoded.counts(name).get(self.field_id)
        return found

    def values(self) -> tuple[np.ndarray, np.ndarray]:
        """(known, value count) per entry."""
        return self._count("value_counts")

    def nulls(self) -> tuple[np.ndarray, np.ndarray]:
        """(known, null count): known and 0 when the column cannot hold nulls."""
        if not self.ref.produces_null:
            return np.ones(self.n, dtype=bool), np.zeros(self.n, dtype=np.int64)
        return self._count("null_value_counts")

    def nans(self) -> tuple[np.ndarray, np.ndarray]:
        if not self.ref.is_floating:
            return np.ones(self.n, dtype=bool), np.zeros(self.n, dtype=np.int64)
        return self._count("nan_value_counts")

    def nulls_only(self) -> np.ndarray:
        vk, v = self.values()
        nk, n = self.nulls()
        result: np.ndarray = vk & nk & (v - n <= 0)
        return result

    def nans_only(self) -> np.ndarray:
        vk, v = self.values()
        nk, n = self.nans()
        result: np.ndarray = vk & nk & (v - n <= 0)
        return result

    def none_comparable(self) -> np.ndarray:
        vk, v = self.values()
        nk, n = self.nulls()
        _, nans = self.nans()  # 0 where unknown
        result: np.ndarray = vk & nk & (v - n - nans <= 0)
        return result

    def bound(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(known, value) of the lower or upper bound; unknown where absent, undecodable or NaN."""
        found = self._bounds.get(name)
        if found is None:
            found = self._bounds[name] = self._decode(name)
        return found

    def _decode(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        column = self.decoded.bounds(name)
        field_type = self.ref.type
        dtype, width = NUMERIC_TYPES[type(field_type)]
        is_float = dtype[1] == "f"
        fixed = column.fixed(self.field_id, dtype, width)
        if fixed is not None:  # every entry has the bound, of the usual width
            values = fixed.astype(np.float64 if is_float else np.int64)
            known = ~np.isnan(values) if is_float else np.ones(self.n, dtype=bool)
            return known, values
        present, start, length = column.raw(self.field_id)
        result = np.zeros(self.n, dtype=np.float64 if is_float else np.int64)
        usual = present & (length == width)
        if usual.any():
            data = np.frombuffer(column.blob, dtype=np.uint8)
            starts = start[usual]
            gathered = data[starts[:, None] + np.arange(width)]
            result[usual] = np.ascontiguousarray(gathered).view(dtype).ravel()
        known = usual.copy()
        # Promoted columns keep bounds of the old width; other widths are undecodable: both
        # as ``from_bytes`` decides, one entry at a time (rare).
        for i in np.flatnonzero(present & ~usual).tolist():
            raw = column.blob[int(start[i]) : int(start[i] + length[i])]
            try:
                value = from_bytes(field_type, raw)
            except ValidationError:
                continue
            result[i] = value
            known[i] = True
        if is_float:
            known &= ~np.isnan(result)  # NaN bounds are unreliable
        return known, result


# What a mask is computed from: a manifest here (``_Context``), a manifest list in
# ``_summary_filter``; anything with ``n``, the number of rows.
Mask = Callable[[Any], np.ndarray]


class _Context:
    """One manifest being filtered: its columns, built once per referenced column."""

    def __init__(self, decoded: DecodedManifest):
        self.decoded = decoded
        self.n = decoded.count
        self._columns: dict[int, _Column] = {}

    def column(self, ref: BoundReference) -> _Column:
        found = self._columns.get(ref.field_id)
        if found is None:
            found = self._columns[ref.field_id] = _Column(self.decoded, ref)
        return found


def _literal_fits(ref: BoundReference, value: Any) -> bool:
    """Whether numpy compares ``value`` with the column's array exactly as Python would."""
    dtype = NUMERIC_TYPES[type(ref.type)][0]
    if dtype[1] == "f":
        return isinstance(value, (float, int)) and not isinstance(value, bool)
    return isinstance(value, int) and not isinstance(value, bool) and _INT64[0] <= value <= _INT64[1]


class Vectorized(BoundPredicateVisitor[Mask]):
    """Inclusive checks on whole columns: number-like comparisons on bound arrays (each
    subclass supplies ``_with_bounds`` and the null / NaN checks), others ``_per_entry``."""

    def __init__(self, schema: Schema, case_sensitive: bool):
        self.schema = schema
        self.case_sensitive = case_sensitive

    def always_true(self) -> Mask:
        return lambda ctx: np.ones(ctx.n, dtype=bool)

    def always_false(self) -> Mask:
        return lambda ctx: np.zeros(ctx.n, dtype=bool)

    def and_(self, left: Mask, right: Mask) -> Mask:
        return lambda ctx: left(ctx) & right(ctx)

    def or_(self, left: Mask, right: Mask) -> Mask:
        return lambda ctx: left(ctx) | right(ctx)

    def bound_predicate(self, predicate: BoundPredicate) -> Mask:
        ref = predicate.term
        if type(ref.type) in NUMERIC_TYPES:
            op = predicate.op
            if op.is_unary:
                values: Any = ()
            elif op.is_set:
                values = predicate.literals or ()
            else:
                values = (predicate.literal,)
            if all(_literal_fits(ref, v) for v in values):
                return super().bound_predicate(predicate)
        return self._per_entry(predicate)

    def _per_entry(self, predicate: BoundPredicate) -> Mask:
        evaluator = InclusiveMetricsEvaluator(self.schema, predicate, self.case_sensitive)
        field_id = predicate.term.field_id

        def mask(ctx: _Context) -> np.ndarray:
            return _evaluate_per_entry(ctx.decoded, field_id, evaluator)

        return mask

    # -- counts only

    def is_null(self, ref: BoundReference) -> Mask:
        def mask(ctx: _Context) -> np.ndarray:
            known, nulls = ctx.column(ref).nulls()
            result: np.ndarray = ~known | (nulls != 0)
            return result

        return mask

    def not_null(self, ref: BoundReference) -> Mask:
        return lambda ctx: ~ctx.column(ref).nulls_only()

    def is_nan(self, ref: BoundReference) -> Mask:
        def mask(ctx: _Context) -> np.ndarray:
            column = ctx.column(ref)
            known, nans = column.nans()
            result: np.ndarray = (~known | (nans != 0)) & ~column.nulls_only()
            return result

        return mask

    def not_nan(self, ref: BoundReference) -> Mask:
        return lambda ctx: ~ctx.column(ref).nans_only()

    # -- bounds

    def _with_bounds(
        self,
        ref: BoundReference,
        test: Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray],
    ) -> Mask:
        def mask(ctx: _Context) -> np.ndarray:
            column = ctx.column(ref)
            lk, lo = column.bound("lower_bounds")
            hk, hi = column.bound("upper_bounds")
            result: np.ndarray = ~column.none_comparable() & test(lk, lo, hk, hi)
            return result

        return mask

    def lt(self, ref: BoundReference, value: Any) -> Mask:
        return self._with_bounds(ref, lambda lk, lo, hk, hi: ~lk | (lo < value))

    def lt_eq(self, ref: BoundReference, value: Any) -> Mask:
        return self._with_bounds(ref, lambda lk, lo, hk, hi: ~lk | (lo <= value))

    def gt(self, ref: BoundReference, value: Any) -> Mask:
        return self._with_bounds(ref, lambda lk, lo, hk, hi: ~hk | (hi > value))

    def gt_eq(self, ref: BoundReference, value: Any) -> Mask:
        return self._with_bounds(ref, lambda lk, lo, hk, hi: ~hk | (hi >= value))

    def eq(self, ref: BoundReference, value: Any) -> Mask:
        return self._with_bounds(ref, lambda lk, lo, hk, hi: (~lk | (lo <= value)) & (~hk | (value <= hi)))

    def not_eq(self, ref: BoundReference, value: Any) -> Mask:
        return self._with_bounds(ref, lambda lk, lo, hk, hi: ~(lk & hk & (lo == value) & (hi == value)))

    def in_(self, ref: BoundReference, values: frozenset[Any]) -> Mask:
        if len(values) > _IN_LIMIT:
            return self._with_bounds(ref, lambda lk, lo, hk, hi: np.ones(len(lk), dtype=bool))
        literals = sorted(values)

        def test(lk: np.ndarray, lo: np.ndarray, hk: np.ndarray, hi: np.ndarray) -> np.ndarray:
            result = np.zeros(len(lk), dtype=bool)
            for v in literals:
                result |= (~lk | (lo <= v)) & (~hk | (v <= hi))
            return result

        return self._with_bounds(ref, test)

    def not_in(self, ref: BoundReference, values: frozenset[Any]) -> Mask:
        literals = sorted(values)

        def test(lk: np.ndarray, lo: np.ndarray, hk: np.ndarray, hi: np.ndarray) -> np.ndarray:
            single = lk & hk & (lo == hi)
            member = np.zeros(len(lk), dtype=bool)
            for v in literals:
                member |= lo == v
            result: np.ndarray = ~(single & member)
            return result

        return self._with_bounds(ref, test)


class _EntryView:
    """What ``InclusiveMetricsEvaluator`` reads of a file, for one column of one entry."""

    __slots__ = (
        "lower_bounds",
        "nan_value_counts",
        "null_value_counts",
        "record_count",
        "upper_bounds",
        "value_counts",
    )

    def __init__(self) -> None:
        self.record_count = 1  # the record count is checked by MetricsFilter itself
        self.value_counts: dict[int, Any] = {}
        self.null_value_counts: dict[int, Any] = {}
        self.nan_value_counts: dict[int, Any] = {}
        self.lower_bounds: dict[int, Any] = {}
        self.upper_bounds: dict[int, Any] = {}


def _evaluate_per_entry(
    decoded: DecodedManifest, field_id: int, evaluator: InclusiveMetricsEvaluator
) -> np.ndarray:
    counts = []
    for name in ("value_counts", "null_value_counts", "nan_value_counts"):
        present, values = decoded.counts(name).get(field_id)
        counts.append((present.tolist(), values.tolist()))
    bounds = []
    for name in ("lower_bounds", "upper_bounds"):
        column = decoded.bounds(name)
        present, start, length = column.raw(field_id)
        blob = column.blob
        bounds.append(
            [
                blob[s : s + n] if p else None
                for p, s, n in zip(present.tolist(), start.tolist(), length.tolist())
            ]
        )
    (vp, vv), (np_, nv), (xp, xv) = counts
    lower, upper = bounds
    result = np.zeros(decoded.count, dtype=bool)
    view = _EntryView()
    check = evaluator.eval
    for i in range(decoded.count):
        view.value_counts = {field_id: vv[i]} if vp[i] else {}
        view.null_value_counts = {field_id: nv[i]} if np_[i] else {}
        view.nan_value_counts = {field_id: xv[i]} if xp[i] else {}
        view.lower_bounds = {} if lower[i] is None else {field_id: lower[i]}
        view.upper_bounds = {} if upper[i] is None else {field_id: upper[i]}
        result[i] = check(view)
    return result


class MetricsFilter:
    """Whether the files of a manifest may hold rows matching a filter (see the module).

    Args:
        schema: the table schema the files' field ids belong to.
        expr: the filter (bound or unbound).
        case_sensitive: how column names are matched when binding.
    """

    def __init__(self, schema: Schema, expr: Expression, case_sensitive: bool = True):
        self.expr = rewrite_not(bind(schema, expr, case_sensitive=case_sensitive))
        self.is_trivial = isinstance(self.expr, AlwaysTrue)
        self._mask = visit(self.expr, Vectorized(schema, case_sensitive))
        self._schema = schema
        self._case_sensitive = case_sensitive
        self._evaluator: InclusiveMetricsEvaluator | None = None  # made on first use

    def might_match(self, decoded: DecodedManifest) -> np.ndarray:
        """Per entry: False only if no row of the file can match."""
        if decoded.count <= SMALL_MANIFEST:
            return self._per_file(decoded)
        records = decoded.record_count
        positive = records > 0
        result = records < 0  # unknown counts (imported Avro files): cannot be trusted
        if positive.any():
            result |= positive & self._mask(_Context(decoded))
        return result

    def _per_file(self, decoded: DecodedManifest) -> np.ndarray:
        if self._evaluator is None:
            self._evaluator = InclusiveMetricsEvaluator(self._schema, self.expr, self._case_sensitive)
        check = self._evaluator.eval
        columns = decoded.metrics
        records = decoded.record_count.tolist()
        return np.array([check(EntryMetrics(columns, i, n)) for i, n in enumerate(records)], dtype=bool)
