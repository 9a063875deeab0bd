"""Manifest lists (spec: "Manifest Lists", "First Row ID Assignment").

Writing assigns what a commit decides: manifests written for this snapshot whose sequence
numbers are still ``UNASSIGNED_SEQ`` get the snapshot's sequence number, and in v3 every
data manifest without a ``first_row_id`` gets one, counting up from the snapshot's
``first-row-id`` by each manifest's added and existing row counts. The header carries what
Java writes: ``snapshot-id``, ``parent-snapshot-id`` ("null" for none), ``sequence-number``
(v2+), ``first-row-id`` (v3) and ``format-version``.

Reading gives ``ManifestFile`` rows; v1 lists read as data manifests at sequence number 0. A
list of many rows is decoded natively when ``icefloe[fast]`` is installed (``_native``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from itertools import repeat
from types import TracebackType
from typing import Any

import pyarrow as pa

from icefloe.errors import InvalidManifestError, ValidationError
from icefloe.io import FileIO, OutputFile
from icefloe.io.encryption import (
    EncryptedOutputFile,
    new_decrypted_input,
    new_encrypted_output,
    new_manifest_list_input,
)
from icefloe.manifests import _native as native
from icefloe.manifests._avro_file import avro_codec, read_records, write_records
from icefloe.manifests.reader import parse_avro
from icefloe.manifests.writer import UNASSIGNED_SEQ
from icefloe.serde.avro_schemas import FIELD_ID_PROP, manifest_list_schema, manifest_list_type
from icefloe.serde.schema_json import schema_to_json
from icefloe.spec.encryption import StandardKeyMetadata
from icefloe.spec.manifest import FieldSummary, ManifestContent, ManifestFile

__all__ = ["ManifestListWriter", "read_manifest_list", "write_manifest_list"]


class ManifestListWriter:
    """Writes one snapshot's manifest list; see the module docstring for what it assigns.

    Args:
        output: where to write: an ``OutputFile``, or a FileIO with ``location``. The file is
            created on close.
        location: the list's location, when ``output`` is a FileIO.
        format_version: 1, 2 or 3.
        snapshot_id: the snapshot the list belongs to.
        parent_snapshot_id: its parent, or None.
        sequence_number: the snapshot's sequence number (ignored, and not written, in v1).
        first_row_id: the snapshot's ``first-row-id`` (required in v3, ignored before).
        codec / compression_level: Avro compression, as for manifests.
        overwrite: replace an existing file (a commit retry writes a new list elsewhere).

    Raises:
        ValidationError: an unsupported version, or v3 without ``first_row_id``.
    """

    def __init__(
        self,
        output: OutputFile | FileIO,
        location: str | None = None,
        *,
        format_version: int,
        snapshot_id: int,
        parent_snapshot_id: int | None,
        sequence_number: int,
        first_row_id: int | None = None,
        codec: str = "gzip",
        compression_level: int | None = None,
        overwrite: bool = False,
    ):
        if format_version not in (1, 2, 3):
            raise ValidationError(f"format version {format_version} is not supported; expected 1, 2 or 3")
        if format_version >= 3 and first_row_id is None:
            raise ValidationError("a v3 manifest list needs the snapshot's first-row-id")
        self._encrypted: EncryptedOutputFile | None = None
        if isinstance(output, FileIO):
            if location is None:
                raise ValidationError("ManifestListWriter(io, location, ...): the list's location is missing")
            # Encrypted (an AES GCM stream) when ``output`` is an encrypted table's FileIO.
            self._encrypted = new_encrypted_output(output, location)
            output = self._encrypted.encrypting_output_file
        elif location is not None and location != output.location:
            raise ValidationError(
                f"ManifestListWriter got an OutputFile for {output.location} and location {location}"
            )
        self.output: OutputFile = output
        self.format_version = format_version
        self.snapshot_id = snapshot_id
        self.parent_snapshot_id = parent_snapshot_id
        self.sequence_number = sequence_number if format_version >= 2 else 0
        self.first_row_id = first_row_id if format_version >= 3 else None
        self._next_row_id = self.first_row_id
        self._codec = avro_codec(codec)
        self._compression_level = compression_level
        self._overwrite = overwrite
        self._avro_schema = manifest_list_schema(format_version)
        self._manifests: list[ManifestFile] = []
        self._length: int | None = None

    @property
    def next_row_id(self) -> int | None:
        """The first row id not assigned by this list (v3); ``next_row_id - first_row_id``
        is the snapshot's ``added-rows``."""
        return self._next_row_id

    @property
    def manifests(self) -> list[ManifestFile]:
        """The rows as written, with assigned sequence numbers and first row ids."""
        return list(self._manifests)

    @property
    def length(self) -> int | None:
        """The written file's (stored) length, after ``close()``."""
        if self._length is None or self._encrypted is None:
            return self._length
        return self._encrypted.stored_length(self._length)

    @property
    def key_metadata(self) -> StandardKeyMetadata | None:
        """After ``close()``, the written list's key (its stored length recorded), which the
        snapshot's ``key-id`` entry of ``encryption-keys`` keeps; None for a plaintext list."""
        if self._encrypted is None or self._encrypted.key_metadata is None or self._length is None:
            return None
        return self._encrypted.key_metadata.with_length(self._encrypted.stored_length(self._length))

    def add(self, manifest: ManifestFile) -> ManifestFile:
        """Add a manifest; returns its row as it will be written.

        Raises:
            ValidationError: a delete manifest in v1; an unassigned sequence number on a
                manifest another snapshot added; missing row counts where v3 needs them.
        """
        if self._length is not None:
            raise ValidationError(f"manifest list {self.output.location} is already written")
        self._manifests.append(self._prepare(manifest))
        return self._manifests[-1]

    def add_all(self, manifests: Iterable[ManifestFile]) -> None:
        for manifest in manifests:
            self.add(manifest)

    def _prepare(self, manifest: ManifestFile) -> ManifestFile:
        path = manifest.manifest_path
        if self.format_version == 1 and manifest.content != ManifestContent.DATA:
            raise ValidationError(f"cannot store delete manifest {path} in a v1 manifest list")
        changes: dict[str, Any] = {}
        added_snapshot_id = manifest.added_snapshot_id
        if added_snapshot_id is None:
            # A manifest written without a snapshot id is added by this snapshot.
            added_snapshot_id = changes["added_snapshot_id"] = self.snapshot_id
        for name in ("sequence_number", "min_sequence_number"):
            if getattr(manifest, name) == UNASSIGNED_SEQ:
                if added_snapshot_id != self.snapshot_id:
                    raise ValidationError(
                        f"manifest {path} from snapshot {added_snapshot_id} has an unassigned sequence number"
                    )
                changes[name] = self.sequence_number
        if self.format_version >= 3:
            if manifest.content != ManifestContent.DATA:
                if manifest.first_row_id is not None:
                    changes["first_row_id"] = None  # delete manifests never have one
            elif manifest.first_row_id is None:
                added_rows, existing_rows = manifest.added_rows_count, manifest.existing_rows_count
                if added_rows is None or existing_rows is None:
                    raise ValidationError(f"manifest {path} has no row counts to assign row ids from")
                assert self._next_row_id is not None
                changes["first_row_id"] = self._next_row_id
                self._next_row_id += added_rows + existing_rows
        return dataclasses.replace(manifest, **changes) if changes else manifest

    def _record(self, m: ManifestFile) -> dict[str, Any]:
        partitions = None
        if m.partitions is not None:
            partitions = [
                {
                    "contains_null": s.contains_null,
                    "contains_nan": s.contains_nan,
                    "lower_bound": s.lower_bound,
                    "upper_bound": s.upper_bound,
                }
                for s in m.partitions
            ]
        record: dict[str, Any] = {
            "manifest_path": m.manifest_path,
            "manifest_length": m.manifest_length,
            "partition_spec_id": m.partition_spec_id,
            "added_snapshot_id": m.added_snapshot_id,
            "added_files_count": m.added_files_count,
            "existing_files_count": m.existing_files_count,
            "deleted_files_count": m.deleted_files_count,
            "added_rows_count": m.added_rows_count,
            "existing_rows_count": m.existing_rows_count,
            "deleted_rows_count": m.deleted_rows_count,
            "partitions": partitions,
            "key_metadata": m.key_metadata,
        }
        if self.format_version >= 2:
            record["content"] = int(m.content)
            record["sequence_number"] = m.sequence_number
            record["min_sequence_number"] = m.min_sequence_number
            for name in (
                "added_files_count",
                "existing_files_count",
                "deleted_files_count",
                "added_rows_count",
                "existing_rows_count",
                "deleted_rows_count",
            ):
                if record[name] is None:
                    raise ValidationError(
                        f"manifest {m.manifest_path} has no {name}, required in v{self.format_version}"
                    )
        if self.format_version >= 3:
            record["first_row_id"] = m.first_row_id
        return record

    def _metadata(self) -> dict[str, str]:
        metadata = {
            "snapshot-id": str(self.snapshot_id),
            "parent-snapshot-id": "null" if self.parent_snapshot_id is None else str(self.parent_snapshot_id),
        }
        if self.format_version >= 2:
            metadata["sequence-number"] = str(self.sequence_number)
        if self.format_version >= 3:
            metadata["first-row-id"] = str(self.first_row_id)
        metadata["format-version"] = str(self.format_version)
        metadata["iceberg.schema"] = json.dumps(
            schema_to_json(manifest_list_type(self.format_version)), separators=(",", ":")
        )
        return metadata

    def close(self) -> int | None:
        """Write the file; returns ``next_row_id`` (None before v3). Idempotent.

        Raises:
            FileAlreadyExistsError: the file exists (and ``overwrite`` is False).
            FileIOError: the storage failed; nothing is left behind.
        """
        if self._length is None:
            records = [self._record(m) for m in self._manifests]
            with self.output.create(overwrite=self._overwrite) as stream:
                self._length = write_records(
                    stream,
                    self._avro_schema,
                    records,
                    self._metadata(),
                    codec=self._codec,
                    compression_level=self._compression_level,
                    location=self.output.location,
                )
        return self._next_row_id

    def __enter__(self) -> ManifestListWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is None:
            self.close()


def write_manifest_list(
    io: FileIO,
    location: str,
    format_version: int,
    snapshot_id: int,
    parent_snapshot_id: int | None,
    sequence_number: int,
    manifests: Iterable[ManifestFile],
    first_row_id: int | None = None,
    *,
    codec: str = "gzip",
    compression_level: int | None = None,
    overwrite: bool = False,
) -> int | None:
    """Write a snapshot's manifest list at ``location``.

    Returns:
        The next row id after the ids this list assigned (v3): the snapshot's ``added-rows``
        is ``result - first_row_id`` and the table's ``next-row-id`` becomes ``result``.
        None before v3.

    Raises:
        ValidationError: see ``ManifestListWriter``.
        FileAlreadyExistsError, FileIOError: writing failed; nothing is left behind.
    """
    writer = ManifestListWriter(
        io,
        location,
        format_version=format_version,
        snapshot_id=snapshot_id,
        parent_snapshot_id=parent_snapshot_id,
        sequence_number=sequence_number,
        first_row_id=first_row_id,
        codec=codec,
        compression_level=compression_level,
        overwrite=overwrite,
    )
    writer.add_all(manifests)
    return writer.close()


# ---- reading --------------------------------------------------------------------------------

_REQUIRED = {500: "manifest_path", 501: "manifest_length", 502: "partition_spec_id", 503: "added_snapshot_id"}
_OPTIONAL = {
    517: "content",
    515: "sequence_number",
    516: "min_sequence_number",
    504: "added_files_count",
    505: "existing_files_count",
    506: "deleted_files_count",
    512: "added_rows_count",
    513: "existing_rows_count",
    514: "deleted_rows_count",
    507: "partitions",
    519: "key_metadata",
    520: "first_row_id",
}
_SUMMARY = {509: "contains_null", 518: "contains_nan", 510: "lower_bound", 511: "upper_bound"}
_MISSING = "\x00missing"
_CONTENT_VALUES = {int(c): c for c in ManifestContent}


def _names(fields: list[dict[str, Any]], wanted: dict[int, str]) -> dict[str, str]:
    """Our field name -> the file's field name, by id (by name for fields without ids)."""
    by_id = {int(f[FIELD_ID_PROP]): f["name"] for f in fields if f.get(FIELD_ID_PROP) is not None}
    no_id = {f["name"] for f in fields if f.get(FIELD_ID_PROP) is None}
    return {
        ours: by_id.get(field_id) or (ours if ours in no_id else _MISSING)
        for field_id, ours in wanted.items()
    }


def _summary_fields(schema: Any, partitions_name: str) -> list[dict[str, Any]]:
    for f in schema.get("fields", ()):
        if f["name"] == partitions_name:
            array = f["type"]
            if isinstance(array, list):
                array = next(b for b in array if b != "null")
            items = array.get("items") if isinstance(array, dict) else None
            if isinstance(items, dict) and items.get("type") == "record":
                return list(items.get("fields", ()))
    return []


def _slot(cls: type, name: str) -> Any:
    """The setter of a slot of the frozen dataclass ``cls`` (for building rows without its
    ``__init__``; each slot is set once, before the row is handed out)."""
    return cls.__dict__[name].__set__


_set_path = _slot(ManifestFile, "manifest_path")
_set_length = _slot(ManifestFile, "manifest_length")
_set_spec_id = _slot(ManifestFile, "partition_spec_id")
_set_content = _slot(ManifestFile, "content")
_set_sequence_number = _slot(ManifestFile, "sequence_number")
_set_min_sequence_number = _slot(ManifestFile, "min_sequence_number")
_set_snapshot_id = _slot(ManifestFile, "added_snapshot_id")
_set_added_files = _slot(ManifestFile, "added_files_count")
_set_existing_files = _slot(ManifestFile, "existing_files_count")
_set_deleted_files = _slot(ManifestFile, "deleted_files_count")
_set_added_rows = _slot(ManifestFile, "added_rows_count")
_set_existing_rows = _slot(ManifestFile, "existing_rows_count")
_set_deleted_rows = _slot(ManifestFile, "deleted_rows_count")
_set_partitions = _slot(ManifestFile, "partitions")
_set_key_metadata = _slot(ManifestFile, "key_metadata")
_set_first_row_id = _slot(ManifestFile, "first_row_id")


def _new_manifest_file(
    path: Any,
    length: Any,
    spec_id: Any,
    content: Any,
    sequence_number: Any,
    min_sequence_number: Any,
    snapshot_id: Any,
    added_files: Any,
    existing_files: Any,
    deleted_files: Any,
    added_rows: Any,
    existing_rows: Any,
    deleted_rows: Any,
    partitions: Any,
    key_metadata: Any,
    first_row_id: Any,
) -> ManifestFile:
    """``ManifestFile(...)`` (every field, in order), built by setting its slots one by one,
    unrolled: the frozen dataclass ``__init__`` (one ``object.__setattr__`` per field) costs
    twice as much, and a large table's list has thousands of rows."""
    row = object.__new__(ManifestFile)
    _set_path(row, path)
    _set_length(row, length)
    _set_spec_id(row, spec_id)
    _set_content(row, content)
    _set_sequence_number(row, sequence_number)
    _set_min_sequence_number(row, min_sequence_number)
    _set_snapshot_id(row, snapshot_id)
    _set_added_files(row, added_files)
    _set_existing_files(row, existing_files)
    _set_deleted_files(row, deleted_files)
    _set_added_rows(row, added_rows)
    _set_existing_rows(row, existing_rows)
    _set_deleted_rows(row, deleted_rows)
    _set_partitions(row, partitions)
    _set_key_metadata(row, key_metadata)
    _set_first_row_id(row, first_row_id)
    return row


_set_contains_null = _slot(FieldSummary, "contains_null")
_set_contains_nan = _slot(FieldSummary, "contains_nan")
_set_lower_bound = _slot(FieldSummary, "lower_bound")
_set_upper_bound = _slot(FieldSummary, "upper_bound")


def _new_field_summary(contains_null: Any, contains_nan: Any, lower: Any, upper: Any) -> FieldSummary:
    """``FieldSummary(...)``, its slots set directly (as ``_new_manifest_file``)."""
    summary = object.__new__(FieldSummary)
    _set_contains_null(summary, bool(contains_null))
    _set_contains_nan(summary, contains_nan)
    _set_lower_bound(summary, lower)
    _set_upper_bound(summary, upper)
    return summary


def _summaries(
    array: pa.Array | None, names: tuple[str, str, str, str]
) -> list[tuple[FieldSummary, ...] | None] | None:
    """Each row's partition field summaries, built from the natively decoded column in a few
    C-level passes (a FieldSummary per field of every row: 2,000 rows cost 10 ms one by one);
    None when the column is not the usual list of records (the rows' Python values are used)."""
    if array is None or not pa.types.is_list(array.type) or not pa.types.is_struct(array.type.value_type):
        return None
    kind = array.type.value_type
    indices = [kind.get_field_index(name) if name != _MISSING else -1 for name in names]
    if indices[0] < 0:
        return None  # no contains_null: the Python path raises the error
    items = array.flatten()  # the records of the non-null rows, in order
    if items.null_count:
        return None
    children = items.flatten()
    null, nan, lower, upper = (repeat(None) if i < 0 else children[i].to_pylist() for i in indices)
    flat = list(map(_new_field_summary, null, nan, lower, upper))
    lengths = array.value_lengths().to_pylist()  # None for a null row
    result: list[tuple[FieldSummary, ...] | None] = []
    start = 0
    for length in lengths:
        if length is None:
            result.append(None)
            continue
        result.append(tuple(flat[start : start + length]))
        start += length
    return result


def read_manifest_list(
    io: FileIO, location: str, *, key_id: str | None = None, key_metadata: bytes | None = None
) -> list[ManifestFile]:
    """The manifest list rows of the file at ``location``, in file order.

    Fields are found by field id. v1 lists (no ``content`` or sequence numbers) read as data
    manifests with sequence numbers 0.

    An encrypted table's list (``io`` is its ``EncryptingFileIO``) is decrypted with the key
    its snapshot's ``key-id`` names: ``key_id``, or the snapshot the table's metadata has for
    ``location``; or with ``key_metadata``, the list's key itself (already taken from the
    table's ``encryption-keys``, e.g. on the driver for a Spark task: no KMS needed).

    Raises:
        NoSuchFileError: the file does not exist.
        InvalidManifestError: the file is truncated, corrupt or lacks a required field.
        EncryptionError: an encrypted list's key is missing, or the list does not decrypt
            (``MissingKeyError``, ``KeyManagementError``, ``DecryptionError``; naming the file).
    """
    if key_metadata is not None:
        data = new_decrypted_input(io, location, key_metadata).read()
    else:
        data = new_manifest_list_input(io, location, key_id).read()
    header, schema = parse_avro(data, location)
    if not isinstance(schema, dict) or schema.get("type") != "record":
        raise InvalidManifestError(
            f"{location} is not a manifest list (its Avro schema is not a record)", location=location
        )
    try:
        names = _names(list(schema.get("fields", ())), {**_REQUIRED, **_OPTIONAL})
        summary = _names(_summary_fields(schema, names["partitions"]), _SUMMARY)
    except (KeyError, TypeError, ValueError, StopIteration) as exc:
        raise InvalidManifestError(
            f"{location} has an unreadable Avro schema: {exc!r}", location=location
        ) from None
    for field_id, ours in _REQUIRED.items():
        if names[ours] == _MISSING:
            raise InvalidManifestError(
                f"{location} has no '{ours}' (field id {field_id})", location=location, field=ours
            )
    n_null, n_nan, n_lower, n_upper = (
        summary[k] for k in ("contains_null", "contains_nan", "lower_bound", "upper_bound")
    )
    # The fields in ManifestFile's order; None for a field the file does not have.
    order = [
        "manifest_path",
        "manifest_length",
        "partition_spec_id",
        "content",
        "sequence_number",
        "min_sequence_number",
        "added_snapshot_id",
        "added_files_count",
        "existing_files_count",
        "deleted_files_count",
        "added_rows_count",
        "existing_rows_count",
        "deleted_rows_count",
        "partitions",
        "key_metadata",
        "first_row_id",
    ]
    result: list[ManifestFile] = []
    built: list[tuple[FieldSummary, ...] | None] | None = None  # the summaries, built from Arrow
    fields = [names[name] for name in order]  # a missing field's name gives None from .get
    batch, reason = native.decode(data, header, location)
    rows: Iterable[tuple[Any, ...]]
    if batch is not None:
        # Whole columns as Python values: the same values fastavro's records hold (structs
        # become dicts by field name), so every row goes through the same checks below.
        present = set(batch.schema.names)
        columns: list[Any] = [batch.column(f) if f in present else None for f in fields]
        built = _summaries(columns[13], (n_null, n_nan, n_lower, n_upper))
        rows = zip(
            *(
                repeat(None) if column is None else column.to_pylist() if k != 13 or built is None else built
                for k, column in enumerate(columns)
            )
        )
    else:
        rows = (tuple(map(rec.get, fields)) for rec in read_records(data, header, schema, location))
    for row in rows:
        try:
            (
                path,
                length,
                spec_id,
                content,
                seq,
                min_seq,
                snapshot_id,
                added_files,
                existing_files,
                deleted_files,
                added_rows,
                existing_rows,
                deleted_rows,
                partitions,
                key_metadata,
                first_row_id,
            ) = row
            if path is None or length is None or spec_id is None:
                raise KeyError("manifest_path, manifest_length and partition_spec_id are required")
            result.append(
                _new_manifest_file(
                    path,
                    length,
                    spec_id,
                    _CONTENT_VALUES[content] if content in _CONTENT_VALUES else ManifestContent(content or 0),
                    0 if seq is None else seq,
                    0 if min_seq is None else min_seq,
                    snapshot_id,
                    added_files,
                    existing_files,
                    deleted_files,
                    added_rows,
                    existing_rows,
                    deleted_rows,
                    None
                    if partitions is None
                    else partitions
                    if built is not None
                    else tuple(
                        FieldSummary(bool(p[n_null]), p.get(n_nan), p.get(n_lower), p.get(n_upper))
                        for p in partitions
                    ),
                    key_metadata,
                    first_row_id,
                )
            )
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise InvalidManifestError(
                f"{location} has an invalid manifest row ({type(exc).__name__}: {exc})", location=location
            ) from exc
    native.report_fallback(reason)
    return result
