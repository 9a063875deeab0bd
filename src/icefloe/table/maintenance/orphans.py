"""The rules of ``remove_orphan_files`` (Java's ``DeleteOrphanFilesSparkAction``), for both
implementations: which files a table's metadata reaches, which listed files to skip, and
which listed files are orphans.

A file under the table's location is an orphan when no metadata of the table reaches it and it
is older than ``older_than``. Reachable are: the current metadata file and those in the
metadata log, ``version-hint.text``, every statistics and partition statistics file, and for
*every* snapshot the table keeps (whatever ref, or none, reaches it) its manifest list, every
manifest it lists and every file any entry of those manifests names (deleted entries too:
keeping a file metadata mentions is never wrong).

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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from icefloe.errors import ValidationError, ValidationException
from icefloe.io import metadata_location, split_scheme
from icefloe.spec.properties import GC_ENABLED, GC_ENABLED_DEFAULT, lenient_bool
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.maintenance.options import to_millis

__all__ = [
    "PREFIX_MISMATCH_MODES",
    "Location",
    "OrphanRules",
    "check_gc_for_orphans",
    "flatten",
    "hidden",
    "hidden_exceptions",
    "location_of",
    "metadata_paths",
    "same",
]

log = logging.getLogger(__name__)

PREFIX_MISMATCH_MODES = ("error", "ignore", "delete")
DEFAULT_AGE_MS = 3 * 24 * 60 * 60 * 1000
_MIN_AGE_MS = 60 * 1000
_WARN_AGE_MS = 24 * 60 * 60 * 1000
_DEFAULT_EQUAL_SCHEMES = {"s3n,s3a": "s3"}
_SHOWN = 10


@dataclass(frozen=True, slots=True)
class Location:
    """A location as (scheme, authority, normalized path)."""

    scheme: str | None
    authority: str | None
    path: str


def check_gc_for_orphans(metadata: TableMetadata) -> None:
    """Raises ValidationException when ``gc.enabled`` is off."""
    if not lenient_bool(metadata.properties, GC_ENABLED, GC_ENABLED_DEFAULT):
        raise ValidationException(
            "Cannot delete orphan files: GC is disabled (deleting files may corrupt other tables); "
            f"table property 'gc.enabled' is '{metadata.properties.get('gc.enabled')}'"
        )


def metadata_paths(metadata: TableMetadata, current: str | None) -> set[str]:
    """What the metadata itself reaches: metadata files, the version hint, statistics files and
    manifest lists (not the manifests and what they list)."""
    paths: set[str] = set()
    if current:
        paths.add(current)
    paths.update(entry.metadata_file for entry in metadata.metadata_log)
    paths.add(metadata_location(metadata.location, metadata.properties, "version-hint.text"))
    paths.update(f.path for f in metadata.statistics)
    paths.update(f.path for f in metadata.partition_statistics)
    paths.update(s.manifest_list for s in metadata.snapshots if s.manifest_list)
    return paths


def hidden_exceptions(metadata: TableMetadata) -> frozenset[str]:
    """Partition field names that start like hidden names (their directories are listed)."""
    return frozenset(
        f.name for spec in metadata.partition_specs for f in spec.fields if f.name[:1] in ("_", ".")
    )


def hidden(name: str, exceptions: frozenset[str]) -> bool:
    """Whether a file or directory name is hidden from the listing (``_x``, ``.x``), a
    partition directory of an exception field (``_bucket=3``) aside."""
    if name[:1] not in ("_", "."):
        return False
    key, sep, _ = name.partition("=")
    return not (sep and key in exceptions)


def flatten(mapping: Mapping[str, str], name: str) -> dict[str, str]:
    """``{"a,b": "c"}`` -> ``{"a": "c", "b": "c"}`` (lower-cased)."""
    flat: dict[str, str] = {}
    for keys, value in mapping.items():
        if not isinstance(keys, str) or not isinstance(value, str):
            raise ValidationError(f"{name} maps strings to strings, not {keys!r}: {value!r}")
        for key in keys.split(","):
            if key.strip():
                flat[key.strip().lower()] = value.strip().lower()
    return flat


def location_of(location: str, schemes: dict[str, str], authorities: dict[str, str]) -> Location:
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
    return Location(scheme, authority, path)


def same(valid: str | None, actual: str | None) -> bool:
    """Java's rule: a reachable location without the component agrees with any."""
    return not valid or (actual is not None and valid.lower() == actual.lower())


@dataclass(frozen=True)
class OrphanRules:
    """The checked arguments of one ``remove_orphan_files`` run."""

    cutoff_ms: int
    schemes: dict[str, str]
    authorities: dict[str, str]
    prefix_mismatch_mode: str

    @classmethod
    def parse(
        cls,
        *,
        older_than: dt.datetime | int | None,
        equal_schemes: Mapping[str, str] | None,
        equal_authorities: Mapping[str, str] | None,
        prefix_mismatch_mode: str,
        dry_run: bool,
        table_name: str,
    ) -> OrphanRules:
        """Raises ValidationError: an unknown mode, a cutoff within the last minute (unless
        ``dry_run``), malformed equal-spelling maps."""
        if prefix_mismatch_mode not in PREFIX_MISMATCH_MODES:
            raise ValidationError(
                f"unknown prefix_mismatch_mode '{prefix_mismatch_mode}'; expected one of "
                f"{', '.join(PREFIX_MISMATCH_MODES)}"
            )
        now = int(time.time() * 1000)
        cutoff = now - DEFAULT_AGE_MS if older_than is None else to_millis(older_than, "older_than")
        if not dry_run and cutoff > now - _MIN_AGE_MS:
            raise ValidationError(
                f"older_than {cutoff} is later than one minute ago: files of commits in progress would be "
                "deleted as orphans (use a time before any write that may still be running; default 3 days)"
            )
        if cutoff > now - _WARN_AGE_MS:
            log.warning(
                "remove_orphan_files on %s with older_than less than a day ago: files of a commit still in "
                "progress would be deleted",
                table_name,
            )
        return cls(
            cutoff,
            flatten({**_DEFAULT_EQUAL_SCHEMES, **(equal_schemes or {})}, "equal_schemes"),
            flatten(dict(equal_authorities or {}), "equal_authorities"),
            prefix_mismatch_mode,
        )

    def orphans(self, listed: Iterable[tuple[str, int | None]], reachable: Iterable[str]) -> list[str]:
        """The listed files (location, modified ms or None) that are orphans, sorted.

        Raises:
            ValidationException: in ``"error"`` mode, listed files that match reachable ones
                except for scheme or authority (nothing may be deleted then).
        """
        valid: dict[str, list[Location]] = {}
        for path in reachable:
            ident = location_of(path, self.schemes, self.authorities)
            valid.setdefault(ident.path, []).append(ident)
        orphans: list[str] = []
        conflicts: set[tuple[str, str]] = set()
        for path, modified_ms in listed:
            if modified_ms is None or modified_ms >= self.cutoff_ms:
                continue  # too new (maybe a commit in progress), or of unknown age
            actual = location_of(path, self.schemes, self.authorities)
            if actual.scheme is None:  # a listed plain path is a local file (Hadoop lists it as file:)
                actual = Location("file", actual.authority, actual.path)
            candidates = valid.get(actual.path)
            if not candidates:
                orphans.append(path)
                continue
            if any(same(c.scheme, actual.scheme) and same(c.authority, actual.authority) for c in candidates):
                continue
            if self.prefix_mismatch_mode == "delete":
                orphans.append(path)
            elif self.prefix_mismatch_mode == "error":
                for c in candidates:
                    if not same(c.scheme, actual.scheme):
                        conflicts.add(("scheme", f"({c.scheme}, {actual.scheme})"))
                    if not same(c.authority, actual.authority):
                        conflicts.add(("authority", f"({c.authority}, {actual.authority})"))
        if conflicts:
            shown = ", ".join(f"{kind} {pair}" for kind, pair in sorted(conflicts)[:_SHOWN])
            raise ValidationException(
                "Unable to determine whether certain files are orphan: metadata references files that match "
                "listed files except for scheme or authority. Say which are equal with equal_schemes / "
                "equal_authorities, or use prefix_mismatch_mode='ignore' (keep them) or 'delete' (only if you "
                f"are sure they differ: deleted files cannot be recovered). Conflicts (metadata, listed): {shown}"
            )
        return sorted(orphans)
