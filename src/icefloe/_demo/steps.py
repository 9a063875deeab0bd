"""The pipeline of the demo, one function per numbered section, all of it through Spark."""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import icefloe
from icefloe import spark as isp
from icefloe._demo import data
from icefloe._demo.output import DemoError, Out, n, utc
from icefloe.spec.snapshots import Snapshot

__all__ = ["Run", "live_rows"]

RETAIN_LAST = 1  # after compaction only the compacted snapshot stays: the replaced files go
COMPACT_OPTIONS = {"min-input-files": "2"}  # a partition with 2 small files is worth a rewrite
SHOWN_HISTORY = 16


def live_rows(snapshot: Snapshot | None) -> int:
    """Rows a snapshot holds: its data files' records minus its deletes (exact here: the demo's
    deletes never overlap)."""
    if snapshot is None:
        return 0
    s = snapshot.summary
    deletes = int(s.get("total-position-deletes", "0")) + int(s.get("total-equality-deletes", "0"))
    return int(s.get("total-records", "0")) - deletes


def _files(snapshot: Snapshot | None) -> tuple[int, int]:
    """(data files, delete files) of a snapshot."""
    s = snapshot.summary if snapshot else {}
    return int(s.get("total-data-files", "0")), int(s.get("total-delete-files", "0"))


def _added(snapshot: Snapshot, key: str) -> int:
    return int(snapshot.summary.get(key, "0"))


def _committed(result: Snapshot | None, what: str) -> Snapshot:
    if result is None:
        raise DemoError(f"{what} committed no snapshot")
    return result


@dataclass
class Run:
    """One run of the pipeline: the session, the tables and what this run committed."""

    out: Out
    spark: SparkSession
    orders: icefloe.Table
    sales: icefloe.Table
    seed: int
    labels: dict[int, str] = field(default_factory=dict)  # snapshot id -> what committed it
    loaded: Snapshot | None = None  # db.orders after the daily loads (time travel goes back here)

    def _label(self, snapshot: Snapshot, label: str) -> Snapshot:
        self.labels[snapshot.snapshot_id] = label
        return snapshot

    # ---- 3. daily batches --------------------------------------------------------------------

    def load(self, days: list[dt.date]) -> None:
        """Append each day's orders and sales (one snapshot per table and day)."""
        for day in days:
            self._append(self.orders, self._orders(day), day)
            self._append(self.sales, data.sales_frame(self.spark, day, self.seed), day)

    def _orders(self, day: dt.date) -> DataFrame:
        has_channel = self.orders.schema().find_field(data.CHANNEL[0]) is not None
        return data.orders_frame(self.spark, day, self.seed, channel=has_channel)

    def _append(self, table: icefloe.Table, frame: DataFrame, day: dt.date) -> None:
        with self.out.step("append", table.identifier) as step:
            snapshot = _committed(isp.write(frame, table, mode="append"), f"{table.identifier} {day}")
            self._label(snapshot, f"daily batch {day}")
            step.what = (
                f"{day}: {n(_added(snapshot, 'added-records'))} rows, "
                f"{_added(snapshot, 'added-data-files')} files"
            )

    # ---- 4. partition overwrite --------------------------------------------------------------

    def restate(self, day: dt.date) -> None:
        """The source system re-delivers one day of sales: replace that day's partition."""
        before = live_rows(self.sales.current_snapshot())
        with self.out.step("overwrite", data.SALES) as step:
            frame = data.sales_frame(self.spark, day, self.seed, restated=True)
            snapshot = _committed(
                isp.write(frame, self.sales, mode="overwrite-partitions"), f"restating {day}"
            )
            self._label(snapshot, f"restated {day}")
            step.what = (
                f"sale_date={day}: {n(_added(snapshot, 'deleted-records'))} -> "
                f"{n(_added(snapshot, 'added-records'))} rows"
            )
            step.extra.append(
                f"replaced {_added(snapshot, 'deleted-data-files')} files with "
                f"{_added(snapshot, 'added-data-files')}, other days untouched "
                f"(table {n(before)} -> {n(live_rows(snapshot))} rows)"
            )

    # ---- 5. MERGE ----------------------------------------------------------------------------

    def merge_corrections(self, days: list[dt.date]) -> None:
        """Late corrections: amounts of existing orders change, orders that never arrived come in."""
        before = live_rows(self.orders.current_snapshot())
        with self.out.step("merge", data.ORDERS) as step:
            source = data.corrections_frame(self.spark, days, self.seed)
            snapshot = _committed(
                isp.merge_into(source, self.orders, "t.order_id = s.order_id")
                .when_matched()
                .update({"amount": "s.amount"})
                .when_not_matched()
                .insert_all()
                .merge(),
                "the merge",
            )
            self._label(snapshot, "merge: late corrections")
            inserted = live_rows(snapshot) - before
            updated = _added(snapshot, "added-records") - inserted
            step.what = f"{days[0]} .. {days[-1]}: {n(updated)} updated, {n(inserted)} inserted"
            step.extra.append(
                f"{_added(snapshot, 'added-data-files')} data files and "
                f"{_added(snapshot, 'added-delete-files')} position-delete files "
                f"({self.orders.properties().get('write.merge.mode', 'copy-on-write')})"
            )

    # ---- 6. DELETE ---------------------------------------------------------------------------

    def delete_test_orders(self) -> None:
        """The QA team's test orders do not belong in the table: delete them, on every day."""
        before = live_rows(self.orders.current_snapshot())
        where = f"customer = '{data.TEST_CUSTOMER}'"
        with self.out.step("delete", data.ORDERS) as step:
            snapshot = isp.delete(self.spark, self.orders, where=where)
            assert snapshot is not None  # committed even when no row matched, as in Java
            self._label(snapshot, f"delete {where}")
            if live_rows(snapshot) == before:  # none arrived since the last run
                step.what = f"{where}: no rows left to delete"
                return
            step.what = f"{where}: {n(before - live_rows(snapshot))} rows deleted"
            step.extra.append(
                f"{_added(snapshot, 'added-delete-files')} position-delete files, no data file rewritten"
                if _added(snapshot, "added-delete-files")
                else f"{_added(snapshot, 'deleted-data-files')} data files rewritten"
            )

    # ---- 7. schema change --------------------------------------------------------------------

    def add_channel(self, day: dt.date) -> None:
        """Add the ``channel`` column to db.orders, then load a batch that fills it."""
        name, type_name = data.CHANNEL
        with self.out.step("schema", data.ORDERS) as step:
            existing = self.orders.schema().find_field(name)
            if existing is None:
                self.orders.update_schema().add_column(name, type_name, "where the order was placed").commit()
                added = self.orders.schema().find_field(name)
                assert added is not None
                step.what = f"add_column('{name}', '{type_name}'): field id {added.field_id}"
            else:
                step.what = f"'{name}' exists (field id {existing.field_id}, from an earlier run)"
            step.extra.append(
                f"schema {self.orders.schema().schema_id}: "
                + ", ".join(f"{f.name} {f.field_type}" for f in self.orders.schema().fields)
            )
        self.load([day])
        counts = (
            isp.read(self.spark, self.orders, filter=f"grass_date = '{day}'", columns=[name])
            .groupBy(name)
            .count()
            .orderBy(name)
            .collect()
        )
        self.out.line(
            f"  {'':10} {'':10} "
            + self.out.dim(f"orders of {day} by channel: " + ", ".join(f"{r[0]} {n(r[1])}" for r in counts))
        )

    # ---- 8. time travel ----------------------------------------------------------------------

    def time_travel(self) -> None:
        """Read db.orders as it was after the daily loads, by snapshot id and by time."""
        target = self.loaded
        if target is None:
            raise DemoError("no snapshot to travel back to")
        after = [s for s in self.orders.snapshots() if s.timestamp_ms > target.timestamp_ms]
        moment = target.timestamp_ms + (
            (min(s.timestamp_ms for s in after) - target.timestamp_ms) // 2 if after else 0
        )
        rows: list[list[str]] = []
        seen: list[tuple[int, Any]] = []
        for label, options in (
            (f"snapshot_id={target.snapshot_id}", {"snapshot_id": target.snapshot_id}),
            (f"as_of={utc(moment)} UTC", {"as_of": dt.datetime.fromtimestamp(moment / 1000, dt.UTC)}),
            ("current", {}),
        ):
            started = time.perf_counter()
            frame = isp.read(self.spark, self.orders, **options)
            count, amount = frame.agg(F.count(F.lit(1)), F.sum("amount")).collect()[0]
            seen.append((count, amount))
            rows.append(
                [
                    label,
                    n(count),
                    f"{amount:,}",
                    str(len(frame.columns)),
                    f"{time.perf_counter() - started:.1f} s",
                ]
            )
        self.out.table(["isp.read(spark, orders, ...)", "rows", "sum(amount)", "columns", "time"], rows)
        if seen[0] != seen[1]:
            raise DemoError(f"as_of={utc(moment)} did not read snapshot {target.snapshot_id}")
        if seen[0][0] != live_rows(target) or seen[2][0] != live_rows(self.orders.current_snapshot()):
            raise DemoError("time travel read another number of rows than the snapshots hold")

    # ---- 9. compaction -----------------------------------------------------------------------

    def compact(self) -> None:
        for table in (self.orders, self.sales):
            data_before, deletes_before = _files(table.current_snapshot())
            with self.out.step("compact", table.identifier) as step:
                result = isp.actions.rewrite_data_files(self.spark, table, options=COMPACT_OPTIONS)
                snapshot = table.current_snapshot()
                if result.commits and snapshot is not None:
                    self._label(snapshot, "compaction")
                data_after, deletes_after = _files(snapshot)
                step.what = (
                    f"data files {n(data_before)} -> {n(data_after)}, "
                    f"delete files {n(deletes_before)} -> {n(deletes_after)}"
                )
                folded = " (applying their deletes)" if deletes_before else ""
                if result.commits:
                    step.extra.append(
                        f"rewrote {n(result.rewritten_data_files_count)} small files{folded} into "
                        f"{n(result.added_data_files_count)}, one commit"
                    )
                else:
                    step.extra.append("nothing to rewrite: no partition has several small files")

    # ---- 10. history -------------------------------------------------------------------------

    def history(self) -> None:
        entries = self.orders.history()
        rows = []
        for entry in entries[-SHOWN_HISTORY:]:
            snapshot = self.orders.snapshot(entry.snapshot_id)
            summary = snapshot.summary if snapshot else {}
            rows.append(
                [
                    str(entry.snapshot_id),
                    utc(entry.timestamp_ms),
                    summary.get("operation", "?"),
                    self.labels.get(entry.snapshot_id, "(an earlier run)"),
                    n(live_rows(snapshot)),
                    n(_files(snapshot)[0]),
                    n(_files(snapshot)[1]),
                ]
            )
        self.out.table(
            ["snapshot id", "committed (UTC)", "operation", "what", "rows", "data files", "delete files"],
            rows,
            left=4,
        )
        if len(entries) > SHOWN_HISTORY:
            self.out.line(self.out.dim(f"  ({len(entries) - SHOWN_HISTORY} earlier snapshots not shown)"))

    # ---- 11. snapshot expiry -----------------------------------------------------------------

    def expire(self) -> None:
        older_than = int(time.time() * 1000)
        for table in (self.orders, self.sales):
            with self.out.step("expire", table.identifier) as step:
                expired, deleted = _expire(self.spark, table, older_than)
                step.what = f"{len(expired)} snapshots expired, {len(table.snapshots())} kept"
                step.extra.append(
                    f"deleted {n(deleted['data'])} data files, {n(deleted['delete'])} delete files, "
                    f"{n(deleted['manifests'])} manifests, {n(deleted['lists'])} manifest lists"
                    + (f"; {n(deleted['failed'])} could not be deleted" if deleted["failed"] else "")
                )
        self.out.line(
            self.out.dim(
                f"  retain_last={RETAIN_LAST}, older_than=now: the files only older snapshots reached "
                "are gone; time travel now starts at the compaction"
            )
        )


def _expire(spark: SparkSession, table: icefloe.Table, older_than: int) -> tuple[list[int], dict[str, int]]:
    """Expire the table's snapshots older than ``older_than`` (ms) but the newest RETAIN_LAST,
    and delete the files only they reached: the ids expired and counts of files deleted."""
    result = isp.actions.expire_snapshots(spark, table, retain_last=RETAIN_LAST, older_than=older_than)
    return list(result.expired_snapshot_ids), {
        "data": result.deleted_data_files_count,
        "delete": result.deleted_position_delete_files_count + result.deleted_equality_delete_files_count,
        "manifests": result.deleted_manifests_count,
        "lists": result.deleted_manifest_lists_count,
        "failed": len(result.failed_deletes),
    }
