"""Fixtures for the FileIO tests.

- ``moto_endpoint``: a real S3 API (moto's server) on 127.0.0.1, one process for the session.
- ``s3_properties``: Iceberg properties pointing at it, with a fresh bucket per test
  (``s3_properties["test.bucket"]``).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

ACCESS_KEY = "testing-key"
SECRET_KEY = "testing-secret"
REGION = "us-east-1"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _moto_server_binary() -> str | None:
    beside_python = Path(sys.executable).parent / "moto_server"
    if beside_python.is_file():
        return str(beside_python)
    return shutil.which("moto_server")


def _wait_until_listening(port: int, proc: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"moto_server exited with code {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"moto_server did not listen on port {port} within {timeout}s")


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    """``http://127.0.0.1:<port>`` of a moto S3 server started for this session."""
    binary = _moto_server_binary()
    if binary is None:
        pytest.skip("moto_server not installed (pip install 'moto[server]')")
    port = _free_port()
    proc = subprocess.Popen(
        [binary, "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_until_listening(port, proc, timeout=30)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def s3_properties(moto_endpoint: str) -> dict[str, str]:
    """Iceberg S3 properties for the moto server, and a new empty bucket."""
    import botocore.session

    bucket = f"icefloe-{uuid.uuid4().hex[:12]}"
    client = botocore.session.get_session().create_client(
        "s3",
        endpoint_url=moto_endpoint,
        region_name=REGION,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
    )
    client.create_bucket(Bucket=bucket)
    return {
        "s3.endpoint": moto_endpoint,
        "s3.access-key-id": ACCESS_KEY,
        "s3.secret-access-key": SECRET_KEY,
        "s3.region": REGION,
        "s3.path-style-access": "true",
        "test.bucket": bucket,
    }
