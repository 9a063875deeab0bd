"""Encryption managers: what encrypts a table's files and decrypts them (Java's ``EncryptionManager``).

- :class:`PlaintextEncryptionManager`: tables without ``encryption.key-id`` (the default).
- :class:`StandardEncryptionManager` (Java 1.11's): each file gets a fresh data key and AAD
  prefix, recorded as its ``key_metadata``; manifests, manifest lists and deletion-vector
  Puffin files are AES GCM streams (:mod:`.ags1`), data and delete files Parquet modular
  encryption. A snapshot's manifest list key metadata is kept in the table's ``encryption-keys``,
  encrypted by a key encryption key (KEK), itself wrapped by the table's master key in the KMS:

  ======================= ===========================================================
  entry of encryption-keys what it holds
  ======================= ===========================================================
  a KEK                    ``encrypted-key-metadata``: the KEK wrapped by the KMS under
                           the table key; ``encrypted-by-id``: the table key id;
                           ``properties``: ``KEY_TIMESTAMP`` (epoch ms of its creation)
  a manifest list's key    ``encrypted-key-metadata``: the list's StandardKeyMetadata,
                           AES-GCM under the KEK with the KEK's timestamp as AAD;
                           ``encrypted-by-id``: the KEK; the snapshot's ``key-id`` names it
  ======================= ===========================================================

  A KEK is reused for 730 days (NIST SP 800-57), then a new one is made, as Java does.

Managers pickle (they travel with the table to Spark executors): the KMS client as its
properties, the known keys as they are; unwrapped KEKs stay in the process that unwrapped them.
"""

from __future__ import annotations

import base64
import binascii
import os
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from icefloe.errors import DecryptionError, KeyManagementError, MissingKeyError, ValidationError
from icefloe.io.encryption import _gcm
from icefloe.io.encryption.ags1 import AesGcmInputFile, AesGcmOutputFile, encrypted_length
from icefloe.io.encryption.kms import ENCRYPTION_KMS_IMPL, ENCRYPTION_KMS_TYPE, KeyManagementClient
from icefloe.io.fileio import InputFile, OutputFile
from icefloe.spec.encryption import StandardKeyMetadata, check_encryption_properties
from icefloe.spec.properties import (
    ENCRYPTION_AAD_LENGTH_DEFAULT,
    ENCRYPTION_DEK_LENGTH,
    ENCRYPTION_DEK_LENGTH_DEFAULT,
    ENCRYPTION_TABLE_KEY,
    int_property,
)
from icefloe.spec.table_metadata import EncryptedKey, TableMetadata

__all__ = [
    "KEY_ENCRYPTION_KEY_LIFESPAN_MS",
    "KEY_TIMESTAMP",
    "EncryptedOutputFile",
    "EncryptionManager",
    "PlaintextEncryptionManager",
    "StandardEncryptionManager",
    "create_encryption_manager",
    "decrypt_input",
]

#: The property of a KEK entry that holds its creation time (epoch ms), also its GCM AAD.
KEY_TIMESTAMP = "KEY_TIMESTAMP"
#: How long a KEK is used for new manifest lists: two years (Java's value).
KEY_ENCRYPTION_KEY_LIFESPAN_MS = 730 * 24 * 60 * 60 * 1000


@dataclass(frozen=True, slots=True)
class EncryptedOutputFile:
    """A file to write and the key that encrypts it (Java's ``EncryptedOutputFile``).

    Attributes:
        encrypting_output_file: write through this one: its stream encrypts (an AES GCM
            stream), or is the plain file's for a plaintext table.
        key_metadata: the file's key (None: plaintext); record it, with the stored length, in
            the file's ``key_metadata``.
        plain_output_file: the file on storage, for writers that encrypt natively (Parquet).
    """

    encrypting_output_file: OutputFile
    key_metadata: StandardKeyMetadata | None
    plain_output_file: OutputFile

    def stored_length(self, plain_length: int) -> int:
        """The stored length of the file once ``plain_length`` bytes went through
        ``encrypting_output_file``."""
        return plain_length if self.key_metadata is None else encrypted_length(plain_length)

    def key_metadata_bytes(self, plain_length: int) -> bytes | None:
        """The file's ``key_metadata`` once ``plain_length`` bytes were written (the stored
        length recorded, as Java 1.11 records it); None for a plaintext file."""
        if self.key_metadata is None:
            return None
        return self.key_metadata.with_length(encrypted_length(plain_length)).to_bytes()


@runtime_checkable
class EncryptionManager(Protocol):
    """Encrypts the files a table writes and decrypts those it reads (the seed's
    ``EncryptionManager``). Implementations pickle: they travel to Spark executors."""

    def encrypt(self, output_file: OutputFile) -> EncryptedOutputFile:
        """The file to write instead of ``output_file``, with its key."""
        ...

    def decrypt(self, input_file: InputFile, key_metadata: bytes | None = None) -> InputFile:
        """The file to read instead of ``input_file``, whose key is ``key_metadata`` (None:
        the file is plaintext)."""
        ...


def decrypt_input(input_file: InputFile, key_metadata: bytes | StandardKeyMetadata) -> AesGcmInputFile:
    """``input_file`` (an AES GCM stream) decrypted with its key metadata, read at the stored
    length the key metadata records (or the storage's when it records none: Java 1.9's form).

    Needs no manager and no KMS: a file's key metadata holds its key.

    Raises:
        InvalidMetadataError: the key metadata cannot be decoded.
    """
    parsed = (
        key_metadata
        if isinstance(key_metadata, StandardKeyMetadata)
        else StandardKeyMetadata.parse(key_metadata, location=input_file.location)
    )
    return AesGcmInputFile(input_file, parsed.encryption_key, parsed.aad_prefix, parsed.file_length)


@dataclass(frozen=True, slots=True)
class PlaintextEncryptionManager:
    """No encryption: files are written as they are; a file that does have key metadata
    (written by an encrypting engine) is still decrypted, never read as plaintext."""

    def encrypt(self, output_file: OutputFile) -> EncryptedOutputFile:
        return EncryptedOutputFile(output_file, None, output_file)

    def decrypt(self, input_file: InputFile, key_metadata: bytes | None = None) -> InputFile:
        return input_file if key_metadata is None else decrypt_input(input_file, key_metadata)


PLAINTEXT = PlaintextEncryptionManager()


class StandardEncryptionManager:
    """Java 1.11's ``StandardEncryptionManager`` (see the module for the key hierarchy).

    Args:
        table_key_id: the table's master key id in the KMS (``encryption.key-id``).
        data_key_length: bytes of each data key and KEK (``encryption.data-key-length``).
        kms: wraps and unwraps KEKs with the master key.
        keys: entries of the table's ``encryption-keys`` known so far (:meth:`learn` adds).

    Raises:
        ValidationError: a data key length other than 16, 24 or 32.
    """

    def __init__(
        self,
        table_key_id: str,
        data_key_length: int,
        kms: KeyManagementClient,
        keys: Iterable[EncryptedKey] = (),
    ):
        if data_key_length not in (16, 24, 32):
            raise ValidationError(f"Invalid data key length: {data_key_length} (must be 16, 24, or 32)")
        if not table_key_id:
            raise ValidationError("Invalid encryption key ID: empty")
        self.table_key_id = table_key_id
        self.data_key_length = data_key_length
        self.kms = kms
        self._keys: dict[str, EncryptedKey] = {}
        self._list_keys: dict[str, str] = {}  # manifest list location -> its key id
        self._unwrapped: dict[str, bytes] = {}  # KEK id -> KEK, this process only
        self._lock = threading.Lock()
        self._add_keys(keys)

    # ---- per file ------------------------------------------------------------------------------

    def new_key_metadata(self) -> StandardKeyMetadata:
        """A fresh data key and AAD prefix for one file."""
        return StandardKeyMetadata(
            os.urandom(self.data_key_length), os.urandom(ENCRYPTION_AAD_LENGTH_DEFAULT)
        )

    def encrypt(self, output_file: OutputFile) -> EncryptedOutputFile:
        key = self.new_key_metadata()
        return EncryptedOutputFile(
            AesGcmOutputFile(output_file, key.encryption_key, key.aad_prefix), key, output_file
        )

    def decrypt(self, input_file: InputFile, key_metadata: bytes | None = None) -> InputFile:
        if key_metadata is None:
            # Java allows plaintext files (no key metadata) in an encrypted table: the
            # authenticated manifest that lists the file says so.
            return input_file
        return decrypt_input(input_file, key_metadata)

    # ---- the keys the table holds ---------------------------------------------------------------

    @property
    def encryption_keys(self) -> tuple[EncryptedKey, ...]:
        """Every ``encryption-keys`` entry this manager knows."""
        with self._lock:
            return tuple(self._keys.values())

    def _add_keys(self, keys: Iterable[EncryptedKey]) -> None:
        with self._lock:
            for key in keys:
                self._keys.setdefault(key.key_id, key)

    def learn(self, metadata: TableMetadata) -> None:
        """Remember the keys and manifest lists of ``metadata`` (a version of this table), so that
        files it references can be read. Keys are never forgotten: key ids are unique, and
        Iceberg never changes an entry."""
        self._add_keys(metadata.encryption_keys)
        with self._lock:
            for snapshot in metadata.snapshots:
                if snapshot.key_id is not None and snapshot.manifest_list:
                    self._list_keys.setdefault(snapshot.manifest_list, snapshot.key_id)

    def manifest_list_key_id(self, location: str) -> str | None:
        """The key id of the manifest list at ``location``, if a snapshot learned names it."""
        return self._list_keys.get(location)

    # ---- manifest list keys ---------------------------------------------------------------------

    def add_manifest_list_key_metadata(
        self,
        key_metadata: StandardKeyMetadata,
        table_keys: Sequence[EncryptedKey],
        *,
        location: str | None = None,
        now_ms: int | None = None,
    ) -> tuple[str, list[EncryptedKey]]:
        """Encrypt a new manifest list's key metadata for the table's ``encryption-keys``
        (Java's ``addManifestListKeyMetadata``).

        Args:
            key_metadata: the list's key metadata, its stored length included.
            table_keys: the ``encryption-keys`` of the metadata the snapshot is committed on:
                an unexpired KEK among them is reused, otherwise one is made.
            location: the manifest list, for messages and later reads.
            now_ms: the time (epoch ms) that decides KEK expiry; default now.

        Returns:
            the key id for the snapshot's ``key-id``, and the entries to add to
            ``encryption-keys`` (a new KEK, if one was made, then the list's key).

        Raises:
            KeyManagementError, MissingKeyError: the KMS cannot wrap or unwrap the KEK.
        """
        now = int(time.time() * 1000) if now_ms is None else now_ms
        list_key_id = _new_key_id()  # Java draws it before the KEK's
        kek, added = self._key_encryption_key(table_keys, now)
        timestamp = kek.properties[KEY_TIMESTAMP]
        sealed = _gcm.encrypt(self._unwrap(kek, location), key_metadata.to_bytes(), timestamp.encode("utf-8"))
        entry = EncryptedKey(list_key_id, base64.b64encode(sealed).decode("ascii"), kek.key_id)
        added.append(entry)
        self._add_keys(added)
        if location is not None:
            with self._lock:
                self._list_keys[location] = list_key_id
        return list_key_id, added

    def _key_encryption_key(
        self, table_keys: Sequence[EncryptedKey], now_ms: int
    ) -> tuple[EncryptedKey, list[EncryptedKey]]:
        for key in table_keys:
            if key.encrypted_by_id != self.table_key_id:
                continue
            try:
                created = int(key.properties[KEY_TIMESTAMP])
            except (KeyError, ValueError):
                continue  # not usable as a KEK: Java could not read its age either
            if now_ms - created < KEY_ENCRYPTION_KEY_LIFESPAN_MS:
                return key, []
        kek = os.urandom(self.data_key_length)
        wrapped = self.kms.wrap_key(kek, self.table_key_id)
        entry = EncryptedKey(
            _new_key_id(),
            base64.b64encode(wrapped).decode("ascii"),
            self.table_key_id,
            {KEY_TIMESTAMP: str(now_ms)},
        )
        with self._lock:
            self._unwrapped[entry.key_id] = kek
        return entry, [entry]

    def manifest_list_key_metadata(self, key_id: str, *, location: str | None = None) -> StandardKeyMetadata:
        """The key metadata of a snapshot's manifest list, from the entry ``key_id`` names.

        Raises:
            MissingKeyError: the table's ``encryption-keys`` hold no such entry or no KEK for it,
                or the KMS has no table master key.
            KeyManagementError: ``key_id`` names a KEK, the KEK has no timestamp, or it does not
                unwrap.
            DecryptionError: the entry does not decrypt under its KEK (tampered).
        """
        where = f"manifest list {location}" if location else f"manifest list key '{key_id}'"
        with self._lock:
            entry = self._keys.get(key_id)
            kek = self._keys.get(entry.encrypted_by_id or "") if entry is not None else None
        if entry is None:
            raise MissingKeyError(
                f"cannot decrypt {where}: the table's encryption-keys hold no key '{key_id}'",
                location=location,
            )
        if entry.encrypted_by_id == self.table_key_id:
            raise KeyManagementError(f"{key_id} is a key encryption key, not manifest list key metadata")
        if kek is None:
            raise MissingKeyError(
                f"cannot decrypt {where}: its key encryption key '{entry.encrypted_by_id}' is not in the "
                "table's encryption-keys",
                location=location,
            )
        timestamp = kek.properties.get(KEY_TIMESTAMP)
        if timestamp is None:
            raise KeyManagementError(f"Key encryption key must be timestamped ('{kek.key_id}', for {where})")
        try:
            plain = _gcm.decrypt(
                self._unwrap(kek, location), _b64(entry, location), timestamp.encode("utf-8")
            )
        except _gcm.AuthenticationFailed:
            raise DecryptionError(
                f"cannot decrypt the key metadata of {where} (key '{key_id}'): GCM tag check failed "
                "(a tampered key entry or KEK timestamp)",
                location=location,
            ) from None
        return StandardKeyMetadata.parse(plain, location=location)

    def _unwrap(self, kek: EncryptedKey, location: str | None) -> bytes:
        with self._lock:
            found = self._unwrapped.get(kek.key_id)
        if found is not None:
            return found
        try:
            # As Java: a KEK is unwrapped with the *table* key id.
            key = self.kms.unwrap_key(_b64(kek, location), self.table_key_id)
        except KeyManagementError as exc:
            if location is None:
                raise
            raise type(exc)(f"cannot read manifest list {location}: {exc}", location=location) from exc
        with self._lock:
            self._unwrapped[kek.key_id] = key
        return key

    # ---- pickling ------------------------------------------------------------------------------

    def __reduce__(self) -> tuple[Any, ...]:
        with self._lock:
            keys, lists = tuple(self._keys.values()), dict(self._list_keys)
        return (_restore, (self.table_key_id, self.data_key_length, self.kms, keys, lists))

    def __repr__(self) -> str:
        return f"StandardEncryptionManager(table_key_id={self.table_key_id!r}, data_key_length={self.data_key_length})"


def _restore(
    table_key_id: str,
    data_key_length: int,
    kms: KeyManagementClient,
    keys: tuple[EncryptedKey, ...],
    lists: dict[str, str],
) -> StandardEncryptionManager:
    manager = StandardEncryptionManager(table_key_id, data_key_length, kms, keys)
    manager._list_keys.update(lists)
    return manager


def _new_key_id() -> str:
    """Java's ``generateKeyId``: base64 (standard, padded) of 16 random bytes."""
    return base64.b64encode(os.urandom(16)).decode("ascii")


def _b64(entry: EncryptedKey, location: str | None) -> bytes:
    try:
        return base64.b64decode(entry.encrypted_key_metadata, validate=True)
    except (binascii.Error, ValueError):
        raise KeyManagementError(
            f"encryption key '{entry.key_id}' has encrypted-key-metadata that is not base64",
            location=location,
        ) from None


def create_encryption_manager(
    metadata: TableMetadata, kms: KeyManagementClient | None, *, table_name: str | None = None
) -> StandardEncryptionManager | PlaintextEncryptionManager:
    """The manager of a table version (Java's ``EncryptionUtil.createEncryptionManager``): the
    plaintext one without ``encryption.key-id``, else a standard one that knows the version's keys.

    Raises:
        ValidationError: encryption properties on a v1 or v2 table, or a bad data key length.
        KeyManagementError: the table is encrypted and no key management client is configured.
    """
    properties = metadata.properties
    table_key_id = properties.get(ENCRYPTION_TABLE_KEY)
    if not table_key_id:
        return PLAINTEXT
    check_encryption_properties(properties, metadata.format_version)
    if kms is None:
        raise KeyManagementError(
            f"Cannot create encryption manager without a key management client"
            f"{f' for table {table_name}' if table_name else ''}: the table sets '{ENCRYPTION_TABLE_KEY}'; "
            f"set the catalog property '{ENCRYPTION_KMS_TYPE}' or '{ENCRYPTION_KMS_IMPL}'"
        )
    length = int_property(properties, ENCRYPTION_DEK_LENGTH, ENCRYPTION_DEK_LENGTH_DEFAULT)
    manager = StandardEncryptionManager(table_key_id, length, kms)
    manager.learn(metadata)
    return manager
