"""The PyIceberg side of ``bench/reading.py``; runs in the PyIceberg engine environment.

It imports only pyiceberg (never icefloe). It times ``--repeat`` reads of
``StaticTable.from_metadata(...).scan(row_filter=..., selected_fields=...).to_arrow()`` (loading
and planning included) and prints one JSON object on stdout::

    {"engine": "pyiceberg", "version": "0.12.0", "times": [0.41, ...], "rows": 6000000}
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import pyiceberg
import pyiceberg.io.pyarrow
import pyiceberg.table
from pyiceberg.table import StaticTable


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metadata", required=True, help="the table's current metadata JSON")
    parser.add_argument("--filter", default=None, help="a PyIceberg row filter string")
    parser.add_argument("--columns", default=None, help="comma-separated columns (default: all)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    columns = tuple(args.columns.split(",")) if args.columns else ("*",)
    times = []
    rows = -1
    for _ in range(args.repeat):
        started = time.perf_counter()
        table = StaticTable.from_metadata(args.metadata)
        scan = table.scan(row_filter=args.filter or "True", selected_fields=columns)
        result = scan.to_arrow()
        times.append(time.perf_counter() - started)
        rows = result.num_rows
        del result
    print(json.dumps({"engine": "pyiceberg", "version": pyiceberg.__version__, "times": times, "rows": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
