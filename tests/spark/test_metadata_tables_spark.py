"""Metadata tables from Spark: ``isp.read(spark, "db.t.<name>")`` and
``spark.read.format("icefloe").load("db.t.<name>")`` give ``table.inspect``'s rows with Java's
Spark schema (names, types, nullability), time travel and filters included."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icefloe
from icefloe import spark as isp
from support.spark_schema import spark_schema_json, without_metadata

SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), pa.field("u", pa.uuid()), pa.field("g", pa.string())]
)


def _rows(frame: Any) -> list[str]:
    return sorted(repr(row.asDict(recursive=True)) for row in frame.collect())


def _arrow_rows(table: pa.Table) -> list[str]:
    return sorted(repr(row) for row in table.to_pylist())


@pytest.mark.every_session
def test_metadata_tables_from_spark(spark: Any, warehouse: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # isp.read resolves identifiers in the default catalog (on the driver); the data source
    # runs in Spark's Python workers and takes the catalog as options.
    monkeypatch.setenv("ICEFLOE_CATALOG__DEFAULT__TYPE", "sql")
    monkeypatch.setenv("ICEFLOE_CATALOG__DEFAULT__WAREHOUSE", str(warehouse))
    catalog = icefloe.load_catalog()
    catalog.create_namespace("db")
    options = {"catalog": catalog.name, **{f"catalog.{k}": v for k, v in catalog.properties.items()}}
    table = catalog.create_table(
        "db.meta", SCHEMA, partition_by=["g"], properties={"write.delete.mode": "merge-on-read"}
    )
    table.append(
        pa.table(
            {"id": [1, 2, 3], "u": [uuid.uuid4().bytes for _ in range(3)], "g": ["a", "b", "a"]},
            schema=SCHEMA,
        )
    )
    first = table.current_snapshot().snapshot_id
    table.delete("id = 2")
    isp.register(spark)
    for name in ("files", "partitions", "snapshots", "entries"):
        frame = isp.read(spark, f"db.meta.{name}")
        ours = table.inspect.table(name)
        assert without_metadata(frame.schema.jsonValue()) == spark_schema_json(ours.schema), name
        assert frame.count() == ours.num_rows, name
    # The data source (its Python workers are slow to start: one table, and time travel).
    loaded = spark.read.format("icefloe").options(**options).load("db.meta.files")
    assert loaded.schema == isp.read(spark, "db.meta.files").schema
    assert _rows(loaded) == _rows(isp.read(spark, "db.meta.files"))
    files = isp.read(
        spark, "db.meta.files", columns=["file_path", "readable_metrics.id"], filter="content = 0"
    )
    assert files.columns == ["file_path", "readable_metrics"]
    assert _rows(files) == _arrow_rows(
        table.inspect.files(columns=["file_path", "readable_metrics.id"], filter="content = 0")
    )
    old = isp.read(spark, "db.meta.files", snapshot_id=first)
    assert old.count() == 2
    assert (
        spark.read.format("icefloe")
        .options(**options, **{"snapshot-id": str(first)})
        .load("db.meta.files")
        .count()
        == 2
    )
    uuids = isp.read(spark, "db.meta.files").select("readable_metrics.u.lower_bound").collect()
    assert all(isinstance(r[0], str) and len(r[0]) == 36 for r in uuids if r[0] is not None)
