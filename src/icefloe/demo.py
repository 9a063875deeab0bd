"""``python -m icefloe.demo`` (``./dev demo``): a real pipeline on the embedded catalog, in Spark.

What it does, one numbered section each, a timed line per step:

1. opens the embedded catalog (SQLite in ``./warehouse``; ``--warehouse`` moves it) and creates
   ``db.orders`` (partitioned by country and grass_date; row-level changes merge-on-read) and
   ``db.sales`` (partitioned by sale_date, zstd Parquet, an ``owner``) unless they exist;
2. starts Spark in local mode (``icefloe.spark.local_session``, ``--master``, default
   ``local[2]``), its console progress bar off and its log at ERROR;
3. appends daily batches of generated orders and sales (DataFrames generated in Spark from a
   fixed seed, ``isp.write``), one snapshot per table and day;
4. re-loads one day of sales as restated by the source (``mode="overwrite-partitions"``);
5. merges late corrections into the orders (``isp.merge_into``: update + insert);
6. deletes the QA team's test orders (``isp.delete``);
7. adds a ``channel`` column to db.orders (``update_schema()``) and loads the last day with it;
8. time-travels to db.orders after the daily loads (``isp.read`` by ``snapshot_id`` and
   ``as_of``) next to the current rows;
9. compacts both tables (``isp.actions.rewrite_data_files``), folding the deletes away;
10. prints the history of db.orders;
11. expires old snapshots and their files (``isp.actions.expire_snapshots``);

and ends with a summary (tables, snapshots, data files, rows, bytes on disk, time).

Re-running it continues the pipeline with the days after the last day in the tables (days 8-14,
then 15-21, ...). ``--fresh`` drops both tables (with their files) first and starts again at
2024-01-01.

The demo always uses the embedded SQLite catalog, which is what ``icefloe.load_catalog()``
returns when nothing is configured. It never opens a catalog configured in ``~/.icefloe.yaml``
or the environment, so ``--fresh`` cannot drop tables anywhere else.

Expected problems (a warehouse that cannot be written, tables of the same name but another
shape, no PySpark or Java, a failed commit) end with a one-line message and exit status 1, not
a traceback. Colours are used only when standard output is a terminal and ``NO_COLOR`` is unset.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import importlib.util
import os
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

import icefloe
from icefloe._demo import data
from icefloe._demo.data import FIRST_DAY, ORDERS, SALES
from icefloe._demo.output import DemoError, Out, n, size
from icefloe.errors import IcefloeError

__all__ = ["FIRST_DAY", "ORDERS", "SALES", "main"]

DEFAULT_DAYS = 7
DEFAULT_MASTER = "local[2]"


# ---- catalog and tables ---------------------------------------------------------------------


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
    expected = data.EXPECTED_COLUMNS[name]
    allowed = [expected, [*expected, data.CHANNEL]] if name == ORDERS else [expected]
    if columns not in allowed or partitions != partitioning:
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


def setup_tables(
    out: Out, catalog: icefloe.Catalog, warehouse: Path, *, fresh: bool
) -> tuple[icefloe.Table, icefloe.Table]:
    out.section(
        1, "Catalog and tables", f"icefloe.load_catalog() -> SQLite {_display(warehouse / 'catalog.db')}"
    )
    catalog.create_namespace_if_not_exists(data.NAMESPACE)
    tables = []
    for name, schema, partitioning, properties in (
        (ORDERS, data.ORDERS_SCHEMA, data.ORDERS_PARTITIONING, data.ORDERS_PROPERTIES),
        (SALES, data.SALES_SCHEMA, data.SALES_PARTITIONING, data.SALES_PROPERTIES),
    ):
        if fresh and catalog.table_exists(name):
            with out.step("dropped", name) as step:
                location = catalog.load_table(name).location()
                catalog.drop_table(name, purge=True)
                if "://" not in location or location.startswith("file:"):
                    _remove_empty_dirs(Path(location.removeprefix("file://").removeprefix("file:")))
                step.what = "--fresh: the table and its files"
        exists = catalog.table_exists(name)
        with out.step("exists" if exists else "created", name) as step:
            if exists:
                table = catalog.load_table(name)
                _check_shape(table, name, partitioning)
                missing = {k: v for k, v in properties.items() if table.properties().get(k) != v}
                if missing:  # a table of an earlier demo: row-level changes as this one expects
                    update = table.update_properties()
                    for key, value in missing.items():
                        update = update.set(key, value)
                    update.commit()
                snapshot = table.current_snapshot()
                step.what = f"{len(table.snapshots())} snapshots, {n(int(snapshot.summary.get('total-records', '0')) if snapshot else 0)} rows"
            else:
                table = catalog.create_table(name, schema, partition_by=partitioning, properties=properties)
                step.what = f"partitioned by {', '.join(partitioning)}"
                if name == SALES:
                    step.what += f"; zstd, owner={properties['owner']}"
                else:
                    step.what += "; merge-on-read"
        tables.append(table)
    return tables[0], tables[1]


def last_day(table: icefloe.Table, column: str) -> dt.date | None:
    """The latest day in ``table``, from the partition values of its data files (no data read)."""
    position = next(i for i, f in enumerate(table.spec().fields) if f.name == column)
    days = [task.file.partition[position] for task in table.new_scan().plan_files()]
    days = [d for d in days if d is not None]
    return dt.date(1970, 1, 1) + dt.timedelta(days=max(days)) if days else None


# ---- the run --------------------------------------------------------------------------------


def disk_usage(warehouse: Path, tables: Sequence[icefloe.Table]) -> dict[str, int]:
    """Bytes under the tables' data/ and metadata/ folders, and of the catalog database."""
    usage = {"data": 0, "metadata": 0, "catalog": 0}
    for table in tables:
        root = Path(table.location().removeprefix("file://").removeprefix("file:"))
        for kind in ("data", "metadata"):
            usage[kind] += sum(p.stat().st_size for p in (root / kind).rglob("*") if p.is_file())
    usage["catalog"] = sum(p.stat().st_size for p in warehouse.glob("catalog.db*") if p.is_file())
    return usage


def summary(out: Out, warehouse: Path, tables: Sequence[icefloe.Table], started: float) -> None:
    snapshots = sum(len(t.snapshots()) for t in tables)
    currents = [t.current_snapshot() for t in tables]
    files = sum(int(s.summary.get("total-data-files", "0")) for s in currents if s)
    rows = sum(int(s.summary.get("total-records", "0")) for s in currents if s)
    usage = disk_usage(warehouse, tables)
    out.line()
    out.line(
        out.good(f"Done in {time.perf_counter() - started:.1f} s: ")
        + f"{len(tables)} tables, {snapshots} snapshots, {n(files)} data files, {n(rows)} rows, "
        f"{size(sum(usage.values()))} on disk"
    )
    out.line(
        out.dim(
            f"  data {size(usage['data'])}, metadata {size(usage['metadata'])}, "
            f"catalog {size(usage['catalog'])} in {_display(warehouse)}"
        )
    )


def _display(path: Path) -> str:
    try:
        return "./" + str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _first_line(exc: BaseException) -> str:
    java = getattr(exc, "java_exception", None)  # py4j's error: the JVM's exception tells what failed
    text = str(java.toString() if java is not None else exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def run(
    warehouse: Path, *, fresh: bool, days: int, seed: int, master: str, out: Out, connect: bool = False
) -> None:
    started = time.perf_counter()
    out.line(out.bold(f"icefloe {icefloe.__version__} demo"))
    if importlib.util.find_spec("pyspark") is None:
        raise DemoError("the demo runs on Spark: install PySpark 4 (pip install 'pyspark>=4.0') and Java 17")
    # Imported here: PySpark is an optional dependency of icefloe.
    from icefloe._demo.session import quiet_session
    from icefloe._demo.steps import Run

    catalog = open_catalog(warehouse)
    try:
        orders, sales = setup_tables(out, catalog, warehouse, fresh=fresh)
        latest = max(
            (d for d in (last_day(orders, "grass_date"), last_day(sales, "sale_date")) if d is not None),
            default=None,
        )
        first = FIRST_DAY if latest is None else latest + dt.timedelta(days=1)
        batch_days = [first + dt.timedelta(days=i) for i in range(days)]

        how = f"{master!r}, connect=True" if connect else repr(master)
        out.section(2, "Spark", f"icefloe.spark.local_session({how})")
        with contextlib.ExitStack() as stack:
            with out.step("started", "Spark") as step:
                try:
                    spark, created = stack.enter_context(quiet_session(master, connect=connect))
                except DemoError:
                    raise
                except Exception as exc:  # no Java, a bad master: PySpark's own errors, many kinds
                    raise DemoError(f"cannot start Spark on {master}: {_first_line(exc)}") from None
                where = f"Spark Connect ({master})" if connect else spark.sparkContext.master
                step.what = f"{spark.version} on {where}" + (
                    "" if created else " (the session already active in this process)"
                )
            pipeline = Run(out, spark, orders, sales, seed)
            loads = batch_days[:-1]
            out.section(
                3,
                f"Load {len(loads)} daily batch{'es' if len(loads) > 1 else ''}",
                f"{loads[0]} .. {loads[-1]}, seed {seed}",
            )
            pipeline.load(loads)
            pipeline.loaded = orders.current_snapshot()
            out.section(4, "Partition overwrite", "a day of sales restated by the source")
            pipeline.restate(loads[1] if len(loads) > 1 else loads[0])
            out.section(5, "MERGE late corrections", "update matched orders, insert the missing ones")
            pipeline.merge_corrections(loads[:3])
            out.section(6, "DELETE", "the QA team's test orders")
            pipeline.delete_test_orders()
            out.section(7, "Schema change", f"a new column, then the batch of {batch_days[-1]} uses it")
            pipeline.add_channel(batch_days[-1])
            out.section(8, "Time travel on db.orders", "back to the end of the daily loads")
            pipeline.time_travel()
            out.section(9, "Compaction", "isp.actions.rewrite_data_files")
            pipeline.compact()
            out.section(10, "History of db.orders", f"{len(orders.history())} snapshots")
            pipeline.history()
            out.section(11, "Snapshot expiry", "isp.actions.expire_snapshots")
            pipeline.expire()
        summary(out, warehouse, [orders, sales], started)
    finally:
        # The facade has no close() yet; the SQL backend holds a connection pool.
        catalog.close()
    next_first = batch_days[-1] + dt.timedelta(days=1)
    out.line(
        out.dim(
            f"Run it again to continue with {next_first} .. {next_first + dt.timedelta(days=days - 1)}, "
            "or with --fresh to start over."
        )
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m icefloe.demo",
        description="A pipeline on icefloe's embedded catalog, in Spark: daily batches, a partition "
        "overwrite, MERGE, DELETE, a schema change, time travel, compaction and snapshot expiry. "
        "Re-running continues with the next days; --fresh starts over.",
    )
    parser.add_argument(
        "--warehouse", type=Path, default=Path("warehouse"), help="warehouse folder (default: ./warehouse)"
    )
    parser.add_argument(
        "--fresh", action="store_true", help="drop db.orders and db.sales (and their files) first"
    )
    parser.add_argument(
        "--days", type=int, default=DEFAULT_DAYS, help="daily batches per run (default: 7; at least 2)"
    )
    parser.add_argument("--seed", type=int, default=data.DEFAULT_SEED, help="seed of the generated data")
    parser.add_argument("--master", default=DEFAULT_MASTER, help=f"Spark master (default: {DEFAULT_MASTER})")
    parser.add_argument(
        "--connect",
        action="store_true",
        help="run on Spark Connect (a local Connect server on --master; PySpark's connect extra)",
    )
    args = parser.parse_args(argv)
    if args.days < 2:
        parser.error("--days must be at least 2 (the last day comes after the schema change)")
    out = Out.for_stdout()
    try:
        with warnings.catch_warnings():
            # PySpark 4 warns about pandas 3 whenever it checks pandas; the demo passes Arrow.
            warnings.filterwarnings("ignore", "PySpark does not yet fully support pandas", FutureWarning)
            run(
                args.warehouse.expanduser().absolute(),
                fresh=args.fresh,
                days=args.days,
                seed=args.seed,
                master=args.master,
                out=out,
                connect=args.connect,
            )
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, and keep Python's final flush quiet too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        print("demo: interrupted", file=sys.stderr)
        return 130
    except (DemoError, IcefloeError, OSError) as exc:
        print(f"demo: {_first_line(exc)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
