"""AES-GCM as Java's ``Ciphers.AesGcmEncryptor`` / ``AesGcmDecryptor`` use it: a 12-byte random
nonce, a 128-bit tag, output ``nonce | ciphertext | tag``. The ``cryptography`` package is
imported on first use (the ``icefloe[encryption]`` extra), so plaintext tables never need it.
"""

from __future__ import annotations

import os
from functools import cache
from typing import Any

from icefloe._util.optional import import_optional

__all__ = ["NONCE_LENGTH", "TAG_LENGTH", "AuthenticationFailed", "aes_gcm", "check_key", "decrypt", "encrypt"]

NONCE_LENGTH = 12
TAG_LENGTH = 16


class AuthenticationFailed(Exception):
    """The GCM tag did not verify: a wrong key, wrong AAD, or changed bytes."""


@cache
def _aead() -> Any:
    return import_optional("cryptography.hazmat.primitives.ciphers.aead", extra="encryption")


@cache
def _invalid_tag() -> type[Exception]:
    exceptions = import_optional("cryptography.exceptions", extra="encryption")
    invalid: type[Exception] = exceptions.InvalidTag
    return invalid


def check_key(key: bytes) -> None:
    if len(key) not in (16, 24, 32):
        raise ValueError(f"invalid AES key length {len(key)} (must be 16, 24 or 32 bytes)")


def aes_gcm(key: bytes) -> Any:
    """A ``cryptography`` AESGCM object for ``key`` (reuse it for many blocks)."""
    check_key(key)
    return _aead().AESGCM(bytes(key))


def encrypt(key: bytes | Any, plaintext: bytes | memoryview, aad: bytes | None) -> bytes:
    """``nonce | ciphertext | tag`` of ``plaintext`` (``key``: bytes or an :func:`aes_gcm`)."""
    cipher = aes_gcm(key) if isinstance(key, bytes) else key
    nonce = os.urandom(NONCE_LENGTH)
    sealed: bytes = cipher.encrypt(nonce, plaintext, aad)
    return nonce + sealed


def decrypt(key: bytes | Any, blob: bytes | memoryview, aad: bytes | None) -> bytes:
    """The plaintext of ``nonce | ciphertext | tag``.

    Raises:
        AuthenticationFailed: the tag does not verify (or ``blob`` is too short to hold one).
    """
    cipher = aes_gcm(key) if isinstance(key, bytes) else key
    view = memoryview(blob)
    if len(view) < NONCE_LENGTH + TAG_LENGTH:
        raise AuthenticationFailed(f"{len(view)} bytes cannot hold a nonce and a tag")
    try:
        plaintext: bytes = cipher.decrypt(view[:NONCE_LENGTH], view[NONCE_LENGTH:], aad)
    except _invalid_tag() as exc:
        raise AuthenticationFailed("GCM tag check failed") from exc
    return plaintext
