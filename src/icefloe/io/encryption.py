"""The encryption hook of the read and write paths.

Every file a table writes goes through ``EncryptionManager.encrypt`` and every file it reads
through ``decrypt``. icefloe ships only the plaintext manager (identity), so tables are
written unencrypted, as by default in Java; the hook keeps the place for table encryption.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from icefloe.io.fileio import InputFile, OutputFile

__all__ = ["EncryptionManager", "PlaintextEncryptionManager"]


@runtime_checkable
class EncryptionManager(Protocol):
    """Wraps files so that what is written is encrypted and what is read is decrypted.

    Implementations must pickle: they travel with the table to Spark executors.
    """

    def encrypt(self, output_file: OutputFile) -> OutputFile:
        """The file to write instead of ``output_file``; its stream encrypts."""
        ...

    def decrypt(self, input_file: InputFile) -> InputFile:
        """The file to read instead of ``input_file``; its stream decrypts."""
        ...


@dataclass(frozen=True, slots=True)
class PlaintextEncryptionManager:
    """No encryption: both directions return the file unchanged."""

    def encrypt(self, output_file: OutputFile) -> OutputFile:
        return output_file

    def decrypt(self, input_file: InputFile) -> InputFile:
        return input_file
