"""Tables icefloe writes read identically in Java Iceberg (Spark), PyIceberg and DuckDB.

Every table is written by icefloe into a Hadoop-layout warehouse; each engine reads it by its
metadata JSON and must return exactly the rows that went in, the current snapshot id and every
snapshot id; icefloe's own scan must return the same rows. Filters go through Java twice: as a
Spark ``WHERE`` (rows) and as Java's own ``TableScan.planFiles()`` over icefloe's manifests
(the files kept must be the ones icefloe keeps, and pruning must happen).

Engine limitations (asserted, so a newer engine that lifts one makes the test say so):

- Java on Spark 3.5 cannot read ``time`` columns nor (Iceberg 1.9.2) ``timestamp_ns``;
- DuckDB 1.5.5 does not know ``timestamptz_ns`` (it reads ``timestamp_ns``, but hands Python
  microseconds: compared through ``epoch_ns``);
- PyIceberg 0.12 reads a null ``list<struct>`` / ``map<_, struct>`` as an empty list / map
  (apache/iceberg-python#251, #3833; the Parquet file holds the null, the other readers see it);
- Java 1.9.2 orders UUIDs as signed longs and cannot push a uuid predicate into its Parquet
  reader (see ``test_uuid_filters``); PySpark cannot return timestamps within a day of
  0001-01-01 (see ``all_types.py``).

One difference is icefloe's own, by design: a comparison with NaN is unknown in icefloe's
filters, while Spark orders NaN above every number (``test_float_filters_differ_...``).
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icefloe
from icefloe.spec.schema import Schema

from .all_types import ALL_TYPES_FIELDS, all_types_data, field, pyiceberg_null_nested_as_empty
from .engines import DuckDBEngine, EngineError, JavaEngine, PyIcebergEngine
from .tables import (
    Filter,
    and_,
    assert_engine_read,
    assert_same_rows,
    eq,
    expected_rows,
    ge,
    gt,
    hadoop_catalog,
    in_,
    is_null,
    java_catalog_table_properties,
    java_partition_paths,
    java_planned_files,
    le,
    lt,
    ne,
    not_,
    not_null,
    or_,
    own_planned_files,
    own_rows,
    snapshot_ids,
    starts_with,
)

pytestmark = pytest.mark.interop

D = decimal.Decimal
UTC = dt.UTC


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("icefloe-writes")


@pytest.fixture(scope="module")
def catalog(warehouse: Path) -> icefloe.Catalog:
    cat = hadoop_catalog(warehouse)
    cat.create_namespace("db")
    return cat


@pytest.fixture(scope="module")
def engines(
    java_engine: JavaEngine, pyiceberg_engine: PyIcebergEngine, duckdb_engine: DuckDBEngine
) -> dict[str, Any]:
    return {"java": java_engine, "pyiceberg": pyiceberg_engine, "duckdb": duckdb_engine}


def _assert_all_read(
    engines: dict[str, Any],
    table: icefloe.Table,
    rows: list[Any],
    *,
    snapshot_id: int | None = None,
    names: tuple[str, ...] = ("java", "pyiceberg", "duckdb"),
) -> None:
    """Every engine in NAMES and icefloe itself read ROWS from TABLE (at SNAPSHOT_ID)."""
    columns = [f.name for f in table.schema().fields] if snapshot_id is None else None
    assert_same_rows("icefloe", own_rows(table, snapshot_id=snapshot_id)["rows"], rows)
    for name in names:
        result = engines[name].read(table.metadata_location, snapshot_id=snapshot_id)
        assert_engine_read(name, result, table, rows, columns)


# ----------------------------------------------------------------------------------------------
# db.sales: the seed's table, three appends, read at every snapshot

SALES_SCHEMA = pa.schema([("id", pa.int32()), ("amount", pa.float64()), ("sale_date", pa.date32())])
SALES_BATCHES = [
    [(1, 10.5, dt.date(2023, 1, 1)), (2, 20.0, dt.date(2023, 1, 2))],
    [(3, 30.25, dt.date(2023, 1, 1)), (4, None, None)],  # a null partition value
    [
        (5, -0.0, dt.date(2023, 1, 3)),
        (6, float("nan"), dt.date(2023, 1, 2)),
        (7, 1e300, dt.date(1969, 12, 31)),
    ],
]


def _sales_batch(rows: list[tuple[Any, ...]]) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(SALES_SCHEMA.names, r)) for r in rows], schema=SALES_SCHEMA)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_sales_reads_identically_at_every_snapshot(
    catalog: icefloe.Catalog, engines: dict[str, Any], java_engine: JavaEngine, warehouse: Path, version: int
) -> None:
    table = catalog.create_table(
        f"db.sales_v{version}",
        SALES_SCHEMA,
        partition_by=["sale_date"],
        properties={
            "owner": "li.luo",
            "write.parquet.compression-codec": "zstd",
            "format-version": str(version),
        },
    )
    history: list[tuple[int, list[Any]]] = []
    written: list[pa.Table] = []
    for batch in SALES_BATCHES:
        data = _sales_batch(batch)
        snapshot = table.append(data)
        assert snapshot is not None
        written.append(data)
        history.append((snapshot.snapshot_id, expected_rows(pa.concat_tables(written))))
    assert snapshot_ids(table) == sorted(sid for sid, _ in history)
    assert table.current_snapshot().snapshot_id == history[-1][0]

    # DuckDB reads v3 metadata as long as no column has a type it lacks (see the ns test).
    _assert_all_read(engines, table, history[-1][1])
    for snapshot_id, rows in history[:-1]:
        _assert_all_read(engines, table, rows, snapshot_id=snapshot_id)

    # Java's HadoopCatalog finds the table by name and sees its properties.
    props = java_catalog_table_properties(java_engine, warehouse, f"db.sales_v{version}")
    assert props["owner"] == "li.luo"
    assert props["write.parquet.compression-codec"] == "zstd"
    assert props["current-snapshot-id"] == str(history[-1][0])


# ----------------------------------------------------------------------------------------------
# db.orders: 100 rows over 4 countries x 3 dates -> exactly 12 data files

COUNTRIES = ["China", "USA", "Brazil", "Côte d'Ivoire"]  # the last one needs escaping in paths
DATES = [dt.date(2023, 1, 1), dt.date(2023, 1, 2), dt.date(2023, 1, 3)]


def _orders() -> pa.Table:
    schema = pa.schema(
        [
            pa.field("order_id", pa.int64(), nullable=False),
            ("country", pa.string()),
            ("grass_date", pa.date32()),
            ("amount", pa.decimal128(10, 2)),
            ("customer", pa.string()),
        ]
    )
    rows = [
        {
            "order_id": i,
            "country": COUNTRIES[i % 4],
            "grass_date": DATES[(i // 4) % 3],  # (i % 4, i // 4 % 3) runs through all 12 pairs
            "amount": D(i * 7) / 4,
            "customer": f"customer-{i % 9}",
        }
        for i in range(100)
    ]
    return pa.Table.from_pylist(rows, schema=schema)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_orders_twelve_partitions_layout_and_reads(
    catalog: icefloe.Catalog, engines: dict[str, Any], java_engine: JavaEngine, version: int
) -> None:
    data = _orders()
    table = catalog.create_table(
        f"db.orders_v{version}",
        data.schema,
        partition_by=["country", "grass_date"],
        properties={"format-version": str(version)},
    )
    snapshot = table.append(data)
    assert snapshot is not None
    files = snapshot.added_data_files(table.io())
    assert len(files) == 12
    assert sum(f.record_count for f in files) == 100

    # Layout: data/country=<c>/grass_date=<d>/<file>.parquet, one file per pair, and the folder
    # is exactly the one Java's PartitionSpec.partitionToPath names for the file's partition.
    location = table.location().removeprefix("file:")
    java_paths = java_partition_paths(java_engine, location)
    assert sorted(java_paths) == sorted(f.file_path for f in files)
    folders = set()
    for file in files:
        local = Path(file.file_path.removeprefix("file:"))
        assert local.is_file(), file.file_path
        assert local.suffix == ".parquet"
        relative = local.parent.relative_to(Path(location) / "data")
        assert str(relative) == java_paths[file.file_path]
        folders.add(str(relative))
    assert len(folders) == 12
    assert "country=USA/grass_date=2023-01-02" in folders
    assert "country=C%C3%B4te+d%27Ivoire/grass_date=2023-01-03" in folders

    _assert_all_read(engines, table, expected_rows(data))

    # One partition through every engine's own filter syntax.
    want = expected_rows(data, lambda r: r["country"] == "USA" and r["grass_date"] == DATES[1])
    assert len(want) == 8
    wheres = {
        "java": "country = 'USA' AND grass_date = date'2023-01-02'",
        "pyiceberg": "country == 'USA' and grass_date == '2023-01-02'",
        "duckdb": "country = 'USA' AND grass_date = DATE '2023-01-02'",
    }
    for name, where in wheres.items():
        assert engines[name].read(table.metadata_location, where=where)["rows"] == want, name
    flt = and_(eq("country", "USA"), eq("grass_date", DATES[1]))
    assert own_rows(table, where=flt.icefloe())["rows"] == want
    planned = java_planned_files(java_engine, location, flt)
    assert len(planned) == 1
    assert planned == own_planned_files(table, flt)


# ----------------------------------------------------------------------------------------------
# every primitive type, nested types, nulls and extreme values


@pytest.mark.parametrize("version", [1, 2, 3])
def test_all_types_read_identically(catalog: icefloe.Catalog, engines: dict[str, Any], version: int) -> None:
    table = catalog.create_table(
        f"db.all_types_v{version}", Schema(*ALL_TYPES_FIELDS), properties={"format-version": str(version)}
    )
    data = all_types_data()
    table.append(data.slice(0, 4))
    table.append(data.slice(4))  # two files: per-file bounds of the extremes are both exercised
    rows = expected_rows(data)
    columns = [f.name for f in ALL_TYPES_FIELDS]
    assert any(isinstance(v, float) and v == 0 and math.copysign(1, v) < 0 for row in rows for v in row)
    assert_same_rows("icefloe", own_rows(table)["rows"], rows)
    for name in ("java", "duckdb"):
        assert_engine_read(name, engines[name].read(table.metadata_location), table, rows, columns)
    result = engines["pyiceberg"].read(table.metadata_location)
    assert_engine_read("pyiceberg", result, table, pyiceberg_null_nested_as_empty(rows, columns), columns)
    # ... and everything but those two columns is exactly right in PyIceberg too.
    others = [c for c in columns if c not in ("lst_st", "mp_st")]
    narrow = engines["pyiceberg"].read(table.metadata_location, columns=others)
    assert narrow["rows"] == expected_rows(data.select(others))


ALL_TYPES_FILTERS = [
    eq("b", True),
    lt("i", 0),
    lt("l", -9_000_000_000_000_000_000),
    gt("dec38", D("1000")),
    lt("dec9", D("0")),
    lt("dt", dt.date(1000, 1, 1)),
    ge("ts", dt.datetime(2024, 1, 1)),
    lt("tstz", dt.datetime(1970, 1, 1, tzinfo=UTC)),
    eq("s", "hello"),
    starts_with("s", "日本"),
    is_null("dt"),
    # uuid: see test_uuid_filters (Java 1.9.2 orders UUIDs differently)
]


def test_all_types_filters_prune_identically(catalog: icefloe.Catalog, java_engine: JavaEngine) -> None:
    """Java prunes with icefloe's bounds of every primitive type exactly as icefloe does: a
    wrongly encoded bound makes Java skip a file (missing rows) or plan a different set."""
    table = catalog.create_table("db.all_types_filters", Schema(*ALL_TYPES_FIELDS))
    data = all_types_data()
    for offset in range(0, data.num_rows, 3):
        table.append(data.slice(offset, 3))
    _check_filters(table, data, java_engine, ALL_TYPES_FILTERS)


def _uuid(first_byte: int, n: int) -> uuid.UUID:
    return uuid.UUID(bytes=bytes([first_byte]) + n.to_bytes(15, "big"))


def test_uuid_filters(catalog: icefloe.Catalog, java_engine: JavaEngine) -> None:
    """Filters on a uuid column: icefloe returns the right rows; Java plans like icefloe except
    where Java 1.9.2 has known UUID bugs (both asserted, so an upgrade shows when they go):

    - icefloe orders UUIDs as unsigned bytes (RFC 9562, Parquet's UUID order, PyIceberg), so
      its bounds are unsigned; Java 1.9.2 compares java.util.UUID as signed longs
      (apache/iceberg#14216): it prunes a file holding the value when the file's UUIDs straddle
      0x80.., and ranges across 0x80.. go wrong. Equalities on files whose UUIDs all share the
      top bit plan identically.
    - Java 1.9.2's Parquet row-group filter fails on any pushed-down uuid predicate with
      ``ClassCastException: java.util.UUID cannot be cast to java.nio.ByteBuffer``
      (apache/iceberg#14027, fixed in 1.10.1), so Spark cannot filter on the column at all.
    """
    low = [_uuid(0x10, 1), _uuid(0x20, 2)]
    high = [_uuid(0x90, 3), _uuid(0xF0, 4)]
    mixed = [_uuid(0x30, 5), _uuid(0xE0, 6)]
    schema = pa.schema([("id", pa.int32()), ("u", pa.uuid())])
    # Spark's vectorized Parquet reader (Iceberg 1.9.2) cannot return a uuid column ("Unsupported
    # type: UTF8String", cf. apache/iceberg#4581); a flat table would use it, so turn it off.
    # (The all-types tables have nested columns, which Spark reads row by row anyway.)
    table = catalog.create_table(
        "db.uuids",
        Schema(field(1, "id", "int"), field(2, "u", "uuid")),
        properties={"read.parquet.vectorization.enabled": "false"},
    )
    batches, snapshots = [], []
    for start, values in ((0, low), (2, high), (4, mixed)):
        batch = pa.Table.from_pylist([{"id": start + i, "u": u} for i, u in enumerate(values)], schema=schema)
        snapshots.append(table.append(batch).snapshot_id)
        batches.append(batch)
    data = pa.concat_tables(batches)
    location = table.location().removeprefix("file:")
    for flt in (eq("u", low[1]), eq("u", high[0]), in_("u", [low[0], high[1]]), gt("u", low[1])):
        want = expected_rows(data, flt.matches)
        assert want and own_rows(table, where=flt.icefloe())["rows"] == want, str(flt)
        # Before the straddling file arrived, Java and icefloe plan the same files for
        # equalities (a range over the top bit is the signed-order bug again, see below).
        before = snapshots[1]
        java_files = java_planned_files(java_engine, location, flt, snapshot_id=before)
        own_files = own_planned_files(table, flt, snapshot_id=before)
        if flt.op == ">":
            assert java_files == [] and len(own_files) == 1, str(flt)  # Java: 0x90.. < 0x20..
        else:
            assert java_files == own_files, str(flt)
    # The straddling file: Java reads its bounds (0x30.., 0xe0..) as (positive, negative).
    flt = eq("u", mixed[1])
    want = expected_rows(data, flt.matches)
    assert len(want) == 1 and own_rows(table, where=flt.icefloe())["rows"] == want
    (straddling,) = [f.file_path for f in table.snapshot(snapshots[2]).added_data_files(table.io())]
    assert straddling in {path for path, _ in own_planned_files(table, flt)}
    assert straddling not in {path for path, _ in java_planned_files(java_engine, location, flt)}
    with pytest.raises(EngineError, match=r"java\.util\.UUID cannot be cast to class java\.nio\.ByteBuffer"):
        java_engine.read(table.metadata_location, where=eq("u", low[1]).spark())
    # Without a pushed-down uuid predicate Spark reads the column fine.
    assert java_engine.read(table.metadata_location)["rows"] == expected_rows(data)


def test_time_reads_identically_where_supported(catalog: icefloe.Catalog, engines: dict[str, Any]) -> None:
    table = catalog.create_table(
        "db.times", Schema(field(1, "id", "int"), field(2, "t", "time"), field(3, "label", "string"))
    )
    data = pa.table(
        {
            "id": pa.array([1, 2, 3, 4, 5], pa.int32()),
            "t": pa.array(
                [
                    dt.time(0),
                    dt.time(23, 59, 59, 999999),
                    dt.time(12, 34, 56, 789000),
                    dt.time(0, 0, 0, 1),
                    None,
                ],
                pa.time64("us"),
            ),
            "label": ["midnight", "last", "noon-ish", "first", None],
        }
    )
    table.append(data)
    _assert_all_read(engines, table, expected_rows(data), names=("pyiceberg", "duckdb"))
    # Spark 3.5 has no TIME type: Java Iceberg refuses the table (the documented limitation).
    with pytest.raises(EngineError, match="Spark does not support time fields"):
        engines["java"].read(table.metadata_location)


NANOS = [1, -1, -(2**63) + 1, 2**63 - 1, 1_700_000_000_123_456_789, None]


def test_timestamp_ns_reads_identically_where_supported(
    catalog: icefloe.Catalog, engines: dict[str, Any]
) -> None:
    table = catalog.create_table(
        "db.timestamps_ns",
        Schema(field(1, "id", "int"), field(2, "ts_ns", "timestamp_ns")),
        properties={"format-version": "3"},
    )
    data = pa.table(
        {"id": pa.array(range(len(NANOS)), pa.int32()), "ts_ns": pa.array(NANOS, pa.timestamp("ns"))}
    )
    table.append(data)
    rows = expected_rows(data)
    assert rows[0][1] != rows[1][1]  # nanoseconds survive normalisation
    _assert_all_read(engines, table, rows, names=("pyiceberg",))
    # DuckDB reads timestamp_ns, but its Python conversion drops the nanoseconds: compare the
    # stored integers instead.
    duck = engines["duckdb"].exec(
        "result = con.sql(f\"SELECT id, epoch_ns(ts_ns) FROM iceberg_scan('{path}') ORDER BY id\").fetchall()",
        path=table.metadata_location,
    )
    assert duck == [[i, n] for i, n in enumerate(NANOS)]
    # Iceberg 1.9.2's Spark 3.5 integration has no conversion for timestamp_ns.
    with pytest.raises(EngineError, match="Cannot convert unknown type to Spark: timestamp_ns"):
        engines["java"].read(table.metadata_location)


def test_timestamptz_ns_reads_identically_where_supported(
    catalog: icefloe.Catalog, engines: dict[str, Any]
) -> None:
    table = catalog.create_table(
        "db.timestamptz_ns",
        Schema(field(1, "id", "int"), field(2, "tstz_ns", "timestamptz_ns")),
        properties={"format-version": "3"},
    )
    data = pa.table(
        {
            "id": pa.array(range(len(NANOS)), pa.int32()),
            "tstz_ns": pa.array(NANOS, pa.timestamp("ns", tz="UTC")),
        }
    )
    table.append(data)
    _assert_all_read(engines, table, expected_rows(data), names=("pyiceberg",))
    # DuckDB 1.5.5's iceberg extension does not know timestamptz_ns; Java/Spark no ns type.
    with pytest.raises(EngineError, match="Unrecognized primitive type: timestamptz_ns"):
        engines["duckdb"].read(table.metadata_location)
    with pytest.raises(EngineError, match="Cannot convert unknown type to Spark: timestamptz_ns"):
        engines["java"].read(table.metadata_location)


# ----------------------------------------------------------------------------------------------
# partition transforms: every engine reads; Java prunes over icefloe's manifests like icefloe

TS_VALUES = [
    dt.datetime(2022, 12, 31, 23, 59, 59, 999999),
    dt.datetime(2023, 1, 1),
    dt.datetime(2023, 6, 15, 12, 30),
    dt.datetime(2023, 6, 15, 13, 0, 0, 1),
    dt.datetime(2024, 2, 29, 8),
    dt.datetime(2024, 3, 1),
    dt.datetime(2025, 7, 4, 23),
    dt.datetime(1970, 1, 1),
    dt.datetime(1969, 12, 31, 23, 59, 59, 999999),  # pre-epoch: transforms round toward -inf
    dt.datetime(1960, 6, 1, 0, 30),
    None,
]
NAMES = ["apple", "apricot", "banana", "ab", "", "abcd", "abcde", "日本語テキスト", "🧊🧊🧊🧊🧊", "Zed", None]


def _transform_data(offset: int, count: int) -> pa.Table:
    rows = []
    for i in range(offset, offset + count):
        rows.append(
            {
                "id": None if i == 5 else i * 37 - 500,
                "name": NAMES[i % len(NAMES)],
                "ts": TS_VALUES[i % len(TS_VALUES)],
                "amount": i / 8,
            }
        )
    schema = pa.schema(
        [("id", pa.int64()), ("name", pa.string()), ("ts", pa.timestamp("us")), ("amount", pa.float64())]
    )
    return pa.Table.from_pylist(rows, schema=schema)


TS_FILTERS = [
    ge("ts", dt.datetime(2024, 3, 1)),
    lt("ts", dt.datetime(1970, 1, 1)),
    and_(ge("ts", dt.datetime(2023, 6, 15, 12)), lt("ts", dt.datetime(2023, 6, 15, 13))),
    eq("ts", dt.datetime(2022, 12, 31, 23, 59, 59, 999999)),
    # Before the epoch a transform rounds down (day -1, not 0): a wrongly truncated partition
    # value makes Java prune the file holding this row.
    eq("ts", dt.datetime(1969, 12, 31, 23, 59, 59, 999999)),
    le("ts", dt.datetime(1969, 12, 31, 23, 59, 59, 999999)),
    is_null("ts"),
]
ID_FILTERS = [
    eq("id", 240),
    in_("id", [-500, -463, 2**40]),
    lt("id", 0),
    or_(eq("id", 1054), is_null("id")),
]
NAME_FILTERS = [
    eq("name", "apricot"),
    starts_with("name", "apr"),
    starts_with("name", "abcde"),  # longer than the truncation width
    starts_with("name", "日本"),
    eq("name", "日本語テキスト"),  # truncation counts code points, not bytes
    eq("name", "🧊🧊🧊🧊🧊"),
    lt("name", "b"),
    gt("name", "abcd"),
    ne("name", "banana"),
    not_(eq("name", "ab")),
    not_null("name"),
]
TRANSFORM_CASES = {
    "day(ts)": TS_FILTERS,
    "month(ts)": TS_FILTERS,
    "year(ts)": TS_FILTERS,
    "hour(ts)": TS_FILTERS,
    "bucket(16, id)": ID_FILTERS,
    "truncate(4, name)": NAME_FILTERS,
}


def _check_filters(
    table: icefloe.Table,
    data: pa.Table,
    java_engine: JavaEngine,
    filters: list[Filter],
    *,
    expect_pruning: bool = True,
) -> None:
    location = table.location().removeprefix("file:")
    all_files = java_planned_files(java_engine, location, None)
    assert all_files == own_planned_files(table, None)
    pruned = 0
    for flt in filters:
        want = expected_rows(data, flt.matches)
        java_rows = java_engine.read(table.metadata_location, where=flt.spark())["rows"]
        assert java_rows == want, f"java --where {flt.spark()}"
        assert own_rows(table, where=flt.icefloe())["rows"] == want, f"icefloe filter {flt}"
        java_files = java_planned_files(java_engine, location, flt)
        own_files = own_planned_files(table, flt)
        if flt.negates:
            # Java never prunes `x != v` with column metrics; icefloe does when a file's lower and
            # upper bounds both equal v and it has no nulls or NaN (every row is v): sound, and
            # the rows above prove it. So icefloe plans at most Java's files here.
            assert set(own_files) <= set(java_files), f"planned files for {flt}"
        else:
            assert java_files == own_files, f"planned files for {flt}"
        pruned += len(java_files) < len(all_files)
    if expect_pruning:
        assert pruned > 0, "no filter pruned a single file"


# Iceberg's Spark functions computing each transform (Java's implementation, row by row).
JAVA_TRANSFORM_FUNCTIONS = {
    "day(ts)": "system.days(ts)",
    "month(ts)": "system.months(ts)",
    "year(ts)": "system.years(ts)",
    "hour(ts)": "system.hours(ts)",
    "bucket(16, id)": "system.bucket(16, id)",
    "truncate(4, name)": "system.truncate(4, name)",
}


@pytest.fixture(scope="module")
def java_catalog(java_engine: JavaEngine, warehouse: Path) -> str:
    """A Java HadoopCatalog over icefloe's warehouse (for Spark SQL on icefloe's tables)."""
    return java_engine.hadoop_catalog(warehouse)


@pytest.mark.parametrize("term", list(TRANSFORM_CASES))
def test_partition_transform_reads_and_prunes_identically(
    catalog: icefloe.Catalog, engines: dict[str, Any], java_engine: JavaEngine, java_catalog: str, term: str
) -> None:
    name = "db.by_" + "".join(ch if ch.isalnum() else "_" for ch in term).strip("_")
    first, second = _transform_data(0, 30), _transform_data(30, 25)
    table = catalog.create_table(name, first.schema, partition_by=[term])
    table.append(first)
    old = table.current_snapshot().snapshot_id
    table.append(second)
    data = pa.concat_tables([first, second])
    _assert_all_read(engines, table, expected_rows(data))
    _assert_all_read(engines, table, expected_rows(first), snapshot_id=old)
    _check_filters(table, data, java_engine, TRANSFORM_CASES[term])
    # Each partition folder is the one Java's PartitionSpec.partitionToPath names.
    location = table.location().removeprefix("file:")
    java_paths = java_partition_paths(java_engine, location)
    assert len(java_paths) > 3
    for path, partition_path in java_paths.items():
        assert (
            str(Path(path.removeprefix("file:")).parent.relative_to(Path(location) / "data"))
            == partition_path
        )
    # Every row's partition value, as Java's own transform function computes it, is the value
    # icefloe recorded for the row's file (Java decodes it from icefloe's manifests).
    spark_table = f"{java_catalog}.{name}"
    field_name = table.spec().fields[0].name
    pairs = java_engine.sql(
        f"""SELECT f.partition.{field_name}, r.value
            FROM (SELECT _file, {java_catalog}.{JAVA_TRANSFORM_FUNCTIONS[term]} AS value FROM {spark_table}) r
            JOIN {spark_table}.files f ON f.file_path = r._file"""
    )["rows"]
    assert len(pairs) == data.num_rows
    assert [recorded for recorded, _ in pairs] == [computed for _, computed in pairs]


def test_many_transforms_in_one_v1_spec(
    catalog: icefloe.Catalog, engines: dict[str, Any], java_engine: JavaEngine
) -> None:
    data = _transform_data(0, 44)
    table = catalog.create_table(
        "db.by_many_v1",
        data.schema,
        partition_by=["month(ts)", "bucket(4, id)", "truncate(2, name)", "truncate(10, id)"],
        properties={"format-version": "1"},
    )
    table.append(data)
    _assert_all_read(engines, table, expected_rows(data))
    _check_filters(table, data, java_engine, [TS_FILTERS[0], TS_FILTERS[1], ID_FILTERS[0], NAME_FILTERS[1]])


# ----------------------------------------------------------------------------------------------
# NaN in filters: a documented difference between icefloe's and Spark's semantics

NAN = float("nan")


def test_float_filters_differ_from_spark_only_on_nan_rows(
    catalog: icefloe.Catalog, java_engine: JavaEngine
) -> None:
    """icefloe's filters treat a comparison with NaN as unknown (``icefloe.expressions.model``:
    ``x != 5`` matches neither nulls nor NaN). Spark SQL orders NaN above every number and
    equal to itself, so Spark's ``x != 1`` and ``x > 2`` keep NaN rows that icefloe drops; its
    ``x < 2`` drops them too. Everything else about the answers is identical."""
    data = pa.table(
        {
            "id": pa.array(range(7), pa.int32()),
            "x": pa.array([1.0, NAN, 3.0, None, -0.0, float("inf"), float("-inf")], pa.float64()),
        }
    )
    table = catalog.create_table("db.nans", data.schema)
    table.append(data)  # one file: its bounds (-inf..inf) prune nothing in either engine
    nan_row = [1, "NaN"]
    cases = [(ne("x", 1.0), True), (gt("x", 2.0), True), (ge("x", -1.0), True), (lt("x", 2.0), False)]
    for flt, spark_keeps_nan in cases:
        spark_rows = java_engine.read(table.metadata_location, where=flt.spark())["rows"]
        own = own_rows(table, where=flt.icefloe())["rows"]
        assert (nan_row in spark_rows) is spark_keeps_nan, flt
        assert nan_row not in own, flt
        assert own == [r for r in spark_rows if r != nan_row], flt
        assert own == expected_rows(data, lambda r, f=flt: None if r["x"] != r["x"] else f.matches(r))
    # IS NAN is where NaN rows are selected, identically.
    assert own_rows(table, where="x IS NAN")["rows"] == [nan_row]
    assert java_engine.read(table.metadata_location, where="isnan(x)")["rows"] == [nan_row]
