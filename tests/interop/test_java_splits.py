"""icefloe plans the same splits, task groups and incremental appends as Java Iceberg.

For a table Java writes (Spark SQL) and one icefloe writes, both with many row groups per file:

- ``plan_tasks()`` with small ``read.split.target-size`` values gives the same groups of
  (file, start, length), with the same ``sizeBytes`` and ``estimatedRowsCount``, as Java's
  ``table.newScan().option(...).planTasks()``. Java plans the files of several manifests in
  parallel (in no fixed order) and the groups depend on the order, so for a snapshot with more
  than one data manifest Java's ``TableScanUtil.splitFiles`` + ``planTasks`` are fed Java's
  ``planFiles()`` in icefloe's order: the splitting, weights and packing are still Java's.
- Reading through those groups (``new_batch_scan()``) returns Java's rows.
- ``new_incremental_append_scan()`` plans the same files as Java's
  ``newIncrementalAppendScan()`` for every pair of snapshots of the history (appends, a
  merge-on-read delete and update, a partition overwrite, a manifest rewrite, merged
  manifests), and both refuse the same starting snapshots. One difference, on purpose: Java
  refuses ``from_snapshot_exclusive(s).to_snapshot(s)``; icefloe returns nothing.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import icefloe
from icefloe.errors import SnapshotNotAncestorError
from icefloe.scan.splitting import split_tasks
from support.page_reads import page_reads

from .engines import JavaEngine
from .java_tables import current_snapshot_id
from .normalize import normalize_arrow
from .tables import assert_same_rows, hadoop_catalog

pytestmark = pytest.mark.interop

_LOAD = """
table = jvm.org.apache.iceberg.hadoop.HadoopTables(sc._jsc.hadoopConfiguration()).load(location)

def jlist(iterable):
    out = []
    it = iterable.iterator()
    while it.hasNext():
        out.append(it.next())
    return out
"""

_JAVA_TASKS = (
    _LOAD
    + """
scan = table.newScan()
if snapshot_id is not None:
    scan = scan.useSnapshot(snapshot_id)
for key, value in options.items():
    scan = scan.option(key, value)
if order is None:
    groups = scan.planTasks()
else:
    # Java's planFiles() in the given order, then Java's own splitting and packing.
    planned = scan.planFiles()
    files = sorted(jlist(planned), key=lambda t: order.index(str(t.file().location())))
    ordered = jvm.java.util.ArrayList()
    for task in files:
        ordered.add(task)
    CloseableIterable = jvm.org.apache.iceberg.io.CloseableIterable
    TableScanUtil = jvm.org.apache.iceberg.util.TableScanUtil
    # (combine: py4j would pick withNoopClose's single-element overload)
    splits = TableScanUtil.splitFiles(CloseableIterable.combine(ordered, planned), scan.targetSplitSize())
    groups = TableScanUtil.planTasks(
        splits, scan.targetSplitSize(), scan.splitLookback(), scan.splitOpenFileCost()
    )
result = []
for group in jlist(groups):
    result.append({
        "tasks": [[str(t.file().location()), t.start(), t.length(), t.deletes().size()]
                  for t in jlist(group.files())],
        "size_bytes": group.sizeBytes(),
        "estimated_rows": group.estimatedRowsCount(),
    })
groups.close()
"""
)

_JAVA_INCREMENTAL = (
    _LOAD
    + """
E = jvm.org.apache.iceberg.expressions.Expressions
result = {}
for key, start, inclusive, end, day in cases:
    scan = table.newIncrementalAppendScan()
    if start is not None:
        scan = scan.fromSnapshotInclusive(start) if inclusive else scan.fromSnapshotExclusive(start)
    if end is not None:
        scan = scan.toSnapshot(end)
    if day is not None:
        scan = scan.filter(E.equal("day", day))
    try:
        planned = scan.planFiles()
        tasks = jlist(planned)
        planned.close()
        result[key] = sorted([str(t.file().location()), t.deletes().size()] for t in tasks)
    except Exception as error:  # py4j wraps IllegalArgumentException
        result[key] = "error: " + str(error).splitlines()[0][:300]
"""
)


# ---------------------------------------------------------------------------------------------
# fixtures: the two tables


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("java-splits")


@pytest.fixture(scope="module")
def java_catalog(java_engine: JavaEngine, warehouse: Path) -> str:
    return java_engine.hadoop_catalog(warehouse)


@pytest.fixture(scope="module")
def catalog(warehouse: Path, java_catalog: str) -> Iterator[icefloe.Catalog]:
    cat = hadoop_catalog(warehouse)
    yield cat


class JavaHistory:
    """The Java table's snapshots in commit order, with their operations."""

    def __init__(self, java: JavaEngine, name: str, directory: Path) -> None:
        self.java, self.name, self.dir = java, name, directory
        self.snapshots: list[int] = []

    def run(self, *statements: str) -> int:
        for statement in statements:
            self.java.sql(statement.format(t=self.name))
        snapshot_id = current_snapshot_id(self.dir)
        if not self.snapshots or self.snapshots[-1] != snapshot_id:
            self.snapshots.append(snapshot_id)
        return snapshot_id


_JAVA_PROPERTIES = (
    "'format-version'='2', 'write.parquet.row-group-size-bytes'='4096', "
    "'write.parquet.row-group-check-min-record-count'='10', "
    "'write.parquet.row-group-check-max-record-count'='100', "
    "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', "
    "'write.distribution-mode'='hash'"
)
_INSERT = (
    "INSERT INTO {t} SELECT id, concat('name-', cast(id * 7919 % 10007 AS string)), "
    "date_add(DATE'2024-01-01', cast(id % 3 AS int)) FROM range({start}, {end})"
)


@pytest.fixture(scope="module")
def java_table(java_engine: JavaEngine, java_catalog: str, warehouse: Path) -> JavaHistory:
    """Partitioned by day, v2: one INSERT of three files (one manifest), then a history for the
    incremental scans."""
    history = JavaHistory(java_engine, f"{java_catalog}.db.jsplits", warehouse / "db" / "jsplits")
    java_engine.sql(
        f"CREATE TABLE {history.name} (id bigint, name string, day date) USING iceberg "
        f"PARTITIONED BY (day) TBLPROPERTIES ({_JAVA_PROPERTIES})"
    )
    history.run(_INSERT.format(t="{t}", start=0, end=30000))  # 1: append, one manifest
    history.run(_INSERT.format(t="{t}", start=30000, end=36000))  # 2: append
    history.run("DELETE FROM {t} WHERE id % 97 = 0")  # 3: delete (position deletes)
    history.run("UPDATE {t} SET name = 'updated' WHERE id % 101 = 0")  # 4: overwrite (row delta)
    history.run(_INSERT.format(t="{t}", start=40000, end=43000))  # 5: append
    history.run(
        "INSERT OVERWRITE {t} SELECT id, name, day FROM {t} WHERE day = DATE'2024-01-02'"
    )  # 6: overwrite of one partition (dynamic)
    history.run("CALL " + java_catalog + ".system.rewrite_manifests('db.jsplits')")  # 7: replace
    history.run("ALTER TABLE {t} SET TBLPROPERTIES ('commit.manifest.min-count-to-merge'='2')")
    history.run(_INSERT.format(t="{t}", start=50000, end=51000))  # 8: append, merging manifests
    history.run(_INSERT.format(t="{t}", start=51000, end=52000))  # 9: append, merging manifests
    return history


@pytest.fixture(scope="module")
def own_table(catalog: icefloe.Catalog, java_table: JavaHistory) -> icefloe.Table:
    """icefloe's table: partitioned by day, 10-row groups; two appends (two manifests)."""
    schema = pa.schema(
        [pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string()), ("day", pa.date32())]
    )
    table = catalog.create_table(
        "db.osplits",
        schema,
        partition_by=["day"],
        properties={"format-version": "2", "write.parquet.row-group-limit": "250"},
    )
    for start, n in ((0, 6000), (6000, 1500)):
        ids = list(range(start, start + n))
        table.append(
            pa.table(
                {
                    "id": ids,
                    "name": [f"name-{i * 7919 % 10007}" for i in ids],
                    "day": [dt.date(2024, 1, 1) + dt.timedelta(days=i % 3) for i in ids],
                },
                schema=schema,
            )
        )
    return table


# ---------------------------------------------------------------------------------------------
# helpers


def own_groups(scan: Any) -> list[dict[str, Any]]:
    return [
        {
            "tasks": [[t.file_path, t.start, t.length, len(t.deletes)] for t in group.tasks],
            "size_bytes": group.size_bytes,
            "estimated_rows": group.estimated_rows_count,
        }
        for group in scan.plan_tasks()
    ]


def java_groups(
    java: JavaEngine,
    location: Path,
    options: dict[str, str],
    *,
    snapshot_id: int | None = None,
    order: list[str] | None = None,
) -> list[dict[str, Any]]:
    return list(
        java.exec(_JAVA_TASKS, location=str(location), options=options, snapshot_id=snapshot_id, order=order)
    )


def data_manifest_count(table: icefloe.Table, snapshot_id: int) -> int:
    snapshot = table.snapshot(snapshot_id)
    assert snapshot is not None
    return len(snapshot.data_manifests(table.io()))


_OPTION_SETS = [
    {"read.split.target-size": "20000", "read.split.open-file-cost": "0"},
    {
        "read.split.target-size": "65536",
        "read.split.planning-lookback": "2",
        "read.split.open-file-cost": "1000",
    },
    {"read.split.target-size": "150000", "read.split.planning-lookback": "1"},
    {"read.split.target-size": "4000"},
    {},
]


def assert_same_groups(
    java: JavaEngine, table: icefloe.Table, location: Path, snapshot_id: int, options: dict[str, str]
) -> None:
    scan = table.new_scan().use_snapshot(snapshot_id)
    for key, value in options.items():
        scan = scan.option(key, value)
    ours = own_groups(scan)
    order = None
    if data_manifest_count(table, snapshot_id) > 1:
        order = [t.file_path for t in scan.plan_files()]
    theirs = java_groups(java, location, options, snapshot_id=snapshot_id, order=order)
    files = scan.plan_files()
    assert len(list(split_tasks(files, scan.target_split_size()))) > 3 * len(files)  # several per file
    where = f"snapshot {snapshot_id}, options {options}"
    assert len(ours) == len(theirs), f"{where}: {len(ours)} groups, Java {len(theirs)}"
    for index, (got, want) in enumerate(zip(ours, theirs, strict=True)):
        assert got == want, (
            f"{where}: group {index} differs:\n  icefloe {_brief(got)}\n  Java    {_brief(want)}"
        )


def _brief(group: dict[str, Any]) -> str:
    tasks = [f"{Path(path).name[:12]}@{start}+{length}" for path, start, length, _ in group["tasks"]]
    return f"size {group['size_bytes']}, rows {group['estimated_rows']}, tasks {tasks}"


# ---------------------------------------------------------------------------------------------
# split planning


@pytest.mark.parametrize(
    "options", _OPTION_SETS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "defaults"
)
def test_java_table_splits_like_java(
    java_engine: JavaEngine, catalog: icefloe.Catalog, java_table: JavaHistory, options: dict[str, str]
) -> None:
    table = catalog.load_table("db.jsplits")
    first = java_table.snapshots[0]
    assert data_manifest_count(table, first) == 1  # Java plans one manifest in order
    assert_same_groups(java_engine, table, java_table.dir, first, options)
    # with position deletes (their bytes weigh in every split), through Java's own order
    with_deletes = java_table.snapshots[3]
    assert any(t.deletes for t in table.new_scan().use_snapshot(with_deletes).plan_files())
    assert_same_groups(java_engine, table, java_table.dir, with_deletes, options)


@pytest.mark.parametrize(
    "options", _OPTION_SETS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "defaults"
)
def test_icefloe_table_splits_like_java(
    java_engine: JavaEngine, own_table: icefloe.Table, warehouse: Path, options: dict[str, str]
) -> None:
    first, second = (s.snapshot_id for s in own_table.snapshots())
    location = warehouse / "db" / "osplits"
    assert_same_groups(java_engine, own_table, location, first, options)
    assert_same_groups(java_engine, own_table, location, second, options)


def test_reading_the_groups_returns_javas_rows(
    java_engine: JavaEngine,
    catalog: icefloe.Catalog,
    java_table: JavaHistory,
    own_table: icefloe.Table,
    warehouse: Path,
) -> None:
    table = catalog.load_table("db.jsplits")
    for snapshot_id in (java_table.snapshots[3], java_table.snapshots[-1]):
        want = java_engine.read(java_table.dir, snapshot_id=snapshot_id)
        for split_size in ("1", "30000"):
            scan = table.new_batch_scan().use_snapshot(snapshot_id).option("split-size", split_size)
            got = normalize_arrow(scan.to_arrow())
            assert got["columns"] == want["columns"]
            assert_same_rows(f"snapshot {snapshot_id}, split size {split_size}", got["rows"], want["rows"])
    want = java_engine.read(warehouse / "db" / "osplits")
    got = normalize_arrow(own_table.new_batch_scan().option("split-size", "3000").to_arrow())
    assert_same_rows("icefloe table", got["rows"], want["rows"])


# ---------------------------------------------------------------------------------------------
# incremental append scans


def own_incremental(
    table: icefloe.Table, start: int | None, inclusive: bool, end: int | None, day: str | None
) -> Any:
    scan = table.new_incremental_append_scan()
    if start is not None:
        scan = scan.from_snapshot_inclusive(start) if inclusive else scan.from_snapshot_exclusive(start)
    if end is not None:
        scan = scan.to_snapshot(end)
    if day is not None:
        scan = scan.filter(f"day = '{day}'")
    try:
        return sorted([t.file_path, len(t.deletes)] for t in scan.plan_files())
    except SnapshotNotAncestorError as error:
        return f"error: {error}"


def test_incremental_append_scans_plan_javas_files(
    java_engine: JavaEngine, catalog: icefloe.Catalog, java_table: JavaHistory
) -> None:
    table = catalog.load_table("db.jsplits")
    operations = [table.snapshot(s).operation for s in java_table.snapshots]  # type: ignore[union-attr]
    assert operations == [
        "append", "append", "delete", "overwrite", "append", "overwrite", "replace", "append", "append",
    ]  # fmt: skip
    merged = table.snapshot(java_table.snapshots[-1])
    assert merged is not None and len(merged.data_manifests(table.io())) == 1  # manifests were merged
    snapshots = java_table.snapshots
    cases: list[list[Any]] = []
    for end_index, end in enumerate(snapshots):
        cases.append([f"all..{end_index}", None, False, end, None])
        for start_index, start in enumerate(snapshots[: end_index + 1]):
            cases.append([f"({start_index}..{end_index}]", start, False, end, None])
            cases.append([f"[{start_index}..{end_index}]", start, True, end, None])
    cases.append(["(0..current] day 2", snapshots[0], False, None, "2024-01-02"])
    cases.append(["[1..8] day 1", snapshots[1], True, snapshots[8], "2024-01-01"])
    cases.append(["all day 3", None, False, None, "2024-01-03"])
    theirs = java_engine.exec(_JAVA_INCREMENTAL, location=str(java_table.dir), cases=cases)
    assert len(theirs) == len(cases)
    nonempty = 0
    for key, start, inclusive, end, day in cases:
        want = theirs[key]
        got = own_incremental(table, start, inclusive, end, day)
        if start is not None and start == end and not inclusive:
            # Java refuses an exclusive start equal to the end; icefloe answers "nothing".
            assert isinstance(want, str) and "is not a parent ancestor" in want, key
            assert got == [], key
            continue
        if isinstance(want, str):
            assert isinstance(got, str), f"{key}: Java refused ({want}), icefloe planned {got}"
            continue
        assert got == want, key
        nonempty += bool(got)
    assert nonempty > 20


def test_incremental_scans_refuse_a_start_off_the_lineage(
    java_engine: JavaEngine, catalog: icefloe.Catalog, java_table: JavaHistory, warehouse: Path
) -> None:
    # A branch from snapshot 1 with an append of its own: neither end's lineage holds the other.
    java_engine.sql(
        f"ALTER TABLE {java_table.name} CREATE BRANCH side AS OF VERSION {java_table.snapshots[1]}"
    )
    java_engine.sql(_INSERT.format(t=f"{java_table.name}.branch_side", start=90000, end=90100))
    table = catalog.load_table("db.jsplits")
    side = table.snapshot("side")
    assert side is not None and side.parent_snapshot_id == java_table.snapshots[1]
    head = java_table.snapshots[-1]
    cases = [
        ["side from main", java_table.snapshots[4], False, side.snapshot_id, None],
        ["main from side", side.snapshot_id, True, head, None],
        ["main from side excl", side.snapshot_id, False, head, None],
        ["side from 0", java_table.snapshots[0], False, side.snapshot_id, None],
        ["side all", None, False, side.snapshot_id, None],
    ]
    theirs = java_engine.exec(_JAVA_INCREMENTAL, location=str(java_table.dir), cases=cases)
    for key, start, inclusive, end, day in cases:
        got = own_incremental(table, start, inclusive, end, day)
        want = theirs[key]
        if isinstance(want, str):
            assert isinstance(got, str) and str(start) in got, key
        else:
            assert got == want, key
    assert len(theirs["side from 0"]) == 3 + 3  # snapshot 2's files and the branch's


# ---------------------------------------------------------------------------------------------
# page-index reads of Java's files


def test_reads_that_skip_pages_of_java_files_return_javas_rows(
    java_engine: JavaEngine, java_catalog: str, catalog: icefloe.Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Java's Parquet writer (parquet-mr) writes a page index: a selective read of its file
    goes through DataFusion, skipping pages, and returns Java's rows, as pyarrow's read does."""
    pytest.importorskip("datafusion")
    import icefloe.scan.reading as reading
    from icefloe.arrow import page_index

    name = f"{java_catalog}.db.jpages"
    java_engine.sql(
        f"CREATE TABLE {name} (id bigint, name string, ts timestamp, day date) USING iceberg "
        "TBLPROPERTIES ('format-version'='2', 'write.parquet.page-row-limit'='1000')",
        f"INSERT INTO {name} SELECT /*+ REPARTITION(1) */ id, concat('name-', cast(id AS string)), "
        "timestamp_seconds(1700000000 + id * 60), date_add(DATE'2024-01-01', cast(id / 1000 AS int)) "
        "FROM range(0, 40000)",
    )
    table = catalog.load_table("db.jpages")
    (task,) = table.new_scan().plan_files()
    footer = pq.ParquetFile(task.file.file_path.removeprefix("file:")).metadata
    assert footer.num_row_groups == 1 and footer.row_group(0).column(0).has_column_index

    monkeypatch.setattr(page_index, "MIN_ROWS", 10_000)  # a file of production size would be slow
    taken = page_reads(monkeypatch)
    filters = {
        "id >= 20000 AND id < 20050": "id >= 20000 AND id < 20050",
        "name IN ('name-7', 'name-39999')": "name IN ('name-7', 'name-39999')",
        "ts >= '2023-11-15T00:00:00' AND ts < '2023-11-15T01:00:00'": (
            "ts >= TIMESTAMP'2023-11-15 00:00:00' AND ts < TIMESTAMP'2023-11-15 01:00:00'"
        ),
        "day = '2024-01-20'": "day = DATE'2024-01-20'",
    }
    for own, spark in filters.items():
        taken.clear()
        pages = table.new_scan().filter(own).to_arrow()
        assert taken == [True], own
        want = java_engine.sql(f"SELECT id, name, ts, day FROM {name} WHERE {spark}")["rows"]
        assert_same_rows(own, normalize_arrow(pages)["rows"], want)
        with monkeypatch.context() as without:
            without.setattr(reading, "page_predicate", lambda *a: None)
            assert table.new_scan().filter(own).to_arrow().equals(pages), own
