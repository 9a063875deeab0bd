"""What each maintenance action did: Java's action ``Result``s, one class per action, shared
by ``icefloe.actions`` (plain Python) and ``icefloe.spark.actions`` (Spark), so code moves
between them."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "ExpireSnapshotsResult",
    "RemoveOrphanFilesResult",
    "RewriteDataFilesResult",
    "RewriteManifestsResult",
    "RewritePositionDeletesResult",
]


@dataclass
class RewriteDataFilesResult:
    """What ``rewrite_data_files`` did (Java's ``RewriteDataFiles.Result``).

    ``commits`` is 0 when nothing needed rewriting; ``failed_groups`` names the commits that
    failed under ``partial-progress.enabled`` (the others landed).
    """

    rewritten_data_files_count: int = 0
    added_data_files_count: int = 0
    rewritten_bytes_count: int = 0
    removed_delete_files_count: int = 0
    commits: int = 0
    failed_groups: list[str] = field(default_factory=list)


@dataclass
class ExpireSnapshotsResult:
    """What ``expire_snapshots`` did (Java's ``ExpireSnapshots.Result``).

    ``failed_deletes`` lists files whose deletion failed after retries (they are orphans now;
    ``remove_orphan_files`` finds them later).
    """

    deleted_data_files_count: int = 0
    deleted_position_delete_files_count: int = 0
    deleted_equality_delete_files_count: int = 0
    deleted_manifests_count: int = 0
    deleted_manifest_lists_count: int = 0
    deleted_statistics_files_count: int = 0
    expired_snapshot_ids: list[int] = field(default_factory=list)
    failed_deletes: list[str] = field(default_factory=list)


@dataclass
class RemoveOrphanFilesResult:
    """What ``remove_orphan_files`` found (Java's ``DeleteOrphanFiles.Result``).

    ``orphan_file_locations`` are the orphans found (deleted unless ``dry_run``);
    ``failed_deletes`` those whose deletion failed after retries.
    """

    orphan_file_locations: list[str] = field(default_factory=list)
    failed_deletes: list[str] = field(default_factory=list)


@dataclass
class RewriteManifestsResult:
    """What ``rewrite_manifests`` did (Java's ``RewriteManifests.Result``)."""

    rewritten_manifests_count: int = 0
    added_manifests_count: int = 0


@dataclass
class RewritePositionDeletesResult:
    """What ``rewrite_position_deletes`` did (Java's ``RewritePositionDeleteFiles.Result``)."""

    rewritten_delete_files_count: int = 0
    added_delete_files_count: int = 0
    rewritten_bytes_count: int = 0
    added_bytes_count: int = 0
