"""Manifests icefloe merges and rewrites mean the same thing to Java Iceberg 1.9.2.

A table gets 150 small appends through icefloe's merging ``new_append()`` (so merges happen
at the default ``commit.manifest.min-count-to-merge`` of 100), then a
``rewrite_manifests().cluster_by(partition)``, then a Java INSERT that merges icefloe's
manifests in turn. At each step:

- Java reads exactly the rows that went in, at the current snapshot, and sees every snapshot;
- Java's ``manifests`` metadata table lists exactly icefloe's
  ``table.current_snapshot().all_manifests(io)`` (path, length, spec, adding snapshot, file
  counts by content, partition summaries);
- Java's ``entries`` metadata table holds exactly the entries icefloe reads from them (status,
  snapshot id, data and file sequence numbers, file, first row id), which checks the
  inheritance rules on both sides, EXISTING entries of merged manifests included.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icefloe
from icefloe import DataFile
from icefloe.manifests import read_manifest
from icefloe.manifests.carried import carried_entries
from icefloe.serde.avro_schemas import manifest_entry_schema
from icefloe.spec.conversions import from_bytes
from icefloe.spec.manifest import ManifestContent, Metrics
from support.merges import copied_blocks

from .engines import JavaEngine
from .tables import assert_engine_read, expected_rows, hadoop_catalog, own_rows

pytestmark = pytest.mark.interop

APPENDS = 150
SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("java-manifests")


@pytest.fixture(scope="module")
def catalog(warehouse: Path) -> Iterator[icefloe.Catalog]:
    cat = hadoop_catalog(warehouse)
    cat.create_namespace("db")
    yield cat
    cat.close()


@pytest.fixture(scope="module")
def java_catalog(java_engine: JavaEngine, warehouse: Path) -> str:
    return java_engine.hadoop_catalog(warehouse)


def _batch(n: int) -> pa.Table:
    return pa.table(
        {"id": [n, 1000 + n], "name": [f"row-{n}", None if n % 5 == 0 else f"other-{n}"]}, schema=SCHEMA
    )


def _own_manifests(table: icefloe.Table) -> list[list[Any]]:
    """icefloe's manifest list, in the shape of Java's ``manifests`` metadata table."""
    snapshot = table.current_snapshot()
    assert snapshot is not None
    specs = table.specs()
    result = []
    for m in snapshot.all_manifests(table.io()):
        data = m.content == ManifestContent.DATA
        counts = [m.added_files_count, m.existing_files_count, m.deleted_files_count]
        partition_type = specs[m.partition_spec_id].partition_type(table.schema())
        summaries = [
            {
                "contains_null": s.contains_null,
                "contains_nan": s.contains_nan,
                "lower_bound": _human(f.field_type, s.lower_bound),
                "upper_bound": _human(f.field_type, s.upper_bound),
            }
            for f, s in zip(partition_type.fields, m.partitions or ())
        ]
        result.append(
            [
                int(m.content),
                m.manifest_path,
                m.manifest_length,
                m.partition_spec_id,
                m.added_snapshot_id,
                *(counts if data else [0, 0, 0]),
                *([0, 0, 0] if data else counts),
                summaries,
            ]
        )
    return sorted(result, key=lambda r: r[1])


def _human(field_type: Any, value: bytes | None) -> str | None:
    return None if value is None else str(from_bytes(field_type, value))


def _own_entries(table: icefloe.Table) -> list[list[Any]]:
    """icefloe's entries of the current snapshot, as Java's ``entries`` table reports them."""
    snapshot = table.current_snapshot()
    assert snapshot is not None
    return sorted(
        [
            int(e.status),
            e.snapshot_id,
            e.sequence_number,
            e.file_sequence_number,
            e.data_file.file_path,
            e.data_file.record_count,
            e.data_file.first_row_id,
        ]
        for m in snapshot.all_manifests(table.io())
        for e in read_manifest(table.io(), m)
    )


def _java_manifests(java: JavaEngine, name: str) -> list[list[Any]]:
    result = java.sql(f"SELECT * FROM {name}.manifests")
    assert result["columns"][:11] == [
        "content",
        "path",
        "length",
        "partition_spec_id",
        "added_snapshot_id",
        "added_data_files_count",
        "existing_data_files_count",
        "deleted_data_files_count",
        "added_delete_files_count",
        "existing_delete_files_count",
        "deleted_delete_files_count",
    ]
    return sorted(([*row[:11], list(row[11])] for row in result["rows"]), key=lambda r: r[1])


def _java_entries(java: JavaEngine, name: str) -> list[list[Any]]:
    result = java.sql(
        f"SELECT status, snapshot_id, sequence_number, file_sequence_number, data_file.file_path, "
        f"data_file.record_count, data_file.first_row_id FROM {name}.entries"
    )
    return sorted(result["rows"])


def _assert_java_agrees(java: JavaEngine, java_name: str, table: icefloe.Table, data: pa.Table) -> None:
    rows = expected_rows(data)
    assert own_rows(table)["rows"] == rows
    assert_engine_read("java", java.read(table.metadata_location), table, rows)
    assert _java_manifests(java, java_name) == _own_manifests(table)
    assert _java_entries(java, java_name) == _own_entries(table)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_merged_and_rewritten_manifests_agree_with_java(
    catalog: icefloe.Catalog, java_engine: JavaEngine, java_catalog: str, version: int
) -> None:
    table = catalog.create_table(
        f"db.merged_v{version}",
        SCHEMA,
        partition_by=["bucket(4, id)"],
        properties={"format-version": str(version)},
    )
    java_name = f"{java_catalog}.db.merged_v{version}"
    batches = []
    snapshots = []
    for n in range(APPENDS):
        batches.append(_batch(n))
        snapshots.append(table.append(batches[-1]))
    data = pa.concat_tables(batches)
    manifests = table.current_snapshot().all_manifests(table.io())  # type: ignore[union-attr]
    # Each append writes one manifest; the 100th merged all 100 into one.
    assert len(manifests) == APPENDS - 100 + 1
    merged = manifests[-1]
    assert merged.added_snapshot_id == snapshots[99].snapshot_id
    files = int(snapshots[99].summary["total-data-files"])
    assert (merged.added_files_count or 0) + (merged.existing_files_count or 0) == files
    _assert_java_agrees(java_engine, java_name, table, data)

    table.rewrite_manifests().cluster_by(lambda f: f.partition).commit()
    rewritten = table.current_snapshot()
    assert rewritten is not None and len(rewritten.all_manifests(table.io())) == 4  # one per bucket
    _assert_java_agrees(java_engine, java_name, table, data)
    (java_summary,) = java_engine.sql(
        f"SELECT summary FROM {java_name}.snapshots WHERE snapshot_id = {rewritten.snapshot_id}"
    )["rows"]
    assert java_summary[0]["manifests-replaced"] == str(APPENDS - 100 + 1)
    assert java_summary[0]["manifests-created"] == "4"

    # Java's own merging append over icefloe's manifests, read back by icefloe.
    table.update_properties().set("commit.manifest.min-count-to-merge", "2").commit()
    java_engine.sql(f"INSERT INTO {java_name} VALUES (5000, 'java')")
    table.refresh()
    data = pa.concat_tables([data, pa.table({"id": [5000], "name": ["java"]}, schema=SCHEMA)])
    assert len(table.current_snapshot().all_manifests(table.io())) < 5  # type: ignore[union-attr]
    _assert_java_agrees(java_engine, java_name, table, data)

    # icefloe merging Java's manifests. Java encodes data_file as icefloe does, so in v1 and v2
    # the merge copies Java's records as they are (manifests.carried); v3 writers decode them
    # (carried files' row ids are written out).
    java_written = table.current_snapshot().all_manifests(table.io())  # type: ignore[union-attr]
    partition_type = table.spec().partition_type(table.schema())
    schema = manifest_entry_schema(version, partition_type)
    carried = [
        carried_entries(table.io(), m, partition_type=partition_type, target_schema=schema)
        for m in java_written
    ]
    assert all(c is not None for c in carried)
    table.append(pa.table({"id": [6000], "name": ["again"]}, schema=SCHEMA))
    data = pa.concat_tables([data, pa.table({"id": [6000], "name": ["again"]}, schema=SCHEMA)])
    assert len(table.current_snapshot().all_manifests(table.io())) == 1  # type: ignore[union-attr]
    _assert_java_agrees(java_engine, java_name, table, data)


@pytest.mark.parametrize("version", [1, 2])
def test_blocks_a_merge_copies_whole_read_the_same_in_java(
    catalog: icefloe.Catalog,
    java_engine: JavaEngine,
    java_catalog: str,
    version: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A merged manifest merged again: its blocks of EXISTING entries are copied as stored
    # (manifests.carried.CarriedBlock). Java's manifests and entries tables must read the
    # result as icefloe does (the files are never read: they exist only in the manifests).
    copied = copied_blocks(monkeypatch)
    table = catalog.create_table(
        f"db.blocks_v{version}",
        SCHEMA,
        partition_by=["bucket(4, id)"],
        properties={"format-version": str(version), "commit.manifest.min-count-to-merge": "2"},
    )
    java_name = f"{java_catalog}.db.blocks_v{version}"
    for n in range(3):  # the second merges the first's manifest, the third the second's
        append = table.new_append()
        for k in range(1500):
            append.append_file(_fake_file(table, f"f{n}-{k}", k))
        append.commit()
    assert copied, "no block was copied"
    (merged,) = table.current_snapshot().all_manifests(table.io())  # type: ignore[union-attr]
    assert (merged.added_files_count, merged.existing_files_count) == (1500, 3000)
    assert _java_manifests(java_engine, java_name) == _own_manifests(table)
    assert _java_entries(java_engine, java_name) == _own_entries(table)


def _fake_file(table: icefloe.Table, name: str, k: int) -> DataFile:
    return (
        DataFile.builder(table.spec(), table.schema())
        .with_path(f"{table.location()}/data/{name}.parquet")
        .with_format("parquet")
        .with_file_size_in_bytes(100 + k)
        .with_partition([k % 4])
        .with_metrics(
            Metrics(1 + k % 7, value_counts={1: 1 + k % 7, 2: 1 + k % 7}, null_value_counts={1: 0, 2: k % 2})
        )
        .build()
    )
