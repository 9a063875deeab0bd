"""Servers the tests start on 127.0.0.1 (moto, the storage emulators): a free port, and a
process that is up once it listens and stopped however the test ends."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from collections.abc import Iterator


def free_port() -> int:
    """A port nothing listens on now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def serve(argv: list[str], port: int, name: str, *, timeout: float = 30) -> Iterator[None]:
    """Run ``argv`` until the block ends; enter once it listens on ``port``.

    Raises:
        RuntimeError: naming ``name``, when it exits or does not listen within ``timeout`` s.
    """
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited with code {proc.returncode}: {' '.join(argv)}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{name} did not listen on port {port} within {timeout}s") from None
                time.sleep(0.1)
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
