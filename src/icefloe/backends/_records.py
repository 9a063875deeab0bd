"""The records backends hand out and take: a loaded table, one table's commit, a namespace
properties update."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.updates import TableRequirement, TableUpdate

__all__ = ["LoadedTable", "PreparedCommit", "PropertiesUpdateSummary", "TableCommit"]


@dataclass(frozen=True, slots=True)
class LoadedTable:
    """A table as a backend knows it.

    Attributes:
        identifier: namespace levels followed by the table name.
        metadata_location: the current metadata file.
        metadata: the content of that file.
    """

    identifier: tuple[str, ...]
    metadata_location: str
    metadata: TableMetadata
    #: FileIO properties for this table's files from the catalog (a REST catalog's table
    #: ``config`` and best-matching storage credential); empty for other backends.
    io_properties: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PropertiesUpdateSummary:
    """What ``update_namespace_properties`` did, each sorted.

    Attributes:
        removed: keys that were removed.
        updated: keys that were set (added or changed).
        missing: keys asked to be removed that did not exist.
    """

    removed: tuple[str, ...]
    updated: tuple[str, ...]
    missing: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TableCommit:
    """One table's part of a commit: the arguments of ``commit_table``.

    Attributes:
        identifier: the table.
        base: what the caller loaded (saves a read when the pointer has not moved), or None.
        requirements: what must hold on the current metadata.
        updates: what to apply to it.
    """

    identifier: tuple[str, ...]
    base: LoadedTable | None
    requirements: Sequence[TableRequirement]
    updates: Sequence[TableUpdate]


@dataclass(frozen=True, slots=True)
class PreparedCommit:
    """A commit checked and applied in memory, nothing written yet.

    ``old_location`` / ``old`` are None when the commit creates the table; ``new is old`` when
    the updates change nothing.
    """

    identifier: tuple[str, ...]
    old_location: str | None
    old: TableMetadata | None
    new: TableMetadata
