"""``Snapshot``'s file-reading methods, served by icefloe.manifests once it is imported."""

from __future__ import annotations

from pathlib import Path

from icefloe.io import LocalFileIO
from icefloe.manifests import ManifestWriter, write_manifest, write_manifest_list
from icefloe.spec.manifest import DataFile, DeleteFile, FileContent, FileFormat, ManifestContent
from icefloe.spec.partitioning import PartitionSpecBuilder
from icefloe.spec.schema import Schema
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.types import NestedField

SCHEMA = Schema(NestedField(1, "id", "long"), NestedField(2, "part", "string"))
SPEC = PartitionSpecBuilder(SCHEMA).identity("part").build()


def _data(name: str, part: str = "x") -> DataFile:
    return DataFile(f"/t/data/{name}.parquet", FileFormat.PARQUET, 10, 100, (part,))


def test_snapshot_methods_read_lists_and_manifests(io: LocalFileIO, tmp_path: Path) -> None:
    meta = tmp_path / "metadata"
    # snapshot 1 (seq 1) appends a and b
    m1 = write_manifest(
        io,
        str(meta / "m1.avro"),
        SPEC,
        SCHEMA,
        [_data("a"), _data("b", "y")],
        format_version=2,
        snapshot_id=1,
    )
    write_manifest_list(io, str(meta / "snap-1.avro"), 2, 1, None, 1, [m1])
    # snapshot 2 (seq 2) deletes a (b carried over as EXISTING), adds c and a delete file for b
    with ManifestWriter(
        io, str(meta / "m2.avro"), spec=SPEC, schema=SCHEMA, format_version=2, snapshot_id=2
    ) as w:
        w.delete(_data("a"), snapshot_id=2, data_sequence_number=1, file_sequence_number=1)
        w.existing(_data("b", "y"), snapshot_id=1, data_sequence_number=1, file_sequence_number=1)
        w.add(_data("c"))
    deletes = write_manifest(
        io,
        str(meta / "d2.avro"),
        SPEC,
        SCHEMA,
        [
            DeleteFile(
                "/t/data/del-b.parquet", FileFormat.PARQUET, 1, 50, ("y",), FileContent.POSITION_DELETES
            )
        ],
        format_version=2,
        snapshot_id=2,
        content=ManifestContent.DELETES,
    )
    write_manifest_list(io, str(meta / "snap-2.avro"), 2, 2, 1, 2, [w.manifest_file, deletes])

    first = Snapshot(1, 1000, manifest_list=str(meta / "snap-1.avro"), sequence_number=1)
    second = Snapshot(
        2, 2000, manifest_list=str(meta / "snap-2.avro"), parent_snapshot_id=1, sequence_number=2
    )
    assert [m.manifest_path for m in first.all_manifests(io)] == [m1.manifest_path]
    assert [m.content for m in second.all_manifests(io)] == [ManifestContent.DATA, ManifestContent.DELETES]
    assert [m.sequence_number for m in second.data_manifests(io)] == [2]
    assert [m.manifest_path for m in second.delete_manifests(io)] == [str(meta / "d2.avro")]
    assert [f.file_path for f in first.added_data_files(io)] == ["/t/data/a.parquet", "/t/data/b.parquet"]
    assert [f.file_path for f in second.added_data_files(io)] == ["/t/data/c.parquet"]
    assert [f.file_path for f in second.removed_data_files(io)] == ["/t/data/a.parquet"]
    added_deletes = second.added_delete_files(io)
    assert [(type(f), f.file_path, f.spec_id) for f in added_deletes] == [
        (DeleteFile, "/t/data/del-b.parquet", 0)
    ]
    assert second.removed_delete_files(io) == []
    assert first.removed_data_files(io) == []


def test_v1_snapshot_with_inline_manifests(io: LocalFileIO, tmp_path: Path) -> None:
    paths = []
    for i, spec_id in enumerate((0, 3)):
        spec = PartitionSpecBuilder(SCHEMA, spec_id=spec_id).identity("part").build()
        m = write_manifest(
            io, str(tmp_path / f"m{i}.avro"), spec, SCHEMA, [_data(f"f{i}")], format_version=1, snapshot_id=7
        )
        paths.append(m.manifest_path)
    snapshot = Snapshot(7, 1000, manifests=tuple(paths))
    rows = snapshot.all_manifests(io)
    assert [(r.manifest_path, r.partition_spec_id, r.added_snapshot_id, r.sequence_number) for r in rows] == [
        (paths[0], 0, 7, 0),
        (paths[1], 3, 7, 0),
    ]
    assert rows[0].manifest_length == (tmp_path / "m0.avro").stat().st_size
    added = snapshot.added_data_files(io)
    assert [(f.file_path, f.spec_id) for f in added] == [("/t/data/f0.parquet", 0), ("/t/data/f1.parquet", 3)]
