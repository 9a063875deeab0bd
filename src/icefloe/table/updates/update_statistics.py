"""UpdateStatistics and UpdatePartitionStatistics (Java's ``SetStatistics`` and
``SetPartitionStatistics``): register or remove the statistics files of snapshots.

One file per snapshot: setting a file for a snapshot replaces the one it had; removing the
file of a snapshot that has none changes nothing. Within one update the last call for a
snapshot wins (as Java's map of pending changes). The commit carries no requirement: the
changes re-apply to fresh metadata as they are. As Java, the snapshot need not exist (a
statistics file is only advice to readers); the statistics files themselves are neither read
nor deleted here. ``apply()`` returns the table's list of statistics files after the update.
"""

from __future__ import annotations

from icefloe.errors import ValidationError
from icefloe.spec.statistics import PartitionStatisticsFile, StatisticsFile
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.updates import (
    RemovePartitionStatistics,
    RemoveStatistics,
    SetPartitionStatistics,
    SetStatistics,
    TableUpdate,
)
from icefloe.table.operation import Changes, PendingUpdate, TableOperations

__all__ = ["UpdatePartitionStatistics", "UpdateStatistics"]


class UpdateStatistics(PendingUpdate[list[StatisticsFile]]):
    """``table.update_statistics().set_statistics(file).remove_statistics(snapshot_id)``."""

    def __init__(self, transaction: TableOperations, *, autocommit: bool):
        super().__init__(transaction, autocommit=autocommit)
        # snapshot id -> the file to set, or None to remove; insertion order is commit order.
        self._pending: dict[int, StatisticsFile | None] = {}

    def set_statistics(self, statistics_file: StatisticsFile) -> UpdateStatistics:
        """Set the statistics file of ``statistics_file.snapshot_id``."""
        self._check_mutable()
        if not isinstance(statistics_file, StatisticsFile):
            raise ValidationError(f"set_statistics takes a StatisticsFile, not {statistics_file!r}")
        self._pending.pop(statistics_file.snapshot_id, None)
        self._pending[statistics_file.snapshot_id] = statistics_file
        return self

    def remove_statistics(self, snapshot_id: int) -> UpdateStatistics:
        """Remove the statistics file of ``snapshot_id`` (if it has one)."""
        self._check_mutable()
        _check_id(snapshot_id)
        self._pending.pop(snapshot_id, None)
        self._pending[snapshot_id] = None
        return self

    def _produce(self, base: TableMetadata) -> Changes:
        updates: list[TableUpdate] = [
            SetStatistics(file) if file is not None else RemoveStatistics(snapshot_id)
            for snapshot_id, file in self._pending.items()
        ]
        return Changes(updates)

    def _result(self, base: TableMetadata, changes: Changes) -> list[StatisticsFile]:
        return list(changes.apply_to(base).statistics)


class UpdatePartitionStatistics(PendingUpdate[list[PartitionStatisticsFile]]):
    """``table.update_partition_statistics().set_partition_statistics(file)
    .remove_partition_statistics(snapshot_id)``."""

    def __init__(self, transaction: TableOperations, *, autocommit: bool):
        super().__init__(transaction, autocommit=autocommit)
        self._pending: dict[int, PartitionStatisticsFile | None] = {}

    def set_partition_statistics(self, statistics_file: PartitionStatisticsFile) -> UpdatePartitionStatistics:
        """Set the partition statistics file of ``statistics_file.snapshot_id``."""
        self._check_mutable()
        if not isinstance(statistics_file, PartitionStatisticsFile):
            raise ValidationError(
                f"set_partition_statistics takes a PartitionStatisticsFile, not {statistics_file!r}"
            )
        self._pending.pop(statistics_file.snapshot_id, None)
        self._pending[statistics_file.snapshot_id] = statistics_file
        return self

    def remove_partition_statistics(self, snapshot_id: int) -> UpdatePartitionStatistics:
        """Remove the partition statistics file of ``snapshot_id`` (if it has one)."""
        self._check_mutable()
        _check_id(snapshot_id)
        self._pending.pop(snapshot_id, None)
        self._pending[snapshot_id] = None
        return self

    def _produce(self, base: TableMetadata) -> Changes:
        updates: list[TableUpdate] = [
            SetPartitionStatistics(file) if file is not None else RemovePartitionStatistics(snapshot_id)
            for snapshot_id, file in self._pending.items()
        ]
        return Changes(updates)

    def _result(self, base: TableMetadata, changes: Changes) -> list[PartitionStatisticsFile]:
        return list(changes.apply_to(base).partition_statistics)


def _check_id(snapshot_id: int) -> None:
    if not isinstance(snapshot_id, int) or isinstance(snapshot_id, bool):
        raise ValidationError(f"snapshot id must be an int, not {snapshot_id!r}")
