"""Files registered by ``table.add_files`` read identically in Java Iceberg (Spark).

Parquet files written by plain pyarrow (no field ids: Java resolves them through the
``schema.name-mapping.default`` that add_files stores) and with field ids, into unpartitioned
and partitioned tables. Filtered reads go through Java's planner, which prunes by the
partition values and column bounds add_files recorded: a wrong value would drop or keep the
wrong rows. Tables made by create and replace transactions are read too.
"""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import icefloe
from icefloe.arrow.schema import schema_to_arrow

from .engines import JavaEngine
from .tables import assert_engine_read, assert_same_rows, expected_rows, hadoop_catalog, own_rows

pytestmark = pytest.mark.interop

D = decimal.Decimal

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("name", pa.string()),
        pa.field("ts", pa.timestamp("us")),
        pa.field("day", pa.date32()),
        pa.field("amount", pa.decimal128(10, 2)),
        pa.field("point", pa.struct([pa.field("x", pa.float64()), pa.field("y", pa.float64())])),
        pa.field("tags", pa.list_(pa.string())),
    ]
)


def _rows(n: int, start: int = 0, *, day: dt.date | None = None) -> pa.Table:
    ids = list(range(start, start + n))
    base = dt.datetime(2024, 3, 1)
    return pa.table(
        {
            "id": ids,
            "name": [None if i % 5 == 4 else "xyz"[i % 3] for i in ids],
            "ts": [base + dt.timedelta(hours=7 * i) for i in ids],
            "day": [day or dt.date(2024, 3, 1 + i % 3) for i in ids],
            "amount": [D(i) / D(4) for i in ids],
            "point": [None if i % 6 == 5 else {"x": float(i), "y": -float(i)} for i in ids],
            "tags": [[f"t{i}", "all"] if i % 2 else [] for i in ids],
        },
        schema=SCHEMA,
    )


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("add-files")


@pytest.fixture(scope="module")
def catalog(warehouse: Path) -> icefloe.Catalog:
    cat = hadoop_catalog(warehouse)
    cat.create_namespace("db")
    return cat


def _write(folder: Path, name: str, data: pa.Table, *, ids_of: icefloe.Table | None = None) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    if ids_of is not None:
        data = data.cast(schema_to_arrow(ids_of.schema()))
    path = folder / name
    pq.write_table(data, path, row_group_size=5)
    return str(path)


def _assert_java_reads(java: JavaEngine, table: icefloe.Table, data: pa.Table) -> None:
    rows = expected_rows(data)
    assert_same_rows("icefloe", own_rows(table)["rows"], rows)
    result = java.read(table.metadata_location or table.location())
    assert_engine_read("java", result, table, rows, [f.name for f in table.schema().fields])


@pytest.mark.parametrize("version", [1, 2, 3])
def test_unpartitioned_files_without_and_with_ids(
    catalog: icefloe.Catalog, java_engine: JavaEngine, tmp_path: Path, version: int
) -> None:
    table = catalog.create_table(f"db.plain_v{version}", SCHEMA, properties={"format-version": str(version)})
    plain = [_write(tmp_path, f"plain{i}.parquet", _rows(12, start=20 * i)) for i in range(2)]
    table.add_files(plain)
    with_ids = _write(tmp_path, "ids.parquet", _rows(7, start=100), ids_of=table)
    table.add_files([with_ids])
    data = pa.concat_tables([_rows(12), _rows(12, start=20), _rows(7, start=100)])
    _assert_java_reads(java_engine, table, data)
    # Java plans with the recorded bounds: files outside the range are skipped, rows agree.
    where = java_engine.read(table.metadata_location or "", where="id >= 100 AND amount < 26")
    assert_same_rows(
        "java filtered",
        where["rows"],
        expected_rows(data, lambda r: r["id"] >= 100 and r["amount"] < 26),
    )


@pytest.mark.parametrize(
    "terms",
    [["day"], ["day(ts)"], ["bucket(3, id)", "truncate(1, name)"], ["name"]],
    ids=lambda t: "+".join(t),
)
def test_partitioned_files_read_identically(
    catalog: icefloe.Catalog, java_engine: JavaEngine, tmp_path: Path, terms: list[str]
) -> None:
    identifier = "db.part_" + "_".join("".join(c for c in t if c.isalnum()) for t in terms)
    table = catalog.create_table(identifier, SCHEMA, partition_by=terms)
    source = _rows(60)
    # One file per partition of the table's spec, written by plain pyarrow.
    keys = [_partition_key(table, row) for row in source.to_pylist()]
    paths = []
    for index, key in enumerate(sorted(set(keys), key=repr)):
        mask = pa.array([k == key for k in keys])
        paths.append(_write(tmp_path / identifier, f"p{index}.parquet", source.filter(mask)))
    table.add_files(paths)
    recorded = {f.file_path: f.partition for f in table.current_snapshot().added_data_files(table.io())}  # type: ignore[union-attr]
    assert sorted(recorded.values(), key=repr) == sorted(set(keys), key=repr)
    _assert_java_reads(java_engine, table, source)
    filtered = java_engine.read(table.metadata_location or "", where="day = DATE'2024-03-02' AND name = 'y'")
    assert_same_rows(
        "java filtered",
        filtered["rows"],
        expected_rows(source, lambda r: r["day"] == dt.date(2024, 3, 2) and r["name"] == "y"),
    )


def _partition_key(table: icefloe.Table, row: dict[str, Any]) -> tuple[Any, ...]:
    schema = table.schema()
    values = []
    for pf in table.spec().fields:
        source = schema.field(pf.source_id)
        raw = row[source.name]
        values.append(pf.transform.apply(source.field_type, _iceberg_value(raw)))
    return tuple(values)


def _iceberg_value(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return int((value - dt.datetime(1970, 1, 1)) / dt.timedelta(microseconds=1))
    if isinstance(value, dt.date):
        return (value - dt.date(1970, 1, 1)).days
    return value


def test_create_and_replace_transactions_read_identically(
    catalog: icefloe.Catalog, java_engine: JavaEngine, tmp_path: Path
) -> None:
    txn = catalog.create_table_transaction("db.txn", SCHEMA, partition_by=["day"])
    first = _rows(9, day=dt.date(2024, 3, 5))
    txn.add_files([_write(tmp_path / "txn", "seed.parquet", first)])
    txn.append(_rows(6, start=50))
    txn.update_properties().set("owner", "etl").commit()
    txn.commit_transaction()
    table = catalog.load_table("db.txn")
    _assert_java_reads(java_engine, table, pa.concat_tables([first, _rows(6, start=50)]))

    narrower = SCHEMA.remove(SCHEMA.get_field_index("tags")).append(pa.field("note", pa.string()))
    replace = catalog.replace_table_transaction("db.txn", narrower, partition_by=["name"])
    fresh = _rows(8, start=200).drop(["tags"]).append_column("note", pa.array([f"n{i}" for i in range(8)]))
    replace.append(fresh)
    replace.commit_transaction()
    replaced = catalog.load_table("db.txn")
    assert replaced.uuid() == table.uuid()
    _assert_java_reads(java_engine, replaced, fresh)
    # The snapshot before the replacement still reads as it was written (its own schema).
    before = table.current_snapshot()
    assert before is not None
    old = java_engine.read(replaced.metadata_location or "", snapshot_id=before.snapshot_id)
    assert_same_rows(
        "java before replace", old["rows"], expected_rows(pa.concat_tables([first, _rows(6, start=50)]))
    )
