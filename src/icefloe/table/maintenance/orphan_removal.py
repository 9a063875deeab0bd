"""One ``remove_orphan_files`` run, the same for both implementations: check and refresh,
parse the rules, find what metadata reaches, list the location, pick the orphans, delete.

The three heavy steps are the engine's (:class:`OrphanSteps`): plain Python reads manifests
in worker processes and deletes on threads (``icefloe.actions``), Spark does both in tasks
(``icefloe.spark.actions``). The rules are in :mod:`icefloe.table.maintenance.orphans`.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from icefloe.io import FileIO, strip_trailing_slash
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.inspect.metadata_tables import InspectedTable
from icefloe.table.maintenance.compaction import ProgressLine
from icefloe.table.maintenance.orphans import OrphanRules, check_gc_for_orphans, hidden_exceptions
from icefloe.table.maintenance.results import RemoveOrphanFilesResult

__all__ = ["OrphanSteps", "OrphanTarget", "remove_orphans"]

Listed = list[tuple[str, int | None]]  # (location, modified ms or None)


class OrphanTarget(InspectedTable, Protocol):
    """What a run needs of a table (``icefloe.Table`` has it)."""

    def refresh(self) -> object: ...


@dataclass(frozen=True)
class OrphanSteps:
    """How an engine does the heavy steps."""

    reachable: Callable[[FileIO, TableMetadata, str | None], set[str]]  # (io, metadata, current file)
    listed: Callable[[FileIO, str, frozenset[str]], Listed]  # (io, root, hidden exceptions)
    delete: Callable[[FileIO, list[str]], Iterable[str]]  # the locations that failed


def remove_orphans(
    table: OrphanTarget,
    steps: OrphanSteps,
    *,
    older_than: dt.datetime | int | None,
    location: str | None,
    dry_run: bool,
    equal_schemes: Mapping[str, str] | None,
    equal_authorities: Mapping[str, str] | None,
    prefix_mismatch_mode: str,
    progress: Callable[[str], None] | None,
) -> RemoveOrphanFilesResult:
    """The run both ``remove_orphan_files`` share (their docstrings say what the arguments mean).

    Raises:
        ValidationException: ``gc.enabled`` is false; or, in ``"error"`` mode, a prefix
            mismatch (nothing is deleted).
        ValidationError: bad arguments.
    """

    def say(line: str) -> None:
        if progress is not None:
            progress(line)

    table.refresh()  # judge against the newest metadata
    metadata = table.metadata
    check_gc_for_orphans(metadata)
    rules = OrphanRules.parse(
        older_than=older_than,
        equal_schemes=equal_schemes,
        equal_authorities=equal_authorities,
        prefix_mismatch_mode=prefix_mismatch_mode,
        dry_run=dry_run,
        table_name=table.name(),
    )
    root = strip_trailing_slash(location if location is not None else metadata.location)
    io = table.io()

    started = time.perf_counter()
    reachable = steps.reachable(io, metadata, table.metadata_location)
    say(f"{len(reachable)} files reachable from metadata ({time.perf_counter() - started:.1f}s)")
    started = time.perf_counter()
    listed = steps.listed(io, root, hidden_exceptions(metadata))
    say(f"listed {len(listed)} files under {root} ({time.perf_counter() - started:.1f}s)")

    orphans = rules.orphans(listed, reachable)
    result = RemoveOrphanFilesResult(orphan_file_locations=orphans)
    if dry_run or not orphans:
        return result
    started = time.perf_counter()
    result.failed_deletes = sorted(steps.delete(io, orphans))
    deleted = len(orphans) - len(result.failed_deletes)
    say(
        ProgressLine(
            f"deleted {deleted} of {len(orphans)} orphan files ({time.perf_counter() - started:.1f}s)",
            step="files",
            done=deleted,
            total=len(orphans),
        )
    )
    return result
