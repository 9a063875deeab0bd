"""A key management client over a local file of master keys, for tests and single-machine use.

Catalog properties: ``encryption.kms-type=local`` and ``encryption.kms.local.keys-file=PATH``,
where PATH holds a JSON object of master key id to base64 master key (16, 24 or 32 bytes)::

    {"orders-key": "q2H2v6E2...=="}

The file is read where keys are wrapped or unwrapped (the driver), never copied into table
metadata. A key is wrapped as Java's test KMS (``MemoryMockKMS``) does: AES-GCM under the master
key, no AAD, stored as ``nonce | ciphertext | tag``; a Java ``KeyManagementClient`` of thirty
lines reads the same keys file and wraps the same way.
"""

from __future__ import annotations

import base64
import binascii
import json
import threading
from collections.abc import Mapping

from icefloe.errors import KeyManagementError, MissingKeyError, ValidationError
from icefloe.io.encryption import _gcm
from icefloe.io.encryption.kms import KeyManagementClient

__all__ = ["LOCAL_KEYS_FILE", "LocalKeyManagementClient"]

#: Catalog property: the JSON file of master keys.
LOCAL_KEYS_FILE = "encryption.kms.local.keys-file"


class LocalKeyManagementClient(KeyManagementClient):
    """``encryption.kms-type=local``: master keys from a local JSON file (see the module)."""

    def __init__(self) -> None:
        super().__init__()
        self._path: str | None = None
        self._keys: dict[str, bytes] | None = None
        self._lock = threading.Lock()

    def initialize(self, properties: Mapping[str, str]) -> None:
        super().initialize(properties)
        path = properties.get(LOCAL_KEYS_FILE)
        if not path:
            raise ValidationError(f"the local KMS needs the catalog property '{LOCAL_KEYS_FILE}'")
        self._path = path
        self._keys = None

    def _master(self, key_id: str) -> bytes:
        with self._lock:
            if self._keys is None:
                self._keys = self._load()
            keys = self._keys
        master = keys.get(key_id)
        if master is None:
            raise MissingKeyError(
                f"master key '{key_id}' is not in the keys file {self._path}", location=self._path
            )
        return master

    def _load(self) -> dict[str, bytes]:
        path = self._path
        try:
            with open(str(path), encoding="utf-8") as handle:
                document = json.load(handle)
        except OSError as exc:
            raise KeyManagementError(f"cannot read the keys file {path}: {exc}", location=path) from exc
        except ValueError as exc:
            raise KeyManagementError(f"the keys file {path} is not JSON: {exc}", location=path) from exc
        if not isinstance(document, dict):
            raise KeyManagementError(f"the keys file {path} must hold a JSON object of key id to base64 key")
        keys = {}
        for key_id, text in document.items():
            try:
                key = base64.b64decode(str(text), validate=True)
            except (binascii.Error, ValueError):
                raise KeyManagementError(
                    f"master key '{key_id}' in {path} is not base64", location=path
                ) from None
            if len(key) not in (16, 24, 32):
                raise KeyManagementError(
                    f"master key '{key_id}' in {path} has {len(key)} bytes (must be 16, 24 or 32)",
                    location=path,
                )
            keys[str(key_id)] = key
        return keys

    def wrap_key(self, key: bytes, wrapping_key_id: str) -> bytes:
        return _gcm.encrypt(self._master(wrapping_key_id), bytes(key), None)

    def unwrap_key(self, wrapped_key: bytes, wrapping_key_id: str) -> bytes:
        master = self._master(wrapping_key_id)
        try:
            return _gcm.decrypt(master, bytes(wrapped_key), None)
        except _gcm.AuthenticationFailed:
            raise KeyManagementError(
                f"a key wrapped by master key '{wrapping_key_id}' does not unwrap with the key of that "
                f"id in {self._path}: a different master key, or a tampered wrapped key",
                location=self._path,
            ) from None

    def __repr__(self) -> str:
        return f"LocalKeyManagementClient({self._path!r})"
