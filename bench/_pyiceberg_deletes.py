"""The PyIceberg side of ``bench/deletes.py``; runs in the PyIceberg engine environment.

It imports only pyarrow and pyiceberg (never icefloe), so that icefloe's own venv needs no
pyiceberg. It reads the batches prepared by ``deletes.py`` from a Parquet file (one row group
per data file), creates a fresh format-version 2 table in a SQL catalog on SQLite, appends
every batch with ``table.append(batch)`` (not timed), then times:

- ``table.scan().to_arrow()``, ``--reads`` times, before the delete;
- ``table.delete(FILTER)`` (PyIceberg 0.12's delete is copy-on-write: it drops the files whose
  rows all match and rewrites the others without the matching rows);
- ``table.scan().to_arrow()``, ``--reads`` times, after it.

It prints one JSON object on stdout with the raw facts (``deletes.py`` checks and compares
them the same way for every engine)::

    {"engine": "pyiceberg", "version": "0.12.0", "setup_s": 21.3, "manifests_before": 200,
     "manifests_after": 2,
     "rows_before": 1000000, "read_before_s": [...], "delete_s": 3.1,
     "snapshots": [{"operation": "overwrite", "summary": {...}}], "added": [...],
     "removed_data_files": 200, "removed_delete_files": 0, "new_files": {...},
     "rows_after": 990000, "read_after_s": [...], "ids_sha256": "...", "matching_after": 0}

Usage (normally called by deletes.py)::

    ~/.cache/icefloe/engines/py/bin/python bench/_pyiceberg_deletes.py \
        --data batches.parquet --warehouse /tmp/wh --filter "r == 0"
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pyiceberg
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.manifest import DataFileContent, ManifestEntryStatus
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.types import DoubleType, IntegerType, LongType, NestedField, StringType

# The same columns (and ids, in order) as the Arrow schema deletes.py writes; optional, as
# the Arrow fields are nullable.
SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "r", IntegerType(), required=False),
    NestedField(3, "amount", DoubleType(), required=False),
    NestedField(4, "score", DoubleType(), required=False),
    NestedField(5, "label", StringType(), required=False),
    NestedField(6, "note", StringType(), required=False),
)


def local(path: str) -> str:
    return path.removeprefix("file://")


def files_on_disk(root: Path) -> dict[str, int]:
    """Every file under the table location, with its size (absolute local paths)."""
    found = {}
    for directory, _, names in os.walk(root):
        for name in names:
            path = os.path.join(directory, name)
            found[path] = os.path.getsize(path)
    return found


def timed_reads(table: Table, count: int) -> tuple[list[float], pa.Table]:
    times = []
    result = None
    for _ in range(count):
        result = None
        gc.collect()
        t0 = time.perf_counter()
        result = table.scan().to_arrow()
        times.append(time.perf_counter() - t0)
    assert result is not None
    return times, result


def added_files(table: Table, snapshot_ids: set[int]) -> list[dict[str, Any]]:
    """The files (and deletion vectors) the given snapshots added, from their manifests."""
    current = table.current_snapshot()
    assert current is not None
    added = []
    for manifest in current.manifests(table.io):
        if manifest.added_snapshot_id not in snapshot_ids:
            continue
        for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=True):
            if entry.status != ManifestEntryStatus.ADDED or entry.snapshot_id not in snapshot_ids:
                continue
            file = entry.data_file
            added.append(
                {
                    "path": local(file.file_path),
                    "content": {
                        DataFileContent.DATA: "data",
                        DataFileContent.POSITION_DELETES: "position-deletes",
                        DataFileContent.EQUALITY_DELETES: "equality-deletes",
                    }[file.content],
                    "format": str(file.file_format.value).lower(),
                    "size": file.file_size_in_bytes,
                    "content_size": getattr(file, "content_size_in_bytes", None),
                    "records": file.record_count,
                }
            )
    return added


def removed_counts(table: Table, snapshot_ids: set[int]) -> tuple[int, int]:
    """Data files and delete files the given snapshots removed (from their summaries)."""
    data = deletes = 0
    for snapshot in table.snapshots():
        if snapshot.snapshot_id in snapshot_ids and snapshot.summary is not None:
            props = snapshot.summary.additional_properties
            data += int(props.get("deleted-data-files", 0))
            deletes += int(props.get("removed-delete-files", 0))
    return data, deletes


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="Parquet file, one row group per data file")
    parser.add_argument("--warehouse", required=True, help="a fresh directory")
    parser.add_argument("--filter", required=True, help="the delete filter, in PyIceberg's syntax")
    parser.add_argument("--column", default="r", help="the filter's column (to check no match is left)")
    parser.add_argument("--value", type=int, default=0, help="the value the filter deletes")
    parser.add_argument("--reads", type=int, default=3)
    args = parser.parse_args(argv)

    source = pq.ParquetFile(args.data)
    batches = [source.read_row_group(i) for i in range(source.num_row_groups)]

    warehouse = Path(args.warehouse).absolute()
    warehouse.mkdir(parents=True, exist_ok=True)
    catalog = SqlCatalog("bench", uri=f"sqlite:///{warehouse / 'catalog.db'}", warehouse=warehouse.as_uri())
    catalog.create_namespace("bench")
    table = catalog.create_table("bench.deletes", SCHEMA, properties={"format-version": "2"})
    started = time.perf_counter()
    for batch in batches:
        table.append(batch)
    setup_s = time.perf_counter() - started

    before = table.current_snapshot()
    assert before is not None
    manifests_before = len(before.manifests(table.io))
    known = {s.snapshot_id for s in table.snapshots()}
    location = Path(local(table.location()))
    on_disk_before = files_on_disk(location)

    read_before, result = timed_reads(table, args.reads)
    rows_before = result.num_rows
    del result

    gc.collect()
    t0 = time.perf_counter()
    table.delete(args.filter)
    delete_s = time.perf_counter() - t0

    new_ids = {s.snapshot_id for s in table.snapshots()} - known
    snapshots = [
        {"operation": str(s.summary.operation.value) if s.summary else None, "summary": _summary(s)}
        for s in sorted(table.snapshots(), key=lambda s: s.sequence_number or 0)
        if s.snapshot_id in new_ids
    ]
    on_disk_after = files_on_disk(location)
    new_files = {p: size for p, size in on_disk_after.items() if p not in on_disk_before}
    removed_data, removed_deletes = removed_counts(table, new_ids)

    after = table.current_snapshot()
    assert after is not None
    manifests_after = len(after.manifests(table.io))
    read_after, result = timed_reads(table, args.reads)
    ids = np.sort(result.column("id").to_numpy())
    matching = pc.sum(pc.equal(result.column(args.column), args.value)).as_py() or 0
    rows_after = result.num_rows
    del result

    print(
        json.dumps(
            {
                "engine": "pyiceberg",
                "version": pyiceberg.__version__,
                "setup_s": setup_s,
                "manifests_before": manifests_before,
                "manifests_after": manifests_after,
                "rows_before": rows_before,
                "read_before_s": read_before,
                "delete_s": delete_s,
                "snapshots": snapshots,
                "added": added_files(table, new_ids),
                "removed_data_files": removed_data,
                "removed_delete_files": removed_deletes,
                "new_files": new_files,
                "rows_after": rows_after,
                "read_after_s": read_after,
                "ids_sha256": hashlib.sha256(ids.astype(np.int64).tobytes()).hexdigest(),
                "matching_after": matching,
            }
        )
    )
    return 0


def _summary(snapshot: Any) -> dict[str, str]:
    if snapshot.summary is None:
        return {}
    return {"operation": str(snapshot.summary.operation.value), **snapshot.summary.additional_properties}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
