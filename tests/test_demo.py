"""``python -m icefloe.demo``: a first run, a re-run that appends the next days, ``--fresh``,
and the expected failures, each in a temporary warehouse."""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import os
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest

import icefloe
from icefloe import demo

SRC = Path(demo.__file__).resolve().parents[1]
SECTIONS = (
    "1. Tables",
    "2. Load",
    "3. Query with pruning",
    "4. Time travel on db.orders",
    "5. Orders per country per day",
    "6. History of db.orders",
    "Done in",
)


def _days(first: dt.date, count: int) -> list[dt.date]:
    return [first + dt.timedelta(days=i) for i in range(count)]


def _expected(days: list[dt.date]) -> tuple[pa.Table, pa.Table]:
    orders = pa.concat_tables([demo.orders_for_day(d) for d in days])
    sales = pa.concat_tables([demo.sales_for_day(d) for d in days])
    return orders, sales


def _catalog(warehouse: Path) -> icefloe.Catalog:
    return icefloe.load_catalog(
        "default", type="sql", uri=f"sqlite:///{warehouse / 'catalog.db'}", warehouse=str(warehouse)
    )


def _read_back(warehouse: Path) -> tuple[icefloe.Table, icefloe.Table, pa.Table, pa.Table]:
    catalog = _catalog(warehouse)
    try:
        orders, sales = catalog.load_table(demo.ORDERS), catalog.load_table(demo.SALES)
        return orders, sales, orders.new_scan().to_arrow(), sales.new_scan().to_arrow()
    finally:
        catalog.close()


def _same_rows(actual: pa.Table, expected: pa.Table, key: str) -> None:
    actual = actual.select(expected.column_names).sort_by(key)
    expected = expected.sort_by(key)
    assert actual.num_rows == expected.num_rows
    for name in expected.column_names:
        assert actual[name].to_pylist() == expected[name].to_pylist(), name


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert demo.main(list(argv)) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    return captured.out


def test_first_run_then_rerun_appends_the_next_seven_days(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # the default warehouse is ./warehouse
    warehouse = tmp_path / "warehouse"

    first = _run(capsys)
    for section in SECTIONS:
        assert section in first
    assert "created  db.orders  partitioned by country, grass_date" in first
    assert "created  db.sales   partitioned by sale_date; zstd, owner=icefloe-demo" in first
    assert "Load 7 daily batches  2024-01-01 .. 2024-01-07" in first
    assert "\033[" not in first  # captured output is not a terminal
    orders, sales, orders_rows, sales_rows = _read_back(warehouse)
    expected_orders, expected_sales = _expected(_days(demo.FIRST_DAY, 7))
    _same_rows(orders_rows, expected_orders, "order_id")
    _same_rows(sales_rows, expected_sales, "id")
    assert len(orders.snapshots()) == len(sales.snapshots()) == 7
    assert sales.properties()["write.parquet.compression-codec"] == "zstd"
    assert sales.properties()["owner"] == "icefloe-demo"
    assert [f.name for f in orders.spec().fields] == ["country", "grass_date"]
    assert f"{expected_orders.num_rows + expected_sales.num_rows:,} rows" in first
    # One progress line per table and day, with its rows.
    for day, batch in ((d, demo.orders_for_day(d)) for d in _days(demo.FIRST_DAY, 7)):
        assert f"{day}  db.orders  {batch.num_rows:>7,}" in first

    second = _run(capsys)
    for section in SECTIONS:
        assert section in second
    assert "exists   db.orders  7 snapshots" in second
    assert "Load 7 daily batches  2024-01-08 .. 2024-01-14" in second
    orders, sales, orders_rows, sales_rows = _read_back(warehouse)
    expected_orders, expected_sales = _expected(_days(demo.FIRST_DAY, 14))
    _same_rows(orders_rows, expected_orders, "order_id")
    _same_rows(sales_rows, expected_sales, "id")
    assert len(orders.snapshots()) == len(sales.snapshots()) == 14
    assert orders.current_snapshot().summary[demo.DAY_KEY] == "2024-01-14"  # type: ignore[union-attr]
    assert "7 of 14 days shown" in second


def test_fresh_starts_over_and_leaves_no_files_behind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    warehouse = tmp_path / "wh"
    _run(capsys, "--warehouse", str(warehouse), "--days", "2")
    out = _run(capsys, "--warehouse", str(warehouse), "--fresh")
    assert "dropped  db.orders  --fresh" in out and "dropped  db.sales   --fresh" in out
    assert "Load 7 daily batches  2024-01-01 .. 2024-01-07" in out
    orders, sales, orders_rows, sales_rows = _read_back(warehouse)
    expected_orders, expected_sales = _expected(_days(demo.FIRST_DAY, 7))
    _same_rows(orders_rows, expected_orders, "order_id")
    _same_rows(sales_rows, expected_sales, "id")
    assert len(orders.snapshots()) == 7
    for table in (orders, sales):
        on_disk = list(Path(table.location(), "data").rglob("*.parquet"))
        assert len(on_disk) == int(table.current_snapshot().summary["total-data-files"])  # type: ignore[union-attr]


@pytest.fixture(scope="module")
def seven_days(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One first run of the demo: its warehouse and its output."""
    warehouse = tmp_path_factory.mktemp("demo")
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        assert demo.main(["--warehouse", str(warehouse)]) == 0
    return warehouse, output.getvalue()


def test_time_travel_reads_the_third_day(seven_days: tuple[Path, str]) -> None:
    warehouse, out = seven_days
    orders, _, _, _ = _read_back(warehouse)
    third = orders.snapshots()[2]
    rows_then = int(third.summary["total-records"])
    travel = out.split("4. Time travel")[1].split("5. Orders")[0]
    lines = [line for line in travel.splitlines() if str(third.snapshot_id) in line]
    assert len(lines) == 2  # use_snapshot and as_of_time both read it
    assert lines[0].lstrip().startswith(f"use_snapshot({third.snapshot_id})")
    assert lines[1].lstrip().startswith("as_of_time(")
    for line in lines:
        assert f"{rows_then:,}" in line and "2024-01-03" in line


def test_pruning_plans_few_of_the_files(seven_days: tuple[Path, str]) -> None:
    warehouse, out = seven_days
    orders, _, _, _ = _read_back(warehouse)
    total = int(orders.current_snapshot().summary["total-data-files"])  # type: ignore[union-attr]
    planned = len(
        orders.new_scan()
        .filter("country = 'SG' AND grass_date >= '2024-01-05' AND amount >= '100.00'")
        .plan_files()
    )
    assert 0 < planned < total / 10
    assert f"planned {planned} of {total} data files" in out


def test_counts_per_country_per_day_match_the_generated_data(seven_days: tuple[Path, str]) -> None:
    _, out = seven_days
    orders, _ = _expected(_days(demo.FIRST_DAY, 7))
    counts = orders.group_by(["grass_date", "country"]).aggregate([("country", "count")])
    columns = (counts[k].to_pylist() for k in ("grass_date", "country", "country_count"))
    cell = {(d, c): n for d, c, n in zip(*columns)}
    countries = sorted({c for _, c in cell})
    pivot = out.split("5. Orders per country per day")[1].splitlines()
    assert pivot[1].split() == ["grass_date", *countries, "total"]
    for day, line in zip(_days(demo.FIRST_DAY, 7), pivot[2:9]):
        expected = [cell.get((day, c), 0) for c in countries]
        assert line.split() == [day.isoformat(), *(f"{n:,}" for n in expected), f"{sum(expected):,}"]


def test_one_day_is_enough(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _run(capsys, "--warehouse", str(tmp_path), "--days", "1")
    assert "back to day 1 of this run (2024-01-01)" in out
    _, _, orders_rows, sales_rows = _read_back(tmp_path)
    assert orders_rows.num_rows == demo.orders_for_day(demo.FIRST_DAY).num_rows
    assert sales_rows.num_rows == demo.sales_for_day(demo.FIRST_DAY).num_rows


def test_generated_batches_are_deterministic_and_keys_unique() -> None:
    days = _days(demo.FIRST_DAY, 10)
    assert demo.orders_for_day(days[4]).equals(demo.orders_for_day(days[4]))
    assert not demo.orders_for_day(days[4]).equals(demo.orders_for_day(days[4], seed=1))
    orders, sales = _expected(days)
    assert len(set(orders["order_id"].to_pylist())) == orders.num_rows
    assert len(set(sales["id"].to_pylist())) == sales.num_rows
    for day in days:
        dates = set(demo.orders_for_day(day)["grass_date"].to_pylist())
        allowed = {day, day - dt.timedelta(days=1)} if day > demo.FIRST_DAY else {day}
        assert dates <= allowed and day in dates
        assert 2_500 <= demo.orders_for_day(day).num_rows <= 4_000
    assert orders.schema.equals(demo.ORDERS_SCHEMA) and sales.schema.equals(demo.SALES_SCHEMA)


# ---- as a command ------------------------------------------------------------------------------


def _command(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    env.pop("NO_COLOR", None)
    return subprocess.run(
        [sys.executable, "-m", "icefloe.demo", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_command_runs_fast_without_colours_when_piped(tmp_path: Path) -> None:
    started = time.monotonic()
    proc = _command(cwd=tmp_path)
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert "\033[" not in proc.stdout
    for section in SECTIONS:
        assert section in proc.stdout
    assert (tmp_path / "warehouse" / "catalog.db").is_file()
    assert elapsed < 20


def test_a_foreign_table_of_the_same_name_is_reported_in_one_line(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    try:
        catalog.create_namespace("db")
        catalog.create_table("db.orders", pa.schema([("order_id", pa.int64()), ("note", pa.string())]))
    finally:
        catalog.close()
    proc = _command("--warehouse", str(tmp_path), cwd=tmp_path)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("demo: db.orders exists but is not the demo's table")
    assert "--fresh" in proc.stderr and proc.stderr.count("\n") == 1

    fixed = _command("--warehouse", str(tmp_path), "--fresh", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stderr
    assert "dropped  db.orders" in fixed.stdout


def test_an_unusable_warehouse_is_reported_in_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    proc = _command("--warehouse", str(blocker / "warehouse"), cwd=tmp_path)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith(f"demo: cannot write to warehouse {blocker / 'warehouse'}")


def test_bad_arguments_are_usage_errors(tmp_path: Path) -> None:
    proc = _command("--days", "0", cwd=tmp_path)
    assert proc.returncode == 2
    assert "--days must be at least 1" in proc.stderr
    assert not (tmp_path / "warehouse").exists()
