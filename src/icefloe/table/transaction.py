"""Transactions: several operations committed as one new metadata version, or not at all.

Every commit goes through a Transaction, explicit (``table.new_transaction()``) or implicit
(an operation's own ``commit()``). On a retryable conflict (CommitFailedException) the
transaction reloads the table, re-applies every staged operation to the fresh metadata (which
re-runs each operation's validations) and tries again, under the table's ``commit.retry.*``
properties. The outcome decides the cleanup:

- success: files written by earlier failed attempts and not referenced now are deleted;
- CommitFailedException after the last retry, ValidationException, or any other error before
  the swap (a table dropped meanwhile, a damaged file read while re-applying): everything
  written for this commit is deleted (it was definitely not committed);
- CommitStateUnknownException (or any unexpected error during the swap): nothing is deleted,
  because a committed snapshot may reference it.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from icefloe.backends import CatalogBackend, LoadedTable, TableCommit
from icefloe.errors import (
    CommitFailedException,
    CommitStateUnknownException,
    NoSuchTableError,
    UnsupportedFeatureError,
    ValidationError,
)
from icefloe.io import FileIO
from icefloe.spec.builder import MetadataBuilder
from icefloe.spec.properties import (
    COMMIT_MAX_RETRY_WAIT_MS,
    COMMIT_MAX_RETRY_WAIT_MS_DEFAULT,
    COMMIT_MIN_RETRY_WAIT_MS,
    COMMIT_MIN_RETRY_WAIT_MS_DEFAULT,
    COMMIT_NUM_RETRIES,
    COMMIT_NUM_RETRIES_DEFAULT,
    COMMIT_TOTAL_RETRY_TIME_MS,
    COMMIT_TOTAL_RETRY_TIME_MS_DEFAULT,
    int_property,
)
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.updates import AssertCreate, AssertRefSnapshotId, TableRequirement, TableUpdate
from icefloe.table.factories import OperationFactories
from icefloe.table.operation import Changes, PendingUpdate, TableOperations
from icefloe.table.rows.add_files import stage_add_files
from icefloe.table.rows.append_data import append_data
from icefloe.table.rows.conveniences import RowConveniences

__all__ = ["TableDefinition", "Transaction", "commit_transactions"]

log = logging.getLogger(__name__)


class TransactionTable(Protocol):
    """What a transaction needs of the ``Table`` it commits to (a protocol, so that this module
    need not import ``table.py``, which imports it)."""

    _backend: CatalogBackend | None

    @property
    def metadata(self) -> TableMetadata: ...

    @property
    def metadata_location(self) -> str | None: ...

    @property
    def identifier_tuple(self) -> tuple[str, ...]: ...

    def name(self) -> str: ...

    def io(self) -> FileIO: ...

    def _committed_metadata(self) -> TableMetadata: ...

    def _learn_keys(self, metadata: TableMetadata) -> None: ...

    def _set_state(self, metadata: TableMetadata, metadata_location: str | None) -> None: ...


class TableDefinition(Protocol):
    """How a create or replace transaction starts (``catalog/transactions.py``)."""

    def define(self, base: LoadedTable | None) -> Changes:
        """The changes that turn the catalog's table (None: there is none) into the defined
        one; raises (TableAlreadyExistsError, NoSuchTableError, ...) when it cannot."""
        ...


class Transaction(OperationFactories, RowConveniences):
    """Operations staged on one table, committed together by ``commit_transaction()``.

    Operations are created from the transaction with the same builders as ``Table``
    (``txn.new_append()``, ``txn.update_properties()``, ...); each sees the changes staged
    before it. Their ``commit()`` stages them; nothing reaches the catalog until
    ``commit_transaction()``.
    """

    def __init__(
        self, table: TransactionTable, *, autocommit: bool = False, definition: TableDefinition | None = None
    ):
        if table._backend is None:
            raise UnsupportedFeatureError(
                f"table {table.name()} was loaded from a metadata file without a catalog; it is read-only"
            )
        self._table = table
        self._autocommit = autocommit
        self._base = table.metadata
        self._base_location = table.metadata_location
        self._current = table.metadata
        self._staged: list[PendingUpdate[Any]] = []
        self._changes: list[Changes] = []
        self._done = False
        # A create or replace transaction (catalog.create_table_transaction, ...) starts with
        # the changes that define the table; its operations apply on top of them. A table
        # without metadata location is not in the catalog yet.
        self._definition = definition
        self._defining = Changes()
        if definition is not None:
            start = (
                LoadedTable(table.identifier_tuple, self._base_location, self._base)
                if self._base_location
                else None
            )
            self._defining, self._current = _define(definition, start)

    # ---- state seen by operations ------------------------------------------------------------

    @property
    def metadata(self) -> TableMetadata:
        """The table metadata with every staged operation applied."""
        return self._current

    @property
    def table(self) -> TransactionTable:
        """The table this transaction commits to (updated to the commit; for a create
        transaction, the new table once committed)."""
        return self._table

    def io(self) -> FileIO:
        return self._table.io()

    def table_name(self) -> str:
        return self._table.name()

    def committed_metadata(self) -> TableMetadata:
        return self._table._committed_metadata()

    # ---- operations, as on Table (factories.py) ------------------------------------------------

    def _operation_target(self) -> tuple[TableOperations, bool]:
        return self, False

    def add_files(
        self,
        paths: Iterable[str],
        *,
        snapshot_properties: Mapping[str, str] | None = None,
        check_duplicate_files: bool = True,
    ) -> Snapshot:
        """Stage an append of existing Parquet files (see ``Table.add_files``); returns the
        staged snapshot."""
        return stage_add_files(
            self, paths, snapshot_properties=snapshot_properties, check_duplicate_files=check_duplicate_files
        )

    def append(
        self, data: Any, *, snapshot_properties: dict[str, str] | None = None, branch: str | None = None
    ) -> Snapshot | None:
        """Write ``data`` and stage an append of it (see ``Table.append``)."""
        return append_data(self, data, snapshot_properties=snapshot_properties, branch=branch)

    def _stage(self, operation: PendingUpdate[Any]) -> None:
        if self._done:
            raise ValidationError("this transaction was already committed")
        if self._autocommit and not self._staged:
            # An operation's own transaction applies it to the table as it is when the
            # operation commits, not as it was when the operation was created: the table may
            # have committed since (as Java's operations read TableOperations.current() at
            # commit). Otherwise the table's own commit would look like a conflict.
            self._base = self._current = self._table.metadata
            self._base_location = self._table.metadata_location
        self._table._learn_keys(self._current)
        changes = operation._produce(self._current)
        self._current = changes.apply_to(self._current)
        self._staged.append(operation)
        self._changes.append(changes)

    # ---- committing --------------------------------------------------------------------------

    def commit_transaction(self) -> None:
        """Commit every staged operation atomically, retrying on conflicts.

        Raises:
            ValidationException: an operation conflicts with a concurrent change (not retried).
            CommitFailedException: the retries ran out; nothing was committed.
            CommitStateUnknownException: the outcome is unknown; nothing was cleaned up.
        """
        commit_transactions([self])

    # ---- the steps commit_transactions() drives ------------------------------------------------

    def _start(self) -> bool:
        """Mark the transaction committed; False when it has nothing to commit."""
        if self._done:
            raise ValidationError("this transaction was already committed")
        self._done = True
        return bool(self._staged) or self._definition is not None

    def _retry_options(self) -> CommitRetryOptions:
        return CommitRetryOptions.from_properties(self._current.properties)

    def _request(self) -> TableCommit:
        """This transaction's commit as the catalog takes it."""
        table = self._table
        updates, requirements = _combine(self._changes, defining=self._defining if self._definition else None)
        base = (
            LoadedTable(table.identifier_tuple, self._base_location, self._base)
            if self._base_location
            else None
        )
        return TableCommit(table.identifier_tuple, base, requirements, updates)

    def _rebase(self) -> None:
        """After a conflict: reload and re-apply (see ``_reapply``)."""
        self._base, self._base_location = self._reapply()

    def _finish(self, loaded: LoadedTable) -> None:
        self._table._set_state(loaded.metadata, loaded.metadata_location)
        for operation, changes in zip(self._staged, self._changes):
            operation._after_commit(changes)

    def _reapply(self) -> tuple[TableMetadata, str | None]:
        """Reload the table and re-apply every staged operation to its fresh metadata.

        The previous attempt definitely failed, so if reloading or re-applying fails for any
        reason (a conflict, a damaged file, an I/O error) everything this commit wrote is
        deleted before the error propagates.
        """
        try:
            backend = self._table._backend
            assert backend is not None
            loaded: LoadedTable | None
            if self._definition is not None:
                try:
                    loaded = backend.load_table(self._table.identifier_tuple)
                except NoSuchTableError:
                    loaded = None  # a create retries as a create; a replace fails in define()
                defining, current = _define(self._definition, loaded)
            else:
                loaded = backend.load_table(self._table.identifier_tuple)
                defining, current = self._defining, loaded.metadata
                if current.table_uuid != self._base.table_uuid:
                    raise CommitFailedException(
                        f"table {self._table.name()} was dropped and re-created during the commit (uuid changed)"
                    )
            changes: list[Changes] = []
            for operation in self._staged:
                self._table._learn_keys(current)
                produced = operation._produce(current)
                current = produced.apply_to(current)
                changes.append(produced)
        except BaseException:
            self._abort_all()
            raise
        self._changes = changes
        self._defining = defining
        self._current = current
        if loaded is None:
            return current, None
        return loaded.metadata, loaded.metadata_location

    def _abort_all(self) -> None:
        for operation in self._staged:
            try:
                operation._abort()
            except Exception:  # cleanup must never hide the commit's own error
                log.warning("could not clean up after failed commit of %s", operation, exc_info=True)


def commit_transactions(transactions: Sequence[Transaction]) -> None:
    """Commit several transactions as one atomic change of their tables (one table: its
    ``commit_table``; several: the backend's ``commit_tables``), retrying on conflicts.

    On ``CommitFailedException`` every transaction reloads its table and re-applies its
    operations, and all are tried together again, under the first table's ``commit.retry.*``
    properties. The cleanup rules of ``commit_transaction`` hold for each.

    Raises:
        ValidationError: the transactions are not on distinct tables of one catalog, or one
            was already committed.
        ValidationException, CommitFailedException, CommitStateUnknownException: as
            ``commit_transaction``.
    """
    if not transactions:
        return
    backends = {id(t._table._backend) for t in transactions}
    if len(backends) != 1:
        raise ValidationError("a multi-table commit needs transactions on tables of one catalog")
    names = [t._table.identifier_tuple for t in transactions]
    if len(set(names)) != len(names):
        raise ValidationError("a multi-table commit needs one transaction per table")
    active = [t for t in [*transactions] if t._start()]
    if not active:
        return
    try:
        retry = active[0]._retry_options()
        for transaction in active[1:]:
            transaction._retry_options()  # a malformed property fails before anything is sent
    except ValidationError:
        # Nothing reached the catalog: the files the staged operations wrote would be orphans.
        _abort(active)
        raise
    backend = active[0]._table._backend
    assert backend is not None
    started = time.monotonic()
    attempt = 0
    while True:
        commits = [t._request() for t in active]
        try:
            if len(commits) == 1:
                c = commits[0]
                loaded = [backend.commit_table(c.identifier, c.base, c.requirements, c.updates)]
            else:
                loaded = backend.commit_tables(commits)
            break
        except CommitFailedException as exc:
            attempt += 1
            elapsed_ms = (time.monotonic() - started) * 1000
            if attempt > retry.num_retries or elapsed_ms > retry.total_timeout_ms:
                _abort(active)
                raise
            log.info(
                "commit to %s failed (%s); retry %d of %d",
                ", ".join(t._table.name() for t in active),
                exc,
                attempt,
                retry.num_retries,
            )
            time.sleep(retry.wait_ms(attempt) / 1000)
            try:
                for transaction in active:
                    transaction._rebase()
            except BaseException:
                _abort(active)
                raise
        except CommitStateUnknownException:
            raise
        except Exception:
            # ValidationException, NoSuchTableError (dropped meanwhile), ValidationError, a
            # failed read: the catalog turns every uncertain swap outcome into
            # CommitStateUnknownException, so anything else means nothing was committed and
            # the files written for this commit would be orphans.
            _abort(active)
            raise
    for transaction, result in zip(active, loaded):
        transaction._finish(result)


def _abort(transactions: Sequence[Transaction]) -> None:
    for transaction in transactions:
        transaction._abort_all()


@dataclass(frozen=True, slots=True)
class CommitRetryOptions:
    """``commit.retry.*`` with Java's defaults."""

    num_retries: int = COMMIT_NUM_RETRIES_DEFAULT
    min_wait_ms: int = COMMIT_MIN_RETRY_WAIT_MS_DEFAULT
    max_wait_ms: int = COMMIT_MAX_RETRY_WAIT_MS_DEFAULT
    total_timeout_ms: int = COMMIT_TOTAL_RETRY_TIME_MS_DEFAULT

    @classmethod
    def from_properties(cls, properties: Mapping[str, str]) -> CommitRetryOptions:
        """The retry settings of a table.

        Raises:
            ValidationError: naming the property that is malformed, negative, or (max wait)
                below the min wait.
        """
        options = cls(
            num_retries=int_property(properties, COMMIT_NUM_RETRIES, COMMIT_NUM_RETRIES_DEFAULT, minimum=0),
            min_wait_ms=int_property(
                properties, COMMIT_MIN_RETRY_WAIT_MS, COMMIT_MIN_RETRY_WAIT_MS_DEFAULT, minimum=0
            ),
            max_wait_ms=int_property(
                properties, COMMIT_MAX_RETRY_WAIT_MS, COMMIT_MAX_RETRY_WAIT_MS_DEFAULT, minimum=0
            ),
            total_timeout_ms=int_property(
                properties, COMMIT_TOTAL_RETRY_TIME_MS, COMMIT_TOTAL_RETRY_TIME_MS_DEFAULT, minimum=0
            ),
        )
        if options.max_wait_ms < options.min_wait_ms:
            raise ValidationError(
                f"table property '{COMMIT_MAX_RETRY_WAIT_MS}' ({options.max_wait_ms}) must not be below "
                f"'{COMMIT_MIN_RETRY_WAIT_MS}' ({options.min_wait_ms})"
            )
        return options

    def wait_ms(self, attempt: int) -> float:
        """Java's exponential backoff: min-wait doubled per attempt, capped, plus up to 10% jitter."""
        delay = min(self.min_wait_ms * (2.0 ** max(attempt - 1, 0)), float(self.max_wait_ms))
        return delay + random.uniform(0, max(1.0, delay * 0.1))


def _define(definition: TableDefinition, base: LoadedTable | None) -> tuple[Changes, TableMetadata]:
    """The definition's changes for ``base``, and the metadata they give."""
    changes = definition.define(base)
    return changes, MetadataBuilder(base.metadata if base else None).apply_all(changes.updates).build()


def _combine(
    changes: list[Changes], *, defining: Changes | None = None
) -> tuple[list[TableUpdate], list[TableRequirement]]:
    """All updates in order, and the requirements as seen from the transaction's base.

    A later operation's requirement on a ref that an earlier operation of this transaction
    already moved would assert the intermediate state, which the catalog never saw: only the
    first requirement per kind (and per ref) is kept. In a create or replace transaction
    (``defining``: the definition's changes come first), the operations' requirements describe
    the defined table, which the catalog does not have: only the definition's count, and the
    operations' requirements on refs it does not assert (a new branch must still not exist).
    """
    updates: list[TableUpdate] = list(defining.updates) if defining else []
    requirements: list[TableRequirement] = list(defining.requirements) if defining else []
    seen: set[tuple[Any, ...]] = {_requirement_key(r) for r in requirements}
    for change in changes:
        updates.extend(change.updates)
        for requirement in change.requirements:
            if defining is not None and not isinstance(requirement, AssertRefSnapshotId):
                continue
            key = _requirement_key(requirement)
            if key not in seen:
                seen.add(key)
                requirements.append(requirement)
    if any(isinstance(r, AssertCreate) for r in requirements):
        # A table being created has no state yet to assert (the REST catalog's create
        # requirements): the other operations' requirements describe the table this commit makes.
        requirements = [AssertCreate()]
    return updates, requirements


def _requirement_key(requirement: TableRequirement) -> tuple[Any, ...]:
    return (type(requirement), requirement.ref if isinstance(requirement, AssertRefSnapshotId) else None)
