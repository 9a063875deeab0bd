"""Benchmark: selective reads with page-index pruning, icefloe vs icefloe without it vs pyarrow.dataset.

Table (``bench/_reading_tables.py``, written by icefloe with a page index, cached in
``bench/out/reading/``): *lookups*, 8,000,000 rows in 4 files of one 2,000,000-row row group
each (as Java writes 128 MB row groups), ``id`` ascending across the table, ``ts`` random over a
year. Queries, every column:

- ``point``: ``id = x``; ``range``: 2,000 consecutive ids; ``ids``: ``id IN`` three ids in
  three files; ``unsorted``: a one-hour ``ts`` range (about 900 rows spread over every page:
  the page index prunes nothing; DataFusion's late materialization still decodes less).

Per query, in one process, interleaved, best of ``--repeat``: icefloe's ``to_arrow()`` (page
index read through DataFusion, the ``page-index`` extra), the same with page-index reads
turned off (pyarrow reads whole row groups), and ``pyarrow.dataset`` on the same files. Every
engine must return the same rows.

Usage::

    python bench/page_index.py --repeat 5
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import pyarrow as pa  # noqa: E402
import pyarrow.dataset as ds  # noqa: E402
from _reading_tables import START_US, TableParams, ensure_table  # noqa: E402

import icefloe  # noqa: E402
import icefloe.scan.reading as reading  # noqa: E402
from icefloe.arrow.page_index import page_available  # noqa: E402

LOOKUPS = TableParams("lookups", files=4, rows_per_file=2_000_000, ts_sorted=False, row_group_rows=2_000_000)


def queries() -> dict[str, tuple[str, Any]]:
    """Per query: the icefloe filter and the same as a pyarrow expression."""
    hour_us = START_US + 200 * 86_400_000_000
    hour = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(hour_us // 1_000_000))
    next_hour = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(hour_us // 1_000_000 + 3600))
    ts = pa.timestamp("us")
    return {
        "point": ("id = 4321987", ds.field("id") == 4_321_987),
        "range": (
            "id >= 5000000 AND id < 5002000",
            (ds.field("id") >= 5_000_000) & (ds.field("id") < 5_002_000),
        ),
        "ids": ("id IN (123, 2500000, 7999999)", ds.field("id").isin([123, 2_500_000, 7_999_999])),
        "unsorted": (
            f"ts >= '{hour}' AND ts < '{next_hour}'",
            (ds.field("ts") >= pa.scalar(hour_us, ts))
            & (ds.field("ts") < pa.scalar(hour_us + 3_600_000_000, ts)),
        ),
    }


def time_icefloe(warehouse: Path, text: str, *, pages: bool) -> tuple[float, pa.Table]:
    catalog = icefloe.load_catalog("bench", type="hadoop", warehouse=str(warehouse))
    original = reading.page_predicate
    if not pages:
        reading.page_predicate = lambda *args: None  # type: ignore[assignment]
    try:
        started = time.perf_counter()
        result = catalog.load_table("db.t").new_scan().filter(text).to_arrow()
        return time.perf_counter() - started, result
    finally:
        reading.page_predicate = original  # type: ignore[assignment]


def time_dataset(files: tuple[str, ...], expression: Any) -> tuple[float, pa.Table]:
    started = time.perf_counter()
    result = ds.dataset(list(files), format="parquet").to_table(filter=expression)
    return time.perf_counter() - started, result


def _fmt(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description="page-index reads: icefloe vs icefloe without vs pyarrow.dataset"
    )
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--queries", default=",".join(queries()))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if not page_available():
        raise SystemExit("this needs the page-index extra: pip install 'icefloe[page-index]'")
    print(
        f"icefloe {icefloe.__version__}, pyarrow {pa.__version__}; python {platform.python_version()},"
        f" {os.cpu_count()} cpus, load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    table = ensure_table(LOOKUPS)
    rows = []
    for name in [q for q in args.queries.split(",") if q]:
        text, expression = queries()[name]
        times: dict[str, list[float]] = {"pages": [], "no-pages": [], "dataset": []}
        results: dict[str, pa.Table] = {}
        for _ in range(args.repeat):
            for engine in times:
                if engine == "dataset":
                    seconds, result = time_dataset(table.files, expression)
                else:
                    seconds, result = time_icefloe(table.warehouse, text, pages=engine == "pages")
                times[engine].append(seconds)
                results[engine] = result
        keys = {engine: sorted(result.column("id").to_pylist()) for engine, result in results.items()}
        if len({json.dumps(k) for k in keys.values()}) != 1:
            raise SystemExit(
                f"{name}: engines returned different rows: { {e: len(k) for e, k in keys.items()} }"
            )
        best = {engine: min(t) for engine, t in times.items()}
        row = {
            "query": name,
            "filter": text,
            "rows": results["pages"].num_rows,
            **{f"{e}_s": s for e, s in best.items()},
        }
        rows.append(row)
        print(
            f"  {name:9s} rows {row['rows']:>6,}  icefloe {_fmt(best['pages']):>9s}"
            f"  without page index {_fmt(best['no-pages']):>9s} ({best['no-pages'] / best['pages']:5.1f}x)"
            f"  pyarrow.dataset {_fmt(best['dataset']):>9s} ({best['dataset'] / best['pages']:5.1f}x)"
            f"  (load {os.getloadavg()[0]:.1f})",
            flush=True,
        )
    print(
        "\n(Nx): that engine's time / icefloe's with page-index reads (above 1: page-index reads are faster)."
    )
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
