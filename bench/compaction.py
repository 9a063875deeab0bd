"""Benchmark: ``rewrite_data_files`` without Spark (``icefloe.actions``) against the Spark action
(``icefloe.spark.actions``, ``local[2]``) on the same table, same run.

The table (built fresh for each engine from the same seeded batches, in a SQL catalog under
``bench/out/compaction``): ``--files`` small appends (default 240) of ``--rows`` rows each
(default 40,000), partitioned by ``day(ts)`` over four days, columns ``id long, ts timestamp,
user long, amount double, country string, note string``; merge-on-read deletes of 1% of the
rows, so compaction also applies deletes and drops the delete files. Each engine compacts its
copy with the defaults (bin-pack at ``write.target-file-size-bytes``, set to 32 MiB here so the
output has several files per partition); the time of the action call is reported (the Spark
session is started, and warmed by one small action on a throwaway table, before the clock
starts). Both copies must read the same rows afterwards.

Target: the plain-Python action within 1.5x of the Spark action's time on 2 cores.

Usage, from the repository with the project venv::

    python bench/compaction.py                 # both engines
    python bench/compaction.py --files 60      # smaller
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

import icefloe
from icefloe import actions
from icefloe import spark as isp

OUT = Path(__file__).resolve().parent / "out" / "compaction"
SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64()),
        pa.field("ts", pa.timestamp("us")),
        pa.field("user", pa.int64()),
        pa.field("amount", pa.float64()),
        pa.field("country", pa.string()),
        pa.field("note", pa.string()),
    ]
)
COUNTRIES = np.array(["NL", "US", "VN", "BR", "DE", "JP", "IN", "FR"], dtype=object)
START = dt.datetime(2024, 1, 1)


def _batch(rng: np.random.Generator, index: int, rows: int) -> pa.Table:
    ids = np.arange(index * rows, (index + 1) * rows, dtype=np.int64)
    seconds = rng.integers(0, 4 * 86_400, rows)
    return pa.table(
        {
            "id": ids,
            "ts": pa.array(
                (np.datetime64(START) + seconds.astype("timedelta64[s]")).astype("datetime64[us]")
            ),
            "user": rng.integers(0, 1_000_000, rows),
            "amount": rng.random(rows) * 1000,
            "country": COUNTRIES[rng.integers(0, len(COUNTRIES), rows)],
            "note": np.char.add("n", rng.integers(0, 50_000, rows).astype(str)).astype(object),
        },
        schema=SCHEMA,
    )


def build(catalog: icefloe.Catalog, name: str, files: int, rows: int) -> icefloe.Table:
    table = catalog.create_table(
        f"db.{name}",
        SCHEMA,
        partition_by=["day(ts)"],
        properties={"write.delete.mode": "merge-on-read", "write.target-file-size-bytes": str(32 << 20)},
    )
    rng = np.random.default_rng(7)
    for i in range(files):
        table.append(_batch(rng, i, rows))
    table.delete(f"id < {files * rows // 100}")
    return table


def _count(table: icefloe.Table) -> tuple[int, float]:
    data = table.refresh().new_scan().select("amount").to_arrow()
    return data.num_rows, round(float(pa.compute.sum(data.column("amount")).as_py()), 3)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="rewrite_data_files: icefloe.actions vs the Spark action")
    parser.add_argument("--files", type=int, default=240)
    parser.add_argument("--rows", type=int, default=40_000)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args(argv)
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    catalog = icefloe.load_catalog("bench", type="sql", uri=f"sqlite:///{OUT}/c.db", warehouse=str(OUT))
    catalog.create_namespace("db")
    print(f"building two tables of {args.files} files x {args.rows:,} rows ...", flush=True)
    plain = build(catalog, "plain", args.files, args.rows)
    by_spark = build(catalog, "spark", args.files, args.rows)
    size = sum(
        f["file_size_in_bytes"] for f in plain.inspect.data_files(columns=["file_size_in_bytes"]).to_pylist()
    )
    print(
        f"  {len(plain.inspect.files()):,} files, {size / 2**20:.0f} MiB; {os.cpu_count()} cpus", flush=True
    )

    started = time.perf_counter()
    ours = actions.rewrite_data_files(plain)
    plain_s = time.perf_counter() - started
    print(f"  icefloe.actions: {plain_s:.1f} s  {ours}", flush=True)

    spark = isp.local_session(args.master)
    warm = build(catalog, "warmup", 4, 1000)
    isp.actions.rewrite_data_files(spark, warm, options={"rewrite-all": "true"})
    started = time.perf_counter()
    theirs = isp.actions.rewrite_data_files(spark, by_spark)
    spark_s = time.perf_counter() - started
    print(f"  icefloe.spark.actions: {spark_s:.1f} s  {theirs}", flush=True)
    spark.stop()

    assert _count(plain) == _count(by_spark), (_count(plain), _count(by_spark))
    print()
    print(f"{'engine':<24}{'seconds':>9}{'files in':>10}{'files out':>11}")
    print(
        f"{'icefloe.actions':<24}{plain_s:>9.1f}{ours.rewritten_data_files_count:>10}{ours.added_data_files_count:>11}"
    )
    print(
        f"{'icefloe.spark.actions':<24}{spark_s:>9.1f}{theirs.rewritten_data_files_count:>10}"
        f"{theirs.added_data_files_count:>11}"
    )
    print(f"plain / Spark: {plain_s / spark_s:.2f}x (target: at most 1.5x)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
