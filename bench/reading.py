"""Benchmark: reading a table into Arrow, icefloe vs pyarrow.dataset vs PyIceberg 0.12.

Tables (``bench/_reading_tables.py``, written by icefloe, cached in ``bench/out/reading/``):
*events*, 6,000,000 rows in 12 files, and *wide*, 4,000,000 rows in 10 files; six columns
(``id long, ts timestamp, country string, amount double, qty int, note string``), row groups of
128,000 rows. Queries:

- ``full``: every row and column;
- ``selective``: about 1% of the rows (*events*: an ``id`` range; *wide*: a two-day ``ts`` range of
  about 2%), every column; row groups outside the range are skipped by their statistics;
- ``columns``: every row, two columns of six (``id``, ``amount``);
- ``narrow``: every row, one column of six, once per type: ``narrow:id`` (long), ``narrow:qty``
  (int), ``narrow:amount`` (double), ``narrow:note`` (string, mostly distinct): a read so small
  (10-100 ms) that fixed costs per scan and per file show.

Per table and query, the best run of each engine, the engines interleaved (each round in
another order), in the same run; at least ``--repeat`` rounds, and more until each engine has
spent ``--min-seconds`` (a narrow read takes 10-100 ms: five of them span half a second, and
one burst of load on a shared machine would make all five slow):

- icefloe: ``table.new_scan().filter(...).select(...).to_arrow()`` (``load_table`` and planning
  included);
- pyarrow.dataset: ``ds.dataset(files).to_table(columns=..., filter=...)`` on the same data files
  (dataset discovery included);
- PyIceberg 0.12 (in the interop harness's environment, a process of its own serving one read per
  request, ``bench/_pyiceberg_read.py``): ``StaticTable.from_metadata(...).scan(row_filter=...,
  selected_fields=...).to_arrow()``.

Every engine must return the same number of rows. Printed: ``ice/ds`` and ``ice/pyi``, icefloe's
best time over the other's (below 1: icefloe is faster), and in parentheses the median of the
ratios round by round (each round's runs are seconds apart, so a change of load cancels out). Then **streaming**: in a fresh process,
``to_batches()`` over *big* (24,000,000 rows, about 4 times ``--memory-mb`` as Arrow data),
each batch dropped: the peak RSS is printed beside the table's Arrow size.

Usage::

    python bench/reading.py                          # everything
    python bench/reading.py --tables events --no-pyiceberg --repeat 3
    python bench/reading.py --tables wide --queries narrow --no-stream
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

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
#: The columns read alone by ``narrow``: a long, an int, a double and a (mostly distinct) string.
NARROW_COLUMNS = ("id", "qty", "amount", "note")
QUERIES = ("full", "selective", "columns", "narrow")
#: Rounds of one query at most, whatever ``--min-seconds`` asks.
MAX_ROUNDS = 200


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
    found: dict[str, dict[str, Any]] = {
        "full": {"filter": None, "expression": None, "columns": None},
        "selective": {**selective, "columns": None},
        "columns": {"filter": None, "expression": None, "columns": ["id", "amount"]},
    }
    for column in NARROW_COLUMNS:
        found[f"narrow:{column}"] = {"filter": None, "expression": None, "columns": [column]}
    return found


def query_names(wanted: str) -> list[str]:
    """``--queries`` expanded: ``narrow`` is every ``narrow:<column>``."""
    names: list[str] = []
    for name in [q for q in wanted.split(",") if q]:
        if name == "narrow":
            names += [f"narrow:{column}" for column in NARROW_COLUMNS]
        elif name in QUERIES or (name.startswith("narrow:") and name[len("narrow:") :] in NARROW_COLUMNS):
            names.append(name)
        else:
            raise SystemExit(f"unknown query {name!r}: expected {', '.join(QUERIES)} or narrow:<column>")
    return names


def _best(times: list[float]) -> float:
    return min(times)


def _paired(times: list[float], others: list[float]) -> float:
    """The median of the round-by-round ratios (the runs of a round are seconds apart: a
    change of load between rounds cancels out)."""
    return statistics.median(a / b for a, b in zip(times, others))


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


class PyIcebergReader:
    """PyIceberg 0.12 reading in a process of its own (``_pyiceberg_read.py``), one timed read
    per request, so that its reads interleave with the others'."""

    def __init__(self, python: Path, stderr: IO[str]):
        env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"}}
        self._stderr = stderr
        self._proc = subprocess.Popen(
            [str(python), str(PYICEBERG_SCRIPT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env=env,
        )

    def time(self, table: ReadTable, query: dict[str, Any]) -> tuple[float, int]:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        request = {"metadata": str(table.metadata), "filter": query["filter"], "columns": query["columns"]}
        self._proc.stdin.write(json.dumps(request) + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            self._proc.wait()
            self._stderr.seek(0)
            raise SystemExit(
                f"PyIceberg read failed (exit {self._proc.returncode}):\n{self._stderr.read()[-4000:]}"
            )
        answer = json.loads(line)
        return float(answer["seconds"]), int(answer["rows"])

    def __enter__(self) -> PyIcebergReader:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        self._proc.wait()


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


def _fmt_ratio(ratio: float | None) -> str:
    return f"{ratio:.2f}x" if ratio is not None else "-"


def run_query(
    table: ReadTable,
    name: str,
    query_name: str,
    repeat: int,
    min_seconds: float,
    pyiceberg: PyIcebergReader | None,
) -> dict[str, Any]:
    """The best run of each engine, interleaved: round ``i`` runs them in the order rotated by
    ``i``, so that none always runs first (or right after another's garbage); ``repeat``
    rounds at least, and more until every engine has run for ``min_seconds`` in all."""
    query = queries(name)[query_name]
    engines: dict[str, Callable[[], tuple[float, int]]] = {
        "dataset": lambda: time_dataset(table, query),
        "icefloe": lambda: time_icefloe(table, query),
    }
    if pyiceberg is not None:
        engines["pyiceberg"] = lambda: pyiceberg.time(table, query)
    order = list(engines)
    times: dict[str, list[float]] = {engine: [] for engine in order}
    counts = set()
    round_ = 0
    while round_ < repeat or (min(sum(t) for t in times.values()) < min_seconds and round_ < MAX_ROUNDS):
        round_ += 1
        for engine in order[round_ % len(order) :] + order[: round_ % len(order)]:
            seconds, count = engines[engine]()
            times[engine].append(seconds)
            counts.add((engine, count))
    if len({c for _, c in counts}) != 1:
        raise SystemExit(f"{name} {query_name}: engines returned different row counts: {sorted(counts)}")
    ice, dataset = _best(times["icefloe"]), _best(times["dataset"])
    pyi = _best(times["pyiceberg"]) if "pyiceberg" in times else None
    paired_ds = _paired(times["icefloe"], times["dataset"])
    paired_pyi = _paired(times["icefloe"], times["pyiceberg"]) if "pyiceberg" in times else None
    row = {
        "table": name,
        "query": query_name,
        "rows": next(iter(counts))[1],
        "icefloe_s": ice,
        "dataset_s": dataset,
        "pyiceberg_s": pyi,
        "ice_ds_paired": paired_ds,
        "ice_pyi_paired": paired_pyi,
        "runs": round_,
        "load": os.getloadavg()[0],
    }
    print(
        f"  {name:7s} {query_name:14s} rows {row['rows']:>10,}  icefloe {_fmt(ice):>8s}"
        f"  pyarrow.dataset {_fmt(dataset):>8s}  PyIceberg {_fmt(pyi):>8s}"
        f"  ice/ds {_ratio(ice, dataset):>6s} ({_fmt_ratio(paired_ds)})  ice/pyi {_ratio(ice, pyi):>6s}"
        f" ({_fmt_ratio(paired_pyi)})  {round_} runs, load {row['load']:.1f}",
        flush=True,
    )
    return row


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="reading: icefloe vs pyarrow.dataset vs PyIceberg")
    parser.add_argument("--tables", default="events,wide")
    parser.add_argument(
        "--queries", default=",".join(QUERIES), help="of full,selective,columns,narrow[:column]"
    )
    parser.add_argument(
        "--repeat", type=int, default=5, help="runs per engine and query, at least (best kept)"
    )
    parser.add_argument(
        "--min-seconds",
        type=float,
        default=2.0,
        help="more runs until each engine has run this long per query",
    )
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
    with contextlib.ExitStack() as stack:
        pyiceberg = None
        if python is not None:
            stderr = stack.enter_context(tempfile.TemporaryFile("w+"))
            pyiceberg = stack.enter_context(PyIcebergReader(python, stderr))
        for name in [t for t in args.tables.split(",") if t]:
            table = ensure_table(TABLES[name])
            for query_name in query_names(args.queries):
                rows.append(run_query(table, name, query_name, args.repeat, args.min_seconds, pyiceberg))
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
        "\nice/ds: icefloe / pyarrow.dataset (target: full, columns and narrow <= 1.05x, selective <= 1.1x);"
        " ice/pyi: icefloe / PyIceberg (target <= 1; below 1: icefloe is faster); the best runs' ratio,"
        " and in parentheses the median of the rounds' ratios."
    )
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
