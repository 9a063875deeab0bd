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

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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


def __getattr__(name: str) -> Any:
    """The public names, each imported on first use (PEP 562): loading a ``Table`` to read its
    metadata imports neither the scans nor the writers (pyarrow)."""
    value: Any
    if name in ("IncrementalAppendScan", "IncrementalChangelogScan"):
        from icefloe.table import incremental_scan  # lazy: the scan layer (pyarrow)

        value = getattr(incremental_scan, name)
    elif name in ("BatchScan", "TableScan"):
        from icefloe.table import scan  # lazy: the scan layer (pyarrow)

        value = getattr(scan, name)
    elif name == "Table":
        from icefloe.table.table import Table  # lazy: what importing the package need not load

        value = Table
    elif name == "Transaction":
        from icefloe.table.transaction import Transaction  # lazy: the operations (manifests, pyarrow)

        value = Transaction
    elif name == "View":
        from icefloe.table.view import View  # lazy: what importing the package need not load

        value = View
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
