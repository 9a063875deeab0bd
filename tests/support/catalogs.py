"""Catalogs and tables for tests (test modules cannot import a conftest).

Catalogs are real: SQLite ``SqlCatalogBackend``, ``InMemoryCatalogBackend`` and ``HadoopCatalogBackend`` in a
temporary warehouse, made through ``icefloe.load_catalog`` as a user would.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

import icefloe
from icefloe import Catalog, DataFile, Table
from icefloe.arrow.schema import schema_to_arrow
from icefloe.backends import InMemoryCatalogBackend
from icefloe.write import footer_metrics

CATALOG_KINDS = ("sql", "memory", "hadoop")
FORMAT_VERSIONS = (1, 2, 3)

# A schema with a column of each kind the filters and transforms care about.
ARROW_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("name", pa.string()),
        pa.field("ts", pa.timestamp("us")),
        pa.field("day", pa.date32()),
        pa.field("amount", pa.decimal128(10, 2)),
        pa.field("score", pa.float64()),
    ]
)


def make_catalog(kind: str, warehouse: Path, name: str = "test", **properties: str) -> Catalog:
    """A catalog of ``kind`` rooted at ``warehouse``, with namespace ``db``."""
    catalog = icefloe.load_catalog(name, type=kind, warehouse=str(warehouse), **properties)
    catalog.create_namespace("db")
    return catalog


def memory_backend(catalog: Catalog) -> InMemoryCatalogBackend:
    backend = catalog.backend
    assert isinstance(backend, InMemoryCatalogBackend)
    return backend


def rows(n: int, start: int = 0) -> pa.Table:
    """``n`` rows of ARROW_SCHEMA with ids ``start .. start+n-1``.

    Names cycle through a, b, c (every 7th is null), days through 2024-01-01 .. 2024-01-03,
    timestamps one hour apart from 2024-01-01T00:00, amounts id * 1.25.
    """
    ids = list(range(start, start + n))
    base = dt.datetime(2024, 1, 1)
    return pa.table(
        {
            "id": ids,
            "name": [None if i % 7 == 6 else "abc"[i % 3] for i in ids],
            "ts": [base + dt.timedelta(hours=i) for i in ids],
            "day": [dt.date(2024, 1, 1 + i % 3) for i in ids],
            "amount": [Decimal(i) * Decimal("1.25") for i in ids],
            "score": [float(i) / 2 for i in ids],
        },
        schema=ARROW_SCHEMA,
    )


def sorted_rows(table: pa.Table, key: str = "id") -> list[dict[str, Any]]:
    """The rows of an Arrow table as dicts, sorted by ``key`` (scan order is not defined)."""
    return sorted(table.to_pylist(), key=lambda r: (r[key] is None, r[key]))


def files_under(folder: Path | str) -> set[str]:
    """Every file below ``folder`` (relative paths), Hadoop ``.crc`` side files excluded."""
    root = Path(folder)
    if not root.exists():
        return set()
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and not p.name.endswith(".crc")}


def local(path: str) -> Path:
    """A table file location as a local path."""
    return Path(path.removeprefix("file://").removeprefix("file:"))


def referenced_metadata_files(table: Table) -> set[str]:
    """Manifest lists and manifests reachable from the table's snapshots (absolute paths)."""
    io = table.io()
    found: set[str] = set()
    for snapshot in table.metadata.snapshots:
        assert snapshot.manifest_list is not None
        found.add(str(local(snapshot.manifest_list)))
        found.update(str(local(m.manifest_path)) for m in snapshot.all_manifests(io))
    return found


def avro_files(table: Table) -> set[str]:
    """The Avro files (manifests and manifest lists) in the table's metadata folder."""
    folder = local(table.location()) / "metadata"
    return {str(p) for p in folder.glob("*.avro")}


def data_files(table: Table) -> set[str]:
    folder = local(table.location()) / "data"
    return {str(p) for p in folder.rglob("*.parquet")}


def write_parquet_file(table: Table, data: pa.Table, relative: str) -> DataFile:
    """Write ``data`` with pyarrow (field ids included) under the table's data folder and
    describe it as a DataFile of the table's current spec, metrics from the footer."""
    schema = table.schema()
    arrow_schema = schema_to_arrow(schema)
    path = local(table.location()) / "data" / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(data.select(arrow_schema.names).cast(arrow_schema), path)
    metadata = pq.read_metadata(path)
    partition_path = str(Path(relative).parent)
    builder = (
        DataFile.builder(table.spec(), schema)
        .with_path(str(path))
        .with_format("parquet")
        .with_file_size_in_bytes(path.stat().st_size)
        .with_metrics(footer_metrics(metadata, schema))
    )
    if table.spec().fields:
        builder = builder.with_partition_path(partition_path)
    file: DataFile = builder.build()
    return file
