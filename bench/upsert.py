"""Benchmark: ``table.upsert`` in plain Python, icefloe vs PyIceberg 0.12 vs the floor.

A starting table of ``--files`` data files (unpartitioned; ``id long, ts timestamp, country
string, amount double, qty int, note string``; ids 0..rows-1 in order, so each file holds one
id range, written by one icefloe append per file) takes an upsert on ``id`` of a change set of
``keys`` rows: half of them existing ids drawn at random (so every file has matches), half
new ids, every other column with new values. Sizes: 100k and 1M keys into 1M and 10M rows
(``--quick``: 20k keys into 200k rows).

Engines, each in a fresh process on the same starting table (its metadata file registered in
a fresh SQLite catalog; each run's new files are deleted afterwards) and the same change set
(a Parquet file read before the clock starts):

- ``ice-cow``: icefloe ``table.upsert(source, on=["id"])``, ``write.merge.mode=copy-on-write``
  (v2): the files with matched rows are rewritten without them;
- ``ice-mor``: the same with ``merge-on-read`` (v2): position delete files;
- ``ice-dv``: ``merge-on-read`` on the table upgraded to format version 3: deletion vectors;
- ``pyiceberg``: PyIceberg 0.12 ``table.upsert(source, join_cols=["id"])`` (copy-on-write,
  its only mode), in the interop harness's environment (``bench/_pyiceberg_upsert.py``), with
  a timeout (``--pyiceberg-timeout``): a run that times out is reported as ``> T`` s, and the
  ratio to it as an upper bound;
- ``floor-mor``: pyarrow alone, no Iceberg: read the ``id`` column of every data file, join
  it with the change set's keys (one hash join), write the change set as one Parquet file
  and each file's matched positions as a position-delete file. What any merge-on-read upsert
  must at least do;
- ``floor-cow``: the same, and then read each file with matched rows whole, drop them and
  write the rest (zstd, as the table's files): what any copy-on-write upsert must at least do.

Timed: the upsert call alone (the floor: its pipeline). Reported per size: seconds per engine,
icefloe's peak RSS during the upsert (``/proc/self/clear_refs`` resets the peak after the
change set is loaded; the change set itself is in it) and the ratios ice/pyiceberg and
ice/floor (ice-cow to floor-cow, ice-mor and ice-dv to floor-mor). After each run the table is
checked: row count, sum of ids and sum of amounts as the model says.

Usage, from the repository with the project venv::

    python bench/upsert.py --quick
    python bench/upsert.py                         # the four sizes, every engine
    python bench/upsert.py --sizes 10M:1M --engines ice-mor,floor-mor
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _rss import peak_rss_mb  # noqa: E402

PYICEBERG_SCRIPT = HERE / "_pyiceberg_upsert.py"
SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("ts", pa.timestamp("us")),
        ("country", pa.string()),
        ("amount", pa.float64()),
        ("qty", pa.int32()),
        ("note", pa.string()),
    ]
)
COUNTRIES = np.array(["DE", "FR", "US", "GB", "NL", "IT", "ES", "PL", "SE", "JP", "BR", "IN"])
ICE_MODES = {"ice-cow": "copy-on-write", "ice-mor": "merge-on-read", "ice-dv": "merge-on-read"}
ENGINES = ("ice-cow", "ice-mor", "ice-dv", "pyiceberg", "floor-cow", "floor-mor")
FLOOR_OF = {"ice-cow": "floor-cow", "ice-mor": "floor-mor", "ice-dv": "floor-mor"}


def _count(text: str) -> int:
    text = text.strip().lower()
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1], 1)
    return int(float(text.rstrip("km")) * scale)


# ---- data --------------------------------------------------------------------------------------


def columns(ids: np.ndarray, rng: np.random.Generator) -> pa.Table:
    n = len(ids)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "ts": pa.array(
                1_700_000_000_000_000 + rng.integers(0, 86_400_000_000 * 365, n), pa.timestamp("us")
            ),
            "country": pa.array(rng.choice(COUNTRIES, n)),
            "amount": pa.array(np.round(rng.gamma(2.0, 25.0, n), 2)),
            "qty": pa.array(rng.integers(1, 100, n).astype(np.int32)),
            "note": pa.array(np.char.mod("%016x", rng.integers(0, 2**62, n))),
        },
        schema=SCHEMA,
    )


@dataclass
class Start:
    """A starting table and what the model knows of it."""

    warehouse: Path
    metadata: str  # metadata file of the starting table (v2)
    metadata_v3: str  # the same table upgraded to v3
    files: list[str]
    rows: int
    amounts: np.ndarray  # amount by id (ids are 0..rows-1)


def build_table(root: Path, rows: int, files: int, seed: int) -> Start:
    import icefloe

    warehouse = root / f"table-{rows}"
    warehouse.mkdir(parents=True)
    catalog = icefloe.load_catalog(
        "bench", type="sql", uri=f"sqlite:///{warehouse / 'catalog.db'}", warehouse=str(warehouse)
    )
    catalog.create_namespace("bench")
    table = catalog.create_table("bench.upsert", SCHEMA, properties={"format-version": "2"})
    rng = np.random.default_rng(seed)
    amounts = np.empty(rows, dtype=np.float64)
    per_file = -(-rows // files)
    for start in range(0, rows, per_file):
        ids = np.arange(start, min(rows, start + per_file), dtype=np.int64)
        batch = columns(ids, rng)
        amounts[start : start + len(ids)] = batch.column("amount").to_numpy()
        table.append(batch)
        del batch
    metadata = table.metadata_location
    paths = [task.file.file_path.removeprefix("file://") for task in table.new_scan().plan_files()]
    assert metadata is not None and len(paths) == -(-rows // per_file)
    table.update_properties().set("format-version", "3").commit()
    assert table.metadata_location is not None
    return Start(warehouse, metadata, table.metadata_location, paths, rows, amounts)


def change_set(start: Start, keys: int, seed: int) -> pa.Table:
    """``keys`` rows: half existing ids at random, half new ids, fresh values."""
    rng = np.random.default_rng(seed + 1)
    existing = rng.choice(start.rows, size=keys // 2, replace=False)
    new = np.arange(start.rows, start.rows + keys - keys // 2, dtype=np.int64)
    ids = rng.permutation(np.concatenate([existing, new]))
    return columns(ids, rng)


def expected(start: Start, source: pa.Table) -> dict[str, Any]:
    ids = source.column("id").to_numpy()
    old = ids[ids < start.rows]
    return {
        "rows_after": start.rows + int((ids >= start.rows).sum()),
        "id_sum": start.rows * (start.rows - 1) // 2 + int(ids[ids >= start.rows].sum()),
        "amount_sum": float(
            start.amounts.sum() - start.amounts[old].sum() + pc.sum(source["amount"]).as_py()
        ),
        "rows_updated": len(old),
    }


def _files_under(root: Path) -> set[str]:
    return {os.path.join(d, n) for d, _, names in os.walk(root) for n in names}


# ---- the children ------------------------------------------------------------------------------


def _rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _reset_peak_rss() -> None:
    """Make VmHWM start again from the current RSS (Linux: ``clear_refs`` 5)."""
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        pass


def child_icefloe(args: argparse.Namespace) -> dict[str, Any]:
    import icefloe

    directory = Path(args.catalog_dir)
    directory.mkdir(parents=True)
    catalog = icefloe.load_catalog(
        "bench", type="sql", uri=f"sqlite:///{directory / 'catalog.db'}", warehouse=str(directory)
    )
    catalog.create_namespace("bench")
    table = catalog.register_table("bench.upsert", args.metadata)
    table.update_properties().set("write.merge.mode", ICE_MODES[args.child]).commit()
    source = pq.read_table(args.source)
    profile = None
    if args.profile:
        import cProfile

        profile = cProfile.Profile()
    gc.collect()
    _reset_peak_rss()
    rss_before = _rss_mb()
    t0 = time.perf_counter()
    if profile is not None:
        profile.enable()
    result = table.upsert(source, on=["id"])
    if profile is not None:
        profile.disable()
    upsert_s = time.perf_counter() - t0
    peak = peak_rss_mb()
    if profile is not None:
        import pstats

        pstats.Stats(profile, stream=sys.stderr).sort_stats("cumulative").print_stats(40)
    del source
    after = table.new_scan().select("id", "amount").to_arrow()
    return {
        "upsert_s": upsert_s,
        "rows_updated": result.rows_updated,
        "rows_inserted": result.rows_inserted,
        "rows_after": after.num_rows,
        "id_sum": pc.sum(after.column("id")).as_py(),
        "amount_sum": pc.sum(after.column("amount")).as_py(),
        "peak_rss_mb": peak,
        "rss_before_mb": rss_before,
    }


def child_floor(args: argparse.Namespace) -> dict[str, Any]:
    """The minimal pipeline: no Iceberg metadata read or written, no commit."""
    files: list[str] = json.loads(Path(args.files_list).read_text())
    out = Path(args.catalog_dir)
    out.mkdir(parents=True)
    source = pq.read_table(args.source)
    gc.collect()
    _reset_peak_rss()
    rss_before = _rss_mb()
    t0 = time.perf_counter()
    parts = []
    for number, path in enumerate(files):
        ids = pq.read_table(path, columns=["id"]).column("id")
        parts.append(
            pa.table(
                {
                    "id": ids,
                    "file": pa.array(np.full(len(ids), number, dtype=np.int32)),
                    "pos": pa.array(np.arange(len(ids), dtype=np.int64)),
                }
            )
        )
    matched = pa.concat_tables(parts).join(source.select(["id"]), "id", join_type="left semi")
    del parts
    pq.write_table(source, out / "rows.parquet", compression="zstd")
    file_numbers = matched.column("file").to_numpy()
    positions = matched.column("pos").to_numpy()
    order = np.lexsort((positions, file_numbers))
    file_numbers, positions = file_numbers[order], positions[order]
    bounds = np.searchsorted(file_numbers, np.arange(len(files) + 1))
    updated = 0
    for number, path in enumerate(files):
        mine = positions[bounds[number] : bounds[number + 1]]
        if not len(mine):
            continue
        updated += len(mine)
        if args.child == "floor-mor":
            deletes = pa.table({"file_path": pa.array([path] * len(mine)), "pos": pa.array(mine)})
            pq.write_table(deletes, out / f"deletes-{number}.parquet", compression="zstd")
        else:
            whole = pq.read_table(path)
            keep = np.ones(whole.num_rows, dtype=bool)
            keep[mine] = False
            pq.write_table(whole.filter(pa.array(keep)), out / f"rest-{number}.parquet", compression="zstd")
            del whole
    upsert_s = time.perf_counter() - t0
    return {
        "upsert_s": upsert_s,
        "rows_updated": updated,
        "peak_rss_mb": peak_rss_mb(),
        "rss_before_mb": rss_before,
    }


# ---- the parent --------------------------------------------------------------------------------


def run_child(
    engine: str, start: Start, source_path: Path, scratch: Path, args: argparse.Namespace
) -> dict[str, Any] | None:
    """One engine's run in a fresh process; None when PyIceberg timed out."""
    catalog_dir = scratch / f"run-{engine}-{time.monotonic_ns()}"
    before = _files_under(start.warehouse)
    timeout = None
    if engine == "pyiceberg":
        cmd = [str(args.pyiceberg_python), str(PYICEBERG_SCRIPT), "--metadata", start.metadata]
        cmd += ["--source", str(source_path), "--catalog-dir", str(catalog_dir)]
        env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"}}
        timeout = args.pyiceberg_timeout
    else:
        metadata = start.metadata_v3 if engine == "ice-dv" else start.metadata
        files = scratch / "files.json"
        files.write_text(json.dumps(start.files))
        cmd = [
            sys.executable,
            __file__,
            "--child",
            engine,
            "--metadata",
            metadata,
            "--files-list",
            str(files),
        ]
        cmd += ["--source", str(source_path), "--catalog-dir", str(catalog_dir)]
        if args.profile == engine:
            cmd += ["--profile", engine]
        env = dict(os.environ)
    try:
        proc = subprocess.run(
            cmd,
            stdout=subprocess.PIPE,
            stderr=None if args.profile else subprocess.PIPE,
            text=True,
            env=env,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None
    finally:
        for path in _files_under(start.warehouse) - before:
            os.unlink(path)
        shutil.rmtree(catalog_dir, ignore_errors=True)
    if proc.returncode != 0:
        raise SystemExit(f"{engine} failed (exit {proc.returncode}):\n{(proc.stderr or '')[-4000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def check(engine: str, got: dict[str, Any], want: dict[str, Any]) -> None:
    problems = []
    if got["rows_updated"] != want["rows_updated"]:
        problems.append(f"updated {got['rows_updated']:,} rows, expected {want['rows_updated']:,}")
    if engine.startswith("floor"):
        if problems:
            raise SystemExit(f"{engine}: " + "; ".join(problems))
        return
    for name in ("rows_after", "id_sum"):
        if got[name] != want[name]:
            problems.append(f"{name} {got[name]:,}, expected {want[name]:,}")
    if abs(got["amount_sum"] - want["amount_sum"]) > 1e-9 * abs(want["amount_sum"]) + 1e-6:
        problems.append(f"amount sum {got['amount_sum']}, expected {want['amount_sum']}")
    if problems:
        raise SystemExit(f"{engine}: " + "; ".join(problems))


def _better(old: dict[str, Any] | None, new: dict[str, Any] | None, first: bool) -> dict[str, Any] | None:
    """The faster of two runs, with the higher of their peak RSS (rounds differ only by load)."""
    if first or old is None or new is None:
        return new
    best = dict(new if new["upsert_s"] < old["upsert_s"] else old)
    best["peak_rss_mb"] = max(old["peak_rss_mb"], new["peak_rss_mb"])
    return best


def _seconds(result: dict[str, Any] | None, timeout: float) -> str:
    return f"> {timeout:.0f}" if result is None else f"{result['upsert_s']:.2f}"


def report(size: str, results: dict[str, dict[str, Any] | None], timeout: float) -> list[str]:
    lines = [f"== {size}"]
    for engine in ENGINES:
        if engine not in results:
            continue
        result = results[engine]
        rss = ""
        if result is not None:
            rss = f"  peak RSS {result['peak_rss_mb']:,.0f} MiB"
            if "rss_before_mb" in result:
                rss += f" (at the call: {result['rss_before_mb']:,.0f} MiB)"
        lines.append(f"  {engine:<10} {_seconds(result, timeout):>9} s{rss}")
    pyi = results.get("pyiceberg", {})
    for engine in ("ice-cow", "ice-mor", "ice-dv"):
        mine = results.get(engine)
        if mine is None:
            continue
        parts = []
        if "pyiceberg" in results:
            if pyi is None:
                parts.append(f"ice/pyiceberg < {mine['upsert_s'] / timeout:.3f}x (PyIceberg timed out)")
            else:
                parts.append(f"ice/pyiceberg {mine['upsert_s'] / pyi['upsert_s']:.3f}x")
        floor = results.get(FLOOR_OF[engine])
        if floor is not None:
            parts.append(f"ice/{FLOOR_OF[engine]} {mine['upsert_s'] / floor['upsert_s']:.2f}x")
        lines.append(f"  {engine:<10} " + ", ".join(parts))
    return lines


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1M:100k,1M:1M,10M:100k,10M:1M", help="TABLE_ROWS:KEYS,...")
    parser.add_argument("--quick", action="store_true", help="one small size: 200k rows, 20k keys")
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--repeat", type=int, default=3, help="rounds (best kept; PyIceberg runs once)")
    parser.add_argument("--files", type=int, default=10, help="data files in the starting table")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--pyiceberg-timeout", type=float, default=600.0)
    parser.add_argument("--pyiceberg-python", default=None)
    parser.add_argument("--profile", default=None, help="cProfile this icefloe engine's upsert (stderr)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    parser.add_argument("--json", default=None, help="write every result to this file")
    # a child run (internal)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--metadata", help=argparse.SUPPRESS)
    parser.add_argument("--source", help=argparse.SUPPRESS)
    parser.add_argument("--catalog-dir", help=argparse.SUPPRESS)
    parser.add_argument("--files-list", help=argparse.SUPPRESS)
    args, _ = parser.parse_known_args(argv)
    if args.child:
        child = child_floor if args.child.startswith("floor") else child_icefloe
        print(json.dumps(child(args)))
        return 0

    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    unknown = set(engines) - set(ENGINES)
    if unknown:
        raise SystemExit(f"unknown engines {sorted(unknown)}; choose from {', '.join(ENGINES)}")
    if "pyiceberg" in engines:
        from appends import pyiceberg_python

        args.pyiceberg_python = pyiceberg_python(args.pyiceberg_python)
    sizes = (
        [(200_000, 20_000)]
        if args.quick
        else [(_count(t), _count(k)) for t, k in (s.split(":") for s in args.sizes.split(","))]
    )
    scratch = Path(tempfile.mkdtemp(prefix="icefloe-bench-upsert-"))
    print(f"{os.cpu_count()} CPUs; scratch {scratch}", flush=True)
    everything: dict[str, Any] = {}
    lines: list[str] = []
    starts: dict[int, Start] = {}
    try:
        for rows, keys in sizes:
            if rows not in starts:
                t0 = time.perf_counter()
                starts[rows] = build_table(scratch, rows, args.files, args.seed)
                size_mb = sum(os.path.getsize(p) for p in starts[rows].files) / 2**20
                print(
                    f"built {rows:,} rows in {len(starts[rows].files)} files ({size_mb:,.0f} MiB) "
                    f"in {time.perf_counter() - t0:.0f} s",
                    flush=True,
                )
            start = starts[rows]
            source = change_set(start, keys, args.seed)
            source_path = scratch / f"source-{rows}-{keys}.parquet"
            pq.write_table(source, source_path)
            want = expected(start, source)
            del source
            label = f"upsert {keys:,} keys into {rows:,} rows"
            results: dict[str, dict[str, Any] | None] = {}
            for round_number in range(args.repeat):
                for engine in engines:
                    if engine == "pyiceberg" and round_number:
                        continue  # minutes per run: once
                    got = run_child(engine, start, source_path, scratch, args)
                    if got is not None:
                        check(engine, got, want)
                    results[engine] = _better(results.get(engine), got, first=not round_number)
                    print(f"  {label}: {engine} {_seconds(got, args.pyiceberg_timeout)} s", flush=True)
            everything[label] = results
            block = report(label, results, args.pyiceberg_timeout)
            print("\n".join(block), flush=True)
            lines += block
    finally:
        if args.keep:
            print(f"kept {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    print("\n".join(["", "summary:", *lines]))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(everything, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
