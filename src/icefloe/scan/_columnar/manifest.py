"""``DecodedManifest``: one manifest's entries as columns, files materialized on demand."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import numpy as np

from icefloe.scan._columnar._shared import (
    CONTENTS,
    DATA,
    DELETED,
    EXTRA_NAMES,
    MAP_NAMES,
    STATUSES,
    HotValues,
)
from icefloe.scan._columnar.metrics import BoundsColumn, CountsColumn
from icefloe.scan._columnar.paths import PathColumn
from icefloe.scan._columnar.planned import file_stats, new_file, planned_class
from icefloe.spec.manifest import (
    ContentFile,
    DataFile,
    DeleteFile,
    FileFormat,
    ManifestEntry,
    ManifestFile,
)

# ---- the decoded manifest ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class DecodedManifest:
    """Every entry of one manifest, inheritance applied (see the module docstring).

    Attributes:
        manifest: the manifest list row it was decoded for.
        count: the number of entries.
        status: ``ManifestEntryStatus`` values (int8).
        content: ``FileContent`` values (int8).
        snapshot_id / sequence_number / file_sequence_number: after inheritance (int64; null
            where the matching ``*_null`` mask is set; no mask: no nulls).
        record_count / file_size_in_bytes: int64.
        partition_codes: int32 codes into ``partitions`` (the distinct tuples, icefloe values).
        formats: int8 codes into ``format_values``.
        file_path: the paths (stored compactly, see ``paths``).
        metrics: the six metrics maps, by ``ContentFile`` field name.
        extras: the optional fields (``key_metadata``, ``split_offsets``, ...), each a list per
            entry, or None when no entry has the field.
        summary: decoded only for what a summary such as the ``partitions`` table reads
            (status, content, snapshot ids, sequence numbers, record counts, sizes,
            partitions): ``file_path`` and ``format_values`` are empty, ``formats`` all 0,
            ``metrics`` empty and every ``extras`` None; no files or entries are made from it.
    """

    manifest: ManifestFile
    count: int
    status: np.ndarray
    content: np.ndarray
    snapshot_id: np.ndarray
    snapshot_null: np.ndarray | None
    sequence_number: np.ndarray
    sequence_null: np.ndarray | None
    file_sequence_number: np.ndarray
    file_sequence_null: np.ndarray | None
    record_count: np.ndarray
    file_size_in_bytes: np.ndarray
    partition_codes: np.ndarray
    partitions: list[tuple[Any, ...]]
    formats: np.ndarray
    format_values: list[FileFormat]
    file_path: PathColumn
    metrics: dict[str, CountsColumn | BoundsColumn]
    extras: dict[str, list[Any] | None]
    summary: bool = False

    @property
    def spec_id(self) -> int:
        return self.manifest.partition_spec_id

    def __reduce__(self) -> tuple[Any, ...]:
        # Positional reconstruction: the dataclass default walks fields() on every unpickle,
        # and worker processes send one of these per manifest.
        return (DecodedManifest, tuple(getattr(self, f) for f in DECODED_FIELDS))

    def live(self) -> np.ndarray:
        """Whether each entry is live (not DELETED)."""
        live: np.ndarray = self.status != DELETED
        return live

    def counts(self, name: str) -> CountsColumn:
        column = self.metrics[name]
        assert isinstance(column, CountsColumn)
        return column

    def bounds(self, name: str) -> BoundsColumn:
        column = self.metrics[name]
        assert isinstance(column, BoundsColumn)
        return column

    def nbytes(self) -> int:
        """An estimate of the memory this object holds (for the cache's budget)."""
        arrays = (
            self.status,
            self.content,
            self.snapshot_id,
            self.sequence_number,
            self.file_sequence_number,
            self.record_count,
            self.file_size_in_bytes,
            self.partition_codes,
            self.formats,
        )
        total = 1024 + sum(a.nbytes + 112 for a in arrays)
        total += sum(m.nbytes() for m in self.metrics.values())
        total += self.file_path.nbytes()
        total += sum(64 + 40 * len(p) for p in self.partitions)
        for values in self.extras.values():
            if values is not None:
                # A list slot per entry, and about a small tuple / string / int per value.
                total += 8 * len(values) + 64 * (len(values) - values.count(None))
        return total

    # ---- materialization ---------------------------------------------------------------------

    def sequence_numbers(self, indices: Sequence[int]) -> list[int | None]:
        """The data sequence number of each entry in ``indices`` (after inheritance)."""
        values = self.sequence_number.tolist()
        nulls = self.sequence_null
        if nulls is None:
            return [values[i] for i in indices]
        null = nulls.tolist()
        return [None if null[i] else values[i] for i in indices]

    def files(
        self,
        indices: Sequence[int],
        hot: HotValues | None = None,
        *,
        stats: bool | frozenset[int] = True,
    ) -> list[ContentFile]:
        """The ``DataFile`` / ``DeleteFile`` of each entry in ``indices``, equal field by field
        to what ``read_manifest`` gives for it. ``hot``: the builder's flat value lists, while
        the plan that decoded this manifest has them (saves converting the arrays back when
        ``stats`` selects columns).

        ``stats``: which column metrics the files keep: all (True: planned files, whose maps
        are decoded on first use, see ``planned``), none (False: the six metrics maps are None,
        as Java's ``copyWithoutStats``), or those of the given field ids (Java's
        ``copyWithStats``)."""
        assert not self.summary, "files of a manifest decoded for a summary"
        if not len(indices):
            return []
        every = len(indices) == self.count
        paths = self.file_path.take(range(self.count) if every else indices)
        records = self.record_count.tolist() if every else self.record_count[indices].tolist()
        sizes = self.file_size_in_bytes.tolist() if every else self.file_size_in_bytes[indices].tolist()
        content_codes = self.content if every else self.content[indices]
        format_codes = self.formats if every else self.formats[indices]
        partition_codes = self.partition_codes if every else self.partition_codes[indices]
        single_content = bool((content_codes == content_codes[0]).all())
        if single_content:
            contents: Any = itertools.repeat(CONTENTS[int(content_codes[0])])
        else:
            contents = [CONTENTS[c] for c in content_codes.tolist()]
        format_values = self.format_values
        if len(format_values) == 1:
            formats: Any = itertools.repeat(format_values[0])
        else:
            formats = [format_values[c] for c in format_codes.tolist()]
        partitions = self.partitions
        if len(partitions) == 1:
            parts: Any = itertools.repeat(partitions[0])
        else:
            parts = [partitions[c] for c in partition_codes.tolist()]
        spec_ids = itertools.repeat(self.manifest.partition_spec_id)
        extras = [self.extras[name] for name in EXTRA_NAMES]
        if all(e is None for e in extras):
            rows: Any = itertools.repeat(_NO_EXTRAS)
        else:
            # The optional fields of each entry, as a tuple (zip does the work in C).
            columns = [
                itertools.repeat(None) if e is None else (e if every else _take(e, indices)) for e in extras
            ]
            rows = zip(*columns)
        if single_content:
            classes: Any = itertools.repeat(_class_of(int(content_codes[0]), stats is True))
        else:
            classes = [_class_of(c, stats is True) for c in content_codes.tolist()]
        if stats is True:
            # Decoded on first use: most planned files' metrics are never looked at.
            columns_of_maps = tuple(self.metrics[name] for name in MAP_NAMES)
            per_file: Any = map(file_stats, itertools.repeat(columns_of_maps), indices)
        else:
            per_file = itertools.repeat(None)
        result: list[ContentFile] = list(
            map(
                new_file,
                classes,
                paths,
                formats,
                records,
                sizes,
                parts,
                contents,
                spec_ids,
                per_file,
                rows,
            )
        )
        if stats is False or stats is True:
            return result
        metrics = self.metrics
        maps = [
            only_stats(metrics[name].maps(indices, None if hot is None else hot[name]), stats)
            for name in MAP_NAMES
        ]
        return [
            dataclasses.replace(
                file,
                column_sizes=cs,
                value_counts=vc,
                null_value_counts=nc,
                nan_value_counts=nan,
                lower_bounds=lo,
                upper_bounds=up,
            )
            for file, cs, vc, nc, nan, lo, up in zip(result, *maps)
        ]

    def entries(self, indices: Sequence[int], files: Sequence[ContentFile]) -> list[ManifestEntry]:
        """The ``ManifestEntry`` of each entry in ``indices`` (``files`` are their files)."""
        assert not self.summary, "entries of a manifest decoded for a summary"
        statuses = self.status.tolist()
        snapshots = self.snapshot_id.tolist()
        snapshot_null = None if self.snapshot_null is None else self.snapshot_null.tolist()
        seqs = self.sequence_numbers(indices)
        file_seqs = self.file_sequence_number.tolist()
        file_seq_null = None if self.file_sequence_null is None else self.file_sequence_null.tolist()
        return [
            ManifestEntry(
                STATUSES[statuses[i]],
                None if snapshot_null is not None and snapshot_null[i] else snapshots[i],
                file,
                seqs[k],
                None if file_seq_null is not None and file_seq_null[i] else file_seqs[i],
            )
            for k, (i, file) in enumerate(zip(indices, files))
        ]


_NO_EXTRAS = (None,) * len(EXTRA_NAMES)


def _class_of(content: int, lazy: bool) -> type[ContentFile]:
    plain = DataFile if content == DATA else DeleteFile
    return planned_class(plain) if lazy else plain


def _take(values: list[Any], indices: Sequence[int]) -> list[Any]:
    """``[values[i] for i in indices]``, in C."""
    if len(indices) == 1:
        return [values[indices[0]]]
    return list(itemgetter(*indices)(values))


def only_stats(
    maps: list[dict[int, Any] | None], stats: bool | frozenset[int]
) -> list[dict[int, Any] | None]:
    """The maps, narrowed to the field ids of ``stats`` unless it is a bool (True: all)."""
    if isinstance(stats, bool):
        return maps
    return [None if m is None else {k: v for k, v in m.items() if k in stats} for m in maps]


def empty_manifest(manifest: ManifestFile) -> DecodedManifest:
    """A manifest without entries."""
    empty = CountsColumn([], [], [])
    empty_bounds = BoundsColumn([], [], [])
    i64 = np.zeros(0, dtype=np.int64)
    return DecodedManifest(
        manifest=manifest,
        count=0,
        status=np.zeros(0, dtype=np.int8),
        content=np.zeros(0, dtype=np.int8),
        snapshot_id=i64,
        snapshot_null=None,
        sequence_number=i64,
        sequence_null=None,
        file_sequence_number=i64,
        file_sequence_null=None,
        record_count=i64,
        file_size_in_bytes=i64,
        partition_codes=np.zeros(0, dtype=np.int32),
        partitions=[],
        formats=np.zeros(0, dtype=np.int8),
        format_values=[],
        file_path=PathColumn.of([]),
        metrics={name: (empty_bounds if name.endswith("bounds") else empty) for name in MAP_NAMES},
        extras={name: None for name in EXTRA_NAMES},
    )


DECODED_FIELDS = tuple(f.name for f in dataclasses.fields(DecodedManifest))
