"""icefloe's JSON read by Java (Apache Iceberg 1.9.2): Java's parsers accept what icefloe writes and
write the same thing back, and Spark reads a table whose current metadata file icefloe wrote.

Runs the Java reference engine (``tests/interop``); marked ``interop`` through the fixture name.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from icefloe.serde import (
    dumps_metadata,
    dumps_name_mapping,
    loads_metadata,
    metadata_to_dict,
    requirement_to_json,
    schema_to_json,
    update_to_json,
)
from icefloe.spec.name_mapping import create_mapping_from_schema
from icefloe.spec.schema import Schema
from icefloe.spec.snapshots import SnapshotRef, SnapshotRefType
from icefloe.spec.statistics import BlobMetadata, PartitionStatisticsFile, StatisticsFile
from icefloe.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
)
from icefloe.spec.updates import AddEncryptionKey, AddSchema, RemoveEncryptionKey
from interop.engines import JavaEngine

from ._fixtures import JAVA_FIXTURES, fixture_bytes
from .test_metadata_json import legacy_v1
from .test_updates_json import REQUIREMENTS, UPDATES


def java_text(engine: JavaEngine, parser: str, text: str) -> str:
    """``<parser>.toJson(<parser>.fromJson(text))`` in Java: the exact text Java writes."""
    return str(
        engine.exec(f"P = jvm.org.apache.iceberg.{parser}\nresult = P.toJson(P.fromJson(text))", text=text)
    )


def java_round_trip(engine: JavaEngine, parser: str, text: str) -> Any:
    """``<parser>.toJson(<parser>.fromJson(text))`` in Java, parsed."""
    return json.loads(java_text(engine, parser, text))


# ---- metadata ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", JAVA_FIXTURES)
def test_java_rereads_icefloe_output_unchanged(java_engine: JavaEngine, name: str) -> None:
    text = dumps_metadata(loads_metadata(fixture_bytes(name))).decode()
    assert java_text(java_engine, "TableMetadataParser", text) == text


def test_java_writes_strings_as_icefloe_does(java_engine: JavaEngine) -> None:
    md = loads_metadata(fixture_bytes("v3_new_table.metadata.json"))
    md = dataclasses.replace(
        md, properties={"ctl": "a\x1fb\x00\x7f\t\n\r\b\f", "text": 'Ü \u2028 / "q" \\u001f \U0001f600'}
    )
    text = dumps_metadata(md).decode()
    assert java_text(java_engine, "TableMetadataParser", text) == text


def synthetic_tables() -> dict[str, Any]:
    legacy = loads_metadata(json.dumps(legacy_v1()).encode())
    v3 = loads_metadata(fixture_bytes("v3_deletion_vectors.metadata.json"))
    snapshot = v3.snapshots[-1]
    with_stats = dataclasses.replace(
        v3,
        statistics=(
            StatisticsFile(
                snapshot.snapshot_id,
                "/t/metadata/s.puffin",
                100,
                40,
                (
                    BlobMetadata("apache-datasketches-theta-v1", snapshot.snapshot_id, 3, (1,), {"ndv": "3"}),
                    BlobMetadata("custom", snapshot.snapshot_id, 3, (1, 2)),
                ),
            ),
        ),
        partition_statistics=(PartitionStatisticsFile(snapshot.snapshot_id, "/t/metadata/p.parquet", 77),),
        refs={
            **v3.refs,
            "audit": SnapshotRef(snapshot.snapshot_id, SnapshotRefType.BRANCH, 2, 3_600_000, 86_400_000),
            "old": SnapshotRef(v3.snapshots[0].snapshot_id, SnapshotRefType.TAG, max_ref_age_ms=5),
        },
    )
    return {"legacy_v1": legacy, "v3_statistics_refs": with_stats}


@pytest.mark.parametrize("case", ["legacy_v1", "v3_statistics_refs"])
def test_java_reads_synthetic_metadata(java_engine: JavaEngine, case: str) -> None:
    md = synthetic_tables()[case]
    assert java_round_trip(
        java_engine, "TableMetadataParser", dumps_metadata(md).decode()
    ) == metadata_to_dict(md)


# ---- schemas with defaults, name mappings -------------------------------------------------------------

DEFAULTS_SCHEMA = Schema(
    NestedField(1, "b", BooleanType(), initial_default=True, write_default=False),
    NestedField(2, "i", IntegerType(), required=True, initial_default=-7, write_default=7),
    NestedField(3, "l", LongType(), write_default=2**40),
    NestedField(4, "f", FloatType(), write_default=1.5),
    NestedField(5, "d", DoubleType(), initial_default=1e10, write_default=-0.25),
    NestedField(6, "dec", DecimalType(9, 2), initial_default=Decimal("123.45")),
    NestedField(7, "date", DateType(), initial_default=19723),
    NestedField(8, "time", TimeType(), initial_default=3_723_000_001),
    NestedField(9, "tstz", TimestamptzType(), initial_default=1_704_067_200_500_000),
    NestedField(10, "tsns", TimestampNanoType()),  # Java 1.9 has no nanosecond defaults yet
    NestedField(11, "s", StringType(), initial_default="n/a", doc="a string"),
    NestedField(12, "u", UUIDType(), write_default=uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")),
    NestedField(13, "fx", FixedType(2), write_default=b"\x01\xff"),
    NestedField(14, "bin", BinaryType(), write_default=b"\x00\x10"),
    NestedField(
        15, "st", StructType(NestedField(16, "x", IntegerType()), NestedField(17, "y", StringType()))
    ),
    NestedField(18, "li", ListType(19, LongType(), element_required=True)),
    NestedField(20, "m", MapType(21, StringType(), 22, ListType(23, IntegerType()), value_required=False)),
    schema_id=4,
    identifier_field_ids=[2],
)


def test_java_reads_schemas_with_defaults_of_every_type(java_engine: JavaEngine) -> None:
    text = json.dumps(schema_to_json(DEFAULTS_SCHEMA))
    assert java_round_trip(java_engine, "SchemaParser", text) == json.loads(text)


def test_name_mapping_of_a_schema_matches_java(java_engine: JavaEngine) -> None:
    text = json.dumps(schema_to_json(DEFAULTS_SCHEMA))
    java = java_engine.exec(
        "m = jvm.org.apache.iceberg.mapping\n"
        "result = m.NameMappingParser.toJson(m.MappingUtil.create(jvm.org.apache.iceberg.SchemaParser.fromJson(text)))",
        text=text,
    )
    assert java == dumps_name_mapping(create_mapping_from_schema(DEFAULTS_SCHEMA))


# ---- REST updates and requirements --------------------------------------------------------------------

# Java 1.9 has no encryption-key updates yet.
JAVA_UPDATES = [u for u in UPDATES if not isinstance(u, (AddEncryptionKey, RemoveEncryptionKey))]


@pytest.mark.parametrize("update", JAVA_UPDATES, ids=lambda u: type(u).__name__)
def test_java_reads_updates(java_engine: JavaEngine, update: Any) -> None:
    written = update_to_json(update)
    expected = dict(written)
    if isinstance(update, AddSchema) and update.last_column_id is None:
        # icefloe leaves the deprecated field out (the OpenAPI spec: "computed on the server
        # side"); Java 1.9 accepts that and fills in the schema's highest field id.
        expected["last-column-id"] = update.schema.highest_field_id
    assert java_round_trip(java_engine, "MetadataUpdateParser", json.dumps(written)) == expected


@pytest.mark.parametrize("requirement", REQUIREMENTS, ids=lambda r: type(r).__name__)
def test_java_reads_requirements(java_engine: JavaEngine, requirement: Any) -> None:
    text = json.dumps(requirement_to_json(requirement))
    assert java_round_trip(java_engine, "UpdateRequirementParser", text) == json.loads(text)


# ---- a table whose current metadata icefloe wrote ------------------------------------------------------


def test_spark_reads_a_table_after_icefloe_rewrote_its_metadata(
    java_engine: JavaEngine, tmp_path: Path
) -> None:
    cat = java_engine.hadoop_catalog(tmp_path)
    java_engine.sql(
        f"CREATE TABLE {cat}.db.t (id bigint, s string) USING iceberg TBLPROPERTIES ('format-version'='2')",
        f"INSERT INTO {cat}.db.t VALUES (1, 'a'), (2, 'b')",
        f"INSERT INTO {cat}.db.t VALUES (3, 'c')",
    )
    meta = tmp_path / "db" / "t" / "metadata"
    version = int((meta / "version-hint.text").read_text().strip())
    md = loads_metadata((meta / f"v{version}.metadata.json").read_bytes())
    first = md.snapshots[0].snapshot_id
    md = dataclasses.replace(
        md,
        properties={**md.properties, "written-by": "icefloe"},
        refs={**md.refs, "first": SnapshotRef(first, SnapshotRefType.TAG)},
    )
    (meta / f"v{version + 1}.metadata.json").write_bytes(dumps_metadata(md))
    (meta / "version-hint.text").write_text(str(version + 1))
    (meta / ".version-hint.text.crc").unlink(missing_ok=True)  # Hadoop checks it against the new text

    assert java_engine.sql(f"SELECT id, s FROM {cat}.db.t")["rows"] == [[1, "a"], [2, "b"], [3, "c"]]
    assert java_engine.sql(f"SELECT id FROM {cat}.db.t VERSION AS OF 'first'")["rows"] == [[1], [2]]
    props = java_engine.sql(f"SHOW TBLPROPERTIES {cat}.db.t ('written-by')")["rows"]
    assert props == [["written-by", "icefloe"]]
    # Java commits on top of icefloe's file, and icefloe reads Java's next file.
    java_engine.sql(f"INSERT INTO {cat}.db.t VALUES (4, 'd')")
    after = loads_metadata((meta / f"v{version + 2}.metadata.json").read_bytes())
    assert after.refs["first"].snapshot_id == first and after.properties["written-by"] == "icefloe"
