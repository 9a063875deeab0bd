"""Which table names in a statement are icefloe tables, and in which form.

A name resolves against the statement's catalog (``isp.sql(..., catalog=)``, default
``icefloe.load_catalog()``), with or without the catalog's name in front (``cat.db.t`` or
``db.t``). After a table's name may come, as in Java's Spark catalog, a metadata table
(``db.t.files``), a branch (``db.t.branch_dev``), a tag (``db.t.tag_v1``) or a snapshot
(``db.t.snapshot_id_123``). Names that resolve to no icefloe table are Spark's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from icefloe.catalog import Catalog, load_catalog
from icefloe.errors import NoSuchNamespaceError, NoSuchTableError, UnsupportedFeatureError
from icefloe.table.inspect import METADATA_TABLES
from icefloe.table.table import Table

__all__ = ["Resolver", "TableRef", "name_parts"]


@dataclass(frozen=True)
class TableRef:
    """A table name of a statement that names an icefloe table.

    Attributes:
        identifier: the table's identifier in the catalog (``db.t``).
        ref: a branch or tag (``db.t.branch_dev``).
        snapshot_id: a snapshot (``db.t.snapshot_id_N``).
        metadata_table: a metadata table of it (``db.t.files``).
    """

    identifier: str
    ref: str | None = None
    snapshot_id: int | None = None
    metadata_table: str | None = None


def name_parts(table: exp.Table) -> list[str]:
    """The dotted parts of a sqlglot table name (``cat.db.t.files`` -> four parts)."""
    return [p.name for p in table.parts]


class Resolver:
    """Resolves names against one catalog, remembering what it looked up for one statement."""

    def __init__(self, catalog: Catalog | str | None) -> None:
        if catalog is None or isinstance(catalog, str):
            catalog = load_catalog(catalog)
        self.catalog = catalog
        self._exists: dict[str, bool] = {}
        self._tables: dict[str, Table] = {}
        #: Temporary views the statement registered (``isp.sql`` drops them after it).
        self.views: list[str] = []

    def exists(self, identifier: str) -> bool:
        if identifier not in self._exists:
            try:
                self._exists[identifier] = self.catalog.table_exists(identifier)
            except (NoSuchNamespaceError, NoSuchTableError, ValueError):
                self._exists[identifier] = False
        return self._exists[identifier]

    def load(self, identifier: str) -> Table:
        if identifier not in self._tables:
            self._tables[identifier] = self.catalog.load_table(identifier)
        return self._tables[identifier]

    def forget(self, identifier: str) -> None:
        """After a statement changed whether (or which) table the identifier names."""
        self._exists.pop(identifier, None)
        self._tables.pop(identifier, None)

    def view_sql(self, parts: Sequence[str]) -> str | None:
        """The Spark SQL of the catalog view ``parts`` names (None: no such view, or a catalog
        without views)."""
        parts = self.strip_catalog(parts)
        if len(parts) < 2:
            return None
        identifier = ".".join(parts)
        try:
            if not self.catalog.view_exists(identifier):
                return None
            representation = self.catalog.load_view(identifier).sql_for("spark")
        except (UnsupportedFeatureError, NoSuchNamespaceError):
            return None
        return representation.sql if representation is not None else None

    def has_views(self) -> bool:
        try:
            self.catalog.view_exists("_icefloe_probe._icefloe_probe")
        except UnsupportedFeatureError:
            return False
        except (NoSuchNamespaceError, ValueError):
            return True
        return True

    def strip_catalog(self, parts: Sequence[str]) -> list[str]:
        """The parts without the catalog's name in front (``spark_catalog``-style prefixes)."""
        if len(parts) > 2 and parts[0].lower() == self.catalog.name.lower():
            return list(parts[1:])
        return list(parts)

    def identifier(self, parts: Sequence[str]) -> str:
        """The catalog identifier a target name (CREATE, DROP) stands for."""
        return ".".join(self.strip_catalog(parts))

    def resolve(self, parts: Sequence[str]) -> TableRef | None:
        """The icefloe table ``parts`` names, or None (a name Spark resolves itself)."""
        parts = self.strip_catalog(parts)
        if len(parts) < 2:
            return None
        full = ".".join(parts)
        if self.exists(full):
            return TableRef(full)
        if len(parts) < 3:
            return None
        head, last = ".".join(parts[:-1]), parts[-1]
        if not self.exists(head):
            return None
        lowered = last.lower()
        if lowered in METADATA_TABLES:
            return TableRef(head, metadata_table=lowered)
        if lowered.startswith("branch_"):
            return TableRef(head, ref=last[len("branch_") :])
        if lowered.startswith("tag_"):
            return TableRef(head, ref=last[len("tag_") :])
        if lowered.startswith("snapshot_id_") and last[len("snapshot_id_") :].isdigit():
            return TableRef(head, snapshot_id=int(last[len("snapshot_id_") :]))
        raise UnsupportedFeatureError(
            f"'{full}': '{last}' after table '{head}' is neither a metadata table, branch_<name>, "
            "tag_<name> nor snapshot_id_<id>"
        )
