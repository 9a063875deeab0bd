"""Resolving the ``table`` argument of the Spark functions."""

from __future__ import annotations

from icefloe.catalog.config import load_catalog
from icefloe.errors import ValidationError
from icefloe.table.table import Table

__all__ = ["resolve_table"]


def resolve_table(table: Table | str) -> Table:
    """``table`` itself, or the table an identifier names in ``icefloe.load_catalog()``."""
    if isinstance(table, Table):
        return table
    if isinstance(table, str):
        return load_catalog().load_table(table)
    raise ValidationError(
        f"table must be an icefloe Table or an identifier string, not {type(table).__name__}"
    )
