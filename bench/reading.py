"""Benchmark: reading a table into Arrow, icefloe vs pyarrow.dataset vs PyIceberg 0.12.

Tables (``bench/_reading_tables.py``, written by icefloe, cached in ``bench/out/reading/``):
*events*, 6,000,000 rows in 12 files, and *wide*, 4,000,000 rows in 10 files; six columns
(``id long, ts timestamp, country string, amount double, qty int, note string``), row groups of
128,000 rows. Queries:

- ``full``: every row and column;
- ``selective``: about 1% of the rows (*events*: an ``id`` range; *wide*: a two-day ``ts`` range of
  about 2%), every column; row groups outside the range are skipped by their statistics;
- ``columns``: every row, one column of six (*events*: two: ``id``, ``amount``).

Per table and query, in one process, interleaved, best of ``--repeat``:

- icefloe: ``table.new_scan().filter(...).select(...).to_arrow()`` (planning included);
- pyarrow.dataset: ``ds.dataset(files).to_table(columns=..., filter=...)`` on the same data files
  (dataset discovery included);
- PyIceberg 0.12 (in the interop harness's environment, ``bench/_pyiceberg_read.py``):
  ``StaticTable.from_metadata(...).scan(row_filter=..., selected_fields=...).to_arrow()``.

Every engine must return the same number of rows. Then **streaming**: in a fresh process,
``to_batches()`` over *big* (24,000,000 rows, about 4 times ``--memory-mb`` as Arrow data),
each batch dropped: the peak RSS is printed beside the table's Arrow size.

Usage::

    python bench/reading.py                          # everything
    python bench/reading.py --tables events --no-pyiceberg --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import pyarrow as pa  # noqa: E402
import pyarrow.dataset as ds  # noqa: E402
from _reading_tables import ReadTable, TableParams, ensure_table  # noqa: E402
from _rss import peak_rss_mb  # noqa: E402
from appends import pyiceberg_python  # noqa: E402

import icefloe  # noqa: E402

PYICEBERG_SCRIPT = HERE / "_pyiceberg_read.py"
TABLES = {
    "events": TableParams("events", files=12, rows_per_file=500_000, ts_sorted=False),
    "wide": TableParams("wide", files=10, rows_per_file=400_000, ts_sorted=True),
}
BIG = TableParams("big", files=24, rows_per_file=1_000_000, ts_sorted=False)
START = "2024-01-01T00:00:00"


def queries(name: str) -> dict[str, dict[str, Any]]:
    """Per query: an icefloe / PyIceberg filter string, the same as a pyarrow expression, and
    the columns (None: all)."""
    params = TABLES[name]
    if name == "events":
        low = int(params.rows * 0.4)
        high = low + params.rows // 100
        selective = {
            "filter": f"id >= {low} AND id < {high}",
            "expression": (ds.field("id") >= low) & (ds.field("id") < high),
        }
        columns = ["id", "amount"]
    else:
        first = params.rows * 2 // 5  # seconds after START (ts grows by one second a row)
        last = first + params.rows // 50
        low_ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(1_704_067_200 + first))
        high_ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(1_704_067_200 + last))
        selective = {
            "filter": f"ts >= '{low_ts}' AND ts < '{high_ts}'",
            "expression": (
                ds.field("ts") >= pa.scalar(1_704_067_200_000_000 + first * 1_000_000, pa.timestamp("us"))
            )
            & (ds.field("ts") < pa.scalar(1_704_067_200_000_000 + last * 1_000_000, pa.timestamp("us"))),
        }
        columns = ["amount"]
    return {
        "full": {"filter": None, "expression": None, "columns": None},
        "selective": {**selective, "columns": None},
        "columns": {"filter": None, "expression": None, "columns": columns},
    }


def _best(times: list[float]) -> float:
    return min(times)


def time_icefloe(table: ReadTable, query: dict[str, Any]) -> tuple[float, int]:
    catalog = icefloe.load_catalog("bench", type="hadoop", warehouse=str(table.warehouse))
    started = time.perf_counter()
    scan = catalog.load_table("db.t").new_scan()
    if query["filter"]:
        scan = scan.filter(query["filter"])
    if query["columns"]:
        scan = scan.select(*query["columns"])
    result = scan.to_arrow()
    return time.perf_counter() - started, result.num_rows


def time_dataset(table: ReadTable, query: dict[str, Any]) -> tuple[float, int]:
    started = time.perf_counter()
    dataset = ds.dataset(list(table.files), format="parquet")
    result = dataset.to_table(columns=query["columns"], filter=query["expression"])
    return time.perf_counter() - started, result.num_rows


def time_pyiceberg(python: Path, table: ReadTable, query: dict[str, Any], repeat: int) -> tuple[float, int]:
    cmd = [str(python), str(PYICEBERG_SCRIPT), "--metadata", str(table.metadata), "--repeat", str(repeat)]
    if query["filter"]:
        cmd += ["--filter", query["filter"]]
    if query["columns"]:
        cmd += ["--columns", ",".join(query["columns"])]
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"}}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"PyIceberg read failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    return _best(result["times"]), int(result["rows"])


# ---- streaming ---------------------------------------------------------------------------------


def _rss_mb() -> float:
    return peak_rss_mb()


def child_stream(args: argparse.Namespace) -> dict[str, Any]:
    catalog = icefloe.load_catalog("bench", type="hadoop", warehouse=args.warehouse)
    table = catalog.load_table("db.t")
    base = _rss_mb()
    rows = 0
    arrow_bytes = 0
    started = time.perf_counter()
    for batch in table.new_scan().to_batches():
        rows += batch.num_rows
        arrow_bytes += batch.nbytes
    seconds = time.perf_counter() - started
    return {
        "rows": rows,
        "arrow_mb": arrow_bytes / 2**20,
        "seconds": seconds,
        "rss_base_mb": base,
        "rss_peak_mb": _rss_mb(),
    }


def run_stream(table: ReadTable) -> dict[str, Any]:
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child-stream",
        "--warehouse",
        str(table.warehouse),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"streaming child failed:\n{proc.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


# ---- main --------------------------------------------------------------------------------------


def _fmt(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds:.2f} s" if seconds >= 1 else f"{seconds * 1000:.0f} ms"


def _ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}x" if a and b else "-"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="reading: icefloe vs pyarrow.dataset vs PyIceberg")
    parser.add_argument("--tables", default="events,wide")
    parser.add_argument("--queries", default="full,selective,columns")
    parser.add_argument("--repeat", type=int, default=5, help="runs per engine and query (best kept)")
    parser.add_argument("--no-pyiceberg", action="store_true")
    parser.add_argument("--no-stream", action="store_true")
    parser.add_argument("--memory-mb", type=int, default=256, help="the memory the streaming case allows")
    parser.add_argument("--pyiceberg-python", help="interpreter with pyiceberg 0.12 (default: the harness's)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--child-stream", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--warehouse", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_stream:
        print(json.dumps(child_stream(args)))
        return 0

    python = None if args.no_pyiceberg else pyiceberg_python(args.pyiceberg_python)
    print(
        f"icefloe {icefloe.__version__}, pyarrow {pa.__version__}; python {platform.python_version()},"
        f" {os.cpu_count()} cpus, load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    rows: list[dict[str, Any]] = []
    for name in [t for t in args.tables.split(",") if t]:
        table = ensure_table(TABLES[name])
        for query_name in [q for q in args.queries.split(",") if q]:
            query = queries(name)[query_name]
            ice: list[float] = []
            dataset: list[float] = []
            counts = set()
            for _ in range(args.repeat):
                seconds, count = time_dataset(table, query)
                dataset.append(seconds)
                counts.add(("dataset", count))
                seconds, count = time_icefloe(table, query)
                ice.append(seconds)
                counts.add(("icefloe", count))
            pyi = None
            if python is not None:
                pyi, count = time_pyiceberg(python, table, query, args.repeat)
                counts.add(("pyiceberg", count))
            if len({c for _, c in counts}) != 1:
                raise SystemExit(
                    f"{name} {query_name}: engines returned different row counts: {sorted(counts)}"
                )
            row = {
                "table": name,
                "query": query_name,
                "rows": next(iter(counts))[1],
                "icefloe_s": _best(ice),
                "dataset_s": _best(dataset),
                "pyiceberg_s": pyi,
                "load": os.getloadavg()[0],
            }
            rows.append(row)
            print(
                f"  {name:7s} {query_name:10s} rows {row['rows']:>10,}  icefloe {_fmt(row['icefloe_s']):>8s}"
                f"  pyarrow.dataset {_fmt(row['dataset_s']):>8s}  PyIceberg {_fmt(pyi):>8s}"
                f"  ice/ds {_ratio(row['icefloe_s'], row['dataset_s']):>6s}"
                f"  pyi/ice {_ratio(pyi, row['icefloe_s']):>6s}  (load {row['load']:.1f})",
                flush=True,
            )
    if not args.no_stream:
        big = ensure_table(BIG)
        stream = run_stream(big)
        print(
            f"\nstreaming to_batches() over {stream['rows']:,} rows, {stream['arrow_mb']:,.0f} MB of Arrow data"
            f" ({stream['arrow_mb'] / args.memory_mb:.1f}x the {args.memory_mb} MB allowed):"
            f" peak RSS {stream['rss_peak_mb']:.0f} MB (base {stream['rss_base_mb']:.0f} MB,"
            f" {stream['rss_peak_mb'] - stream['rss_base_mb']:.0f} MB for reading), {_fmt(stream['seconds'])}"
        )
        rows.append({"stream": stream, "memory_mb": args.memory_mb})
    print(
        "\nice/ds: icefloe / pyarrow.dataset (target: full and columns <= 1.05x, selective <= 1.1x);"
        " pyi/ice: PyIceberg / icefloe (above 1: icefloe is faster)."
    )
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
