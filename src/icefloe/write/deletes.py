"""Writing row-level delete files (v2+): position deletes and equality deletes, as Parquet.

Both writers reuse the data-file machinery (:func:`icefloe.write.parquet.write_content_files`):
files roll at ``write.delete.target-file-size-bytes`` (64 MiB, Java's default), take the
``write.delete.parquet.*`` settings (falling back to ``write.parquet.*``), are named like Java's
(``{partition_id:05d}-{task_id}-{operation_id}-{count:05d}-deletes.parquet``) under the partition's
data directory, and are deleted again if anything fails. Nothing is committed: the returned
``DeleteFile`` descriptions go to a row delta.

Position delete files (spec: "Position Delete Files") hold ``file_path`` (2147483546) and ``pos``
(2147483545), optionally the deleted ``row`` (2147483544), sorted by file path then position.
Their metrics are Java's: ``MetricsConfig.forPositionDelete`` (full bounds for ``file_path`` and
``pos``, the table's modes for ``row.*``), then, as Java's ``PositionDeleteWriter``, no value /
null / NaN counts for ``file_path`` and ``pos``, and their bounds only when the file references a
single data file, which is then its ``referenced_data_file``.

Equality delete files (spec: "Equality Delete Files") hold the delete columns (or more of the
deleted rows) with the table's field ids; ``equality_ids`` names the delete columns and the
metrics follow the table's metrics config.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icefloe.arrow.partition import partition_keys
from icefloe.arrow.schema import schema_to_arrow, to_requested_schema
from icefloe.errors import ValidationError
from icefloe.io import FileIO
from icefloe.spec.manifest import DataFile, DataFileBuilder, DeleteFile, Metrics
from icefloe.spec.partition_values import partition_key
from icefloe.spec.partitioning import PartitionSpec
from icefloe.spec.properties import (
    DELETE_PARQUET_PREFIX,
    DELETE_TARGET_FILE_SIZE_BYTES,
    DELETE_TARGET_FILE_SIZE_BYTES_DEFAULT,
    PARQUET_PREFIX,
)
from icefloe.spec.schema import Schema, prune_columns
from icefloe.spec.sorting import SortOrder
from icefloe.spec.types import ListType, LongType, MapType, NestedField, StringType, StructType
from icefloe.write._metrics_config import FULL
from icefloe.write.metrics import MetricsConfig
from icefloe.write.options import ParquetWriteOptions
from icefloe.write.parquet import ContentFileKind, file_name_prefix, write_content_files
from icefloe.write.sorting import can_sort, sort_table

__all__ = [
    "DELETE_FILE_PATH_ID",
    "DELETE_FILE_POS_ID",
    "DELETE_FILE_ROW_ID",
    "delete_write_properties",
    "position_delete_metrics_config",
    "position_delete_schema",
    "write_equality_deletes",
    "write_position_deletes",
    "write_position_deletes_for",
]

#: Reserved field ids of position delete files (spec: "Reserved Field IDs").
DELETE_FILE_PATH_ID = 2147483546
DELETE_FILE_POS_ID = 2147483545
DELETE_FILE_ROW_ID = 2147483544

_DELETES_SUFFIX = "-deletes"


def position_delete_schema(row_schema: Schema | StructType | None = None) -> Schema:
    """The schema of a position delete file, with the deleted ``row`` when ``row_schema`` is given
    (a subset of the table schema, with its field ids)."""
    fields = [
        NestedField(DELETE_FILE_PATH_ID, "file_path", StringType(), required=True),
        NestedField(DELETE_FILE_POS_ID, "pos", LongType(), required=True),
    ]
    if row_schema is not None:
        struct = row_schema.as_struct() if isinstance(row_schema, Schema) else row_schema
        # Required: every entry of a file with the column carries its row (spec, note 1).
        fields.append(NestedField(DELETE_FILE_ROW_ID, "row", struct, required=True))
    return Schema(*fields)


def delete_write_properties(
    properties: Mapping[str, str], *, target_file_size_bytes: int | None = None
) -> ParquetWriteOptions:
    """The Parquet options of delete files: ``write.delete.parquet.*`` over ``write.parquet.*``,
    and ``write.delete.target-file-size-bytes`` (64 MiB) as the target size, as in Java.

    Raises:
        ValidationError: a malformed property.
    """
    view = dict(properties)
    for key, value in properties.items():
        if key.startswith(DELETE_PARQUET_PREFIX):
            view[PARQUET_PREFIX + key[len(DELETE_PARQUET_PREFIX) :]] = value
    if target_file_size_bytes is None:
        raw = properties.get(DELETE_TARGET_FILE_SIZE_BYTES)
        try:
            target_file_size_bytes = int(raw) if raw is not None else DELETE_TARGET_FILE_SIZE_BYTES_DEFAULT
        except ValueError:
            raise ValidationError(
                f"table property '{DELETE_TARGET_FILE_SIZE_BYTES}' must be an integer, not {raw!r}"
            ) from None
    return ParquetWriteOptions.from_properties(view, target_file_size_bytes=target_file_size_bytes)


def position_delete_metrics_config(
    properties: Mapping[str, str], schema: Schema, sort_order: SortOrder | None = None
) -> MetricsConfig:
    """Java's ``MetricsConfig.forPositionDelete(table)``: ``file_path`` and ``pos`` full, each
    configured column ``c`` of the table as ``row.c``, the table's default for the rest."""
    table = MetricsConfig.from_properties(properties, schema, sort_order=sort_order)
    modes = {"file_path": FULL, "pos": FULL}
    modes.update({f"row.{name}": mode for name, mode in table.column_modes.items()})
    return MetricsConfig(table.default_mode, modes)


# ---------------------------------------------------------------------------------------------
# position deletes


def write_position_deletes(
    io: FileIO,
    *,
    table_location: str,
    properties: Mapping[str, str],
    schema: Schema,
    spec: PartitionSpec,
    deletes: Mapping[str, Any] | pa.Table,
    partition: Sequence[Any] = (),
    row_schema: Schema | None = None,
    sort_order: SortOrder | None = None,
    file_name_prefix: str | None = None,
    target_file_size_bytes: int | None = None,
) -> list[DeleteFile]:
    """Write position delete files for data files of one partition; nothing is committed.

    Args:
        io: the table's FileIO.
        table_location: the table's base location.
        properties: the table properties (``write.delete.*``, metrics modes, locations).
        schema: the table schema (partition paths; metrics modes of ``row`` columns).
        spec: the partition spec of the data files the deletes reference.
        deletes: either ``{data file path: positions}`` (positions as any integer sequence or
            numpy array, in any order; duplicates are dropped), or an Arrow table with columns
            ``file_path`` and ``pos`` and, with ``row_schema``, ``row`` (a struct column).
        partition: the partition tuple of those data files (spec order).
        row_schema: the schema of the deleted rows to store (a subset of the table schema);
            None stores no rows.
        sort_order: the table's sort order (its columns get promoted metrics, as in Java).
        file_name_prefix: file names are ``<prefix>-<count:05d>-deletes.parquet``; default a
            fresh Java-style prefix.
        target_file_size_bytes: overrides ``write.delete.target-file-size-bytes``.

    Returns:
        the delete files, rows sorted by ``file_path`` then ``pos``; each with full metrics as
        Java computes them, and ``referenced_data_file`` when it references one data file.
        No deletes write no file.

    Raises:
        ValidationError: a negative position, a null path or position, a partition of the wrong
            arity, ``row`` without ``row_schema`` (or the reverse).
        DataWriteError: a storage failure (every file written is deleted).
    """
    _check_partition(spec, partition)
    delete_schema = position_delete_schema(row_schema)
    table = _position_table(deletes, delete_schema)
    if table.num_rows == 0:
        return []
    files = write_content_files(
        io,
        table_location=table_location,
        properties=properties,
        schema=delete_schema,
        spec=spec,
        groups=[(tuple(partition), table)],
        kind=ContentFileKind(_DELETES_SUFFIX, schema, _describe_position_deletes, "position delete file"),
        metrics_config=position_delete_metrics_config(properties, schema, sort_order),
        options=delete_write_properties(properties, target_file_size_bytes=target_file_size_bytes),
        file_name_prefix=file_name_prefix,
    )
    return files


def write_position_deletes_for(
    io: FileIO,
    *,
    table_location: str,
    properties: Mapping[str, str],
    schema: Schema,
    specs: Mapping[int, PartitionSpec],
    deletes: Mapping[DataFile, Any] | Iterable[tuple[DataFile, Any]],
    sort_order: SortOrder | None = None,
    file_name_prefix: str | None = None,
    target_file_size_bytes: int | None = None,
) -> list[DeleteFile]:
    """Write the deleted positions of many data files, one or more delete files per partition.

    Each data file's deletes go to its partition (spec id and values). Files of one call share
    a name prefix and counter, like the files of one Spark task.

    Args:
        io, table_location, properties, schema, sort_order, target_file_size_bytes: as for
            :func:`write_position_deletes`.
        specs: the table's partition specs by id (``metadata.specs_by_id()``).
        deletes: ``{DataFile: positions}`` or ``(DataFile, positions)`` pairs.
        file_name_prefix: as for :func:`write_position_deletes`.

    Raises:
        ValidationError: a data file's spec id is not in ``specs``; as for
            :func:`write_position_deletes`.
    """
    items = deletes.items() if isinstance(deletes, Mapping) else deletes
    by_spec: dict[int, dict[Any, tuple[tuple[Any, ...], dict[str, list[Any]]]]] = {}
    for data_file, positions in items:
        if data_file.spec_id not in specs:
            raise ValidationError(
                f"data file {data_file.file_path} has partition spec {data_file.spec_id}, "
                "which the table does not define"
            )
        partitions = by_spec.setdefault(data_file.spec_id, {})
        key = partition_key(data_file.partition, data_file.spec_id)
        _, paths = partitions.setdefault(key, (tuple(data_file.partition), {}))
        paths.setdefault(data_file.file_path, []).append(positions)
    prefix = file_name_prefix if file_name_prefix is not None else _new_prefix()
    delete_schema = position_delete_schema()
    options = delete_write_properties(properties, target_file_size_bytes=target_file_size_bytes)
    metrics_config = position_delete_metrics_config(properties, schema, sort_order)
    kind = ContentFileKind(_DELETES_SUFFIX, schema, _describe_position_deletes, "position delete file")
    result: list[DeleteFile] = []
    for number, (spec_id, partitions) in enumerate(sorted(by_spec.items())):
        groups = []
        for partition, paths in partitions.values():
            merged = {path: _concat_positions(chunks) for path, chunks in paths.items()}
            table = _position_table(merged, delete_schema)
            if table.num_rows:
                groups.append((partition, table))
        result.extend(
            write_content_files(
                io,
                table_location=table_location,
                properties=properties,
                schema=delete_schema,
                spec=specs[spec_id],
                groups=groups,
                kind=kind,
                metrics_config=metrics_config,
                options=options,
                # one counter per call of the machinery: later specs get their own prefix
                file_name_prefix=prefix if number == 0 else f"{prefix}-{spec_id}",
            )
        )
    return result


def _concat_positions(chunks: list[Any]) -> np.ndarray:
    arrays = [positions_array(chunk) for chunk in chunks]
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)


def positions_array(positions: Any) -> np.ndarray:
    """Positions as a flat int64 numpy array (from a sequence, numpy or Arrow array)."""
    if isinstance(positions, (pa.Array, pa.ChunkedArray)):
        return np.asarray(positions.to_numpy(zero_copy_only=False), dtype=np.int64)
    if isinstance(positions, np.ndarray):
        return positions.astype(np.int64, copy=False).ravel()
    return np.fromiter(positions, dtype=np.int64, count=len(positions))


def _position_table(deletes: Mapping[str, Any] | pa.Table, delete_schema: Schema) -> pa.Table:
    """The deletes as a table of the delete schema, sorted by path then position, deduplicated."""
    arrow_schema = schema_to_arrow(delete_schema)
    with_rows = delete_schema.find_field(DELETE_FILE_ROW_ID) is not None
    if isinstance(deletes, pa.Table):
        names = set(deletes.column_names)
        if "row" in names and not with_rows:
            raise ValidationError("position deletes have a 'row' column but no row_schema was given")
        if with_rows and "row" not in names:
            raise ValidationError("row_schema was given but the position deletes have no 'row' column")
        for required in ("file_path", "pos"):
            if required not in names:
                raise ValidationError(f"position deletes need a '{required}' column")
            if deletes.column(required).null_count:
                raise ValidationError(f"position deletes have null '{required}' values")
        table = to_requested_schema(deletes, delete_schema)
    else:
        if with_rows:
            raise ValidationError("deleted rows need the deletes as a table with a 'row' column")
        # Sorted and deduplicated per path here, with numpy: far cheaper than sorting the
        # table by its (long, repeated) path strings below.
        paths = sorted(deletes)
        arrays = [_ascending_unique(positions_array(deletes[p])) for p in paths]
        counts = [len(a) for a in arrays]
        positions = np.concatenate(arrays) if arrays else np.zeros(0, np.int64)
        table = pa.Table.from_arrays(
            [_repeated_strings(paths, counts), pa.array(positions, pa.int64())], schema=arrow_schema
        )
        if len(positions) and int(positions.min()) < 0:
            raise ValidationError(f"position deletes hold a negative position ({int(positions.min())})")
        return table
    if table.num_rows == 0:
        return table
    positions = table.column("pos").to_numpy()
    if int(positions.min()) < 0:
        raise ValidationError(f"position deletes hold a negative position ({int(positions.min())})")
    table = table.sort_by([("file_path", "ascending"), ("pos", "ascending")])
    # Drop repeated (path, pos) pairs: a row is deleted once (and counted once).
    paths = table.column("file_path").combine_chunks()
    positions = table.column("pos").to_numpy()
    same_path = pc.equal(paths.slice(1), paths.slice(0, len(paths) - 1)).to_numpy(zero_copy_only=False)
    repeated = np.concatenate(([False], same_path & (positions[1:] == positions[:-1])))
    if repeated.any():
        table = table.filter(pa.array(~repeated))
    return table


def _repeated_strings(values: list[str], counts: list[int]) -> pa.ChunkedArray:
    """Strings holding ``values[i]`` ``counts[i]`` times each, a chunk per value built from its
    buffers (a path repeated for each of a million positions is tens of MB: one copy, no
    per-value work); chunks stay under 2 GiB, the reach of a string array's offsets."""
    chunks = []
    for value, count in zip(values, counts, strict=True):
        encoded = value.encode("utf-8")
        per_chunk = max(1, (2**31 - 1) // max(1, len(encoded)))
        for start in range(0, count, per_chunk):
            n = min(per_chunk, count - start)
            offsets = np.arange(n + 1, dtype=np.int64) * len(encoded)
            chunks.append(
                pa.StringArray.from_buffers(
                    n, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(encoded * n)
                )
            )
    return pa.chunked_array(chunks, type=pa.string())


def _ascending_unique(positions: np.ndarray) -> np.ndarray:
    if positions.size < 2 or bool(np.all(positions[1:] > positions[:-1])):
        return positions
    return np.unique(positions)


def _describe_position_deletes(builder: DataFileBuilder, metrics: Metrics) -> None:
    # Java's PositionDeleteWriter: counts of file_path and pos are dropped (they only repeat
    # the record count), bounds kept only when every delete references one data file.
    reserved = (DELETE_FILE_PATH_ID, DELETE_FILE_POS_ID)
    lower = (metrics.lower_bounds or {}).get(DELETE_FILE_PATH_ID)
    upper = (metrics.upper_bounds or {}).get(DELETE_FILE_PATH_ID)
    single = lower is not None and lower == upper
    bounds_dropped = () if single else reserved
    builder.of_position_deletes()
    builder.with_metrics(
        Metrics(
            record_count=metrics.record_count,
            column_sizes=metrics.column_sizes or None,
            value_counts=_without(metrics.value_counts, reserved),
            null_value_counts=_without(metrics.null_value_counts, reserved),
            nan_value_counts=_without(metrics.nan_value_counts, reserved),
            lower_bounds=_without(metrics.lower_bounds, bounds_dropped),
            upper_bounds=_without(metrics.upper_bounds, bounds_dropped),
        )
    )
    if single:
        assert lower is not None
        builder.with_referenced_data_file(lower.decode("utf-8"))


def _without(values: Mapping[int, Any] | None, keys: Sequence[int]) -> dict[int, Any] | None:
    """Java's ``MetricsUtil.copyWithoutKeys``: None when nothing is left."""
    if values is None:
        return None
    kept = {k: v for k, v in values.items() if k not in keys}
    return kept or None


# ---------------------------------------------------------------------------------------------
# equality deletes


def write_equality_deletes(
    io: FileIO,
    *,
    table_location: str,
    properties: Mapping[str, str],
    schema: Schema,
    spec: PartitionSpec,
    equality_ids: Sequence[int | str],
    data: pa.Table | pa.RecordBatch | Iterable[pa.RecordBatch],
    partition: Sequence[Any] | None = None,
    row_schema: Schema | None = None,
    sort_order: SortOrder | None = None,
    file_name_prefix: str | None = None,
    target_file_size_bytes: int | None = None,
) -> list[DeleteFile]:
    """Write equality delete files; nothing is committed.

    Each row of ``data`` deletes every row (of older data files in the same partition, or of
    all partitions when ``spec`` is unpartitioned) whose delete columns equal its values, null
    matching null.

    Args:
        io: the table's FileIO.
        table_location: the table's base location.
        properties: the table properties (``write.delete.*``, metrics modes, locations).
        schema: the table schema.
        spec: the partition spec of the delete files: the table's to delete within partitions,
            an unpartitioned spec for global deletes.
        equality_ids: the delete columns, by field id or column name (primitive columns, also
            inside structs; not inside lists or maps).
        data: the deleted rows: at least the delete columns, by name (top-level columns that
            ``row_schema`` does not hold are ignored).
        partition: the partition of every row; None computes each row's partition from
            ``spec`` (the rows must then hold the partition source columns).
        row_schema: the columns stored (a subset of ``schema`` holding the delete columns);
            default the delete columns only.
        sort_order: when given (and applicable to ``row_schema``), rows are sorted by it and
            the files record its id.
        file_name_prefix: as for :func:`write_position_deletes`.
        target_file_size_bytes: overrides ``write.delete.target-file-size-bytes``.

    Returns:
        the delete files, with ``equality_ids`` and the table's metrics config applied.

    Raises:
        ValidationError: an unknown or unsuitable delete column, a row schema without the
            delete columns, a partition of the wrong arity, rows that do not fit the schema.
        DataWriteError: a storage failure (every file written is deleted).
    """
    ids = _equality_field_ids(schema, equality_ids)
    if row_schema is None:
        row_schema = prune_columns(schema, set(ids), select_full_types=False)
    missing = [i for i in ids if row_schema.find_field(i) is None]
    if missing:
        raise ValidationError(f"row_schema lacks the delete columns with field ids {missing}")
    if partition is not None:
        _check_partition(spec, partition)
    if isinstance(data, pa.RecordBatch):
        data = pa.Table.from_batches([data])
    elif not isinstance(data, pa.Table):
        data = pa.Table.from_batches(list(data))
    # Extra columns (full rows given for a narrower row schema) are not stored.
    stored = {f.name for f in row_schema.fields}
    table = to_requested_schema(data.select([n for n in data.column_names if n in stored]), row_schema)
    if table.num_rows == 0:
        return []
    sorted_write = can_sort(sort_order, row_schema)
    groups = _equality_groups(table, spec, row_schema, partition)
    if sorted_write:
        assert sort_order is not None
        groups = [(values, sort_table(rows, sort_order, row_schema)) for values, rows in groups]
    equality = tuple(ids)

    def describe(builder: DataFileBuilder, metrics: Metrics) -> None:
        builder.of_equality_deletes(*equality)
        builder.with_metrics(metrics)

    files = write_content_files(
        io,
        table_location=table_location,
        properties=properties,
        schema=row_schema,
        spec=spec,
        groups=groups,
        kind=ContentFileKind(_DELETES_SUFFIX, schema, describe, "equality delete file"),
        metrics_config=MetricsConfig.from_properties(
            properties, schema, sort_order=sort_order if sorted_write else None
        ),
        options=delete_write_properties(properties, target_file_size_bytes=target_file_size_bytes),
        file_name_prefix=file_name_prefix,
        sort_order_id=sort_order.order_id if sorted_write and sort_order is not None else None,
    )
    return files


def _equality_field_ids(schema: Schema, columns: Sequence[int | str]) -> list[int]:
    if not columns:
        raise ValidationError("equality deletes need at least one delete column")
    ids: list[int] = []
    for column in columns:
        found = schema.find_field(column)
        if found is None:
            raise ValidationError(f"equality delete column {column!r} is not in the table schema")
        if not found.field_type.is_primitive:
            raise ValidationError(
                f"equality delete column {column!r} is a {found.field_type}, not a primitive"
            )
        parent = schema.parent_id(found.field_id)
        while parent is not None:
            parent_type = schema.field(parent).field_type
            if isinstance(parent_type, (ListType, MapType)):
                raise ValidationError(f"equality delete column {column!r} is inside a list or map")
            parent = schema.parent_id(parent)
        if found.field_id not in ids:
            ids.append(found.field_id)
    return ids


def _equality_groups(
    table: pa.Table, spec: PartitionSpec, row_schema: Schema, partition: Sequence[Any] | None
) -> list[tuple[tuple[Any, ...], pa.Table]]:
    if partition is not None or not spec.fields:
        return [(tuple(partition or ()), table)]
    missing = [f.source_id for f in spec.fields if row_schema.find_field(f.source_id) is None]
    if missing:
        raise ValidationError(
            f"equality deletes of partition spec {spec.spec_id} need a partition= or the partition "
            f"source columns (field ids {missing}) in their rows"
        )
    return partition_keys(table, spec, row_schema)


def _check_partition(spec: PartitionSpec, partition: Sequence[Any]) -> None:
    if len(partition) != len(spec.fields):
        raise ValidationError(
            f"partition {tuple(partition)!r} has {len(partition)} values but spec {spec.spec_id} "
            f"has {len(spec.fields)} fields"
        )


def _new_prefix() -> str:
    return file_name_prefix()
