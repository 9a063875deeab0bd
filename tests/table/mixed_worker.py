"""A separate process running random mixed operations on one table:
``python mixed_worker.py '<json>'``.

Arguments (JSON): ``catalog`` (load_catalog keyword arguments), ``name``, ``table``,
``worker`` (its number: its rows have ids ``worker * 1_000_000 + k``), ``operations``,
``seed``, ``go`` (a file to wait for, so that the workers start together).

Operations, each committed with a ``test.op`` summary property describing it for the serial
replay of ``test_concurrent_writers.py``:

- ``append``: a few rows;
- ``delete``: ``table.delete(where)`` (merge-on-read: position deletes or deletion vectors);
- ``overwrite``: ``table.overwrite(rows, where)`` of one group;
- ``compact``: ``new_rewrite()`` of one group's data files into one file, validated from the
  snapshot it read.

A ValidationException is a conflict the operation lost: counted, not an error. Anything else
ends the process with a traceback. Prints ``{"committed": n, "conflicts": n}``.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time

import pyarrow as pa

import icefloe
from icefloe.errors import ValidationException
from icefloe.write import write_data_files

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("grp", pa.int32(), nullable=False),
        pa.field("val", pa.int64(), nullable=False),
    ]
)
GROUPS = 4


def batch(ids: list[int], rng: random.Random, grp: int | None = None) -> pa.Table:
    return pa.table(
        {
            "id": ids,
            "grp": [grp if grp is not None else rng.randrange(GROUPS) for _ in ids],
            "val": [rng.randrange(100) for _ in ids],
        },
        schema=SCHEMA,
    )


def rows_json(data: pa.Table) -> list[list[int]]:
    return [[r["id"], r["grp"], r["val"]] for r in data.to_pylist()]


def main(args: dict[str, object]) -> dict[str, int]:
    rng = random.Random(int(args["seed"]))  # type: ignore[arg-type]
    catalog = icefloe.load_catalog(str(args["name"]), **args["catalog"])  # type: ignore[arg-type]
    table = catalog.load_table(str(args["table"]))
    next_id = int(args["worker"]) * 1_000_000  # type: ignore[arg-type]
    deadline = time.monotonic() + 60
    while not os.path.exists(str(args["go"])):
        if time.monotonic() > deadline:
            raise TimeoutError("no go")
        time.sleep(0.002)
    committed = conflicts = 0
    for _ in range(int(args["operations"])):  # type: ignore[arg-type]
        table.refresh()
        kind = rng.choice(["append", "append", "delete", "overwrite", "compact"])
        grp = rng.randrange(GROUPS)
        try:
            if kind == "append":
                data = batch(list(range(next_id, next_id + rng.randint(1, 5))), rng)
                next_id += data.num_rows
                op = {"kind": "append", "rows": rows_json(data)}
                table.append(data, snapshot_properties={"test.op": json.dumps(op)})
            elif kind == "delete":
                where = f"grp = {grp} AND val < {rng.randrange(100)}"
                op = {"kind": "delete", "where": where}
                if table.delete(where, snapshot_properties={"test.op": json.dumps(op)}) is None:
                    continue
            elif kind == "overwrite":
                data = batch(list(range(next_id, next_id + 2)), rng, grp)
                next_id += 2
                where = f"grp = {grp}"
                op = {"kind": "overwrite", "where": where, "rows": rows_json(data)}
                table.overwrite(data, where, snapshot_properties={"test.op": json.dumps(op)})
            else:
                snapshot = table.current_snapshot()
                if snapshot is None:
                    continue
                scan = table.new_scan().use_snapshot(snapshot.snapshot_id).filter(f"grp = {grp}")
                tasks = scan.plan_files()
                if len(tasks) < 2:
                    continue
                live = scan.to_arrow()
                metadata = table.metadata
                new_files = (
                    write_data_files(
                        table.io(),
                        table_location=metadata.location,
                        properties=metadata.properties,
                        schema=metadata.schema(),
                        spec=metadata.spec(),
                        data=live,
                    )
                    if live.num_rows
                    else []
                )
                rewrite = table.new_rewrite().validate_from_snapshot(snapshot.snapshot_id)
                rewrite.delete_on_failure([f.file_path for f in new_files])
                rewrite.rewrite_files([t.file for t in tasks], list(new_files))
                rewrite.set("test.op", json.dumps({"kind": "compact"}))
                rewrite.commit()
            committed += 1
        except ValidationException:
            conflicts += 1
    return {"committed": committed, "conflicts": conflicts}


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))))
