"""Table maintenance distributed over Spark executors (``isp.actions``).

Java's Spark actions; each commits through the given :class:`Table` (which is updated) and
returns a result dataclass.

- :func:`rewrite_data_files`: compaction. Small (or oversized) files, and files with deletes,
  are read with their deletes applied and rewritten at ``write.target-file-size-bytes``
  (bin-pack, or sorted by a sort order), one file group per partition, committed through
  ``new_rewrite()`` with the starting snapshot's sequence number (so equality deletes
  committed meanwhile still apply, as in Java's ``use-starting-sequence-number``).
- :func:`expire_snapshots`: ``table.expire_snapshots()`` (its retention rules, refs,
  ``gc.enabled``), with the expired files deleted in Spark tasks.
- :func:`remove_orphan_files`: delete the files under the table's location that no snapshot,
  metadata file or statistics file reaches (and that are older than ``older_than``).
- :func:`rewrite_manifests`: rewrite the data manifests clustered by partition.
- :func:`rewrite_position_deletes`: compact position delete files and drop dangling deletes
  (v2); turn position delete files into deletion vectors (v3).
"""

from icefloe.spark.actions.expire_snapshots import ExpireSnapshotsResult, expire_snapshots
from icefloe.spark.actions.remove_orphan_files import RemoveOrphanFilesResult, remove_orphan_files
from icefloe.spark.actions.rewrite_data_files import RewriteDataFilesResult, rewrite_data_files
from icefloe.spark.actions.rewrite_manifests import RewriteManifestsResult, rewrite_manifests
from icefloe.spark.actions.rewrite_position_deletes import (
    RewritePositionDeletesResult,
    rewrite_position_deletes,
)

__all__ = [
    "ExpireSnapshotsResult",
    "RemoveOrphanFilesResult",
    "RewriteDataFilesResult",
    "RewriteManifestsResult",
    "RewritePositionDeletesResult",
    "expire_snapshots",
    "remove_orphan_files",
    "rewrite_data_files",
    "rewrite_manifests",
    "rewrite_position_deletes",
]
