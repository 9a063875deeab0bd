"""ReplaceSortOrder: replace the table's default sort order (Java's ``BaseReplaceSortOrder``).

::

    table.replace_sort_order().asc("day(ts)").desc("id", "nulls-first").commit()

Terms are column names or transform terms in the form ``sort_by`` and ``partition_by`` take
(``"bucket(16, id)"``, ``"day(ts)"``, ``"truncate(4, name)"``). Null order defaults as in Java:
nulls first when ascending, nulls last when descending. No term at all replaces the order by
the unsorted order. A new order equal to an existing one reuses that order's id.

Each term is bound when it is added (an unknown column or a transform the column's type does
not take raises ValidationError at once) and again, by name, on the metadata the commit
applies to. The commit asserts the default sort order id it replaced
(``assert-default-sort-order-id``), so a concurrent sort order change makes it fail and retry
on the fresh metadata, as Java re-applies the new order after a refresh.
"""

from __future__ import annotations

import re

from icefloe.errors import ValidationError
from icefloe.spec.schema import Schema
from icefloe.spec.sorting import NullOrder, SortDirection, SortOrder, build_sort_order
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.updates import AddSortOrder, AssertDefaultSortOrderId, SetDefaultSortOrder
from icefloe.table.operation import Changes, PendingUpdate, TableOperations

__all__ = ["ReplaceSortOrder"]

_NULL_ORDERS = {
    "nulls-first": NullOrder.NULLS_FIRST,
    "first": NullOrder.NULLS_FIRST,
    "nulls-last": NullOrder.NULLS_LAST,
    "last": NullOrder.NULLS_LAST,
}


class ReplaceSortOrder(PendingUpdate[SortOrder]):
    """``table.replace_sort_order()``; ``apply()`` returns the new SortOrder."""

    def __init__(self, transaction: TableOperations, *, autocommit: bool):
        super().__init__(transaction, autocommit=autocommit)
        self._terms: list[tuple[str, SortDirection, NullOrder]] = []
        self._case_sensitive = True

    def asc(self, term: str, null_order: NullOrder | str | None = None) -> ReplaceSortOrder:
        """Sort ascending by ``term`` (nulls first unless ``null_order`` says otherwise)."""
        return self._add(term, SortDirection.ASC, _null_order(null_order, NullOrder.NULLS_FIRST))

    def desc(self, term: str, null_order: NullOrder | str | None = None) -> ReplaceSortOrder:
        """Sort descending by ``term`` (nulls last unless ``null_order`` says otherwise)."""
        return self._add(term, SortDirection.DESC, _null_order(null_order, NullOrder.NULLS_LAST))

    def case_sensitive(self, value: bool = True) -> ReplaceSortOrder:
        """Whether column names in terms are matched case-sensitively (default true)."""
        self._check_mutable()
        self._case_sensitive = value
        # Terms added so far must still bind under the new setting.
        _bind(self._base.schema(), self._terms, value)
        return self

    def _add(self, term: str, direction: SortDirection, null_order: NullOrder) -> ReplaceSortOrder:
        self._check_mutable()
        if not isinstance(term, str) or not term.strip():
            raise ValidationError(f"sort term must be a column name or transform term, not {term!r}")
        terms = [*self._terms, (term.strip(), direction, null_order)]
        _bind(self._base.schema(), terms[-1:], self._case_sensitive)
        self._terms = terms
        return self

    def _order(self, base: TableMetadata) -> SortOrder:
        return _bind(base.schema(), self._terms, self._case_sensitive)

    def _produce(self, base: TableMetadata) -> Changes:
        order = self._order(base)
        return Changes(
            [AddSortOrder(order), SetDefaultSortOrder()],
            [AssertDefaultSortOrderId(base.default_sort_order_id)],
        )

    def _result(self, base: TableMetadata, changes: Changes) -> SortOrder:
        return changes.apply_to(base).sort_order()


def _null_order(value: NullOrder | str | None, default: NullOrder) -> NullOrder:
    """``NullOrder``, or text: ``"nulls-first"``, ``"NULLS LAST"``, ``"first"``, ..."""
    if value is None:
        return default
    if isinstance(value, NullOrder):
        return value
    found = None
    if isinstance(value, str):
        found = _NULL_ORDERS.get(re.sub(r"[\s_]+", "-", value.strip().lower()))
    if found is None:
        raise ValidationError(f"invalid null order {value!r}; expected 'nulls-first' or 'nulls-last'")
    return found


def _bind(
    schema: Schema, terms: list[tuple[str, SortDirection, NullOrder]], case_sensitive: bool
) -> SortOrder:
    """The sort order of ``terms`` bound to ``schema`` (ValidationError names a bad term)."""
    texts = [
        f"{term} {direction.value.upper()} "
        f"{'NULLS FIRST' if null_order == NullOrder.NULLS_FIRST else 'NULLS LAST'}"
        for term, direction, null_order in terms
    ]
    return build_sort_order(schema, texts, case_sensitive=case_sensitive)
