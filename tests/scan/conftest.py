"""Fixtures for the scan tests.

- The table layer's fixtures (``tests/table/conftest.py``): ``catalog``, ``memory_catalog``,
  ``sql_catalog``, ``format_version``.
- ``events``: a read-only table for each format version, built once per module: 75 rows in
  three appends (30, 30, 15), partitioned by ``day`` (three days), so nine data files; each
  append's files cover their own id range. Tests must not change it.
- ``events_v2``: the same table, format version 2 only (for wide sweeps that do not depend on
  the format version).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from icefloe import Table
from support.catalogs import ARROW_SCHEMA, make_catalog, rows
from table.conftest import catalog, format_version, memory_catalog, sql_catalog

__all__ = ["catalog", "events", "events_v2", "format_version", "memory_catalog", "sql_catalog"]

APPENDS = ((0, 30), (30, 30), (60, 15))


def _events(tmp_path_factory: pytest.TempPathFactory, format_version: int) -> Iterator[Table]:
    warehouse = tmp_path_factory.mktemp("events")
    cat = make_catalog("sql", warehouse)
    table = cat.create_table(
        "db.events", ARROW_SCHEMA, partition_by=["day"], properties={"format-version": str(format_version)}
    )
    for start, n in APPENDS:
        table.append(rows(n, start=start))
    try:
        yield table
    finally:
        cat.backend.close()


@pytest.fixture(scope="module", params=[1, 2, 3], ids=lambda v: f"v{v}")
def events(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Table]:
    yield from _events(tmp_path_factory, request.param)


@pytest.fixture(scope="module")
def events_v2(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Table]:
    yield from _events(tmp_path_factory, 2)
