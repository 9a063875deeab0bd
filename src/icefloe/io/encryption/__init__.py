"""Table encryption (format v3), as Java Iceberg 1.11 writes and reads it.

- :mod:`.ags1`: AES GCM streams (``AesGcmOutputFile`` / ``AesGcmInputFile``), the encryption of
  manifests, manifest lists and deletion-vector Puffin files;
- :mod:`.kms`: the ``KeyManagementClient`` interface and ``load_kms_client`` (catalog
  properties ``encryption.kms-type`` / ``encryption.kms-impl``), with two clients:
  :mod:`.local_kms` (a local keys file) and :mod:`.aws_kms` (AWS KMS);
- :mod:`.manager`: ``PlaintextEncryptionManager`` and ``StandardEncryptionManager`` (a data key
  per file, the key hierarchy in ``encryption-keys``);
- :mod:`.file_io`: ``EncryptingFileIO`` (an encrypted table's FileIO) and the helpers the
  manifest, data and Puffin layers call.

The key metadata format itself (``StandardKeyMetadata``) is part of the spec model
(``icefloe.spec.encryption``); Parquet modular encryption of data files is in
``icefloe.arrow.encryption``. AES-GCM needs the ``cryptography`` package
(``pip install 'icefloe[encryption]'``), imported only when a table encrypts.
"""

from icefloe.io.encryption.ags1 import (
    AesGcmInputFile,
    AesGcmInputStream,
    AesGcmOutputFile,
    AesGcmOutputStream,
    encrypted_length,
    plaintext_length,
)
from icefloe.io.encryption.file_io import (
    EncryptingFileIO,
    encryption_of,
    manifest_list_keys,
    new_decrypted_input,
    new_encrypted_output,
    new_manifest_list_input,
)
from icefloe.io.encryption.kms import (
    ENCRYPTION_KMS_IMPL,
    ENCRYPTION_KMS_TYPE,
    KeyGenerationResult,
    KeyManagementClient,
    load_kms_client,
)
from icefloe.io.encryption.local_kms import LOCAL_KEYS_FILE, LocalKeyManagementClient
from icefloe.io.encryption.manager import (
    KEY_TIMESTAMP,
    EncryptedOutputFile,
    EncryptionManager,
    PlaintextEncryptionManager,
    StandardEncryptionManager,
    create_encryption_manager,
    decrypt_input,
)
from icefloe.spec.encryption import StandardKeyMetadata

__all__ = [
    "ENCRYPTION_KMS_IMPL",
    "ENCRYPTION_KMS_TYPE",
    "KEY_TIMESTAMP",
    "LOCAL_KEYS_FILE",
    "AesGcmInputFile",
    "AesGcmInputStream",
    "AesGcmOutputFile",
    "AesGcmOutputStream",
    "EncryptedOutputFile",
    "EncryptingFileIO",
    "EncryptionManager",
    "KeyGenerationResult",
    "KeyManagementClient",
    "LocalKeyManagementClient",
    "PlaintextEncryptionManager",
    "StandardEncryptionManager",
    "StandardKeyMetadata",
    "create_encryption_manager",
    "decrypt_input",
    "encrypted_length",
    "encryption_of",
    "load_kms_client",
    "manifest_list_keys",
    "new_decrypted_input",
    "new_encrypted_output",
    "new_manifest_list_input",
    "plaintext_length",
]
