"""DeleteFiles: ``new_delete()`` (Java's ``StreamingDelete``).

Removes whole data files, by path, by ``DataFile``, or every file whose rows all match a row
filter; delete files whose rows all match the filter go too. A filter that matches only some
rows of a file cannot be applied by removing files: the commit fails with a
ValidationException (use ``table.delete(where)`` for row-level deletes). The snapshot is a
``delete``.
"""

from __future__ import annotations

from icefloe.expressions import Expression
from icefloe.spec.manifest import DataFile
from icefloe.table.snapshots.merging_producer import MergingSnapshotProducer

__all__ = ["DeleteFiles"]


class DeleteFiles(MergingSnapshotProducer):
    """``table.new_delete()``."""

    operation = "delete"

    def delete_file(self, file: DataFile | str) -> DeleteFiles:
        """Remove a data file, given as a ``DataFile`` or its path."""
        self._remove_data_file(file)
        return self

    def delete_from_row_filter(self, expr: Expression | str) -> DeleteFiles:
        """Remove every file whose rows all match ``expr``."""
        self._delete_by_row_filter(expr)
        return self

    def validate_files_exist(self) -> DeleteFiles:
        """Fail the commit when a file to delete is not in the table (any more)."""
        self._check_mutable()
        self._data_filter.fail_missing_delete_paths = True
        self._data_filter._invalidate()
        return self
