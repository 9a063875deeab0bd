"""``remove_orphan_files`` on Spark (private; Java's ``DeleteOrphanFilesSparkAction``).

A file under the table's location is an orphan when no metadata of the table reaches it and it
is older than ``older_than``. Reachable are: the current metadata file and those in the
metadata log, ``version-hint.text``, every statistics and partition statistics file, and for
*every* snapshot the table keeps (whatever ref, or none, reaches it) its manifest list, every
manifest it lists and every file any entry of those manifests names (deleted entries too:
keeping a file metadata mentions is never wrong). Manifest lists and manifests are read in
Spark tasks; the location is listed on the driver down to a few levels and the directories
below are listed in Spark tasks; orphans are deleted in Spark tasks.

Comparison is by path (Java's rules): each location is split into scheme, authority and path
(``file:/t/x``, ``file:///t/x`` and ``/t/x`` are one local path). A listed file whose path a
reachable location has is not an orphan when their schemes and authorities agree, where a
reachable location without a scheme (or authority) agrees with any, and ``equal_schemes`` /
``equal_authorities`` say which differing spellings are the same (``s3a`` and ``s3n`` are
``s3`` by default). When they disagree, it is a *prefix mismatch*: ``"error"`` (the default)
refuses to delete anything and names the conflicts, ``"ignore"`` keeps such files,
``"delete"`` treats them as orphans.

As Java's listing (Hadoop's hidden-path filter), files and directories whose names start with
``_`` or ``.`` are skipped (``_SUCCESS``, ``.crc`` checksum files), except directories of a
partition field whose name starts so (``_bucket=3``).

In-flight writes: a commit writes its data files, manifests and metadata file before the
catalog points at them; until then they look like orphans. ``older_than`` is what protects
them: it defaults to three days ago (as Java) and a time later than one minute ago is refused
unless ``dry_run`` (Java's action accepts any time; its SQL procedure refuses less than a
day). A time within the last day is logged as a warning. A file whose storage reports no
modification time is never deleted.
"""

from __future__ import annotations

import datetime as dt
import logging
import posixpath
import time
import urllib.parse
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow.fs as pafs
from pyspark.sql import SparkSession

from icefloe.errors import ValidationError, ValidationException
from icefloe.io import FileIO, metadata_location, split_scheme, strip_trailing_slash
from icefloe.manifests import read_manifest_list
from icefloe.manifests.reader import manifest_records, read_manifest_bytes
from icefloe.spark.actions.expire_snapshots import delete_in_tasks, to_millis
from icefloe.spark.jobs import map_in_tasks
from icefloe.spark.jobs import parallelism as jobs_parallelism
from icefloe.spark.tables import resolve_table
from icefloe.spec.manifest import ManifestFile
from icefloe.spec.properties import GC_ENABLED, GC_ENABLED_DEFAULT, lenient_bool
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.table import Table

__all__ = ["PREFIX_MISMATCH_MODES", "RemoveOrphanFilesResult", "remove_orphan_files"]

log = logging.getLogger(__name__)

PREFIX_MISMATCH_MODES = ("error", "ignore", "delete")
_DEFAULT_AGE_MS = 3 * 24 * 60 * 60 * 1000
_MIN_AGE_MS = 60 * 1000
_WARN_AGE_MS = 24 * 60 * 60 * 1000
_DEFAULT_EQUAL_SCHEMES = {"s3n,s3a": "s3"}
#: The driver lists this many directory levels, and stops descending into a directory with more
#: sub-directories than this (Java: 3 and 10); the rest is listed in Spark tasks.
_DRIVER_DEPTH = 3
_DRIVER_MAX_SUBDIRS = 10
_SHOWN = 10


@dataclass
class RemoveOrphanFilesResult:
    """What :func:`remove_orphan_files` found (Java's ``DeleteOrphanFiles.Result``).

    ``orphan_file_locations`` are the orphans found (deleted unless ``dry_run``);
    ``failed_deletes`` those whose deletion failed after retries.
    """

    orphan_file_locations: list[str] = field(default_factory=list)
    failed_deletes: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Ident:
    scheme: str | None
    authority: str | None
    path: str


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
    if prefix_mismatch_mode not in PREFIX_MISMATCH_MODES:
        raise ValidationError(
            f"unknown prefix_mismatch_mode '{prefix_mismatch_mode}'; expected one of "
            f"{', '.join(PREFIX_MISMATCH_MODES)}"
        )
    resolved = resolve_table(table)
    resolved.refresh()  # judge against the newest metadata
    metadata = resolved.metadata
    if not lenient_bool(metadata.properties, GC_ENABLED, GC_ENABLED_DEFAULT):
        raise ValidationException(
            "Cannot delete orphan files: GC is disabled (deleting files may corrupt other tables); "
            f"table property 'gc.enabled' is '{metadata.properties.get('gc.enabled')}'"
        )
    now = int(time.time() * 1000)
    cutoff = now - _DEFAULT_AGE_MS if older_than is None else to_millis(older_than, "older_than")
    if not dry_run and cutoff > now - _MIN_AGE_MS:
        raise ValidationError(
            f"older_than {cutoff} is later than one minute ago: files of commits in progress would be "
            "deleted as orphans (use a time before any write that may still be running; default 3 days)"
        )
    if cutoff > now - _WARN_AGE_MS:
        log.warning(
            "remove_orphan_files on %s with older_than less than a day ago: files of a commit still in "
            "progress would be deleted",
            resolved.name(),
        )
    schemes = _flatten({**_DEFAULT_EQUAL_SCHEMES, **(equal_schemes or {})}, "equal_schemes")
    authorities = _flatten(dict(equal_authorities or {}), "equal_authorities")
    root = strip_trailing_slash(location if location is not None else metadata.location)
    io = resolved.io()
    slices = parallelism or jobs_parallelism(spark)

    started = time.perf_counter()
    reachable = _reachable(spark, io, metadata, resolved.metadata_location, slices)
    if progress is not None:
        progress(f"{len(reachable)} files reachable from metadata ({time.perf_counter() - started:.1f}s)")
    started = time.perf_counter()
    listed = _list(spark, io, root, _hidden_exceptions(metadata), slices)
    if progress is not None:
        progress(f"listed {len(listed)} files under {root} ({time.perf_counter() - started:.1f}s)")

    valid: dict[str, list[_Ident]] = {}
    for path in reachable:
        ident = _ident(path, schemes, authorities)
        valid.setdefault(ident.path, []).append(ident)
    orphans: list[str] = []
    conflicts: set[tuple[str, str]] = set()
    for path, modified_ms in listed:
        if modified_ms is None or modified_ms >= cutoff:
            continue  # too new (maybe a commit in progress), or of unknown age
        actual = _ident(path, schemes, authorities)
        if actual.scheme is None:  # a listed plain path is a local file (Hadoop lists it as file:)
            actual = _Ident("file", actual.authority, actual.path)
        candidates = valid.get(actual.path)
        if not candidates:
            orphans.append(path)
            continue
        if any(_same(c.scheme, actual.scheme) and _same(c.authority, actual.authority) for c in candidates):
            continue
        if prefix_mismatch_mode == "delete":
            orphans.append(path)
        elif prefix_mismatch_mode == "error":
            for c in candidates:
                if not _same(c.scheme, actual.scheme):
                    conflicts.add(("scheme", f"({c.scheme}, {actual.scheme})"))
                if not _same(c.authority, actual.authority):
                    conflicts.add(("authority", f"({c.authority}, {actual.authority})"))
    if conflicts:
        shown = ", ".join(f"{kind} {pair}" for kind, pair in sorted(conflicts)[:_SHOWN])
        raise ValidationException(
            "Unable to determine whether certain files are orphan: metadata references files that match "
            "listed files except for scheme or authority. Say which are equal with equal_schemes / "
            "equal_authorities, or use prefix_mismatch_mode='ignore' (keep them) or 'delete' (only if you "
            f"are sure they differ: deleted files cannot be recovered). Conflicts (metadata, listed): {shown}"
        )
    orphans.sort()
    result = RemoveOrphanFilesResult(orphan_file_locations=orphans)
    if dry_run or not orphans:
        return result
    started = time.perf_counter()
    result.failed_deletes = sorted(delete_in_tasks(spark, io, orphans, parallelism=parallelism))
    if progress is not None:
        progress(
            f"deleted {len(orphans) - len(result.failed_deletes)} of {len(orphans)} orphan files "
            f"({time.perf_counter() - started:.1f}s)"
        )
    return result


# ---- reachable files ----------------------------------------------------------------------------


def _reachable(
    spark: SparkSession, io: FileIO, metadata: TableMetadata, current: str | None, slices: int
) -> set[str]:
    """Every location the table's metadata reaches (see the module docstring)."""
    paths: set[str] = set()
    if current:
        paths.add(current)
    paths.update(entry.metadata_file for entry in metadata.metadata_log)
    paths.add(metadata_location(metadata.location, metadata.properties, "version-hint.text"))
    paths.update(f.path for f in metadata.statistics)
    paths.update(f.path for f in metadata.partition_statistics)
    snapshots = list(metadata.snapshots)
    paths.update(s.manifest_list for s in snapshots if s.manifest_list)
    if not snapshots:
        return paths

    def manifests_of(part: list[Snapshot]) -> Iterator[ManifestFile]:
        for snapshot in part:
            if snapshot.manifest_list:
                yield from read_manifest_list(io, snapshot.manifest_list)
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


def _hidden_exceptions(metadata: TableMetadata) -> frozenset[str]:
    """Partition field names that start like hidden names (their directories are listed)."""
    return frozenset(
        f.name for spec in metadata.partition_specs for f in spec.fields if f.name[:1] in ("_", ".")
    )


def _hidden(name: str, exceptions: frozenset[str]) -> bool:
    if name[:1] not in ("_", "."):
        return False
    key, sep, _ = name.partition("=")
    return not (sep and key in exceptions)


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
                if _hidden(name, exceptions):
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
                if any(_hidden(part, exceptions) for part in inner.split("/")):
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


# ---- comparing locations ------------------------------------------------------------------------


def _flatten(mapping: Mapping[str, str], name: str) -> dict[str, str]:
    """``{"a,b": "c"}`` -> ``{"a": "c", "b": "c"}`` (lower-cased)."""
    flat: dict[str, str] = {}
    for keys, value in mapping.items():
        if not isinstance(keys, str) or not isinstance(value, str):
            raise ValidationError(f"{name} maps strings to strings, not {keys!r}: {value!r}")
        for key in keys.split(","):
            if key.strip():
                flat[key.strip().lower()] = value.strip().lower()
    return flat


def _ident(location: str, schemes: dict[str, str], authorities: dict[str, str]) -> _Ident:
    """(scheme, authority, normalized path) of a location, with equal spellings mapped."""
    scheme, rest = split_scheme(location)
    authority: str | None = None
    if scheme is None:
        path = rest
    else:
        parsed = urllib.parse.urlsplit(location)
        authority = parsed.netloc or None
        path = parsed.path  # as Hadoop's Path: a literal '%' stays literal
    path = posixpath.normpath(path) if path else "/"
    if path.startswith("//"):  # normpath keeps a leading double slash (POSIX); Hadoop does not
        path = "/" + path.lstrip("/")
    if scheme is not None:
        scheme = schemes.get(scheme, scheme)
    if authority is not None:
        authority = authorities.get(authority.lower(), authority.lower())
    return _Ident(scheme, authority, path)


def _same(valid: str | None, actual: str | None) -> bool:
    """Java's rule: a reachable location without the component agrees with any."""
    return not valid or (actual is not None and valid.lower() == actual.lower())
