"""Table encryption in the spec model: the key metadata of files, and which tables may encrypt.

``key_metadata`` of manifests, data and delete files (and of a snapshot's manifest list, kept in
the table's ``encryption-keys``) holds Java's ``StandardKeyMetadata``: one schema-version byte
(1) followed by the Avro binary encoding (no container, no single-object header) of::

    record StandardKeyMetadata {
      encryption_key: bytes                   (field id 0)
      aad_prefix:     union {null, bytes}     (field id 1)
      file_length:    union {null, long}      (field id 2, Java 1.11)
    }

Java 1.11 added ``file_length`` without bumping the version byte, and cannot read the shorter
form Java 1.9 writes; 1.9 ignores the trailing bytes of the longer one. So icefloe always writes
the 1.11 form and reads both. ``file_length`` is the file's stored (encrypted) length, which
the AES-GCM stream reader trusts instead of the storage's.

Pure Python: no cryptography here (that is ``icefloe.io.encryption``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from icefloe.errors import InvalidMetadataError, ValidationError
from icefloe.spec.properties import ENCRYPTION_DEK_LENGTH, ENCRYPTION_TABLE_KEY

__all__ = [
    "KEY_METADATA_VERSION",
    "StandardKeyMetadata",
    "check_encryption_properties",
    "check_key_id_unchanged",
    "is_encrypted",
]

#: The schema version byte Java writes (``StandardKeyMetadata.V1``).
KEY_METADATA_VERSION = 1
# Java's ``EncryptionUtil.ENCRYPTION_TABLE_PROPERTIES``, in its order.
_ENCRYPTION_PROPERTIES = (ENCRYPTION_TABLE_KEY, ENCRYPTION_DEK_LENGTH)


@dataclass(frozen=True, slots=True)
class StandardKeyMetadata:
    """The key of one encrypted file (Java's ``StandardKeyMetadata``).

    Attributes:
        encryption_key: the file's data encryption key (16, 24 or 32 bytes).
        aad_prefix: the file's AAD prefix (Java: 16 random bytes), or None.
        file_length: the file's stored (encrypted) length, once written; None before.
    """

    encryption_key: bytes
    aad_prefix: bytes | None = None
    file_length: int | None = None

    def __repr__(self) -> str:  # keys never reach logs or error messages
        return f"StandardKeyMetadata(<{len(self.encryption_key)}-byte key>, file_length={self.file_length})"

    def with_length(self, file_length: int) -> StandardKeyMetadata:
        """This key metadata with ``file_length`` set (Java's ``copyWithLength``)."""
        return StandardKeyMetadata(self.encryption_key, self.aad_prefix, file_length)

    def to_bytes(self) -> bytes:
        """The bytes Java 1.11 writes (``StandardKeyMetadata.buffer()``)."""
        out = bytearray([KEY_METADATA_VERSION])
        out += _long(len(self.encryption_key)) + self.encryption_key
        if self.aad_prefix is None:
            out += b"\x00"
        else:
            out += b"\x02" + _long(len(self.aad_prefix)) + self.aad_prefix
        out += b"\x00" if self.file_length is None else b"\x02" + _long(self.file_length)
        return bytes(out)

    @classmethod
    def parse(cls, data: bytes, *, location: str | None = None) -> StandardKeyMetadata:
        """Decode key metadata written by Java 1.9 (no ``file_length``), 1.11 or icefloe.

        Args:
            data: the stored bytes.
            location: the file the key metadata belongs to, for messages.

        Raises:
            InvalidMetadataError: not version-1 key metadata, or truncated (naming the file).
        """
        reader = _Reader(bytes(data), location)
        version = reader.byte()
        if version != KEY_METADATA_VERSION:
            raise reader.fail(f"unknown key metadata version {version} (icefloe reads version 1)")
        key = reader.bytes()
        aad = reader.bytes() if reader.branch("aad_prefix") else None
        length = None
        if not reader.at_end() and reader.branch("file_length"):  # absent in Java 1.9's form
            length = reader.long()
        if len(key) not in (16, 24, 32):
            raise reader.fail(f"encryption key of {len(key)} bytes (must be 16, 24 or 32)")
        return cls(key, aad, length)


def is_encrypted(properties: Mapping[str, str]) -> bool:
    """Whether table properties ask for encryption (``encryption.key-id`` is set)."""
    return bool(properties.get(ENCRYPTION_TABLE_KEY))


def check_encryption_properties(properties: Mapping[str, str], format_version: int) -> None:
    """Refuse encryption properties on a v1 or v2 table, as Java 1.11's
    ``EncryptionUtil.checkCompatibility`` does when a table is created.

    Raises:
        ValidationError: ``Invalid properties for v2: [encryption.key-id]`` (Java's message).
    """
    if format_version >= 3:
        return
    present = [name for name in _ENCRYPTION_PROPERTIES if name in properties]
    if present:
        raise ValidationError(f"Invalid properties for v{format_version}: [{', '.join(present)}]")


def check_key_id_unchanged(before: Mapping[str, str], after: Mapping[str, str]) -> None:
    """Refuse a commit that adds, changes or removes an existing table's ``encryption.key-id``,
    as Java's catalogs do (``HiveTableOperations``): files already written stay readable only
    with their key, and a table must not turn plaintext (or half encrypted) behind its readers.

    Raises:
        ValidationError: with Java's messages.
    """
    old, new = before.get(ENCRYPTION_TABLE_KEY), after.get(ENCRYPTION_TABLE_KEY)
    if old == new:
        return
    if new is None:
        raise ValidationError(f"Cannot remove key ID from an encrypted table ('{ENCRYPTION_TABLE_KEY}')")
    raise ValidationError(
        f"Cannot modify key ID of an encrypted table ('{ENCRYPTION_TABLE_KEY}' cannot be set or "
        "changed once the table exists)"
    )


def _long(value: int) -> bytes:
    """Avro's zig-zag varint encoding of a long."""
    zigzag = (value << 1) ^ (value >> 63)
    out = bytearray()
    while zigzag & ~0x7F:
        out.append((zigzag & 0x7F) | 0x80)
        zigzag >>= 7
    out.append(zigzag)
    return bytes(out)


class _Reader:
    """Avro binary values from key metadata bytes, failing with a typed error."""

    def __init__(self, data: bytes, location: str | None):
        self.data = data
        self.pos = 0
        self.location = location

    def fail(self, problem: str) -> InvalidMetadataError:
        return InvalidMetadataError(
            f"invalid key metadata: {problem}", location=self.location, field="key_metadata"
        )

    def at_end(self) -> bool:
        return self.pos >= len(self.data)

    def byte(self) -> int:
        if self.at_end():
            raise self.fail("empty")
        self.pos += 1
        return self.data[self.pos - 1]

    def long(self) -> int:
        shift = value = 0
        while True:
            if shift > 63:
                raise self.fail("a varint longer than 10 bytes")
            byte = self.byte_or_truncated()
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return (value >> 1) ^ -(value & 1)

    def byte_or_truncated(self) -> int:
        if self.at_end():
            raise self.fail("truncated")
        return self.byte()

    def bytes(self) -> bytes:
        size = self.long()
        if size < 0 or self.pos + size > len(self.data):
            raise self.fail("truncated")
        self.pos += size
        return self.data[self.pos - size : self.pos]

    def branch(self, name: str) -> bool:
        """Reads a ``[null, T]`` union's branch: whether the value is present."""
        index = self.long()
        if index not in (0, 1):
            raise self.fail(f"union branch {index} for '{name}'")
        return index == 1
