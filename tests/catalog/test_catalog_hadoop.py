"""HadoopCatalogBackend: Java's directory layout, version hint, checksums, exclusive publishing."""

from __future__ import annotations

import os
import struct
import zlib
from pathlib import Path

import pytest
from catalog_helpers import HookedFileIO, new_metadata

from icefloe.backends import HadoopCatalogBackend, LoadedTable
from icefloe.backends._hadoop_crc import checksum_location, hadoop_checksum
from icefloe.errors import (
    CommitFailedException,
    FileIOError,
    NamespaceNotEmptyError,
    UnsupportedFeatureError,
    ValidationError,
)
from icefloe.io import FaultInjectingFileIO, LocalFileIO
from icefloe.serde.metadata_json import dumps_metadata
from icefloe.spec.builder import MetadataBuilder
from icefloe.spec.updates import SetLocation, SetProperties

# What Java's local Hadoop file system wrote beside a version-hint.text holding "2".
JAVA_CRC_OF_HINT_2 = bytes.fromhex("63726300000002001ad5be0d")


@pytest.fixture
def catalog(warehouse: Path) -> HadoopCatalogBackend:
    return HadoopCatalogBackend("h", {"warehouse": str(warehouse)})


def _create(catalog: HadoopCatalogBackend, ident: str = "db.t", **properties: str) -> LoadedTable:
    if not catalog.namespace_exists("db"):
        catalog.create_namespace("db")
    return catalog.create_table(ident, new_metadata(catalog, ident, **properties))


def _commit(catalog: HadoopCatalogBackend, **props: str) -> LoadedTable:
    return catalog.commit_table("db.t", None, [], [SetProperties(props)])


def _meta(warehouse: Path) -> Path:
    return warehouse / "db" / "t" / "metadata"


def test_checksum_matches_java() -> None:
    assert hadoop_checksum(b"2") == JAVA_CRC_OF_HINT_2
    data = bytes(range(256)) * 5  # three chunks, the last one partial
    crc = hadoop_checksum(data)
    assert crc[:8] == b"crc\x00\x00\x00\x02\x00"
    sums = struct.unpack(">3I", crc[8:])
    assert sums == (zlib.crc32(data[:512]), zlib.crc32(data[512:1024]), zlib.crc32(data[1024:]))
    assert hadoop_checksum(b"") == b"crc\x00\x00\x00\x02\x00"
    assert (
        checksum_location("/w/db/t/metadata/version-hint.text") == "/w/db/t/metadata/.version-hint.text.crc"
    )


def test_layout_of_create_and_commit(catalog: HadoopCatalogBackend, warehouse: Path) -> None:
    created = _create(catalog)
    meta = _meta(warehouse)
    assert created.metadata_location == f"{warehouse}/db/t/metadata/v1.metadata.json"
    assert (meta / "version-hint.text").read_text() == "1"
    assert (meta / ".version-hint.text.crc").read_bytes() == hadoop_checksum(b"1")
    committed = _commit(catalog, a="1")
    assert committed.metadata_location == f"{warehouse}/db/t/metadata/v2.metadata.json"
    assert (meta / "version-hint.text").read_text() == "2"
    assert (meta / ".version-hint.text.crc").read_bytes() == JAVA_CRC_OF_HINT_2
    assert sorted(p.name for p in meta.iterdir() if not p.name.startswith(".")) == [
        "v1.metadata.json",
        "v2.metadata.json",
        "version-hint.text",
    ]


@pytest.mark.parametrize("hint", [None, "1", "garbage", "9"])
def test_current_version_without_a_good_hint(
    catalog: HadoopCatalogBackend, warehouse: Path, hint: str | None
) -> None:
    _create(catalog)
    _commit(catalog, a="1")
    third = _commit(catalog, a="2")
    hint_file = _meta(warehouse) / "version-hint.text"
    if hint is None:
        hint_file.unlink()
    else:  # stale (readers probe forward), unparsable, or naming a missing version
        hint_file.write_text(hint)
    assert catalog.load_table("db.t") == third
    fourth = _commit(catalog, a="3")
    assert fourth.metadata_location.endswith("/v4.metadata.json")
    assert hint_file.read_text() == "4"


def test_a_table_is_a_directory_with_metadata_files(catalog: HadoopCatalogBackend, warehouse: Path) -> None:
    catalog.create_namespace("db")
    (warehouse / "db" / "looks_like_ns" / "metadata").mkdir(parents=True)
    assert catalog.list_tables("db") == []
    assert catalog.list_namespaces("db") == [("db", "looks_like_ns")]
    _create(catalog)
    assert catalog.list_tables("db") == [("db", "t")]
    assert not catalog.namespace_exists("db.t")
    # Directories inside a table are not namespaces.
    assert not catalog.namespace_exists(("db", "t", "metadata"))
    assert not catalog.table_exists(("db", "t", "metadata"))
    with pytest.raises(ValidationError):
        catalog.create_namespace(("db", "t", "inner"))


def test_concurrent_writer_wins_the_version(catalog: HadoopCatalogBackend, warehouse: Path) -> None:
    _create(catalog)
    other = HadoopCatalogBackend("h", {"warehouse": str(warehouse)})

    def competitor_commits_first(location: str) -> None:
        racing.before = None  # only once
        other.commit_table("db.t", None, [], [SetProperties({"winner": "other"})])

    racing = HookedFileIO(LocalFileIO(), before=competitor_commits_first)
    loser = HadoopCatalogBackend("h", {"warehouse": str(warehouse)}, io=racing)
    with pytest.raises(CommitFailedException):
        loser.commit_table("db.t", None, [], [SetProperties({"winner": "loser"})])
    current = catalog.load_table("db.t")
    assert current.metadata_location.endswith("/v2.metadata.json")
    assert current.metadata.properties["winner"] == "other"
    # A retry lands on top of the winner.
    retried = loser.commit_table("db.t", None, [], [SetProperties({"second": "loser"})])
    assert retried.metadata_location.endswith("/v3.metadata.json")
    assert dict(retried.metadata.properties) == {
        "write.parquet.compression-codec": "zstd",
        "winner": "other",
        "second": "loser",
    }


def test_same_version_under_another_codec_name_is_withdrawn(
    catalog: HadoopCatalogBackend, warehouse: Path
) -> None:
    # A gzip writer that passed its "is there any v2?" check publishes v2.gz.metadata.json
    # right after our exclusive create of v2.metadata.json: different names, so both creates
    # succeed. Ours must be withdrawn (a definite, retryable failure), never both kept.
    created = _create(catalog)
    rival = MetadataBuilder(created.metadata, metadata_location=created.metadata_location)
    rival_metadata = rival.apply(SetProperties({"who": "gzip"})).build()

    def gzip_writer_publishes_v2(location: str) -> None:
        racing.after = None
        (_meta(warehouse) / "v2.gz.metadata.json").write_bytes(
            dumps_metadata(rival_metadata, compression="gzip")
        )

    racing = HookedFileIO(LocalFileIO(), after=gzip_writer_publishes_v2)
    plain = HadoopCatalogBackend("h", {"warehouse": str(warehouse)}, io=racing)
    with pytest.raises(CommitFailedException):
        plain.commit_table("db.t", None, [], [SetProperties({"who": "plain"})])
    assert sorted(p.name for p in _meta(warehouse).glob("v2*.metadata.json")) == ["v2.gz.metadata.json"]
    assert catalog.load_table("db.t").metadata.properties["who"] == "gzip"


def test_failed_publish_is_a_definite_failure(catalog: HadoopCatalogBackend, warehouse: Path) -> None:
    created = _create(catalog)
    faulty = FaultInjectingFileIO(LocalFileIO(), lambda location: location.endswith("v2.metadata.json"))
    writer = HadoopCatalogBackend("h", {"warehouse": str(warehouse)}, io=faulty)
    with pytest.raises(CommitFailedException) as info:
        writer.commit_table("db.t", None, [], [SetProperties({"a": "1"})])
    assert isinstance(info.value.__cause__, FileIOError)
    assert catalog.load_table("db.t") == created
    assert not (_meta(warehouse) / "v2.metadata.json").exists()


def test_publish_that_reports_failure_after_writing_is_a_success(
    catalog: HadoopCatalogBackend, warehouse: Path
) -> None:
    _create(catalog)

    def lost_acknowledgement(location: str) -> None:
        raise FileIOError(f"connection reset after writing {location}")

    writer = HadoopCatalogBackend(
        "h", {"warehouse": str(warehouse)}, io=HookedFileIO(LocalFileIO(), after=lost_acknowledgement)
    )
    committed = writer.commit_table("db.t", None, [], [SetProperties({"a": "1"})])
    assert committed.metadata_location.endswith("/v2.metadata.json")
    assert catalog.load_table("db.t") == committed
    assert (_meta(warehouse) / "version-hint.text").read_text() == "2"


def test_delete_after_commit_removes_checksums_too(catalog: HadoopCatalogBackend, warehouse: Path) -> None:
    _create(
        catalog,
        **{"write.metadata.delete-after-commit.enabled": "true", "write.metadata.previous-versions-max": "1"},
    )
    meta = _meta(warehouse)
    (meta / ".v1.metadata.json.crc").write_bytes(b"as Java would leave it")
    _commit(catalog, a="1")
    assert (meta / "v1.metadata.json").exists()  # still in the metadata log
    _commit(catalog, a="2")
    assert not (meta / "v1.metadata.json").exists()
    assert not (meta / ".v1.metadata.json.crc").exists()
    assert (meta / "v2.metadata.json").exists() and (meta / "v3.metadata.json").exists()


def test_unsupported_changes(catalog: HadoopCatalogBackend, warehouse: Path) -> None:
    created = _create(catalog)
    with pytest.raises(ValidationError):
        catalog.commit_table("db.t", created, [], [SetLocation(f"{warehouse}/elsewhere")])
    with pytest.raises(ValidationError):
        catalog.commit_table("db.t", created, [], [SetProperties({"write.metadata.path": f"{warehouse}/m"})])
    with pytest.raises(ValidationError):
        catalog.create_table("db.u", new_metadata(catalog, "db.other_place"))
    assert catalog.load_table("db.t") == created


def test_drop_namespace_with_files_is_refused(catalog: HadoopCatalogBackend, warehouse: Path) -> None:
    catalog.create_namespace("db")
    (warehouse / "db" / "notes.txt").write_text("x")
    with pytest.raises(NamespaceNotEmptyError):
        catalog.drop_namespace("db")
    os.remove(warehouse / "db" / "notes.txt")
    catalog.drop_namespace("db")
    assert not (warehouse / "db").exists()


def test_remote_warehouse_is_refused() -> None:
    with pytest.raises(UnsupportedFeatureError):
        HadoopCatalogBackend("h", {"warehouse": "s3://bucket/warehouse"})


def test_file_uri_warehouse(warehouse: Path) -> None:
    catalog = HadoopCatalogBackend("h", {"warehouse": f"file:{warehouse}"})
    created = _create(catalog)
    assert created.metadata_location == f"file:{warehouse}/db/t/metadata/v1.metadata.json"
    assert (warehouse / "db" / "t" / "metadata" / "v1.metadata.json").is_file()
    assert catalog.load_table("db.t") == created
