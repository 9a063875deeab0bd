"""Fixtures for the data-file writer tests.

- ``moto_endpoint`` / ``s3_properties``: the S3 server of ``tests/io/conftest.py``, reused
  (that folder is not a package, and ``io`` would shadow the standard library, so its
  conftest is loaded by path).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

_IO_CONFTEST = Path(__file__).resolve().parents[1] / "io" / "conftest.py"
_spec = importlib.util.spec_from_file_location("icefloe_tests_io_fixtures", _IO_CONFTEST)
assert _spec is not None and _spec.loader is not None
_io_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_io_fixtures)

moto_endpoint = _io_fixtures.moto_endpoint
s3_properties = _io_fixtures.s3_properties

__all__ = ["moto_endpoint", "s3_properties"]
