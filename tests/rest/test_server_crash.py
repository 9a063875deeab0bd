"""A multi-table commit interrupted at any point leaves both tables old or both new: the server
(``python -m icefloe.rest``, two workers, SQLite catalog) is killed with SIGKILL while a client
commits to two tables in a tight loop, then restarted; both tables always agree."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path

import httpx
import pyarrow as pa
import pytest

import icefloe
from support.rest import ServerProcess

pytestmark = pytest.mark.slow


def _commit_loop(url: str, stop: threading.Event, counter: list[int]) -> None:
    with httpx.Client(base_url=url, timeout=10) as client:
        while not stop.is_set():
            counter[0] += 1
            gen = str(counter[0])
            change = [
                {
                    "identifier": {"namespace": ["db"], "name": name},
                    "requirements": [],
                    "updates": [{"action": "set-properties", "updates": {"gen": gen}}],
                }
                for name in ("a", "b")
            ]
            try:
                client.post("/v1/transactions/commit", json={"table-changes": change})
            except httpx.TransportError:
                return  # the server died under us


def test_killing_the_server_mid_commit_never_splits_a_multi_table_commit(tmp_path: Path) -> None:
    warehouse = tmp_path / "wh"
    setup = icefloe.load_catalog("served", type="sql", warehouse=str(warehouse))
    setup.create_namespace("db")
    for name in ("a", "b"):
        setup.create_table(f"db.{name}", pa.schema([("id", pa.int64())]))
    setup.close()
    rng = random.Random(13)
    for workers in (2, 1, 1):  # a whole server of two workers, then single ones (faster to start)
        with ServerProcess(warehouse, workers=workers) as server:
            stop, counter = threading.Event(), [0]
            writer = threading.Thread(target=_commit_loop, args=(server.url, stop, counter))
            writer.start()
            time.sleep(0.3 + rng.random() * 0.7)
            server.kill()
            stop.set()
            writer.join(timeout=30)
            assert counter[0] > 1  # commits were under way when it died
        # Read what the dead server left, straight from the catalog database.
        catalog = icefloe.load_catalog("served", type="sql", warehouse=str(warehouse))
        gens = {catalog.load_table(f"db.{n}").properties().get("gen") for n in ("a", "b")}
        catalog.close()
        assert len(gens) == 1 and None not in gens, gens
