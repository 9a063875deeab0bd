"""Fixtures for the catalog backend tests.

- ``backend``: a fresh backend per test, for each kind: ``sql`` (SQLite), ``sql-postgres``
  (marked ``postgres``), ``hadoop`` and ``memory``.
- ``java_engine`` / ``pyiceberg_engine``: the reference engines of ``tests/interop``
  (module-scoped; their names mark the tests ``interop``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from catalog_helpers import BACKEND_KINDS, make_backend

from icefloe.catalog import CatalogBackend
from interop.engines import JavaEngine, PyIcebergEngine, start_engine


@pytest.fixture(params=BACKEND_KINDS)
def backend(request: pytest.FixtureRequest, warehouse: Path) -> Iterator[CatalogBackend]:
    catalog = make_backend(request.param, warehouse, request)
    try:
        yield catalog
    finally:
        catalog.close()


@pytest.fixture(scope="module")
def java_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaEngine]:
    engine = start_engine("java", tmp_path_factory.mktemp("java-engine"))
    assert isinstance(engine, JavaEngine)
    try:
        yield engine
    finally:
        engine.close()


@pytest.fixture(scope="module")
def pyiceberg_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PyIcebergEngine]:
    engine = start_engine("pyiceberg", tmp_path_factory.mktemp("pyiceberg-engine"))
    assert isinstance(engine, PyIcebergEngine)
    try:
        yield engine
    finally:
        engine.close()
