"""JSON forms of snapshots, snapshot refs, statistics files and encryption keys (spec Appendix C,
"Table Statistics", "Encryption Keys").

Written as Java's SnapshotParser, SnapshotRefParser, StatisticsFileParser and
PartitionStatisticsFileParser (Iceberg 1.9) write them; read leniently where Java is lenient
(a snapshot ``summary`` without ``operation`` reads as ``overwrite``, a missing
``sequence-number`` as 0) and strictly everywhere else, raising
:class:`~icefloe.errors.InvalidMetadataError` with the field path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from icefloe.serde._reader import JsonReader, join_path
from icefloe.spec.snapshots import Snapshot, SnapshotRef, SnapshotRefType
from icefloe.spec.statistics import BlobMetadata, PartitionStatisticsFile, StatisticsFile
from icefloe.spec.table_metadata import EncryptedKey

__all__ = [
    "encryption_key_from_json",
    "encryption_key_to_json",
    "partition_statistics_file_from_json",
    "partition_statistics_file_to_json",
    "ref_from_json",
    "ref_to_json",
    "refs_from_json",
    "refs_to_json",
    "snapshot_from_json",
    "snapshot_to_json",
    "statistics_file_from_json",
    "statistics_file_to_json",
]

_OPERATION = "operation"


# ---- snapshots ------------------------------------------------------------------------------


def snapshot_to_json(snapshot: Snapshot) -> dict[str, Any]:
    """A snapshot as Java writes it.

    ``sequence-number`` only when positive (v1 snapshots have 0 and omit it); ``summary`` only
    when it has an operation, which comes first; ``manifest-list``, or the inline ``manifests``
    of old v1 snapshots; ``schema-id``, ``first-row-id``, ``added-rows`` and ``key-id`` when set.
    """
    result: dict[str, Any] = {}
    if snapshot.sequence_number > 0:
        result["sequence-number"] = snapshot.sequence_number
    result["snapshot-id"] = snapshot.snapshot_id
    if snapshot.parent_snapshot_id is not None:
        result["parent-snapshot-id"] = snapshot.parent_snapshot_id
    result["timestamp-ms"] = snapshot.timestamp_ms
    operation = snapshot.summary.get(_OPERATION)
    if operation is not None:
        summary = {_OPERATION: operation}
        summary.update((k, v) for k, v in snapshot.summary.items() if k != _OPERATION)
        result["summary"] = summary
    if snapshot.manifest_list is not None:
        result["manifest-list"] = snapshot.manifest_list
    else:
        result["manifests"] = list(snapshot.manifests or ())
    if snapshot.schema_id is not None:
        result["schema-id"] = snapshot.schema_id
    if snapshot.first_row_id is not None:
        result["first-row-id"] = snapshot.first_row_id
    if snapshot.added_rows is not None:
        result["added-rows"] = snapshot.added_rows
    if snapshot.key_id is not None:
        result["key-id"] = snapshot.key_id
    return result


def snapshot_from_json(obj: Any, *, location: str | None = None) -> Snapshot:
    """Read a snapshot.

    Raises:
        InvalidMetadataError: naming the field that is missing or wrong.
    """
    return read_snapshot(JsonReader(location, "snapshot"), obj, "")


def read_snapshot(r: JsonReader, value: Any, path: str) -> Snapshot:
    obj = r.obj(value, path)
    snapshot_id = r.req_long(obj, "snapshot-id", path)
    summary: dict[str, str] = {}
    if obj.get("summary") is not None:
        summary = r.str_map(obj, "summary", path)
        if summary and _OPERATION not in summary:
            # Java reads a summary without its required operation as an overwrite (and logs it).
            summary = {_OPERATION: "overwrite", **summary}
    manifest_list = r.opt_str(obj, "manifest-list", path)
    manifests = None
    if manifest_list is None:
        # Old v1 snapshots list their manifests inline instead of writing a manifest list.
        if obj.get("manifests") is None:
            r.fail(join_path(path, "manifest-list"), "missing required field (and no 'manifests' list)")
        manifests = tuple(r.str_list(obj, "manifests", path) or ())
    return Snapshot(
        snapshot_id=snapshot_id,
        timestamp_ms=r.req_long(obj, "timestamp-ms", path),
        manifest_list=manifest_list,
        parent_snapshot_id=r.opt_long(obj, "parent-snapshot-id", path),
        sequence_number=r.opt_long(obj, "sequence-number", path) or 0,
        summary=summary,
        schema_id=r.opt_int(obj, "schema-id", path),
        first_row_id=r.opt_long(obj, "first-row-id", path),
        added_rows=r.opt_long(obj, "added-rows", path),
        key_id=r.opt_str(obj, "key-id", path),
        manifests=manifests,
    )


# ---- refs -----------------------------------------------------------------------------------


def ref_to_json(ref: SnapshotRef) -> dict[str, Any]:
    """``{"snapshot-id", "type", ...retention settings that are set}``."""
    result: dict[str, Any] = {"snapshot-id": ref.snapshot_id, "type": ref.type.value}
    if ref.min_snapshots_to_keep is not None:
        result["min-snapshots-to-keep"] = ref.min_snapshots_to_keep
    if ref.max_snapshot_age_ms is not None:
        result["max-snapshot-age-ms"] = ref.max_snapshot_age_ms
    if ref.max_ref_age_ms is not None:
        result["max-ref-age-ms"] = ref.max_ref_age_ms
    return result


def refs_to_json(refs: Mapping[str, SnapshotRef]) -> dict[str, Any]:
    return {name: ref_to_json(ref) for name, ref in refs.items()}


def ref_from_json(obj: Any, *, location: str | None = None) -> SnapshotRef:
    """Read a snapshot ref; the type is case-insensitive, as in Java.

    Raises:
        InvalidMetadataError: naming the field that is missing or wrong.
    """
    return read_ref(JsonReader(location, "snapshot ref"), obj, "")


def refs_from_json(obj: Any, *, location: str | None = None) -> dict[str, SnapshotRef]:
    """Read the ``refs`` object: ref name -> ref."""
    return read_refs(JsonReader(location, "snapshot refs"), obj, "")


_REF_TYPES = {t.value: t for t in SnapshotRefType}


def read_ref(r: JsonReader, value: Any, path: str) -> SnapshotRef:
    obj = r.obj(value, path)
    snapshot_id = r.req_long(obj, "snapshot-id", path)
    type_text = r.req_str(obj, "type", path)
    ref_type = _REF_TYPES.get(type_text.lower())
    if ref_type is None:
        r.fail(join_path(path, "type"), f"expected 'branch' or 'tag', got {type_text!r}")
    min_snapshots = r.opt_int(obj, "min-snapshots-to-keep", path)
    max_snapshot_age = r.opt_long(obj, "max-snapshot-age-ms", path)
    max_ref_age = r.opt_long(obj, "max-ref-age-ms", path)
    return r.wrap(
        path, lambda: SnapshotRef(snapshot_id, ref_type, min_snapshots, max_snapshot_age, max_ref_age)
    )


def read_refs(r: JsonReader, value: Any, path: str) -> dict[str, SnapshotRef]:
    obj = r.obj(value, path)
    return {name: read_ref(r, ref, join_path(path, name)) for name, ref in obj.items()}


# ---- statistics files -----------------------------------------------------------------------


def statistics_file_to_json(stats: StatisticsFile) -> dict[str, Any]:
    """A table statistics (Puffin) file with its blob metadata."""
    result: dict[str, Any] = {
        "snapshot-id": stats.snapshot_id,
        "statistics-path": stats.statistics_path,
        "file-size-in-bytes": stats.file_size_in_bytes,
        "file-footer-size-in-bytes": stats.file_footer_size_in_bytes,
    }
    if stats.key_metadata is not None:
        result["key-metadata"] = stats.key_metadata
    result["blob-metadata"] = [_blob_to_json(b) for b in stats.blob_metadata]
    return result


def _blob_to_json(blob: BlobMetadata) -> dict[str, Any]:
    result: dict[str, Any] = {
        "type": blob.type,
        "snapshot-id": blob.snapshot_id,
        "sequence-number": blob.sequence_number,
        "fields": list(blob.fields),
    }
    if blob.properties:
        result["properties"] = dict(blob.properties)
    return result


def statistics_file_from_json(obj: Any, *, location: str | None = None) -> StatisticsFile:
    """Read a statistics file entry.

    Raises:
        InvalidMetadataError: naming the field that is missing or wrong.
    """
    return read_statistics_file(JsonReader(location, "statistics file"), obj, "")


def read_statistics_file(r: JsonReader, value: Any, path: str) -> StatisticsFile:
    obj = r.obj(value, path)
    blobs = []
    for blob, blob_path in r.objects(obj, "blob-metadata", path):
        blobs.append(
            BlobMetadata(
                type=r.req_str(blob, "type", blob_path),
                snapshot_id=r.req_long(blob, "snapshot-id", blob_path),
                sequence_number=r.req_long(blob, "sequence-number", blob_path),
                fields=tuple(r.int_list(blob, "fields", blob_path) or ()),
                properties=r.str_map(blob, "properties", blob_path),
            )
        )
    return StatisticsFile(
        snapshot_id=r.req_long(obj, "snapshot-id", path),
        statistics_path=r.req_str(obj, "statistics-path", path),
        file_size_in_bytes=r.req_long(obj, "file-size-in-bytes", path),
        file_footer_size_in_bytes=r.req_long(obj, "file-footer-size-in-bytes", path),
        blob_metadata=tuple(blobs),
        key_metadata=r.opt_str(obj, "key-metadata", path),
    )


def partition_statistics_file_to_json(stats: PartitionStatisticsFile) -> dict[str, Any]:
    return {
        "snapshot-id": stats.snapshot_id,
        "statistics-path": stats.statistics_path,
        "file-size-in-bytes": stats.file_size_in_bytes,
    }


def partition_statistics_file_from_json(obj: Any, *, location: str | None = None) -> PartitionStatisticsFile:
    """Read a partition statistics file entry.

    Raises:
        InvalidMetadataError: naming the field that is missing or wrong.
    """
    return read_partition_statistics_file(JsonReader(location, "partition statistics file"), obj, "")


def read_partition_statistics_file(r: JsonReader, value: Any, path: str) -> PartitionStatisticsFile:
    obj = r.obj(value, path)
    return PartitionStatisticsFile(
        snapshot_id=r.req_long(obj, "snapshot-id", path),
        statistics_path=r.req_str(obj, "statistics-path", path),
        file_size_in_bytes=r.req_long(obj, "file-size-in-bytes", path),
    )


# ---- encryption keys ------------------------------------------------------------------------


def encryption_key_to_json(key: EncryptedKey) -> dict[str, Any]:
    """``{"key-id", "encrypted-key-metadata", "encrypted-by-id" (when set), "properties" (when any)}``."""
    result: dict[str, Any] = {"key-id": key.key_id, "encrypted-key-metadata": key.encrypted_key_metadata}
    if key.encrypted_by_id is not None:
        result["encrypted-by-id"] = key.encrypted_by_id
    if key.properties:
        result["properties"] = dict(key.properties)
    return result


def encryption_key_from_json(obj: Any, *, location: str | None = None) -> EncryptedKey:
    """Read an encryption key entry.

    Raises:
        InvalidMetadataError: naming the field that is missing or wrong.
    """
    return read_encryption_key(JsonReader(location, "encryption key"), obj, "")


def read_encryption_key(r: JsonReader, value: Any, path: str) -> EncryptedKey:
    obj = r.obj(value, path)
    return EncryptedKey(
        key_id=r.req_str(obj, "key-id", path),
        encrypted_key_metadata=r.req_str(obj, "encrypted-key-metadata", path),
        encrypted_by_id=r.opt_str(obj, "encrypted-by-id", path),
        properties=r.str_map(obj, "properties", path),
    )
