"""StandardKeyMetadata bytes (Java 1.11's encoding, Java 1.9's read too) and the builder's rules
on encryption keys."""

from __future__ import annotations

import pytest

from icefloe.errors import InvalidMetadataError
from icefloe.spec.builder import MetadataBuilder, new_table_metadata
from icefloe.spec.encryption import StandardKeyMetadata
from icefloe.spec.partitioning import UNPARTITIONED_SPEC
from icefloe.spec.schema import Schema
from icefloe.spec.sorting import UNSORTED_SORT_ORDER
from icefloe.spec.table_metadata import EncryptedKey
from icefloe.spec.types import LongType, NestedField
from icefloe.spec.updates import AddEncryptionKey

KEY = bytes(range(16))
AAD = bytes(range(16, 32))


def test_bytes_as_java_1_11_writes_them() -> None:
    # Written by Java 1.11's StandardKeyMetadata(key, aad).copyWithLength(1234567).buffer().
    expected = bytes.fromhex("0120" + KEY.hex() + "0220" + AAD.hex() + "028eda9601")
    assert StandardKeyMetadata(KEY, AAD, 1234567).to_bytes() == expected
    assert StandardKeyMetadata.parse(expected) == StandardKeyMetadata(KEY, AAD, 1234567)
    no_length = StandardKeyMetadata(KEY, AAD).to_bytes()
    assert no_length == expected[: -len("028eda9601") // 2] + b"\x00"
    assert StandardKeyMetadata(KEY).to_bytes() == bytes.fromhex("0120" + KEY.hex() + "0000")


def test_reads_java_1_9_key_metadata_without_file_length() -> None:
    java_1_9 = bytes.fromhex("0120" + KEY.hex() + "0220" + AAD.hex())
    assert StandardKeyMetadata.parse(java_1_9) == StandardKeyMetadata(KEY, AAD, None)


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"", "empty"),
        (b"\x02" + bytes(20), "version 2"),
        (bytes.fromhex("0120") + KEY[:5], "truncated"),
        (bytes.fromhex("0120") + KEY + b"\x04", "union branch 2"),
        (bytes.fromhex("010a") + bytes(5) + b"\x00\x00", "5 bytes"),
    ],
)
def test_malformed_key_metadata_names_the_file(data: bytes, problem: str) -> None:
    with pytest.raises(InvalidMetadataError, match=problem) as raised:
        StandardKeyMetadata.parse(data, location="s3://b/m0.avro")
    assert raised.value.location == "s3://b/m0.avro"


def test_keys_never_show_in_repr() -> None:
    assert KEY.hex() not in repr(StandardKeyMetadata(KEY, AAD, 7)) and "16-byte key" in repr(
        StandardKeyMetadata(KEY, AAD, 7)
    )


def test_a_key_id_is_added_once() -> None:
    """As Java's addEncryptionKey: a repeated id is ignored (and keeps its place)."""
    base = new_table_metadata(
        Schema(NestedField(1, "id", LongType(), required=True)),
        UNPARTITIONED_SPEC,
        UNSORTED_SORT_ORDER,
        "/tmp/t",
        {"format-version": "3"},
    )
    first = EncryptedKey("a", "AAAA", "t", {"KEY_TIMESTAMP": "1"})
    again = EncryptedKey("a", "CCCC", "t", {"KEY_TIMESTAMP": "2"})
    second = EncryptedKey("b", "BBBB", "a")
    built = (
        MetadataBuilder(base)
        .apply_all([AddEncryptionKey(first), AddEncryptionKey(second), AddEncryptionKey(again)])
        .build()
    )
    assert built.encryption_keys == (first, second)
    assert MetadataBuilder(built).apply(AddEncryptionKey(again)).build() is built
