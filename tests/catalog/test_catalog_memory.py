"""InMemoryCatalogBackend: files are written, and its fault injection drives the commit protocol."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from catalog_helpers import new_metadata

from icefloe.backends import InMemoryCatalogBackend, LoadedTable, load_catalog_backend
from icefloe.errors import CommitFailedException, CommitStateUnknownException, ValidationException
from icefloe.io import local_path
from icefloe.spec.updates import AssertTableUUID, SetProperties


@pytest.fixture
def catalog(warehouse: Path) -> InMemoryCatalogBackend:
    catalog = InMemoryCatalogBackend("mem", {"warehouse": str(warehouse)})
    catalog.create_namespace("db")
    return catalog


def _create(catalog: InMemoryCatalogBackend) -> LoadedTable:
    return catalog.create_table("db.t", new_metadata(catalog, "db.t"))


def _metadata_files(warehouse: Path) -> set[str]:
    return {p.name for p in (warehouse / "db" / "t" / "metadata").iterdir()}


def _commit(catalog: InMemoryCatalogBackend, base: LoadedTable | None, **props: str) -> LoadedTable:
    return catalog.commit_table("db.t", base, [], [SetProperties(props)])


def test_files_are_written(catalog: InMemoryCatalogBackend) -> None:
    created = _create(catalog)
    committed = _commit(catalog, created, a="1")
    for loaded in (created, committed):
        assert os.path.isfile(local_path(loaded.metadata_location))
    # Another catalog can register the file it wrote.
    other = InMemoryCatalogBackend("other")
    other.create_namespace("x")
    assert other.register_table("x.t", committed.metadata_location).metadata == committed.metadata


def test_default_warehouse_is_a_fresh_directory() -> None:
    first, second = InMemoryCatalogBackend(), load_catalog_backend("m", type="memory")
    assert isinstance(second, InMemoryCatalogBackend)
    assert first.warehouse != second.warehouse
    assert os.path.isdir(first.warehouse)


def test_fail_next_commits(catalog: InMemoryCatalogBackend, warehouse: Path) -> None:
    created = _create(catalog)
    catalog.fail_next_commits(2)
    for _ in range(2):
        with pytest.raises(CommitFailedException):
            _commit(catalog, created, a="1")
    catalog.fail_next_commits(1, ValidationException)
    with pytest.raises(ValidationException):
        _commit(catalog, created, a="1")
    assert catalog.load_table("db.t") == created
    assert len(_metadata_files(warehouse)) == 1
    assert _commit(catalog, created, a="1").metadata.properties["a"] == "1"


def test_commit_then_raise(catalog: InMemoryCatalogBackend) -> None:
    created = _create(catalog)
    catalog.commit_then_raise(1)
    with pytest.raises(CommitStateUnknownException):
        _commit(catalog, created, a="1")
    # The commit did happen.
    assert catalog.load_table("db.t").metadata.properties["a"] == "1"
    assert _commit(catalog, None, b="2").metadata.properties["b"] == "2"


def test_lost_swap_answer_is_settled_as_success(catalog: InMemoryCatalogBackend) -> None:
    created = _create(catalog)
    catalog.swap_then_raise(1)
    committed = _commit(catalog, created, a="1")
    assert catalog.load_table("db.t") == committed
    assert os.path.isfile(local_path(committed.metadata_location))


def test_unknown_outcome_before_the_swap_is_settled_as_failure(
    catalog: InMemoryCatalogBackend, warehouse: Path
) -> None:
    created = _create(catalog)

    def timeout(identifier: tuple[str, ...]) -> None:
        raise CommitStateUnknownException("timed out before the request reached the catalog")

    catalog.set_before_swap(timeout)
    with pytest.raises(CommitFailedException) as info:
        _commit(catalog, created, a="1")
    assert isinstance(info.value.__cause__, CommitStateUnknownException)
    assert catalog.load_table("db.t") == created
    # Definitely not committed: our metadata file was deleted.
    assert len(_metadata_files(warehouse)) == 1


def test_concurrent_writer_before_the_swap(catalog: InMemoryCatalogBackend, warehouse: Path) -> None:
    created = _create(catalog)
    uuid = created.metadata.table_uuid

    def concurrent_writer(identifier: tuple[str, ...]) -> None:
        catalog.commit_table(identifier, None, [AssertTableUUID(uuid)], [SetProperties({"other": "1"})])

    catalog.set_before_swap(concurrent_writer)
    with pytest.raises(CommitFailedException):
        _commit(catalog, created, mine="1")
    catalog.set_before_swap(None)
    current = catalog.load_table("db.t")
    assert dict(current.metadata.properties) == {"write.parquet.compression-codec": "zstd", "other": "1"}
    # The losing commit left no file behind.
    assert len(_metadata_files(warehouse)) == 2
    retried = _commit(catalog, current, mine="1")
    assert dict(retried.metadata.properties) == {
        "write.parquet.compression-codec": "zstd",
        "other": "1",
        "mine": "1",
    }
