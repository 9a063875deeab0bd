"""``icefloe.actions`` (no Spark) against ``icefloe.spark.actions`` and Java Iceberg 1.9.2: on two
identical tables, each maintenance step gives the same table content, the same kind of snapshot
(operation and summary keys) and the same counts; Java reads every snapshot the
plain actions committed exactly as icefloe does.

Steps, on v2 tables with position deletes: rewrite_position_deletes, rewrite_data_files,
rewrite_manifests, expire_snapshots; then on a table upgraded to v3, position delete files into
deletion vectors (plain only). One Spark session (the test session's), one Java server.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

import pyarrow as pa
import pytest

import icefloe
from icefloe import actions
from icefloe import spark as isp
from icefloe.spec.manifest import FileFormat

from .engines import JavaEngine
from .tables import assert_engine_read, expected_rows, hadoop_catalog

pytestmark = [pytest.mark.interop, pytest.mark.slow]

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("g", pa.string())])


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> icefloe.Catalog:
    cat = hadoop_catalog(tmp_path_factory.mktemp("plain-actions"))
    cat.create_namespace("db")
    return cat


def _build(catalog: icefloe.Catalog, name: str) -> icefloe.Table:
    table = catalog.create_table(
        f"db.{name}",
        SCHEMA,
        partition_by=["g"],
        properties={"format-version": "2", "write.delete.mode": "merge-on-read"},
    )
    for batch in range(6):
        ids = list(range(batch * 10, batch * 10 + 10))
        table.append(pa.table({"id": ids, "g": ["a" if i % 2 else "b" for i in ids]}, schema=SCHEMA))
    for deleted in ("1, 11", "2", "3, 25", "30"):
        table.delete(f"id IN ({deleted})")
    return table


def _rows(table: icefloe.Table) -> list[Any]:
    return expected_rows(table.new_scan().to_arrow())


def _same_kind(spark_table: icefloe.Table, plain_table: icefloe.Table) -> None:
    """The two tables' current snapshots are the same kind of change of the same content."""
    a, b = spark_table.current_snapshot(), plain_table.current_snapshot()
    assert a is not None and b is not None
    assert a.operation == b.operation
    assert set(a.summary) == set(b.summary), (a.summary, b.summary)
    for key in ("total-records", "total-data-files", "total-delete-files", "total-position-deletes"):
        assert a.summary.get(key) == b.summary.get(key), key
    assert _rows(spark_table) == _rows(plain_table)


def _counts(result: Any) -> dict[str, Any]:
    """A result's counts, bytes aside (the two tables' file paths differ in length, and delete
    files store the paths)."""
    return {k: v for k, v in dataclasses.asdict(result).items() if not k.endswith("bytes_count")}


def _java_reads(java: JavaEngine, table: icefloe.Table, snapshot_ids: tuple[int, ...] = ()) -> None:
    """Java reads the current snapshot, and the ``snapshot_ids`` (older ones), as icefloe does."""
    assert table.metadata_location is not None
    for snapshot_id in snapshot_ids:
        scan = table.new_scan().use_snapshot(snapshot_id)
        result = java.read(table.metadata_location, snapshot_id=snapshot_id)
        assert result["rows"] == expected_rows(scan.to_arrow()), snapshot_id
    assert_engine_read("java", java.read(table.metadata_location), table, _rows(table))


def test_plain_actions_match_spark_actions_and_java_reads_them(
    spark: Any, catalog: icefloe.Catalog, java_engine: JavaEngine
) -> None:
    with_spark, plain = _build(catalog, "by_spark"), _build(catalog, "plain")
    assert _rows(with_spark) == _rows(plain)

    options = {"rewrite-all": "true"}
    steps = [
        (
            lambda: isp.actions.rewrite_position_deletes(spark, with_spark, options=options),
            lambda: actions.rewrite_position_deletes(plain, options=options),
        ),
        (
            lambda: isp.actions.rewrite_data_files(spark, with_spark),
            lambda: actions.rewrite_data_files(plain),
        ),
        (lambda: isp.actions.rewrite_manifests(spark, with_spark), lambda: actions.rewrite_manifests(plain)),
    ]
    made = []  # the snapshots the plain actions committed
    for by_spark, by_plain in steps:
        expected, got = by_spark(), by_plain()
        assert _counts(got) == _counts(expected)
        _same_kind(with_spark, plain)
        made.append(plain.current_snapshot().snapshot_id)
    _java_reads(java_engine, plain, tuple(made[:-1]))

    cutoff = dt.datetime.now(dt.UTC)
    expected_expiry = isp.actions.expire_snapshots(spark, with_spark, retain_last=1, older_than=cutoff)
    expiry = actions.expire_snapshots(plain, retain_last=1, older_than=cutoff)
    assert len(expiry.expired_snapshot_ids) == len(expected_expiry.expired_snapshot_ids) == 12
    same = dataclasses.asdict(expiry) | {"expired_snapshot_ids": []}
    assert same == dataclasses.asdict(expected_expiry) | {"expired_snapshot_ids": []}
    _java_reads(java_engine, plain)

    # v3: position delete files written before an upgrade become deletion vectors (the Spark
    # action's v3 rewrite is compared with Java in test_spark_actions_java.py).
    upgraded = _build(catalog, "v3_plain")
    upgraded.update_properties().set("format-version", "3").commit()
    upgraded.delete("id IN (13)")  # a deletion vector that also holds the deletes of 11
    rows = _rows(upgraded)
    result = actions.rewrite_position_deletes(upgraded)
    assert result.rewritten_delete_files_count == 4 and result.added_delete_files_count >= 1
    assert _rows(upgraded) == rows
    formats = {d.file_format for task in upgraded.new_scan().plan_files() for d in task.deletes}
    assert formats == {FileFormat.PUFFIN}
    _java_reads(java_engine, upgraded)
