"""The database side of SqlCatalog: engines, locking, retries.

SQLite runs in WAL mode (readers never block the writer) with a busy timeout, and every write
transaction takes the write lock up front (``BEGIN IMMEDIATE``), so that "database is locked"
comes before anything was written and a retry is safe. Other databases use their defaults
(PostgreSQL: READ COMMITTED; a conditional UPDATE waits for a concurrent one and re-checks).
"""

from __future__ import annotations

import os
import random
import time
from typing import Any

from sqlalchemy import Connection, Engine, event
from sqlalchemy import create_engine as sa_create_engine
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError

from icefloe.errors import MissingDependencyError, ValidationError

__all__ = ["backoff", "create_engine", "escape_like", "is_busy", "mark_write", "rollback_quietly"]

_WRITE_OPTION = "icefloe_write_transaction"
_SQLITE_BUSY, _SQLITE_LOCKED = 5, 6
# PostgreSQL: serialization failure, deadlock detected, lock not available.
_RETRYABLE_SQLSTATES = frozenset({"40001", "40P01", "55P03"})


def is_busy(exc: DBAPIError) -> bool:
    """Whether the database refused for a lock held by someone else (nothing was written)."""
    orig = exc.orig
    code = getattr(orig, "sqlite_errorcode", None)
    if isinstance(code, int):
        return (code & 0xFF) in (_SQLITE_BUSY, _SQLITE_LOCKED)
    return getattr(orig, "sqlstate", None) in _RETRYABLE_SQLSTATES


def escape_like(value: str) -> str:
    """``value`` as a literal LIKE prefix, with ``!`` as the escape character."""
    return value.replace("!", "!!").replace("_", "!_").replace("%", "!%")


def backoff(attempt: int) -> None:
    """Sleep before retry ``attempt`` (0-based): 20 ms doubling up to 1 s, jittered."""
    time.sleep(min(1.0, 0.02 * 2**attempt) * (0.5 + random.random()))


def mark_write(conn: Connection) -> None:
    """Make ``conn``'s next transaction a write transaction (SQLite: ``BEGIN IMMEDIATE``)."""
    conn.execution_options(**{_WRITE_OPTION: True})


def rollback_quietly(conn: Connection) -> None:
    try:
        conn.rollback()
    except Exception:
        conn.invalidate()


def _driver_url(uri: str) -> str:
    # SQLAlchemy's default PostgreSQL driver is psycopg2; icefloe uses psycopg 3.
    for prefix in ("postgresql://", "postgres://"):
        if uri.startswith(prefix):
            return "postgresql+psycopg://" + uri[len(prefix) :]
    return uri


def create_engine(catalog: str, uri: str, *, busy_timeout_ms: int) -> Engine:
    """An engine for ``uri`` (``postgresql://`` means psycopg 3), set up as described above.

    Raises:
        ValidationError: ``uri`` is not a database URL.
        MissingDependencyError: the driver is not installed.
    """
    uri = _driver_url(uri)
    try:
        url = make_url(uri)
    except ArgumentError as exc:
        raise ValidationError(f"sql catalog '{catalog}': invalid 'uri' {uri!r}: {exc}") from exc
    database = url.database or ""
    # A new SQLite file needs its folder (":memory:" and "file:" URI names are left alone).
    if (
        url.get_backend_name() == "sqlite"
        and database not in ("", ":memory:")
        and not database.startswith("file:")
    ):
        os.makedirs(os.path.dirname(os.path.abspath(database)), exist_ok=True)
    try:
        engine = sa_create_engine(url)
    except (ImportError, NoSuchModuleError) as exc:
        hint = " (pip install 'icefloe[postgres]')" if uri.startswith("postgresql") else ""
        raise MissingDependencyError(
            f"sql catalog '{catalog}' cannot load the driver for {uri!r}{hint}: {exc}"
        ) from exc
    if engine.dialect.name == "sqlite":

        def on_connect(dbapi_connection: Any, _record: Any) -> None:
            # Let SQLAlchemy's "begin" event issue BEGIN (pysqlite's own BEGIN is deferred and
            # would be emitted lazily, too late to take the write lock up front).
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            try:
                cursor.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
                cursor.execute("PRAGMA journal_mode = WAL")
            finally:
                cursor.close()

        def on_begin(connection: Connection) -> None:
            write = connection.get_execution_options().get(_WRITE_OPTION, False)
            connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

        event.listen(engine, "connect", on_connect)
        event.listen(engine, "begin", on_begin)
    return engine
