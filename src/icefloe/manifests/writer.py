"""Writing manifests (spec: "Manifests") as Java's ``ManifestWriter`` does.

A ``ManifestWriter`` collects entries and writes one Avro manifest when it is closed,
returning the ``ManifestFile`` row that describes it for the manifest list::

    with ManifestWriter(io, path, spec=spec, schema=schema, format_version=2, snapshot_id=s) as w:
        w.add(data_file)                                   # ADDED, sequence numbers inherited
        w.existing(old_file, snapshot_id=1, data_sequence_number=1, file_sequence_number=1)
    manifest = w.manifest_file

The row's ``sequence_number`` (and ``min_sequence_number`` when no live entry has a known
data sequence number) is ``UNASSIGNED_SEQ`` (-1, as in Java): the manifest list writer fills
in the snapshot's sequence number at commit.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Iterator, Mapping
from types import TracebackType
from typing import Any

import fastavro

from icefloe.errors import ValidationError
from icefloe.io import FileIO, OutputFile
from icefloe.io.encryption import EncryptedOutputFile, new_encrypted_output
from icefloe.manifests._avro_file import (
    ENCODED_CODECS,
    avro_codec,
    gc_paused,
    write_encoded_records,
    write_records,
)
from icefloe.manifests._values import PartitionSummary, avro_encoder
from icefloe.manifests.carried import CarriedBlock, CarriedEntry, leading_fields_schema
from icefloe.serde.avro_schemas import FIELD_ID_PROP, manifest_entry_schema, manifest_entry_type
from icefloe.serde.schema_json import partition_fields_to_json, schema_to_json
from icefloe.spec.manifest import (
    ContentFile,
    FileContent,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
)
from icefloe.spec.partitioning import PartitionSpec
from icefloe.spec.schema import Schema

__all__ = ["DEFAULT_BLOCK_SIZE", "UNASSIGNED_SEQ", "ManifestWriter", "write_manifest"]

#: The sequence number of a manifest (or of its min data sequence number) before commit.
UNASSIGNED_SEQ = -1
#: The v1 ``block_size_in_bytes`` every writer stores (Java's 64 MB default).
DEFAULT_BLOCK_SIZE = 64 * 1024 * 1024


def _json(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


def _map_entries(values: Mapping[int, Any] | None) -> tuple[str, list[dict[str, Any]]] | None:
    if values is None:
        return None
    # fastavro's (branch, value) notation for a union picks the array branch directly;
    # otherwise it first validates the whole array against each branch, which costs about as
    # much as writing it.
    return ("array", [{"key": k, "value": v} for k, v in values.items()])


def _with_maps(record: dict[str, Any], file: ContentFile) -> dict[str, Any]:
    """The entry record with its file's metrics maps (built only as it is written: the many
    small dicts they take never pile up, and never slow down the GC)."""
    data_file = record["data_file"]
    data_file["column_sizes"] = _map_entries(file.column_sizes)
    data_file["value_counts"] = _map_entries(file.value_counts)
    data_file["null_value_counts"] = _map_entries(file.null_value_counts)
    data_file["nan_value_counts"] = _map_entries(file.nan_value_counts)
    data_file["lower_bounds"] = _map_entries(file.lower_bounds)
    data_file["upper_bounds"] = _map_entries(file.upper_bounds)
    return record


class ManifestWriter:
    """Writes one manifest of data files or of delete files.

    Args:
        output: where to write: an ``OutputFile`` (``io.new_output(location)``, written as it
            is), or a FileIO with ``location`` (an encrypted table's FileIO encrypts the
            manifest, and its row records the key). The file is created on close.
        location: the manifest's location, when ``output`` is a FileIO.
        spec: the partition spec of every file in the manifest.
        schema: the table schema the spec is bound to (stored in the header; gives the
            partition value types).
        format_version: 1, 2 or 3.
        snapshot_id: the snapshot this manifest is written for; stored in ADDED entries and
            as the row's ``added_snapshot_id``. None lets both be inherited from the
            manifest list (appended manifests).
        content: DATA or DELETES (v2+).
        codec: Avro codec, an Iceberg ``write.avro.compression-codec`` value (gzip = deflate,
            the default, zstd, snappy, uncompressed).
        compression_level: the codec's level (``write.avro.compression-level``), or its default.
        overwrite: replace an existing file at the location.

    Raises:
        ValidationError: an unsupported format version, delete content in v1, an unknown codec.
        MissingDependencyError: the codec needs a package that is not installed.
    """

    def __init__(
        self,
        output: OutputFile | FileIO,
        location: str | None = None,
        *,
        spec: PartitionSpec,
        schema: Schema,
        format_version: int,
        snapshot_id: int | None,
        content: ManifestContent = ManifestContent.DATA,
        codec: str = "gzip",
        compression_level: int | None = None,
        overwrite: bool = False,
    ):
        if format_version not in (1, 2, 3):
            raise ValidationError(f"format version {format_version} is not supported; expected 1, 2 or 3")
        content = ManifestContent(content)
        if format_version == 1 and content != ManifestContent.DATA:
            raise ValidationError("v1 tables cannot have delete manifests")
        self._encrypted: EncryptedOutputFile | None = None
        if isinstance(output, FileIO):
            if location is None:
                raise ValidationError("ManifestWriter(io, location, ...): the manifest's location is missing")
            # Encrypted (an AES GCM stream) when ``output`` is an encrypted table's FileIO.
            self._encrypted = new_encrypted_output(output, location)
            output = self._encrypted.encrypting_output_file
        elif location is not None and location != output.location:
            raise ValidationError(
                f"ManifestWriter got an OutputFile for {output.location} and location {location}"
            )
        self.output: OutputFile = output
        self.spec = spec
        self.schema = schema
        self.format_version = format_version
        self.snapshot_id = snapshot_id
        self.content = content
        self._codec = avro_codec(codec)
        self._compression_level = compression_level
        self._overwrite = overwrite
        self._partition_type = spec.partition_type(schema)
        self._avro_schema = manifest_entry_schema(format_version, self._partition_type)
        partition_avro = next(
            f for f in self._avro_schema["fields"][-1]["type"]["fields"] if f["name"] == "partition"
        )
        names = {f[FIELD_ID_PROP]: f["name"] for f in partition_avro["type"]["fields"]}
        self._partition_fields = [
            (names[f.field_id], avro_encoder(f.field_type, f.name)) for f in self._partition_type.fields
        ]
        self._summary = PartitionSummary(self._partition_type)
        # Entries waiting for close(): the record without its metrics maps, and the file. The
        # maps (most of a manifest's bytes) are built while fastavro writes, one entry at a
        # time, so the many small dicts they take never pile up (and never slow down the GC).
        self._pending: list[tuple[dict[str, Any], ContentFile | CarriedEntry | CarriedBlock]] = []
        self._carried = 0  # entries written as encoded (``carry``)
        self._counts = {status: [0, 0] for status in ManifestEntryStatus}  # files, rows
        self._min_data_sequence_number: int | None = None
        self._manifest_file: ManifestFile | None = None
        self._closed = False

    # ---- entries ------------------------------------------------------------------------

    def add(self, file: ContentFile, data_sequence_number: int | None = None) -> None:
        """Add ``file`` as ADDED by this writer's snapshot.

        Its sequence numbers are inherited at read time, unless ``data_sequence_number`` is
        given (a file whose data is older than this commit, e.g. a compaction result); the
        file sequence number is always inherited.
        """
        self._add_entry(ManifestEntryStatus.ADDED, self.snapshot_id, file, data_sequence_number, None)

    def existing(
        self,
        file: ContentFile,
        snapshot_id: int,
        data_sequence_number: int | None,
        file_sequence_number: int | None,
    ) -> None:
        """Carry ``file`` over as EXISTING, with the snapshot that added it and its sequence
        numbers (required in v2+; v1 has none)."""
        self._add_entry(
            ManifestEntryStatus.EXISTING, snapshot_id, file, data_sequence_number, file_sequence_number
        )

    def delete(
        self,
        file: ContentFile,
        snapshot_id: int,
        data_sequence_number: int | None,
        file_sequence_number: int | None,
    ) -> None:
        """Record ``file`` as DELETED by ``snapshot_id`` (the deleting snapshot), keeping its
        sequence numbers (required in v2+)."""
        self._add_entry(
            ManifestEntryStatus.DELETED, snapshot_id, file, data_sequence_number, file_sequence_number
        )

    def add_entry(self, entry: ManifestEntry) -> None:
        """Write an entry as it is (status, snapshot id and sequence numbers)."""
        self._add_entry(
            ManifestEntryStatus(entry.status),
            entry.snapshot_id,
            entry.data_file,
            entry.sequence_number,
            entry.file_sequence_number,
        )

    @property
    def carries(self) -> bool:
        """Whether ``carry`` may write entries as encoded (v1 and v2 manifests of the null and
        deflate codecs; v3 writes carried data files' row ids out, which changes them)."""
        return self.format_version <= 2 and self._codec in ENCODED_CODECS

    @property
    def codec(self) -> str:
        """The Avro codec the manifest is written with (``deflate``, ``null``, ...)."""
        return self._codec

    @property
    def avro_schema(self) -> dict[str, Any]:
        """The Avro schema of the manifest (shared: do not mutate it)."""
        return self._avro_schema

    def carry(
        self,
        entry: CarriedEntry,
        status: ManifestEntryStatus,
        snapshot_id: int | None,
        data_sequence_number: int | None,
        file_sequence_number: int | None,
    ) -> None:
        """Write ``entry``'s file as it is encoded, with ``status``, ``snapshot_id`` and the
        sequence numbers (as ``existing`` / ``delete`` / ``add_entry`` would write its decoded
        file). ``entry`` must come from ``carried_entries(..., target_schema=self.avro_schema)``
        and ``carries`` be True."""
        if not self.carries:
            raise ValidationError(
                f"manifest writer for {self.output.location} cannot carry encoded entries "
                f"(format version {self.format_version}, codec {self._codec})"
            )
        record = self._entry_record(
            status,
            snapshot_id,
            (entry.content, entry.file_path, entry.partition, entry.record_count),
            data_sequence_number,
            file_sequence_number,
        )
        self._pending.append((record, entry))
        self._carried += 1

    def carry_block(self, block: CarriedBlock) -> None:
        """Write a block of EXISTING entries as it is stored (see ``CarriedBlock``); it must
        come from ``carried_entries(..., target_schema=self.avro_schema)`` of a manifest of
        this writer's content, and ``carries`` be True."""
        if not self.carries or block.codec != self._codec or block.content != self.content:
            raise ValidationError(
                f"manifest writer for {self.output.location} cannot carry a block of "
                f"{block.content.name} entries in codec {block.codec}"
            )
        if self._closed:
            raise ValidationError(f"manifest writer for {self.output.location} is closed")
        facts = block.facts
        for partition in facts.partitions:
            if len(partition) != len(self._partition_fields):
                raise ValidationError(
                    f"{self.output.location}: a carried partition has {len(partition)} values but spec "
                    f"{self.spec.spec_id} has {len(self._partition_fields)} fields"
                )
            self._summary.update(partition)
        counts = self._counts[ManifestEntryStatus.EXISTING]
        counts[0] += block.count
        counts[1] += facts.records
        self._count_live_sequence_number(facts.min_sequence_number)
        self._pending.append(({}, block))
        self._carried += 1

    def _add_entry(
        self,
        status: ManifestEntryStatus,
        snapshot_id: int | None,
        file: ContentFile,
        data_seq: int | None,
        file_seq: int | None,
    ) -> None:
        record = self._entry_record(
            status,
            snapshot_id,
            (file.content, file.file_path, file.partition, file.record_count),
            data_seq,
            file_seq,
        )
        record["data_file"] = self._data_file_record(file, status)
        self._pending.append((record, file))

    def _entry_record(
        self,
        status: ManifestEntryStatus,
        snapshot_id: int | None,
        file: tuple[FileContent, str, tuple[Any, ...], int],
        data_seq: int | None,
        file_seq: int | None,
    ) -> dict[str, Any]:
        """Check and count an entry (``file``: its content, path, partition and record count);
        its record's fields before ``data_file``."""
        content, path, partition, record_count = file
        if self._closed:
            raise ValidationError(f"manifest writer for {self.output.location} is closed")
        self._check_file(content, path, partition)
        if (
            self.format_version >= 2
            and status != ManifestEntryStatus.ADDED
            and (data_seq is None or file_seq is None)
        ):
            # Only ADDED entries inherit sequence numbers (spec: "Sequence Number Inheritance").
            raise ValidationError(f"{status.name} entry for {path} needs its data and file sequence numbers")
        if self.format_version == 1 and snapshot_id is None:
            raise ValidationError(f"v1 manifest entry for {path} needs a snapshot id")
        counts = self._counts[status]
        counts[0] += 1
        counts[1] += record_count
        self._summary.update(partition)
        if status != ManifestEntryStatus.DELETED:
            self._count_live_sequence_number(data_seq)
        record: dict[str, Any] = {"status": int(status), "snapshot_id": snapshot_id}
        if self.format_version >= 2:
            record["sequence_number"] = data_seq
            record["file_sequence_number"] = file_seq
        return record

    def _count_live_sequence_number(self, data_seq: int | None) -> None:
        """Keep the smallest known data sequence number of live entries (v2+): the row's
        ``min_sequence_number``."""
        if self.format_version >= 2 and data_seq is not None:
            current = self._min_data_sequence_number
            self._min_data_sequence_number = data_seq if current is None else min(current, data_seq)

    def _check_file(self, content: FileContent, path: str, partition: tuple[Any, ...]) -> None:
        is_data = content == FileContent.DATA
        if is_data != (self.content == ManifestContent.DATA):
            kind = "data" if self.content == ManifestContent.DATA else "delete"
            raise ValidationError(f"cannot write {path} (content {content.name}) to a {kind} manifest")
        if len(partition) != len(self._partition_fields):
            raise ValidationError(
                f"{path}: partition has {len(partition)} values but spec "
                f"{self.spec.spec_id} has {len(self._partition_fields)} fields"
            )

    def _data_file_record(self, file: ContentFile, status: ManifestEntryStatus) -> dict[str, Any]:
        partition = {
            name: (value if encode is None else encode(value))
            for (name, encode), value in zip(self._partition_fields, file.partition)
        }
        record: dict[str, Any] = {}
        if self.format_version >= 2:
            record["content"] = int(file.content)
        record["file_path"] = file.file_path
        record["file_format"] = file.file_format.value
        record["partition"] = partition
        record["record_count"] = file.record_count
        record["file_size_in_bytes"] = file.file_size_in_bytes
        if self.format_version == 1:
            record["block_size_in_bytes"] = DEFAULT_BLOCK_SIZE
        record["key_metadata"] = file.key_metadata
        record["split_offsets"] = None if file.split_offsets is None else list(file.split_offsets)
        if self.format_version >= 2:
            record["equality_ids"] = None if file.equality_ids is None else list(file.equality_ids)
        record["sort_order_id"] = file.sort_order_id
        if self.format_version >= 3:
            # New data files get their first row id by inheritance; carried-over files keep the
            # (inherited) value they were read with. Delete files never have one.
            keep = file.content == FileContent.DATA and status != ManifestEntryStatus.ADDED
            record["first_row_id"] = file.first_row_id if keep else None
        if self.format_version >= 2:
            record["referenced_data_file"] = file.referenced_data_file
        if self.format_version >= 3:
            record["content_offset"] = file.content_offset
            record["content_size_in_bytes"] = file.content_size_in_bytes
        return record

    # ---- finishing ----------------------------------------------------------------------

    def _records(self) -> Iterator[dict[str, Any]]:
        for record, file in self._pending:
            assert isinstance(file, ContentFile)  # no carried entry: see _encoded_records
            yield _with_maps(record, file)

    def _encoded_records(self) -> Iterator[bytes | tuple[int, bytes]]:
        """Every entry encoded: a carried one's leading fields followed by its file as read;
        the others whole, as fastavro writes them; carried blocks as they are stored."""
        whole = fastavro.parse_schema(json.loads(json.dumps(self._avro_schema)))
        leading = fastavro.parse_schema(leading_fields_schema(self._avro_schema))
        buffer = io.BytesIO()
        for record, item in self._pending:
            buffer.seek(0)
            buffer.truncate()
            if isinstance(item, CarriedBlock):
                yield item.count, item.data
                continue
            try:
                if isinstance(item, CarriedEntry):
                    fastavro.schemaless_writer(buffer, leading, record)
                    yield buffer.getvalue() + item.encoded_file
                else:
                    fastavro.schemaless_writer(buffer, whole, _with_maps(record, item))
                    yield buffer.getvalue()
            except (TypeError, ValueError, KeyError, OverflowError, AttributeError) as exc:
                raise ValidationError(
                    f"cannot write {self.output.location}: a value does not fit its Avro type ({exc})"
                ) from exc

    def _metadata(self) -> dict[str, str]:
        metadata = {
            "schema": _json(schema_to_json(self.schema)),
            "schema-id": str(self.schema.schema_id),
            "partition-spec": _json(partition_fields_to_json(self.spec)),
            "partition-spec-id": str(self.spec.spec_id),
            "format-version": str(self.format_version),
        }
        if self.format_version >= 2:
            metadata["content"] = "data" if self.content == ManifestContent.DATA else "deletes"
        metadata["iceberg.schema"] = _json(
            schema_to_json(manifest_entry_type(self.format_version, self._partition_type))
        )
        return metadata

    def close(self) -> ManifestFile:
        """Write the manifest file and return its manifest list row. Idempotent.

        Raises:
            FileAlreadyExistsError: the file exists (and ``overwrite`` is False).
            FileIOError: the storage failed; nothing is left behind.
            ValidationError: an entry does not fit the manifest schema.
        """
        if self._manifest_file is not None:
            return self._manifest_file
        self._closed = True
        location = self.output.location
        with self.output.create(overwrite=self._overwrite) as stream:
            if self._carried:
                with gc_paused():  # as write_records: the records' dicts hold no cycles
                    length = write_encoded_records(
                        stream,
                        self._avro_schema,
                        self._encoded_records(),
                        self._metadata(),
                        codec=self._codec,
                        compression_level=self._compression_level,
                    )
            else:
                length = write_records(
                    stream,
                    self._avro_schema,
                    self._records(),
                    self._metadata(),
                    codec=self._codec,
                    compression_level=self._compression_level,
                    location=location,
                )
        self._pending = []
        added, existing, deleted = (
            self._counts[ManifestEntryStatus.ADDED],
            self._counts[ManifestEntryStatus.EXISTING],
            self._counts[ManifestEntryStatus.DELETED],
        )
        min_seq = self._min_data_sequence_number
        key_metadata = None
        if self._encrypted is not None:
            # As Java 1.11: the stored length, recorded in the key metadata too.
            key_metadata = self._encrypted.key_metadata_bytes(length)
            length = self._encrypted.stored_length(length)
        self._manifest_file = ManifestFile(
            manifest_path=location,
            manifest_length=length,
            partition_spec_id=self.spec.spec_id,
            content=self.content,
            sequence_number=UNASSIGNED_SEQ,
            min_sequence_number=UNASSIGNED_SEQ if min_seq is None else min_seq,
            added_snapshot_id=self.snapshot_id,
            added_files_count=added[0],
            existing_files_count=existing[0],
            deleted_files_count=deleted[0],
            added_rows_count=added[1],
            existing_rows_count=existing[1],
            deleted_rows_count=deleted[1],
            partitions=self._summary.summaries(),
            key_metadata=key_metadata,
        )
        return self._manifest_file

    def to_manifest_file(self) -> ManifestFile:
        """The manifest list row of the written manifest (closes the writer if still open)."""
        return self.close()

    @property
    def manifest_file(self) -> ManifestFile:
        """The row of the written manifest; only after ``close()`` or the ``with`` block."""
        if self._manifest_file is None:
            raise ValidationError(
                f"manifest {self.output.location} is not written yet: close the writer first"
            )
        return self._manifest_file

    @property
    def entry_count(self) -> int:
        return sum(files for files, _ in self._counts.values())

    def __enter__(self) -> ManifestWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is None:
            self.close()
        else:
            # Nothing was written yet: the file is only created on close.
            self._closed = True
            self._pending = []


def write_manifest(
    io: FileIO,
    location: str,
    spec: PartitionSpec,
    schema: Schema,
    entries: Iterable[ManifestEntry | ContentFile],
    *,
    format_version: int,
    snapshot_id: int | None,
    content: ManifestContent = ManifestContent.DATA,
    codec: str = "gzip",
    compression_level: int | None = None,
    overwrite: bool = False,
) -> ManifestFile:
    """Write a manifest of ``entries`` at ``location`` and return its manifest list row.

    ``entries`` may mix ``ManifestEntry`` objects (written as they are) and bare files
    (written as ADDED). See ``ManifestWriter`` for the arguments.
    """
    writer = ManifestWriter(
        io,
        location,
        spec=spec,
        schema=schema,
        format_version=format_version,
        snapshot_id=snapshot_id,
        content=content,
        codec=codec,
        compression_level=compression_level,
        overwrite=overwrite,
    )
    with writer:
        for item in entries:
            if isinstance(item, ManifestEntry):
                writer.add_entry(item)
            else:
                writer.add(item)
    return writer.manifest_file
