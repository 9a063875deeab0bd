"""Reading manifests and manifest lists written by Java Iceberg 1.9 (fixtures/*/NOTES.md says
what each table holds)."""

from __future__ import annotations

import json
import math
from decimal import Decimal

import pytest

from icefloe.io import LocalFileIO
from icefloe.manifests import read_manifest, read_manifest_header, read_manifest_list
from icefloe.serde.schema_json import partition_fields_from_json, schema_from_json
from icefloe.spec.conversions import from_bytes
from icefloe.spec.manifest import (
    DataFile,
    DeleteFile,
    FileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
)
from icefloe.spec.types import DateType, DecimalType, DoubleType, IntegerType, StringType, TimestamptzType

from .conftest import FIXTURES, fixture_path, relocated

ADDED, EXISTING, DELETED = (
    ManifestEntryStatus.ADDED,
    ManifestEntryStatus.EXISTING,
    ManifestEntryStatus.DELETED,
)


def _snapshot_list(case: str, snapshot_id: int) -> str:
    return str(next((FIXTURES / case).glob(f"snap-{snapshot_id}-*.avro")))


def _entries(io: LocalFileIO, case: str, snapshot_id: int) -> dict[str, list[ManifestEntry]]:
    """Manifest file name -> its entries, for every manifest of the snapshot."""
    return {
        m.manifest_path.rsplit("/", 1)[-1]: list(read_manifest(io, relocated(case, m)))
        for m in read_manifest_list(io, _snapshot_list(case, snapshot_id))
    }


def _name(entry: ManifestEntry) -> str:
    return entry.data_file.file_path.rsplit("/", 1)[-1]


# ---- v1 ---------------------------------------------------------------------------------------

V1 = "java_v1_partitioned"


def test_v1_manifest_list(io: LocalFileIO) -> None:
    rows = read_manifest_list(io, _snapshot_list(V1, 7808564301493661052))
    assert [r.manifest_path.rsplit("/", 1)[-1] for r in rows] == [
        "ea47c808-527a-4b35-9cbe-363c650deae7-m0.avro",
        "ea47c808-527a-4b35-9cbe-363c650deae7-m1.avro",
    ]
    new, carried = rows
    # v1 lists have no content or sequence numbers: data manifests at sequence number 0
    assert {r.content for r in rows} == {ManifestContent.DATA}
    assert {(r.sequence_number, r.min_sequence_number) for r in rows} == {(0, 0)}
    assert (new.partition_spec_id, carried.partition_spec_id) == (1, 0)
    assert new.added_snapshot_id == carried.added_snapshot_id == 7808564301493661052
    assert (new.added_files_count, new.existing_files_count, new.deleted_files_count) == (1, 0, 0)
    assert (carried.existing_files_count, carried.existing_rows_count) == (3, 3)
    assert new.manifest_length == 7647
    assert new.first_row_id is None
    cat, _ts, _tsn, price, _cost, bucket = new.partitions
    assert (cat.contains_null, cat.lower_bound, cat.upper_bound) == (False, b"d", b"d")
    assert from_bytes(DecimalType(10, 2), price.lower_bound) == Decimal("5.00")
    assert from_bytes(IntegerType(), bucket.upper_bound) == 1
    # the carried-over manifest: cat a..c, ts has a null (the cat=b file)
    assert (carried.partitions[0].lower_bound, carried.partitions[0].upper_bound) == (b"a", b"c")
    assert carried.partitions[1].contains_null is True
    assert from_bytes(TimestamptzType(), carried.partitions[1].lower_bound) == 1683263105123456


def test_v1_entries_partition_values_and_bounds(io: LocalFileIO) -> None:
    entries = _entries(io, V1, 7289297375785087628)["2095cfbd-65c4-4d99-9161-f07b197b939c-m0.avro"]
    assert [e.status for e in entries] == [ADDED, ADDED]
    b_file, a_file = (e.data_file for e in entries)
    assert isinstance(a_file, DataFile) and a_file.content == FileContent.DATA
    assert a_file.file_format == FileFormat.PARQUET
    assert a_file.file_path.startswith("/tmp/mf/v1/db/t/data/cat=a/ts=2024-01-01T00%3A00%3A00%2B00%3A00/")
    assert a_file.partition == ("a", 1704067200000000, 1704067200000000, Decimal("1.00"), Decimal("2.00"))
    assert b_file.partition == ("b", None, None, None, None)
    assert (a_file.record_count, a_file.file_size_in_bytes, b_file.record_count) == (2, 2370, 1)
    assert a_file.split_offsets == (4,) and a_file.sort_order_id == 0
    assert a_file.null_value_counts == {1: 0, 2: 0, 3: 0, 4: 0, 5: 0, 6: 0, 7: 0}
    assert a_file.nan_value_counts == {}
    assert a_file.value_counts == {i: 2 for i in range(1, 8)}
    assert set(a_file.column_sizes or {}) == set(range(1, 8))
    lower, upper = a_file.lower_bounds or {}, a_file.upper_bounds or {}
    assert from_bytes(DecimalType(38, 0), lower[7]) == Decimal(-1)
    assert from_bytes(DecimalType(38, 0), upper[7]) == Decimal("12345678901234567890123456789012345678")
    assert (from_bytes(StringType(), lower[2]), from_bytes(IntegerType(), lower[1][:4])) == ("a", 1)
    for e in entries:  # v1: explicit snapshot ids, sequence numbers 0, the manifest's spec
        assert e.snapshot_id == 7289297375785087628
        assert (e.sequence_number, e.file_sequence_number) == (0, 0)
        assert e.data_file.spec_id == 0 and e.data_file.first_row_id is None


def test_v1_overwrite_has_existing_and_deleted_entries(io: LocalFileIO) -> None:
    manifests = _entries(io, V1, 1967409767228715328)
    rewritten = manifests["2e86d97d-599f-4f94-90e7-ae9bec31752d-m0.avro"]
    assert [(e.status, e.snapshot_id, e.data_file.partition[0]) for e in rewritten] == [
        (EXISTING, 7289297375785087628, "b"),
        (DELETED, 1967409767228715328, "a"),
    ]
    assert [e.data_file.record_count for e in manifests["2e86d97d-599f-4f94-90e7-ae9bec31752d-m1.avro"]] == [
        1
    ]


def test_v1_evolved_spec(io: LocalFileIO) -> None:
    manifests = _entries(io, V1, 7808564301493661052)
    (new,) = manifests["ea47c808-527a-4b35-9cbe-363c650deae7-m0.avro"]
    assert new.data_file.spec_id == 1
    assert new.data_file.partition == (
        "d",
        1704067200000000,
        1704067200000000,
        Decimal("5.00"),
        Decimal("5.00"),
        1,
    )
    carried = manifests["ea47c808-527a-4b35-9cbe-363c650deae7-m1.avro"]
    assert [(e.status, e.snapshot_id) for e in carried] == [
        (EXISTING, 1967409767228715328),
        (EXISTING, 3263744913064645424),
        (EXISTING, 7289297375785087628),
    ]
    assert carried[1].data_file.partition == (
        "c",
        1683263105123456,
        1683263105123456,
        Decimal("-9.99"),
        Decimal("0.00"),
    )


def test_v1_header(io: LocalFileIO) -> None:
    header = read_manifest_header(io, str(FIXTURES / V1 / "ea47c808-527a-4b35-9cbe-363c650deae7-m0.avro"))
    assert (header.format_version, header.content, header.partition_spec_id) == (1, ManifestContent.DATA, 1)
    spec = partition_fields_from_json(json.loads(header.partition_spec_json or ""), spec_id=1)
    assert [f.name for f in spec.fields][-1] == "id_bucket_2"
    assert schema_from_json(json.loads(header.schema_json or "")).find_field("big") is not None


# ---- v2 ---------------------------------------------------------------------------------------

V2 = "java_v2_types"


def test_v2_partition_types_decode(io: LocalFileIO) -> None:
    first = _entries(io, V2, 4251334599523959428)["9f198852-a87c-4a28-a208-d50ca8c689cc-m0.avro"]
    nulls, full = (e.data_file for e in first)
    assert full.partition == (
        10,
        "abc",
        19737,
        Decimal("12.34"),
        True,
        1.5,
        2.5,
        b"\x01\x02",
        0,
        "ab",
        19737,
        473699,
        648,
        54,
    )
    assert nulls.partition == (None,) * 8 + (0,) + (None,) * 5
    second = _entries(io, V2, 6266493392729361796)["b81284e5-60bd-4bc5-aa8e-772be985b387-m0.avro"]
    values = second[0].data_file.partition
    assert values[:5] == (-5, "zz", -1, Decimal("-0.01"), False)
    assert math.isnan(values[5]) and math.isnan(values[6])
    assert values[7:] == (b"", 3, "zz", -1, 0, -1, -1)
    assert second[0].data_file.nan_value_counts == {9: 1, 10: 1}


def test_v2_sequence_number_inheritance(io: LocalFileIO) -> None:
    rows = read_manifest_list(io, _snapshot_list(V2, 8597020714743815552))
    assert [(r.sequence_number, r.min_sequence_number, r.added_snapshot_id) for r in rows] == [
        (2, 2, 6266493392729361796),
        (3, 1, 8597020714743815552),
    ]
    manifests = _entries(io, V2, 8597020714743815552)
    (added,) = manifests["b81284e5-60bd-4bc5-aa8e-772be985b387-m0.avro"]
    # ADDED entries store nulls: they inherit the manifest's sequence number
    assert (added.status, added.snapshot_id, added.sequence_number, added.file_sequence_number) == (
        ADDED,
        6266493392729361796,
        2,
        2,
    )
    existing, deleted = manifests["26d5472e-5951-4266-9629-3f0da5351bcd-m0.avro"]
    assert (
        existing.status,
        existing.snapshot_id,
        existing.sequence_number,
        existing.file_sequence_number,
    ) == (
        EXISTING,
        4251334599523959428,
        1,
        1,
    )
    assert (deleted.status, deleted.snapshot_id, deleted.sequence_number) == (DELETED, 8597020714743815552, 1)
    assert deleted.data_file.partition[1] == "abc"


def test_v2_partition_summaries_with_nan(io: LocalFileIO) -> None:
    (row,) = [
        r for r in read_manifest_list(io, _snapshot_list(V2, 6266493392729361796)) if r.sequence_number == 2
    ]
    i, s, d, dec, b, f, dbl, bin_, *_ = row.partitions or ()
    assert from_bytes(IntegerType(), i.lower_bound) == -5
    assert from_bytes(DateType(), d.upper_bound) == -1
    assert from_bytes(DecimalType(10, 2), dec.lower_bound) == Decimal("-0.01")
    assert (f.contains_nan, f.lower_bound, f.upper_bound) == (True, None, None)
    assert (dbl.contains_nan, dbl.contains_null) == (True, False)
    assert (bin_.lower_bound, s.contains_nan, b.lower_bound) == (b"", False, b"\x00")
    first = read_manifest_list(io, _snapshot_list(V2, 4251334599523959428))[0]
    assert first.partitions is not None and first.partitions[6].contains_null is True
    assert from_bytes(DoubleType(), first.partitions[6].lower_bound) == 2.5


V2D = "java_v2_deletes"


def test_v2_delete_manifests(io: LocalFileIO) -> None:
    rows = read_manifest_list(io, _snapshot_list(V2D, 462304026527327695))
    assert [(r.content, r.sequence_number) for r in rows] == [
        (ManifestContent.DATA, 3),
        (ManifestContent.DATA, 1),
        (ManifestContent.DELETES, 3),
        (ManifestContent.DELETES, 2),
    ]
    deletes = [e for r in rows[2:] for e in read_manifest(io, relocated(V2D, r))]
    assert [e.data_file.partition for e in deletes] == [("y",), ("x",)]
    for e in deletes:
        f = e.data_file
        assert isinstance(f, DeleteFile) and f.content == FileContent.POSITION_DELETES
        assert f.sort_order_id is None and f.referenced_data_file is None and f.equality_ids is None
        referenced = from_bytes(StringType(), (f.lower_bounds or {})[2147483546])
        assert referenced.startswith(f"/tmp/mf/v2b/db/t/data/part={f.partition[0]}/")
    assert [(e.sequence_number, e.file_sequence_number) for e in deletes] == [(3, 3), (2, 2)]
    data = list(read_manifest(io, relocated(V2D, rows[1])))
    assert sorted(e.data_file.partition[0] for e in data) == ["x", "y"]
    assert {e.data_file.record_count for e in data} == {2}


def test_v2_header_says_deletes(io: LocalFileIO) -> None:
    rows = read_manifest_list(io, _snapshot_list(V2D, 462304026527327695))
    header = read_manifest_header(io, fixture_path(V2D, rows[2].manifest_path))
    assert (header.format_version, header.content, header.partition_spec_id, header.schema_id) == (
        2,
        ManifestContent.DELETES,
        0,
        None,
    )


# ---- v3 ---------------------------------------------------------------------------------------

V3 = "java_v3_lineage"


@pytest.mark.parametrize(
    ("snapshot_id", "expected"),
    [
        (5561559028173203336, [0]),
        (4566603848442242192, [3, 0]),
        (8854273036953088011, [3, 0, None]),
        (4817501106831260316, [6, 8, 0, None]),
        (8124519065995844584, [6, 8, 9, None]),
    ],
)
def test_v3_manifest_first_row_ids(io: LocalFileIO, snapshot_id: int, expected: list[int | None]) -> None:
    assert [r.first_row_id for r in read_manifest_list(io, _snapshot_list(V3, snapshot_id))] == expected


def test_v3_first_row_id_inheritance_matches_what_java_stored(io: LocalFileIO) -> None:
    """ADDED files inherit first row ids; later Java wrote those inherited values into EXISTING
    and DELETED entries, so both must agree file by file."""
    inherited: dict[str, int | None] = {}
    stored: dict[str, int | None] = {}
    for snapshot_id in (5561559028173203336, 4566603848442242192, 4817501106831260316, 8124519065995844584):
        for entries in _entries(io, V3, snapshot_id).values():
            for e in entries:
                target = inherited if e.status == ADDED else stored
                target[_name(e)] = e.data_file.first_row_id
    assert stored  # EXISTING / DELETED entries were found
    for name, value in stored.items():
        assert inherited[name] == value
    first = _entries(io, V3, 5561559028173203336)["1bf864e4-c854-4c1a-b5e8-a2fb07ccf917-m0.avro"]
    assert [(e.data_file.partition, e.data_file.first_row_id) for e in first] == [(("y",), 0), (("x",), 1)]


def test_v3_deletion_vector(io: LocalFileIO) -> None:
    rows = read_manifest_list(io, _snapshot_list(V3, 8854273036953088011))
    (dv_entry,) = read_manifest(io, relocated(V3, rows[2]))
    dv = dv_entry.data_file
    assert isinstance(dv, DeleteFile) and dv.is_deletion_vector
    assert (dv.file_format, dv.content, dv.record_count) == (
        FileFormat.PUFFIN,
        FileContent.POSITION_DELETES,
        1,
    )
    assert (dv.content_offset, dv.content_size_in_bytes, dv.first_row_id) == (4, 42, None)
    assert (dv.referenced_data_file or "").endswith(
        "00000-2-c0bace55-b9ba-46ca-8d40-37107e2ac242-0-00001.parquet"
    )
    assert (dv_entry.sequence_number, dv_entry.file_sequence_number) == (3, 3)


def test_v3_existing_entries_keep_their_sequence_numbers(io: LocalFileIO) -> None:
    manifests = _entries(io, V3, 4817501106831260316)
    deleted, existing = manifests["d4e7cd77-426c-42a4-be7f-2f05c1a97c17-m0.avro"]
    assert (deleted.status, deleted.sequence_number, deleted.data_file.first_row_id) == (DELETED, 2, 3)
    assert (existing.status, existing.sequence_number, existing.snapshot_id) == (
        EXISTING,
        2,
        4566603848442242192,
    )
    (added,) = manifests["d4e7cd77-426c-42a4-be7f-2f05c1a97c17-m1.avro"]
    assert (added.sequence_number, added.data_file.first_row_id, added.data_file.partition) == (4, 6, ("z",))
