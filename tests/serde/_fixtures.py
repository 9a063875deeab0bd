"""Shared helpers for the serde tests: the fixture files Java wrote.

``fixtures/`` holds metadata JSON files written by Apache Iceberg 1.9.2 (Spark 3.5.7) through
Spark SQL, one per case (names say what the table went through), plus
``seed_sales_v2.metadata.json``, the example of the project's seed notes (written by an older
Java version, pretty-printed and without ``partition-statistics``).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"

#: Files written by Java 1.9.2 itself (byte-for-byte comparable with icefloe's output).
JAVA_FIXTURES = sorted(p.name for p in FIXTURES.glob("*.metadata.json") if not p.name.startswith("seed_"))
ALL_FIXTURES = sorted(p.name for p in FIXTURES.glob("*.metadata.json"))


def fixture_bytes(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def fixture_json(name: str) -> dict[str, Any]:
    """The fixture's JSON object (decompressed when gzipped)."""
    data = fixture_bytes(name)
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    result: dict[str, Any] = json.loads(data)
    return result
