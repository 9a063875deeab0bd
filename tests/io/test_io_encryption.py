"""The plaintext EncryptionManager is the identity and pickles."""

from __future__ import annotations

import pickle

from icefloe.io import EncryptionManager, LocalFileIO, PlaintextEncryptionManager


def test_plaintext_is_identity() -> None:
    manager = PlaintextEncryptionManager()
    assert isinstance(manager, EncryptionManager)
    io = LocalFileIO()
    output_file = io.new_output("/tmp/icefloe-never-written.bin")
    input_file = io.new_input("/tmp/icefloe-never-written.bin")
    assert manager.encrypt(output_file) is output_file
    assert manager.decrypt(input_file) is input_file
    assert pickle.loads(pickle.dumps(manager)) == manager
