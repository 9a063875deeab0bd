"""icefloe: Apache Iceberg tables in Python, with PySpark as the pipeline engine.

Quick start::

    import icefloe
    catalog = icefloe.load_catalog()            # SQLite catalog in ./warehouse
    table = catalog.create_table("db.sales", arrow_schema, partition_by=["sale_date"])
    table.append(arrow_table)
    table.new_scan().filter("amount > 10").to_arrow()
"""

from icefloe import errors, expressions, types
from icefloe.catalog import Catalog, load_catalog
from icefloe.errors import (
    CommitFailedException,
    CommitStateUnknownException,
    IcefloeError,
    NoSuchTableError,
    ValidationError,
    ValidationException,
)
from icefloe.spec.manifest import DataFile, DeleteFile, FileFormat, ManifestFile
from icefloe.spec.partitioning import PartitionField, PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.spec.snapshots import HistoryEntry, Snapshot, SnapshotRef
from icefloe.spec.sorting import SortOrder
from icefloe.spec.types import NestedField
from icefloe.table import Table, TableScan, Transaction

__version__ = "0.1.0"

__all__ = [
    "Catalog",
    "CommitFailedException",
    "CommitStateUnknownException",
    "DataFile",
    "DeleteFile",
    "FileFormat",
    "HistoryEntry",
    "IcefloeError",
    "ManifestFile",
    "NestedField",
    "NoSuchTableError",
    "PartitionField",
    "PartitionSpec",
    "Schema",
    "Snapshot",
    "SnapshotRef",
    "SortOrder",
    "Table",
    "TableScan",
    "Transaction",
    "ValidationError",
    "ValidationException",
    "errors",
    "expressions",
    "load_catalog",
    "types",
]
