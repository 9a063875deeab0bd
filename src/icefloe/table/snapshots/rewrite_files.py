"""RewriteFiles: ``new_rewrite()`` (Java's ``BaseRewriteFiles``).

Replaces files by files holding the same rows (compaction, delete-file rewrites): the
snapshot is a ``replace``, which readers of changes skip. Every file to remove must still be
in the table, or the commit fails (another commit removed it; the rewrite is stale).

Added data files get the new snapshot's data sequence number unless ``data_sequence_number``
sets one: a compaction that applied no deletes should keep the sequence number of the data
it read, so that equality deletes committed meanwhile still apply to the rewritten rows.
Added delete files may carry their own data sequence number (``add_file(file, seq)``): a
rewritten position delete must keep applying to the data files its input applied to.

Validation (every attempt): no delete file committed since ``validate_from_snapshot``
applies to a replaced data file (its deleted rows would come back); equality deletes are
ignored when the rewrite keeps the old data sequence number, since they still apply. A
rewrite that adds deletion vectors fails if a DV for the same data file was committed since.
"""

from __future__ import annotations

from icefloe.errors import ValidationError
from icefloe.spec.manifest import ContentFile, FileContent
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.operation import TableOperations
from icefloe.table.snapshots.merging_producer import MergingSnapshotProducer

__all__ = ["RewriteFiles"]


class RewriteFiles(MergingSnapshotProducer):
    """``table.new_rewrite()``."""

    operation = "replace"

    def __init__(self, transaction: TableOperations, *, autocommit: bool):
        super().__init__(transaction, autocommit=autocommit)
        self._data_filter.fail_missing_delete_paths = True
        self._delete_filter.fail_missing_delete_paths = True
        self._new_data_sequence_number: int | None = None
        self._removes_deletes = False

    def delete_file(self, file: ContentFile) -> RewriteFiles:
        """Remove a data or delete file (it must be in the table when the commit applies)."""
        if isinstance(file, ContentFile) and file.content != FileContent.DATA:
            self._remove_delete_file(file)  # type: ignore[arg-type]
            self._removes_deletes = True
        else:
            self._remove_data_file(file)  # type: ignore[arg-type]
        return self

    def add_file(self, file: ContentFile, data_sequence_number: int | None = None) -> RewriteFiles:
        """Add a data or delete file; a delete file may keep an explicit data sequence number."""
        if isinstance(file, ContentFile) and file.content == FileContent.DATA:
            if data_sequence_number is not None:
                raise ValidationError(
                    "set the data sequence number of added data files with data_sequence_number(), "
                    f"not per file ({file.file_path})"
                )
            self._add(file, self._new_data_sequence_number)
        else:
            self._add(file, data_sequence_number)
        return self

    def rewrite_files(
        self,
        files_to_delete: list[ContentFile],
        files_to_add: list[ContentFile],
        data_sequence_number: int | None = None,
    ) -> RewriteFiles:
        """Replace ``files_to_delete`` by ``files_to_add`` (data and delete files alike)."""
        if data_sequence_number is not None:
            self.data_sequence_number(data_sequence_number)
        for file in files_to_delete:
            self.delete_file(file)
        for file in files_to_add:
            self.add_file(file)
        return self

    def data_sequence_number(self, sequence_number: int) -> RewriteFiles:
        """The data sequence number of every added data file (default: the new snapshot's)."""
        self._check_mutable()
        if sequence_number < 0:
            raise ValidationError(f"data sequence number must not be negative: {sequence_number}")
        self._new_data_sequence_number = sequence_number
        for path, (file, _) in list(self._added_data.items()):
            self._added_data[path] = (file, sequence_number)
        self._invalidate_new()
        return self

    def _validate(self, base: TableMetadata, parent: Snapshot | None) -> None:
        removes_data = bool(self._data_filter.delete_files or self._data_filter.delete_paths)
        if not removes_data and not self._removes_deletes:
            raise ValidationError("new_rewrite(): files to delete cannot be empty")
        if not removes_data and self._added_data:
            raise ValidationError(
                "new_rewrite(): data files to add must be empty because there is no data file to be rewritten"
            )
        if self._removed_data_files:
            self._conflicts(base, parent).no_new_deletes_for_data_files(
                list(self._removed_data_files.values()),
                None,
                ignore_equality_deletes=self._new_data_sequence_number is not None,
            )
        # v3: a rewrite that writes deletion vectors (e.g. position deletes turned into DVs)
        # must not race a commit that added a DV for the same data file: readers take one DV
        # per data file, so the other one's deletes would be silently lost.
        dv_targets = self._added_dv_targets()
        if dv_targets:
            self._conflicts(base, parent).added_dvs(dv_targets, None)
