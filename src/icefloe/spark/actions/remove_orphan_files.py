"""``remove_orphan_files`` on Spark (private; Java's ``DeleteOrphanFilesSparkAction``).

The rules (what is reachable, hidden, an orphan; prefix mismatches; ``older_than``) are
``table/maintenance/orphans.py``, shared with ``icefloe.actions``. Here Spark does the work:
manifest lists and manifests are read in Spark tasks; the location is listed on the driver
down to a few levels and the directories below are listed in Spark tasks; orphans are deleted
in Spark tasks.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pyarrow.fs as pafs
from pyspark.sql import SparkSession

from icefloe.io import FileIO
from icefloe.io.encryption import manifest_list_keys
from icefloe.manifests import read_manifest_list
from icefloe.manifests.reader import manifest_records, read_manifest_bytes
from icefloe.spark.actions.expire_snapshots import delete_in_tasks
from icefloe.spark.jobs import map_in_tasks
from icefloe.spark.jobs import parallelism as jobs_parallelism
from icefloe.spark.tables import resolve_table
from icefloe.spec.manifest import ManifestFile
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.maintenance.orphan_removal import OrphanSteps, remove_orphans
from icefloe.table.maintenance.orphans import PREFIX_MISMATCH_MODES, hidden, metadata_paths
from icefloe.table.maintenance.results import RemoveOrphanFilesResult
from icefloe.table.table import Table

__all__ = ["PREFIX_MISMATCH_MODES", "RemoveOrphanFilesResult", "remove_orphan_files"]

#: The driver lists this many directory levels, and stops descending into a directory with more
#: sub-directories than this (Java: 3 and 10); the rest is listed in Spark tasks.
_DRIVER_DEPTH = 3
_DRIVER_MAX_SUBDIRS = 10


def remove_orphan_files(
    spark: SparkSession,
    table: Table | str,
    *,
    older_than: dt.datetime | int | None = None,
    location: str | None = None,
    dry_run: bool = False,
    equal_schemes: Mapping[str, str] | None = None,
    equal_authorities: Mapping[str, str] | None = None,
    prefix_mismatch_mode: str = "error",
    parallelism: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> RemoveOrphanFilesResult:
    """Find (and unless ``dry_run``, delete) the files under ``location`` that no metadata of
    the table reaches and that are older than ``older_than``. See the module docstring.

    Args:
        spark: the session.
        table: a :class:`Table` (refreshed here) or an identifier.
        older_than: only files modified before this (datetime, naive = UTC, or epoch ms);
            default three days ago. Later than one minute ago is refused unless ``dry_run``.
        location: where to look (default the table's location).
        dry_run: only report the orphans.
        equal_schemes: more schemes to treat as equal, ``{"s3a,s3n": "s3"}`` style (a key may
            list several, comma-separated); added to the default ``{"s3n,s3a": "s3"}``.
        equal_authorities: authorities to treat as equal, in the same style.
        prefix_mismatch_mode: ``"error"``, ``"ignore"`` or ``"delete"``.
        parallelism: Spark tasks for reading manifests and deleting (default the session's
            default parallelism).
        progress: called with a line per step.

    Raises:
        ValidationException: ``gc.enabled`` is false; or, in ``"error"`` mode, a prefix
            mismatch (nothing is deleted).
        ValidationError: bad arguments.
    """
    slices = parallelism or jobs_parallelism(spark)
    return remove_orphans(
        resolve_table(table),
        OrphanSteps(
            reachable=lambda io, metadata, current: _reachable(spark, io, metadata, current, slices),
            listed=lambda io, root, exceptions: _list(spark, io, root, exceptions, slices),
            delete=lambda io, orphans: delete_in_tasks(spark, io, orphans, parallelism=parallelism),
        ),
        older_than=older_than,
        location=location,
        dry_run=dry_run,
        equal_schemes=equal_schemes,
        equal_authorities=equal_authorities,
        prefix_mismatch_mode=prefix_mismatch_mode,
        progress=progress,
    )


# ---- reachable files ----------------------------------------------------------------------------


def _reachable(
    spark: SparkSession, io: FileIO, metadata: TableMetadata, current: str | None, slices: int
) -> set[str]:
    """Every location the table's metadata reaches (see the module docstring)."""
    paths = metadata_paths(metadata, current)
    snapshots = list(metadata.snapshots)
    if not snapshots:
        return paths

    # An encrypted table's list keys, opened here: the executors need no KMS.
    list_keys = manifest_list_keys(io, snapshots)

    def manifests_of(part: list[Snapshot]) -> Iterator[ManifestFile]:
        for snapshot in part:
            if snapshot.manifest_list:
                yield from read_manifest_list(
                    io, snapshot.manifest_list, key_metadata=list_keys.get(snapshot.manifest_list)
                )
            else:  # an old v1 snapshot listing its manifests inline
                yield from snapshot.all_manifests(io)

    listed = map_in_tasks(spark, snapshots, manifests_of, slices=slices)
    manifests = list({m.manifest_path: m for m in listed}.values())
    paths.update(m.manifest_path for m in manifests)

    def files_of(part: list[ManifestFile]) -> Iterator[str]:
        for manifest in part:
            layout, blocks = manifest_records(read_manifest_bytes(io, manifest), manifest.manifest_path)
            n_file, n_path = layout.data_file, layout.file_path
            for block in blocks:
                for record in block:
                    yield record[n_file][n_path]

    if manifests:
        paths.update(map_in_tasks(spark, manifests, files_of, slices=slices))
    return paths


# ---- listing ------------------------------------------------------------------------------------


def _list(
    spark: SparkSession, io: FileIO, root: str, exceptions: frozenset[str], slices: int
) -> list[tuple[str, int | None]]:
    """(location, modified ms or None) of every file under ``root`` (in ``root``'s spelling),
    hidden files and directories left out."""
    fs, base = io.arrow_filesystem(root)
    base = base.rstrip("/")
    files: list[tuple[str, int | None]] = []
    pending: list[str] = []  # relative directories left for Spark tasks
    level = [""]
    for _ in range(_DRIVER_DEPTH):
        below: list[str] = []
        for relative in level:
            subdirs = []
            for info in _children(fs, _join(base, relative)):
                name = info.base_name
                if hidden(name, exceptions):
                    continue
                child = f"{relative}/{name}" if relative else name
                if info.type == pafs.FileType.Directory:
                    subdirs.append(child)
                elif info.type == pafs.FileType.File:
                    files.append((f"{root}/{child}", _mtime(info)))
            if len(subdirs) > _DRIVER_MAX_SUBDIRS:
                pending.extend(subdirs)
            else:
                below.extend(subdirs)
        level = below
        if not level:
            break
    pending.extend(level)
    if not pending:
        return files

    def list_below(part: list[str]) -> Iterator[tuple[str, int | None]]:
        task_fs, task_base = io.arrow_filesystem(root)
        task_base = task_base.rstrip("/")
        for relative in part:
            directory = _join(task_base, relative)
            for info in task_fs.get_file_info(
                pafs.FileSelector(directory, recursive=True, allow_not_found=True)
            ):
                if info.type != pafs.FileType.File:
                    continue
                inner = info.path[len(directory) :].lstrip("/")
                if any(hidden(part, exceptions) for part in inner.split("/")):
                    continue
                yield (f"{root}/{relative}/{inner}", _mtime(info))

    files.extend(map_in_tasks(spark, pending, list_below, slices=slices))
    return files


def _join(base: str, relative: str) -> str:
    return f"{base}/{relative}" if relative else (base or "/")


def _children(fs: Any, directory: str) -> list[Any]:
    infos: list[Any] = fs.get_file_info(pafs.FileSelector(directory, recursive=False, allow_not_found=True))
    return infos


def _mtime(info: Any) -> int | None:
    ns = info.mtime_ns
    return None if ns is None else ns // 1_000_000
