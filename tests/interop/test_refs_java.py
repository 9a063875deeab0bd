"""Branches, tags, sort orders and statistics written by icefloe, read by Java Iceberg (on Spark).

icefloe creates a branch and a tag, commits to the branch, cherry-picks, replaces the sort
order and registers statistics files; Java must read the branch and the tag by name in SQL
(``VERSION AS OF 'tag'``, ``t.branch_x``) and see the same refs, sort order and statistics
files after loading the table itself. (The table's location is not checked here: the Hadoop
catalog both engines share refuses to relocate a table, in Java and in icefloe alike.)

One Java engine session serves the whole module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icefloe
from icefloe.spec.statistics import BlobMetadata, PartitionStatisticsFile, StatisticsFile

from .engines import JavaEngine
from .tables import hadoop_catalog

pytestmark = pytest.mark.interop

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("refs")


@pytest.fixture(scope="module")
def java_catalog(java_engine: JavaEngine, warehouse: Path) -> str:
    return java_engine.hadoop_catalog(warehouse)


@pytest.fixture(scope="module")
def catalog(warehouse: Path, java_catalog: str) -> icefloe.Catalog:
    cat = hadoop_catalog(warehouse)
    cat.create_namespace("db")
    return cat


def _data(ids: list[int]) -> pa.Table:
    return pa.table({"id": ids, "name": [f"n{i}" for i in ids]}, schema=SCHEMA)


def _ids(result: dict[str, Any]) -> list[int]:
    return sorted(row[0] for row in result["rows"])


_JAVA_TABLE = """
catalog = jvm.org.apache.iceberg.hadoop.HadoopCatalog(sc._jsc.hadoopConfiguration(), warehouse)
table = catalog.loadTable(jvm.org.apache.iceberg.catalog.TableIdentifier.parse(identifier))
table.refresh()
refs = {}
for entry in table.refs().entrySet():
    ref = entry.getValue()
    refs[str(entry.getKey())] = [
        str(ref.snapshotId()), "tag" if ref.isTag() else "branch",
        None if ref.minSnapshotsToKeep() is None else int(ref.minSnapshotsToKeep()),
        None if ref.maxRefAgeMs() is None else str(ref.maxRefAgeMs()),
    ]
order = table.sortOrder()
fields = [
    [str(f.transform()), str(table.schema().findColumnName(f.sourceId())), str(f.direction()), str(f.nullOrder())]
    for f in order.fields()
]
stats = [
    [str(s.snapshotId()), str(s.path()), int(s.fileSizeInBytes()), int(s.fileFooterSizeInBytes()),
     [[str(b.type()), [int(x) for x in b.fields()], {str(k): str(v) for k, v in dict(b.properties()).items()}]
      for b in s.blobMetadata()]]
    for s in table.statisticsFiles()
]
partition_stats = [
    [str(s.snapshotId()), str(s.path()), int(s.fileSizeInBytes())] for s in table.partitionStatisticsFiles()
]
result = {
    "refs": refs, "order_id": int(order.orderId()), "order": fields, "stats": stats,
    "partition_stats": partition_stats, "location": str(table.location()),
    "current": str(table.currentSnapshot().snapshotId()),
    "source": str(table.currentSnapshot().summary().get("source-snapshot-id")),
}
"""


def test_java_reads_refs_sort_order_and_statistics(
    java_engine: JavaEngine, java_catalog: str, catalog: icefloe.Catalog, warehouse: Path
) -> None:
    table = catalog.create_table("db.refs", SCHEMA)
    s1 = table.append(_data([1, 2]))
    s2 = table.append(_data([3]))
    assert s1 is not None and s2 is not None
    table.manage_snapshots().create_tag("v1", s1.snapshot_id).create_branch("dev", s1.snapshot_id).commit()
    txn = table.new_transaction()
    staged = txn.append(_data([10, 11]))
    assert staged is not None
    txn.commit_transaction()
    table.manage_snapshots().rollback_to(s2.snapshot_id).commit()  # 10, 11: an orphan snapshot
    table.append(_data([4]))
    table.manage_snapshots().cherrypick(staged.snapshot_id).set_min_snapshots_to_keep(
        "dev", 2
    ).set_max_ref_age_ms("v1", 86_400_000).replace_branch("dev", staged.snapshot_id).commit()
    table.replace_sort_order().desc("bucket(4, id)").asc("name", "nulls-last").commit()
    current = table.current_snapshot()
    assert current is not None
    blob = BlobMetadata(
        "apache-datasketches-theta-v1", current.snapshot_id, current.sequence_number, (1,), {"ndv": "6"}
    )
    stats = StatisticsFile(current.snapshot_id, f"{table.location()}/metadata/stats.puffin", 123, 45, (blob,))
    table.update_statistics().set_statistics(stats).commit()
    partition_stats = PartitionStatisticsFile(
        current.snapshot_id, f"{table.location()}/metadata/p.parquet", 67
    )
    table.update_partition_statistics().set_partition_statistics(partition_stats).commit()

    name = f"{java_catalog}.db.refs"
    assert _ids(java_engine.sql(f"SELECT id FROM {name} VERSION AS OF 'v1'")) == [1, 2]
    assert _ids(java_engine.sql(f"SELECT id FROM {name}.branch_dev")) == [1, 2, 3, 10, 11]
    assert _ids(java_engine.sql(f"SELECT id FROM {name}")) == [1, 2, 3, 4, 10, 11]
    assert _ids(java_engine.sql(f"SELECT id FROM {name}.tag_v1")) == [1, 2]

    seen = java_engine.exec(_JAVA_TABLE, warehouse=str(warehouse), identifier="db.refs")
    assert seen["refs"] == {
        "main": [str(current.snapshot_id), "branch", None, None],
        "v1": [str(s1.snapshot_id), "tag", None, "86400000"],
        "dev": [str(staged.snapshot_id), "branch", 2, None],
    }
    assert seen["current"] == str(current.snapshot_id)
    assert seen["source"] == str(staged.snapshot_id)
    assert seen["order_id"] == table.sort_order().order_id
    assert seen["order"] == [
        ["bucket[4]", "id", "DESC", "NULLS LAST"],
        ["identity", "name", "ASC", "NULLS LAST"],
    ]
    assert seen["stats"] == [
        [
            str(current.snapshot_id),
            stats.statistics_path,
            123,
            45,
            [["apache-datasketches-theta-v1", [1], {"ndv": "6"}]],
        ]
    ]
    assert seen["partition_stats"] == [[str(current.snapshot_id), partition_stats.statistics_path, 67]]


def test_icefloe_reads_refs_java_created(
    java_engine: JavaEngine, java_catalog: str, catalog: icefloe.Catalog
) -> None:
    name = f"{java_catalog}.db.jrefs"
    java_engine.sql(
        f"CREATE TABLE {name} (id bigint) USING iceberg",
        f"INSERT INTO {name} VALUES (1), (2)",
        f"ALTER TABLE {name} CREATE TAG t1",
        f"ALTER TABLE {name} CREATE BRANCH b1",
        f"INSERT INTO {name} VALUES (3)",
    )
    table = catalog.load_table("db.jrefs")
    tag = table.refs()["t1"].snapshot_id
    # icefloe moves Java's branch and renames it; Java reads the result.
    table.manage_snapshots().fast_forward_branch("b1", "main").rename_branch("b1", "b2").remove_tag(
        "t1"
    ).commit()
    assert _ids(java_engine.sql(f"SELECT id FROM {name}.branch_b2")) == [1, 2, 3]
    with pytest.raises(Exception, match="t1"):
        java_engine.sql(f"SELECT id FROM {name} VERSION AS OF 't1'")
    assert tag not in {r.snapshot_id for n, r in catalog.load_table("db.jrefs").refs().items() if n != "main"}
