"""Data and delete files in the REST spec's JSON (``ContentFile``, for scan planning).

Written in Java 1.11's form: ``content`` ``data`` / ``position-deletes`` / ``equality-deletes``,
``file-format`` lower case, ``partition`` as an array of single values in spec field order,
counts as ``{"keys": [...], "values": [...]}`` and bounds as the hex of their serialized bytes.
Read in that form and in Java 1.10's (``DATA``, ``PARQUET``, the partition as an object keyed
by partition field id).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from icefloe.serde._reader import JsonReader, join_path
from icefloe.spec import conversions
from icefloe.spec.manifest import ContentFile, FileContent, FileFormat, make_content_file
from icefloe.spec.partitioning import PartitionSpec
from icefloe.spec.types import StructType

__all__ = ["content_file_from_json", "content_file_to_json"]

_CONTENT_NAMES = {
    FileContent.DATA: "data",
    FileContent.POSITION_DELETES: "position-deletes",
    FileContent.EQUALITY_DELETES: "equality-deletes",
}
_CONTENTS = {name: content for content, name in _CONTENT_NAMES.items()}
_CONTENTS.update({content.name.lower().replace("_", "-"): content for content in FileContent})


def _counts(values: Mapping[int, int] | None) -> dict[str, list[int]] | None:
    if values is None:
        return None
    items = sorted(values.items())
    return {"keys": [k for k, _ in items], "values": [v for _, v in items]}


def _bounds(values: Mapping[int, bytes] | None) -> dict[str, list[Any]] | None:
    if values is None:
        return None
    items = sorted(values.items())
    return {"keys": [k for k, _ in items], "values": [bytes(v).hex().upper() for _, v in items]}


def content_file_to_json(
    file: ContentFile,
    partition_type: StructType,
    *,
    stats: bool = True,
    partitions: dict[Any, list[Any]] | None = None,
) -> dict[str, Any]:
    """The JSON of ``file``; ``partition_type`` is its spec's partition type.

    Args:
        stats: include the column metrics (counts, sizes, bounds).
        partitions: a memo of partition JSON by ``(spec id, values)``, shared across the files
            of one answer (many files share a partition).
    """
    key = (file.spec_id, file.partition)
    partition = partitions.get(key) if partitions is not None else None
    if partition is None:
        partition = [
            conversions.to_json(field.field_type, value)
            for field, value in zip(partition_type.fields, file.partition)
        ]
        if partitions is not None:
            partitions[key] = partition
    result: dict[str, Any] = {
        "spec-id": file.spec_id,
        "content": _CONTENT_NAMES[file.content],
        "file-path": file.file_path,
        "file-format": file.file_format.value.lower(),
        "partition": partition,
        "file-size-in-bytes": file.file_size_in_bytes,
        "record-count": file.record_count,
    }
    optional: dict[str, Any] = {
        "key-metadata": file.key_metadata.hex().upper() if file.key_metadata is not None else None,
        "split-offsets": list(file.split_offsets) if file.split_offsets is not None else None,
        "sort-order-id": file.sort_order_id,
        "first-row-id": file.first_row_id,
    }
    if stats:
        optional.update(
            {
                "column-sizes": _counts(file.column_sizes),
                "value-counts": _counts(file.value_counts),
                "null-value-counts": _counts(file.null_value_counts),
                "nan-value-counts": _counts(file.nan_value_counts),
                "lower-bounds": _bounds(file.lower_bounds),
                "upper-bounds": _bounds(file.upper_bounds),
            }
        )
    optional.update(
        {
            "equality-ids": list(file.equality_ids) if file.equality_ids is not None else None,
            "referenced-data-file": file.referenced_data_file,
            "content-offset": file.content_offset,
            "content-size-in-bytes": file.content_size_in_bytes,
        }
    )
    result.update({k: v for k, v in optional.items() if v is not None})
    return result


def _read_map(
    r: JsonReader, o: dict[str, Any], key: str, where: str, *, hexed: bool
) -> dict[int, Any] | None:
    value = o.get(key)
    if value is None:
        return None
    path = join_path(where, key)
    m = r.obj(value, path)
    keys = r.int_list(m, "keys", path) or []
    raw = m.get("values")
    values = r.array(raw, join_path(path, "values")) if raw is not None else []
    if len(keys) != len(values):
        r.fail(path, "keys and values differ in length")
    if not hexed:
        return dict(zip(keys, (r.int_value(v, join_path(path, "values"), long=True) for v in values)))
    try:
        return {k: bytes.fromhex(v) for k, v in zip(keys, values) if isinstance(v, str)}
    except ValueError:
        r.fail(path, "bounds must be hex strings")


def _read_partition(
    r: JsonReader, value: Any, path: str, spec: PartitionSpec, partition_type: StructType
) -> tuple[Any, ...]:
    if value is None:
        return tuple(None for _ in partition_type.fields)
    if isinstance(value, dict):  # Java 1.10: by partition field id, nulls left out
        by_id = {int(k): v for k, v in value.items() if str(k).lstrip("-").isdigit()}
        value = [by_id.get(f.field_id) for f in spec.fields]
    items = r.array(value, path)
    if len(items) != len(partition_type.fields):
        r.fail(path, f"expected {len(partition_type.fields)} partition values, got {len(items)}")
    values = []
    for i, (field, item) in enumerate(zip(partition_type.fields, items)):
        try:
            values.append(conversions.from_json(field.field_type, item))
        except ValueError as exc:
            r.fail(f"{path}[{i}]", str(exc))
    return tuple(values)


def _partition(
    r: JsonReader,
    value: Any,
    spec: PartitionSpec,
    partition_type: StructType,
    memo: dict[Any, tuple[Any, ...]] | None,
) -> tuple[Any, ...]:
    key = (spec.spec_id, tuple(value)) if memo is not None and isinstance(value, list) else None
    if key is not None:
        try:
            cached = memo.get(key)  # type: ignore[union-attr]
        except TypeError:  # an unhashable (malformed) value: read it, and fail, the long way
            key = None
            cached = None
        if cached is not None:
            return cached
    result = _read_partition(r, value, "partition", spec, partition_type)
    if key is not None and memo is not None:
        memo[key] = result
    return result


def content_file_from_json(
    obj: Any,
    specs: Mapping[int, tuple[PartitionSpec, StructType]],
    *,
    location: str | None = None,
    partitions: dict[Any, tuple[Any, ...]] | None = None,
) -> ContentFile:
    """A DataFile or DeleteFile from JSON; ``specs`` gives each spec id's spec and partition type.
    ``partitions`` memoizes partition tuples by their JSON across the files of one answer.

    Raises:
        InvalidMetadataError: naming the malformed field.
    """
    r = JsonReader(location, "content file")
    o = r.obj(obj, "")
    spec_id = r.req_int(o, "spec-id", "")
    if spec_id not in specs:
        r.fail("spec-id", f"the table has no partition spec {spec_id}")
    spec, partition_type = specs[spec_id]
    content_name = r.req_str(o, "content", "").lower()
    if content_name not in _CONTENTS:
        r.fail("content", f"unknown content {content_name!r}")
    fmt = r.req_str(o, "file-format", "")
    key_metadata = r.opt_str(o, "key-metadata", "")
    split_offsets = r.int_list(o, "split-offsets", "", required=False, long=True)
    equality_ids = r.int_list(o, "equality-ids", "", required=False)
    return r.wrap(
        "",
        lambda: make_content_file(
            content=_CONTENTS[content_name],
            file_path=r.req_str(o, "file-path", ""),
            file_format=FileFormat.parse(fmt),
            spec_id=spec_id,
            partition=_partition(r, o.get("partition"), spec, partition_type, partitions),
            file_size_in_bytes=r.req_long(o, "file-size-in-bytes", ""),
            record_count=r.req_long(o, "record-count", ""),
            key_metadata=bytes.fromhex(key_metadata) if key_metadata else None,
            split_offsets=tuple(split_offsets) if split_offsets is not None else None,
            sort_order_id=r.opt_int(o, "sort-order-id", ""),
            first_row_id=r.opt_long(o, "first-row-id", ""),
            column_sizes=_read_map(r, o, "column-sizes", "", hexed=False),
            value_counts=_read_map(r, o, "value-counts", "", hexed=False),
            null_value_counts=_read_map(r, o, "null-value-counts", "", hexed=False),
            nan_value_counts=_read_map(r, o, "nan-value-counts", "", hexed=False),
            lower_bounds=_read_map(r, o, "lower-bounds", "", hexed=True),
            upper_bounds=_read_map(r, o, "upper-bounds", "", hexed=True),
            equality_ids=tuple(equality_ids) if equality_ids is not None else None,
            referenced_data_file=r.opt_str(o, "referenced-data-file", ""),
            content_offset=r.opt_long(o, "content-offset", ""),
            content_size_in_bytes=r.opt_long(o, "content-size-in-bytes", ""),
        ),
    )
