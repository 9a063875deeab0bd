"""Fixtures for the catalog backend tests.

- ``backend``: a fresh backend per test, for each kind: ``sql`` (SQLite), ``sql-postgres``
  (marked ``postgres``), ``hadoop`` and ``memory``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from catalog_helpers import BACKEND_KINDS, make_backend

from icefloe.backends import CatalogBackend


@pytest.fixture(params=BACKEND_KINDS)
def backend(request: pytest.FixtureRequest, warehouse: Path) -> Iterator[CatalogBackend]:
    catalog = make_backend(request.param, warehouse, request)
    try:
        yield catalog
    finally:
        catalog.close()
