"""A quiet Spark session for the demo.

Spark's JVM talks on stderr before any setting can reach it: the JDK's note about incubator
modules, log4j's "Setting default log level" banner, WARN lines of its own. The demo starts
the JVM with a log4j2 configuration that logs errors only (the demo's own lines tell what
happens), with the console progress bar off, and drops the JVM's known start-up notes from
its stderr; everything else the JVM prints still reaches the demo's stderr.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pyspark.sql import SparkSession

from icefloe._demo.output import DemoError
from icefloe.spark import local_session

__all__ = ["quiet_session"]

_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n%ex
# Spark prints "Setting default log level" when the shell's logger level differs from the root's.
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = error
"""
_NOISE = (
    "WARNING: Using incubator modules",
    'Setting default log level to "',
    "To adjust logging level use sc.setLogLevel",
)


@contextmanager
def quiet_session(master: str, *, connect: bool = False) -> Iterator[tuple[SparkSession, bool]]:
    """A Spark session on ``master`` bound to 127.0.0.1 (``icefloe.spark.local_session``), and
    whether it was started here; a session started here is stopped at the end. With
    ``connect``, a Spark Connect session (a local Connect server on ``master``).

    An active session (a notebook's, a test suite's) is used as it is: its master and logging
    stay its own.

    Raises:
        DemoError: Spark did not start (no Java, a bad master): the JVM's reason in one line.
    """
    active = SparkSession.getActiveSession()
    if active is not None:
        yield active, False
        return
    with tempfile.TemporaryDirectory(prefix="icefloe-demo-") as folder:
        config = Path(folder, "log4j2.properties")
        config.write_text(_LOG4J2)
        settings = {
            "spark.ui.showConsoleProgress": "false",
            "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={config.as_uri()}",
            "spark.executor.extraJavaOptions": f"-Dlog4j2.configurationFile={config.as_uri()}",
        }
        stderr = _JvmStderr()
        try:
            with stderr:
                spark = local_session(master, app_name="icefloe-demo", config=settings, connect=connect)
        except Exception as exc:  # PySpark's errors are of many kinds; the JVM said why
            raise DemoError(
                f"cannot start Spark on {master}: {stderr.reason() or _first_line(exc)}"
            ) from None
        stderr.release()
        try:
            yield spark, True
        finally:
            spark.stop()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class _JvmStderr:
    """While the block runs, file descriptor 2 is a pipe; the processes started meanwhile (the
    JVM) keep it, and a thread reads what they write. Until :meth:`release` the lines are held
    (a failed start explains itself through :meth:`reason`); then they, and every later line,
    go to the real stderr, minus _NOISE."""

    def __init__(self) -> None:
        self._held: list[bytes] = []
        self._holding = True
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._real = -1

    def __enter__(self) -> _JvmStderr:
        sys.stderr.flush()
        self._real = os.dup(2)
        read_end, write_end = os.pipe()
        os.dup2(write_end, 2)
        os.close(write_end)
        self._thread = threading.Thread(target=self._forward, args=(read_end,), daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        sys.stderr.flush()
        os.dup2(self._real, 2)  # the pipe's last writers are now the processes started in the block

    def _forward(self, read_end: int) -> None:
        with os.fdopen(read_end, "rb") as source, os.fdopen(self._real, "wb", buffering=0) as target:
            for line in source:
                if line.decode(errors="replace").startswith(_NOISE):
                    continue
                with self._lock:
                    if self._holding:
                        self._held.append(line)
                        continue
                target.write(line)

    def release(self) -> None:
        """Stop holding: write the held lines to stderr, and every later line as it comes."""
        with self._lock:
            self._holding = False
            held, self._held = self._held, []
        for line in held:
            os.write(2, line)

    def reason(self) -> str | None:
        """Why the JVM did not start: its exception's message, else the first line it printed
        (it has exited, so its output ends soon)."""
        if self._thread is not None:
            self._thread.join(timeout=5)
        with self._lock:
            lines = [b.decode(errors="replace").strip() for b in self._held]
        lines = [line for line in lines if line and not line.startswith("at ")]
        for line in lines:
            match = re.search(r"(?:Exception|Error)(?: in thread \S+)?[^:\s]*: (.+)$", line)
            if match:
                return match.group(1)
        return lines[0] if lines else None  # a launcher script's first complaint is the cause
