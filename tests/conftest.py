"""Fixtures shared by all of icefloe's tests (helpers that are not fixtures: ``tests/support/``).
Keep this light: it loads for every test run.

- ``warehouse``: an empty folder for tables, fresh per test.
- ``postgres_url``: a throwaway PostgreSQL server on 127.0.0.1 for the whole session (a SQLAlchemy
  URL). Without PostgreSQL binaries the tests using it are skipped, or fail when ``CI`` or
  ``ICEFLOE_REQUIRE_POSTGRES=1`` is set. Binaries are looked for in ``$ICEFLOE_PG_BINDIR``, under
  ``/usr/lib/postgresql/*/bin`` and on ``PATH``.

- ``java_engine`` / ``pyiceberg_engine`` / ``duckdb_engine``: the reference engines of
  ``tests/interop/engines.py``, one server per engine per test module (the first use builds the
  engine's environment, minutes; cached in ``~/.cache/icefloe/engines``).

- ``spark``: one Spark session for the whole test run (starting one costs seconds), bound to
  127.0.0.1. ``ICEFLOE_SPARK_MASTER`` picks the master: ``local[2]`` by default,
  ``local-cluster[2,1,1024]`` for separate executor JVMs and Python workers;
  ``ICEFLOE_SPARK_CONNECT=1`` makes it a Spark Connect session (a local Connect server).

- ``moto_endpoint``: a real S3 API (moto's server) on 127.0.0.1, one process for the session,
  started on first use; ``s3_properties``: Iceberg properties pointing at it, with a fresh
  bucket per test (``s3_properties["test.bucket"]``).

Markers, set here from where a test lives and what it uses, so that ``./dev test --fast``
(``-m "not spark and not interop and not slow"``) runs what needs neither Java nor Spark:

- ``interop``: the reference engines (``tests/interop``, or an engine fixture);
- ``spark``: a Spark session (``tests/spark``, ``test_spark_*`` modules, or the ``spark`` fixture);
- ``postgres``: the ``postgres_url`` server;
- ``slow``: set by the test itself (multi-process races, the demo, long equivalence checks).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from support.servers import free_port, serve

if TYPE_CHECKING:
    from interop.engines import DuckDBEngine, JavaEngine, PyIcebergEngine

_ENGINE_FIXTURES = {"java_engine", "pyiceberg_engine", "duckdb_engine"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        path = Path(str(item.fspath))
        if "postgres_url" in names:
            item.add_marker(pytest.mark.postgres)
        if names & _ENGINE_FIXTURES or "interop" in path.parts:
            item.add_marker(pytest.mark.interop)
        if "spark" in names or "spark" in path.parts or path.name.startswith("test_spark_"):
            item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    from icefloe.spark import local_session  # PySpark loads only for the tests that use Spark

    session = local_session(
        os.environ.get("ICEFLOE_SPARK_MASTER", "local[2]"),
        app_name="icefloe-tests",
        connect=os.environ.get("ICEFLOE_SPARK_CONNECT", "") == "1",
    )
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    """An empty warehouse folder, fresh per test."""
    path = tmp_path / "warehouse"
    path.mkdir()
    return path


# ----------------------------------------------------------------------------------------------
# Reference engines (imported when first used: most test runs need none)


def _engine(kind: str, tmp_path_factory: pytest.TempPathFactory, expected: type[Any]) -> Iterator[Any]:
    from interop.engines import start_engine

    engine = start_engine(kind, tmp_path_factory.mktemp(f"{kind}-engine"))
    assert isinstance(engine, expected)
    try:
        yield engine
    finally:
        engine.close()


@pytest.fixture(scope="module")
def java_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaEngine]:
    """Apache Iceberg 1.9.2 on Spark 3.5.7: ``read``, ``sql``, ``hadoop_catalog``, ``exec``."""
    from interop.engines import JavaEngine

    yield from _engine("java", tmp_path_factory, JavaEngine)


@pytest.fixture(scope="module")
def pyiceberg_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PyIcebergEngine]:
    """PyIceberg 0.12: ``read``, ``exec``."""
    from interop.engines import PyIcebergEngine

    yield from _engine("pyiceberg", tmp_path_factory, PyIcebergEngine)


@pytest.fixture(scope="module")
def duckdb_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DuckDBEngine]:
    """DuckDB 1.5.5 with its iceberg extension: ``read``, ``exec``."""
    from interop.engines import DuckDBEngine

    yield from _engine("duckdb", tmp_path_factory, DuckDBEngine)


# ----------------------------------------------------------------------------------------------
# PostgreSQL


def _postgres_required() -> bool:
    ci = os.environ.get("CI", "").strip().lower()
    return ci not in {"", "0", "false", "no"} or os.environ.get("ICEFLOE_REQUIRE_POSTGRES") == "1"


def _postgres_bindir() -> Path | None:
    candidates: list[Path] = []
    if os.environ.get("ICEFLOE_PG_BINDIR"):
        candidates.append(Path(os.environ["ICEFLOE_PG_BINDIR"]))

    def version(path: str) -> tuple[int, ...]:  # /usr/lib/postgresql/15/bin -> (15,)
        parts = Path(path).parent.name.split(".")
        return tuple(int(p) for p in parts if p.isdigit())

    candidates += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=version, reverse=True)]
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)  # the real folder, with createdb beside it
    for folder in candidates:
        if all((folder / tool).is_file() for tool in ("initdb", "pg_ctl", "postgres", "createdb")):
            return folder
    return None


class _Postgres:
    """One throwaway server: initdb into a temp folder, start, create a database; stop, delete."""

    user = "postgres"  # the system user the server runs as when we are root (initdb refuses root)
    database = "icefloe"

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.as_root = os.geteuid() == 0
        self.datadir = Path(tempfile.mkdtemp(prefix="icefloe-pg-", dir="/tmp"))
        self.port = 0
        self.started = False
        if self.as_root:
            self._ensure_system_user()
            entry = pwd.getpwnam(self.user)
            os.chown(self.datadir, entry.pw_uid, entry.pw_gid)
        self.datadir.chmod(0o700)

    def _ensure_system_user(self) -> None:
        try:
            pwd.getpwnam(self.user)
        except KeyError:
            subprocess.run(
                ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", self.user],
                check=True,
                capture_output=True,
            )

    def _run(self, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        command = list(argv)
        if self.as_root:
            command = ["runuser", "-u", self.user, "--", *command]
        proc = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, cwd=self.datadir, check=False
        )
        if proc.returncode != 0:
            raise RuntimeError(
                f"{' '.join(argv)} failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
            )
        return proc

    def start(self) -> str:
        data = self.datadir / "data"
        sockets = self.datadir  # unix sockets too live in our folder, never in /var/run
        self._run(
            str(self.bindir / "initdb"),
            "-D",
            str(data),
            "-U",
            self.user,
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--no-locale",
            "--no-sync",
        )
        error: Exception | None = None
        for _attempt in range(3):  # a port picked free may be taken by the time the server binds
            self.port = free_port()
            options = (
                f"-p {self.port} -c listen_addresses=127.0.0.1 -k {sockets} -c fsync=off "
                "-c synchronous_commit=off -c full_page_writes=off"
            )
            try:
                self._run(
                    str(self.bindir / "pg_ctl"),
                    "-D",
                    str(data),
                    "-l",
                    str(self.datadir / "server.log"),
                    "-o",
                    options,
                    "-w",
                    "-t",
                    "60",
                    "start",
                )
            except RuntimeError as exc:
                error = exc
                continue
            self.started = True
            break
        if not self.started:
            raise RuntimeError(f"PostgreSQL did not start: {error}\n{self._log_tail()}")
        createdb = self.bindir / "createdb"
        self._run(str(createdb), "-h", "127.0.0.1", "-p", str(self.port), "-U", self.user, self.database)
        return f"postgresql+psycopg://{self.user}@127.0.0.1:{self.port}/{self.database}"

    def _log_tail(self) -> str:
        with contextlib.suppress(OSError):
            return "\n".join((self.datadir / "server.log").read_text(errors="replace").splitlines()[-20:])
        return ""

    def stop(self) -> None:
        try:
            if self.started:
                self._run(
                    str(self.bindir / "pg_ctl"), "-D", str(self.datadir / "data"), "-m", "fast", "-w", "stop"
                )
        finally:
            shutil.rmtree(self.datadir, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A SQLAlchemy URL (``postgresql+psycopg://...``) of a fresh database on a throwaway server."""
    bindir = _postgres_bindir()
    if bindir is None:
        message = "PostgreSQL server binaries (initdb, pg_ctl, postgres) not found; install e.g. `postgresql`"
        if _postgres_required():
            pytest.fail(message + " (required: CI or ICEFLOE_REQUIRE_POSTGRES=1 is set)")
        pytest.skip(message)
    server = _Postgres(bindir)
    try:
        url = server.start()
    except Exception:
        server.stop()
        raise
    try:
        yield url
    finally:
        server.stop()


# ---- S3 (moto) ----------------------------------------------------------------------------------

S3_ACCESS_KEY = "testing-key"
S3_SECRET_KEY = "testing-secret"
S3_REGION = "us-east-1"


def _moto_server_binary() -> str | None:
    beside_python = Path(sys.executable).parent / "moto_server"
    if beside_python.is_file():
        return str(beside_python)
    return shutil.which("moto_server")


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    """``http://127.0.0.1:<port>`` of a moto S3 server started for this session."""
    binary = _moto_server_binary()
    if binary is None:
        pytest.skip("moto_server not installed (pip install 'moto[server]')")
    port = free_port()
    with serve([binary, "-H", "127.0.0.1", "-p", str(port)], port, "moto_server"):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture
def s3_properties(moto_endpoint: str) -> dict[str, str]:
    """Iceberg S3 properties for the moto server, and a new empty bucket."""
    import botocore.session  # only S3 tests need it

    bucket = f"icefloe-{uuid.uuid4().hex[:12]}"
    client = botocore.session.get_session().create_client(
        "s3",
        endpoint_url=moto_endpoint,
        region_name=S3_REGION,
        aws_access_key_id=S3_ACCESS_KEY,
        aws_secret_access_key=S3_SECRET_KEY,
    )
    client.create_bucket(Bucket=bucket)
    return {
        "s3.endpoint": moto_endpoint,
        "s3.access-key-id": S3_ACCESS_KEY,
        "s3.secret-access-key": S3_SECRET_KEY,
        "s3.region": S3_REGION,
        "s3.path-style-access": "true",
        "test.bucket": bucket,
    }


# ---- GCS (gcp-storage-emulator) and ADLS (Azurite) ------------------------------------------------

# Azurite's well-known development account (public, in Azure's documentation).
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
# npm installs Azurite here (outside the repository), on first use or by .ci/run.
NODE_CACHE = Path(os.environ.get("ICEFLOE_NODE_CACHE", Path.home() / ".cache" / "icefloe" / "node"))


@pytest.fixture(scope="session")
def gcs_endpoint() -> Iterator[str]:
    """``http://127.0.0.1:<port>`` of a gcp-storage-emulator (in memory) for this session."""
    binary = Path(sys.executable).parent / "gcp-storage-emulator"
    if not binary.is_file():
        pytest.skip("gcp-storage-emulator not installed (pip install gcp-storage-emulator)")
    port = free_port()
    argv = [str(binary), "start", "-H", "127.0.0.1", "--port", str(port), "--in-memory", "-q"]
    with serve(argv, port, "gcp-storage-emulator"):
        yield f"http://127.0.0.1:{port}"


def _azurite_binary() -> Path:
    binary = NODE_CACHE / "node_modules" / ".bin" / "azurite-blob"
    if binary.is_file():
        return binary
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("Azurite is not installed and npm is not on PATH: install Node.js, then rerun")
    NODE_CACHE.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--prefix", str(NODE_CACHE), "azurite@3"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0 or not binary.is_file():
        raise RuntimeError(f"npm could not install Azurite into {NODE_CACHE}:\n{done.stderr[-2000:]}")
    return binary


@pytest.fixture(scope="session")
def azurite_endpoint() -> Iterator[str]:
    """``http://127.0.0.1:<port>`` of Azurite's blob service (in memory) for this session."""
    binary = _azurite_binary()
    port = free_port()
    argv = [str(binary), "--blobHost", "127.0.0.1", "--blobPort", str(port), "--inMemoryPersistence"]
    argv += ["--skipApiVersionCheck", "--loose", "--silent", "--disableTelemetry"]
    with serve(argv, port, "Azurite"):
        yield f"http://127.0.0.1:{port}"
