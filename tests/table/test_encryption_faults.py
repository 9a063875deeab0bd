"""What goes wrong with an encrypted table fails with a typed error naming the file, and nothing
is ever read as plaintext: wrong or missing keys, a tampered byte, a truncated file, a swapped
file, a plaintext file planted in place of an encrypted one."""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

import icefloe
from icefloe.errors import DecryptionError, KeyManagementError, MissingKeyError, TruncatedFileError
from icefloe.scan.planning import drop_manifest_cache
from icefloe.spec.manifest import FileFormat
from support.encryption import TABLE_KEY, encrypted_properties, encrypting_catalog

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("note", pa.string())])


@pytest.fixture
def table(tmp_path: Path) -> icefloe.Table:
    """An encrypted table with two appends (two manifests, two data files) and a deletion vector."""
    catalog = encrypting_catalog("sql", tmp_path)
    created = catalog.create_table(
        "db.t", SCHEMA, properties=encrypted_properties(**{"write.delete.mode": "merge-on-read"})
    )
    for start in (0, 10):
        created.append(pa.table({"id": pa.array(range(start, start + 10), pa.int64()), "note": ["n"] * 10}))
    created.delete("id = 3")
    return created


def _fresh(table: icefloe.Table) -> icefloe.Table:
    """The table as a new reader process loads it: no key and no decrypted manifest in memory."""
    drop_manifest_cache()
    catalog = encrypting_catalog("sql", Path(table.location()).parents[2])
    return catalog.load_table("db.t")


def _flip(path: str, offset: int) -> None:
    data = bytearray(Path(path).read_bytes())
    data[offset] ^= 0x01
    Path(path).write_bytes(bytes(data))


def _scan(table: icefloe.Table) -> list[int]:
    return sorted(table.scan().to_arrow().column("id").to_pylist())


def _manifests(table: icefloe.Table) -> list[icefloe.ManifestFile]:
    snapshot = table.current_snapshot()
    assert snapshot is not None
    return [m for m in snapshot.all_manifests(table.io()) if m.content == 0]


def _data_files(table: icefloe.Table) -> list[str]:
    return sorted(t.file.file_path for t in table.new_scan().plan_files())


def test_a_wrong_master_key_fails_to_unwrap(table: icefloe.Table) -> None:
    keys_file = Path(table.location()).parents[2] / "keys.json"
    keys_file.write_text(json.dumps({TABLE_KEY: base64.b64encode(os.urandom(16)).decode()}))
    with pytest.raises(KeyManagementError, match="does not unwrap") as raised:
        _scan(_fresh(table))
    assert table.current_snapshot().manifest_list in str(raised.value)  # type: ignore[union-attr]


def test_a_missing_master_key(table: icefloe.Table) -> None:
    keys_file = Path(table.location()).parents[2] / "keys.json"
    keys_file.write_text(json.dumps({"another-key": base64.b64encode(os.urandom(16)).decode()}))
    with pytest.raises(MissingKeyError, match=f"master key '{TABLE_KEY}' is not in the keys file") as raised:
        _scan(_fresh(table))
    assert table.current_snapshot().manifest_list in str(raised.value)  # type: ignore[union-attr]


def test_a_missing_manifest_list_key(table: icefloe.Table) -> None:
    snapshot = table.current_snapshot()
    assert snapshot is not None
    kept = tuple(k for k in table.metadata.encryption_keys if k.key_id != snapshot.key_id)
    damaged = icefloe.Table(
        ("db", "t"),
        dataclasses.replace(table.metadata, encryption_keys=kept),
        None,
        table.io(),
    )
    with pytest.raises(MissingKeyError, match="encryption-keys hold no key") as raised:
        _scan(damaged)
    assert raised.value.location == snapshot.manifest_list


def test_a_tampered_kek_timestamp(table: icefloe.Table) -> None:
    keys = tuple(
        dataclasses.replace(k, properties={"KEY_TIMESTAMP": "1"}) if k.encrypted_by_id == TABLE_KEY else k
        for k in table.metadata.encryption_keys
    )
    damaged = icefloe.Table(
        ("db", "t"), dataclasses.replace(table.metadata, encryption_keys=keys), None, table.io()
    )
    with pytest.raises(DecryptionError, match="key metadata of manifest list"):
        _scan(damaged)


@pytest.mark.parametrize("what", ["manifest list", "manifest", "data file", "deletion vector"])
def test_a_tampered_byte(table: icefloe.Table, what: str) -> None:
    snapshot = table.current_snapshot()
    assert snapshot is not None and snapshot.manifest_list is not None
    if what == "manifest list":
        path = snapshot.manifest_list
    elif what == "manifest":
        path = _manifests(table)[0].manifest_path
    elif what == "data file":
        path = _data_files(table)[0]
    else:
        dvs = [
            d for t in table.new_scan().plan_files() for d in t.deletes if d.file_format == FileFormat.PUFFIN
        ]
        path = dvs[0].file_path
    _flip(path, os.path.getsize(path) // 2)
    with pytest.raises(DecryptionError) as raised:
        _scan(_fresh(table))
    assert raised.value.location == path
    assert path in str(raised.value)


@pytest.mark.parametrize("what", ["manifest", "data file"])
def test_a_truncated_file(table: icefloe.Table, what: str) -> None:
    path = _manifests(table)[0].manifest_path if what == "manifest" else _data_files(table)[0]
    data = Path(path).read_bytes()
    Path(path).write_bytes(data[:-10])
    expected = TruncatedFileError if what == "manifest" else DecryptionError
    with pytest.raises(expected) as raised:
        _scan(_fresh(table))
    assert raised.value.location == path


@pytest.mark.parametrize("what", ["manifest", "data file"])
def test_a_swapped_file(table: icefloe.Table, what: str) -> None:
    """Another file of the table (encrypted with its own key) copied over one: its key does not
    open it, whatever the lengths."""
    if what == "manifest":
        first, second = (m.manifest_path for m in _manifests(table)[:2])
    else:
        first, second = _data_files(table)[:2]
    shutil.copyfile(second, first)
    with pytest.raises(DecryptionError) as raised:
        _scan(_fresh(table))
    assert raised.value.location == first


def test_a_planted_plaintext_manifest_list_is_refused(table: icefloe.Table, tmp_path: Path) -> None:
    """A plaintext table's manifest list put where the encrypted one was is not read."""
    plain = icefloe.load_catalog("plain", type="memory", warehouse=str(tmp_path / "plain"))
    plain.create_namespace("db")
    other = plain.create_table("db.p", SCHEMA, properties={"format-version": "3"})
    other.append(pa.table({"id": pa.array([99], pa.int64()), "note": ["planted"]}))
    planted = other.current_snapshot().manifest_list  # type: ignore[union-attr]
    target = table.current_snapshot().manifest_list  # type: ignore[union-attr]
    shutil.copyfile(planted, target)  # type: ignore[arg-type]
    with pytest.raises(DecryptionError) as raised:
        _scan(_fresh(table))
    assert raised.value.location == target
