"""One Hadoop-catalog table written in turns by icefloe and by Java Iceberg.

icefloe (``table.refresh()`` then ``table.append(...)``) and Java (Spark ``INSERT INTO`` through
its HadoopCatalog) take turns on the same directory, three commits each, once on a table icefloe
created and once on one Java created. Afterwards all four implementations (icefloe, Java,
PyIceberg, DuckDB) must see the same rows and snapshots, ``version-hint.text`` must name the
newest of the gap-free ``v1..vN.metadata.json``, every Hadoop ``.crc`` file must match its file,
and Java must still read the table through its catalog (it verifies those checksums).
"""

from __future__ import annotations

import re
import struct
import zlib
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icefloe

from .engines import DuckDBEngine, JavaEngine, PyIcebergEngine
from .normalize import normalize_arrow, normalize_rows

pytestmark = pytest.mark.interop

ROUNDS = 3
ROWS_PER_COMMIT = 4
COLUMNS = ["id", "category", "amount"]
CATEGORIES = ("a", "b")
ARROW_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("category", pa.string()),
        pa.field("amount", pa.float64()),
    ]
)


def _batch(first_id: int) -> list[tuple[int, str, float]]:
    """Rows with ids ``first_id ..``; both partitions get rows in every commit."""
    return [
        (i, CATEGORIES[i % len(CATEGORIES)], i * 1.25) for i in range(first_id, first_id + ROWS_PER_COMMIT)
    ]


def _icefloe_append(table: icefloe.Table, rows: list[tuple[int, str, float]]) -> int:
    table.refresh()
    parent = table.metadata.current_snapshot_id
    snapshot = table.append(pa.Table.from_pylist([dict(zip(COLUMNS, r)) for r in rows], schema=ARROW_SCHEMA))
    assert snapshot is not None
    assert snapshot.parent_snapshot_id == parent, "icefloe's append did not build on the newest snapshot"
    return snapshot.snapshot_id


def _java_insert(java: JavaEngine, name: str, rows: list[tuple[int, str, float]]) -> int:
    before = _java_current_snapshot(java, name)
    values = ", ".join(f"({i}, '{c}', {a!r}D)" for i, c, a in rows)
    java.sql(f"INSERT INTO {name} VALUES {values}")
    after = _java_current_snapshot(java, name)
    parents = dict(java.sql(f"SELECT snapshot_id, parent_id FROM {name}.snapshots")["rows"])
    assert after is not None and after != before
    assert parents[after] == before, "Java's insert did not build on the newest snapshot"
    return after


def _java_current_snapshot(java: JavaEngine, name: str) -> int | None:
    rows = java.sql(f"SELECT snapshot_id FROM {name}.refs WHERE name = 'main'")["rows"]
    return rows[0][0] if rows else None


def _hadoop_crc_matches(data: bytes, crc: bytes) -> bool:
    """Whether ``crc`` is Hadoop's checksum file for ``data``: ``crc\\0``, the big-endian
    bytes-per-checksum, then one big-endian zlib CRC-32 per chunk."""
    if crc[:4] != b"crc\x00" or len(crc) < 8:
        return False
    (chunk,) = struct.unpack(">i", crc[4:8])
    if chunk <= 0:
        return False
    sums = crc[8:]
    expected = b"".join(
        struct.pack(">I", zlib.crc32(data[start : start + chunk])) for start in range(0, len(data), chunk)
    )
    return sums == expected


def _check_hadoop_layout(table_dir: Path, expected_versions: int) -> None:
    metadata = table_dir / "metadata"
    versions = sorted(
        int(m.group(1)) for p in metadata.iterdir() if (m := re.fullmatch(r"v(\d+)\.metadata\.json", p.name))
    )
    assert versions == list(range(1, expected_versions + 1)), f"version files: {versions}"
    assert (metadata / "version-hint.text").read_text().strip() == str(expected_versions)
    # Nothing half-written is left: Java's temporary files, or other metadata JSON names.
    strays = [
        p.name
        for p in metadata.iterdir()
        if p.name.endswith((".temp", ".tmp")) or (p.name.endswith(".json") and not p.name.startswith("v"))
    ]
    assert not strays, f"stray files in {metadata}: {strays}"
    # Every checksum belongs to a file and matches it, or Java's next read of that file fails.
    assert (metadata / ".version-hint.text.crc").is_file(), "the hint has no checksum beside it"
    for crc in sorted(table_dir.rglob(".*.crc")):
        target = crc.with_name(crc.name[1 : -len(".crc")])
        assert target.is_file(), f"{crc} has no file {target.name}"
        assert _hadoop_crc_matches(target.read_bytes(), crc.read_bytes()), f"{crc} does not match {target}"


@pytest.mark.parametrize("creator", ["icefloe", "java"])
def test_icefloe_and_java_take_turns_on_one_hadoop_table(
    creator: str,
    tmp_path: Path,
    java_engine: JavaEngine,
    pyiceberg_engine: PyIcebergEngine,
    duckdb_engine: DuckDBEngine,
) -> None:
    warehouse = tmp_path / "warehouse"
    warehouse.mkdir()
    catalog = icefloe.load_catalog("h", type="hadoop", warehouse=str(warehouse))
    java_catalog = java_engine.hadoop_catalog(warehouse)
    java_name = f"{java_catalog}.db.t"
    table_dir = warehouse / "db" / "t"

    if creator == "icefloe":
        catalog.create_namespace("db")
        table = catalog.create_table(
            "db.t", ARROW_SCHEMA, partition_by=["category"], properties={"format-version": "2"}
        )
    else:
        java_engine.sql(
            f"CREATE TABLE {java_name} (id bigint NOT NULL, category string, amount double) "
            "USING iceberg PARTITIONED BY (category) TBLPROPERTIES ('format-version' = '2')"
        )
        table = catalog.load_table("db.t")
    assert table.metadata_location == str(table_dir / "metadata" / "v1.metadata.json")

    # The creator writes first in each round; the last commit is then the other side's, so
    # between them both variants have Java reading after icefloe and icefloe after Java.
    writers = ["icefloe", "java"] if creator == "icefloe" else ["java", "icefloe"]
    chain: list[int] = []
    expected: list[tuple[int, str, float]] = []
    next_id = 0
    for _ in range(ROUNDS):
        for writer in writers:
            rows = _batch(next_id)
            next_id += ROWS_PER_COMMIT
            if writer == "icefloe":
                chain.append(_icefloe_append(table, rows))
            else:
                chain.append(_java_insert(java_engine, java_name, rows))
            expected.extend(rows)

    _check_hadoop_layout(table_dir, expected_versions=1 + 2 * ROUNDS)

    # icefloe: a fresh load and the refreshed table agree on the linear history.
    table.refresh()
    reloaded = catalog.load_table("db.t")
    assert reloaded.metadata_location == table.metadata_location
    assert reloaded.metadata_location == str(table_dir / "metadata" / f"v{1 + 2 * ROUNDS}.metadata.json")
    snapshots = table.snapshots()
    assert [s.snapshot_id for s in snapshots] == chain
    assert [s.parent_snapshot_id for s in snapshots] == [None, *chain[:-1]]
    assert table.metadata.current_snapshot_id == chain[-1]
    assert [int(s.summary["total-records"]) for s in snapshots] == [
        ROWS_PER_COMMIT * (n + 1) for n in range(len(chain))
    ]
    expected_rows = normalize_rows([list(r) for r in expected])
    icefloe_read = normalize_arrow(table.new_scan().select(*COLUMNS).to_arrow())
    assert icefloe_read["rows"] == expected_rows

    # Java through its catalog: reads the hint (and its checksum), the rows and the history.
    java_rows = java_engine.sql(f"SELECT id, category, amount FROM {java_name}")["rows"]
    assert java_rows == expected_rows
    java_history = java_engine.sql(f"SELECT snapshot_id, parent_id FROM {java_name}.snapshots")["rows"]
    assert sorted(java_history, key=lambda r: chain.index(r[0])) == [
        [s, p] for s, p in zip(chain, [None, *chain[:-1]])
    ]
    assert _java_current_snapshot(java_engine, java_name) == chain[-1]

    # Every engine, reading the metadata file the hint names.
    engines: dict[str, Any] = {"java": java_engine, "pyiceberg": pyiceberg_engine, "duckdb": duckdb_engine}
    for name, engine in engines.items():
        result = engine.read(table_dir, columns=COLUMNS)
        assert result["rows"] == expected_rows, name
        assert result["snapshot_ids"] == sorted(chain), name
        assert result["current_snapshot_id"] == chain[-1], name
        # Time travel to the first commit of the other side still works everywhere.
        first = engine.read(table_dir, snapshot_id=chain[1], columns=COLUMNS)
        assert first["rows"] == normalize_rows([list(r) for r in expected[: 2 * ROWS_PER_COMMIT]]), name

    # Checksums still hold after all the reading, and Java can commit once more on top.
    _check_hadoop_layout(table_dir, expected_versions=1 + 2 * ROUNDS)
    java_last = _java_insert(java_engine, java_name, _batch(next_id))
    _check_hadoop_layout(table_dir, expected_versions=2 + 2 * ROUNDS)
    # icefloe appends without refreshing first: its commit must lose to Java's, and the retry
    # must rebuild on Java's snapshot rather than overwrite it.
    assert table.metadata.current_snapshot_id == chain[-1]
    rows = _batch(next_id + ROWS_PER_COMMIT)
    stale = table.append(pa.Table.from_pylist([dict(zip(COLUMNS, r)) for r in rows], schema=ARROW_SCHEMA))
    assert stale is not None and stale.parent_snapshot_id == java_last
    _check_hadoop_layout(table_dir, expected_versions=3 + 2 * ROUNDS)
    total = len(expected) + 2 * ROWS_PER_COMMIT
    assert java_engine.sql(f"SELECT count(*), count(DISTINCT id) FROM {java_name}")["rows"] == [
        [total, total]
    ]
    assert _java_current_snapshot(java_engine, java_name) == stale.snapshot_id
    assert catalog.load_table("db.t").new_scan().count() == total
