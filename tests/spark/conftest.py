"""Fixtures for the Spark tests (the ``spark`` session is in ``tests/conftest.py``).

- ``catalog``: a SQLite catalog in a fresh warehouse, with namespace ``db``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from icefloe import Catalog
from support.catalogs import make_catalog


@pytest.fixture
def catalog(warehouse: Path) -> Iterator[Catalog]:
    cat = make_catalog("sql", warehouse)
    try:
        yield cat
    finally:
        cat.backend.close()
