"""Puffin files (``/format/puffin-spec.md``): blobs plus a JSON footer describing them.

Layout: ``Magic Blob1 ... BlobN Footer`` where the footer is
``Magic FooterPayload FooterPayloadSize Flags Magic``: the payload is the UTF-8 JSON
``FileMetadata`` (``blobs``, ``properties``), optionally LZ4-compressed (flag bit 0); sizes and
flags are 4-byte little-endian integers. Magic is ``PFA1``.

:class:`PuffinWriter` writes a file through a FileIO (blobs uncompressed, or zstd, and an
uncompressed footer, as Java writes by default); :class:`PuffinReader` reads the footer and
blobs (uncompressed, zstd or lz4, as the spec allows). Every malformed input raises
``InvalidDataFileError`` naming the file.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, BinaryIO

import pyarrow as pa

from icefloe.errors import InvalidDataFileError, ValidationError
from icefloe.io.fileio import FileIO, InputFile, OutputFile

__all__ = [
    "CREATED_BY_PROPERTY",
    "PUFFIN_MAGIC",
    "BlobMetadata",
    "PuffinFileMetadata",
    "PuffinReader",
    "PuffinWriter",
]

PUFFIN_MAGIC = b"PFA1"
#: The file property naming the writing application (spec: "Common properties").
CREATED_BY_PROPERTY = "created-by"
_FOOTER_TRAILER = 12  # payload size, flags, magic
_FLAG_COMPRESSED = 1
_CODECS = ("lz4", "zstd")


@dataclass(frozen=True, slots=True)
class BlobMetadata:
    """One blob's entry in the footer (spec: ``BlobMetadata``).

    Attributes:
        type: the blob type, e.g. ``deletion-vector-v1``.
        fields: the field ids the blob was computed for.
        snapshot_id: the snapshot it was computed from (-1 when inherited, as for DVs).
        sequence_number: that snapshot's sequence number (-1 when inherited).
        offset: where the blob's bytes start in the file.
        length: the blob's length in the file (after compression).
        compression_codec: ``lz4``, ``zstd`` or None (uncompressed).
        properties: the blob's string properties.
    """

    type: str
    fields: tuple[int, ...]
    snapshot_id: int
    sequence_number: int
    offset: int
    length: int
    compression_codec: str | None = None
    properties: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def to_json(self) -> dict[str, Any]:
        """The footer JSON object, keys in Java's order."""
        result: dict[str, Any] = {
            "type": self.type,
            "fields": list(self.fields),
            "snapshot-id": self.snapshot_id,
            "sequence-number": self.sequence_number,
            "offset": self.offset,
            "length": self.length,
        }
        if self.compression_codec is not None:
            result["compression-codec"] = self.compression_codec
        if self.properties:
            result["properties"] = dict(self.properties)
        return result


@dataclass(frozen=True, slots=True)
class PuffinFileMetadata:
    """The footer of a Puffin file: its blobs in file order and the file properties."""

    blobs: tuple[BlobMetadata, ...]
    properties: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def to_json(self) -> dict[str, Any]:
        result: dict[str, Any] = {"blobs": [b.to_json() for b in self.blobs]}
        if self.properties:
            result["properties"] = dict(self.properties)
        return result


# ---------------------------------------------------------------------------------------------
# writing


class PuffinWriter:
    """Writes one Puffin file: blobs one after the other, then the footer on :meth:`close`.

    The file is published when closed (FileIO output streams publish on close); leaving a
    ``with`` block by an exception discards it. Use as a context manager or call
    :meth:`close` / :meth:`abort` yourself.
    """

    def __init__(
        self,
        io: FileIO | OutputFile,
        location: str | None = None,
        *,
        created_by: str | None = None,
        properties: Mapping[str, str] | None = None,
        overwrite: bool = False,
    ):
        """Open ``location`` for writing.

        Args:
            io: the FileIO to write through, or the ``OutputFile`` to write (an encrypting one
                makes an encrypted Puffin file; offsets and sizes are then the plaintext's).
            location: the Puffin file to create (with a FileIO).
            created_by: the ``created-by`` file property (the writing application and version).
            properties: other file properties.
            overwrite: replace an existing file instead of failing.
        """
        output = _output_file(io, location)
        self.location = output.location
        self._properties = dict(properties or {})
        if created_by is not None:
            self._properties[CREATED_BY_PROPERTY] = created_by
        self._blobs: list[BlobMetadata] = []
        self._stream: BinaryIO | None = output.create(overwrite=overwrite)
        self._position = 0
        self._size: int | None = None
        self._write(PUFFIN_MAGIC)

    def _write(self, data: bytes) -> None:
        assert self._stream is not None
        self._stream.write(data)
        self._position += len(data)

    @property
    def blobs(self) -> tuple[BlobMetadata, ...]:
        """The blobs written so far."""
        return tuple(self._blobs)

    @property
    def file_size(self) -> int:
        """The file's size in bytes (known once closed)."""
        if self._size is None:
            raise ValidationError(f"Puffin file {self.location} is not closed yet: its size is unknown")
        return self._size

    def write_blob(
        self,
        data: bytes,
        *,
        type: str,
        fields: Sequence[int] = (),
        snapshot_id: int = -1,
        sequence_number: int = -1,
        properties: Mapping[str, str] | None = None,
        compression_codec: str | None = None,
    ) -> BlobMetadata:
        """Append one blob; returns its footer entry (offset and length in the file).

        Args:
            data: the blob's bytes, uncompressed.
            type: the blob type.
            fields: field ids the blob was computed for.
            snapshot_id: -1 when the snapshot is not known yet (deletion vectors).
            sequence_number: -1 when not known yet.
            properties: the blob's properties.
            compression_codec: None, or ``zstd`` (``lz4`` is read but not written: pyarrow's
                LZ4 frames omit the content size the spec requires).

        Raises:
            ValidationError: the writer is closed, or the codec cannot be written.
        """
        if self._stream is None:
            raise ValidationError(f"Puffin file {self.location} is closed")
        stored = data
        if compression_codec is not None:
            if compression_codec != "zstd":
                raise ValidationError(
                    f"Puffin blobs can be written uncompressed or zstd, not {compression_codec!r}"
                )
            stored = _compress_zstd(data)
        blob = BlobMetadata(
            type=type,
            fields=tuple(fields),
            snapshot_id=snapshot_id,
            sequence_number=sequence_number,
            offset=self._position,
            length=len(stored),
            compression_codec=compression_codec,
            properties=MappingProxyType(dict(properties or {})),
        )
        self._write(stored)
        self._blobs.append(blob)
        return blob

    def close(self) -> PuffinFileMetadata:
        """Write the footer and publish the file; returns the footer. Closing twice is a no-op."""
        metadata = PuffinFileMetadata(tuple(self._blobs), MappingProxyType(dict(self._properties)))
        if self._stream is None:
            return metadata
        payload = json.dumps(metadata.to_json(), separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        self._write(PUFFIN_MAGIC + payload + struct.pack("<ii", len(payload), 0) + PUFFIN_MAGIC)
        stream, self._stream = self._stream, None
        stream.close()
        self._size = self._position
        return metadata

    def abort(self) -> None:
        """Discard the file (nothing is published)."""
        stream, self._stream = self._stream, None
        if stream is None:
            return
        discard = getattr(stream, "abort", None)
        if callable(discard):
            discard()
        else:  # pragma: no cover - every icefloe FileIO stream can abort
            stream.close()

    def __enter__(self) -> PuffinWriter:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


# ---------------------------------------------------------------------------------------------
# reading


class PuffinReader:
    """Reads the footer and blobs of one Puffin file.

    Nothing is read until asked: :attr:`metadata` reads the footer (once), :meth:`read_blob`
    reads one blob by its offset and length (a DV's ``content_offset`` /
    ``content_size_in_bytes`` are exactly those).
    """

    def __init__(self, io: FileIO | InputFile, location: str | None = None, *, length: int | None = None):
        """Args:
        io: the FileIO to read through, or the ``InputFile`` to read (a decrypting one reads
            an encrypted Puffin file).
        location: the Puffin file (with a FileIO).
        length: the file's size when known (saves a request on object stores).
        """
        if isinstance(io, InputFile):
            self._input: InputFile = io
        else:
            if location is None:
                raise ValidationError("PuffinReader(io, location): the file's location is missing")
            self._input = io.new_input(location, length=length)
        self.location = self._input.location
        self._length = length
        self._metadata: PuffinFileMetadata | None = None

    def _file_length(self) -> int:
        if self._length is None:
            self._length = self._input.length()
        return self._length

    def _read_range(self, offset: int, length: int) -> bytes:
        if offset < 0 or length < 0 or offset + length > self._file_length():
            raise InvalidDataFileError(
                f"Puffin file {self.location} ({self._file_length()} bytes) has no bytes "
                f"{offset}..{offset + length}",
                location=self.location,
            )
        with self._input.open() as stream:
            stream.seek(offset)
            data = _read_fully(stream, length)
        if len(data) != length:
            raise InvalidDataFileError(
                f"Puffin file {self.location} is truncated: read {len(data)} of {length} bytes at {offset}",
                location=self.location,
            )
        return data

    @property
    def metadata(self) -> PuffinFileMetadata:
        """The footer.

        Raises:
            InvalidDataFileError: the file is not Puffin (magic), is truncated, or its footer is
                malformed, naming the file.
            NoSuchFileError: the file does not exist.
        """
        if self._metadata is None:
            self._metadata = self._read_footer()
        return self._metadata

    def _read_footer(self) -> PuffinFileMetadata:
        size = self._file_length()
        minimum = len(PUFFIN_MAGIC) * 2 + _FOOTER_TRAILER
        if size < minimum:
            raise InvalidDataFileError(
                f"{self.location} is not a Puffin file: {size} bytes is too short", location=self.location
            )
        # Read the trailer, and with luck the whole footer, in one request.
        tail_length = min(size, 16 * 1024)
        tail = self._read_range(size - tail_length, tail_length)
        if tail[-4:] != PUFFIN_MAGIC:
            raise InvalidDataFileError(
                f"{self.location} is not a Puffin file: it ends with {tail[-4:]!r}, not {PUFFIN_MAGIC!r}",
                location=self.location,
            )
        payload_size, flags = struct.unpack_from("<ii", tail, len(tail) - _FOOTER_TRAILER)
        footer_size = payload_size + len(PUFFIN_MAGIC) + _FOOTER_TRAILER
        if payload_size < 0 or footer_size + len(PUFFIN_MAGIC) > size:
            raise InvalidDataFileError(
                f"Puffin file {self.location} declares a footer payload of {payload_size} bytes "
                f"in a file of {size}",
                location=self.location,
            )
        if footer_size <= tail_length:
            footer = tail[tail_length - footer_size :]
        else:
            footer = self._read_range(size - footer_size, footer_size)
        head = self._read_range(0, len(PUFFIN_MAGIC)) if size > tail_length else tail[:4]
        if head != PUFFIN_MAGIC or footer[:4] != PUFFIN_MAGIC:
            raise InvalidDataFileError(
                f"{self.location} is not a Puffin file: missing magic at its start or its footer",
                location=self.location,
            )
        payload = footer[4 : 4 + payload_size]
        if flags & _FLAG_COMPRESSED:
            payload = _decompress(payload, "lz4", self.location)
        try:
            document = json.loads(payload.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            raise InvalidDataFileError(
                f"Puffin file {self.location} has a footer that is not JSON: {e}", location=self.location
            ) from None
        return _parse_file_metadata(document, self.location)

    def read_blob(self, blob: BlobMetadata | tuple[int, int], *, codec: str | None = None) -> bytes:
        """The (decompressed) bytes of a blob, given its footer entry or ``(offset, length)``.

        Args:
            blob: a :class:`BlobMetadata` from :attr:`metadata`, or ``(offset, length)`` (the
                footer is then not read).
            codec: the compression of an ``(offset, length)`` blob (None: uncompressed).

        Raises:
            InvalidDataFileError: the range lies outside the file, or decompression fails.
        """
        if isinstance(blob, BlobMetadata):
            offset, length, codec = blob.offset, blob.length, blob.compression_codec
        else:
            offset, length = blob
        data = self._read_range(offset, length)
        return _decompress(data, codec, self.location) if codec is not None else data

    def read_all(self) -> list[tuple[BlobMetadata, bytes]]:
        """Every blob with its (decompressed) bytes, in file order."""
        return [(blob, self.read_blob(blob)) for blob in self.metadata.blobs]


def _output_file(io: FileIO | OutputFile, location: str | None) -> OutputFile:
    if isinstance(io, OutputFile):
        return io
    if location is None:
        raise ValidationError("PuffinWriter(io, location): the file's location is missing")
    return io.new_output(location)


def _read_fully(stream: BinaryIO, length: int) -> bytes:
    parts = []
    remaining = length
    while remaining > 0:
        chunk = stream.read(remaining)
        if not chunk:
            break
        parts.append(chunk)
        remaining -= len(chunk)
    return b"".join(parts)


def _parse_file_metadata(document: Any, location: str) -> PuffinFileMetadata:
    def fail(what: str) -> InvalidDataFileError:
        return InvalidDataFileError(
            f"Puffin file {location} has an invalid footer: {what}", location=location
        )

    if not isinstance(document, dict) or not isinstance(document.get("blobs"), list):
        raise fail("'blobs' must be a list")
    blobs = []
    for index, raw in enumerate(document["blobs"]):
        if not isinstance(raw, dict):
            raise fail(f"blob {index} is not an object")
        try:
            blob_type = raw["type"]
            fields = raw["fields"]
            offset = raw["offset"]
            length = raw["length"]
        except KeyError as e:
            raise fail(f"blob {index} has no '{e.args[0]}'") from None
        if not isinstance(blob_type, str) or not isinstance(fields, list):
            raise fail(f"blob {index} has a malformed 'type' or 'fields'")
        numbers = [*fields, offset, length, raw.get("snapshot-id", -1), raw.get("sequence-number", -1)]
        if not all(isinstance(n, int) and not isinstance(n, bool) for n in numbers):
            raise fail(f"blob {index} has a non-integer field id, offset, length or id")
        codec = raw.get("compression-codec")
        if codec is not None and codec not in _CODECS:
            raise fail(f"blob {index} has an unknown compression codec {codec!r}")
        blobs.append(
            BlobMetadata(
                type=blob_type,
                fields=tuple(fields),
                snapshot_id=raw.get("snapshot-id", -1),
                sequence_number=raw.get("sequence-number", -1),
                offset=offset,
                length=length,
                compression_codec=codec,
                properties=MappingProxyType(_string_map(raw.get("properties"), fail, f"blob {index}")),
            )
        )
    properties = _string_map(document.get("properties"), fail, "the file")
    return PuffinFileMetadata(tuple(blobs), MappingProxyType(properties))


def _string_map(value: Any, fail: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise fail(f"the properties of {what} are not a map of strings")
    return dict(value)


# ---------------------------------------------------------------------------------------------
# compression (single frames with their content size, decompressed with pyarrow's codecs)


def _compress_zstd(data: bytes) -> bytes:
    compressed: bytes = pa.Codec("zstd").compress(data, asbytes=True)
    return compressed


def _decompress(data: bytes, codec: str | None, location: str) -> bytes:
    if codec not in _CODECS:
        raise InvalidDataFileError(
            f"Puffin file {location}: unknown compression codec {codec!r}", location=location
        )
    try:
        size = _lz4_content_size(data) if codec == "lz4" else _zstd_content_size(data)
        result: bytes = pa.Codec(codec).decompress(data, decompressed_size=size, asbytes=True)
    except (ValueError, OSError, pa.ArrowException) as e:
        raise InvalidDataFileError(
            f"Puffin file {location}: cannot decompress {codec} data: {e}", location=location
        ) from None
    return result


def _lz4_content_size(frame: bytes) -> int:
    if len(frame) < 7 or frame[:4] != b"\x04\x22\x4d\x18":
        raise ValueError("not an LZ4 frame")
    if not frame[4] & 0x08:
        raise ValueError("the LZ4 frame does not record its content size")
    (size,) = struct.unpack_from("<Q", frame, 6)
    return int(size)


def _zstd_content_size(frame: bytes) -> int:
    if len(frame) < 5 or frame[:4] != b"\x28\xb5\x2f\xfd":
        raise ValueError("not a zstd frame")
    descriptor = frame[4]
    size_flag = descriptor >> 6
    single_segment = (descriptor >> 5) & 1
    dictionary_bytes = (0, 1, 2, 4)[descriptor & 3]
    position = 5 + (0 if single_segment else 1) + dictionary_bytes
    width = (1 if single_segment else 0, 2, 4, 8)[size_flag]
    if width == 0:
        raise ValueError("the zstd frame does not record its content size")
    if position + width > len(frame):
        raise ValueError("truncated zstd frame header")
    value = int.from_bytes(frame[position : position + width], "little")
    return value + 256 if width == 2 else value
