"""The PendingUpdate contract shared by every table operation, and what operations need of a table.

An operation is a builder. ``_produce(base)`` turns a base TableMetadata into ``Changes``
(updates + requirements) and re-runs the operation's validations; it may write files (new
manifests) that the changes reference. ``apply()`` returns what Java's ``apply()`` returns,
committing nothing. ``commit()`` hands the operation to a transaction: the table's own
auto-committing one, or the explicit transaction it was created from.

Operations see that transaction only through :class:`TableOperations` (Java's interface of the
same name): the metadata, the FileIO, the table's name, the catalog's committed state, staging
and committing. So operations do not import ``Transaction``, and ``Transaction`` and ``Table``
import the operations (through ``factories.py``) without a cycle.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from icefloe.errors import ValidationError
from icefloe.io import FileIO
from icefloe.spec.builder import MetadataBuilder
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.updates import TableRequirement, TableUpdate

__all__ = ["Changes", "PendingUpdate", "TableOperations"]

log = logging.getLogger(__name__)

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Changes:
    """What one operation contributes to a commit."""

    updates: Sequence[TableUpdate] = ()
    requirements: Sequence[TableRequirement] = ()
    #: Files this attempt wrote that the new metadata references (deleted if the commit fails).
    written_files: Sequence[str] = field(default_factory=tuple)

    def apply_to(self, base: TableMetadata) -> TableMetadata:
        return MetadataBuilder(base).apply_all(self.updates).build()


class TableOperations(Protocol):
    """What an operation needs of the table it changes; a ``Transaction`` provides it."""

    @property
    def metadata(self) -> TableMetadata:
        """The metadata with every operation staged so far applied."""
        ...

    def io(self) -> FileIO:
        """The FileIO of the table's files."""
        ...

    def table_name(self) -> str:
        """The table's full name, for messages."""
        ...

    def committed_metadata(self) -> TableMetadata:
        """The table's metadata as the catalog holds it now (loaded afresh)."""
        ...

    def _stage(self, operation: PendingUpdate[Any]) -> None:
        """Add ``operation`` to what the next commit applies."""
        ...

    def commit_transaction(self) -> None:
        """Commit what is staged, as one new metadata version."""
        ...


class PendingUpdate(ABC, Generic[R]):
    """Base of every operation (``new_append()``, ``update_properties()``, ...)."""

    def __init__(self, transaction: TableOperations, *, autocommit: bool):
        self._transaction = transaction
        self._autocommit = autocommit
        self._committed = False

    @property
    def _base(self) -> TableMetadata:
        """The metadata this operation applies to now (the transaction's latest state)."""
        return self._transaction.metadata

    def _check_mutable(self) -> None:
        """Builder methods call this first: once committed (staged in a transaction), the
        operation is what the transaction will commit, and re-applies on a retry. Changing it
        then would change that commit behind the caller's back, and an append would delete
        the manifests the staged changes reference (a table pointing at missing files)."""
        if self._committed:
            raise ValidationError("this operation was already committed; create a new one to change more")

    @abstractmethod
    def _produce(self, base: TableMetadata) -> Changes:
        """Validate against ``base`` and compute this operation's changes. Called again on retry."""

    @abstractmethod
    def _result(self, base: TableMetadata, changes: Changes) -> R:
        """The value ``apply()`` returns."""

    def apply(self) -> R:
        """The result of this operation on the current metadata, without committing.

        Like Java's ``apply()``, it may write files (new manifests and a manifest list) that a
        later ``commit()`` of the same operation reuses; an operation that is applied and then
        abandoned leaves them behind.

        Raises:
            ValidationError: the operation was already committed (staged in a transaction):
                re-producing it would replace the files its staged changes reference.
        """
        self._check_mutable()
        base = self._base
        return self._result(base, self._produce(base))

    def commit(self) -> None:
        """Commit the operation (or, inside an explicit transaction, stage it there).

        Raises:
            ValidationException: the operation conflicts with the table's state.
            CommitFailedException: retries were exhausted; nothing was committed.
            CommitStateUnknownException: the outcome is unknown; nothing was cleaned up.
        """
        if self._committed:
            raise ValidationError("this operation was already committed; create a new one")
        self._committed = True
        try:
            self._transaction._stage(self)
        except Exception:
            # Staging never reaches the catalog: files this operation wrote so far (manifests,
            # data files it owns) are referenced by nothing and would be orphans.
            try:
                self._abort()
            except Exception:  # cleanup must never hide the staging error
                log.warning("could not clean up after failing to stage %s", self, exc_info=True)
            raise
        if self._autocommit:
            self._transaction.commit_transaction()

    def _after_commit(self, committed: Changes) -> None:
        """Called once the commit succeeded, with the changes that were committed.

        Operations that wrote files in earlier, failed attempts delete those that the committed
        metadata does not reference.
        """

    def _abort(self) -> None:
        """Called when the commit definitely failed: delete every file this operation wrote."""
