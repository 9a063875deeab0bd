"""Key management clients: loading them from catalog properties, the local keys file, and AWS KMS
(boto3 against moto's server on 127.0.0.1), alone and under an encrypted table."""

from __future__ import annotations

import base64
import os
import pickle
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icefloe
from icefloe.errors import KeyManagementError, MissingKeyError, UnsupportedFeatureError, ValidationError
from icefloe.io.encryption import (
    KeyManagementClient,
    LocalKeyManagementClient,
    StandardEncryptionManager,
    _gcm,
    load_kms_client,
)
from icefloe.io.encryption.aws_kms import AwsKeyManagementClient
from support.encryption import encrypted_properties, kms_properties, write_keys_file


class _EchoKms(KeyManagementClient):
    """A client of one's own (``encryption.kms-impl``): XOR with a fixed byte, for the test."""

    def wrap_key(self, key: bytes, wrapping_key_id: str) -> bytes:
        return bytes(b ^ 0x5A for b in key)

    def unwrap_key(self, wrapped_key: bytes, wrapping_key_id: str) -> bytes:
        return bytes(b ^ 0x5A for b in wrapped_key)


def test_loading_clients_from_catalog_properties(tmp_path: Path) -> None:
    assert load_kms_client({}) is None
    keys_file = tmp_path / "keys.json"
    write_keys_file(keys_file)
    local = load_kms_client(kms_properties(keys_file))
    assert isinstance(local, LocalKeyManagementClient)
    aws = load_kms_client({"encryption.kms-type": "AWS"})
    assert isinstance(aws, AwsKeyManagementClient)
    custom = load_kms_client({"encryption.kms-impl": f"{__name__}._EchoKms", "x": "1"})
    assert isinstance(custom, _EchoKms) and custom.properties["x"] == "1"
    assert isinstance(load_kms_client({"encryption.kms-impl": f"{__name__}:_EchoKms"}), _EchoKms)
    with pytest.raises(ValidationError, match=r"Cannot set both KMS type \(local\) and KMS impl \(a.B\)"):
        load_kms_client({"encryption.kms-type": "local", "encryption.kms-impl": "a.B"})
    with pytest.raises(ValidationError, match="Unsupported KMS type: vault"):
        load_kms_client({"encryption.kms-type": "vault"})
    with pytest.raises(UnsupportedFeatureError, match="no gcp KMS client"):
        load_kms_client({"encryption.kms-type": "gcp"})
    with pytest.raises(ValidationError, match="does not implement KeyManagementClient"):
        load_kms_client({"encryption.kms-impl": "builtins.dict"})
    with pytest.raises(ValidationError, match="Cannot load KeyManagementClient class"):
        load_kms_client({"encryption.kms-impl": "no_such_module.Kms"})
    with pytest.raises(ValidationError, match="keys-file"):
        load_kms_client({"encryption.kms-type": "local"})
    # A catalog builds its client once, from its properties (arguments, environment, YAML),
    # and the tables share it.
    catalog = icefloe.load_catalog(
        "c", type="memory", warehouse=str(tmp_path / "wh"), **kms_properties(keys_file)
    )
    assert isinstance(catalog.backend.kms, LocalKeyManagementClient)
    environment = {
        "ICEFLOE_CATALOG__SECURE__ENCRYPTION__KMS_TYPE": "local",
        "ICEFLOE_CATALOG__SECURE__ENCRYPTION__KMS__LOCAL__KEYS_FILE": str(keys_file),
    }
    with pytest.MonkeyPatch.context() as patch:
        for name, value in environment.items():
            patch.setenv(name, value)
        secure = icefloe.load_catalog("secure", type="memory", warehouse=str(tmp_path / "wh2"))
    assert isinstance(secure.backend.kms, LocalKeyManagementClient)
    assert secure.backend.kms.properties["encryption.kms.local.keys-file"] == str(keys_file)
    secure.create_namespace("db")
    table = secure.create_table("db.t", pa.schema([("id", pa.int64())]), properties=encrypted_properties())
    assert table.encryption().kms is secure.backend.kms  # type: ignore[attr-defined]


def test_local_client_wraps_as_javas_test_kms(tmp_path: Path) -> None:
    keys_file = tmp_path / "keys.json"
    master = write_keys_file(keys_file, ["k1", "k2"], length=32)
    kms = load_kms_client(kms_properties(keys_file))
    assert kms is not None and not kms.supports_key_generation()
    key = os.urandom(16)
    wrapped = kms.wrap_key(key, "k1")
    assert len(wrapped) == 12 + 16 + 16  # nonce | ciphertext | tag: AES-GCM, no AAD
    assert _gcm.decrypt(master["k1"], wrapped, None) == key
    assert kms.unwrap_key(wrapped, "k1") == key
    with pytest.raises(KeyManagementError, match="does not unwrap"):
        kms.unwrap_key(wrapped, "k2")
    with pytest.raises(MissingKeyError, match="master key 'k3' is not in the keys file") as raised:
        kms.wrap_key(key, "k3")
    assert raised.value.location == str(keys_file)
    restored = pickle.loads(pickle.dumps(kms))
    assert restored.unwrap_key(wrapped, "k1") == key
    keys_file.write_text('{"bad": "not base64!"}')
    with pytest.raises(KeyManagementError, match="not base64"):
        load_kms_client(kms_properties(keys_file)).wrap_key(key, "bad")  # type: ignore[union-attr]
    keys_file.write_text('{"short": "' + base64.b64encode(b"1234").decode() + '"}')
    with pytest.raises(KeyManagementError, match="has 4 bytes"):
        load_kms_client(kms_properties(keys_file)).wrap_key(key, "short")  # type: ignore[union-attr]


def _aws_properties(endpoint: str) -> dict[str, str]:
    return {
        "encryption.kms-type": "aws",
        "kms.endpoint": endpoint,
        "client.region": "us-east-1",
        "client.access-key-id": "testing",
        "client.secret-access-key": "testing",
    }


def _kms_key(endpoint: str) -> str:
    boto3: Any = pytest.importorskip("boto3")
    client = boto3.client(
        "kms",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    key_id: str = client.create_key(Description="icefloe test")["KeyMetadata"]["KeyId"]
    return key_id


def test_aws_client_against_moto(moto_endpoint: str) -> None:
    key_id = _kms_key(moto_endpoint)
    kms = load_kms_client(_aws_properties(moto_endpoint))
    assert isinstance(kms, AwsKeyManagementClient)
    key = os.urandom(32)
    wrapped = kms.wrap_key(key, key_id)
    assert wrapped != key and kms.unwrap_key(wrapped, key_id) == key
    assert kms.supports_key_generation()
    generated = kms.generate_key(key_id)
    assert len(generated.key) == 32 and kms.unwrap_key(generated.wrapped_key, key_id) == generated.key
    with pytest.raises(MissingKeyError, match="no usable master key"):
        kms.wrap_key(key, "11111111-2222-3333-4444-555555555555")
    tampered = bytearray(wrapped)
    tampered[len(tampered) // 2] ^= 1
    with pytest.raises(KeyManagementError):
        kms.unwrap_key(bytes(tampered), key_id)
    restored = pickle.loads(pickle.dumps(kms))  # properties only; a client is made on use
    assert restored.unwrap_key(wrapped, key_id) == key
    kms.close()


def test_an_encrypted_table_under_aws_kms(moto_endpoint: str, tmp_path: Path) -> None:
    key_id = _kms_key(moto_endpoint)
    properties = {**_aws_properties(moto_endpoint), "uri": f"sqlite:///{tmp_path / 'c.db'}"}
    catalog = icefloe.load_catalog("aws", type="sql", warehouse=str(tmp_path / "wh"), **properties)
    catalog.create_namespace("db")
    table = catalog.create_table(
        "db.t",
        pa.schema([("id", pa.int64())]),
        properties=encrypted_properties(**{"encryption.key-id": key_id}),
    )
    table.append(pa.table({"id": pa.array([1, 2, 3], pa.int64())}))
    assert isinstance(table.encryption(), StandardEncryptionManager)
    reader = icefloe.load_catalog("aws", type="sql", warehouse=str(tmp_path / "wh"), **properties)
    assert sorted(reader.load_table("db.t").scan().to_arrow().column("id").to_pylist()) == [1, 2, 3]
    reader.close()
    catalog.close()
