"""Benchmark: icefloe's REST catalog server vs the project's Java REST server, same machine, same run.

Servers:

- **icefloe**: ``python -m icefloe.rest`` (uvicorn, ``--workers``, default 2: the machine's
  cores) over a SQL catalog on SQLite;
- **java**: the interop tests' Java server (``tests/interop/rest_java.py``): Iceberg 1.9.2's
  ``CatalogHandlers`` over ``JdbcCatalog`` on SQLite, run here with ``--concurrent`` (no global
  lock; JdbcCatalog is thread-safe through its pool) and the JVM's default JIT and GC (not the
  tests' fast-start flags), so the comparison is fair to Java.

Measured for each, over raw HTTP (httpx, one client per thread):

1. **build**: a table gets ``--snapshots`` (1,000) commits, one after another, each an
   ``add-snapshot`` + ``set-snapshot-ref main`` guarded by ``assert-ref-snapshot-id`` (a fast
   append's updates; manifest lists are named, not written: the servers never read them);
2. **load-table** latency on that table (``GET .../tables/t``, ``--loads`` times): p50, p99;
3. **8 concurrent appenders** for ``--seconds``: each loads the table and commits the next
   snapshot; commits per second, and the 409s they lost;
4. **planning** (icefloe only: Java 1.9.2 serves no ``/plan``): a table of ``--files`` real
   Parquet files in ``--manifests`` manifests; latency of server-side planning (``POST /plan``
   with a filter, asked by the icefloe client from a fresh process) vs client-side planning
   (load the table through the REST client, ``new_scan().filter(...).plan_files()``), both in a
   fresh process (cold: what a new job does; the server's caches stay warm) and repeated in a
   warm process (its manifest cache full).

Ratios are icefloe / Java: for times below 1.00x means icefloe is faster, for commits per
second above 1.00x; for planning, server / client.

Usage: ``python bench/rest.py [--snapshots 1000] [--loads 300] [--seconds 15] [--workers 2]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from tests.interop.rest_java import JavaRestServer  # noqa: E402

import icefloe  # noqa: E402
from icefloe.spec.conversions import to_bytes  # noqa: E402
from icefloe.spec.manifest import DataFile, Metrics  # noqa: E402
from icefloe.spec.types import LongType  # noqa: E402
from support.rest import ServerProcess  # noqa: E402

SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [{"id": 1, "name": "id", "type": "long", "required": False}],
}


def _commit(client: httpx.Client, meta: dict[str, Any], parent: int | None) -> tuple[int, int]:
    sid = random.getrandbits(62)
    snapshot: dict[str, Any] = {
        "snapshot-id": sid,
        "timestamp-ms": int(time.time() * 1000),
        "manifest-list": f"{meta['location']}/metadata/snap-{sid}.avro",
        "sequence-number": meta.get("last-sequence-number", 0) + 1,
        "summary": {"operation": "append", "added-data-files": "1", "added-records": "1"},
        "schema-id": 0,
    }
    if parent is not None:
        snapshot["parent-snapshot-id"] = parent
    body = {
        "requirements": [
            {"type": "assert-table-uuid", "uuid": meta["table-uuid"]},
            {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": parent},
        ],
        "updates": [
            {"action": "add-snapshot", "snapshot": snapshot},
            {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": sid},
        ],
    }
    response = client.post("/v1/namespaces/b/tables/t", json=body)
    return response.status_code, sid


def _current(meta: dict[str, Any]) -> int | None:
    current = meta.get("current-snapshot-id")
    return None if current in (None, -1) else current


def measure(url: str, args: argparse.Namespace) -> dict[str, float]:
    client = httpx.Client(base_url=url, timeout=120)
    client.post("/v1/namespaces", json={"namespace": ["b"]})
    meta = client.post("/v1/namespaces/b/tables", json={"name": "t", "schema": SCHEMA}).json()["metadata"]
    parent = None
    started = time.perf_counter()
    for _ in range(args.snapshots):
        status, parent = _commit(client, meta, parent)
        if status != 200:
            raise SystemExit(f"{url}: a build commit failed with {status}")
        meta["last-sequence-number"] = meta.get("last-sequence-number", 0) + 1
    build = time.perf_counter() - started
    latencies = []
    size = 0
    for _ in range(args.loads):
        t0 = time.perf_counter()
        response = client.get("/v1/namespaces/b/tables/t")
        response.raise_for_status()
        latencies.append((time.perf_counter() - t0) * 1000)
        size = len(response.content)
    latencies.sort()
    stop = time.monotonic() + args.seconds
    counts = {"ok": 0, "conflicts": 0, "other": 0}
    lock = threading.Lock()

    def appender() -> None:
        own = httpx.Client(base_url=url, timeout=120)
        while time.monotonic() < stop:
            current = own.get("/v1/namespaces/b/tables/t").json()["metadata"]
            status, _ = _commit(own, current, _current(current))
            with lock:
                counts["ok" if status == 200 else "conflicts" if status == 409 else "other"] += 1
        own.close()

    threads = [threading.Thread(target=appender) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    client.close()
    return {
        "build_s": build,
        "load_p50_ms": statistics.median(latencies),
        "load_p99_ms": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
        "load_bytes": size,
        "commits_per_s": counts["ok"] / args.seconds,
        "conflicts": counts["conflicts"],
        "errors": counts["other"],
    }


def planning_table(warehouse: Path, files: int, manifests: int) -> None:
    """Table ``b.p`` of the served catalog: ``files`` data files (described, not written: planning
    reads manifests only) over 100 days, appended in ``manifests`` fast appends."""
    catalog = icefloe.load_catalog("served", type="sql", warehouse=str(warehouse))
    catalog.create_namespace("b")
    table = catalog.create_table(
        "b.p",
        pa.schema([("id", pa.int64()), ("day", pa.date32()), ("v", pa.float64())]),
        partition_by=["day"],
    )
    spec = table.spec()
    per = files // manifests
    for m in range(manifests):
        append = table.new_fast_append()
        for f in range(per):
            n = m * per + f
            low, high = n * 1000, n * 1000 + 999
            metrics = Metrics(
                record_count=1000,
                value_counts={1: 1000, 2: 1000, 3: 1000},
                null_value_counts={1: 0, 2: 0, 3: 0},
                lower_bounds={1: to_bytes(LongType(), low)},
                upper_bounds={1: to_bytes(LongType(), high)},
            )
            file = (
                DataFile.builder(spec)
                .with_path(f"{table.location()}/data/f-{n}.parquet")
                .with_format("parquet")
                .with_file_size_in_bytes(100_000)
                .with_record_count(1000)
                .with_partition([19_000 + n % 100])
                .with_metrics(metrics)
                .build()
            )
            append.append_file(file)
        append.commit()
    catalog.close()


_COLD_PLAN = """
import sys, time, json, icefloe
catalog = icefloe.load_catalog("bench", type="rest", uri=sys.argv[1])
started = time.perf_counter()
files = catalog.load_table("b.p").new_scan().filter(sys.argv[2]).option("planning", sys.argv[3]).plan_files()
print(json.dumps([(time.perf_counter() - started) * 1000, len(files)]))
"""


def _cold(url: str, text: str, mode: str) -> tuple[float, int]:
    """One plan in a fresh process (imports done before the clock starts): a new job's plan."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    out = subprocess.run(
        [sys.executable, "-c", _COLD_PLAN, url, text, mode],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    ms, count = json.loads(out.stdout.strip().splitlines()[-1])
    return float(ms), int(count)


def measure_planning(url: str, filters: list[str], runs: int) -> dict[str, tuple[float, float, float, int]]:
    """Per filter, medians in ms: planned by the server (asked from a fresh process), planned by
    the client in a fresh process (cold: it reads the manifests), planned by the client again in
    a warm process (its manifest cache full). Every plan includes loading the table."""
    client = icefloe.load_catalog("bench", type="rest", uri=url)
    results = {}
    for text in filters:
        server = [_cold(url, text, "server") for _ in range(runs)]
        cold = [_cold(url, text, "client") for _ in range(runs)]
        warm = []
        for _ in range(runs + 1):
            t0 = time.perf_counter()
            count = len(
                client.load_table("b.p").new_scan().filter(text).option("planning", "client").plan_files()
            )
            warm.append((time.perf_counter() - t0) * 1000)
        counts = {n for _, n in server} | {n for _, n in cold} | {count}
        assert len(counts) == 1, (text, counts)
        results[text] = (
            statistics.median(ms for ms, _ in server),
            statistics.median(ms for ms, _ in cold),
            statistics.median(warm[1:]),
            count,
        )
    client.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--snapshots", type=int, default=1000)
    parser.add_argument("--loads", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--skip-java", action="store_true")
    parser.add_argument("--files", type=int, default=10_000, help="data files of the planning table")
    parser.add_argument("--manifests", type=int, default=50)
    parser.add_argument("--plan-runs", type=int, default=7)
    args = parser.parse_args()
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="icefloe-bench-rest-") as tmp:
        root = Path(tmp)
        print(f"icefloe server: {args.workers} worker(s) ...", file=sys.stderr, flush=True)
        with ServerProcess(root / "icefloe", workers=args.workers) as server:
            results["icefloe"] = measure(server.url, args)
        if not args.skip_java:
            print("java server ...", file=sys.stderr, flush=True)
            with JavaRestServer(root / "java", "--concurrent", fast_start=False) as java:
                results["java"] = measure(java.url, args)
        print(f"planning: a table of {args.files} files ...", file=sys.stderr, flush=True)
        planning_table(root / "planning", args.files, args.manifests)
        with ServerProcess(root / "planning", workers=args.workers) as server:
            filters = ["day = '2022-01-15'", "id < 500000", "day >= '2022-02-01' AND id > 9000000", "true"]
            plans = measure_planning(server.url, filters, args.plan_runs)
    rows = [
        ("build: sequential commits", "build_s", "s"),
        ("load-table p50", "load_p50_ms", "ms"),
        ("load-table p99", "load_p99_ms", "ms"),
        ("8 appenders: commits/s", "commits_per_s", "/s"),
        ("8 appenders: 409s", "conflicts", ""),
    ]
    print(
        f"table of {args.snapshots} snapshots; load-table answers {results['icefloe']['load_bytes'] / 1024:.0f} KiB"
    )
    print(f"{'':32} {'icefloe':>10} {'java':>10} {'icefloe/java':>13}")
    for label, key, unit in rows:
        ice = results["icefloe"][key]
        java = results.get("java", {}).get(key)
        ratio = f"{ice / java:.2f}x" if java else "-"
        print(
            f"{label:32} {ice:>9.1f}{unit:<1} {java if java is not None else float('nan'):>9.1f}{unit:<1} {ratio:>13}"
        )
    print(
        f"\nscan planning, {args.files} files in {args.manifests} manifests; ms, median of {args.plan_runs}, "
        "load-table included (Java 1.9.2 serves no /plan)"
    )
    print(
        f"  {'filter':42} {'files':>6} {'server':>8} {'client cold':>12} {'client warm':>12} {'server/cold':>12}"
    )
    for text, (server_ms, cold_ms, warm_ms, count) in plans.items():
        print(
            f"  {text:42} {count:>6} {server_ms:>8.1f} {cold_ms:>12.1f} {warm_ms:>12.1f} {server_ms / cold_ms:>11.2f}x"
        )


if __name__ == "__main__":
    main()
