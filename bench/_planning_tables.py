"""The tables of ``bench/planning.py``: day-partitioned, many manifests, realistic metrics.

A table is written without any Parquet file: its manifests are written directly with
``icefloe.manifests.ManifestWriter`` (the data files they list do not exist; planning never
opens them) and committed as the current snapshot of a Hadoop-catalog table, so icefloe (the
Hadoop catalog), PyIceberg (``StaticTable.from_metadata``) and Java (``HadoopTables.load``) all
load the same metadata.

Shape: ``manifests`` manifests of ``files`` data files each. Manifest ``i`` holds the files of
day ``i * days // manifests`` (a daily append; several manifests per day when there are more
manifests than days), is ADDED by its own snapshot id, at sequence number ``i + 1``, the way
a table built by daily fast appends looks. Columns: ``ts timestamp`` (partitioned by
``day(ts)``) and twelve ``long`` columns ``c01`` .. ``c12``, every one with value counts, null
counts, column sizes and lower/upper bounds:

- ``c01`` is an ever-increasing event id: file ``g`` (in table order) holds
  ``[g * 1e6, g * 1e6 + records)``, so a range of ids prunes to a few files anywhere in the
  table (a stats-only predicate that prunes well);
- ``c02`` .. ``c12`` hold random ranges within ``[0, 2e9)``.

Tables are cached under ``bench/out/planning/`` keyed by their parameters.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import random
import shutil
from dataclasses import dataclass
from pathlib import Path

import icefloe
from icefloe.manifests import ManifestWriter, write_manifest_list
from icefloe.spec.conversions import to_bytes
from icefloe.spec.manifest import DataFile, FileFormat, ManifestFile
from icefloe.spec.snapshots import Snapshot, SnapshotRefType, new_snapshot_id
from icefloe.spec.types import LongType, TimestampType
from icefloe.spec.updates import AddSnapshot, SetSnapshotRef

__all__ = ["DAY_US", "ID_STRIDE", "START_DAY", "BenchTable", "TableParams", "ensure_table"]

OUT = Path(__file__).resolve().parent / "out" / "planning"
START = dt.date(2024, 1, 1)
START_DAY = (START - dt.date(1970, 1, 1)).days
DAY_US = 86_400_000_000
ID_STRIDE = 1_000_000
RANDOM_RANGE = 2_000_000_000
GENERATOR_VERSION = 1  # bump when the layout below changes: cached tables are rebuilt


@dataclass(frozen=True)
class TableParams:
    manifests: int
    files: int  # per manifest
    days: int
    seed: int = 7
    format_version: int = 2

    @property
    def key(self) -> str:
        return (
            f"m{self.manifests}-f{self.files}-d{self.days}-s{self.seed}-v{self.format_version}"
            f"-g{GENERATOR_VERSION}"
        )

    @property
    def data_files(self) -> int:
        return self.manifests * self.files

    def day_of_manifest(self, i: int) -> int:
        return START_DAY + i * self.days // self.manifests


@dataclass(frozen=True)
class BenchTable:
    params: TableParams
    warehouse: Path
    location: Path  # the table directory (Hadoop layout: warehouse/db/t)
    metadata: Path  # the current metadata JSON


def _long(value: int) -> bytes:
    return to_bytes(LongType(), value)


def _ts(value: int) -> bytes:
    return to_bytes(TimestampType(), value)


def _data_file(rng: random.Random, location: Path, day: int, index: int) -> DataFile:
    records = rng.randint(50_000, 2_000_000)
    lower: dict[int, bytes] = {}
    upper: dict[int, bytes] = {}
    start = day * DAY_US
    ts_low = start + rng.randrange(0, DAY_US // 4)
    ts_high = start + DAY_US - 1 - rng.randrange(0, DAY_US // 4)
    lower[1], upper[1] = _ts(ts_low), _ts(ts_high)
    lower[2], upper[2] = _long(index * ID_STRIDE), _long(index * ID_STRIDE + records - 1)
    for field_id in range(3, 14):
        a = rng.randrange(0, RANDOM_RANGE)
        b = rng.randrange(0, RANDOM_RANGE)
        lower[field_id], upper[field_id] = _long(min(a, b)), _long(max(a, b))
    nulls = {field_id: (rng.randrange(0, records // 100) if field_id > 6 else 0) for field_id in range(1, 14)}
    return DataFile(
        file_path=f"{location}/data/ts_day={dt.date(1970, 1, 1) + dt.timedelta(days=day)}/"
        f"{index:08d}-{rng.getrandbits(64):016x}.parquet",
        file_format=FileFormat.PARQUET,
        record_count=records,
        file_size_in_bytes=records * 13 * 3 + rng.randrange(0, 4096),
        partition=(day,),
        column_sizes={field_id: records * 3 + rng.randrange(0, 1024) for field_id in range(1, 14)},
        value_counts={field_id: records for field_id in range(1, 14)},
        null_value_counts=nulls,
        lower_bounds=lower,
        upper_bounds=upper,
        split_offsets=(4,),
        sort_order_id=0,
    )


def _build(params: TableParams, root: Path) -> BenchTable:
    warehouse = root / "warehouse"
    catalog = icefloe.load_catalog("bench", type="hadoop", warehouse=str(warehouse))
    catalog.create_namespace("db")
    schema = icefloe.Schema(
        icefloe.NestedField(1, "ts", TimestampType(), required=False),
        *(icefloe.NestedField(i, f"c{i - 1:02d}", LongType(), required=False) for i in range(2, 14)),
    )
    table = catalog.create_table(
        "db.t", schema, partition_by=["day(ts)"], properties={"format-version": str(params.format_version)}
    )
    io, spec, schema = table.io(), table.spec(), table.schema()
    location = Path(table.location())
    rng = random.Random(params.seed)
    rows: list[ManifestFile] = []
    index = 0
    total_records = 0
    for i in range(params.manifests):
        snapshot_id = new_snapshot_id()
        path = f"{location}/metadata/bench-{i:05d}-m0.avro"
        writer = ManifestWriter(
            io, path, spec=spec, schema=schema, format_version=params.format_version, snapshot_id=snapshot_id
        )
        day = params.day_of_manifest(i)
        for _ in range(params.files):
            file = _data_file(rng, location, day, index)
            total_records += file.record_count
            writer.add(file)
            index += 1
        row = writer.close()
        rows.append(dataclasses.replace(row, sequence_number=i + 1, min_sequence_number=i + 1))
        if (i + 1) % 200 == 0:
            print(f"    {i + 1}/{params.manifests} manifests", flush=True)
    snapshot_id = new_snapshot_id()
    sequence_number = params.manifests + 1 if params.format_version >= 2 else 0
    list_path = f"{location}/metadata/snap-{snapshot_id}-1-bench.avro"
    write_manifest_list(
        io, list_path, params.format_version, snapshot_id, None, sequence_number, rows, first_row_id=0
    )
    summary = {
        "operation": "append",
        "total-data-files": str(index),
        "total-records": str(total_records),
        "total-delete-files": "0",
        "total-position-deletes": "0",
        "total-equality-deletes": "0",
        "total-files-size": "0",
    }
    snapshot = Snapshot(
        snapshot_id=snapshot_id,
        timestamp_ms=table.metadata.last_updated_ms + 1,
        manifest_list=list_path,
        sequence_number=sequence_number,
        summary=summary,
        schema_id=schema.schema_id,
    )
    catalog.backend.commit_table(
        ("db", "t"),
        None,
        [],
        [AddSnapshot(snapshot), SetSnapshotRef("main", snapshot_id, SnapshotRefType.BRANCH)],
    )
    table = table.refresh()
    assert table.metadata_location is not None
    return BenchTable(params, warehouse, location, Path(table.metadata_location.removeprefix("file://")))


def ensure_table(params: TableParams, *, log: bool = True) -> BenchTable:
    """The table for ``params``, built on first use (under ``bench/out/planning/<key>``)."""
    root = OUT / params.key
    stamp = root / "ready.json"
    if stamp.is_file():
        info = json.loads(stamp.read_text())
        return BenchTable(params, Path(info["warehouse"]), Path(info["location"]), Path(info["metadata"]))
    if log:
        print(f"  building table {params.key} ({params.data_files:,} data files) ...", flush=True)
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    built = _build(params, root)
    stamp.write_text(
        json.dumps(
            {
                "warehouse": str(built.warehouse),
                "location": str(built.location),
                "metadata": str(built.metadata),
            }
        )
    )
    return built
