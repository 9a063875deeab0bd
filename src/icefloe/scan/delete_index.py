"""Which delete files apply to which data file (spec: "Scan Planning").

- A deletion vector applies to the data file it references, if that file's data sequence
  number is <= the vector's; when one applies, position delete files do not.
- A position delete file applies to data files in the same partition (spec id and values)
  whose data sequence number is <= its own, restricted to its ``referenced_data_file`` when
  set (or, as Java does, to the single path its ``file_path`` bounds name).
- An equality delete file applies to older data files (strictly smaller sequence number) in
  the same partition, or to all partitions when its spec is unpartitioned.

Partition values are compared with floats by their bit patterns and NaNs normalized, as the
spec requires.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from icefloe.errors import InvalidManifestError
from icefloe.spec.manifest import DataFile, DeleteFile, FileContent, FileFormat
from icefloe.spec.partition_values import partition_key
from icefloe.spec.partitioning import PartitionSpec

__all__ = ["DeleteFileIndex"]

#: Field id of ``file_path`` in position delete files (spec: reserved field ids).
DELETE_FILE_PATH_ID = 2147483546


@dataclass
class _BySequence:
    """Delete files of one partition, ordered by data sequence number."""

    sequence_numbers: list[int] = field(default_factory=list)
    files: list[DeleteFile] = field(default_factory=list)

    def add(self, sequence_number: int, file: DeleteFile) -> None:
        at = bisect.bisect_right(self.sequence_numbers, sequence_number)
        self.sequence_numbers.insert(at, sequence_number)
        self.files.insert(at, file)

    def at_or_after(self, sequence_number: int) -> list[DeleteFile]:
        return self.files[bisect.bisect_left(self.sequence_numbers, sequence_number) :]

    def after(self, sequence_number: int) -> list[DeleteFile]:
        return self.files[bisect.bisect_right(self.sequence_numbers, sequence_number) :]


class DeleteFileIndex:
    """Built once per scan from the live delete files of a snapshot."""

    def __init__(self, specs: Mapping[int, PartitionSpec]):
        self._specs = specs
        self._positions: dict[tuple[Any, ...], _BySequence] = defaultdict(_BySequence)
        self._equality: dict[tuple[Any, ...], _BySequence] = defaultdict(_BySequence)
        self._global_equality = _BySequence()
        self._vectors: dict[str, list[tuple[int, DeleteFile]]] = defaultdict(list)
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def add(self, file: DeleteFile, data_sequence_number: int) -> None:
        self._count += 1
        if file.content == FileContent.POSITION_DELETES:
            if file.file_format == FileFormat.PUFFIN:
                if file.referenced_data_file is None:
                    raise InvalidManifestError(
                        f"deletion vector {file.file_path} has no referenced_data_file",
                        field="referenced_data_file",
                    )
                self._vectors[file.referenced_data_file].append((data_sequence_number, file))
            else:
                self._positions[partition_key(file.partition, file.spec_id)].add(data_sequence_number, file)
        elif file.content == FileContent.EQUALITY_DELETES:
            spec = self._specs.get(file.spec_id)
            if spec is not None and spec.is_unpartitioned:
                self._global_equality.add(data_sequence_number, file)
            else:
                self._equality[partition_key(file.partition, file.spec_id)].add(data_sequence_number, file)

    def for_data_file(self, file: DataFile, data_sequence_number: int) -> tuple[DeleteFile, ...]:
        """The delete files that apply to ``file``, positions first, then equality deletes."""
        if not self._count:
            return ()
        key = partition_key(file.partition, file.spec_id)
        vectors = [
            dv
            for seq, dv in self._vectors.get(file.file_path, ())
            if seq >= data_sequence_number and partition_key(dv.partition, dv.spec_id) == key
        ]
        if vectors:
            result: list[DeleteFile] = vectors
        else:
            bucket = self._positions.get(key)
            candidates = bucket.at_or_after(data_sequence_number) if bucket else []
            result = [d for d in candidates if _may_reference(d, file.file_path)]
        bucket = self._equality.get(key)
        if bucket:
            result.extend(bucket.after(data_sequence_number))
        result.extend(self._global_equality.after(data_sequence_number))
        return tuple(result)


def _may_reference(delete: DeleteFile, data_path: str) -> bool:
    if delete.referenced_data_file is not None:
        return delete.referenced_data_file == data_path
    lower = (delete.lower_bounds or {}).get(DELETE_FILE_PATH_ID)
    upper = (delete.upper_bounds or {}).get(DELETE_FILE_PATH_ID)
    if lower is None or upper is None:
        return True
    # Bounds may be truncated (prefixes); compare as bytes, inclusive, as Java's metrics do.
    encoded = data_path.encode("utf-8")
    return lower <= encoded and encoded[: len(upper)] <= upper
