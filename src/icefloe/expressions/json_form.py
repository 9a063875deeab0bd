"""Expressions in Iceberg's JSON form (the REST spec's ``Expression``, Java's ``ExpressionParser``).

``true`` / ``false``; ``{"type": "and" | "or", "left", "right"}``; ``{"type": "not", "child"}``;
predicates ``{"type": "<op>", "term": "<column>", "value": v}`` (``"values": [...]`` for
``in`` / ``not-in``, neither for the unary ones). A bound predicate's values are written in the
single-value JSON form of its column's type (``"2024-01-01"`` for a date); an unbound one's as
the plain JSON value it holds. Read values stay unbound literals: binding converts them to the
column's type, as it does for filters written as text. Transform terms (``bucket[16](id)``)
are refused: icefloe's filters name columns only.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from icefloe.errors import InvalidFilterError
from icefloe.expressions.literals import BooleanLiteral, FloatLiteral, IntLiteral, Literal, StringLiteral
from icefloe.expressions.model import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    BoundPredicate,
    Expression,
    Not,
    Operation,
    Or,
    UnboundPredicate,
    always_false,
    always_true,
    and_,
    not_,
    or_,
)
from icefloe.spec import conversions

__all__ = ["expression_from_json", "expression_to_json"]

_OPERATIONS = {op.value: op for op in Operation}
_MAX_DEPTH = 200


def _literal_json(lit: Literal) -> Any:
    if isinstance(lit, (BooleanLiteral, IntLiteral, StringLiteral)):
        return lit.value
    if isinstance(lit, FloatLiteral):
        return float(lit.value)
    if isinstance(lit.value, Decimal):
        return str(lit.value)
    return lit.sql().strip("'")


def expression_to_json(expr: Expression) -> Any:
    """The JSON form of ``expr`` (bound or unbound)."""
    if isinstance(expr, AlwaysTrue):
        return True
    if isinstance(expr, AlwaysFalse):
        return False
    if isinstance(expr, Not):
        return {"type": "not", "child": expression_to_json(expr.child)}
    if isinstance(expr, (And, Or)):
        kind = "and" if isinstance(expr, And) else "or"
        return {"type": kind, "left": expression_to_json(expr.left), "right": expression_to_json(expr.right)}
    if isinstance(expr, BoundPredicate):
        result: dict[str, Any] = {"type": expr.op.value, "term": expr.term.name}
        if expr.literal is not None:
            result["value"] = conversions.to_json(expr.term.type, expr.literal)
        if expr.literals is not None:
            result["values"] = sorted(
                (conversions.to_json(expr.term.type, v) for v in expr.literals), key=str
            )
        return result
    if isinstance(expr, UnboundPredicate):
        result = {"type": expr.op.value, "term": expr.term.name}
        if expr.literal is not None:
            result["value"] = _literal_json(expr.literal)
        if expr.literals is not None:
            result["values"] = sorted((_literal_json(v) for v in expr.literals), key=str)
        return result
    raise InvalidFilterError(f"cannot write expression {expr!r} as JSON")


def _term(value: Any) -> str:
    if isinstance(value, str) and value:
        return value
    if isinstance(value, dict):
        kind = value.get("type")
        if kind == "reference":
            name = value.get("term", value.get("name"))
            if isinstance(name, str) and name:
                return name
        if kind == "transform":
            raise InvalidFilterError(
                f"transform terms are not supported in filters: {value.get('transform')!r}"
            )
    raise InvalidFilterError(f"an expression term must be a column name, not {value!r}")


def _value(value: Any) -> Any:
    if isinstance(value, bool | int | float | str):
        return value
    raise InvalidFilterError(f"an expression value must be a JSON scalar, not {value!r}")


def _read(obj: Any, depth: int) -> Expression:
    if depth > _MAX_DEPTH:
        raise InvalidFilterError("the expression is nested too deeply")
    if isinstance(obj, bool):
        return always_true() if obj else always_false()
    if not isinstance(obj, dict):
        raise InvalidFilterError(f"an expression must be a boolean or an object, not {obj!r}"[:200])
    kind = obj.get("type")
    if kind == "literal":
        return always_true() if obj.get("value") is True else always_false()
    if kind in ("and", "or"):
        left, right = _read(obj.get("left"), depth + 1), _read(obj.get("right"), depth + 1)
        return and_(left, right) if kind == "and" else or_(left, right)
    if kind == "not":
        return not_(_read(obj.get("child"), depth + 1))
    op = _OPERATIONS.get(kind) if isinstance(kind, str) else None
    if op is None:
        raise InvalidFilterError(f"unknown expression type {kind!r}"[:200])
    term = _term(obj.get("term"))
    if op.is_unary:
        if "value" in obj or "values" in obj:
            raise InvalidFilterError(f"{kind} takes no value")
        return UnboundPredicate(op, term)  # type: ignore[arg-type]
    if op.is_set:
        values = obj.get("values")
        if not isinstance(values, list) or not values:
            raise InvalidFilterError(f"{kind} needs a non-empty list of values")
        return UnboundPredicate(op, term, literals=frozenset(_value(v) for v in values))  # type: ignore[arg-type]
    if "value" not in obj:
        raise InvalidFilterError(f"{kind} needs a value")
    return UnboundPredicate(op, term, _value(obj["value"]))  # type: ignore[arg-type]


def expression_from_json(obj: Any) -> Expression:
    """An unbound expression from its JSON form.

    Raises:
        InvalidFilterError: a malformed or unsupported expression (naming what is wrong).
    """
    return _read(obj, 0)
