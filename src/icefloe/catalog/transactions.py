"""Create and replace transactions: ``catalog.create_table_transaction(...)``,
``replace_table_transaction(...)`` and ``create_or_replace_table_transaction(...)``.

They are Java's ``Catalog.buildTable(...).createTransaction()`` / ``replaceTransaction()`` /
``createOrReplaceTransaction()``: a ``Transaction`` that starts with the definition of the table
(a :class:`TableDefinition`) and offers every operation of an ordinary one (``new_append()``,
``append(data)``, ``update_properties()``, ...). Nothing reaches the catalog before
``commit_transaction()``, which publishes the definition and every staged operation as one
metadata version.

- **create**: the commit creates the table with an ``assert-create`` requirement (the REST
  catalog's ``CreateTableRequest`` staged-create): if someone created it meanwhile, the commit
  fails with ``TableAlreadyExistsError`` and everything the transaction wrote is deleted.
- **replace**: the table keeps its uuid, snapshots, history, statistics, and every ref but
  ``main``, which is removed: after the commit the table's current snapshot is the one the
  transaction appended, or none. Schema, spec and sort order get fresh ids that reuse the old
  ones by name (Java's ``TableMetadata.buildReplacement``, see ``spec/replacement.py``). The
  commit requires the same table (``assert-table-uuid``); it also requires the branches and
  the last assigned column and partition ids to be unchanged, so that a concurrent commit makes
  it retry: the replacement and every staged operation are then computed again on the fresh
  table (Java commits the replacement computed at the start over whatever is current). A table
  dropped meanwhile fails the commit with ``NoSuchTableError``; one dropped and re-created with
  ``CommitFailedException``.
- **create or replace**: replace when the table exists at commit time, create otherwise.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from icefloe.backends import LoadedTable, identifier_to_string
from icefloe.errors import CommitFailedException, NoSuchTableError, TableAlreadyExistsError
from icefloe.spec.builder import updates_for_new_table
from icefloe.spec.partitioning import PartitionSpec
from icefloe.spec.replacement import updates_for_replacement
from icefloe.spec.schema import Schema
from icefloe.spec.sorting import SortOrder
from icefloe.spec.updates import (
    AssertCreate,
    AssertLastAssignedFieldId,
    AssertLastAssignedPartitionId,
    AssertRefSnapshotId,
    AssertTableUUID,
    TableRequirement,
)
from icefloe.table.operation import Changes

__all__ = ["DefinitionMode", "TableDefinition"]


class DefinitionMode(enum.Enum):
    """What a definition does to the catalog's table (Java's ``TransactionType``)."""

    CREATE = "create"
    REPLACE = "replace"
    CREATE_OR_REPLACE = "create-or-replace"


@dataclass(frozen=True, slots=True)
class TableDefinition:
    """A table as ``create_table_transaction`` and friends define it.

    Attributes:
        identifier: the table's identifier parts.
        mode: create, replace, or create-or-replace.
        schema: the schema with ids of its own; ``spec`` and ``sort_order`` refer to them.
        spec: the partition spec.
        sort_order: the sort order.
        location: the location asked for, or None: a new table goes to ``default_location``,
            a replaced one stays where it is.
        default_location: the catalog's location for a new table of this identifier.
        properties: table properties (``format-version`` included).
        table_uuid: the uuid a created table gets (fixed, so that every attempt creates the same
            table).
        replaced_uuid: the uuid of the table a replace started from, or None; a table with
            another uuid at commit time was dropped and re-created meanwhile.
    """

    identifier: tuple[str, ...]
    mode: DefinitionMode
    schema: Schema
    spec: PartitionSpec
    sort_order: SortOrder
    location: str | None
    default_location: str
    table_uuid: str
    properties: Mapping[str, str] = field(default_factory=dict)
    replaced_uuid: str | None = None

    def define(self, base: LoadedTable | None) -> Changes:
        """The changes that turn the catalog's table (None: there is none) into this table.

        Raises:
            TableAlreadyExistsError: creating, and the table exists.
            NoSuchTableError: replacing, and the table does not exist.
            CommitFailedException: replacing a table that was dropped and re-created.
            ValidationError: the definition does not fit (a bad property, a type the format
                version does not allow, a downgrade of the format version).
        """
        name = identifier_to_string(self.identifier)
        if base is None:
            if self.mode is DefinitionMode.REPLACE:
                raise NoSuchTableError(f"cannot replace table {name}: it does not exist")
            updates = updates_for_new_table(
                self.schema,
                self.spec,
                self.sort_order,
                self.location or self.default_location,
                self.properties,
                table_uuid=self.table_uuid,
            )
            # A created table has no state to assert: only that it does not exist yet.
            return Changes(updates, [AssertCreate()])
        if self.mode is DefinitionMode.CREATE:
            raise TableAlreadyExistsError(f"table {name} already exists")
        current = base.metadata
        if self.replaced_uuid is not None and current.table_uuid != self.replaced_uuid:
            raise CommitFailedException(
                f"cannot replace table {name}: it was dropped and re-created (uuid {self.replaced_uuid} "
                f"is now {current.table_uuid})"
            )
        updates = updates_for_replacement(
            current,
            self.schema,
            self.spec,
            self.sort_order,
            self.location or current.location,
            self.properties,
        )
        requirements: list[TableRequirement] = [
            AssertTableUUID(current.table_uuid),
            AssertLastAssignedFieldId(current.last_column_id),
            AssertLastAssignedPartitionId(current.last_partition_id),
        ]
        # Every branch as it was: a concurrent commit makes the whole transaction re-apply on
        # the fresh table (its snapshots would otherwise take sequence numbers this one uses).
        requirements += [
            AssertRefSnapshotId(ref_name, ref.snapshot_id)
            for ref_name, ref in sorted(current.refs.items())
            if ref.is_branch
        ]
        return Changes(updates, requirements)
