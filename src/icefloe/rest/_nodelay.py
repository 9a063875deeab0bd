"""uvicorn's HTTP protocol with ``TCP_NODELAY`` on every connection.

With several workers uvicorn hands its workers a listening socket created without a protocol
number, and asyncio then leaves Nagle's algorithm on for accepted connections: on a kept-alive
connection every answer waits for the client's delayed ACK (about 40 ms). Setting the option
per connection keeps answers immediate in every mode. Named by import string in ``serve.py``
(``http="icefloe.rest._nodelay:NoDelayProtocol"``), so uvicorn loads it in each worker.
"""

from __future__ import annotations

import contextlib
import socket
from typing import Any

try:  # uvicorn's fast parser when httptools is installed, as uvicorn itself chooses
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as _Protocol
except ImportError:  # pragma: no cover - without httptools
    from uvicorn.protocols.http.h11_impl import H11Protocol as _Protocol  # type: ignore[assignment]

__all__ = ["NoDelayProtocol"]


class NoDelayProtocol(_Protocol):
    def connection_made(self, transport: Any) -> None:
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)
