"""The ``position_deletes`` metadata table (Java's ``PositionDeletesTable``): one row per deleted
position, from every live position delete file and deletion vector of a snapshot.

The ``row`` column (the deleted row, which a position delete file may carry) is always null:
icefloe neither writes nor reads it (Java's Spark writers have not written it by default since
1.2).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pyarrow as pa

from icefloe.arrow.convert import repeat_value
from icefloe.arrow.reader import read_position_deletes
from icefloe.arrow.schema import schema_to_arrow
from icefloe.io import FileIO
from icefloe.io.deletion_vector import deserialize_deletion_vector
from icefloe.io.puffin import PuffinReader
from icefloe.scan._columnar import DecodedManifest
from icefloe.spec.manifest import DeleteFile, FileContent, FileFormat
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.inspect.files import FileRows
from icefloe.table.inspect.schemas import partition_type, position_deletes_schema

__all__ = ["position_deletes"]

_POSITION = int(FileContent.POSITION_DELETES)


def _positions(io: FileIO, delete: DeleteFile) -> dict[str, np.ndarray]:
    """The deleted positions of one delete file, by data file."""
    if delete.file_format == FileFormat.PUFFIN:
        reader = PuffinReader(io, delete.file_path, length=delete.file_size_in_bytes or None)
        blob = reader.read_blob((delete.content_offset or 0, delete.content_size_in_bytes or 0))
        return {
            delete.referenced_data_file or "": deserialize_deletion_vector(blob, location=delete.file_path)
        }
    return read_position_deletes(io, delete.file_path)


def position_deletes(metadata: TableMetadata, io: FileIO, manifests: Iterable[DecodedManifest]) -> pa.Table:
    """The rows of the position deletes of the live entries of ``manifests`` (delete
    manifests; others are skipped)."""
    schema = position_deletes_schema(metadata)
    arrow_schema = schema_to_arrow(schema)
    unified = partition_type(metadata)
    rows = FileRows(metadata, entries=False, readable_metrics=False)
    v3 = metadata.format_version >= 3
    batches = []
    for decoded in manifests:
        indices = np.flatnonzero(decoded.live() & (decoded.content == _POSITION)).tolist()
        if not indices:
            continue
        for delete in decoded.files(indices, stats=False):
            assert isinstance(delete, DeleteFile)
            by_file = _positions(io, delete)
            paths = list(by_file)
            counts = [len(by_file[p]) for p in paths]
            n = sum(counts)
            if not n:
                continue
            columns: dict[str, pa.Array] = {
                "file_path": pa.array(np.repeat(np.array(paths, dtype=object), counts), pa.string()),
                "pos": pa.array(np.concatenate([by_file[p] for p in paths]), pa.int64()),
                "row": pa.nulls(n, arrow_schema.field("row").type),
                "spec_id": pa.array(np.full(n, delete.spec_id, dtype=np.int32), pa.int32()),
                "delete_file_path": pa.array(np.full(n, delete.file_path, dtype=object), pa.string()),
            }
            if "partition" in arrow_schema.names:
                (value,) = rows.unified(delete.spec_id, [tuple(delete.partition)])
                columns["partition"] = repeat_value(value, unified, n, arrow_schema.field("partition").type)
            if v3:
                columns["content_offset"] = pa.array([delete.content_offset] * n, pa.int64())
                columns["content_size_in_bytes"] = pa.array([delete.content_size_in_bytes] * n, pa.int64())
            batches.append(
                pa.RecordBatch.from_arrays(
                    [columns[name] for name in arrow_schema.names], schema=arrow_schema
                )
            )
    return pa.Table.from_batches(batches, schema=arrow_schema)
