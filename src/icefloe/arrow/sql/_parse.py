"""Spark SQL text to the expression tree of ``_ast.py``, through sqlglot's Spark dialect.

sqlglot (a dependency of icefloe) is imported on first use, so ``import icefloe`` stays light. Its tree is read here and
only here, by node kind (``node.key``), so that the rest of the evaluator never meets a sqlglot
class. Literals are typed as Spark's parser types them: ``1`` is INT, ``3000000000`` BIGINT, a
longer integer DECIMAL(p, 0), ``1.50`` DECIMAL(3, 2), ``1e3`` DOUBLE; the suffixes ``L S Y D F
BD`` give BIGINT, SMALLINT, TINYINT, DOUBLE, FLOAT and DECIMAL; a minus sign before a number is
part of the literal (``-2147483648`` is an INT).

What the parser does not know becomes an :class:`UnsupportedFeatureError` naming the construct
(its SQL text); nothing is guessed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

import pyarrow as pa

from icefloe.arrow.sql import _types as t
from icefloe.arrow.sql._ast import Call, Case, Cast, Column, Literal, Node
from icefloe.errors import InvalidExpressionError, UnsupportedFeatureError

__all__ = ["parse_sql"]

Sqlglot = Any  # a sqlglot node
_INT_RANGE = (-(2**31), 2**31 - 1)
_LONG_RANGE = (-(2**63), 2**63 - 1)
# A number with a type suffix (1L, 1.5BD, 1e3D), not inside a name; rewritten before sqlglot reads
# the text into a call of _TYPED_LITERAL, so that it stays a literal whatever sqlglot's version.
_SUFFIXED = re.compile(r"(?i)(?<![\w.])((?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?)(bd|[lsydf])(?![\w.])")
_TYPED_LITERAL = "__icefloe_typed_literal"
_WRITTEN_LITERAL = re.compile(rf"(?i){_TYPED_LITERAL}\('([^']*)', '([^']*)'\)")
_BINARY = {
    "add": "+", "sub": "-", "mul": "*", "div": "/", "intdiv": "div", "mod": "%", "dpipe": "||",
    "eq": "=", "neq": "<>", "gt": ">", "gte": ">=", "lt": "<", "lte": "<=", "nullsafeeq": "<=>",
    "and": "and", "or": "or",
}  # fmt: skip
# sqlglot node kinds that are one Spark function: its name and where sqlglot keeps the arguments
# (in order; "expressions" is a list).
_FUNCTIONS = {
    "upper": ("upper", ("this",)), "lower": ("lower", ("this",)), "length": ("length", ("this",)),
    "abs": ("abs", ("this",)), "coalesce": ("coalesce", ("this", "expressions")),
    "greatest": ("greatest", ("this", "expressions")), "least": ("least", ("this", "expressions")),
    "nullif": ("nullif", ("this", "expression")), "nvl2": ("nvl2", ("this", "true", "false")),
    "replace": ("replace", ("this", "expression", "replacement")), "year": ("year", ("this",)),
    "month": ("month", ("this",)), "day": ("day", ("this",)), "dayofmonth": ("day", ("this",)),
    "datediff": ("datediff", ("this", "expression")),
}  # fmt: skip
# Functions sqlglot leaves as they are written (``Anonymous``; which ones depends on its version),
# by Spark's names: the function they call.
_ANONYMOUS = {
    "isnull": "is_null", "isnotnull": "is_not_null", "now": "current_timestamp", "btrim": "trim",
    "upper": "upper", "ucase": "upper", "lower": "lower", "lcase": "lower", "length": "length",
    "char_length": "length", "character_length": "length", "len": "length", "abs": "abs",
    "coalesce": "coalesce", "nvl": "coalesce", "ifnull": "coalesce", "greatest": "greatest",
    "least": "least", "nullif": "nullif", "nvl2": "nvl2", "replace": "replace", "year": "year",
    "month": "month", "day": "day", "dayofmonth": "day", "datediff": "datediff", "concat": "concat",
    "round": "round", "floor": "floor", "ceil": "ceil", "ceiling": "ceil", "substring": "substring",
    "substr": "substring", "ltrim": "ltrim", "rtrim": "rtrim", "trim": "trim", "date_add": "date_add",
    "date_sub": "date_sub", "current_date": "current_date", "current_timestamp": "current_timestamp",
}  # fmt: skip
_TYPES = {
    "BOOLEAN": t.BOOLEAN, "TINYINT": t.BYTE, "SMALLINT": t.SHORT, "INT": t.INT, "BIGINT": t.LONG,
    "FLOAT": t.FLOAT, "DOUBLE": t.DOUBLE, "TEXT": t.STRING, "BINARY": t.BINARY, "DATE": t.DATE,
    "TIMESTAMP": t.TIMESTAMP, "TIMESTAMPTZ": t.TIMESTAMP, "TIMESTAMPLTZ": t.TIMESTAMP,
    "TIMESTAMPNTZ": t.TIMESTAMP_NTZ,
}  # fmt: skip
_SUFFIX_TYPES = {"L": t.LONG, "S": t.SHORT, "Y": t.BYTE, "D": t.DOUBLE, "F": t.FLOAT}
_RANGES = {t.LONG: _LONG_RANGE, t.SHORT: (-(2**15), 2**15 - 1), t.BYTE: (-128, 127)}


def parse_sql(text: str) -> Node:
    """The tree of one Spark SQL expression.

    Raises:
        InvalidExpressionError: the text is not one expression (a syntax error, two
            expressions, a statement).
        UnsupportedFeatureError: a construct the evaluator does not implement.
    """
    import sqlglot  # on first use: `import icefloe` does not load the parser (0.1 s)

    try:
        tree = sqlglot.parse_one(_prepared(text), read="spark")
    except sqlglot.errors.SqlglotError as exc:
        found = getattr(exc, "errors", None) or [{}]
        where = f" (at column {found[0]['col']})" if found[0].get("col") else ""
        description = found[0].get("description") or str(exc)
        raise InvalidExpressionError(f"it is not a Spark SQL expression: {description}{where}") from exc
    return _Reader(text).read(tree)


def _prepared(text: str) -> str:
    """The text as sqlglot should read it to mean what Spark 4 reads: ``'it''s'`` (a doubled
    quote inside a string is a quote) as ``'it\\'s'`` (sqlglot would read two adjacent strings),
    and ``1L`` / ``1.5BD`` as calls of ``_TYPED_LITERAL`` (sqlglot reads them as casts)."""
    out: list[str] = []
    quote: str | None = None
    i = 0
    while i < len(text):
        char = text[i]
        if quote is None:
            suffixed = _SUFFIXED.match(text, i) if char.isdigit() or char == "." else None
            if suffixed is not None and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_.")):
                out.append(f"{_TYPED_LITERAL}('{suffixed.group(1)}', '{suffixed.group(2).upper()}')")
                i = suffixed.end()
                continue
            if char in "'\"`":
                quote = char
            out.append(char)
        elif char == "\\" and quote != "`":
            out.append(text[i : i + 2])
            i += 1
        elif char == quote:
            if i + 1 < len(text) and text[i + 1] == quote:
                out.append(quote + quote if quote == "`" else "\\" + quote)
                i += 1
            else:
                quote = None
                out.append(char)
        else:
            out.append(char)
        i += 1
    return "".join(out)


class _Reader:
    def __init__(self, text: str):
        self.text = text
        self.handlers: dict[str, Callable[[Sqlglot], Node]] = {
            "paren": lambda n: self.read(n.this),
            "column": self._column,
            "dot": self._dot,
            "literal": lambda n: self._literal(n, negative=False),
            "neg": self._neg,
            "null": lambda n: Literal(n.sql("spark"), None, t.NULL),
            "boolean": lambda n: Literal(n.sql("spark"), bool(n.this), t.BOOLEAN),
            "hexstring": self._hex,
            "cast": self._cast,
            "trycast": self._cast,
            "not": lambda n: self._call(n, "not", n.this),
            "is": self._is,
            "nullsafeneq": lambda n: Call(
                n.sql("spark"), "not", (self._call(n, "<=>", n.this, n.expression),)
            ),
            "in": self._in,
            "between": lambda n: self._call(n, "between", n.this, n.args.get("low"), n.args.get("high")),
            "case": self._case,
            "if": self._if,
            "concat": lambda n: self._call(n, "concat", *n.expressions),
            "trim": self._trim,
            "substring": self._substring,
            "round": lambda n: self._call(n, "round", n.this, n.args.get("decimals")),
            "floor": lambda n: self._call(n, "floor", n.this, n.args.get("decimals")),
            "ceil": lambda n: self._call(n, "ceil", n.this, n.args.get("decimals")),
            "currentdate": lambda n: self._call(n, "current_date"),
            "currenttimestamp": lambda n: self._call(n, "current_timestamp"),
            "tsordsadd": self._date_add,
            "tsordstodate": self._to_date,
            "anonymous": self._anonymous,
        }

    def read(self, node: Sqlglot) -> Node:
        kind = node.key
        _check_precedence(node)
        if kind in _BINARY:
            return self._call(node, _BINARY[kind], node.this, node.expression)
        if kind in _FUNCTIONS:
            name, keys = _FUNCTIONS[kind]
            args = [
                a
                for key in keys
                for a in (node.args.get(key) or [] if key == "expressions" else [node.args.get(key)])
            ]
            return self._call(node, name, *args)
        handler = self.handlers.get(kind)
        if handler is None:
            raise UnsupportedFeatureError(f"{_sql(node)!r} is not supported in row expressions")
        return handler(node)

    def _call(self, node: Sqlglot, name: str, *args: Sqlglot, option: str | None = None) -> Call:
        return Call(_sql(node), name, tuple(self.read(a) for a in args if a is not None), option)

    # ---- columns and literals -----------------------------------------------------------------

    def _column(self, node: Sqlglot) -> Node:
        if node.this.key == "star":
            raise UnsupportedFeatureError(f"{_sql(node)!r}: * is not a value")
        return Column(_sql(node), tuple(part.name for part in node.parts))

    def _dot(self, node: Sqlglot) -> Node:
        base = self.read(node.this)
        if not isinstance(base, Column) or node.expression.key != "identifier":
            raise UnsupportedFeatureError(f"{_sql(node)!r} is not supported in row expressions")
        return Column(_sql(node), (*base.parts, node.expression.name))

    def _neg(self, node: Sqlglot) -> Node:
        if node.this.key == "literal" and not node.this.is_string:
            return self._literal(node.this, negative=True)
        if node.this.key == "anonymous" and str(node.this.this).lower() == _TYPED_LITERAL:
            return self._suffixed(node.this, negative=True)
        return self._call(node, "neg", node.this)

    def _literal(self, node: Sqlglot, *, negative: bool) -> Literal:
        sql = ("-" if negative else "") + _sql(node)
        if node.is_string:
            return Literal(sql, node.this, t.STRING)
        return _number(sql, node.this, negative=negative)

    def _hex(self, node: Sqlglot) -> Literal:
        digits = node.this
        written = re.search(rf"(?i)(?<![0-9a-z_])x'{re.escape(digits)}'", self.text)
        if not re.fullmatch(r"[0-9A-Fa-f]*", digits) or written is None:  # (not 0x1F, which Spark refuses)
            raise UnsupportedFeatureError(f"{_sql(node)!r}: binary literals are written X'0A1B'")
        return Literal(_sql(node), bytes.fromhex(digits if len(digits) % 2 == 0 else "0" + digits), t.BINARY)

    def _cast(self, node: Sqlglot) -> Node:
        to = _type(node.to)
        return Cast(_sql(node), self.read(node.this), to, bool(node.args.get("safe")))

    def _suffixed(self, node: Sqlglot, *, negative: bool = False) -> Literal:
        """``1L``, ``1.5BD``, ``-1e3D``: a literal of the suffix's type (as Spark's parser types it;
        a minus sign before it is part of it)."""
        text, suffix = (a.this for a in node.expressions)
        text = "-" + text if negative else text
        sql = text + suffix
        to = _SUFFIX_TYPES.get(suffix, t.decimal(38, 0))
        if t.is_decimal(to):
            try:
                value = Decimal(text)
            except InvalidOperation as exc:
                raise InvalidExpressionError(f"{sql!r} is not a decimal literal") from exc
            return Literal(sql, value, _decimal_type(sql, value))
        number = _number(sql, text, negative=False)
        if suffix in ("D", "F"):
            floating = float(number.value)
            if to == t.FLOAT and abs(floating) > 3.4028234663852886e38:
                raise InvalidExpressionError(f"the literal {sql!r} does not fit a FLOAT")
            return Literal(sql, floating, to)
        if not t.is_integral(number.type) and number.type != t.LONG and not t.is_decimal(number.type):
            raise InvalidExpressionError(f"{sql!r} is not an integer literal")
        low, high = _RANGES[to]
        if not isinstance(number.value, int) or not low <= number.value <= high:
            raise InvalidExpressionError(f"the literal {sql!r} does not fit a {t.type_name(to)}")
        return Literal(sql, number.value, to, integral_literal=True)

    # ---- operators ----------------------------------------------------------------------------

    def _is(self, node: Sqlglot) -> Node:
        right = node.expression
        if right.key == "null":
            return self._call(node, "is_null", node.this)
        if right.key == "boolean":  # x IS TRUE is x <=> TRUE
            return Call(_sql(node), "<=>", (self.read(node.this), self.read(right)))
        raise UnsupportedFeatureError(f"{_sql(node)!r} is not supported in row expressions")

    def _in(self, node: Sqlglot) -> Node:
        if node.args.get("query") is not None or node.args.get("unnest") is not None:
            raise UnsupportedFeatureError(f"{_sql(node)!r}: IN takes a list of values here, not a query")
        return self._call(node, "in", node.this, *node.expressions)

    def _case(self, node: Sqlglot) -> Node:
        operand = node.this
        whens = tuple((self.read(w.this), self.read(w.args["true"])) for w in node.args.get("ifs") or [])
        default = node.args.get("default")
        return Case(
            _sql(node),
            None if operand is None else self.read(operand),
            whens,
            None if default is None else self.read(default),
        )

    def _if(self, node: Sqlglot) -> Node:
        otherwise = node.args.get("false")
        return Case(
            _sql(node),
            None,
            ((self.read(node.this), self.read(node.args["true"])),),
            None if otherwise is None else self.read(otherwise),
            if_form=True,
        )

    # ---- functions ----------------------------------------------------------------------------

    def _trim(self, node: Sqlglot) -> Node:
        position = str(node.args.get("position") or "BOTH").upper()
        if node.args.get("collation") is not None:
            raise UnsupportedFeatureError(f"{_sql(node)!r} is not supported in row expressions")
        option = {"BOTH": "both", "LEADING": "leading", "TRAILING": "trailing"}[position]
        return self._call(node, "trim", node.this, node.args.get("expression"), option=option)

    def _substring(self, node: Sqlglot) -> Node:
        return self._call(node, "substring", node.this, node.args.get("start"), node.args.get("length"))

    def _date_add(self, node: Sqlglot) -> Node:
        unit = node.args.get("unit")
        if unit is not None and unit.name.upper() != "DAY":
            raise UnsupportedFeatureError(f"{_sql(node)!r} is not supported in row expressions")
        return self._call(node, "date_add", node.this, node.expression)

    def _to_date(self, node: Sqlglot) -> Node:
        # sqlglot wraps the argument of year(), month(), datediff() ... in this node: Spark's
        # implicit cast of the argument to DATE. An explicit to_date() is not supported.
        if node.args.get("safe") or node.args.get("format") is not None:
            raise UnsupportedFeatureError(
                f"{_sql(node)!r} is not supported in row expressions (CAST(x AS DATE) is)"
            )
        return self._call(node, "implicit_date", node.this)

    def _anonymous(self, node: Sqlglot) -> Node:
        if str(node.this).lower() == _TYPED_LITERAL:
            return self._suffixed(node)
        name = str(node.this).lower()
        if name not in _ANONYMOUS:
            raise UnsupportedFeatureError(
                f"the function {name}() ({_sql(node)!r}) is not supported in row expressions"
            )
        if name in ("btrim", "trim"):
            return self._call(node, "trim", *node.expressions, option="both")
        return self._call(node, _ANONYMOUS[name], *node.expressions)


_COMPARISON_KINDS = {"eq", "neq", "gt", "gte", "lt", "lte", "nullsafeeq", "nullsafeneq"}
_PREDICATE_KINDS = {"between", "in", "is", "like", "ilike", "regexplike", "similarto"}


def _check_precedence(node: Sqlglot) -> None:
    """Refuse the forms sqlglot groups otherwise than Spark: a predicate (BETWEEN, IN, IS, LIKE)
    applies in Spark to a whole comparison (``a = b IS NULL`` is ``(a = b) IS NULL``) and sqlglot
    reads it as binding tighter; ``||`` is as tight as ``+`` in Spark (``'a' || 1 + 2`` is
    ``('a' || 1) + 2``). Parentheses say which is meant."""
    if node.key in _COMPARISON_KINDS:
        for side in (node.this, node.expression):
            inner = side.this if side is not None and side.key == "not" else side
            if inner is not None and inner.key in _PREDICATE_KINDS:
                raise UnsupportedFeatureError(
                    f"{_sql(node)!r} is read differently by Spark (a predicate applies to the whole "
                    "comparison before it: a = b IS NULL is (a = b) IS NULL); write the parentheses"
                )
        if node.expression is not None and node.expression.key in _COMPARISON_KINDS:
            raise UnsupportedFeatureError(
                f"{_sql(node)!r} is read differently by Spark (comparisons group from the left: a = b < c "
                "is (a = b) < c); write the parentheses"
            )
    if node.key == "dpipe" and node.expression is not None and node.expression.key in ("add", "sub"):
        raise UnsupportedFeatureError(
            f"{_sql(node)!r} is read differently by Spark ('a' || 1 + 2 is ('a' || 1) + 2); write the parentheses"
        )


def _sql(node: Sqlglot) -> str:
    try:
        text = str(node.sql("spark"))
    except Exception:  # a node sqlglot cannot print back: its class name serves
        return type(node).__name__
    return _WRITTEN_LITERAL.sub(r"\1\2", text)


def _number(sql: str, text: str, *, negative: bool) -> Literal:
    """A numeric literal typed as Spark's parser types it."""
    if text.startswith("-"):  # a literal sqlglot built (date_sub(d, n) is date_add(d, n * -1))
        text, negative = text[1:], not negative
    if re.fullmatch(r"\d+", text):
        value = -int(text) if negative else int(text)
        if _INT_RANGE[0] <= value <= _INT_RANGE[1]:
            return Literal(sql, value, t.INT, integral_literal=True)
        if _LONG_RANGE[0] <= value <= _LONG_RANGE[1]:
            return Literal(sql, value, t.LONG, integral_literal=True)
        decimal = Decimal(value)
        return Literal(sql, decimal, _decimal_type(sql, decimal))
    if re.fullmatch(r"(\d+\.?\d*|\.\d+)", text):
        decimal = Decimal(text)
        decimal = decimal.copy_negate() if negative else decimal  # (-0.0 keeps its sign)
        return Literal(sql, decimal, _decimal_type(sql, decimal))
    if re.fullmatch(r"(\d+\.?\d*|\.\d+)[eE][+-]?\d+", text):
        double = float(text)
        if double == float("inf"):
            raise InvalidExpressionError(f"the literal {sql!r} does not fit a DOUBLE")
        return Literal(sql, -double if negative else double, t.DOUBLE)
    raise InvalidExpressionError(f"{sql!r} is not a numeric literal")


def _decimal_type(sql: str, value: Decimal) -> pa.DataType:
    """Spark's type of a decimal literal: as many digits as it has (``0.001`` is DECIMAL(3, 3))."""
    _sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    scale = max(-exponent, 0)
    precision = max(len(digits) + max(exponent, 0), scale)
    if precision > t.MAX_PRECISION:
        raise InvalidExpressionError(f"the literal {sql!r} has more than {t.MAX_PRECISION} digits")
    return t.decimal(max(precision, 1), scale)


def _type(node: Sqlglot) -> pa.DataType:
    """The Arrow form of a Spark type named in a CAST."""
    kind = str(node.this).rsplit(".", 1)[-1].upper()
    params = [p.this for p in node.expressions]
    if kind == "DECIMAL":
        values = [int(p.name) for p in params]
        precision, scale = (values + [10, 0][len(values) :])[:2] if values else (10, 0)
        if not 0 < precision <= t.MAX_PRECISION or not 0 <= scale <= precision:
            raise InvalidExpressionError(f"DECIMAL({precision}, {scale}) is not a Spark type")
        return t.decimal(precision, scale)
    found = _TYPES.get(kind)
    if found is None or params:
        raise UnsupportedFeatureError(f"casts to {node.sql('spark')} are not supported in row expressions")
    return found
