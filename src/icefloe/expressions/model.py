"""The expression tree: constants, boolean connectives and predicates, unbound and bound.

Expressions are immutable values, equal by value and hashable. ``str(expr)`` is SQL-like text
that :func:`icefloe.expressions.parse` reads back to an equal expression (a bound expression
reads back as its unbound form, which binds to an equal expression).

An :class:`UnboundPredicate` names a column (:class:`Reference`) and holds :class:`Literal`
values as the user wrote them. Binding (:func:`icefloe.expressions.bind`) resolves the column
to a :class:`BoundReference` and converts the literals to the column's type, giving a
:class:`BoundPredicate` whose values are in icefloe's representation (see
:mod:`icefloe.spec.types`).

Semantics (every evaluator in icefloe follows them): a predicate on a null value is unknown,
as in SQL, and so is a comparison, ``IN``/``NOT IN`` or ``LIKE`` of a NaN (NaN is only seen by
``is_nan``/``not_nan``); ``is_null``, ``not_null``, ``is_nan`` and ``not_nan`` are never
unknown. ``NOT`` of unknown is unknown; a row matches a filter when the filter is true. So
``x != 5`` matches neither nulls nor NaN, and ``NOT (x = 5)`` matches exactly what
``x != 5`` matches.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from icefloe.errors import InvalidFilterError
from icefloe.expressions._text import quote_string
from icefloe.expressions.literals import Literal, StringLiteral, literal, literal_for
from icefloe.spec.types import DoubleType, FloatType, IcebergType, NestedField

__all__ = [
    "RESERVED_WORDS",
    "AlwaysFalse",
    "AlwaysTrue",
    "And",
    "BooleanExpression",
    "BoundPredicate",
    "BoundReference",
    "Expression",
    "Not",
    "Operation",
    "Or",
    "Reference",
    "UnboundPredicate",
    "always_false",
    "always_true",
    "and_",
    "format_identifier",
    "not_",
    "or_",
]

#: Words the filter parser reserves; columns with these names print backquoted.
RESERVED_WORDS = frozenset({"and", "or", "not", "in", "is", "null", "like", "between", "true", "false"})
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*(?:\.[A-Za-z_][A-Za-z0-9_$]*)*", re.ASCII)


def format_identifier(name: str) -> str:
    """A column name as the parser reads it: bare when plain, else in backquotes."""
    if _PLAIN_NAME.fullmatch(name) and not any(p.lower() in RESERVED_WORDS for p in name.split(".")):
        return name
    return "`" + name.replace("`", "``") + "`"


class Operation(Enum):
    """Predicate operations; values are the names of Iceberg's REST expression JSON."""

    IS_NULL = "is-null"
    NOT_NULL = "not-null"
    IS_NAN = "is-nan"
    NOT_NAN = "not-nan"
    LT = "lt"
    LT_EQ = "lt-eq"
    GT = "gt"
    GT_EQ = "gt-eq"
    EQ = "eq"
    NOT_EQ = "not-eq"
    STARTS_WITH = "starts-with"
    NOT_STARTS_WITH = "not-starts-with"
    IN = "in"
    NOT_IN = "not-in"

    def negate(self) -> Operation:
        """The operation that is true exactly where this one is false (and unknown alike)."""
        return _NEGATIONS[self]

    def flip(self) -> Operation:
        """The operation with its operands swapped: ``5 < x`` is ``x > 5``."""
        return _FLIPS.get(self, self)

    @property
    def is_unary(self) -> bool:
        return self in _UNARY

    @property
    def is_set(self) -> bool:
        return self in (Operation.IN, Operation.NOT_IN)

    @property
    def is_literal(self) -> bool:
        """A comparison or prefix operation: one literal."""
        return not self.is_unary and not self.is_set


_UNARY = frozenset({Operation.IS_NULL, Operation.NOT_NULL, Operation.IS_NAN, Operation.NOT_NAN})
_PAIRS = [
    (Operation.IS_NULL, Operation.NOT_NULL),
    (Operation.IS_NAN, Operation.NOT_NAN),
    (Operation.LT, Operation.GT_EQ),
    (Operation.LT_EQ, Operation.GT),
    (Operation.EQ, Operation.NOT_EQ),
    (Operation.STARTS_WITH, Operation.NOT_STARTS_WITH),
    (Operation.IN, Operation.NOT_IN),
]
_NEGATIONS = {**dict(_PAIRS), **{b: a for a, b in _PAIRS}}
_FLIPS = {
    Operation.LT: Operation.GT,
    Operation.GT: Operation.LT,
    Operation.LT_EQ: Operation.GT_EQ,
    Operation.GT_EQ: Operation.LT_EQ,
}
_COMPARISON_SQL = {
    Operation.LT: "<",
    Operation.LT_EQ: "<=",
    Operation.GT: ">",
    Operation.GT_EQ: ">=",
    Operation.EQ: "=",
    Operation.NOT_EQ: "!=",
}
_UNARY_SQL = {
    Operation.IS_NULL: "IS NULL",
    Operation.NOT_NULL: "IS NOT NULL",
    Operation.IS_NAN: "IS NAN",
    Operation.NOT_NAN: "IS NOT NAN",
}


class Expression:
    """Base of every expression. ``a & b``, ``a | b`` and ``~a`` are ``and_``, ``or_``, ``not_``."""

    __slots__ = ()

    def negate(self) -> Expression:
        """The expression true where this one is false: NOT pushed down to the predicates."""
        raise NotImplementedError

    def __and__(self, other: Expression) -> Expression:
        return and_(self, other)

    def __or__(self, other: Expression) -> Expression:
        return or_(self, other)

    def __invert__(self) -> Expression:
        return not_(self)


BooleanExpression = Expression
"""PyIceberg's name for :class:`Expression`."""


class AlwaysTrue(Expression):
    """The expression every row matches (a singleton)."""

    __slots__ = ()
    _instance: AlwaysTrue | None = None

    def __new__(cls) -> AlwaysTrue:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def negate(self) -> Expression:
        return AlwaysFalse()

    def __reduce__(self) -> tuple[Any, ...]:
        return (AlwaysTrue, ())

    def __str__(self) -> str:
        return "TRUE"

    def __repr__(self) -> str:
        return "AlwaysTrue()"


class AlwaysFalse(Expression):
    """The expression no row matches (a singleton)."""

    __slots__ = ()
    _instance: AlwaysFalse | None = None

    def __new__(cls) -> AlwaysFalse:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def negate(self) -> Expression:
        return AlwaysTrue()

    def __reduce__(self) -> tuple[Any, ...]:
        return (AlwaysFalse, ())

    def __str__(self) -> str:
        return "FALSE"

    def __repr__(self) -> str:
        return "AlwaysFalse()"


def _parenthesized(expr: Expression) -> str:
    return f"({expr})"


def _flatten(expr: Expression, cls: type[Expression]) -> list[Expression]:
    """The operands of a chain of ``cls`` nodes, left to right, without recursion."""
    result: list[Expression] = []
    stack = [expr]
    while stack:
        current = stack.pop()
        if type(current) is cls:
            stack.append(current.right)  # type: ignore[attr-defined]
            stack.append(current.left)  # type: ignore[attr-defined]
        else:
            result.append(current)
    return result


class _Connective(Expression):
    """And / Or: binary nodes whose equality ignores grouping (``(a AND b) AND c`` equals
    ``a AND (b AND c)``), so text round trips whatever the tree's shape."""

    __slots__ = ()
    left: Expression
    right: Expression
    depth: int  # of nested And / Or / Not nodes; kept small for the recursive tree walks
    _KEYWORD = ""
    _PARENTHESIZE: tuple[type[Expression], ...] = ()

    def operands(self) -> list[Expression]:
        """The operands of this node and of nested nodes of the same kind, left to right."""
        return _flatten(self, type(self))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, _Connective)
            and type(other) is type(self)
            and self.operands() == other.operands()
        )

    def __hash__(self) -> int:
        return hash((type(self).__name__, *self.operands()))

    def __str__(self) -> str:
        return f" {self._KEYWORD} ".join(
            _parenthesized(e) if isinstance(e, self._PARENTHESIZE) else str(e) for e in self.operands()
        )


def _depth(expr: Expression) -> int:
    if isinstance(expr, _Connective):
        return expr.depth
    if isinstance(expr, Not):
        return 1 + _depth(expr.child)
    return 0


@dataclass(frozen=True, slots=True, eq=False)
class And(_Connective):
    left: Expression
    right: Expression
    depth: int = field(init=False, repr=False)
    _KEYWORD = "AND"

    def __post_init__(self) -> None:
        object.__setattr__(self, "depth", 1 + max(_depth(self.left), _depth(self.right)))

    def negate(self) -> Expression:
        return or_(*(e.negate() for e in self.operands()))


@dataclass(frozen=True, slots=True, eq=False)
class Or(_Connective):
    left: Expression
    right: Expression
    depth: int = field(init=False, repr=False)
    _KEYWORD = "OR"

    def __post_init__(self) -> None:
        object.__setattr__(self, "depth", 1 + max(_depth(self.left), _depth(self.right)))

    def negate(self) -> Expression:
        return and_(*(e.negate() for e in self.operands()))


And._PARENTHESIZE = (Or,)
Or._PARENTHESIZE = (And,)


@dataclass(frozen=True, slots=True)
class Not(Expression):
    child: Expression

    def negate(self) -> Expression:
        return self.child

    def __str__(self) -> str:
        return f"NOT ({self.child})"


# ---------------------------------------------------------------------------------------------
# Terms


@dataclass(frozen=True, slots=True)
class Reference:
    """A column by name: a top-level name or a dotted path into structs (``location.lat``)."""

    name: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise InvalidFilterError(f"a column name must be a non-empty string, not {self.name!r}")

    def __str__(self) -> str:
        return format_identifier(self.name)


@dataclass(frozen=True, slots=True)
class BoundReference:
    """A column resolved in a schema (or partition struct).

    Attributes:
        field_id: the column's field id.
        field: the column's field (its type is ``field.field_type``).
        accessor: positions of the column and the structs that hold it, outermost first.
        path: the names along the same path (``("location", "lat")``).
        produces_null: whether the value can be null: the field or a struct holding it is
            optional.
    """

    field_id: int
    field: NestedField
    accessor: tuple[int, ...]
    path: tuple[str, ...]
    produces_null: bool = True

    @property
    def name(self) -> str:
        """The dotted name of the column."""
        return ".".join(self.path)

    @property
    def type(self) -> IcebergType:
        return self.field.field_type

    @property
    def is_floating(self) -> bool:
        return isinstance(self.field.field_type, (FloatType, DoubleType))

    def get(self, row: Any) -> Any:
        """The column's value in a row: a mapping by name (nested mappings for structs) or a
        sequence by position (nested sequences); None when it or a struct holding it is null."""
        value = row
        if isinstance(row, Mapping):
            for name in self.path:
                if value is None:
                    return None
                value = value.get(name)
            return value
        for position in self.accessor:
            if value is None:
                return None
            value = value[position]
        return value

    def __str__(self) -> str:
        return format_identifier(self.name)


# ---------------------------------------------------------------------------------------------
# Predicates


def _like_pattern(prefix: str) -> str:
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return quote_string(escaped + "%")


def _predicate_sql(op: Operation, term: str, value: str | None, values: Iterable[str] | None) -> str:
    if op.is_unary:
        return f"{term} {_UNARY_SQL[op]}"
    if op.is_set:
        assert values is not None
        keyword = "IN" if op == Operation.IN else "NOT IN"
        return f"{term} {keyword} ({', '.join(sorted(values))})"
    assert value is not None
    if op in _COMPARISON_SQL:
        return f"{term} {_COMPARISON_SQL[op]} {value}"
    keyword = "LIKE" if op == Operation.STARTS_WITH else "NOT LIKE"
    return f"{term} {keyword} {value}"


def _check_arity(op: Operation, has_literal: bool, has_literals: bool) -> None:
    if op.is_unary and (has_literal or has_literals):
        raise InvalidFilterError(f"{op.name} takes no value")
    if op.is_set and (has_literal or not has_literals):
        raise InvalidFilterError(f"{op.name} takes a non-empty set of values")
    if op.is_literal and (not has_literal or has_literals):
        raise InvalidFilterError(f"{op.name} takes exactly one value")


@dataclass(frozen=True, slots=True)
class UnboundPredicate(Expression):
    """A predicate on a column by name, with literals as written.

    ``literal`` holds the value of a comparison or prefix operation, ``literals`` the values of
    ``IN`` / ``NOT IN`` (a frozenset). Raw Python values are wrapped with
    :func:`icefloe.expressions.literals.literal`; a string term becomes a :class:`Reference`.
    """

    op: Operation
    term: Reference
    literal: Literal | None = None
    literals: frozenset[Literal] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.term, str):
            object.__setattr__(self, "term", Reference(self.term))
        if not isinstance(self.term, Reference):
            raise InvalidFilterError(f"a predicate needs a column, not {self.term!r}")
        if self.literal is not None and not isinstance(self.literal, Literal):
            object.__setattr__(self, "literal", literal(self.literal))
        if self.literals is not None:
            object.__setattr__(self, "literals", frozenset(literal(v) for v in self.literals))
        _check_arity(self.op, self.literal is not None, bool(self.literals))
        if self.op in (Operation.STARTS_WITH, Operation.NOT_STARTS_WITH) and not isinstance(
            self.literal, StringLiteral
        ):
            raise InvalidFilterError(
                f"{self.op.name} on '{self.term.name}' needs a string prefix, not {self.literal}"
            )

    def negate(self) -> Expression:
        return UnboundPredicate(self.op.negate(), self.term, self.literal, self.literals)

    def __str__(self) -> str:
        if self.op in (Operation.STARTS_WITH, Operation.NOT_STARTS_WITH):
            assert self.literal is not None
            value: str | None = _like_pattern(self.literal.value)
        else:
            value = None if self.literal is None else self.literal.sql()
        values = None if self.literals is None else [v.sql() for v in self.literals]
        return _predicate_sql(self.op, str(self.term), value, values)


@dataclass(frozen=True, slots=True)
class BoundPredicate(Expression):
    """A predicate on a resolved column; values are in icefloe's representation of its type.

    ``literal`` is the value of a comparison or prefix operation, ``literals`` the frozenset of
    ``IN`` / ``NOT IN`` values. Build these through :func:`icefloe.expressions.bind`, which
    validates and converts; the constructor only checks the shape.
    """

    op: Operation
    term: BoundReference
    literal: Any = None
    literals: frozenset[Any] | None = None

    def __post_init__(self) -> None:
        if self.literals is not None and not isinstance(self.literals, frozenset):
            object.__setattr__(self, "literals", frozenset(self.literals))
        _check_arity(self.op, self.literal is not None, bool(self.literals))

    @property
    def ref(self) -> BoundReference:
        return self.term

    def negate(self) -> Expression:
        return BoundPredicate(self.op.negate(), self.term, self.literal, self.literals)

    def __str__(self) -> str:
        type_ = self.term.type
        if self.op in (Operation.STARTS_WITH, Operation.NOT_STARTS_WITH):
            value: str | None = _like_pattern(self.literal)
        else:
            value = None if self.literal is None else literal_for(type_, self.literal).sql()
        values = None if self.literals is None else [literal_for(type_, v).sql() for v in self.literals]
        return _predicate_sql(self.op, str(self.term), value, values)


# ---------------------------------------------------------------------------------------------
# Connectives with constant folding


def always_true() -> AlwaysTrue:
    return AlwaysTrue()


def always_false() -> AlwaysFalse:
    return AlwaysFalse()


def _check(expr: Any) -> Expression:
    if not isinstance(expr, Expression):
        raise InvalidFilterError(f"not an expression: {expr!r}")
    return expr


#: Chains deeper than this are rebalanced; the tree walks recurse once per level.
_MAX_DEPTH = 64


def _balanced(cls: type[And] | type[Or], items: list[Expression]) -> Expression:
    if len(items) == 1:
        return items[0]
    middle = (len(items) + 1) // 2
    return cls(_balanced(cls, items[:middle]), _balanced(cls, items[middle:]))


def _combine(cls: type[And] | type[Or], items: list[Expression]) -> Expression:
    result = _balanced(cls, items)
    if _depth(result) > _MAX_DEPTH:
        # Long chains built one operand at a time: flatten and rebuild balanced.
        flat = [e for item in items for e in (item.operands() if isinstance(item, cls) else [item])]
        result = _balanced(cls, flat)
    return result


def and_(*exprs: Expression) -> Expression:
    """All of ``exprs`` (true when none); folds constants: ``and_(always_false(), x)`` is
    ``always_false()``, ``and_(always_true(), x)`` is ``x``.

    Long chains are kept balanced, so that the tree walks stay shallow.
    """
    items: list[Expression] = []
    for expr in map(_check, exprs):
        if isinstance(expr, AlwaysFalse):
            return expr
        if not isinstance(expr, AlwaysTrue):
            items.append(expr)
    return _combine(And, items) if items else AlwaysTrue()


def or_(*exprs: Expression) -> Expression:
    """Any of ``exprs`` (false when none); folds constants like :func:`and_`."""
    items: list[Expression] = []
    for expr in map(_check, exprs):
        if isinstance(expr, AlwaysTrue):
            return expr
        if not isinstance(expr, AlwaysFalse):
            items.append(expr)
    return _combine(Or, items) if items else AlwaysFalse()


def not_(expr: Expression) -> Expression:
    """The negation of ``expr``; ``not_(not_(x))`` is ``x``, constants flip."""
    expr = _check(expr)
    if isinstance(expr, AlwaysTrue):
        return AlwaysFalse()
    if isinstance(expr, AlwaysFalse):
        return AlwaysTrue()
    if isinstance(expr, Not):
        return expr.child
    return Not(expr)
