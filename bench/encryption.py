"""Benchmark: writing and reading an encrypted table against a plaintext one, in Python and on Spark.

The same rows (``--size-gb`` GiB of Parquet, default 2, generated from a fixed seed) go into two
tables of one SQL catalog, one with ``encryption.key-id`` (format v3, the local KMS) and one
without (format v3), and are read back whole:

- **Python**: ``table.append(reader)`` of a stream of Arrow batches (icefloe's Parquet writer;
  the encrypted table writes each file with its own key, Parquet modular encryption, and its
  manifests as AES GCM streams), then ``table.scan().to_batches()`` consumed to the end with a
  sum over every column (a full read: every page decrypted and decoded).
- **Spark**: ``isp.write(df, table)`` of ``spark.range(N)`` plus expressions (the plaintext table
  is written by Spark's own Parquet writer, the encrypted one by icefloe's writer in the tasks:
  Spark's writer cannot take a key per file), then ``isp.read(spark, table)`` with
  ``count(*), sum(hash(*))`` over every column (Spark's Parquet reader for the plaintext table,
  icefloe's reader in the tasks for the encrypted one).

Fairness: both tables have the same properties but the key (format v3, the same codec, and the
same row group target: ``write.parquet.row-group-limit`` is lifted so that icefloe's writer, like
Spark's, cuts row groups at ``write.parquet.row-group-size-bytes`` rather than at PyIceberg's
1 Mi rows), the same Spark session and settings read and write both, and each write's files
(count, row groups, bytes) are printed. The plaintext Spark paths are what a user gets: Spark's
own Parquet writer and reader.

Each measurement runs ``--repeat`` times, plaintext and encrypted interleaved (their order swapped
every repetition), each write into a fresh table; the best and median times and the ratio
encrypted / plaintext are printed (target: within 1.3x). Before each run the bench waits (up to
``--quiet-wait`` s) for idle CPUs and prints the load average it saw. On a shared machine the
wall times depend on the neighbours, so the CPU seconds the run used are printed too (this
process and all its children: Spark's JVM and its Python workers), with their ratio: on a
machine whose cores are all busy, that ratio is what the wall-time ratio tends to.

Usage, from the repository with the project venv::

    python bench/encryption.py                    # 2 GiB, Python and Spark
    python bench/encryption.py --size-gb 0.2      # to try it out
    python bench/encryption.py --only python --repeat 3
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
from planning import QUIET, wait_quiet  # noqa: E402

import icefloe  # noqa: E402
from icefloe import spark as isp  # noqa: E402

BYTES_PER_ROW = 26  # on-disk bytes of one generated row (zstd), measured: sizes the tables
BATCH_ROWS = 1 << 20
KEY_ID = "bench-key"
# Row groups cut by size only (see the module docstring), on both tables.
ROW_GROUP_ROWS = str(1 << 30)
SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("user_id", pa.int64()),
        ("amount", pa.float64()),
        ("qty", pa.int32()),
        ("country", pa.string()),
        ("note", pa.string()),
        ("ts", pa.timestamp("us", tz="UTC")),
    ]
)
# The same columns on Spark, from spark.range's id ({n}: the row count).
SPARK_COLUMNS = [
    "id",
    "cast(rand(1) * 9000000000000000000 as bigint) AS user_id",
    "rand(2) * 1000 AS amount",
    "cast(rand(3) * 100 as int) AS qty",
    "concat('c', cast(cast(rand(4) * 200 as int) as string)) AS country",
    "concat('n', cast(cast(rand(5) * 100000 as int) as string)) AS note",
    "timestamp_micros(1704067200000000 + id * 1000 + cast(rand(6) * 1000 as bigint)) AS ts",
]
SPARK_READ = ["count(*)", "sum(hash(*))"]


def batches(rows: int, seed: int = 7) -> Iterator[pa.RecordBatch]:
    """``rows`` rows of SCHEMA, mostly random (Parquet stays about as large as the data)."""
    rng = np.random.default_rng(seed)
    countries = pa.array([f"c{i}" for i in range(200)])
    notes = pa.array([f"n{i}" for i in range(100_000)])
    for start in range(0, rows, BATCH_ROWS):
        count = min(BATCH_ROWS, rows - start)
        ids = np.arange(start, start + count, dtype=np.int64)
        yield pa.RecordBatch.from_arrays(
            [
                pa.array(ids),
                pa.array(rng.integers(0, 2**62, count, dtype=np.int64)),
                pa.array(rng.random(count) * 1000),
                pa.array(rng.integers(0, 100, count, dtype=np.int32)),
                countries.take(pa.array(rng.integers(0, 200, count))),
                notes.take(pa.array(rng.integers(0, 100_000, count))),
                pa.array(1_704_067_200_000_000 + ids * 1000, pa.timestamp("us", tz="UTC")),
            ],
            schema=SCHEMA,
        )


def tree_cpu_seconds() -> float:
    """CPU seconds used so far by this process and its descendants, live ones (Spark's JVM,
    its Python workers) included, and children they have reaped (Linux; 0 elsewhere)."""
    proc = Path("/proc")
    if not proc.exists():
        return 0.0
    tick = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    times: dict[int, int] = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        pid = int(entry.name)
        children.setdefault(int(fields[1]), []).append(pid)
        times[pid] = sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    total, stack = 0, [os.getpid()]
    while stack:
        pid = stack.pop()
        total += times.get(pid, 0)
        stack.extend(children.get(pid, ()))
    return total / tick


@dataclass
class Runs:
    seconds: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    loads: list[float] = field(default_factory=list)
    result: Any = None

    def add(self, seconds: float, cpu: float, result: Any) -> None:
        self.seconds.append(seconds)
        self.cpu.append(cpu)
        self.loads.append(os.getloadavg()[0])
        self.result = result

    @property
    def best(self) -> float:
        return min(self.seconds)

    @property
    def best_cpu(self) -> float:
        return min(self.cpu)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


@dataclass
class Bench:
    root: Path
    size_gb: float
    repeat: int
    quiet: float
    quiet_wait: float
    cases: dict[str, dict[str, Runs]] = field(default_factory=dict)
    catalog: Any = None
    tables: dict[str, Any] = field(default_factory=dict)  # variant -> the last table written

    @property
    def rows(self) -> int:
        return int(self.size_gb * (1 << 30) / BYTES_PER_ROW)

    def open_catalog(self) -> None:
        keys = self.root / "keys.json"
        keys.write_text(json.dumps({KEY_ID: base64.b64encode(os.urandom(32)).decode()}))
        self.catalog = icefloe.load_catalog(
            "bench",
            type="sql",
            uri=f"sqlite:///{self.root / 'catalog.db'}",
            warehouse=str(self.root / "warehouse"),
            **{"encryption.kms-type": "local", "encryption.kms.local.keys-file": str(keys)},
        )
        self.catalog.create_namespace_if_not_exists("db")

    def fresh_table(self, name: str, variant: str) -> Any:
        identifier = f"db.{name}_{variant}"
        if self.catalog.table_exists(identifier):
            self.catalog.drop_table(identifier, purge=True)
        properties = {"format-version": "3", "write.parquet.row-group-limit": ROW_GROUP_ROWS}
        if variant == "encrypted":
            properties["encryption.key-id"] = KEY_ID
        return self.catalog.create_table(identifier, SCHEMA, properties=properties)

    def measure(self, case: str, variant: str, run: Callable[[], Any]) -> None:
        wait_quiet(self.quiet, self.quiet_wait)
        cpu_before = tree_cpu_seconds()
        started = time.perf_counter()
        result = run()
        seconds = time.perf_counter() - started
        cpu = tree_cpu_seconds() - cpu_before
        self.cases.setdefault(case, {}).setdefault(variant, Runs()).add(seconds, cpu, result)
        print(
            f"  {case:14s} {variant:10s} {seconds:8.1f} s  cpu {cpu:7.1f} s  (load {os.getloadavg()[0]:.1f})",
            flush=True,
        )


@dataclass(frozen=True)
class Written:
    """The files one write made."""

    files: int
    row_groups: int
    size: int

    def __str__(self) -> str:
        return f"{self.files} files, {self.row_groups} row groups, {self.size / (1 << 20):.0f} MiB"


def written(table: Any) -> Written:
    files = list(table.current_snapshot().added_data_files(table.io()))
    return Written(
        len(files),
        sum(len(f.split_offsets or [0]) for f in files),
        sum(f.file_size_in_bytes for f in files),
    )


VARIANTS = ("plaintext", "encrypted")


def order(rep: int) -> tuple[str, ...]:
    return VARIANTS if rep % 2 == 0 else VARIANTS[::-1]


def python_cases(bench: Bench) -> None:
    rows = bench.rows

    def write(variant: str) -> Callable[[], Any]:
        def run() -> Any:
            table = bench.fresh_table("py", variant)
            reader = pa.RecordBatchReader.from_batches(SCHEMA, batches(rows))
            table.append(reader)
            bench.tables[f"py-{variant}"] = table
            return written(table)

        return run

    def read(variant: str) -> Callable[[], Any]:
        def run() -> Any:
            table = bench.catalog.load_table(f"db.py_{variant}")
            count, total = 0, 0.0
            for batch in table.scan().to_batches():
                count += batch.num_rows
                total += pc.sum(batch.column("amount")).as_py() + pc.sum(batch.column("qty")).as_py()
                total += sum(pc.sum(pc.utf8_length(batch.column(c))).as_py() for c in ("country", "note"))
                total += (pc.sum(batch.column("user_id")).as_py() or 0) % 1000 + pc.max(
                    batch.column("ts")
                ).value
            return (count, round(total, 3))

        return run

    for rep in range(bench.repeat):
        for variant in order(rep):
            bench.measure("python-write", variant, write(variant))
    for rep in range(bench.repeat):
        for variant in order(rep):
            bench.measure("python-read", variant, read(variant))


def spark_cases(bench: Bench) -> None:
    spark = isp.local_session(config={"spark.ui.showConsoleProgress": "false"})
    spark.sparkContext.setLogLevel("ERROR")
    rows = bench.rows
    partitions = max(2, int(bench.size_gb * 8))

    def write(variant: str) -> Callable[[], Any]:
        def run() -> Any:
            table = bench.fresh_table("spark", variant)
            frame = spark.range(0, rows, 1, partitions).selectExpr(*SPARK_COLUMNS)
            isp.write(frame, table)
            return written(table)

        return run

    def read(variant: str) -> Callable[[], Any]:
        def run() -> Any:
            table = bench.catalog.load_table(f"db.spark_{variant}")
            return [tuple(r) for r in isp.read(spark, table).selectExpr(*SPARK_READ).collect()]

        return run

    for rep in range(bench.repeat):
        for variant in order(rep):
            bench.measure("spark-write", variant, write(variant))
    for rep in range(bench.repeat):
        for variant in order(rep):
            bench.measure("spark-read", variant, read(variant))
    spark.stop()


def report(bench: Bench) -> dict[str, Any]:
    print(
        f"\n{'case':14s} {'plaintext best':>15s} {'encrypted best':>15s} {'ratio best':>11s} "
        f"{'ratio median':>13s} {'cpu ratio':>10s}"
    )
    summary = {}
    for case, runs in bench.cases.items():
        plain, enc = runs["plaintext"], runs["encrypted"]
        best, median = enc.best / plain.best, enc.median / plain.median
        cpu = enc.best_cpu / plain.best_cpu if plain.best_cpu else float("nan")
        same = "" if plain.result == enc.result or case.endswith("write") else "  RESULTS DIFFER"
        print(
            f"{case:14s} {plain.best:13.1f} s {enc.best:13.1f} s {best:10.2f}x {median:12.2f}x "
            f"{cpu:9.2f}x{same}"
        )
        summary[case] = {
            "plaintext_s": plain.seconds,
            "encrypted_s": enc.seconds,
            "plaintext_cpu_s": plain.cpu,
            "encrypted_cpu_s": enc.cpu,
            "ratio_best": best,
            "ratio_median": median,
            "ratio_cpu_best": cpu,
            "loads": {"plaintext": plain.loads, "encrypted": enc.loads},
            "result": {"plaintext": str(plain.result), "encrypted": str(enc.result)},
        }
    for case, runs in bench.cases.items():
        if case.endswith("write"):
            layouts = ", ".join(f"{variant}: {run.result}" for variant, run in runs.items())
            print(f"{case} wrote {layouts}")
    print("ratio: encrypted / plaintext (target: within 1.3x); cpu ratio: of the best CPU seconds.")
    if QUIET["noisy_runs"]:
        print(f"{QUIET['noisy_runs']} runs started without idle CPUs (waited {QUIET['waited_s']:.0f} s)")
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-gb", type=float, default=2.0)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--only", choices=("python", "spark"))
    parser.add_argument("--quiet", type=float, default=0.85, help="idle CPU fraction to wait for")
    parser.add_argument("--quiet-wait", type=float, default=30.0)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--keep", action="store_true", help="keep the warehouse and print where")
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="icefloe-bench-encryption-"))
    bench = Bench(root, args.size_gb, args.repeat, args.quiet, args.quiet_wait)
    print(
        f"{bench.rows:,} rows (~{args.size_gb} GiB of Parquet) per table, {args.repeat} runs each, in {root}"
    )
    try:
        bench.open_catalog()
        if args.only in (None, "python"):
            python_cases(bench)
        if args.only in (None, "spark"):
            spark_cases(bench)
        summary = report(bench)
        if args.json is not None:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(
                json.dumps({"rows": bench.rows, "size_gb": args.size_gb, "cases": summary}, indent=2)
            )
    finally:
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
