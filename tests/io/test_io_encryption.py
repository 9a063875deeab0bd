"""AES GCM streams (AGS1) as the spec lays them out, the encryption managers, and the encrypting
FileIO: sizes at every block edge, seeks, failures (tampered, reordered, truncated, wrong key),
nothing published when a write fails, and pickling."""

from __future__ import annotations

import os
import pickle
import struct
from pathlib import Path

import pytest

from icefloe.errors import DecryptionError, TruncatedFileError
from icefloe.io import EncryptionManager, LocalFileIO, PlaintextEncryptionManager
from icefloe.io.encryption import (
    AesGcmInputFile,
    AesGcmOutputFile,
    EncryptingFileIO,
    LocalKeyManagementClient,
    StandardEncryptionManager,
    decrypt_input,
    encrypted_length,
    encryption_of,
    new_decrypted_input,
    plaintext_length,
)
from icefloe.spec.encryption import StandardKeyMetadata

BLOCK = 1 << 20
SIZES = [0, 1, 1000, BLOCK - 1, BLOCK, BLOCK + 1, 2 * BLOCK, 3 * BLOCK + 12345]


def _write(path: Path, data: bytes, key: bytes, aad: bytes | None, chunk: int = 70_001) -> None:
    with AesGcmOutputFile(LocalFileIO().new_output(str(path)), key, aad).create() as stream:
        for start in range(0, len(data), chunk):
            stream.write(data[start : start + chunk])


def _input(path: Path, key: bytes, aad: bytes | None, length: int | None = None) -> AesGcmInputFile:
    return AesGcmInputFile(LocalFileIO().new_input(str(path)), key, aad, length)


@pytest.mark.parametrize("size", SIZES)
def test_round_trip_at_block_edges(tmp_path: Path, size: int) -> None:
    key, aad = os.urandom(16), os.urandom(16)
    data = os.urandom(size)
    path = tmp_path / "stream.bin"
    _write(path, data, key, aad)
    stored = path.read_bytes()
    blocks = max(1, -(-size // BLOCK))
    assert len(stored) == encrypted_length(size) == 8 + size + 28 * blocks
    assert plaintext_length(len(stored)) == size
    assert stored[:8] == b"AGS1" + struct.pack("<i", BLOCK)
    source = _input(path, key, aad, len(stored))
    assert source.length() == size
    assert source.read() == data
    with source.open() as stream:  # seekable, block by block
        stream.seek(size // 2)
        assert stream.read() == data[size // 2 :]
        start = max(size - 3, 0)
        stream.seek(start)
        assert stream.read(2) == data[start : start + 2]


@pytest.mark.parametrize("key_length", [16, 24, 32])
@pytest.mark.parametrize("aad", [None, b"", b"0123456789abcdef"])
def test_keys_and_aad_prefixes(tmp_path: Path, key_length: int, aad: bytes | None) -> None:
    key = os.urandom(key_length)
    path = tmp_path / "s.bin"
    _write(path, b"hello", key, aad)
    assert _input(path, key, aad).read() == b"hello"


def test_authentication_failures_name_the_file(tmp_path: Path) -> None:
    key, aad = os.urandom(16), os.urandom(16)
    data = os.urandom(2 * BLOCK + 100)
    path = tmp_path / "s.bin"
    _write(path, data, key, aad)
    stored = path.read_bytes()
    location = str(path)
    with pytest.raises(DecryptionError, match="GCM tag check failed") as raised:
        _input(path, os.urandom(16), aad).read()  # wrong key
    assert raised.value.location == location
    with pytest.raises(DecryptionError):
        _input(path, key, os.urandom(16)).read()  # wrong AAD prefix: another file's key
    # One changed byte, in the ciphertext or in a tag.
    for offset in (100, BLOCK + 8 + 28 - 1):
        changed = bytearray(stored)
        changed[offset] ^= 1
        path.write_bytes(bytes(changed))
        with pytest.raises(DecryptionError, match="block"):
            _input(path, key, aad).read()
    # Blocks reordered: the AAD binds each block to its index.
    first, second = 8, 8 + BLOCK + 28
    swapped = (
        stored[:first]
        + stored[second : second + BLOCK + 28]
        + stored[first:second]
        + stored[second + BLOCK + 28 :]
    )
    path.write_bytes(swapped)
    with pytest.raises(DecryptionError, match="block 0"):
        _input(path, key, aad).read()
    # Not a stream at all.
    path.write_bytes(b"PAR1" + stored[4:])
    with pytest.raises(DecryptionError, match="magic does not match AGS1"):
        _input(path, key, aad).read()


def test_truncation_and_extension_against_the_trusted_length(tmp_path: Path) -> None:
    key = os.urandom(16)
    path = tmp_path / "s.bin"
    _write(path, os.urandom(BLOCK + 10), key, None)
    stored = path.read_bytes()
    trusted = len(stored)
    for damaged in (stored[:-5], stored[:-28], stored + b"x"):
        path.write_bytes(damaged)
        with pytest.raises(TruncatedFileError) as raised:
            _input(path, key, None, trusted).read()
        assert raised.value.location == str(path)
    path.write_bytes(stored[: BLOCK + 8 + 28 + 5])  # a last block too short for its nonce and tag
    with pytest.raises(TruncatedFileError):
        _input(path, key, None).read()
    path.write_bytes(stored[:-5])
    with pytest.raises(TruncatedFileError), _input(path, key, None, trusted).open() as stream:
        stream.seek(BLOCK + 1)
        stream.read()


def test_a_failed_write_publishes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.bin"
    with (
        pytest.raises(RuntimeError),
        AesGcmOutputFile(LocalFileIO().new_output(str(path)), os.urandom(16), None).create() as stream,
    ):
        stream.write(os.urandom(BLOCK + 1))
        raise RuntimeError("boom")
    assert not path.exists()
    assert list(tmp_path.iterdir()) == []


def test_output_file_has_no_trusted_length() -> None:
    output = AesGcmOutputFile(LocalFileIO().new_output("/tmp/never.bin"), os.urandom(16), None)
    with pytest.raises(ValueError, match="AesGcmInputFile"):
        output.to_input_file()


def test_plaintext_manager_passes_files_through_and_never_reads_ciphertext_as_plaintext(
    tmp_path: Path,
) -> None:
    manager = PlaintextEncryptionManager()
    assert isinstance(manager, EncryptionManager)
    io = LocalFileIO()
    output_file = io.new_output(str(tmp_path / "x.bin"))
    encrypted = manager.encrypt(output_file)
    assert encrypted.encrypting_output_file is output_file and encrypted.key_metadata is None
    input_file = io.new_input(str(tmp_path / "x.bin"))
    assert manager.decrypt(input_file) is input_file
    key = StandardKeyMetadata(os.urandom(16), os.urandom(16))
    assert isinstance(manager.decrypt(input_file, key.to_bytes()), AesGcmInputFile)
    assert pickle.loads(pickle.dumps(manager)) == manager
    assert encryption_of(io) == manager


def test_standard_manager_encrypts_each_file_with_a_fresh_key(tmp_path: Path) -> None:
    kms = LocalKeyManagementClient()
    kms.initialize({"encryption.kms.local.keys-file": str(tmp_path / "keys.json")})
    manager = StandardEncryptionManager("table-key", 24, kms)
    io = EncryptingFileIO(LocalFileIO(), manager)
    assert encryption_of(io) is manager
    locations = [str(tmp_path / f"f{i}.avro") for i in range(2)]
    keys = []
    for location in locations:
        encrypted = manager.encrypt(io.new_output(location))
        with encrypted.encrypting_output_file.create() as stream:
            stream.write(b"payload")
        key_metadata = encrypted.key_metadata_bytes(len(b"payload"))
        assert key_metadata is not None
        keys.append(StandardKeyMetadata.parse(key_metadata))
        assert new_decrypted_input(io, location, key_metadata).read() == b"payload"
        assert decrypt_input(io.new_input(location), key_metadata).read() == b"payload"
    assert keys[0].encryption_key != keys[1].encryption_key and keys[0].aad_prefix != keys[1].aad_prefix
    assert {len(k.encryption_key) for k in keys} == {24} and {len(k.aad_prefix or b"") for k in keys} == {16}
    assert {k.file_length for k in keys} == {encrypted_length(7)}
    restored = pickle.loads(pickle.dumps(io))
    assert isinstance(restored, EncryptingFileIO)
    assert restored.encryption.table_key_id == "table-key" and restored.encryption.data_key_length == 24
    assert isinstance(restored.encryption.kms, LocalKeyManagementClient)
    with pytest.raises(ValueError, match="Invalid data key length: 20"):
        StandardEncryptionManager("table-key", 20, kms)
