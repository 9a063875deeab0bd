"""A separate process appending to one table: ``python append_worker.py '<json>'``.

Arguments (JSON):
    catalog: keyword arguments for ``icefloe.load_catalog`` (``type``, ``uri``, ``warehouse``...).
    name: the catalog's name.
    table: the table identifier.
    worker: this worker's number; its rows have ids ``worker * 1_000_000 + append * 1000 + k``.
    appends: how many appends to commit.
    rows: rows per append.
    ready: a file this worker creates once it has loaded the table.
    go: a file to wait for before the first append, so that workers start together.

Each append is ``table.refresh()`` then ``table.append(batch)``, as a user would write it:
retrying conflicts is left to the table's ``commit.retry.*`` properties. Any exception ends the
process with a traceback and a non-zero exit. On success it prints one JSON line:
``{"retries": n, "snapshots": [ids...], "seconds": s}``, where ``retries`` counts the retry
records icefloe logs (``icefloe.table.transaction`` at INFO).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time

import pyarrow as pa

import icefloe


class _RetryCounter(logging.Handler):
    """Counts the "commit failed; retry" records of the transaction's retry loop."""

    def __init__(self) -> None:
        super().__init__(level=logging.INFO)
        self.retries = 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno == logging.INFO and "; retry " in record.getMessage():
            self.retries += 1


def _wait_for(path: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} did not appear within {timeout}s")
        time.sleep(0.002)


def main(argv: list[str]) -> int:
    args = json.loads(argv[1])
    counter = _RetryCounter()
    logger = logging.getLogger("icefloe.table.transaction")
    logger.addHandler(counter)
    logger.setLevel(logging.INFO)

    catalog = icefloe.load_catalog(args["name"], **args["catalog"])
    table = catalog.load_table(args["table"])
    worker = int(args["worker"])
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("worker", pa.int32())])
    batches = [
        pa.table(
            {
                "id": pa.array(
                    [worker * 1_000_000 + n * 1000 + k for k in range(args["rows"])], type=pa.int64()
                ),
                "worker": pa.array([worker] * args["rows"], type=pa.int32()),
            },
            schema=schema,
        )
        for n in range(args["appends"])
    ]
    with open(args["ready"], "w"):
        pass
    _wait_for(args["go"], timeout=60)

    started = time.monotonic()
    snapshots = []
    for batch in batches:
        table.refresh()
        snapshot = table.append(batch)
        assert snapshot is not None
        snapshots.append(snapshot.snapshot_id)
    print(
        json.dumps(
            {"retries": counter.retries, "snapshots": snapshots, "seconds": time.monotonic() - started}
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
