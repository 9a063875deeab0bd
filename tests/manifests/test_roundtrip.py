"""Writing manifests and manifest lists, then reading them back, for format versions 1-3."""

from __future__ import annotations

import dataclasses
import json
import math
import uuid
from decimal import Decimal
from io import BytesIO
from pathlib import Path
from typing import Any

import fastavro
import pytest

from icefloe.errors import FileAlreadyExistsError, MissingDependencyError, ValidationError
from icefloe.io import LocalFileIO
from icefloe.manifests import (
    UNASSIGNED_SEQ,
    ManifestListWriter,
    ManifestWriter,
    read_manifest,
    read_manifest_header,
    read_manifest_list,
    write_manifest,
    write_manifest_list,
)
from icefloe.serde.schema_json import partition_fields_from_json, schema_from_json
from icefloe.spec.conversions import from_bytes, to_bytes
from icefloe.spec.manifest import (
    ContentFile,
    DataFile,
    DeleteFile,
    FieldSummary,
    FileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
)
from icefloe.spec.partitioning import PartitionSpec, PartitionSpecBuilder
from icefloe.spec.schema import Schema
from icefloe.spec.types import NestedField, StructType

from .conftest import FIXTURES

ADDED, EXISTING, DELETED = (
    ManifestEntryStatus.ADDED,
    ManifestEntryStatus.EXISTING,
    ManifestEntryStatus.DELETED,
)

SCHEMA = Schema(
    NestedField(1, "id", "long", required=True),
    NestedField(2, "category", "string"),
    NestedField(3, "ts", "timestamp"),
    NestedField(4, "price", "decimal(9, 2)"),
    NestedField(5, "score", "double"),
    schema_id=3,
)
SPEC = (
    PartitionSpecBuilder(SCHEMA, spec_id=2)
    .identity("category")
    .day("ts")
    .identity("price")
    .identity("score")
    .build()
)


def _file(
    i: int, partition: tuple[Any, ...] = ("a", 19000, Decimal("1.50"), 0.5), **changes: Any
) -> DataFile:
    base = DataFile(
        file_path=f"s3://bucket/t/data/f{i}.parquet",
        file_format=FileFormat.PARQUET,
        record_count=100 + i,
        file_size_in_bytes=4096 + i,
        partition=partition,
        spec_id=SPEC.spec_id,
        column_sizes={1: 10, 2: 20},
        value_counts={1: 100 + i, 2: 100 + i},
        null_value_counts={1: 0, 2: 3},
        nan_value_counts={5: 0},
        lower_bounds={1: to_bytes(SCHEMA.find_type(1), i), 2: b"a"},  # type: ignore[arg-type]
        upper_bounds={1: to_bytes(SCHEMA.find_type(1), i + 99), 2: b"z"},  # type: ignore[arg-type]
        key_metadata=b"\x01\x02" if i % 2 else None,
        split_offsets=(4, 1000),
        sort_order_id=1,
    )
    return base.copy(**changes)  # type: ignore[no-any-return]


def _fields(f: ContentFile) -> dict[str, Any]:
    """Every field of a content file (their ``==`` only compares paths)."""
    return {name: getattr(f, name) for name in ContentFile.__dataclass_fields__}


def _committed(manifest: ManifestFile, sequence_number: int, first_row_id: int | None = None) -> ManifestFile:
    """The row as a manifest list with this sequence number (and first row id) records it."""
    unassigned = manifest.min_sequence_number == UNASSIGNED_SEQ
    return dataclasses.replace(
        manifest,
        sequence_number=sequence_number,
        min_sequence_number=sequence_number if unassigned else manifest.min_sequence_number,
        first_row_id=first_row_id,
    )


@pytest.mark.parametrize("version", [1, 2, 3])
def test_manifest_round_trip(io: LocalFileIO, tmp_path: Path, version: int) -> None:
    path = str(tmp_path / "m.avro")
    added = [
        _file(0),
        _file(1, ("b", None, None, float("nan"))),
        _file(2, (None, -3, Decimal("-0.01"), -0.0)),
    ]
    existing = _file(3, first_row_id=500)
    deleted = _file(4, first_row_id=600)
    with ManifestWriter(
        io.new_output(path), spec=SPEC, schema=SCHEMA, format_version=version, snapshot_id=77
    ) as writer:
        for f in added:
            writer.add(f)
        writer.existing(existing, snapshot_id=70, data_sequence_number=4, file_sequence_number=5)
        writer.delete(deleted, snapshot_id=77, data_sequence_number=3, file_sequence_number=3)
    manifest = writer.manifest_file

    assert manifest.manifest_path == path
    assert manifest.manifest_length == Path(path).stat().st_size
    assert (manifest.partition_spec_id, manifest.content, manifest.added_snapshot_id) == (
        2,
        ManifestContent.DATA,
        77,
    )
    assert manifest.sequence_number == UNASSIGNED_SEQ
    # the min data sequence number of live entries (the deleted one, 3, does not count); v1 has none
    assert manifest.min_sequence_number == (4 if version >= 2 else UNASSIGNED_SEQ)
    assert (manifest.added_files_count, manifest.existing_files_count, manifest.deleted_files_count) == (
        3,
        1,
        1,
    )
    assert (manifest.added_rows_count, manifest.existing_rows_count, manifest.deleted_rows_count) == (
        303,
        103,
        104,
    )

    # a v1 list records sequence number 0, from which every v1 entry reads 0
    committed = _committed(manifest, 9 if version > 1 else 0, first_row_id=1000 if version == 3 else None)
    entries = list(read_manifest(io, committed))
    assert [e.status for e in entries] == [ADDED, ADDED, ADDED, EXISTING, DELETED]
    assert [e.snapshot_id for e in entries] == [77, 77, 77, 70, 77]
    sequence_numbers = [(e.sequence_number, e.file_sequence_number) for e in entries]
    if version == 1:
        assert sequence_numbers == [(0, 0)] * 5
    else:  # ADDED entries inherit the list's 9; the others keep what was written
        assert sequence_numbers == [(9, 9), (9, 9), (9, 9), (4, 5), (3, 3)]
    for entry, original in zip(entries, [*added, existing, deleted]):
        got, want = _fields(entry.data_file), _fields(original)
        if version == 3:
            # ADDED files inherit first row ids: 1000, then + record counts
            want["first_row_id"] = {0: 1000, 1: 1100, 2: 1201}.get(
                int(original.file_path[-9]), want["first_row_id"]
            )
        else:
            want["first_row_id"] = None
        got["partition"], want["partition"] = _nan_safe(got["partition"]), _nan_safe(want["partition"])
        assert got == want
        assert isinstance(entry.data_file, DataFile)


def _nan_safe(values: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple("NaN" if isinstance(v, float) and math.isnan(v) else v for v in values)


def test_negative_zero_and_nan_partition_summaries(io: LocalFileIO, tmp_path: Path) -> None:
    files = [
        _file(0, ("a", 1, Decimal("2.00"), 0.0)),
        _file(1, ("b", 2, Decimal("-1.00"), -0.0)),
        _file(2, (None, None, None, float("nan"))),
    ]
    manifest = write_manifest(
        io, str(tmp_path / "m.avro"), SPEC, SCHEMA, files, format_version=2, snapshot_id=1
    )
    category, day, price, score = manifest.partitions or ()
    day_type, price_type, score_type = (f.field_type for f in SPEC.partition_type(SCHEMA).fields[1:])
    assert category == FieldSummary(True, False, b"a", b"b")
    assert (from_bytes(day_type, day.lower_bound), from_bytes(day_type, day.upper_bound)) == (1, 2)
    assert day.contains_null is True and day.contains_nan is False
    assert from_bytes(price_type, price.lower_bound) == Decimal("-1.00")
    assert from_bytes(price_type, price.upper_bound) == Decimal("2.00")
    # -0.0 must not be an upper bound when +0.0 occurs, nor +0.0 a lower bound when -0.0 does
    assert score.contains_nan is True and score.contains_null is False
    assert math.copysign(1, from_bytes(score_type, score.lower_bound)) == -1
    assert math.copysign(1, from_bytes(score_type, score.upper_bound)) == 1


def test_unpartitioned_manifest_has_empty_summaries(io: LocalFileIO, tmp_path: Path) -> None:
    spec = PartitionSpec((), spec_id=0)
    manifest = write_manifest(
        io, str(tmp_path / "m.avro"), spec, SCHEMA, [_file(0, ())], format_version=2, snapshot_id=1
    )
    assert manifest.partitions == ()
    (entry,) = read_manifest(io, _committed(manifest, 1))
    assert entry.data_file.partition == ()


ALL_TYPES = Schema(
    NestedField(1, "b", "boolean"),
    NestedField(2, "i", "int"),
    NestedField(3, "l", "long"),
    NestedField(4, "f", "float"),
    NestedField(5, "d", "double"),
    NestedField(6, "dec", "decimal(38, 10)"),
    NestedField(7, "dt", "date"),
    NestedField(8, "t", "time"),
    NestedField(9, "ts", "timestamp"),
    NestedField(10, "tstz", "timestamptz"),
    NestedField(11, "tsns", "timestamp_ns"),
    NestedField(12, "tstzns", "timestamptz_ns"),
    NestedField(13, "s", "string"),
    NestedField(14, "u", "uuid"),
    NestedField(15, "fx", "fixed[3]"),
    NestedField(16, "bin", "binary"),
    NestedField(17, "dec2", "decimal(38, 10)"),
    NestedField(18, "the-name", "int"),
)


def test_partition_values_of_every_type(io: LocalFileIO, tmp_path: Path) -> None:
    builder = PartitionSpecBuilder(ALL_TYPES)
    for field in ALL_TYPES.fields:
        builder.identity(field.name)
    spec = builder.build()
    values = (
        True,
        -7,
        2**62,
        1.5,
        -2.25,
        Decimal("-1234567890123456789012345678.0123456789"),
        -719162,
        86_399_999_999,
        253402300800000000,  # year 10000: beyond Python's datetime
        -1,
        1_700_000_000_123_456_789,
        -5,
        "ünï",
        uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"),
        b"\x00\xff\x01",
        b"",
        Decimal("0E-10"),
        5,
    )
    nulls = (None,) * len(values)
    path = str(tmp_path / "m.avro")
    manifest = write_manifest(
        io, path, spec, ALL_TYPES, [_file(0, values), _file(1, nulls)], format_version=3, snapshot_id=1
    )
    partition_type = spec.partition_type(ALL_TYPES)
    for typed in (None, partition_type):
        first, second = read_manifest(io, _committed(manifest, 1, 0), partition_type=typed)
        assert first.data_file.partition == values
        assert second.data_file.partition == nulls
    summaries = manifest.partitions or ()
    assert [
        from_bytes(f.field_type, s.lower_bound) for f, s in zip(partition_type.fields, summaries)
    ] == list(values)
    assert all(s.contains_null for s in summaries)
    # the file's schema names the odd column as Avro allows, keeping the Iceberg name
    header = read_manifest_header(io, path)
    partition_fields = header.avro_schema["fields"][-1]["type"]["fields"][3]["type"]["fields"]
    assert (
        partition_fields[-1]["name"] == "the_x2Dname"
        and partition_fields[-1]["iceberg-field-name"] == "the-name"
    )
    assert partition_fields[-2]["type"] == ["null", "decimal_38_10"]


def test_partition_type_orders_by_field_id(io: LocalFileIO, tmp_path: Path) -> None:
    manifest = write_manifest(
        io, str(tmp_path / "m.avro"), SPEC, SCHEMA, [_file(0)], format_version=2, snapshot_id=1
    )
    partition_type = SPEC.partition_type(SCHEMA)
    reordered = StructType(*reversed(partition_type.fields), NestedField(9999, "gone", "int"))
    (entry,) = read_manifest(io, _committed(manifest, 1), partition_type=reordered)
    assert entry.data_file.partition == (0.5, Decimal("1.50"), 19000, "a", None)


def test_delete_manifest_round_trip(io: LocalFileIO, tmp_path: Path) -> None:
    position = DeleteFile(
        file_path="s3://b/t/data/d1.parquet",
        file_format=FileFormat.PARQUET,
        record_count=3,
        file_size_in_bytes=10,
        partition=("a", 1, None, None),
        content=FileContent.POSITION_DELETES,
        referenced_data_file="s3://b/t/data/f0.parquet",
    )
    equality = position.copy(
        file_path="s3://b/t/data/d2.parquet",
        content=FileContent.EQUALITY_DELETES,
        equality_ids=(1, 2),
        referenced_data_file=None,
        sort_order_id=0,
    )
    dv = position.copy(
        file_path="s3://b/t/data/d3.puffin",
        file_format=FileFormat.PUFFIN,
        content_offset=4,
        content_size_in_bytes=40,
        first_row_id=99,
    )
    manifest = write_manifest(
        io,
        str(tmp_path / "d.avro"),
        SPEC,
        SCHEMA,
        [position, equality, dv],
        format_version=3,
        snapshot_id=5,
        content=ManifestContent.DELETES,
    )
    assert read_manifest_header(io, manifest.manifest_path).content == ManifestContent.DELETES
    entries = list(read_manifest(io, _committed(manifest, 6)))
    assert all(isinstance(e.data_file, DeleteFile) for e in entries)
    for entry, original in zip(entries, [position, equality, dv.copy(first_row_id=None)]):
        assert _fields(entry.data_file) == _fields(original.copy(spec_id=2))
    assert entries[2].data_file.is_deletion_vector  # type: ignore[attr-defined]


# ---- compatibility with Java's files ----------------------------------------------------------


def _java_header(path: Path) -> tuple[dict[str, str], Any]:
    with path.open("rb") as f:
        reader = fastavro.reader(f)
        meta = {k: v.decode() if isinstance(v, bytes) else v for k, v in reader.metadata.items()}
        return meta, reader.writer_schema


JAVA_MANIFESTS = [
    FIXTURES / "java_v1_partitioned" / "2095cfbd-65c4-4d99-9161-f07b197b939c-m0.avro",
    FIXTURES / "java_v2_types" / "9f198852-a87c-4a28-a208-d50ca8c689cc-m0.avro",
    FIXTURES / "java_v2_deletes" / "8d3dd634-138d-420a-9001-266a02f4fb85-m0.avro",
    FIXTURES / "java_v3_lineage" / "1bf864e4-c854-4c1a-b5e8-a2fb07ccf917-m0.avro",
]


@pytest.mark.parametrize("java_path", JAVA_MANIFESTS, ids=lambda p: p.parent.name)
def test_our_manifest_matches_javas(io: LocalFileIO, tmp_path: Path, java_path: Path) -> None:
    """Re-writing Java's entries gives the same schema text and header values, and fastavro
    reading our file with Java's writer schema as its reader schema sees the same records."""
    meta, java_schema = _java_header(java_path)
    version = int(meta["format-version"])
    schema = schema_from_json(json.loads(meta["schema"]))
    spec = partition_fields_from_json(
        json.loads(meta["partition-spec"]), spec_id=int(meta["partition-spec-id"])
    )
    content = ManifestContent.DELETES if meta.get("content") == "deletes" else ManifestContent.DATA
    java_row = ManifestFile(str(java_path), java_path.stat().st_size, spec.spec_id, content, 1, 1, 123)
    entries = list(read_manifest(io, java_row))
    ours = str(tmp_path / "ours.avro")
    write_manifest(io, ours, spec, schema, entries, format_version=version, snapshot_id=123, content=content)

    our_meta, _ = _java_header(Path(ours))
    assert our_meta["avro.schema"] == meta["avro.schema"]
    for key, value in meta.items():
        if key != "avro.schema":
            assert our_meta[key] == value, key
    assert our_meta["schema-id"] == str(schema.schema_id)  # required by the spec in v2+; Java omits it

    with open(ours, "rb") as f:
        plain = list(fastavro.reader(f))
    with open(ours, "rb") as f:
        as_java = list(fastavro.reader(f, reader_schema=java_schema))
    with java_path.open("rb") as f:
        javas = list(fastavro.reader(f))
    assert as_java == plain
    # the same records as Java's, except the sequence numbers we resolved on reading
    for mine, theirs in zip(plain, javas):
        for key in ("sequence_number", "file_sequence_number"):
            mine.pop(key, None)
            theirs.pop(key, None)
        assert mine == theirs


@pytest.mark.parametrize("case", ["java_v1_partitioned", "java_v2_types", "java_v3_lineage"])
def test_our_manifest_list_matches_javas(io: LocalFileIO, tmp_path: Path, case: str) -> None:
    java_list = sorted((FIXTURES / case).glob("snap-*.avro"), key=lambda p: p.stat().st_size)[-1]
    meta, java_schema = _java_header(java_list)
    version = int(meta["format-version"])
    rows = read_manifest_list(io, str(java_list))
    parent = None if meta["parent-snapshot-id"] == "null" else int(meta["parent-snapshot-id"])
    ours = str(tmp_path / "list.avro")
    next_row_id = write_manifest_list(
        io,
        ours,
        version,
        int(meta["snapshot-id"]),
        parent,
        int(meta.get("sequence-number", 0)),
        rows,
        first_row_id=int(meta["first-row-id"]) if "first-row-id" in meta else None,
    )
    our_meta, _ = _java_header(Path(ours))
    assert our_meta == meta
    assert read_manifest_list(io, ours) == rows
    with open(ours, "rb") as f, java_list.open("rb") as j:
        assert list(fastavro.reader(f, reader_schema=java_schema)) == list(fastavro.reader(j))
    assert next_row_id == (int(meta["first-row-id"]) if version == 3 else None)  # all rows already had ids


# ---- manifest lists ---------------------------------------------------------------------------


def _row(
    path: str,
    *,
    content: ManifestContent = ManifestContent.DATA,
    snapshot_id: int | None = 10,
    added: int = 0,
    existing: int = 0,
    seq: int = UNASSIGNED_SEQ,
    first_row_id: int | None = None,
) -> ManifestFile:
    return ManifestFile(
        manifest_path=path,
        manifest_length=100,
        partition_spec_id=0,
        content=content,
        sequence_number=seq,
        min_sequence_number=seq,
        added_snapshot_id=snapshot_id,
        added_files_count=1,
        existing_files_count=0,
        deleted_files_count=0,
        added_rows_count=added,
        existing_rows_count=existing,
        deleted_rows_count=0,
        partitions=(),
        first_row_id=first_row_id,
    )


def test_v3_first_row_id_assignment_follows_the_spec_example(io: LocalFileIO, tmp_path: Path) -> None:
    """spec "Row lineage example": existing 925 kept; added1 100+25 -> 1000, added2 0+100 -> 1125,
    added3 125+25 -> 1225; next-row-id 1375; delete manifests get none."""
    rows = [
        _row("existing", snapshot_id=5, added=75, seq=4, first_row_id=925),
        _row("added1", added=100, existing=25),
        _row("deletes", content=ManifestContent.DELETES, added=7, first_row_id=3),
        _row("added2", added=0, existing=100),
        _row("added3", added=125, existing=25),
    ]
    location = str(tmp_path / "snap.avro")
    next_row_id = write_manifest_list(io, location, 3, 10, 5, 7, rows, first_row_id=1000)
    assert next_row_id == 1375
    read = read_manifest_list(io, location)
    assert [r.first_row_id for r in read] == [925, 1000, None, 1125, 1225]
    assert [r.sequence_number for r in read] == [4, 7, 7, 7, 7]
    with open(location, "rb") as f:
        meta = fastavro.reader(f).metadata
    assert (meta["first-row-id"], meta["sequence-number"], meta["parent-snapshot-id"]) == ("1000", "7", "5")


def test_list_writer_assigns_only_this_snapshots_sequence_numbers(io: LocalFileIO, tmp_path: Path) -> None:
    writer = ManifestListWriter(
        io.new_output(str(tmp_path / "l.avro")),
        format_version=2,
        snapshot_id=10,
        parent_snapshot_id=None,
        sequence_number=3,
    )
    mine = writer.add(_row("mine"))
    inherited = writer.add(_row("no-snapshot", snapshot_id=None))
    assert (mine.sequence_number, mine.min_sequence_number) == (3, 3)
    assert (inherited.added_snapshot_id, inherited.sequence_number) == (10, 3)
    with pytest.raises(ValidationError, match="unassigned sequence number"):
        writer.add(_row("other", snapshot_id=9))
    assert writer.close() is None
    rows = read_manifest_list(io, str(tmp_path / "l.avro"))
    assert [(r.manifest_path, r.sequence_number) for r in rows] == [("mine", 3), ("no-snapshot", 3)]
    with open(tmp_path / "l.avro", "rb") as f:
        assert fastavro.reader(f).metadata["parent-snapshot-id"] == "null"


def test_v1_list_refuses_delete_manifests_and_reads_as_sequence_zero(io: LocalFileIO, tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="delete manifest"):
        write_manifest_list(
            io, str(tmp_path / "x.avro"), 1, 10, None, 0, [_row("d", content=ManifestContent.DELETES)]
        )
    assert not (tmp_path / "x.avro").exists()
    write_manifest_list(io, str(tmp_path / "l.avro"), 1, 10, None, 99, [_row("a", added=5)])
    (row,) = read_manifest_list(io, str(tmp_path / "l.avro"))
    assert (row.sequence_number, row.min_sequence_number, row.content, row.added_rows_count) == (0, 0, 0, 5)


def test_v3_list_needs_first_row_id(io: LocalFileIO, tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="first-row-id"):
        write_manifest_list(io, str(tmp_path / "l.avro"), 3, 10, None, 1, [])


# ---- writer options and misuse ----------------------------------------------------------------


def _codec_available(avro_codec: str) -> bool:
    try:
        fastavro.writer(
            BytesIO(),
            {"type": "record", "name": "r", "fields": [{"name": "a", "type": "int"}]},
            [{"a": 1}],
            codec=avro_codec,
        )
    except ValueError:
        return False
    return True


@pytest.mark.parametrize(
    ("codec", "avro_codec"),
    [("gzip", "deflate"), ("uncompressed", "null"), ("zstd", "zstandard"), ("snappy", "snappy")],
)
def test_codecs(io: LocalFileIO, tmp_path: Path, codec: str, avro_codec: str) -> None:
    if not _codec_available(avro_codec):
        # fastavro needs an extra package for this codec: a typed error says which
        with pytest.raises(MissingDependencyError, match=codec):
            ManifestWriter(
                io.new_output(str(tmp_path / "m.avro")),
                spec=SPEC,
                schema=SCHEMA,
                format_version=2,
                snapshot_id=1,
                codec=codec,
            )
        return
    manifest = write_manifest(
        io,
        str(tmp_path / "m.avro"),
        SPEC,
        SCHEMA,
        [_file(0), _file(1)],
        format_version=2,
        snapshot_id=1,
        codec=codec,
    )
    with open(manifest.manifest_path, "rb") as f:
        assert fastavro.reader(f).codec == avro_codec
    assert [e.data_file.file_path for e in read_manifest(io, _committed(manifest, 1))] == [
        "s3://bucket/t/data/f0.parquet",
        "s3://bucket/t/data/f1.parquet",
    ]


def test_unknown_codec() -> None:
    with pytest.raises(ValidationError, match="brotli"):
        ManifestWriter(
            LocalFileIO().new_output("/nowhere"),
            spec=SPEC,
            schema=SCHEMA,
            format_version=2,
            snapshot_id=1,
            codec="brotli",
        )


def test_writer_refuses_wrong_content_and_partitions(io: LocalFileIO, tmp_path: Path) -> None:
    writer = ManifestWriter(
        io.new_output(str(tmp_path / "m.avro")), spec=SPEC, schema=SCHEMA, format_version=2, snapshot_id=1
    )
    with pytest.raises(ValidationError, match="to a data manifest"):
        writer.add(
            DeleteFile(
                "d.parquet", FileFormat.PARQUET, 1, 1, ("a", 1, None, None), FileContent.POSITION_DELETES
            )
        )
    with pytest.raises(ValidationError, match="partition has 1 values"):
        writer.add(_file(0, ("a",)))
    with pytest.raises(ValidationError, match="sequence numbers"):
        writer.existing(_file(0), snapshot_id=1, data_sequence_number=None, file_sequence_number=None)
    with pytest.raises(ValidationError, match="v1 tables cannot have delete manifests"):
        ManifestWriter(
            io.new_output("x"),
            spec=SPEC,
            schema=SCHEMA,
            format_version=1,
            snapshot_id=1,
            content=ManifestContent.DELETES,
        )
    with pytest.raises(ValidationError, match="expected a Decimal"):
        write_manifest(
            io,
            str(tmp_path / "bad.avro"),
            SPEC,
            SCHEMA,
            [_file(0, ("a", 1, 1.5, 0.5))],
            format_version=2,
            snapshot_id=1,
        )
    assert not (tmp_path / "bad.avro").exists()


def test_writer_targets(io: LocalFileIO, tmp_path: Path) -> None:
    path = str(tmp_path / "m.avro")
    with ManifestWriter(io, path, spec=SPEC, schema=SCHEMA, format_version=2, snapshot_id=1) as writer:
        writer.add(_file(0))
    assert writer.to_manifest_file().manifest_path == path and Path(path).exists()
    with pytest.raises(ValidationError, match="location is missing"):
        ManifestWriter(io, spec=SPEC, schema=SCHEMA, format_version=2, snapshot_id=1)
    with pytest.raises(ValidationError, match="OutputFile for"):
        ManifestWriter(
            io.new_output(path), "elsewhere", spec=SPEC, schema=SCHEMA, format_version=2, snapshot_id=1
        )


def test_failed_with_block_writes_nothing(io: LocalFileIO, tmp_path: Path) -> None:
    path = tmp_path / "m.avro"
    with (
        pytest.raises(RuntimeError),
        ManifestWriter(
            io.new_output(str(path)), spec=SPEC, schema=SCHEMA, format_version=2, snapshot_id=1
        ) as writer,
    ):
        writer.add(_file(0))
        raise RuntimeError("boom")
    assert not path.exists()
    with pytest.raises(ValidationError, match="not written yet"):
        _ = writer.manifest_file


def test_existing_file_is_not_overwritten(io: LocalFileIO, tmp_path: Path) -> None:
    path = str(tmp_path / "m.avro")
    write_manifest(io, path, SPEC, SCHEMA, [_file(0)], format_version=2, snapshot_id=1)
    with pytest.raises(FileAlreadyExistsError):
        write_manifest(io, path, SPEC, SCHEMA, [_file(1)], format_version=2, snapshot_id=1)
    again = write_manifest(
        io, path, SPEC, SCHEMA, [_file(1)], format_version=2, snapshot_id=1, overwrite=True
    )
    assert [e.data_file.file_path for e in read_manifest(io, _committed(again, 1))] == [
        "s3://bucket/t/data/f1.parquet"
    ]


def test_add_with_explicit_data_sequence_number(io: LocalFileIO, tmp_path: Path) -> None:
    writer = ManifestWriter(
        io.new_output(str(tmp_path / "m.avro")), spec=SPEC, schema=SCHEMA, format_version=2, snapshot_id=8
    )
    with writer:
        writer.add(_file(0), data_sequence_number=2)  # e.g. a compaction keeping the data's age
        writer.add_entry(ManifestEntry(ADDED, None, _file(1)))
    manifest = writer.manifest_file
    assert manifest.min_sequence_number == 2
    first, second = read_manifest(io, _committed(manifest, 6))
    assert (first.sequence_number, first.file_sequence_number, first.snapshot_id) == (2, 6, 8)
    assert (second.sequence_number, second.snapshot_id) == (6, 8)  # snapshot id inherited from the list row


def test_deleted_entries_take_no_row_ids(io: LocalFileIO, tmp_path: Path) -> None:
    """A DELETED entry without a first row id neither gets one nor uses up ids (Java 1.9 reads
    it so: checked with Spark's ``_row_id`` on a manifest crafted this way)."""
    writer = ManifestWriter(
        io, str(tmp_path / "m.avro"), spec=SPEC, schema=SCHEMA, format_version=3, snapshot_id=8
    )
    with writer:
        writer.delete(_file(0), snapshot_id=8, data_sequence_number=1, file_sequence_number=1)
        writer.add(_file(1))
        writer.existing(_file(2), snapshot_id=7, data_sequence_number=1, file_sequence_number=1)
        writer.add(_file(3))
    entries = list(read_manifest(io, _committed(writer.manifest_file, 2, first_row_id=100)))
    assert [(e.status, e.data_file.first_row_id) for e in entries] == [
        (DELETED, None),
        (ADDED, 100),
        (EXISTING, 201),  # an existing file without an id gets one too (tables upgraded to v3)
        (ADDED, 303),
    ]
