"""Resolving a ``table`` argument: a ``Table``, or an identifier string loaded from the default
catalog (``load_catalog()``). Used by the maintenance actions (plain and Spark) alike."""

from __future__ import annotations

from icefloe.catalog.config import load_catalog
from icefloe.errors import ValidationError
from icefloe.table.table import Table

__all__ = ["resolve_table"]


def resolve_table(table: Table | str) -> Table:
    """``table`` itself, or the table an identifier names in ``icefloe.load_catalog()``.

    Raises:
        NoSuchTableError: the identifier names no table.
        ValidationError: ``table`` is neither.
    """
    if isinstance(table, Table):
        return table
    if isinstance(table, str):
        return load_catalog().load_table(table)
    raise ValidationError(
        f"table must be an icefloe Table or an identifier string, not {type(table).__name__}"
    )
