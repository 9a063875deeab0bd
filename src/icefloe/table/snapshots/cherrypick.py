"""The cherry-pick of ``manage_snapshots().cherrypick(id)`` (Java's ``CherryPickOperation``).

Applies the changes of a snapshot that is not an ancestor of main (a staged write-audit-publish
snapshot, or one of another branch) on top of main:

- an ``append`` snapshot: a new ``append`` snapshot adding the same data files;
- a dynamic partition overwrite (``overwrite`` with ``replace-partitions=true``): a new
  ``overwrite`` snapshot adding the same files and removing the same data files, allowed only
  when the picked snapshot's parent is an ancestor of main and no file was added since then to
  a partition it replaced (otherwise the overwrite would drop rows it never saw);
- any snapshot whose parent is main's head (or the first snapshot of an empty table): a
  fast-forward, main simply moves to it, no new snapshot.

The new snapshot's summary carries ``source-snapshot-id`` (and ``published-wap-id`` for a
snapshot with ``wap.id``). Picking a snapshot that is already an ancestor of main, or that an
ancestor was already picked from, or publishing a ``wap.id`` already published, raises
ValidationException, checked again on every retry.
"""

from __future__ import annotations

import dataclasses

from icefloe.errors import UnknownSnapshotError, ValidationException
from icefloe.spec.manifest import DataFile
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.operation import TableOperations
from icefloe.table.snapshots.merging_producer import MergingSnapshotProducer

__all__ = ["SOURCE_SNAPSHOT_ID", "CherryPick", "is_current_ancestor"]

SOURCE_SNAPSHOT_ID = "source-snapshot-id"
PUBLISHED_WAP_ID = "published-wap-id"
STAGED_WAP_ID = "wap.id"
REPLACE_PARTITIONS = "replace-partitions"


def is_current_ancestor(metadata: TableMetadata, snapshot_id: int) -> bool:
    """Whether ``snapshot_id`` is main's head or one of its ancestors."""
    return any(s.snapshot_id == snapshot_id for s in metadata.ancestors_of(metadata.current_snapshot_id))


class CherryPick(MergingSnapshotProducer):
    """The snapshot producer of one cherry-pick; ManageSnapshots drives it (see module doc).

    The picked snapshot's files are read when it is created; ``_produce`` re-validates on
    every base it is applied to.
    """

    def __init__(self, transaction: TableOperations, base: TableMetadata, snapshot_id: int):
        super().__init__(transaction, autocommit=False)
        #: The table's name, for messages.
        self.table_name = transaction.table_name()
        picked = base.snapshot_by_id(snapshot_id)
        if picked is None:
            raise UnknownSnapshotError(
                f"cannot cherry-pick snapshot {snapshot_id}: table {self.table_name} has no snapshot "
                "with this id (unknown snapshot id)",
                snapshot_id=snapshot_id,
            )
        self._picked = picked
        self._require_fast_forward = False
        self._replaced: set[tuple[int, tuple[object, ...]]] | None = None
        operation = picked.operation
        is_dynamic_overwrite = (
            operation == "overwrite" and picked.summary.get(REPLACE_PARTITIONS, "false").lower() == "true"
        )
        if operation == "append" or is_dynamic_overwrite:
            if is_dynamic_overwrite and not (
                picked.parent_snapshot_id is None or is_current_ancestor(base, picked.parent_snapshot_id)
            ):
                raise ValidationException(
                    f"Cannot cherry-pick overwrite not based on an ancestor of the current state: {snapshot_id}"
                )
            wap_id = _validate_wap_publish(base, picked)
            if wap_id:
                self._extra_summary[PUBLISHED_WAP_ID] = wap_id
            self._extra_summary[SOURCE_SNAPSHOT_ID] = str(snapshot_id)
            if is_dynamic_overwrite:
                # Every data file the overwrite removed must still be there to remove.
                self._data_filter.fail_missing_delete_paths = True
                self._replaced = set()
            for file in picked.added_data_files(self._io):
                # Row ids of the copy are assigned by this commit, not inherited from the pick.
                self._add(dataclasses.replace(file, first_row_id=None))
                if self._replaced is not None:
                    self._replaced.add((file.spec_id, tuple(file.partition)))
            if is_dynamic_overwrite:
                removed: list[DataFile] = picked.removed_data_files(self._io)
                for file in removed:
                    self._remove_data_file(file)
        elif not self.is_fast_forward(base):
            raise ValidationException(
                f"Cannot cherry-pick snapshot {snapshot_id}: not append, dynamic overwrite, or fast-forward"
            )
        else:
            self._require_fast_forward = True

    @property
    def picked(self) -> Snapshot:
        return self._picked

    @property
    def requires_fast_forward(self) -> bool:
        return self._require_fast_forward

    def is_fast_forward(self, base: TableMetadata) -> bool:
        """Whether main can simply move to the picked snapshot (its parent is main's head)."""
        if base.current_snapshot_id is not None:
            return self._picked.parent_snapshot_id == base.current_snapshot_id
        return self._picked.parent_snapshot_id is None

    def _operation_name(self) -> str:
        return self._picked.operation or "append"

    def _validate(self, base: TableMetadata, parent: Snapshot | None) -> None:
        picked_id = self._picked.snapshot_id
        if is_current_ancestor(base, picked_id):
            raise ValidationException(f"Cannot cherrypick snapshot {picked_id}: already an ancestor")
        for ancestor in base.ancestors_of(base.current_snapshot_id):
            if ancestor.summary.get(SOURCE_SNAPSHOT_ID) == str(picked_id):
                raise ValidationException(
                    f"Cannot cherrypick snapshot {picked_id}: already picked to create ancestor "
                    f"{ancestor.snapshot_id}"
                )
        if self._replaced is not None and base.current_snapshot_id is not None:
            self._validate_replaced_partitions(base)
        _validate_wap_publish(base, self._picked)

    def _validate_replaced_partitions(self, base: TableMetadata) -> None:
        assert self._replaced is not None
        parent_id = self._picked.parent_snapshot_id
        if parent_id is not None and not is_current_ancestor(base, parent_id):
            raise ValidationException(
                f"Cannot cherry-pick overwrite, based on non-ancestor of the current state: {parent_id}"
            )
        # The files added to main since the picked overwrite's parent (Java's SnapshotUtil.newFiles).
        for snapshot in base.ancestors_of(base.current_snapshot_id):
            if snapshot.snapshot_id == parent_id:
                break
            for file in snapshot.added_data_files(self._io):
                if (file.spec_id, tuple(file.partition)) in self._replaced:
                    raise ValidationException(
                        f"Cannot cherry-pick replace partitions with changed partition: {tuple(file.partition)} "
                        f"(file {file.file_path} was added by snapshot {snapshot.snapshot_id})"
                    )


def _validate_wap_publish(base: TableMetadata, picked: Snapshot) -> str | None:
    """The picked snapshot's ``wap.id``; ValidationException if main already published it."""
    wap_id = picked.summary.get(STAGED_WAP_ID)
    if not wap_id:
        return None
    for ancestor in base.ancestors_of(base.current_snapshot_id):
        if ancestor.summary.get(PUBLISHED_WAP_ID) == wap_id:
            raise ValidationException(
                f"Duplicate request to cherry pick wap id that was published already: {wap_id} "
                f"(published by snapshot {ancestor.snapshot_id})"
            )
    return wap_id
