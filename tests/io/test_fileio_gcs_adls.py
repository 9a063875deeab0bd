"""Tables on GCS and ADLS: a SQL catalog whose warehouse is ``gs://`` / ``abfs://`` / ``wasbs://``.

The stores are emulators on 127.0.0.1 (gcp-storage-emulator, Azurite), started once per session
by ``tests/conftest.py``; the catalog gets them through Iceberg's properties, under Java's names
and PyIceberg's, as a user would for the real services.
"""

from __future__ import annotations

import collections
import re
import threading
import urllib.parse
import uuid
from pathlib import Path

import pyarrow as pa
import pytest
from tests.conftest import AZURITE_ACCOUNT, AZURITE_KEY
from tests.support.fault_proxy import FaultProxy

import icefloe
from icefloe.errors import FileAlreadyExistsError, InvalidDataFileError
from icefloe.io.fileio import FileIO
from icefloe.io.fsspecfs import FsspecFileIO, _adls_options, adls_account
from icefloe.io.resolving import load_file_io

pytest.importorskip("gcsfs")
pytest.importorskip("adlfs")

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])


def _rows(ids: range) -> pa.Table:
    return pa.table({"id": pa.array(list(ids), pa.int64()), "name": [f"n{i}" for i in ids]}, schema=SCHEMA)


@pytest.fixture
def gcs(gcs_endpoint: str) -> tuple[dict[str, str], str]:
    """GCS properties (Java's names) and a new bucket's warehouse."""
    properties = {"gcs.service.host": gcs_endpoint, "gcs.no-auth": "true", "gcs.project-id": "icefloe"}
    bucket = f"icefloe-{uuid.uuid4().hex[:10]}"
    FsspecFileIO(properties).filesystem("gs").mkdir(bucket)
    return properties, f"gs://{bucket}/wh"


def _container(azurite_endpoint: str) -> str:
    import azure.storage.blob

    name = f"icefloe-{uuid.uuid4().hex[:10]}"  # Azurite wants 3 to 63 characters
    service = azure.storage.blob.BlobServiceClient.from_connection_string(
        _connection_string(azurite_endpoint)
    )
    service.create_container(name)
    return name


def _connection_string(endpoint: str) -> str:
    return (
        f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};AccountKey={AZURITE_KEY};"
        f"BlobEndpoint={endpoint}/{AZURITE_ACCOUNT};"
    )


ADLS_STYLES = {
    # Java: the account's endpoint under adls.connection-string.<account>, a shared key.
    "java": lambda endpoint: {
        f"adls.connection-string.{AZURITE_ACCOUNT}": f"{endpoint}/{AZURITE_ACCOUNT}",
        "adls.auth.shared-key.account.name": AZURITE_ACCOUNT,
        "adls.auth.shared-key.account.key": AZURITE_KEY,
    },
    # PyIceberg: a whole connection string.
    "pyiceberg": lambda endpoint: {"adls.connection-string": _connection_string(endpoint)},
}


def _roundtrip(tmp_path: Path, warehouse: str, properties: dict[str, str]) -> None:
    catalog = icefloe.load_catalog(
        "lake", type="sql", uri=f"sqlite:///{tmp_path / 'catalog.db'}", warehouse=warehouse, **properties
    )
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", SCHEMA)
    assert table.location() == f"{warehouse}/db/t"
    table.append(_rows(range(0, 50)))
    table.append(_rows(range(50, 100)))
    table.delete("id < 10")
    reopened = catalog.load_table("db.t")
    result = reopened.new_scan().filter("id >= 40").select("id").to_arrow()
    assert sorted(result.column("id").to_pylist()) == list(range(40, 100))
    assert reopened.new_scan().to_arrow().num_rows == 90
    # Every file the table wrote is on the store, under the table's location.
    listed = {info.location for info in table.io().list_prefix(table.location())}
    assert table.metadata_location in listed
    assert sum("/data/" in location for location in listed) >= 2
    # A data file gone from the store: opened with its manifest's length and no status request,
    # so the error comes with the first read; it is typed and names the file.
    data_file = next(task.file.file_path for task in reopened.new_scan().plan_files())
    table.io().delete(data_file)
    with pytest.raises(InvalidDataFileError, match=f"does not exist: {re.escape(data_file)}"):
        catalog.load_table("db.t").new_scan().to_arrow()


def _exclusive(io: FileIO, location: str) -> None:
    outcomes: list[str] = []

    def attempt(payload: bytes) -> None:
        try:
            io.write_exclusive(location, payload)
            outcomes.append("won")
        except FileAlreadyExistsError:
            outcomes.append("lost")

    threads = [threading.Thread(target=attempt, args=(f"writer {i}".encode(),)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["lost", "lost", "lost", "won"]
    with pytest.raises(FileAlreadyExistsError):
        io.write_exclusive(location, b"again")


def test_table_on_gcs(tmp_path: Path, gcs: tuple[dict[str, str], str]) -> None:
    properties, warehouse = gcs
    _roundtrip(tmp_path, warehouse, properties)
    # gcsfs creates exclusively with ifGenerationMatch=0, which real GCS enforces; the emulator
    # ignores preconditions, so only the write itself can be checked here.
    io = load_file_io(properties)
    io.write_exclusive(f"{warehouse}/exclusive", b"one")
    assert io.read_bytes(f"{warehouse}/exclusive") == b"one"


@pytest.mark.parametrize("style", sorted(ADLS_STYLES))
@pytest.mark.parametrize("scheme", ["abfss", "wasbs"])
def test_table_on_adls(tmp_path: Path, azurite_endpoint: str, style: str, scheme: str) -> None:
    container = _container(azurite_endpoint)
    host = "dfs" if scheme.startswith("abfs") else "blob"
    warehouse = f"{scheme}://{container}@{AZURITE_ACCOUNT}.{host}.core.windows.net/wh"
    properties = ADLS_STYLES[style](azurite_endpoint)
    _roundtrip(tmp_path, warehouse, properties)
    _exclusive(load_file_io(properties), f"{warehouse}/exclusive")


def test_adls_properties_per_account() -> None:
    location = "abfss://box@acct.dfs.core.windows.net/wh/t"
    assert adls_account(location) == "acct"
    properties = {
        "adls.sas-token.acct": "sv=1&sig=x",
        "adls.sas-token.other": "sv=2&sig=y",
        "adls.account-key": "k",
    }
    assert _adls_options(properties, "acct") == {
        "account_name": "acct",
        "account_key": "k",
        "sas_token": "sv=1&sig=x",
    }
    assert _adls_options(properties, "other")["sas_token"] == "sv=2&sig=y"


def _request_kind(method: str, path: str) -> str:
    """``GET manifest`` and the like, from a GCS JSON-API or Azure Blob request path."""
    name = urllib.parse.unquote(path.split("?")[0])
    if name.endswith(".metadata.json"):
        kind = "metadata.json"
    elif "/snap-" in name:
        kind = "manifest list"
    elif name.endswith(".avro"):
        kind = "manifest"
    elif name.endswith(".parquet"):
        kind = "data"
    else:
        kind = "other"
    return f"{method} {kind}"


def _cold_counts(tmp_path: Path, warehouse: str, properties: dict[str, str], proxy: FaultProxy) -> None:
    """Requests of a cold plan and of a selective one-column read, printed (``-s``) and held
    near the minimum."""

    def catalog() -> icefloe.Catalog:
        return icefloe.load_catalog(
            "counted",
            type="sql",
            uri=f"sqlite:///{tmp_path / 'catalog.db'}",
            warehouse=warehouse,
            **properties,
        )

    writer = catalog()
    writer.create_namespace("db")
    table = writer.create_table("db.t", SCHEMA)
    for start in range(0, 400, 100):
        table.append(_rows(range(start, start + 100)))
    proxy.reset()
    tasks = catalog().load_table("db.t").new_scan().plan_files()
    plan = collections.Counter(_request_kind(m, p) for m, p in proxy.requests)
    proxy.reset()
    catalog().load_table("db.t").new_scan().filter("id >= 350").select("name").to_arrow()
    read = collections.Counter(_request_kind(m, p) for m, p in proxy.requests)
    print(f"\n{warehouse.split(':')[0]}: cold plan of 4 manifests / {len(tasks)} files: {dict(plan)}")
    print(f"{warehouse.split(':')[0]}: load + plan + one-column read of 1 matching file: {dict(read)}")
    assert len(tasks) == 4
    # The minimum: one whole-object GET per metadata file, manifest list and manifest.
    assert plan == {"GET metadata.json": 1, "GET manifest list": 1, "GET manifest": 4}
    # The read: the metadata file (manifests are cached), then the one data file, opened with
    # the length its manifest gives and so without a status request; a file this small is
    # fetched whole by the footer's ranged GET, and its columns come from that.
    assert read == {"GET metadata.json": 1, "GET data": 1}, read


def test_request_counts_on_gcs(tmp_path: Path, gcs: tuple[dict[str, str], str], gcs_endpoint: str) -> None:
    properties, warehouse = gcs
    with FaultProxy(gcs_endpoint) as proxy:
        _cold_counts(tmp_path, warehouse, {**properties, "gcs.service.host": proxy.endpoint}, proxy)


def test_request_counts_on_adls(tmp_path: Path, azurite_endpoint: str) -> None:
    container = _container(azurite_endpoint)
    warehouse = f"abfss://{container}@{AZURITE_ACCOUNT}.dfs.core.windows.net/wh"
    with FaultProxy(azurite_endpoint) as proxy:
        _cold_counts(tmp_path, warehouse, ADLS_STYLES["java"](proxy.endpoint), proxy)
