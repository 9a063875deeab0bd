"""RowDelta: ``new_row_delta()`` (Java's ``BaseRowDelta``), the commit of row-level changes.

Adds data files (new and updated rows) and delete files (position deletes, equality deletes,
or in v3 deletion vectors), and may remove data files and delete files (a delete file whose
deletes were merged into a new one). The snapshot operation follows what it does, as in Java:
``append`` when it only adds data files, ``delete`` when it adds delete files and no data,
``overwrite`` otherwise.

Validations (every attempt), against the commits since ``validate_from_snapshot``:

- ``validate_data_files_exist(paths)``: the data files the new position deletes reference were
  not removed (their deletes would point at nothing; by ``delete`` snapshots too only with
  ``validate_deleted_files()``);
- ``validate_no_conflicting_data_files()``: no data file that may hold rows matching the
  conflict detection filter was added (serializable isolation);
- ``validate_no_conflicting_delete_files()``: no delete file that may apply to such rows was
  added, and none applies to a data file this delta removes (snapshot isolation and above);
- in v3, no deletion vector was added for a data file this delta adds one for (two vectors
  for one file: one would be ignored).
"""

from __future__ import annotations

from icefloe.errors import ValidationError
from icefloe.expressions import Expression
from icefloe.spec.manifest import DataFile, DeleteFile, FileContent
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.operation import Changes, TableOperations
from icefloe.table.snapshots.merging_producer import MergingSnapshotProducer, as_expression

__all__ = ["RowDelta"]


class RowDelta(MergingSnapshotProducer):
    """``table.new_row_delta()``."""

    operation = "overwrite"

    def __init__(self, transaction: TableOperations, *, autocommit: bool):
        super().__init__(transaction, autocommit=autocommit)
        self._referenced: set[str] = set()
        self._validate_deletes = False
        self._validate_new_data = False
        self._validate_new_deletes = False
        self._conflict_filter: Expression | None = None

    # ---- builder ----------------------------------------------------------------------------

    def add_rows(self, file: DataFile) -> RowDelta:
        if not isinstance(file, DataFile) or file.content != FileContent.DATA:
            raise ValidationError(f"add_rows takes a DataFile, not {file!r}")
        self._add(file)
        return self

    def add_deletes(self, file: DeleteFile) -> RowDelta:
        if not isinstance(file, DeleteFile) or file.content == FileContent.DATA:
            raise ValidationError(f"add_deletes takes a DeleteFile, not {file!r}")
        self._add(file)
        return self

    def remove_rows(self, file: DataFile) -> RowDelta:
        self._remove_data_file(file)
        return self

    def remove_deletes(self, file: DeleteFile) -> RowDelta:
        self._remove_delete_file(file)
        return self

    def validate_data_files_exist(self, paths: list[str] | set[str] | tuple[str, ...]) -> RowDelta:
        self._check_mutable()
        self._referenced.update(paths)
        return self

    def validate_deleted_files(self) -> RowDelta:
        """Also fail when ``delete`` snapshots removed a referenced data file, and when a
        file this delta removes is gone."""
        self._check_mutable()
        self._validate_deletes = True
        return self

    def validate_no_conflicting_data_files(self) -> RowDelta:
        self._check_mutable()
        self._validate_new_data = True
        return self

    def validate_no_conflicting_delete_files(self) -> RowDelta:
        self._check_mutable()
        self._validate_new_deletes = True
        return self

    def conflict_detection_filter(self, expr: Expression | str) -> RowDelta:
        self._check_mutable()
        self._conflict_filter = as_expression(expr)
        return self

    # ---- producing --------------------------------------------------------------------------

    def _operation_name(self) -> str:
        # Java 1.9's BaseRowDelta.operation(): "delete" when it only adds delete files.
        if self._adds_deletes and not self._adds_data:
            return "delete"
        return "overwrite"

    def _produce(self, base: TableMetadata) -> Changes:
        if self._validate_deletes:
            self._data_filter.fail_missing_delete_paths = True
            self._delete_filter.fail_missing_delete_paths = True
        return super()._produce(base)

    def _validate(self, base: TableMetadata, parent: Snapshot | None) -> None:
        if parent is None:
            return
        if self._starting_snapshot_id is not None and not any(
            s.snapshot_id == self._starting_snapshot_id for s in base.ancestors_of(parent.snapshot_id)
        ):
            raise ValidationError(
                f"Snapshot {self._starting_snapshot_id} is not an ancestor of {parent.snapshot_id}"
            )
        conflicts = self._conflicts(base, parent)
        if self._referenced:
            conflicts.data_files_exist(
                self._referenced, skip_deletes=not self._validate_deletes, data_filter=self._conflict_filter
            )
        if self._validate_new_data:
            conflicts.added_data_files(self._conflict_filter)
        if self._validate_new_deletes:
            if self._removed_data_files:
                conflicts.no_new_deletes_for_data_files(
                    list(self._removed_data_files.values()), self._conflict_filter
                )
            conflicts.no_new_delete_files(self._conflict_filter)
        conflicts.added_dvs(self._added_dv_targets(), self._conflict_filter)
        removed = set(self._removed_data_files)
        for delete, _ in self._added_deletes.values():
            if delete.referenced_data_file in removed:
                raise ValidationError(
                    f"cannot remove data file {delete.referenced_data_file} and add deletes for it "
                    f"({delete.file_path}) in one row delta"
                )
