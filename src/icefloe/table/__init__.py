"""Tables: the seed's ``Table`` API and the operations that change a table.

- ``table.py``: :class:`Table`; ``transaction.py``: :class:`Transaction`;
  ``operation.py``: ``PendingUpdate`` (every operation) and ``TableOperations`` (what an
  operation needs of a table); ``factories.py``: the ``new_*`` / ``update_*`` builders both
  offer; ``scan.py``: the scan builders (``TableScan``, ...);
- ``updates/``: metadata changes (schema, partition spec, sort order, properties, location,
  statistics, snapshot management: branches, tags, rollback);
- ``snapshots/``: the operations that produce snapshots (append, overwrite, delete, replace
  partitions, rewrite, row delta, cherry-pick) and their machinery (manifest filter and merge,
  conflict checks, summaries);
- ``rows/``: data in: ``append``, ``add_files``, and the row-level conveniences (``delete``,
  ``overwrite``, ``replace_partitions``, ``upsert``);
- ``maintenance/``: ``expire_snapshots``, ``rewrite_manifests``, and the files a table reaches;
- ``view.py``: :class:`View` and its operations (``replace_version``, ``update_properties``,
  ``update_location``).
"""

from icefloe.table.incremental_scan import IncrementalAppendScan, IncrementalChangelogScan
from icefloe.table.scan import BatchScan, TableScan
from icefloe.table.table import Table
from icefloe.table.transaction import Transaction
from icefloe.table.view import View

__all__ = [
    "BatchScan",
    "IncrementalAppendScan",
    "IncrementalChangelogScan",
    "Table",
    "TableScan",
    "Transaction",
    "View",
]
