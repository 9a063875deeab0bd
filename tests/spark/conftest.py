"""Fixtures for the Spark tests.

- ``spark``: one Spark session for the whole test run (starting one costs seconds), bound to
  127.0.0.1. ``ICEFLOE_SPARK_MASTER`` picks the master: ``local[2]`` by default,
  ``local-cluster[2,1,1024]`` for separate executor JVMs and Python workers.
- ``catalog``: a SQLite catalog in a fresh warehouse, with namespace ``db``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from icefloe import Catalog
from table.helpers import make_catalog


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    from icefloe.spark import local_session

    session = local_session(os.environ.get("ICEFLOE_SPARK_MASTER", "local[2]"), app_name="icefloe-tests")
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture
def catalog(warehouse: Path) -> Iterator[Catalog]:
    cat = make_catalog("sql", warehouse)
    try:
        yield cat
    finally:
        cat.backend.close()
