"""Reading one Parquet data or delete file into Arrow, projected to an Iceberg schema by field id.

:func:`read_parquet` streams record batches (memory bounded by a batch and the row group being
decoded) whose schema is exactly ``schema_to_arrow(projected)``, whatever the file holds:

- columns are matched by the Parquet field ids (``PARQUET:field_id``); a file without ids is
  matched through the table's name mapping. Renamed columns come back under the current name.
- columns the file lacks come back from ``constants`` (identity partition values, ``_file``),
  as ``_pos`` (row positions), as the field's ``initial_default``, or as nulls;
- types are promoted (int -> long, float -> double, decimal precision, date -> timestamp);
- structs, lists and maps are projected recursively by id, and only the Parquet leaf columns
  the projection needs are read;
- ``positions_to_delete`` removes rows by their position in the file, and ``row_filter`` keeps
  the rows it matches. The filter also prunes row groups by their statistics when that is
  safe (see :func:`read_parquet`).
- ``byte_range`` reads one split of the file: the row groups whose midpoint lies in the range
  (Parquet's rule for splits, as Java and Spark read them). Positions stay file-global.

:func:`read_position_deletes` reads a v2 position-delete file into sorted positions per data
file.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from typing import Any, BinaryIO, Protocol, runtime_checkable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from icefloe.arrow._layout import Layouts, read_arrow_schema
from icefloe.arrow._positions import as_positions, deleted_mask, fully_deleted, group_positions, segments
from icefloe.arrow._project import ReadRules, project_columns
from icefloe.arrow._pruning import prune_row_groups, same_names
from icefloe.arrow._types import apply_name_mapping, schema_to_arrow
from icefloe.arrow.encryption import decryption_error, is_decryption_failure, read_options
from icefloe.arrow.page_index import Compare, PagePredicate, page_batches
from icefloe.arrow.row_filter import filter_rows
from icefloe.errors import DecryptionError, InvalidDataFileError
from icefloe.spec.name_mapping import NameMapping, create_mapping_from_schema
from icefloe.spec.schema import Schema
from icefloe.spec.types import (
    LongType,
    NestedField,
    StringType,
)

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DELETE_FILE_PATH_ID",
    "DELETE_POS_ID",
    "LAST_UPDATED_SEQUENCE_NUMBER_ID",
    "ROW_ID_ID",
    "ROW_POSITION_ID",
    "ArrowFileSource",
    "Layouts",
    "read_arrow_schema",
    "read_file_schema",
    "read_parquet",
    "read_position_deletes",
    "row_groups_in_range",
    "split_row_ranges",
]

#: Rows per record batch unless told otherwise.
DEFAULT_BATCH_SIZE = 131_072
#: A read whose caller keeps every row (``for_table``) makes batches of up to this many bytes
#: (uncompressed, as the file's row groups say) rather than ``DEFAULT_BATCH_SIZE`` rows: each
#: batch has a fixed cost, and a table of narrow rows takes a third fewer of them.
TABLE_BATCH_BYTES = 64 << 20
#: Files whose read row groups hold at most this many compressed bytes are pre-buffered.
PRE_BUFFER_BYTES = 64 << 20
#: Field id of the ``_pos`` metadata column: the row's position in its data file.
ROW_POSITION_ID = 2147483645
#: Field ids of the v3 row-lineage columns ``_row_id`` and ``_last_updated_sequence_number``.
ROW_ID_ID = 2147483540
LAST_UPDATED_SEQUENCE_NUMBER_ID = 2147483539
#: Field ids of ``file_path`` and ``pos`` in position-delete files.
DELETE_FILE_PATH_ID = 2147483546
DELETE_POS_ID = 2147483545


@runtime_checkable
class ArrowFileSource(Protocol):
    """What :func:`read_parquet` reads through: an icefloe ``FileIO`` has this method."""

    def arrow_filesystem(self, location: str) -> tuple[pafs.FileSystem, str]: ...


def _arrow_location(fs: Any, path: str) -> tuple[pafs.FileSystem, str] | None:
    """The pyarrow filesystem ``path`` is read through, and its path there; None for a
    ``fs`` that only opens files (``new_input``)."""
    # (attribute checks, not the runtime Protocols: isinstance on those is slow, once a file)
    if fs is None:
        return pafs.FileSystem.from_uri(path) if "://" in path else (pafs.LocalFileSystem(), path)
    if isinstance(fs, pafs.FileSystem):
        return fs, path
    arrow_filesystem = getattr(fs, "arrow_filesystem", None)
    if callable(arrow_filesystem):
        filesystem, inner = arrow_filesystem(path)
        return filesystem, inner
    return None


def _open(fs: Any, path: str, length: int | None = None) -> tuple[pa.NativeFile | BinaryIO, bool]:
    """Open ``path`` for reading; returns the file and whether its storage is remote.

    ``length``: the file's, when known. pyarrow's native filesystems take no length (S3 asks
    for it with a HEAD); a filesystem in Python (``PyFileSystem`` over fsspec) would ask the
    store for the file's status twice, so a FileIO opens it itself with the length."""
    found = _arrow_location(fs, path)
    new_input = getattr(fs, "new_input", None)
    over_fsspec = found is not None and found[0].type_name.startswith("py::fsspec")
    if found is not None and not (over_fsspec and length is not None and callable(new_input)):
        filesystem, inner = found
        return filesystem.open_input_file(inner), filesystem.type_name != "local"
    if callable(new_input):
        return (new_input(path) if length is None else new_input(path, length=length)).open(), True
    raise TypeError(
        f"cannot read {path} through {type(fs).__name__}: expected a FileIO or pyarrow FileSystem"
    )


def _local_os_path(fs: Any, path: str) -> str | None:
    """The path of ``path`` on the local disk, when ``fs`` reads it from there."""
    found = _arrow_location(fs, path)
    return str(found[1]) if found is not None and found[0].type_name == "local" else None


def _page_pruned(
    fs: Any,
    path: str,
    metadata: pq.FileMetaData,
    row_groups: list[int],
    raw_schema: pa.Schema,
    columns: list[str],
    page_filter: PagePredicate | Compare,
    batch_size: int,
) -> Iterator[pa.RecordBatch] | None:
    """The batches of a read that skips pages by the file's page index (``page_index``), or
    None for pyarrow to read it: the file is not local, the read needs a column that is not a
    top-level primitive one (or none at all), or it is not worth it."""
    fields = {f.name: f for f in raw_schema}
    if not columns or any(name not in fields or pa.types.is_nested(fields[name].type) for name in columns):
        return None
    local = _local_os_path(fs, path)
    if local is None:
        return None
    return page_batches(local, metadata, row_groups, list(raw_schema), columns, page_filter, batch_size)


def _size(source: Any) -> int | None:
    """The size of an open file, when it is known without reading (pyarrow's files know it)."""
    if isinstance(source, pa.NativeFile):
        try:
            return int(source.size())
        except _READ_ERRORS:
            return None
    size = getattr(source, "size", None)  # fsspec's files hold theirs as an attribute
    return size if isinstance(size, int) else None


def _file_error(
    path: str, error: BaseException, what: str = "data file", *, encrypted: bool = False
) -> InvalidDataFileError | DecryptionError:
    if encrypted and is_decryption_failure(error):
        return decryption_error(path, error, what)
    if isinstance(error, FileNotFoundError):
        return InvalidDataFileError(f"{what} does not exist: {path}", location=path)
    return InvalidDataFileError(f"cannot read {what} {path}: {error}", location=path)


_READ_ERRORS = (OSError, pa.ArrowException)


# ---------------------------------------------------------------------------------------------
# the reader


def _inherited_columns(
    projected: Schema, first_row_id: int | None, sequence_number: int | None
) -> list[tuple[int, int]]:
    """(column index, field id) of the row-lineage columns whose nulls are inherited."""
    result = []
    for index, field in enumerate(projected.fields):
        if (field.field_id == ROW_ID_ID and first_row_id is not None) or (
            field.field_id == LAST_UPDATED_SEQUENCE_NUMBER_ID and sequence_number is not None
        ):
            result.append((index, field.field_id))
    return result


def _coalesce(column: pa.Array, fallback: pa.Array) -> pa.Array:
    if column.null_count == 0:
        return column
    if column.null_count == len(column):
        return fallback.cast(column.type)
    return pc.coalesce(column, fallback.cast(column.type))


def read_parquet(
    fs: Any,
    path: str,
    *,
    projected: Schema,
    file_schema_hint: Schema | None = None,
    name_mapping: NameMapping | None = None,
    row_filter: pc.Expression | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    positions_to_delete: Collection[int] | np.ndarray | pa.Array | None = None,
    constants: Mapping[int, Any] | None = None,
    first_row_id: int | None = None,
    data_sequence_number: int | None = None,
    use_threads: bool = True,
    byte_range: tuple[int, int] | None = None,
    key_metadata: bytes | None = None,
    dictionary_ids: Collection[int] = (),
    layouts: Layouts | None = None,
    for_table: bool = False,
    page_filter: PagePredicate | Compare | None = None,
    file_size: int | None = None,
) -> Iterator[pa.RecordBatch]:
    """Stream the rows of one Parquet file, projected to ``projected`` by field id.

    Every batch has exactly the schema ``read_arrow_schema(projected, dictionary_ids)``
    (``schema_to_arrow(projected)`` when no column is kept dictionary-encoded); empty batches
    are not yielded (a file whose rows are all deleted or filtered yields nothing).

    Args:
        fs: an icefloe ``FileIO`` (anything with ``arrow_filesystem(location)``), a pyarrow
            ``FileSystem`` (then ``path`` is a path within it), an object with
            ``new_input(location).open()``, or None for a local path / URI.
        path: the file's location.
        projected: the Iceberg schema to produce (the table's current schema, pruned).
        file_schema_hint: the Iceberg schema the file was written with, used as a name mapping
            when the file has no field ids and ``name_mapping`` is None.
        name_mapping: the table's ``schema.name-mapping.default``, for files without field ids.
        row_filter: keep only rows matching this expression, written against the *projected*
            column names (``pc.field("a")``, ``pc.field("s", "x")``); the columns it uses must
            be in ``projected``. It is applied exactly to every batch after projection and
            deletes, and also prunes row groups by their statistics when the file's column
            names agree with the projection (no renames, no non-null defaults for missing
            columns).
        batch_size: the maximum rows per batch.
        positions_to_delete: positions (0-based, within this file) of deleted rows, as a set,
            a sequence, or a numpy / Arrow integer array.
        constants: values by field id (icefloe representation) for fields the file does not
            hold: identity partition values, ``_file``, ``_spec_id``. ``_pos``
            (:data:`ROW_POSITION_ID`) is produced by the reader itself.
        first_row_id: the data file's ``first_row_id`` (v3): a null or missing ``_row_id``
            (:data:`ROW_ID_ID`) reads as ``first_row_id + _pos``.
        data_sequence_number: the data file's data sequence number (v3): a null or missing
            ``_last_updated_sequence_number`` reads as this.
        use_threads: decode columns in parallel.
        byte_range: ``(start, length)``: read only the row groups of this split of the file,
            those whose midpoint (first column chunk's offset + half the group's compressed
            size) lies in ``[start, start + length)``, as Parquet's readers decide splits
            (parquet-mr's range filter, used by Java Iceberg and Spark). Splits that tile the
            file read every row group exactly once. ``positions_to_delete``, ``_pos`` and
            ``_row_id`` stay positions in the whole file. None reads the whole file.
        dictionary_ids: top-level string and binary columns (field ids) to return
            dictionary-encoded, as Parquet usually stores them: pyarrow keeps the file's
            dictionaries instead of expanding them (less memory, faster), and encodes the
            pages that are not.
        layouts: what the reads of one scan share (:class:`Layouts`, one per scan):
            the per-schema work is done once for the files with the same schema. Default: none
            shared.
        for_table: the caller keeps every row (to build a table): batches may be larger than
            ``batch_size``, up to :data:`TABLE_BATCH_BYTES` of the file's rows (before the
            filter).
        page_filter: what of ``row_filter`` may be pushed into a reader that skips pages by
            the file's page index (``page_index.page_predicate``): a local, plaintext file read
            whole, without row positions, whose page index and statistics make it worth it,
            is read by DataFusion (the ``page-index`` extra) with it; ``row_filter`` is still
            applied to every batch.
        file_size: the file's length when known (a manifest's ``file_size_in_bytes``): stores
            opened through Python (fsspec: GCS, ADLS) then skip their status requests.

    Raises:
        InvalidDataFileError: the file is missing, truncated or not Parquet, has no field ids
            and there is no name mapping, or holds a column whose type cannot be read as the
            projected type (naming the file and the column).
    """
    yield from _read(
        fs,
        path,
        projected=projected,
        file_schema_hint=file_schema_hint,
        name_mapping=name_mapping,
        row_filter=row_filter,
        batch_size=batch_size,
        positions_to_delete=positions_to_delete,
        constants=dict(constants or {}),
        lineage=(first_row_id, data_sequence_number),
        use_threads=use_threads,
        byte_range=byte_range,
        key_metadata=key_metadata,
        dictionary_ids=frozenset(dictionary_ids),
        layouts=layouts,
        for_table=for_table,
        page_filter=page_filter,
        file_size=file_size,
    )


def _as_dictionary(column: pa.Array, kind: pa.DictionaryType) -> pa.Array:
    """``column`` as a dictionary array of exactly ``kind``."""
    if not isinstance(column.type, pa.DictionaryType):
        column = column.dictionary_encode()
    if column.type != kind:
        column = column.cast(kind)
    return column


def _table_batch_size(metadata: pq.FileMetaData, row_groups: list[int], batch_size: int) -> int:
    """Rows per batch for a read that keeps every row: ``TABLE_BATCH_BYTES`` of them, by the
    row groups' uncompressed size (of every column: a projection's rows are smaller), at least
    ``batch_size`` and at most the rows read."""
    rows = sum(metadata.row_group(g).num_rows for g in row_groups)
    size = sum(metadata.row_group(g).total_byte_size for g in row_groups)
    fitting = rows if size <= 0 else int(rows * TABLE_BATCH_BYTES / size)
    return int(max(batch_size, min(rows, fitting)))


def _stored_bytes(metadata: pq.FileMetaData, row_groups: list[int]) -> int:
    """The compressed size of the row groups (every column: an upper bound of what is read)."""
    total = 0
    for group in row_groups:
        row_group = metadata.row_group(group)
        total += sum(row_group.column(c).total_compressed_size for c in range(row_group.num_columns))
    return total


def row_groups_in_range(metadata: pq.FileMetaData, start: int, length: int) -> list[int]:
    """The row groups of a split ``[start, start + length)``: those whose midpoint lies in it.

    The midpoint is parquet-mr's (``filterFileMetaDataByMidpoint``): the first column chunk's
    offset (its dictionary page when it has one before the data pages) plus half the group's
    compressed size, in integer bytes.
    """
    end = start + length
    selected = []
    for index in range(metadata.num_row_groups):
        group = metadata.row_group(index)
        if group.num_columns == 0:
            continue
        first = group.column(0)
        offset = int(first.data_page_offset)
        dictionary = first.dictionary_page_offset
        if first.has_dictionary_page and dictionary is not None and 0 <= dictionary < offset:
            offset = int(dictionary)
        size = sum(int(group.column(c).total_compressed_size) for c in range(group.num_columns))
        if start <= offset + size // 2 < end:
            selected.append(index)
    return selected


def split_row_ranges(
    fs: Any, path: str, start: int, length: int, *, key_metadata: bytes | None = None
) -> list[tuple[int, int]]:
    """``(first position, row count)`` of each row group a split reads (see ``byte_range``).

    Raises:
        InvalidDataFileError: the file is missing or not Parquet.
        DecryptionError: an encrypted file (``key_metadata``) does not decrypt.
    """
    encrypted = key_metadata is not None
    try:
        source, _ = _open(fs, path)
    except _READ_ERRORS as e:
        raise _file_error(path, e, encrypted=encrypted) from e
    with source:
        try:
            metadata = pq.ParquetFile(source, **read_options(key_metadata, path)).metadata
        except _READ_ERRORS as e:
            raise _file_error(path, e, encrypted=encrypted) from e
        groups = row_groups_in_range(metadata, start, length)
        found = segments(metadata, groups)
        return [
            (int(file_start), metadata.row_group(g).num_rows)
            for g, file_start in zip(groups, found.file_starts)
        ]


def read_file_schema(fs: Any, path: str, *, key_metadata: bytes | None = None) -> pa.Schema:
    """The Arrow schema of a Parquet file's footer (field ids in the field metadata).

    Raises:
        InvalidDataFileError: the file is missing or not Parquet.
        DecryptionError: an encrypted file (``key_metadata``) does not decrypt.
    """
    encrypted = key_metadata is not None
    try:
        source, _ = _open(fs, path)
    except _READ_ERRORS as e:
        raise _file_error(path, e, "file", encrypted=encrypted) from e
    with source:
        try:
            return pq.ParquetFile(source, **read_options(key_metadata, path)).schema_arrow
        except _READ_ERRORS as e:
            raise _file_error(path, e, "file", encrypted=encrypted) from e


def _read(
    fs: Any,
    path: str,
    *,
    projected: Schema,
    file_schema_hint: Schema | None,
    name_mapping: NameMapping | None,
    row_filter: pc.Expression | None,
    batch_size: int,
    positions_to_delete: Any,
    constants: dict[int, Any],
    lineage: tuple[int | None, int | None],
    use_threads: bool,
    what: str = "data file",
    byte_range: tuple[int, int] | None = None,
    key_metadata: bytes | None = None,
    dictionary_ids: frozenset[int] = frozenset(),
    layouts: Layouts | None = None,
    for_table: bool = False,
    page_filter: PagePredicate | Compare | None = None,
    file_size: int | None = None,
) -> Iterator[pa.RecordBatch]:
    encrypted = key_metadata is not None
    decryption = read_options(key_metadata, path)
    try:
        source, _ = _open(fs, path, file_size)
    except _READ_ERRORS as e:
        raise _file_error(path, e, what, encrypted=encrypted) from e
    with source:
        # pre_buffer: the column chunks are fetched in a few large (coalesced, concurrent) reads
        # rather than one per page, on local disks as on object stores; pyarrow fetches every
        # row group's up front, so only when they are few enough to hold (memory stays
        # bounded). A file no larger than that is opened pre-buffered at once; a larger one is
        # decided from the row groups read (and opened again on its footer).
        size = _size(source)
        pre_buffer = size is not None and size <= PRE_BUFFER_BYTES
        try:
            parquet_file = pq.ParquetFile(source, pre_buffer=pre_buffer, **decryption)
            metadata = parquet_file.metadata
            raw_schema = parquet_file.schema_arrow
        except _READ_ERRORS as e:
            raise _file_error(path, e, what, encrypted=encrypted) from e
        layout = (layouts if layouts is not None else Layouts()).layout(
            raw_schema, projected, dictionary_ids, name_mapping, file_schema_hint, path
        )
        deletes = as_positions(positions_to_delete) if positions_to_delete is not None else None
        if deletes is not None and len(deletes) == 0:
            deletes = None

        first_row_id, sequence_number = lineage
        inherited = _inherited_columns(projected, first_row_id, sequence_number)
        row_groups: list[int] = list(range(metadata.num_row_groups))
        whole_file = True
        if byte_range is not None:
            row_groups = row_groups_in_range(metadata, *byte_range)
            if not row_groups:
                return
            whole_file = len(row_groups) == metadata.num_row_groups
        if row_filter is not None:
            valued = {*constants, ROW_POSITION_ID, *(fid for _, fid in inherited)}
            if same_names(list(layout.file_schema), layout.target_struct, valued=valued):
                pruned = prune_row_groups(source, layout.file_schema, projected, row_filter, **decryption)
                if pruned is not None:
                    in_range = set(row_groups)
                    row_groups = [g for g in pruned if g in in_range]
        needs_positions = (
            deletes is not None
            or projected.find_field(ROW_POSITION_ID) is not None
            or any(fid == ROW_ID_ID for _, fid in inherited)
        )
        row_segments = segments(metadata, row_groups) if needs_positions else None
        if deletes is not None and row_segments is not None:
            kept = [
                (g, s)
                for g, s in zip(row_groups, row_segments.file_starts)
                if not fully_deleted(metadata, g, int(s), deletes)
            ]
            if len(kept) != len(row_groups):
                row_groups = [g for g, _ in kept]
                row_segments = segments(metadata, row_groups)
        if not row_groups:
            return

        reopen = bool(layout.dictionary_columns)
        if size is None or size > PRE_BUFFER_BYTES:
            pre_buffer = _stored_bytes(metadata, row_groups) <= PRE_BUFFER_BYTES
            reopen = reopen or pre_buffer
        if reopen:
            try:
                parquet_file = pq.ParquetFile(
                    source,
                    metadata=metadata,
                    pre_buffer=pre_buffer,
                    read_dictionary=list(layout.dictionary_columns) or None,
                    **decryption,
                )
            except _READ_ERRORS as e:
                raise _file_error(path, e, what, encrypted=encrypted) from e
        if for_table:
            batch_size = _table_batch_size(metadata, row_groups, batch_size)
        rules = ReadRules(path, constants, keep_dictionaries=bool(dictionary_ids))
        target_fields = list(layout.target_schema)
        columns = layout.column_paths(parquet_file.schema)
        batches: Iterator[pa.RecordBatch] | None = None
        if (
            page_filter is not None
            and whole_file
            and not (needs_positions or encrypted or layout.dictionary_columns)
        ):
            batches = _page_pruned(
                fs, path, metadata, row_groups, raw_schema, columns, page_filter, batch_size
            )
        try:
            if batches is None:
                batches = parquet_file.iter_batches(
                    batch_size=batch_size, row_groups=row_groups, columns=columns, use_threads=use_threads
                )
        except _READ_ERRORS as e:
            raise _file_error(path, e, what, encrypted=encrypted) from e
        stream_start = 0
        batch_schema_source: pa.Schema | None = None
        batch_schema_mapped: pa.Schema | None = None
        while True:
            try:
                batch = next(batches)
            except StopIteration:
                break
            except _READ_ERRORS as e:
                raise _file_error(path, e, what, encrypted=encrypted) from e
            count = batch.num_rows
            positions = row_segments.positions(stream_start, count) if row_segments is not None else None
            stream_start += count
            if layout.mapping is not None:
                # re-apply the name mapping to the (pruned) batch schema, once per schema
                if batch_schema_mapped is None or not batch.schema.equals(batch_schema_source):
                    batch_schema_source = batch.schema
                    batch_schema_mapped = apply_name_mapping(batch.schema, layout.mapping)
                sources = list(batch_schema_mapped)
            else:
                sources = list(batch.schema)
            if deletes is not None and positions is not None:
                keep = ~deleted_mask(positions, deletes)
                if not keep.all():
                    keep_array = pa.array(keep)
                    batch = batch.filter(keep_array)
                    positions = positions[keep]
                    count = batch.num_rows
                    if count == 0:
                        continue
            if positions is not None:
                rules.special[ROW_POSITION_ID] = pa.array(positions, pa.int64())
            projected_columns = project_columns(
                batch.columns, sources, layout.target_struct, target_fields, count, rules
            )
            for index, field_id in inherited:
                if field_id == ROW_ID_ID:
                    assert positions is not None and first_row_id is not None
                    fallback = pa.array(positions + first_row_id, pa.int64())
                else:
                    fallback = pa.repeat(pa.scalar(sequence_number, pa.int64()), count)
                projected_columns[index] = _coalesce(projected_columns[index], fallback)
            for index, kind in layout.dictionary_indices:
                projected_columns[index] = _as_dictionary(projected_columns[index], kind)
            if projected_columns:
                result = pa.RecordBatch.from_arrays(projected_columns, schema=layout.target_schema)
            else:  # nothing projected (a count): batches of rows without columns
                result = pa.RecordBatch.from_struct_array(pa.repeat(pa.scalar({}, pa.struct([])), count))
            if row_filter is not None:
                result = filter_rows(result, row_filter)
            if result.num_rows:
                yield result


# ---------------------------------------------------------------------------------------------
# position deletes


def read_position_deletes(
    fs: Any, path: str, *, data_files: Collection[str] | None = None, key_metadata: bytes | None = None
) -> dict[str, np.ndarray]:
    """The deleted positions in a v2 position-delete file, by data file path.

    Columns are found by their reserved field ids (``file_path`` 2147483546, ``pos``
    2147483545), or by those names in files written without ids.

    Args:
        fs: as for :func:`read_parquet`.
        path: the delete file.
        data_files: only return positions for these data files (row groups whose
            ``file_path`` statistics exclude all of them are skipped).
        key_metadata: the delete file's ``key_metadata`` (None: plaintext).

    Returns:
        for each data file, its deleted positions as a sorted, unique int64 numpy array.

    Raises:
        InvalidDataFileError: the file is missing, unreadable, or lacks the two columns.
    """
    schema = Schema(
        NestedField(DELETE_FILE_PATH_ID, "file_path", StringType(), required=True),
        NestedField(DELETE_POS_ID, "pos", LongType(), required=True),
    )
    mapping = create_mapping_from_schema(schema)
    row_filter = None
    if data_files is not None:
        row_filter = pc.field("file_path").isin(pa.array(sorted(data_files), pa.string()))
    batches = list(
        _read(
            fs,
            path,
            projected=schema,
            file_schema_hint=None,
            name_mapping=mapping,
            row_filter=row_filter,
            batch_size=DEFAULT_BATCH_SIZE,
            positions_to_delete=None,
            constants={},
            lineage=(None, None),
            use_threads=True,
            what="delete file",
            key_metadata=key_metadata,
        )
    )
    table = pa.Table.from_batches(batches, schema=schema_to_arrow(schema))
    if table.num_rows and (table.column(0).null_count or table.column(1).null_count):
        raise InvalidDataFileError(
            f"position delete file {path} has null file_path or pos values", location=path
        )
    return group_positions(table)
