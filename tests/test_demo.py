"""``python -m icefloe.demo``: the pipeline on Spark really happened, a re-run continues it,
``--fresh`` starts over, and the expected failures are one line each.

Spark is slow to start, so one module-scoped chain of runs serves every assertion: a first run
as the command (a subprocess: its own JVM, its stderr and colours as a user sees them), then a
re-run and a ``--fresh`` run in this process on one Spark session. Each run's outcome (the
output, and every snapshot any metadata file of the tables recorded, the expired ones too) is
captured when it ends.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import icefloe
from icefloe import demo
from icefloe._demo import data

pytestmark = pytest.mark.slow

SRC = Path(demo.__file__).resolve().parents[1]
DAYS = 3  # per run: two daily loads, then the schema change and the last day
SECTIONS = (
    "1. Catalog and tables",
    "2. Spark",
    "3. Load 2 daily batches",
    "4. Partition overwrite",
    "5. MERGE late corrections",
    "6. DELETE",
    "7. Schema change",
    "8. Time travel on db.orders",
    "9. Compaction",
    "10. History of db.orders",
    "11. Snapshot expiry",
    "Done in",
)


def _days(first: dt.date, count: int) -> list[dt.date]:
    return [first + dt.timedelta(days=i) for i in range(count)]


def _catalog(warehouse: Path) -> icefloe.Catalog:
    return icefloe.load_catalog(
        "default", type="sql", uri=f"sqlite:///{warehouse / 'catalog.db'}", warehouse=str(warehouse)
    )


def _command(*argv: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(SRC), **(env or {})}
    environment.pop("NO_COLOR", None)
    return subprocess.run(
        [sys.executable, "-m", "icefloe.demo", *argv],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@dataclass
class Outcome:
    """A finished run: its output, the tables as it left them, and every snapshot (by id) that
    any metadata file of each table recorded, in commit order."""

    out: str
    tables: dict[str, icefloe.Table]
    rows: dict[str, Any]  # pyarrow tables of the current rows
    history: dict[str, list[dict[str, Any]]]

    def operations(self, name: str, since: int = 0) -> list[str]:
        return [s["summary"]["operation"] for s in self.history[name][since:]]

    def section(self, number: int) -> str:
        start = self.out.index(f"\n{number}. ")
        end = self.out.find(f"\n{number + 1}. ", start)
        return self.out[start : end if end >= 0 else None]


def _outcome(warehouse: Path, out: str) -> Outcome:
    catalog = _catalog(warehouse)
    try:
        tables = {name: catalog.load_table(name) for name in (data.ORDERS, data.SALES)}
        rows = {name: table.new_scan().to_arrow() for name, table in tables.items()}
    finally:
        catalog.close()
    history = {}
    for name, table in tables.items():
        snapshots: dict[int, dict[str, Any]] = {}
        for path in Path(table.location(), "metadata").glob("*.metadata.json"):
            for snapshot in json.loads(path.read_text())["snapshots"]:
                snapshots[snapshot["snapshot-id"]] = snapshot
        history[name] = sorted(snapshots.values(), key=lambda s: s["sequence-number"])
    return Outcome(out, tables, rows, history)


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    """The session the in-process runs share (a test run's own, when one is active)."""
    from pyspark.sql import SparkSession

    from icefloe.spark import local_session

    active = SparkSession.getActiveSession()
    session = active or local_session("local[2]", app_name="icefloe-demo-tests")
    try:
        yield session
    finally:
        if active is None:
            session.stop()


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("demo")


@pytest.fixture(scope="module")
def first(home: Path) -> Outcome:
    """``python -m icefloe.demo`` in a fresh folder (default ./warehouse), with a configured
    ``default`` catalog elsewhere that the demo must not touch."""
    elsewhere = home / "configured.db"
    proc = _command(
        "--days",
        str(DAYS),
        cwd=home,
        env={
            "HOME": str(home),
            "ICEFLOE_CATALOG__DEFAULT__TYPE": "sql",
            "ICEFLOE_CATALOG__DEFAULT__URI": f"sqlite:///{elsewhere}",
            "ICEFLOE_CATALOG__DEFAULT__WAREHOUSE": str(home / "configured"),
        },
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # the JVM's start-up notes and Spark's logging stay out of sight
    assert not elsewhere.exists() and not (home / "configured").exists()
    return _outcome(home / "warehouse", proc.stdout)


def _in_process(spark: Any, *argv: str) -> str:
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        assert demo.main(list(argv)) == 0
    return output.getvalue()


@pytest.fixture(scope="module")
def rerun(first: Outcome, home: Path, spark: Any) -> Outcome:
    warehouse = home / "warehouse"
    return _outcome(warehouse, _in_process(spark, "--warehouse", str(warehouse), "--days", str(DAYS)))


@pytest.fixture(scope="module")
def fresh(rerun: Outcome, home: Path, spark: Any) -> Outcome:
    warehouse = home / "warehouse"
    return _outcome(warehouse, _in_process(spark, "--warehouse", str(warehouse), "--days", "2", "--fresh"))


# ---- the first run ------------------------------------------------------------------------------


def test_every_section_runs_without_colours_when_piped(first: Outcome) -> None:
    for section in SECTIONS:
        assert section in first.out
    assert "\033[" not in first.out
    assert "created    db.orders  partitioned by country, grass_date; merge-on-read" in first.out
    assert "created    db.sales   partitioned by sale_date; zstd, owner=icefloe-demo" in first.out
    assert " on local[2] " in first.section(2)


def test_the_tables_saw_every_kind_of_commit(first: Outcome) -> None:
    loads, last = _days(data.FIRST_DAY, DAYS)[:-1], _days(data.FIRST_DAY, DAYS)[-1]
    # db.orders: daily appends, the merge (a row delta: overwrite), the delete, the day after the
    # schema change, the compaction.
    assert first.operations(data.ORDERS) == ["append"] * len(loads) + [
        "overwrite",
        "delete",
        "append",
        "replace",
    ]
    # db.sales: the appends (one file per day: the write clusters by partition), the restated
    # day, the last day; nothing for compaction to rewrite.
    assert first.operations(data.SALES) == ["append"] * len(loads) + ["overwrite", "append"]
    restated = first.history[data.SALES][len(loads)]["summary"]
    assert restated["replace-partitions"] == "true"
    assert int(restated["deleted-records"]) == data.sales_rows(loads[1])
    assert 0 < int(restated["added-records"]) < data.sales_rows(loads[1])
    merged = first.history[data.ORDERS][len(loads)]["summary"]
    # 40 corrections per day update rows in place of position deletes; 20 late orders per day.
    assert int(merged["added-position-deletes"]) == 40 * len(loads)
    assert int(merged["added-records"]) == 60 * len(loads)
    deleted = first.history[data.ORDERS][len(loads) + 1]["summary"]
    assert int(deleted["added-position-deletes"]) > 0 and "added-data-files" not in deleted
    appended = first.history[data.ORDERS][len(loads) + 2]["summary"]
    assert int(appended["added-records"]) == data.orders_rows(last)


def test_the_rows_are_the_batches_after_every_change(first: Outcome) -> None:
    days = _days(data.FIRST_DAY, DAYS)
    loads = days[:-1]
    orders = first.rows[data.ORDERS]
    deleted_test_orders = int(first.history[data.ORDERS][len(loads) + 1]["summary"]["added-position-deletes"])
    assert orders.num_rows == sum(data.orders_rows(d) for d in days) + 20 * len(loads) - deleted_test_orders
    test_orders = orders.filter(pc.equal(orders["customer"], data.TEST_CUSTOMER))
    last_batch = data.day_index(days[-1]) * data.IDS_PER_DAY
    assert deleted_test_orders > 0 and test_orders.num_rows > 0  # the last batch's come after the DELETE
    assert pc.min(test_orders["order_id"]).as_py() >= last_batch
    ids = set(orders["order_id"].to_pylist())
    for day in loads:  # the late orders the merge inserted
        start = data.day_index(day) * data.IDS_PER_DAY + data.orders_rows(day)
        assert set(range(start, start + 20)) <= ids
    sales = first.rows[data.SALES]
    restated = first.history[data.SALES][len(loads)]["summary"]
    by_day = sales.group_by("sale_date").aggregate([("id", "count")])
    counts = dict(zip(by_day["sale_date"].to_pylist(), by_day["id_count"].to_pylist()))
    assert counts == {
        d: int(restated["added-records"]) if d == loads[1] else data.sales_rows(d) for d in days
    }


def test_the_schema_change_added_a_column_the_last_batch_fills(first: Outcome) -> None:
    orders = first.tables[data.ORDERS]
    assert [(f.name, str(f.field_type)) for f in orders.schema().fields][-1] == data.CHANNEL
    rows = first.rows[data.ORDERS]
    last = _days(data.FIRST_DAY, DAYS)[-1]
    batch = pc.greater_equal(rows["order_id"], data.day_index(last) * data.IDS_PER_DAY)
    last_batch, earlier = rows.filter(batch), rows.filter(pc.invert(batch))
    assert last_batch.num_rows == data.orders_rows(last)
    assert last_batch["channel"].null_count == 0
    assert set(last_batch["channel"].to_pylist()) == {"web", "app", "store"}
    assert earlier.num_rows > 0 and earlier["channel"].null_count == earlier.num_rows


def test_time_travel_read_the_end_of_the_loads_by_id_and_by_time(first: Outcome) -> None:
    loads = _days(data.FIRST_DAY, DAYS)[:-1]
    target = first.history[data.ORDERS][len(loads) - 1]
    lines = [line.split() for line in first.section(8).splitlines() if line.startswith("  ")]
    by_id, by_time, current = lines[1], lines[2], lines[3]
    assert by_id[0] == f"snapshot_id={target['snapshot-id']}"
    assert by_time[0].startswith("as_of=")
    expected = sum(data.orders_rows(d) for d in loads)
    assert by_id[1] == by_time[3] == f"{expected:,}"  # as_of=<date> <time> UTC splits in three
    assert by_id[2] == by_time[4]
    assert by_id[3] == "5" and current[-3] == "6"  # the old snapshot predates the new column
    assert current[1] == f"{first.rows[data.ORDERS].num_rows:,}"


def test_compaction_folded_the_deletes_and_expiry_removed_the_old_files(first: Outcome) -> None:
    for name, table in first.tables.items():
        before = [int(s["summary"]["total-data-files"]) for s in first.history[name]]
        current = table.current_snapshot()
        assert current is not None
        if name == data.ORDERS:
            assert current.summary["operation"] == "replace"
            assert int(current.summary["total-data-files"]) < max(before)
        else:  # one file per day already: compaction had nothing to do, and said so
            assert current.summary["operation"] == "append"
            assert int(current.summary["total-data-files"]) == len(_days(data.FIRST_DAY, DAYS))
            assert "nothing to rewrite" in first.section(9)
        assert int(current.summary["total-delete-files"]) == 0
        assert [s.snapshot_id for s in table.snapshots()] == [current.snapshot_id]  # the rest expired
        on_disk = list(Path(table.location(), "data").rglob("*.parquet"))
        assert len(on_disk) == int(current.summary["total-data-files"])  # the replaced files are gone
    assert f"{len(first.history[data.ORDERS]) - 1} snapshots expired, 1 kept" in first.section(11)


def test_the_history_names_each_commit(first: Outcome) -> None:
    history = first.section(10)
    for what in (
        "daily batch 2024-01-01",
        "merge: late corrections",
        "delete customer = 'qa-test'",
        "compaction",
    ):
        assert what in history


# ---- a re-run, then --fresh -------------------------------------------------------------------


def test_a_rerun_continues_with_the_next_days(first: Outcome, rerun: Outcome) -> None:
    later = _days(data.FIRST_DAY + dt.timedelta(days=DAYS), DAYS)
    assert f"Load 2 daily batches  {later[0]} .. {later[1]}" in rerun.out
    assert "exists     db.orders  1 snapshots" in rerun.out
    assert "'channel' exists (field id 6, from an earlier run)" in rerun.out
    assert "(the session already active in this process)" in rerun.out
    done = len(first.history[data.ORDERS])
    assert rerun.operations(data.ORDERS, since=done) == ["append"] * 2 + [
        "overwrite",
        "delete",
        "append",
        "replace",
    ]
    orders = rerun.rows[data.ORDERS]
    assert max(orders["grass_date"].to_pylist()) == later[-1]
    deleted_test_orders = int(rerun.history[data.ORDERS][done + 3]["summary"]["added-position-deletes"])
    expected = (
        first.rows[data.ORDERS].num_rows
        + sum(data.orders_rows(d) for d in later)
        + 20 * 2
        - deleted_test_orders
    )
    assert orders.num_rows == expected
    # Every batch of the re-run carries the column the first run added.
    new = orders.filter(pc.greater_equal(orders["order_id"], data.day_index(later[0]) * data.IDS_PER_DAY))
    assert new["channel"].null_count == 20 * 2  # the merge's late orders have none


def test_fresh_starts_over_and_leaves_no_files_behind(rerun: Outcome, fresh: Outcome) -> None:
    assert "dropped    db.orders  --fresh" in fresh.out and "dropped    db.sales   --fresh" in fresh.out
    assert "Load 1 daily batch  2024-01-01 .. 2024-01-01" in fresh.out
    assert fresh.operations(data.ORDERS) == ["append", "overwrite", "delete", "append", "replace"]
    assert max(fresh.rows[data.SALES]["sale_date"].to_pylist()) == dt.date(2024, 1, 2)
    for table in fresh.tables.values():
        on_disk = list(Path(table.location(), "data").rglob("*.parquet"))
        assert len(on_disk) == int(table.current_snapshot().summary["total-data-files"])  # type: ignore[union-attr]


# ---- on Spark Connect ----------------------------------------------------------------------------


def test_the_demo_runs_on_spark_connect(tmp_path: Path) -> None:
    """``--connect``: the same pipeline on a Spark Connect session (a local Connect server)."""
    proc = _command("--connect", "--days", "2", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    outcome = _outcome(tmp_path / "warehouse", proc.stdout)
    for section in SECTIONS:
        assert section.replace("Load 2 daily batches", "Load 1 daily batch") in outcome.out
    assert "on Spark Connect (local[2])" in outcome.section(2)
    assert outcome.operations(data.ORDERS) == ["append", "overwrite", "delete", "append", "replace"]
    assert outcome.operations(data.SALES) == ["append", "overwrite", "append"]
    days = _days(data.FIRST_DAY, 2)
    assert outcome.rows[data.ORDERS].num_rows == sum(data.orders_rows(d) for d in days) + 20 - int(
        outcome.history[data.ORDERS][2]["summary"]["added-position-deletes"]
    )


# ---- failures: one line, exit status 1, before Spark starts -----------------------------------


def test_a_foreign_table_of_the_same_name_is_reported_in_one_line(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    try:
        catalog.create_namespace("db")
        catalog.create_table("db.orders", pa.schema([("order_id", pa.int64()), ("note", pa.string())]))
    finally:
        catalog.close()
    proc = _command("--warehouse", str(tmp_path), cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.startswith("demo: db.orders exists but is not the demo's table")
    assert "--fresh" in proc.stderr and proc.stderr.count("\n") == 1
    assert "2. Spark" not in proc.stdout


def test_an_unusable_warehouse_is_reported_in_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    proc = _command("--warehouse", str(blocker / "warehouse"), cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"demo: cannot write to warehouse {blocker / 'warehouse'}")
    assert proc.stderr.count("\n") == 1


def test_missing_pyspark_is_reported_in_one_line(tmp_path: Path) -> None:
    script = (
        "import sys; sys.modules['pyspark'] = None\n"  # find_spec() then reports it missing
        "from icefloe.demo import main\n"
        f"sys.exit(main(['--warehouse', {str(tmp_path / 'wh')!r}]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith("demo: the demo runs on Spark: install PySpark 4")
    assert proc.stderr.count("\n") == 1


def test_a_bad_master_is_reported_in_one_line(tmp_path: Path) -> None:
    proc = _command("--warehouse", str(tmp_path), "--master", "nowhere://", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.startswith("demo: cannot start Spark on nowhere://: ")
    assert "Master must" in proc.stderr  # the JVM's reason, not py4j's wrapper
    assert proc.stderr.count("\n") == 1


def test_bad_arguments_are_usage_errors(tmp_path: Path) -> None:
    proc = _command("--days", "1", cwd=tmp_path)
    assert proc.returncode == 2
    assert "--days must be at least 2" in proc.stderr
    assert not (tmp_path / "warehouse").exists()
