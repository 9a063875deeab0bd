"""``isp.local_session``: what a Connect session needs is checked before a server starts."""

from __future__ import annotations

import sys

import pytest

from icefloe.errors import MissingDependencyError
from icefloe.spark.session import local_session


def test_a_connect_session_without_the_connect_client_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A module set to None in sys.modules is one that cannot be imported (as when not installed).
    monkeypatch.setitem(sys.modules, "grpc", None)
    monkeypatch.setitem(sys.modules, "grpc_status", None)
    with pytest.raises(MissingDependencyError, match=r"grpcio, grpcio-status missing.*icefloe\[connect\]"):
        local_session(connect=True)


def test_the_dev_install_has_the_connect_client() -> None:
    # `./dev test` runs the Spark tests on Connect: the dev extra must install its client.
    import grpc  # noqa: F401
    import grpc_status  # noqa: F401
    import zstandard  # noqa: F401
    from google.rpc import status_pb2  # noqa: F401
