"""Watching manifest merges in tests."""

from __future__ import annotations

from typing import Any

import pytest

from icefloe.manifests import ManifestWriter

__all__ = ["copied_blocks"]


def copied_blocks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The entry counts of the blocks merges copy whole (``ManifestWriter.carry_block``), as
    they are copied (the copy itself still happens)."""
    copied: list[int] = []
    carry_block = ManifestWriter.carry_block

    def counting(self: ManifestWriter, block: Any) -> None:
        copied.append(block.count)
        carry_block(self, block)

    monkeypatch.setattr(ManifestWriter, "carry_block", counting)
    return copied
