"""Sort orders (spec: "Sorting"): how writers should order rows within data files."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from icefloe.errors import ValidationError
from icefloe.spec.partitioning import SpecProblem, parse_partition_term, source_problem
from icefloe.spec.schema import Schema
from icefloe.spec.transforms import Transform, parse_transform

__all__ = [
    "UNSORTED_SORT_ORDER",
    "NullOrder",
    "SortDirection",
    "SortField",
    "SortOrder",
    "build_sort_order",
    "sort_order_binding_problem",
]


class SortDirection(StrEnum):
    ASC = "asc"
    DESC = "desc"


class NullOrder(StrEnum):
    NULLS_FIRST = "nulls-first"
    NULLS_LAST = "nulls-last"


@dataclass(frozen=True, slots=True)
class SortField:
    source_id: int
    transform: Transform
    direction: SortDirection = SortDirection.ASC
    null_order: NullOrder | None = None

    def __post_init__(self) -> None:
        if isinstance(self.transform, str):
            object.__setattr__(self, "transform", parse_transform(self.transform))
        object.__setattr__(self, "direction", SortDirection(self.direction))
        # Java's default: nulls first when ascending, last when descending.
        if self.null_order is None:
            default = NullOrder.NULLS_FIRST if self.direction == SortDirection.ASC else NullOrder.NULLS_LAST
            object.__setattr__(self, "null_order", default)
        else:
            object.__setattr__(self, "null_order", NullOrder(self.null_order))

    def __str__(self) -> str:
        nulls = "NULLS FIRST" if self.null_order == NullOrder.NULLS_FIRST else "NULLS LAST"
        return f"{self.transform}({self.source_id}) {self.direction.value.upper()} {nulls}"


@dataclass(frozen=True, slots=True)
class SortOrder:
    """A sort order; order id 0 is reserved for "unsorted" (no fields)."""

    fields: tuple[SortField, ...] = ()
    order_id: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))
        if not self.fields and self.order_id != 0:
            object.__setattr__(self, "order_id", 0)
        if self.fields and self.order_id == 0:
            raise ValidationError("sort order id 0 is reserved for the unsorted order")

    @property
    def is_unsorted(self) -> bool:
        return not self.fields

    @property
    def is_sorted(self) -> bool:
        return bool(self.fields)

    def same_order(self, other: SortOrder) -> bool:
        return self.fields == other.fields

    def __str__(self) -> str:
        return "[" + ", ".join(str(f) for f in self.fields) + "]"

    def __repr__(self) -> str:
        # Source columns by id (names need a schema), directions and null orders in words.
        fields = ", ".join(
            f"{f.transform}(source {f.source_id}) {f.direction.value.upper()} "
            + ("NULLS FIRST" if f.null_order == NullOrder.NULLS_FIRST else "NULLS LAST")
            for f in self.fields
        )
        return f"SortOrder(order_id={self.order_id}, fields=[{fields}])"


UNSORTED_SORT_ORDER = SortOrder((), order_id=0)


def sort_order_binding_problem(order: SortOrder, schema: Schema) -> SpecProblem | None:
    """The first reason the default sort ``order`` does not bind to ``schema``, or None.

    Java binds the default sort order to the current schema (on load and on every change):
    each field needs a primitive source column of a type its transform accepts. Other sort
    orders may name columns dropped since (Java binds them unchecked).
    """
    for i, sf in enumerate(order.fields):
        problem = source_problem(
            schema,
            sf.source_id,
            sf.transform,
            f"sort field {i} of the default sort order {order.order_id}",
            "sort",
            in_structs_only=False,
        )
        if problem is not None:
            return SpecProblem(i, problem[0], problem[1])
    return None


_SUFFIX = re.compile(r"\s+(ASC|DESC)?\s*(NULLS\s+(FIRST|LAST))?\s*$", re.IGNORECASE)


def build_sort_order(
    schema: Schema, terms: Iterable[str] | SortOrder | None, *, order_id: int = 1, case_sensitive: bool = True
) -> SortOrder:
    """A SortOrder from ``sort_by`` input: a SortOrder, strings like ``"id"``,
    ``"ts DESC NULLS LAST"``, ``"bucket(16, id) ASC"``, or None (unsorted).

    Raises:
        ValidationError: naming a term that does not parse or a column that does not exist.
    """
    if terms is None:
        return UNSORTED_SORT_ORDER
    if isinstance(terms, SortOrder):
        return terms
    if isinstance(terms, str):
        terms = [terms]
    fields = []
    for term in terms:
        expr, direction, null_order = _split_term(term)
        column, transform = parse_partition_term(expr)
        source = schema.find_field(column, case_sensitive)
        if source is None:
            raise ValidationError(f"cannot sort by '{column}': no such column in the schema")
        if not transform.can_transform(source.field_type):
            raise ValidationError(f"cannot sort column '{column}' of type {source.field_type} by {transform}")
        fields.append(SortField(source.field_id, transform, direction, null_order))
    if not fields:
        return UNSORTED_SORT_ORDER
    return SortOrder(tuple(fields), order_id=order_id)


def _split_term(term: str) -> tuple[str, SortDirection, NullOrder | None]:
    match = _SUFFIX.search(" " + term)
    direction = SortDirection.ASC
    null_order: NullOrder | None = None
    expr = term.strip()
    if match and (match.group(1) or match.group(2)):
        expr = (" " + term)[: match.start()].strip()
        if match.group(1):
            direction = SortDirection(match.group(1).lower())
        if match.group(3):
            null_order = NullOrder.NULLS_FIRST if match.group(3).upper() == "FIRST" else NullOrder.NULLS_LAST
    if not expr:
        raise ValidationError(f"cannot parse sort term {term!r}")
    return expr, direction, null_order
