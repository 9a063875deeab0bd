"""The Spark schema (``StructType.jsonValue()`` form) an Arrow schema stands for, so that a
``pyarrow.Table`` of icefloe and a DataFrame of Java Iceberg on Spark compare field by field:
names, types (Iceberg's Spark type mapping) and nullability (map values and list elements
included)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

__all__ = ["spark_schema_json", "spark_type_json", "without_metadata"]


def spark_type_json(type_: pa.DataType) -> Any:
    """The Spark type JSON of an Arrow type as icefloe produces it for an Iceberg type."""
    if isinstance(type_, pa.BaseExtensionType) and type_.extension_name == "arrow.uuid":
        return "string"
    if pa.types.is_struct(type_):
        return spark_schema_json(pa.schema(list(type_)))
    if pa.types.is_map(type_):
        return {
            "type": "map",
            "keyType": spark_type_json(type_.key_type),
            "valueType": spark_type_json(type_.item_type),
            "valueContainsNull": type_.item_field.nullable,
        }
    if pa.types.is_list(type_):
        return {
            "type": "array",
            "elementType": spark_type_json(type_.value_type),
            "containsNull": type_.value_field.nullable,
        }
    if pa.types.is_decimal(type_):
        return f"decimal({type_.precision},{type_.scale})"
    if pa.types.is_timestamp(type_):
        return "timestamp" if type_.tz is not None else "timestamp_ntz"
    simple = {
        pa.bool_(): "boolean",
        pa.int32(): "integer",
        pa.int64(): "long",
        pa.float32(): "float",
        pa.float64(): "double",
        pa.string(): "string",
        pa.binary(): "binary",
        pa.date32(): "date",
    }
    if pa.types.is_fixed_size_binary(type_):
        return "binary"
    return simple[type_]


def spark_schema_json(schema: pa.Schema) -> dict[str, Any]:
    """``{"type": "struct", "fields": [...]}`` without Spark's field metadata."""
    return {
        "type": "struct",
        "fields": [{"name": f.name, "type": spark_type_json(f.type), "nullable": f.nullable} for f in schema],
    }


def without_metadata(spark_json: dict[str, Any]) -> dict[str, Any]:
    """Spark's schema JSON with the ``metadata`` of every field dropped (comments, ids)."""

    def clean(type_: Any) -> Any:
        if isinstance(type_, str):
            return type_
        if type_["type"] == "struct":
            return {
                "type": "struct",
                "fields": [
                    {"name": f["name"], "type": clean(f["type"]), "nullable": f["nullable"]}
                    for f in type_["fields"]
                ],
            }
        if type_["type"] == "map":
            return {**type_, "keyType": clean(type_["keyType"]), "valueType": clean(type_["valueType"])}
        if type_["type"] == "array":
            return {**type_, "elementType": clean(type_["elementType"])}
        return type_

    return clean(spark_json)  # type: ignore[no-any-return]
