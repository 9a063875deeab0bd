"""Manifests and manifest lists PyIceberg 0.12 writes decode natively exactly as with fastavro.

In the PyIceberg server: ``pyiceberg.manifest.write_manifest`` writes v1 and v2 manifests (30
entries each) whose spec has an identity partition on every type PyIceberg supports (int, long,
string, date, time, timestamp, timestamptz, decimal(10, 2), decimal(38, 10), uuid, binary,
fixed[7], boolean, float, double) and bucket / truncate / day / hour / month / year fields, with
nulls, NaN and -0.0, entries without metrics; once per codec it writes (deflate, zstandard,
null; its snappy codec needs python-snappy, which the engine's environment lacks), with a
manifest list over them. And a real table appended through PyIceberg's API (SQLite catalog,
identity partitions on a date and a string, uuid and time columns, a delete that rewrites files:
EXISTING and DELETED entries), with deflate and zstandard.

PyIceberg 0.12 writes an invalid Avro schema when two partition fields share a decimal type
(here ``p_dec10`` and the truncate of ``dec10``): the named fixed ``decimal_10_2`` is defined
twice. fastavro (so icefloe before its native decoder) rejects such a file; arrow-avro reads
it. Those files are compared with fastavro reading a repaired copy (the second definition
replaced by a reference to the first).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from icefloe.io import LocalFileIO
from icefloe.manifests import _native, read_manifest_list
from icefloe.manifests._avro_file import encode_header, fastavro_parses, read_header
from support.native_manifests import assert_list_decodes_alike, assert_manifest_decodes_alike

from .engines import PyIcebergEngine

pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(not _native.native_available(), reason="needs icefloe[fast] (polars-avro)"),
]

WRITE = r"""
import datetime as dt, decimal, random, uuid
from decimal import Decimal
from pathlib import Path
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.io.pyarrow import PyArrowFileIO
from pyiceberg.manifest import (
    DataFile, DataFileContent, FileFormat, ManifestEntry, ManifestEntryStatus, write_manifest,
    write_manifest_list,
)
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import (
    BucketTransform, DayTransform, HourTransform, IdentityTransform, MonthTransform,
    TruncateTransform, YearTransform,
)
from pyiceberg.typedef import Record
from pyiceberg.types import (
    BinaryType, BooleanType, DateType, DecimalType, DoubleType, FixedType, FloatType, IntegerType,
    LongType, NestedField, StringType, TimestampType, TimestamptzType, TimeType, UUIDType,
)

out = Path(out)
rng = random.Random(9)
TYPES = [
    ("i", IntegerType()), ("l", LongType()), ("s", StringType()), ("d", DateType()), ("t", TimeType()),
    ("ts", TimestampType()), ("tstz", TimestamptzType()), ("dec10", DecimalType(10, 2)),
    ("dec38", DecimalType(38, 10)), ("u", UUIDType()), ("bin", BinaryType()), ("fx", FixedType(7)),
    ("b", BooleanType()), ("f", FloatType()), ("db", DoubleType()),
]

def value(name):
    if rng.random() < 0.1:
        return None
    return {
        "i": lambda: rng.randint(-(2**31), 2**31 - 1),
        "l": lambda: rng.randint(-(2**63), 2**63 - 1),
        "s": lambda: rng.choice(["", "abc", "héllo", "日本語"]),
        "d": lambda: rng.randint(-20000, 60000),
        "t": lambda: rng.randint(0, 86_399_999_999),
        "ts": lambda: rng.randint(-(2**55), 2**55),
        "tstz": lambda: rng.randint(-(2**55), 2**55),
        "dec10": lambda: Decimal(rng.randint(-(10**9), 10**9)).scaleb(-2),
        "dec38": lambda: Decimal(rng.randint(-(10**37), 10**37)).scaleb(-10, decimal.Context(prec=60)),
        "u": lambda: uuid.UUID(int=rng.getrandbits(128)),
        "bin": lambda: rng.randbytes(rng.randint(0, 6)),
        "fx": lambda: rng.randbytes(7),
        "b": lambda: rng.random() < 0.5,
        "f": lambda: rng.choice([1.5, -0.0, float("nan")]),
        "db": lambda: rng.choice([2.25, 0.0, float("-inf")]),
    }[name]()

schema = Schema(*(NestedField(k + 1, n, t, required=False) for k, (n, t) in enumerate(TYPES)))
fields = [PartitionField(k + 1, 1000 + k, IdentityTransform(), f"p_{n}") for k, (n, _) in enumerate(TYPES)]
extra = [
    (2, BucketTransform(16), "l_bucket"), (3, TruncateTransform(3), "s_trunc"),
    (10, BucketTransform(4), "u_bucket"), (6, DayTransform(), "ts_day"), (7, HourTransform(), "tstz_hour"),
    (4, MonthTransform(), "d_month"), (6, YearTransform(), "ts_year"), (8, TruncateTransform(100), "dec10_trunc"),
]
for k, (source, transform, name) in enumerate(extra):
    fields.append(PartitionField(source, 1000 + len(TYPES) + k, transform, name))
spec = PartitionSpec(*fields, spec_id=0)

def partition():
    values = {k + 1: value(n) for k, (n, _) in enumerate(TYPES)}
    row = []
    for pf in spec.fields:
        v = values[pf.source_id]
        source = schema.find_field(pf.source_id).field_type
        row.append(None if v is None else v if isinstance(pf.transform, IdentityTransform) else pf.transform.transform(source)(v))
    return Record(*row)

io = PyArrowFileIO()
lists = []
for version in (1, 2):
    rows = []
    for codec in codecs:
        path = str(out / f"m-v{version}-{codec}.avro")
        with write_manifest(version, spec, schema, io.new_output(path), snapshot_id=3000 + version, avro_compression=codec) as writer:
            for k in range(30):
                ids = list(range(1, len(TYPES) + 1))
                full = k % 5 != 2
                data_file = DataFile.from_args(
                    content=DataFileContent.DATA,
                    file_path=f"s3://b/db/t/data/{k:04d}.parquet",
                    file_format=FileFormat.PARQUET,
                    partition=partition(),
                    record_count=rng.randint(1, 10**6),
                    file_size_in_bytes=rng.randint(1, 10**9),
                    column_sizes={i: rng.randint(1, 1000) for i in ids} if full else None,
                    value_counts={i: 100 for i in ids} if full else None,
                    null_value_counts={i: rng.randint(0, 3) for i in ids} if full else None,
                    nan_value_counts={14: 0, 15: 1} if full else None,
                    lower_bounds={1: (5).to_bytes(4, "little"), 3: b"abc"} if full else None,
                    upper_bounds={1: (9).to_bytes(4, "little"), 3: b"abd"} if full else None,
                    split_offsets=[4] if k % 2 else None,
                    sort_order_id=0 if k % 3 else None,
                )
                writer.add(ManifestEntry.from_args(status=ManifestEntryStatus.ADDED, snapshot_id=3000 + version, data_file=data_file))
        rows.append(writer.to_manifest_file())
    for codec in codecs:
        path = str(out / f"list-v{version}-{codec}.avro")
        with write_manifest_list(version, io.new_output(path), 3000 + version, 76, 3 if version == 2 else None, codec) as lists_writer:
            lists_writer.add_manifests(rows * 4)
        lists.append(path)

import pyarrow as pa
for codec in table_codecs:
    warehouse = out / f"warehouse-{codec}"
    warehouse.mkdir()
    catalog = SqlCatalog("c", uri=f"sqlite:///{warehouse}/catalog.db", warehouse=f"file://{warehouse}")
    catalog.create_namespace("db")
    table_schema = Schema(
        NestedField(1, "id", LongType(), required=False), NestedField(2, "ts", TimestampType(), required=False),
        NestedField(3, "cat", StringType(), required=False), NestedField(4, "amount", DecimalType(10, 2), required=False),
        NestedField(5, "u", UUIDType(), required=False), NestedField(6, "t", TimeType(), required=False),
        NestedField(7, "d", DateType(), required=False),
    )
    # Identity partitions only: PyIceberg computes other transforms on Arrow with pyiceberg-core,
    # which the engine's environment lacks.
    table_spec = PartitionSpec(PartitionField(7, 1000, IdentityTransform(), "d"), PartitionField(3, 1001, IdentityTransform(), "cat"))
    table = catalog.create_table(
        "db.t", table_schema, partition_spec=table_spec,
        properties={"format-version": "2", "write.avro.compression-codec": codec},
    )
    for batch in range(3):
        n = 200
        table.append(pa.table({
            "id": pa.array(range(batch * n, batch * n + n), pa.int64()),
            "ts": pa.array([dt.datetime(2024, 1, 1 + (i % 5), 3, 4, 5, 678) for i in range(n)], pa.timestamp("us")),
            "cat": pa.array([rng.choice(["a", "b", None]) for _ in range(n)], pa.string()),
            "amount": pa.array([Decimal(rng.randint(0, 10**6)).scaleb(-2) for _ in range(n)], pa.decimal128(10, 2)),
            "u": pa.array([uuid.UUID(int=rng.getrandbits(128)).bytes for _ in range(n)], pa.uuid()),
            "t": pa.array([rng.randint(0, 86_399_999_999) for _ in range(n)], pa.time64("us")),
            "d": pa.array([19000 + i % 5 for i in range(n)], pa.date32()),
        }))
    table.delete("id < 50")
    lists.append(catalog.load_table("db.t").current_snapshot().manifest_list)
result = lists
"""


def _repaired(path: Path, directory: Path) -> Path:
    """A copy whose schema defines each named type once (later definitions become references)."""
    data = path.read_bytes()
    header = read_header(data, str(path))
    defined: set[str] = set()

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(n) for n in node]
        if not isinstance(node, dict):
            return node
        if node.get("type") in ("fixed", "record", "enum") and "name" in node:
            if node["name"] in defined:
                return node["name"]
            defined.add(node["name"])
        return {k: walk(v) if k in ("type", "fields", "items", "values") else v for k, v in node.items()}

    metadata = dict(header.metadata)
    metadata["avro.schema"] = json.dumps(walk(json.loads(metadata["avro.schema"]))).encode()
    copy = directory / path.name
    copy.write_bytes(encode_header(metadata, header.sync) + data[header.end :])
    return copy


@pytest.fixture(scope="module")
def written(pyiceberg_engine: PyIcebergEngine, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    out = tmp_path_factory.mktemp("pyiceberg-manifests")
    lists: list[str] = pyiceberg_engine.exec(
        WRITE, out=str(out), codecs=["deflate", "zstandard", "null"], table_codecs=["deflate", "zstandard"]
    )
    return [location.removeprefix("file://") for location in lists]


def test_pyiceberg_manifests_and_lists_decode_alike(written: list[str], tmp_path: Path) -> None:
    seen: set[str] = set()
    repaired = 0
    for location in written:
        rows = assert_list_decodes_alike(Path(location))
        for row in rows:
            path = Path(row.manifest_path.removeprefix("file://"))
            if str(path) in seen:
                continue
            seen.add(str(path))
            data = path.read_bytes()
            reference = None
            if not fastavro_parses(read_header(data, str(path)), str(path)):
                reference = _repaired(path, tmp_path)
                repaired += 1
            assert assert_manifest_decodes_alike(path, row, reference=reference) >= 1
    assert len(seen) >= 10 and repaired >= 6
    # Planning reads the files fastavro cannot: every manifest of every list, natively.
    assert sum(len(read_manifest_list(LocalFileIO(), location)) for location in written) > 0
