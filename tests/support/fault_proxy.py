"""A threaded HTTP proxy in front of a test server (moto) that counts requests and injects faults.

``FaultProxy(upstream)`` listens on 127.0.0.1 (a free port) and forwards every request to
``upstream``. Its ``fault`` callable sees each request (method, path with query) and answers
``None`` (forward it), ``"503"`` / ``"500"`` (answer with S3's SlowDown / InternalError body,
without forwarding) or ``"cut"`` (close the connection without answering). ``requests`` records
every request seen, faulted or not, as ``(method, path)``.
"""

from __future__ import annotations

import http.client
import random
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Literal
from urllib.parse import urlsplit

Fault = Literal["503", "500", "cut"] | None

_BODIES = {
    "503": b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>",
    "500": b"<Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>",
}
_HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "proxy-connection",
}


def random_faults(
    share: float, seed: int = 0, kinds: tuple[Fault, ...] = ("503", "500", "cut")
) -> Callable[[str, str], Fault]:
    """A ``fault`` that fails a ``share`` of requests, drawing the kind from ``kinds``."""
    rng = random.Random(seed)
    lock = threading.Lock()

    def fault(method: str, path: str) -> Fault:
        with lock:
            return rng.choice(kinds) if rng.random() < share else None

    return fault


class FaultProxy:
    """The proxy; use as a context manager, then point clients at ``endpoint``."""

    def __init__(self, upstream: str, fault: Callable[[str, str], Fault] | None = None):
        target = urlsplit(upstream)
        self.upstream = (target.hostname or "127.0.0.1", target.port or 80)
        self.fault = fault
        self.requests: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()

    def count(self, method: str | None = None) -> int:
        with self._lock:
            return sum(1 for m, _ in self.requests if method is None or m == method)

    def __enter__(self) -> FaultProxy:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:  # quiet
                pass

            def _body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    chunks = []
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                        if size == 0:
                            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                                pass
                            return b"".join(chunks)
                        chunks.append(self.rfile.read(size))
                        self.rfile.readline()
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def _forward(self) -> None:
                body = self._body()
                with proxy._lock:
                    proxy.requests.append((self.command, self.path))
                fault = proxy.fault(self.command, self.path) if proxy.fault else None
                if fault == "cut":
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if fault is not None:
                    payload = _BODIES[fault]
                    self.send_response(int(fault))
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
                if body or self.command in ("PUT", "POST"):
                    headers["Content-Length"] = str(len(body))
                upstream = http.client.HTTPConnection(*proxy.upstream, timeout=60)
                try:
                    upstream.request(self.command, self.path, body=body or None, headers=headers)
                    response = upstream.getresponse()
                    payload = response.read()
                finally:
                    upstream.close()
                self.send_response(response.status, response.reason)
                for key, value in response.getheaders():
                    if key.lower() not in _HOP_BY_HOP and key.lower() != "content-length":
                        self.send_header(key, value)
                # A HEAD answer's length is the object's, not the (empty) payload's.
                length = response.getheader("Content-Length") if self.command == "HEAD" else None
                self.send_header("Content-Length", length or str(len(payload)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward

        return Handler
