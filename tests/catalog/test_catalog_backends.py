"""Behaviour every backend shares: namespaces, tables, the commit protocol."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from catalog_helpers import SCHEMA, new_metadata

from icefloe.backends import CatalogBackend, HadoopCatalogBackend, LoadedTable, PropertiesUpdateSummary
from icefloe.errors import (
    CommitFailedException,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
    UnsupportedFeatureError,
    ValidationError,
)
from icefloe.io import local_path
from icefloe.serde.metadata_json import loads_metadata
from icefloe.spec.builder import updates_for_new_table
from icefloe.spec.partitioning import UNPARTITIONED_SPEC
from icefloe.spec.sorting import UNSORTED_SORT_ORDER
from icefloe.spec.updates import (
    AssertCreate,
    AssertCurrentSchemaId,
    AssertRefSnapshotId,
    AssertTableUUID,
    RemoveProperties,
    SetProperties,
)


def _is_hadoop(backend: CatalogBackend) -> bool:
    return isinstance(backend, HadoopCatalogBackend)


def _metadata_files(loaded: LoadedTable) -> list[str]:
    folder = Path(local_path(loaded.metadata_location)).parent
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".metadata.json"))


def _create(backend: CatalogBackend, ident: str = "db.t", **properties: str) -> LoadedTable:
    if not backend.namespace_exists(ident.rsplit(".", 1)[0]):
        backend.create_namespace(ident.rsplit(".", 1)[0])
    return backend.create_table(ident, new_metadata(backend, ident, **properties))


def _set(
    backend: CatalogBackend, loaded: LoadedTable | None, ident: str = "db.t", **props: str
) -> LoadedTable:
    return backend.commit_table(ident, loaded, [], [SetProperties(props)])


# ---- namespaces ---------------------------------------------------------------------------------


def test_namespace_lifecycle(backend: CatalogBackend) -> None:
    assert backend.list_namespaces() == []
    assert not backend.namespace_exists("db")
    backend.create_namespace("db")
    assert backend.namespace_exists("db")
    assert backend.namespace_exists(("db",))
    with pytest.raises(NamespaceAlreadyExistsError):
        backend.create_namespace("db")
    backend.create_namespace(("db", "inner"))
    backend.create_namespace("other")
    assert backend.list_namespaces() == [("db",), ("other",)]
    assert backend.list_namespaces("db") == [("db", "inner")]
    assert backend.list_namespaces(("db", "inner")) == []
    assert backend.namespace_exists("db.inner")
    assert not backend.namespace_exists("db.missing")
    with pytest.raises(NamespaceNotEmptyError):
        backend.drop_namespace("db")  # it holds db.inner
    backend.drop_namespace("db.inner")
    backend.drop_namespace("db")
    assert backend.list_namespaces() == [("other",)]
    assert not backend.namespace_exists("db")


def test_missing_namespace_errors(backend: CatalogBackend) -> None:
    for call in (
        lambda: backend.list_namespaces("nope"),
        lambda: backend.load_namespace_properties("nope"),
        lambda: backend.update_namespace_properties("nope", updates={}),
        lambda: backend.drop_namespace("nope"),
        lambda: backend.list_tables("nope"),
        lambda: backend.create_table("nope.t", new_metadata(backend, "nope.t")),
    ):
        with pytest.raises(NoSuchNamespaceError):
            call()


def test_namespace_holding_a_table_is_not_empty(backend: CatalogBackend) -> None:
    _create(backend)
    with pytest.raises(NamespaceNotEmptyError):
        backend.drop_namespace("db")
    backend.drop_table("db.t")
    backend.drop_namespace("db")
    assert not backend.namespace_exists("db")


def test_namespace_properties(backend: CatalogBackend) -> None:
    if _is_hadoop(backend):
        backend.create_namespace("db")
        assert backend.load_namespace_properties("db") == {"location": f"{backend.warehouse}/db"}
        with pytest.raises(UnsupportedFeatureError):
            backend.create_namespace("x", {"owner": "me"})
        with pytest.raises(UnsupportedFeatureError):
            backend.update_namespace_properties("db", updates={"owner": "me"})
        assert backend.update_namespace_properties("db") == PropertiesUpdateSummary((), (), ())
        return
    backend.create_namespace("db", {"owner": "me", "comment": "sales"})
    assert backend.load_namespace_properties("db") == {"owner": "me", "comment": "sales"}
    summary = backend.update_namespace_properties(
        "db", removals=["comment", "absent"], updates={"owner": "you", "new": "1"}
    )
    assert summary == PropertiesUpdateSummary(
        removed=("comment",), updated=("new", "owner"), missing=("absent",)
    )
    assert backend.load_namespace_properties("db") == {"owner": "you", "new": "1"}
    with pytest.raises(ValidationError):
        backend.update_namespace_properties("db", removals=["owner"], updates={"owner": "x"})
    assert backend.load_namespace_properties("db") == {"owner": "you", "new": "1"}
    backend.create_namespace("bare")
    assert backend.load_namespace_properties("bare") == {}
    assert backend.namespace_exists("bare")


# ---- tables -------------------------------------------------------------------------------------


def test_create_load_list_tables(backend: CatalogBackend) -> None:
    backend.create_namespace("db")
    assert backend.list_tables("db") == []
    assert not backend.table_exists("db.t")
    metadata = new_metadata(backend, "db.t")
    created = backend.create_table("db.t", metadata)
    assert created.identifier == ("db", "t")
    assert created.metadata == metadata
    assert os.path.isfile(local_path(created.metadata_location))
    assert created.metadata_location.startswith(f"{backend.warehouse}/db/t/metadata/")
    assert backend.table_exists("db.t")
    assert backend.table_exists(("db", "t"))
    loaded = backend.load_table("db.t")
    assert loaded == created
    assert loads_metadata(Path(local_path(loaded.metadata_location)).read_bytes()) == metadata
    _create(backend, "db.a")
    assert backend.list_tables("db") == [("db", "a"), ("db", "t")]
    assert backend.list_namespaces() == [("db",)]  # tables are not namespaces
    with pytest.raises(TableAlreadyExistsError):
        backend.create_table("db.t", new_metadata(backend, "db.t"))
    assert backend.load_table("db.t") == created
    with pytest.raises(NoSuchTableError):
        backend.load_table("db.missing")


def test_nested_namespace_tables(backend: CatalogBackend) -> None:
    backend.create_namespace("a")
    backend.create_namespace("a.b")
    created = backend.create_table("a.b.t", new_metadata(backend, "a.b.t"))
    assert created.metadata.location == f"{backend.warehouse}/a/b/t"
    assert backend.list_tables("a.b") == [("a", "b", "t")]
    assert backend.list_tables("a") == []
    assert backend.load_table(("a", "b", "t")).metadata_location == created.metadata_location


def test_default_table_location(backend: CatalogBackend) -> None:
    assert backend.default_table_location("db.t") == f"{backend.warehouse}/db/t"
    assert backend.default_table_location(("a", "b", "t")) == f"{backend.warehouse}/a/b/t"


def test_drop_table(backend: CatalogBackend) -> None:
    created = _create(backend)
    backend.drop_table("db.t")
    assert not backend.table_exists("db.t")
    with pytest.raises(NoSuchTableError):
        backend.load_table("db.t")
    with pytest.raises(NoSuchTableError):
        backend.drop_table("db.t")
    # Without purge the files stay, except in the Hadoop layout where a table is its directory.
    assert os.path.exists(local_path(created.metadata_location)) != _is_hadoop(backend)
    recreated = _create(backend)
    assert recreated.metadata.table_uuid != created.metadata.table_uuid


def test_drop_table_purge_deletes_metadata_files(backend: CatalogBackend) -> None:
    loaded = _create(backend)
    first = loaded.metadata_location
    loaded = _set(backend, loaded, a="1")
    loaded = _set(backend, loaded, a="2")
    backend.drop_table("db.t", purge=True)
    assert not os.path.exists(local_path(first))
    assert not os.path.exists(local_path(loaded.metadata_location))
    assert not backend.table_exists("db.t")


def test_rename_table(backend: CatalogBackend) -> None:
    created = _create(backend)
    if _is_hadoop(backend):
        with pytest.raises(UnsupportedFeatureError):
            backend.rename_table("db.t", "db.u")
        return
    backend.create_namespace("other")
    backend.rename_table("db.t", "other.u")
    assert not backend.table_exists("db.t")
    moved = backend.load_table("other.u")
    assert moved.metadata_location == created.metadata_location
    assert moved.identifier == ("other", "u")
    # Commits go on under the new name.
    committed = _set(backend, moved, "other.u", k="v")
    assert backend.load_table("other.u").metadata_location == committed.metadata_location
    with pytest.raises(NoSuchTableError):
        backend.rename_table("db.t", "db.v")
    with pytest.raises(NoSuchNamespaceError):
        backend.rename_table("other.u", "missing.u")
    _create(backend, "db.x")
    with pytest.raises(TableAlreadyExistsError):
        backend.rename_table("other.u", "db.x")
    assert backend.table_exists("other.u")


def test_register_table(backend: CatalogBackend) -> None:
    loaded = _set(backend, _create(backend), a="1")
    backend.create_namespace("copies")
    registered = backend.register_table("copies.t", loaded.metadata_location)
    assert registered.metadata == loaded.metadata
    assert backend.load_table("copies.t").metadata == loaded.metadata
    if not _is_hadoop(backend):
        assert registered.metadata_location == loaded.metadata_location
    else:  # Java's HadoopCatalog copies the metadata as version 1 of the new table directory
        assert registered.metadata_location == f"{backend.warehouse}/copies/t/metadata/v1.metadata.json"
    with pytest.raises(TableAlreadyExistsError):
        backend.register_table("copies.t", loaded.metadata_location)
    with pytest.raises(NoSuchNamespaceError):
        backend.register_table("missing.t", loaded.metadata_location)


# ---- commits ------------------------------------------------------------------------------------


def test_commit_writes_a_new_metadata_file(backend: CatalogBackend) -> None:
    created = _create(backend)
    committed = backend.commit_table(
        "db.t", created, [AssertTableUUID(created.metadata.table_uuid)], [SetProperties({"a": "1"})]
    )
    assert committed.metadata_location != created.metadata_location
    assert committed.metadata.properties["a"] == "1"
    assert [e.metadata_file for e in committed.metadata.metadata_log] == [created.metadata_location]
    assert backend.load_table("db.t") == committed
    assert os.path.isfile(local_path(created.metadata_location))
    name = committed.metadata_location.rsplit("/", 1)[-1]
    if _is_hadoop(backend):
        assert name == "v2.metadata.json"
    else:
        assert name.startswith("00001-") and name.endswith(".metadata.json")
        assert created.metadata_location.rsplit("/", 1)[-1].startswith("00000-")


def test_commit_applies_to_current_metadata_not_base(backend: CatalogBackend) -> None:
    created = _create(backend)
    _set(backend, created, a="1")
    # A stale base: the requirements decide, and the updates apply on top of the current state.
    second = _set(backend, created, b="2")
    assert dict(second.metadata.properties) == {"write.parquet.compression-codec": "zstd", "a": "1", "b": "2"}
    assert len(second.metadata.metadata_log) == 2


def test_failed_requirements_commit_nothing(backend: CatalogBackend) -> None:
    created = _create(backend)
    before = _metadata_files(created)
    for requirement in (
        AssertTableUUID("00000000-0000-0000-0000-000000000000"),
        AssertCurrentSchemaId(7),
        AssertRefSnapshotId("main", 123),
    ):
        with pytest.raises(CommitFailedException):
            backend.commit_table("db.t", created, [requirement], [SetProperties({"a": "1"})])
    assert backend.load_table("db.t") == created
    assert _metadata_files(created) == before


def test_invalid_updates_commit_nothing(backend: CatalogBackend) -> None:
    created = _create(backend)
    before = _metadata_files(created)
    with pytest.raises(ValidationError):
        backend.commit_table("db.t", created, [], [SetProperties({"format-version": "3"})])
    assert backend.load_table("db.t") == created
    assert _metadata_files(created) == before


def test_noop_commit_keeps_the_metadata_file(backend: CatalogBackend) -> None:
    created = _create(backend, a="1")
    same = backend.commit_table("db.t", created, [], [SetProperties({"a": "1"}), RemoveProperties(("zz",))])
    assert same == created
    assert _metadata_files(created) == [created.metadata_location.rsplit("/", 1)[-1]]


def test_commit_to_missing_table(backend: CatalogBackend) -> None:
    backend.create_namespace("db")
    with pytest.raises(NoSuchTableError):
        backend.commit_table("db.t", None, [], [SetProperties({"a": "1"})])


def test_create_through_commit(backend: CatalogBackend) -> None:
    backend.create_namespace("db")
    updates = updates_for_new_table(
        SCHEMA, UNPARTITIONED_SPEC, UNSORTED_SORT_ORDER, backend.default_table_location("db.t"), {"p": "v"}
    )
    created = backend.commit_table("db.t", None, [AssertCreate()], updates)
    assert created.metadata.properties["p"] == "v"
    assert backend.load_table("db.t") == created
    with pytest.raises(TableAlreadyExistsError):
        backend.commit_table("db.t", None, [AssertCreate()], updates)


def test_gzip_metadata(backend: CatalogBackend) -> None:
    created = _create(backend, **{"write.metadata.compression-codec": "gzip"})
    committed = _set(backend, created, a="1")
    for loaded in (created, committed):
        assert loaded.metadata_location.endswith(".gz.metadata.json")
        assert Path(local_path(loaded.metadata_location)).read_bytes()[:2] == b"\x1f\x8b"
    assert backend.load_table("db.t") == committed
    with pytest.raises(ValidationError):
        _set(backend, committed, **{"write.metadata.compression-codec": "zstd"})


def test_delete_after_commit_keeps_previous_versions_max(backend: CatalogBackend) -> None:
    loaded = _create(
        backend,
        **{"write.metadata.delete-after-commit.enabled": "true", "write.metadata.previous-versions-max": "2"},
    )
    locations = [loaded.metadata_location]
    for i in range(5):
        loaded = _set(backend, loaded, counter=str(i))
        locations.append(loaded.metadata_location)
    assert [e.metadata_file for e in loaded.metadata.metadata_log] == locations[-3:-1]
    existing = [loc for loc in locations if os.path.exists(local_path(loc))]
    assert existing == locations[-3:]
    assert backend.load_table("db.t") == loaded


def test_previous_versions_kept_without_delete_after_commit(backend: CatalogBackend) -> None:
    loaded = _create(backend, **{"write.metadata.previous-versions-max": "1"})
    locations = [loaded.metadata_location]
    for i in range(3):
        loaded = _set(backend, loaded, counter=str(i))
        locations.append(loaded.metadata_location)
    assert [e.metadata_file for e in loaded.metadata.metadata_log] == locations[-2:-1]
    assert all(os.path.exists(local_path(loc)) for loc in locations)


def test_write_metadata_path(backend: CatalogBackend, warehouse: Path) -> None:
    custom = f"{warehouse}/custom-metadata"
    if _is_hadoop(backend):
        backend.create_namespace("db")
        with pytest.raises(ValidationError):
            backend.create_table("db.t", new_metadata(backend, "db.t", **{"write.metadata.path": custom}))
        return
    created = _create(backend, **{"write.metadata.path": custom})
    committed = _set(backend, created, a="1")
    assert created.metadata_location.startswith(f"{custom}/00000-")
    assert committed.metadata_location.startswith(f"{custom}/00001-")
    assert backend.load_table("db.t") == committed
