"""Benchmark: scan planning, icefloe vs PyIceberg 0.12 vs Java Iceberg, and the decode floor.

Two day-partitioned tables with twelve ``long`` columns (and ``ts``) carrying full metrics
(``bench/_planning_tables.py``): *small*, 120 manifests x 25 files over 120 days (3,000 data
files), and *large*, 2,000 manifests x 100 files over a year (200,000 data files). Five
queries each: unfiltered, one day, seven days, a stats-only predicate (a range of the
ever-increasing ``c01`` covering about 1% of the files), and one day plus a stats predicate.

Per table and query, in the same run:

- **cold**: a fresh process each (imports done before the clock starts), timed from loading
  the table to the last planned task: icefloe (Hadoop catalog ``load_table`` +
  ``new_scan().filter(...).plan_files()``), PyIceberg (``StaticTable.from_metadata`` +
  ``scan(row_filter=...).plan_files()``, in the harness's PyIceberg environment), and the
  **decode floor**: fastavro decoding (``fastavro.reader``) the manifest list and every
  manifest the plan opens, nothing else. Each is run ``--repeat`` times, interleaved; the
  best time is kept.
- **warm**: the same processes plan again (``--warm`` times, best kept); icefloe's manifest
  cache is process-wide, PyIceberg has none for manifests.
- **java**: Java Iceberg 1.9.2 (the interop harness's engine): ``HadoopTables.load(location)``
  then ``newScan().filter(...).planFiles()`` collected into a list inside the JVM, timed with
  ``System.nanoTime`` around it; the first plan of the query and the best of the next ones.
- planned files must be the same set for icefloe and PyIceberg (a hash of the sorted paths)
  and the same count for Java; peak RSS of the icefloe and PyIceberg processes.

Usage, from the repository with the project venv::

    python bench/planning.py                       # both tables, all queries, Java included
    python bench/planning.py --sizes small --no-java --repeat 5
    python bench/planning.py --profile small:unfiltered   # cProfile one cold icefloe plan
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import hashlib
import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import fastavro  # noqa: E402
import pyarrow as pa  # noqa: E402
from _planning_tables import ID_STRIDE, START_DAY, BenchTable, TableParams, ensure_table  # noqa: E402
from _rss import peak_rss_mb  # noqa: E402
from appends import _load_engines_module, pyiceberg_python  # noqa: E402

import icefloe  # noqa: E402
import icefloe.scan  # noqa: E402
from icefloe.expressions import ManifestEvaluator, bind, parse  # noqa: E402
from icefloe.io import local_path  # noqa: E402
from icefloe.manifests import read_manifest_list  # noqa: E402
from icefloe.manifests._native import native_reader  # noqa: E402
from icefloe.spec.manifest import ManifestContent  # noqa: E402

PYICEBERG_SCRIPT = HERE / "_pyiceberg_plan.py"
SIZES = {
    "small": TableParams(manifests=120, files=25, days=120),
    "large": TableParams(manifests=2000, files=100, days=365),
}
QUERY_NAMES = ("unfiltered", "day", "week", "stats", "day+stats")


# ---- queries -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Term:
    column: str
    op: str  # ">=", "<", ">"
    value: int | str  # a long, or an ISO timestamp


@dataclass(frozen=True)
class Query:
    name: str
    terms: tuple[Term, ...]

    def text(self) -> str | None:
        """The filter as SQL text (icefloe's parser and PyIceberg's row filter both read it)."""
        if not self.terms:
            return None
        parts = [
            f"{t.column} {t.op} {repr(t.value) if isinstance(t.value, str) else t.value}" for t in self.terms
        ]
        return " AND ".join(parts)


def _ts(day: int) -> str:
    return (dt.datetime(1970, 1, 1) + dt.timedelta(days=day)).isoformat()


def queries(params: TableParams) -> dict[str, Query]:
    day = START_DAY + params.days // 2
    first = int(params.data_files * 0.4)
    last = first + max(1, params.data_files // 100)
    one_day = (Term("ts", ">=", _ts(day)), Term("ts", "<", _ts(day + 1)))
    return {
        "unfiltered": Query("unfiltered", ()),
        "day": Query("day", one_day),
        "week": Query("week", (Term("ts", ">=", _ts(day)), Term("ts", "<", _ts(day + 7)))),
        "stats": Query("stats", (Term("c01", ">=", first * ID_STRIDE), Term("c01", "<", last * ID_STRIDE))),
        "day+stats": Query("day+stats", (*one_day, Term("c05", ">", 1_500_000_000))),
    }


# ---- the child processes -------------------------------------------------------------------


def _rss_mb() -> float:
    return peak_rss_mb()


def _digest(paths: list[str]) -> str:
    return hashlib.sha1("\n".join(sorted(paths)).encode()).hexdigest()


def child_icefloe(args: argparse.Namespace) -> dict[str, Any]:
    properties = {}
    if args.cache_bytes is not None:
        properties["io.manifest.cache.max-total-bytes"] = str(args.cache_bytes)
    base = _rss_mb()
    started = time.perf_counter()
    catalog = icefloe.load_catalog("bench", type="hadoop", warehouse=args.warehouse, **properties)
    table = catalog.load_table("db.t")
    scan = table.new_scan()
    if args.filter:
        scan = scan.filter(args.filter)
    tasks = scan.plan_files()
    cold = time.perf_counter() - started
    peak_cold = _rss_mb()
    paths = [task.file.file_path for task in tasks]
    del tasks
    warm = []
    for _ in range(args.warm):
        started = time.perf_counter()
        scan = table.new_scan()
        if args.filter:
            scan = scan.filter(args.filter)
        again = scan.plan_files()
        warm.append(time.perf_counter() - started)
        del again
    return {
        "engine": "icefloe",
        "cold_s": cold,
        "warm_s": warm,
        "files": len(paths),
        "digest": _digest(paths),
        "rss_base_mb": base,
        "rss_peak_cold_mb": peak_cold,
        "rss_peak_mb": _rss_mb(),
    }


def opened_manifests(metadata_path: str, row_filter: str | None) -> tuple[str, list[str]]:
    """The manifest list and the manifests a plan opens: delete manifests and the data
    manifests the partition summaries do not rule out."""
    catalog_table = icefloe.load_catalog(
        "floor", type="hadoop", warehouse=str(Path(metadata_path).parents[3])
    )
    table = catalog_table.load_table("db.t")
    snapshot = table.current_snapshot()
    assert snapshot is not None and snapshot.manifest_list is not None
    manifests = read_manifest_list(table.io(), snapshot.manifest_list)
    schema = table.schema()
    specs = table.specs()
    bound = bind(schema, parse(row_filter)) if row_filter else None
    opened = []
    for m in manifests:
        if (
            m.content == ManifestContent.DATA
            and bound is not None
            and not ManifestEvaluator(specs[m.partition_spec_id], schema, bound).eval(m)
        ):
            continue
        opened.append(local_path(m.manifest_path))
    return local_path(snapshot.manifest_list), opened


def child_floor(args: argparse.Namespace) -> dict[str, Any]:
    manifest_list, manifests = opened_manifests(args.metadata, args.filter)
    records = 0
    started = time.perf_counter()
    for path in [manifest_list, *manifests]:
        with open(path, "rb") as stream:
            for _ in fastavro.reader(stream):
                records += 1
    seconds = time.perf_counter() - started
    return {"engine": "floor", "cold_s": seconds, "manifests": len(manifests), "records": records}


def child_native_floor(args: argparse.Namespace) -> dict[str, Any]:
    """The native decoder alone (polars-avro's arrow-avro reader, the one icefloe uses):
    each file decoded from its path into Arrow record batches, nothing else."""
    reader = native_reader()
    if reader is None:
        raise SystemExit("the native floor needs icefloe[fast] (polars-avro)")
    manifest_list, manifests = opened_manifests(args.metadata, args.filter)
    records = 0
    started = time.perf_counter()
    for path in [manifest_list, *manifests]:
        for batch in reader.AvroSource([path], False, False).batch_iter(1 << 30, None):
            records += pa.record_batch(batch).num_rows
    seconds = time.perf_counter() - started
    return {"engine": "native", "cold_s": seconds, "manifests": len(manifests), "records": records}


# ---- running the children ------------------------------------------------------------------


@dataclass
class Result:
    """The runs of one engine on one query: best cold, best warm, files, memory."""

    engine: str
    cold_s: list[float] = field(default_factory=list)
    warm_s: list[float] = field(default_factory=list)
    files: int | None = None
    digest: str | None = None
    rss_base_mb: float | None = None
    rss_peak_mb: float | None = None
    manifests: int | None = None

    def add(self, run: dict[str, Any]) -> None:
        self.cold_s.append(run["cold_s"])
        self.warm_s.extend(run.get("warm_s", []))
        for name in ("files", "digest", "manifests"):
            if name in run:
                value = run[name]
                previous = getattr(self, name)
                if previous is not None and previous != value:
                    raise SystemExit(f"{self.engine}: {name} changed between runs: {previous} != {value}")
                setattr(self, name, value)
        if "rss_peak_cold_mb" in run:
            self.rss_base_mb = run["rss_base_mb"]
            self.rss_peak_mb = max(self.rss_peak_mb or 0.0, run["rss_peak_cold_mb"])

    @property
    def cold(self) -> float | None:
        return min(self.cold_s) if self.cold_s else None

    @property
    def warm(self) -> float | None:
        return min(self.warm_s) if self.warm_s else None


def _idle_fraction(interval: float = 0.5) -> float:
    """The share of CPU time the machine spent idle over ``interval`` seconds (Linux)."""

    def sample() -> tuple[int, int]:
        with open("/proc/stat") as stat:
            ticks = [int(x) for x in stat.readline().split()[1:]]
        return ticks[3] + ticks[4], sum(ticks)

    idle0, total0 = sample()
    time.sleep(interval)
    idle1, total1 = sample()
    return (idle1 - idle0) / max(1, total1 - total0)


QUIET = {"waited_s": 0.0, "noisy_runs": 0}


def wait_quiet(threshold: float, timeout: float) -> None:
    """On a shared machine, wait (up to ``timeout`` s) until other work leaves the CPUs
    ``threshold`` idle, so that runs compare engines rather than neighbours."""
    if timeout <= 0 or not Path("/proc/stat").exists():
        return
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if _idle_fraction() >= threshold:
            QUIET["waited_s"] += time.monotonic() - started
            return
    QUIET["waited_s"] += time.monotonic() - started
    QUIET["noisy_runs"] += 1


def _run_json(cmd: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:3])} ... failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def run_icefloe_child(table: BenchTable, query: Query, warm: int, cache_bytes: int | None) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", "icefloe"]
    cmd += ["--warehouse", str(table.warehouse), "--metadata", str(table.metadata), "--warm", str(warm)]
    if query.text():
        cmd += ["--filter", query.text() or ""]
    if cache_bytes is not None:
        cmd += ["--cache-bytes", str(cache_bytes)]
    return _run_json(cmd)


def run_floor_child(table: BenchTable, query: Query) -> dict[str, Any]:
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        "floor",
        "--metadata",
        str(table.metadata),
    ]
    if query.text():
        cmd += ["--filter", query.text() or ""]
    return _run_json(cmd)


def run_native_floor_child(table: BenchTable, query: Query) -> dict[str, Any]:
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        "native",
        "--metadata",
        str(table.metadata),
    ]
    if query.text():
        cmd += ["--filter", query.text() or ""]
    return _run_json(cmd)


def run_pyiceberg_child(python: Path, table: BenchTable, query: Query, warm: int) -> dict[str, Any]:
    cmd = [str(python), str(PYICEBERG_SCRIPT), "--metadata", str(table.metadata), "--warm", str(warm)]
    if query.text():
        cmd += ["--filter", query.text() or ""]
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"}}
    return _run_json(cmd, env)


# ---- Java ----------------------------------------------------------------------------------

JAVA_PLAN = """
E = jvm.org.apache.iceberg.expressions.Expressions
Lists = jvm.org.apache.iceberg.relocated.com.google.common.collect.Lists
System = jvm.java.lang.System
tables = jvm.org.apache.iceberg.hadoop.HadoopTables(spark._jsc.hadoopConfiguration())

def build():
    expr = None
    for column, op, value in terms:
        name = {">=": "greaterThanOrEqual", "<": "lessThan", ">": "greaterThan"}[op]
        term = getattr(E, name)(column, value)
        expr = term if expr is None else getattr(E, "and")(expr, term)
    return expr

times = []
for i in range(repeats):
    started = System.nanoTime()
    table = tables.load(location)
    scan = table.newScan()
    expr = build()
    if expr is not None:
        scan = scan.filter(expr)
    tasks = Lists.newArrayList(scan.planFiles())
    times.append((System.nanoTime() - started) / 1e9)
count = tasks.size()
paths = None
if count <= path_limit:
    paths = sorted(str(tasks.get(k).file().location()) for k in range(count))
result = {"times": times, "count": count, "paths": paths}
"""


def run_java(engine: Any, table: BenchTable, query: Query, repeats: int) -> dict[str, Any]:
    terms = [[t.column, t.op, t.value] for t in query.terms]
    result: dict[str, Any] = engine.exec(
        JAVA_PLAN, location=str(table.location), terms=terms, repeats=repeats, path_limit=5000
    )
    return result


# ---- report --------------------------------------------------------------------------------


def _fmt_s(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds >= 10:
        return f"{seconds:.1f} s"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    return f"{seconds * 1000:.1f} ms"


def _ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}x" if a and b else "-"


def render(rows: list[dict[str, Any]]) -> str:
    header = [
        "table",
        "query",
        "files",
        "mfst",
        "floor",
        "native",
        "icefloe cold",
        "/floor",
        "/native",
        "pyiceberg cold",
        "pyi/ice",
        "java 1st",
        "icefloe warm",
        "pyiceberg warm",
        "pyi/ice",
        "java best",
        "ice MB",
        "pyi MB",
    ]
    lines = []
    for r in rows:
        ice, pyi, floor, java = r["icefloe"], r["pyiceberg"], r["floor"], r.get("java")
        native = r.get("native")
        java_times = java["times"] if java else []
        lines.append(
            [
                r["table"],
                r["query"],
                f"{ice.files:,}",
                str(floor.manifests),
                _fmt_s(floor.cold),
                _fmt_s(native.cold) if native else "-",
                _fmt_s(ice.cold),
                _ratio(ice.cold, floor.cold),
                _ratio(ice.cold, native.cold) if native else "-",
                _fmt_s(pyi.cold) if pyi else "-",
                _ratio(pyi.cold, ice.cold) if pyi else "-",
                _fmt_s(java_times[0]) if java_times else "-",
                _fmt_s(ice.warm),
                _fmt_s(pyi.warm) if pyi else "-",
                _ratio(pyi.warm, ice.warm) if pyi else "-",
                _fmt_s(min(java_times[1:])) if len(java_times) > 1 else "-",
                f"{ice.rss_peak_mb:.0f}",
                f"{pyi.rss_peak_mb:.0f}" if pyi and pyi.rss_peak_mb else "-",
            ]
        )
    widths = [max(len(row[i]) for row in [header, *lines]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        first = [cells[0].ljust(widths[0]), cells[1].ljust(widths[1])]
        rest = [c.rjust(w) for c, w in zip(cells[2:], widths[2:])]
        return "  ".join(first + rest)

    out = [line(header), "  ".join("-" * w for w in widths)]
    previous = None
    for row in lines:
        if previous is not None and row[0] != previous:
            out.append("")
        previous = row[0]
        out.append(line(row))
    return "\n".join(out)


# ---- main ----------------------------------------------------------------------------------


def _pyiceberg_version(python: Path) -> str:
    code = "import pyiceberg; print(pyiceberg.__version__)"
    proc = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=False)
    return proc.stdout.strip() or "?"


def profile_one(spec: str, cache_bytes: int | None) -> None:
    import cProfile
    import pstats

    size, query_name = spec.split(":")
    table = ensure_table(SIZES[size])
    query = queries(SIZES[size])[query_name]
    catalog = icefloe.load_catalog("bench", type="hadoop", warehouse=str(table.warehouse))
    profile = cProfile.Profile()
    profile.enable()
    scan = catalog.load_table("db.t").new_scan()
    if query.text():
        scan = scan.filter(query.text() or "")
    tasks = scan.plan_files()
    profile.disable()
    print(f"{len(tasks):,} tasks")
    pstats.Stats(profile).sort_stats(os.environ.get("SORT", "tottime")).print_stats(
        int(os.environ.get("TOPN", "30"))
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="scan planning: icefloe vs PyIceberg vs Java")
    parser.add_argument("--sizes", default="small,large", help="comma-separated: small, large")
    parser.add_argument("--queries", default=",".join(QUERY_NAMES))
    parser.add_argument("--repeat", type=int, default=3, help="cold runs per engine and query")
    parser.add_argument("--repeat-large", type=int, default=2, help="cold runs on the large table")
    parser.add_argument("--warm", type=int, default=3, help="warm plans per cold process")
    parser.add_argument("--no-java", action="store_true")
    parser.add_argument("--no-pyiceberg", action="store_true")

    parser.add_argument("--pyiceberg-python", help="interpreter with pyiceberg 0.12 (default: the harness's)")
    parser.add_argument("--cache-bytes", type=int, default=None, help="io.manifest.cache.max-total-bytes")
    parser.add_argument("--json", type=Path, help="also write every run to this JSON file")
    parser.add_argument(
        "--quiet",
        type=float,
        default=0.9,
        help="idle CPU share to wait for before each run (shared machines)",
    )
    parser.add_argument(
        "--quiet-wait", type=float, default=30.0, help="longest wait for it, seconds (0: never)"
    )
    parser.add_argument("--profile", help="SIZE:QUERY: cProfile one cold icefloe plan and stop")
    parser.add_argument("--child", choices=["icefloe", "floor", "native"], help=argparse.SUPPRESS)
    parser.add_argument("--warehouse", help=argparse.SUPPRESS)
    parser.add_argument("--metadata", help=argparse.SUPPRESS)
    parser.add_argument("--filter", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child == "icefloe":
        print(json.dumps(child_icefloe(args)))
        return 0
    if args.child == "floor":
        print(json.dumps(child_floor(args)))
        return 0
    if args.child == "native":
        print(json.dumps(child_native_floor(args)))
        return 0
    if args.profile:
        profile_one(args.profile, args.cache_bytes)
        return 0

    native = native_reader() is not None
    sizes = [s for s in args.sizes.split(",") if s]
    names = [q for q in args.queries.split(",") if q]
    python = None if args.no_pyiceberg else pyiceberg_python(args.pyiceberg_python)
    print(
        f"icefloe {icefloe.__version__}"
        + ("" if python is None else f" vs PyIceberg {_pyiceberg_version(python)}")
        + f"; python {platform.python_version()}, fastavro {fastavro.__version__}, {os.cpu_count()} cpus",
        flush=True,
    )
    tables = {size: ensure_table(SIZES[size]) for size in sizes}
    rows: list[dict[str, Any]] = []
    for size in sizes:
        table = tables[size]
        repeat = args.repeat if size == "small" else args.repeat_large
        all_queries = queries(SIZES[size])
        for name in names:
            query = all_queries[name]
            row: dict[str, Any] = {
                "size": size,
                "table": f"{size} ({SIZES[size].data_files:,} files)",
                "query": name,
                "filter": query.text(),
                "icefloe": Result("icefloe"),
                "pyiceberg": None if python is None else Result("pyiceberg"),
                "floor": Result("floor"),
                "native": Result("native") if native else None,
            }
            print(f"  {size} {name}: ", end="", flush=True)
            for _ in range(repeat):
                wait_quiet(args.quiet, args.quiet_wait)
                row["floor"].add(run_floor_child(table, query))
                if native:
                    wait_quiet(args.quiet, args.quiet_wait)
                    row["native"].add(run_native_floor_child(table, query))
                wait_quiet(args.quiet, args.quiet_wait)
                row["icefloe"].add(run_icefloe_child(table, query, args.warm, args.cache_bytes))

                if python is not None:
                    wait_quiet(args.quiet, args.quiet_wait)
                    row["pyiceberg"].add(run_pyiceberg_child(python, table, query, args.warm))
                print(".", end="", flush=True)
            ice, pyi = row["icefloe"], row["pyiceberg"]
            if pyi is not None and (ice.files, ice.digest) != (pyi.files, pyi.digest):
                raise SystemExit(
                    f"{size} {name}: icefloe planned {ice.files} files, PyIceberg {pyi.files} "
                    f"(digests {ice.digest} / {pyi.digest})"
                )
            print(f" {ice.files:,} files", flush=True)
            rows.append(row)
    if not args.no_java:
        # After the Python runs: the JVM keeps compiling and collecting in the background.
        engines = _load_engines_module()
        print("  java engine: starting ...", end="", flush=True)
        java = engines.start_engine("java")
        try:
            for row in rows:
                query = queries(SIZES[row["size"]])[row["query"]]
                wait_quiet(args.quiet, args.quiet_wait)
                row["java"] = java_row = run_java(java, tables[row["size"]], query, 1 + max(args.warm, 3))
                ice = row["icefloe"]
                if java_row["count"] != ice.files or (
                    java_row["paths"] is not None and _digest(java_row["paths"]) != ice.digest
                ):
                    raise SystemExit(
                        f"{row['table']} {row['query']}: Java planned {java_row['count']} files, icefloe {ice.files}"
                    )
                print(".", end="", flush=True)
        finally:
            java.close()
        print(" done", flush=True)

    print()
    print(render(rows))
    if args.quiet_wait > 0:
        print(
            f"\nwaited {QUIET['waited_s']:.0f} s in all for idle CPUs (>= {args.quiet:.0%});"
            f" {QUIET['noisy_runs']} runs started without them"
        )
    print(
        "\nfloor: fastavro decoding the manifest list and the manifests the plan opens (mfst);"
        " native: the native decoder (arrow-avro) decoding the same, nothing else;\n/floor, /native:"
        " icefloe cold / that floor; pyi/ice: PyIceberg / icefloe (above 1: icefloe is faster);"
        " MB: peak RSS of the cold process (imports included);\njava: first plan in the JVM and"
        " the best of the next ones (no manifest cache; JIT warm)."
    )
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)

        def plain(value: Any) -> Any:
            return dataclasses.asdict(value) if isinstance(value, Result) else value

        args.json.write_text(json.dumps([{k: plain(v) for k, v in r.items()} for r in rows], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
