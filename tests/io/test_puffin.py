"""Puffin files: writing, reading, and refusing what is not Puffin (spec: puffin-spec.md)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pyarrow as pa
import pytest

from icefloe.errors import InvalidDataFileError, NoSuchFileError, ValidationError
from icefloe.io import LocalFileIO
from icefloe.io.puffin import PUFFIN_MAGIC, BlobMetadata, PuffinReader, PuffinWriter

JAVA_DV = Path(__file__).parent / "fixtures" / "java-1.9.2-dv.puffin"


def _write(path: Path, blobs: list[bytes], **kwargs: object) -> PuffinWriter:
    with PuffinWriter(LocalFileIO(), str(path), created_by="icefloe test", **kwargs) as writer:  # type: ignore[arg-type]
        for index, data in enumerate(blobs):
            writer.write_blob(data, type=f"t{index}", fields=[index], properties={"n": str(index)})
    return writer


def _footer_json(data: bytes) -> dict:
    (size,) = struct.unpack_from("<i", data, len(data) - 12)
    return json.loads(data[len(data) - 12 - size : len(data) - 12])


def test_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "f.puffin"
    writer = _write(path, [b"first", b"", b"third blob"])
    data = path.read_bytes()
    assert writer.file_size == len(data)
    assert data[:4] == PUFFIN_MAGIC and data[-4:] == PUFFIN_MAGIC
    assert [b.offset for b in writer.blobs] == [4, 9, 9]
    reader = PuffinReader(LocalFileIO(), str(path))
    metadata = reader.metadata
    assert metadata.properties == {"created-by": "icefloe test"}
    assert [(b.type, b.fields, b.offset, b.length, dict(b.properties)) for b in metadata.blobs] == [
        ("t0", (0,), 4, 5, {"n": "0"}),
        ("t1", (1,), 9, 0, {"n": "1"}),
        ("t2", (2,), 9, 10, {"n": "2"}),
    ]
    assert [blob for _, blob in reader.read_all()] == [b"first", b"", b"third blob"]
    assert reader.read_blob((4, 5)) == b"first"


def test_footer_layout_as_java_writes_it(tmp_path: Path) -> None:
    path = tmp_path / "f.puffin"
    _write(path, [b"x"])
    data = path.read_bytes()
    size, flags = struct.unpack_from("<ii", data, len(data) - 12)
    assert flags == 0  # uncompressed footer
    assert data[len(data) - 12 - size - 4 : len(data) - 12 - size] == PUFFIN_MAGIC
    footer = _footer_json(data)
    assert footer == {
        "blobs": [
            {
                "type": "t0",
                "fields": [0],
                "snapshot-id": -1,
                "sequence-number": -1,
                "offset": 4,
                "length": 1,
                "properties": {"n": "0"},
            }
        ],
        "properties": {"created-by": "icefloe test"},
    }
    assert list(footer["blobs"][0]) == [
        "type",
        "fields",
        "snapshot-id",
        "sequence-number",
        "offset",
        "length",
        "properties",
    ]


def test_reads_the_java_footer() -> None:
    metadata = PuffinReader(LocalFileIO(), str(JAVA_DV)).metadata
    (blob,) = metadata.blobs
    assert blob == BlobMetadata(
        type="deletion-vector-v1",
        fields=(2147483645,),
        snapshot_id=-1,
        sequence_number=-1,
        offset=4,
        length=8245,
        properties=blob.properties,
    )
    assert blob.properties["cardinality"] == "42771"
    assert metadata.properties["created-by"].startswith("Apache Iceberg 1.9.2")


def test_zstd_blobs(tmp_path: Path) -> None:
    path = tmp_path / "z.puffin"
    payload = b"abc" * 10_000
    with PuffinWriter(LocalFileIO(), str(path)) as writer:
        blob = writer.write_blob(payload, type="x", compression_codec="zstd")
    assert blob.length < len(payload) and blob.compression_codec == "zstd"
    reader = PuffinReader(LocalFileIO(), str(path))
    assert reader.metadata.properties == {}
    assert reader.read_blob(reader.metadata.blobs[0]) == payload
    with pytest.raises(ValidationError, match="lz4"):
        PuffinWriter(LocalFileIO(), str(tmp_path / "l.puffin")).write_blob(
            b"x", type="x", compression_codec="lz4"
        )


def test_compressed_blob_without_content_size_is_a_typed_error(tmp_path: Path) -> None:
    path = tmp_path / "lz4.puffin"
    frame = pa.Codec("lz4").compress(b"hello" * 100, asbytes=True)  # no content size in the frame
    with PuffinWriter(LocalFileIO(), str(path)) as writer:
        writer.write_blob(frame, type="x")
    reader = PuffinReader(LocalFileIO(), str(path))
    with pytest.raises(InvalidDataFileError, match=r"lz4\.puffin.*content size"):
        reader.read_blob((4, len(frame)), codec="lz4")


def test_writer_discards_on_error(tmp_path: Path) -> None:
    path = tmp_path / "gone.puffin"
    with pytest.raises(RuntimeError), PuffinWriter(LocalFileIO(), str(path)) as writer:
        writer.write_blob(b"x", type="t")
        raise RuntimeError("boom")
    assert not path.exists()
    writer = PuffinWriter(LocalFileIO(), str(path))
    writer.abort()
    assert not path.exists()
    with pytest.raises(ValidationError, match="closed"):
        writer.write_blob(b"x", type="t")
    with pytest.raises(ValidationError, match="not closed"):
        _ = PuffinWriter(LocalFileIO(), str(tmp_path / "open.puffin")).file_size


# ---- corrupt files ---------------------------------------------------------------------------


def _corrupt(tmp_path: Path, change: object) -> str:
    path = tmp_path / "bad.puffin"
    _write(path, [b"payload"])
    data = bytearray(path.read_bytes())
    data = change(data)  # type: ignore[operator]
    path.write_bytes(bytes(data))
    return str(path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d[:-1] + b"X", "not a Puffin file"),
        (lambda d: b"PFA2" + d[4:], "missing magic"),
        (lambda d: d[:10], "too short"),
        (lambda d: d[: len(d) - 12] + struct.pack("<ii", 10**6, 0) + b"PFA1", "declares a footer"),
        (
            lambda d: (
                d[: len(d) - 12 - _payload_size(d)] + b"{not json}".ljust(_payload_size(d)) + d[len(d) - 12 :]
            ),
            "not JSON",
        ),
        (
            lambda d: (
                d[: len(d) - 12 - _payload_size(d)]
                + b'{"blobs": [{"type": "x"}]}'.ljust(_payload_size(d))
                + d[len(d) - 12 :]
            ),
            "has no 'fields'",
        ),
        (
            lambda d: (
                d[: len(d) - 12 - _payload_size(d)]
                + b'{"blobs": {}}'.ljust(_payload_size(d))
                + d[len(d) - 12 :]
            ),
            "'blobs' must be a list",
        ),
    ],
    ids=["end-magic", "start-magic", "short", "footer-size", "json", "blob-field", "blobs-type"],
)
def test_corrupt_files_raise_typed_errors_naming_the_file(
    tmp_path: Path, change: object, message: str
) -> None:
    location = _corrupt(tmp_path, change)
    with pytest.raises(InvalidDataFileError, match=message) as raised:
        _ = PuffinReader(LocalFileIO(), location).metadata
    assert raised.value.location == location
    assert location in str(raised.value)


def _payload_size(data: bytearray) -> int:
    return int(struct.unpack_from("<i", data, len(data) - 12)[0])


def test_blob_range_outside_the_file(tmp_path: Path) -> None:
    path = tmp_path / "f.puffin"
    _write(path, [b"abc"])
    reader = PuffinReader(LocalFileIO(), str(path))
    with pytest.raises(InvalidDataFileError, match=r"has no bytes") as raised:
        reader.read_blob((4, 10_000))
    assert raised.value.location == str(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(NoSuchFileError):
        _ = PuffinReader(LocalFileIO(), str(tmp_path / "nope.puffin")).metadata
