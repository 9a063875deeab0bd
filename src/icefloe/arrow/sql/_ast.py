"""The tree of a Spark SQL expression, as the parser leaves it for the compiler: columns,
literals (already typed, as Spark's parser types them), casts, CASE, and calls of operators and
functions by Spark's name. Each node keeps its SQL text for error messages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow as pa

__all__ = ["Call", "Case", "Cast", "Column", "Literal", "Node"]


@dataclass(frozen=True)
class Node:
    sql: str


@dataclass(frozen=True)
class Column(Node):
    """A column (``amount``) or a field of a struct column (``address.city``)."""

    parts: tuple[str, ...]


@dataclass(frozen=True)
class Literal(Node):
    """A constant of a Spark type: ``value`` is its Python value (int, float, Decimal, str,
    bytes, bool, date, datetime) or None (NULL)."""

    value: Any
    type: pa.DataType
    integral_literal: bool = False  # an integer written as a number (Spark's DecimalPrecision
    # gives such a literal only the digits it has when it meets a decimal)


@dataclass(frozen=True)
class Cast(Node):
    child: Node
    to: pa.DataType
    safe: bool  # TRY_CAST: null where CAST fails


@dataclass(frozen=True)
class Case(Node):
    """``CASE [operand] WHEN .. THEN .. [ELSE ..] END`` (IF and the simple CASE become this)."""

    operand: Node | None
    whens: tuple[tuple[Node, Node], ...]
    otherwise: Node | None
    if_form: bool = False  # IF(c, a, b), whose condition may be NULL (CASE's may not)


@dataclass(frozen=True)
class Call(Node):
    """An operator (``+``, ``=``, ``and``, ``neg``, ``is_null``, ``in``, ``between`` ...) or a
    function (``upper``, ``round`` ...) applied to ``args``; ``option`` carries what a function
    takes that is not a value (the side TRIM trims)."""

    name: str
    args: tuple[Node, ...]
    option: str | None = None
