"""``python -m icefloe.demo`` (``./dev demo``): a small, real pipeline on the embedded catalog.

What it does, one numbered section each:

1. opens the embedded catalog (SQLite in ``./warehouse``; ``--warehouse`` moves it) and creates
   ``db.orders`` (partitioned by country and grass_date) and ``db.sales`` (partitioned by
   sale_date, zstd Parquet, an ``owner``) unless they exist;
2. loads 7 daily batches of generated orders and sales (a fixed seed: the same days always
   hold the same rows), one commit per table and day;
3. runs a filtered query and shows how many data files planning kept out of how many;
4. time-travels to the 3rd day of the run, by snapshot id and by point in time;
5. counts orders per country per day (``to_arrow()`` + pyarrow ``group_by``);
6. prints the history of ``db.orders``;

and ends with a summary (tables, snapshots, data files, rows, bytes on disk, time).

Re-running it continues the pipeline: the next run appends the 7 days after the last day in
the tables (days 8-14, then 15-21, ...). ``--fresh`` drops both tables (with their files)
first and starts again at 2024-01-01.

The demo always uses the embedded SQLite catalog, which is what ``icefloe.load_catalog()``
returns when nothing is configured. It never opens a catalog configured in ``~/.icefloe.yaml``
or the environment, so ``--fresh`` cannot drop tables anywhere else.

Expected problems (a warehouse that cannot be written, tables of the same name but another
shape, a failed commit) end with a one-line message and exit status 1, not a traceback.
Colours are used only when standard output is a terminal and ``NO_COLOR`` is unset.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import icefloe
from icefloe.errors import IcefloeError
from icefloe.spec.snapshots import Snapshot
from icefloe.table.scan import TableScan

__all__ = [
    "FIRST_DAY",
    "ORDERS",
    "ORDERS_SCHEMA",
    "SALES",
    "SALES_SCHEMA",
    "main",
    "orders_for_day",
    "sales_for_day",
]

NAMESPACE = "db"
ORDERS = "db.orders"
SALES = "db.sales"
FIRST_DAY = dt.date(2024, 1, 1)
DEFAULT_DAYS = 7
DEFAULT_SEED = 20240101
TIME_TRAVEL_DAY = 3  # the n-th day of the run that time travel goes back to
SHOWN_DAYS = 7  # rows of the per-country table
SHOWN_HISTORY = 14  # rows of the history table

ORDERS_SCHEMA = pa.schema(
    [
        pa.field("order_id", pa.int64(), nullable=False),
        pa.field("customer", pa.string()),
        pa.field("country", pa.string()),
        pa.field("amount", pa.decimal128(10, 2)),
        pa.field("grass_date", pa.date32()),
    ]
)
ORDERS_PARTITIONING = ["country", "grass_date"]
SALES_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int32(), nullable=False),
        pa.field("amount", pa.float64()),
        pa.field("sale_date", pa.date32()),
    ]
)
SALES_PARTITIONING = ["sale_date"]
SALES_PROPERTIES = {"owner": "icefloe-demo", "write.parquet.compression-codec": "zstd"}
# What the tables must look like for the demo to append to them (Iceberg type strings).
EXPECTED_COLUMNS = {
    ORDERS: [
        ("order_id", "long"),
        ("customer", "string"),
        ("country", "string"),
        ("amount", "decimal(10, 2)"),
        ("grass_date", "date"),
    ],
    SALES: [("id", "int"), ("amount", "double"), ("sale_date", "date")],
}
DAY_COLUMN = {ORDERS: "grass_date", SALES: "sale_date"}

COUNTRIES = np.array(["SG", "MY", "TH", "ID", "VN", "PH", "TW", "BR"])
COUNTRY_SHARE = np.array([0.12, 0.10, 0.14, 0.22, 0.13, 0.11, 0.10, 0.08])
DAY_KEY = "icefloe-demo.day"  # snapshot summary property naming the batch's day


T = TypeVar("T")


class DemoError(Exception):
    """An expected problem: reported as one line, exit status 1."""


# ---- generated data -------------------------------------------------------------------------


def _day_index(day: dt.date) -> int:
    return (day - FIRST_DAY).days


def orders_for_day(day: dt.date, seed: int = DEFAULT_SEED) -> pa.Table:
    """The orders batch of ``day``: 2,500-4,000 orders placed that day, about 3% of them
    arriving late (placed the day before; never before FIRST_DAY). Deterministic per
    (seed, day); order ids are unique across days."""
    index = _day_index(day)
    rng = np.random.default_rng([seed, index, 1])
    rows = int(rng.integers(2_500, 4_001))
    late = (rng.random(rows) < 0.03) if index > 0 else np.zeros(rows, dtype=bool)
    epoch_day = (day - dt.date(1970, 1, 1)).days
    cents = np.clip(rng.gamma(2.0, 2_500.0, rows).astype(np.int64), 50, 99_999_999)
    customers = rng.zipf(1.3, rows) % 5_000
    return pa.table(
        {
            "order_id": pa.array(index * 10_000 + np.arange(rows, dtype=np.int64)),
            "customer": pa.array([f"cust-{c:04d}" for c in customers.tolist()]),
            "country": pa.array(rng.choice(COUNTRIES, rows, p=COUNTRY_SHARE)),
            # Whole cents / 100 is the nearest double to the decimal; the cast rounds to it.
            "amount": pa.array(cents / 100.0).cast(pa.decimal128(10, 2)),
            "grass_date": pa.array(epoch_day - late.astype(np.int32), pa.int32()).cast(pa.date32()),
        },
        schema=ORDERS_SCHEMA,
    )


def sales_for_day(day: dt.date, seed: int = DEFAULT_SEED) -> pa.Table:
    """The sales batch of ``day``: 1,200-1,800 sales of that day. Deterministic per (seed, day)."""
    index = _day_index(day)
    rng = np.random.default_rng([seed, index, 2])
    rows = int(rng.integers(1_200, 1_801))
    return pa.table(
        {
            "id": pa.array(index * 10_000 + np.arange(rows, dtype=np.int32), pa.int32()),
            "amount": pa.array(np.round(rng.lognormal(3.0, 0.8, rows), 2)),
            "sale_date": pa.array([day] * rows, pa.date32()),
        },
        schema=SALES_SCHEMA,
    )


# ---- terminal output ------------------------------------------------------------------------


class Out:
    """Prints to stdout, with ANSI styles only on a terminal (and never with NO_COLOR set)."""

    def __init__(self, *, color: bool):
        self.color = color

    @classmethod
    def for_stdout(cls) -> Out:
        tty = sys.stdout.isatty() and os.environ.get("TERM") != "dumb"
        return cls(color=tty and "NO_COLOR" not in os.environ)

    def _style(self, code: str, text: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.color and text else text

    def bold(self, text: str) -> str:
        return self._style("1", text)

    def dim(self, text: str) -> str:
        return self._style("2", text)

    def good(self, text: str) -> str:
        return self._style("32", text)

    def line(self, text: str = "") -> None:
        print(text, flush=True)

    def section(self, number: int, title: str, note: str = "") -> None:
        self.line()
        self.line(f"{self.bold(f'{number}. {title}')}{'  ' + self.dim(note) if note else ''}")

    def table(self, header: Sequence[str], rows: Sequence[Sequence[str]], *, left: int = 1) -> None:
        """An aligned table: the first ``left`` columns left-aligned, the others right-aligned."""
        widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]

        def fmt(cells: Sequence[str]) -> str:
            parts = [c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))]
            return "  " + "  ".join(parts).rstrip()

        self.line(self.dim(fmt(header)))
        for row in rows:
            self.line(fmt(row))


def _n(value: int) -> str:
    return f"{value:,}"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f}"


def _size(num_bytes: int) -> str:
    value = float(num_bytes)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:,.0f} {unit}" if unit == "B" else f"{value:,.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def _utc(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def _timed(fn: Callable[[], T]) -> tuple[T, float]:
    started = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - started


# ---- the pipeline ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Loaded:
    """One committed batch."""

    day: dt.date
    table: str
    snapshot: Snapshot


def open_catalog(warehouse: Path) -> icefloe.Catalog:
    """The embedded catalog in ``warehouse``: ``icefloe.load_catalog()``'s default with its type,
    uri and warehouse spelled out, so that a catalog configured as ``default`` in
    ``~/.icefloe.yaml`` or the environment cannot redirect the demo."""
    try:
        warehouse.mkdir(parents=True, exist_ok=True)
        probe = warehouse / ".icefloe-demo-probe"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise DemoError(f"cannot write to warehouse {warehouse}: {exc.strerror or exc}") from None
    return icefloe.load_catalog(
        "default", type="sql", uri=f"sqlite:///{warehouse / 'catalog.db'}", warehouse=str(warehouse)
    )


def _check_shape(table: icefloe.Table, name: str, partitioning: list[str]) -> None:
    columns = [(f.name, str(f.field_type)) for f in table.schema().fields]
    partitions = [f.name for f in table.spec().fields]
    if columns != EXPECTED_COLUMNS[name] or partitions != partitioning:
        raise DemoError(
            f"{name} exists but is not the demo's table (columns {', '.join(f'{n} {t}' for n, t in columns)}; "
            f"partitioned by {', '.join(partitions) or 'nothing'}): pass --fresh to recreate it, "
            "or --warehouse DIR to use another location"
        )


def _remove_empty_dirs(root: Path) -> None:
    """Drop the empty partition directories a purge leaves behind (files are already gone)."""
    if not root.is_dir():
        return
    for path in sorted(root.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        if path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    if not any(root.iterdir()):
        root.rmdir()


def _step(out: Out, verb: str, name: str, what: str, seconds: float) -> None:
    out.line(f"  {verb:8} {name:10} {what:52} {_ms(seconds):>6} ms")


def setup_tables(out: Out, catalog: icefloe.Catalog, *, fresh: bool) -> tuple[icefloe.Table, icefloe.Table]:
    out.section(1, "Tables")
    catalog.create_namespace_if_not_exists(NAMESPACE)
    tables = []
    for name, schema, partitioning, properties in (
        (ORDERS, ORDERS_SCHEMA, ORDERS_PARTITIONING, {}),
        (SALES, SALES_SCHEMA, SALES_PARTITIONING, SALES_PROPERTIES),
    ):
        started = time.perf_counter()
        if fresh and catalog.table_exists(name):
            location = catalog.load_table(name).location()
            catalog.drop_table(name, purge=True)
            if "://" not in location or location.startswith("file:"):
                _remove_empty_dirs(Path(location.removeprefix("file://").removeprefix("file:")))
            _step(out, "dropped", name, "--fresh: the table and its files", time.perf_counter() - started)
            started = time.perf_counter()
        if catalog.table_exists(name):
            table = catalog.load_table(name)
            _check_shape(table, name, partitioning)
            snapshot = table.current_snapshot()
            rows = int(snapshot.summary.get("total-records", "0")) if snapshot else 0
            what = f"{len(table.snapshots())} snapshots, {_n(rows)} rows"
            verb = "exists"
        else:
            table = catalog.create_table(name, schema, partition_by=partitioning, properties=properties)
            what = f"partitioned by {', '.join(partitioning)}"
            if properties:
                what += f"; zstd, owner={properties['owner']}"
            verb = "created"
        _step(out, verb, name, what, time.perf_counter() - started)
        tables.append(table)
    return tables[0], tables[1]


def last_day(table: icefloe.Table, column: str) -> dt.date | None:
    """The latest day in ``table``, from the partition values of its data files (no data read)."""
    position = next(i for i, f in enumerate(table.spec().fields) if f.name == column)
    days = [task.file.partition[position] for task in table.new_scan().plan_files()]
    days = [d for d in days if d is not None]
    return dt.date(1970, 1, 1) + dt.timedelta(days=max(days)) if days else None


def load_days(
    out: Out, orders: icefloe.Table, sales: icefloe.Table, days: list[dt.date], seed: int
) -> list[Loaded]:
    out.section(2, f"Load {len(days)} daily batches", f"{days[0]} .. {days[-1]}, seed {seed}")
    widths = (10, 9, 7, 5, 6)

    def show(cells: Sequence[str], *, header: bool = False) -> None:
        parts = [c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))]
        text = "  " + "  ".join(parts)
        out.line(out.dim(text) if header else text)

    show(["day", "table", "rows", "files", "ms"], header=True)
    loaded: list[Loaded] = []
    total_rows = total_files = 0
    total_s = 0.0
    for day in days:
        for table, make in ((orders, orders_for_day), (sales, sales_for_day)):
            batch = make(day, seed)
            started = time.perf_counter()
            snapshot = table.append(batch, snapshot_properties={DAY_KEY: day.isoformat()})
            seconds = time.perf_counter() - started
            if snapshot is None:  # only an empty batch commits nothing; ours never are
                raise DemoError(f"{table.identifier}: the batch of {day} committed no snapshot")
            files = int(snapshot.summary.get("added-data-files", "0"))
            show([day.isoformat(), table.identifier, _n(batch.num_rows), _n(files), _ms(seconds)])
            loaded.append(Loaded(day, table.identifier, snapshot))
            total_rows += batch.num_rows
            total_files += files
            total_s += seconds
    show(["total", "", _n(total_rows), _n(total_files), _ms(total_s)])
    return loaded


def query_with_pruning(out: Out, orders: icefloe.Table, since: dt.date) -> None:
    partition_filter = f"country = 'SG' AND grass_date >= '{since.isoformat()}'"
    where = f"{partition_filter} AND amount >= '100.00'"
    out.section(3, "Query with pruning", f'orders.new_scan().filter("{where}")')
    snapshot = orders.current_snapshot()
    total_files = int(snapshot.summary["total-data-files"]) if snapshot else 0
    # Planning the partition predicates alone shows what the column bounds prune on top.
    by_partition = len(orders.new_scan().filter(partition_filter).plan_files())
    scan = orders.new_scan().filter(where)
    tasks, plan_s = _timed(scan.plan_files)
    result, read_s = _timed(scan.to_arrow)
    in_files = sum(task.file.record_count for task in tasks)
    amount = pc.sum(result["amount"]).as_py() if result.num_rows else 0
    out.line(
        f"  planned {out.bold(f'{len(tasks)} of {total_files}')} data files: "
        f"{total_files - by_partition} pruned by partition values, "
        f"{by_partition - len(tasks)} by column bounds   {_ms(plan_s)} ms"
    )
    out.line(
        f"  read {_n(result.num_rows)} matching rows (of {_n(in_files)} in those files), "
        f"total amount {amount:,}   {_ms(read_s)} ms"
    )


def time_travel(out: Out, orders: icefloe.Table, loaded: list[Loaded]) -> None:
    ours = [entry for entry in loaded if entry.table == ORDERS]
    nth = min(TIME_TRAVEL_DAY, len(ours))
    target = ours[nth - 1]
    following = ours[nth] if len(ours) > nth else None
    out.section(4, "Time travel on db.orders", f"back to day {nth} of this run ({target.day})")
    rows: list[list[str]] = []

    def read(label: str, scan: TableScan) -> pa.Table:
        snapshot = scan.snapshot()
        data, seconds = _timed(scan.select("grass_date").to_arrow)
        latest = pc.max(data["grass_date"]).as_py() if data.num_rows else None
        rows.append(
            [
                label,
                str(snapshot.snapshot_id if snapshot else "-"),
                _n(data.num_rows),
                str(latest),
                _ms(seconds),
            ]
        )
        return data

    snap_id = target.snapshot.snapshot_id
    then = read(f"use_snapshot({snap_id})", orders.new_scan().use_snapshot(snap_id))
    # A moment between that commit and the next one to this table.
    moment_ms = target.snapshot.timestamp_ms
    if following is not None:
        moment_ms += (following.snapshot.timestamp_ms - moment_ms) // 2
    moment = dt.datetime.fromtimestamp(moment_ms / 1000, dt.UTC)
    as_of = orders.new_scan().as_of_time(moment)
    at = read(f"as_of_time({_utc(moment_ms)} UTC)", as_of)
    read("current snapshot", orders.new_scan())
    out.table(["scan", "reads snapshot", "rows", "latest grass_date", "ms"], rows, left=2)
    resolved = as_of.snapshot()
    if resolved is None or resolved.snapshot_id != snap_id or at.num_rows != then.num_rows:
        raise DemoError(f"as_of_time({moment}) did not read snapshot {snap_id}")


def counts_per_country(out: Out, orders: icefloe.Table) -> int:
    """Prints the pivot of the last days; returns the number of rows read."""
    out.section(5, "Orders per country per day", "to_arrow() + pyarrow group_by")
    data, seconds = _timed(lambda: orders.new_scan().select("grass_date", "country").to_arrow())
    counts = data.group_by(["grass_date", "country"]).aggregate([("country", "count")])
    days = sorted(set(counts["grass_date"].to_pylist()))
    countries = sorted(set(counts["country"].to_pylist()))
    cell = {
        (d, c): n
        for d, c, n in zip(
            counts["grass_date"].to_pylist(),
            counts["country"].to_pylist(),
            counts["country_count"].to_pylist(),
        )
    }
    shown = days[-SHOWN_DAYS:]
    rows = [
        [
            d.isoformat(),
            *(_n(cell.get((d, c), 0)) for c in countries),
            _n(sum(cell.get((d, c), 0) for c in countries)),
        ]
        for d in shown
    ]
    out.table(["grass_date", *countries, "total"], rows)
    note = f"{len(shown)} of {len(days)} days shown; " if len(shown) < len(days) else ""
    out.line(out.dim(f"  {note}{_n(data.num_rows)} rows read and grouped in {_ms(seconds)} ms"))
    return int(data.num_rows)


def history(out: Out, orders: icefloe.Table) -> None:
    entries = orders.history()
    out.section(6, "History of db.orders", f"{len(entries)} snapshots")
    rows = []
    for entry in entries[-SHOWN_HISTORY:]:
        snapshot = orders.snapshot(entry.snapshot_id)
        summary = snapshot.summary if snapshot else {}
        rows.append(
            [
                str(entry.snapshot_id),
                _utc(entry.timestamp_ms),
                summary.get("operation", "?"),
                summary.get(DAY_KEY, ""),
                _n(int(summary.get("added-records", "0"))),
                _n(int(summary.get("total-records", "0"))),
            ]
        )
    out.table(
        ["snapshot id", "committed (UTC)", "operation", "batch", "added records", "total records"],
        rows,
        left=4,
    )
    if len(entries) > SHOWN_HISTORY:
        out.line(out.dim(f"  ({len(entries) - SHOWN_HISTORY} earlier snapshots not shown)"))


def disk_usage(warehouse: Path, tables: Sequence[icefloe.Table]) -> dict[str, int]:
    """Bytes under the tables' data/ and metadata/ folders, and of the catalog database."""
    usage = {"data": 0, "metadata": 0, "catalog": 0}
    for table in tables:
        root = Path(table.location().removeprefix("file://").removeprefix("file:"))
        for kind in ("data", "metadata"):
            usage[kind] += sum(p.stat().st_size for p in (root / kind).rglob("*") if p.is_file())
    usage["catalog"] = sum(p.stat().st_size for p in warehouse.glob("catalog.db*") if p.is_file())
    return usage


def summary(
    out: Out, warehouse: Path, tables: Sequence[icefloe.Table], rows_read: int, started: float
) -> None:
    snapshots = sum(len(t.snapshots()) for t in tables)
    currents = [t.current_snapshot() for t in tables]
    files = sum(int(s.summary.get("total-data-files", "0")) for s in currents if s)
    rows = sum(int(s.summary.get("total-records", "0")) for s in currents if s)
    orders_rows = int(currents[0].summary.get("total-records", "0")) if currents[0] else 0
    if rows_read != orders_rows:
        raise DemoError(f"{ORDERS}: scanning read {rows_read} rows but its snapshot says {orders_rows}")
    usage = disk_usage(warehouse, tables)
    out.line()
    out.line(
        out.good(f"Done in {time.perf_counter() - started:.1f} s: ")
        + f"{len(tables)} tables, {snapshots} snapshots, {_n(files)} data files, {_n(rows)} rows, "
        f"{_size(sum(usage.values()))} on disk"
    )
    out.line(
        out.dim(
            f"  data {_size(usage['data'])}, metadata {_size(usage['metadata'])}, "
            f"catalog {_size(usage['catalog'])} in {_display(warehouse)}"
        )
    )


def _display(path: Path) -> str:
    try:
        return "./" + str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def run(warehouse: Path, *, fresh: bool, days: int, seed: int, out: Out) -> None:
    started = time.perf_counter()
    out.line(out.bold(f"icefloe {icefloe.__version__} demo"))
    out.line(f"  catalog  icefloe.load_catalog() -> SQLite {_display(warehouse / 'catalog.db')}")
    catalog = open_catalog(warehouse)
    try:
        orders, sales = setup_tables(out, catalog, fresh=fresh)
        latest = max(
            (d for d in (last_day(orders, "grass_date"), last_day(sales, "sale_date")) if d is not None),
            default=None,
        )
        first = FIRST_DAY if latest is None else latest + dt.timedelta(days=1)
        batch_days = [first + dt.timedelta(days=i) for i in range(days)]
        loaded = load_days(out, orders, sales, batch_days, seed)
        query_with_pruning(out, orders, since=batch_days[-3] if days >= 3 else batch_days[0])
        time_travel(out, orders, loaded)
        rows_read = counts_per_country(out, orders)
        history(out, orders)
        summary(out, warehouse, [orders, sales], rows_read, started)
    finally:
        # The facade has no close() yet; the SQL backend holds a connection pool.
        catalog.close()
    next_first = batch_days[-1] + dt.timedelta(days=1)
    out.line(
        out.dim(
            f"Run it again to append {next_first} .. {next_first + dt.timedelta(days=days - 1)}, "
            "or with --fresh to start over."
        )
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m icefloe.demo",
        description="A small pipeline on icefloe's embedded catalog: two partitioned tables, daily "
        "batches, a pruned query, time travel, aggregation and history. Re-running appends the "
        "next days; --fresh starts over.",
    )
    parser.add_argument(
        "--warehouse", type=Path, default=Path("warehouse"), help="warehouse folder (default: ./warehouse)"
    )
    parser.add_argument(
        "--fresh", action="store_true", help="drop db.orders and db.sales (and their files) first"
    )
    parser.add_argument("--days", type=int, default=DEFAULT_DAYS, help="daily batches to load (default: 7)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of the generated data")
    args = parser.parse_args(argv)
    if args.days < 1:
        parser.error("--days must be at least 1")
    out = Out.for_stdout()
    try:
        run(args.warehouse.expanduser().absolute(), fresh=args.fresh, days=args.days, seed=args.seed, out=out)
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, and keep Python's final flush quiet too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        print("demo: interrupted", file=sys.stderr)
        return 130
    except (DemoError, IcefloeError, OSError) as exc:
        print(f"demo: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
