"""S3 misbehaving: a fault-injecting, counting proxy (``tests/support/fault_proxy.py``) in front of
moto. Throttling, 500s and cut connections are retried inside the FileIO; a write whose every
PUT fails raises a typed error and leaves nothing behind; and the requests a cold plan and a
selective read make are counted (printed with ``-s``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from tests.support.fault_proxy import FaultProxy, random_faults

import icefloe
from icefloe.errors import IcefloeError

pytest.importorskip("botocore")

SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string()), pa.field("x", pa.float64())]
)


def _rows(ids: range) -> pa.Table:
    return pa.table(
        {"id": pa.array(list(ids), pa.int64()), "name": [f"n{i}" for i in ids], "x": [i / 2 for i in ids]},
        schema=SCHEMA,
    )


@pytest.fixture
def proxy(moto_endpoint: str) -> Iterator[FaultProxy]:
    with FaultProxy(moto_endpoint) as running:
        yield running


def _catalog(
    tmp_path: Path, s3_properties: dict[str, str], endpoint: str, retries: str | None = None
) -> icefloe.Catalog:
    properties = {k: v for k, v in s3_properties.items() if k.startswith("s3.")}
    properties["s3.endpoint"] = endpoint
    if retries is not None:
        properties["s3.retry.num-retries"] = retries
    bucket = s3_properties["test.bucket"]
    return icefloe.load_catalog(
        "faulty",
        type="sql",
        uri=f"sqlite:///{tmp_path / 'catalog.db'}",
        warehouse=f"s3://{bucket}/wh",
        **properties,
    )


def _objects(s3_properties: dict[str, str]) -> tuple[list[str], list[str]]:
    """Keys and unfinished multipart uploads in the bucket, asked of moto directly."""
    import botocore.session

    client: Any = botocore.session.get_session().create_client(
        "s3",
        endpoint_url=s3_properties["s3.endpoint"],
        region_name=s3_properties["s3.region"],
        aws_access_key_id=s3_properties["s3.access-key-id"],
        aws_secret_access_key=s3_properties["s3.secret-access-key"],
    )
    bucket = s3_properties["test.bucket"]
    keys = [o["Key"] for o in client.list_objects_v2(Bucket=bucket).get("Contents", [])]
    uploads = [u["Key"] for u in client.list_multipart_uploads(Bucket=bucket).get("Uploads", [])]
    return keys, uploads


def test_table_through_throttling_and_cut_connections(
    tmp_path: Path, s3_properties: dict[str, str], proxy: FaultProxy
) -> None:
    proxy.fault = random_faults(0.1, seed=27)
    catalog = _catalog(tmp_path, s3_properties, proxy.endpoint)
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", SCHEMA)
    table.append(_rows(range(0, 100)))
    table.append(_rows(range(100, 200)))
    result = catalog.load_table("db.t").new_scan().to_arrow().sort_by("id")
    assert result.equals(_rows(range(200)))
    assert proxy.count() > 30  # the faults really hit: about a tenth of these were answered 503/500/cut


def test_write_whose_puts_all_fail_leaves_nothing(
    tmp_path: Path, s3_properties: dict[str, str], proxy: FaultProxy
) -> None:
    catalog = _catalog(tmp_path, s3_properties, proxy.endpoint)
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", SCHEMA)
    before, _ = _objects(s3_properties)
    catalog = _catalog(tmp_path, s3_properties, proxy.endpoint, retries="1")
    table = catalog.load_table("db.t")
    proxy.fault = lambda method, path: "503" if method in ("PUT", "POST") else None
    with pytest.raises(IcefloeError):
        table.append(_rows(range(100)))
    keys, uploads = _objects(s3_properties)
    assert sorted(keys) == sorted(before)
    assert uploads == []
    proxy.fault = None
    table.append(_rows(range(10)))  # and the next commit goes through
    assert catalog.load_table("db.t").new_scan().to_arrow().num_rows == 10


def _kind(method: str, path: str) -> str:
    name = path.split("?")[0]
    kind = "metadata.json" if name.endswith(".metadata.json") else "manifest list" if "/snap-" in name else ""
    kind = kind or (
        "manifest" if name.endswith(".avro") else "data" if name.endswith(".parquet") else "other"
    )
    return f"{method} {kind}"


def test_request_counts(tmp_path: Path, s3_properties: dict[str, str], proxy: FaultProxy) -> None:
    catalog = _catalog(tmp_path, s3_properties, proxy.endpoint)
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", SCHEMA)
    for start in range(0, 400, 100):
        table.append(_rows(range(start, start + 100)))
    # A cold plan: a new catalog, so no client or cache survives.
    cold = _catalog(tmp_path, s3_properties, proxy.endpoint)
    proxy.reset()
    tasks = cold.load_table("db.t").new_scan().plan_files()
    plan = Counter(_kind(m, p) for m, p in proxy.requests)
    proxy.reset()
    cold.load_table("db.t").new_scan().filter("id >= 350").select("x").to_arrow()
    read = Counter(_kind(m, p) for m, p in proxy.requests)
    print(f"\ncold plan of 4 manifests / {len(tasks)} data files: {dict(plan)}")
    print(f"load + plan + one-column read of 1 matching file: {dict(read)}")
    assert len(tasks) == 4
    # The minimum: one GET per metadata file, manifest list and manifest, no HEADs.
    assert plan == {"GET metadata.json": 1, "GET manifest list": 1, "GET manifest": 4}
    assert read["GET data"] <= 3


def test_failed_multipart_upload_is_aborted(s3_properties: dict[str, str], proxy: FaultProxy) -> None:
    from icefloe.errors import FileIOError
    from icefloe.io.arrowfs import ArrowFileIO

    properties = {k: v for k, v in s3_properties.items() if k.startswith("s3.")}
    io = ArrowFileIO({**properties, "s3.endpoint": proxy.endpoint, "s3.retry.num-retries": "1"})
    # Parts (PUT ...&partNumber=) fail; creating and aborting the upload get through.
    proxy.fault = lambda method, path: "500" if method == "PUT" and "partNumber=" in path else None
    location = f"s3://{s3_properties['test.bucket']}/big.bin"
    with pytest.raises(FileIOError):
        io.write_bytes(location, b"x" * (12 * 1024 * 1024))
    assert any("uploads" in path for _, path in proxy.requests)  # it was a multipart upload
    assert _objects(s3_properties) == ([], [])
