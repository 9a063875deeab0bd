"""Table metadata files: Java-written fixtures load, round-trip, and come back out as Java wrote them;
v1 defaults (spec Appendix E); every kind of malformed file fails with the file and the field."""

from __future__ import annotations

import copy
import dataclasses
import gzip
import json
import re
import uuid
from typing import Any

import pytest

from icefloe.errors import InvalidMetadataError, UnsupportedFeatureError, ValidationError
from icefloe.serde import (
    dumps_metadata,
    loads_metadata,
    metadata_file_name,
    metadata_to_dict,
    parse_metadata_version,
)
from icefloe.serde._jackson import compact
from icefloe.spec.partitioning import PartitionField, PartitionSpec
from icefloe.spec.snapshots import HistoryEntry, SnapshotRef, SnapshotRefType
from icefloe.spec.sorting import UNSORTED_SORT_ORDER
from icefloe.spec.statistics import BlobMetadata, PartitionStatisticsFile, StatisticsFile
from icefloe.spec.table_metadata import EncryptedKey
from icefloe.spec.transforms import parse_transform
from icefloe.spec.types import DecimalType, LongType, StringType

from ._fixtures import ALL_FIXTURES, JAVA_FIXTURES, fixture_bytes, fixture_json

LOCATION = "s3://bucket/db/t/metadata/00007-1b2c.metadata.json"


def load(name: str) -> Any:
    return loads_metadata(fixture_bytes(name), location=name)


# ---- fixtures ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_fixture_round_trips(name: str) -> None:
    md = load(name)
    assert loads_metadata(dumps_metadata(md)) == md
    assert loads_metadata(dumps_metadata(md, compression="gzip")) == md


@pytest.mark.parametrize("name", JAVA_FIXTURES)
def test_dumps_writes_what_java_wrote(name: str) -> None:
    expected = fixture_json(name)
    data = dumps_metadata(load(name))
    assert json.loads(data) == expected
    # Java 1.9 writes compact JSON; with no floating point values in these files the bytes match.
    raw = fixture_bytes(name)
    assert data == (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)


def test_seed_example_differs_from_java_1_9_only_by_partition_statistics() -> None:
    # The seed file comes from a Java version before partition statistics existed.
    name = "seed_sales_v2.metadata.json"
    written = metadata_to_dict(load(name))
    assert written.pop("partition-statistics") == []
    assert written == fixture_json(name)


def test_v1_fixture_model() -> None:
    md = load("v1_evolved.metadata.json")
    assert md.format_version == 1
    assert md.last_sequence_number == 0
    assert [s.schema_id for s in md.schemas] == [0, 1, 2]
    schema = md.schema()
    assert schema.schema_id == 2
    assert schema.find_field("payload") is not None and schema.find_field("data") is None
    assert schema.field("price").field_type == DecimalType(9, 2)
    assert schema.field("extra").doc == "an extra column"
    assert md.spec().fields == (
        PartitionField(1, 1000, parse_transform("bucket[4]"), "id_bucket"),
        PartitionField(3, 1001, parse_transform("day"), "ts_day"),
    )
    assert md.last_partition_id == 1001
    assert md.sort_order().order_id == 1 and len(md.sort_order().fields) == 2
    assert md.refs["before_cleanup"] == SnapshotRef(md.current_snapshot_id, SnapshotRefType.TAG)
    assert all(s.sequence_number == 0 for s in md.snapshots)
    assert [s.operation for s in md.snapshots] == ["append", "append", "overwrite"]
    assert len(md.metadata_log) == 8


def test_v2_fixture_model() -> None:
    md = load("v2_branches_merge_on_read.metadata.json")
    assert md.last_sequence_number == 4
    assert [s.sequence_number for s in md.snapshots] == [1, 2, 3, 4]
    assert md.snapshots[1].summary["added-delete-files"] == "1"
    audit = md.refs["audit"]
    assert (audit.type, audit.min_snapshots_to_keep, audit.max_snapshot_age_ms, audit.max_ref_age_ms) == (
        SnapshotRefType.BRANCH,
        3,
        2 * 86_400_000,
        7 * 86_400_000,
    )
    assert md.refs["v1_release"].max_ref_age_ms == 30 * 86_400_000
    assert [s.spec_id for s in md.partition_specs] == [0, 1, 2]
    assert md.default_spec_id == 2
    assert md.next_row_id is None
    assert load("v2_identifier_fields.metadata.json").schema().identifier_field_ids == (1, 2)


def test_v3_fixture_model() -> None:
    md = load("v3_deletion_vectors.metadata.json")
    assert md.next_row_id == 4
    assert [(s.first_row_id, s.added_rows) for s in md.snapshots] == [(0, 3), (3, 0), (3, 1)]
    new = load("v3_new_table.metadata.json")
    assert new.current_snapshot_id is None and new.refs == {} and new.next_row_id == 0


def test_statistics_fixture_model() -> None:
    md = load("v2_statistics_name_mapping.metadata.json")
    (stats,) = md.statistics
    assert stats.snapshot_id == md.current_snapshot_id
    assert stats.file_size_in_bytes == 653 and stats.file_footer_size_in_bytes == 511
    assert [b.fields for b in stats.blob_metadata] == [(1,), (2,)]
    assert stats.blob_metadata[0].properties == {"ndv": "5"}


def test_gzip_fixture_is_detected_by_magic_bytes_whatever_the_name() -> None:
    md = loads_metadata(fixture_bytes("v2_gzip.gz.metadata.json"), location="plain-name.metadata.json")
    assert md.properties["write.metadata.compression-codec"] == "gzip"


# ---- writing per format version ---------------------------------------------------------------


def test_no_current_snapshot_is_minus_one_before_v3_and_null_in_v3() -> None:
    v1 = metadata_to_dict(load("v1_new_table.metadata.json"))
    v2 = metadata_to_dict(load("v2_new_table.metadata.json"))
    v3 = metadata_to_dict(load("v3_new_table.metadata.json"))
    assert v1["current-snapshot-id"] == -1 and v2["current-snapshot-id"] == -1
    assert "current-snapshot-id" in v3 and v3["current-snapshot-id"] is None
    assert "next-row-id" not in v2 and v3["next-row-id"] == 0
    assert "last-sequence-number" not in v1 and v2["last-sequence-number"] == 0
    assert "schema" in v1 and "partition-spec" in v1
    assert "schema" not in v2 and "partition-spec" not in v2 and "schema" not in v3


def test_v1_writes_current_schema_and_default_spec_as_legacy_fields() -> None:
    md = load("v1_evolved.metadata.json")
    written = metadata_to_dict(md)
    assert written["schema"]["schema-id"] == md.current_schema_id
    assert written["partition-spec"] == written["partition-specs"][md.default_spec_id]["fields"]
    assert list(written)[:8] == [
        "format-version",
        "table-uuid",
        "location",
        "last-updated-ms",
        "last-column-id",
        "schema",
        "current-schema-id",
        "schemas",
    ]


def test_statistics_partition_statistics_and_encryption_keys_round_trip() -> None:
    md = load("v3_deletion_vectors.metadata.json")
    snapshot_id = md.snapshots[-1].snapshot_id
    md = dataclasses.replace(
        md,
        statistics=(
            StatisticsFile(
                snapshot_id,
                "s3://b/t/metadata/stats.puffin",
                100,
                40,
                (BlobMetadata("apache-datasketches-theta-v1", snapshot_id, 3, (1, 2), {"ndv": "7"}),),
                key_metadata="a2V5",
            ),
        ),
        partition_statistics=(PartitionStatisticsFile(snapshot_id, "s3://b/t/metadata/p.parquet", 55),),
        encryption_keys=(
            EncryptedKey("k1", "ZW5jcnlwdGVk"),
            EncryptedKey("k2", "bW9yZQ==", encrypted_by_id="k1", properties={"kms": "x"}),
        ),
        snapshots=(*md.snapshots[:-1], dataclasses.replace(md.snapshots[-1], key_id="k2")),
    )
    written = metadata_to_dict(md)
    assert written["encryption-keys"] == [
        {"key-id": "k1", "encrypted-key-metadata": "ZW5jcnlwdGVk"},
        {
            "key-id": "k2",
            "encrypted-key-metadata": "bW9yZQ==",
            "encrypted-by-id": "k1",
            "properties": {"kms": "x"},
        },
    ]
    assert written["statistics"][0]["key-metadata"] == "a2V5"
    assert written["snapshots"][-1]["key-id"] == "k2"
    assert loads_metadata(dumps_metadata(md)) == md


def test_encryption_keys_absent_when_there_are_none() -> None:
    assert "encryption-keys" not in metadata_to_dict(load("v3_evolved.metadata.json"))


def test_dumps_gzip_and_compression_names() -> None:
    md = load("v2_new_table.metadata.json")
    data = dumps_metadata(md, compression="GZIP")
    assert data[:2] == b"\x1f\x8b"
    assert gzip.decompress(data) == dumps_metadata(md)
    assert dumps_metadata(md, compression="gzip") == data  # deterministic (mtime 0)
    with pytest.raises(ValidationError, match="zstd"):
        dumps_metadata(md, compression="zstd")


def test_control_characters_are_escaped_as_jackson_does() -> None:
    md = load("v2_new_table.metadata.json")
    # What Java 1.9 wrote for this property value (checked with the reference engine).
    md = dataclasses.replace(md, properties={"x": "a\x1fb\x00\x7f\u2028/é\t", "y": "\\u001f"})
    data = dumps_metadata(md)
    assert '"x":"a\\u001Fb\\u0000\x7f\u2028/é\\t"'.encode() in data
    assert b'"y":"\\\\u001f"' in data  # a backslash and the text "u001f" stay as they are
    assert loads_metadata(data).properties == md.properties


def test_non_ascii_text_is_written_as_utf8() -> None:
    md = load("v2_new_table.metadata.json")
    md = dataclasses.replace(md, properties={**md.properties, "comment": 'Übersicht \u2014 "q"\n'})
    data = dumps_metadata(md)
    assert "Übersicht —".encode() in data
    assert loads_metadata(data).properties["comment"] == 'Übersicht \u2014 "q"\n'


# ---- reading old v1 files (Appendix E defaults) -----------------------------------------------


def legacy_v1() -> dict[str, Any]:
    """A v1 file as the first Java writers produced it: one schema, one spec (fields without ids),
    no sort orders, no refs, a snapshot listing its manifests inline, no sequence numbers."""
    return {
        "format-version": 1,
        "table-uuid": "2cbd5b3e-7a2f-4bd4-a3c5-1f5e6d33c7a1",
        "location": "s3://bucket/warehouse/db/events",
        "last-updated-ms": 1600000000000,
        "last-column-id": 3,
        "schema": {
            "type": "struct",
            "fields": [
                {"id": 1, "name": "id", "required": True, "type": "long"},
                {"id": 2, "name": "ts", "required": False, "type": "timestamptz"},
                {"id": 3, "name": "data", "required": False, "type": "string"},
            ],
        },
        "partition-spec": [
            {"name": "ts_day", "transform": "day", "source-id": 2},
            {"name": "id_bucket", "transform": "bucket[16]", "source-id": 1},
        ],
        "properties": {"owner": "etl"},
        "current-snapshot-id": 42,
        "snapshots": [
            {"snapshot-id": 41, "timestamp-ms": 1600000000100, "manifests": ["s3://bucket/m0.avro"]},
            {
                "snapshot-id": 42,
                "parent-snapshot-id": 41,
                "timestamp-ms": 1600000000200,
                "summary": {"operation": "append", "added-data-files": "1"},
                "manifests": ["s3://bucket/m0.avro", "s3://bucket/m1.avro"],
            },
        ],
        "snapshot-log": [
            {"timestamp-ms": 1600000000100, "snapshot-id": 41},
            {"timestamp-ms": 1600000000200, "snapshot-id": 42},
        ],
        "some-future-field": {"ignored": True},
    }


def loads_dict(obj: Any, location: str = LOCATION) -> Any:
    return loads_metadata(json.dumps(obj).encode(), location=location)


def test_legacy_v1_defaults() -> None:
    md = loads_dict(legacy_v1())
    assert md.last_sequence_number == 0
    (schema,) = md.schemas
    assert schema.schema_id == 0 and md.current_schema_id == 0
    assert schema.field("id").field_type == LongType() and schema.field("id").required
    (spec,) = md.partition_specs
    assert md.default_spec_id == 0 and spec.spec_id == 0
    assert [(f.name, f.field_id, f.source_id) for f in spec.fields] == [
        ("ts_day", 1000, 2),
        ("id_bucket", 1001, 1),
    ]
    assert md.last_partition_id == 1001
    assert md.sort_orders == (UNSORTED_SORT_ORDER,) and md.default_sort_order_id == 0
    assert md.refs == {"main": SnapshotRef(42, SnapshotRefType.BRANCH)}
    first, second = md.snapshots
    assert first.manifest_list is None and first.manifests == ("s3://bucket/m0.avro",)
    assert first.summary == {} and first.sequence_number == 0 and first.parent_snapshot_id is None
    assert second.manifests == ("s3://bucket/m0.avro", "s3://bucket/m1.avro")
    assert second.operation == "append"
    assert md.statistics == () and md.metadata_log == () and md.next_row_id is None


def test_legacy_v1_written_back_in_current_v1_form() -> None:
    md = loads_dict(legacy_v1())
    written = metadata_to_dict(md)
    assert written["partition-spec"] == [
        {"name": "ts_day", "transform": "day", "source-id": 2, "field-id": 1000},
        {"name": "id_bucket", "transform": "bucket[16]", "source-id": 1, "field-id": 1001},
    ]
    assert written["snapshots"][0] == {
        "snapshot-id": 41,
        "timestamp-ms": 1600000000100,
        "manifests": ["s3://bucket/m0.avro"],
    }
    assert written["refs"] == {"main": {"snapshot-id": 42, "type": "branch"}}
    assert written["sort-orders"] == [{"order-id": 0, "fields": []}]
    assert "some-future-field" not in written
    assert loads_metadata(dumps_metadata(md)) == md


def test_legacy_v1_without_partitioning_or_snapshots() -> None:
    obj = legacy_v1()
    obj["partition-spec"] = []
    obj["current-snapshot-id"] = -1
    del obj["snapshots"], obj["snapshot-log"]
    md = loads_dict(obj)
    assert md.last_partition_id == 999
    assert md.spec().is_unpartitioned
    assert md.current_snapshot_id is None and md.refs == {} and md.snapshots == ()


def test_v1_without_uuid_gets_a_stable_uuid_from_its_location() -> None:
    obj = legacy_v1()
    del obj["table-uuid"]
    first, second = loads_dict(obj), loads_dict(obj)
    assert first.table_uuid == second.table_uuid
    assert uuid.UUID(first.table_uuid).version == 5


def test_v1_prefers_schemas_and_partition_specs_over_legacy_fields() -> None:
    obj = fixture_json("v1_evolved.metadata.json")
    obj["schema"] = {"type": "struct", "schema-id": 99, "fields": []}
    obj["partition-spec"] = []
    md = loads_dict(obj)
    assert md.current_schema_id == 2 and md.default_spec_id == 1
    assert len(md.spec().fields) == 2


@pytest.mark.parametrize("value", [None, -1])
def test_no_current_snapshot_reads_as_none(value: int | None) -> None:
    obj = fixture_json("v2_new_table.metadata.json")
    obj["current-snapshot-id"] = value
    assert loads_dict(obj).current_snapshot_id is None


def test_summary_without_operation_reads_as_overwrite_as_in_java() -> None:
    obj = fixture_json("v2_branches_merge_on_read.metadata.json")
    del obj["snapshots"][0]["summary"]["operation"]
    md = loads_dict(obj)
    assert md.snapshots[0].operation == "overwrite"
    assert md.snapshots[0].summary["added-records"] == "3"


def test_refs_absent_means_a_main_branch_at_the_current_snapshot() -> None:
    obj = fixture_json("v2_branches_merge_on_read.metadata.json")
    del obj["refs"]
    md = loads_dict(obj)
    assert md.refs == {"main": SnapshotRef(obj["current-snapshot-id"])}


def test_read_accepts_str_and_utf8_bom() -> None:
    text = fixture_bytes("v2_new_table.metadata.json").decode()
    assert loads_metadata(text) == loads_metadata(b"\xef\xbb\xbf" + text.encode())


# ---- malformed files -----------------------------------------------------------------------------


def assert_invalid(
    data: bytes, field: str | None, *words: str, location: str = LOCATION
) -> InvalidMetadataError:
    with pytest.raises(InvalidMetadataError) as info:
        loads_metadata(data, location=location)
    error = info.value
    message = str(error)
    assert location in message and error.location == location
    if field is not None:
        assert f"'{field}'" in message and error.field == field
    for word in words:
        assert word in message
    return error


def mutated(name: str, change: Any) -> bytes:
    obj = copy.deepcopy(fixture_json(name))
    change(obj)
    return json.dumps(obj).encode()


@pytest.mark.parametrize("cut", [0.25, 0.5, 0.9, 0.999])
def test_truncated_file(cut: float) -> None:
    data = fixture_bytes("v2_branches_merge_on_read.metadata.json")
    assert_invalid(data[: int(len(data) * cut)], None, "truncated")


def test_empty_file() -> None:
    assert_invalid(b"", None, "truncated")


def test_truncated_and_corrupt_gzip() -> None:
    data = fixture_bytes("v2_gzip.gz.metadata.json")
    assert_invalid(data[: len(data) // 2], None, "gzip")
    corrupt = data[:12] + bytes(b ^ 0x55 for b in data[12:40]) + data[40:]
    assert_invalid(corrupt, None, "gzip")


def test_not_json_and_not_utf8() -> None:
    assert_invalid(b"<html>not found</html>", None, "not valid JSON", "line 1")
    assert_invalid(b'{"format-version": \xff}', None, "UTF-8")
    assert_invalid(b'{"format-version": NaN}', None, "NaN")


@pytest.mark.parametrize("document", [b"[]", b"42", b'"metadata"', b"null"])
def test_root_is_not_an_object(document: bytes) -> None:
    assert_invalid(document, None, "expected a JSON object")


@pytest.mark.parametrize(
    ("field", "change", "words"),
    [
        ("format-version", lambda o: o.pop("format-version"), ["missing"]),
        ("format-version", lambda o: o.update({"format-version": 4}), ["unsupported format version 4"]),
        ("format-version", lambda o: o.update({"format-version": "2"}), ["integer", "'2'"]),
        ("location", lambda o: o.pop("location"), ["missing"]),
        ("table-uuid", lambda o: o.pop("table-uuid"), ["required in format v2"]),
        ("last-updated-ms", lambda o: o.pop("last-updated-ms"), ["missing"]),
        ("last-updated-ms", lambda o: o.update({"last-updated-ms": 1.5e12}), ["integer"]),
        ("last-sequence-number", lambda o: o.pop("last-sequence-number"), ["missing"]),
        ("last-column-id", lambda o: o.update({"last-column-id": True}), ["integer", "boolean"]),
        ("last-column-id", lambda o: o.update({"last-column-id": 2**40}), ["out of range"]),
        ("schemas", lambda o: o.pop("schemas"), ["required in format v2"]),
        ("schemas", lambda o: o.update({"schemas": {}}), ["array"]),
        ("current-schema-id", lambda o: o.update({"current-schema-id": 7}), ["no schema with id 7"]),
        (
            "schemas[0].fields[2].type",
            lambda o: o["schemas"][0]["fields"][2].update(type="varchar"),
            ["varchar"],
        ),
        (
            "schemas[0].fields[2].type",
            lambda o: o["schemas"][0]["fields"][2].update(type="decimal(39,2)"),
            ["38"],
        ),
        (
            "schemas[0].fields[1].required",
            lambda o: o["schemas"][0]["fields"][1].pop("required"),
            ["missing"],
        ),
        ("schemas[0].fields[0].id", lambda o: o["schemas"][0]["fields"][0].update(id="1"), ["integer"]),
        ("schemas[0].type", lambda o: o["schemas"][0].update(type="list"), ["struct"]),
        ("schemas[0]", lambda o: o["schemas"][0]["fields"][1].update(name="id"), ["duplicate field name"]),
        ("partition-specs", lambda o: o.update({"partition-specs": []}), ["at least one"]),
        ("default-spec-id", lambda o: o.update({"default-spec-id": 5}), ["no partition spec with id 5"]),
        (
            "partition-specs[1].fields[0].transform",
            lambda o: o["partition-specs"][1]["fields"][0].update(transform="bucket[0]"),
            ["bucket"],
        ),
        (
            "partition-specs[0].fields[0].source-id",
            lambda o: o["partition-specs"][0]["fields"][0].pop("source-id"),
            ["missing"],
        ),
        ("last-partition-id", lambda o: o.pop("last-partition-id"), ["required in format v2"]),
        ("sort-orders", lambda o: o.pop("sort-orders"), ["required in format v2"]),
        (
            "sort-orders[1].fields[0].direction",
            lambda o: o["sort-orders"][1]["fields"][0].update(direction="up"),
            ["'up'"],
        ),
        ("default-sort-order-id", lambda o: o.update({"default-sort-order-id": 3}), ["no sort order"]),
        ("properties.owner", lambda o: o["properties"].update(owner=1), ["string"]),
        ("properties", lambda o: o.update({"properties": ["a"]}), ["object"]),
        (
            "current-snapshot-id",
            lambda o: o.update({"current-snapshot-id": 123}),
            ["no snapshot with id 123"],
        ),
        ("snapshots", lambda o: o.update({"snapshots": "none"}), ["array"]),
        ("snapshots[1]", lambda o: o["snapshots"].__setitem__(1, 5), ["object"]),
        (
            "snapshots[3].timestamp-ms",
            lambda o: o["snapshots"][3].update({"timestamp-ms": "yesterday"}),
            ["'yesterday'"],
        ),
        ("snapshots[0].snapshot-id", lambda o: o["snapshots"][0].pop("snapshot-id"), ["missing"]),
        ("snapshots[2].manifest-list", lambda o: o["snapshots"][2].pop("manifest-list"), ["missing"]),
        (
            "snapshots[0].summary.total-records",
            lambda o: o["snapshots"][0]["summary"].update({"total-records": 3}),
            ["string"],
        ),
        (
            "snapshots[1].sequence-number",
            lambda o: o["snapshots"][1].update({"sequence-number": 9}),
            ["last-sequence-number"],
        ),
        (
            "snapshots[1].snapshot-id",
            lambda o: o["snapshots"][1].update({"snapshot-id": o["snapshots"][0]["snapshot-id"]}),
            ["duplicate"],
        ),
        (
            "refs.audit.snapshot-id",
            lambda o: o["refs"]["audit"].update({"snapshot-id": 17}),
            ["'audit'", "17"],
        ),
        ("refs.audit.type", lambda o: o["refs"]["audit"].update(type="trunk"), ["'trunk'"]),
        ("refs.v1_release", lambda o: o["refs"]["v1_release"].update({"min-snapshots-to-keep": 2}), ["tags"]),
        (
            "current-snapshot-id",
            lambda o: o["refs"]["main"].update({"snapshot-id": o["snapshots"][0]["snapshot-id"]}),
            ["main branch"],
        ),
        ("snapshot-log[1].snapshot-id", lambda o: o["snapshot-log"][1].pop("snapshot-id"), ["missing"]),
        (
            "metadata-log[0].metadata-file",
            lambda o: o["metadata-log"][0].update({"metadata-file": None}),
            ["missing"],
        ),
        ("statistics", lambda o: o.update({"statistics": {}}), ["array"]),
    ],
)
def test_malformed_v2_field(field: str, change: Any, words: list[str]) -> None:
    assert_invalid(mutated("v2_branches_merge_on_read.metadata.json", change), field, *words)


@pytest.mark.parametrize(
    ("field", "change", "words"),
    [
        ("next-row-id", lambda o: o.pop("next-row-id"), ["missing"]),
        ("snapshots[0].first-row-id", lambda o: o["snapshots"][0].update({"first-row-id": "0"}), ["integer"]),
        (
            "encryption-keys[0].key-id",
            lambda o: o.update({"encryption-keys": [{"encrypted-key-metadata": "x"}]}),
            ["missing"],
        ),
    ],
)
def test_malformed_v3_field(field: str, change: Any, words: list[str]) -> None:
    assert_invalid(mutated("v3_deletion_vectors.metadata.json", change), field, *words)


@pytest.mark.parametrize(
    ("field", "change", "words"),
    [
        ("schema", lambda o: o.pop("schema"), ["missing"]),
        ("partition-spec", lambda o: o.pop("partition-spec"), ["missing"]),
        ("partition-spec", lambda o: o["partition-spec"][0].update({"field-id": 1000}), ["1 of 2"]),
        ("snapshots[0].manifests[0]", lambda o: o["snapshots"][0].update(manifests=[7]), ["string"]),
        ("snapshots[1].manifest-list", lambda o: o["snapshots"][1].pop("manifests"), ["missing"]),
    ],
)
def test_malformed_legacy_v1_field(field: str, change: Any, words: list[str]) -> None:
    obj = legacy_v1()
    change(obj)
    assert_invalid(json.dumps(obj).encode(), field, *words)


# ---- specs and sort orders bound to the current schema (Java's TableMetadataParser) -------------
# v2_branches_merge_on_read: columns id (1), category (2), ts (3), amount (4); specs 0 [category],
# 1 [category, ts_month], 2 [ts_month] (the default); sort orders 0 (unsorted), 1 (the default).


def _set(path: list[Any], value: Any) -> Any:
    def change(o: dict[str, Any]) -> None:
        target = o
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


@pytest.mark.parametrize(
    ("field", "change", "words"),
    [
        # The default spec must resolve: Java binds it checked ("Cannot find source column").
        (
            "partition-specs[2].fields[0].source-id",
            _set(["partition-specs", 2, "fields", 0, "source-id"], 999),
            ["'ts_month'", "default spec 2", "source column id 999", "not in the current schema"],
        ),
        (
            "partition-specs[2].fields[0].transform",
            _set(["partition-specs", 2, "fields", 0, "source-id"], 2),
            ["'ts_month'", "month", "'category'", "string"],
        ),
        # Every spec, old ones too: a name that is a column must be sourced from that column.
        (
            "partition-specs[0].fields[0].name",
            _set(["partition-specs", 0, "fields", 0, "name"], "amount"),
            ["'amount'", "spec 0", "column id 2", "id 4"],
        ),
        (
            "partition-specs[1].fields[1].name",
            _set(["partition-specs", 1, "fields", 1, "name"], ""),
            ["empty name"],
        ),
        # The default sort order must resolve too.
        (
            "sort-orders[1].fields[1].source-id",
            _set(["sort-orders", 1, "fields", 1, "source-id"], 999),
            ["sort field 1", "default sort order 1", "source column id 999"],
        ),
        (
            "sort-orders[1].fields[0].transform",
            _set(["sort-orders", 1, "fields", 0, "transform"], "day"),
            ["day", "'id'", "long"],
        ),
    ],
)
def test_default_spec_and_sort_order_must_bind_to_the_current_schema(
    field: str, change: Any, words: list[str]
) -> None:
    assert_invalid(mutated("v2_branches_merge_on_read.metadata.json", change), field, *words)


def test_old_specs_and_sort_orders_may_name_dropped_columns() -> None:
    """Java binds only the default spec and sort order checked: older ones may keep a source
    column that was dropped since (their data files still carry those partition values)."""

    def change(o: dict[str, Any]) -> None:
        o["partition-specs"][0]["fields"][0]["source-id"] = 999
        o["partition-specs"][1]["fields"][0]["source-id"] = 999
        o["sort-orders"].append(
            {
                "order-id": 2,
                "fields": [
                    {
                        "transform": "identity",
                        "source-id": 998,
                        "direction": "asc",
                        "null-order": "nulls-first",
                    }
                ],
            }
        )

    md = loads_metadata(mutated("v2_branches_merge_on_read.metadata.json", change), location=LOCATION)
    assert [f.source_id for f in md.specs_by_id()[0].fields] == [999]
    assert md.sort_orders_by_id()[2].fields[0].source_id == 998


def test_a_dropped_partition_source_name_may_be_reused_by_another_column() -> None:
    """Java skips the name check of a partition field whose source column is gone."""

    def change(o: dict[str, Any]) -> None:
        fields = o["schemas"][0]["fields"]
        del fields[1]  # category (2), the source of the old specs' field 'category'
        fields[2]["name"] = "category"  # amount (4) takes its name

    md = loads_metadata(mutated("v2_branches_merge_on_read.metadata.json", change), location=LOCATION)
    assert md.schema().field("category").field_id == 4
    assert [f.name for f in md.specs_by_id()[1].fields] == ["category", "ts_month"]


def test_void_fields_of_the_default_spec_may_name_dropped_columns() -> None:
    """v1 replaces a removed partition field by a void transform, which Java never checks."""

    def change(o: dict[str, Any]) -> None:
        o["partition-specs"][2]["fields"].append(
            {"name": "gone_null", "transform": "void", "source-id": 999, "field-id": 1002}
        )
        o["last-partition-id"] = 1002

    md = loads_metadata(mutated("v2_branches_merge_on_read.metadata.json", change), location=LOCATION)
    assert [f.name for f in md.spec().fields] == ["ts_month", "gone_null"]


def test_legacy_v1_partition_spec_must_bind_to_the_schema() -> None:
    obj = legacy_v1()
    obj["partition-spec"][1]["source-id"] = 999
    assert_invalid(json.dumps(obj).encode(), "partition-spec[1].source-id", "'id_bucket'", "999")


def test_errors_without_a_location_still_name_the_field() -> None:
    data = mutated("v2_new_table.metadata.json", lambda o: o.pop("last-column-id"))
    with pytest.raises(InvalidMetadataError, match="'last-column-id'") as info:
        loads_metadata(data)
    assert info.value.location is None


def test_geometry_is_reported_as_unsupported_not_malformed() -> None:
    def change(o: dict[str, Any]) -> None:
        o["schemas"][0]["fields"][1]["type"] = "geometry(srid:4326)"

    with pytest.raises(UnsupportedFeatureError, match=r"schemas\[0\]\.fields\[1\]\.type"):
        loads_metadata(mutated("v3_new_table.metadata.json", change), location=LOCATION)


# ---- file names -------------------------------------------------------------------------------------


def test_hadoop_file_names() -> None:
    assert metadata_file_name(3, compression="none", hadoop=True) == "v3.metadata.json"
    assert metadata_file_name(12, compression="gzip", hadoop=True) == "v12.gz.metadata.json"


def test_catalog_file_names() -> None:
    name = metadata_file_name(7, compression="none", hadoop=False)
    assert re.fullmatch(
        r"00007-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}\.metadata\.json", name
    )
    assert metadata_file_name(7, compression="none", hadoop=False) != name
    fixed = "1b9e2a7c-2d8e-4b7b-9f6a-2c3d4e5f6a7b"
    assert metadata_file_name(123456, compression="gzip", hadoop=False, file_uuid=fixed) == (
        f"123456-{fixed}.gz.metadata.json"
    )
    with pytest.raises(ValidationError):
        metadata_file_name(-1, compression="none", hadoop=True)
    with pytest.raises(ValidationError):
        metadata_file_name(1, compression="lz4", hadoop=True)


@pytest.mark.parametrize(
    ("name", "version"),
    [
        ("v3.metadata.json", 3),
        ("v12.gz.metadata.json", 12),
        ("v5.metadata.json.gz", 5),
        ("/warehouse/db/t/metadata/v40.metadata.json", 40),
        ("00007-1b9e2a7c-2d8e-4b7b-9f6a-2c3d4e5f6a7b.metadata.json", 7),
        ("s3://b/t/metadata/00123-1b9e2a7c-2d8e-4b7b-9f6a-2c3d4e5f6a7b.gz.metadata.json", 123),
        ("version-hint.text", None),
        ("snap-123-1-abc.avro", None),
        ("vX.metadata.json", None),
        ("metadata.json", None),
    ],
)
def test_parse_metadata_version(name: str, version: int | None) -> None:
    assert parse_metadata_version(name) == version


def test_file_names_parse_back() -> None:
    for hadoop in (True, False):
        for compression in ("none", "gzip"):
            assert (
                parse_metadata_version(metadata_file_name(42, compression=compression, hadoop=hadoop)) == 42
            )


def test_model_types_come_back_after_round_trip() -> None:
    md = load("v3_evolved.metadata.json")
    again = loads_metadata(dumps_metadata(md))
    assert again.schema().field("name").field_type == StringType()
    assert isinstance(again.spec(), PartitionSpec)


def test_cached_snapshot_text_never_outlives_a_changed_snapshot() -> None:
    # dumps_metadata renders each snapshot once and reuses the text; a different snapshot
    # object with the same id (e.g. metadata rewritten elsewhere) must be rendered afresh.
    md = next(m for m in (loads_metadata(fixture_bytes(f)) for f in JAVA_FIXTURES) if m.snapshots)
    first = dumps_metadata(md)
    snapshot = md.snapshots[0]
    changed = dataclasses.replace(snapshot, summary={**snapshot.summary, "extra": "value"})
    rewritten = dataclasses.replace(md, snapshots=(changed, *md.snapshots[1:]))
    text = dumps_metadata(rewritten).decode()
    assert '"extra":"value"' in text
    assert dumps_metadata(md) == first
    assert loads_metadata(text.encode()).snapshots[0].summary["extra"] == "value"


def test_a_growing_history_is_written_as_a_fresh_rendering_would() -> None:
    # dumps_metadata extends the text of the last arrays it wrote when the snapshots (and the
    # snapshot log) start with the same objects; every other history renders afresh.
    md = next(m for m in (loads_metadata(fixture_bytes(f)) for f in JAVA_FIXTURES) if m.snapshots)
    current = md.current_snapshot()
    assert current is not None
    extra = [
        dataclasses.replace(current, snapshot_id=10_000 + i, summary={**current.summary, "n": f"é{i}"})
        for i in range(6)
    ]
    log = [HistoryEntry(1_700_000_000_000 + i, s.snapshot_id) for i, s in enumerate(extra)]

    def version(snapshots: list[Any], history: list[HistoryEntry]) -> Any:
        return dataclasses.replace(md, snapshots=(*md.snapshots, *snapshots), snapshot_log=tuple(history))

    versions = [version(extra[:n], log[:n]) for n in (0, 1, 2, 5, 5, 6)]  # appends, one repeated
    versions.append(version([extra[0], *extra[2:]], log[1:]))  # one removed from the middle
    versions.append(version([copy.copy(s) for s in extra], list(log)))  # equal, not the same objects
    versions.append(version(extra[:3], log[:3]))  # an older, shorter history again
    for m in versions:
        assert dumps_metadata(m) == compact(metadata_to_dict(m)).encode()
        assert loads_metadata(dumps_metadata(m)) == m
