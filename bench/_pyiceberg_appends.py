"""The PyIceberg side of ``bench/appends.py``; runs in the PyIceberg engine environment.

It imports only pyarrow and pyiceberg (never icefloe), so that icefloe's own venv needs no
pyiceberg. It reads the batches prepared by ``appends.py`` from a Parquet file (one row group
per append), creates a fresh table in a SQL catalog on SQLite, appends every batch with
``table.append(batch)`` and prints one JSON object on stdout::

    {"engine": "pyiceberg", "version": "0.12.0", "variant": "day", "latencies_ms": [...],
     "total_s": 4.2, "manifests": 200, "data_files": 600, "records": 200000,
     "data_bytes": 5263121}

Usage (normally called by appends.py)::

    ~/.cache/icefloe/engines/py/bin/python bench/_pyiceberg_appends.py \
        --data batches.parquet --warehouse /tmp/wh --variant day
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pyiceberg
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC, PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import DayTransform
from pyiceberg.types import DoubleType, IntegerType, LongType, NestedField, StringType, TimestampType

# The same columns (and ids, in order) as the Arrow schema appends.py writes; optional, as
# the Arrow fields are nullable.
SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "ts", TimestampType(), required=False),
    NestedField(3, "country", StringType(), required=False),
    NestedField(4, "amount", DoubleType(), required=False),
    NestedField(5, "qty", IntegerType(), required=False),
)
SPECS = {
    "unpartitioned": UNPARTITIONED_PARTITION_SPEC,
    "day": PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=DayTransform(), name="ts_day")),
}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="Parquet file, one row group per append")
    parser.add_argument("--warehouse", required=True, help="a fresh directory")
    parser.add_argument("--variant", choices=sorted(SPECS), required=True)
    parser.add_argument("--appends", type=int, default=None, help="only the first N row groups")
    args = parser.parse_args(argv)

    source = pq.ParquetFile(args.data)
    groups = source.num_row_groups if args.appends is None else min(args.appends, source.num_row_groups)
    batches = [source.read_row_group(i) for i in range(groups)]

    warehouse = Path(args.warehouse).absolute()
    warehouse.mkdir(parents=True, exist_ok=True)
    catalog = SqlCatalog("bench", uri=f"sqlite:///{warehouse / 'catalog.db'}", warehouse=warehouse.as_uri())
    catalog.create_namespace("bench")
    table = catalog.create_table(f"bench.events_{args.variant}", SCHEMA, partition_spec=SPECS[args.variant])

    latencies = []
    started = time.perf_counter()
    for batch in batches:
        t0 = time.perf_counter()
        table.append(batch)
        latencies.append((time.perf_counter() - t0) * 1000)
    total = time.perf_counter() - started

    snapshot = table.current_snapshot()
    assert snapshot is not None
    summary = snapshot.summary.additional_properties if snapshot.summary else {}
    result = {
        "engine": "pyiceberg",
        "version": pyiceberg.__version__,
        "variant": args.variant,
        "latencies_ms": latencies,
        "total_s": total,
        "manifests": len(snapshot.manifests(table.io)),
        "data_files": int(summary.get("total-data-files", -1)),
        "records": int(summary.get("total-records", -1)),
        "data_bytes": int(summary.get("total-files-size", -1)),
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
