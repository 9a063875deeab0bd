"""Fixtures for the table-layer tests (also imported by ``tests/scan/conftest.py``).

- ``catalog``: a real catalog per kind (``sql`` on SQLite, ``memory``, ``hadoop``) in a fresh
  warehouse, with namespace ``db``; closed afterwards.
- ``memory_catalog``: an in-memory catalog (fault injection via ``catalog.backend``).
- ``sql_catalog``: a SQLite catalog.
- ``format_version``: 1, 2 and 3.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from icefloe import Catalog
from support.catalogs import CATALOG_KINDS, FORMAT_VERSIONS, make_catalog


@pytest.fixture(params=CATALOG_KINDS)
def catalog(request: pytest.FixtureRequest, warehouse: Path) -> Iterator[Catalog]:
    cat = make_catalog(request.param, warehouse)
    try:
        yield cat
    finally:
        cat.backend.close()


@pytest.fixture
def memory_catalog(warehouse: Path) -> Iterator[Catalog]:
    cat = make_catalog("memory", warehouse)
    try:
        yield cat
    finally:
        cat.backend.close()


@pytest.fixture
def sql_catalog(warehouse: Path) -> Iterator[Catalog]:
    cat = make_catalog("sql", warehouse)
    try:
        yield cat
    finally:
        cat.backend.close()


@pytest.fixture(params=FORMAT_VERSIONS, ids=lambda v: f"v{v}")
def format_version(request: pytest.FixtureRequest) -> int:
    return int(request.param)
