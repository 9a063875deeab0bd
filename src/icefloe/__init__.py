"""icefloe: Apache Iceberg tables in Python, with PySpark as the pipeline engine.

Quick start::

    import icefloe
    catalog = icefloe.load_catalog()            # SQLite catalog in ./warehouse
    table = catalog.create_table("db.sales", arrow_schema, partition_by=["sale_date"])
    table.append(arrow_table)
    table.new_scan().filter("amount > 10").to_arrow()
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from icefloe.spec.snapshots import load_manifest_reader_with

if TYPE_CHECKING:  # what mypy and IDEs see; at run time the names load on first use
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

#: The module each public name comes from. ``import icefloe`` imports none of them: a name is
#: imported on first use (PEP 562), so the ``icefloe`` command and code that needs one part
#: (a catalog, the spec model) do not pay for pyarrow, SQLAlchemy and the rest at start.
_HOMES = {
    "Catalog": "icefloe.catalog",
    "load_catalog": "icefloe.catalog",
    "CommitFailedException": "icefloe.errors",
    "CommitStateUnknownException": "icefloe.errors",
    "IcefloeError": "icefloe.errors",
    "NoSuchTableError": "icefloe.errors",
    "ValidationError": "icefloe.errors",
    "ValidationException": "icefloe.errors",
    "DataFile": "icefloe.spec.manifest",
    "DeleteFile": "icefloe.spec.manifest",
    "FileFormat": "icefloe.spec.manifest",
    "ManifestFile": "icefloe.spec.manifest",
    "PartitionField": "icefloe.spec.partitioning",
    "PartitionSpec": "icefloe.spec.partitioning",
    "Schema": "icefloe.spec.schema",
    "HistoryEntry": "icefloe.spec.snapshots",
    "Snapshot": "icefloe.spec.snapshots",
    "SnapshotRef": "icefloe.spec.snapshots",
    "SortOrder": "icefloe.spec.sorting",
    "NestedField": "icefloe.spec.types",
    "Table": "icefloe.table",
    "TableScan": "icefloe.table",
    "Transaction": "icefloe.table",
}
_SUBMODULES = {"errors", "expressions", "types"}

# A Snapshot reads its manifests through icefloe.manifests, imported when a snapshot first does.
load_manifest_reader_with(lambda: importlib.import_module("icefloe.manifests"))


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        value: Any = importlib.import_module(f"{__name__}.{name}")
    elif name in _HOMES:
        value = getattr(importlib.import_module(_HOMES[name]), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # found once; later lookups do not come here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
