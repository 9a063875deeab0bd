"""Byte compatibility of icefloe's table encryption with Java Iceberg's own classes, both ways.

Java Iceberg 1.9.2 (the engine here) reads no encrypted table as a whole (manifest list keys
arrived in 1.11), so its parts are checked, through small Java programs compiled against the
engine's jars (``java_probes.py``): AES GCM streams (``AesGcmOutputFile`` / ``AesGcmInputFile``);
key metadata (1.9.2's ``StandardKeyMetadata``, and 1.11's three-field form through Iceberg's Avro
writer and reader); key wrapping by icefloe's local KMS as a Java ``KeyManagementClient`` loaded by
``EncryptionUtil.createKmsClient``, and the manifest list key sealed under a KEK with ``Ciphers``;
encrypted Parquet through Iceberg's Parquet writer and reader.
"""

from __future__ import annotations

import base64
import dataclasses
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from icefloe.arrow.reader import read_parquet
from icefloe.errors import DecryptionError
from icefloe.io import LocalFileIO
from icefloe.io.encryption import (
    KEY_TIMESTAMP,
    AesGcmInputFile,
    AesGcmOutputFile,
    EncryptingFileIO,
    StandardEncryptionManager,
    encrypted_length,
    load_kms_client,
    new_decrypted_input,
)
from icefloe.spec.encryption import StandardKeyMetadata
from icefloe.spec.partitioning import UNPARTITIONED_SPEC
from icefloe.spec.schema import Schema
from icefloe.spec.table_metadata import EncryptedKey
from icefloe.spec.types import DoubleType, LongType, NestedField, StringType
from icefloe.write.parquet import write_data_files
from interop.java_probes import JavaProbe, compile_probes
from support.encryption import (
    TABLE_KEY,
    encrypted_properties,
    encrypting_catalog,
    kms_properties,
    write_keys_file,
)

PROBE = "org.apache.iceberg.encryption.IcefloeEncryptionProbe"
BLOCK = 1 << 20
# 0 bytes, one block, an exact multiple of the block size, several blocks and a partial one.
SIZES = {"empty": 0, "one-block": 1000, "two-full-blocks": 2 * BLOCK, "several-blocks": 3 * BLOCK + 12345}
ROWS = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "name", StringType()),
    NestedField(3, "amount", DoubleType()),
)


@pytest.fixture(scope="module")
def probe() -> JavaProbe:
    return compile_probes()


def _hex(data: bytes | None) -> str:
    return "-" if data is None else data.hex()


def test_aes_gcm_streams_both_ways(probe: JavaProbe, tmp_path: Path) -> None:
    io = LocalFileIO()
    commands, cases = [], []
    for index, (name, size) in enumerate(SIZES.items()):
        key = os.urandom((16, 24, 32)[index % 3])
        aad = None if index == 1 else os.urandom(16)
        plain = os.urandom(size)
        (tmp_path / f"{name}.plain").write_bytes(plain)
        # icefloe writes, Java reads.
        ours = tmp_path / f"{name}.icefloe.ags"
        with AesGcmOutputFile(io.new_output(str(ours)), key, aad).create() as stream:
            stream.write(plain)
        commands.append(["ags-read", key.hex(), _hex(aad), str(ours), str(tmp_path / f"{name}.java-read")])
        # Java writes, icefloe reads.
        theirs = tmp_path / f"{name}.java.ags"
        commands.append(["ags-write", key.hex(), _hex(aad), str(tmp_path / f"{name}.plain"), str(theirs)])
        cases.append((name, size, key, aad, plain, ours, theirs))
    # A tampered block of icefloe's fails in Java, as it does in icefloe.
    name, _, key, aad, plain, ours, _ = cases[-1]
    tampered = tmp_path / "tampered.ags"
    with AesGcmOutputFile(io.new_output(str(tampered)), key, aad).create() as stream:
        stream.write(plain)
    data = bytearray(tampered.read_bytes())
    data[BLOCK + 100] ^= 1
    tampered.write_bytes(bytes(data))
    commands.append(["ags-read", key.hex(), _hex(aad), str(tampered), str(tmp_path / "x")])

    answers = probe.answers(PROBE, commands)
    assert answers[-1][0] == "error" and "GCM tag check failed" in answers[-1][2]
    with pytest.raises(DecryptionError):
        AesGcmInputFile(io.new_input(str(tampered)), key, aad).read()
    pairs = zip(cases, answers[:-1:2], answers[1:-1:2], strict=True)
    for (name, size, key, aad, plain, ours, theirs), read, written in pairs:
        assert read == ["ok", str(size)], name
        assert (tmp_path / f"{name}.java-read").read_bytes() == plain, name
        assert written[0] == "ok", name
        assert int(written[1]) == theirs.stat().st_size == ours.stat().st_size == encrypted_length(size), name
        assert theirs.read_bytes()[:8] == ours.read_bytes()[:8] == b"AGS1\x00\x00\x10\x00"
        assert AesGcmInputFile(io.new_input(str(theirs)), key, aad, theirs.stat().st_size).read() == plain, (
            name
        )


def test_key_metadata_encoding(probe: JavaProbe) -> None:
    key, aad, length = os.urandom(16), os.urandom(16), 5_000_000_123
    java = probe.run(
        PROBE,
        [
            ["km111-encode", key.hex(), aad.hex(), str(length)],
            ["km111-encode", key.hex(), aad.hex(), "-"],
            ["km111-encode", key.hex(), "-", "7"],
            ["km-encode", key.hex(), aad.hex()],
            ["km111-decode", StandardKeyMetadata(key, aad, length).to_bytes().hex()],
            ["km-decode", StandardKeyMetadata(key, aad, length).to_bytes().hex()],
        ],
    )
    # icefloe writes exactly what Java 1.11's encoder writes, with and without a length.
    assert StandardKeyMetadata(key, aad, length).to_bytes().hex() == java[0][0]
    assert StandardKeyMetadata(key, aad).to_bytes().hex() == java[1][0]
    assert StandardKeyMetadata(key, None, 7).to_bytes().hex() == java[2][0]
    # It reads 1.9.2's shorter form; both Java versions read icefloe's.
    assert StandardKeyMetadata.parse(bytes.fromhex(java[3][0])) == StandardKeyMetadata(key, aad, None)
    assert java[4] == [key.hex(), aad.hex(), str(length)]
    assert java[5] == [key.hex(), aad.hex()]


def test_key_wrapping_and_the_manifest_list_key_hierarchy(probe: JavaProbe, tmp_path: Path) -> None:
    # An encrypted table's real keys: its KEK, wrapped by the local KMS, and its snapshot's
    # manifest list key, sealed by the KEK.
    catalog = encrypting_catalog("memory", tmp_path)
    keys_file = tmp_path / "keys.json"
    table = catalog.create_table("db.t", pa.schema([("id", pa.int64())]), properties=encrypted_properties())
    table.append(pa.table({"id": pa.array(range(5), pa.int64())}))
    snapshot = table.current_snapshot()
    assert snapshot is not None and snapshot.manifest_list is not None
    entries = {k.key_id: k for k in table.metadata.encryption_keys}
    list_key = entries[snapshot.key_id]  # type: ignore[index]
    kek = entries[list_key.encrypted_by_id]  # type: ignore[index]
    timestamp = kek.properties[KEY_TIMESTAMP]
    manager = table.encryption()
    assert isinstance(manager, StandardEncryptionManager)
    kek_bytes = manager.kms.unwrap_key(base64.b64decode(kek.encrypted_key_metadata), TABLE_KEY)
    list_key_metadata = manager.manifest_list_key_metadata(list_key.key_id)
    plain_list = new_decrypted_input(table.io(), snapshot.manifest_list, list_key_metadata.to_bytes()).read()
    ours_key, theirs_key = os.urandom(16), os.urandom(16)
    ours_wrapped = manager.kms.wrap_key(ours_key, TABLE_KEY)
    theirs_list_key = StandardKeyMetadata(os.urandom(16), os.urandom(16), 4321)
    list_out = tmp_path / "list.avro"

    java = probe.run(
        PROBE,
        [
            # Java's KMS client (icefloe's keys file, loaded by EncryptionUtil.createKmsClient).
            ["kms-unwrap", str(keys_file), TABLE_KEY, ours_wrapped.hex()],
            ["kms-wrap", str(keys_file), TABLE_KEY, theirs_key.hex()],
            ["kms-unwrap", str(keys_file), TABLE_KEY, base64.b64decode(kek.encrypted_key_metadata).hex()],
            # The list key opened with the KEK (its timestamp as AAD), then the list itself.
            [
                "gcm-decrypt",
                kek_bytes.hex(),
                timestamp,
                base64.b64decode(list_key.encrypted_key_metadata).hex(),
            ],
            [
                "ags-read",
                list_key_metadata.encryption_key.hex(),
                _hex(list_key_metadata.aad_prefix),
                snapshot.manifest_list,
                str(list_out),
            ],
            # Java seals a list key under the table's KEK.
            ["gcm-encrypt", kek_bytes.hex(), timestamp, theirs_list_key.to_bytes().hex()],
        ],
    )
    assert java[0] == [ours_key.hex()]
    assert manager.kms.unwrap_key(bytes.fromhex(java[1][0]), TABLE_KEY) == theirs_key
    assert java[2] == [kek_bytes.hex()]
    assert java[3] == [list_key_metadata.to_bytes().hex()]
    assert list_key_metadata.file_length == Path(snapshot.manifest_list).stat().st_size
    assert list_out.read_bytes() == plain_list and plain_list[:4] == b"Obj\x01"
    reader = StandardEncryptionManager(TABLE_KEY, 16, manager.kms, table.metadata.encryption_keys)
    sealed = base64.b64encode(bytes.fromhex(java[5][0])).decode()
    reader.learn(
        dataclasses.replace(table.metadata, encryption_keys=(EncryptedKey("java-key", sealed, kek.key_id),))
    )
    assert reader.manifest_list_key_metadata("java-key") == theirs_list_key


def test_encrypted_parquet_both_ways(probe: JavaProbe, tmp_path: Path) -> None:
    keys_file = tmp_path / "keys.json"
    write_keys_file(keys_file)
    kms = load_kms_client(kms_properties(keys_file))
    assert kms is not None
    rows = 20_000
    data = pa.table(
        {
            "id": pa.array(range(rows), pa.int64()),
            "name": [None if i % 7 == 0 else f"ICEFLOE-{i}" for i in range(rows)],
            "amount": [i * 1.5 for i in range(rows)],
        }
    )
    commands, written, keys = [], [], []
    for length in (16, 24, 32):
        # icefloe's data file writer, as an encrypted table writes its files.
        manager = StandardEncryptionManager(TABLE_KEY, length, kms)
        files = write_data_files(
            EncryptingFileIO(LocalFileIO(), manager),
            table_location=str(tmp_path / f"t{length}"),
            properties={"write.parquet.row-group-limit": "6000"},
            schema=ROWS,
            spec=UNPARTITIONED_SPEC,
            data=data,
        )
        assert len(files) == 1 and files[0].key_metadata is not None
        assert b"ICEFLOE-" not in Path(files[0].file_path).read_bytes()
        commands.append(["parquet-read", files[0].key_metadata.hex(), files[0].file_path])
        written.append(files[0])
        # Iceberg's Parquet writer, with a key and AAD prefix icefloe reads.
        key = StandardKeyMetadata(os.urandom(length), os.urandom(16))
        path = tmp_path / f"java{length}.parquet"
        commands.append(
            ["parquet-write", key.encryption_key.hex(), _hex(key.aad_prefix), str(path), str(rows)]
        )
        keys.append((key, path))
    answers = probe.run(PROBE, commands)
    expected_sum = rows * (rows - 1) // 2
    nulls = len(range(0, rows, 7))
    for answer in answers[::2]:
        count, ids, amounts, null_names = answer
        assert (int(count), int(ids), float(amounts), int(null_names)) == (
            rows,
            expected_sum,
            expected_sum * 1.5,
            nulls,
        )
    for key, path in keys:
        read = pa.Table.from_batches(
            list(read_parquet(None, str(path), projected=ROWS, key_metadata=key.to_bytes()))
        )
        assert read.num_rows == rows and pc.sum(read.column("id")).as_py() == expected_sum
        assert read.column("name").null_count == nulls
        wrong = StandardKeyMetadata(os.urandom(len(key.encryption_key)), key.aad_prefix).to_bytes()
        with pytest.raises(DecryptionError) as raised:
            list(read_parquet(None, str(path), projected=ROWS, key_metadata=wrong))
        assert raised.value.location == str(path)
