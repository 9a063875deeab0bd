"""ReplacePartitions: ``new_replace_partitions()`` (Java's ``BaseReplacePartitions``).

Adds data files and removes every file (data and deletes) of the partitions they fall in: a
dynamic partition overwrite. In an unpartitioned table that is every file. The snapshot is an
``overwrite`` with ``replace-partitions=true`` in its summary.

Replacing is idempotent: committing the same replacement twice leaves the same rows. The
validations (``validate_from_snapshot``, ``validate_no_conflicting_data`` and
``validate_no_conflicting_deletes``) make a concurrent write to a replaced partition fail the
commit instead of being silently replaced; ``validate_append_only`` fails it when any existing
file would be replaced.
"""

from __future__ import annotations

from icefloe.expressions import always_true
from icefloe.spec.manifest import DataFile
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.operation import TableOperations
from icefloe.table.snapshots.merging_producer import MergingSnapshotProducer
from icefloe.table.snapshots.summary import SummaryBuilder

__all__ = ["ReplacePartitions"]


class ReplacePartitions(MergingSnapshotProducer):
    """``table.new_replace_partitions()``."""

    operation = "overwrite"

    def __init__(self, transaction: TableOperations, *, autocommit: bool):
        super().__init__(transaction, autocommit=autocommit)
        self._validate_conflicting_data = False
        self._validate_conflicting_deletes = False
        self._replaced: set[tuple[int, tuple[object, ...]]] = set()
        self._replaces_everything = False

    def add_file(self, file: DataFile) -> ReplacePartitions:
        self._add(file)
        spec = self._base.specs_by_id()[file.spec_id]
        if spec.fields:
            partition = tuple(file.partition)
            self._replaced.add((file.spec_id, partition))
            self._drop_partition(file.spec_id, partition)
        elif not self._replaces_everything:
            self._replaces_everything = True
            self._delete_by_row_filter(always_true())
        return self

    def validate_append_only(self) -> ReplacePartitions:
        """Fail the commit if it would replace any existing file."""
        self._check_mutable()
        self._data_filter.fail_any_delete = True
        self._data_filter._invalidate()
        return self

    def validate_no_conflicting_data(self) -> ReplacePartitions:
        self._check_mutable()
        self._validate_conflicting_data = True
        return self

    def validate_no_conflicting_deletes(self) -> ReplacePartitions:
        self._check_mutable()
        self._validate_conflicting_deletes = True
        return self

    def _validate(self, base: TableMetadata, parent: Snapshot | None) -> None:
        conflicts = self._conflicts(base, parent)
        if self._replaces_everything:
            if self._validate_conflicting_data:
                conflicts.added_data_files(always_true())
            if self._validate_conflicting_deletes:
                conflicts.deleted_data_files(always_true())
                conflicts.no_new_delete_files(always_true())
            return
        if self._validate_conflicting_data:
            conflicts.added_data_files(None, self._replaced)
        if self._validate_conflicting_deletes:
            conflicts.deleted_data_files(None, self._replaced)
            conflicts.no_new_delete_files(None, self._replaced)

    def _summary(self, base: TableMetadata, builder: SummaryBuilder) -> None:
        builder.set("replace-partitions", "true")
        super()._summary(base, builder)
