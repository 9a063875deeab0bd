"""``EncryptingFileIO``: an encrypted table's FileIO, carrying the table's encryption manager.

It reads and writes bytes exactly as the FileIO it wraps (``new_input``, ``new_output``, ...
return plain files), so ``table.io()`` stays a FileIO like any other. What it adds is the
manager, which the layers that write and read Iceberg files find through :func:`encryption_of`:
manifest and manifest list writers encrypt through it, readers of manifest lists find the
list's key through it. Every other file carries its own key in its ``key_metadata``, so reading
it needs no manager: :func:`new_decrypted_input` works on any FileIO.

The helpers here are what those layers call, for plaintext tables too (where they are the
plain FileIO calls).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from icefloe.errors import MissingKeyError
from icefloe.io.encryption.manager import (
    PLAINTEXT,
    EncryptedOutputFile,
    EncryptionManager,
    StandardEncryptionManager,
    decrypt_input,
)
from icefloe.io.fileio import FileInfo, FileIO, InputFile, OutputFile
from icefloe.spec.encryption import StandardKeyMetadata
from icefloe.spec.snapshots import Snapshot

if TYPE_CHECKING:
    import pyarrow.fs

__all__ = [
    "EncryptingFileIO",
    "encryption_of",
    "manifest_list_keys",
    "new_decrypted_input",
    "new_encrypted_output",
    "new_manifest_list_input",
]


class EncryptingFileIO(FileIO):
    """``io`` with an encryption manager (Java's ``EncryptingFileIO``).

    Args:
        io: the FileIO doing the storage work.
        encryption: the table's manager.
    """

    def __init__(self, io: FileIO, encryption: StandardEncryptionManager):
        super().__init__(io.properties)
        self.io = io
        self.encryption = encryption

    def new_input(self, location: str, *, length: int | None = None) -> InputFile:
        return self.io.new_input(location, length=length)

    def new_output(self, location: str) -> OutputFile:
        return self.io.new_output(location)

    def delete(self, location: str) -> None:
        self.io.delete(location)

    def delete_many(self, locations: Any) -> None:
        self.io.delete_many(locations)

    def list_prefix(self, prefix: str) -> Iterator[FileInfo]:
        return self.io.list_prefix(prefix)

    def write_exclusive(self, location: str, data: bytes) -> None:
        self.io.write_exclusive(location, data)

    def arrow_filesystem(self, location: str) -> tuple[pyarrow.fs.FileSystem, str]:
        return self.io.arrow_filesystem(location)

    def close(self) -> None:
        self.io.close()

    def __reduce__(self) -> tuple[Any, ...]:
        return (EncryptingFileIO, (self.io, self.encryption))

    def __repr__(self) -> str:
        return f"EncryptingFileIO({self.io!r}, {self.encryption!r})"


def encryption_of(io: FileIO) -> EncryptionManager:
    """The encryption manager ``io`` carries (the plaintext one for a plain FileIO)."""
    return io.encryption if isinstance(io, EncryptingFileIO) else PLAINTEXT


def new_encrypted_output(io: FileIO, location: str) -> EncryptedOutputFile:
    """The file to write an AES GCM stream (manifest, manifest list, Puffin) at ``location``
    through: encrypted when ``io`` is an encrypted table's, else the plain file."""
    return encryption_of(io).encrypt(io.new_output(location))


def new_decrypted_input(
    io: FileIO, location: str, key_metadata: bytes | None, *, length: int | None = None
) -> InputFile:
    """The plaintext of the AES GCM stream at ``location`` whose key is ``key_metadata``; the
    plain file when ``key_metadata`` is None.

    Args:
        length: the stored length when known (a manifest's ``manifest_length``, a file's
            ``file_size_in_bytes``); the key metadata's own length wins.

    Raises:
        InvalidMetadataError: the key metadata cannot be decoded.
    """
    if key_metadata is None:
        return io.new_input(location, length=length)
    parsed = StandardKeyMetadata.parse(key_metadata, location=location)
    stored = parsed.file_length if parsed.file_length is not None else length
    return decrypt_input(io.new_input(location, length=stored), parsed)


def new_manifest_list_input(io: FileIO, location: str, key_id: str | None) -> InputFile:
    """The plaintext of a snapshot's manifest list.

    Args:
        key_id: the snapshot's ``key-id``; None looks the list up among the snapshots the
            manager has seen (so ``read_manifest_list(table.io(), snapshot.manifest_list)``
            works on an encrypted table too).

    Raises:
        MissingKeyError: the list is encrypted and ``io`` carries no manager, or the table is
            encrypted and no key is known for the list: an encrypted table's manifest lists
            are never read as plaintext.
        KeyManagementError, DecryptionError: see ``StandardEncryptionManager``.
    """
    encryption = encryption_of(io)
    if isinstance(encryption, StandardEncryptionManager):
        key_id = key_id or encryption.manifest_list_key_id(location)
        if key_id is None:
            raise MissingKeyError(
                f"manifest list {location} of an encrypted table has no key: no snapshot of the "
                "table's metadata names it with a key-id",
                location=location,
            )
        key_metadata = encryption.manifest_list_key_metadata(key_id, location=location)
        return new_decrypted_input(io, location, key_metadata.to_bytes())
    if key_id is not None:
        raise MissingKeyError(
            f"manifest list {location} is encrypted (key-id '{key_id}'), but the table has no "
            "encryption manager: its metadata lacks 'encryption.key-id' or was read without the "
            "catalog's key management client",
            location=location,
        )
    return io.new_input(location)


def manifest_list_keys(io: FileIO, snapshots: Iterable[Snapshot]) -> dict[str, bytes]:
    """The key metadata of each snapshot's encrypted manifest list, by location (none for a
    plaintext table), for readers in other processes (Spark tasks) that should not need the KMS.

    Raises:
        KeyManagementError, MissingKeyError, DecryptionError: see ``StandardEncryptionManager``.
    """
    encryption = encryption_of(io)
    if not isinstance(encryption, StandardEncryptionManager):
        return {}
    return {
        snapshot.manifest_list: encryption.manifest_list_key_metadata(
            snapshot.key_id, location=snapshot.manifest_list
        ).to_bytes()
        for snapshot in snapshots
        if snapshot.manifest_list and snapshot.key_id
    }
