"""Iceberg schemas as Spark schemas, and back.

Spark reads Parquet by field id when a read schema's struct fields carry the metadata key
``parquet.field.id`` (and ``spark.sql.parquet.fieldId.read.enabled`` is on). Spark's schema can
only label struct fields: list elements and map keys / values are matched by position, which
is how Iceberg lays them out too.

Type mapping (Iceberg -> Spark): boolean, int, long, float, double, decimal, date, string and
binary map to their namesakes; ``timestamp`` -> ``TimestampNTZType``, ``timestamptz`` ->
``TimestampType``, ``fixed`` -> ``BinaryType``, ``uuid`` -> ``BinaryType`` on read (16 bytes,
turned into its string form by the reader) and ``StringType`` to users. ``time``, the
nanosecond timestamps, ``variant`` and ``unknown`` have no Spark type here: asking for one
raises :class:`~icefloe.errors.UnsupportedFeatureError` naming the column.
"""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as st

from icefloe.errors import UnsupportedFeatureError
from icefloe.spec import types as it
from icefloe.spec.schema import Schema

__all__ = [
    "FIELD_ID_KEY",
    "iceberg_type_from_spark",
    "schema_from_spark",
    "to_spark_schema",
    "to_spark_type",
    "uuid_string",
]

#: The struct-field metadata key Spark's Parquet reader and writer use for field ids.
FIELD_ID_KEY = "parquet.field.id"

_PRIMITIVES: dict[type[it.PrimitiveType], st.DataType] = {
    it.BooleanType: st.BooleanType(),
    it.IntegerType: st.IntegerType(),
    it.LongType: st.LongType(),
    it.FloatType: st.FloatType(),
    it.DoubleType: st.DoubleType(),
    it.DateType: st.DateType(),
    it.TimestampType: st.TimestampNTZType(),
    it.TimestamptzType: st.TimestampType(),
    it.StringType: st.StringType(),
    it.BinaryType: st.BinaryType(),
    it.FixedType: st.BinaryType(),
}


def to_spark_type(
    field_type: it.IcebergType, *, for_read: bool = False, column: str = "", with_ids: bool = True
) -> st.DataType:
    """The Spark type of an Iceberg type.

    Args:
        field_type: the Iceberg type.
        for_read: the type Spark's Parquet reader can read the column as (uuid as binary).
        column: the column's name, for error messages.
        with_ids: label struct fields with their field ids.
    """
    if isinstance(field_type, it.DecimalType):
        return st.DecimalType(field_type.precision, field_type.scale)
    if isinstance(field_type, it.UUIDType):
        return st.BinaryType() if for_read else st.StringType()
    spark_type = _PRIMITIVES.get(type(field_type))  # type: ignore[arg-type]
    if spark_type is not None:
        return spark_type
    if isinstance(field_type, it.StructType):
        return st.StructType(
            [
                _spark_field(f, for_read=for_read, prefix=f"{column}.", with_ids=with_ids)
                for f in field_type.fields
            ]
        )
    if isinstance(field_type, it.ListType):
        return st.ArrayType(
            to_spark_type(
                field_type.element_type, for_read=for_read, column=f"{column}.element", with_ids=with_ids
            ),
            containsNull=not field_type.element_required,
        )
    if isinstance(field_type, it.MapType):
        return st.MapType(
            to_spark_type(field_type.key_type, for_read=for_read, column=f"{column}.key", with_ids=with_ids),
            to_spark_type(
                field_type.value_type, for_read=for_read, column=f"{column}.value", with_ids=with_ids
            ),
            valueContainsNull=not field_type.value_required,
        )
    raise UnsupportedFeatureError(
        f"column '{column}': Iceberg type {field_type} has no Spark type in icefloe"
    )


def _spark_field(
    field: it.NestedField, *, for_read: bool, prefix: str = "", with_ids: bool = True, name: str | None = None
) -> st.StructField:
    metadata = {FIELD_ID_KEY: field.field_id} if with_ids else {}
    if field.doc and not for_read:
        metadata["comment"] = field.doc  # type: ignore[assignment]
    return st.StructField(
        name if name is not None else field.name,
        to_spark_type(field.field_type, for_read=for_read, column=f"{prefix}{field.name}", with_ids=with_ids),
        # Reads may meet files written before a column became required: always nullable.
        nullable=True if for_read else not field.required,
        metadata=metadata,
    )


def to_spark_schema(
    schema: Schema | it.StructType,
    *,
    for_read: bool = False,
    with_ids: bool = True,
    rename: Callable[[it.NestedField], str] | None = None,
) -> st.StructType:
    """The Spark schema of an Iceberg schema, struct fields labelled with their field ids.

    Args:
        schema: the schema.
        for_read: a read schema for Spark's Parquet reader (every field nullable, uuid as binary).
        with_ids: label the struct fields with ``parquet.field.id``.
        rename: the Spark name of each top-level field (default: its name).
    """
    return st.StructType(
        [
            _spark_field(f, for_read=for_read, with_ids=with_ids, name=rename(f) if rename else None)
            for f in schema.fields
        ]
    )


def iceberg_type_from_spark(spark_type: st.DataType, *, column: str = "") -> it.IcebergType:
    """The Iceberg type of a Spark type (nested fields get id 0; a schema assigns real ids)."""
    simple: dict[type[st.DataType], it.IcebergType] = {
        st.BooleanType: it.BooleanType(),
        st.ByteType: it.IntegerType(),
        st.ShortType: it.IntegerType(),
        st.IntegerType: it.IntegerType(),
        st.LongType: it.LongType(),
        st.FloatType: it.FloatType(),
        st.DoubleType: it.DoubleType(),
        st.DateType: it.DateType(),
        st.TimestampType: it.TimestamptzType(),
        st.TimestampNTZType: it.TimestampType(),
        st.StringType: it.StringType(),
        st.BinaryType: it.BinaryType(),
    }
    found = simple.get(type(spark_type))
    if found is not None:
        return found
    if isinstance(spark_type, st.DecimalType):
        return it.DecimalType(spark_type.precision, spark_type.scale)
    if isinstance(spark_type, st.StructType):
        return it.StructType(
            *[
                it.NestedField(
                    0,
                    f.name,
                    iceberg_type_from_spark(f.dataType, column=f"{column}.{f.name}" if column else f.name),
                    required=not f.nullable,
                )
                for f in spark_type.fields
            ]
        )
    if isinstance(spark_type, st.ArrayType):
        return it.ListType(
            0,
            iceberg_type_from_spark(spark_type.elementType, column=f"{column}.element"),
            element_required=not spark_type.containsNull,
        )
    if isinstance(spark_type, st.MapType):
        return it.MapType(
            0,
            iceberg_type_from_spark(spark_type.keyType, column=f"{column}.key"),
            0,
            iceberg_type_from_spark(spark_type.valueType, column=f"{column}.value"),
            value_required=not spark_type.valueContainsNull,
        )
    raise UnsupportedFeatureError(
        f"column '{column}': Spark type {spark_type.simpleString()} has no Iceberg type"
    )


def schema_from_spark(spark_schema: st.StructType) -> it.StructType:
    """The Iceberg struct of a Spark schema (ids 0: for ``create_table``, which assigns them)."""
    struct = iceberg_type_from_spark(spark_schema)
    assert isinstance(struct, it.StructType)
    return struct


def uuid_string(column: Column) -> Column:
    """A uuid read as its 16 bytes, as its string form (``"f79c3e09-677c-4bbd-a479-3f349cb785e7"``)."""
    return F.lower(F.regexp_replace(F.hex(column), r"^(.{8})(.{4})(.{4})(.{4})(.{12})$", "$1-$2-$3-$4-$5"))
