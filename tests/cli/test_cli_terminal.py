"""The command line on a real terminal (tmux): Rich tables and the progress bar render.

tmux runs ``python -m icefloe.cli`` in a detached 160x50 window on a socket of this test's own;
the screen is read with ``capture-pane``. (``.ci/run`` installs tmux from Debian.)
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pytest

import icefloe

pytestmark = pytest.mark.slow

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("g", pa.string())])
SRC = Path(__file__).resolve().parents[2] / "src"


def _tmux() -> str:
    found = shutil.which("tmux")
    if found is None:
        if os.environ.get("ICEFLOE_REQUIRE_TMUX") == "1" or os.environ.get("CI"):
            pytest.fail("tmux is required (CI or ICEFLOE_REQUIRE_TMUX=1) but not installed")
        pytest.skip("tmux is not installed")
    return found


def _screen(tmux: list[str], session: str, until: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        text = subprocess.run(
            [*tmux, "capture-pane", "-p", "-J", "-t", session], capture_output=True, text=True, check=True
        ).stdout
        if until in text:
            return text
        time.sleep(0.2)
    raise AssertionError(f"'{until}' did not appear on the terminal:\n{text}")


def test_rich_tables_and_progress_bar(tmp_path: Path) -> None:
    tmux = [_tmux(), "-L", f"icefloe-test-{uuid.uuid4().hex[:8]}"]
    catalog = icefloe.load_catalog(
        "term", type="sql", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path)
    )
    catalog.create_namespace("db")
    table = catalog.create_table("db.events", SCHEMA, partition_by=["g"])
    for i in range(6):
        table.append(pa.table({"id": list(range(i * 10, i * 10 + 10)), "g": ["a", "b"] * 5}, schema=SCHEMA))
    cli = shlex.join(
        [
            *(sys.executable, "-m", "icefloe.cli", "-c", "term", "-p", "type=sql"),
            *("-p", f"uri=sqlite:///{tmp_path}/c.db", "-p", f"warehouse={tmp_path}"),
        ]
    )
    script = f"{cli} files db.events -n 3; {cli} compact db.events; echo DONE; sleep 60"
    env = f"PYTHONPATH={shlex.quote(str(SRC))} COLUMNS=160 TERM=xterm-256color"
    session = "icefloe"
    subprocess.run(
        [
            *tmux,
            "new-session",
            "-d",
            "-s",
            session,
            "-x",
            "160",
            "-y",
            "50",
            f"env {env} sh -c {shlex.quote(script)}",
        ],
        check=True,
    )
    try:
        screen = _screen(tmux, session, "DONE").rstrip()
    finally:
        subprocess.run([*tmux, "kill-server"], check=False, capture_output=True)
    # A Rich table: box drawing around the header and the columns.
    assert "┏" in screen and "┃ content" in screen and "file_path" in screen, screen
    # The progress bar of compact, finished, then the summary as a two-column table.
    assert "compacting" in screen and "━" in screen, screen
    assert "rewritten_data_files_count" in screen and "12" in screen, screen
    table.refresh()
    assert table.current_snapshot().operation == "replace"
