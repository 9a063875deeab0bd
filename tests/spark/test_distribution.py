"""Write distribution (``write.distribution-mode``, Java's rules): Spark writes cluster rows by
partition (or order them, for sorted tables) before writing, so a batch writes about one file
per partition, whichever writer (Spark's or icefloe's) writes the files."""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import pyarrow as pa
import pytest

from icefloe import Catalog, Table
from icefloe import spark as isp
from icefloe.errors import ValidationError
from icefloe.spark.write.distribution import DISTRIBUTION_MODE_CONF

SCHEMA = pa.schema(
    [pa.field("id", pa.int64()), pa.field("country", pa.string()), pa.field("ts", pa.timestamp("us"))]
)


def _batch(spark: Any, rows: int = 3000, tasks: int = 12) -> Any:
    """Rows of 3 countries x 4 days, spread round-robin over ``tasks`` tasks."""
    return (
        spark.range(rows)
        .selectExpr(  # type: ignore[attr-defined]
            "id",
            "element_at(array('NL', 'US', 'VN'), cast(id % 3 + 1 AS int)) AS country",
            "timestamp_ntz'2024-01-01 00:00:00' + make_interval(0, 0, 0, cast(id % 4 AS int)) AS ts",
        )
        .repartition(tasks)
    )


def _files_per_partition(table: Table) -> Counter[Any]:
    return Counter(task.file.partition for task in table.new_scan().plan_files())


@pytest.mark.parametrize("writer", ["spark", "icefloe"])
def test_hash_writes_one_file_per_partition(spark: Any, catalog: Catalog, writer: str) -> None:
    table = catalog.create_table(
        "db.hashed",
        SCHEMA,
        partition_by=["country", "day(ts)"],
        properties={"icefloe.spark.writer": writer},
    )
    isp.write(_batch(spark), table)
    counts = _files_per_partition(table)
    assert len(counts) == 12 and set(counts.values()) == {1}
    assert sum(t.file.record_count for t in table.new_scan().plan_files()) == 3000


@pytest.mark.every_session
def test_bucket_partitions_cluster_through_icefloes_transform(spark: Any, catalog: Catalog) -> None:
    table = catalog.create_table("db.buckets", SCHEMA, partition_by=["bucket(4, id)"])
    isp.write(_batch(spark), table)
    counts = _files_per_partition(table)
    assert len(counts) == 4 and set(counts.values()) == {1}


def test_none_keeps_the_tasks_and_the_session_overrides(spark: Any, catalog: Catalog) -> None:
    table = catalog.create_table(
        "db.undistributed", SCHEMA, partition_by=["country"], properties={"write.distribution-mode": "none"}
    )
    isp.write(_batch(spark, tasks=4), table)
    assert set(_files_per_partition(table).values()) == {4}  # each task wrote each partition
    spark.conf.set(DISTRIBUTION_MODE_CONF, "hash")
    try:
        isp.write(_batch(spark, tasks=4), table)
    finally:
        spark.conf.unset(DISTRIBUTION_MODE_CONF)
    assert set(_files_per_partition(table).values()) == {5}
    table.update_properties().set("write.distribution-mode", "scatter").commit()
    with pytest.raises(ValidationError, match=r"write\.distribution-mode"):
        isp.write(_batch(spark), table)


@pytest.mark.every_session
def test_sorted_tables_range_distribute(spark: Any, catalog: Catalog) -> None:
    table = catalog.create_table(
        "db.sorted",
        SCHEMA,
        sort_by=["id"],
        properties={"write.target-file-size-bytes": "4000"},  # several files
    )
    isp.write(_batch(spark, rows=20000), table)
    ranges = sorted(
        (int.from_bytes(t.file.lower_bounds[1], "little"), int.from_bytes(t.file.upper_bounds[1], "little"))
        for t in table.new_scan().plan_files()
    )
    assert len(ranges) > 1
    assert all(high < low for (_, high), (low, _) in itertools.pairwise(ranges))  # disjoint id ranges


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_row_level_changes_write_one_file_per_partition(spark: Any, catalog: Catalog, mode: str) -> None:
    table = catalog.create_table(
        "db.changed",
        SCHEMA,
        partition_by=["country"],
        properties={"write.update.mode": mode, "write.merge.mode": mode, "write.distribution-mode": "none"},
    )
    isp.write(_batch(spark, tasks=4), table)  # 4 files per partition
    isp.update(spark, table, set={"id": "id + 100000"}, where="id % 2 = 0")
    added = table.current_snapshot().summary["added-data-files"]
    assert int(added) == 3  # one per partition, whichever mode
    source = _batch(spark, rows=600, tasks=6).selectExpr("id + 1000000 AS id", "country", "ts")
    isp.merge_into(source, table, "t.id = s.id").when_not_matched().insert_all().merge()
    assert int(table.current_snapshot().summary["added-data-files"]) == 3
