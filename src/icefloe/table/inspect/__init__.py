"""Metadata tables: ``table.inspect.files()`` and Java's fifteen others as ``pyarrow.Table``s.

- ``metadata_tables.py``: :class:`MetadataTables` (``table.inspect``), by table name too;
- ``schemas.py``: Java's schemas (``DataFile.getType``, ``readable_metrics``, the unified
  partition type, ...);
- ``files.py``: the files and entries families from decoded manifests (``_arrays.py``: the
  Arrow arrays of their columns);
- ``partitions.py``, ``position_deletes.py``, ``manifests.py``, ``history.py``: the others;
- ``_select.py``: row filters and column selection.
"""

from icefloe.table.inspect.metadata_tables import METADATA_TABLES, InspectedTable, MetadataTables

__all__ = ["METADATA_TABLES", "InspectedTable", "MetadataTables"]
