"""JSON of types, schemas (with v3 defaults), partition specs, sort orders, snapshots, refs,
statistics files and encryption keys."""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any

import pytest

from icefloe.errors import InvalidMetadataError, UnsupportedFeatureError, ValidationError
from icefloe.serde import (
    encryption_key_from_json,
    encryption_key_to_json,
    partition_fields_from_json,
    partition_fields_to_json,
    partition_statistics_file_from_json,
    partition_statistics_file_to_json,
    ref_from_json,
    ref_to_json,
    refs_from_json,
    refs_to_json,
    schema_from_json,
    schema_json,
    schema_to_json,
    snapshot_from_json,
    snapshot_to_json,
    sort_order_from_json,
    sort_order_to_json,
    spec_from_json,
    spec_to_json,
    statistics_file_from_json,
    statistics_file_to_json,
    type_from_json,
    type_to_json,
)
from icefloe.spec.partitioning import PartitionField, PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.spec.snapshots import Snapshot, SnapshotRef, SnapshotRefType
from icefloe.spec.sorting import NullOrder, SortDirection, SortField, SortOrder
from icefloe.spec.statistics import BlobMetadata, PartitionStatisticsFile, StatisticsFile
from icefloe.spec.table_metadata import EncryptedKey
from icefloe.spec.transforms import UnknownTransform, parse_transform
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

# ---- types ----------------------------------------------------------------------------------------

PRIMITIVES: list[tuple[IcebergType, str]] = [
    (BooleanType(), "boolean"),
    (IntegerType(), "int"),
    (LongType(), "long"),
    (FloatType(), "float"),
    (DoubleType(), "double"),
    (DecimalType(9, 2), "decimal(9, 2)"),
    (DecimalType(38, 0), "decimal(38, 0)"),
    (DateType(), "date"),
    (TimeType(), "time"),
    (TimestampType(), "timestamp"),
    (TimestamptzType(), "timestamptz"),
    (TimestampNanoType(), "timestamp_ns"),
    (TimestamptzNanoType(), "timestamptz_ns"),
    (StringType(), "string"),
    (UUIDType(), "uuid"),
    (FixedType(16), "fixed[16]"),
    (BinaryType(), "binary"),
    (UnknownType(), "unknown"),
    (VariantType(), "variant"),
]


@pytest.mark.parametrize(("iceberg_type", "text"), PRIMITIVES)
def test_primitive_types(iceberg_type: IcebergType, text: str) -> None:
    assert type_to_json(iceberg_type) == text
    assert type_from_json(text) == iceberg_type


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("decimal(9,2)", DecimalType(9, 2)),
        ("DECIMAL( 10 , 3 )", DecimalType(10, 3)),
        ("fixed[ 4 ]", FixedType(4)),
        ("Fixed[4]", FixedType(4)),
        ("LONG", LongType()),
        ("TimestampTZ", TimestamptzType()),
    ],
)
def test_type_strings_read_like_java(text: str, expected: IcebergType) -> None:
    assert type_from_json(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "integer",
        "bigint",
        "varchar",
        "decimal(9)",
        "decimal(-1, 2)",
        " long",
        "fixed(16)",
        "fixed[0]",
        "decimal(39, 0)",
        "list<int>",
        "",
    ],
)
def test_invalid_type_strings(text: str) -> None:
    with pytest.raises(InvalidMetadataError):
        type_from_json(text)


@pytest.mark.parametrize("text", ["geometry", "geometry(srid:4326)", "geography(srid:4326, spherical)"])
def test_geospatial_types_are_unsupported(text: str) -> None:
    with pytest.raises(UnsupportedFeatureError, match="not supported"):
        type_from_json(text)


NESTED = StructType(
    NestedField(1, "id", LongType(), required=True, doc="the key"),
    NestedField(
        2,
        "points",
        ListType(
            5, StructType(NestedField(6, "x", DoubleType(), True), NestedField(7, "y", DoubleType())), True
        ),
    ),
    NestedField(3, "attrs", MapType(8, StringType(), 9, ListType(10, IntegerType(), False), False)),
    NestedField(4, "empty", StructType()),
)


def test_nested_types_java_form() -> None:
    assert type_to_json(NESTED.field(3).field_type) == {  # type: ignore[union-attr]
        "type": "map",
        "key-id": 8,
        "key": "string",
        "value-id": 9,
        "value": {"type": "list", "element-id": 10, "element": "int", "element-required": False},
        "value-required": False,
    }
    assert type_to_json(NESTED)["fields"][0] == {
        "id": 1,
        "name": "id",
        "required": True,
        "type": "long",
        "doc": "the key",
    }
    assert type_to_json(StructType()) == {"type": "struct", "fields": []}
    assert type_from_json(type_to_json(NESTED)) == NESTED


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ({"type": "list", "element-id": 1, "element": "int"}, "element-required"),
        ({"type": "list", "element-id": 1, "element-required": True}, "element"),
        (
            {
                "type": "map",
                "key-id": 1,
                "key": "int",
                "value-id": 2,
                "value": "vchar",
                "value-required": True,
            },
            "value",
        ),
        ({"type": "struct", "fields": [{"id": 1, "name": "a", "required": False}]}, "fields[0].type"),
        ({"type": "struct"}, "fields"),
        ({"type": "array", "items": "int"}, ""),
        (17, ""),
    ],
)
def test_malformed_nested_types_name_the_field(value: Any, path: str) -> None:
    with pytest.raises(InvalidMetadataError) as info:
        type_from_json(value, location="request body")
    assert (info.value.field or "") == path
    assert "request body" in str(info.value)


def test_absurdly_deep_nesting_is_an_error() -> None:
    deep: Any = "int"
    for i in range(5000):
        deep = {"type": "list", "element-id": i + 1, "element": deep, "element-required": False}
    with pytest.raises(InvalidMetadataError, match="nested too deeply"):
        type_from_json(deep)


# ---- schemas and v3 defaults --------------------------------------------------------------------------


def test_schema_java_form() -> None:
    schema = Schema(*NESTED.fields, schema_id=3, identifier_field_ids=[1])
    written = schema_to_json(schema)
    assert list(written) == ["type", "schema-id", "identifier-field-ids", "fields"]
    assert written["identifier-field-ids"] == [1]
    assert schema_from_json(written) == schema
    plain = schema_to_json(Schema(NestedField(1, "a", IntegerType())))
    assert plain == {
        "type": "struct",
        "schema-id": 0,
        "fields": [{"id": 1, "name": "a", "required": False, "type": "int"}],
    }


def test_schema_without_id_is_schema_zero() -> None:
    schema = schema_from_json(
        {"type": "struct", "fields": [{"id": 1, "name": "a", "required": True, "type": "int"}]}
    )
    assert schema.schema_id == 0 and schema.identifier_field_ids == ()


DEFAULTS: list[tuple[IcebergType, Any, Any]] = [
    (BooleanType(), True, True),
    (IntegerType(), 34, 34),
    (LongType(), 2**40, 2**40),
    (FloatType(), 1.5, 1.5),
    (DoubleType(), -2.25, -2.25),
    (DecimalType(9, 2), Decimal("123.45"), "123.45"),
    (DateType(), 19723, "2024-01-01"),
    (TimeType(), 3_723_000_001, "01:02:03.000001"),
    (TimestampType(), 1_704_067_200_000_000, "2024-01-01T00:00:00"),
    (TimestamptzType(), 1_704_067_200_500_000, "2024-01-01T00:00:00.5+00:00"),
    (TimestampNanoType(), 1_704_067_200_000_000_001, "2024-01-01T00:00:00.000000001"),
    (StringType(), "n/a", "n/a"),
    (UUIDType(), uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"), "f79c3e09-677c-4bbd-a479-3f349cb785e7"),
    (FixedType(2), b"\x01\xff", "01FF"),
    (BinaryType(), b"\x00\x10", "0010"),
]


@pytest.mark.parametrize(("field_type", "value", "json_value"), DEFAULTS)
def test_v3_defaults(field_type: IcebergType, value: Any, json_value: Any) -> None:
    field = NestedField(1, "c", field_type, required=True, initial_default=value, write_default=value)
    written = schema_to_json(Schema(field))["fields"][0]
    assert written["initial-default"] == json_value and written["write-default"] == json_value
    assert list(written) == ["id", "name", "required", "type", "initial-default", "write-default"]
    assert schema_from_json(schema_to_json(Schema(field))).fields[0] == field


def test_nested_defaults_round_trip() -> None:
    struct = StructType(NestedField(2, "x", IntegerType()), NestedField(3, "y", StringType()))
    field = NestedField(1, "s", struct, initial_default={"x": 1, "y": "a"})
    written = schema_to_json(Schema(field))
    assert written["fields"][0]["initial-default"] == {"2": 1, "3": "a"}
    assert schema_from_json(written).fields[0].initial_default == {"x": 1, "y": "a"}
    lst = NestedField(4, "l", ListType(5, LongType()), write_default=[1, 2])
    assert schema_from_json(schema_to_json(Schema(lst))).fields[0] == lst


def test_null_defaults_are_absent() -> None:
    written = schema_to_json(Schema(NestedField(1, "a", IntegerType())))["fields"][0]
    assert "initial-default" not in written and "write-default" not in written
    obj = {
        "type": "struct",
        "fields": [{"id": 1, "name": "a", "required": False, "type": "int", "initial-default": None}],
    }
    assert schema_from_json(obj).fields[0].initial_default is None


@pytest.mark.parametrize(
    ("field_type", "bad", "words"),
    [
        ("int", "3", "int"),
        ("decimal(9, 2)", "1.5", "scale"),
        ("date", "2024-13-01", "date"),
        ("uuid", "not-a-uuid", "uuid"),
        ("fixed[2]", "01", "2 bytes"),
    ],
)
def test_bad_defaults_name_the_field(field_type: str, bad: Any, words: str) -> None:
    obj = {
        "type": "struct",
        "schema-id": 1,
        "fields": [
            {"id": 1, "name": "a", "required": False, "type": "string"},
            {"id": 2, "name": "b", "required": False, "type": field_type, "write-default": bad},
        ],
    }
    with pytest.raises(InvalidMetadataError, match=words) as info:
        schema_from_json(obj, location="m.json")
    assert info.value.field == "fields[1].write-default"


def test_schema_errors() -> None:
    with pytest.raises(InvalidMetadataError, match="must be a struct"):
        schema_from_json({"type": "list", "element-id": 1, "element": "int", "element-required": True})
    with pytest.raises(InvalidMetadataError, match="used twice"):
        schema_from_json(
            {
                "type": "struct",
                "fields": [
                    {"id": 1, "name": "a", "required": False, "type": "int"},
                    {"id": 1, "name": "b", "required": False, "type": "int"},
                ],
            }
        )
    with pytest.raises(InvalidMetadataError) as info:
        schema_from_json({"type": "struct", "identifier-field-ids": [1, "2"], "fields": []})
    assert info.value.field == "identifier-field-ids[1]"


# ---- partition specs ----------------------------------------------------------------------------------


SPEC = PartitionSpec(
    (
        PartitionField(4, 1000, parse_transform("day"), "ts_day"),
        PartitionField(1, 1001, parse_transform("bucket[16]"), "id_bucket"),
        PartitionField(2, 1002, parse_transform("truncate[4]"), "name_trunc"),
        PartitionField(3, 1003, parse_transform("void"), "dropped"),
    ),
    spec_id=2,
)


def test_spec_java_form() -> None:
    written = spec_to_json(SPEC)
    assert written["spec-id"] == 2
    assert written["fields"][1] == {
        "name": "id_bucket",
        "transform": "bucket[16]",
        "source-id": 1,
        "field-id": 1001,
    }
    assert list(written["fields"][0]) == ["name", "transform", "source-id", "field-id"]
    assert partition_fields_to_json(SPEC) == written["fields"]
    assert spec_from_json(written) == SPEC
    assert partition_fields_from_json(written["fields"], spec_id=2) == SPEC


def test_spec_fields_without_ids_are_numbered_from_1000() -> None:
    spec = partition_fields_from_json(
        [
            {"name": "a", "transform": "identity", "source-id": 1},
            {"name": "b", "transform": "hour", "source-id": 2},
        ]
    )
    assert [(f.field_id, f.source_id) for f in spec.fields] == [(1000, 1), (1001, 2)]


def test_unknown_transforms_are_kept() -> None:
    spec = spec_from_json(
        {"spec-id": 0, "fields": [{"name": "z", "transform": "zorder[3]", "source-id": 1, "field-id": 1000}]}
    )
    assert spec.fields[0].transform == UnknownTransform("zorder[3]")
    assert spec_to_json(spec)["fields"][0]["transform"] == "zorder[3]"


def test_source_ids_of_one_column_and_of_many() -> None:
    spec = spec_from_json(
        {
            "spec-id": 0,
            "fields": [{"name": "a", "transform": "identity", "source-ids": [5], "field-id": 1000}],
        }
    )
    assert spec.fields[0].source_id == 5
    with pytest.raises(UnsupportedFeatureError, match="source-ids"):
        spec_from_json(
            {
                "spec-id": 0,
                "fields": [{"name": "a", "transform": "zorder", "source-ids": [5, 6], "field-id": 1000}],
            }
        )


def test_spec_errors() -> None:
    with pytest.raises(InvalidMetadataError, match="duplicate partition field name"):
        spec_from_json(
            {
                "spec-id": 0,
                "fields": [
                    {"name": "a", "transform": "identity", "source-id": 1, "field-id": 1000},
                    {"name": "a", "transform": "day", "source-id": 2, "field-id": 1001},
                ],
            }
        )
    with pytest.raises(InvalidMetadataError) as info:
        spec_from_json({"fields": []})
    assert info.value.field == "spec-id"
    with pytest.raises(InvalidMetadataError) as info:
        spec_from_json(
            {"spec-id": 0, "fields": [{"name": 5, "transform": "day", "source-id": 1, "field-id": 1}]}
        )
    assert info.value.field == "fields[0].name"


# ---- sort orders ----------------------------------------------------------------------------------


def test_sort_order_java_form() -> None:
    order = SortOrder(
        (
            SortField(2, parse_transform("identity")),
            SortField(3, parse_transform("bucket[4]"), SortDirection.DESC, NullOrder.NULLS_LAST),
        ),
        order_id=1,
    )
    written = sort_order_to_json(order)
    assert written == {
        "order-id": 1,
        "fields": [
            {"transform": "identity", "source-id": 2, "direction": "asc", "null-order": "nulls-first"},
            {"transform": "bucket[4]", "source-id": 3, "direction": "desc", "null-order": "nulls-last"},
        ],
    }
    assert sort_order_from_json(written) == order
    upper = {
        "order-id": 1,
        "fields": [
            {"transform": "identity", "source-id": 2, "direction": "ASC", "null-order": "NULLS-FIRST"}
        ],
    }
    assert sort_order_from_json(upper).fields[0] == order.fields[0]


def test_sort_order_errors() -> None:
    with pytest.raises(InvalidMetadataError, match="reserved"):
        sort_order_from_json(
            {
                "order-id": 0,
                "fields": [
                    {"transform": "identity", "source-id": 1, "direction": "asc", "null-order": "nulls-first"}
                ],
            }
        )
    with pytest.raises(InvalidMetadataError) as info:
        sort_order_from_json(
            {
                "order-id": 1,
                "fields": [
                    {"transform": "identity", "source-id": 1, "direction": "asc", "null-order": "first"}
                ],
            }
        )
    assert info.value.field == "fields[0].null-order"
    with pytest.raises(InvalidMetadataError) as info:
        sort_order_from_json({"order-id": 1})
    assert info.value.field == "fields"


# ---- snapshots ------------------------------------------------------------------------------------


def test_snapshot_java_form_and_field_order() -> None:
    snapshot = Snapshot(
        snapshot_id=5,
        timestamp_ms=1000,
        manifest_list="s3://b/t/metadata/snap-5.avro",
        parent_snapshot_id=4,
        sequence_number=7,
        summary={"added-records": "3", "operation": "append"},
        schema_id=1,
        first_row_id=100,
        added_rows=3,
        key_id="k1",
    )
    written = snapshot_to_json(snapshot)
    assert list(written) == [
        "sequence-number",
        "snapshot-id",
        "parent-snapshot-id",
        "timestamp-ms",
        "summary",
        "manifest-list",
        "schema-id",
        "first-row-id",
        "added-rows",
        "key-id",
    ]
    assert list(written["summary"]) == ["operation", "added-records"]
    assert snapshot_from_json(written) == snapshot


def test_v1_snapshot_omits_sequence_number_and_may_list_manifests() -> None:
    snapshot = Snapshot(snapshot_id=5, timestamp_ms=1000, manifests=("m1.avro",))
    assert snapshot_to_json(snapshot) == {"snapshot-id": 5, "timestamp-ms": 1000, "manifests": ["m1.avro"]}
    assert snapshot_from_json(snapshot_to_json(snapshot)) == snapshot


def test_summary_without_operation_is_not_written() -> None:
    written = snapshot_to_json(Snapshot(snapshot_id=5, timestamp_ms=1, manifest_list="l", summary={"a": "b"}))
    assert "summary" not in written


def test_snapshot_errors_name_the_field() -> None:
    with pytest.raises(InvalidMetadataError) as info:
        snapshot_from_json({"snapshot-id": 1, "timestamp-ms": 2, "manifest-list": 3}, location="req")
    assert info.value.field == "manifest-list" and "req" in str(info.value)
    with pytest.raises(InvalidMetadataError) as info:
        snapshot_from_json({"snapshot-id": 2**63, "timestamp-ms": 2, "manifest-list": "l"})
    assert info.value.field == "snapshot-id"


# ---- refs, statistics, encryption keys --------------------------------------------------------------


def test_refs() -> None:
    refs = {
        "main": SnapshotRef(5),
        "audit": SnapshotRef(4, SnapshotRefType.BRANCH, 3, 86_400_000, 604_800_000),
        "v1": SnapshotRef(3, SnapshotRefType.TAG, max_ref_age_ms=1000),
    }
    written = refs_to_json(refs)
    assert written["main"] == {"snapshot-id": 5, "type": "branch"}
    assert list(written["audit"]) == [
        "snapshot-id",
        "type",
        "min-snapshots-to-keep",
        "max-snapshot-age-ms",
        "max-ref-age-ms",
    ]
    assert refs_from_json(written) == refs
    assert ref_from_json({"snapshot-id": 3, "type": "TAG"}) == SnapshotRef(3, SnapshotRefType.TAG)
    assert ref_to_json(refs["v1"]) == {"snapshot-id": 3, "type": "tag", "max-ref-age-ms": 1000}
    with pytest.raises(InvalidMetadataError) as info:
        refs_from_json({"x": {"snapshot-id": 1, "type": "branch", "min-snapshots-to-keep": 0}})
    assert info.value.field == "x"


def test_statistics_files() -> None:
    stats = StatisticsFile(
        7,
        "s3://b/stats.puffin",
        1000,
        200,
        (
            BlobMetadata("apache-datasketches-theta-v1", 7, 3, (1,), {"ndv": "12"}),
            BlobMetadata("t", 7, 3, (2, 3)),
        ),
    )
    written = statistics_file_to_json(stats)
    assert written["blob-metadata"][1] == {
        "type": "t",
        "snapshot-id": 7,
        "sequence-number": 3,
        "fields": [2, 3],
    }
    assert statistics_file_from_json(written) == stats
    partition = PartitionStatisticsFile(7, "s3://b/p.parquet", 99)
    assert partition_statistics_file_to_json(partition) == {
        "snapshot-id": 7,
        "statistics-path": "s3://b/p.parquet",
        "file-size-in-bytes": 99,
    }
    assert partition_statistics_file_from_json(partition_statistics_file_to_json(partition)) == partition
    with pytest.raises(InvalidMetadataError) as info:
        statistics_file_from_json(
            {**written, "blob-metadata": [{**written["blob-metadata"][0], "fields": ["1"]}]}
        )
    assert info.value.field == "blob-metadata[0].fields[0]"


def test_encryption_keys() -> None:
    key = EncryptedKey("k", "bWV0YQ==", "root", {"a": "b"})
    assert encryption_key_from_json(encryption_key_to_json(key)) == key
    assert encryption_key_to_json(EncryptedKey("k", "eA==")) == {
        "key-id": "k",
        "encrypted-key-metadata": "eA==",
    }


def test_public_functions_reexported_from_schema_json() -> None:
    assert schema_json.snapshot_to_json is snapshot_to_json
    assert schema_json.refs_from_json is refs_from_json


def test_unknown_type_object_to_json_is_refused() -> None:
    with pytest.raises(ValidationError):
        type_to_json("long")  # type: ignore[arg-type]
