"""Benchmark: delete 1% of the rows spread over 200 files, icefloe vs PyIceberg 0.12.

An unpartitioned table of 200 data files x ``--rows`` rows (id long, r int, amount double,
score double, label string, note string), appended as 200 one-file appends into a fresh table
of a SQL catalog on SQLite; then ``DELETE WHERE r = 0``. ``r`` takes every value 0..99
equally often in every file (a shuffled ``arange(rows) % 100``), so the delete removes 1% of
the rows of each of the 200 files: no file can be dropped whole, every file is touched.

Variants, in the same run:

- icefloe v2 merge-on-read: ``table.delete("r = 0")`` with ``write.delete.mode=merge-on-read``
  writes position delete files;
- icefloe v3 merge-on-read: the same on a format-version 3 table writes deletion vectors
  (Puffin);
- icefloe v2 copy-on-write (reference): rewrites the 200 files without the deleted rows;
- PyIceberg 0.12 ``table.delete("r == 0")``: copy-on-write, its only delete. It runs as a
  subprocess (``bench/_pyiceberg_deletes.py``) in the interop harness's PyIceberg environment
  (``tests/interop/engines.py``), so icefloe's venv needs no pyiceberg.

Only the delete and the reads are timed. Per variant: delete wall time; bytes it wrote (new
files on disk outside ``metadata/``, checked against the files its snapshot added and against
the summary's ``added-files-size``); files added; manifest bytes; full-scan time
(``table.scan().to_arrow()``, best of ``--reads``) before and after the delete, each engine
reading its own table, and the slowdown after/before. Rows after must equal rows before
minus the rows ``r = 0`` selects, the same ids must survive in every engine, and no row with
``r = 0`` may remain. Ratios are icefloe / PyIceberg from the same run.

Usage, from the repository with the project venv::

    python bench/deletes.py                      # 200 files x 5,000 rows, 3 rounds
    python bench/deletes.py --rows 500 --repeat 1
    python bench/deletes.py --profile ice-v3-dv  # also cProfile that variant's delete and read
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import hashlib
import io
import json
import os
import platform
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from appends import _short, pyiceberg_python  # noqa: E402

import icefloe  # noqa: E402

PYICEBERG_SCRIPT = HERE / "_pyiceberg_deletes.py"
SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("r", pa.int32()),
        ("amount", pa.float64()),
        ("score", pa.float64()),
        ("label", pa.string()),
        ("note", pa.string()),
    ]
)
LABELS = np.array(["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"])
ICEFLOE_FILTER, PYICEBERG_FILTER = "r = 0", "r == 0"


@dataclass(frozen=True, slots=True)
class Variant:
    name: str
    label: str
    properties: dict[str, str]


VARIANTS = {
    v.name: v
    for v in (
        Variant(
            "ice-v2-mor",
            "icefloe v2 merge-on-read (position deletes)",
            {"format-version": "2", "write.delete.mode": "merge-on-read"},
        ),
        Variant(
            "ice-v3-dv",
            "icefloe v3 merge-on-read (deletion vectors)",
            {"format-version": "3", "write.delete.mode": "merge-on-read"},
        ),
        Variant(
            "ice-v2-cow",
            "icefloe v2 copy-on-write",
            {"format-version": "2", "write.delete.mode": "copy-on-write"},
        ),
    )
}
PYICEBERG = "pyi-v2-cow"


# ---- data ----------------------------------------------------------------------------------


def generate_batches(files: int, rows: int, seed: int) -> list[pa.Table]:
    """Deterministic batches, one per data file; ``r`` holds each of 0..99 equally often in
    every batch (shuffled), so ``r = 0`` selects ``ceil(rows / 100)`` rows of each."""
    rng = np.random.default_rng(seed)
    batches = []
    for i in range(files):
        batches.append(
            pa.table(
                {
                    "id": pa.array(np.arange(i * rows, (i + 1) * rows, dtype=np.int64)),
                    "r": pa.array(rng.permutation(np.arange(rows) % 100).astype(np.int32)),
                    "amount": pa.array(np.round(rng.gamma(2.0, 25.0, rows), 2)),
                    "score": pa.array(rng.normal(0.0, 1.0, rows)),
                    "label": pa.array(rng.choice(LABELS, rows)),
                    "note": pa.array(np.char.mod("%016x", rng.integers(0, 2**62, rows))),
                },
                schema=SCHEMA,
            )
        )
    return batches


def write_batches(batches: list[pa.Table], path: Path) -> None:
    """One row group per batch, so the other process reads back exactly the same batches."""
    with pq.ParquetWriter(path, SCHEMA) as writer:
        for batch in batches:
            writer.write_table(batch, row_group_size=batch.num_rows)


# ---- one run of one variant ------------------------------------------------------------------


def _local(path: str) -> str:
    return path.removeprefix("file://")


def _files_on_disk(root: Path) -> dict[str, int]:
    found = {}
    for directory, _, names in os.walk(root):
        for name in names:
            path = os.path.join(directory, name)
            found[path] = os.path.getsize(path)
    return found


def _timed_reads(table: Any, count: int, profile: cProfile.Profile | None) -> tuple[list[float], pa.Table]:
    times = []
    result = None
    for i in range(count):
        result = None
        gc.collect()
        if profile is not None and i == 0:
            profile.enable()
        t0 = time.perf_counter()
        result = table.scan().to_arrow()
        times.append(time.perf_counter() - t0)
        if profile is not None and i == 0:
            profile.disable()
    assert result is not None
    return times, result


def _ids_sha256(result: pa.Table) -> str:
    ids = np.sort(result.column("id").to_numpy())
    return hashlib.sha256(ids.astype(np.int64).tobytes()).hexdigest()


def run_icefloe(
    variant: Variant,
    batches: list[pa.Table],
    warehouse: Path,
    reads: int,
    profiles: dict[str, cProfile.Profile] | None,
) -> dict[str, Any]:
    """The same raw facts ``_pyiceberg_deletes.py`` prints, for one icefloe variant."""
    catalog = icefloe.load_catalog(
        "bench", type="sql", uri=f"sqlite:///{warehouse / 'catalog.db'}", warehouse=str(warehouse)
    )
    catalog.create_namespace("bench")
    table = catalog.create_table("bench.deletes", SCHEMA, properties=variant.properties)
    started = time.perf_counter()
    for batch in batches:
        table.append(batch)
    setup_s = time.perf_counter() - started

    fio = table.io()
    before = table.current_snapshot()
    assert before is not None
    known = {s.snapshot_id for s in table.snapshots()}
    location = Path(_local(table.location()))
    on_disk_before = _files_on_disk(location)

    read_before, result = _timed_reads(table, reads, None)
    rows_before = result.num_rows
    del result

    gc.collect()
    delete_profile = profiles["delete"] if profiles else None
    if delete_profile is not None:
        delete_profile.enable()
    t0 = time.perf_counter()
    table.delete(ICEFLOE_FILTER)
    delete_s = time.perf_counter() - t0
    if delete_profile is not None:
        delete_profile.disable()

    new = [s for s in table.snapshots() if s.snapshot_id not in known]
    added = []
    removed_data = removed_deletes = 0
    for snapshot in new:
        for file in [*snapshot.added_data_files(fio), *snapshot.added_delete_files(fio)]:
            added.append(
                {
                    "path": _local(file.file_path),
                    "content": {0: "data", 1: "position-deletes", 2: "equality-deletes"}[int(file.content)],
                    "format": str(file.file_format.value).lower(),
                    "size": file.file_size_in_bytes,
                    "content_size": file.content_size_in_bytes,
                    "records": file.record_count,
                }
            )
        removed_data += len(snapshot.removed_data_files(fio))
        removed_deletes += len(snapshot.removed_delete_files(fio))
    on_disk_after = _files_on_disk(location)

    after = table.current_snapshot()
    assert after is not None
    read_after, result = _timed_reads(table, reads, profiles["read"] if profiles else None)
    facts = {
        "engine": "icefloe",
        "version": icefloe.__version__,
        "setup_s": setup_s,
        "manifests_before": len(before.all_manifests(fio)),
        "manifests_after": len(after.all_manifests(fio)),
        "rows_before": rows_before,
        "read_before_s": read_before,
        "delete_s": delete_s,
        "snapshots": [{"operation": s.operation, "summary": dict(s.summary)} for s in new],
        "added": added,
        "removed_data_files": removed_data,
        "removed_delete_files": removed_deletes,
        "new_files": {p: size for p, size in on_disk_after.items() if p not in on_disk_before},
        "rows_after": result.num_rows,
        "read_after_s": read_after,
        "ids_sha256": _ids_sha256(result),
        "matching_after": pc.sum(pc.equal(result.column("r"), 0)).as_py() or 0,
    }
    return facts


def run_pyiceberg(python: Path, data: Path, warehouse: Path, reads: int) -> dict[str, Any]:
    cmd = [str(python), str(PYICEBERG_SCRIPT), "--data", str(data), "--warehouse", str(warehouse)]
    cmd += ["--filter", PYICEBERG_FILTER, "--reads", str(reads)]
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"}}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"the PyIceberg run failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


# ---- what a run shows --------------------------------------------------------------------------


@dataclass
class Outcome:
    """One variant's run, reduced to the figures reported and checked."""

    variant: str
    delete_s: float
    read_before_s: float  # best of the reads
    read_after_s: float
    rows_before: int
    rows_after: int
    ids_sha256: str
    written_bytes: int  # new files on disk outside metadata/
    manifest_bytes: int  # new Avro files under metadata/ (manifests and the manifest list)
    metadata_json_bytes: int  # the new metadata JSON (rewritten whole by every commit)
    summary_bytes: int  # sum of added-files-size over the delete's snapshots
    expected_summary_bytes: int  # what Java puts there: file sizes, blob sizes for DVs
    files_added: int  # distinct files the delete's snapshots added
    entries_added: int  # manifest entries they added (one per deletion vector)
    removed_data_files: int
    removed_delete_files: int
    snapshots: int
    operations: list[str]
    setup_s: float
    manifests_before: int
    manifests_after: int
    notes: list[str] = field(default_factory=list)

    @property
    def slowdown(self) -> float:
        return self.read_after_s / self.read_before_s


def reduce(variant: str, facts: dict[str, Any], expected_deleted: int) -> Outcome:
    """Check one run's facts and keep its figures; a broken invariant ends the benchmark."""
    new_files: dict[str, int] = facts["new_files"]
    data_like = {p: s for p, s in new_files.items() if "/metadata/" not in p}
    manifests = {p: s for p, s in new_files.items() if "/metadata/" in p and p.endswith(".avro")}
    metadata_json = {p: s for p, s in new_files.items() if p.endswith(".metadata.json")}
    added: list[dict[str, Any]] = facts["added"]
    paths = {a["path"] for a in added}
    summaries = [s["summary"] for s in facts["snapshots"]]
    summary_bytes = sum(int(s.get("added-files-size", 0)) for s in summaries)
    expected = sum(
        a["content_size"] if a["format"] == "puffin" and a["content_size"] is not None else a["size"]
        for a in added
    )
    deleted = facts["rows_before"] - facts["rows_after"]
    problems = []
    if deleted != expected_deleted:
        problems.append(f"deleted {deleted:,} rows, expected {expected_deleted:,}")
    if facts["matching_after"]:
        problems.append(f"{facts['matching_after']} rows with r = 0 remain")
    missing = paths - set(data_like)
    if missing:
        problems.append(f"{len(missing)} added files are not new on disk, e.g. {sorted(missing)[0]}")
    if problems:
        raise SystemExit(f"{variant}: " + "; ".join(problems))
    notes = []
    orphans = set(data_like) - paths
    if orphans:
        notes.append(f"{len(orphans)} new files on disk are in no snapshot (e.g. {sorted(orphans)[0]})")
    wrong_size = [a["path"] for a in added if data_like.get(a["path"]) != a["size"]]
    if wrong_size:
        notes.append(f"{len(wrong_size)} added files' file_size_in_bytes differ from disk")
    if summary_bytes != expected:
        notes.append(
            f"summary added-files-size {summary_bytes:,} B, but the added files hold {expected:,} B "
            "by Java's rule (file sizes; blob sizes for deletion vectors)"
        )
    return Outcome(
        variant=variant,
        delete_s=facts["delete_s"],
        read_before_s=min(facts["read_before_s"]),
        read_after_s=min(facts["read_after_s"]),
        rows_before=facts["rows_before"],
        rows_after=facts["rows_after"],
        ids_sha256=facts["ids_sha256"],
        written_bytes=sum(data_like.values()),
        manifest_bytes=sum(manifests.values()),
        metadata_json_bytes=sum(metadata_json.values()),
        summary_bytes=summary_bytes,
        expected_summary_bytes=expected,
        files_added=len(paths),
        entries_added=len(added),
        removed_data_files=facts["removed_data_files"],
        removed_delete_files=facts["removed_delete_files"],
        snapshots=len(summaries),
        operations=[str(s["operation"]) for s in facts["snapshots"]],
        setup_s=facts["setup_s"],
        manifests_before=facts["manifests_before"],
        manifests_after=facts["manifests_after"],
        notes=notes,
    )


def best(runs: list[Outcome]) -> Outcome:
    """The rounds of one variant folded into one: best delete time and best reads of any
    round (bytes and counts must agree between rounds; the first round's are kept)."""
    first = runs[0]
    return Outcome(
        **{
            **asdict(first),
            "delete_s": min(r.delete_s for r in runs),
            "read_before_s": min(r.read_before_s for r in runs),
            "read_after_s": min(r.read_after_s for r in runs),
            "setup_s": min(r.setup_s for r in runs),
        }
    )


# ---- report --------------------------------------------------------------------------------


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "-"


COLUMNS: list[tuple[str, Callable[[Outcome], str], Callable[[Outcome, Outcome], str] | None]] = [
    ("delete s", lambda o: f"{o.delete_s:.3f}", lambda o, p: _ratio(o.delete_s, p.delete_s)),
    (
        "written KiB",
        lambda o: f"{o.written_bytes / 1024:,.1f}",
        lambda o, p: _ratio(o.written_bytes, p.written_bytes),
    ),
    ("summary KiB", lambda o: f"{o.summary_bytes / 1024:,.1f}", None),
    (
        "files",
        lambda o: f"{o.files_added}" + (f" ({o.entries_added})" if o.entries_added != o.files_added else ""),
        None,
    ),
    ("manifests KiB", lambda o: f"{o.manifest_bytes / 1024:,.1f}", None),
    ("read before s", lambda o: f"{o.read_before_s:.3f}", None),
    ("read after s", lambda o: f"{o.read_after_s:.3f}", lambda o, p: _ratio(o.read_after_s, p.read_after_s)),
    ("slowdown", lambda o: f"{o.slowdown:.2f}x", lambda o, p: _ratio(o.slowdown, p.slowdown)),
]


def render(outcomes: list[Outcome], labels: dict[str, str]) -> str:
    pyi = next(o for o in outcomes if o.variant == PYICEBERG)
    header = ["variant"]
    for name, _, ratio in COLUMNS:
        header.append(name)
        if ratio is not None:
            header.append("/pyi")
    rows = []
    for o in outcomes:
        row = [o.variant]
        for _, value, ratio in COLUMNS:
            row.append(value(o))
            if ratio is not None:
                row.append("" if o is pyi else ratio(o, pyi))
        rows.append(row)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join([cells[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(cells[1:], widths[1:]))])

    out = [line(header), "  ".join("-" * w for w in widths), *(line(r) for r in rows), ""]
    for o in outcomes:
        removed = f"{o.removed_data_files} data files"
        if o.removed_delete_files:
            removed += f", {o.removed_delete_files} delete files"
        out.append(
            f"{o.variant:<11} {labels[o.variant]}: {o.snapshots} snapshot(s) "
            f"({', '.join(o.operations)}), removed {removed}; manifests {o.manifests_before} before, "
            f"{o.manifests_after} after; metadata JSON {o.metadata_json_bytes / 1024:,.0f} KiB; "
            f"setup (appends) {o.setup_s:.1f} s"
        )
        out.extend(f"{'':<11} note: {n}" for n in o.notes)
    return "\n".join(out)


def print_profile(title: str, profile: cProfile.Profile, limit: int) -> None:
    stream = io.StringIO()
    stats = pstats.Stats(profile, stream=stream)
    total = sum(entry[2] for entry in stats.stats.values())  # type: ignore[attr-defined]
    print(f"\n{title} under cProfile: {total:.2f} s of own time in Python functions")
    by_file: dict[str, float] = {}
    for (filename, _, _), entry in stats.stats.items():  # type: ignore[attr-defined]
        by_file[_short(filename)] = by_file.get(_short(filename), 0.0) + entry[2]
    print("own time by file (top 12):")
    for name, seconds in sorted(by_file.items(), key=lambda kv: -kv[1])[:12]:
        print(f"  {seconds:7.3f} s  {seconds / total:6.1%}  {name}")
    stats.sort_stats("cumulative").print_stats(limit)
    print(stream.getvalue())


# ---- main ----------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="icefloe vs PyIceberg: delete 1% of the rows of 200 files")
    parser.add_argument("--files", type=int, default=200, help="data files (one append each)")
    parser.add_argument("--rows", type=int, default=5000, help="rows per data file")
    parser.add_argument(
        "--variants", default=",".join(VARIANTS), help=f"icefloe variants: {', '.join(VARIANTS)}"
    )
    parser.add_argument("--repeat", type=int, default=3, help="rounds (fresh tables each), best time kept")
    parser.add_argument("--reads", type=int, default=3, help="full-scan reads before and after, best kept")
    parser.add_argument("--seed", type=int, default=20240101)
    parser.add_argument("--pyiceberg-python", help="interpreter with pyiceberg 0.12 (default: the harness's)")
    parser.add_argument("--profile", choices=list(VARIANTS), help="cProfile this variant's delete and read")
    parser.add_argument("--json", type=Path, help="also write every round's figures to this JSON file")
    parser.add_argument("--keep", action="store_true", help="keep the warehouses (their path is printed)")
    args = parser.parse_args(argv)
    chosen = [VARIANTS[name.strip()] for name in args.variants.split(",") if name.strip()]
    if args.repeat < 1 or args.reads < 1:
        parser.error("--repeat and --reads must be at least 1")

    python = pyiceberg_python(args.pyiceberg_python)
    print(
        f"icefloe {icefloe.__version__} vs PyIceberg 0.12 ({python}): delete {ICEFLOE_FILTER!r} "
        f"from {args.files} files x {args.rows:,} rows, SQL catalog on SQLite, {args.repeat} round(s)\n"
        f"python {platform.python_version()}, pyarrow {pa.__version__}, {os.cpu_count()} cpus, "
        f"load average {os.getloadavg()[0]:.1f}, seed {args.seed}",
        flush=True,
    )
    workdir = Path(tempfile.mkdtemp(prefix="icefloe-bench-deletes-"))
    data = workdir / "batches.parquet"
    write_batches(generate_batches(args.files, args.rows, args.seed), data)
    # Both sides read the batches from the same file, so both append identical Arrow data.
    source = pq.ParquetFile(data)
    batches = [source.read_row_group(i) for i in range(source.num_row_groups)]
    expected_deleted = sum(pc.sum(pc.equal(b.column("r"), 0)).as_py() or 0 for b in batches)
    total_rows = sum(b.num_rows for b in batches)

    profiles = {"delete": cProfile.Profile(), "read": cProfile.Profile()} if args.profile else None
    rounds: dict[str, list[Outcome]] = {v.name: [] for v in chosen} | {PYICEBERG: []}
    for round_no in range(1, args.repeat + 1):
        print(f"  round {round_no}:", end="", flush=True)
        for variant in chosen:
            profile = profiles if round_no == 1 and variant.name == args.profile else None
            facts = run_icefloe(
                variant, batches, workdir / f"r{round_no}-{variant.name}", args.reads, profile
            )
            rounds[variant.name].append(reduce(variant.name, facts, expected_deleted))
            print(f" {variant.name} {facts['delete_s']:.2f} s;", end="", flush=True)
        facts = run_pyiceberg(python, data, workdir / f"r{round_no}-pyiceberg", args.reads)
        rounds[PYICEBERG].append(reduce(PYICEBERG, facts, expected_deleted))
        print(f" {PYICEBERG} {facts['delete_s']:.2f} s", flush=True)
        if not args.keep:
            for path in workdir.glob(f"r{round_no}-*"):
                shutil.rmtree(path, ignore_errors=True)

    outcomes = [best(runs) for runs in rounds.values()]
    digests = {o.ids_sha256 for o in outcomes}
    if len(digests) != 1 or any(o.rows_before != total_rows for o in outcomes):
        raise SystemExit(
            "the engines do not agree on which rows remain: "
            + str({o.variant: o.ids_sha256[:12] for o in outcomes})
        )
    labels = {v.name: v.label for v in chosen} | {PYICEBERG: "PyIceberg 0.12 v2 copy-on-write"}
    print(
        f"\n{total_rows:,} rows before, {expected_deleted:,} deleted ({expected_deleted / total_rows:.1%}) "
        f"by every engine, the same {total_rows - expected_deleted:,} ids left; load average "
        f"{os.getloadavg()[0]:.1f}\n"
    )
    print(render(outcomes, labels))
    print(
        "\nwritten: new files outside metadata/ (data or delete files, Puffin); summary: added-files-size"
        " of the delete's snapshots; files: files added (manifest entries when more); manifests: new"
        " manifests and manifest list; /pyi: icefloe / PyIceberg"
    )
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "files": args.files,
            "rows": args.rows,
            "deleted": expected_deleted,
            "rounds": {name: [asdict(r) for r in runs] for name, runs in rounds.items()},
            "best": [asdict(o) for o in outcomes],
        }
        args.json.write_text(json.dumps(payload, indent=1))
    if profiles is not None:
        print_profile(f"icefloe {args.profile} delete", profiles["delete"], limit=30)
        print_profile(f"icefloe {args.profile} read after the delete", profiles["read"], limit=25)
    if args.keep:
        print(f"\nwarehouses kept in {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
