"""Avro schemas of Iceberg types, manifests and manifest lists (spec Appendix A, "Manifests",
"Manifest Lists").

Schemas are plain JSON objects (``dict`` / ``list`` / ``str``), ready for ``json.dumps`` or
``fastavro.parse_schema``. They are shaped the way Iceberg 1.9 (Java) writes them, so that
the schema in a file icefloe writes is the schema Java would have written:

- every struct field carries ``field-id``; optional fields are ``["null", T]`` with default
  null; list arrays carry ``element-id``; string-keyed maps are Avro maps with ``key-id`` /
  ``value-id``, other maps arrays of ``k<key id>_v<value id>`` records with logical type ``map``;
- records are named ``r<field id>`` after the field holding them (the top record gets the
  name passed in); fixed types are named ``decimal_<P>_<S>``, ``uuid_fixed``, ``fixed_<L>``,
  and a named type that occurs again is referenced by its name, as Avro requires;
- field names that are not valid Avro names are sanitized as Java sanitizes them, with the
  original name kept in ``iceberg-field-name``.

``avro_to_iceberg`` reads such a schema back into an Iceberg type (by field id).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Any

from icefloe.errors import InvalidSchemaError, ValidationError
from icefloe.spec.schema import Schema
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
    to_type,
)

__all__ = [
    "FIELD_ID_PROP",
    "ICEBERG_FIELD_NAME_PROP",
    "avro_to_iceberg",
    "decimal_required_bytes",
    "iceberg_to_avro",
    "manifest_entry_schema",
    "manifest_entry_type",
    "manifest_list_schema",
    "manifest_list_type",
    "sanitize_name",
]

FIELD_ID_PROP = "field-id"
ICEBERG_FIELD_NAME_PROP = "iceberg-field-name"
_SUPPORTED_VERSIONS = (1, 2, 3)


# ---- names --------------------------------------------------------------------------------


def _is_letter(ch: str) -> bool:
    # Java's Character.isLetter(char) works on UTF-16 units: characters outside the BMP are
    # surrogate pairs there, never letters.
    return ord(ch) <= 0xFFFF and ch.isalpha()


def _is_digit(ch: str) -> bool:
    return ord(ch) <= 0xFFFF and unicodedata.category(ch) == "Nd"


def _valid_avro_name(name: str) -> bool:
    if not name:
        raise ValidationError("an Avro field name cannot be empty")
    first = name[0]
    if not (_is_letter(first) or first == "_"):
        return False
    return all(_is_letter(ch) or _is_digit(ch) or ch == "_" for ch in name[1:])


def _sanitize_char(ch: str) -> str:
    if _is_digit(ch):
        return "_" + ch
    code = ord(ch)
    if code > 0xFFFF:  # one code point, two UTF-16 units in Java: each is escaped
        code -= 0x10000
        units = (0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF))
        return "".join(f"_x{unit:X}" for unit in units)
    return f"_x{code:X}"


def sanitize_name(name: str) -> str:
    """The Avro-valid form of a field name, as Java's ``AvroSchemaUtil.makeCompatibleName``.

    Valid names are returned unchanged; otherwise a leading digit becomes ``_<digit>`` and
    each other invalid character ``_x<HEX>`` (``"a-b"`` -> ``"a_x2Db"``, ``"1x"`` -> ``"_1x"``).
    """
    if _valid_avro_name(name):
        return name
    first = name[0]
    parts = [first if (_is_letter(first) or first == "_") else _sanitize_char(first)]
    for ch in name[1:]:
        parts.append(ch if (_is_letter(ch) or _is_digit(ch) or ch == "_") else _sanitize_char(ch))
    return "".join(parts)


def decimal_required_bytes(precision: int) -> int:
    """The fewest bytes whose two's complement holds every unscaled value of ``precision``
    digits (Java's ``TypeUtil.decimalRequiredBytes``): 5 for precision 10, 16 for 38."""
    if not 0 <= precision <= 40:
        raise ValidationError(f"decimal precision must be at most 40, not {precision}")
    size = 1
    while 2 ** (8 * size - 1) <= 10**precision - 1:
        size += 1
    return size


# ---- Iceberg -> Avro ----------------------------------------------------------------------


class _ToAvro:
    """One conversion: remembers the named types already written so repeats are references."""

    def __init__(self, names: Mapping[int, str]):
        self._names = names  # field id -> record name, overriding r<id>
        self._defined: set[str] = set()

    def _named(self, name: str, build: Any) -> Any:
        if name in self._defined:
            return name
        self._defined.add(name)
        return build()

    def struct(self, struct: StructType, record_name: str) -> Any:
        def build() -> dict[str, Any]:
            fields = [self.field(f) for f in struct.fields]
            return {"type": "record", "name": record_name, "fields": fields}

        return self._named(record_name, build)

    def field(self, field: NestedField) -> dict[str, Any]:
        valid = _valid_avro_name(field.name)
        result: dict[str, Any] = {"name": field.name if valid else sanitize_name(field.name)}
        value_schema = self.type(field.field_type, field.field_id)
        result["type"] = _option(value_schema) if field.optional else value_schema
        if field.doc is not None:
            result["doc"] = field.doc
        if field.optional:
            # Java writes no non-null Avro defaults (an optional field's union starts with null,
            # and an Avro default must match the union's first branch).
            result["default"] = None
        if not valid:
            result[ICEBERG_FIELD_NAME_PROP] = field.name
        result[FIELD_ID_PROP] = field.field_id
        return result

    def type(self, field_type: IcebergType, field_id: int | None) -> Any:
        if isinstance(field_type, StructType):
            name = self._names.get(field_id) if field_id is not None else None
            return self.struct(field_type, name or f"r{field_id}")
        if isinstance(field_type, ListType):
            element = self.type(field_type.element_type, field_type.element_id)
            if not field_type.element_required:
                element = _option(element)
            return {"type": "array", "items": element, "element-id": field_type.element_id}
        if isinstance(field_type, MapType):
            return self.map(field_type)
        if isinstance(field_type, VariantType):
            name = f"r{field_id}" if field_id is not None else "variant"
            return self._named(
                name,
                lambda: {
                    "type": "record",
                    "name": name,
                    "fields": [{"name": "metadata", "type": "bytes"}, {"name": "value", "type": "bytes"}],
                    "logicalType": "variant",
                },
            )
        return self.primitive(field_type)

    def map(self, map_type: MapType) -> Any:
        key = self.type(map_type.key_type, map_type.key_id)
        value = self.type(map_type.value_type, map_type.value_id)
        if not map_type.value_required:
            value = _option(value)
        if isinstance(map_type.key_type, StringType):
            return {"type": "map", "values": value, "key-id": map_type.key_id, "value-id": map_type.value_id}
        record_name = f"k{map_type.key_id}_v{map_type.value_id}"

        def build() -> dict[str, Any]:
            value_field: dict[str, Any] = {"name": "value", "type": value}
            if isinstance(value, list):
                value_field["default"] = None
            value_field[FIELD_ID_PROP] = map_type.value_id
            return {
                "type": "record",
                "name": record_name,
                "fields": [{"name": "key", "type": key, FIELD_ID_PROP: map_type.key_id}, value_field],
            }

        return {"type": "array", "items": self._named(record_name, build), "logicalType": "map"}

    def primitive(self, t: IcebergType) -> Any:
        if isinstance(t, DecimalType):
            name = f"decimal_{t.precision}_{t.scale}"
            return self._named(
                name,
                lambda: {
                    "type": "fixed",
                    "name": name,
                    "size": decimal_required_bytes(t.precision),
                    "logicalType": "decimal",
                    "precision": t.precision,
                    "scale": t.scale,
                },
            )
        if isinstance(t, UUIDType):
            return self._named(
                "uuid_fixed",
                lambda: {"type": "fixed", "name": "uuid_fixed", "size": 16, "logicalType": "uuid"},
            )
        if isinstance(t, FixedType):
            name = f"fixed_{t.length}"
            return self._named(name, lambda: {"type": "fixed", "name": name, "size": t.length})
        simple = _PRIMITIVE_TO_AVRO.get(type(t))
        if simple is None:
            raise ValidationError(f"type {t} has no Avro form")
        return dict(simple) if isinstance(simple, dict) else simple


_PRIMITIVE_TO_AVRO: dict[type, Any] = {
    UnknownType: "null",
    BooleanType: "boolean",
    IntegerType: "int",
    LongType: "long",
    FloatType: "float",
    DoubleType: "double",
    StringType: "string",
    BinaryType: "bytes",
    DateType: {"type": "int", "logicalType": "date"},
    TimeType: {"type": "long", "logicalType": "time-micros"},
    TimestampType: {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": False},
    TimestamptzType: {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": True},
    TimestampNanoType: {"type": "long", "logicalType": "timestamp-nanos", "adjust-to-utc": False},
    TimestamptzNanoType: {"type": "long", "logicalType": "timestamp-nanos", "adjust-to-utc": True},
}


def _option(schema: Any) -> Any:
    if schema == "null" or isinstance(schema, list):
        return schema
    return ["null", schema]


def iceberg_to_avro(
    value: Schema | IcebergType | str, name: str = "table", *, names: Mapping[int, str] | None = None
) -> Any:
    """The Avro schema (JSON object) of an Iceberg schema or type.

    Args:
        value: a ``Schema``, a type, or a type string.
        name: the name of the top-level record when ``value`` is a schema or a struct.
        names: record names for structs held by the given field ids, instead of ``r<id>``.

    Raises:
        ValidationError: a type without an Avro form.
    """
    converter = _ToAvro(names or {})
    if isinstance(value, Schema):
        return converter.struct(value.as_struct(), name)
    if isinstance(value, str):
        value = to_type(value)
    if isinstance(value, StructType):
        return converter.struct(value, name)
    return converter.type(value, None)


# ---- Avro -> Iceberg ----------------------------------------------------------------------


class _FromAvro:
    def __init__(self) -> None:
        self._named: dict[str, Any] = {}

    def resolve(self, schema: Any) -> Any:
        if isinstance(schema, str) and schema in self._named:
            return self._named[schema]
        if (
            isinstance(schema, dict)
            and "name" in schema
            and schema.get("type") in ("record", "fixed", "enum")
        ):
            self._named[schema["name"]] = schema
        return schema

    def optional(self, schema: Any, where: str) -> tuple[Any, bool]:
        """(the non-null branch, whether the schema is optional)."""
        schema = self.resolve(schema)
        if isinstance(schema, list):
            branches = [b for b in schema if b != "null"]
            if len(branches) != 1 or len(schema) != 2:
                if len(schema) == 1 and schema[0] == "null":
                    return "null", True
                raise InvalidSchemaError(
                    f"{where}: only unions of null and one type are allowed, got {schema}"
                )
            return branches[0], True
        return schema, schema == "null"

    def type(self, schema: Any, where: str) -> IcebergType:
        schema = self.resolve(schema)
        if isinstance(schema, str):
            return self.primitive(schema, {}, where)
        if isinstance(schema, list):
            raise InvalidSchemaError(f"{where}: unexpected union {schema}")
        kind = schema.get("type")
        if kind == "record":
            if schema.get("logicalType") == "variant":
                return VariantType()
            return self.record(schema, where)
        if kind == "array":
            return self.array(schema, where)
        if kind == "map":
            value, value_optional = self.optional(schema["values"], where)
            return MapType(
                _id(schema, "key-id", where),
                StringType(),
                _id(schema, "value-id", where),
                self.type(value, where),
                value_required=not value_optional,
            )
        if isinstance(kind, (dict, list)):
            return self.type(kind, where)
        return self.primitive(kind, schema, where)

    def record(self, schema: dict[str, Any], where: str) -> StructType:
        fields = []
        for f in schema.get("fields", ()):
            fname = f.get(ICEBERG_FIELD_NAME_PROP, f["name"])
            path = f"{where}.{fname}" if where else fname
            inner, optional = self.optional(f["type"], path)
            fields.append(
                NestedField(
                    _id(f, FIELD_ID_PROP, path),
                    fname,
                    self.type(inner, path),
                    required=not optional,
                    doc=f.get("doc"),
                )
            )
        return StructType(*fields)

    def array(self, schema: dict[str, Any], where: str) -> IcebergType:
        items = self.resolve(schema["items"])
        if schema.get("logicalType") == "map":
            if (
                not isinstance(items, dict)
                or items.get("type") != "record"
                or len(items.get("fields", ())) != 2
            ):
                raise InvalidSchemaError(f"{where}: a map array must hold records of a key and a value")
            key_field, value_field = items["fields"]
            key, _ = self.optional(key_field["type"], where)
            value, value_optional = self.optional(value_field["type"], where)
            return MapType(
                _id(key_field, FIELD_ID_PROP, f"{where}.key"),
                self.type(key, f"{where}.key"),
                _id(value_field, FIELD_ID_PROP, f"{where}.value"),
                self.type(value, f"{where}.value"),
                value_required=not value_optional,
            )
        element, element_optional = self.optional(items, where)
        return ListType(
            _id(schema, "element-id", where),
            self.type(element, f"{where}.element"),
            element_required=not element_optional,
        )

    def primitive(self, kind: str, schema: Mapping[str, Any], where: str) -> IcebergType:
        logical = schema.get("logicalType")
        if kind == "fixed":
            if logical == "decimal":
                return DecimalType(int(schema["precision"]), int(schema.get("scale", 0)))
            if logical == "uuid":
                return UUIDType()
            return FixedType(int(schema["size"]))
        if kind == "bytes" and logical == "decimal":
            return DecimalType(int(schema["precision"]), int(schema.get("scale", 0)))
        if kind == "string" and logical == "uuid":
            return UUIDType()
        if kind == "int" and logical == "date":
            return DateType()
        if kind == "long" and logical is not None:
            utc = schema.get("adjust-to-utc", False)
            utc = utc if isinstance(utc, bool) else str(utc).lower() == "true"
            if logical == "time-micros":
                return TimeType()
            if logical == "timestamp-micros":
                return TimestamptzType() if utc else TimestampType()
            if logical == "timestamp-nanos":
                return TimestamptzNanoType() if utc else TimestampNanoType()
            if logical == "local-timestamp-micros":
                return TimestampType()
            if logical == "local-timestamp-nanos":
                return TimestampNanoType()
        simple = _AVRO_PRIMITIVES.get(kind)
        if simple is None:
            raise InvalidSchemaError(f"{where}: Avro type {kind!r} has no Iceberg equivalent")
        return simple


_AVRO_PRIMITIVES: dict[str, IcebergType] = {
    "null": UnknownType(),
    "boolean": BooleanType(),
    "int": IntegerType(),
    "long": LongType(),
    "float": FloatType(),
    "double": DoubleType(),
    "string": StringType(),
    "bytes": BinaryType(),
}


def _id(obj: Mapping[str, Any], prop: str, where: str) -> int:
    value = obj.get(prop)
    if value is None:
        raise InvalidSchemaError(f"Avro schema has no '{prop}' for {where or 'the top level'}")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise InvalidSchemaError(f"Avro schema has a non-integer '{prop}' for {where}: {value!r}") from None


def avro_to_iceberg(schema: Any) -> IcebergType:
    """The Iceberg type of an Avro schema written with Iceberg ids (a record -> a struct).

    Raises:
        InvalidSchemaError: a field, element, key or value without its id, a union other than
            null-or-one-type, or an Avro type Iceberg has no equivalent for.
    """
    return _FromAvro().type(schema, "")


# ---- manifests and manifest lists ---------------------------------------------------------


def _opt(field_id: int, name: str, t: IcebergType, doc: str | None = None) -> NestedField:
    return NestedField(field_id, name, t, required=False, doc=doc)


def _req(field_id: int, name: str, t: IcebergType, doc: str | None = None) -> NestedField:
    return NestedField(field_id, name, t, required=True, doc=doc)


def _long_map(
    field_id: int, name: str, key_id: int, doc: str, value: IcebergType | None = None
) -> NestedField:
    return _opt(field_id, name, MapType(key_id, IntegerType(), key_id + 1, value or LongType()), doc)


_CONTENT = _req(
    134, "content", IntegerType(), "Contents of the file: 0=data, 1=position deletes, 2=equality deletes"
)
_FILE_PATH = _req(100, "file_path", StringType(), "Location URI with FS scheme")
_FILE_FORMAT = _req(101, "file_format", StringType(), "File format name: avro, orc, or parquet")
_PARTITION_DOC = "Partition data tuple, schema based on the partition spec"
_RECORD_COUNT = _req(103, "record_count", LongType(), "Number of records in the file")
_FILE_SIZE = _req(104, "file_size_in_bytes", LongType(), "Total file size in bytes")
_BLOCK_SIZE = _req(105, "block_size_in_bytes", LongType())
_COLUMN_SIZES = _long_map(108, "column_sizes", 117, "Map of column id to total size on disk")
_VALUE_COUNTS = _long_map(109, "value_counts", 119, "Map of column id to total count, including null and NaN")
_NULL_COUNTS = _long_map(110, "null_value_counts", 121, "Map of column id to null value count")
_NAN_COUNTS = _long_map(
    137, "nan_value_counts", 138, "Map of column id to number of NaN values in the column"
)
_LOWER_BOUNDS = _long_map(125, "lower_bounds", 126, "Map of column id to lower bound", BinaryType())
_UPPER_BOUNDS = _long_map(128, "upper_bounds", 129, "Map of column id to upper bound", BinaryType())
_KEY_METADATA = _opt(131, "key_metadata", BinaryType(), "Encryption key metadata blob")
_SPLIT_OFFSETS = _opt(132, "split_offsets", ListType(133, LongType()), "Splittable offsets")
_EQUALITY_IDS = _opt(135, "equality_ids", ListType(136, IntegerType()), "Equality comparison field IDs")
_SORT_ORDER_ID = _opt(140, "sort_order_id", IntegerType(), "Sort order ID")
_FIRST_ROW_ID = _opt(142, "first_row_id", LongType(), "Starting row ID to assign to new rows")
_REFERENCED_FILE = _opt(
    143,
    "referenced_data_file",
    StringType(),
    "Fully qualified location (URI with FS scheme) of a data file that all deletes reference",
)
_CONTENT_OFFSET = _opt(144, "content_offset", LongType(), "The offset in the file where the content starts")
_CONTENT_SIZE = _opt(
    145, "content_size_in_bytes", LongType(), "The length of referenced content stored in the file"
)
_METRICS = (_COLUMN_SIZES, _VALUE_COUNTS, _NULL_COUNTS, _NAN_COUNTS, _LOWER_BOUNDS, _UPPER_BOUNDS)


def _check_version(format_version: int) -> None:
    if format_version not in _SUPPORTED_VERSIONS:
        raise ValidationError(f"format version {format_version} is not supported; expected 1, 2 or 3")


def _data_file_type(format_version: int, partition_type: StructType) -> StructType:
    doc = None if format_version == 1 else _PARTITION_DOC  # Java's v1 schema has no doc here
    head = (_FILE_PATH, _FILE_FORMAT, _req(102, "partition", partition_type, doc), _RECORD_COUNT, _FILE_SIZE)
    if format_version == 1:
        return StructType(*head, _BLOCK_SIZE, *_METRICS, _KEY_METADATA, _SPLIT_OFFSETS, _SORT_ORDER_ID)
    common = (_CONTENT, *head, *_METRICS, _KEY_METADATA, _SPLIT_OFFSETS, _EQUALITY_IDS, _SORT_ORDER_ID)
    if format_version == 2:
        return StructType(*common, _REFERENCED_FILE)
    return StructType(*common, _FIRST_ROW_ID, _REFERENCED_FILE, _CONTENT_OFFSET, _CONTENT_SIZE)


def manifest_entry_type(format_version: int, partition_type: StructType) -> Schema:
    """The Iceberg schema of a ``manifest_entry`` for this format version and partition type.

    Field ids: 0 status, 1 snapshot_id, 3 sequence_number, 4 file_sequence_number (v2+),
    2 data_file (100... per the spec's tables). ``snapshot_id`` is optional in every version,
    as Java writes it (v1 writers always fill it in).
    """
    _check_version(format_version)
    status = _req(0, "status", IntegerType())
    snapshot_id = _opt(1, "snapshot_id", LongType())
    data_file = _req(2, "data_file", _data_file_type(format_version, partition_type))
    if format_version == 1:
        return Schema(status, snapshot_id, data_file)
    sequence_number = _opt(3, "sequence_number", LongType())
    file_sequence_number = _opt(4, "file_sequence_number", LongType())
    return Schema(status, snapshot_id, sequence_number, file_sequence_number, data_file)


def manifest_entry_schema(format_version: int, partition_type: StructType) -> dict[str, Any]:
    """The Avro schema of a manifest file: record ``manifest_entry``, data file record ``r2``,
    partition record ``r102``.

    Raises:
        ValidationError: an unsupported format version or a partition type without Avro form.
    """
    result: dict[str, Any] = iceberg_to_avro(
        manifest_entry_type(format_version, partition_type), "manifest_entry"
    )
    return result


_PATH = _req(500, "manifest_path", StringType(), "Location URI with FS scheme")
_LENGTH = _req(501, "manifest_length", LongType(), "Total file size in bytes")
_SPEC_ID = _req(502, "partition_spec_id", IntegerType(), "Spec ID used to write")
_MANIFEST_CONTENT = _req(517, "content", IntegerType(), "Contents of the manifest: 0=data, 1=deletes")
_SEQUENCE_NUMBER = _req(515, "sequence_number", LongType(), "Sequence number when the manifest was added")
_MIN_SEQUENCE_NUMBER = _req(516, "min_sequence_number", LongType(), "Lowest sequence number in the manifest")
_ADDED_SNAPSHOT_ID = _req(503, "added_snapshot_id", LongType(), "Snapshot ID that added the manifest")
_COUNTS = (
    (504, "added_files_count", IntegerType(), "Added entry count"),
    (505, "existing_files_count", IntegerType(), "Existing entry count"),
    (506, "deleted_files_count", IntegerType(), "Deleted entry count"),
    (512, "added_rows_count", LongType(), "Added rows count"),
    (513, "existing_rows_count", LongType(), "Existing rows count"),
    (514, "deleted_rows_count", LongType(), "Deleted rows count"),
)
_FIELD_SUMMARY = StructType(
    _req(509, "contains_null", BooleanType(), "True if any file has a null partition value"),
    _opt(518, "contains_nan", BooleanType(), "True if any file has a nan partition value"),
    _opt(510, "lower_bound", BinaryType(), "Partition lower bound for all files"),
    _opt(511, "upper_bound", BinaryType(), "Partition upper bound for all files"),
)
_PARTITIONS = _opt(
    507, "partitions", ListType(508, _FIELD_SUMMARY, element_required=True), "Summary for each partition"
)
_LIST_KEY_METADATA = _opt(519, "key_metadata", BinaryType(), "Encryption key metadata blob")
_LIST_FIRST_ROW_ID = _opt(
    520, "first_row_id", LongType(), "Starting row ID to assign to new rows in ADDED data files"
)


def manifest_list_type(format_version: int) -> Schema:
    """The Iceberg schema of a ``manifest_file`` row for this format version (ids 500-520)."""
    _check_version(format_version)
    head = (_PATH, _LENGTH, _SPEC_ID)
    if format_version == 1:  # counts optional, partitions before the row counts
        counts = [_opt(*c) for c in _COUNTS]
        return Schema(*head, _ADDED_SNAPSHOT_ID, *counts[:3], _PARTITIONS, *counts[3:], _LIST_KEY_METADATA)
    sequence_numbers = (_MANIFEST_CONTENT, _SEQUENCE_NUMBER, _MIN_SEQUENCE_NUMBER)
    counts = [_req(*c) for c in _COUNTS]
    fields = [*head, *sequence_numbers, _ADDED_SNAPSHOT_ID, *counts, _PARTITIONS, _LIST_KEY_METADATA]
    return Schema(*fields, _LIST_FIRST_ROW_ID) if format_version >= 3 else Schema(*fields)


def manifest_list_schema(format_version: int) -> dict[str, Any]:
    """The Avro schema of a manifest list: record ``manifest_file``, summaries ``r508``."""
    result: dict[str, Any] = iceberg_to_avro(manifest_list_type(format_version), "manifest_file")
    return result
