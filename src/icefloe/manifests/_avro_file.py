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
"""

from __future__ import annotations

import contextlib
import gc
import io
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, BinaryIO

import fastavro

from icefloe.errors import InvalidManifestError, MissingDependencyError, ValidationError

__all__ = ["AvroHeader", "avro_codec", "read_header", "read_records", "write_records"]

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
    """The header of an Avro container file: its metadata, sync marker and where it ends."""

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


def read_header(data: bytes | memoryview, location: str) -> AvroHeader:
    """Parse the container header.

    Raises:
        InvalidManifestError: not an Avro file, or the header is truncated or corrupt.
    """
    if bytes(data[:4]) != MAGIC:
        what = "is empty" if len(data) == 0 else "is not an Avro file (bad magic bytes)"
        raise InvalidManifestError(f"{location} {what}", location=location)
    metadata: dict[str, bytes] = {}
    pos = 4
    try:
        while True:
            count, pos = _read_long(data, pos)
            if count == 0:
                break
            if count < 0:  # a block with its byte size, which we do not need
                count = -count
                _, pos = _read_long(data, pos)
            for _ in range(count):
                key, pos = _read_bytes(data, pos)
                value, pos = _read_bytes(data, pos)
                metadata[key.decode("utf-8")] = value
        if pos + SYNC_SIZE > len(data):
            raise _Truncated
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


def _encode_header(metadata: Mapping[str, bytes], sync: bytes) -> bytes:
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


def _strip_logical_types(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _strip_logical_types(v) for k, v in schema.items() if k != "logicalType"}
    if isinstance(schema, list):
        return [_strip_logical_types(v) for v in schema]
    return schema


def schema_of(header: AvroHeader, location: str) -> Any:
    """The writer schema stored in the header, parsed.

    Raises:
        InvalidManifestError: the header has no schema or it is not JSON.
    """
    raw = header.metadata.get("avro.schema")
    if raw is None:
        raise InvalidManifestError(f"{location} has no Avro schema in its header", location=location)
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidManifestError(
            f"{location} has an invalid Avro schema: {exc}", location=location
        ) from None


def read_records(
    data: bytes, header: AvroHeader, writer_schema: Any, location: str
) -> Iterator[dict[str, Any]]:
    """Decode the records after ``header``, with logical types left in their stored form.

    Raises:
        MissingDependencyError: the file's codec needs a package that is not installed.
        InvalidManifestError: (also while iterating) a truncated or corrupt block, naming the file.
    """
    codec = (header.metadata.get("avro.codec") or b"null").decode("utf-8", "replace")
    if codec in _CODEC_PACKAGES and not _codec_works(codec):
        raise MissingDependencyError(
            f"{location} is compressed with Avro codec {codec!r}: install {_CODEC_PACKAGES[codec]} to read it"
        )
    metadata = dict(header.metadata)
    metadata["avro.schema"] = json.dumps(_strip_logical_types(writer_schema)).encode("utf-8")
    stream = io.BytesIO(_encode_header(metadata, header.sync) + data[header.end :])
    try:
        reader = fastavro.reader(stream)
    except Exception as exc:
        raise _corrupt(location, exc) from exc
    return _iterate(reader, location)


def _corrupt(location: str, exc: Exception) -> InvalidManifestError:
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
        raise _corrupt(location, exc) from exc


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while encoding: writing creates (and drops) a small
    dict per metrics map entry, millions for a large manifest, none of them in cycles, and the
    collections they trigger cost about a quarter of the write time."""
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
        with _gc_paused():
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
    header = {
        "avro.schema": json.dumps(schema, separators=(",", ":")).encode("utf-8"),
        "avro.codec": codec.encode("utf-8"),
    }
    header.update((key, value.encode("utf-8")) for key, value in metadata.items())
    content = _encode_header(header, written.sync) + data[written.end :]
    stream.write(content)
    return len(content)
