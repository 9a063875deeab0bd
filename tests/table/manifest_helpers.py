"""Helpers for the manifest tests (merging appends, rewrite_manifests).

- Tables partitioned by ``bucket(16, id)``, data files that exist only in manifests (``file``),
  manifests written outside commits (``write_manifest``).
- Readers that reduce manifests to comparable tuples (``entries``).
- Two test-only operations standing in for ones icefloe does not have yet: ``RemoveFiles``
  (marks files DELETED, as Java's DeleteFiles) and ``AddDeletes`` (commits position delete
  files in a delete manifest, as a row delta would).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from icefloe import Catalog, DataFile, Table
from icefloe.manifests import ManifestWriter, read_manifest
from icefloe.spec.manifest import DeleteFile, ManifestContent, ManifestEntryStatus, ManifestFile
from icefloe.spec.partitioning import PartitionSpec, build_spec
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.updates import AddPartitionSpec, SetDefaultSpec
from icefloe.table.snapshots.snapshot_producer import SnapshotProducer
from icefloe.table.snapshots.summary import SummaryBuilder
from icefloe.table.transaction import Transaction
from support.catalogs import ARROW_SCHEMA, avro_files, referenced_metadata_files

ADDED, EXISTING, DELETED = (
    ManifestEntryStatus.ADDED,
    ManifestEntryStatus.EXISTING,
    ManifestEntryStatus.DELETED,
)
FAST_RETRIES = {"commit.retry.min-wait-ms": "1", "commit.retry.max-wait-ms": "5"}
MIN_COUNT = "commit.manifest.min-count-to-merge"
TARGET = "commit.manifest.target-size-bytes"
ENABLED = "commit.manifest-merge.enabled"


def make_table(catalog: Catalog, format_version: int, **properties: str) -> Table:
    return catalog.create_table(
        "db.t",
        ARROW_SCHEMA,
        partition_by=["bucket(16, id)"],
        properties={"format-version": str(format_version), **FAST_RETRIES, **properties},
    )


def fake_file(
    table: Table, name: str, bucket: int = 0, *, spec: PartitionSpec | None = None, records: int = 1
) -> DataFile:
    spec = spec or table.spec()
    builder = (
        DataFile.builder(spec, table.schema())
        .with_path(f"/path/to/{name}.parquet")
        .with_format("parquet")
        .with_file_size_in_bytes(10)
        .with_record_count(records)
        .with_partition([bucket] * len(spec.fields))
    )
    file: DataFile = builder.build()
    return file


def set_props(table: Table, properties: dict[str, str]) -> None:
    update = table.update_properties()
    for key, value in properties.items():
        update.set(key, value)
    update.commit()


def commit_append(table: Table, *files: DataFile, fast: bool = False) -> Snapshot:
    append = table.new_fast_append() if fast else table.new_append()
    for file in files:
        append.append_file(file)
    append.commit()
    snapshot = table.current_snapshot()
    assert snapshot is not None
    return snapshot


def manifests_of(table: Table, snapshot: Snapshot | None = None) -> list[ManifestFile]:
    snapshot = snapshot or table.current_snapshot()
    assert snapshot is not None
    return snapshot.all_manifests(table.io())


def entries_of(table: Table, manifest: ManifestFile) -> list[tuple[Any, ...]]:
    """(status, snapshot id, data seq, file seq, file name) of every entry, in file order."""
    return [
        (e.status, e.snapshot_id, e.sequence_number, e.file_sequence_number, Path(e.data_file.file_path).stem)
        for e in read_manifest(table.io(), manifest)
    ]


def seq_of(format_version: int, n: int) -> int:
    """The sequence number a v2+ commit gets; v1 has none (reads as 0)."""
    return n if format_version > 1 else 0


def write_added_manifest(
    table: Table, name: str, files: Iterable[DataFile], *, snapshot_id: int | None = None
) -> ManifestFile:
    """A manifest of ADDED entries written outside any commit (for append_manifest)."""
    with ManifestWriter(
        table.io(),
        f"{table.location()}/metadata/{name}.avro",
        spec=table.spec(),
        schema=table.schema(),
        format_version=table.format_version(),
        snapshot_id=snapshot_id,
    ) as writer:
        for file in files:
            writer.add(file)
    return writer.to_manifest_file()


class RemoveFiles(SnapshotProducer):
    """Test-only operation: marks files DELETED in the parent's manifests (as Java's
    DeleteFiles does); each manifest holding one is rewritten."""

    operation = "delete"

    def __init__(self, table: Table, paths: Iterable[str]):
        super().__init__(Transaction(table, autocommit=True), autocommit=True)
        self._paths = set(paths)
        self._replaced: set[str] = set()
        self._removed: list[DataFile] = []

    def _new_manifests(self, base: TableMetadata, parent: Snapshot | None) -> list[ManifestFile]:
        assert parent is not None
        result = []
        self._replaced, self._removed = set(), []
        for manifest in parent.data_manifests(self._io):
            entries = [e for e in read_manifest(self._io, manifest) if e.is_live]
            if not any(e.data_file.file_path in self._paths for e in entries):
                continue
            self._replaced.add(manifest.manifest_path)
            with self._new_manifest_writer(base, manifest.partition_spec_id) as writer:
                for e in entries:
                    assert e.snapshot_id is not None
                    if e.data_file.file_path in self._paths:
                        writer.delete(
                            e.data_file, self._snapshot_id, e.sequence_number, e.file_sequence_number
                        )
                        self._removed.append(e.data_file)  # type: ignore[arg-type]
                    else:
                        writer.existing(e.data_file, e.snapshot_id, e.sequence_number, e.file_sequence_number)
            result.append(writer.to_manifest_file())
        return result

    def _carried_manifests(self, base: TableMetadata, parent: Snapshot | None) -> list[ManifestFile]:
        assert parent is not None
        return [m for m in parent.all_manifests(self._io) if m.manifest_path not in self._replaced]

    def _summary(self, base: TableMetadata, builder: SummaryBuilder) -> None:
        for file in self._removed:
            builder.deleted_file(base.specs_by_id()[file.spec_id], base.schema(), file)


class AddDeletes(SnapshotProducer):
    """Test-only operation: adds position delete files in a delete manifest (v2+)."""

    operation = "overwrite"

    def __init__(self, table: Table, deletes: Sequence[DeleteFile]):
        super().__init__(Transaction(table, autocommit=True), autocommit=True)
        self._deletes = list(deletes)

    def _new_manifests(self, base: TableMetadata, parent: Snapshot | None) -> list[ManifestFile]:
        return [self._write_manifest(base, base.default_spec_id, ManifestContent.DELETES, self._deletes)]

    def _summary(self, base: TableMetadata, builder: SummaryBuilder) -> None:
        for file in self._deletes:
            builder.added_file(base.spec(), base.schema(), file)


def fake_position_deletes(table: Table, name: str, bucket: int = 0) -> DeleteFile:
    file: DeleteFile = (
        DataFile.builder(table.spec(), table.schema())
        .with_path(f"/path/to/{name}-deletes.parquet")
        .with_format("parquet")
        .with_file_size_in_bytes(10)
        .with_record_count(1)
        .with_partition([bucket])
        .of_position_deletes()
        .build()
    )
    return file


def assert_no_orphans(table: Table) -> None:
    assert avro_files(table) == referenced_metadata_files(table)


def add_spec(table: Table, partition_by: list[str]) -> PartitionSpec:
    """Evolve the table's partition spec (icefloe has no update_spec() yet: raw updates)."""
    spec = build_spec(table.schema(), partition_by)
    assert table._backend is not None
    table._backend.commit_table(table.identifier_tuple, None, [], [AddPartitionSpec(spec), SetDefaultSpec()])
    table.refresh()
    return table.spec()
