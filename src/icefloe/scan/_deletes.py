"""Loading the delete files of a scan, each once (private; public through ``scan.reading``).

- Position delete files (Parquet) are read whole into sorted positions per data file.
- Deletion vectors are read blob by blob from their Puffin files (``content_offset`` /
  ``content_size_in_bytes``) and checked against their ``record_count`` (the cardinality).
- Equality delete files are read projected to their delete columns; files that share their
  delete columns and apply to the same data files become one :class:`EqualityDeleteSet`.

The equality delete columns are found by field id in the scan's read schema first, then in the
table's schemas (current first): a delete column dropped from the table still applies (spec).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from icefloe.arrow.equality import EqualityDeleteSet, key_column
from icefloe.arrow.reader import read_file_schema, read_parquet, read_position_deletes
from icefloe.arrow.schema import arrow_to_schema, schema_to_arrow
from icefloe.errors import InvalidDataFileError, InvalidManifestError, InvalidSchemaError
from icefloe.io import FileIO
from icefloe.io.deletion_vector import deserialize_deletion_vector
from icefloe.io.encryption import new_decrypted_input
from icefloe.io.puffin import PuffinReader
from icefloe.scan.tasks import FileScanTask
from icefloe.serde.name_mapping_json import loads_name_mapping
from icefloe.spec.manifest import DeleteFile, FileContent, FileFormat
from icefloe.spec.name_mapping import NameMapping
from icefloe.spec.properties import DEFAULT_NAME_MAPPING
from icefloe.spec.schema import Schema
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.types import NestedField, StructType

__all__ = ["EqualityDeletes", "PositionDeletes", "index_path", "table_name_mapping", "with_fields"]

_UNSET = object()


def table_name_mapping(metadata: TableMetadata) -> NameMapping | None:
    """The table's ``schema.name-mapping.default``, parsed (None when unset)."""
    text = metadata.properties.get(DEFAULT_NAME_MAPPING)
    if text is None:
        return None
    return loads_name_mapping(text, location=f"table property {DEFAULT_NAME_MAPPING}")


@dataclass(frozen=True, slots=True)
class EqualityDeletes:
    """The equality deletes of one task that share their delete columns.

    Attributes:
        field_ids: the delete columns (sorted field ids).
        schema: a schema holding exactly those columns (nested ones inside their structs), with
            the types the data and the delete files are read as.
        keys: the delete keys.
    """

    field_ids: tuple[int, ...]
    schema: Schema
    keys: EqualityDeleteSet


class PositionDeletes:
    """The delete files of one scan, each read once: position deletes, deletion vectors and
    equality deletes.

    A delete file usually applies to many data files; reading it again for each would cost a
    footer read and a scan per task (slow on object stores). One instance serves one scan; it
    holds what it has read.

    Args:
        io: reads the delete files.
        metadata: the table metadata: its schemas find equality delete columns that the read
            schema lacks (dropped or unselected columns), its name mapping reads delete files
            without field ids. Without it, a delete file's own field ids and types are used.
    """

    def __init__(self, io: FileIO, metadata: TableMetadata | None = None):
        self._io = io
        self._metadata = metadata
        self._by_delete_file: dict[str, dict[str, np.ndarray]] = {}
        self._vectors: dict[tuple[str, int], np.ndarray] = {}
        self._equality_keys: dict[tuple[str, tuple[int, ...]], list[pa.Array]] = {}
        self._equality_sets: dict[tuple[tuple[int, ...], tuple[str, ...]], EqualityDeletes] = {}
        self._mapping: object = _UNSET
        self._file_schemas: dict[str, Schema | None] = {}

    @property
    def metadata(self) -> TableMetadata | None:
        """The table metadata this cache was made with, if any."""
        return self._metadata

    # ---- positions ----------------------------------------------------------------------------

    def for_task(self, task: FileScanTask) -> np.ndarray | None:
        """The sorted, unique deleted positions of the task's data file (from position delete
        files and deletion vectors), or None when there are none."""
        arrays = []
        for delete in task.deletes:
            if delete.content != FileContent.POSITION_DELETES:
                continue
            if delete.file_format == FileFormat.PUFFIN:
                arrays.append(self._vector(delete, task.file.file_path))
                continue
            found = self._by_delete_file.get(delete.file_path)
            if found is None:
                found = self._by_delete_file[delete.file_path] = read_position_deletes(
                    self._io, delete.file_path, key_metadata=delete.key_metadata
                )
            positions = found.get(task.file.file_path)
            if positions is not None:
                arrays.append(positions)
        if not arrays:
            return None
        if len(arrays) == 1:
            return arrays[0]
        return np.unique(np.concatenate(arrays))

    def _vector(self, delete: DeleteFile, data_path: str) -> np.ndarray:
        if delete.content_offset is None or delete.content_size_in_bytes is None:
            raise InvalidManifestError(
                f"deletion vector {delete.file_path} has no content_offset / content_size_in_bytes",
                field="content_offset",
            )
        if delete.referenced_data_file not in (None, data_path):
            raise InvalidManifestError(
                f"deletion vector in {delete.file_path} references {delete.referenced_data_file}, "
                f"not {data_path}",
                field="referenced_data_file",
            )
        key = (delete.file_path, delete.content_offset)
        found = self._vectors.get(key)
        if found is None:
            source = new_decrypted_input(
                self._io, delete.file_path, delete.key_metadata, length=delete.file_size_in_bytes or None
            )
            reader = PuffinReader(source)
            blob = reader.read_blob((delete.content_offset, delete.content_size_in_bytes))
            found = deserialize_deletion_vector(blob, location=delete.file_path)
            if len(found) != delete.record_count:
                raise InvalidDataFileError(
                    f"deletion vector at offset {delete.content_offset} of {delete.file_path} holds "
                    f"{len(found)} positions but its manifest entry says {delete.record_count}",
                    location=delete.file_path,
                )
            self._vectors[key] = found
        return found

    # ---- equality deletes ---------------------------------------------------------------------

    def equality_for_task(
        self, task: FileScanTask, read_schema: Schema | None = None
    ) -> list[EqualityDeletes]:
        """The task's equality deletes, one entry per set of delete columns.

        Args:
            task: the task.
            read_schema: the schema the data is read with; its types win for delete columns
                it holds.

        Raises:
            InvalidManifestError: an equality delete file without ``equality_ids``.
            InvalidDataFileError: a delete file is missing or unreadable, or a delete column is
                in no schema of the table nor in the delete file.
        """
        groups: dict[tuple[int, ...], list[DeleteFile]] = {}
        for delete in task.deletes:
            if delete.content != FileContent.EQUALITY_DELETES:
                continue
            if not delete.equality_ids:
                raise InvalidManifestError(
                    f"equality delete file {delete.file_path} has no equality_ids", field="equality_ids"
                )
            groups.setdefault(tuple(sorted(set(delete.equality_ids))), []).append(delete)
        result = []
        for ids, files in groups.items():
            key = (ids, tuple(sorted(f.file_path for f in files)))
            found = self._equality_sets.get(key)
            if found is None:
                schema = with_fields(
                    Schema(),
                    ids,
                    self._sources(read_schema, files, (task.file.file_path, task.file.key_metadata)),
                )
                columns = [self._keys(f, ids, schema) for f in files]
                keys = [pa.chunked_array([c[i] for c in columns]) for i in range(len(ids))]
                found = self._equality_sets[key] = EqualityDeletes(ids, schema, EqualityDeleteSet(ids, keys))
            result.append(found)
        return result

    def _sources(
        self, read_schema: Schema | None, files: Sequence[DeleteFile], data_file: tuple[str, bytes | None]
    ) -> list[Schema]:
        """Where delete columns are looked up, in order: the read schema, then the table's
        schemas; without table metadata, the delete files' own schemas (their types are the
        newest: deletes apply to older data), then the data file's."""
        sources = [read_schema] if read_schema is not None else []
        if self._metadata is not None:
            sources.append(self._metadata.schema())
            sources.extend(sorted(self._metadata.schemas, key=lambda s: -s.schema_id))
            return sources
        for path, key_metadata in [*((f.file_path, f.key_metadata) for f in files), data_file]:
            found = self._file_schema(path, key_metadata)
            if found is not None:
                sources.append(found)
        return sources

    def _file_schema(self, path: str, key_metadata: bytes | None) -> Schema | None:
        """The Iceberg schema of a Parquet file from its field ids; None when it has none."""
        if path not in self._file_schemas:
            arrow = read_file_schema(self._io, path, key_metadata=key_metadata)
            try:
                self._file_schemas[path] = arrow_to_schema(arrow)
            except InvalidSchemaError:
                self._file_schemas[path] = None
        return self._file_schemas[path]

    def _keys(self, delete: DeleteFile, ids: tuple[int, ...], schema: Schema) -> list[pa.Array]:
        key = (delete.file_path, ids)
        found = self._equality_keys.get(key)
        if found is None:
            batches = list(
                read_parquet(
                    self._io,
                    delete.file_path,
                    projected=schema,
                    file_schema_hint=schema,
                    name_mapping=self._name_mapping(),
                    key_metadata=delete.key_metadata,
                )
            )
            table = pa.Table.from_batches(batches, schema=_arrow_schema(schema, batches))
            found = [key_column(table, index_path(schema, i)) for i in ids]
            self._equality_keys[key] = found
        return found

    def _name_mapping(self) -> NameMapping | None:
        """The table's name mapping, for delete files without field ids (None: match such files
        by the delete columns' names)."""
        if self._mapping is _UNSET:
            self._mapping = table_name_mapping(self._metadata) if self._metadata is not None else None
        return self._mapping  # type: ignore[return-value]


def _arrow_schema(schema: Schema, batches: list[pa.RecordBatch]) -> pa.Schema:
    return batches[0].schema if batches else schema_to_arrow(schema)


# ---------------------------------------------------------------------------------------------
# schemas with extra fields


def with_fields(base: Schema, field_ids: Iterable[int], sources: Sequence[Schema]) -> Schema:
    """``base`` plus the fields ``field_ids`` that it lacks, taken from the first of ``sources``
    that has each, inside the structs that lead to them (added as optional fields, renamed
    ``_<name>_<id>`` where their name is taken).

    Raises:
        InvalidDataFileError: a field is in none of the sources.
    """
    struct = base.as_struct()
    for field_id in field_ids:
        if base.find_field(field_id) is not None:
            continue
        source = next((s for s in sources if s.find_field(field_id) is not None), None)
        if source is None:
            raise InvalidDataFileError(
                f"equality delete column with field id {field_id} is in no schema of the table"
            )
        chain = [source.field(field_id)]
        parent = source.parent_id(field_id)
        while parent is not None:
            chain.insert(0, source.field(parent))
            parent = source.parent_id(parent)
        struct = _insert(struct, chain)
    if struct is base.as_struct():
        return base
    return Schema(*struct.fields, schema_id=base.schema_id)


def _insert(struct: StructType, chain: list[NestedField]) -> StructType:
    head, rest = chain[0], chain[1:]
    fields = list(struct.fields)
    for index, existing in enumerate(fields):
        if existing.field_id != head.field_id:
            continue
        if not rest:
            return struct
        if not isinstance(existing.field_type, StructType):  # pragma: no cover - ids are unique
            return struct
        child = _insert(existing.field_type, rest)
        fields[index] = NestedField(
            existing.field_id,
            existing.name,
            child,
            existing.required,
            existing.doc,
            existing.initial_default,
            existing.write_default,
        )
        return StructType(*fields)
    taken = {f.name for f in fields}
    name = head.name if head.name not in taken else f"_{head.name}_{head.field_id}"
    field_type = _insert(StructType(), rest) if rest else head.field_type
    initial = head.initial_default if not rest else None
    fields.append(NestedField(head.field_id, name, field_type, False, head.doc, initial))
    return StructType(*fields)


def index_path(schema: Schema, field_id: int) -> list[int]:
    """Indices from the top-level column down through structs to the field ``field_id``."""
    chain = [field_id]
    parent = schema.parent_id(field_id)
    while parent is not None:
        chain.insert(0, parent)
        parent = schema.parent_id(parent)
    path = []
    struct: StructType = schema.as_struct()
    for step in chain:
        index = next(i for i, f in enumerate(struct.fields) if f.field_id == step)
        path.append(index)
        child = struct.fields[index].field_type
        if isinstance(child, StructType):
            struct = child
    return path
