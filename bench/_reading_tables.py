"""The tables of ``bench/reading.py``, written by icefloe, cached under ``bench/out/reading/``.

- *events*: 6,000,000 rows in 12 files (one append each): ``id long`` (ever-increasing, so an
  ``id`` range selects whole row groups), ``ts timestamp``, ``country string`` (a few hundred
  distinct values: Parquet dictionary-encodes it), ``amount double``, ``qty int``,
  ``note string`` (mostly distinct);
- *wide*: 4,000,000 rows in 10 files, the same six columns, with ``ts`` increasing across the
  table (a time range selects a few row groups) and ``id`` random;
- *big*: 24,000,000 rows in 24 files (for streaming with bounded memory), the same columns.

Files are written with row groups of about 128,000 rows (``write.parquet.row-group-limit``), so
row-group pruning has something to prune.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

import icefloe

__all__ = ["OUT", "ReadTable", "TableParams", "ensure_table"]

OUT = Path(__file__).resolve().parent / "out" / "reading"
GENERATOR_VERSION = 2  # 2: icefloe writes a page index
ROW_GROUP_ROWS = 128_000
START_US = 1_704_067_200_000_000  # 2024-01-01


@dataclass(frozen=True)
class TableParams:
    name: str
    files: int
    rows_per_file: int
    ts_sorted: bool  # ts increases across the table (else: id does)
    seed: int = 11
    row_group_rows: int = 0  # 0: ROW_GROUP_ROWS

    @property
    def key(self) -> str:
        groups = f"-rg{self.row_group_rows}" if self.row_group_rows else ""
        return f"{self.name}-f{self.files}-r{self.rows_per_file}{groups}-s{self.seed}-g{GENERATOR_VERSION}"

    @property
    def rows(self) -> int:
        return self.files * self.rows_per_file


@dataclass(frozen=True)
class ReadTable:
    params: TableParams
    warehouse: Path
    metadata: Path
    files: tuple[str, ...]  # the data files (local paths)


SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64()),
        pa.field("ts", pa.timestamp("us")),
        pa.field("country", pa.string()),
        pa.field("amount", pa.float64()),
        pa.field("qty", pa.int32()),
        pa.field("note", pa.string()),
    ]
)
COUNTRIES = np.array([f"country-{i:03d}" for i in range(300)], dtype=object)


def _batch(params: TableParams, rng: np.random.Generator, index: int) -> pa.Table:
    n = params.rows_per_file
    start = index * n
    if params.ts_sorted:
        ids = rng.integers(0, 1 << 62, size=n)
        ts = START_US + (start + np.arange(n, dtype=np.int64)) * 1_000_000
    else:
        ids = start + np.arange(n, dtype=np.int64)
        ts = START_US + rng.integers(0, 365 * 86_400_000_000, size=n)
    notes = np.char.add("note-", rng.integers(0, 1 << 40, size=n).astype(str))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "ts": pa.array(ts, pa.timestamp("us")),
            "country": pa.array(COUNTRIES[rng.integers(0, len(COUNTRIES), size=n)], pa.string()),
            "amount": pa.array(rng.random(n) * 1000, pa.float64()),
            "qty": pa.array(rng.integers(0, 100, size=n).astype(np.int32), pa.int32()),
            "note": pa.array(notes, pa.string()),
        },
        schema=SCHEMA,
    )


def ensure_table(params: TableParams, *, log: bool = True) -> ReadTable:
    """The table for ``params``, built on first use."""
    root = OUT / params.key
    stamp = root / "ready.json"
    if not stamp.is_file():
        if log:
            print(f"  building table {params.key} ({params.rows:,} rows) ...", flush=True)
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        catalog = icefloe.load_catalog("bench", type="hadoop", warehouse=str(root / "warehouse"))
        catalog.create_namespace("db")
        table = catalog.create_table(
            "db.t",
            SCHEMA,
            properties={
                "write.parquet.row-group-limit": str(params.row_group_rows or ROW_GROUP_ROWS),
                "write.parquet.row-group-size-bytes": str(1 << 30),
                "write.target-file-size-bytes": str(1 << 40),
            },
        )
        rng = np.random.default_rng(params.seed)
        for index in range(params.files):
            table.append(_batch(params, rng, index))
        assert table.metadata_location is not None
        stamp.write_text(json.dumps({"metadata": table.metadata_location.removeprefix("file://")}))
    info = json.loads(stamp.read_text())
    catalog = icefloe.load_catalog("bench", type="hadoop", warehouse=str(root / "warehouse"))
    files = tuple(
        task.file.file_path.removeprefix("file://")
        for task in catalog.load_table("db.t").new_scan().plan_files()
    )
    return ReadTable(params, root / "warehouse", Path(info["metadata"]), files)
