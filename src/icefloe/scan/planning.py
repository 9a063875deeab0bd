"""Scan planning: from a snapshot and a row filter to FileScanTasks.

1. Manifests are pruned by their partition field summaries (ManifestEvaluator's semantics, per
   spec, on the whole manifest list at once: ``_summary_filter``).
2. Live entries are pruned by the filter's inclusive projection onto their partition, then by
   their column metrics (InclusiveMetricsEvaluator semantics).
3. Delete manifests feed a DeleteFileIndex; each data file gets the delete files that apply.
4. Each task carries its residual: the filter as far as the file's partition does not already
   decide it.

Partition pruning needs the spec's source columns in the scan's schema; a spec whose source
column was dropped is planned without partition pruning (correct, just slower).

How it is fast (Python pays for every object it builds, so planning builds few):

- Manifests are decoded into a columnar form (``_columnar.DecodedManifest``): partition tuples
  dictionary-encoded, metrics as arrays. Partition predicates and residuals are evaluated once
  per distinct partition, metrics predicates on whole columns (``_metrics_filter``). A
  ``DataFile`` is built only for the entries the plan keeps.
- Decoded manifests and manifest lists are kept in a process-wide cache
  (``_manifest_cache``; ``io.manifest.cache-*`` properties), so planning again, or planning
  another scan of the same table, decodes nothing it has decoded before.
- Manifest files are fetched by a pool of threads while the planning thread decodes.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import threading
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from icefloe.errors import ValidationError
from icefloe.expressions import (
    AlwaysTrue,
    Expression,
    ManifestEvaluator,
    ResidualEvaluator,
    always_true,
    bind,
    referenced_field_ids,
)
from icefloe.expressions.evaluator import compile_expression
from icefloe.io import FileIO, split_scheme
from icefloe.manifests import ManifestListColumns, snapshot_manifest_columns
from icefloe.manifests.reader import gc_paused, read_manifest_bytes
from icefloe.scan._columnar import DecodedManifest, HotValues, KeptFiles, new_planned_task
from icefloe.scan._manifest_cache import ManifestCache, cache_for, drop_caches, new_plan_token
from icefloe.scan._metrics_filter import MetricsFilter
from icefloe.scan._parallel import decode_all, pool_size
from icefloe.scan._summary_filter import SummaryColumns, SummaryFilter
from icefloe.scan.delete_index import DeleteFileIndex
from icefloe.scan.tasks import FileScanTask, new_file_scan_task
from icefloe.spec.manifest import (
    ContentFile,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
)
from icefloe.spec.partition_values import partition_key
from icefloe.spec.partitioning import PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata

__all__ = ["decoded_manifests", "drop_manifest_cache", "manifest_list", "plan_files", "referenced_columns"]

#: Threads fetching manifest files (process-wide; the planning thread decodes).
IO_THREADS = 8
#: Manifest files fetched ahead of the one being decoded (bounds the bytes held).
READ_AHEAD = 16


@dataclass
class _SpecFilters:
    """The filter's forms for one partition spec, built once per scan."""

    summaries: SummaryFilter | None  # None: every manifest may match
    partition_might_match: Callable[[Any], bool] | None  # None: every partition may match
    residuals: ResidualEvaluator | None
    row_filter: Expression
    _partition_ok: dict[Hashable, bool] = field(default_factory=dict)

    def residual(self, partition: tuple[Any, ...]) -> Expression:
        return self.residuals.residual_for(partition) if self.residuals is not None else self.row_filter

    def partitions_ok(self, partitions: list[tuple[Any, ...]]) -> np.ndarray | None:
        """Per distinct partition, whether it may hold matching rows (None: all may)."""
        check = self.partition_might_match
        if check is None:
            return None
        known = self._partition_ok
        result = []
        for partition in partitions:
            key = partition_key(partition)  # -0.0 is not 0.0 (the spec's equality)
            try:
                ok = known.get(key)
            except TypeError:  # unhashable values: evaluate every time
                ok = None
            if ok is None:
                ok = check(partition)
                with contextlib.suppress(TypeError):
                    known[key] = ok
            result.append(ok)
        return np.array(result, dtype=bool)


#: Filters compiled for recent scans, reused by the next plan of the same filter (a warm plan
#: of one day spends half its time binding, projecting and compiling the filter otherwise).
#: Everything cached is immutable or a memo of a pure function of its key.
_COMPILED_FILTERS = 64


def _cached(compile: Callable[..., Any]) -> Callable[..., Any]:
    """``compile`` memoized on its (hashable) arguments; called as is when they are not.

    Equal filters are not always the same filter: ``0.0 == -0.0``, and so are literals of
    them, but ``d <= -0.0`` and ``d <= 0.0`` prune differently. So the key holds the repr of
    each expression argument too (literal classes, signs, decimal scales)."""

    @functools.lru_cache(maxsize=_COMPILED_FILTERS)
    def cached(fingerprint: tuple[str, ...], *args: Any) -> Any:
        return compile(*args)

    def call(*args: Any) -> Any:
        fingerprint = tuple(repr(a) for a in args if isinstance(a, Expression))
        try:
            return cached(fingerprint, *args)
        except TypeError:  # an unhashable literal
            return compile(*args)

    return call


def _bound_filters(
    schema: Schema, row_filter: Expression, case_sensitive: bool
) -> tuple[Expression, MetricsFilter | None]:
    """The filter bound to ``schema``, and its metrics filter (None: every file may match)."""
    bound = bind(schema, row_filter, case_sensitive=case_sensitive)
    return bound, None if isinstance(bound, AlwaysTrue) else MetricsFilter(schema, bound, case_sensitive)


_compiled_bound_filters = _cached(_bound_filters)


def _spec_filters(
    spec: PartitionSpec, schema: Schema, row_filter: Expression, case_sensitive: bool
) -> _SpecFilters:
    found: _SpecFilters = _compiled_spec_filters(spec, schema, row_filter, case_sensitive)
    return found


def _compile_spec_filters(
    spec: PartitionSpec, schema: Schema, row_filter: Expression, case_sensitive: bool
) -> _SpecFilters:
    bound = bind(schema, row_filter, case_sensitive=case_sensitive)
    if isinstance(bound, AlwaysTrue):
        return _SpecFilters(None, None, None, bound)
    try:
        spec.partition_type(schema)
    except ValidationError:
        # A source column of this spec is gone from the schema: no partition pruning.
        return _SpecFilters(None, None, None, bound)
    manifest_eval = ManifestEvaluator(spec, schema, bound, case_sensitive)
    projected = compile_expression(manifest_eval.partition_filter)  # the inclusive projection
    residuals = ResidualEvaluator(spec, schema, bound, case_sensitive)
    # The compiled predicate is three-valued (None: unknown); only True may match.
    return _SpecFilters(
        SummaryFilter(manifest_eval.partition_filter),
        lambda partition: projected(partition) is True,
        residuals,
        bound,
    )


_compiled_spec_filters = _cached(_compile_spec_filters)


def plan_files(
    io: FileIO,
    metadata: TableMetadata,
    snapshot: Snapshot,
    row_filter: Expression | None = None,
    *,
    schema: Schema | None = None,
    case_sensitive: bool = True,
    manifest_filter: Callable[[ManifestFile], bool] | None = None,
    entry_filter: Callable[[ManifestEntry], bool] | None = None,
    column_stats: bool | Iterable[int] = True,
) -> list[FileScanTask]:
    """Plan a scan of ``snapshot``: one task per data file that may hold matching rows.

    Tasks follow the manifest list's order of manifests and each manifest's order of entries.

    Args:
        io: reads the manifest list and manifests; its properties configure the manifest
            cache (``io.manifest.cache-enabled`` and friends, see ``_manifest_cache``).
        metadata: the table metadata (for partition specs).
        snapshot: the snapshot to scan.
        row_filter: the filter (unbound or bound), default all rows.
        schema: the schema the filter binds to (default: the table's current schema).
        case_sensitive: how the filter's column names match.
        manifest_filter: keep only data manifests it accepts (e.g. an incremental scan keeps
            the manifests its snapshots added); delete manifests are not filtered.
        entry_filter: keep only live data-file entries it accepts (e.g. ADDED by a snapshot
            of an incremental range). It sees the entries that pass the row filter's
            partition and metrics pruning (it must not depend on being called for others).
        column_stats: which column metrics the planned data files keep: all (True), none
            (False: their six metrics maps are None, as Java's scans return them unless
            ``includeColumnStats()``; planning many files is then much cheaper), or those of
            the given field ids. Delete files always keep theirs.

    Raises:
        InvalidFilterError: naming the column or literal the filter gets wrong.
        InvalidManifestError, NoSuchFileError: a manifest list or manifest is damaged or missing.
        ValidationError: a manifest uses a partition spec the metadata lacks; an invalid
            ``io.manifest.cache-*`` property.
    """
    # Planning builds many objects (a DataFile holds six dicts) and keeps them all, none in a
    # reference cycle: the cyclic collector would only re-scan them, again and again (a third
    # of the time of a large plan). It is paused for the plan and resumes after it.
    with gc_paused():
        return _plan(
            io,
            metadata,
            snapshot,
            row_filter,
            schema=schema,
            case_sensitive=case_sensitive,
            manifest_filter=manifest_filter,
            entry_filter=entry_filter,
            stats=column_stats if isinstance(column_stats, bool) else frozenset(column_stats),
        )


def _plan(
    io: FileIO,
    metadata: TableMetadata,
    snapshot: Snapshot,
    row_filter: Expression | None,
    *,
    schema: Schema | None,
    case_sensitive: bool,
    manifest_filter: Callable[[ManifestFile], bool] | None,
    entry_filter: Callable[[ManifestEntry], bool] | None,
    stats: bool | frozenset[int],
) -> list[FileScanTask]:
    schema = schema or metadata.schema()
    row_filter = row_filter if row_filter is not None else always_true()
    bound, metrics = _compiled_bound_filters(schema, row_filter, case_sensitive)
    specs = metadata.specs_by_id()
    filters: dict[int, _SpecFilters] = {}

    def filters_for(spec_id: int) -> _SpecFilters:
        found = filters.get(spec_id)
        if found is None:
            found = filters[spec_id] = _spec_filters(specs[spec_id], schema, bound, case_sensitive)
        return found

    loader = _Loader(io, cache_for(io), new_plan_token())
    listed = loader.list_columns(snapshot)
    for spec_id in set(listed.spec_ids.tolist()) - specs.keys():
        first = int(np.flatnonzero(listed.spec_ids == spec_id)[0])
        raise ValidationError(
            f"manifest {listed.manifests([first])[0].manifest_path} uses partition spec {spec_id}, "
            "which the table metadata does not define"
        )
    data_manifests = _matching_data_manifests(loader, snapshot, listed, filters_for, manifest_filter)
    delete_manifests = listed.manifests(np.flatnonzero(listed.contents == ManifestContent.DELETES).tolist())
    delete_index = _delete_index(loader, specs, delete_manifests)

    # Files are built lazily where nothing needs them while planning: no deletes to match
    # to them, no entry filter, and every metrics map kept (decoded lazily too).
    lazy = stats is True and entry_filter is None and len(delete_index) == 0
    tasks: list[FileScanTask] = []
    for decoded, hot, _ in loader.decoded(data_manifests):
        spec_filters = filters_for(decoded.spec_id)
        spec = specs[decoded.spec_id]
        mask = decoded.live()
        partitions_ok = spec_filters.partitions_ok(decoded.partitions)
        if partitions_ok is not None:
            mask &= partitions_ok[decoded.partition_codes]
        if metrics is not None and mask.any():
            mask &= metrics.might_match(decoded)
        indices: list[int] = np.flatnonzero(mask).tolist()
        if not indices:
            continue
        files: list[ContentFile] | None = None
        if lazy:
            # The files are built when a task's file is first asked for (``KeptFiles``).
            kept = KeptFiles(functools.partial(decoded.files, indices))
        else:
            files = loader.files(decoded, indices, hot, stats=stats)
            if entry_filter is not None:
                entries = decoded.entries(indices, files)
                keep = [k for k, entry in enumerate(entries) if entry_filter(entry)]
                indices = [indices[k] for k in keep]
                files = [files[k] for k in keep]
                if not indices:
                    continue
        selected = np.asarray(indices, dtype=np.int64)
        sequence_numbers = decoded.sequence_number[selected]
        if decoded.sequence_null is not None:
            sequence_numbers = np.where(decoded.sequence_null[selected], 0, sequence_numbers)
        if bool((sequence_numbers == sequence_numbers[0]).all()):
            seqs: Any = itertools.repeat(int(sequence_numbers[0]))  # one int object, not one per file
        else:
            seqs = sequence_numbers.tolist()
        # One residual per distinct partition, for the partitions of the kept files only.
        codes = decoded.partition_codes[selected]
        partitions = decoded.partitions
        # bincount, not np.unique: the codes are small non-negative ints, and np.unique imports
        # numpy.ma on first use (13-18 ms inside a process's first plan).
        distinct_codes = np.flatnonzero(np.bincount(codes)).tolist()
        residual_of = {code: spec_filters.residual(partitions[code]) for code in distinct_codes}
        residuals: Any = (
            itertools.repeat(residual_of[int(codes[0])])
            if len(residual_of) == 1
            else [residual_of[c] for c in codes.tolist()]
        )
        if files is None:
            tasks.extend(
                map(
                    new_planned_task,
                    itertools.repeat(kept),
                    range(len(indices)),
                    residuals,
                    itertools.repeat(spec),
                    decoded.file_size_in_bytes[selected].tolist(),
                    seqs,
                )
            )
            continue
        if len(delete_index) > 0:
            for_data_file = delete_index.for_data_file
            deletes: Any = [for_data_file(f, seq) for f, seq in zip(files, seqs)]  # type: ignore[arg-type]
        else:
            deletes = itertools.repeat(())
        tasks.extend(
            map(
                new_file_scan_task,
                files,
                deletes,
                residuals,
                itertools.repeat(spec),
                itertools.repeat(0),
                [f.file_size_in_bytes for f in files],  # the files' own int objects
                seqs,
            )
        )
    return tasks


def _matching_data_manifests(
    loader: _Loader,
    snapshot: Snapshot,
    listed: ManifestListColumns,
    filters_for: Callable[[int], _SpecFilters],
    manifest_filter: Callable[[ManifestFile], bool] | None,
) -> list[ManifestFile]:
    """The data manifests the filter's partition summaries (and ``manifest_filter``) keep,
    checked on the list's summary columns (cached with it); only those rows are built."""
    keep = _summaries_keep(listed.spec_ids, filters_for, lambda: loader.summary_columns(snapshot, listed))
    keep &= listed.contents == ManifestContent.DATA
    kept = listed.manifests(np.flatnonzero(keep).tolist())
    return kept if manifest_filter is None else [m for m in kept if manifest_filter(m)]


def _summaries_keep(
    spec_ids: np.ndarray,
    filters_for: Callable[[int], _SpecFilters],
    columns: Callable[[], SummaryColumns],
) -> np.ndarray:
    """Per manifest list row (of partition spec ``spec_ids``), whether its partition summaries
    may hold files matching the filter: one mask over the whole list per spec. ``columns``: the
    list's summary columns, built on first need."""
    keep = np.ones(len(spec_ids), dtype=bool)
    found: SummaryColumns | None = None
    for spec_id in set(spec_ids.tolist()):
        summaries = filters_for(spec_id).summaries
        if summaries is not None:
            if found is None:
                found = columns()
            of_spec = spec_ids == spec_id
            keep[of_spec] = summaries.mask(found)[of_spec]
    return keep


def manifests_keep(
    manifests: list[ManifestFile], filters_for: Callable[[int], _SpecFilters]
) -> list[ManifestFile]:
    """The manifests whose partition summaries may hold files matching the filter (as
    planning keeps them; for manifests already built, e.g. a changelog's)."""
    spec_ids = np.fromiter((m.partition_spec_id for m in manifests), dtype=np.int64, count=len(manifests))
    keep = _summaries_keep(spec_ids, filters_for, lambda: SummaryColumns.of(manifests))
    return [m for m, kept in zip(manifests, keep.tolist()) if kept]


def _delete_index(
    loader: _Loader, specs: dict[int, PartitionSpec], manifests: list[ManifestFile]
) -> DeleteFileIndex:
    index = DeleteFileIndex(specs)
    for decoded, hot, _ in loader.decoded(manifests):
        indices: list[int] = np.flatnonzero(decoded.live()).tolist()
        files = decoded.files(indices, hot)
        for file, sequence_number in zip(files, decoded.sequence_numbers(indices)):
            index.add(file, sequence_number or 0)  # type: ignore[arg-type]
    return index


# ---- loading manifests ------------------------------------------------------------------------

_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _io_pool() -> ThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=IO_THREADS, thread_name_prefix="icefloe-manifest-io")
        return _POOL


def _is_local(location: str) -> bool:
    return split_scheme(location)[0] in (None, "file")


def _manifest_key(manifest: ManifestFile) -> Hashable | None:
    """The cache key of a decoded manifest: the file (location and length) and what its list
    row hands down to its entries. None when the length is unknown (then it is not cached)."""
    if not manifest.manifest_length:
        return None
    return (
        "manifest",
        manifest.manifest_path,
        manifest.manifest_length,
        manifest.partition_spec_id,
        int(manifest.content),
        manifest.added_snapshot_id,
        manifest.sequence_number,
        manifest.first_row_id,
    )


class _Loader:
    """Reads manifest lists and decoded manifests for one plan, through the cache."""

    def __init__(self, io: FileIO, cache: ManifestCache | None, token: int):
        self.io = io
        self.cache = cache
        self.token = token

    def list_columns(self, snapshot: Snapshot) -> ManifestListColumns:
        """``snapshot``'s manifest list as columns (rows built when asked for, and kept)."""
        cache, location = self.cache, snapshot.manifest_list
        if cache is None or not location:
            return snapshot_manifest_columns(self.io, snapshot)
        key = ("list", location, snapshot.snapshot_id)
        found = cache.get(key, self.token)
        if found is None:
            found = snapshot_manifest_columns(self.io, snapshot)
            cache.put(key, found, found.weight(), token=self.token)
        return found  # type: ignore[no-any-return]

    def manifest_list(self, snapshot: Snapshot) -> list[ManifestFile]:
        return self.list_columns(snapshot).manifests()

    def summary_columns(self, snapshot: Snapshot, listed: ManifestListColumns) -> SummaryColumns:
        """The partition summaries of ``snapshot``'s manifest list (``listed``) as arrays."""
        cache, location = self.cache, snapshot.manifest_list
        if cache is None or not location:
            return SummaryColumns(listed.summaries)
        key = ("summaries", location, snapshot.snapshot_id)
        found = cache.get(key, self.token)
        if found is None:
            found = SummaryColumns(listed.summaries)
            cache.put(key, found, found.weight(), token=self.token)
        return found  # type: ignore[no-any-return]

    def decoded(
        self, manifests: list[ManifestFile], *, summary: bool = False
    ) -> Iterator[tuple[DecodedManifest, HotValues | None, bool]]:
        """Each manifest decoded, in order, with the flat metrics values when this thread
        decoded it, and whether it came from the cache. ``summary``: only what a summary
        reads (``DecodedManifest.summary``); a complete manifest in the cache serves too, and
        summaries are cached apart, so that planning never gets one."""
        cache = self.cache
        hits: list[DecodedManifest | None] = [None] * len(manifests)
        keys = [_manifest_key(m) for m in manifests]
        if cache is not None:
            for i, key in enumerate(keys):
                if key is not None:
                    hits[i] = cache.get(key, self.token)
                    if hits[i] is None and summary:
                        hits[i] = cache.get(_summary_key(key), self.token)
        misses = [manifests[i] for i, hit in enumerate(hits) if hit is None]
        workers = pool_size(self.io.properties)
        if all(_is_local(m.manifest_path) for m in misses):
            # Local files are read when needed, in any order (reader threads would only
            # compete for the GIL).
            io = self.io
            jobs: list[tuple[ManifestFile, Callable[[], bytes]]] = [
                (m, functools.partial(read_manifest_bytes, io, m)) for m in misses
            ]
            decoded_misses = decode_all(jobs, workers=workers, any_order=True, summary=summary)
        else:
            fetched = self._fetch(misses)
            decoded_misses = decode_all(
                [(m, fetched.__next__) for m in misses], workers=workers, summary=summary
            )
        for i, manifest in enumerate(manifests):
            hit = hits[i]
            if hit is not None:
                yield hit, None, True
                continue
            decoded, hot = next(decoded_misses)
            key = keys[i]
            if cache is not None and key is not None:
                cache.put(
                    _summary_key(key) if decoded.summary else key,
                    decoded,
                    decoded.nbytes(),
                    content_length=manifest.manifest_length,
                    token=self.token,
                )
            yield decoded, hot, False

    def files(
        self,
        decoded: DecodedManifest,
        indices: list[int],
        hot: HotValues | None,
        *,
        stats: bool | frozenset[int],
    ) -> list[ContentFile]:
        """The files of ``indices``, new objects for this plan (their metrics maps decoded
        lazily: building them was most of the cost of planning many files)."""
        return decoded.files(indices, hot, stats=stats)

    def _fetch(self, manifests: list[ManifestFile]) -> Iterator[bytes]:
        """The files' contents in order, read ahead by the I/O threads."""
        io = self.io
        if len(manifests) <= 1:
            for manifest in manifests:
                yield read_manifest_bytes(io, manifest)
            return
        pool = _io_pool()
        pending: deque[Future[bytes]] = deque()
        upcoming = iter(manifests)
        try:
            for manifest in upcoming:
                pending.append(pool.submit(read_manifest_bytes, io, manifest))
                if len(pending) >= READ_AHEAD:
                    break
            while pending:
                data = pending.popleft().result()
                following = next(upcoming, None)
                if following is not None:
                    pending.append(pool.submit(read_manifest_bytes, io, following))
                yield data
        finally:
            for future in pending:
                future.cancel()


def _summary_key(key: Hashable) -> Hashable:
    """The cache key of a manifest decoded for a summary, from its complete one."""
    return ("summary", key)


def manifest_list(io: FileIO, snapshot: Snapshot) -> list[ManifestFile]:
    """The manifests of ``snapshot``, through the process-wide cache planning uses."""
    return _Loader(io, cache_for(io), new_plan_token()).manifest_list(snapshot)


def decoded_manifests(
    io: FileIO, manifests: list[ManifestFile], *, summary: bool = False
) -> Iterator[DecodedManifest]:
    """Each manifest decoded into columns (``_columnar.DecodedManifest``), in order, through the
    process-wide cache and with worker processes for large cold sets, exactly as planning
    decodes them (for readers of whole manifests: metadata tables, maintenance).
    ``summary``: only the columns a summary reads (``DecodedManifest.summary``: no paths,
    metrics or optional fields), which saves most of the decoding.

    Raises:
        InvalidManifestError, NoSuchFileError: a manifest is damaged or missing.
    """
    loader = _Loader(io, cache_for(io), new_plan_token())
    with gc_paused():
        for decoded, _, _ in loader.decoded(manifests, summary=summary):
            yield decoded


def drop_manifest_cache() -> None:
    """Forget every decoded manifest and manifest list this process has cached (Java's
    ``ManifestFiles.dropCache``, for every FileIO at once)."""
    drop_caches()


def referenced_columns(row_filter: Expression, schema: Schema, *, case_sensitive: bool = True) -> list[str]:
    """Full names of the columns ``row_filter`` reads, in schema order."""
    bound = bind(schema, row_filter, case_sensitive=case_sensitive)
    ids = referenced_field_ids(bound)
    names = schema.id_to_name()
    return [names[i] for i in sorted(ids) if i in names]
