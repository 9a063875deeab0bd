"""Fixtures that start the reference engines, one server per engine per test module.

The first use builds the engine's environment (minutes; cached in ``~/.cache/icefloe/engines``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .engines import DuckDBEngine, JavaEngine, PyIcebergEngine, start_engine


@pytest.fixture(scope="module")
def java_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaEngine]:
    """Apache Iceberg 1.9.2 on Spark 3.5.7: ``read``, ``sql``, ``hadoop_catalog``, ``exec``."""
    engine = start_engine("java", tmp_path_factory.mktemp("java-engine"))
    assert isinstance(engine, JavaEngine)
    try:
        yield engine
    finally:
        engine.close()


@pytest.fixture(scope="module")
def pyiceberg_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PyIcebergEngine]:
    """PyIceberg 0.12: ``read``, ``exec``."""
    engine = start_engine("pyiceberg", tmp_path_factory.mktemp("pyiceberg-engine"))
    assert isinstance(engine, PyIcebergEngine)
    try:
        yield engine
    finally:
        engine.close()


@pytest.fixture(scope="module")
def duckdb_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DuckDBEngine]:
    """DuckDB 1.5.5 with its iceberg extension: ``read``, ``exec``."""
    engine = start_engine("duckdb", tmp_path_factory.mktemp("duckdb-engine"))
    assert isinstance(engine, DuckDBEngine)
    try:
        yield engine
    finally:
        engine.close()
