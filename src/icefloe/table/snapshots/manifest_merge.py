"""Merging manifests on commit: Java's ``ManifestMergeManager`` and ``BinPacking.ListPacker``.

A merging producer (``new_append()``) hands its new manifests and the manifests it carries
from the parent to ``ManifestMergeManager.merge``, which returns the manifest list of the new
snapshot:

1. Manifests without live entries are dropped, unless this snapshot wrote them (Java's
   ``MergingSnapshotProducer`` does this whether or not merging is enabled).
2. Data and delete manifests are merged separately; within each kind, manifests are grouped
   by partition spec (highest spec id first) and each group is bin-packed by manifest length
   with ``pack_end(group, target, lookback=1)``, which keeps the manifests in order and leaves
   the under-filled bin at the front, where the newest manifests are.
3. A bin of one manifest is kept as it is; so is a bin holding the first manifest of the list
   (the newest one) with fewer than ``commit.manifest.min-count-to-merge`` manifests, so that
   small commits do not rewrite a manifest each time. Every other bin becomes one merged
   manifest: entries ADDED by this snapshot stay ADDED, entries of other snapshots become
   EXISTING with their snapshot id, sequence numbers and (v3) first row id, and DELETED
   entries of earlier snapshots are dropped.

Merged manifests are remembered by their input: a retry that packs the same bin reuses the
file. Merged manifests that an attempt no longer uses are deleted right away; the producer's
usual cleanup deletes the ones the committed snapshot does not reference.

Properties (Java's names and defaults): ``commit.manifest-merge.enabled`` (true),
``commit.manifest.min-count-to-merge`` (100), ``commit.manifest.target-size-bytes`` (8 MiB).
"""

from __future__ import annotations

import dataclasses
import functools
from collections import deque
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from icefloe.errors import InvalidManifestError
from icefloe.io import FileIO
from icefloe.manifests import ManifestWriter, read_manifest
from icefloe.manifests.carried import CarriedBlock, carried_entries
from icefloe.manifests.reader import read_manifest_bytes
from icefloe.spec.manifest import (
    ContentFile,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
)
from icefloe.spec.properties import (
    MANIFEST_MERGE_ENABLED,
    MANIFEST_MERGE_ENABLED_DEFAULT,
    MANIFEST_MIN_MERGE_COUNT,
    MANIFEST_MIN_MERGE_COUNT_DEFAULT,
    MANIFEST_TARGET_SIZE_BYTES,
    MANIFEST_TARGET_SIZE_BYTES_DEFAULT,
    bool_property,
    int_property,
)
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.types import StructType
from icefloe.table.snapshots._existing_blocks import existing_blocks

__all__ = [
    "MANIFEST_MERGE_ENABLED",
    "MANIFEST_MIN_MERGE_COUNT",
    "MANIFEST_MIN_MERGE_COUNT_DEFAULT",
    "MANIFEST_TARGET_SIZE_BYTES_DEFAULT",
    "ManifestMergeManager",
    "MergeOptions",
    "pack_end",
]


T = TypeVar("T")

#: Makes a writer for a new manifest of the snapshot: (base, spec id, content) -> writer.
NewWriter = Callable[[TableMetadata, int, ManifestContent], ManifestWriter]


@dataclass(frozen=True, slots=True)
class MergeOptions:
    """The manifest merge properties of a table, with Java's defaults."""

    enabled: bool = True
    min_count_to_merge: int = MANIFEST_MIN_MERGE_COUNT_DEFAULT
    target_size_bytes: int = MANIFEST_TARGET_SIZE_BYTES_DEFAULT

    @classmethod
    def from_properties(cls, properties: Mapping[str, str]) -> MergeOptions:
        """Raises ValidationError naming a property whose value does not parse."""
        return cls(
            enabled=bool_property(properties, MANIFEST_MERGE_ENABLED, MANIFEST_MERGE_ENABLED_DEFAULT),
            min_count_to_merge=int_property(
                properties, MANIFEST_MIN_MERGE_COUNT, MANIFEST_MIN_MERGE_COUNT_DEFAULT
            ),
            target_size_bytes=int_property(
                properties, MANIFEST_TARGET_SIZE_BYTES, MANIFEST_TARGET_SIZE_BYTES_DEFAULT
            ),
        )


def pack_end(
    items: Sequence[T],
    weight: Callable[[T], int],
    target_weight: int,
    *,
    lookback: int = 1,
    largest_bin_first: bool = False,
) -> list[list[T]]:
    """Java's ``ListPacker(target_weight, lookback, largest_bin_first).packEnd(items, weight)``.

    Packs from the end of ``items``: each item goes into the first of the ``lookback`` open
    bins it fits in (a bin fits while its total weight stays <= ``target_weight``), or into a
    new bin; when more than ``lookback`` bins are open, the oldest (or, with
    ``largest_bin_first``, the heaviest) is closed. Bins and the items in them come back in
    the order of ``items``. An item heavier than the target gets a bin of its own.

    Raises:
        ValueError: ``lookback`` is not positive.
    """
    if lookback <= 0:
        raise ValueError(f"bin look-back size must be greater than 0: {lookback}")
    closed: list[list[T]] = []
    open_bins: deque[tuple[list[T], list[int]]] = deque()  # (items, [weight]) per bin
    for item in reversed(items):
        w = weight(item)
        for bin_items, bin_weight in open_bins:
            if bin_weight[0] + w <= target_weight:
                bin_items.append(item)
                bin_weight[0] += w
                break
        else:
            open_bins.append(([item], [w]))
            if len(open_bins) > lookback:
                if largest_bin_first:
                    heaviest = max(open_bins, key=lambda b: b[1][0])
                    open_bins.remove(heaviest)
                    closed.append(heaviest[0])
                else:
                    closed.append(open_bins.popleft()[0])
    closed.extend(bin_items for bin_items, _ in open_bins)
    return [list(reversed(bin_items)) for bin_items in reversed(closed)]


class ManifestMergeManager:
    """Merges the manifests of one operation's snapshot; lives as long as the operation.

    Args:
        snapshot_id: the id of the snapshot being produced.
        io: reads the manifests to merge.
        new_writer: makes a writer for a new manifest of the snapshot (the producer tracks the
            file for cleanup).
        delete: deletes files the producer wrote and no longer needs.
    """

    def __init__(
        self,
        *,
        snapshot_id: int,
        io: FileIO,
        new_writer: NewWriter,
        delete: Callable[[Sequence[str]], None],
    ):
        self._snapshot_id = snapshot_id
        self._io = io
        self._new_writer = new_writer
        self._delete = delete
        # Merged manifests by their input (format version, input manifest paths): a retry that
        # packs the same bin reuses the file, as Java caches merges by input list.
        self._merged: dict[tuple[int, tuple[str, ...]], ManifestFile] = {}

    def merge(
        self,
        base: TableMetadata,
        new_manifests: Sequence[ManifestFile],
        existing_manifests: Sequence[ManifestFile],
    ) -> list[ManifestFile]:
        """The manifest list of the new snapshot: ``new_manifests`` (written or appended by
        this operation; their snapshot id becomes this snapshot's) and ``existing_manifests``
        (carried from the parent), filtered and merged per the table's properties.

        Raises:
            ValidationError: a merge property does not parse.
            InvalidManifestError, NoSuchFileError: a manifest to merge cannot be read.
        """
        options = MergeOptions.from_properties(base.properties)
        own = [
            m
            if m.added_snapshot_id is not None
            else dataclasses.replace(m, added_snapshot_id=self._snapshot_id)
            for m in new_manifests
        ]
        candidates = [m for m in [*own, *existing_manifests] if self._keep(m)]
        used: set[tuple[int, tuple[str, ...]]] = set()
        result: list[ManifestFile] = []
        for content in (ManifestContent.DATA, ManifestContent.DELETES):
            group = [m for m in candidates if m.content == content]
            result.extend(self._merge_content(base, group, options, used))
        # Merged manifests of earlier attempts that this one does not use are garbage now.
        stale = [key for key in self._merged if key not in used]
        if stale:
            self._delete([self._merged.pop(key).manifest_path for key in stale])
        return result

    def discard(self, deleted: Collection[str]) -> None:
        """Forget merged manifests whose files the producer deleted (a retry must not reuse them)."""
        for key in [key for key, merged in self._merged.items() if merged.manifest_path in deleted]:
            del self._merged[key]

    # ---- internals ---------------------------------------------------------------------------

    def _keep(self, manifest: ManifestFile) -> bool:
        """Manifests with live entries, and every manifest of this snapshot (Java's rule)."""
        return (
            manifest.has_added_files()
            or manifest.has_existing_files()
            or manifest.added_snapshot_id == self._snapshot_id
        )

    def _merge_content(
        self,
        base: TableMetadata,
        manifests: list[ManifestFile],
        options: MergeOptions,
        used: set[tuple[int, tuple[str, ...]]],
    ) -> list[ManifestFile]:
        if not options.enabled or not manifests:
            return manifests
        first = manifests[0].manifest_path
        groups: dict[int, list[ManifestFile]] = {}
        for manifest in manifests:
            groups.setdefault(manifest.partition_spec_id, []).append(manifest)
        result: list[ManifestFile] = []
        for spec_id in sorted(groups, reverse=True):
            bins = pack_end(groups[spec_id], _length, options.target_size_bytes)
            for bin_ in bins:
                if len(bin_) == 1:
                    result.append(bin_[0])
                elif any(m.manifest_path == first for m in bin_) and len(bin_) < options.min_count_to_merge:
                    # The newest manifests merge only once there are enough of them; older
                    # bins merge whenever they hold more than one manifest.
                    result.extend(bin_)
                else:
                    result.append(self._merged_manifest(base, spec_id, bin_, used))
        return result

    def _merged_manifest(
        self,
        base: TableMetadata,
        spec_id: int,
        bin_: list[ManifestFile],
        used: set[tuple[int, tuple[str, ...]]],
    ) -> ManifestFile:
        key = (base.format_version, tuple(m.manifest_path for m in bin_))
        used.add(key)
        cached = self._merged.get(key)
        if cached is not None:
            return cached
        partition_type = base.spec_by_id(spec_id).partition_type(base.schema())
        with self._new_writer(base, spec_id, bin_[0].content) as writer:
            for manifest in bin_:
                self._merge_into(writer, manifest, partition_type, base.format_version)
        merged = writer.to_manifest_file()
        self._merged[key] = merged
        return merged

    def _merge_into(
        self, writer: ManifestWriter, manifest: ManifestFile, partition_type: StructType, format_version: int
    ) -> None:
        """Write ``manifest``'s entries to the merged manifest. Entries whose data_file the
        merged manifest encodes as their manifest does are copied as encoded, blocks of
        EXISTING entries whole (``manifests.carried``); others are decoded and encoded."""
        data = read_manifest_bytes(self._io, manifest)
        carried = None
        if writer.carries:
            carried = carried_entries(
                self._io,
                manifest,
                partition_type=partition_type,
                target_schema=writer.avro_schema,
                data=data,
                copy=(
                    writer.codec,
                    lambda content: existing_blocks(content, manifest, partition_type, format_version),
                ),
            )
        if carried is not None:
            for item in carried:
                if isinstance(item, CarriedBlock):  # EXISTING entries, written as stored
                    writer.carry_block(item)
                    continue
                self._place(
                    writer,
                    manifest,
                    (item.status, item.snapshot_id, item.sequence_number, item.file_sequence_number),
                    functools.partial(writer.carry, item),
                )
            return
        for entry in read_manifest(self._io, manifest, partition_type=partition_type, data=data):
            self._place(
                writer,
                manifest,
                (entry.status, entry.snapshot_id, entry.sequence_number, entry.file_sequence_number),
                functools.partial(_write_file, writer, entry.data_file),
            )

    def _place(
        self,
        writer: ManifestWriter,
        manifest: ManifestFile,
        entry: tuple[ManifestEntryStatus, int | None, int | None, int | None],
        write: Callable[[ManifestEntryStatus, int | None, int | None, int | None], None],
    ) -> None:
        """Write one entry of a merged manifest (its status, snapshot id and sequence numbers)
        as ``write(status, snapshot_id, data_sequence_number, file_sequence_number)``."""
        status, snapshot_id, sequence_number, file_sequence_number = entry
        if status == ManifestEntryStatus.DELETED:
            # Deletes of earlier snapshots are history; only this snapshot's stay.
            if snapshot_id == self._snapshot_id:
                write(status, snapshot_id, sequence_number, file_sequence_number)
        elif status == ManifestEntryStatus.ADDED and snapshot_id == self._snapshot_id:
            # Added by this snapshot: stays ADDED, its file sequence number inherited.
            write(status, writer.snapshot_id, sequence_number, None)
        else:
            write(
                ManifestEntryStatus.EXISTING,
                _snapshot_id(snapshot_id, manifest),
                sequence_number,
                file_sequence_number,
            )


def _write_file(
    writer: ManifestWriter,
    file: ContentFile,
    status: ManifestEntryStatus,
    snapshot_id: int | None,
    data_sequence_number: int | None,
    file_sequence_number: int | None,
) -> None:
    writer.add_entry(ManifestEntry(status, snapshot_id, file, data_sequence_number, file_sequence_number))


def _length(manifest: ManifestFile) -> int:
    return manifest.manifest_length


def _snapshot_id(snapshot_id: int | None, manifest: ManifestFile) -> int:
    if snapshot_id is None:  # the manifest list row always supplies one to inherit
        raise InvalidManifestError(
            f"{manifest.manifest_path} has an entry without a snapshot id and nothing to inherit it from",
            location=manifest.manifest_path,
        )
    return snapshot_id
