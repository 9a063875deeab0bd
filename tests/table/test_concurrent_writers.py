"""4 processes x 25 mixed operations on one table (issue 4's acceptance).

Each worker (``mixed_worker.py``) appends, deletes rows by filter (merge-on-read), overwrites a
group (copy-on-write) and compacts a group through ``new_rewrite()``, concurrently with the
others, on one Hadoop table (commits publish ``v<N>.metadata.json`` exclusively). Each commit
records what it did in its summary (``test.op``). Afterwards, the history is replayed serially
from the first snapshot: at every committed snapshot the table's rows must equal the replay's,
and the workers may only have lost conflicts as ValidationException (any other error fails).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

import icefloe
from icefloe.arrow.row_filter import filter_table
from icefloe.spec.schema import Schema

HERE = Path(__file__).resolve().parent
WORKER = HERE / "mixed_worker.py"
WORKERS = 4
OPERATIONS = 25
PROPERTIES = {
    "format-version": "2",
    "write.delete.mode": "merge-on-read",
    "commit.retry.num-retries": "30",
    "commit.retry.min-wait-ms": "5",
    "commit.retry.max-wait-ms": "200",
}


def _replay(state: pa.Table, op: dict[str, object], schema: pa.Schema, iceberg: Schema) -> pa.Table:
    kind = op["kind"]
    if kind == "append":
        return pa.concat_tables([state, _rows(op["rows"], schema)])  # type: ignore[arg-type]
    if kind == "delete":
        matching = filter_table(state, str(op["where"]), iceberg)
        return state.filter(pa.compute.invert(pa.compute.is_in(state.column("id"), matching.column("id"))))
    if kind == "overwrite":
        matching = filter_table(state, str(op["where"]), iceberg)
        kept = state.filter(pa.compute.invert(pa.compute.is_in(state.column("id"), matching.column("id"))))
        return pa.concat_tables([kept, _rows(op["rows"], schema)])  # type: ignore[arg-type]
    assert kind == "compact", op
    return state


def _rows(rows: list[list[int]], schema: pa.Schema) -> pa.Table:
    return pa.table(
        {"id": [r[0] for r in rows], "grp": [r[1] for r in rows], "val": [r[2] for r in rows]}, schema=schema
    )


def _sorted(table: pa.Table) -> list[tuple[int, int, int]]:
    return sorted(zip(*(table.column(c).to_pylist() for c in ("id", "grp", "val"))))


@pytest.mark.slow
def test_four_processes_of_mixed_operations_equal_a_serial_replay(tmp_path: Path) -> None:
    sys.path.insert(0, str(HERE))
    from mixed_worker import SCHEMA

    warehouse = tmp_path / "warehouse"
    catalog_args = {"type": "hadoop", "warehouse": str(warehouse)}
    catalog = icefloe.load_catalog("mixed", **catalog_args)
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", SCHEMA, partition_by=["grp"], properties=PROPERTIES)
    go = tmp_path / "go"
    procs = []
    for worker in range(WORKERS):
        args = {
            "catalog": catalog_args,
            "name": "mixed",
            "table": "db.t",
            "worker": worker + 1,
            "operations": OPERATIONS,
            "seed": worker,
            "go": str(go),
        }
        procs.append(
            subprocess.Popen(
                [sys.executable, str(WORKER), json.dumps(args)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    go.touch()
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=540)
        assert proc.returncode == 0, err[-4000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    committed = sum(r["committed"] for r in results)
    assert committed > 0

    table.refresh()
    head = table.current_snapshot()
    assert head is not None
    history = list(reversed(table.metadata.ancestors_of(head.snapshot_id)))
    # Every commit of the workers is in the main history (none was lost or applied twice).
    ops = [s for s in history if "test.op" in s.summary]
    assert len(ops) == committed
    state = SCHEMA.empty_table()
    for snapshot in history:
        op = snapshot.summary.get("test.op")
        if op is None:
            continue
        state = _replay(state, json.loads(op), SCHEMA, table.schema())
        actual = table.new_scan().use_snapshot(snapshot.snapshot_id).to_arrow()
        assert _sorted(actual) == _sorted(state), (snapshot.snapshot_id, op)
    kinds = {json.loads(s.summary["test.op"])["kind"] for s in ops}
    assert {"append", "delete"} <= kinds
