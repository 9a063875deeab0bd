"""Other engines share icefloe's catalogs: Java's HadoopCatalog and PyIceberg's SqlCatalog."""

from __future__ import annotations

from pathlib import Path

import pytest
from catalog_helpers import new_metadata

from icefloe.backends import HadoopCatalogBackend, SqlCatalogBackend
from icefloe.backends._hadoop_crc import hadoop_checksum
from icefloe.spec.updates import AssertRefSnapshotId, AssertTableUUID, SetProperties
from interop.engines import EngineError, JavaEngine, PyIcebergEngine

pytestmark = [pytest.mark.interop, pytest.mark.slow]

# Reads a file through Hadoop's checksummed local file system, as Java's HadoopCatalog does.
READ_CHECKSUMMED = """
fs = jvm.org.apache.hadoop.fs.FileSystem.getLocal(sc._jsc.hadoopConfiguration())
stream = fs.open(jvm.org.apache.hadoop.fs.Path(path))
try:
    result = jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8")
finally:
    stream.close()
"""


def _read_checksummed(java: JavaEngine, path: Path) -> str:
    return str(java.exec(READ_CHECKSUMMED, path=str(path)))


def test_java_verifies_our_checksums(java_engine: JavaEngine, tmp_path: Path) -> None:
    text = "".join(f"line {i}\n" for i in range(200))  # several 512-byte chunks
    good = tmp_path / "good.txt"
    good.write_text(text)
    (tmp_path / ".good.txt.crc").write_bytes(hadoop_checksum(text.encode()))
    assert _read_checksummed(java_engine, good) == text
    # The check is real: a checksum of other bytes fails the read.
    bad = tmp_path / "bad.txt"
    bad.write_text("4")
    (tmp_path / ".bad.txt.crc").write_bytes(hadoop_checksum(b"3"))
    with pytest.raises(EngineError) as info:
        _read_checksummed(java_engine, bad)
    assert "ChecksumException" in str(info.value)


def test_java_and_icefloe_take_turns_on_a_hadoop_table(java_engine: JavaEngine, tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    ours = HadoopCatalogBackend("h", {"warehouse": str(warehouse)})
    ours.create_namespace("db")
    created = ours.create_table("db.t", new_metadata(ours, "db.t"))
    ours.commit_table(
        "db.t", None, [AssertTableUUID(created.metadata.table_uuid)], [SetProperties({"first": "1"})]
    )
    metadata_dir = warehouse / "db" / "t" / "metadata"
    hint = metadata_dir / "version-hint.text"

    java = java_engine.hadoop_catalog(warehouse)
    assert _read_checksummed(java_engine, hint) == "2"
    assert ["first", "1"] in java_engine.sql(f"SHOW TBLPROPERTIES {java}.db.t")["rows"]
    java_engine.sql(f"INSERT INTO {java}.db.t VALUES (1, 'one')")  # Java commits v3

    loaded = ours.load_table("db.t")
    assert loaded.metadata_location.endswith("/v3.metadata.json")
    snapshot = loaded.metadata.current_snapshot()
    assert snapshot is not None and snapshot.operation == "append"
    # Java left a checksum beside its hint; ours must replace it consistently.
    assert (metadata_dir / ".version-hint.text.crc").read_bytes() == hadoop_checksum(b"3")
    ours.commit_table(
        "db.t",
        loaded,
        [AssertRefSnapshotId("main", snapshot.snapshot_id)],
        [SetProperties({"second": "2"})],
    )
    assert _read_checksummed(java_engine, hint) == "4"

    java_engine.sql(f"INSERT INTO {java}.db.t VALUES (2, 'two')")  # Java commits v5 on top of ours
    assert java_engine.sql(f"SELECT id, name FROM {java}.db.t")["rows"] == [[1, "one"], [2, "two"]]
    properties = java_engine.sql(f"SHOW TBLPROPERTIES {java}.db.t")["rows"]
    assert ["first", "1"] in properties and ["second", "2"] in properties

    final = ours.load_table("db.t")
    assert final.metadata_location.endswith("/v5.metadata.json")
    assert len(final.metadata.snapshots) == 2
    assert {"first": "1", "second": "2"}.items() <= final.metadata.properties.items()
    assert [e.metadata_file.rsplit("/", 1)[-1] for e in final.metadata.metadata_log] == [
        f"v{i}.metadata.json" for i in range(1, 5)
    ]


PYICEBERG_SIDE = """
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

catalog = SqlCatalog("shared", uri=uri, warehouse=warehouse)
try:
    ours = catalog.load_table("db.ours")
    seen = {
        "metadata_location": ours.metadata_location,
        "properties": dict(ours.properties),
        "uuid": str(ours.metadata.table_uuid),
        "namespaces": [list(n) for n in catalog.list_namespaces()],
        "tables": sorted(list(t) for t in catalog.list_tables("db")),
        "namespace_properties": catalog.load_namespace_properties("db"),
    }
    with ours.transaction() as tx:
        tx.set_properties({"pyiceberg.was.here": "yes"})
    schema = Schema(
        NestedField(1, "id", LongType(), required=True), NestedField(2, "name", StringType(), required=False)
    )
    theirs = catalog.create_table("db.theirs", schema=schema, properties={"made.by": "pyiceberg"})
    theirs.append(pa.table({"id": [1, 2], "name": ["a", "b"]}, schema=theirs.schema().as_arrow()))
    seen["theirs_location"] = catalog.load_table("db.theirs").metadata_location
    result = seen
finally:
    catalog.close()
"""

PYICEBERG_READS_BACK = """
from pyiceberg.catalog.sql import SqlCatalog

catalog = SqlCatalog("shared", uri=uri, warehouse=warehouse)
try:
    theirs = catalog.load_table("db.theirs")
    result = {
        "metadata_location": theirs.metadata_location,
        "properties": dict(theirs.properties),
        "rows": sorted(theirs.scan().to_arrow().to_pylist(), key=lambda r: r["id"]),
    }
finally:
    catalog.close()
"""


def test_pyiceberg_shares_the_sql_catalog(pyiceberg_engine: PyIcebergEngine, tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    ours = SqlCatalogBackend("shared", {"warehouse": str(warehouse)})
    ours.create_namespace("db", {"owner": "icefloe"})
    created = ours.create_table("db.ours", new_metadata(ours, "db.ours"))
    committed = ours.commit_table("db.ours", created, [], [SetProperties({"written.by": "icefloe"})])
    params = {"uri": f"sqlite:///{warehouse}/catalog.db", "warehouse": str(warehouse)}

    seen = pyiceberg_engine.exec(PYICEBERG_SIDE, **params)
    assert seen["metadata_location"] == committed.metadata_location
    assert seen["properties"] == {"write.parquet.compression-codec": "zstd", "written.by": "icefloe"}
    assert seen["uuid"] == created.metadata.table_uuid
    assert seen["namespaces"] == [["db"]]
    assert seen["tables"] == [["db", "ours"]]
    assert seen["namespace_properties"]["owner"] == "icefloe"

    # PyIceberg's commit to our table, through the same row.
    after = ours.load_table("db.ours")
    assert after.metadata.properties["pyiceberg.was.here"] == "yes"
    assert after.metadata.metadata_log[-1].metadata_file == committed.metadata_location
    assert after.metadata_location.rsplit("/", 1)[-1].startswith("00002-")
    assert ours.list_tables("db") == [("db", "ours"), ("db", "theirs")]

    # PyIceberg's table, committed to by icefloe, and read back by PyIceberg.
    theirs = ours.load_table("db.theirs")
    assert theirs.metadata_location == seen["theirs_location"]
    snapshot = theirs.metadata.current_snapshot()
    assert snapshot is not None and snapshot.summary["added-records"] == "2"
    mine = ours.commit_table(
        "db.theirs",
        theirs,
        [AssertRefSnapshotId("main", snapshot.snapshot_id)],
        [SetProperties({"icefloe.was.here": "yes"})],
    )
    back = pyiceberg_engine.exec(PYICEBERG_READS_BACK, **params)
    assert back["metadata_location"] == mine.metadata_location
    assert back["properties"]["icefloe.was.here"] == "yes"
    assert back["properties"]["made.by"] == "pyiceberg"
    assert back["rows"] == [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]
    ours.close()


def test_purging_a_java_table_leaves_no_checksum_files(java_engine: JavaEngine, tmp_path: Path) -> None:
    java_warehouse = tmp_path / "java"
    java = java_engine.hadoop_catalog(java_warehouse)
    java_engine.sql(
        f"CREATE TABLE {java}.db.t (id bigint, part string) USING iceberg PARTITIONED BY (part)",
        f"INSERT INTO {java}.db.t VALUES (1, 'a'), (2, 'b')",
        f"DELETE FROM {java}.db.t WHERE id = 1",
    )
    table_dir = java_warehouse / "db" / "t"
    assert any(p.name.endswith(".parquet.crc") for p in table_dir.rglob("*"))
    hint = (table_dir / "metadata" / "version-hint.text").read_text()

    ours = SqlCatalogBackend("sql", {"warehouse": str(tmp_path / "ours")})
    ours.create_namespace("db")
    ours.register_table("db.t", str(table_dir / "metadata" / f"v{hint}.metadata.json"))
    ours.drop_table("db.t", purge=True)
    # Only Java's version hint is left: no metadata file reaches it.
    left = sorted(p.relative_to(table_dir).as_posix() for p in table_dir.rglob("*") if p.is_file())
    assert left == ["metadata/.version-hint.text.crc", "metadata/version-hint.text"]
    ours.close()
