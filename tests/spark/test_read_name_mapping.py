"""isp.read of data files without field ids (imported with ``add_files``): read by name through
the table's name mapping, nested fields included, next to files with ids, after renames and
added columns, with deletes and filters; the rows equal icefloe's own scan."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icefloe import Catalog, Table
from icefloe import spark as isp
from support.spark import sorted_tuples, spark_rows

RAW = pa.schema(
    [
        pa.field("id", pa.int64()),
        pa.field("name", pa.string()),
        pa.field("qty", pa.int32()),
        pa.field("point", pa.struct([pa.field("x", pa.float64()), pa.field("y", pa.float64())])),
        pa.field("tags", pa.list_(pa.struct([pa.field("k", pa.string()), pa.field("v", pa.int64())]))),
        pa.field("attrs", pa.map_(pa.string(), pa.int64())),
    ]
)


def _raw_rows(ids: range) -> pa.Table:
    return pa.Table.from_pylist(
        [
            {
                "id": i,
                "name": None if i % 5 == 0 else f"n{i}",
                "qty": i % 7,
                "point": None if i % 4 == 0 else {"x": i * 0.5, "y": -i * 1.0},
                "tags": None if i % 6 == 0 else [{"k": f"t{i}", "v": i}, {"k": "z", "v": None}],
                "attrs": None if i % 3 == 0 else [("a", i), ("b", None)],
            }
            for i in ids
        ],
        schema=RAW,
    )


def _same(spark: object, table: Table, **kwargs: object) -> list[tuple[object, ...]]:
    got = spark_rows(isp.read(spark, table, **kwargs))
    scan = table.new_scan()
    if kwargs.get("filter") is not None:
        scan = scan.filter(kwargs["filter"])
    if kwargs.get("columns") is not None:
        scan = scan.select(*kwargs["columns"])
    assert got == sorted_tuples(scan.to_arrow())
    return got


@pytest.fixture
def imported(catalog: Catalog, tmp_path: Path) -> Table:
    """A table of two imported files without ids (of two different shapes) and one appended
    file with ids."""
    table = catalog.create_table("db.imported", RAW)
    raw = tmp_path / "raw"
    raw.mkdir()
    pq.write_table(_raw_rows(range(0, 40)), raw / "a.parquet")
    # Another shape: columns in another order, one missing (qty).
    pq.write_table(
        _raw_rows(range(40, 60)).select(["attrs", "point", "name", "id", "tags"]), raw / "b.parquet"
    )
    table.add_files([str(raw / "a.parquet"), str(raw / "b.parquet")])
    table.append(_raw_rows(range(60, 80)).cast(table.new_scan().to_arrow().schema))
    return table


def test_files_without_ids_read_by_name(spark: object, imported: Table) -> None:
    rows = _same(spark, imported)
    assert len(rows) == 80
    _same(spark, imported, filter="qty = 3 OR id >= 75", columns=["id", "point", "tags"])
    _same(spark, imported, filter="point.x > 10", columns=["id", "attrs"])


@pytest.mark.every_session
def test_renames_added_columns_and_deletes_over_files_without_ids(spark: object, imported: Table) -> None:
    (
        imported.update_schema()
        .rename_column("name", "label")
        .rename_column("point.x", "lon")
        .add_column("note", "string")
        .update_column("qty", "long")
        .commit()
    )
    imported.update_properties().set("write.delete.mode", "merge-on-read").commit()
    deleted = [i for i in range(80) if i % 9 == 1]  # in all three files
    imported.delete(f"id IN ({', '.join(map(str, deleted))})")
    assert imported.current_snapshot().summary.get("added-delete-files")  # merge-on-read
    rows = _same(spark, imported)
    assert len(rows) == 80 - len(deleted)
    _same(
        spark,
        imported,
        filter="label = 'n42' OR point.lon < 2",
        columns=["id", "label", "point", "note", "qty"],
    )
