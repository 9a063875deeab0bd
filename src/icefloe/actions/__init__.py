"""Table maintenance without Spark (``from icefloe import actions``).

The same functions, options and result objects as ``icefloe.spark.actions`` (minus the Spark
session), so code moves between them; what to rewrite, the commits and the rules are shared
(``icefloe.table.maintenance``), only the work runs here, on every core (threads: reading and
writing Parquet releases the GIL). Each takes a :class:`Table` (updated to its commits) or an
identifier of the default catalog, and a ``progress`` callback that receives ``str`` lines;
long steps send a :class:`ProgressLine` (a ``str`` that also carries ``done`` and ``total``).

- :func:`rewrite_data_files`: compaction (bin-pack or sort), deletes applied, delete files
  that apply to nothing afterwards removed; ``partial-progress.*``; through ``new_rewrite()``.
- :func:`rewrite_position_deletes`: compact position deletes, drop dangling ones; v3: into
  deletion vectors.
- :func:`remove_orphan_files`: files under the table's location no metadata reaches.
- :func:`rewrite_manifests`: compact the data manifests, clustered by partition.
- :func:`expire_snapshots`: ``table.expire_snapshots()`` with the Spark action's result.
"""

from icefloe.actions.expire_snapshots import expire_snapshots
from icefloe.actions.remove_orphan_files import remove_orphan_files
from icefloe.actions.rewrite_data_files import rewrite_data_files
from icefloe.actions.rewrite_manifests import rewrite_manifests
from icefloe.actions.rewrite_position_deletes import rewrite_position_deletes
from icefloe.table.maintenance.compaction import ProgressLine
from icefloe.table.maintenance.results import (
    ExpireSnapshotsResult,
    RemoveOrphanFilesResult,
    RewriteDataFilesResult,
    RewriteManifestsResult,
    RewritePositionDeletesResult,
)

__all__ = [
    "ExpireSnapshotsResult",
    "ProgressLine",
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
