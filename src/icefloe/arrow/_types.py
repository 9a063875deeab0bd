"""The Iceberg <-> Arrow type mapping (private; the public API is :mod:`icefloe.arrow.schema`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import pyarrow as pa

from icefloe.errors import InvalidSchemaError, UnsupportedFeatureError
from icefloe.spec.name_mapping import MappedField, NameMapping
from icefloe.spec.schema import Schema, assign_fresh_ids
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
    "FIELD_ID_KEY",
    "apply_name_mapping",
    "arrow_to_schema",
    "arrow_to_schema_fresh",
    "arrow_type_to_iceberg",
    "field_id_of",
    "field_to_arrow",
    "schema_to_arrow",
    "type_to_arrow",
]

#: The Arrow field-metadata key pyarrow maps to and from Parquet field ids.
FIELD_ID_KEY = b"PARQUET:field_id"
# Also accepted when reading (some writers use the bare key).
_ALT_FIELD_ID_KEY = b"field_id"
_DOC_KEY = b"doc"

_UUID_TYPE = pa.uuid()


# ---------------------------------------------------------------------------------------------
# Iceberg -> Arrow


def _primitive_to_arrow(iceberg_type: IcebergType) -> pa.DataType:
    if isinstance(iceberg_type, BooleanType):
        return pa.bool_()
    if isinstance(iceberg_type, IntegerType):
        return pa.int32()
    if isinstance(iceberg_type, LongType):
        return pa.int64()
    if isinstance(iceberg_type, FloatType):
        return pa.float32()
    if isinstance(iceberg_type, DoubleType):
        return pa.float64()
    if isinstance(iceberg_type, DecimalType):
        return pa.decimal128(iceberg_type.precision, iceberg_type.scale)
    if isinstance(iceberg_type, DateType):
        return pa.date32()
    if isinstance(iceberg_type, TimeType):
        return pa.time64("us")
    if isinstance(iceberg_type, TimestampType):
        return pa.timestamp("us")
    if isinstance(iceberg_type, TimestamptzType):
        return pa.timestamp("us", tz="UTC")
    if isinstance(iceberg_type, TimestampNanoType):
        return pa.timestamp("ns")
    if isinstance(iceberg_type, TimestamptzNanoType):
        return pa.timestamp("ns", tz="UTC")
    if isinstance(iceberg_type, StringType):
        return pa.string()
    if isinstance(iceberg_type, UUIDType):
        return _UUID_TYPE
    if isinstance(iceberg_type, FixedType):
        return pa.binary(iceberg_type.length)
    if isinstance(iceberg_type, BinaryType):
        return pa.binary()
    if isinstance(iceberg_type, UnknownType):
        return pa.null()
    if isinstance(iceberg_type, VariantType):
        raise UnsupportedFeatureError("icefloe does not read or write variant values in Arrow")
    raise InvalidSchemaError(f"no Arrow type for Iceberg type {iceberg_type}")


def _id_metadata(field_id: int, include_field_ids: bool) -> dict[bytes, bytes] | None:
    return {FIELD_ID_KEY: str(field_id).encode()} if include_field_ids else None


def type_to_arrow(iceberg_type: IcebergType, *, include_field_ids: bool = True) -> pa.DataType:
    """The Arrow type of an Iceberg type; nested fields carry ids unless told otherwise.

    Raises:
        UnsupportedFeatureError: for ``variant``.
    """
    if isinstance(iceberg_type, StructType):
        return pa.struct(
            [field_to_arrow(f, include_field_ids=include_field_ids) for f in iceberg_type.fields]
        )
    if isinstance(iceberg_type, ListType):
        return pa.list_(field_to_arrow(iceberg_type.element_field, include_field_ids=include_field_ids))
    if isinstance(iceberg_type, MapType):
        return pa.map_(
            field_to_arrow(iceberg_type.key_field, include_field_ids=include_field_ids),
            field_to_arrow(iceberg_type.value_field, include_field_ids=include_field_ids),
        )
    return _primitive_to_arrow(iceberg_type)


def field_to_arrow(field: NestedField, *, include_field_ids: bool = True) -> pa.Field:
    """The Arrow field of an Iceberg field: same name, ``nullable`` unless required, id in metadata."""
    return pa.field(
        field.name,
        type_to_arrow(field.field_type, include_field_ids=include_field_ids),
        nullable=not field.required,
        metadata=_id_metadata(field.field_id, include_field_ids),
    )


def schema_to_arrow(schema_or_type: Schema | StructType, *, include_field_ids: bool = True) -> pa.Schema:
    """The Arrow schema of an Iceberg schema (or struct type), ids in ``PARQUET:field_id`` metadata.

    The result depends only on the Iceberg fields, so equal schemas give equal Arrow schemas
    and the batches read for one projection from different files concatenate.

    Raises:
        UnsupportedFeatureError: the schema has a ``variant`` column.
    """
    struct = schema_or_type.as_struct() if isinstance(schema_or_type, Schema) else schema_or_type
    if not isinstance(struct, StructType):
        raise InvalidSchemaError(f"expected a Schema or StructType, not {schema_or_type!r}")
    return pa.schema([field_to_arrow(f, include_field_ids=include_field_ids) for f in struct.fields])


# ---------------------------------------------------------------------------------------------
# Arrow -> Iceberg


def field_id_of(pa_field: pa.Field) -> int | None:
    """The Iceberg field id in an Arrow field's metadata (``PARQUET:field_id`` or ``field_id``).

    Returns None when the field has none (pyarrow reports Parquet fields without an id as
    having none, or as ``-1`` in older versions).
    """
    metadata = pa_field.metadata
    if not metadata:
        return None
    raw = metadata.get(FIELD_ID_KEY)
    if raw is None:
        raw = metadata.get(_ALT_FIELD_ID_KEY)
    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError as e:
        raise InvalidSchemaError(f"column '{pa_field.name}': field id {raw!r} is not an integer") from e
    return value if value >= 0 else None


def arrow_type_to_iceberg(pa_type: pa.DataType, *, format_version: int = 3) -> IcebergType:
    """The Iceberg primitive type for an Arrow primitive type (nested types are not handled here).

    With ``format_version`` below 3, nanosecond timestamps map to the microsecond types (the
    data is then cast, failing if it would lose nanoseconds).

    Raises:
        InvalidSchemaError: the Arrow type has no Iceberg counterpart (``uint64``, ``duration``...).
    """
    result = _arrow_primitive(pa_type, format_version)
    if result is None:
        raise InvalidSchemaError(f"Arrow type {pa_type} has no Iceberg type")
    return result


def _arrow_primitive(t: pa.DataType, format_version: int) -> IcebergType | None:
    types = pa.types
    if isinstance(t, pa.DictionaryType):
        return _arrow_primitive(t.value_type, format_version)
    if t == _UUID_TYPE:
        return UUIDType()
    if isinstance(t, pa.BaseExtensionType):
        return None
    if types.is_null(t):
        return UnknownType()
    if types.is_boolean(t):
        return BooleanType()
    if types.is_int8(t) or types.is_int16(t) or types.is_int32(t) or types.is_uint8(t) or types.is_uint16(t):
        return IntegerType()
    if types.is_int64(t) or types.is_uint32(t):
        return LongType()
    if types.is_float16(t) or types.is_float32(t):
        return FloatType()
    if types.is_float64(t):
        return DoubleType()
    if types.is_decimal(t):
        return DecimalType(t.precision, t.scale) if t.precision <= DecimalType.MAX_PRECISION else None
    if types.is_date(t):
        return DateType()
    if types.is_time(t):
        return TimeType()
    if types.is_timestamp(t):
        nanos = t.unit == "ns" and format_version >= 3
        if t.tz is not None:
            return TimestamptzNanoType() if nanos else TimestamptzType()
        return TimestampNanoType() if nanos else TimestampType()
    if types.is_string(t) or types.is_large_string(t) or types.is_string_view(t):
        return StringType()
    if types.is_fixed_size_binary(t):
        return FixedType(t.byte_width)
    if types.is_binary(t) or types.is_large_binary(t) or types.is_binary_view(t):
        return BinaryType()
    return None


def _mapping_children(mapping: NameMapping | MappedField | None) -> Sequence[MappedField]:
    return () if mapping is None else mapping.fields


def _find_mapped(children: Sequence[MappedField], name: str) -> MappedField | None:
    for child in children:
        if name in child.names:
            return child
    return None


# An id resolver: (the Arrow field, its mapping node or None) -> id or None.
_IdOf = Callable[[pa.Field, "MappedField | None"], "int | None"]


class _Converter:
    """Arrow field tree -> Iceberg fields, resolving ids through ``id_of``; collects missing ids."""

    def __init__(self, id_of: _IdOf, *, format_version: int, use_mapping: bool):
        self.id_of = id_of
        self.format_version = format_version
        self.use_mapping = use_mapping
        self.missing: list[str] = []
        self.unsupported: list[str] = []

    def child_mapping(self, mapping_children: Sequence[MappedField], name: str) -> MappedField | None:
        return _find_mapped(mapping_children, name) if self.use_mapping else None

    def field(
        self, pa_field: pa.Field, path: str, mapped: MappedField | None, *, force_required: bool = False
    ) -> NestedField:
        field_id = self.id_of(pa_field, mapped)
        if field_id is None:
            self.missing.append(path)
            field_id = 0
        doc = (pa_field.metadata or {}).get(_DOC_KEY)
        field_type = self.type(pa_field.type, path, mapped)
        required = force_required or not pa_field.nullable
        if isinstance(field_type, UnknownType):
            required = False
        return NestedField(
            field_id,
            pa_field.name,
            field_type,
            required=required,
            doc=doc.decode() if doc is not None else None,
        )

    def struct_fields(
        self, pa_fields: Iterable[pa.Field], prefix: str, mapped: NameMapping | MappedField | None
    ) -> list[NestedField]:
        children = _mapping_children(mapped) if self.use_mapping else ()
        return [self.field(f, f"{prefix}{f.name}", self.child_mapping(children, f.name)) for f in pa_fields]

    def type(self, t: pa.DataType, path: str, mapped: MappedField | None) -> IcebergType:
        if isinstance(t, pa.DictionaryType):
            t = t.value_type
        if pa.types.is_struct(t):
            return StructType(
                *self.struct_fields((t.field(i) for i in range(t.num_fields)), f"{path}.", mapped)
            )
        if (
            pa.types.is_list(t)
            or pa.types.is_large_list(t)
            or pa.types.is_fixed_size_list(t)
            or pa.types.is_list_view(t)
            or pa.types.is_large_list_view(t)
        ):
            children = _mapping_children(mapped) if self.use_mapping else ()
            element = self.field(t.value_field, f"{path}.element", self.child_mapping(children, "element"))
            return ListType(element.field_id, element.field_type, element.required)
        if pa.types.is_map(t):
            children = _mapping_children(mapped) if self.use_mapping else ()
            key = self.field(
                t.key_field, f"{path}.key", self.child_mapping(children, "key"), force_required=True
            )
            value = self.field(t.item_field, f"{path}.value", self.child_mapping(children, "value"))
            return MapType(key.field_id, key.field_type, value.field_id, value.field_type, value.required)
        result = _arrow_primitive(t, self.format_version)
        if result is None:
            self.unsupported.append(f"'{path}' ({t})")
            return UnknownType()
        return result

    def check(self) -> None:
        if self.unsupported:
            raise InvalidSchemaError(f"Arrow types without an Iceberg type: {', '.join(self.unsupported)}")


def arrow_to_schema(
    pa_schema: pa.Schema, *, name_mapping: NameMapping | None = None, format_version: int = 3
) -> Schema:
    """The Iceberg schema of an Arrow schema whose fields carry Iceberg ids.

    Ids come from each field's ``PARQUET:field_id`` (or ``field_id``) metadata; a field without
    one takes the id of its entry in ``name_mapping`` (a ``NameMapping``, matched by name at
    each level; list elements as ``element``, map entries as ``key`` / ``value``).

    Args:
        pa_schema: the Arrow schema (e.g. ``ParquetFile.schema_arrow``).
        name_mapping: the table's ``schema.name-mapping.default``, for files without ids.
        format_version: below 3, nanosecond timestamps become microsecond types.

    Raises:
        InvalidSchemaError: naming every column without an id, or with an Arrow type that has
            no Iceberg type.
    """

    def id_of(pa_field: pa.Field, mapped: MappedField | None) -> int | None:
        found = field_id_of(pa_field)
        if found is None and mapped is not None:
            return mapped.field_id
        return found

    converter = _Converter(id_of, format_version=format_version, use_mapping=name_mapping is not None)
    fields = converter.struct_fields(pa_schema, "", name_mapping)
    converter.check()
    if converter.missing:
        raise InvalidSchemaError(
            "Arrow fields without an Iceberg field id (no PARQUET:field_id metadata"
            + (" and no name-mapping entry" if name_mapping is not None else " and no name mapping")
            + f"): {', '.join(repr(p) for p in converter.missing)}"
        )
    return Schema(*fields)


def arrow_to_schema_fresh(pa_schema: pa.Schema, *, format_version: int = 2) -> Schema:
    """The Iceberg schema of any Arrow schema, ignoring field ids, numbered 1..n in Java's order.

    Meant for creating a table from a pyarrow / pandas / polars schema: the table's metadata
    builder assigns the final ids. Non-nullable Arrow fields become required.

    Args:
        pa_schema: the Arrow schema.
        format_version: the table's format version; below 3, nanosecond timestamps become
            ``timestamp`` / ``timestamptz`` (the data is cast when written).

    Raises:
        InvalidSchemaError: naming each column whose Arrow type has no Iceberg type
            (``uint64``, ``duration``, ``interval``, ...).
    """
    converter = _Converter(lambda _f, _m: 0, format_version=format_version, use_mapping=False)
    fields = converter.struct_fields(pa_schema, "", None)
    converter.check()
    counter = iter(range(1, 1 << 31))
    return assign_fresh_ids(StructType(*fields), lambda: next(counter))


def apply_name_mapping(pa_schema: pa.Schema, name_mapping: NameMapping) -> pa.Schema:
    """``pa_schema`` with Iceberg ids in the metadata of fields that have none, from the mapping.

    Fields are looked up by name at each level (list elements as ``element``, map entries as
    ``key`` / ``value``, whatever the Arrow child is called); fields the mapping does not know
    stay without an id (a reader then treats them as absent). Fields that have an id keep it.
    """
    return pa.schema(
        [_map_field(f, _find_mapped(name_mapping.fields, f.name)) for f in pa_schema],
        metadata=pa_schema.metadata,
    )


def _map_field(pa_field: pa.Field, mapped: MappedField | None) -> pa.Field:
    new_type = _map_type(pa_field.type, mapped)
    if field_id_of(pa_field) is None and mapped is not None and mapped.field_id is not None:
        metadata = dict(pa_field.metadata or {})
        metadata[FIELD_ID_KEY] = str(mapped.field_id).encode()
        return pa.field(pa_field.name, new_type, nullable=pa_field.nullable, metadata=metadata)
    return pa_field.with_type(new_type) if new_type is not pa_field.type else pa_field


def _map_type(t: pa.DataType, mapped: MappedField | None) -> pa.DataType:
    children = _mapping_children(mapped)
    if isinstance(t, pa.DictionaryType) or not children:
        return t
    if pa.types.is_struct(t):
        return pa.struct([_map_field(f, _find_mapped(children, f.name)) for f in t])
    if pa.types.is_list(t):
        return pa.list_(_map_field(t.value_field, _find_mapped(children, "element")))
    if pa.types.is_large_list(t):
        return pa.large_list(_map_field(t.value_field, _find_mapped(children, "element")))
    if pa.types.is_fixed_size_list(t):
        return pa.list_(_map_field(t.value_field, _find_mapped(children, "element")), t.list_size)
    if pa.types.is_map(t):
        return pa.map_(
            _map_field(t.key_field, _find_mapped(children, "key")),
            _map_field(t.item_field, _find_mapped(children, "value")),
            t.keys_sorted,
        )
    return t
