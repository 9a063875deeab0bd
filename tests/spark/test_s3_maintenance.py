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

import botocore.session
import pyarrow as pa
import pytest

import icefloe
from icefloe import spark as isp
from icefloe.table.table import Table
from support.spark import sorted_tuples

_SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("day", pa.string())])


def _client(s3: dict[str, str]) -> Any:
    return botocore.session.get_session().create_client(
        "s3",
        endpoint_url=s3["s3.endpoint"],
        region_name=s3["s3.region"],
        aws_access_key_id=s3["s3.access-key-id"],
        aws_secret_access_key=s3["s3.secret-access-key"],
    )


def _objects(s3: dict[str, str], prefix: str) -> set[str]:
    """``s3://`` locations of the bucket's objects under ``prefix`` (directory markers left out)."""
    paginator = _client(s3).get_paginator("list_objects_v2")
    found: set[str] = set()
    for page in paginator.paginate(Bucket=s3["test.bucket"], Prefix=prefix):
        found |= {f"s3://{s3['test.bucket']}/{o['Key']}" for o in page.get("Contents", [])}
    return {location for location in found if not location.endswith("/")}


def _referenced(table: Table) -> set[str]:
    """Every file the table's snapshots reach: data and delete files, manifests, manifest lists."""
    return (
        {row["file_path"] for row in table.inspect.all_files().to_pylist()}
        | {row["path"] for row in table.inspect.all_manifests().to_pylist()}
        | {s.manifest_list for s in table.metadata.snapshots if s.manifest_list}
    )


@pytest.fixture
def s3_table(s3_properties: dict[str, str], tmp_path: Path) -> Table:
    """A v2 merge-on-read table in the bucket, partitioned by day: three appends and a
    position delete through the plain-Python API."""
    properties = {k: v for k, v in s3_properties.items() if k != "test.bucket"}
    catalog = icefloe.load_catalog(
        "s3_maintenance",
        type="sql",
        uri=f"sqlite:///{tmp_path / 'catalog.db'}",
        warehouse=f"s3://{s3_properties['test.bucket']}/wh",
        **properties,
    )
    catalog.create_namespace("db")
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
    stored = _objects(s3_properties, "wh/db/t/")
    assert _referenced(table) <= stored
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
    _client(s3_properties).put_object(Bucket=bucket, Key=orphan.split("/", 3)[3], Body=b"not referenced")
    later = dt.datetime.now(dt.UTC) + dt.timedelta(minutes=1)

    for location in (None, f"s3a://{bucket}/wh/db/t"):
        found = isp.actions.remove_orphan_files(
            spark, table, older_than=later, location=location, dry_run=True
        )
        assert [p.rsplit("/", 1)[-1] for p in found.orphan_file_locations] == ["orphan-00000.parquet"]
    assert orphan in _objects(s3_properties, "wh/db/t/")
    assert _referenced(table) <= _objects(s3_properties, "wh/db/t/")
