"""The project's Java REST catalog server: Iceberg 1.9.2's own ``CatalogHandlers`` over its
``JdbcCatalog`` (``_servers/rest_java/*.java``), the judge of icefloe's REST client.

It is compiled on first use against the Java engine's jars (the Iceberg Spark runtime jar has
``CatalogHandlers``, ``JdbcCatalog`` and the shaded Jackson; PySpark's jars bring Hadoop) and
Debian's SQLite JDBC driver (``libxerial-sqlite-jdbc-java`` / ``-jni``, apt-installed when missing
and running as root). The classes land in ``<engines home>/rest-java-<hash of the sources>``.

    with JavaRestServer(tmp_path / "wh") as server:
        catalog = icefloe.load_catalog("j", type="rest", uri=server.url)
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

from .engines import EngineError, engines_home, ensure_environment

__all__ = ["JavaRestServer", "compiled_classes", "iceberg_jars", "java_rest_classpath"]

SOURCES = Path(__file__).resolve().parent / "_servers" / "rest_java"
SQLITE_JAR = "/usr/share/java/xerial-sqlite-jdbc.jar"
SQLITE_PACKAGES = ("libxerial-sqlite-jdbc-java", "libxerial-sqlite-jdbc-jni")
_lock = threading.Lock()


def _sqlite_driver() -> tuple[str, str]:
    """The SQLite JDBC jar and the folder of its native library (installed when missing)."""
    native = glob.glob("/usr/lib/*/jni/libsqlitejdbc.so")
    if not (os.path.exists(SQLITE_JAR) and native):
        if os.geteuid() != 0 or shutil.which("apt-get") is None:
            raise EngineError(
                "rest-java", f"the Java REST server needs Debian's {' and '.join(SQLITE_PACKAGES)}"
            )
        subprocess.run(
            ["apt-get", "install", "-y", "-q", *SQLITE_PACKAGES],
            check=True,
            capture_output=True,
            env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
        )
        native = glob.glob("/usr/lib/*/jni/libsqlitejdbc.so")
    return SQLITE_JAR, os.path.dirname(native[0])


def iceberg_jars() -> tuple[str, str]:
    """``(the Iceberg 1.9.2 runtime jar, PySpark's jars as a classpath wildcard)`` of the Java
    engine's environment (built when missing)."""
    python = ensure_environment("java")
    site = next(Path(python).parent.parent.glob("lib/python3*/site-packages"))
    runtime = str(
        site / "snowpark_connect_deps_iceberg" / "jars" / "iceberg-spark-runtime-3.5_2.12-1.9.2.jar"
    )
    return runtime, str(site / "pyspark" / "jars" / "*")


def compiled_classes(label: str, sources_dir: Path) -> Path:
    """The classes of the project's Java sources in ``sources_dir``, compiled on first use
    against the Iceberg runtime jar and PySpark's jars, in ``<engines home>/<label>-<hash>``."""
    runtime, spark_jars = iceberg_jars()
    sources = sorted(sources_dir.glob("*.java"))
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sources) + runtime.encode()).hexdigest()[:16]
    classes = engines_home() / f"{label}-{digest}"
    with _lock:
        if not (classes / ".ready").exists():
            shutil.rmtree(classes, ignore_errors=True)
            classes.mkdir(parents=True)
            result = subprocess.run(
                [
                    "javac",
                    "-nowarn",
                    "-d",
                    str(classes),
                    "-cp",
                    f"{runtime}:{spark_jars}",
                    *map(str, sources),
                ],
                capture_output=True,
                text=True,
            )
            if result.returncode != 0:
                raise EngineError(label, f"compiling {sources_dir.name} failed:\n{result.stderr[-3000:]}")
            (classes / ".ready").write_text(digest)
    return classes


def java_rest_classpath() -> tuple[list[str], list[str]]:
    """``(classpath entries, JVM system properties)``; compiles the server when needed."""
    runtime, spark_jars = iceberg_jars()
    sqlite_jar, native = _sqlite_driver()
    classes = compiled_classes("rest-java", SOURCES)
    properties = [f"-Dorg.sqlite.lib.path={native}", "-Dorg.sqlite.lib.name=libsqlitejdbc.so"]
    return [str(classes), runtime, sqlite_jar, spark_jars], properties


class JavaRestServer:
    """One Java REST server process on 127.0.0.1 (a free port), over ``warehouse``.

    Args:
        warehouse: the catalog's folder (``java-catalog.db`` and the tables).
        options: more arguments: ``--prefix P``, ``--require-auth``, ``--token-ttl S``,
            ``--no-views``, ``--concurrent``.
        fast_start: C1-only JIT and the serial GC (starts in about a second); the benchmark
            turns it off to compare fairly.
    """

    def __init__(self, warehouse: Path, *options: str, fast_start: bool = True):
        classpath, properties = java_rest_classpath()
        flags = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"] if fast_start else []
        warehouse.mkdir(parents=True, exist_ok=True)
        self.warehouse = warehouse.resolve()
        #: The JdbcCatalog's database (catalog name "java"); icefloe's SqlCatalog can share it.
        self.database = self.warehouse / "java-catalog.db"
        self.log = warehouse.parent / f"java-rest-{os.getpid()}-{id(self)}.log"
        self._log = open(self.log, "w")  # noqa: SIM115 (closed in stop())
        self.process = subprocess.Popen(
            [
                "java",
                *flags,
                *properties,
                "-Dlog4j2.level=ERROR",
                "-cp",
                ":".join(classpath),
                "icefloe.fixture.JavaRestServer",
                str(warehouse),
                *options,
            ],
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
            start_new_session=True,
        )
        deadline = time.monotonic() + 120
        assert self.process.stdout is not None
        line = ""
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if line.startswith("listening ") or not line:
                break
        if not line.startswith("listening "):
            self.stop()
            raise EngineError(
                "rest-java", f"the Java REST server did not start:\n{self.log.read_text()[-3000:]}"
            )
        self.url = line.split()[1]

    def stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)
        if self.process.stdout is not None:
            self.process.stdout.close()
        self._log.close()

    def __enter__(self) -> JavaRestServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
