"""Spark SQL conditions on icefloe tables: rows by Spark, files by Iceberg.

``isp.delete`` / ``isp.update`` / ``isp.write(mode="overwrite", where=...)`` and MERGE take any
Spark SQL boolean expression, as Java's Spark integration does. Spark evaluates the whole
expression on the rows, with Spark's semantics. The part that converts to an Iceberg expression
(the *pushed* filter) prunes the files read and, when the whole expression converts, decides
which files match in every row (removed without being read).

Conversion walks the expression as sqlglot's Spark dialect parses it. A converted predicate
must have, on every row, the truth value Spark gives the original, or pruning would skip rows
Spark would change. Where Spark and Iceberg differ:

* NaN: Spark orders NaN above every number and finds ``NaN = NaN``; Iceberg leaves comparisons
  of NaN unknown. On float and double columns, comparisons add ``is_nan`` / ``not_nan`` so that
  NaN rows get Spark's answer.
* literals: Spark coerces types (a ``float`` column against ``1.1`` compares as doubles; a
  string against a ``timestamptz`` column is read in the session time zone). Only literals whose
  meaning for the column's type is certain convert: numbers exactly representable in the
  column's type (any finite number for a double), ISO dates and timestamps (zone-less ones in
  ``spark.sql.session.timeZone`` for ``timestamptz``), booleans, strings for string columns.
* three-valued logic is the same on both sides (a comparison with null is unknown, ``NOT`` of
  unknown is unknown, ``isnan(null)`` is false as Iceberg's ``is_nan`` of null is).

Everything else (functions, arithmetic, casts of columns, subqueries, comparisons of two
columns) stays with Spark: it prunes nothing.
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo
from collections.abc import Callable, Collection
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

import numpy as np
import sqlglot
from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F
from sqlglot import exp

from icefloe.errors import ValidationError
from icefloe.expressions import (
    Expression,
    always_false,
    always_true,
    and_,
    bind,
    equal,
    greater_than,
    greater_than_or_equal,
    is_in,
    is_nan,
    is_null,
    less_than,
    less_than_or_equal,
    not_,
    not_equal,
    not_nan,
    not_null,
    or_,
    starts_with,
)
from icefloe.spark.read.filters import to_spark_filter
from icefloe.spec import types as it
from icefloe.spec.schema import Schema

__all__ = ["Condition", "implied_filter", "merge_target_filter", "table_condition"]

_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_ISO_TIMESTAMP = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})(?:[ T](?P<time>\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?))?"
    r"(?P<zone>Z|[+-]\d{2}:\d{2})?"
)
_OFFSET_ZONE = re.compile(r"(?:UTC|GMT)?(?P<sign>[+-])(?P<hours>\d{1,2})(?::(?P<minutes>\d{2}))?")
_INT_RANGES = {it.IntegerType: (-(2**31), 2**31 - 1), it.LongType: (-(2**63), 2**63 - 1)}
_NUMERIC_CASTS = {
    exp.DataType.Type.TINYINT: "int", exp.DataType.Type.SMALLINT: "int", exp.DataType.Type.INT: "int",
    exp.DataType.Type.BIGINT: "int", exp.DataType.Type.FLOAT: "float", exp.DataType.Type.DOUBLE: "float",
    exp.DataType.Type.DECIMAL: "decimal",
}  # fmt: skip
_NO = object()  # a literal that does not convert
Node = Any  # a sqlglot expression node (its base class moved between sqlglot releases)


@dataclass(frozen=True)
class Condition:
    """A condition on a table's rows.

    Attributes:
        rows: the condition as a Spark column of the table's rows (null where it is unknown).
        pushed: an Iceberg filter true on every row where ``rows`` is true (unbound).
        exact: ``pushed`` is true on exactly the rows ``rows`` is true on (it decides whole
            files); it also has ``rows``' truth value on every row, but for a part without
            columns that is unknown (``id = NULL``), which is false in ``pushed`` where it
            cannot matter (not under a NOT), as Spark's optimizer makes it.
    """

    rows: Column
    pushed: Expression
    exact: bool


def table_condition(
    spark: SparkSession, schema: Schema, where: Expression | str | Column | None
) -> Condition:
    """The condition ``where`` on rows of a table with ``schema``.

    Args:
        where: a Spark SQL boolean expression (``"id % 100 = 0 AND day = '2024-01-01'"``), a
            Spark column, an icefloe expression (Iceberg's semantics, as ``table.delete``), or
            None (every row).
    """
    if where is None:
        return Condition(F.lit(True), always_true(), exact=True)
    if isinstance(where, Column):
        return Condition(where, always_true(), exact=False)
    if isinstance(where, Expression):
        bound = bind(schema, where)
        rows = to_spark_filter(bound, lambda ref: _path_column(ref.path))
        return Condition(rows, where, exact=True)
    if not isinstance(where, str):
        raise ValidationError(f"where= must be a Spark SQL string, a Column or an expression, not {where!r}")
    converter = _Converter(schema, spark, text=where)
    node = converter.parse(where)
    if node is None or isinstance(node.unnest(), exp.Null):  # let Spark say what is wrong with it
        return Condition(F.expr(where), always_true(), exact=False)
    exact = converter.exact(node)
    pushed = exact if exact is not None else converter.implied(node)
    return Condition(F.expr(where), pushed, exact=exact is not None)


def merge_target_filter(
    spark: SparkSession,
    schema: Schema,
    condition: str | Column,
    *,
    target_alias: str,
    source_alias: str,
    source_columns: Collection[str],
) -> Expression:
    """An Iceberg filter true on every target row that can satisfy a MERGE condition: what the
    condition implies of the target's columns alone (``t.day = '2024-01-01'`` in
    ``t.id = s.id AND t.day = '2024-01-01'``); ``always_true()`` when nothing."""
    if not isinstance(condition, str):
        return always_true()
    converter = _Converter(
        schema,
        spark,
        text=condition,
        target_alias=target_alias,
        source_alias=source_alias,
        source_columns=source_columns,
    )
    node = converter.parse(condition)
    return always_true() if node is None else converter.implied(node)


def implied_filter(spark: SparkSession, schema: Schema, condition: str, *, alias: str) -> Expression:
    """An Iceberg filter true on every row of a table (``alias`` in the statement, or its
    columns unqualified) where the Spark SQL ``condition`` is true: the conjuncts that convert
    (``always_true()`` when none do)."""
    converter = _Converter(schema, spark, text=condition, target_alias=alias)
    node = converter.parse(condition)
    return always_true() if node is None else converter.implied(node)


def _path_column(path: tuple[str, ...]) -> Column:
    column = F.col("`" + path[0].replace("`", "``") + "`")
    for name in path[1:]:
        column = column.getField(name)
    return column


class _Converter:
    """Spark SQL (as sqlglot nodes) to icefloe expressions over one table's columns."""

    def __init__(
        self,
        schema: Schema,
        spark: SparkSession,
        *,
        text: str,
        target_alias: str | None = None,
        source_alias: str | None = None,
        source_columns: Collection[str] = (),
    ):
        self.schema = schema
        self.case_sensitive = _conf(spark, "spark.sql.caseSensitive", "false").lower() == "true"
        self.time_zone = _zone(_conf(spark, "spark.sql.session.timeZone", "UTC"))
        self.timestamp_literals_ntz = (
            _conf(spark, "spark.sql.timestampType", "TIMESTAMP_LTZ").upper() == "TIMESTAMP_NTZ"
        )
        # Spark's escapes in string literals (\t, \u0041, octal ...) are not all sqlglot's.
        self.strings_convert = "\\" not in text
        self.target_alias = target_alias
        self.source_alias = source_alias
        self.source_columns = {self._key(c) for c in source_columns}

    def _key(self, name: str) -> str:
        return name if self.case_sensitive else name.lower()

    @staticmethod
    def parse(text: str) -> Node | None:
        try:
            return sqlglot.parse_one(text, read="spark")
        except sqlglot.errors.SqlglotError:
            return None

    # ---- the two conversions ------------------------------------------------------------------

    def exact(self, node: Node, unknown_is_false: bool = True) -> Expression | None:
        """An expression true on exactly the rows ``node`` is true on, or None.

        ``unknown_is_false``: ``node`` is not under a NOT, so where it is unknown it may be
        false instead (a filter keeps neither): a constant that is unknown (``id = NULL``,
        ``NULL AND x``) converts to false there, as Spark's optimizer replaces it."""
        constant = self._constant(node)
        if constant is not _NO:
            if constant is None:
                return always_false() if unknown_is_false else None
            return always_true() if constant else always_false()
        if isinstance(node, exp.Paren):
            return self.exact(node.this, unknown_is_false)
        if isinstance(node, (exp.And, exp.Or)):
            left = self.exact(node.left, unknown_is_false)
            right = self.exact(node.right, unknown_is_false)
            if left is None or right is None:
                return None
            return and_(left, right) if isinstance(node, exp.And) else or_(left, right)
        if isinstance(node, exp.Not):
            child = self.exact(node.this, unknown_is_false=False)
            return None if child is None else not_(child)
        return self._predicate(node)

    def _constant(self, node: Node) -> Any:
        """The truth value (True, False, None: unknown) of a condition Spark folds to a
        constant: literals only (``1 = 0``, ``'a' < 'b'``, ``NULL``, ``2 > 1 AND NULL``), or a
        comparison with NULL (``id = NULL`` is unknown on every row); ``_NO`` otherwise, or
        where Spark's value is not certain (literals of mixed types)."""
        if isinstance(node, exp.Paren):
            return self._constant(node.this)
        if isinstance(node, exp.Null):
            return None
        if isinstance(node, exp.Boolean):
            return bool(node.this)
        if isinstance(node, exp.Not):
            inner = self._constant(node.this)
            return inner if inner is _NO or inner is None else not inner
        if isinstance(node, (exp.And, exp.Or)):
            left, right = self._constant(node.left), self._constant(node.right)
            if left is _NO or right is _NO:
                return _NO
            if isinstance(node, exp.And):
                return False if False in (left, right) else None if None in (left, right) else True
            return True if True in (left, right) else None if None in (left, right) else False
        compare = _CONSTANT_COMPARISONS.get(type(node))
        if compare is None:
            return _NO
        if not isinstance(node, exp.NullSafeEQ) and any(
            isinstance(side, exp.Null) for side in (node.this, node.expression)
        ):
            return None
        sides: list[Any] = []
        for side in (node.this, node.expression):
            if isinstance(side, exp.Null):
                sides.append(None)
                continue
            literal = self._literal(side)
            if literal is _NO or literal[0] not in ("int", "decimal", "float", "string"):
                return _NO
            sides.append(literal)
        left, right = sides
        if isinstance(node, exp.NullSafeEQ):
            if left is None or right is None:
                return left is None and right is None
        elif left is None or right is None:
            return None
        assert left is not None and right is not None
        if (left[0] == "string") != (right[0] == "string"):
            return _NO  # Spark casts one side: leave it to Spark
        a, b = left[1], right[1]
        if left[0] == "float" or right[0] == "float":
            a, b = float(a), float(b)
        return compare(a, b)

    def implied(self, node: Node) -> Expression:
        """An expression true wherever ``node`` is true (``always_true()`` at worst)."""
        if isinstance(node, exp.Paren):
            return self.implied(node.this)
        if isinstance(node, exp.And):
            return and_(self.implied(node.left), self.implied(node.right))
        if isinstance(node, exp.Or):
            return or_(self.implied(node.left), self.implied(node.right))
        converted = self.exact(node)
        return always_true() if converted is None else converted

    # ---- predicates ---------------------------------------------------------------------------

    def _predicate(self, node: Node) -> Expression | None:
        if isinstance(node, exp.Column):  # a boolean column on its own
            found = self._field(node)
            if found is None or not isinstance(found[1].field_type, it.BooleanType):
                return None
            return equal(found[0], True)
        if isinstance(node, exp.Is):
            found = self._field(node.this)
            return is_null(found[0]) if found is not None and isinstance(node.expression, exp.Null) else None
        if isinstance(node, exp.IsNan):
            found = self._field(node.this)
            if found is None or not isinstance(found[1].field_type, (it.FloatType, it.DoubleType)):
                return None
            return is_nan(found[0])
        if isinstance(node, exp.Like):
            return self._like(node)
        if isinstance(node, exp.In):
            return self._in(node)
        if isinstance(node, exp.Between):
            low = self._compare(exp.GTE, node.this, node.args.get("low"))
            high = self._compare(exp.LTE, node.this, node.args.get("high"))
            return None if low is None or high is None else and_(low, high)
        if isinstance(node, (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ)):
            return self._compare(type(node), node.this, node.expression)
        return None

    def _compare(self, kind: Any, left: Any, right: Any) -> Expression | None:
        found = self._field(left)
        value_node = right
        if found is None:  # the literal may be on the left: 5 < x is x > 5
            found = self._field(right)
            value_node = left
            kind = _FLIPPED.get(kind, kind)
        if found is None or value_node is None:
            return None
        name, field = found
        value = self._value(value_node, field.field_type)
        if value is _NO:
            return None
        floating = isinstance(field.field_type, (it.FloatType, it.DoubleType))
        if kind is exp.NullSafeEQ:  # null <=> v is false, not unknown
            base = _COMPARISONS[exp.EQ](name, value, floating)
            return and_(base, not_null(name))
        return _COMPARISONS[kind](name, value, floating)

    def _in(self, node: exp.In) -> Expression | None:
        if node.args.get("query") is not None or node.args.get("unnest") is not None:
            return None
        found = self._field(node.this)
        if found is None:
            return None
        name, field = found
        values = []
        for item in node.expressions:
            value = self._value(item, field.field_type)
            if value is _NO:  # NULL in the list, an expression, a literal that does not convert
                return None
            values.append(value)
        if not values:
            return None
        result: Expression = is_in(name, values)
        floating = isinstance(field.field_type, (it.FloatType, it.DoubleType))
        return and_(result, not_nan(name)) if floating else result

    def _like(self, node: exp.Like) -> Expression | None:
        found = self._field(node.this)
        pattern = node.expression
        if (
            found is None
            or not isinstance(found[1].field_type, it.StringType)
            or not isinstance(pattern, exp.Literal)
            or not pattern.is_string
            or not self.strings_convert
        ):
            return None
        text = pattern.this
        body = text[:-1] if text.endswith("%") else text
        if "%" in body or "_" in body:
            return None
        result = starts_with(found[0], body) if text.endswith("%") else equal(found[0], body)
        return not_(result) if node.args.get("negate") else result

    # ---- columns and literals -----------------------------------------------------------------

    def _field(self, node: Any) -> tuple[str, it.NestedField] | None:
        """The table column ``node`` names (its dotted name and field), or None: not a column,
        a source column, a column inside a list or map, or one the table does not have."""
        if isinstance(node, exp.Paren):
            return self._field(node.this)
        if not isinstance(node, exp.Column) or isinstance(node.this, exp.Star):
            return None
        parts = [part.name for part in node.parts]
        if self.target_alias is not None:
            if len(parts) > 1 and self._key(parts[0]) == self._key(self.target_alias):
                parts = parts[1:]
            elif len(parts) > 1 and self._key(parts[0]) == self._key(self.source_alias or ""):
                return None
            elif self._key(parts[0]) in self.source_columns:
                return None  # the source's, or ambiguous: Spark decides
        fields = self.schema.fields
        path: list[str] = []
        field: it.NestedField | None = None
        for part in parts:
            matches = [f for f in fields if self._key(f.name) == self._key(part)]
            if len(matches) != 1:
                return None
            field = matches[0]
            path.append(field.name)
            fields = field.field_type.fields if isinstance(field.field_type, it.StructType) else ()
        if field is None or not field.field_type.is_primitive:
            return None
        return ".".join(path), field

    def _value(self, node: Any, field_type: it.IcebergType) -> Any:
        """``node`` (a literal) as a value of ``field_type`` compared the way Spark compares it,
        or ``_NO``."""
        literal = self._literal(node)
        if literal is _NO:
            return _NO
        kind, value = literal
        return _typed(kind, value, field_type, self.time_zone)

    def _literal(self, node: Any) -> Any:
        """``(kind, value)`` of a literal node: int, decimal, float, string, bool, date,
        timestamp_ltz or timestamp_ntz; or ``_NO``."""
        if isinstance(node, exp.Paren):
            return self._literal(node.this)
        if isinstance(node, exp.Neg):
            inner = self._literal(node.this)
            if inner is _NO or inner[0] not in ("int", "decimal", "float"):
                return _NO
            return inner[0], -inner[1]
        if isinstance(node, exp.Boolean):
            return "bool", bool(node.this)
        if isinstance(node, exp.Literal):
            if node.is_string:
                return ("string", node.this) if self.strings_convert else _NO
            return _number(node.this)
        if isinstance(node, (exp.Cast, exp.TryCast)) and isinstance(node.this, exp.Literal):
            target = node.to.this
            inner = node.this
            if not inner.is_string and target in _NUMERIC_CASTS:  # 1L, 1.5D, 100BD
                number = _number(inner.this)
                if number is _NO:
                    return _NO
                wanted = _NUMERIC_CASTS[target]
                if wanted == "int" and number[0] != "int":
                    return _NO
                return (wanted, float(number[1])) if wanted == "float" else (wanted, number[1])
            if inner.is_string and self.strings_convert:
                if target == exp.DataType.Type.DATE:
                    return "date", inner.this
                if target == exp.DataType.Type.TIMESTAMPNTZ or (
                    target == exp.DataType.Type.TIMESTAMP and self.timestamp_literals_ntz
                ):
                    return "timestamp_ntz", inner.this
                if target in (
                    exp.DataType.Type.TIMESTAMP,
                    exp.DataType.Type.TIMESTAMPTZ,
                    exp.DataType.Type.TIMESTAMPLTZ,
                ):
                    return "timestamp_ltz", inner.this
        return _NO


def _number(text: str) -> Any:
    """Spark's reading of a numeric literal: an integer, a decimal (``1.5``) or a double
    (``1e3``)."""
    try:
        if re.fullmatch(r"\d+", text):
            return "int", int(text)
        if "e" in text.lower():
            value = float(text)
            return ("float", value) if np.isfinite(value) else _NO
        return "decimal", Decimal(text)
    except (ValueError, InvalidOperation):
        return _NO


def _typed(kind: str, value: Any, field_type: it.IcebergType, zone: dt.tzinfo | None) -> Any:
    """A literal of ``kind`` as a value of a ``field_type`` column, when Spark's comparison of
    the two means comparing with that value; else ``_NO``."""
    if isinstance(field_type, (it.IntegerType, it.LongType)):
        if kind == "decimal" and value == value.to_integral_value():
            kind, value = "int", int(value)
        low, high = _INT_RANGES[type(field_type)]
        return value if kind == "int" and low <= value <= high else _NO
    if isinstance(field_type, it.FloatType):
        if kind not in ("int", "decimal", "float"):
            return _NO
        single = np.float32(value)
        exact = np.isfinite(single) and Decimal(float(single)) == Decimal(value)
        return float(single) if exact else _NO  # Spark widens the column; only exact values agree
    if isinstance(field_type, it.DoubleType):
        if kind not in ("int", "decimal", "float"):
            return _NO
        double = float(value)
        if kind == "int" and Decimal(double) != Decimal(value):
            return _NO
        return double if np.isfinite(double) else _NO
    if isinstance(field_type, it.DecimalType):
        if kind not in ("int", "decimal"):
            return _NO
        scaled = Decimal(value).scaleb(field_type.scale)
        if scaled != scaled.to_integral_value() or len(str(abs(int(scaled)))) > field_type.precision:
            return _NO
        return Decimal(int(scaled)).scaleb(-field_type.scale)
    if isinstance(field_type, it.StringType):
        return value if kind == "string" else _NO
    if isinstance(field_type, it.BooleanType):
        return value if kind == "bool" else _NO
    if isinstance(field_type, it.DateType):
        if kind in ("string", "date") and _ISO_DATE.fullmatch(value):
            return _date(value)
        return _NO
    if isinstance(field_type, it.TimestampType):
        if kind in ("string", "timestamp_ntz"):
            parsed = _timestamp(value)
            if parsed is not _NO and parsed.tzinfo is None:
                return parsed
        return _NO
    if isinstance(field_type, it.TimestamptzType):
        if kind in ("string", "timestamp_ltz", "timestamp_ntz"):
            parsed = _timestamp(value)
            if parsed is _NO:
                return _NO
            if parsed.tzinfo is None:
                if zone is None:
                    return _NO
                parsed = parsed.replace(tzinfo=zone)
            return parsed.astimezone(dt.UTC)
        return _NO
    return _NO


def _date(text: str) -> Any:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return _NO


def _timestamp(text: str) -> Any:
    found = _ISO_TIMESTAMP.fullmatch(text)
    if found is None:
        return _NO
    normalized = found.group("date") + "T" + (found.group("time") or "00:00")
    zone = found.group("zone")
    if zone:
        normalized += "+00:00" if zone == "Z" else zone
    try:
        return dt.datetime.fromisoformat(normalized)
    except ValueError:
        return _NO


def _zone(name: str) -> dt.tzinfo | None:
    """The session time zone (a region id or a fixed offset), or None when unknown."""
    offset = _OFFSET_ZONE.fullmatch(name.strip())
    if offset is not None:
        sign = -1 if offset.group("sign") == "-" else 1
        delta = dt.timedelta(hours=int(offset.group("hours")), minutes=int(offset.group("minutes") or 0))
        return dt.timezone(sign * delta)
    try:
        return zoneinfo.ZoneInfo(name.strip())
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return dt.UTC if name.strip().upper() in ("UTC", "GMT", "Z") else None


def _conf(spark: SparkSession, key: str, default: str) -> str:
    value = spark.conf.get(key, default)
    return default if value is None else value


def _float_aware(
    plain: Callable[[str, Any], Expression], *, nan: bool
) -> Callable[[str, Any, bool], Expression]:
    """A comparison builder that gives NaN rows Spark's answer on float columns: ``nan`` is
    whether Spark finds the comparison true for NaN (NaN sorts above every number)."""

    def build(name: str, value: Any, floating: bool) -> Expression:
        result = plain(name, value)
        if not floating:
            return result
        return or_(result, is_nan(name)) if nan else and_(result, not_nan(name))

    return build


_COMPARISONS: dict[Any, Callable[[str, Any, bool], Expression]] = {
    exp.EQ: _float_aware(equal, nan=False),
    exp.NEQ: _float_aware(not_equal, nan=True),
    exp.GT: _float_aware(greater_than, nan=True),
    exp.GTE: _float_aware(greater_than_or_equal, nan=True),
    exp.LT: _float_aware(less_than, nan=False),
    exp.LTE: _float_aware(less_than_or_equal, nan=False),
}
_CONSTANT_COMPARISONS: dict[Any, Callable[[Any, Any], bool]] = {
    exp.EQ: lambda a, b: a == b, exp.NullSafeEQ: lambda a, b: a == b, exp.NEQ: lambda a, b: a != b,
    exp.GT: lambda a, b: a > b, exp.GTE: lambda a, b: a >= b,
    exp.LT: lambda a, b: a < b, exp.LTE: lambda a, b: a <= b,
}  # fmt: skip
_FLIPPED: dict[Any, Any] = {exp.GT: exp.LT, exp.GTE: exp.LTE, exp.LT: exp.GT, exp.LTE: exp.GTE}
