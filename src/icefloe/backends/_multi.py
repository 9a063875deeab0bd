"""Multi-table commits: several tables move to their new metadata together, or none does.

Each table's commit is prepared as a single-table commit is (requirements checked on the
current metadata, updates applied, the new metadata file written); then the backend swaps every
pointer in one atomic step (``_swap_pointers``: the SQL catalog in one database transaction,
the in-memory one under its lock). A failed swap deletes every file written; an unknown
outcome is settled by re-reading every pointer: all moved is a success, none moved a definite
failure, anything else ``CommitStateUnknownException``. Backends whose pointers cannot move
together (Hadoop: one file per table) refuse with ``UnsupportedFeatureError``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from icefloe.backends._records import LoadedTable, PreparedCommit, TableCommit
from icefloe.backends.identifiers import identifier_to_string, parse_identifier
from icefloe.errors import (
    CommitFailedException,
    CommitStateUnknownException,
    FileIOError,
    UnsupportedFeatureError,
    ValidationError,
)
from icefloe.spec.table_metadata import TableMetadata

__all__ = ["MultiTableCommits", "PointerSwap"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PointerSwap:
    """One pointer of a multi-table commit: ``old_location`` None registers a new table."""

    identifier: tuple[str, ...]
    old_location: str | None
    new_location: str


class MultiTableCommits:
    """The multi-table half of a catalog backend (mixed into ``CatalogBackend``)."""

    catalog_type: ClassVar[str]
    name: str

    # ---- provided by CatalogBackend ------------------------------------------------------------

    def _prepare_commit(self, commit: TableCommit) -> PreparedCommit:
        raise NotImplementedError

    def _new_metadata_location(self, metadata: TableMetadata, previous_location: str | None) -> str:
        raise NotImplementedError

    def _write_new_file(self, location: str, metadata: TableMetadata) -> None:
        raise NotImplementedError

    def _read_pointer_for_status_check(self, identifier: tuple[str, ...]) -> str | None:
        raise NotImplementedError

    def _delete_quietly(self, locations: Iterable[str]) -> None:
        raise NotImplementedError

    def _after_commit(
        self, ident: tuple[str, ...], old: TableMetadata, new: TableMetadata, new_location: str
    ) -> None:
        raise NotImplementedError

    # ---- the hook ------------------------------------------------------------------------------

    def _swap_pointers(self, swaps: Sequence[PointerSwap]) -> None:
        """Move (or, for ``old_location`` None, create) every pointer atomically.

        Raises:
            CommitFailedException: nothing moved (a pointer had moved, a lock was busy).
            TableAlreadyExistsError: a table to create exists; nothing moved.
            CommitStateUnknownException: the outcome is unknown.
        """
        raise UnsupportedFeatureError(
            f"the {self.catalog_type} catalog '{self.name}' cannot commit several tables atomically"
        )

    # ---- the protocol --------------------------------------------------------------------------

    def commit_tables(self, commits: Sequence[TableCommit]) -> list[LoadedTable]:
        """Commit changes to several tables atomically (each as ``commit_table`` would).

        Returns:
            Each table after the commit, in the order of ``commits``.

        Raises:
            ValidationError: a table appears twice.
            CommitFailedException: a requirement failed or a concurrent commit won; no table
                changed and the files written were deleted.
            CommitStateUnknownException: the outcome is unknown; nothing was deleted.
            NoSuchTableError, TableAlreadyExistsError, ValidationException: as ``commit_table``.
        """
        identifiers = [parse_identifier(c.identifier) for c in commits]
        repeated = sorted({identifier_to_string(i) for i in identifiers if identifiers.count(i) > 1})
        if repeated:
            raise ValidationError(f"a multi-table commit names table(s) {repeated} more than once")
        prepared = [
            self._prepare_commit(TableCommit(ident, c.base, c.requirements, c.updates))
            for ident, c in zip(identifiers, commits)
        ]
        swaps: list[PointerSwap] = []
        written: list[str] = []
        try:
            for item in prepared:
                if item.old is not None and item.new is item.old:
                    continue
                location = self._new_metadata_location(item.new, item.old_location)
                try:
                    self._write_new_file(location, item.new)
                except FileIOError as exc:
                    raise CommitFailedException(
                        f"cannot write the new metadata file {location}: {exc}"
                    ) from exc
                written.append(location)
                swaps.append(PointerSwap(item.identifier, item.old_location, location))
            if swaps:
                self._swap_pointers(swaps)
        except CommitStateUnknownException as exc:
            self._settle(swaps, exc)
        except BaseException:
            # Every other error comes before anything was swapped: the files are orphans.
            self._delete_quietly(written)
            raise
        new_locations = {s.identifier: s.new_location for s in swaps}
        results = []
        for item in prepared:
            current = new_locations.get(item.identifier) or item.old_location
            assert current is not None
            if item.old is not None and item.identifier in new_locations:
                try:
                    self._after_commit(item.identifier, item.old, item.new, current)
                except Exception:  # the commit happened: nothing after it may fail it
                    log.warning(
                        "clean-up after the commit to %s failed", identifier_to_string(item.identifier)
                    )
            results.append(LoadedTable(item.identifier, current, item.new))
        return results

    def _settle(self, swaps: Sequence[PointerSwap], error: Exception) -> None:
        """Return when every pointer moved; raise CommitFailedException (files deleted) when
        none did; else CommitStateUnknownException."""
        try:
            pointers = [self._read_pointer_for_status_check(s.identifier) for s in swaps]
        except Exception as check:
            raise CommitStateUnknownException(
                f"cannot tell whether the multi-table commit succeeded: {error}; checking failed too: {check}"
            ) from error
        if all(p == s.new_location for p, s in zip(pointers, swaps)):
            return
        if all(p == s.old_location for p, s in zip(pointers, swaps)):
            self._delete_quietly([s.new_location for s in swaps])
            raise CommitFailedException(f"the multi-table commit failed: {error}") from error
        raise CommitStateUnknownException(
            f"cannot tell whether the multi-table commit succeeded: {error}"
        ) from error
