"""A parser for filters in SQL syntax: ``"country = 'China' AND amount > 10"``.

Grammar (keywords are case-insensitive)::

    filter     := or ;  or := and (OR and)* ;  and := not (AND not)*
    not        := NOT not | '(' filter ')' | predicate
    predicate  := operand cmp operand          -- the column on either side
                | column [NOT] IN '(' value (',' value)* ')'
                | column IS [NOT] NULL | column IS [NOT] NAN
                | column [NOT] LIKE 'prefix%'   -- only a trailing %; \\% and \\_ are literal
                | column [NOT] BETWEEN value AND value
                | column                        -- a boolean column: column = TRUE
                | TRUE | FALSE
    cmp        := = | == | != | <> | < | <= | > | >=
    column     := name ('.' name)*              -- name: bare, `back-quoted` or "double-quoted"
    value      := 'string' | [+-] number | TRUE | FALSE | X'hex'
                | DATE 'yyyy-mm-dd' | TIME 'hh:mm:ss' | TIMESTAMP '...' | TIMESTAMPTZ '...'
                | TIMESTAMP_NS '...' | TIMESTAMPTZ_NS '...' | DECIMAL '1.50' | UUID '...'
                | DOUBLE 'Infinity'

Numbers: ``12`` is an integer, ``1.50`` an exact decimal, ``1.5e3`` a double (as in Spark SQL).
A quoted string converts to the column's type when the filter is bound, so
``sale_date = '2023-01-01'`` works on a date column. ``str(expr)`` prints text this parser
reads back to an equal expression.
"""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from icefloe.errors import InvalidFilterError
from icefloe.expressions._text import parse_date, parse_time, parse_timestamp
from icefloe.expressions.builders import (
    equal,
    greater_than_or_equal,
    is_in,
    is_nan,
    is_null,
    less_than_or_equal,
    not_in,
    not_nan,
    not_null,
    not_starts_with,
    predicate,
    starts_with,
)
from icefloe.expressions.literals import (
    BinaryLiteral,
    BooleanLiteral,
    DateLiteral,
    DecimalLiteral,
    FloatLiteral,
    IntLiteral,
    Literal,
    StringLiteral,
    TimeLiteral,
    TimestampLiteral,
    TimestampNanoLiteral,
    TimestamptzLiteral,
    TimestamptzNanoLiteral,
    UUIDLiteral,
)
from icefloe.expressions.model import (
    RESERVED_WORDS,
    AlwaysFalse,
    AlwaysTrue,
    Expression,
    Operation,
    Reference,
    and_,
    not_,
    or_,
)

__all__ = ["parse"]

_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<hex>[xX]'[^']*')
  | (?P<string>'(?:[^']|'')*')
  | (?P<backquoted>`(?:[^`]|``)*`)
  | (?P<quoted>"(?:[^"]|"")*")
  | (?P<number>(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<word>[^\W\d][\w$]*)
  | (?P<op><=|>=|<>|!=|==|=|<|>)
  | (?P<punct>[(),.+-])
    """,
    re.VERBOSE,
)
_COMPARISONS = {
    "=": Operation.EQ,
    "==": Operation.EQ,
    "!=": Operation.NOT_EQ,
    "<>": Operation.NOT_EQ,
    "<": Operation.LT,
    "<=": Operation.LT_EQ,
    ">": Operation.GT,
    ">=": Operation.GT_EQ,
}


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # hex, string, backquoted, quoted, number, word, op, punct, end
    text: str
    pos: int

    def is_word(self, *words: str) -> bool:
        return self.kind == "word" and self.text.lower() in words

    def describe(self) -> str:
        return "end of input" if self.kind == "end" else repr(self.text)


_NAME_KINDS = ("word", "backquoted", "quoted")


class _Null:
    """The NULL keyword where a value was expected."""


_NULL = _Null()
_Operand = Reference | Literal | _Null


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            quote = text[pos]
            what = f"unterminated {quote} quote" if quote in "'`\"" else f"unexpected character {quote!r}"
            raise _error(text, pos, what)
        kind = match.lastgroup
        assert kind is not None
        if kind != "space":
            tokens.append(_Token(kind, match.group(), pos))
        pos = match.end()
    tokens.append(_Token("end", "", len(text)))
    return tokens


def _error(text: str, pos: int, message: str, found: str | None = None) -> InvalidFilterError:
    where = f" at position {pos}" + (f" (found {found})" if found else "")
    return InvalidFilterError(f"cannot parse filter {text!r}: {message}{where}")


def _like_prefix(pattern: str) -> tuple[str, bool]:
    """(prefix, True) for ``'prefix%'``, (text, False) for a pattern without wildcards."""
    chars: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern) and pattern[i + 1] in "%_\\":
            chars.append(pattern[i + 1])
            i += 2
            continue
        if char == "%" and i == len(pattern) - 1:
            return "".join(chars), True
        if char in "%_":
            raise ValueError(
                f"LIKE {pattern!r}: only prefix patterns ('abc%') are supported; a '{char}' elsewhere is a "
                "wildcard icefloe cannot push down (write \\% or \\_ for the character itself)"
            )
        chars.append(char)
        i += 1
    return "".join(chars), False


def _timestamp_literal(text: str, *, zoned: bool | None, nanos: bool) -> Literal:
    parsed = parse_timestamp(text)
    utc = parsed.utc_nanos
    if zoned is None:
        zoned = parsed.offset_seconds is not None
    elif not zoned and parsed.offset_seconds is not None:
        raise ValueError("a timestamp without time zone cannot have an offset; use TIMESTAMPTZ")
    if nanos or utc % 1000:
        return TimestamptzNanoLiteral(utc) if zoned else TimestampNanoLiteral(utc)
    return TimestamptzLiteral(utc // 1000) if zoned else TimestampLiteral(utc // 1000)


def _time_literal(text: str) -> Literal:
    nanos = parse_time(text)
    if nanos % 1000:
        raise ValueError("time values have microsecond precision")
    return TimeLiteral(nanos // 1000)


def _decimal_literal(text: str) -> Literal:
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        raise ValueError(f"not a decimal number: {text!r}") from None
    return DecimalLiteral(value)


def _double_literal(text: str) -> Literal:
    try:
        value = float(text.strip())
    except ValueError:
        raise ValueError(f"not a number: {text!r}") from None
    return FloatLiteral(value)


_TYPED: dict[str, Callable[[str], Literal]] = {
    "date": lambda s: DateLiteral(parse_date(s)),
    "time": _time_literal,
    "timestamp": lambda s: _timestamp_literal(s, zoned=None, nanos=False),
    "timestamp_ntz": lambda s: _timestamp_literal(s, zoned=False, nanos=False),
    "timestamptz": lambda s: _timestamp_literal(s, zoned=True, nanos=False),
    "timestamp_ltz": lambda s: _timestamp_literal(s, zoned=True, nanos=False),
    "timestamp_ns": lambda s: _timestamp_literal(s, zoned=None, nanos=True),
    "timestamptz_ns": lambda s: _timestamp_literal(s, zoned=True, nanos=True),
    "decimal": _decimal_literal,
    "numeric": _decimal_literal,
    "uuid": lambda s: UUIDLiteral(uuid.UUID(s.strip())),
    "double": _double_literal,
    "float": _double_literal,
}


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens = _tokenize(text)
        self.index = 0

    # ---- token helpers ---------------------------------------------------------------------

    @property
    def token(self) -> _Token:
        return self.tokens[self.index]

    def peek(self, ahead: int = 1) -> _Token:
        return self.tokens[min(self.index + ahead, len(self.tokens) - 1)]

    def advance(self) -> _Token:
        token = self.token
        self.index = min(self.index + 1, len(self.tokens) - 1)
        return token

    def error(self, message: str, token: _Token | None = None) -> InvalidFilterError:
        token = token or self.token
        return _error(self.text, token.pos, message, token.describe())

    def accept_word(self, *words: str) -> bool:
        if self.token.is_word(*words):
            self.advance()
            return True
        return False

    def expect_word(self, word: str) -> None:
        if not self.accept_word(word):
            raise self.error(f"expected {word.upper()}")

    def expect_punct(self, char: str) -> None:
        if self.token.kind != "punct" or self.token.text != char:
            raise self.error(f"expected '{char}'")
        self.advance()

    # ---- boolean structure -----------------------------------------------------------------

    def parse(self) -> Expression:
        if self.token.kind == "end":
            raise self.error("the filter is empty")
        expr = self.parse_or()
        if self.token.kind != "end":
            raise self.error("expected AND, OR or the end of the filter")
        return expr

    def parse_or(self) -> Expression:
        items = [self.parse_and()]
        while self.accept_word("or"):
            items.append(self.parse_and())
        return or_(*items)

    def parse_and(self) -> Expression:
        items = [self.parse_not()]
        while self.accept_word("and"):
            items.append(self.parse_not())
        return and_(*items)

    def parse_not(self) -> Expression:
        if self.accept_word("not"):
            return not_(self.parse_not())
        if self.token.kind == "punct" and self.token.text == "(":
            self.advance()
            expr = self.parse_or()
            self.expect_punct(")")
            return expr
        return self.parse_predicate()

    # ---- predicates ------------------------------------------------------------------------

    def parse_predicate(self) -> Expression:
        start = self.token
        left = self.parse_operand()
        token = self.token
        if token.kind == "op":
            self.advance()
            right_token = self.token
            right = self.parse_operand()
            return self.comparison(_COMPARISONS[token.text], left, right, start, right_token)
        if token.is_word("is", "in", "like", "between", "not"):
            column = self.column_of(left, start, token)
            negated = self.accept_word("not")
            if self.accept_word("is"):
                if negated:
                    raise self.error("expected IN, LIKE or BETWEEN after NOT", token)
                return self.parse_is(column)
            if self.accept_word("in"):
                return self.parse_in(column, negated)
            if self.accept_word("like"):
                return self.parse_like(column, negated)
            if self.accept_word("between"):
                return self.parse_between(column, negated)
            raise self.error("expected IN, LIKE or BETWEEN after NOT")
        if isinstance(left, Reference):
            return equal(left, True)  # a boolean column on its own
        if isinstance(left, BooleanLiteral):
            return AlwaysTrue() if left.value else AlwaysFalse()
        raise self.error("expected a comparison after the value", token)

    def column_of(self, operand: _Operand, start: _Token, token: _Token) -> Reference:
        if not isinstance(operand, Reference):
            raise self.error(f"{token.text.upper()} needs a column on its left", start)
        return operand

    def comparison(
        self, op: Operation, left: _Operand, right: _Operand, start: _Token, right_token: _Token
    ) -> Expression:
        if isinstance(left, _Null) or isinstance(right, _Null):
            raise self.error("a comparison with NULL is never true: use IS NULL or IS NOT NULL", start)
        if isinstance(left, Reference) and isinstance(right, Literal):
            return predicate(op, left, right)
        if isinstance(left, Literal) and isinstance(right, Reference):
            return predicate(op.flip(), right, left)
        if isinstance(left, Reference) and isinstance(right, Reference):
            quoted = next((t for t in (right_token, start) if t.kind == "quoted"), None)
            if quoted is not None:
                raise self.error(f"{_quoted_hint(quoted)} (comparing two columns is not supported)", quoted)
            hint = "; to test for NaN use IS NAN" if "nan" in (left.name.lower(), right.name.lower()) else ""
            raise self.error(f"comparing two columns is not supported{hint}", start)
        raise self.error("a comparison needs a column on one side", start)

    def parse_is(self, column: Reference) -> Expression:
        negated = self.accept_word("not")
        if self.accept_word("null"):
            return not_null(column) if negated else is_null(column)
        if self.accept_word("nan"):
            return not_nan(column) if negated else is_nan(column)
        raise self.error("expected NULL or NAN after IS")

    def parse_in(self, column: Reference, negated: bool) -> Expression:
        self.expect_punct("(")
        values: list[Literal] = []
        if not (self.token.kind == "punct" and self.token.text == ")"):
            values.append(self.parse_value())
            while self.token.kind == "punct" and self.token.text == ",":
                self.advance()
                values.append(self.parse_value())
        self.expect_punct(")")
        return not_in(column, values) if negated else is_in(column, values)

    def parse_like(self, column: Reference, negated: bool) -> Expression:
        token = self.token
        if token.kind != "string":
            raise self.error("LIKE needs a quoted pattern")
        self.advance()
        try:
            prefix, is_prefix = _like_prefix(_unquote(token.text, "'"))
        except ValueError as e:
            raise self.error(str(e), token) from None
        if is_prefix:
            return not_starts_with(column, prefix) if negated else starts_with(column, prefix)
        return predicate(Operation.NOT_EQ if negated else Operation.EQ, column, prefix)

    def parse_between(self, column: Reference, negated: bool) -> Expression:
        low = self.parse_value()
        self.expect_word("and")
        high = self.parse_value()
        between = and_(greater_than_or_equal(column, low), less_than_or_equal(column, high))
        return not_(between) if negated else between

    # ---- operands --------------------------------------------------------------------------

    def parse_value(self) -> Literal:
        token = self.token
        operand = self.parse_operand()
        if isinstance(operand, _Null):
            raise self.error("NULL is not a value here: use IS NULL", token)
        if not isinstance(operand, Literal):
            hint = f"; {_quoted_hint(token)}" if token.kind == "quoted" else ""
            raise self.error(f"expected a value, not a column{hint}", token)
        return operand

    def parse_operand(self) -> _Operand:
        token = self.token
        if token.kind in _NAME_KINDS:
            return self.parse_word_operand()
        self.advance()
        try:
            if token.kind == "string":
                return StringLiteral(_unquote(token.text, "'"))
            if token.kind == "hex":
                return BinaryLiteral(bytes.fromhex(token.text[2:-1]))
            if token.kind == "number":
                return _number(token.text)
            if token.kind == "punct" and token.text in "+-" and self.token.kind == "number":
                number = _number(self.advance().text)
                return _negate(number) if token.text == "-" else number
        except ValueError as e:
            raise self.error(str(e), token) from None
        raise self.error("expected a column or a value", token)

    def parse_word_operand(self) -> _Operand:
        token = self.advance()
        if token.kind == "word":
            word = token.text.lower()
            if word in _TYPED and self.token.kind == "string":
                text = _unquote(self.advance().text, "'")
                try:
                    return _TYPED[word](text)
                except (ValueError, InvalidFilterError) as e:
                    raise self.error(f"invalid {word.upper()} literal: {e}", token) from None
            if word in ("true", "false"):
                return BooleanLiteral(word == "true")
            if word == "null":
                return _NULL
            if word in RESERVED_WORDS:
                raise self.error(f"unexpected keyword {token.text.upper()}", token)
        parts = [_name_part(token)]
        while self.token.kind == "punct" and self.token.text == "." and self.peek().kind in _NAME_KINDS:
            self.advance()
            parts.append(_name_part(self.advance()))
        name = ".".join(parts)
        if self.token.kind == "punct" and self.token.text == "(":
            raise self.error(_function_message(name), token)
        return Reference(name)


def _quoted_hint(token: _Token) -> str:
    """Why ``"a"`` is not the string a: in SQL double quotes name a column."""
    value = _unquote(token.text, '"')
    as_string = "'" + value.replace("'", "''") + "'"
    return f"{token.text} is a column name (double quotes name columns); a string takes single quotes: {as_string}"


def _function_message(name: str) -> str:
    """A call such as ``current_date()`` or ``day(ts)``: filters hold columns and values only."""
    typed = name.lower()
    example = (
        f"{typed.upper()} '...'"
        if typed in _TYPED
        else "a literal such as DATE '2024-03-10' or TIMESTAMPTZ '2024-03-10T12:00:00+00:00'"
    )
    return (
        f"functions are not supported in filters: {name}(...); compare the column with the value "
        f"itself, written as {example}"
    )


def _unquote(text: str, quote: str) -> str:
    return text[1:-1].replace(quote * 2, quote)


def _name_part(token: _Token) -> str:
    if token.kind == "backquoted":
        return _unquote(token.text, "`")
    if token.kind == "quoted":
        return _unquote(token.text, '"')
    return token.text


def _number(text: str) -> Literal:
    if "e" in text or "E" in text:
        value = float(text)
        # Beyond the range of doubles, keep the exact value: 1e400 is not infinity.
        return DecimalLiteral(Decimal(text)) if math.isinf(value) else FloatLiteral(value)
    if "." in text:
        return DecimalLiteral(Decimal(text))
    return IntLiteral(int(text))


def _negate(number: Literal) -> Literal:
    if isinstance(number, DecimalLiteral):
        return DecimalLiteral(number.value.copy_negate())  # exact, unlike unary minus
    return type(number)(-number.value)


def parse(text: str) -> Expression:
    """Parse a filter in SQL syntax into an unbound expression (see the module docstring).

    Raises:
        InvalidFilterError: naming the position and the token where the text is wrong.
    """
    if not isinstance(text, str):
        raise InvalidFilterError(f"a filter must be a string, not {type(text).__name__}")
    return _Parser(text).parse()
