"""A DataFrame's columns in a table's shape, nested fields matched by name (private).

Spark casts one struct to another by position: a DataFrame whose struct holds ``(y, x)``
cast to a table's ``(x, y)`` would silently swap the values. Columns whose type holds a
struct are therefore rebuilt field by field, by name (case-insensitively, as Spark resolves
columns), through lists and maps; other columns are cast.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as st

from icefloe.errors import ValidationError
from icefloe.spark.types import to_spark_type
from icefloe.spec import types as it

__all__ = ["conform_column"]


def conform_column(expr: Column, source: st.DataType, target: it.IcebergType, path: str) -> Column:
    """``expr`` (of Spark type ``source``) as the table type ``target`` of column ``path``.

    Raises:
        ValidationError: a struct field the table lacks, a required field the DataFrame lacks,
            or a nested shape that does not fit (naming the field).
    """
    target_spark = to_spark_type(target, column=path, with_ids=False)
    if not _holds_struct(target):
        return expr.cast(target_spark)
    if isinstance(target, it.StructType):
        if not isinstance(source, st.StructType):
            raise ValidationError(f"column '{path}' is {source.simpleString()}, expected a struct")
        by_name = {f.name.lower(): f for f in source.fields}
        wanted = {f.name.lower() for f in target.fields}
        extra = [f.name for f in source.fields if f.name.lower() not in wanted]
        if extra:
            raise ValidationError(
                f"fields {extra} of column '{path}' are not in the table schema "
                f"({', '.join(f.name for f in target.fields)})"
            )
        children = []
        for child in target.fields:
            found = by_name.get(child.name.lower())
            child_path = f"{path}.{child.name}"
            if found is None:
                if child.required:
                    raise ValidationError(f"required field '{child_path}' is missing from the DataFrame")
                value = F.lit(None).cast(to_spark_type(child.field_type, column=child_path, with_ids=False))
            else:
                value = conform_column(
                    expr.getField(found.name), found.dataType, child.field_type, child_path
                )
            children.append(value.alias(child.name))
        return F.when(expr.isNull(), F.lit(None).cast(target_spark)).otherwise(F.struct(*children))
    if isinstance(target, it.ListType):
        if not isinstance(source, st.ArrayType):
            raise ValidationError(f"column '{path}' is {source.simpleString()}, expected an array")
        element = source.elementType
        return F.transform(expr, lambda e: conform_column(e, element, target.element_type, f"{path}.element"))
    if isinstance(target, it.MapType):
        if not isinstance(source, st.MapType):
            raise ValidationError(f"column '{path}' is {source.simpleString()}, expected a map")
        key_type, value_type = source.keyType, source.valueType
        keys = F.transform(
            F.map_keys(expr), lambda k: conform_column(k, key_type, target.key_type, f"{path}.key")
        )
        values = F.transform(
            F.map_values(expr), lambda v: conform_column(v, value_type, target.value_type, f"{path}.value")
        )
        return F.when(expr.isNull(), F.lit(None).cast(target_spark)).otherwise(
            F.map_from_arrays(keys, values)
        )
    return expr.cast(target_spark)  # pragma: no cover - every type holding a struct is handled above


def _holds_struct(t: it.IcebergType) -> bool:
    if isinstance(t, it.StructType):
        return True
    if isinstance(t, it.ListType):
        return _holds_struct(t.element_type)
    if isinstance(t, it.MapType):
        return _holds_struct(t.key_type) or _holds_struct(t.value_type)
    return False
