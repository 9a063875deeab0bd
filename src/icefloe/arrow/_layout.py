"""What reading a Parquet file with a given Arrow schema takes, worked out once per schema (private).

The files of one scan usually share their Arrow schema: the field-id mapping, the target Arrow
schema, the Parquet leaves the projection needs and the dictionary columns depend only on that
schema and on the read's projection, so :class:`Layouts` keeps them per file schema and each
file of a scan after the first skips that work.
"""

from __future__ import annotations

import threading
from collections.abc import Collection
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from icefloe.arrow._pruning import selected_leaves
from icefloe.arrow._types import apply_name_mapping, field_id_of, schema_to_arrow
from icefloe.errors import InvalidDataFileError
from icefloe.spec.name_mapping import NameMapping, create_mapping_from_schema
from icefloe.spec.schema import Schema
from icefloe.spec.types import StructType

__all__ = ["FileLayout", "Layouts", "dictionary_value_type", "read_arrow_schema"]

#: File schemas a :class:`Layouts` remembers (a scan's files usually share one or a few).
_KEPT = 16


def read_arrow_schema(projected: Schema, dictionary_ids: Collection[int] = ()) -> pa.Schema:
    """The Arrow schema of the batches :func:`icefloe.arrow.reader.read_parquet` yields for
    ``projected``: that of ``schema_to_arrow``, with the top-level string and binary columns of
    ``dictionary_ids`` dictionary-encoded (int32 indices)."""
    schema = schema_to_arrow(projected)
    if not dictionary_ids:
        return schema
    fields = []
    for field, iceberg_field in zip(schema, projected.fields):
        if iceberg_field.field_id in dictionary_ids and dictionary_value_type(field.type):
            field = field.with_type(pa.dictionary(pa.int32(), field.type))
        fields.append(field)
    return pa.schema(fields, metadata=schema.metadata)


def dictionary_value_type(kind: pa.DataType) -> bool:
    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind))


@dataclass(frozen=True)
class FileLayout:
    """How a file with one Arrow schema is read for one projection."""

    file_schema: pa.Schema  # the file's Arrow schema with field ids (mapped when it has none)
    mapping: NameMapping | None  # the name mapping that gave the ids, if any
    target_schema: pa.Schema  # the batches' schema (``read_arrow_schema``)
    target_struct: StructType
    dictionary_columns: tuple[str, ...]  # file columns pyarrow keeps dictionary-encoded
    dictionary_indices: tuple[tuple[int, pa.DictionaryType], ...]  # target columns to encode
    leaf_count: int  # Parquet leaves the file schema walk found
    leaves: tuple[int, ...]  # the Parquet leaf columns the projection needs
    names: tuple[str, ...]  # the top-level columns to read if the leaves do not line up

    def column_paths(self, parquet_schema: pq.ParquetSchema) -> list[str]:
        """The Parquet column paths to read from a file of this layout."""
        if self.leaf_count != len(parquet_schema):  # pragma: no cover - a schema pyarrow reports unusually
            return list(self.names)
        return [parquet_schema.column(i).path for i in self.leaves]


def file_schema_with_ids(
    file_schema: pa.Schema,
    name_mapping: NameMapping | None,
    file_schema_hint: Schema | None,
    path: str,
) -> tuple[pa.Schema, NameMapping | None]:
    """The file's Arrow schema with field ids, and the name mapping used to add them (if any).

    Raises:
        InvalidDataFileError: the file has no field ids and there is nothing to map its names.
    """
    if any(field_id_of(f) is not None for f in file_schema):
        return file_schema, None  # as Java: a file with ids is read by its ids only
    mapping = name_mapping
    if mapping is None and file_schema_hint is not None:
        mapping = create_mapping_from_schema(file_schema_hint)
    if mapping is None:
        raise InvalidDataFileError(
            f"data file {path} has no field ids and the table has no name mapping "
            "(schema.name-mapping.default): cannot tell which columns it holds",
            location=path,
        )
    return apply_name_mapping(file_schema, mapping), mapping


@dataclass(frozen=True, eq=False)
class _Read:
    """What a read asks for, besides the file: its projection, the columns it keeps
    dictionary-encoded, and how a file without field ids is mapped."""

    projected: Schema
    dictionary_ids: frozenset[int]
    name_mapping: NameMapping | None
    file_schema_hint: Schema | None

    def same(self, other: _Read) -> bool:
        # identity for the Iceberg objects (an entry holds them, so an id is never reused)
        return (
            self.projected is other.projected
            and self.name_mapping is other.name_mapping
            and self.file_schema_hint is other.file_schema_hint
            and self.dictionary_ids == other.dictionary_ids
        )


def _layout(raw_schema: pa.Schema, read: _Read, path: str) -> FileLayout:
    projected, dictionary_ids = read.projected, read.dictionary_ids
    file_schema, mapping = file_schema_with_ids(raw_schema, read.name_mapping, read.file_schema_hint, path)
    target_schema = read_arrow_schema(projected, dictionary_ids)
    dictionary_columns = tuple(
        raw.name
        for raw, mapped in zip(raw_schema, file_schema)
        if field_id_of(mapped) in dictionary_ids and dictionary_value_type(raw.type)
    )
    leaf_count, leaves = selected_leaves(file_schema, projected)
    wanted = {f.field_id for f in projected.fields}
    return FileLayout(
        file_schema=file_schema,
        mapping=mapping,
        target_schema=target_schema,
        target_struct=projected.as_struct(),
        dictionary_columns=dictionary_columns,
        dictionary_indices=tuple(
            (i, field.type)
            for i, field in enumerate(target_schema)
            if isinstance(field.type, pa.DictionaryType)
        ),
        leaf_count=leaf_count,
        leaves=tuple(leaves),
        names=tuple(f.name for f in file_schema if field_id_of(f) in wanted),
    )


@dataclass(frozen=True)
class _Entry:
    raw_schema: pa.Schema
    read: _Read
    layout: FileLayout

    def serves(self, raw_schema: pa.Schema, read: _Read) -> bool:
        # the Arrow schema by value, field metadata (the ids) included
        return self.read.same(read) and self.raw_schema.equals(raw_schema, check_metadata=True)


class Layouts:
    """The layouts of the files one scan reads, by file schema (safe to share between threads)."""

    def __init__(self) -> None:
        self._entries: list[_Entry] = []
        self._lock = threading.Lock()

    def layout(
        self,
        raw_schema: pa.Schema,
        projected: Schema,
        dictionary_ids: frozenset[int],
        name_mapping: NameMapping | None,
        file_schema_hint: Schema | None,
        path: str,
    ) -> FileLayout:
        """The layout for a file whose footer gives ``raw_schema`` (``path``: for errors).

        Raises:
            InvalidDataFileError: the file has no field ids and there is nothing to map its names.
        """
        read = _Read(projected, dictionary_ids, name_mapping, file_schema_hint)
        with self._lock:
            for entry in self._entries:
                if entry.serves(raw_schema, read):
                    return entry.layout
        layout = _layout(raw_schema, read, path)
        with self._lock:
            self._entries.append(_Entry(raw_schema, read, layout))
            del self._entries[:-_KEPT]
        return layout
