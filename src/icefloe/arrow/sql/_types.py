"""Spark SQL's types as Arrow types, and Spark's rules over them (ANSI mode, Spark 4).

Each Spark type is one Arrow type: ``INT`` is ``int32``, ``DECIMAL(p, s)`` is ``decimal128(p,
s)``, ``TIMESTAMP`` (an instant, Spark's default) is ``timestamp("us", "UTC")`` and
``TIMESTAMP_NTZ`` is ``timestamp("us")``. Columns of other Arrow types (Iceberg's ``uuid``,
``time``, nanosecond timestamps) have no Spark type here: an expression may only copy them.

The rules are Spark's ``AnsiTypeCoercion`` (the common type of two types, string promotion),
``DecimalPrecision`` (the result types of decimal arithmetic) and ``Cast`` (which casts are
allowed, and which values a table column takes: ``canANSIStoreAssign``).
"""

from __future__ import annotations

import pyarrow as pa

__all__ = [
    "BINARY",
    "BOOLEAN",
    "BYTE",
    "DATE",
    "DOUBLE",
    "FLOAT",
    "INT",
    "LONG",
    "MAX_PRECISION",
    "NULL",
    "SHORT",
    "STRING",
    "TIMESTAMP",
    "TIMESTAMP_NTZ",
    "adjusted_decimal",
    "can_ansi_cast",
    "can_store_assign",
    "decimal",
    "decimal_for",
    "is_atomic",
    "is_datetime",
    "is_decimal",
    "is_fractional",
    "is_integral",
    "is_numeric",
    "is_spark_type",
    "spark_type_of_column",
    "type_name",
    "wider_decimal",
    "wider_type",
    "wider_types",
]

NULL = pa.null()
BOOLEAN = pa.bool_()
BYTE = pa.int8()
SHORT = pa.int16()
INT = pa.int32()
LONG = pa.int64()
FLOAT = pa.float32()
DOUBLE = pa.float64()
STRING = pa.string()
BINARY = pa.binary()
DATE = pa.date32()
TIMESTAMP = pa.timestamp("us", tz="UTC")
TIMESTAMP_NTZ = pa.timestamp("us")
MAX_PRECISION = 38
_INTEGRAL = (BYTE, SHORT, INT, LONG)
_PRECEDENCE = (BYTE, SHORT, INT, LONG, FLOAT, DOUBLE)  # Spark's numericPrecedence
_NAMES = {
    NULL: "VOID", BOOLEAN: "BOOLEAN", BYTE: "TINYINT", SHORT: "SMALLINT", INT: "INT", LONG: "BIGINT",
    FLOAT: "FLOAT", DOUBLE: "DOUBLE", STRING: "STRING", BINARY: "BINARY", DATE: "DATE",
    TIMESTAMP: "TIMESTAMP", TIMESTAMP_NTZ: "TIMESTAMP_NTZ",
}  # fmt: skip
# DecimalType.forType: the decimal that holds every value of an integral or floating type.
_DECIMAL_FOR = {BYTE: (3, 0), SHORT: (5, 0), INT: (10, 0), LONG: (20, 0), FLOAT: (14, 7), DOUBLE: (30, 15)}


def decimal(precision: int, scale: int) -> pa.DataType:
    return pa.decimal128(precision, scale)


def is_decimal(t: pa.DataType) -> bool:
    return bool(pa.types.is_decimal128(t))


def is_integral(t: pa.DataType) -> bool:
    return t in _INTEGRAL


def is_fractional(t: pa.DataType) -> bool:
    return t in (FLOAT, DOUBLE) or is_decimal(t)


def is_numeric(t: pa.DataType) -> bool:
    return is_integral(t) or is_fractional(t)


def is_datetime(t: pa.DataType) -> bool:
    return t in (DATE, TIMESTAMP, TIMESTAMP_NTZ)


def is_atomic(t: pa.DataType) -> bool:
    """Spark's AtomicType: every primitive type but NULL."""
    return is_numeric(t) or is_datetime(t) or t in (STRING, BINARY, BOOLEAN)


def is_spark_type(t: pa.DataType) -> bool:
    """Whether ``t`` is the Arrow form of a Spark type."""
    if t == NULL or is_atomic(t):
        return True
    if pa.types.is_struct(t):
        return all(is_spark_type(t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_list(t):
        return is_spark_type(t.value_type)
    if pa.types.is_map(t):
        return is_spark_type(t.key_type) and is_spark_type(t.item_type)
    return False


def spark_type_of_column(t: pa.DataType) -> pa.DataType:
    """The Spark type an Arrow column is read as (``large_string`` as STRING, ``fixed`` as
    BINARY, as Spark reads Iceberg's fixed); other types are returned as they are."""
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return STRING
    if (
        pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t) or pa.types.is_binary_view(t)
    ) and not isinstance(t, pa.ExtensionType):
        return BINARY
    return t


def type_name(t: pa.DataType) -> str:
    """Spark's SQL name of a type (``DECIMAL(10,2)``, ``ARRAY<INT>``); an Arrow name for a type
    Spark does not have."""
    if t in _NAMES:
        return _NAMES[t]
    if is_decimal(t):
        return f"DECIMAL({t.precision},{t.scale})"
    if pa.types.is_list(t):
        return f"ARRAY<{type_name(t.value_type)}>"
    if pa.types.is_map(t):
        return f"MAP<{type_name(t.key_type)}, {type_name(t.item_type)}>"
    if pa.types.is_struct(t):
        fields = ", ".join(f"{t.field(i).name}: {type_name(t.field(i).type)}" for i in range(t.num_fields))
        return f"STRUCT<{fields}>"
    return f"{t} (no Spark type)"


def decimal_for(t: pa.DataType) -> pa.DataType:
    """``DecimalType.forType``: a decimal itself, else the decimal that holds every value."""
    if is_decimal(t):
        return t
    return decimal(*_DECIMAL_FOR[t])


def _wider_than(d: pa.DataType, t: pa.DataType) -> bool:
    """``DecimalType.isWiderThan``: ``d`` holds every value of ``t`` exactly."""
    if is_integral(t):
        t = decimal_for(t)
    if not is_decimal(t):
        return False
    return bool(d.precision - d.scale >= t.precision - t.scale and d.scale >= t.scale)


def wider_decimal(a: pa.DataType, b: pa.DataType) -> pa.DataType:
    """``DecimalPrecision.widerDecimalType`` of two decimals (or integral types). Past 38 digits
    Spark 4 keeps the integral digits and drops fraction digits (``boundedPreferIntegralDigits``,
    ``spark.sql.legacy.retainFractionDigitsFirst=false``)."""
    a, b = decimal_for(a), decimal_for(b)
    scale = max(a.scale, b.scale)
    precision = max(a.precision - a.scale, b.precision - b.scale) + scale
    if precision <= MAX_PRECISION:
        return decimal(precision, scale)
    return decimal(MAX_PRECISION, max(0, scale - (precision - MAX_PRECISION)))


def adjusted_decimal(precision: int, scale: int) -> pa.DataType:
    """``DecimalType.adjustPrecisionScale`` (``spark.sql.decimalOperations.allowPrecisionLoss``,
    on by default): past 38 digits the scale gives way, down to 6, so the integral part fits."""
    if precision <= MAX_PRECISION:
        return decimal(precision, scale)
    integral = precision - scale
    minimum = min(scale, 6)
    return decimal(MAX_PRECISION, max(MAX_PRECISION - integral, minimum))


def _datetime_wider(a: pa.DataType, b: pa.DataType) -> pa.DataType:
    if TIMESTAMP in (a, b):
        return TIMESTAMP
    return TIMESTAMP_NTZ


def _tightest(a: pa.DataType, b: pa.DataType) -> pa.DataType | None:
    """``AnsiTypeCoercion.findTightestCommonType``."""
    if a == b:
        return a
    if a == NULL:
        return b
    if b == NULL:
        return a
    if is_integral(a) and is_decimal(b):
        return b if _wider_than(b, a) else None
    if is_decimal(a) and is_integral(b):
        return a if _wider_than(a, b) else None
    if a in _PRECEDENCE and b in _PRECEDENCE:
        wider = _PRECEDENCE[max(_PRECEDENCE.index(a), _PRECEDENCE.index(b))]
        return DOUBLE if wider == FLOAT else wider  # an integral and a float meet as double
    if is_datetime(a) and is_datetime(b):
        return _datetime_wider(a, b)
    return None


def _wider_for_decimal(a: pa.DataType, b: pa.DataType) -> pa.DataType | None:
    """``TypeCoercion.findWiderTypeForDecimal``."""
    if (is_decimal(a) and (is_decimal(b) or is_integral(b))) or (is_decimal(b) and is_integral(a)):
        return wider_decimal(a, b)
    if (is_decimal(a) and is_fractional(b)) or (is_decimal(b) and is_fractional(a)):
        return DOUBLE
    return None


def _wider_for_string(a: pa.DataType, b: pa.DataType) -> pa.DataType | None:
    """``AnsiTypeCoercion.findWiderTypeForString``: a string meets an integral type as BIGINT, a
    fractional one as DOUBLE, any other atomic type as that type."""
    if a != STRING:
        a, b = b, a
    if a != STRING or b == STRING:
        return None
    if is_integral(b):
        return LONG
    if is_fractional(b):
        return DOUBLE
    if b == NULL:
        return STRING
    return b if is_atomic(b) else None


def wider_type(a: pa.DataType, b: pa.DataType) -> pa.DataType | None:
    """``AnsiTypeCoercion.findWiderTypeForTwo``: the type two values meet as (comparisons, IN,
    CASE, COALESCE ...), or None when Spark refuses them. Nested types meet only when equal."""
    return _tightest(a, b) or _wider_for_decimal(a, b) or _wider_for_string(a, b)


def wider_types(types: list[pa.DataType]) -> pa.DataType | None:
    """``findWiderCommonType``: the types folded pairwise from NULL."""
    result: pa.DataType | None = NULL
    for t in types:
        result = wider_type(result, t) if result is not None else None
    return result


def tightest_types(types: list[pa.DataType]) -> pa.DataType | None:
    """The common type without string promotion (GREATEST, LEAST: ``findWiderTypeWithoutStringPromotion``)."""
    result: pa.DataType | None = NULL
    for t in types:
        if result is None:
            return None
        result = _tightest(result, t) or _wider_for_decimal(result, t)
    return result


def can_ansi_cast(source: pa.DataType, target: pa.DataType) -> bool:
    """``Cast.canAnsiCast`` for the types this evaluator has."""
    if source in (target, NULL) or target == STRING:
        return True
    if source == STRING:
        return target in (BINARY, BOOLEAN, DATE, TIMESTAMP, TIMESTAMP_NTZ) or is_numeric(target)
    if target == BOOLEAN:
        return is_numeric(source)
    if target == TIMESTAMP:
        return source in (DATE, TIMESTAMP_NTZ) or is_numeric(source)
    if target == TIMESTAMP_NTZ:
        return source in (DATE, TIMESTAMP)
    if target == DATE:
        return source in (TIMESTAMP, TIMESTAMP_NTZ)
    if is_numeric(target):
        return is_numeric(source) or source in (BOOLEAN, TIMESTAMP)
    return False


def can_store_assign(source: pa.DataType, target: pa.DataType) -> bool:
    """``Cast.canANSIStoreAssign``: whether a value of ``source`` may be written to a column of
    ``target`` (Spark's default ``spark.sql.storeAssignmentPolicy=ANSI``). Fields that are
    required in ``target`` must be required in ``source``."""
    if source in (target, NULL):
        return True
    if is_numeric(source) and is_numeric(target):
        return True
    if is_atomic(source) and target == STRING:
        return True
    if is_datetime(source) and is_datetime(target):
        return True
    if pa.types.is_list(source) and pa.types.is_list(target):
        return _nullability_fits(source.value_field, target.value_field) and can_store_assign(
            source.value_type, target.value_type
        )
    if pa.types.is_map(source) and pa.types.is_map(target):
        return (
            _nullability_fits(source.item_field, target.item_field)
            and can_store_assign(source.key_type, target.key_type)
            and can_store_assign(source.item_type, target.item_type)
        )
    if pa.types.is_struct(source) and pa.types.is_struct(target):
        return source.num_fields == target.num_fields and all(
            _nullability_fits(source.field(i), target.field(i))
            and can_store_assign(source.field(i).type, target.field(i).type)
            for i in range(source.num_fields)
        )
    return False


def _nullability_fits(source: pa.Field, target: pa.Field) -> bool:
    return target.nullable or not source.nullable
