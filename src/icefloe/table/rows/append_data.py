"""Data conveniences over the operations: ``table.append(data)`` and friends.

Input is normalized to Arrow, cast to the table's schema (by column name; a null in a required
column or an unknown column is an error naming it), written as Parquet data files partitioned
and sorted per the table, and committed as one snapshot. If the commit definitely fails, the
written data files are deleted; if its outcome is unknown, nothing is deleted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import pyarrow as pa

from icefloe.arrow.schema import to_requested_schema
from icefloe.errors import ValidationError
from icefloe.spec.manifest import DataFile
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata
from icefloe.write import write_data_files

if TYPE_CHECKING:
    from icefloe.io import FileIO
    from icefloe.table.snapshots.append import AppendFiles

__all__ = ["append_data", "to_arrow_input"]


class _AppendTarget(Protocol):
    """A Table or a Transaction: something that knows its metadata and can append."""

    @property
    def metadata(self) -> TableMetadata: ...

    def io(self) -> FileIO: ...

    def new_append(self) -> AppendFiles: ...


def to_arrow_input(data: Any) -> pa.Table | pa.RecordBatchReader:
    """Accept a pyarrow Table / RecordBatch / RecordBatchReader, a pandas or polars DataFrame,
    or a list of dicts; return Arrow.

    Raises:
        ValidationError: for anything else, naming its type.
    """
    if isinstance(data, (pa.Table, pa.RecordBatchReader)):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    module = type(data).__module__.split(".")[0]
    if module == "pandas":
        return pa.Table.from_pandas(data, preserve_index=False)
    if module == "polars":
        return data.to_arrow()
    if isinstance(data, list) and all(isinstance(row, Mapping) for row in data):
        return pa.Table.from_pylist(data)
    raise ValidationError(
        f"cannot append {type(data).__name__}: pass a pyarrow Table, RecordBatchReader, pandas or polars DataFrame"
    )


def write_files(target: _AppendTarget, data: Any) -> list[DataFile]:
    """Write ``data`` as data files of the table (not committed)."""
    metadata = target.metadata
    schema = metadata.schema()
    if isinstance(data, list) and not data:
        # An empty list has no columns to infer, so it would fail the schema check; it is
        # empty data, which writes (and commits) nothing, like any other empty input.
        return []
    arrow = to_arrow_input(data)
    batches: Iterable[pa.RecordBatch] | pa.Table
    if isinstance(arrow, pa.RecordBatchReader):
        batches = (to_requested_schema(batch, schema) for batch in arrow)
    else:
        batches = to_requested_schema(arrow, schema)
    return write_data_files(
        target.io(),
        table_location=metadata.location,
        properties=metadata.properties,
        schema=schema,
        spec=metadata.spec(),
        data=batches,
        sort_order=metadata.sort_order(),
    )


def append_data(
    target: _AppendTarget,
    data: Any,
    *,
    snapshot_properties: Mapping[str, str] | None = None,
    branch: str | None = None,
) -> Snapshot | None:
    """Write ``data`` and commit it as one append snapshot (to ``branch``, default main);
    returns the snapshot committed (None when ``data`` had no rows: nothing is committed)."""
    files = write_files(target, data)
    if not files:
        return None
    try:
        append = target.new_append()
        if branch is not None:
            append.to_branch(branch)
        append.delete_on_failure(f.file_path for f in files)
        for file in files:
            append.append_file(file)
        for key, value in (snapshot_properties or {}).items():
            append.set(key, value)
    except Exception:
        target.io().delete_quietly([f.file_path for f in files])
        raise
    # A definite commit failure deletes the files (the operation owns them); an unknown
    # outcome keeps them, since a committed snapshot may reference them.
    append.commit()
    return target.metadata.snapshot_by_id(append.snapshot_id)
