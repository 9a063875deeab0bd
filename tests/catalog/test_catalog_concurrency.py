"""Two processes commit to one table at once: every commit lands, none is lost."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from catalog_helpers import new_metadata

import icefloe
from icefloe.backends import load_catalog_backend
from icefloe.io import local_path

HERE = Path(__file__).resolve().parent
WORKER = HERE / "commit_worker.py"
COMMITS = 50


def _start_worker(worker: str, arguments: dict[str, object]) -> subprocess.Popen[str]:
    source_root = Path(icefloe.__file__).parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(source_root), str(HERE)])}
    return subprocess.Popen(
        [sys.executable, str(WORKER), json.dumps({**arguments, "worker": worker})],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sql", pytest.param("sql-postgres", marks=pytest.mark.postgres), "hadoop"])
def test_two_processes_commit_without_losing_updates(
    kind: str, warehouse: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    name = "concurrency"
    properties = {"type": kind, "warehouse": str(warehouse)}
    if kind == "sql-postgres":
        name = f"concurrency_{uuid.uuid4().hex[:12]}"
        properties.update(type="sql", uri=request.getfixturevalue("postgres_url"))
    with load_catalog_backend(name, **properties) as backend:
        backend.create_namespace("db")
        created = backend.create_table(
            "db.t", new_metadata(backend, "db.t", **{"write.metadata.previous-versions-max": "1000"})
        )
        go = tmp_path / "go"
        arguments = {"name": name, "catalog": properties, "table": "db.t", "commits": COMMITS, "go": str(go)}
        workers = [_start_worker(worker, arguments) for worker in ("w0", "w1")]
        go.touch()
        results = [process.communicate(timeout=600) for process in workers]
        for process, (_, err) in zip(workers, results):
            assert process.returncode == 0, err
        retries = sum(json.loads(out)["retries"] for out, _ in results)

        final = backend.load_table("db.t")
    expected = {f"w{w}-{i}": str(i) for w in range(2) for i in range(COMMITS)}
    assert {k: v for k, v in final.metadata.properties.items() if k in expected} == expected
    # One chain of 101 metadata files: the log holds the 100 before the current one.
    log = [e.metadata_file for e in final.metadata.metadata_log]
    assert len(log) == 2 * COMMITS
    assert log[0] == created.metadata_location
    assert len(set(log) | {final.metadata_location}) == 2 * COMMITS + 1
    # Losing attempts left no metadata file behind.
    metadata_dir = Path(local_path(final.metadata_location)).parent
    on_disk = sorted(p.name for p in metadata_dir.iterdir() if p.name.endswith(".metadata.json"))
    assert len(on_disk) == 2 * COMMITS + 1, f"{retries} retries"
