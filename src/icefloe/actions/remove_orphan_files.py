"""``remove_orphan_files`` without Spark (Java's ``DeleteOrphanFilesSparkAction``'s rules:
``table/maintenance/orphans.py``, shared with ``icefloe.spark.actions``).

Every manifest list and manifest of every snapshot is read (decoded manifests, through the
process-wide cache and worker processes as planning), the table location is listed
recursively through the FileIO's Arrow filesystem, and the orphans are deleted on threads.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping

import pyarrow.fs as pafs

from icefloe.catalog.resolve import resolve_table
from icefloe.io import FileIO
from icefloe.scan import decoded_manifests, manifest_list
from icefloe.spec.manifest import ManifestFile
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.maintenance.orphan_removal import OrphanSteps, remove_orphans
from icefloe.table.maintenance.orphans import hidden, metadata_paths
from icefloe.table.maintenance.reachable_files import delete_files
from icefloe.table.maintenance.results import RemoveOrphanFilesResult
from icefloe.table.table import Table

__all__ = ["remove_orphan_files"]


def remove_orphan_files(
    table: Table | str,
    *,
    older_than: dt.datetime | int | None = None,
    location: str | None = None,
    dry_run: bool = False,
    equal_schemes: Mapping[str, str] | None = None,
    equal_authorities: Mapping[str, str] | None = None,
    prefix_mismatch_mode: str = "error",
    progress: Callable[[str], None] | None = None,
) -> RemoveOrphanFilesResult:
    """Find (and unless ``dry_run``, delete) the files under ``location`` that no metadata of
    the table reaches and that are older than ``older_than``. The same arguments and result as
    ``icefloe.spark.actions.remove_orphan_files`` (see ``icefloe.table.maintenance.orphans``).

    Args:
        table: a :class:`Table` (refreshed here) or an identifier.
        older_than: only files modified before this (datetime, naive = UTC, or epoch ms);
            default three days ago. Later than one minute ago is refused unless ``dry_run``.
        location: where to look (default the table's location).
        dry_run: only report the orphans.
        equal_schemes: more schemes to treat as equal, ``{"s3a,s3n": "s3"}`` style.
        equal_authorities: authorities to treat as equal, in the same style.
        prefix_mismatch_mode: ``"error"``, ``"ignore"`` or ``"delete"``.
        progress: called with a line per step.

    Raises:
        ValidationException: ``gc.enabled`` is false; or, in ``"error"`` mode, a prefix
            mismatch (nothing is deleted).
        ValidationError: bad arguments.
    """
    return remove_orphans(
        resolve_table(table),
        OrphanSteps(reachable=reachable_paths, listed=list_files, delete=delete_files),
        older_than=older_than,
        location=location,
        dry_run=dry_run,
        equal_schemes=equal_schemes,
        equal_authorities=equal_authorities,
        prefix_mismatch_mode=prefix_mismatch_mode,
        progress=progress,
    )


def reachable_paths(io: FileIO, metadata: TableMetadata, current: str | None) -> set[str]:
    """Every location the table's metadata reaches: metadata files, statistics, manifest
    lists, manifests, and every file an entry of them names (deleted entries too)."""
    paths = metadata_paths(metadata, current)
    manifests: dict[str, ManifestFile] = {}
    for snapshot in metadata.snapshots:
        for manifest in manifest_list(io, snapshot):
            manifests.setdefault(manifest.manifest_path, manifest)
    paths.update(manifests)
    for decoded in decoded_manifests(io, list(manifests.values())):
        paths.update(decoded.file_path)
    return paths


def list_files(io: FileIO, root: str, exceptions: frozenset[str]) -> list[tuple[str, int | None]]:
    """(location, modified ms or None) of every file under ``root`` (in ``root``'s spelling),
    hidden files and directories left out."""
    fs, base = io.arrow_filesystem(root)
    base = base.rstrip("/")
    found = []
    for info in fs.get_file_info(pafs.FileSelector(base, recursive=True, allow_not_found=True)):
        if info.type != pafs.FileType.File:
            continue
        relative = info.path[len(base) :].lstrip("/")
        if any(hidden(part, exceptions) for part in relative.split("/")):
            continue
        found.append((f"{root}/{relative}", None if info.mtime_ns is None else info.mtime_ns // 1_000_000))
    return found
