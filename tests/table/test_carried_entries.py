"""Merged manifests copy the ``data_file`` records of the manifests they merge as encoded
(``manifests.carried``) when the encoding is the one they write: what they write that way reads
back exactly as writing the decoded entries would, and anything else is decoded as before."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from icefloe import Catalog, Table
from icefloe.manifests import ManifestWriter, read_manifest
from icefloe.manifests._avro_file import read_header, schema_of
from icefloe.manifests.carried import CarriedBlock, CarriedEntry, carried_entries, encoding_of
from icefloe.manifests.reader import read_manifest_bytes
from icefloe.serde.avro_schemas import manifest_entry_schema
from icefloe.spec.manifest import ManifestContent, ManifestEntry, ManifestEntryStatus, ManifestFile
from icefloe.table.snapshots._existing_blocks import existing_blocks
from support.merges import copied_blocks
from table.manifest_helpers import (
    MIN_COUNT,
    AddDeletes,
    RemoveFiles,
    commit_append,
    fake_file,
    fake_position_deletes,
    make_table,
    manifests_of,
)

STATUSES = list(ManifestEntryStatus)


def _history(table: Table, format_version: int) -> None:
    """Appends, removals (DELETED entries) and, in v2, position delete files."""
    commit_append(table, *(fake_file(table, f"f{i}", i % 3, records=i + 1) for i in range(4)))
    commit_append(table, fake_file(table, "g", 7), fake_file(table, "h", 2))
    RemoveFiles(table, ["/path/to/f1.parquet"]).commit()
    if format_version >= 2:
        AddDeletes(
            table, [fake_position_deletes(table, "f2", 2), fake_position_deletes(table, "g", 7)]
        ).commit()
    commit_append(table, fake_file(table, "k", 1))


def _manifests(table: Table) -> list[ManifestFile]:
    seen: dict[str, ManifestFile] = {}
    for snapshot in table.metadata.snapshots:
        for manifest in snapshot.all_manifests(table.io()):
            seen.setdefault(manifest.manifest_path, manifest)
    return list(seen.values())


def _writer(table: Table, manifest: ManifestFile, name: str, snapshot_id: int) -> ManifestWriter:
    """A writer of a manifest like ``manifest`` (its spec and content) in ``table``."""
    return _new_writer(table, name, snapshot_id, content=manifest.content, spec_id=manifest.partition_spec_id)


def _new_writer(
    table: Table,
    name: str,
    snapshot_id: int,
    *,
    content: ManifestContent = ManifestContent.DATA,
    spec_id: int | None = None,
    codec: str = "gzip",
) -> ManifestWriter:
    return ManifestWriter(
        table.io(),
        f"{table.location()}/metadata/{name}.avro",
        spec=table.spec() if spec_id is None else table.metadata.spec_by_id(spec_id),
        schema=table.schema(),
        format_version=table.metadata.format_version,
        snapshot_id=snapshot_id,
        content=content,
        codec=codec,
    )


def _read(table: Table, manifest: ManifestFile) -> list[Any]:
    entries = list(read_manifest(table.io(), dataclasses.replace(manifest, sequence_number=99)))
    return [
        (e.status, e.snapshot_id, e.sequence_number, e.file_sequence_number, e.data_file) for e in entries
    ]


@pytest.mark.parametrize("format_version", [1, 2])
def test_carried_entries_write_what_the_decoded_entries_write(
    memory_catalog: Catalog, format_version: int
) -> None:
    table = make_table(memory_catalog, format_version, **{MIN_COUNT: "1000"})
    _history(table, format_version)
    spec = table.spec()
    partition_type = spec.partition_type(table.schema())
    manifests = _manifests(table)
    assert len(manifests) >= 4
    for n, manifest in enumerate(manifests):
        decoded = list(read_manifest(table.io(), manifest, partition_type=partition_type))
        carrying, reference = (
            _writer(table, manifest, f"carried-{n}", 4242),
            _writer(table, manifest, f"ref-{n}", 4242),
        )
        assert carrying.carries
        carried = carried_entries(
            table.io(), manifest, partition_type=partition_type, target_schema=carrying.avro_schema
        )
        assert carried is not None, manifest.manifest_path
        items = list(carried)
        assert [(c.status, c.snapshot_id, c.sequence_number, c.file_sequence_number) for c in items] == [
            (e.status, e.snapshot_id, e.sequence_number, e.file_sequence_number) for e in decoded
        ]
        assert [(c.file_path, c.record_count, c.partition, c.content) for c in items] == [
            (e.data_file.file_path, e.data_file.record_count, e.data_file.partition, e.data_file.content)
            for e in decoded
        ]
        # Written again, every status (and an inherited sequence number), both ways.
        for k, (item, entry) in enumerate(zip(items, decoded)):
            status = STATUSES[k % 3]
            seq = None if status == ManifestEntryStatus.ADDED else (entry.sequence_number or 0) + k
            file_seq = None if status == ManifestEntryStatus.ADDED else (entry.file_sequence_number or 0) + 1
            snapshot_id = 4242 if status == ManifestEntryStatus.ADDED else 1000 + k
            carrying.carry(item, status, snapshot_id, seq, file_seq)
            reference.add_entry(ManifestEntry(status, snapshot_id, entry.data_file, seq, file_seq))
        carrying.close()
        reference.close()
        got, expected = carrying.manifest_file, reference.manifest_file
        assert dataclasses.replace(got, manifest_path="", manifest_length=0) == dataclasses.replace(
            expected, manifest_path="", manifest_length=0
        )
        assert _read(table, got) == _read(table, expected)


def test_mixed_carried_and_decoded_entries_keep_their_order(memory_catalog: Catalog) -> None:
    table = make_table(memory_catalog, 2, **{MIN_COUNT: "1000"})
    _history(table, 2)
    manifest = next(
        m for m in _manifests(table) if m.content.name == "DATA" and (m.added_files_count or 0) > 1
    )
    partition_type = table.spec().partition_type(table.schema())
    decoded = list(read_manifest(table.io(), manifest, partition_type=partition_type))
    writer = _writer(table, manifest, "mixed", 4242)
    items = list(
        carried_entries(table.io(), manifest, partition_type=partition_type, target_schema=writer.avro_schema)
        or []
    )
    for k, (item, entry) in enumerate(zip(items, decoded)):
        if k % 2:
            writer.carry(item, ManifestEntryStatus.EXISTING, 7, 5, 5)
        else:
            writer.existing(entry.data_file, 7, 5, 5)
    writer.close()
    assert [e[4].file_path for e in _read(table, writer.manifest_file)] == [
        e.data_file.file_path for e in decoded
    ]


def test_other_encodings_are_not_carried(memory_catalog: Catalog) -> None:
    table = make_table(memory_catalog, 2, **{MIN_COUNT: "1000"})
    _history(table, 2)
    manifest = _manifests(table)[0]
    partition_type = table.spec().partition_type(table.schema())
    v1 = manifest_entry_schema(1, partition_type)
    assert carried_entries(table.io(), manifest, partition_type=partition_type, target_schema=v1) is None
    v2 = _writer(table, manifest, "v2", 1)
    assert v2.carries  # a v2 writer of the default codec
    zstd = _new_writer(table, "zstd", 1, codec="zstd")
    assert not zstd.carries
    for entry in read_manifest(table.io(), manifest, partition_type=partition_type):
        zstd.add_entry(entry)
    zstd.close()
    # A zstd manifest's records are not framed here: decoded instead.
    assert (
        carried_entries(
            table.io(), zstd.manifest_file, partition_type=partition_type, target_schema=v2.avro_schema
        )
        is None
    )


def test_v3_writers_decode_what_they_merge(memory_catalog: Catalog) -> None:
    table = make_table(memory_catalog, 3, **{MIN_COUNT: "1000"})
    commit_append(table, fake_file(table, "a"))
    writer = _writer(table, _manifests(table)[0], "v3", 1)
    assert not writer.carries  # carried data files' row ids are written out in v3


def _record(fields: list[tuple[str, Any, int | None]], name: str = "r") -> dict[str, Any]:
    return {
        "type": "record",
        "name": name,
        "fields": [
            {"name": n, "type": t, **({} if fid is None else {"field-id": fid}), "doc": f"the {n}"}
            for n, t, fid in fields
        ],
    }


def test_encodings_compare_structure_field_ids_and_byte_forms() -> None:
    base = _record(
        [("a", "long", 1), ("b", ["null", "string"], 2), ("c", {"type": "fixed", "name": "f", "size": 16}, 3)]
    )
    renamed = _record(
        [
            ("x", "int", 1),
            ("y", ["null", "bytes"], 2),
            ("z", {"type": "fixed", "name": "g", "size": 16, "logicalType": "uuid"}, 3),
        ],
        name="other",
    )
    assert encoding_of(base) == encoding_of(renamed)  # names, docs, int/long, string/bytes
    changed = [
        _record(
            [
                ("a", "double", 1),
                ("b", ["null", "string"], 2),
                ("c", {"type": "fixed", "name": "f", "size": 16}, 3),
            ]
        ),
        _record(
            [
                ("b", ["null", "string"], 2),
                ("a", "long", 1),
                ("c", {"type": "fixed", "name": "f", "size": 16}, 3),
            ]
        ),
        _record(
            [
                ("a", "long", 9),
                ("b", ["null", "string"], 2),
                ("c", {"type": "fixed", "name": "f", "size": 16}, 3),
            ]
        ),
        _record(
            [
                ("a", "long", 1),
                ("b", ["null", "string"], 2),
                ("c", {"type": "fixed", "name": "f", "size": 12}, 3),
            ]
        ),
        _record(
            [
                ("a", "long", 1),
                ("b", ["string", "null"], 2),
                ("c", {"type": "fixed", "name": "f", "size": 16}, 3),
            ]
        ),
    ]
    for other in changed:
        assert encoding_of(other) != encoding_of(base)
    # A named type used again by name encodes as its definition.
    reuse = _record([("p", {"type": "fixed", "name": "d", "size": 8}, 1), ("q", "d", 2)])
    inline = _record(
        [
            ("p", {"type": "fixed", "name": "d", "size": 8}, 1),
            ("q", {"type": "fixed", "name": "e", "size": 8}, 2),
        ]
    )
    assert encoding_of(reuse) == encoding_of(inline)


def test_a_manifests_own_schema_encodes_as_its_writer_writes(memory_catalog: Catalog) -> None:
    table = make_table(memory_catalog, 2)
    commit_append(table, fake_file(table, "a"))
    manifest = _manifests(table)[0]
    data = read_manifest_bytes(table.io(), manifest)
    stored = schema_of(read_header(data, manifest.manifest_path), manifest.manifest_path)
    partition_type = table.spec().partition_type(table.schema())
    assert encoding_of(stored) == encoding_of(manifest_entry_schema(2, partition_type))
    assert encoding_of(stored) != encoding_of(manifest_entry_schema(1, partition_type))


# ---- blocks of EXISTING entries, copied whole ------------------------------------------------

FILES_PER_APPEND = 100


def test_merges_copy_blocks_of_existing_entries_and_write_what_decoding_writes(
    memory_catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    copied = copied_blocks(monkeypatch)
    table = make_table(memory_catalog, 2, **{MIN_COUNT: "20"})
    partition_type = table.spec().partition_type(table.schema())
    merges = []
    n = 0
    while len(merges) < 2:  # the second merge merges the first's manifest, rewritten in between
        files = [fake_file(table, f"a{n}-{k}", (n + k) % 16, records=k + 1) for k in range(FILES_PER_APPEND)]
        commit_append(table, *files)
        listed = manifests_of(table)
        if len(listed) == 1 and listed[0].existing_files_count:
            merges.append(table.current_snapshot())
            if len(merges) == 1:  # DELETED entries in the merged manifest, and new EXISTING ones
                RemoveFiles(table, [f"/path/to/a3-{k}.parquet" for k in range(4)]).commit()
        n += 1
    assert copied, "no block was copied"
    snapshot = merges[-1]
    assert snapshot is not None and snapshot.parent_snapshot_id is not None
    (merged,) = manifests_of(table, snapshot)
    parent = table.metadata.snapshot_by_id(snapshot.parent_snapshot_id)
    # What decoding every entry writes: this snapshot's own files, then the parent's manifests'
    # live entries, as EXISTING.
    reference = _writer(table, merged, "reference", snapshot.snapshot_id)
    for entry in read_manifest(table.io(), merged):
        if entry.status == ManifestEntryStatus.ADDED:
            reference.add(entry.data_file)
    for manifest in manifests_of(table, parent):
        for entry in read_manifest(table.io(), manifest, partition_type=partition_type):
            if entry.status != ManifestEntryStatus.DELETED:
                assert entry.snapshot_id is not None
                reference.existing(
                    entry.data_file, entry.snapshot_id, entry.sequence_number, entry.file_sequence_number
                )
    reference.close()
    assert _read(table, merged) == _read(table, reference.manifest_file)
    unassigned = {"manifest_path": "", "manifest_length": 0, "sequence_number": 0}
    assert dataclasses.replace(merged, **unassigned) == dataclasses.replace(
        reference.manifest_file, **unassigned
    )


def test_a_block_is_copied_only_when_every_entry_is_existing_with_its_ids_written_out(
    memory_catalog: Catalog,
) -> None:
    table = make_table(memory_catalog, 2)
    partition_type = table.spec().partition_type(table.schema())
    writer = _new_writer(table, "existing", 77)
    count = 4000  # four blocks of fake files
    odd = {5: "added", 3900: "no snapshot id"}
    for k in range(count):
        file = fake_file(table, f"e{k}", k % 16, records=k + 1)
        if odd.get(k) == "added":
            writer.add(file, 4)
        elif odd.get(k) == "no snapshot id":
            # A v2 EXISTING entry may leave its snapshot id to inheritance.
            writer.existing(file, None, 3, 3)  # type: ignore[arg-type]
        else:
            writer.existing(file, 10 + k % 3, 3, 3)
    writer.close()
    manifest = dataclasses.replace(writer.manifest_file, sequence_number=9, added_snapshot_id=77)
    data = read_manifest_bytes(table.io(), manifest)
    check = existing_blocks(data, manifest, partition_type, 2)
    assert check is not None
    items = list(
        carried_entries(
            table.io(),
            manifest,
            partition_type=partition_type,
            target_schema=writer.avro_schema,
            data=data,
            copy=("deflate", lambda _: check),
        )
        or []
    )
    blocks = [i for i in items if isinstance(i, CarriedBlock)]
    entries = [i for i in items if isinstance(i, CarriedEntry)]
    assert len(blocks) >= 2 and entries
    assert sum(b.count for b in blocks) + len(entries) == count
    # The blocks holding the ADDED entry and the entry without a snapshot id were decoded:
    # that one inherits the manifest's snapshot id.
    assert {e.file_path for e in entries} >= {"/path/to/e5.parquet", "/path/to/e3900.parquet"}
    assert next(e for e in entries if e.file_path.endswith("e3900.parquet")).snapshot_id == 77
    decoded = list(read_manifest(table.io(), manifest, partition_type=partition_type))
    first = 0
    for item in items:
        if isinstance(item, CarriedBlock):
            block = decoded[first : first + item.count]
            assert item.facts.records == sum(e.data_file.record_count for e in block)
            assert set(item.facts.partitions) == {e.data_file.partition for e in block}
            assert item.facts.min_sequence_number == min(e.sequence_number for e in block)  # type: ignore[type-var]
            first += item.count
        else:
            first += 1
    # Another codec than the blocks': entries only.
    other = carried_entries(
        table.io(),
        manifest,
        partition_type=partition_type,
        target_schema=writer.avro_schema,
        data=data,
        copy=("null", lambda _: check),
    )
    assert other is not None and all(isinstance(i, CarriedEntry) for i in other)


def test_blocks_of_files_of_another_content_than_their_manifests_are_not_copied(
    memory_catalog: Catalog,
) -> None:
    table = make_table(memory_catalog, 2)
    partition_type = table.spec().partition_type(table.schema())
    writer = _new_writer(table, "deletes", 5, content=ManifestContent.DELETES)
    for k in range(400):
        writer.existing(fake_position_deletes(table, f"d{k}", k % 16), 4, 2, 2)
    writer.close()
    for content, copies in ((ManifestContent.DELETES, True), (ManifestContent.DATA, False)):
        manifest = dataclasses.replace(writer.manifest_file, content=content, sequence_number=3)
        data = read_manifest_bytes(table.io(), manifest)
        check = existing_blocks(data, manifest, partition_type, 2)
        assert check is not None
        assert (check(0, 400) is not None) is copies
