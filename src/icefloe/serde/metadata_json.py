"""Table metadata JSON files: read and write them as Java Iceberg 1.9 does.

- :func:`dumps_metadata` writes exactly the fields (and field order) of Java's
  ``TableMetadataParser.toJson`` for the table's format version, in Java's compact form.
- :func:`loads_metadata` reads v1, v2 and v3 files, plain or gzip (detected by magic bytes),
  applying the spec's Appendix E defaults to old v1 files, and checks what Java checks when it
  builds ``TableMetadata`` (the current schema, spec, sort order, snapshot and every ref must
  exist; the default spec and sort order must bind to the current schema, whose columns they
  must name). Anything malformed raises :class:`~icefloe.errors.InvalidMetadataError` naming the
  file and the field path. Unknown fields are ignored.
- :func:`metadata_file_name` / :func:`parse_metadata_version`: Java's metadata file names.
"""

from __future__ import annotations

import gzip
import operator
import re
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from icefloe.errors import ValidationError
from icefloe.serde._jackson import compact
from icefloe.serde._reader import JsonReader, join_path, parse_json_document
from icefloe.serde.schema_json import (
    partition_fields_to_json,
    read_partition_fields,
    read_schema,
    read_sort_order,
    read_spec,
    schema_to_json,
    sort_order_to_json,
    spec_to_json,
)
from icefloe.serde.snapshot_json import (
    encryption_key_to_json,
    partition_statistics_file_to_json,
    read_encryption_key,
    read_partition_statistics_file,
    read_refs,
    read_snapshot,
    read_statistics_file,
    refs_to_json,
    snapshot_to_json,
    statistics_file_to_json,
)
from icefloe.spec.partitioning import PARTITION_DATA_ID_START, PartitionSpec, spec_binding_problem
from icefloe.spec.schema import Schema
from icefloe.spec.snapshots import MAIN_BRANCH, HistoryEntry, MetadataLogEntry, Snapshot, SnapshotRef
from icefloe.spec.sorting import UNSORTED_SORT_ORDER, SortOrder, sort_order_binding_problem
from icefloe.spec.table_metadata import SUPPORTED_FORMAT_VERSIONS, TableMetadata

__all__ = [
    "dumps_metadata",
    "loads_metadata",
    "metadata_file_name",
    "metadata_from_dict",
    "metadata_to_dict",
    "parse_metadata_version",
]

# Stands in for the snapshots array while the rest of the document is rendered; random, so no
# property value or name can collide with it.
_SNAPSHOTS_TOKEN = f"icefloe-snapshots-{uuid.uuid4().hex}"
_SNAPSHOT_LOG_TOKEN = f"icefloe-snapshot-log-{uuid.uuid4().hex}"


class _SnapshotTextCache:
    """The compact JSON text of each snapshot, rendered once (bounded, thread-safe)."""

    def __init__(self, limit: int = 100_000):
        self._limit = limit
        self._entries: OrderedDict[int, tuple[Snapshot, str]] = OrderedDict()
        self._lock = threading.Lock()

    def texts(self, snapshots: Sequence[Snapshot]) -> list[str]:
        """The text of each snapshot, in order (one lock for the cached ones)."""
        found: list[str | None] = []
        with self._lock:
            entries = self._entries
            for snapshot in snapshots:
                hit = entries.get(snapshot.snapshot_id)
                found.append(
                    hit[1] if hit is not None and (hit[0] is snapshot or hit[0] == snapshot) else None
                )
        return [text if text is not None else self.text(s) for text, s in zip(found, snapshots)]

    def text(self, snapshot: Snapshot) -> str:
        with self._lock:
            hit = self._entries.get(snapshot.snapshot_id)
            if hit is not None and (hit[0] is snapshot or hit[0] == snapshot):
                self._entries.move_to_end(snapshot.snapshot_id)
                return hit[1]
        rendered = compact(snapshot_to_json(snapshot))
        with self._lock:
            self._entries[snapshot.snapshot_id] = (snapshot, rendered)
            while len(self._entries) > self._limit:
                self._entries.popitem(last=False)
        return rendered


_SNAPSHOT_TEXT = _SnapshotTextCache()


class _GrowingArrayText:
    """The JSON text of an array that grows from one metadata version to the next (a table's
    snapshots, its snapshot log).

    Every commit rewrites the whole array, yet its metadata holds its parent's items (the same
    objects) and a few new ones. The UTF-8 text of the last few arrays rendered is kept; an
    array that starts with the items of one of them renders only its new items and copies the
    kept text once, instead of joining thousands of items again (at 1,000 snapshots that was
    1-2 ms of every commit, growing with the history). Items are matched by identity: metadata
    parsed again renders afresh. The text is kept open (without the closing bracket) so that it
    can be extended; the caller closes it.
    """

    def __init__(
        self, render: Callable[[Sequence[Any]], list[str]], *, keep: int = 4, max_bytes: int = 32 << 20
    ):
        self._render = render
        self._keep = keep
        self._max_bytes = max_bytes
        # (items, open text), newest first; replaced as a whole, so concurrent writers see a
        # consistent tuple (a lost entry only costs a full render).
        self._entries: tuple[tuple[tuple[Any, ...], bytes], ...] = ()

    def open_text(self, items: Sequence[Any]) -> bytes:
        """``[`` and the items' JSON texts, comma-separated, as UTF-8."""
        items = tuple(items)
        entries = self._entries
        base: tuple[tuple[Any, ...], bytes] | None = None
        for entry in entries:
            known = entry[0]
            longer = base is None or len(known) > len(base[0])
            if longer and len(known) <= len(items) and all(map(operator.is_, known, items)):
                base = entry
        if base is None or not base[0]:
            text = ("[" + ",".join(self._render(items))).encode()
        elif len(base[0]) == len(items):
            text = base[1]
        else:
            text = b"".join((base[1], b",", ",".join(self._render(items[len(base[0]) :])).encode()))
        if len(text) > self._max_bytes:  # too large to keep: rendered afresh next time
            return text
        kept = [(items, text)]
        size = len(text)
        for entry in entries:
            size += len(entry[1])
            if len(kept) >= self._keep or size > self._max_bytes:
                break
            if entry[1] is not text:
                kept.append(entry)
        self._entries = tuple(kept)
        return text


def _log_texts(entries: Sequence[HistoryEntry]) -> list[str]:
    # Two integers per entry: rendered directly, not through a dict per entry and the encoder.
    return [f'{{"timestamp-ms":{int(e.timestamp_ms)},"snapshot-id":{int(e.snapshot_id)}}}' for e in entries]


_SNAPSHOTS_TEXT = _GrowingArrayText(_SNAPSHOT_TEXT.texts)
_SNAPSHOT_LOG_TEXT = _GrowingArrayText(_log_texts)
_COMPRESSIONS = ("none", "gzip")


# ---- writing --------------------------------------------------------------------------------


def metadata_to_dict(md: TableMetadata) -> dict[str, Any]:
    """The metadata as the JSON object Java's ``TableMetadataParser.toJson`` writes."""
    return _metadata_to_dict(md, [snapshot_to_json(s) for s in md.snapshots])


def _metadata_to_dict(md: TableMetadata, snapshots: Any, snapshot_log: Any = None) -> dict[str, Any]:
    """``metadata_to_dict`` with the value of ``snapshots`` given by the caller.

    By format version: v1 adds the legacy ``schema`` (the current schema) and
    ``partition-spec`` (the default spec's fields) and leaves out ``last-sequence-number``;
    "no current snapshot" is ``-1`` in v1/v2 and ``null`` in v3; v3 adds ``next-row-id``.
    ``encryption-keys`` (which Java 1.9 neither reads nor writes) is written when there are any.
    """
    version = md.format_version
    result: dict[str, Any] = {
        "format-version": version,
        "table-uuid": md.table_uuid,
        "location": md.location,
    }
    if version > 1:
        result["last-sequence-number"] = md.last_sequence_number
    result["last-updated-ms"] = md.last_updated_ms
    result["last-column-id"] = md.last_column_id
    if version == 1:
        result["schema"] = schema_to_json(md.schema())
    result["current-schema-id"] = md.current_schema_id
    result["schemas"] = [schema_to_json(s) for s in md.schemas]
    if version == 1:
        result["partition-spec"] = partition_fields_to_json(md.spec())
    result["default-spec-id"] = md.default_spec_id
    result["partition-specs"] = [spec_to_json(s) for s in md.partition_specs]
    result["last-partition-id"] = md.last_partition_id
    result["default-sort-order-id"] = md.default_sort_order_id
    result["sort-orders"] = [sort_order_to_json(o) for o in md.sort_orders]
    result["properties"] = dict(md.properties)
    current = md.current_snapshot()
    if current is not None:
        result["current-snapshot-id"] = current.snapshot_id
    else:
        result["current-snapshot-id"] = None if version >= 3 else -1
    if version >= 3:
        result["next-row-id"] = md.next_row_id if md.next_row_id is not None else 0
    result["refs"] = refs_to_json(md.refs)
    result["snapshots"] = snapshots
    result["statistics"] = [statistics_file_to_json(s) for s in md.statistics]
    result["partition-statistics"] = [partition_statistics_file_to_json(s) for s in md.partition_statistics]
    result["snapshot-log"] = (
        [{"timestamp-ms": e.timestamp_ms, "snapshot-id": e.snapshot_id} for e in md.snapshot_log]
        if snapshot_log is None
        else snapshot_log
    )
    result["metadata-log"] = [
        {"timestamp-ms": e.timestamp_ms, "metadata-file": e.metadata_file} for e in md.metadata_log
    ]
    if md.encryption_keys:
        result["encryption-keys"] = [encryption_key_to_json(k) for k in md.encryption_keys]
    return result


def dumps_metadata(md: TableMetadata, *, compression: str = "none") -> bytes:
    """The metadata file's bytes: compact UTF-8 JSON as Java writes it, gzipped for ``"gzip"``.

    Raises:
        ValidationError: an unknown compression (Java's codecs are ``none`` and ``gzip``).
    """
    codec = _codec(compression)
    recent = _RECENT.entries  # a commit writes the file, then a REST server answers with it
    for entry in recent:
        if entry[0] is md and entry[1] == codec:
            return entry[2]
    data = _dumps(md, codec)
    _RECENT.entries = ((md, codec, data), *recent[:3])
    return data


class _RecentDumps:
    """The last few (metadata object, codec, bytes) dumped, newest first. The tuple is replaced
    as a whole, so concurrent readers always see a consistent one; entries match by identity
    (metadata objects are immutable), which needs no hashing."""

    entries: tuple[tuple[TableMetadata, str, bytes], ...] = ()


_RECENT = _RecentDumps()


def _dumps(md: TableMetadata, codec: str) -> bytes:
    # Snapshots never change, yet every commit rewrites all of them, and the snapshot log grows
    # as fast: the rest of the document is rendered with stand-ins for both arrays, whose text
    # is spliced in from what the last commits rendered (``_GrowingArrayText``), in one copy.
    text = compact(_metadata_to_dict(md, _SNAPSHOTS_TOKEN, _SNAPSHOT_LOG_TOKEN))
    head, rest = text.split(f'"{_SNAPSHOTS_TOKEN}"', 1)
    middle, tail = rest.split(f'"{_SNAPSHOT_LOG_TOKEN}"', 1)
    data = b"".join(
        (
            head.encode(),
            _SNAPSHOTS_TEXT.open_text(md.snapshots),
            b"]",
            middle.encode(),
            _SNAPSHOT_LOG_TEXT.open_text(md.snapshot_log),
            b"]",
            tail.encode(),
        )
    )
    if codec == "gzip":
        # mtime=0 keeps the bytes a pure function of the metadata.
        return gzip.compress(data, mtime=0)
    return data


def _codec(compression: str) -> str:
    codec = compression.lower() if isinstance(compression, str) else ""
    if codec not in _COMPRESSIONS:
        raise ValidationError(f"invalid metadata compression {compression!r}; expected 'none' or 'gzip'")
    return codec


# ---- reading --------------------------------------------------------------------------------


def loads_metadata(
    data: bytes | bytearray | memoryview | str, *, location: str | None = None
) -> TableMetadata:
    """Parse a metadata file (plain or gzip JSON) into TableMetadata.

    Args:
        data: the file's bytes (a ``str`` is taken as already-decoded JSON text).
        location: the file's location, named in error messages.

    Raises:
        InvalidMetadataError: the file is not valid table metadata; the message names
            ``location`` and the field path (``snapshots[3].timestamp-ms``).
    """
    return metadata_from_dict(parse_json_document(data, location, "table metadata"), location=location)


def metadata_from_dict(obj: Any, *, location: str | None = None) -> TableMetadata:
    """Build TableMetadata from a parsed metadata JSON object (see :func:`loads_metadata`).

    Raises:
        InvalidMetadataError: as :func:`loads_metadata`.
    """
    r = JsonReader(location, "table metadata")
    return r.guard_depth(lambda: _metadata_from_dict(r, obj))


def _metadata_from_dict(r: JsonReader, obj: Any) -> TableMetadata:
    root = r.obj(obj, "")
    version = r.req_int(root, "format-version", "")
    if version not in SUPPORTED_FORMAT_VERSIONS:
        r.fail(
            "format-version",
            f"unsupported format version {version}; icefloe reads versions "
            + ", ".join(str(v) for v in SUPPORTED_FORMAT_VERSIONS),
        )
    table_location = r.req_str(root, "location", "")
    table_uuid = r.opt_str(root, "table-uuid", "")
    if table_uuid is None:
        if version > 1:
            r.fail("table-uuid", f"missing required field (required in format v{version})")
        # Very old v1 files have no uuid. Derive a stable one from the table location so that
        # loading the same file twice yields the same uuid (a random one would make
        # assert-table-uuid fail between two loads of one table).
        table_uuid = str(uuid.uuid5(uuid.NAMESPACE_URL, table_location))
    last_sequence_number = r.req_long(root, "last-sequence-number", "") if version > 1 else 0
    last_column_id = r.req_int(root, "last-column-id", "")

    schemas, current_schema_id = _read_schemas(r, root, version)
    specs, default_spec_id = _read_specs(r, root, version)
    last_partition_id = r.opt_int(root, "last-partition-id", "")
    if last_partition_id is None:
        _require_v1(r, version, "last-partition-id")
        last_partition_id = max(
            (s.last_assigned_field_id for s in specs), default=PARTITION_DATA_ID_START - 1
        )
    sort_orders, default_sort_order_id = _read_sort_orders(r, root, version)
    current_schema = next(s for s in schemas if s.schema_id == current_schema_id)
    _check_bindings(r, root, current_schema, specs, default_spec_id, sort_orders, default_sort_order_id)

    properties = r.str_map(root, "properties", "")
    current_snapshot_id = r.opt_long(root, "current-snapshot-id", "")
    if current_snapshot_id is not None and current_snapshot_id < 0:
        current_snapshot_id = None  # Java writes -1 for "no current snapshot" in v1 and v2
    next_row_id = r.req_long(root, "next-row-id", "") if version >= 3 else None
    last_updated_ms = r.req_long(root, "last-updated-ms", "")

    snapshots = tuple(read_snapshot(r, s, p) for s, p in r.objects(root, "snapshots", "", required=False))
    if root.get("refs") is not None:
        refs = read_refs(r, root["refs"], "refs")
    elif current_snapshot_id is not None:
        refs = {MAIN_BRANCH: SnapshotRef(current_snapshot_id)}  # files written before refs existed
    else:
        refs = {}
    statistics = tuple(
        read_statistics_file(r, s, p) for s, p in r.objects(root, "statistics", "", required=False)
    )
    partition_statistics = tuple(
        read_partition_statistics_file(r, s, p)
        for s, p in r.objects(root, "partition-statistics", "", required=False)
    )
    snapshot_log = tuple(
        HistoryEntry(r.req_long(e, "timestamp-ms", p), r.req_long(e, "snapshot-id", p))
        for e, p in r.objects(root, "snapshot-log", "", required=False)
    )
    metadata_log = tuple(
        MetadataLogEntry(r.req_long(e, "timestamp-ms", p), r.req_str(e, "metadata-file", p))
        for e, p in r.objects(root, "metadata-log", "", required=False)
    )
    encryption_keys = tuple(
        read_encryption_key(r, k, p) for k, p in r.objects(root, "encryption-keys", "", required=False)
    )

    _check_snapshots(r, version, last_sequence_number, current_snapshot_id, snapshots, refs)
    return r.wrap(
        "",
        lambda: TableMetadata(
            format_version=version,
            table_uuid=table_uuid,
            location=table_location,
            last_sequence_number=last_sequence_number,
            last_updated_ms=last_updated_ms,
            last_column_id=last_column_id,
            schemas=schemas,
            current_schema_id=current_schema_id,
            partition_specs=specs,
            default_spec_id=default_spec_id,
            last_partition_id=last_partition_id,
            properties=properties,
            current_snapshot_id=current_snapshot_id,
            snapshots=snapshots,
            snapshot_log=snapshot_log,
            metadata_log=metadata_log,
            sort_orders=sort_orders,
            default_sort_order_id=default_sort_order_id,
            refs=refs,
            statistics=statistics,
            partition_statistics=partition_statistics,
            next_row_id=next_row_id,
            encryption_keys=encryption_keys,
        ),
    )


def _require_v1(r: JsonReader, version: int, key: str) -> None:
    if version > 1:
        r.fail(key, f"missing required field (required in format v{version})")


def _check_unique_ids(r: JsonReader, key: str, id_key: str, ids: list[int]) -> None:
    seen: set[int] = set()
    for i, value in enumerate(ids):
        if value in seen:
            r.fail(f"{key}[{i}].{id_key}", f"duplicate id {value}")
        seen.add(value)


def _read_schemas(r: JsonReader, root: dict[str, Any], version: int) -> tuple[tuple[Any, ...], int]:
    if root.get("schemas") is not None:
        current_schema_id = r.req_int(root, "current-schema-id", "")
        items = r.array(root["schemas"], "schemas")
        schemas = tuple(read_schema(r, s, f"schemas[{i}]") for i, s in enumerate(items))
        _check_unique_ids(r, "schemas", "schema-id", [s.schema_id for s in schemas])
        if not any(s.schema_id == current_schema_id for s in schemas):
            r.fail("current-schema-id", f"no schema with id {current_schema_id} in 'schemas'")
        return schemas, current_schema_id
    _require_v1(r, version, "schemas")
    if root.get("schema") is None:
        r.fail("schema", "missing required field (v1 metadata needs 'schema' when 'schemas' is absent)")
    schema = read_schema(r, root["schema"], "schema")
    return (schema,), schema.schema_id


def _read_specs(r: JsonReader, root: dict[str, Any], version: int) -> tuple[tuple[Any, ...], int]:
    if root.get("partition-specs") is not None:
        default_spec_id = r.req_int(root, "default-spec-id", "")
        items = r.array(root["partition-specs"], "partition-specs")
        specs = tuple(read_spec(r, s, f"partition-specs[{i}]") for i, s in enumerate(items))
        if not specs:
            r.fail("partition-specs", "must hold at least one partition spec")
        _check_unique_ids(r, "partition-specs", "spec-id", [s.spec_id for s in specs])
        if not any(s.spec_id == default_spec_id for s in specs):
            r.fail("default-spec-id", f"no partition spec with id {default_spec_id} in 'partition-specs'")
        return specs, default_spec_id
    _require_v1(r, version, "partition-specs")
    if root.get("partition-spec") is None:
        r.fail(
            "partition-spec",
            "missing required field (v1 metadata needs 'partition-spec' when 'partition-specs' is absent)",
        )
    return (read_partition_fields(r, root["partition-spec"], "partition-spec", 0),), 0


def _read_sort_orders(r: JsonReader, root: dict[str, Any], version: int) -> tuple[tuple[Any, ...], int]:
    if root.get("sort-orders") is None:
        _require_v1(r, version, "sort-orders")
        return (UNSORTED_SORT_ORDER,), UNSORTED_SORT_ORDER.order_id
    default_order_id = r.req_int(root, "default-sort-order-id", "")
    items = r.array(root["sort-orders"], "sort-orders")
    orders = tuple(read_sort_order(r, o, f"sort-orders[{i}]") for i, o in enumerate(items))
    if not orders:
        r.fail("sort-orders", "must hold at least one sort order")
    _check_unique_ids(r, "sort-orders", "order-id", [o.order_id for o in orders])
    if default_order_id != 0 and not any(o.order_id == default_order_id for o in orders):
        r.fail("default-sort-order-id", f"no sort order with id {default_order_id} in 'sort-orders'")
    return orders, default_order_id


def _check_bindings(
    r: JsonReader,
    root: dict[str, Any],
    schema: Schema,
    specs: tuple[PartitionSpec, ...],
    default_spec_id: int,
    orders: tuple[SortOrder, ...],
    default_order_id: int,
) -> None:
    """What Java checks when it binds the specs and sort orders to the current schema on load.

    Every spec passes the name checks; the default spec (and a legacy v1 ``partition-spec``)
    and the default sort order must resolve in the current schema. Older specs and orders may
    name columns dropped since, as Java allows (their data is still read).
    """
    legacy = root.get("partition-specs") is None
    for k, spec in enumerate(specs):
        problem = spec_binding_problem(spec, schema, check_sources=spec.spec_id == default_spec_id)
        if problem is not None:
            where = "partition-spec" if legacy else f"partition-specs[{k}].fields"
            r.fail(f"{where}[{problem.index}].{problem.key}", problem.message)
    for k, order in enumerate(orders):
        if order.order_id != default_order_id:
            continue
        problem = sort_order_binding_problem(order, schema)
        if problem is not None:
            r.fail(f"sort-orders[{k}].fields[{problem.index}].{problem.key}", problem.message)


def _check_snapshots(
    r: JsonReader,
    version: int,
    last_sequence_number: int,
    current_snapshot_id: int | None,
    snapshots: tuple[Any, ...],
    refs: dict[str, SnapshotRef],
) -> None:
    """What Java's TableMetadata constructor checks about snapshots and refs."""
    ids: set[int] = set()
    for i, snapshot in enumerate(snapshots):
        if snapshot.snapshot_id in ids:
            r.fail(f"snapshots[{i}].snapshot-id", f"duplicate snapshot id {snapshot.snapshot_id}")
        ids.add(snapshot.snapshot_id)
        if version > 1 and snapshot.sequence_number > last_sequence_number:
            r.fail(
                f"snapshots[{i}].sequence-number",
                f"sequence number {snapshot.sequence_number} is greater than the table's "
                f"last-sequence-number {last_sequence_number}",
            )
    if current_snapshot_id is not None and current_snapshot_id not in ids:
        r.fail("current-snapshot-id", f"no snapshot with id {current_snapshot_id} in 'snapshots'")
    for name, ref in refs.items():
        if ref.snapshot_id not in ids:
            r.fail(
                join_path(join_path("refs", name), "snapshot-id"),
                f"ref '{name}' points to snapshot {ref.snapshot_id}, which is not in 'snapshots'",
            )
    main = refs.get(MAIN_BRANCH)
    if main is not None and main.snapshot_id != current_snapshot_id:
        r.fail(
            "current-snapshot-id",
            f"current snapshot {current_snapshot_id} does not match the main branch ({main.snapshot_id})",
        )


# ---- file names -----------------------------------------------------------------------------

_HADOOP_NAME = re.compile(r"v(\d+)(?:\.gz)?\.metadata\.json(?:\.gz)?")
_METASTORE_NAME = re.compile(r"(\d+)-.*\.metadata\.json(?:\.gz)?", re.DOTALL)


def metadata_file_name(version: int, *, compression: str, hadoop: bool, file_uuid: str | None = None) -> str:
    """The name Java gives the metadata file of table version ``version``.

    Hadoop tables: ``v<N>.metadata.json`` / ``v<N>.gz.metadata.json``; every other catalog:
    ``<NNNNN>-<uuid>.metadata.json`` / ``.gz.metadata.json`` (five-digit zero-padded version and
    a random uuid, or ``file_uuid`` when given).

    Raises:
        ValidationError: a negative version or an unknown compression.
    """
    if not isinstance(version, int) or version < 0:
        raise ValidationError(f"metadata version must be a non-negative integer, not {version!r}")
    extension = (".gz" if _codec(compression) == "gzip" else "") + ".metadata.json"
    if hadoop:
        return f"v{version}{extension}"
    return f"{version:05d}-{file_uuid or uuid.uuid4()}{extension}"


def parse_metadata_version(filename: str) -> int | None:
    """The table version in a metadata file name or path, or None when it has none.

    Reads both naming schemes of :func:`metadata_file_name` and the older ``.metadata.json.gz``
    suffix.
    """
    name = filename.rsplit("/", 1)[-1]
    match = _HADOOP_NAME.fullmatch(name) or _METASTORE_NAME.fullmatch(name)
    return int(match.group(1)) if match else None
