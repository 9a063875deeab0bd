"""Encrypted tables end to end in Python: every table operation on an encrypted v3 table, what
lands on storage (nothing readable), the key hierarchy Java 1.11 lays out, and the rules on
which tables may encrypt."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import icefloe
from icefloe.errors import (
    CommitFailedException,
    KeyManagementError,
    ValidationError,
)
from icefloe.io.encryption import (
    KEY_TIMESTAMP,
    EncryptingFileIO,
    StandardEncryptionManager,
    encrypted_length,
)
from icefloe.manifests import read_manifest, read_manifest_list
from icefloe.spec.encryption import StandardKeyMetadata
from icefloe.spec.manifest import FileFormat
from icefloe.write.deletes import write_equality_deletes
from icefloe.write.parquet import write_data_files
from support.encryption import (
    TABLE_KEY,
    encrypted_properties,
    encrypting_catalog,
    plaintext_hits,
)

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("note", pa.string()), ("part", pa.string())])


def _rows(ids: range, marker: str = "SECRET") -> pa.Table:
    return pa.table(
        {
            "id": pa.array(list(ids), pa.int64()),
            "note": [f"{marker}-{i:05d}" for i in ids],
            "part": ["p" + str(i % 3) for i in ids],
        },
        schema=SCHEMA,
    )


def _ids(table: icefloe.Table, **scan: object) -> list[int]:
    return sorted(table.scan(**scan).to_arrow().column("id").to_pylist())


def _kek_entries(table: icefloe.Table) -> list[object]:
    return [k for k in table.metadata.encryption_keys if k.encrypted_by_id == TABLE_KEY]


@pytest.mark.parametrize("kind", ["sql", "hadoop"])
def test_every_operation_on_an_encrypted_table(tmp_path: Path, kind: str) -> None:
    catalog = encrypting_catalog(kind, tmp_path)
    table = catalog.create_table(
        "db.t",
        SCHEMA,
        partition_by=["part"],
        properties=encrypted_properties(**{"write.delete.mode": "merge-on-read"}),
    )
    assert isinstance(table.io(), EncryptingFileIO)
    assert isinstance(table.encryption(), StandardEncryptionManager)

    first = table.append(_rows(range(0, 30)))
    assert first is not None and first.key_id is not None
    table.append(_rows(range(30, 60)))
    assert _ids(table) == list(range(60))

    # Row-level deletes: deletion vectors (v3 merge-on-read), then copy-on-write.
    table.delete("id < 5")
    dvs = table.current_snapshot().added_delete_files(table.io())  # type: ignore[union-attr]
    assert dvs and all(d.file_format == FileFormat.PUFFIN and d.key_metadata is not None for d in dvs)
    table.update_properties().set("write.delete.mode", "copy-on-write").commit()
    table.delete("id >= 55")
    assert _ids(table) == list(range(5, 55))

    # Equality deletes (a row delta) and an upsert.
    deletes = write_equality_deletes(
        table.io(),
        table_location=table.location(),
        properties=table.properties(),
        schema=table.schema(),
        spec=table.spec(),
        equality_ids=["id"],
        data=_rows(range(10, 14, 3)).select(["id"]),
        partition=("p1",),
    )
    assert all(d.key_metadata is not None for d in deletes)
    delta = table.new_row_delta()
    for delete in deletes:
        delta.add_deletes(delete)
    delta.commit()
    table.upsert(_rows(range(50, 62), marker="UPSERTED"), on=["id"])
    expected = [i for i in range(5, 62) if i not in (10, 13)]
    assert _ids(table) == expected

    # Overwrite and replace of partitions.
    table.overwrite(_rows(range(100, 103), marker="OVERWRITE"), where="part = 'p1'")
    expected = sorted([i for i in expected if i % 3 != 1] + [100, 101, 102])
    assert _ids(table) == expected

    # Schema evolution, then time travel to before it.
    before = table.current_snapshot()
    assert before is not None
    table.update_schema().add_column("extra", "string").commit()
    more = _rows(range(200, 203)).append_column("extra", pa.array(["EXTRA-x"] * 3))
    table.append(more)
    latest = table.scan().to_arrow()
    assert latest.column("extra").null_count == len(expected)
    assert sorted(table.scan(snapshot_id=before.snapshot_id).to_arrow().column("id").to_pylist()) == expected

    # Compaction: every live row rewritten into new encrypted files.
    live = table.new_scan().plan_files()
    rows = table.scan().to_arrow()
    compacted = write_data_files(
        table.io(),
        table_location=table.location(),
        properties=table.properties(),
        schema=table.schema(),
        spec=table.spec(),
        data=rows,
    )
    old_files = list({t.file.file_path: t.file for t in live}.values())
    old_deletes = list({(d.file_path, d.content_offset): d for t in live for d in t.deletes}.values())
    rewrite = table.new_rewrite().validate_from_snapshot(table.current_snapshot().snapshot_id)  # type: ignore[union-attr]
    rewrite.rewrite_files([*old_files, *old_deletes], compacted)  # type: ignore[list-item]
    rewrite.commit()
    assert _ids(table) == sorted([*expected, 200, 201, 202])

    # A transaction of two snapshots: the second reads the first's (encrypted) manifest list.
    txn = table.new_transaction()
    txn.append(_rows(range(300, 303)))
    txn.delete("id = 300")
    txn.commit_transaction()
    final = sorted([*expected, 200, 201, 202, 301, 302])
    assert _ids(table) == final

    # Expiry: only the current snapshot stays; files of the others are deleted.
    table.expire_snapshots().expire_older_than(table.current_snapshot().timestamp_ms + 1).retain_last(
        1
    ).commit()  # type: ignore[union-attr]
    assert len(table.snapshots()) == 1
    assert _ids(catalog.load_table("db.t")) == final

    _check_key_hierarchy(table)
    _check_lengths(table)
    location = Path(table.location())
    manifest_paths = [m.manifest_path for m in table.current_snapshot().all_manifests(table.io())]  # type: ignore[union-attr]
    assert manifest_paths
    needles = [
        "SECRET-",
        "UPSERTED-",
        "OVERWRITE-",
        "EXTRA-x",
        *manifest_paths,
        *(Path(p).name for p in manifest_paths),
    ]
    data_paths = [t.file.file_path for t in table.new_scan().plan_files()]
    needles += [Path(p).name for p in data_paths]
    assert plaintext_hits(location, needles) == []


def _check_key_hierarchy(table: icefloe.Table) -> None:
    """Java 1.11's layout: one KEK wrapped by the table key (timestamped), and one manifest list
    key per snapshot, encrypted by the KEK, whose id the snapshot names."""
    keks = _kek_entries(table)
    assert len(keks) == 1
    kek = keks[0]
    assert set(kek.properties) == {KEY_TIMESTAMP}  # type: ignore[attr-defined]
    by_id = {k.key_id: k for k in table.metadata.encryption_keys}
    for snapshot in table.metadata.snapshots:
        entry = by_id[snapshot.key_id]  # type: ignore[index]
        assert entry.encrypted_by_id == kek.key_id  # type: ignore[attr-defined]
        assert not entry.properties
    reloaded = icefloe.Table(("db", "t"), table.metadata, table.metadata_location, table.io())
    current = reloaded.current_snapshot()
    assert current is not None
    # Metadata tables read lists and manifests by location alone: the io finds their keys.
    listed = read_manifest_list(reloaded.io(), current.manifest_list)  # type: ignore[arg-type]
    assert [m.manifest_path for m in listed] == [m.manifest_path for m in current.all_manifests(table.io())]
    assert all(e.data_file.key_metadata is not None for m in listed for e in read_manifest(reloaded.io(), m))


def _check_lengths(table: icefloe.Table) -> None:
    """Recorded lengths are the stored (encrypted) ones, in the rows and in the key metadata."""
    snapshot = table.current_snapshot()
    assert snapshot is not None
    for manifest in snapshot.all_manifests(table.io()):
        size = os.path.getsize(manifest.manifest_path)
        assert manifest.manifest_length == size
        assert StandardKeyMetadata.parse(manifest.key_metadata).file_length == size  # type: ignore[arg-type]
        for entry in read_manifest(table.io(), manifest):
            if not entry.is_live:
                continue
            file = entry.data_file
            assert file.file_size_in_bytes == os.path.getsize(file.file_path)
            assert StandardKeyMetadata.parse(file.key_metadata).file_length == file.file_size_in_bytes  # type: ignore[arg-type]
    list_size = os.path.getsize(snapshot.manifest_list)  # type: ignore[arg-type]
    key = table.encryption().manifest_list_key_metadata(snapshot.key_id)  # type: ignore[attr-defined]
    assert key.file_length == list_size
    assert list_size == encrypted_length(list_size - 8 - 28)  # one AGS1 block


def test_retry_reads_the_concurrent_snapshot_and_reuses_its_kek(tmp_path: Path) -> None:
    catalog = encrypting_catalog("sql", tmp_path)
    table = catalog.create_table("db.t", SCHEMA, properties=encrypted_properties())
    table.append(_rows(range(3)))
    stale = catalog.load_table("db.t")
    table.append(_rows(range(3, 6)))  # another writer commits first (a new manifest list key)
    stale.append(_rows(range(6, 9)))  # retried on the refreshed metadata: reads the other's list
    fresh = catalog.load_table("db.t")
    assert _ids(fresh) == list(range(9))
    assert len(_kek_entries(fresh)) == 1
    assert len(fresh.metadata.encryption_keys) == 1 + 3  # one KEK, a key per snapshot


def test_failed_commit_adds_no_keys(tmp_path: Path) -> None:
    catalog = encrypting_catalog("memory", tmp_path)
    table = catalog.create_table(
        "db.t",
        SCHEMA,
        properties=encrypted_properties(**{"commit.retry.num-retries": "1", "commit.retry.min-wait-ms": "1"}),
    )
    table.append(_rows(range(3)))
    backend = catalog.backend
    backend.fail_next_commits(10)  # type: ignore[attr-defined]
    with pytest.raises(CommitFailedException):
        table.append(_rows(range(3, 6)))
    backend.fail_next_commits(0)  # type: ignore[attr-defined]
    reloaded = catalog.load_table("db.t")
    assert len(reloaded.metadata.encryption_keys) == 2
    assert _ids(reloaded) == [0, 1, 2]


def test_kek_rotates_after_two_years(tmp_path: Path) -> None:
    catalog = encrypting_catalog("memory", tmp_path)
    table = catalog.create_table("db.t", SCHEMA, properties=encrypted_properties())
    table.append(_rows(range(3)))
    manager = table.encryption()
    assert isinstance(manager, StandardEncryptionManager)
    key = StandardKeyMetadata(os.urandom(16), os.urandom(16), 100)
    current = table.metadata.encryption_keys
    created = int(_kek_entries(table)[0].properties[KEY_TIMESTAMP])  # type: ignore[attr-defined]
    _, kept = manager.add_manifest_list_key_metadata(key, current, now_ms=created + 729 * 86_400_000)
    assert [k.encrypted_by_id for k in kept] == [_kek_entries(table)[0].key_id]  # type: ignore[attr-defined]
    list_id, rotated = manager.add_manifest_list_key_metadata(key, current, now_ms=created + 730 * 86_400_000)
    assert len(rotated) == 2 and rotated[0].encrypted_by_id == TABLE_KEY
    assert rotated[1].encrypted_by_id == rotated[0].key_id
    assert manager.manifest_list_key_metadata(list_id) == key


def test_only_v3_tables_encrypt_and_the_key_never_changes(tmp_path: Path) -> None:
    catalog = encrypting_catalog("sql", tmp_path)
    for version in ("1", "2"):
        with pytest.raises(
            ValidationError, match=rf"Invalid properties for v{version}: \[encryption.key-id\]"
        ):
            catalog.create_table(
                "db.old", SCHEMA, properties={"format-version": version, "encryption.key-id": "k"}
            )
    with pytest.raises(
        ValidationError, match=r"Invalid properties for v2: \[encryption.key-id, encryption.data-key-length\]"
    ):
        catalog.create_table(
            "db.old",
            SCHEMA,
            properties={"format-version": "2", "encryption.key-id": "k", "encryption.data-key-length": "32"},
        )
    plain = catalog.create_table("db.plain", SCHEMA, properties={"format-version": "3"})
    with pytest.raises(ValidationError, match="Cannot modify key ID"):
        plain.update_properties().set("encryption.key-id", TABLE_KEY).commit()
    table = catalog.create_table("db.t", SCHEMA, properties=encrypted_properties())
    with pytest.raises(ValidationError, match="Cannot modify key ID"):
        table.update_properties().set("encryption.key-id", "other").commit()
    with pytest.raises(ValidationError, match="Cannot remove key ID"):
        table.update_properties().remove("encryption.key-id").commit()
    with pytest.raises(ValidationError, match="Invalid data key length: 20"):
        catalog.create_table(
            "db.bad", SCHEMA, properties=encrypted_properties(**{"encryption.data-key-length": "20"})
        ).append(_rows(range(1)))
    # Existing (plaintext) files cannot be added to an encrypted table.
    path = tmp_path / "plain.parquet"
    pa.parquet.write_table(_rows(range(2)), path)
    with pytest.raises(ValidationError, match="encrypted table"):
        table.add_files([str(path)])


def test_a_catalog_without_kms_cannot_create_or_read_encrypted_tables(tmp_path: Path) -> None:
    catalog = encrypting_catalog("sql", tmp_path)
    table = catalog.create_table("db.t", SCHEMA, properties=encrypted_properties())
    table.append(_rows(range(3)))
    plain = icefloe.load_catalog(
        "enc", type="sql", uri=f"sqlite:///{tmp_path / 'catalog.db'}", warehouse=str(tmp_path / "warehouse")
    )
    with pytest.raises(KeyManagementError, match=r"encryption\.kms-type"):
        plain.create_table("db.other", SCHEMA, properties=encrypted_properties())
    loaded = plain.load_table("db.t")  # the metadata is plaintext JSON
    with pytest.raises(KeyManagementError, match="without a key management client"):
        loaded.scan().to_arrow()


def test_data_key_length_is_honoured(tmp_path: Path) -> None:
    catalog = encrypting_catalog("memory", tmp_path)
    table = catalog.create_table(
        "db.t", SCHEMA, properties=encrypted_properties(**{"encryption.data-key-length": "32"})
    )
    table.append(_rows(range(4)))
    files = table.current_snapshot().added_data_files(table.io())  # type: ignore[union-attr]
    assert {len(StandardKeyMetadata.parse(f.key_metadata).encryption_key) for f in files} == {32}  # type: ignore[arg-type]
    assert pc.sum(table.scan().to_arrow().column("id")).as_py() == 6


def test_drop_with_purge_deletes_encrypted_files(tmp_path: Path) -> None:
    catalog = encrypting_catalog("sql", tmp_path)
    table = catalog.create_table("db.t", SCHEMA, partition_by=["part"], properties=encrypted_properties())
    table.append(_rows(range(9)))
    location = Path(table.location())
    catalog.drop_table("db.t", purge=True)
    assert [p for p in location.rglob("*") if p.is_file()] == []
    shutil.rmtree(location, ignore_errors=True)
