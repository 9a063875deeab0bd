"""AWS KMS as the key management client (``encryption.kms-type=aws``), through boto3.

As Java's ``AwsKeyManagementClient``: wrapping is KMS ``Encrypt`` under the master key (the
table's ``encryption.key-id`` is a KMS key id, ARN or alias), unwrapping is ``Decrypt``, key
generation is ``GenerateDataKey``. Catalog properties:

================================== =========================================================
``kms.endpoint``                   the KMS endpoint (default: AWS's for the region)
``client.region``                  the region (default: the AWS SDK's)
``client.access-key-id``,          static credentials (default: the AWS SDK's chain:
``client.secret-access-key``,      environment, ``~/.aws``, instance metadata)
``client.session-token``
``kms.encryption-algorithm-spec``  ``SYMMETRIC_DEFAULT`` (default) or an RSA spec
``kms.data-key-spec``              the spec of generated keys: ``AES_256`` (default)
================================== =========================================================

boto3 is imported when the first key is wrapped or unwrapped (``pip install boto3``).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from icefloe._util.optional import import_optional
from icefloe.errors import KeyManagementError, MissingKeyError
from icefloe.io.encryption.kms import KeyGenerationResult, KeyManagementClient

__all__ = ["AwsKeyManagementClient"]

KMS_ENDPOINT = "kms.endpoint"
CLIENT_REGION = "client.region"
CLIENT_ACCESS_KEY_ID = "client.access-key-id"
CLIENT_SECRET_ACCESS_KEY = "client.secret-access-key"
CLIENT_SESSION_TOKEN = "client.session-token"
ENCRYPTION_ALGORITHM_SPEC = "kms.encryption-algorithm-spec"
ENCRYPTION_ALGORITHM_SPEC_DEFAULT = "SYMMETRIC_DEFAULT"
DATA_KEY_SPEC = "kms.data-key-spec"
DATA_KEY_SPEC_DEFAULT = "AES_256"
# KMS errors that mean the master key is not there (or not usable as one).
_MISSING = frozenset({"NotFoundException", "DisabledException", "KMSInvalidStateException"})


class AwsKeyManagementClient(KeyManagementClient):
    """Master keys in AWS KMS (see the module for the properties)."""

    def __init__(self) -> None:
        super().__init__()
        self._client: Any = None
        self._lock = threading.Lock()

    def initialize(self, properties: Mapping[str, str]) -> None:
        super().initialize(properties)
        self._client = None

    @property
    def _algorithm(self) -> str:
        return self.properties.get(ENCRYPTION_ALGORITHM_SPEC, ENCRYPTION_ALGORITHM_SPEC_DEFAULT)

    def _kms(self) -> Any:
        with self._lock:
            if self._client is None:
                boto3 = import_optional("boto3", extra="s3")
                props = self.properties
                self._client = boto3.session.Session().client(
                    "kms",
                    endpoint_url=props.get(KMS_ENDPOINT) or None,
                    region_name=props.get(CLIENT_REGION) or None,
                    aws_access_key_id=props.get(CLIENT_ACCESS_KEY_ID) or None,
                    aws_secret_access_key=props.get(CLIENT_SECRET_ACCESS_KEY) or None,
                    aws_session_token=props.get(CLIENT_SESSION_TOKEN) or None,
                )
            return self._client

    def _call(self, action: str, key_id: str, **arguments: Any) -> dict[str, Any]:
        client = self._kms()
        try:
            result: dict[str, Any] = getattr(client, action)(KeyId=key_id, **arguments)
        except Exception as exc:
            code = _error_code(exc)
            if code in _MISSING:
                raise MissingKeyError(f"AWS KMS has no usable master key '{key_id}': {exc}") from exc
            raise KeyManagementError(f"AWS KMS {action} with master key '{key_id}' failed: {exc}") from exc
        return result

    def wrap_key(self, key: bytes, wrapping_key_id: str) -> bytes:
        result = self._call(
            "encrypt", wrapping_key_id, Plaintext=bytes(key), EncryptionAlgorithm=self._algorithm
        )
        return bytes(result["CiphertextBlob"])

    def unwrap_key(self, wrapped_key: bytes, wrapping_key_id: str) -> bytes:
        result = self._call(
            "decrypt", wrapping_key_id, CiphertextBlob=bytes(wrapped_key), EncryptionAlgorithm=self._algorithm
        )
        return bytes(result["Plaintext"])

    def supports_key_generation(self) -> bool:
        return True

    def generate_key(self, wrapping_key_id: str) -> KeyGenerationResult:
        spec = self.properties.get(DATA_KEY_SPEC, DATA_KEY_SPEC_DEFAULT)
        result = self._call("generate_data_key", wrapping_key_id, KeySpec=spec)
        return KeyGenerationResult(bytes(result["Plaintext"]), bytes(result["CiphertextBlob"]))

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def __repr__(self) -> str:
        return f"AwsKeyManagementClient(endpoint={self.properties.get(KMS_ENDPOINT)!r})"


def _error_code(exc: Exception) -> str | None:
    """The AWS error code of a botocore ``ClientError`` (None for anything else)."""
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        code = response.get("Error", {}).get("Code")
        return str(code) if code is not None else None
    return None
