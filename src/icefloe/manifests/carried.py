"""Manifest entries carried into a new manifest with their ``data_file`` record as stored.

Merging manifests (``commit.manifest-merge.enabled``) rewrites every entry of the manifests it
merges: carried over as EXISTING, with its snapshot id and sequence numbers written out. The
``data_file`` record itself (path, partition, metrics maps: most of an entry's bytes) does not
change. Decoding it into a ``DataFile`` and encoding it again cost about 100 us per entry, so a
merge every hundred commits grew with the table (400 ms at 2,700 files). When the file's Avro
encoding of ``data_file`` is the one the new manifest writes (the same fields, by field id, in
the same order, with the same encodings: what one writer of one format version writes for one
partition spec), its bytes are copied instead; the entry's leading fields (status, snapshot id,
sequence numbers) are decoded, and written again by the new manifest's writer.

A block whose entries are all EXISTING, with their snapshot ids and sequence numbers written
out, is what the merge writes for them byte for byte: the caller's ``BlockCheck`` (the table
layer decodes the manifest natively to answer it, ``table/snapshots/_existing_blocks.py``)
lets such blocks come whole (``CarriedBlock``), copied still compressed. A manifest merged
again a hundred commits later is mostly such blocks, so merging costs what its new entries
cost, not what the table's do.

Everything else (another format version, a partition type whose encoding changed, v3's row
lineage, codecs other than null and deflate) goes through ``read_manifest`` as before: the
caller gets None and decodes the entries.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from io import BytesIO
from typing import Any

import fastavro
from fastavro import schemaless_reader

from icefloe.errors import InvalidManifestError
from icefloe.io import FileIO
from icefloe.manifests._avro_file import (
    ENCODED_CODECS,
    AvroHeader,
    codec_of,
    corrupt_error,
    decompressed,
    frames,
    gc_paused,
    read_header,
    schema_of,
    strip_logical_types,
)
from icefloe.manifests.reader import EntryLayout, Inheritance, entry_layout, read_manifest_bytes
from icefloe.serde.avro_schemas import FIELD_ID_PROP
from icefloe.spec.manifest import FileContent, ManifestContent, ManifestEntryStatus, ManifestFile
from icefloe.spec.types import StructType

__all__ = [
    "BlockCheck",
    "BlockFacts",
    "CarriedBlock",
    "CarriedEntry",
    "carried_entries",
    "encoding_of",
    "leading_fields_schema",
]

_STATUSES = tuple(ManifestEntryStatus)
_CONTENTS = tuple(FileContent)


@dataclass(frozen=True, slots=True)
class CarriedEntry:
    """A manifest entry, inheritance applied, with its ``data_file`` record as encoded.

    Attributes:
        status, snapshot_id, sequence_number, file_sequence_number: as ``ManifestEntry``'s.
        content, file_path, record_count, partition: of the file (what a manifest writer
            checks and summarizes); ``partition`` in icefloe values, in partition-type order.
        encoded_file: the Avro encoding of the ``data_file`` record.
    """

    status: ManifestEntryStatus
    snapshot_id: int | None
    sequence_number: int | None
    file_sequence_number: int | None
    content: FileContent
    file_path: str
    record_count: int
    partition: tuple[Any, ...]
    encoded_file: bytes


# ---- encodings ------------------------------------------------------------------------------

# Avro primitives by how they are encoded: int and long are both zig-zag varints, string and
# bytes both length-prefixed.
_PRIMITIVES = {
    "null": "null",
    "boolean": "boolean",
    "int": "varint",
    "long": "varint",
    "float": "float",
    "double": "double",
    "bytes": "bytes",
    "string": "bytes",
}


def encoding_of(schema: Any) -> Any:
    """What decides the bytes of a value of ``schema``: its structure and primitive encodings,
    each record field named by its field id (its name when it has none). Two schemas with the
    same encoding read each other's bytes as the same values of the same fields; names, docs
    and logical types do not matter.

    Raises:
        KeyError, TypeError: ``schema`` is not a valid Avro schema (an unknown named type).
    """
    return _encoding(schema, {})


def _encoding(schema: Any, named: dict[str, Any]) -> Any:
    if isinstance(schema, str):
        if schema in _PRIMITIVES:
            return _PRIMITIVES[schema]
        return named[schema]  # a named type defined earlier (KeyError: undefined)
    if isinstance(schema, list):
        return ("union", tuple(_encoding(branch, named) for branch in schema))
    kind = schema["type"]
    if kind == "record":
        fields = tuple(
            (f.get(FIELD_ID_PROP, f["name"]), _encoding(f["type"], named)) for f in schema["fields"]
        )
        result: Any = ("record", fields)
    elif kind == "array":
        return ("array", _encoding(schema["items"], named))
    elif kind == "map":
        return ("map", _encoding(schema["values"], named))
    elif kind == "fixed":
        result = ("fixed", int(schema["size"]))
    elif kind == "enum":
        result = ("enum", tuple(schema["symbols"]))
    else:  # a primitive, perhaps with a logical type
        return _encoding(kind, named)
    if "name" in schema:
        named[schema["name"]] = result
        if "namespace" in schema:
            named[f"{schema['namespace']}.{schema['name']}"] = result
    return result


@dataclass(frozen=True, slots=True)
class _EntryReader:
    """How to read one manifest schema's entries in two parts: the leading fields, then the
    ``data_file`` record (its last field), whose bytes are then between the two."""

    encoding: Any
    leading: Any  # fastavro's parsed record of the fields before data_file
    data_file: Any  # fastavro's parsed data_file record


def leading_fields_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The record of a manifest entry schema's fields before ``data_file`` (its last field),
    logical types removed: what is decoded, and written again, of a carried entry."""
    fields = strip_logical_types(schema["fields"])[:-1]
    return {"type": "record", "name": "leading_fields", "fields": fields}


# By the schema object's identity (each entry holds the object, so its id is not reused): a
# file's schema is the object ``schema_of`` shares for its schema text, a writer's its own.
_READERS: dict[int, tuple[Mapping[str, Any], _EntryReader | None]] = {}
_READERS_LIMIT = 256
_READERS_LOCK = threading.Lock()


def _entry_reader(schema: Mapping[str, Any]) -> _EntryReader | None:
    """The reader of entries of ``schema`` (a manifest's writer schema), None when its last
    field is not ``data_file`` or fastavro does not parse it."""
    found = _READERS.get(id(schema))
    if found is not None and found[0] is schema:
        return found[1]
    reader: _EntryReader | None
    try:
        fields = schema["fields"]
        if fields[-1]["name"] != "data_file":
            reader = None
        else:
            reader = _EntryReader(
                encoding_of(schema),
                fastavro.parse_schema(leading_fields_schema(schema)),
                fastavro.parse_schema(strip_logical_types(fields[-1]["type"])),
            )
    except Exception:  # not a schema read this way: the caller decodes the entries
        reader = None
    with _READERS_LOCK:
        if len(_READERS) >= _READERS_LIMIT:
            _READERS.clear()
        _READERS[id(schema)] = (schema, reader)
    return reader


# ---- reading --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BlockFacts:
    """What a manifest writer counts and summarizes of a block it copies whole: the files'
    record counts summed, their distinct partition tuples (icefloe values, partition-type
    order) and their smallest data sequence number (None in v1)."""

    records: int
    partitions: tuple[tuple[Any, ...], ...]
    min_sequence_number: int | None


@dataclass(frozen=True, slots=True)
class CarriedBlock:
    """A block of a manifest file whose entries are all EXISTING, each with its snapshot id
    and sequence numbers written out: what a merge writes for them is what is stored, so the
    block is copied as stored (``data``, compressed with ``codec``), not decoded."""

    count: int
    data: bytes
    codec: str
    content: ManifestContent
    facts: BlockFacts


#: Given a block's first entry (its position in the file) and its entry count, the block's
#: facts when every entry in it is EXISTING with its snapshot id and sequence numbers written
#: out; else None (the block's entries are decoded one by one).
BlockCheck = Callable[[int, int], "BlockFacts | None"]


def carried_entries(
    io: FileIO,
    manifest: ManifestFile,
    *,
    partition_type: StructType,
    target_schema: Mapping[str, Any],
    data: bytes | None = None,
    copy: tuple[str, Callable[[bytes], BlockCheck | None]] | None = None,
) -> Iterator[CarriedEntry | CarriedBlock] | None:
    """The entries of ``manifest`` with their ``data_file`` records as encoded, in file order,
    inheritance applied as ``read_manifest`` applies it; or None when the file's entries are
    not encoded as ``target_schema`` (the writer schema of the manifest being written)
    encodes them, or its codec is not null or deflate. The file is read and checked before
    this returns.

    Args:
        data: the file's content, when the caller has read it (``read_manifest_bytes``).
        copy: ``(codec, blocks)``: when the file's entries are carried and its codec is
            ``codec`` (the new manifest's), ``blocks(data)`` gives the check of its blocks
            (or None), and each block it gives facts for comes whole, as a ``CarriedBlock``.

    Raises:
        NoSuchFileError: the manifest does not exist.
        InvalidManifestError: the file is truncated or corrupt (also while iterating).
    """
    location = manifest.manifest_path
    target = _entry_reader(target_schema)
    if target is None:
        return None
    if data is None:
        data = read_manifest_bytes(io, manifest)
    header = read_header(data, location)
    schema = schema_of(header, location)
    source = _entry_reader(schema) if isinstance(schema, dict) else None
    if source is None or source.encoding != target.encoding:
        return None
    codec = codec_of(header, location)
    if codec not in ENCODED_CODECS:
        return None
    check = copy[1](data) if copy is not None and copy[0] == codec else None
    decoder = _EntryDecoder(source, entry_layout(schema, partition_type, location), manifest)
    return _items(data, header, codec, decoder, check, manifest)


def _items(
    data: bytes,
    header: AvroHeader,
    codec: str,
    decoder: _EntryDecoder,
    check: BlockCheck | None,
    manifest: ManifestFile,
) -> Iterator[CarriedEntry | CarriedBlock]:
    location = manifest.manifest_path
    first = 0
    for count, start, end in frames(data, header, location):
        if count == 0:
            continue
        facts = check(first, count) if check is not None else None
        if facts is not None:
            yield CarriedBlock(count, data[start:end], codec, manifest.content, facts)
        else:
            yield from decoder.block(decompressed(data[start:end], codec == "deflate", location), count)
        first += count


class _EntryDecoder:
    """Decodes the entries of one manifest's blocks: the leading fields, then the data_file
    record (only what a writer checks and summarizes is kept of it), inheritance applied as
    ``read_manifest``'s decoder applies it."""

    def __init__(self, reader: _EntryReader, layout: EntryLayout, manifest: ManifestFile):
        self._reader = reader
        self._layout = layout
        self._location = manifest.manifest_path
        self._inheritance = Inheritance.of(manifest)

    def block(self, body: bytes, count: int) -> list[CarriedEntry]:
        layout = self._layout
        n_status, n_snapshot = layout.status, layout.snapshot_id
        n_seq, n_file_seq = layout.sequence_number, layout.file_sequence_number
        n_content, n_path, n_records = layout.content, layout.file_path, layout.record_count
        n_partition = layout.partition
        partition_of = layout.partition_of
        leading_schema, data_file_schema = self._reader.leading, self._reader.data_file
        inherit = self._inheritance.apply
        stream = BytesIO(body)
        entries: list[CarriedEntry] = []
        try:
            with gc_paused():
                for _ in range(count):
                    leading: dict[str, Any] = schemaless_reader(stream, leading_schema, None)  # type: ignore[assignment]
                    start = stream.tell()
                    d: dict[str, Any] = schemaless_reader(stream, data_file_schema, None)  # type: ignore[assignment]
                    status = _STATUSES[_in_range(leading[n_status], len(_STATUSES), "status")]
                    snapshot_id, seq, file_seq = inherit(
                        status, leading.get(n_snapshot), leading.get(n_seq), leading.get(n_file_seq)
                    )
                    entries.append(
                        CarriedEntry(
                            status,
                            snapshot_id,
                            seq,
                            file_seq,
                            _CONTENTS[_in_range(d.get(n_content) or 0, len(_CONTENTS), "content")],
                            d[n_path],
                            d[n_records],
                            partition_of(d[n_partition]),
                            body[start : stream.tell()],
                        )
                    )
        except Exception as exc:
            raise corrupt_error(self._location, exc) from exc
        if stream.tell() != len(body):
            raise InvalidManifestError(
                f"{self._location} is corrupt: a block holds more than the {count} records it announces",
                location=self._location,
            )
        return entries


def _in_range(code: int, size: int, name: str) -> int:
    if not 0 <= code < size:
        raise ValueError(f"{name} {code} is not one the spec defines")
    return code
