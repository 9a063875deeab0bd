"""The Spark maintenance actions on a table in S3 (moto's server on 127.0.0.1), on a PySpark
without Hadoop's s3a connector: every action reads manifests and deletes files with icefloe's
FileIO in Spark tasks, so none needs Hadoop to open the bucket.

Each test checks the table's rows with icefloe's plain-Python reader and the bucket's objects
with botocore (what an action deleted is gone, what the table references is there).
"""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from icefloe import spark as isp
from icefloe.table.table import Table
from support.s3_tables import referenced_locations, s3_client, s3_sql_catalog, stored_locations
from support.spark import sorted_tuples

_SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("day", pa.string())])


@pytest.fixture
def s3_table(s3_properties: dict[str, str], tmp_path: Path) -> Table:
    """A v2 merge-on-read table in the bucket, partitioned by day: three appends and a
    position delete through the plain-Python API."""
    catalog = s3_sql_catalog("s3_maintenance", s3_properties, tmp_path)
    table = catalog.create_table(
        "db.t",
        _SCHEMA,
        partition_by=["day"],
        properties={"format-version": "2", "write.delete.mode": "merge-on-read"},
    )
    for day in ("a", "b", "c"):
        table.append(pa.table({"id": list(range(20)), "day": [day] * 20}, schema=_SCHEMA))
    table.delete("id < 5")
    return table


def _rows(table: Table) -> list[tuple[Any, ...]]:
    table.refresh()
    return sorted_tuples(table.new_scan().to_arrow())


@pytest.mark.every_session
def test_maintenance_actions_on_s3(spark: Any, s3_table: Table, s3_properties: dict[str, str]) -> None:
    table = s3_table
    before = _rows(table)
    assert len(before) == 45
    assert any(t.deletes for t in table.new_scan().plan_files())

    rewritten = isp.actions.rewrite_position_deletes(spark, table, options={"rewrite-all": "true"})
    assert rewritten.rewritten_delete_files_count >= 1
    assert _rows(table) == before

    isp.actions.rewrite_manifests(spark, table)
    table.refresh()
    assert table.current_snapshot().operation == "replace"  # type: ignore[union-attr]
    assert _rows(table) == before

    # Expire every snapshot but the current one: the files only they reached leave the bucket,
    # everything the table still references stays.
    expired = isp.actions.expire_snapshots(
        spark, table, older_than=int(time.time() * 1000) + 1, retain_last=1
    )
    assert expired.deleted_manifest_lists_count >= 1
    table.refresh()
    assert len(table.metadata.snapshots) == 1
    stored = stored_locations(s3_properties, "wh/db/t/")
    assert referenced_locations(table) <= stored
    assert _rows(table) == before


def test_remove_orphan_files_on_s3_takes_s3a_as_s3(
    spark: Any, s3_table: Table, s3_properties: dict[str, str]
) -> None:
    """An object no snapshot reaches is an orphan; the table's files (``s3://`` in its metadata)
    are not, also when the location is listed as ``s3a://`` (Java's default scheme
    equivalences: s3a, s3n = s3). A dry run: a real run refuses a cutoff within the last
    minute, and the deletion in tasks is ``expire_snapshots``' (tested above)."""
    table = s3_table
    bucket = s3_properties["test.bucket"]
    orphan = f"s3://{bucket}/wh/db/t/data/day=a/orphan-00000.parquet"
    s3_client(s3_properties).put_object(Bucket=bucket, Key=orphan.split("/", 3)[3], Body=b"not referenced")
    later = dt.datetime.now(dt.UTC) + dt.timedelta(minutes=1)

    for location in (None, f"s3a://{bucket}/wh/db/t"):
        found = isp.actions.remove_orphan_files(
            spark, table, older_than=later, location=location, dry_run=True
        )
        assert [p.rsplit("/", 1)[-1] for p in found.orphan_file_locations] == ["orphan-00000.parquet"]
    assert orphan in stored_locations(s3_properties, "wh/db/t/")
    assert referenced_locations(table) <= stored_locations(s3_properties, "wh/db/t/")
