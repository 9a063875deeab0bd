"""The PyIceberg side of ``bench/planning.py``; runs in the PyIceberg engine environment.

It imports only pyiceberg (never icefloe). In a fresh process it imports PyIceberg's planning
modules (untimed), then times loading the table from its metadata JSON with
``StaticTable.from_metadata`` and planning ``table.scan(row_filter=...).plan_files()`` to the
last task (cold); then plans again ``--warm`` times with the same table object (warm). It
prints one JSON object on stdout::

    {"engine": "pyiceberg", "version": "0.12.0", "cold_s": 0.41, "warm_s": [0.36, ...],
     "files": 3000, "digest": "<sha1 of the sorted paths>", "rss_base_mb": 140,
     "rss_peak_mb": 161}

Usage (normally called by planning.py)::

    ~/.cache/icefloe/engines/py/bin/python bench/_pyiceberg_plan.py \
        --metadata .../v2.metadata.json --filter "c01 >= 100" --warm 3
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

import pyiceberg
import pyiceberg.avro.decoder
import pyiceberg.avro.file
import pyiceberg.expressions.visitors
import pyiceberg.io.pyarrow
import pyiceberg.manifest
import pyiceberg.table
from pyiceberg.table import StaticTable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _rss import peak_rss_mb


def _rss_mb() -> float:
    return peak_rss_mb()


def _digest(paths: list[str]) -> str:
    return hashlib.sha1("\n".join(sorted(paths)).encode()).hexdigest()


def _plan(table: StaticTable, row_filter: str | None) -> list[object]:
    scan = table.scan(row_filter=row_filter) if row_filter else table.scan()
    return list(scan.plan_files())


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metadata", required=True, help="the table's current metadata JSON")
    parser.add_argument("--filter", default=None, help="a PyIceberg row filter string")
    parser.add_argument("--warm", type=int, default=3, help="plans after the first, same process")
    args = parser.parse_args(argv)

    base = _rss_mb()
    started = time.perf_counter()
    table = StaticTable.from_metadata(args.metadata)
    tasks = _plan(table, args.filter)
    cold = time.perf_counter() - started
    peak_cold = _rss_mb()
    paths = [task.file.file_path for task in tasks]  # type: ignore[attr-defined]
    del tasks
    warm = []
    for _ in range(args.warm):
        started = time.perf_counter()
        again = _plan(table, args.filter)
        warm.append(time.perf_counter() - started)
        del again
    print(
        json.dumps(
            {
                "engine": "pyiceberg",
                "version": pyiceberg.__version__,
                "cold_s": cold,
                "warm_s": warm,
                "files": len(paths),
                "digest": _digest(paths),
                "rss_base_mb": base,
                "rss_peak_cold_mb": peak_cold,
                "rss_peak_mb": _rss_mb(),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
