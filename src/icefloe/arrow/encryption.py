"""Parquet modular encryption of data and delete files, as Java Iceberg writes and reads it.

Java's ``Parquet`` writer encrypts a file with its data key as the footer key and no column keys
(uniform encryption), an encrypted footer, AES_GCM_V1, and the file's AAD prefix supplied but not
stored in the file (``withoutAADPrefixStorage``); its reader supplies the same key and prefix.
pyarrow (25 and later) takes the key and prefix directly, and writes what Java writes.

Two choices keep the files readable by Java's parquet-mr / parquet-java: data pages v1 (files
pyarrow writes with v2 pages and encryption fail the GCM check there) and no bloom filters
(pyarrow cannot write them encrypted). icefloe's writers use page v1 and write no bloom filters.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from icefloe.errors import DecryptionError, MissingDependencyError
from icefloe.spec.encryption import StandardKeyMetadata

__all__ = [
    "MIN_PYARROW",
    "decryption_error",
    "decryption_properties",
    "encryption_properties",
    "is_decryption_failure",
    "read_options",
    "write_options",
]

#: The first pyarrow whose Parquet encryption takes a key and AAD prefix directly.
MIN_PYARROW = (25, 0)


def _parquet_encryption() -> Any:
    try:
        import pyarrow.parquet.encryption as pe  # not every pyarrow build has it
    except ImportError as exc:  # pragma: no cover - wheels from PyPI have it
        raise MissingDependencyError(
            "table encryption needs pyarrow built with Parquet encryption: pip install 'pyarrow>=25'"
        ) from exc
    if not hasattr(pe, "create_encryption_properties"):
        raise MissingDependencyError(
            f"table encryption needs pyarrow >= {MIN_PYARROW[0]} (this is {pa.__version__}): "
            "pip install 'icefloe[encryption]'"
        )
    return pe


def encryption_properties(key: StandardKeyMetadata) -> Any:
    """``pyarrow.parquet.FileEncryptionProperties`` writing a file as Java does with ``key``."""
    return _parquet_encryption().create_encryption_properties(
        key.encryption_key, aad_prefix=key.aad_prefix, store_aad_prefix=False
    )


def decryption_properties(key_metadata: bytes | None, location: str) -> Any:
    """``pyarrow.parquet.FileDecryptionProperties`` for a file whose ``key_metadata`` is given;
    None for a plaintext file (no key metadata).

    Raises:
        InvalidMetadataError: the key metadata cannot be decoded (naming the file).
    """
    if key_metadata is None:
        return None
    key = StandardKeyMetadata.parse(key_metadata, location=location)
    return _parquet_encryption().create_decryption_properties(key.encryption_key, aad_prefix=key.aad_prefix)


def is_decryption_failure(error: BaseException) -> bool:
    """Whether a pyarrow error reading an encrypted file means it did not decrypt (rather than
    a missing file): Parquet cannot tell a wrong key from tampered, truncated or swapped bytes."""
    return isinstance(error, (OSError, pa.ArrowException)) and not isinstance(error, FileNotFoundError)


def decryption_error(location: str, error: BaseException, what: str = "data file") -> DecryptionError:
    """The typed error for an encrypted Parquet file that does not decrypt."""
    return DecryptionError(
        f"cannot decrypt {what} {location}: {error} (a wrong key, or a tampered, truncated or swapped file)",
        location=location,
    )


def write_options(key: StandardKeyMetadata | None) -> dict[str, Any]:
    """Extra ``pq.ParquetWriter`` arguments for a file encrypted with ``key`` (none for None)."""
    if key is None:
        return {}
    # No page index: pyarrow's modular encryption of it is not one Java has been checked to read.
    return {
        "encryption_properties": encryption_properties(key),
        "data_page_version": "1.0",
        "write_page_index": False,
    }


def read_options(key_metadata: bytes | None, location: str) -> dict[str, Any]:
    """Extra ``pq.ParquetFile`` arguments for a file with ``key_metadata`` (none for None)."""
    properties = decryption_properties(key_metadata, location)
    return {} if properties is None else {"decryption_properties": properties}
