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

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from icefloe.errors import InvalidManifestError, InvalidSchemaError
from icefloe.io import FileIO
from icefloe.manifests._avro_file import AvroHeader, read_header, read_records, schema_of
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

__all__ = ["ManifestHeader", "read_manifest", "read_manifest_header"]

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


def load_avro(io: FileIO, location: str, length: int | None) -> tuple[bytes, AvroHeader, Any]:
    """The file's bytes, container header and writer schema.

    Raises:
        NoSuchFileError: the file does not exist.
        InvalidManifestError: shorter than ``length``, or not a valid Avro container.
    """
    data = io.new_input(location, length=length).read()
    if length is not None and len(data) < length:
        raise InvalidManifestError(
            f"{location} is truncated: {len(data)} bytes, but its manifest list says {length}",
            location=location,
        )
    header = read_header(data, location)
    return data, header, schema_of(header, location)


def read_manifest_header(io: FileIO, location: str) -> ManifestHeader:
    """Read only what a manifest's header says (spec, schema, content, format version).

    Raises:
        NoSuchFileError: the file does not exist.
        InvalidManifestError: the file is not a valid Avro manifest.
    """
    _, header, avro_schema = load_avro(io, location, None)
    return _manifest_header(header, avro_schema, location)


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


def _map_reader(schemas: _Schemas, found: _Field | None, key_id: int) -> Callable[[Any], Any]:
    """Turns the stored form of an int-keyed metrics map into a dict."""
    if found is None:
        return lambda value: None
    schema = found.schema
    if isinstance(schema, dict) and schema.get("type") == "map":  # Avro map: string keys
        return lambda value: None if value is None else {int(k): v for k, v in value.items()}
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
    pairs = itemgetter(key_field["name"], value_field["name"])

    def read(value: Any) -> Any:
        if value is None:
            return None
        return dict(map(pairs, value))

    return read


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


def _entry_decoder(
    avro_schema: Any, manifest: ManifestFile, partition_type: StructType | None, location: str
) -> Callable[[dict[str, Any]], ManifestEntry]:
    """A function decoding one stored entry into a ManifestEntry, inheritance applied."""
    schemas = _Schemas(avro_schema)
    entry = _Record(schemas, schemas.resolve(avro_schema), location, "manifest_entry")
    n_status = entry.required(0, "status").name
    n_snapshot = entry.name(1, "snapshot_id")
    n_seq = entry.name(3, "sequence_number")
    n_file_seq = entry.name(4, "file_sequence_number")
    data_file_field = entry.required(2, "data_file")
    n_data_file = data_file_field.name
    df = _Record(schemas, data_file_field.schema, location, "data_file")
    n_content = df.name(134, "content")
    n_path = df.required(100, "file_path").name
    n_format = df.required(101, "file_format").name
    partition_field = df.required(102, "partition")
    n_partition = partition_field.name
    n_records = df.required(103, "record_count").name
    n_size = df.required(104, "file_size_in_bytes").name
    column_sizes = _map_reader(schemas, df.find(108, "column_sizes"), 117)
    value_counts = _map_reader(schemas, df.find(109, "value_counts"), 119)
    null_counts = _map_reader(schemas, df.find(110, "null_value_counts"), 121)
    nan_counts = _map_reader(schemas, df.find(137, "nan_value_counts"), 138)
    lower_bounds = _map_reader(schemas, df.find(125, "lower_bounds"), 126)
    upper_bounds = _map_reader(schemas, df.find(128, "upper_bounds"), 129)
    n_key_metadata = df.name(131, "key_metadata")
    n_split_offsets = df.name(132, "split_offsets")
    n_equality_ids = df.name(135, "equality_ids")
    n_sort_order_id = df.name(140, "sort_order_id")
    n_first_row_id = df.name(142, "first_row_id")
    n_referenced = df.name(143, "referenced_data_file")
    n_content_offset = df.name(144, "content_offset")
    n_content_size = df.name(145, "content_size_in_bytes")

    plan = _partition_plan(schemas, partition_field, partition_type, location)
    part_names = [name for name, _ in plan]
    part_converters = [(name, conv) for name, conv in plan if conv is not None]
    if part_converters:

        def partition_of(part: dict[str, Any]) -> tuple[Any, ...]:
            return tuple(part.get(name) if conv is None else conv(part.get(name)) for name, conv in plan)

    elif len(part_names) > 1 and _MISSING not in part_names:
        getter = itemgetter(*part_names)

        def partition_of(part: dict[str, Any]) -> tuple[Any, ...]:
            return getter(part)  # type: ignore[no-any-return]

    else:

        def partition_of(part: dict[str, Any]) -> tuple[Any, ...]:
            return tuple(part.get(name) for name in part_names)

    spec_id = manifest.partition_spec_id
    inherited_snapshot_id = manifest.added_snapshot_id
    manifest_seq = manifest.sequence_number
    # A manifest not committed yet (UNASSIGNED_SEQ) has no sequence number to hand down.
    inherit_seq = manifest_seq is not None and manifest_seq >= 0
    inherit_all = manifest_seq == 0  # v1 manifests: every entry is at sequence number 0
    next_row_id = manifest.first_row_id if manifest.content == ManifestContent.DATA else None
    added = ManifestEntryStatus.ADDED
    deleted = ManifestEntryStatus.DELETED
    data_content = FileContent.DATA

    n_column_sizes = df.name(108, "column_sizes")
    n_value_counts = df.name(109, "value_counts")
    n_null_counts = df.name(110, "null_value_counts")
    n_nan_counts = df.name(137, "nan_value_counts")
    n_lower = df.name(125, "lower_bounds")
    n_upper = df.name(128, "upper_bounds")

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
        snapshot_id = rec.get(n_snapshot)
        if snapshot_id is None:
            snapshot_id = inherited_snapshot_id
        seq = rec.get(n_seq)
        file_seq = rec.get(n_file_seq)
        if inherit_seq and (inherit_all or status is added):
            if seq is None:
                seq = manifest_seq
            if file_seq is None:
                file_seq = manifest_seq
        return ManifestEntry(status, snapshot_id, file, seq, file_seq)

    return decode_entry


def read_manifest(
    io: FileIO, manifest: ManifestFile, *, partition_type: StructType | None = None
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

    Raises:
        NoSuchFileError: the manifest does not exist.
        InvalidManifestError: the file is truncated, corrupt, or lacks a required field (also
            raised while iterating, for a corrupt block).
    """
    location = manifest.manifest_path
    data, header, avro_schema = load_avro(io, location, manifest.manifest_length or None)
    try:
        decode = _entry_decoder(avro_schema, manifest, partition_type, location)
    except (InvalidSchemaError, KeyError, TypeError, ValueError) as exc:
        raise InvalidManifestError(
            f"{location} has an unreadable Avro schema: {exc!r}", location=location
        ) from None
    return _entries(read_records(data, header, avro_schema, location), decode, location)


def _entries(
    records: Iterator[dict[str, Any]], decode: Callable[[dict[str, Any]], ManifestEntry], location: str
) -> Iterator[ManifestEntry]:
    for record in records:
        try:
            yield decode(record)
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise InvalidManifestError(
                f"{location} has an invalid entry ({type(exc).__name__}: {exc})", location=location
            ) from exc
