"""Idempotency keys (REST spec 1.11): a mutation retried with the same ``Idempotency-Key``
gets the answer of its first execution instead of running again.

The first request with a key claims it; its final answer is stored when it is a 2xx or a 4xx
(a 409 included), never a 5xx (the spec: a 5xx releases the key, so a retry runs again). A
duplicate that arrives while the first still runs waits for it. A key reused for another
method or path is refused with 422. Keys live for the advertised lifetime (``PT30M``).

Two stores with one interface: in process memory (one worker), or a SQLite file in the
server's state folder, which every worker process of one server shares.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from icefloe.rest.errors import HttpProblem

__all__ = ["IdempotencyStore", "MemoryIdempotencyStore", "Replay", "SqliteIdempotencyStore"]

LIFETIME_SECONDS = 30 * 60
LIFETIME_ISO = "PT30M"
_WAIT_SECONDS = 30.0


@dataclass(frozen=True, slots=True)
class Replay:
    """A stored answer."""

    status: int
    body: bytes


class IdempotencyStore:
    def claim(self, key: str, fingerprint: str) -> Replay | None:
        """None: the caller runs the request (then calls ``finish``); else the stored answer.

        Raises:
            HttpProblem: 422 (the key was used for another request), 503 (the first request
                with this key is still running after a long wait).
        """
        raise NotImplementedError

    def finish(self, key: str, status: int, body: bytes) -> None:
        """Store the final answer (2xx, 4xx) or release the key (5xx)."""
        raise NotImplementedError


def _mismatch(key: str) -> HttpProblem:
    return HttpProblem(
        422, "UnprocessableEntityException", f"Idempotency-Key {key} was used for another request"
    )


def _still_running(key: str) -> HttpProblem:
    return HttpProblem(
        503, "ServiceUnavailableException", f"the request with Idempotency-Key {key} is still running"
    )


class MemoryIdempotencyStore(IdempotencyStore):
    def __init__(self) -> None:
        self._entries: dict[str, tuple[str, float, Replay | None]] = {}
        self._changed = threading.Condition()

    def claim(self, key: str, fingerprint: str) -> Replay | None:
        deadline = time.monotonic() + _WAIT_SECONDS
        with self._changed:
            now = time.time()
            for old in [
                k for k, (_, created, _) in self._entries.items() if created < now - LIFETIME_SECONDS
            ]:
                del self._entries[old]
            while True:
                entry = self._entries.get(key)
                if entry is None:
                    self._entries[key] = (fingerprint, now, None)
                    return None
                if entry[0] != fingerprint:
                    raise _mismatch(key)
                if entry[2] is not None:
                    return entry[2]
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _still_running(key)
                self._changed.wait(left)

    def finish(self, key: str, status: int, body: bytes) -> None:
        with self._changed:
            entry = self._entries.get(key)
            if entry is not None:
                if status >= 500:
                    del self._entries[key]
                else:
                    self._entries[key] = (entry[0], entry[1], Replay(status, body))
            self._changed.notify_all()


class SqliteIdempotencyStore(IdempotencyStore):
    """Keys in a SQLite file, shared by the worker processes of one server."""

    def __init__(self, path: Path):
        self._path = str(path)
        self._local = threading.local()
        with self._connect() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS idempotency (key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, "
                "created REAL NOT NULL, status INTEGER, body BLOB)"
            )

    def _connect(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self._path, timeout=30, isolation_level=None)
            conn.execute("PRAGMA journal_mode = WAL")
            self._local.conn = conn
        return conn

    def claim(self, key: str, fingerprint: str) -> Replay | None:
        conn = self._connect()
        deadline = time.monotonic() + _WAIT_SECONDS
        while True:
            now = time.time()
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute("DELETE FROM idempotency WHERE created < ?", (now - LIFETIME_SECONDS,))
                row = conn.execute(
                    "SELECT fingerprint, status, body FROM idempotency WHERE key = ?", (key,)
                ).fetchone()
                if row is None:
                    conn.execute(
                        "INSERT INTO idempotency (key, fingerprint, created) VALUES (?, ?, ?)",
                        (key, fingerprint, now),
                    )
            finally:
                conn.execute("COMMIT")
            if row is None:
                return None
            if row[0] != fingerprint:
                raise _mismatch(key)
            if row[1] is not None:
                return Replay(int(row[1]), bytes(row[2] or b""))
            if time.monotonic() > deadline:
                raise _still_running(key)
            time.sleep(0.02)

    def finish(self, key: str, status: int, body: bytes) -> None:
        conn = self._connect()
        if status >= 500:
            conn.execute("DELETE FROM idempotency WHERE key = ?", (key,))
        else:
            conn.execute("UPDATE idempotency SET status = ?, body = ? WHERE key = ?", (status, body, key))
