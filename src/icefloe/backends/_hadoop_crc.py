"""Hadoop's checksum files, for files that Java's local Hadoop file system also reads.

Java's ``LocalFileSystem`` (a ``ChecksumFileSystem``) writes ``.<name>.crc`` beside every file
it writes and verifies it on every read: a file replaced without its checksum fails Java's
next read with a ``ChecksumException``. The format: the magic ``crc\\0``, the big-endian int32
bytes-per-checksum (512), then one big-endian CRC-32 (zlib's polynomial) per chunk of that
many bytes.
"""

from __future__ import annotations

import struct
import zlib

__all__ = ["BYTES_PER_CHECKSUM", "checksum_location", "hadoop_checksum"]

_MAGIC = b"crc\x00"
BYTES_PER_CHECKSUM = 512


def hadoop_checksum(data: bytes, bytes_per_checksum: int = BYTES_PER_CHECKSUM) -> bytes:
    """The content of the ``.crc`` file Hadoop writes for a file holding ``data``."""
    out = bytearray(_MAGIC)
    out += struct.pack(">i", bytes_per_checksum)
    for start in range(0, len(data), bytes_per_checksum):
        out += struct.pack(">I", zlib.crc32(data[start : start + bytes_per_checksum]))
    return bytes(out)


def checksum_location(location: str) -> str:
    """Where Hadoop keeps the checksum of ``location``: ``<dir>/.<name>.crc``."""
    directory, slash, name = location.rpartition("/")
    return f"{directory}{slash}.{name}.crc"
