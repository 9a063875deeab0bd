"""REST catalog servers for tests: icefloe's own (in a thread, or as ``python -m icefloe.rest`` in
a subprocess) and the project's Java server (``tests/interop/rest_java.py``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import uvicorn

ROOT = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def serve_in_thread(application: Any) -> Iterator[str]:
    """Run an ASGI application with uvicorn on 127.0.0.1 in a thread; yields its URL."""
    config = uvicorn.Config(application, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="rest-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the REST server did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class ServerProcess:
    """``python -m icefloe.rest`` over a SQL catalog in ``warehouse``, in its own process group.

    Args:
        warehouse: the catalog's warehouse (SQLite catalog.db inside).
        workers: uvicorn worker processes.
        auth_file: a JSON file of principals, or None.
        extra_env: more environment variables.
        via_cli: start it as ``icefloe serve`` (the command line) instead.
        options: more command-line options (``--allowed-location P``).
    """

    def __init__(
        self,
        warehouse: Path,
        *,
        workers: int = 1,
        auth_file: Path | None = None,
        extra_env: Mapping[str, str] | None = None,
        log: Path | None = None,
        via_cli: bool = False,
        options: tuple[str, ...] = (),
    ):
        self.warehouse = warehouse
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT / "src"),
            "ICEFLOE_CATALOG__SERVED__TYPE": "sql",
            "ICEFLOE_CATALOG__SERVED__WAREHOUSE": str(warehouse),
            **(extra_env or {}),
        }
        program = ["icefloe.cli", "serve"] if via_cli else ["icefloe.rest"]
        args = [sys.executable, "-m", *program, "--catalog", "served", "--port", str(self.port)]
        args += ["--workers", str(workers), *options]
        if auth_file is not None:
            args += ["--auth", str(auth_file)]
        self.log = log or warehouse.parent / f"rest-server-{self.port}.log"
        self._log = open(self.log, "w")  # noqa: SIM115 (closed in stop())
        self.process = subprocess.Popen(
            args, env=env, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.wait_ready()

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the REST server exited: {self.log.read_text()[-3000:]}")
            try:
                if httpx.get(f"{self.url}/v1/config", timeout=2).status_code in (200, 401):
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"the REST server did not start: {self.log.read_text()[-3000:]}")

    def kill(self) -> None:
        """SIGKILL the whole server (every worker), as a crash would."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()
        self._log.close()

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class FaultyProxy:
    """An ASGI wrapper around a REST server that misbehaves on purpose, as networks do.

    - ``lose_answers(n, match)``: the next ``n`` requests whose ``"METHOD path"`` contains
      ``match`` run, but their answer is replaced by a 502 (the response was lost);
    - ``drop_requests(n, match)``: they do not run at all and get a 502;
    - ``busy(n)``: the next ``n`` requests get 503 with ``Retry-After: 0``;
    - ``config_without(*keys_or_endpoints)``: ``/v1/config`` loses endpoints or keys.

    ``seen`` records ``(method, path, idempotency key)`` of every request.
    """

    def __init__(self, application: Any):
        self.application = application
        self.seen: list[tuple[str, str, str | None]] = []
        self.revalidated = 0  # requests that carried If-None-Match
        self._lose: list[Any] = [0, ""]
        self._drop: list[Any] = [0, ""]
        self._busy = 0
        self._config_without: set[str] = set()

    def lose_answers(self, n: int, match: str) -> None:
        self._lose = [n, match]

    def drop_requests(self, n: int, match: str) -> None:
        self._drop = [n, match]

    def busy(self, n: int) -> None:
        self._busy = n

    def config_without(self, *items: str) -> None:
        self._config_without = set(items)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.application(scope, receive, send)
            return
        headers = dict(scope["headers"])
        key = headers.get(b"idempotency-key")
        name = f"{scope['method']} {scope['path']}"
        self.seen.append((scope["method"], scope["path"], key.decode() if key else None))
        self.revalidated += b"if-none-match" in headers
        if self._busy > 0:
            self._busy -= 1
            await _answer(
                send,
                503,
                b'{"error": {"message": "busy", "type": "ServiceUnavailableException", "code": 503}}',
                [(b"retry-after", b"0")],
            )
            return
        for fault, runs in ((self._drop, False), (self._lose, True)):
            if fault[0] > 0 and fault[1] in name:
                fault[0] -= 1
                if runs:
                    await self.application(scope, receive, _discard)
                await _answer(send, 502, b"bad gateway")
                return
        if scope["path"] == "/v1/config" and self._config_without:
            await self.application(scope, receive, self._filtered(send))
            return
        await self.application(scope, receive, send)

    def _filtered(self, send: Any) -> Any:
        async def wrapped(message: Any) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [(k, v) for k, v in message["headers"] if k != b"content-length"]
            if message["type"] == "http.response.body":
                config = json.loads(message["body"])
                config["endpoints"] = [e for e in config["endpoints"] if e not in self._config_without]
                for key in self._config_without:
                    config.pop(key, None)
                message["body"] = json.dumps(config).encode()
            await send(message)

        return wrapped


async def _discard(message: Any) -> None:
    return None


async def _answer(
    send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), *(headers or [])],
        }
    )
    await send({"type": "http.response.body", "body": body})
