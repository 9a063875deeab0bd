"""Reading files that are damaged, or written with other names and fewer fields than ours."""

from __future__ import annotations

import dataclasses
import uuid
from decimal import Decimal
from io import BytesIO
from pathlib import Path
from typing import Any

import fastavro
import pytest

from icefloe.errors import InvalidManifestError, NoSuchFileError
from icefloe.io import LocalFileIO
from icefloe.manifests import read_manifest, read_manifest_header, read_manifest_list
from icefloe.manifests._avro_file import read_header
from icefloe.spec.manifest import ManifestContent, ManifestEntryStatus, ManifestFile

from .conftest import FIXTURES, relocated

CASE = "java_v2_types"
JAVA_LIST = FIXTURES / CASE / "snap-8597020714743815552-1-26d5472e-5951-4266-9629-3f0da5351bcd.avro"


def _java_manifest(io: LocalFileIO) -> ManifestFile:
    return relocated(CASE, read_manifest_list(io, str(JAVA_LIST))[1])


def _copy(tmp_path: Path, data: bytes, name: str = "broken.avro") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def _header_end(data: bytes) -> int:
    return read_header(data, "x").end


@pytest.mark.parametrize("cut", ["in-header", "after-header", "in-block", "before-sync"])
def test_truncated_manifest_raises_naming_the_file(io: LocalFileIO, tmp_path: Path, cut: str) -> None:
    manifest = _java_manifest(io)
    data = Path(manifest.manifest_path).read_bytes()
    end = _header_end(data)
    size = {
        "in-header": end // 2,
        "after-header": end,
        "in-block": (end + len(data)) // 2,
        "before-sync": len(data) - 3,
    }
    path = _copy(tmp_path, data[: size[cut]])
    # the manifest list row knows the length: any truncation is caught
    with pytest.raises(InvalidManifestError, match="truncated") as info:
        list(read_manifest(io, dataclasses.replace(manifest, manifest_path=path)))
    assert info.value.location == path and path in str(info.value)
    # without a known length, damage inside the header or a block is still caught
    if cut != "after-header":
        with pytest.raises(InvalidManifestError) as info:
            list(read_manifest(io, dataclasses.replace(manifest, manifest_path=path, manifest_length=0)))
        assert path in str(info.value)


@pytest.mark.parametrize("cut", [0.3, 0.6, 0.95])
def test_truncated_manifest_list(io: LocalFileIO, tmp_path: Path, cut: float) -> None:
    data = JAVA_LIST.read_bytes()
    path = _copy(tmp_path, data[: int(len(data) * cut)])
    with pytest.raises(InvalidManifestError) as info:
        read_manifest_list(io, path)
    assert path in str(info.value)


def test_corrupt_block(io: LocalFileIO, tmp_path: Path) -> None:
    manifest = _java_manifest(io)
    data = bytearray(Path(manifest.manifest_path).read_bytes())
    middle = (_header_end(bytes(data)) + len(data)) // 2
    data[middle : middle + 8] = b"\xff" * 8
    path = _copy(tmp_path, bytes(data))
    with pytest.raises(InvalidManifestError, match=r"corrupt|truncated") as info:
        list(read_manifest(io, dataclasses.replace(manifest, manifest_path=path)))
    assert info.value.location == path


def test_wrong_sync_marker(io: LocalFileIO, tmp_path: Path) -> None:
    manifest = _java_manifest(io)
    data = bytearray(Path(manifest.manifest_path).read_bytes())
    data[-1] ^= 0xFF
    path = _copy(tmp_path, bytes(data))
    with pytest.raises(InvalidManifestError, match="corrupt"):
        list(read_manifest(io, dataclasses.replace(manifest, manifest_path=path)))


@pytest.mark.parametrize("content", [b"", b"PAR1 not avro at all", b"Obj\x01"])
def test_not_avro(io: LocalFileIO, tmp_path: Path, content: bytes) -> None:
    path = _copy(tmp_path, content)
    with pytest.raises(InvalidManifestError) as info:
        read_manifest_list(io, path)
    assert path in str(info.value)
    with pytest.raises(InvalidManifestError):
        read_manifest_header(io, path)


def test_missing_file(io: LocalFileIO, tmp_path: Path) -> None:
    with pytest.raises(NoSuchFileError):
        read_manifest_list(io, str(tmp_path / "nope.avro"))


# ---- other writers' schemas -------------------------------------------------------------------


def _kv(name: str, key_id: int, value_type: Any, *, swapped: bool = False) -> dict[str, Any]:
    fields = [
        {"name": "k", "type": "int", "field-id": key_id},
        {"name": "v", "type": value_type, "field-id": key_id + 1},
    ]
    return {
        "type": "array",
        "items": {"type": "record", "name": name, "fields": fields[::-1] if swapped else fields},
    }


# Names differ from ours everywhere; optional fields are missing; a map record stores its value
# before its key; ``record_count`` carries no id and is found by its spec name.
OTHER_SCHEMA = {
    "type": "record",
    "name": "entry",
    "fields": [
        {"name": "st", "type": "int", "field-id": 0},
        {
            "name": "df",
            "field-id": 2,
            "type": {
                "type": "record",
                "name": "file",
                "fields": [
                    {"name": "path", "type": "string", "field-id": 100},
                    {"name": "fmt", "type": "string", "field-id": 101},
                    {
                        "name": "part",
                        "field-id": 102,
                        "type": {
                            "type": "record",
                            "name": "p",
                            "fields": [
                                {
                                    "name": "day_",
                                    "type": ["null", {"type": "int", "logicalType": "date"}],
                                    "field-id": 1000,
                                },
                                {
                                    "name": "amount",
                                    "type": [
                                        "null",
                                        {
                                            "type": "bytes",
                                            "logicalType": "decimal",
                                            "precision": 9,
                                            "scale": 2,
                                        },
                                    ],
                                    "field-id": 1001,
                                },
                                {
                                    "name": "id",
                                    "type": ["null", {"type": "string", "logicalType": "uuid"}],
                                    "field-id": 1002,
                                },
                            ],
                        },
                    },
                    {"name": "record_count", "type": "long"},
                    {"name": "bytes", "type": "long", "field-id": 104},
                    {"name": "lo", "type": ["null", _kv("kv1", 126, "bytes", swapped=True)], "field-id": 125},
                    {"name": "nulls", "type": ["null", {"type": "map", "values": "long"}], "field-id": 110},
                    {
                        "name": "seq",
                        "type": ["null", "long"],
                        "field-id": 3,
                    },  # not a data_file field: ignored
                ],
            },
        },
        {"name": "snap", "type": ["null", "long"], "field-id": 1},
        {"name": "data_seq", "type": ["null", "long"], "field-id": 3},
    ],
}


def test_reads_by_field_id_whatever_the_names(io: LocalFileIO, tmp_path: Path) -> None:
    records = [
        {
            "st": 1,
            "snap": None,
            "data_seq": None,
            "df": {
                "path": "s3://b/f1.parquet",
                "fmt": "parquet",
                "record_count": 7,
                "bytes": 70,
                "seq": 1,
                "part": {"day_": 19000, "amount": b"\x04\xd2", "id": "f79c3e09-677c-4bbd-a479-3f349cb785e7"},
                "lo": [{"v": b"\x01", "k": 1}, {"v": b"\x02", "k": 2}],
                "nulls": {"1": 0, "2": 5},
            },
        },
        {
            "st": 0,
            "snap": 5,
            "data_seq": 2,
            "df": {
                "path": "s3://b/f2.parquet",
                "fmt": "ORC",
                "record_count": 1,
                "bytes": 10,
                "seq": None,
                "part": {"day_": None, "amount": None, "id": None},
                "lo": None,
                "nulls": None,
            },
        },
    ]
    buffer = BytesIO()
    fastavro.writer(buffer, fastavro.parse_schema(OTHER_SCHEMA), records, metadata={"format-version": "2"})
    path = _copy(tmp_path, buffer.getvalue(), "other.avro")
    manifest = ManifestFile(path, len(buffer.getvalue()), 4, ManifestContent.DATA, 9, 2, 42)
    first, second = read_manifest(io, manifest)
    assert (first.status, first.snapshot_id, first.sequence_number, first.file_sequence_number) == (
        ManifestEntryStatus.ADDED,
        42,
        9,
        9,
    )
    f = first.data_file
    assert (f.file_path, f.file_format.value, f.record_count, f.file_size_in_bytes, f.spec_id) == (
        "s3://b/f1.parquet",
        "PARQUET",
        7,
        70,
        4,
    )
    assert f.partition == (19000, Decimal("12.34"), uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"))
    assert f.lower_bounds == {1: b"\x01", 2: b"\x02"}
    assert f.null_value_counts == {1: 0, 2: 5}
    assert f.upper_bounds is None and f.column_sizes is None and f.split_offsets is None
    assert (second.status, second.snapshot_id, second.sequence_number, second.file_sequence_number) == (
        ManifestEntryStatus.EXISTING,
        5,
        2,
        None,  # not ADDED: nothing inherited
    )
    assert second.data_file.partition == (None, None, None)
    assert read_manifest_header(io, path).content == ManifestContent.DATA


def test_missing_required_field(io: LocalFileIO, tmp_path: Path) -> None:
    schema = {
        "type": "record",
        "name": "manifest_entry",
        "fields": [
            {"name": "status", "type": "int", "field-id": 0},
            {
                "name": "data_file",
                "field-id": 2,
                "type": {
                    "type": "record",
                    "name": "r2",
                    "fields": [
                        {"name": "file_format", "type": "string", "field-id": 101},
                    ],
                },
            },
        ],
    }
    buffer = BytesIO()
    fastavro.writer(
        buffer, fastavro.parse_schema(schema), [{"status": 1, "data_file": {"file_format": "PARQUET"}}]
    )
    path = _copy(tmp_path, buffer.getvalue())
    with pytest.raises(InvalidManifestError, match="file_path") as info:
        read_manifest(io, ManifestFile(path, 0, 0))
    assert info.value.field == "file_path" and info.value.location == path


def test_manifest_list_missing_required_field(io: LocalFileIO, tmp_path: Path) -> None:
    schema = {
        "type": "record",
        "name": "manifest_file",
        "fields": [
            {"name": "manifest_path", "type": "string", "field-id": 500},
            {"name": "manifest_length", "type": "long", "field-id": 501},
        ],
    }
    buffer = BytesIO()
    fastavro.writer(buffer, fastavro.parse_schema(schema), [{"manifest_path": "m", "manifest_length": 1}])
    path = _copy(tmp_path, buffer.getvalue())
    with pytest.raises(InvalidManifestError, match="partition_spec_id") as info:
        read_manifest_list(io, path)
    assert info.value.field == "partition_spec_id"
