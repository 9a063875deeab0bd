"""Writing deletion vectors (v3): the deleted positions of data files as Puffin blobs.

One Puffin file holds the vectors of many data files (of any partitions), one
``deletion-vector-v1`` blob each, as Java's ``BaseDVFileWriter`` writes them: blob fields
``[2147483645]`` (``_pos``), snapshot id and sequence number -1 (inherited on commit), blob
properties ``referenced-data-file`` and ``cardinality``, the file property ``created-by``. The
file goes to the table's data location (``{prefix}-00001-deletes.puffin``, no partition
directory: its vectors may belong to several partitions).

Each vector is described by a ``DeleteFile``: format PUFFIN, content position deletes, the
Puffin file's path and size, ``referenced_data_file``, ``content_offset`` and
``content_size_in_bytes`` (the blob), ``record_count`` (the cardinality), and the referenced
data file's spec id and partition. Nothing is committed.

A data file may have at most one vector per snapshot: a writer merges every ``delete`` call for
one data file into one vector. Merging with deletes already in the table (earlier vectors or
position delete files) is the caller's job: pass the union of old and new positions, and
remove the old delete files in the same commit.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from icefloe.errors import ValidationError
from icefloe.io import FileIO, load_location_provider
from icefloe.io.deletion_vector import DV_BLOB_TYPE, serialize_deletion_vector
from icefloe.io.encryption import new_encrypted_output
from icefloe.io.puffin import PuffinWriter
from icefloe.spec.manifest import DataFile, DeleteFile, FileContent, FileFormat
from icefloe.write.deletes import positions_array
from icefloe.write.parquet import file_name_prefix

__all__ = [
    "CARDINALITY_PROPERTY",
    "REFERENCED_DATA_FILE_PROPERTY",
    "ROW_POSITION_ID",
    "DeletionVectorWriter",
    "created_by",
    "write_deletion_vectors",
]

#: Blob properties of a deletion vector (Puffin spec).
REFERENCED_DATA_FILE_PROPERTY = "referenced-data-file"
CARDINALITY_PROPERTY = "cardinality"
#: Field id of ``_pos``, the field a vector's blob is computed for (as Java records it).
ROW_POSITION_ID = 2147483645


def created_by() -> str:
    """The ``created-by`` value icefloe writes: ``icefloe <version>``."""
    try:
        return f"icefloe {importlib.metadata.version('icefloe')}"
    except importlib.metadata.PackageNotFoundError:  # running from a source checkout
        return "icefloe"


@dataclass
class _Target:
    """The deletes collected for one data file."""

    spec_id: int
    partition: tuple[Any, ...]
    chunks: list[np.ndarray] = field(default_factory=list)


class DeletionVectorWriter:
    """Collects deleted positions per data file and writes them as one Puffin file.

    Usage::

        writer = DeletionVectorWriter(io, table_location=..., properties=...)
        writer.delete(data_file, [0, 7, 9])
        writer.delete(other_file, positions_array)
        dvs = writer.close()   # one DeleteFile per data file, all in one Puffin file

    Nothing is written before :meth:`close`; a writer with no deletes writes no file.
    """

    def __init__(
        self,
        io: FileIO,
        *,
        table_location: str,
        properties: Mapping[str, str],
        file_name_prefix: str | None = None,
        location: str | None = None,
    ):
        """Args:
        io: the table's FileIO.
        table_location: the table's base location.
        properties: the table properties (``write.data.path``, object-store layout).
        file_name_prefix: the Puffin file is ``<prefix>-00001-deletes.puffin`` under the
            table's data location; default a fresh Java-style prefix.
        location: write exactly here instead.
        """
        self._io = io
        if location is None:
            prefix = file_name_prefix if file_name_prefix is not None else _new_prefix()
            location = load_location_provider(table_location, properties).new_data_location(
                f"{prefix}-00001-deletes.puffin"
            )
        self.location = location
        self._targets: dict[str, _Target] = {}
        self._result: list[DeleteFile] | None = None

    def delete(
        self, data_file: DataFile | str, positions: Any, *, spec_id: int = 0, partition: Any = ()
    ) -> None:
        """Record deleted positions of one data file (repeated calls add up).

        Args:
            data_file: the data file (its spec id and partition are used), or its path with
                ``spec_id`` and ``partition`` given.
            positions: 0-based row positions: an integer sequence, numpy or Arrow array.

        Raises:
            ValidationError: the writer is closed; the same path with another partition.
        """
        if self._result is not None:
            raise ValidationError(f"deletion vector writer for {self.location} is closed")
        if isinstance(data_file, DataFile):
            path, spec_id, partition = data_file.file_path, data_file.spec_id, data_file.partition
        else:
            path = data_file
        target = self._targets.get(path)
        if target is None:
            target = self._targets[path] = _Target(spec_id, tuple(partition))
        elif target.spec_id != spec_id or target.partition != tuple(partition):
            raise ValidationError(
                f"data file {path} given with partition {tuple(partition)!r} of spec {spec_id}, "
                f"and before with {target.partition!r} of spec {target.spec_id}"
            )
        target.chunks.append(positions_array(positions))

    def close(self) -> list[DeleteFile]:
        """Write the Puffin file; returns one DeleteFile per data file (in ``delete`` order).

        Raises:
            ValidationError: a position is negative or too large for a deletion vector.
            FileIOError: a storage failure (nothing is published).
        """
        if self._result is not None:
            return self._result
        vectors: list[tuple[str, _Target, bytes, int]] = []
        for path, target in self._targets.items():
            positions = np.unique(np.concatenate(target.chunks)) if target.chunks else np.zeros(0, np.int64)
            if len(positions) == 0:
                continue
            vectors.append((path, target, serialize_deletion_vector(positions), len(positions)))
        if not vectors:
            self._result = []
            return self._result
        blobs = []
        # An encrypted table's Puffin file is an AES GCM stream; blob offsets stay plaintext ones.
        encrypted = new_encrypted_output(self._io, self.location)
        with PuffinWriter(encrypted.encrypting_output_file, created_by=created_by()) as writer:
            for path, _, blob, cardinality in vectors:
                blobs.append(
                    writer.write_blob(
                        blob,
                        type=DV_BLOB_TYPE,
                        fields=(ROW_POSITION_ID,),
                        properties={
                            REFERENCED_DATA_FILE_PROPERTY: path,
                            CARDINALITY_PROPERTY: str(cardinality),
                        },
                    )
                )
        size = encrypted.stored_length(writer.file_size)
        # As Java 1.11.x: every DV of the file records the file's key (1.11.0 dropped it).
        key_metadata = encrypted.key_metadata_bytes(writer.file_size)
        self._result = [
            DeleteFile(
                file_path=self.location,
                file_format=FileFormat.PUFFIN,
                record_count=cardinality,
                file_size_in_bytes=size,
                partition=target.partition,
                content=FileContent.POSITION_DELETES,
                spec_id=target.spec_id,
                referenced_data_file=path,
                content_offset=blob.offset,
                content_size_in_bytes=blob.length,
                key_metadata=key_metadata,
            )
            for (path, target, _, cardinality), blob in zip(vectors, blobs)
        ]
        return self._result


def write_deletion_vectors(
    io: FileIO,
    *,
    table_location: str,
    properties: Mapping[str, str],
    deletes: Mapping[DataFile, Any] | Iterable[tuple[DataFile, Any]],
    file_name_prefix: str | None = None,
    location: str | None = None,
) -> list[DeleteFile]:
    """Write the deleted positions of data files as deletion vectors in one Puffin file.

    Args:
        io: the table's FileIO.
        table_location: the table's base location.
        properties: the table properties.
        deletes: ``{DataFile: positions}`` or ``(DataFile, positions)`` pairs; positions of one
            data file given twice are merged into its one vector.
        file_name_prefix: see :class:`DeletionVectorWriter`.
        location: write exactly here instead.

    Returns:
        one DeleteFile per data file with deletes; no deletes write no file.

    Raises:
        ValidationError: a negative position, or one beyond what a vector can hold.
        FileIOError: a storage failure (nothing is published).
    """
    writer = DeletionVectorWriter(
        io,
        table_location=table_location,
        properties=properties,
        file_name_prefix=file_name_prefix,
        location=location,
    )
    items = deletes.items() if isinstance(deletes, Mapping) else deletes
    for data_file, positions in items:
        writer.delete(data_file, positions)
    return writer.close()


def _new_prefix() -> str:
    return file_name_prefix()
