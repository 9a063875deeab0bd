"""Manifest lists (spec: "Manifest Lists", "First Row ID Assignment").

Writing assigns what a commit decides: manifests written for this snapshot whose sequence
numbers are still ``UNASSIGNED_SEQ`` get the snapshot's sequence number, and in v3 every
data manifest without a ``first_row_id`` gets one, counting up from the snapshot's
``first-row-id`` by each manifest's added and existing row counts. The header carries what
Java writes: ``snapshot-id``, ``parent-snapshot-id`` ("null" for none), ``sequence-number``
(v2+), ``first-row-id`` (v3) and ``format-version``.

Reading is ``list_reader``'s (``read_manifest_list`` is re-exported here).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from types import TracebackType
from typing import Any

from icefloe.errors import ValidationError
from icefloe.io import FileIO, OutputFile
from icefloe.io.encryption import (
    EncryptedOutputFile,
    new_encrypted_output,
)
from icefloe.manifests._avro_file import avro_codec, write_records
from icefloe.manifests.list_reader import read_manifest_list
from icefloe.manifests.writer import UNASSIGNED_SEQ
from icefloe.serde.avro_schemas import manifest_list_schema, manifest_list_type
from icefloe.serde.schema_json import schema_to_json
from icefloe.spec.encryption import StandardKeyMetadata
from icefloe.spec.manifest import ManifestContent, ManifestFile

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
