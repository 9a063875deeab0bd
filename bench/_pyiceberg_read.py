"""The PyIceberg side of ``bench/reading.py``; runs in the PyIceberg engine environment.

It imports only pyiceberg (never icefloe). It serves reads for the benchmark, one at a time, so
that they can be interleaved with icefloe's and pyarrow.dataset's in the same run: each line on
stdin is a JSON request ``{"metadata": ".../v11.metadata.json", "filter": "id >= 3" or null,
"columns": ["amount"] or null}``; it times ``StaticTable.from_metadata(metadata).scan(row_filter=
..., selected_fields=...).to_arrow()`` (loading and planning included, as icefloe's side times
``load_table`` and planning) and answers one JSON line::

    {"engine": "pyiceberg", "version": "0.12.0", "seconds": 0.041, "rows": 4000000}

It exits at the end of stdin.
"""

from __future__ import annotations

import json
import sys
import time

import pyiceberg
import pyiceberg.io.pyarrow
import pyiceberg.table
from pyiceberg.table import StaticTable


def read_once(metadata: str, row_filter: str | None, columns: list[str] | None) -> tuple[float, int]:
    started = time.perf_counter()
    table = StaticTable.from_metadata(metadata)
    scan = table.scan(row_filter=row_filter or "True", selected_fields=tuple(columns) if columns else ("*",))
    result = scan.to_arrow()
    seconds = time.perf_counter() - started
    return seconds, result.num_rows


def main() -> int:
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        seconds, rows = read_once(request["metadata"], request.get("filter"), request.get("columns"))
        answer = {"engine": "pyiceberg", "version": pyiceberg.__version__, "seconds": seconds, "rows": rows}
        print(json.dumps(answer), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
