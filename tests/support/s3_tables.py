"""Tables on the tests' moto S3 server (the ``s3_properties`` fixture of tests/conftest.py):
a SQL catalog whose warehouse is in the test's bucket, and what the bucket holds, seen with
botocore directly (not through icefloe's FileIO, which is what is under test)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import icefloe
from icefloe.table.table import Table


def fileio_properties(s3_properties: dict[str, str]) -> dict[str, str]:
    """The Iceberg S3 properties of the fixture (without its ``test.bucket``)."""
    return {k: v for k, v in s3_properties.items() if k != "test.bucket"}


def s3_sql_catalog(name: str, s3_properties: dict[str, str], tmp_path: Path) -> icefloe.Catalog:
    """A SQLite catalog in ``tmp_path`` with its warehouse at ``s3://<bucket>/wh`` and a
    namespace ``db``."""
    catalog = icefloe.load_catalog(
        name,
        type="sql",
        uri=f"sqlite:///{tmp_path / 'catalog.db'}",
        warehouse=f"s3://{s3_properties['test.bucket']}/wh",
        **fileio_properties(s3_properties),
    )
    catalog.create_namespace("db")
    return catalog


def s3_client(s3_properties: dict[str, str]) -> Any:
    """A botocore S3 client of the moto server."""
    import botocore.session

    return botocore.session.get_session().create_client(
        "s3",
        endpoint_url=s3_properties["s3.endpoint"],
        region_name=s3_properties["s3.region"],
        aws_access_key_id=s3_properties["s3.access-key-id"],
        aws_secret_access_key=s3_properties["s3.secret-access-key"],
    )


def stored_locations(s3_properties: dict[str, str], prefix: str) -> set[str]:
    """``s3://`` locations of the bucket's objects under ``prefix``. Keys ending in ``/`` are the
    empty directory markers Arrow's S3 filesystem leaves when it deletes a folder's last
    object: not files, left out."""
    bucket = s3_properties["test.bucket"]
    found: set[str] = set()
    for page in (
        s3_client(s3_properties).get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    ):
        found |= {f"s3://{bucket}/{o['Key']}" for o in page.get("Contents", []) if not o["Key"].endswith("/")}
    return found


def referenced_locations(table: Table) -> set[str]:
    """Every file the table's snapshots reach: data and delete files, manifests, manifest lists."""
    return (
        {row["file_path"] for row in table.inspect.all_files().to_pylist()}
        | {row["path"] for row in table.inspect.all_manifests().to_pylist()}
        | {s.manifest_list for s in table.metadata.snapshots if s.manifest_list}
    )
