"""Manifest records (spec: "Manifests", "Manifest Lists").

``DataFile`` and ``DeleteFile`` describe one file each (``content`` 0 data, 1 position
deletes, 2 equality deletes). A ``ManifestEntry`` tracks a file in a manifest with its status
(0 EXISTING, 1 ADDED, 2 DELETED) and inherited ids. ``ManifestFile`` is a manifest list row.

Partition values are tuples in partition-spec field order, in icefloe's value representation.
Bounds stay in their serialized form (``bytes`` per Appendix D), keyed by field id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import IntEnum, StrEnum
from typing import Any

from icefloe.errors import ValidationError
from icefloe.spec.partition_values import parse_partition_value
from icefloe.spec.partitioning import PartitionSpec
from icefloe.spec.schema import Schema

__all__ = [
    "ContentFile",
    "DataFile",
    "DataFileBuilder",
    "DeleteFile",
    "FieldSummary",
    "FileContent",
    "FileFormat",
    "ManifestContent",
    "ManifestEntry",
    "ManifestEntryStatus",
    "ManifestFile",
    "Metrics",
    "make_content_file",
]


class ManifestContent(IntEnum):
    DATA = 0
    DELETES = 1


class FileContent(IntEnum):
    DATA = 0
    POSITION_DELETES = 1
    EQUALITY_DELETES = 2


class ManifestEntryStatus(IntEnum):
    EXISTING = 0
    ADDED = 1
    DELETED = 2


class FileFormat(StrEnum):
    PARQUET = "PARQUET"
    AVRO = "AVRO"
    ORC = "ORC"
    PUFFIN = "PUFFIN"

    @classmethod
    def parse(cls, value: str | FileFormat) -> FileFormat:
        try:
            return cls(str(value.value if isinstance(value, FileFormat) else value).upper())
        except ValueError:
            raise ValidationError(
                f"unknown file format {value!r}; expected parquet, avro, orc or puffin"
            ) from None


@dataclass(frozen=True, slots=True)
class Metrics:
    """Column metrics of one file, keyed by field id; bounds are serialized (Appendix D)."""

    record_count: int
    column_sizes: Mapping[int, int] | None = None
    value_counts: Mapping[int, int] | None = None
    null_value_counts: Mapping[int, int] | None = None
    nan_value_counts: Mapping[int, int] | None = None
    lower_bounds: Mapping[int, bytes] | None = None
    upper_bounds: Mapping[int, bytes] | None = None


@dataclass(frozen=True, slots=True, eq=False)
class ContentFile:
    """Fields shared by data and delete files; see the spec's ``data_file`` struct.

    ``spec_id`` is not stored in the manifest entry itself: it comes from the manifest that
    holds the file. ``first_row_id`` is v3 row lineage. ``referenced_data_file``,
    ``content_offset`` and ``content_size_in_bytes`` are for delete files (deletion vectors).
    """

    file_path: str
    file_format: FileFormat
    record_count: int
    file_size_in_bytes: int
    partition: tuple[Any, ...] = ()
    content: FileContent = FileContent.DATA
    spec_id: int = 0
    column_sizes: Mapping[int, int] | None = None
    value_counts: Mapping[int, int] | None = None
    null_value_counts: Mapping[int, int] | None = None
    nan_value_counts: Mapping[int, int] | None = None
    lower_bounds: Mapping[int, bytes] | None = None
    upper_bounds: Mapping[int, bytes] | None = None
    key_metadata: bytes | None = None
    split_offsets: tuple[int, ...] | None = None
    equality_ids: tuple[int, ...] | None = None
    sort_order_id: int | None = None
    first_row_id: int | None = None
    referenced_data_file: str | None = None
    content_offset: int | None = None
    content_size_in_bytes: int | None = None

    def __eq__(self, other: object) -> bool:
        # Files are identified by path (and content kind): two descriptions of one file are one file.
        return (
            isinstance(other, ContentFile)
            and self.file_path == other.file_path
            and self.content == other.content
            and self.content_offset == other.content_offset
        )

    def __hash__(self) -> int:
        return hash((self.file_path, int(self.content), self.content_offset))

    @property
    def path(self) -> str:
        return self.file_path

    @property
    def format(self) -> FileFormat:
        return self.file_format

    def copy(self, **changes: Any) -> Any:
        """A copy with some fields changed (``dataclasses.replace``)."""
        return replace(self, **changes)

    def without_stats(self) -> Any:
        return replace(
            self,
            column_sizes=None,
            value_counts=None,
            null_value_counts=None,
            nan_value_counts=None,
            lower_bounds=None,
            upper_bounds=None,
        )

    @staticmethod
    def builder(spec: PartitionSpec, schema: Schema | None = None) -> DataFileBuilder:
        """Like Java's ``DataFiles.builder(spec)``; pass the schema to parse partition paths."""
        return DataFileBuilder(spec, schema)


@dataclass(frozen=True, slots=True, eq=False)
class DataFile(ContentFile):
    """A data file (``content`` 0)."""


@dataclass(frozen=True, slots=True, eq=False)
class DeleteFile(ContentFile):
    """A position (1) or equality (2) delete file, or a deletion vector (Puffin, v3)."""

    @property
    def is_deletion_vector(self) -> bool:
        return self.file_format == FileFormat.PUFFIN


def make_content_file(**fields: Any) -> ContentFile:
    """A DataFile or DeleteFile, chosen by ``content``."""
    content = FileContent(fields.get("content", 0))
    fields["content"] = content
    return (DataFile if content == FileContent.DATA else DeleteFile)(**fields)


@dataclass(frozen=True, slots=True)
class ManifestEntry:
    """A file's row in a manifest.

    ``snapshot_id``, ``sequence_number`` and ``file_sequence_number`` are the values after
    inheritance (spec: "Sequence Number Inheritance"); readers fill them in from the manifest
    list when the file stores null.
    """

    status: ManifestEntryStatus
    snapshot_id: int | None
    data_file: ContentFile
    sequence_number: int | None = None
    file_sequence_number: int | None = None

    @property
    def is_live(self) -> bool:
        return self.status != ManifestEntryStatus.DELETED


@dataclass(frozen=True, slots=True)
class FieldSummary:
    """Partition field summary in a manifest list row; bounds serialized."""

    contains_null: bool
    contains_nan: bool | None = None
    lower_bound: bytes | None = None
    upper_bound: bytes | None = None


@dataclass(frozen=True, slots=True)
class ManifestFile:
    """A manifest list row. Counts are of files (``added_files_count`` ...) and of rows."""

    manifest_path: str
    manifest_length: int
    partition_spec_id: int
    content: ManifestContent = ManifestContent.DATA
    sequence_number: int = 0
    min_sequence_number: int = 0
    added_snapshot_id: int | None = None
    added_files_count: int | None = None
    existing_files_count: int | None = None
    deleted_files_count: int | None = None
    added_rows_count: int | None = None
    existing_rows_count: int | None = None
    deleted_rows_count: int | None = None
    partitions: tuple[FieldSummary, ...] | None = None
    key_metadata: bytes | None = None
    first_row_id: int | None = None

    @property
    def path(self) -> str:
        return self.manifest_path

    def has_added_files(self) -> bool:
        return self.added_files_count is None or self.added_files_count > 0

    def has_existing_files(self) -> bool:
        return self.existing_files_count is None or self.existing_files_count > 0

    def has_deleted_files(self) -> bool:
        return self.deleted_files_count is None or self.deleted_files_count > 0


@dataclass
class DataFileBuilder:
    """Builds a DataFile or DeleteFile as Java's ``DataFiles.builder(spec)`` /
    ``FileMetadata.deleteFileBuilder(spec)`` do. Every ``with_*`` returns the builder."""

    spec: PartitionSpec
    schema: Schema | None = None
    _fields: dict[str, Any] = field(default_factory=dict)

    def _set(self, name: str, value: Any) -> DataFileBuilder:
        self._fields[name] = value
        return self

    def with_path(self, path: str) -> DataFileBuilder:
        return self._set("file_path", path)

    def with_format(self, file_format: str | FileFormat) -> DataFileBuilder:
        return self._set("file_format", FileFormat.parse(file_format))

    def with_file_size_in_bytes(self, size: int) -> DataFileBuilder:
        return self._set("file_size_in_bytes", size)

    def with_record_count(self, count: int) -> DataFileBuilder:
        return self._set("record_count", count)

    def with_partition(self, values: Sequence[Any]) -> DataFileBuilder:
        return self._set("partition", tuple(values))

    def with_partition_path(self, path: str) -> DataFileBuilder:
        """Parse ``"country=China/grass_date=2023-01-01"`` into partition values."""
        if self.schema is None:
            raise ValidationError(
                "with_partition_path needs the table schema: DataFile.builder(spec, schema)"
            )
        return self._set("partition", _parse_partition_path(self.spec, self.schema, path))

    def with_metrics(self, metrics: Metrics) -> DataFileBuilder:
        for name in (
            "record_count",
            "column_sizes",
            "value_counts",
            "null_value_counts",
            "nan_value_counts",
            "lower_bounds",
            "upper_bounds",
        ):
            value = getattr(metrics, name)
            if value is not None:
                self._fields[name] = value
        return self

    def with_split_offsets(self, offsets: Sequence[int]) -> DataFileBuilder:
        return self._set("split_offsets", tuple(offsets))

    def with_sort_order_id(self, order_id: int) -> DataFileBuilder:
        return self._set("sort_order_id", order_id)

    def with_encryption_key_metadata(self, key_metadata: bytes) -> DataFileBuilder:
        return self._set("key_metadata", key_metadata)

    def of_position_deletes(self) -> DataFileBuilder:
        return self._set("content", FileContent.POSITION_DELETES)

    def of_equality_deletes(self, *field_ids: int) -> DataFileBuilder:
        self._set("equality_ids", tuple(field_ids))
        return self._set("content", FileContent.EQUALITY_DELETES)

    def with_referenced_data_file(self, path: str) -> DataFileBuilder:
        return self._set("referenced_data_file", path)

    def with_content_offset(self, offset: int) -> DataFileBuilder:
        return self._set("content_offset", offset)

    def with_content_size_in_bytes(self, size: int) -> DataFileBuilder:
        return self._set("content_size_in_bytes", size)

    def copy_from(self, other: ContentFile) -> DataFileBuilder:
        for name in ContentFile.__dataclass_fields__:
            self._fields[name] = getattr(other, name)
        return self

    def build(self) -> Any:
        """The DataFile (or DeleteFile for delete content).

        Raises:
            ValidationError: naming a required field that was not set.
        """
        for required in ("file_path", "file_format", "file_size_in_bytes", "record_count"):
            if required not in self._fields:
                raise ValidationError(f"data file builder: '{required}' is required")
        values = dict(self._fields)
        values.setdefault("spec_id", self.spec.spec_id)
        partition = values.setdefault("partition", ())
        if len(partition) != len(self.spec.fields):
            raise ValidationError(
                f"data file {values['file_path']}: partition has {len(partition)} values but spec "
                f"{self.spec.spec_id} has {len(self.spec.fields)} fields"
            )
        return make_content_file(**values)


def _parse_partition_path(spec: PartitionSpec, schema: Schema, path: str) -> tuple[Any, ...]:
    parts = [p for p in path.strip("/").split("/") if p]
    if len(parts) != len(spec.fields):
        raise ValidationError(
            f"partition path {path!r} has {len(parts)} parts but spec {spec.spec_id} has {len(spec.fields)} fields"
        )
    partition_type = spec.partition_type(schema)
    values = []
    for part, pf, pt in zip(parts, spec.fields, partition_type.fields):
        name, sep, text = part.partition("=")
        if not sep:
            raise ValidationError(f"partition path part {part!r} is not name=value")
        if name != pf.name:
            raise ValidationError(f"partition path part {part!r}: expected field '{pf.name}'")
        values.append(parse_partition_value(pf.transform, pt.field_type, text))
    return tuple(values)
