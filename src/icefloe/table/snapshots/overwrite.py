"""OverwriteFiles: ``new_overwrite()`` (Java's ``BaseOverwriteFiles``).

Adds data files and removes data files (by file, or every file whose rows all match a row
filter), as one ``overwrite`` snapshot. Validations, each re-run on every commit attempt:

- ``validate_added_files_match_overwrite_filter()``: every added file's rows match the
  overwrite filter (judged by its partition and metrics), so that the overwrite replaces
  exactly the rows it claims to;
- ``validate_no_conflicting_data()``: no data file that may hold rows matching the conflict
  detection filter (default: the overwrite filter, or everything when files are removed by
  name) was added since ``validate_from_snapshot`` (serializable isolation);
- ``validate_no_conflicting_deletes()``: no delete file applying to such rows, and no removal
  of such data files, was committed since then; no new delete applies to a file this
  overwrite removes (snapshot isolation and above).
"""

from __future__ import annotations

from icefloe.errors import ValidationException
from icefloe.expressions import AlwaysFalse, Expression, always_true
from icefloe.spec.manifest import DataFile
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.operation import TableOperations
from icefloe.table.snapshots.manifest_filter import FileEvaluator
from icefloe.table.snapshots.merging_producer import MergingSnapshotProducer, as_expression

__all__ = ["OverwriteFiles"]


class OverwriteFiles(MergingSnapshotProducer):
    """``table.new_overwrite()``."""

    operation = "overwrite"

    def __init__(self, transaction: TableOperations, *, autocommit: bool):
        super().__init__(transaction, autocommit=autocommit)
        self._validate_added_match = False
        self._validate_new_data = False
        self._validate_new_deletes = False
        self._conflict_filter: Expression | None = None

    def add_file(self, file: DataFile) -> OverwriteFiles:
        self._add(file)
        return self

    def delete_file(self, file: DataFile) -> OverwriteFiles:
        self._remove_data_file(file)
        return self

    def overwrite_by_row_filter(self, expr: Expression | str) -> OverwriteFiles:
        """Remove every data file whose rows all match ``expr`` (a file where only some rows
        match fails the commit: row-level deletes are needed for it)."""
        self._delete_by_row_filter(expr)
        return self

    def validate_added_files_match_overwrite_filter(self) -> OverwriteFiles:
        self._check_mutable()
        self._validate_added_match = True
        return self

    def validate_no_conflicting_data(self) -> OverwriteFiles:
        """Fail on data committed since the starting snapshot that the conflict detection
        filter matches; also when a file to delete is gone (as Java)."""
        self._check_mutable()
        self._validate_new_data = True
        self._fail_missing_deletes()
        return self

    def validate_no_conflicting_deletes(self) -> OverwriteFiles:
        """Fail on deletes committed since the starting snapshot that may apply to the rows
        this overwrite replaces; also when a file to delete is gone (as Java)."""
        self._check_mutable()
        self._validate_new_deletes = True
        self._fail_missing_deletes()
        return self

    def _fail_missing_deletes(self) -> None:
        self._data_filter.fail_missing_delete_paths = True
        self._data_filter._invalidate()

    def _operation_name(self) -> str:
        # Java's BaseOverwriteFiles.operation(): named after what the commit does.
        removes = self._data_filter.removes_files_explicitly
        if removes and not self._adds_data:
            return "delete"
        if self._adds_data and not removes:
            return "append"
        return "overwrite"

    def conflict_detection_filter(self, expr: Expression | str) -> OverwriteFiles:
        self._check_mutable()
        self._conflict_filter = as_expression(expr)
        return self

    # ---- validation -------------------------------------------------------------------------

    @property
    def _row_filter(self) -> Expression:
        return self._data_filter.delete_expression

    def _data_conflict_filter(self) -> Expression:
        if self._conflict_filter is not None:
            return self._conflict_filter
        if not isinstance(self._row_filter, AlwaysFalse) and not self._data_filter.delete_files:
            return self._row_filter
        return always_true()

    def _validate(self, base: TableMetadata, parent: Snapshot | None) -> None:
        if self._validate_added_match:
            self._check_added_files_match(base)
        conflicts = self._conflicts(base, parent)
        if self._validate_new_data:
            conflicts.added_data_files(self._data_conflict_filter())
        if self._validate_new_deletes:
            if not isinstance(self._row_filter, AlwaysFalse):
                data_filter = self._conflict_filter if self._conflict_filter is not None else self._row_filter
                conflicts.no_new_delete_files(data_filter)
                conflicts.deleted_data_files(data_filter)
            if self._removed_data_files:
                conflicts.no_new_deletes_for_data_files(
                    list(self._removed_data_files.values()), self._conflict_filter
                )

    def _check_added_files_match(self, base: TableMetadata) -> None:
        specs = base.specs_by_id()
        evaluators: dict[int, FileEvaluator] = {}
        for file, _ in self._added_data.values():
            evaluator = evaluators.get(file.spec_id)
            if evaluator is None:
                evaluator = evaluators[file.spec_id] = FileEvaluator(
                    specs[file.spec_id], base.schema(), self._row_filter, self._case_sensitive
                )
            if not evaluator.rows_must_match(file):
                raise ValidationException(
                    f"Cannot append file with rows that do not match filter: {self._row_filter}: {file.file_path}"
                )
