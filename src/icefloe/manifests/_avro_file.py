"""The Avro object container format, as manifests and manifest lists use it.

fastavro does the record encoding and decoding. Two things are done here by hand, on the
container header only (magic, metadata map, sync marker):

- Writing: fastavro writes the schema in its own normalized JSON. The header is rewritten so
  the file stores the schema exactly as given (Java's field order and compact form), which
  keeps our files byte-for-byte comparable with Java's.
- Reading: fastavro converts Avro logical types (date, timestamp-micros, decimal, uuid) to
  Python objects, which is lossy (timestamps beyond year 9999) and slow. Reading goes through
  a copy of the header whose schema has its logical types removed, so values arrive in their
  stored form (ints, bytes) and are converted once, knowing the Iceberg type.

Reading is on the planning hot path, so the per-file work is kept out of it: a writer schema is
parsed once per distinct schema text (every manifest of a spec shares one), and for the null
and deflate codecs (what Java and PyIceberg write) the container blocks are framed here and
each record of a block is decoded by one fastavro call with the parsed schema. Other codecs
go through ``fastavro.reader``.
"""

from __future__ import annotations

import contextlib
import gc
import io
import json
import os
import threading
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, BinaryIO

import fastavro
from fastavro import schemaless_reader

from icefloe.errors import InvalidManifestError, MissingDependencyError, ValidationError

__all__ = [
    "ENCODED_CODECS",
    "AvroHeader",
    "avro_codec",
    "codec_of",
    "corrupt_error",
    "count_records",
    "decompressed",
    "encode_header",
    "fastavro_parses",
    "frames",
    "gc_paused",
    "read_blocks",
    "read_header",
    "read_records",
    "reframed_blocks",
    "strip_logical_types",
    "write_encoded_records",
    "write_records",
]

MAGIC = b"Obj\x01"
SYNC_SIZE = 16
# Java's DataFileWriter default sync interval: fewer, larger blocks than fastavro's 16 kB.
SYNC_INTERVAL = 64_000

# Iceberg's write.avro.compression-codec names (and Avro's own) -> Avro codec names.
_CODECS = {
    "gzip": "deflate",
    "deflate": "deflate",
    "uncompressed": "null",
    "null": "null",
    "none": "null",
    "snappy": "snappy",
    "zstd": "zstandard",
    "zstandard": "zstandard",
}


# What fastavro needs installed for a codec (its own error names the package, not the codec).
_CODEC_PACKAGES = {"zstandard": "backports.zstd (Python < 3.14) or zstandard", "snappy": "cramjam"}
_available: dict[str, bool] = {"null": True, "deflate": True}


def _codec_works(codec: str) -> bool:
    if codec not in _available:
        probe = io.BytesIO()
        schema = {"type": "record", "name": "probe", "fields": [{"name": "a", "type": "int"}]}
        try:
            fastavro.writer(probe, schema, [{"a": 1}], codec=codec)
        except ValueError:
            _available[codec] = False
        else:
            _available[codec] = True
    return _available[codec]


def avro_codec(name: str) -> str:
    """The Avro codec name for an Iceberg ``write.avro.compression-codec`` value.

    Raises:
        ValidationError: an unknown codec.
        MissingDependencyError: the codec needs a package that is not installed.
    """
    codec = _CODECS.get(name.lower())
    if codec is None:
        raise ValidationError(
            f"unknown Avro compression codec {name!r}; expected gzip, zstd, snappy or uncompressed"
        )
    if not _codec_works(codec):
        raise MissingDependencyError(
            f"Avro compression codec {name!r} needs an extra package: install {_CODEC_PACKAGES.get(codec, codec)}"
        )
    return codec


@dataclass(frozen=True, slots=True)
class AvroHeader:
    """The header of an Avro container file: its metadata (shared: do not mutate), sync marker
    and where it ends."""

    metadata: dict[str, bytes]
    sync: bytes
    end: int

    def text(self, key: str) -> str | None:
        value = self.metadata.get(key)
        return None if value is None else value.decode("utf-8")


class _Truncated(Exception):
    pass


def _read_long(data: bytes | memoryview, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise _Truncated
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            break
        shift += 7
        if shift > 63:
            raise ValueError("varint longer than 10 bytes")
    return (result >> 1) ^ -(result & 1), pos


def _read_bytes(data: bytes | memoryview, pos: int) -> tuple[bytes, int]:
    length, pos = _read_long(data, pos)
    if length < 0:
        raise ValueError("negative length")
    end = pos + length
    if end > len(data):
        raise _Truncated
    return bytes(data[pos:end]), end


def _skip_metadata(data: bytes | memoryview, pos: int) -> int:
    """Where the header's metadata map (starting at ``pos``) ends, its lengths checked."""
    while True:
        count, pos = _read_long(data, pos)
        if count == 0:
            return pos
        if count < 0:  # a block with its byte size
            count = -count
            _, pos = _read_long(data, pos)
        for _ in range(2 * count):
            length, pos = _read_long(data, pos)
            if length < 0:
                raise ValueError("negative length")
            pos += length
            if pos > len(data):
                raise _Truncated


def _parse_metadata(data: bytes | memoryview, pos: int) -> dict[str, bytes]:
    metadata: dict[str, bytes] = {}
    while True:
        count, pos = _read_long(data, pos)
        if count == 0:
            return metadata
        if count < 0:
            count = -count
            _, pos = _read_long(data, pos)
        for _ in range(count):
            key, pos = _read_bytes(data, pos)
            value, pos = _read_bytes(data, pos)
            metadata[key.decode("utf-8")] = value


# Header bytes (after the magic, before the sync marker) -> their parsed metadata. Every
# manifest of one table and spec has the same header but for its sync marker.
_METADATA: dict[bytes, dict[str, bytes]] = {}
_METADATA_LIMIT = 256


def read_header(data: bytes | memoryview, location: str) -> AvroHeader:
    """Parse the container header. Its ``metadata`` may be shared with other headers of the
    same content: do not mutate it.

    Raises:
        InvalidManifestError: not an Avro file, or the header is truncated or corrupt.
    """
    if bytes(data[:4]) != MAGIC:
        what = "is empty" if len(data) == 0 else "is not an Avro file (bad magic bytes)"
        raise InvalidManifestError(f"{location} {what}", location=location)
    try:
        pos = _skip_metadata(data, 4)
        if pos + SYNC_SIZE > len(data):
            raise _Truncated
        raw = bytes(data[4:pos])
        metadata = _METADATA.get(raw)
        if metadata is None:
            metadata = _parse_metadata(data, 4)
            if len(_METADATA) >= _METADATA_LIMIT:
                _METADATA.clear()
            _METADATA[raw] = metadata
    except _Truncated:
        raise InvalidManifestError(
            f"{location} is truncated: the Avro header is incomplete", location=location
        ) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidManifestError(
            f"{location} has a corrupt Avro header: {exc}", location=location
        ) from None
    return AvroHeader(metadata, bytes(data[pos : pos + SYNC_SIZE]), pos + SYNC_SIZE)


def _write_long(out: bytearray, value: int) -> None:
    value = (value << 1) ^ (value >> 63)
    while value & ~0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def encode_header(metadata: Mapping[str, bytes], sync: bytes) -> bytes:
    """A container header: magic, the metadata map, the sync marker."""
    out = bytearray(MAGIC)
    if metadata:
        _write_long(out, len(metadata))
        for key, value in metadata.items():
            raw_key = key.encode("utf-8")
            _write_long(out, len(raw_key))
            out += raw_key
            _write_long(out, len(value))
            out += value
    _write_long(out, 0)
    out += sync
    return bytes(out)


def strip_logical_types(schema: Any) -> Any:
    """A copy of the schema without logical types (values are then read as stored)."""
    if isinstance(schema, dict):
        return {k: strip_logical_types(v) for k, v in schema.items() if k != "logicalType"}
    if isinstance(schema, list):
        return [strip_logical_types(v) for v in schema]
    return schema


@dataclass(frozen=True, slots=True)
class _ParsedSchema:
    """A writer schema, parsed once per distinct schema text.

    ``writer`` is the JSON as stored (logical types kept; shared: never mutate it). ``record``
    is fastavro's parsed form, logical types removed (None when fastavro rejects it).
    """

    writer: Any
    record: Any


# Schema text -> parsed schema. Bounded: a process reading tables of many schemas re-parses
# the ones it dropped, nothing more.
_PARSED: dict[bytes, _ParsedSchema] = {}
_PARSED_LIMIT = 512
_PARSED_LOCK = threading.Lock()


def _parsed_schema(header: AvroHeader, location: str) -> _ParsedSchema:
    raw = header.metadata.get("avro.schema")
    if raw is None:
        raise InvalidManifestError(f"{location} has no Avro schema in its header", location=location)
    found = _PARSED.get(raw)
    if found is not None:
        return found
    try:
        writer = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidManifestError(
            f"{location} has an invalid Avro schema: {exc}", location=location
        ) from None
    try:
        record = fastavro.parse_schema(strip_logical_types(writer))
    except Exception:
        # Not a schema fastavro accepts: readers that need the records report it (through
        # the reader path, naming the file); the JSON alone is still useful to them.
        record = None
    found = _ParsedSchema(writer, record)
    with _PARSED_LOCK:
        if len(_PARSED) >= _PARSED_LIMIT:
            _PARSED.clear()
        _PARSED[raw] = found
    return found


def schema_of(header: AvroHeader, location: str) -> Any:
    """The writer schema stored in the header, parsed (a shared object: do not mutate it).

    Raises:
        InvalidManifestError: the header has no schema or it is not JSON.
    """
    return _parsed_schema(header, location).writer


def fastavro_parses(header: AvroHeader, location: str) -> bool:
    """Whether fastavro accepts the header's schema (it rejects, for one, a named type defined
    twice, which PyIceberg 0.12 writes for two partition fields of one decimal or fixed type).

    Raises:
        InvalidManifestError: the header has no schema or it is not JSON.
    """
    return _parsed_schema(header, location).record is not None


def codec_of(header: AvroHeader, location: str) -> str:
    """The file's Avro codec (``null`` when the header names none).

    Raises:
        MissingDependencyError: the codec needs a package that is not installed.
    """
    codec = (header.metadata.get("avro.codec") or b"null").decode("utf-8", "replace")
    if codec in _CODEC_PACKAGES and not _codec_works(codec):
        raise MissingDependencyError(
            f"{location} is compressed with Avro codec {codec!r}: install {_CODEC_PACKAGES[codec]} to read it"
        )
    return codec


def read_records(
    data: bytes, header: AvroHeader, writer_schema: Any, location: str
) -> Iterator[dict[str, Any]]:
    """Decode the records after ``header``, with logical types left in their stored form.

    ``writer_schema`` must be the header's schema (``schema_of(header, location)``).

    Raises:
        MissingDependencyError: the file's codec needs a package that is not installed.
        InvalidManifestError: (also while iterating) a truncated or corrupt block, naming the file.
    """
    blocks = read_blocks(data, header, location)
    return (record for block in blocks for record in block)


def read_blocks(
    data: bytes, header: AvroHeader, location: str, *, chunk: int = 1 << 30
) -> Iterator[list[dict[str, Any]]]:
    """Decode the records after ``header``, in file order, as lists of at most ``chunk``
    records (a container block is split into chunks; a chunk never spans two blocks), with
    logical types left in their stored form.

    Small chunks let a caller consume records while they are still in the CPU cache and drop
    them, instead of holding a whole block of records in memory.

    Raises:
        MissingDependencyError: the file's codec needs a package that is not installed.
        InvalidManifestError: the schema is not JSON; (also while iterating) a truncated or
            corrupt block, naming the file.
    """
    codec = codec_of(header, location)
    parsed = _parsed_schema(header, location)
    if codec in ("null", "deflate") and isinstance(parsed.record, dict):
        return _fast_blocks(data, header, parsed.record, codec == "deflate", location, max(chunk, 1))
    return _reader_blocks(data, header, parsed.writer, location)


def frames(data: bytes, header: AvroHeader, location: str) -> Iterator[tuple[int, int, int]]:
    """The container blocks after ``header``: (record count, start, end) of each block's
    (compressed) bytes, every block's count, size and sync marker checked, up to the exact end
    of the file.

    Raises:
        InvalidManifestError: (while iterating) a truncated block, a negative count or size, or
            a wrong sync marker, naming the file.
    """
    pos = header.end
    size_of_data = len(data)
    sync = header.sync
    while pos < size_of_data:
        try:
            count, pos = _read_long(data, pos)
            size, pos = _read_long(data, pos)
        except _Truncated:
            raise corrupt_error(location, EOFError()) from None
        except ValueError as exc:
            raise corrupt_error(location, exc) from None
        end = pos + size
        if count < 0 or size < 0:
            raise corrupt_error(location, ValueError(f"negative block count or size at byte {pos}"))
        if end + SYNC_SIZE > size_of_data:
            raise corrupt_error(location, EOFError())
        if data[end : end + SYNC_SIZE] != sync:
            raise corrupt_error(location, ValueError("expected sync marker not found"))
        yield count, pos, end
        pos = end + SYNC_SIZE


def count_records(data: bytes, header: AvroHeader, location: str) -> int:
    """The number of records the file's blocks announce, after checking the framing of every
    block (see ``frames``) without decoding any: a decoder that does not check the container
    itself (the native one) is handed only files whose framing is sound.

    Raises:
        InvalidManifestError: a truncated block or a wrong sync marker, naming the file.
    """
    return sum(count for count, _, _ in frames(data, header, location))


def reframed_blocks(
    data: bytes, header: AvroHeader, location: str, sync: bytes
) -> tuple[int, list[bytes | memoryview]]:
    """The file's record count and its blocks, each with ``sync`` as its marker: the body of
    a container file whose header has that marker (another file's of the same schema and
    codec), after checking the framing of every block as ``count_records`` does.

    Raises:
        InvalidManifestError: a truncated block or a wrong sync marker, naming the file.
    """
    records = 0
    parts: list[bytes | memoryview] = []
    view = memoryview(data)
    block_start = header.end
    for count, _, end in frames(data, header, location):
        records += count
        parts.append(view[block_start:end])
        parts.append(sync)
        block_start = end + SYNC_SIZE
    return records, parts


def _bodies(data: bytes, header: AvroHeader, deflate: bool, location: str) -> Iterator[tuple[int, bytes]]:
    for count, start, end in frames(data, header, location):
        if count == 0:
            continue
        yield count, decompressed(data[start:end], deflate, location)


def decompressed(block: bytes, deflate: bool, location: str) -> bytes:
    """A block's records as encoded (``deflate``: the block is raw deflate, else stored).

    Raises:
        InvalidManifestError: the block does not decompress, naming the file.
    """
    if not deflate:
        return block
    try:
        return zlib.decompress(block, -15)
    except zlib.error as exc:
        raise corrupt_error(location, exc) from exc


def _fast_blocks(
    data: bytes, header: AvroHeader, record_schema: Any, deflate: bool, location: str, chunk: int
) -> Iterator[list[dict[str, Any]]]:
    for count, body in _bodies(data, header, deflate, location):
        stream = io.BytesIO(body)
        left = count
        while left:
            n = min(left, chunk)
            left -= n
            try:
                # One fastavro call per record: the schema is parsed already (its named types
                # travel with it), so a call costs little more than the decoding itself.
                with gc_paused():
                    records: list[dict[str, Any]] = [
                        schemaless_reader(stream, record_schema, None)  # type: ignore[misc]
                        for _ in range(n)
                    ]
            except Exception as exc:
                raise corrupt_error(location, exc) from exc
            yield records
        if stream.tell() != len(body):
            raise corrupt_error(
                location, ValueError(f"a block holds more than the {count} records it announces")
            )


def _reader_blocks(
    data: bytes, header: AvroHeader, writer_schema: Any, location: str
) -> Iterator[list[dict[str, Any]]]:
    """Other codecs: through ``fastavro.reader``, on a copy of the header without logical types."""
    metadata = dict(header.metadata)
    metadata["avro.schema"] = json.dumps(strip_logical_types(writer_schema)).encode("utf-8")
    stream = io.BytesIO(encode_header(metadata, header.sync) + data[header.end :])
    try:
        reader = fastavro.reader(stream)
    except Exception as exc:
        raise corrupt_error(location, exc) from exc
    batch: list[dict[str, Any]] = []
    for record in _iterate(reader, location):
        batch.append(record)
        if len(batch) >= 4096:
            yield batch
            batch = []
    if batch:
        yield batch


def corrupt_error(location: str, exc: Exception) -> InvalidManifestError:
    """The error for a file whose records do not decode (``EOFError``: truncated)."""
    if isinstance(exc, EOFError):
        return InvalidManifestError(f"{location} is truncated: an Avro block ends early", location=location)
    return InvalidManifestError(
        f"{location} is corrupt: cannot decode its Avro records ({type(exc).__name__}: {exc})",
        location=location,
    )


def _iterate(reader: Any, location: str) -> Iterator[dict[str, Any]]:
    try:
        yield from reader
    except Exception as exc:
        # fastavro reports corrupt data with many exception types (EOFError, ValueError,
        # zlib.error, IndexError, UnicodeDecodeError, its own SchemaResolutionError ...).
        raise corrupt_error(location, exc) from exc


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while encoding or decoding: records hold a small dict
    per metrics map entry, thousands per manifest, none of them in cycles, and the collections
    they trigger while they are alive cost a quarter of the write time and two thirds of the
    read time."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def write_records(
    stream: BinaryIO,
    schema: Mapping[str, Any],
    records: Iterable[Mapping[str, Any]],
    metadata: Mapping[str, str],
    *,
    codec: str,
    compression_level: int | None = None,
    location: str,
) -> int:
    """Write an Avro container file holding ``records`` to ``stream``; returns its length.

    The header holds ``avro.schema`` (``schema`` as compact JSON, keys in the given order),
    ``avro.codec`` and ``metadata``.

    Raises:
        ValidationError: a record does not fit the schema (naming the file).
    """
    buffer = io.BytesIO()
    try:
        parsed = fastavro.parse_schema(json.loads(json.dumps(schema)))
        with gc_paused():
            fastavro.writer(
                buffer,
                parsed,
                records,
                codec=codec,
                codec_compression_level=compression_level,
                sync_interval=SYNC_INTERVAL,
            )
    except ValidationError:
        raise
    except (TypeError, ValueError, KeyError, OverflowError, AttributeError) as exc:
        raise ValidationError(f"cannot write {location}: a value does not fit its Avro type ({exc})") from exc
    data = buffer.getvalue()
    written = read_header(data, location)
    content = encode_header(_header_metadata(schema, codec, metadata), written.sync) + data[written.end :]
    stream.write(content)
    return len(content)


def _header_metadata(schema: Mapping[str, Any], codec: str, metadata: Mapping[str, str]) -> dict[str, bytes]:
    """The header's metadata: the schema exactly as given (compact JSON), the codec, the rest."""
    header = {
        "avro.schema": json.dumps(schema, separators=(",", ":")).encode("utf-8"),
        "avro.codec": codec.encode("utf-8"),
    }
    header.update((key, value.encode("utf-8")) for key, value in metadata.items())
    return header


#: The codecs ``write_encoded_records`` writes.
ENCODED_CODECS = ("null", "deflate")


def write_encoded_records(
    stream: BinaryIO,
    schema: Mapping[str, Any],
    records: Iterable[bytes | tuple[int, bytes]],
    metadata: Mapping[str, str],
    *,
    codec: str,
    compression_level: int | None = None,
) -> int:
    """Write an Avro container file of records already encoded with ``schema`` (as
    ``fastavro.schemaless_writer`` encodes them) to ``stream``; returns its length. The header
    is ``write_records``'; blocks hold about ``SYNC_INTERVAL`` bytes of records, as fastavro's.

    ``records``: encoded records, and whole blocks as ``(record count, block bytes)``, the
    bytes compressed with ``codec`` (a block of another file of the same schema and codec,
    see ``frames``), written as they are, in order.
    ``codec``: one of ``ENCODED_CODECS`` (deflate as fastavro and Java write it: raw deflate).
    """
    if codec not in ENCODED_CODECS:
        raise ValidationError(f"write_encoded_records writes codecs {ENCODED_CODECS}, not {codec!r}")
    sync = os.urandom(SYNC_SIZE)
    head = encode_header(_header_metadata(schema, codec, metadata), sync)
    stream.write(head)
    length = len(head)
    level = zlib.Z_DEFAULT_COMPRESSION if compression_level is None else compression_level
    block: list[bytes] = []
    size = 0

    def write_block(count: int, body: bytes) -> int:
        frame = bytearray()
        _write_long(frame, count)
        _write_long(frame, len(body))
        stream.write(bytes(frame))
        stream.write(body)
        stream.write(sync)
        return len(frame) + len(body) + SYNC_SIZE

    def compressed(parts: list[bytes]) -> bytes:
        body = b"".join(parts)
        if codec == "deflate":
            compressor = zlib.compressobj(level, zlib.DEFLATED, -15)
            body = compressor.compress(body) + compressor.flush()
        return body

    for record in records:
        if isinstance(record, tuple):  # a whole block, compressed already
            if block:
                length += write_block(len(block), compressed(block))
                block = []
                size = 0
            length += write_block(*record)
            continue
        block.append(record)
        size += len(record)
        if size >= SYNC_INTERVAL:
            length += write_block(len(block), compressed(block))
            block = []
            size = 0
    if block:
        length += write_block(len(block), compressed(block))
    return length
