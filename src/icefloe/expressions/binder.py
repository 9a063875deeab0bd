"""Binding: resolve column names in a schema and convert literals to the columns' types.

Binding folds what the schema decides: ``is_null`` of a column that cannot be null is
``always_false()``, a literal beyond the column's range makes a comparison constant or exact
(``int_col < 1e20`` is ``int_col <= 2147483647``; see :mod:`icefloe.expressions.literals`),
``IN`` with one distinct value is ``=``.
"""

from __future__ import annotations

from collections.abc import Iterable

from icefloe.errors import InvalidFilterError, InvalidSchemaError
from icefloe.expressions.literals import ABOVE_MAX, BELOW_MIN, Inexact, Literal, literal_for
from icefloe.expressions.model import (
    AlwaysFalse,
    AlwaysTrue,
    BoundPredicate,
    BoundReference,
    Expression,
    Operation,
    UnboundPredicate,
    and_,
    not_,
    or_,
)
from icefloe.expressions.parser import parse
from icefloe.expressions.visitors import ExpressionVisitor, visit
from icefloe.spec.schema import Schema
from icefloe.spec.types import (
    ListType,
    MapType,
    NestedField,
    PrimitiveType,
    StringType,
    StructType,
    UnknownType,
    VariantType,
)

__all__ = ["bind", "bind_reference", "reference_for_id"]


def _as_schema(struct: Schema | StructType) -> Schema:
    if isinstance(struct, Schema):
        return struct
    if isinstance(struct, StructType):
        try:
            return Schema(*struct.fields)
        except InvalidSchemaError as e:
            raise InvalidFilterError(f"cannot bind to struct {struct}: {e}") from e
    raise InvalidFilterError(f"expected a Schema or StructType to bind to, not {type(struct).__name__}")


def reference_for_id(
    schema: Schema | StructType, field_id: int, *, name: str | None = None
) -> BoundReference:
    """The bound reference of the field with ``field_id``.

    Raises:
        InvalidFilterError: no such field, or it is inside a list or map (filters reach only
            into structs).
    """
    schema = _as_schema(schema)
    shown = name or schema.find_column_name(field_id) or f"field id {field_id}"
    if schema.find_field(field_id) is None:
        raise InvalidFilterError(
            f"column '{shown}' (field id {field_id}) is not in schema {schema.schema_id}"
        )
    chain = [field_id]
    while (parent := schema.parent_id(chain[-1])) is not None:
        chain.append(parent)
    accessor: list[int] = []
    path: list[str] = []
    produces_null = False
    current: object = schema.as_struct()
    for fid in reversed(chain):
        if not isinstance(current, StructType):
            kind = (
                "list"
                if isinstance(current, ListType)
                else "map"
                if isinstance(current, MapType)
                else "value"
            )
            raise InvalidFilterError(
                f"column '{shown}' is inside a {kind}: filters on list elements and map entries are not supported"
            )
        position = next(i for i, f in enumerate(current.fields) if f.field_id == fid)
        field: NestedField = current.fields[position]
        accessor.append(position)
        path.append(field.name)
        produces_null = produces_null or field.optional
        current = field.field_type
    return BoundReference(field_id, field, tuple(accessor), tuple(path), produces_null)


def bind_reference(schema: Schema | StructType, name: str, *, case_sensitive: bool = True) -> BoundReference:
    """Resolve a column by (dotted) name.

    Raises:
        InvalidFilterError: naming the column when it is missing or not reachable.
    """
    schema = _as_schema(schema)
    field = schema.find_field(name, case_sensitive)
    if field is None:
        hint = "" if case_sensitive else " (case-insensitive)"
        raise InvalidFilterError(
            f"column '{name}' not found in schema{hint}; columns are: {', '.join(schema.column_names)}"
        )
    return reference_for_id(schema, field.field_id, name=name)


def _unary(op: Operation, ref: BoundReference) -> Expression:
    """A bound unary predicate, folded when the column cannot be null."""
    if not ref.produces_null and op == Operation.IS_NULL:
        return AlwaysFalse()
    if not ref.produces_null and op == Operation.NOT_NULL:
        return AlwaysTrue()
    return BoundPredicate(op, ref)


def _never(ref: BoundReference, value: Inexact) -> Expression:
    """False for every value a comparison sees, unknown for null and NaN: what a comparison with
    a literal no value of the column equals is (``x = 2.5`` on an int column).

    A constant would not do: ``NOT (x = 2.5)`` must stay unknown (not match) where ``x`` is null,
    exactly like ``x != 2.5``. So the literal's neighbours give a comparison no value passes:
    below the type's minimum, above its maximum, or strictly between two adjacent values.
    """
    if not ref.produces_null and not ref.is_floating:
        return AlwaysFalse()  # no null or NaN: nothing is ever unknown
    if value.lower is BELOW_MIN:
        return BoundPredicate(Operation.LT, ref, value.upper)
    if value.upper is ABOVE_MAX:
        return BoundPredicate(Operation.GT, ref, value.lower)
    return and_(
        BoundPredicate(Operation.GT, ref, value.lower), BoundPredicate(Operation.LT, ref, value.upper)
    )


def _always(ref: BoundReference, value: Inexact) -> Expression:
    """True for every value a comparison sees, unknown for null and NaN (``x != 2.5``)."""
    return _never(ref, value).negate()


def _bind_value(op: Operation, ref: BoundReference, value: object) -> Expression:
    if not isinstance(value, Inexact):
        return BoundPredicate(op, ref, value)
    # The literal lies strictly between value.lower and value.upper, two adjacent values.
    if op == Operation.EQ:
        return _never(ref, value)
    if op == Operation.NOT_EQ:
        return _always(ref, value)
    if op in (Operation.LT, Operation.LT_EQ):
        return (
            _never(ref, value)
            if value.lower is BELOW_MIN
            else BoundPredicate(Operation.LT_EQ, ref, value.lower)
        )
    if value.upper is ABOVE_MAX:
        return _never(ref, value)
    return BoundPredicate(Operation.GT_EQ, ref, value.upper)


def _convert(ref: BoundReference, lit: Literal) -> object:
    try:
        return lit.to(ref.type)
    except InvalidFilterError as e:
        raise InvalidFilterError(f"filter on column '{ref.name}': {e}") from None


def bind_predicate(
    op: Operation, ref: BoundReference, lit: Literal | None = None, lits: Iterable[Literal] | None = None
) -> Expression:
    """Bind one predicate to a resolved column.

    Raises:
        InvalidFilterError: the operation does not apply to the column's type, or a literal
            does not convert to it.
    """
    type_ = ref.type
    if op.is_unary:
        if op in (Operation.IS_NAN, Operation.NOT_NAN) and not ref.is_floating:
            raise InvalidFilterError(f"IS [NOT] NAN needs a float or double column; '{ref.name}' is {type_}")
        return _unary(op, ref)
    if not isinstance(type_, PrimitiveType) or isinstance(type_, (UnknownType, VariantType)):
        raise InvalidFilterError(
            f"column '{ref.name}' of type {type_} cannot be compared; only IS [NOT] NULL applies to it"
        )
    if op in (Operation.STARTS_WITH, Operation.NOT_STARTS_WITH) and not isinstance(type_, StringType):
        raise InvalidFilterError(f"LIKE / starts_with needs a string column; '{ref.name}' is {type_}")
    if not op.is_set:
        assert lit is not None
        return _bind_value(op, ref, _convert(ref, lit))
    assert lits is not None
    converted = [_convert(ref, x) for x in lits]
    exact = {v for v in converted if not isinstance(v, Inexact)}
    if not exact:
        # Any of the literals gives the same answer; the first by text keeps binding stable.
        inexact = min((v for v in converted if isinstance(v, Inexact)), key=repr)
        return _never(ref, inexact) if op == Operation.IN else _always(ref, inexact)
    if op == Operation.IN:
        if len(exact) == 1:
            return BoundPredicate(Operation.EQ, ref, exact.pop())
        return BoundPredicate(op, ref, literals=frozenset(exact))
    if len(exact) == 1:
        return BoundPredicate(Operation.NOT_EQ, ref, exact.pop())
    return BoundPredicate(op, ref, literals=frozenset(exact))


class _Binder(ExpressionVisitor[Expression]):
    def __init__(self, schema: Schema, case_sensitive: bool):
        self.schema = schema
        self.case_sensitive = case_sensitive

    def always_true(self) -> Expression:
        return AlwaysTrue()

    def always_false(self) -> Expression:
        return AlwaysFalse()

    def not_(self, child: Expression) -> Expression:
        return not_(child)

    def and_(self, left: Expression, right: Expression) -> Expression:
        return and_(left, right)

    def or_(self, left: Expression, right: Expression) -> Expression:
        return or_(left, right)

    def unbound_predicate(self, predicate: UnboundPredicate) -> Expression:
        ref = bind_reference(self.schema, predicate.term.name, case_sensitive=self.case_sensitive)
        return bind_predicate(predicate.op, ref, predicate.literal, predicate.literals)

    def bound_predicate(self, predicate: BoundPredicate) -> Expression:
        # Re-binding resolves the same field id in this schema (names may have changed since).
        old = predicate.term
        ref = reference_for_id(self.schema, old.field_id, name=old.name)
        lit = None if predicate.literal is None else literal_for(old.type, predicate.literal)
        lits = None if predicate.literals is None else [literal_for(old.type, v) for v in predicate.literals]
        return bind_predicate(predicate.op, ref, lit, lits)


def bind(schema: Schema | StructType, expr: Expression | str, *, case_sensitive: bool = True) -> Expression:
    """Bind ``expr`` (an expression or filter text) to ``schema``.

    Already bound predicates are re-bound by field id, so a filter bound to one version of a
    schema can be bound to another.

    Raises:
        InvalidFilterError: naming the column or literal: an unknown column, a value that does
            not convert to the column's type, NaN in a comparison, LIKE on a non-string column,
            a column inside a list or map, ...
    """
    if isinstance(expr, str):
        expr = parse(expr)
    return visit(expr, _Binder(_as_schema(schema), case_sensitive))
