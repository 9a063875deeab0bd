"""Resolving the ``table`` argument of the Spark functions (``icefloe.catalog.resolve_table``)."""

from icefloe.catalog.resolve import resolve_table

__all__ = ["resolve_table"]
