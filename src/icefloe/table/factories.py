"""The operation builders of the seed's ``Table`` API, written once for ``Table`` and ``Transaction``.

On a ``Table`` each operation commits by itself (through a transaction of its own); on a
``Transaction`` it stages there and commits with ``commit_transaction()``. Both classes mix in
:class:`OperationFactories` and say, in ``_operation_target()``, which transaction an operation
goes to and whether it commits on its own.

Each builder imports its operation when first called (``# lazy:``): a table loaded to be read
does not import the snapshot producers, manifests and pyarrow.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, TypeVar

from icefloe.table.operation import PendingUpdate, TableOperations

if TYPE_CHECKING:
    from icefloe.table.maintenance.expire_snapshots import ExpireSnapshots
    from icefloe.table.maintenance.rewrite_manifests import RewriteManifests
    from icefloe.table.snapshots.append import FastAppend, MergeAppend
    from icefloe.table.snapshots.delete_files import DeleteFiles
    from icefloe.table.snapshots.overwrite import OverwriteFiles
    from icefloe.table.snapshots.replace_partitions import ReplacePartitions
    from icefloe.table.snapshots.rewrite_files import RewriteFiles
    from icefloe.table.snapshots.row_delta import RowDelta
    from icefloe.table.updates.manage_snapshots import ManageSnapshots
    from icefloe.table.updates.replace_sort_order import ReplaceSortOrder
    from icefloe.table.updates.update_location import UpdateLocation
    from icefloe.table.updates.update_properties import UpdateProperties
    from icefloe.table.updates.update_schema import UpdateSchema
    from icefloe.table.updates.update_spec import UpdateSpec
    from icefloe.table.updates.update_statistics import UpdatePartitionStatistics, UpdateStatistics

__all__ = ["OperationFactories"]

Op = TypeVar("Op", bound=PendingUpdate[Any])


class OperationFactories(ABC):
    """``new_append()``, ``update_schema()``, ... as Java's ``Table`` and ``Transaction`` offer them."""

    @abstractmethod
    def _operation_target(self) -> tuple[TableOperations, bool]:
        """The transaction a new operation goes to, and whether the operation commits it."""

    # ---- metadata changes (table/updates/) ---------------------------------------------------

    def update_properties(self) -> UpdateProperties:
        from icefloe.table.updates.update_properties import UpdateProperties  # lazy: the operation

        return self._new(UpdateProperties)

    def update_schema(self) -> UpdateSchema:
        from icefloe.table.updates.update_schema import UpdateSchema  # lazy: the operation

        return self._new(UpdateSchema)

    def update_spec(self) -> UpdateSpec:
        """Evolve the partition spec (``table/updates/update_spec.py``)."""
        from icefloe.table.updates.update_spec import UpdateSpec  # lazy: the operation

        return self._new(UpdateSpec)

    def replace_sort_order(self) -> ReplaceSortOrder:
        from icefloe.table.updates.replace_sort_order import ReplaceSortOrder  # lazy: the operation

        return self._new(ReplaceSortOrder)

    def update_location(self) -> UpdateLocation:
        from icefloe.table.updates.update_location import UpdateLocation  # lazy: the operation

        return self._new(UpdateLocation)

    def update_statistics(self) -> UpdateStatistics:
        from icefloe.table.updates.update_statistics import UpdateStatistics  # lazy: the operation

        return self._new(UpdateStatistics)

    def update_partition_statistics(self) -> UpdatePartitionStatistics:
        from icefloe.table.updates.update_statistics import UpdatePartitionStatistics  # lazy: the operation

        return self._new(UpdatePartitionStatistics)

    def manage_snapshots(self) -> ManageSnapshots:
        """Branches, tags, rollback and cherry-pick (``table/updates/manage_snapshots.py``)."""
        from icefloe.table.updates.manage_snapshots import ManageSnapshots  # lazy: the operation

        return self._new(ManageSnapshots)

    # ---- snapshots (table/snapshots/) ----------------------------------------------------------

    def new_append(self) -> MergeAppend:
        from icefloe.table.snapshots.append import MergeAppend  # lazy: the operation

        return self._new(MergeAppend)

    def new_fast_append(self) -> FastAppend:
        from icefloe.table.snapshots.append import FastAppend  # lazy: the operation

        return self._new(FastAppend)

    def new_overwrite(self) -> OverwriteFiles:
        """Add and remove data files, or overwrite by a row filter (``table/snapshots/overwrite.py``)."""
        from icefloe.table.snapshots.overwrite import OverwriteFiles  # lazy: the operation

        return self._new(OverwriteFiles)

    def new_replace_partitions(self) -> ReplacePartitions:
        """Replace the partitions the added files fall in (``table/snapshots/replace_partitions.py``)."""
        from icefloe.table.snapshots.replace_partitions import ReplacePartitions  # lazy: the operation

        return self._new(ReplacePartitions)

    def new_delete(self) -> DeleteFiles:
        """Remove whole data files (``table/snapshots/delete_files.py``)."""
        from icefloe.table.snapshots.delete_files import DeleteFiles  # lazy: the operation

        return self._new(DeleteFiles)

    def new_rewrite(self) -> RewriteFiles:
        """Replace files by files holding the same rows (``table/snapshots/rewrite_files.py``)."""
        from icefloe.table.snapshots.rewrite_files import RewriteFiles  # lazy: the operation

        return self._new(RewriteFiles)

    def new_row_delta(self) -> RowDelta:
        """Commit row-level changes: data and delete files (``table/snapshots/row_delta.py``)."""
        from icefloe.table.snapshots.row_delta import RowDelta  # lazy: the operation

        return self._new(RowDelta)

    # ---- maintenance (table/maintenance/) ------------------------------------------------------

    def expire_snapshots(self) -> ExpireSnapshots:
        """Remove old snapshots and refs, then delete the files only they reached, once the
        commit succeeded (``table/maintenance/expire_snapshots.py``)."""
        from icefloe.table.maintenance.expire_snapshots import ExpireSnapshots  # lazy: the operation

        return self._new(ExpireSnapshots)

    def rewrite_manifests(self) -> RewriteManifests:
        """Rewrite the current snapshot's manifests (``cluster_by``, ``rewrite_if``,
        ``add_manifest``, ``delete_manifest``; ``table/maintenance/rewrite_manifests.py``)."""
        from icefloe.table.maintenance.rewrite_manifests import RewriteManifests  # lazy: the operation

        return self._new(RewriteManifests)

    def _new(self, kind: type[Op]) -> Op:
        target, autocommit = self._operation_target()
        return kind(target, autocommit=autocommit)
