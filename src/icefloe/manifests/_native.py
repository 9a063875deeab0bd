"""Decoding Avro container files into Arrow with a native (Rust) decoder, when installed.

The decoder is arrow-avro, reached through polars-avro's reader module (``icefloe[fast]``):
bytes in, Arrow record batches out, with the file's Avro field names as Arrow names and Avro
logical types as Arrow types (date32, timestamp[us], decimal128, fixed_size_binary ...). It
decodes a 100-entry manifest about 10x faster than fastavro, a 20,000-entry one about 20x.
Field-id resolution stays icefloe's: the caller finds its fields by id in the writer schema
(``reader.entry_layout``) and reads the columns of those names.

What stays with fastavro (``decode`` returns None, and the caller decodes as before):

- the decoder is not installed or does not load (said once per process, a logged warning);
- files of fewer than ``NATIVE_MIN_RECORDS`` records: the native reader spends about 0.5 ms
  setting up per file, more than fastavro needs for a handful of records (unless fastavro
  rejects the schema: PyIceberg 0.12 defines a named type twice when two partition fields
  share a decimal or fixed type, which arrow-avro reads);
- files it cannot read (said once, naming the file): a record field of Avro type ``null``
  (Iceberg's ``unknown``), which it rejects, or any error it raises. A file fastavro cannot read
  either is corrupt, and fastavro's error is the one raised, exactly as without this module.

The native reader does not check the container framing (it returns the records of the
complete blocks of a truncated file, and ignores a wrong sync marker), so every block's
count, size and sync marker are checked here first (``count_records``), and the decoded row
count must match.
"""

from __future__ import annotations

import io
import json
import logging
import os
import threading
from dataclasses import dataclass
from types import ModuleType, TracebackType
from typing import Any

import pyarrow as pa

from icefloe._util.optional import extension_module
from icefloe.errors import InvalidManifestError
from icefloe.manifests._avro_file import (
    AvroHeader,
    count_records,
    encode_header,
    fastavro_parses,
    reframed_blocks,
    schema_of,
)

__all__ = [
    "NATIVE_MIN_RECORDS",
    "decode",
    "decode_together",
    "decode_whole",
    "native_available",
    "native_reader",
    "report_fallback",
]

log = logging.getLogger(__name__)

#: Files with fewer records are decoded by fastavro (faster below this, measured on manifests
#: of 13 columns with full metrics).
NATIVE_MIN_RECORDS = 10
#: Rows per native batch: more than any manifest holds, so a file is one batch.
_BATCH_ROWS = 1 << 30

_module: ModuleType | None = None
_loaded = False
_load_lock = threading.Lock()
_said: set[str] = set()


def native_reader() -> ModuleType | None:
    global _module, _loaded
    if not _loaded:
        with _load_lock:
            if not _loaded:
                module = extension_module("polars_avro", "_avro_rs")
                _module = module if module is not None and hasattr(module, "AvroSource") else None
                _loaded = True
    return _module


def native_available() -> bool:
    """Whether the native decoder is installed and loads."""
    return native_reader() is not None


def _say_once(kind: str, message: str) -> None:
    if kind not in _said:
        _said.add(kind)
        log.warning("%s", message)


def report_fallback(reason: str | None) -> None:
    """Say (once per process and kind) why a file was decoded with fastavro; call it after
    fastavro read the file, so that a corrupt file is not reported as a decoder limitation."""
    if reason is None:
        return
    if reason == _UNAVAILABLE:
        _say_once(
            "unavailable",
            "icefloe decodes manifests with fastavro: install icefloe[fast] (polars-avro) to "
            "decode them natively, up to 20x faster",
        )
    else:
        _say_once("unreadable", f"the native Avro decoder cannot read {reason}; decoded with fastavro")


_UNAVAILABLE = "\x00unavailable"


class _Source:
    """What the native reader opens: a context manager giving a fresh stream over the bytes
    (its ``sources`` protocol; it may open a source more than once)."""

    __slots__ = ("data",)

    def __init__(self, data: bytes):
        self.data = data

    def __enter__(self) -> io.BytesIO:
        return io.BytesIO(self.data)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        return None


@dataclass(frozen=True, slots=True)
class _SchemaFacts:
    """What decoding a writer schema natively needs to know: whether a record field has the
    Avro type ``null`` (arrow-avro cannot decode it: fastavro does), and the schema text to
    decode with when it holds records without fields (``_without_empty_records``; None: the
    file's own)."""

    null_field: bool
    native_text: bytes | None


# Writer schemas (shared parsed objects, see ``_avro_file``) -> their facts; the schema is kept
# in the value so that its id is not reused.
_SCHEMA_FACTS: dict[int, tuple[Any, _SchemaFacts]] = {}
_SCHEMA_FACTS_LIMIT = 512


def _facts(header: AvroHeader, location: str) -> _SchemaFacts:
    schema = schema_of(header, location)
    found = _SCHEMA_FACTS.get(id(schema))
    if found is not None and found[0] is schema:
        return found[1]
    stripped = _without_empty_records(schema)
    text = None if stripped == schema else json.dumps(stripped, separators=(",", ":")).encode("utf-8")
    facts = _SchemaFacts(_has_null_field(schema), text)
    if len(_SCHEMA_FACTS) >= _SCHEMA_FACTS_LIMIT:
        _SCHEMA_FACTS.clear()
    _SCHEMA_FACTS[id(schema)] = (schema, facts)
    return facts


def _has_null_field(schema: Any) -> bool:
    if isinstance(schema, list):
        return any(_has_null_field(branch) for branch in schema if branch != "null")
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    if kind == "record":
        for field in schema.get("fields", ()):
            field_type = field.get("type")
            if field_type == "null" or (isinstance(field_type, dict) and field_type.get("type") == "null"):
                return True
            if _has_null_field(field_type):
                return True
        return False
    if kind == "array":
        return _has_null_field(schema.get("items"))
    if kind == "map":
        return _has_null_field(schema.get("values"))
    return isinstance(kind, (dict, list)) and _has_null_field(kind)


def _without_empty_records(schema: Any) -> Any:
    """The schema without the record fields whose type is a record of no fields: the
    ``partition`` of an unpartitioned table's manifests, which arrow-avro refuses ("a struct
    array with no fields"). Such a field encodes to no bytes, so the file's blocks decode the
    same without it; its column is then missing (the caller knows the partition is empty)."""
    if isinstance(schema, list):
        return [_without_empty_records(branch) for branch in schema]
    if not isinstance(schema, dict):
        return schema
    kind = schema.get("type")
    if kind == "record":
        fields = [
            {**f, "type": _without_empty_records(f["type"])}
            for f in schema.get("fields", ())
            if not (
                isinstance(f.get("type"), dict)
                and f["type"].get("type") == "record"
                and not f["type"].get("fields")
            )
        ]
        return {**schema, "fields": fields}
    if kind == "array":
        return {**schema, "items": _without_empty_records(schema.get("items"))}
    if kind == "map":
        return {**schema, "values": _without_empty_records(schema.get("values"))}
    return schema


def _native_header(header: AvroHeader, facts: _SchemaFacts) -> bytes | None:
    """The header to decode the file with natively, when its schema must change (see
    ``_without_empty_records``): the file's own (its codec, its sync marker) with that schema;
    None to decode the file as it is."""
    if facts.native_text is None:
        return None
    return encode_header({**header.metadata, "avro.schema": facts.native_text}, header.sync)


def decode(
    data: bytes, header: AvroHeader, location: str, *, min_records: int | None = None
) -> tuple[pa.RecordBatch | None, str | None]:
    """The records of the Avro file ``data`` as one Arrow record batch, natively decoded.

    Returns ``(batch, None)``, or ``(None, reason)`` when the caller must decode with fastavro:
    ``reason`` is None when that is simply the better choice (a small file), else what to pass
    to ``report_fallback`` once fastavro has read the file. A file whose framing is broken also
    returns ``(None, None)``: fastavro's path raises its error. ``min_records``: the smallest
    file decoded natively (default ``NATIVE_MIN_RECORDS``).
    """
    module = native_reader()
    if module is None:
        return None, _UNAVAILABLE
    try:
        records = count_records(data, header, location)
    except InvalidManifestError:
        return None, None
    smallest = NATIVE_MIN_RECORDS if min_records is None else min_records
    if records < smallest and fastavro_parses(header, location):
        return None, None
    facts = _facts(header, location)
    if facts.null_field:
        return None, f"{location} (a field of Avro type null, Iceberg's unknown)"
    native_header = _native_header(header, facts)
    if native_header is not None:
        return _read(module, native_header + data[header.end :], records, location, whole_file=False)
    return _read(module, data, records, location)


def _local_file(location: str, size: int) -> str | None:
    """The local path of ``location`` when a file of exactly ``size`` bytes is there (the bytes
    the caller read: an encrypted file's ciphertext is longer than its plaintext), else None."""
    if location.startswith("file:"):
        path = location[7:] if location.startswith("file://") else location[5:]
    elif "://" in location:
        return None
    else:
        path = location
    try:
        return path if os.stat(path).st_size == size else None
    except (OSError, ValueError):
        return None


def _read(
    module: ModuleType, data: bytes, records: int, location: str, *, whole_file: bool = True
) -> tuple[pa.RecordBatch | None, str | None]:
    """The native reader's one batch of the container ``data`` of ``records`` records.

    A local file whose bytes are ``data`` (``whole_file``) is read by the native reader from
    its path: from a Python stream, the reader reads through a fresh 4 MiB buffer, which the
    first two reads of a process fault in page by page (about 5 ms, half a small plan)."""
    path = _local_file(location, len(data)) if whole_file else None
    if path is not None:
        found = _batch(module, path, records, location)
        if found[0] is not None:
            return found
    return _batch(module, _Source(data), records, location)


def _batch(
    module: ModuleType, source: str | _Source, records: int, location: str
) -> tuple[pa.RecordBatch | None, str | None]:
    opener: Any = source if isinstance(source, str) else (lambda: source)
    try:
        batches = [
            pa.record_batch(b)
            for b in module.AvroSource([opener], False, False).batch_iter(_BATCH_ROWS, None)
        ]
    except Exception as exc:
        return None, f"{location} ({type(exc).__name__}: {exc})"
    except BaseException as exc:
        # PyO3 turns a Rust panic into PanicException, a BaseException.
        if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
            raise
        return None, f"{location} ({type(exc).__name__}: {exc})"
    if len(batches) == 1:
        batch = batches[0]
    elif batches:
        batch = _one_batch(batches)
    else:
        return None, f"{location} (no batch for {records} records)"
    if batch.num_rows != records:
        return None, f"{location} ({batch.num_rows} rows decoded, the blocks hold {records})"
    return batch, None


def decode_together(files: list[tuple[bytes, AvroHeader, str]]) -> list[pa.RecordBatch] | None:
    """``decode_whole`` of the files, as one batch per file (slices of one batch)."""
    whole = decode_whole(files)
    if whole is None:
        return None
    batch, counts = whole
    slices = []
    offset = 0
    for count in counts:
        slices.append(batch.slice(offset, count))
        offset += count
    return slices


def decode_whole(files: list[tuple[bytes, AvroHeader, str]]) -> tuple[pa.RecordBatch, list[int]] | None:
    """The records of several Avro files (data, header, location) of one writer schema and
    codec, natively decoded in one call: one batch per file (slices of one batch).

    Setting the native reader up costs about as much as decoding a 100-entry manifest, so the
    files' blocks are framed as the body of one container (the first file's header, every
    block given its sync marker) and the reader is set up once. Every file's framing is
    checked first (``reframed_blocks``). Returns None when they are not decoded together (no
    native decoder, different schemas or codecs, a file below ``NATIVE_MIN_RECORDS``, a broken
    or unreadable file): the caller decodes them one by one, which says why or raises the error.
    """
    module = native_reader()
    if module is None or len(files) < 2:
        return None
    first_data, first, first_location = files[0]
    schema, codec = first.metadata.get("avro.schema"), first.metadata.get("avro.codec")
    facts = _facts(first, first_location)
    if facts.null_field:
        return None
    native_header = _native_header(first, facts)
    parts: list[bytes | memoryview] = [native_header or memoryview(first_data)[: first.end]]
    counts = []
    for data, header, location in files:
        if header.metadata.get("avro.schema") != schema or header.metadata.get("avro.codec") != codec:
            return None
        try:
            records, blocks = reframed_blocks(data, header, location, first.sync)
        except InvalidManifestError:
            return None
        if records < NATIVE_MIN_RECORDS:
            return None  # decoded by fastavro (see ``decode``)
        counts.append(records)
        parts.extend(blocks)
    few = len(files) <= FEW_LOCAL_FILES and native_header is None  # the files' own headers
    batch = _from_paths(module, files, counts) if few else None
    if batch is None:
        batch, _ = _read(module, b"".join(parts), sum(counts), first_location, whole_file=False)
    if batch is None:
        return None
    return batch, counts


#: Up to this many local files decoded together are read from their paths, one reader each,
#: and concatenated: the joined container would reach the reader as a Python stream (see
#: ``_read``), whose buffer's page faults cost more than setting the reader up a few times.
FEW_LOCAL_FILES = 8


def _from_paths(
    module: ModuleType, files: list[tuple[bytes, AvroHeader, str]], counts: list[int]
) -> pa.RecordBatch | None:
    """The files' records as one batch, each local file decoded from its path; None unless
    every file is local and decodes to exactly its records."""
    paths = [_local_file(location, len(data)) for data, _, location in files]
    if any(path is None for path in paths):
        return None
    batches = []
    for path, count, (_, _, location) in zip(paths, counts, files):
        batch, _ = _batch(module, path, count, location)  # type: ignore[arg-type]
        if batch is None:
            return None
        batches.append(batch)
    try:
        return _one_batch(batches)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # schemas that differ in an Arrow detail
        return None


def _one_batch(batches: list[pa.RecordBatch]) -> pa.RecordBatch:
    """The batches (one schema, not all empty) as one."""
    return pa.Table.from_batches(batches).combine_chunks().to_batches()[0]


# Loaded with this module (about 1 ms, as importing the package would), not inside the first
# plan of a process.
native_reader()
