"""JSON forms of types, schemas, partition specs and sort orders (spec Appendix C).

Each ``*_to_json`` returns a ``json``-module-ready object with the fields in the order Java's
parsers (Iceberg 1.9) write them; each ``*_from_json`` takes a parsed JSON object and raises
:class:`~icefloe.errors.InvalidMetadataError` naming the field path when the input is malformed
(``location`` names the file in that message). The snapshot-related forms (snapshots, refs,
statistics files, encryption keys) live in :mod:`icefloe.serde.snapshot_json` and are
re-exported here.

Type strings are read as Java's ``Types.fromTypeName`` reads them: case-insensitive names,
``fixed[L]`` and ``decimal(P, S)`` with optional spaces; nothing else (no aliases such as
``integer``). Decimals are written as Java prints them: ``"decimal(9, 2)"``.
"""

from __future__ import annotations

import re
from typing import Any

from icefloe.errors import UnsupportedFeatureError, ValidationError
from icefloe.serde._reader import JsonReader, join_path
from icefloe.serde.snapshot_json import (
    encryption_key_from_json,
    encryption_key_to_json,
    partition_statistics_file_from_json,
    partition_statistics_file_to_json,
    ref_from_json,
    ref_to_json,
    refs_from_json,
    refs_to_json,
    snapshot_from_json,
    snapshot_to_json,
    statistics_file_from_json,
    statistics_file_to_json,
)
from icefloe.spec import conversions
from icefloe.spec.partitioning import PARTITION_DATA_ID_START, PartitionField, PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.spec.sorting import NullOrder, SortDirection, SortField, SortOrder
from icefloe.spec.transforms import Transform, parse_transform
from icefloe.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    PrimitiveType,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UnknownType,
    UUIDType,
    VariantType,
)

__all__ = [
    "encryption_key_from_json",
    "encryption_key_to_json",
    "field_to_json",
    "partition_field_from_json",
    "partition_fields_from_json",
    "partition_fields_to_json",
    "partition_statistics_file_from_json",
    "partition_statistics_file_to_json",
    "ref_from_json",
    "ref_to_json",
    "refs_from_json",
    "refs_to_json",
    "schema_from_json",
    "schema_to_json",
    "snapshot_from_json",
    "snapshot_to_json",
    "sort_order_from_json",
    "sort_order_to_json",
    "spec_from_json",
    "spec_to_json",
    "statistics_file_from_json",
    "statistics_file_to_json",
    "type_from_json",
    "type_to_json",
]

_PRIMITIVES: dict[str, IcebergType] = {
    str(t): t
    for t in (
        BooleanType(),
        IntegerType(),
        LongType(),
        FloatType(),
        DoubleType(),
        DateType(),
        TimeType(),
        TimestampType(),
        TimestamptzType(),
        TimestampNanoType(),
        TimestamptzNanoType(),
        StringType(),
        UUIDType(),
        BinaryType(),
        UnknownType(),
        VariantType(),
    )
}
_FIXED = re.compile(r"fixed\[\s*(\d+)\s*\]")
_DECIMAL = re.compile(r"decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)")
# v3 geospatial types: valid Iceberg that icefloe's type model does not have (yet).
_GEO = re.compile(r"(geometry|geography)\b.*", re.DOTALL)


# ---- types ----------------------------------------------------------------------------------


def type_to_json(field_type: IcebergType) -> Any:
    """The JSON form of a type: a string for primitives, an object for struct / list / map."""
    if isinstance(field_type, PrimitiveType):
        return str(field_type)
    if isinstance(field_type, StructType):
        return {"type": "struct", "fields": [field_to_json(f) for f in field_type.fields]}
    if isinstance(field_type, ListType):
        return {
            "type": "list",
            "element-id": field_type.element_id,
            "element": type_to_json(field_type.element_type),
            "element-required": field_type.element_required,
        }
    if isinstance(field_type, MapType):
        return {
            "type": "map",
            "key-id": field_type.key_id,
            "key": type_to_json(field_type.key_type),
            "value-id": field_type.value_id,
            "value": type_to_json(field_type.value_type),
            "value-required": field_type.value_required,
        }
    raise ValidationError(f"not an Iceberg type: {field_type!r}")


def field_to_json(field: NestedField) -> dict[str, Any]:
    """One struct field: id, name, required, type, then doc and the v3 defaults when set."""
    result: dict[str, Any] = {
        "id": field.field_id,
        "name": field.name,
        "required": field.required,
        "type": type_to_json(field.field_type),
    }
    if field.doc is not None:
        result["doc"] = field.doc
    if field.initial_default is not None:
        result["initial-default"] = conversions.to_json(field.field_type, field.initial_default)
    if field.write_default is not None:
        result["write-default"] = conversions.to_json(field.field_type, field.write_default)
    return result


def type_from_json(obj: Any, *, location: str | None = None) -> IcebergType:
    """Read a type from its JSON form.

    Raises:
        InvalidMetadataError: the JSON is not a valid type.
        UnsupportedFeatureError: a valid v3 type icefloe does not model (geometry, geography).
    """
    r = JsonReader(location, "type")
    return r.guard_depth(lambda: read_type(r, obj, ""))


def read_type(r: JsonReader, value: Any, path: str) -> IcebergType:
    if isinstance(value, str):
        return _primitive(r, value, path)
    if value is None:
        r.fail(path, "missing required field")
    obj = r.obj(value, path)
    kind = obj.get("type")
    if kind == "struct":
        return _read_struct(r, obj, path)
    if kind == "list":
        element_id = r.req_int(obj, "element-id", path)
        element = read_type(r, obj.get("element"), join_path(path, "element"))
        return ListType(element_id, element, r.req_bool(obj, "element-required", path))
    if kind == "map":
        key_id = r.req_int(obj, "key-id", path)
        key = read_type(r, obj.get("key"), join_path(path, "key"))
        value_id = r.req_int(obj, "value-id", path)
        value_type = read_type(r, obj.get("value"), join_path(path, "value"))
        return MapType(key_id, key, value_id, value_type, r.req_bool(obj, "value-required", path))
    r.fail(
        path,
        f"cannot parse type from {obj!r:.80}: expected a type string or an object whose "
        "'type' is struct, list or map",
    )


def _primitive(r: JsonReader, text: str, path: str) -> IcebergType:
    lowered = text.lower()
    found = _PRIMITIVES.get(lowered)
    if found is not None:
        return found
    fixed = _FIXED.fullmatch(lowered)
    if fixed:
        length = int(fixed.group(1))
        return r.wrap(path, lambda: FixedType(length))
    decimal = _DECIMAL.fullmatch(lowered)
    if decimal:
        precision, scale = int(decimal.group(1)), int(decimal.group(2))
        return r.wrap(path, lambda: DecimalType(precision, scale))
    if _GEO.fullmatch(lowered):
        raise UnsupportedFeatureError(
            f"{r.what}: field '{path}': type {text!r} is not supported by icefloe"
            + (f" (in {r.location})" if r.location else "")
        )
    r.fail(path, f"unknown type {text!r}")


def _read_struct(r: JsonReader, obj: dict[str, Any], path: str) -> StructType:
    fields = []
    for item, item_path in r.objects(obj, "fields", path):
        field_id = r.req_int(item, "id", item_path)
        name = r.req_str(item, "name", item_path)
        field_type = read_type(r, item.get("type"), join_path(item_path, "type"))
        required = r.req_bool(item, "required", item_path)
        doc = r.opt_str(item, "doc", item_path)
        initial = _read_default(r, item, "initial-default", field_type, item_path)
        write = _read_default(r, item, "write-default", field_type, item_path)
        fields.append(NestedField(field_id, name, field_type, required, doc, initial, write))
    return StructType(*fields)


def _read_default(r: JsonReader, obj: dict[str, Any], key: str, field_type: IcebergType, where: str) -> Any:
    if obj.get(key) is None:
        return None
    value = obj[key]
    return r.wrap(join_path(where, key), lambda: conversions.from_json(field_type, value))


# ---- schemas --------------------------------------------------------------------------------


def schema_to_json(schema: Schema) -> dict[str, Any]:
    """``{"type": "struct", "schema-id", "identifier-field-ids" (when any), "fields"}``."""
    result: dict[str, Any] = {"type": "struct", "schema-id": schema.schema_id}
    if schema.identifier_field_ids:
        result["identifier-field-ids"] = list(schema.identifier_field_ids)
    result["fields"] = [field_to_json(f) for f in schema.fields]
    return result


def schema_from_json(obj: Any, *, location: str | None = None) -> Schema:
    """Read a schema; a missing ``schema-id`` (old v1 files) is 0.

    Raises:
        InvalidMetadataError: naming the field that is missing or wrong.
    """
    r = JsonReader(location, "schema")
    return r.guard_depth(lambda: read_schema(r, obj, ""))


def read_schema(r: JsonReader, value: Any, path: str) -> Schema:
    obj = r.obj(value, path)
    if obj.get("type") != "struct":
        r.fail(join_path(path, "type"), f"a schema must be a struct, got {obj.get('type')!r}")
    struct = _read_struct(r, obj, path)
    schema_id = r.opt_int(obj, "schema-id", path)
    identifier_ids = r.int_list(obj, "identifier-field-ids", path, required=False) or ()
    return r.wrap(
        path,
        lambda: Schema(*struct.fields, schema_id=schema_id or 0, identifier_field_ids=identifier_ids),
    )


# ---- partition specs ------------------------------------------------------------------------


def partition_fields_to_json(spec: PartitionSpec) -> list[dict[str, Any]]:
    """Just the fields array of a spec: what manifests store as ``partition-spec`` metadata and
    v1 table metadata as the legacy ``partition-spec`` field."""
    return [
        {"name": f.name, "transform": str(f.transform), "source-id": f.source_id, "field-id": f.field_id}
        for f in spec.fields
    ]


def spec_to_json(spec: PartitionSpec) -> dict[str, Any]:
    """``{"spec-id", "fields"}``."""
    return {"spec-id": spec.spec_id, "fields": partition_fields_to_json(spec)}


def spec_from_json(obj: Any, *, location: str | None = None) -> PartitionSpec:
    """Read a partition spec. Fields without ``field-id`` (v1) are numbered from 1000.

    Raises:
        InvalidMetadataError: naming the field that is missing or wrong.
    """
    return read_spec(JsonReader(location, "partition spec"), obj, "")


def partition_fields_from_json(
    fields: Any, *, spec_id: int = 0, location: str | None = None
) -> PartitionSpec:
    """Read a spec from just its fields array (manifest metadata, legacy ``partition-spec``)."""
    return read_partition_fields(JsonReader(location, "partition spec"), fields, "", spec_id)


def partition_field_from_json(obj: Any, *, location: str | None = None) -> PartitionField:
    """Read one partition field, which must carry its ``field-id``."""
    r = JsonReader(location, "partition field")
    return _read_partition_field(r, r.obj(obj, ""), "", None)


def read_spec(r: JsonReader, value: Any, path: str) -> PartitionSpec:
    obj = r.obj(value, path)
    spec_id = r.req_int(obj, "spec-id", path)
    return read_partition_fields(r, obj.get("fields"), join_path(path, "fields"), spec_id)


def read_partition_fields(r: JsonReader, value: Any, path: str, spec_id: int) -> PartitionSpec:
    if value is None:
        r.fail(path, "missing required field")
    items = r.array(value, path)
    with_ids = sum(1 for item in items if isinstance(item, dict) and item.get("field-id") is not None)
    if 0 < with_ids < len(items):
        r.fail(path, f"{len(items) - with_ids} of {len(items)} partition fields have no field-id")
    fields = []
    for i, item in enumerate(items):
        item_path = f"{path}[{i}]"
        default_id = None if with_ids else PARTITION_DATA_ID_START + i
        fields.append(_read_partition_field(r, r.obj(item, item_path), item_path, default_id))
    return r.wrap(path, lambda: PartitionSpec(tuple(fields), spec_id=spec_id))


def _read_partition_field(
    r: JsonReader, obj: dict[str, Any], path: str, default_id: int | None
) -> PartitionField:
    name = r.req_str(obj, "name", path)
    transform = _read_transform(r, obj, path)
    source_id = _read_source_id(r, obj, path)
    field_id = r.req_int(obj, "field-id", path) if default_id is None else default_id
    return PartitionField(source_id, field_id, transform, name)


def _read_transform(r: JsonReader, obj: dict[str, Any], path: str) -> Transform:
    text = r.req_str(obj, "transform", path)
    return r.wrap(join_path(path, "transform"), lambda: parse_transform(text))


def _read_source_id(r: JsonReader, obj: dict[str, Any], path: str) -> int:
    # v3 writes "source-ids" only for multi-argument transforms, which icefloe does not model.
    if obj.get("source-id") is None and obj.get("source-ids") is not None:
        ids = r.int_list(obj, "source-ids", path) or []
        if len(ids) == 1:
            return ids[0]
        raise UnsupportedFeatureError(
            f"{r.what}: field '{join_path(path, 'source-ids')}': transforms of {len(ids)} source "
            "columns are not supported by icefloe" + (f" (in {r.location})" if r.location else "")
        )
    return r.req_int(obj, "source-id", path)


# ---- sort orders ----------------------------------------------------------------------------


def sort_order_to_json(order: SortOrder) -> dict[str, Any]:
    """``{"order-id", "fields": [{"transform", "source-id", "direction", "null-order"}]}``."""
    return {
        "order-id": order.order_id,
        "fields": [
            {
                "transform": str(f.transform),
                "source-id": f.source_id,
                "direction": f.direction.value,
                "null-order": f.null_order.value if f.null_order is not None else None,
            }
            for f in order.fields
        ],
    }


def sort_order_from_json(obj: Any, *, location: str | None = None) -> SortOrder:
    """Read a sort order; direction and null order are case-insensitive, as in Java.

    Raises:
        InvalidMetadataError: naming the field that is missing or wrong.
    """
    return read_sort_order(JsonReader(location, "sort order"), obj, "")


_DIRECTIONS = {d.value: d for d in SortDirection}
_NULL_ORDERS = {n.value: n for n in NullOrder}


def read_sort_order(r: JsonReader, value: Any, path: str) -> SortOrder:
    obj = r.obj(value, path)
    order_id = r.req_int(obj, "order-id", path)
    fields = []
    for item, item_path in r.objects(obj, "fields", path):
        transform = _read_transform(r, item, item_path)
        source_id = _read_source_id(r, item, item_path)
        direction = _DIRECTIONS.get(r.req_str(item, "direction", item_path).lower())
        if direction is None:
            r.fail(join_path(item_path, "direction"), f"expected 'asc' or 'desc', got {item['direction']!r}")
        null_order = _NULL_ORDERS.get(r.req_str(item, "null-order", item_path).lower())
        if null_order is None:
            r.fail(
                join_path(item_path, "null-order"),
                f"expected 'nulls-first' or 'nulls-last', got {item['null-order']!r}",
            )
        fields.append(SortField(source_id, transform, direction, null_order))
    return r.wrap(path, lambda: SortOrder(tuple(fields), order_id=order_id))
