"""The schemas of Java's metadata tables, field for field (ids, names, types, nullability, docs).

They are icefloe ``Schema`` objects, so that filters bind to them with icefloe's binder and
they turn into Arrow schemas with ``schema_to_arrow``. Sources: Java's ``DataFile.getType``,
``ManifestEntry.getSchema``, ``MetricsUtil.readableMetricsSchema``, ``Partitioning.partitionType``
and the ``*Table`` classes of ``org.apache.iceberg`` (1.9).
"""

from __future__ import annotations

from icefloe.errors import ValidationError
from icefloe.spec.partitioning import PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.types import (
    BinaryType,
    BooleanType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestamptzType,
)

__all__ = [
    "ALL_MANIFESTS_SCHEMA",
    "HISTORY_SCHEMA",
    "MANIFESTS_SCHEMA",
    "METADATA_LOG_ENTRIES_SCHEMA",
    "READABLE_METRICS",
    "REFS_SCHEMA",
    "SNAPSHOTS_SCHEMA",
    "entries_schema",
    "files_schema",
    "partition_type",
    "partitions_schema",
    "position_deletes_schema",
    "readable_metric_columns",
    "source_types",
]

READABLE_METRICS = "readable_metrics"
PARTITION_ID = 102
DATA_FILE_ID = 2


def _req(field_id: int, name: str, type_: IcebergType, doc: str | None = None) -> NestedField:
    return NestedField(field_id, name, type_, required=True, doc=doc)


def _opt(field_id: int, name: str, type_: IcebergType, doc: str | None = None) -> NestedField:
    return NestedField(field_id, name, type_, required=False, doc=doc)


def _counts(field_id: int, key_id: int, name: str, doc: str) -> NestedField:
    return _opt(field_id, name, MapType(key_id, IntegerType(), key_id + 1, LongType()), doc)


def _bounds(field_id: int, key_id: int, name: str, doc: str) -> NestedField:
    return _opt(field_id, name, MapType(key_id, IntegerType(), key_id + 1, BinaryType()), doc)


def _data_file_fields(partition: StructType) -> list[NestedField]:
    """Java's ``DataFile.getType(partitionType)``; no ``partition`` field when it is empty
    (Java drops an empty struct, which not every engine supports)."""
    fields = [
        _opt(
            134,
            "content",
            IntegerType(),
            "Contents of the file: 0=data, 1=position deletes, 2=equality deletes",
        ),
        _req(100, "file_path", StringType(), "Location URI with FS scheme"),
        _req(101, "file_format", StringType(), "File format name: avro, orc, or parquet"),
        _opt(141, "spec_id", IntegerType(), "Partition spec ID"),
        _req(
            PARTITION_ID, "partition", partition, "Partition data tuple, schema based on the partition spec"
        ),
        _req(103, "record_count", LongType(), "Number of records in the file"),
        _req(104, "file_size_in_bytes", LongType(), "Total file size in bytes"),
        _counts(108, 117, "column_sizes", "Map of column id to total size on disk"),
        _counts(109, 119, "value_counts", "Map of column id to total count, including null and NaN"),
        _counts(110, 121, "null_value_counts", "Map of column id to null value count"),
        _counts(137, 138, "nan_value_counts", "Map of column id to number of NaN values in the column"),
        _bounds(125, 126, "lower_bounds", "Map of column id to lower bound"),
        _bounds(128, 129, "upper_bounds", "Map of column id to upper bound"),
        _opt(131, "key_metadata", BinaryType(), "Encryption key metadata blob"),
        _opt(132, "split_offsets", ListType(133, LongType()), "Splittable offsets"),
        _opt(135, "equality_ids", ListType(136, IntegerType()), "Equality comparison field IDs"),
        _opt(140, "sort_order_id", IntegerType(), "Sort order ID"),
        _opt(142, "first_row_id", LongType(), "Starting row ID to assign to new rows"),
        _opt(
            143,
            "referenced_data_file",
            StringType(),
            "Fully qualified location (URI with FS scheme) of a data file that all deletes reference",
        ),
        _opt(144, "content_offset", LongType(), "The offset in the file where the content starts"),
        _opt(145, "content_size_in_bytes", LongType(), "The length of referenced content stored in the file"),
    ]
    if not partition.fields:
        fields = [f for f in fields if f.field_id != PARTITION_ID]
    return fields


#: (name, doc, is a bound) of each readable metric, in Java's order.
READABLE_METRIC_DEFINITIONS = (
    ("column_size", "Total size on disk", False),
    ("value_count", "Total count, including null and NaN", False),
    ("null_value_count", "Null value count", False),
    ("nan_value_count", "NaN value count", False),
    ("lower_bound", "Lower bound", True),
    ("upper_bound", "Upper bound", True),
)


def readable_metric_columns(table_schema: Schema) -> list[tuple[str, NestedField]]:
    """(full name, field) of every primitive column of the table schema, sorted by name: the
    columns ``readable_metrics`` describes."""
    names = table_schema.id_to_name()
    columns = []
    for field_id, name in names.items():
        field = table_schema.find_field(field_id)
        if field is not None and field.field_type.is_primitive:
            columns.append((name, field))
    columns.sort(key=lambda pair: pair[0])
    return columns


def _readable_metrics(table_schema: Schema, highest_id: int) -> NestedField:
    """Java's ``MetricsUtil.readableMetricsSchema``: ids continue after ``highest_id``."""
    next_id = highest_id
    fields = []
    for name, field in readable_metric_columns(table_schema):
        next_id += 1
        struct_id = next_id
        metrics = []
        for metric, doc, is_bound in READABLE_METRIC_DEFINITIONS:
            next_id += 1
            metrics.append(_opt(next_id, metric, field.field_type if is_bound else LongType(), doc))
        fields.append(_opt(struct_id, name, StructType(*metrics), f"Metrics for column {name}"))
    return _opt(next_id + 1, READABLE_METRICS, StructType(*fields), "Column metrics in readable form")


def _with_readable_metrics(fields: list[NestedField], table_schema: Schema) -> Schema:
    base = Schema(*fields)
    return Schema(*fields, _readable_metrics(table_schema, base.highest_field_id))


def files_schema(metadata: TableMetadata) -> Schema:
    """The ``files`` family (files, data_files, delete_files and their ``all_`` forms)."""
    return _with_readable_metrics(_data_file_fields(partition_type(metadata)), metadata.schema())


def entries_schema(metadata: TableMetadata) -> Schema:
    """The ``entries`` and ``all_entries`` tables (Java's ``ManifestEntry.getSchema``)."""
    fields = [
        _req(0, "status", IntegerType()),
        _opt(1, "snapshot_id", LongType()),
        _opt(3, "sequence_number", LongType()),
        _opt(4, "file_sequence_number", LongType()),
        _req(DATA_FILE_ID, "data_file", StructType(*_data_file_fields(partition_type(metadata)))),
    ]
    return _with_readable_metrics(fields, metadata.schema())


def partition_type(metadata: TableMetadata) -> StructType:
    """Java's ``Partitioning.partitionType(table)``: every partition field of every spec, by
    field id (ascending), named as in the newest spec that has it, all optional. A field that
    a v1 table dropped (a void transform) takes its type from a spec where it is not void.

    Raises:
        ValidationError: two specs give one field id different transforms or sources.
    """
    found: dict[int, tuple[str, IcebergType, bool, int, str]] = {}
    for spec in sorted(metadata.partition_specs, key=lambda s: s.spec_id, reverse=True):
        types = _spec_types(metadata, spec)
        for pf in spec.fields:
            type_ = types[pf.field_id]
            void = pf.transform.is_void
            known = found.get(pf.field_id)
            if known is None:
                found[pf.field_id] = (pf.name, type_, void, pf.source_id, str(pf.transform))
                continue
            name, _, known_void, source_id, transform = known
            compatible = (void or known_void or transform == str(pf.transform)) and source_id == pf.source_id
            if not compatible:
                raise ValidationError(
                    f"conflicting partition fields with id {pf.field_id}: {transform}({source_id}) in a newer "
                    f"spec, {pf.transform}({pf.source_id}) in spec {spec.spec_id}"
                )
            if known_void and not void:
                found[pf.field_id] = (name, type_, False, source_id, str(pf.transform))
    return StructType(*(_opt(fid, found[fid][0], found[fid][1]) for fid in sorted(found)))


def source_types(metadata: TableMetadata, spec: PartitionSpec) -> dict[int, IcebergType]:
    """The source column type of each field of ``spec`` (by partition field id), looked up in
    the current schema and else in the newest older schema that has it (a dropped source
    column); a void field whose source is in no schema gets ``int``."""
    schemas = [metadata.schema(), *sorted(metadata.schemas, key=lambda s: s.schema_id, reverse=True)]
    types: dict[int, IcebergType] = {}
    for pf in spec.fields:
        source = next((f for s in schemas if (f := s.find_field(pf.source_id)) is not None), None)
        if source is None and not pf.transform.is_void:
            raise ValidationError(
                f"partition field '{pf.name}' of spec {spec.spec_id}: source column id {pf.source_id} "
                "is in no schema of the table"
            )
        types[pf.field_id] = IntegerType() if source is None else source.field_type
    return types


def _spec_types(metadata: TableMetadata, spec: PartitionSpec) -> dict[int, IcebergType]:
    """The result type of each field of ``spec`` (by partition field id)."""
    sources = source_types(metadata, spec)
    return {pf.field_id: pf.transform.result_type(sources[pf.field_id]) for pf in spec.fields}


def partitions_schema(metadata: TableMetadata) -> Schema:
    """Java's ``PartitionsTable`` (without ``partition`` and ``spec_id`` when unpartitioned)."""
    partition = partition_type(metadata)
    fields = [
        _req(1, "partition", partition),
        _req(4, "spec_id", IntegerType()),
        _req(2, "record_count", LongType(), "Count of records in data files"),
        _req(3, "file_count", IntegerType(), "Count of data files"),
        _req(11, "total_data_file_size_in_bytes", LongType(), "Total size in bytes of data files"),
        _req(5, "position_delete_record_count", LongType(), "Count of records in position delete files"),
        _req(6, "position_delete_file_count", IntegerType(), "Count of position delete files"),
        _req(7, "equality_delete_record_count", LongType(), "Count of records in equality delete files"),
        _req(8, "equality_delete_file_count", IntegerType(), "Count of equality delete files"),
        _opt(
            9,
            "last_updated_at",
            TimestamptzType(),
            "Commit time of snapshot that last updated this partition",
        ),
        _opt(10, "last_updated_snapshot_id", LongType(), "Id of snapshot that last updated this partition"),
    ]
    if not partition.fields:
        fields = fields[2:]
    return Schema(*fields)


HISTORY_SCHEMA = Schema(
    _req(1, "made_current_at", TimestamptzType()),
    _req(2, "snapshot_id", LongType()),
    _opt(3, "parent_id", LongType()),
    _req(4, "is_current_ancestor", BooleanType()),
)

METADATA_LOG_ENTRIES_SCHEMA = Schema(
    _req(1, "timestamp", TimestamptzType()),
    _req(2, "file", StringType()),
    _opt(3, "latest_snapshot_id", LongType()),
    _opt(4, "latest_schema_id", IntegerType()),
    _opt(5, "latest_sequence_number", LongType()),
)

SNAPSHOTS_SCHEMA = Schema(
    _req(1, "committed_at", TimestamptzType()),
    _req(2, "snapshot_id", LongType()),
    _opt(3, "parent_id", LongType()),
    _opt(4, "operation", StringType()),
    _opt(5, "manifest_list", StringType()),
    _opt(6, "summary", MapType(7, StringType(), 8, StringType())),
)

REFS_SCHEMA = Schema(
    _req(1, "name", StringType()),
    _req(2, "type", StringType()),
    _req(3, "snapshot_id", LongType()),
    _opt(4, "max_reference_age_in_ms", LongType()),
    _opt(5, "min_snapshots_to_keep", IntegerType()),
    _opt(6, "max_snapshot_age_in_ms", LongType()),
)


def _manifest_fields(*, all_manifests: bool) -> list[NestedField]:
    # all_manifests has a few optional fields where manifests has required ones (as Java).
    loose = _opt if all_manifests else _req
    summary = StructType(
        _req(10, "contains_null", BooleanType()),
        (_req if all_manifests else _opt)(11, "contains_nan", BooleanType()),
        _opt(12, "lower_bound", StringType()),
        _opt(13, "upper_bound", StringType()),
    )
    return [
        _req(14, "content", IntegerType()),
        _req(1, "path", StringType()),
        _req(2, "length", LongType()),
        loose(3, "partition_spec_id", IntegerType()),
        loose(4, "added_snapshot_id", LongType()),
        loose(5, "added_data_files_count", IntegerType()),
        loose(6, "existing_data_files_count", IntegerType()),
        loose(7, "deleted_data_files_count", IntegerType()),
        _req(15, "added_delete_files_count", IntegerType()),
        _req(16, "existing_delete_files_count", IntegerType()),
        _req(17, "deleted_delete_files_count", IntegerType()),
        loose(8, "partition_summaries", ListType(9, summary)),
    ]


MANIFESTS_SCHEMA = Schema(*_manifest_fields(all_manifests=False))
ALL_MANIFESTS_SCHEMA = Schema(
    *_manifest_fields(all_manifests=True), _req(18, "reference_snapshot_id", LongType())
)

# Java's MetadataColumns ids of the position_deletes columns.
_DELETE_FILE_PATH_ID = 2147483546
_DELETE_FILE_POS_ID = 2147483545
_DELETE_FILE_ROW_ID = 2147483544
_PARTITION_COLUMN_ID = 2147483645
_SPEC_ID_COLUMN_ID = 2147483644
_FILE_PATH_COLUMN_ID = 2147483646
_CONTENT_OFFSET_COLUMN_ID = 2147483543
_CONTENT_SIZE_COLUMN_ID = 2147483542


def position_deletes_schema(metadata: TableMetadata) -> Schema:
    """Java's ``PositionDeletesTable`` schema: the partition fields get ids that no schema of
    the table uses (as Java reassigns them)."""
    used = {i for s in metadata.schemas for i in s.id_to_name()}
    partition = partition_type(metadata)
    counter = 0

    def fresh() -> int:
        nonlocal counter
        counter += 1
        while counter in used:
            counter += 1
        return counter

    reassigned = StructType(*(_opt(fresh(), f.name, f.field_type) for f in partition.fields))
    table_struct = metadata.schema().as_struct()
    fields = [
        _req(
            _DELETE_FILE_PATH_ID, "file_path", StringType(), "Path of a file in which a deleted row is stored"
        ),
        _req(_DELETE_FILE_POS_ID, "pos", LongType(), "Ordinal position of a deleted row in the data file"),
        _opt(_DELETE_FILE_ROW_ID, "row", table_struct, "Deleted row values"),
        _req(_PARTITION_COLUMN_ID, "partition", reassigned, "Partition that position delete row belongs to"),
        _req(_SPEC_ID_COLUMN_ID, "spec_id", IntegerType(), "Spec ID used to track the file containing a row"),
        _req(
            _FILE_PATH_COLUMN_ID,
            "delete_file_path",
            StringType(),
            "Path of the file in which a row is stored",
        ),
    ]
    if metadata.format_version >= 3:
        fields += [
            _opt(
                _CONTENT_OFFSET_COLUMN_ID,
                "content_offset",
                LongType(),
                "The offset in the DV where the content starts",
            ),
            _opt(
                _CONTENT_SIZE_COLUMN_ID,
                "content_size_in_bytes",
                LongType(),
                "The length in bytes of the DV blob",
            ),
        ]
    if not partition.fields:
        fields = [f for f in fields if f.field_id != _PARTITION_COLUMN_ID]
    return Schema(*fields)
