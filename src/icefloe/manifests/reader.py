"""Reading manifests (spec: "Manifests", "Sequence Number Inheritance", "First Row ID
Inheritance").

Fields are found by field id in the file's own Avro schema, so files whose Avro field names
differ from ours, or that lack optional fields, read correctly (a field without an id is
matched by its spec name). Values that a manifest leaves to inheritance are filled in from
the manifest's row in the manifest list:

- ``snapshot_id`` null -> the manifest's ``added_snapshot_id``;
- data / file sequence number null -> the manifest's ``sequence_number``, for ADDED entries
  (and for every entry when that is 0, which covers v1 manifests without sequence numbers);
- v3 data file ``first_row_id`` null -> the manifest's ``first_row_id`` plus the record counts
  of the earlier files in the manifest that also had none. DELETED entries take no part: they
  keep a null and use up no ids, as in Java 1.9 (whose manifest list assigns each manifest
  only its added + existing rows' worth of ids).

A file's ``spec_id`` is the manifest's ``partition_spec_id``. Partition values come back in
icefloe's value representation; bounds stay serialized bytes.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from icefloe.errors import InvalidManifestError, InvalidSchemaError
from icefloe.io import FileIO
from icefloe.io.encryption import new_decrypted_input
from icefloe.manifests._avro_file import AvroHeader, gc_paused, read_blocks, read_header, schema_of
from icefloe.manifests._values import avro_decoder
from icefloe.serde.avro_schemas import FIELD_ID_PROP, avro_to_iceberg
from icefloe.spec.manifest import (
    DataFile,
    DeleteFile,
    FileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
)
from icefloe.spec.types import IcebergType, StructType

__all__ = [
    "EntryLayout",
    "Inheritance",
    "ManifestHeader",
    "MetricsMapLayout",
    "entry_layout",
    "gc_paused",
    "manifest_records",
    "parse_avro",
    "read_manifest",
    "read_manifest_bytes",
    "read_manifest_header",
]

# The name looked up for a field the file does not have: never an Avro name, so ``.get``
# returns None for it.
_MISSING = "\x00missing"
_STATUSES = tuple(ManifestEntryStatus)
_CONTENTS = tuple(FileContent)
_FORMATS = {f.value: f for f in FileFormat}


@dataclass(frozen=True, slots=True)
class ManifestHeader:
    """What a manifest's Avro header says about it.

    Attributes:
        location: the manifest file.
        format_version: ``format-version`` (1 when absent, as in old v1 files).
        content: ``content`` (DATA when absent).
        partition_spec_id: ``partition-spec-id``, or None when absent.
        schema_id: ``schema-id``, or None when absent.
        schema_json: the table schema JSON text (``schema``), or None.
        partition_spec_json: the partition fields JSON text (``partition-spec``), or None.
        metadata: every key-value pair of the header except the Avro ones.
        avro_schema: the writer's Avro schema, parsed.
    """

    location: str
    format_version: int
    content: ManifestContent
    partition_spec_id: int | None
    schema_id: int | None
    schema_json: str | None
    partition_spec_json: str | None
    metadata: Mapping[str, str]
    avro_schema: Any


def _int_meta(metadata: Mapping[str, str], key: str, location: str) -> int | None:
    text = metadata.get(key)
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        raise InvalidManifestError(
            f"invalid '{key}' {text!r} in {location}", location=location, field=key
        ) from None


def _manifest_header(header: AvroHeader, avro_schema: Any, location: str) -> ManifestHeader:
    try:
        metadata = {k: v.decode("utf-8") for k, v in header.metadata.items() if not k.startswith("avro.")}
    except UnicodeDecodeError:
        raise InvalidManifestError(
            f"{location} has header metadata that is not UTF-8", location=location
        ) from None
    content_text = metadata.get("content", "data")
    if content_text not in ("data", "deletes"):
        raise InvalidManifestError(
            f"invalid manifest content {content_text!r} in {location}", location=location, field="content"
        )
    return ManifestHeader(
        location=location,
        format_version=_int_meta(metadata, "format-version", location) or 1,
        content=ManifestContent.DATA if content_text == "data" else ManifestContent.DELETES,
        partition_spec_id=_int_meta(metadata, "partition-spec-id", location),
        schema_id=_int_meta(metadata, "schema-id", location),
        schema_json=metadata.get("schema"),
        partition_spec_json=metadata.get("partition-spec"),
        metadata=metadata,
        avro_schema=avro_schema,
    )


def _read_checked(io: FileIO, location: str, length: int | None, key_metadata: bytes | None = None) -> bytes:
    if key_metadata is not None:
        # An AES GCM stream: decrypting checks every block and the stored length.
        return new_decrypted_input(io, location, key_metadata, length=length).read()
    data = io.new_input(location, length=length).read()
    if length is not None and len(data) < length:
        raise InvalidManifestError(
            f"{location} is truncated: {len(data)} bytes, but its manifest list says {length}",
            location=location,
        )
    return data


def load_avro(
    io: FileIO, location: str, length: int | None, *, key_metadata: bytes | None = None
) -> tuple[bytes, AvroHeader, Any]:
    """The file's bytes (decrypted with ``key_metadata`` when it has one), container header and
    writer schema (a shared object: do not mutate it).

    Raises:
        NoSuchFileError: the file does not exist.
        InvalidManifestError: shorter than ``length``, or not a valid Avro container.
        DecryptionError: an encrypted file does not decrypt (naming it).
    """
    data = _read_checked(io, location, length, key_metadata)
    return data, *parse_avro(data, location)


def parse_avro(data: bytes, location: str) -> tuple[AvroHeader, Any]:
    """The container header and writer schema of an Avro file's bytes.

    Raises:
        InvalidManifestError: not a valid Avro container.
    """
    header = read_header(data, location)
    return header, schema_of(header, location)


def read_manifest_header(io: FileIO, location: str) -> ManifestHeader:
    """Read only what a manifest's header says (spec, schema, content, format version).

    Raises:
        NoSuchFileError: the file does not exist.
        InvalidManifestError: the file is not a valid Avro manifest.
    """
    _, header, avro_schema = load_avro(io, location, None)
    # The parsed schema is shared by every reader of this schema: the caller gets its own copy.
    return _manifest_header(header, copy.deepcopy(avro_schema), location)


# ---- schema navigation ----------------------------------------------------------------------


class _Schemas:
    """Resolves named-type references in one writer schema."""

    def __init__(self, root: Any):
        self.named: dict[str, Any] = {}
        self._collect(root)

    def _collect(self, schema: Any) -> None:
        if isinstance(schema, list):
            for branch in schema:
                self._collect(branch)
        elif isinstance(schema, dict):
            kind = schema.get("type")
            if kind in ("record", "fixed", "enum") and "name" in schema:
                self.named.setdefault(schema["name"], schema)
            if kind == "record":
                for f in schema.get("fields", ()):
                    self._collect(f.get("type"))
            elif kind == "array":
                self._collect(schema.get("items"))
            elif kind == "map":
                self._collect(schema.get("values"))
            elif isinstance(kind, (dict, list)):
                self._collect(kind)

    def resolve(self, schema: Any) -> Any:
        """The schema with a top-level name reference or a nullable union unwrapped."""
        if isinstance(schema, list):
            branches = [b for b in schema if b != "null"]
            schema = branches[0] if len(branches) == 1 else schema
        if isinstance(schema, str) and schema in self.named:
            return self.named[schema]
        if isinstance(schema, dict) and isinstance(schema.get("type"), (dict, list)):
            return self.resolve(schema["type"])
        return schema

    def inline(self, schema: Any) -> Any:
        """The schema with every name reference replaced by its definition."""
        if isinstance(schema, str):
            named = self.named.get(schema)
            return schema if named is None or named is schema else self.inline(named)
        if isinstance(schema, list):
            return [self.inline(b) for b in schema]
        if not isinstance(schema, dict):
            return schema
        result = {
            k: (self.inline(v) if k in ("items", "values") or (k == "type" and not isinstance(v, str)) else v)
            for k, v in schema.items()
        }
        if schema.get("type") == "record":
            result["fields"] = [{**f, "type": self.inline(f.get("type"))} for f in schema.get("fields", ())]
        return result


@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    schema: Any  # resolved (union and name reference unwrapped)


def _fields_by_id(
    schemas: _Schemas, record: Any, location: str, what: str
) -> tuple[dict[int, _Field], dict[str, _Field]]:
    if not isinstance(record, dict) or record.get("type") != "record":
        raise InvalidManifestError(
            f"{location}: '{what}' is not an Avro record", location=location, field=what
        )
    by_id: dict[int, _Field] = {}
    no_id: dict[str, _Field] = {}
    for f in record.get("fields", ()):
        entry = _Field(f["name"], schemas.resolve(f["type"]))
        field_id = f.get(FIELD_ID_PROP)
        if field_id is None:
            no_id[f.get("iceberg-field-name", f["name"])] = entry
        else:
            by_id[int(field_id)] = entry
    return by_id, no_id


class _Record:
    """The fields of one Avro record, found by id (or by spec name when the file has no id)."""

    def __init__(self, schemas: _Schemas, record: Any, location: str, what: str):
        self.location = location
        self.what = what
        self.by_id, self.no_id = _fields_by_id(schemas, record, location, what)

    def find(self, field_id: int, name: str) -> _Field | None:
        return self.by_id.get(field_id) or self.no_id.get(name)

    def name(self, field_id: int, name: str) -> str:
        found = self.find(field_id, name)
        return _MISSING if found is None else found.name

    def required(self, field_id: int, name: str) -> _Field:
        found = self.find(field_id, name)
        if found is None:
            raise InvalidManifestError(
                f"{self.location} has no '{name}' (field id {field_id}) in {self.what}",
                location=self.location,
                field=name,
            )
        return found


@dataclass(frozen=True, slots=True)
class MetricsMapLayout:
    """How a manifest stores one int-keyed metrics map (``value_counts``, ``lower_bounds`` ...).

    Attributes:
        name: the file's Avro field name, or a name no record has when the file lacks it.
        key: the key field of the key-value records (Iceberg's form: an array of records);
            None when the file stores an Avro map (string keys).
        value: the value field of the key-value records; None for an Avro map.
    """

    name: str
    key: str | None = None
    value: str | None = None

    def reader(self) -> Callable[[Any], dict[int, Any] | None]:
        """A function from the stored value to a dict by field id (None stays None)."""
        if self.key is None or self.value is None:
            return lambda value: None if value is None else {int(k): v for k, v in value.items()}
        pairs = itemgetter(self.key, self.value)

        def read(value: Any) -> dict[int, Any] | None:
            if value is None:
                return None
            return dict(map(pairs, value))

        return read


def _map_layout(schemas: _Schemas, found: _Field | None, key_id: int) -> MetricsMapLayout:
    if found is None:
        return MetricsMapLayout(_MISSING)
    schema = found.schema
    if isinstance(schema, dict) and schema.get("type") == "map":  # Avro map: string keys
        return MetricsMapLayout(found.name)
    items = schemas.resolve(schema.get("items")) if isinstance(schema, dict) else None
    if not isinstance(items, dict) or items.get("type") != "record" or len(items.get("fields", ())) != 2:
        raise InvalidSchemaError(
            f"metrics map '{found.name}' is neither an Avro map nor an array of key-value records"
        )
    key_field, value_field = items["fields"]
    for f in items["fields"]:  # by id when the file has them
        if f.get(FIELD_ID_PROP) == key_id:
            key_field = f
        elif f.get(FIELD_ID_PROP) == key_id + 1:
            value_field = f
    return MetricsMapLayout(found.name, key_field["name"], value_field["name"])


def _partition_plan(
    schemas: _Schemas, found: _Field, partition_type: StructType | None, location: str
) -> list[tuple[str, Callable[[Any], Any] | None]]:
    record = _Record(schemas, found.schema, location, "partition")
    plan: list[tuple[str, Callable[[Any], Any] | None]] = []
    if partition_type is not None:
        for pf in partition_type.fields:
            plan.append((record.name(pf.field_id, pf.name), avro_decoder(pf.field_type)))
        return plan
    for f in found.schema.get("fields", ()):
        try:
            field_type: IcebergType = avro_to_iceberg(schemas.inline(schemas.resolve(f["type"])))
        except InvalidSchemaError as exc:
            raise InvalidManifestError(
                f"{location}: cannot read partition field '{f['name']}': {exc}",
                location=location,
                field=f["name"],
            ) from None
        plan.append((f["name"], avro_decoder(field_type)))
    return plan


def _partition_reader(
    plan: list[tuple[str, Callable[[Any], Any] | None]],
) -> Callable[[Any], tuple[Any, ...]]:
    part_names = [name for name, _ in plan]
    if any(conv is not None for _, conv in plan):

        def partition_of(part: dict[str, Any]) -> tuple[Any, ...]:
            return tuple(part.get(name) if conv is None else conv(part.get(name)) for name, conv in plan)

    elif len(part_names) > 1 and _MISSING not in part_names:
        getter = itemgetter(*part_names)

        def partition_of(part: dict[str, Any]) -> tuple[Any, ...]:
            return getter(part)  # type: ignore[no-any-return]

    else:

        def partition_of(part: dict[str, Any]) -> tuple[Any, ...]:
            return tuple(part.get(name) for name in part_names)

    return partition_of


@dataclass(frozen=True, slots=True, eq=False)
class EntryLayout:
    """Where a manifest file keeps each field of its entries: the file's Avro field names, found
    by field id (by spec name for fields without an id). A field the file lacks has a name no
    record holds, so ``record.get(name)`` gives None for it.

    One layout serves every manifest written with the same Avro schema and partition type.

    Attributes:
        partition_names: the partition record's field names, in partition-tuple order.
        partition_converters: per partition field, the function from the stored value to
            icefloe's value, or None when the stored value is the value.
        partition_of: the partition tuple of a stored partition record.
    """

    status: str
    snapshot_id: str
    sequence_number: str
    file_sequence_number: str
    data_file: str
    content: str
    file_path: str
    file_format: str
    partition: str
    record_count: str
    file_size_in_bytes: str
    column_sizes: MetricsMapLayout
    value_counts: MetricsMapLayout
    null_value_counts: MetricsMapLayout
    nan_value_counts: MetricsMapLayout
    lower_bounds: MetricsMapLayout
    upper_bounds: MetricsMapLayout
    key_metadata: str
    split_offsets: str
    equality_ids: str
    sort_order_id: str
    first_row_id: str
    referenced_data_file: str
    content_offset: str
    content_size_in_bytes: str
    partition_names: tuple[str, ...]
    partition_converters: tuple[Callable[[Any], Any] | None, ...]
    partition_of: Callable[[Any], tuple[Any, ...]]


def _build_layout(avro_schema: Any, partition_type: StructType | None, location: str) -> EntryLayout:
    schemas = _Schemas(avro_schema)
    entry = _Record(schemas, schemas.resolve(avro_schema), location, "manifest_entry")
    # Required fields are checked in the spec's order, so the first missing one is named.
    status = entry.required(0, "status").name
    data_file_field = entry.required(2, "data_file")
    df = _Record(schemas, data_file_field.schema, location, "data_file")
    file_path = df.required(100, "file_path").name
    file_format = df.required(101, "file_format").name
    partition_field = df.required(102, "partition")
    plan = _partition_plan(schemas, partition_field, partition_type, location)
    return EntryLayout(
        status=status,
        snapshot_id=entry.name(1, "snapshot_id"),
        sequence_number=entry.name(3, "sequence_number"),
        file_sequence_number=entry.name(4, "file_sequence_number"),
        data_file=data_file_field.name,
        content=df.name(134, "content"),
        file_path=file_path,
        file_format=file_format,
        partition=partition_field.name,
        record_count=df.required(103, "record_count").name,
        file_size_in_bytes=df.required(104, "file_size_in_bytes").name,
        column_sizes=_map_layout(schemas, df.find(108, "column_sizes"), 117),
        value_counts=_map_layout(schemas, df.find(109, "value_counts"), 119),
        null_value_counts=_map_layout(schemas, df.find(110, "null_value_counts"), 121),
        nan_value_counts=_map_layout(schemas, df.find(137, "nan_value_counts"), 138),
        lower_bounds=_map_layout(schemas, df.find(125, "lower_bounds"), 126),
        upper_bounds=_map_layout(schemas, df.find(128, "upper_bounds"), 129),
        key_metadata=df.name(131, "key_metadata"),
        split_offsets=df.name(132, "split_offsets"),
        equality_ids=df.name(135, "equality_ids"),
        sort_order_id=df.name(140, "sort_order_id"),
        first_row_id=df.name(142, "first_row_id"),
        referenced_data_file=df.name(143, "referenced_data_file"),
        content_offset=df.name(144, "content_offset"),
        content_size_in_bytes=df.name(145, "content_size_in_bytes"),
        partition_names=tuple(name for name, _ in plan),
        partition_converters=tuple(conv for _, conv in plan),
        partition_of=_partition_reader(plan),
    )


# (id of a parsed writer schema, partition type) -> (the schema, its layout). Writer schemas
# are shared objects (``_avro_file`` parses each distinct text once), and the schema is kept in
# the value, so an id cannot be reused while its entry exists.
_LAYOUTS: dict[tuple[int, StructType | None], tuple[Any, EntryLayout]] = {}
_LAYOUTS_LIMIT = 512


def entry_layout(avro_schema: Any, partition_type: StructType | None, location: str) -> EntryLayout:
    """The layout of the entries of a manifest written with ``avro_schema`` (cached per schema
    and partition type).

    Raises:
        InvalidManifestError: the schema lacks a required field or is not a manifest's schema.
    """
    key = (id(avro_schema), partition_type)
    found = _LAYOUTS.get(key)
    if found is not None and found[0] is avro_schema:
        return found[1]
    try:
        layout = _build_layout(avro_schema, partition_type, location)
    except InvalidManifestError:
        raise
    except (InvalidSchemaError, KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InvalidManifestError(
            f"{location} has an unreadable Avro schema: {exc!r}", location=location
        ) from None
    if len(_LAYOUTS) >= _LAYOUTS_LIMIT:
        _LAYOUTS.clear()
    _LAYOUTS[key] = (avro_schema, layout)
    return layout


def read_manifest_bytes(io: FileIO, manifest: ManifestFile) -> bytes:
    """The content of ``manifest``'s file, checked against the length its list row records,
    decrypted when the row has key metadata (an encrypted table's manifest).

    Raises:
        NoSuchFileError: the manifest does not exist.
        InvalidManifestError: the file is shorter than its row says.
        DecryptionError: an encrypted manifest does not decrypt (wrong key, tampered,
            truncated or swapped), naming it.
    """
    return _read_checked(io, manifest.manifest_path, manifest.manifest_length or None, manifest.key_metadata)


def manifest_records(
    data: bytes, location: str, partition_type: StructType | None = None, *, chunk: int = 1 << 30
) -> tuple[EntryLayout, Iterator[list[dict[str, Any]]]]:
    """The layout of a manifest's entries and its stored records, in file order, in lists of
    at most ``chunk`` records (see ``_avro_file.read_blocks``).

    The header and schema are checked before this returns; blocks are decoded as they are
    iterated. Records are as stored: no inheritance applied (see ``read_manifest``).

    Raises:
        InvalidManifestError: not a valid Avro manifest (also while iterating, for a corrupt
            or truncated block).
        MissingDependencyError: the file's codec needs a package that is not installed.
    """
    header = read_header(data, location)
    avro_schema = schema_of(header, location)
    layout = entry_layout(avro_schema, partition_type, location)
    return layout, read_blocks(data, header, location, chunk=chunk)


@dataclass(frozen=True, slots=True)
class Inheritance:
    """What a manifest's entries inherit from its list row (spec: "Snapshot ID Inheritance"
    and "Sequence Number Inheritance"): a null snapshot id the row's ``added_snapshot_id``; a
    null data or file sequence number of an ADDED entry (of every entry in a v1 manifest, at
    sequence number 0) the row's sequence number, unless the manifest is not committed yet."""

    snapshot_id: int | None
    sequence_number: int | None  # None: nothing to hand down (UNASSIGNED_SEQ)
    every_entry: bool

    @classmethod
    def of(cls, manifest: ManifestFile) -> Inheritance:
        seq = manifest.sequence_number
        inherit = seq is not None and seq >= 0
        return cls(manifest.added_snapshot_id, seq if inherit else None, seq == 0)

    def apply(
        self, status: ManifestEntryStatus, snapshot_id: int | None, seq: int | None, file_seq: int | None
    ) -> tuple[int | None, int | None, int | None]:
        """The entry's snapshot id and data and file sequence numbers, as read."""
        if snapshot_id is None:
            snapshot_id = self.snapshot_id
        inherited = self.sequence_number
        if inherited is not None and (self.every_entry or status is ManifestEntryStatus.ADDED):
            if seq is None:
                seq = inherited
            if file_seq is None:
                file_seq = inherited
        return snapshot_id, seq, file_seq


def _entry_decoder(layout: EntryLayout, manifest: ManifestFile) -> Callable[[dict[str, Any]], ManifestEntry]:
    """A function decoding one stored entry into a ManifestEntry, inheritance applied."""
    n_status = layout.status
    n_snapshot = layout.snapshot_id
    n_seq = layout.sequence_number
    n_file_seq = layout.file_sequence_number
    n_data_file = layout.data_file
    n_content = layout.content
    n_path = layout.file_path
    n_format = layout.file_format
    n_partition = layout.partition
    n_records = layout.record_count
    n_size = layout.file_size_in_bytes
    column_sizes = layout.column_sizes.reader()
    value_counts = layout.value_counts.reader()
    null_counts = layout.null_value_counts.reader()
    nan_counts = layout.nan_value_counts.reader()
    lower_bounds = layout.lower_bounds.reader()
    upper_bounds = layout.upper_bounds.reader()
    n_column_sizes = layout.column_sizes.name
    n_value_counts = layout.value_counts.name
    n_null_counts = layout.null_value_counts.name
    n_nan_counts = layout.nan_value_counts.name
    n_lower = layout.lower_bounds.name
    n_upper = layout.upper_bounds.name
    n_key_metadata = layout.key_metadata
    n_split_offsets = layout.split_offsets
    n_equality_ids = layout.equality_ids
    n_sort_order_id = layout.sort_order_id
    n_first_row_id = layout.first_row_id
    n_referenced = layout.referenced_data_file
    n_content_offset = layout.content_offset
    n_content_size = layout.content_size_in_bytes
    partition_of = layout.partition_of

    spec_id = manifest.partition_spec_id
    inherit = Inheritance.of(manifest).apply
    next_row_id = manifest.first_row_id if manifest.content == ManifestContent.DATA else None
    deleted = ManifestEntryStatus.DELETED
    data_content = FileContent.DATA

    def decode_entry(rec: dict[str, Any]) -> ManifestEntry:
        nonlocal next_row_id
        d = rec[n_data_file]
        status = _STATUSES[rec[n_status]]
        content = _CONTENTS[d.get(n_content) or 0]
        file_format = d[n_format]
        record_count = d[n_records]
        split_offsets = d.get(n_split_offsets)
        equality_ids = d.get(n_equality_ids)
        first_row_id = d.get(n_first_row_id)
        if (
            first_row_id is None
            and next_row_id is not None
            and content is data_content
            and status is not deleted
        ):
            first_row_id = next_row_id
            next_row_id += record_count
        file = (DataFile if content is data_content else DeleteFile)(
            file_path=d[n_path],
            file_format=_FORMATS.get(file_format) or FileFormat.parse(file_format),
            record_count=record_count,
            file_size_in_bytes=d[n_size],
            partition=partition_of(d[n_partition]),
            content=content,
            spec_id=spec_id,
            column_sizes=column_sizes(d.get(n_column_sizes)),
            value_counts=value_counts(d.get(n_value_counts)),
            null_value_counts=null_counts(d.get(n_null_counts)),
            nan_value_counts=nan_counts(d.get(n_nan_counts)),
            lower_bounds=lower_bounds(d.get(n_lower)),
            upper_bounds=upper_bounds(d.get(n_upper)),
            key_metadata=d.get(n_key_metadata),
            split_offsets=None if split_offsets is None else tuple(split_offsets),
            equality_ids=None if equality_ids is None else tuple(equality_ids),
            sort_order_id=d.get(n_sort_order_id),
            first_row_id=first_row_id,
            referenced_data_file=d.get(n_referenced),
            content_offset=d.get(n_content_offset),
            content_size_in_bytes=d.get(n_content_size),
        )
        snapshot_id, seq, file_seq = inherit(status, rec.get(n_snapshot), rec.get(n_seq), rec.get(n_file_seq))
        return ManifestEntry(status, snapshot_id, file, seq, file_seq)

    return decode_entry


def read_manifest(
    io: FileIO, manifest: ManifestFile, *, partition_type: StructType | None = None, data: bytes | None = None
) -> Iterator[ManifestEntry]:
    """The entries of a manifest, in file order, with inherited values filled in.

    The file is read and its header checked before this returns; entries are decoded as
    they are iterated.

    Args:
        io: reads the file.
        manifest: the manifest's manifest list row (gives inheritance and the spec id).
        partition_type: the partition struct of the manifest's spec. Partition tuples follow
            its field order (by field id; fields the file lacks are None). Without it, the
            tuple follows the file's partition record, typed from its Avro schema.
        data: the file's content (``read_manifest_bytes``), when the caller has read it.

    Raises:
        NoSuchFileError: the manifest does not exist.
        InvalidManifestError: the file is truncated, corrupt, or lacks a required field (also
            raised while iterating, for a corrupt block).
    """
    location = manifest.manifest_path
    if data is None:
        data = read_manifest_bytes(io, manifest)
    layout, blocks = manifest_records(data, location, partition_type)
    decode = _entry_decoder(layout, manifest)
    return _entries(blocks, decode, location)


def _entries(
    blocks: Iterator[list[dict[str, Any]]], decode: Callable[[dict[str, Any]], ManifestEntry], location: str
) -> Iterator[ManifestEntry]:
    for block in blocks:
        for record in block:
            try:
                yield decode(record)
            except (KeyError, IndexError, TypeError, ValueError) as exc:
                raise InvalidManifestError(
                    f"{location} has an invalid entry ({type(exc).__name__}: {exc})", location=location
                ) from exc
