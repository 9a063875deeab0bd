"""Encrypted tables for tests: a local keys file, a catalog whose tables can encrypt, and the
"no plaintext at rest" check."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterable
from pathlib import Path

import icefloe
from icefloe import Catalog

__all__ = [
    "TABLE_KEY",
    "encrypted_properties",
    "encrypting_catalog",
    "kms_properties",
    "plaintext_hits",
    "write_keys_file",
]

#: The master key id encrypted test tables use.
TABLE_KEY = "table-key"


def write_keys_file(
    path: Path, key_ids: Iterable[str] = (TABLE_KEY,), *, length: int = 16
) -> dict[str, bytes]:
    """A local KMS keys file at ``path`` with a fresh master key per id; returns the keys."""
    keys = {key_id: os.urandom(length) for key_id in key_ids}
    path.write_text(json.dumps({k: base64.b64encode(v).decode() for k, v in keys.items()}))
    return keys


def kms_properties(keys_file: Path) -> dict[str, str]:
    """Catalog properties of the local KMS over ``keys_file``."""
    return {"encryption.kms-type": "local", "encryption.kms.local.keys-file": str(keys_file)}


def encrypted_properties(**more: str) -> dict[str, str]:
    """Table properties of an encrypted v3 table (under :data:`TABLE_KEY`)."""
    return {"format-version": "3", "encryption.key-id": TABLE_KEY, **more}


def encrypting_catalog(kind: str, root: Path, name: str = "enc") -> Catalog:
    """A catalog of ``kind`` under ``root`` (warehouse ``root/warehouse``, keys file
    ``root/keys.json``) with the local KMS, and namespace ``db``."""
    root.mkdir(parents=True, exist_ok=True)
    keys_file = root / "keys.json"
    if not keys_file.exists():
        write_keys_file(keys_file)
    properties = kms_properties(keys_file)
    if kind == "sql":
        properties["uri"] = f"sqlite:///{root / 'catalog.db'}"
    catalog = icefloe.load_catalog(name, type=kind, warehouse=str(root / "warehouse"), **properties)
    catalog.create_namespace_if_not_exists("db")
    return catalog


def plaintext_hits(folder: Path | str, needles: Iterable[str | bytes]) -> list[tuple[str, str]]:
    """``(file, needle)`` for every needle found in the clear in a file below ``folder``."""
    wanted = [n.encode() if isinstance(n, str) else n for n in needles]
    hits = []
    for path in sorted(Path(folder).rglob("*")):
        if not path.is_file():
            continue
        data = path.read_bytes()
        hits.extend((str(path), needle.decode(errors="replace")) for needle in wanted if needle in data)
    return hits
