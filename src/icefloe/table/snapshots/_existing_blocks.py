"""Which blocks of a manifest a merge copies whole (``manifests.carried.CarriedBlock``).

A merged manifest is merged again a hundred commits later, and most of its entries are
EXISTING ones with their snapshot ids and sequence numbers written out: the merge would write
each of them exactly as it is stored. Found from the manifest decoded natively (arrow-avro,
``icefloe[fast]``: about 1 us an entry), such blocks are copied as stored, compressed, and the
merge costs what its other entries cost, not what the whole table's do. Without the native
decoder, or for a manifest it cannot read, every entry is carried one by one.
"""

from __future__ import annotations

import numpy as np

from icefloe.arrow.buffers import numpy_view, validity
from icefloe.manifests import _native
from icefloe.manifests._avro_file import read_header, schema_of
from icefloe.manifests.carried import BlockCheck, BlockFacts
from icefloe.manifests.reader import entry_layout
from icefloe.scan._columnar.native import Unsupported, decoded_from_arrow
from icefloe.spec.manifest import FileContent, ManifestContent, ManifestEntryStatus, ManifestFile
from icefloe.spec.types import StructType

__all__ = ["COPY_MIN_EXISTING", "existing_blocks"]

#: Manifests with fewer EXISTING entries are carried entry by entry: a native decode costs
#: about 0.5 ms to set up, more than a few entries cost to decode.
COPY_MIN_EXISTING = 100


def existing_blocks(
    data: bytes, manifest: ManifestFile, partition_type: StructType, format_version: int
) -> BlockCheck | None:
    """The check of ``manifest``'s blocks (``data``: its content) for
    ``carried_entries(copy=...)``: a block copies when every entry in it is EXISTING, with its
    snapshot id and (v2) sequence numbers written out. None when no block is worth checking
    or the manifest is not decoded natively."""
    if manifest.existing_files_count is not None and manifest.existing_files_count < COPY_MIN_EXISTING:
        return None
    location = manifest.manifest_path
    header = read_header(data, location)
    batch, _ = _native.decode(data, header, location, min_records=COPY_MIN_EXISTING)
    if batch is None:
        return None
    layout = entry_layout(schema_of(header, location), partition_type, location)
    try:
        decoded = decoded_from_arrow(batch, layout, manifest, summary=True)
    except Unsupported:
        return None
    stored = [layout.status, layout.snapshot_id]
    if format_version >= 2:
        stored += [layout.sequence_number, layout.file_sequence_number]
    columns = []
    for name in stored:
        index = batch.schema.get_field_index(name)
        if index < 0:
            return None
        columns.append(batch.column(index))
    status = numpy_view(columns[0])  # an Avro int: int32 (no cast: pyarrow's imports pandas)
    if status is None:
        return None
    copyable = status == int(ManifestEntryStatus.EXISTING)
    for column in columns:
        copyable &= validity(column)
    # The files' content must be the manifest's (a writer refuses to mix them).
    data_files = decoded.content == int(FileContent.DATA)
    copyable &= data_files if manifest.content == ManifestContent.DATA else ~data_files
    not_copyable = np.concatenate(([0], np.cumsum(~copyable)))
    count = decoded.count
    records, codes, sequence_numbers = decoded.record_count, decoded.partition_codes, decoded.sequence_number
    partitions = decoded.partitions

    def check(first: int, entries: int) -> BlockFacts | None:
        end = first + entries
        if end > count or not_copyable[end] != not_copyable[first]:
            return None
        in_block = np.sort(codes[first:end])  # not np.unique: it imports numpy.ma (15 ms)
        distinct = in_block[np.concatenate(([True], in_block[1:] != in_block[:-1]))].tolist()
        return BlockFacts(
            int(records[first:end].sum()),
            tuple(partitions[c] for c in distinct),
            int(sequence_numbers[first:end].min()) if format_version >= 2 else None,
        )

    return check
