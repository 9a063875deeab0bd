"""What ``isp.update`` assigns, as ``table.update`` assigns it: literal values (``new_values=``)
as Spark columns of exactly the column's value, and Spark's store-assignment check of the types
the ``set=`` expressions give (``spark.sql.storeAssignmentPolicy``: ANSI by default, as Spark's own
``UPDATE`` checks them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa
from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as st

from icefloe.arrow.schema import schema_to_arrow
from icefloe.arrow.sql import can_store_assign, type_name
from icefloe.errors import InvalidExpressionError, UnsupportedFeatureError, ValidationError
from icefloe.spark.types import to_spark_type
from icefloe.spec import types as it
from icefloe.spec.schema import Schema
from icefloe.table.rows.update_rows import literal_scalar

__all__ = ["check_assignments", "literal_columns", "unresolved"]

_ARROW_FORMS: dict[type[st.DataType], pa.DataType] = {
    st.NullType: pa.null(), st.BooleanType: pa.bool_(), st.ByteType: pa.int8(), st.ShortType: pa.int16(),
    st.IntegerType: pa.int32(), st.LongType: pa.int64(), st.FloatType: pa.float32(), st.DoubleType: pa.float64(),
    st.StringType: pa.string(), st.CharType: pa.string(), st.VarcharType: pa.string(), st.BinaryType: pa.binary(),
    st.DateType: pa.date32(), st.TimestampType: pa.timestamp("us", tz="UTC"), st.TimestampNTZType: pa.timestamp("us"),
}  # fmt: skip
_PLAIN_LITERALS = (
    it.BooleanType,
    it.IntegerType,
    it.LongType,
    it.FloatType,
    it.DoubleType,
    it.DecimalType,
    it.StringType,
)


def literal_columns(schema: Schema, literals: Mapping[str, Any]) -> dict[str, Column]:
    """Spark columns of the literal values, each converted as ``table.update`` converts it (a cast
    to the column's type that refuses to lose information), then written so that Spark reads
    exactly that value whatever the session's time zone.

    Raises:
        ValidationError: a value that does not fit its column.
        UnsupportedFeatureError: a literal for a struct, list or map column.
    """
    arrow_schema = schema_to_arrow(schema)
    columns = {}
    for name, value in literals.items():
        field = schema.as_struct().field_by_name(name)
        assert field is not None
        try:
            scalar = literal_scalar(value, arrow_schema.field(name).type)
        except (
            pa.ArrowInvalid,
            pa.ArrowTypeError,
            pa.ArrowNotImplementedError,
            TypeError,
            ValueError,
        ) as exc:
            raise ValidationError(
                f"update: the new value of column '{name}' does not fit it ({field.field_type}): {exc}"
            ) from exc
        columns[name] = _spark_literal(scalar, field.field_type, name)
    return columns


def _spark_literal(scalar: pa.Scalar, field_type: it.IcebergType, column: str) -> Column:
    spark_type = to_spark_type(field_type, column=column, with_ids=False)
    if not scalar.is_valid:
        return F.lit(None).cast(spark_type)
    if isinstance(field_type, it.UUIDType):
        return F.lit(str(scalar.as_py()))
    if isinstance(field_type, it.DateType):
        return F.date_from_unix_date(F.lit(scalar.cast(pa.int32()).as_py()))
    if isinstance(field_type, it.TimestamptzType):
        return F.timestamp_micros(F.lit(scalar.cast(pa.int64()).as_py()))
    if isinstance(field_type, it.TimestampType):  # a wall clock: read from its text, zone-free
        return F.lit(scalar.as_py().isoformat(sep=" ")).cast(st.TimestampNTZType())
    if isinstance(field_type, (it.BinaryType, it.FixedType)):
        return F.unhex(F.lit(scalar.as_py().hex()))
    if isinstance(field_type, _PLAIN_LITERALS):
        return F.lit(scalar.as_py()).cast(spark_type)
    raise UnsupportedFeatureError(
        f"update: new_values= for the {field_type} column '{column}' is not supported from Spark; "
        "set= takes a Spark SQL expression for it (struct(...), array(...), map(...))"
    )


def unresolved(exc: Exception, expressions: Mapping[str, Any]) -> InvalidExpressionError | None:
    """Spark's error for a ``set=`` name it cannot resolve, with how to write a literal; None
    for another error."""
    condition = getattr(exc, "getCondition", getattr(exc, "getErrorClass", lambda: None))() or ""
    if not str(condition).startswith("UNRESOLVED_COLUMN"):
        return None
    message = str(exc).splitlines()[0]
    return InvalidExpressionError(
        f"update: {message} (set= {dict(expressions)}); a string literal in set= is written in quotes "
        "('ZZ'), or given in new_values="
    )


def _arrow_form(spark_type: st.DataType) -> pa.DataType | None:
    if isinstance(spark_type, st.DecimalType):
        return pa.decimal128(spark_type.precision, spark_type.scale)
    return _ARROW_FORMS.get(type(spark_type))


def check_assignments(
    spark: SparkSession, schema: Schema, updated: DataFrame, expressions: Mapping[str, Any]
) -> None:
    """Spark's store-assignment check of the ``set=`` columns of ``updated`` (nested values are
    matched field by field when written).

    Raises:
        InvalidExpressionError: a value type the column cannot take (a STRING for a DOUBLE), or
            a name Spark cannot resolve (a string literal written without quotes).
    """
    try:
        fields = updated.schema.fields  # (Spark analyses the expressions here, or on select)
    except AnalysisException as exc:
        error = unresolved(exc, expressions)
        if error is None:
            raise
        raise error from exc
    policy = str(spark.conf.get("spark.sql.storeAssignmentPolicy", "ANSI")).upper()
    if policy == "LEGACY" or not expressions:
        return
    types = {f.name: f.dataType for f in fields}
    for name, expression in expressions.items():
        field = schema.as_struct().field_by_name(name)
        assert field is not None
        source = _arrow_form(types[name])
        target = _arrow_form(to_spark_type(field.field_type, column=name, with_ids=False))
        if source is None or target is None or can_store_assign(source, target):
            continue
        text = expression if isinstance(expression, str) else str(expression)
        raise InvalidExpressionError(
            f"set {name} = {text}: a {type_name(source)} value cannot be assigned to the "
            f"{type_name(target)} column {name} (spark.sql.storeAssignmentPolicy={policy}; CAST converts explicitly)"
        )
