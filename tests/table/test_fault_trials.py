"""Fault injection, 200 randomized trials (issue 4's acceptance).

Each trial runs a few random operations (append, delete of a day by filter, a row-level
merge-on-read delete through ``table.delete(where)``, overwrite of a day, a compaction through
``new_rewrite()``) on a fresh table of the in-memory catalog, each under a random fault:

- the catalog commits, then raises an unknown-state error (``commit_then_raise``);
- the catalog fails the next N commits (``fail_next_commits``; N beyond the retries is a
  definite failure);
- the FileIO fails its k-th write (a manifest or manifest list of the operation).

After every operation the trial decides from the table's history whether the operation
committed (its snapshot id is in the table, or not), updates its model of the rows, and
checks: the table loads; its rows are the model's (so no append was applied twice and none
was lost); every file that any retained snapshot references exists.
"""

from __future__ import annotations

import datetime as dt
import random
import uuid
from pathlib import Path

import pyarrow as pa
import pytest

from icefloe import Catalog, Table
from icefloe.arrow.row_filter import filter_table
from icefloe.errors import (
    CommitFailedException,
    CommitStateUnknownException,
    FileIOError,
    ValidationException,
)
from icefloe.io.faults import FaultInjectingFileIO
from icefloe.manifests import read_manifest
from support.catalogs import ARROW_SCHEMA, local, make_catalog, memory_backend, rows, write_parquet_file

TRIALS = 200
STEPS = 4
DAYS = [dt.date(2024, 1, 1 + i) for i in range(3)]
RETRIES = {"commit.retry.num-retries": "3", "commit.retry.min-wait-ms": "1", "commit.retry.max-wait-ms": "2"}


def _ids(table: Table) -> list[int]:
    return sorted(table.new_scan().select("id").to_arrow().column("id").to_pylist())


def _rows_of_day(data: pa.Table, day: dt.date) -> pa.Table:
    return data.filter(pa.compute.equal(data.column("day"), pa.scalar(day, pa.date32())))


def _referenced_files_exist(table: Table) -> None:
    io = table.io()
    for snapshot in table.metadata.snapshots:
        assert snapshot.manifest_list is not None
        assert local(snapshot.manifest_list).exists(), snapshot.manifest_list
        for manifest in snapshot.all_manifests(io):
            assert local(manifest.manifest_path).exists(), manifest.manifest_path
            for entry in read_manifest(io, manifest):
                if entry.is_live:
                    assert local(entry.data_file.file_path).exists(), entry.data_file.file_path


class _RowDelete:
    """``table.delete(where)`` as an operation with a snapshot id: the convenience commits one
    snapshot, marked in its summary so the trial can tell whether it committed."""

    def __init__(self, table: Table, where: str):
        self.table = table
        self.where = where
        self.marker = uuid.uuid4().hex
        self.matched_nothing = False

    def commit(self) -> None:
        committed = self.table.delete(self.where, snapshot_properties={"trial.op": self.marker})
        self.matched_nothing = committed is None  # no row matched: nothing to commit

    @property
    def snapshot_id(self) -> int | None:
        for snapshot in self.table.snapshots():
            if snapshot.summary.get("trial.op") == self.marker:
                return snapshot.snapshot_id
        return None


class Trial:
    def __init__(self, catalog: Catalog, seed: int, warehouse: Path):
        self.rng = random.Random(seed)
        self.catalog = catalog
        self.table = catalog.create_table(
            "db.t",
            ARROW_SCHEMA,
            partition_by=["day"],
            properties={
                "format-version": str(self.rng.choice([2, 3])),
                "write.delete.mode": "merge-on-read",
                **RETRIES,
            },
        )
        self.model: set[int] = set()
        self.outcomes: dict[str, int] = {}
        self.next_id = 0
        self.files = 0

    def _file(self, data: pa.Table, day: dt.date) -> object:
        self.files += 1
        return write_parquet_file(self.table, data, f"day={day.isoformat()}/f{self.files}.parquet")

    def _current_rows(self) -> pa.Table:
        return self.table.new_scan().to_arrow()

    def step(self) -> None:
        table = self.table
        kind = self.rng.choice(["append", "append", "delete", "rowdelete", "overwrite", "rewrite"])
        day = self.rng.choice(DAYS)
        current = self._current_rows()
        expected = set(self.model)
        if kind == "append":
            data = rows(self.rng.randint(1, 6), start=self.next_id)
            self.next_id += data.num_rows
            op = table.new_append()
            for d in DAYS:
                part = _rows_of_day(data, d)
                if part.num_rows:
                    op.append_file(self._file(part, d))  # type: ignore[arg-type]
            expected |= set(data.column("id").to_pylist())
        elif kind == "delete":
            op = table.new_delete().delete_from_row_filter(f"day = '{day.isoformat()}'")
            expected -= set(_rows_of_day(current, day).column("id").to_pylist())
        elif kind == "rowdelete":
            low = self.rng.randrange(max(self.next_id, 1))
            where = f"id >= {low} AND id < {low + self.rng.randint(1, 4)}"
            op = _RowDelete(table, where)
            expected -= set(filter_table(current, where, table.schema()).column("id").to_pylist())
        elif kind == "overwrite":
            data = _rows_of_day(rows(6, start=self.next_id), day)
            self.next_id += 6
            op = table.new_overwrite().overwrite_by_row_filter(f"day = '{day.isoformat()}'")
            if data.num_rows:
                op.add_file(self._file(data, day))  # type: ignore[arg-type]
            expected -= set(_rows_of_day(current, day).column("id").to_pylist())
            expected |= set(data.column("id").to_pylist())
        else:
            tasks = table.new_scan().filter(f"day = '{day.isoformat()}'").plan_files()
            if len(tasks) < 2:
                return
            snapshot = table.current_snapshot()
            assert snapshot is not None
            merged = self._file(_rows_of_day(current, day), day)
            op = table.new_rewrite().validate_from_snapshot(snapshot.snapshot_id)
            op.rewrite_files([t.file for t in tasks], [merged])  # type: ignore[list-item]
        self._commit_with_fault(op, expected)

    def _commit_with_fault(self, op: object, expected: set[int]) -> None:
        fault = self.rng.choice(["none", "unknown", "fail-some", "fail-all", "io"])
        backend = memory_backend(self.catalog)
        target = op
        if fault == "unknown":
            backend.commit_then_raise(1)
        elif fault == "fail-some":
            backend.fail_next_commits(self.rng.randint(1, 3))
        elif fault == "fail-all":
            backend.fail_next_commits(10)
        elif fault == "io":
            # Rebuild the operation's table with a FileIO that fails its k-th write.
            k = self.rng.randint(1, 3)
            faulty = FaultInjectingFileIO(self.table.io(), k)
            self.table._io = faulty  # the operation reads its FileIO from the table
        try:
            target.commit()  # type: ignore[attr-defined]
            outcome = "committed"
        except CommitStateUnknownException:
            outcome = "unknown"
        except (CommitFailedException, FileIOError, ValidationException):
            outcome = "failed"
        finally:
            backend.fail_next_commits(0)
            backend.commit_then_raise(0)
            if fault == "io":
                self.table._io = self.table._io.inner  # type: ignore[attr-defined]
        self.outcomes[f"{fault}:{outcome}"] = self.outcomes.get(f"{fault}:{outcome}", 0) + 1
        self.table.refresh()
        snapshot_id = op.snapshot_id  # type: ignore[attr-defined]
        committed = snapshot_id is not None and snapshot_id in {s.snapshot_id for s in self.table.snapshots()}
        if outcome == "committed" and not getattr(op, "matched_nothing", False):
            assert committed
        if outcome == "failed":
            assert not committed
        if committed:
            self.model = expected
        reloaded = self.catalog.load_table("db.t")
        assert _ids(reloaded) == sorted(self.model), (outcome, op)
        _referenced_files_exist(reloaded)


@pytest.mark.parametrize("block", range(10))
def test_randomized_fault_trials(tmp_path: Path, block: int) -> None:
    outcomes: dict[str, int] = {}
    for seed in range(block * TRIALS // 10, (block + 1) * TRIALS // 10):
        warehouse = tmp_path / f"trial-{seed}"
        warehouse.mkdir()
        catalog = make_catalog("memory", warehouse)
        try:
            trial = Trial(catalog, seed, warehouse)
            for _ in range(STEPS):
                trial.step()
            for key, count in trial.outcomes.items():
                outcomes[key] = outcomes.get(key, 0) + count
        finally:
            catalog.backend.close()
    # The faults fired: unknown outcomes, definite failures (catalog and FileIO), retried
    # successes all happened in this block.
    assert outcomes.get("unknown:unknown", 0) > 0, outcomes
    assert outcomes.get("fail-all:failed", 0) > 0, outcomes
    assert outcomes.get("io:failed", 0) > 0, outcomes
    assert outcomes.get("fail-some:committed", 0) > 0, outcomes
