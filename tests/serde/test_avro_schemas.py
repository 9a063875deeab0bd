"""Iceberg <-> Avro schemas (spec Appendix A) and the manifest / manifest list schemas, checked
against what Java Iceberg 1.9 wrote into the fixture files of tests/manifests/fixtures."""

from __future__ import annotations

import json
from pathlib import Path

import fastavro
import pytest

from icefloe.errors import InvalidSchemaError, ValidationError
from icefloe.serde.avro_schemas import (
    avro_to_iceberg,
    decimal_required_bytes,
    iceberg_to_avro,
    manifest_entry_schema,
    manifest_entry_type,
    manifest_list_schema,
    manifest_list_type,
    sanitize_name,
)
from icefloe.serde.schema_json import partition_fields_from_json, schema_from_json, schema_to_json
from icefloe.spec.schema import Schema
from icefloe.spec.types import (
    BinaryType,
    DecimalType,
    FixedType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    UUIDType,
)

FIXTURES = Path(__file__).resolve().parents[1] / "manifests" / "fixtures"
JAVA_FILES = sorted(FIXTURES.glob("java_*/*.avro"))


def _compact(obj: object) -> str:
    return json.dumps(obj, separators=(",", ":"))


def _header(path: Path) -> dict[str, str]:
    with path.open("rb") as f:
        return {k: v.decode() if isinstance(v, bytes) else v for k, v in fastavro.reader(f).metadata.items()}


def test_fixtures_are_present() -> None:
    assert len(JAVA_FILES) >= 30
    kinds = {p.name.startswith("snap-") for p in JAVA_FILES}
    assert kinds == {True, False}


@pytest.mark.parametrize("path", JAVA_FILES, ids=lambda p: f"{p.parent.name}/{p.name[:13]}")
def test_schemas_are_byte_identical_to_java(path: Path) -> None:
    """Our Avro schema (and the Iceberg schema Java stores beside it) for the file's format
    version and partition spec is exactly the text Java wrote, doc strings included."""
    meta = _header(path)
    version = int(meta["format-version"])
    if path.name.startswith("snap-"):
        avro, iceberg = manifest_list_schema(version), manifest_list_type(version)
    else:
        schema = schema_from_json(json.loads(meta["schema"]))
        spec = partition_fields_from_json(
            json.loads(meta["partition-spec"]), spec_id=int(meta["partition-spec-id"])
        )
        partition_type = spec.partition_type(schema)
        avro, iceberg = (
            manifest_entry_schema(version, partition_type),
            manifest_entry_type(version, partition_type),
        )
    assert _compact(avro) == meta["avro.schema"]
    assert _compact(schema_to_json(iceberg)) == meta["iceberg.schema"]


# ---- type mapping ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("type_string", "expected"),
    [
        ("boolean", "boolean"),
        ("int", "int"),
        ("long", "long"),
        ("float", "float"),
        ("double", "double"),
        ("string", "string"),
        ("binary", "bytes"),
        ("unknown", "null"),
        ("date", {"type": "int", "logicalType": "date"}),
        ("time", {"type": "long", "logicalType": "time-micros"}),
        ("timestamp", {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": False}),
        ("timestamptz", {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": True}),
        ("timestamp_ns", {"type": "long", "logicalType": "timestamp-nanos", "adjust-to-utc": False}),
        ("timestamptz_ns", {"type": "long", "logicalType": "timestamp-nanos", "adjust-to-utc": True}),
        ("uuid", {"type": "fixed", "name": "uuid_fixed", "size": 16, "logicalType": "uuid"}),
        ("fixed[7]", {"type": "fixed", "name": "fixed_7", "size": 7}),
        (
            "decimal(10, 2)",
            {
                "type": "fixed",
                "name": "decimal_10_2",
                "size": 5,
                "logicalType": "decimal",
                "precision": 10,
                "scale": 2,
            },
        ),
    ],
)
def test_primitive_types(type_string: str, expected: object) -> None:
    assert iceberg_to_avro(type_string) == expected


@pytest.mark.parametrize(
    ("precision", "size"), [(1, 1), (2, 1), (3, 2), (9, 4), (10, 5), (18, 8), (19, 9), (38, 16)]
)
def test_decimal_sizes_are_minimal(precision: int, size: int) -> None:
    assert decimal_required_bytes(precision) == size
    # the largest unscaled value fits, and one byte less would not
    assert 10**precision - 1 < 2 ** (8 * size - 1)
    assert size == 1 or 10**precision - 1 >= 2 ** (8 * (size - 1) - 1)


def test_struct_fields_carry_ids_optional_unions_and_docs() -> None:
    schema = Schema(
        NestedField(1, "id", LongType(), required=True, doc="the key"),
        NestedField(2, "name", StringType()),
    )
    assert iceberg_to_avro(schema, "t") == {
        "type": "record",
        "name": "t",
        "fields": [
            {"name": "id", "type": "long", "doc": "the key", "field-id": 1},
            {"name": "name", "type": ["null", "string"], "default": None, "field-id": 2},
        ],
    }


def test_nested_records_are_named_after_their_field_ids() -> None:
    point = StructType(NestedField(11, "x", IntegerType(), required=True))
    schema = Schema(
        NestedField(1, "p", point, required=True),
        NestedField(2, "ps", ListType(12, StructType(NestedField(13, "y", IntegerType(), required=True)))),
        NestedField(3, "m", MapType(14, IntegerType(), 15, StructType(NestedField(16, "z", IntegerType())))),
    )
    avro = iceberg_to_avro(schema, "table")
    p, ps, m = avro["fields"]
    assert p["type"]["name"] == "r1"
    assert ps["type"][1] == {
        "type": "array",
        "items": {"type": "record", "name": "r12", "fields": [{"name": "y", "type": "int", "field-id": 13}]},
        "element-id": 12,
    }
    assert ps["type"][1]["element-id"] == 12
    kv = m["type"][1]
    assert kv["logicalType"] == "map" and kv["type"] == "array"
    assert kv["items"]["name"] == "k14_v15"
    assert kv["items"]["fields"][0] == {"name": "key", "type": "int", "field-id": 14}
    assert kv["items"]["fields"][1]["type"]["name"] == "r15"


def test_string_maps_are_avro_maps_and_optional_elements_unions() -> None:
    t = MapType(3, StringType(), 4, ListType(5, LongType(), element_required=False), value_required=False)
    assert iceberg_to_avro(t) == {
        "type": "map",
        "values": ["null", {"type": "array", "items": ["null", "long"], "element-id": 5}],
        "key-id": 3,
        "value-id": 4,
    }


def test_non_string_map_with_optional_value_has_null_default() -> None:
    avro = iceberg_to_avro(MapType(3, IntegerType(), 4, StringType(), value_required=False))
    assert avro["items"]["fields"][1] == {
        "name": "value",
        "type": ["null", "string"],
        "default": None,
        "field-id": 4,
    }


def test_repeated_named_types_are_references() -> None:
    schema = Schema(
        NestedField(1, "a", DecimalType(9, 2)),
        NestedField(2, "b", DecimalType(9, 2)),
        NestedField(3, "u", UUIDType()),
        NestedField(4, "v", UUIDType(), required=True),
        NestedField(5, "f", FixedType(3)),
        NestedField(6, "g", FixedType(3)),
    )
    fields = iceberg_to_avro(schema)["fields"]
    assert fields[0]["type"][1]["name"] == "decimal_9_2"
    assert fields[1]["type"] == ["null", "decimal_9_2"]
    assert fields[3]["type"] == "uuid_fixed"
    assert fields[5]["type"] == ["null", "fixed_3"]
    fastavro.parse_schema(iceberg_to_avro(schema))  # valid Avro: each name defined once


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("ok_name1", "ok_name1"),
        ("a-b", "a_x2Db"),
        ("1x", "_1x"),
        ("a.b c", "a_x2Eb_x20c"),
        ("é", "é"),
        ("a\U0001f600", "a_xD83D_xDE00"),
    ],
)
def test_names_are_sanitized_like_java(name: str, expected: str) -> None:
    assert sanitize_name(name) == expected


def test_sanitized_fields_keep_their_iceberg_name() -> None:
    field = iceberg_to_avro(Schema(NestedField(7, "my-col", IntegerType(), required=True)))["fields"][0]
    assert field == {"name": "my_x2Dcol", "type": "int", "iceberg-field-name": "my-col", "field-id": 7}
    assert (
        avro_to_iceberg(iceberg_to_avro(Schema(NestedField(7, "my-col", IntegerType())))).fields[0].name
        == "my-col"
    )


def test_avro_to_iceberg_round_trips() -> None:
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "d", "decimal(38, 10)"),
        NestedField(3, "e", "decimal(38, 10)"),
        NestedField(4, "ts", "timestamptz"),
        NestedField(5, "tsn", "timestamp_ns"),
        NestedField(6, "tags", MapType(7, StringType(), 8, BinaryType())),
        NestedField(9, "counts", MapType(10, IntegerType(), 11, LongType(), value_required=False)),
        NestedField(
            12, "list", ListType(13, StructType(NestedField(14, "u", UUIDType())), element_required=False)
        ),
        NestedField(15, "dt", "date"),
        NestedField(16, "t", "time"),
        NestedField(17, "f", "fixed[4]"),
        NestedField(18, "n", "unknown"),
    )
    assert avro_to_iceberg(iceberg_to_avro(schema)) == schema.as_struct()


def test_avro_to_iceberg_needs_ids() -> None:
    with pytest.raises(InvalidSchemaError, match="field-id"):
        avro_to_iceberg({"type": "record", "name": "r", "fields": [{"name": "a", "type": "int"}]})
    with pytest.raises(InvalidSchemaError, match="union"):
        avro_to_iceberg(
            {
                "type": "record",
                "name": "r",
                "fields": [{"name": "a", "type": ["int", "string"], "field-id": 1}],
            }
        )


# ---- manifest schemas -----------------------------------------------------------------------


def _ids(record: dict) -> list[int]:
    return [f["field-id"] for f in record["fields"]]


def test_manifest_entry_field_ids_per_version() -> None:
    partition = StructType(NestedField(1000, "x", IntegerType()))
    v1, v2, v3 = (manifest_entry_schema(v, partition) for v in (1, 2, 3))
    assert _ids(v1) == [0, 1, 2]
    assert _ids(v2) == _ids(v3) == [0, 1, 3, 4, 2]
    assert v1["name"] == "manifest_entry" and v1["fields"][2]["type"]["name"] == "r2"
    data_files = [s["fields"][-1]["type"] for s in (v1, v2, v3)]
    assert _ids(data_files[0]) == [100, 101, 102, 103, 104, 105, 108, 109, 110, 137, 125, 128, 131, 132, 140]
    assert _ids(data_files[1]) == [
        134,
        100,
        101,
        102,
        103,
        104,
        108,
        109,
        110,
        137,
        125,
        128,
        131,
        132,
        135,
        140,
        143,
    ]
    assert _ids(data_files[2]) == [
        134,
        100,
        101,
        102,
        103,
        104,
        108,
        109,
        110,
        137,
        125,
        128,
        131,
        132,
        135,
        140,
        142,
        143,
        144,
        145,
    ]
    block_size = data_files[0]["fields"][5]
    assert block_size == {"name": "block_size_in_bytes", "type": "long", "field-id": 105}  # required in v1
    partition_record = data_files[2]["fields"][3]["type"]
    assert partition_record["name"] == "r102" and _ids(partition_record) == [1000]


def test_manifest_list_field_ids_per_version() -> None:
    v1, v2, v3 = (manifest_list_schema(v) for v in (1, 2, 3))
    assert v1["name"] == v2["name"] == "manifest_file"
    assert _ids(v1) == [500, 501, 502, 503, 504, 505, 506, 507, 512, 513, 514, 519]
    assert _ids(v2) == [500, 501, 502, 517, 515, 516, 503, 504, 505, 506, 512, 513, 514, 507, 519]
    assert _ids(v3) == [*_ids(v2), 520]
    summary = v3["fields"][13]["type"][1]
    assert summary["element-id"] == 508 and summary["items"]["name"] == "r508"
    assert _ids(summary["items"]) == [509, 518, 510, 511]
    # v1 counts are optional, v2 counts required
    assert v1["fields"][4]["type"] == ["null", "int"] and v2["fields"][7]["type"] == "int"


def test_unsupported_version() -> None:
    with pytest.raises(ValidationError, match="format version 4"):
        manifest_list_schema(4)
