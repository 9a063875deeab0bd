"""Benchmark: 1,000 sequential small appends, merging (``new_append()``) vs fast appends.

Many small commits are how streaming and micro-batch jobs write. With ``new_fast_append()``
every commit adds a manifest, so the manifest list grows without bound and each commit (and
each scan) reads more; ``new_append()`` merges manifests per ``commit.manifest-merge.enabled``,
``commit.manifest.min-count-to-merge`` and ``commit.manifest.target-size-bytes`` (defaults:
true, 100, 8 MiB), which keeps the manifest count bounded and commit latency flat.

The data files are written once, up front, with pyarrow (``--rows`` rows each, field ids in
the footer); each commit then appends one of them with ``append_file`` into a fresh table of a
SQL catalog on SQLite (unpartitioned), so only the commit is timed. After every commit the
current snapshot's manifest count is recorded (outside the timing).

Usage, from the repository with the project venv::

    python bench/appends_merge.py                    # 1,000 commits, merging and fast
    python bench/appends_merge.py --commits 300 --variant merge
    python bench/appends_merge.py --json bench/out/appends_merge.json

Printed per variant: latency of the first and the last 100 commits (mean, p50, max) and the
ratio last / first of the means (the target for the merging append: within 1.5x), for the whole
commit (wall clock, and this process's CPU time, which a machine busy with other work disturbs
less) and for its snapshot-production share (new manifests, merges, the manifest list; timed
by wrapping ``SnapshotProducer._produce``), the manifest count every 100 commits and its
maximum, the size of the table metadata file (which holds every snapshot and is rewritten by
every commit, so it grows whatever the manifests do), and the rows a final scan counts.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import icefloe
from icefloe import DataFile, Table
from icefloe.arrow.schema import schema_to_arrow
from icefloe.table.snapshots.append import AppendFiles
from icefloe.table.snapshots.snapshot_producer import SnapshotProducer
from icefloe.write import footer_metrics

SCHEMA = pa.schema(
    [("id", pa.int64()), ("ts", pa.timestamp("us")), ("country", pa.string()), ("amount", pa.float64())]
)
VARIANTS: dict[str, Callable[[Table], AppendFiles]] = {
    "merge": lambda t: t.new_append(),
    "fast": lambda t: t.new_fast_append(),
}
WINDOW = 100  # commits in the "first" and "last" windows
TARGET_RATIO = 1.5


@dataclass
class Run:
    variant: str
    latencies_ms: list[float]  # whole commit, wall clock
    cpu_ms: list[float]  # whole commit, CPU time of this process (less sensitive to a busy machine)
    produce_ms: list[float]  # the snapshot producer's share: manifests, merges, manifest list
    produce_cpu_ms: list[float]  # the same, CPU time
    manifests: list[int]  # after each commit
    metadata_json_bytes: list[int]  # size of the table metadata file after each commit
    rows: int

    @staticmethod
    def window(values: list[float], last: bool) -> list[float]:
        return values[-WINDOW:] if last else values[:WINDOW]

    @staticmethod
    def ratio(values: list[float], average: Callable[[list[float]], float] = statistics.fmean) -> float:
        return average(Run.window(values, True)) / average(Run.window(values, False))


def data_files_for(table: Table, folder: Path, commits: int, rows: int, seed: int) -> list[DataFile]:
    """Write the source files with the table's field ids and describe them as DataFiles."""
    schema = table.schema()
    arrow_schema = schema_to_arrow(schema)
    spec = table.spec()  # unpartitioned
    rng = np.random.default_rng(seed)
    countries = np.array(["US", "DE", "FR", "GB", "BR", "IN", "JP"])
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for i in range(commits):
        ids = np.arange(i * rows, (i + 1) * rows, dtype=np.int64)
        batch = pa.table(
            {
                "id": pa.array(ids),
                "ts": pa.array(
                    (1_704_067_200_000_000 + rng.integers(0, 86_400_000_000, rows)).astype("datetime64[us]"),
                    pa.timestamp("us"),
                ),
                "country": pa.array(rng.choice(countries, rows)),
                "amount": pa.array(np.round(rng.gamma(2.0, 25.0, rows), 2)),
            },
            schema=SCHEMA,
        ).cast(arrow_schema)
        path = folder / f"part-{i:05d}.parquet"
        pq.write_table(batch, path)
        builder = (
            DataFile.builder(spec, schema)
            .with_path(str(path))
            .with_format("parquet")
            .with_file_size_in_bytes(path.stat().st_size)
            .with_metrics(footer_metrics(pq.read_metadata(path), schema))
        )
        files.append(builder.build())
    return files


@contextlib.contextmanager
def timing_produce(wall: list[float], cpu: list[float]) -> Iterator[None]:
    """Adds the wall and CPU time each snapshot production takes to ``wall`` and ``cpu`` (the
    library is patched for the duration: measurement only)."""
    original = SnapshotProducer._produce

    def timed(self: SnapshotProducer, base: Any) -> Any:
        started, cpu_started = time.perf_counter(), time.process_time()
        try:
            return original(self, base)
        finally:
            wall.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - cpu_started) * 1000)

    SnapshotProducer._produce = timed  # type: ignore[method-assign]
    try:
        yield
    finally:
        SnapshotProducer._produce = original  # type: ignore[method-assign]


def run(variant: str, warehouse: Path, commits: int, rows: int, seed: int) -> Run:
    catalog = icefloe.load_catalog(
        "bench", type="sql", uri=f"sqlite:///{warehouse / 'catalog.db'}", warehouse=str(warehouse)
    )
    catalog.create_namespace("bench")
    table = catalog.create_table(f"bench.events_{variant}", SCHEMA)
    files = data_files_for(table, warehouse / "source", commits, rows, seed)
    new_append = VARIANTS[variant]
    latencies: list[float] = []
    cpu: list[float] = []
    produce: list[float] = []
    produce_cpu: list[float] = []
    manifests: list[int] = []
    json_bytes: list[int] = []
    for file in files:
        calls: list[float] = []
        calls_cpu: list[float] = []
        with timing_produce(calls, calls_cpu):
            t0, c0 = time.perf_counter(), time.process_time()
            new_append(table).append_file(file).commit()
            latencies.append((time.perf_counter() - t0) * 1000)
            cpu.append((time.process_time() - c0) * 1000)
        produce.append(sum(calls))
        produce_cpu.append(sum(calls_cpu))
        snapshot = table.current_snapshot()
        assert snapshot is not None and table.metadata_location is not None
        manifests.append(len(snapshot.all_manifests(table.io())))
        json_bytes.append(
            os.path.getsize(table.metadata_location.removeprefix("file://").removeprefix("file:"))
        )
    counted = table.new_scan().count()
    catalog.close()
    return Run(variant, latencies, cpu, produce, produce_cpu, manifests, json_bytes, counted)


def describe(values: list[float]) -> str:
    return f"{statistics.fmean(values):6.1f} {statistics.median(values):6.1f} {max(values):6.1f}"


def report(result: Run, commits: int) -> None:
    print(f"\n{result.variant}: {commits} commits, {result.rows:,} rows counted by a final scan")
    print(
        f"  {'latency, ms':<22}{f'first {WINDOW}: mean p50 max':>29}{f'last {WINDOW}: mean p50 max':>28}"
        "  last/first: mean (p50)"
    )
    rows = (
        ("commit", result.latencies_ms),
        ("commit, CPU time", result.cpu_ms),
        ("snapshot production", result.produce_ms),
        ("  same, CPU time", result.produce_cpu_ms),
    )
    for label, values in rows:
        ratio = Run.ratio(values)
        p50_ratio = Run.ratio(values, statistics.median)
        verdict = "ok" if ratio <= TARGET_RATIO else f"over {TARGET_RATIO}x"
        first, last = describe(Run.window(values, False)), describe(Run.window(values, True))
        print(f"  {label:<22}{first:>29}{last:>28}  {ratio:.2f}x ({p50_ratio:.2f}x) {verdict}")
    checkpoints = list(range(WINDOW - 1, commits, WINDOW))
    counts = ", ".join(f"{i + 1}: {result.manifests[i]}" for i in checkpoints)
    print(f"  manifests after commit {counts}; max {max(result.manifests)}")
    print(
        f"  metadata JSON file: {result.metadata_json_bytes[0] / 1024:.0f} KiB after the first commit, "
        f"{result.metadata_json_bytes[-1] / 1024:.0f} KiB after the last (rewritten whole by every commit)"
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description="sequential small appends: new_append() vs new_fast_append()"
    )
    parser.add_argument("--commits", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=100, help="rows per data file (one file per commit)")
    parser.add_argument("--variant", choices=[*VARIANTS, "all"], default="all")
    parser.add_argument("--seed", type=int, default=20240101)
    parser.add_argument("--json", type=Path, help="also write every latency and manifest count to this file")
    parser.add_argument("--keep", action="store_true", help="keep the warehouses (their path is printed)")
    args = parser.parse_args(argv)
    if args.commits < 2 * WINDOW:
        parser.error(f"--commits must be at least {2 * WINDOW}")

    print(
        f"icefloe {icefloe.__version__}: {args.commits} sequential commits of one {args.rows}-row file each, "
        "SQL catalog on SQLite, unpartitioned table\n"
        f"python {platform.python_version()}, pyarrow {pa.__version__}, {os.cpu_count()} cpus, default merge "
        "properties (enabled, min-count-to-merge 100, target 8 MiB)",
        flush=True,
    )
    workdir = Path(tempfile.mkdtemp(prefix="icefloe-bench-merge-"))
    results = []
    for variant in list(VARIANTS) if args.variant == "all" else [args.variant]:
        print(f"  {variant} ...", end="", flush=True)
        started = time.perf_counter()
        result = run(variant, workdir / variant, args.commits, args.rows, args.seed)
        print(f" {time.perf_counter() - started:.1f} s", flush=True)
        if result.rows != args.commits * args.rows:
            raise SystemExit(
                f"{variant}: a scan counted {result.rows} rows, expected {args.commits * args.rows}"
            )
        results.append(result)
    for result in results:
        report(result, args.commits)
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps({"commits": args.commits, "runs": [asdict(r) for r in results]}, indent=1)
        )
    if args.keep:
        print(f"\nwarehouses kept in {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
