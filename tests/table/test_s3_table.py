"""A table on S3: a SQL catalog (SQLite) whose warehouse is ``s3://bucket/wh``.

The S3 API is moto's server on 127.0.0.1; the catalog gets its endpoint and credentials as
Iceberg catalog properties (``s3.endpoint``, ``s3.access-key-id``, ...), as a user would pass
them for MinIO or AWS. Create, partitioned appends, a filtered scan, time travel, and a listing
of the bucket through botocore (not icefloe) to check where the files went.
"""

from __future__ import annotations

import datetime as dt
import shutil
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icefloe
from icefloe.manifests import read_manifest
from support.servers import free_port, serve

ACCESS_KEY = "s3-table-key"
SECRET_KEY = "s3-table-secret"
REGION = "us-east-1"

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("category", pa.string()),
        pa.field("ts", pa.timestamp("us")),
        pa.field("amount", pa.float64()),
    ]
)


def _rows(ids: range, day: dt.date) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(list(ids), pa.int64()),
            "category": ["a" if i % 3 else "b" for i in ids],
            "ts": [dt.datetime.combine(day, dt.time(i % 24, 30)) for i in ids],
            "amount": [i * 0.5 for i in ids],
        },
        schema=SCHEMA,
    )


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    """A moto S3 server on 127.0.0.1 for this module."""
    binary = Path(sys.executable).parent / "moto_server"
    found = str(binary) if binary.is_file() else shutil.which("moto_server")
    if found is None:
        pytest.skip("moto_server not installed (pip install 'moto[server]')")
    port = free_port()
    with serve([found, "-H", "127.0.0.1", "-p", str(port)], port, "moto_server"):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture
def s3(s3_endpoint: str) -> tuple[Any, str]:
    """A botocore client for the server, and a new empty bucket."""
    import botocore.session

    client = botocore.session.get_session().create_client(
        "s3",
        endpoint_url=s3_endpoint,
        region_name=REGION,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
    )
    bucket = f"icefloe-table-{uuid.uuid4().hex[:10]}"
    client.create_bucket(Bucket=bucket)
    return client, bucket


def _catalog(tmp_path: Path, endpoint: str, bucket: str) -> icefloe.Catalog:
    return icefloe.load_catalog(
        "s3lake",
        type="sql",
        uri=f"sqlite:///{tmp_path / 'catalog.db'}",
        warehouse=f"s3://{bucket}/wh",
        **{
            "s3.endpoint": endpoint,
            "s3.access-key-id": ACCESS_KEY,
            "s3.secret-access-key": SECRET_KEY,
            "s3.region": REGION,
            "s3.path-style-access": "true",
        },
    )


def _keys(client: Any, bucket: str) -> set[str]:
    keys: set[str] = set()
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        keys.update(obj["Key"] for obj in page.get("Contents", []))
    return keys


def test_partitioned_table_on_s3(tmp_path: Path, s3_endpoint: str, s3: tuple[Any, str]) -> None:
    client, bucket = s3
    catalog = _catalog(tmp_path, s3_endpoint, bucket)
    try:
        catalog.create_namespace("db")
        table = catalog.create_table("db.t", SCHEMA, partition_by=["category", "day(ts)"])
        root = f"s3://{bucket}/wh/db/t"
        assert table.location() == root
        assert table.metadata_location is not None
        assert table.metadata_location.startswith(f"{root}/metadata/")

        day1, day2 = dt.date(2024, 3, 1), dt.date(2024, 3, 2)
        first = table.append(_rows(range(0, 30), day1))
        second = table.append(_rows(range(30, 60), day2))
        assert first is not None and second is not None
        assert second.parent_snapshot_id == first.snapshot_id
        assert first.summary["changed-partition-count"] == "2"

        # A filtered scan prunes to the matching partitions and returns exactly the matches.
        wanted = "category = 'b' AND ts >= '2024-03-02T00:00:00' AND amount > 20"
        tasks = table.new_scan().filter(wanted).plan_files()
        assert {(t.file.partition[0], t.file.partition[1]) for t in tasks} == {
            ("b", (day2 - dt.date(1970, 1, 1)).days)
        }
        result = table.new_scan().filter(wanted).select("id", "amount").to_arrow()
        assert result.column_names == ["id", "amount"]
        assert sorted(result.column("id").to_pylist()) == [i for i in range(30, 60) if i % 3 == 0 and i > 40]

        # Time travel by snapshot id and by time, through a catalog opened afresh.
        second_catalog = _catalog(tmp_path, s3_endpoint, bucket)
        try:
            reopened = second_catalog.load_table("db.t")
        finally:
            second_catalog.backend.close()  # the table keeps its own FileIO
        assert reopened.metadata_location == table.metadata_location
        old = reopened.new_scan().use_snapshot(first.snapshot_id).to_arrow()
        assert sorted(old.column("id").to_pylist()) == list(range(30))
        as_of = reopened.new_scan().as_of_time(first.timestamp_ms).to_arrow()
        assert sorted(as_of.column("id").to_pylist()) == list(range(30))
        now = reopened.new_scan().to_arrow()
        assert sorted(now.column("id").to_pylist()) == list(range(60))
        assert now.sort_by("id").equals(
            pa.concat_tables([_rows(range(0, 30), day1), _rows(range(30, 60), day2)]).sort_by("id")
        )

        # The files are on S3, listed by botocore: exactly the files the metadata references.
        io = table.io()
        snapshots = table.snapshots()
        manifests = {m.manifest_path: m for s in snapshots for m in s.all_manifests(io)}
        data_files = {e.data_file.file_path for m in manifests.values() for e in read_manifest(io, m)}
        referenced = (
            {s.manifest_list for s in snapshots}
            | set(manifests)
            | data_files
            | {e.metadata_file for e in table.metadata.metadata_log}
            | {table.metadata_location}
        )
        assert all(location.startswith(f"{root}/") for location in referenced)
        listed = {f"s3://{bucket}/{key}" for key in _keys(client, bucket)}
        assert listed == referenced
        data_keys = sorted(key for key in listed if "/data/" in key)
        assert len(data_keys) == 4  # two categories on each of two days
        assert all(
            key.startswith(f"{root}/data/category=")
            and "/ts_day=2024-03-0" in key
            and key.endswith(".parquet")
            for key in data_keys
        )
        # The FileIO lists the same objects.
        assert {info.location for info in io.list_prefix(root)} == listed
        # Nothing landed on the local disk but the catalog database.
        assert {p.name for p in tmp_path.iterdir()} <= {"catalog.db", "catalog.db-wal", "catalog.db-shm"}
    finally:
        catalog.backend.close()
