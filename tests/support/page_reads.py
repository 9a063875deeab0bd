"""A spy on page-index reads (``icefloe.arrow.page_index``), shared by the reader, scan and
Java interop tests."""

from __future__ import annotations

from typing import Any

import pytest

import icefloe.arrow.reader as reader


def page_reads(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """A list that gets, for each file the reader offers to DataFusion, whether DataFusion
    read it (False: not worth it, or nothing to push; pyarrow read it)."""
    taken: list[bool] = []
    original = reader.page_batches

    def spy(*args: Any, **kwargs: Any) -> Any:
        found = original(*args, **kwargs)
        taken.append(found is not None)
        return found

    monkeypatch.setattr(reader, "page_batches", spy)
    return taken
