"""DeleteFileIndex: which delete files apply to which data file (spec: "Scan Planning")."""

from __future__ import annotations

from typing import Any

from icefloe.scan import DeleteFileIndex
from icefloe.scan.delete_index import DELETE_FILE_PATH_ID
from icefloe.spec.manifest import DataFile, DeleteFile, FileContent, FileFormat
from icefloe.spec.partitioning import PartitionField, PartitionSpec
from icefloe.spec.transforms import parse_transform

UNPARTITIONED = PartitionSpec((), spec_id=0)
BY_DAY = PartitionSpec((PartitionField(4, 1000, parse_transform("identity"), "day"),), spec_id=1)
BY_SCORE = PartitionSpec((PartitionField(6, 1001, parse_transform("identity"), "score"),), spec_id=2)
SPECS = {0: UNPARTITIONED, 1: BY_DAY, 2: BY_SCORE}


def data(path: str, partition: tuple[Any, ...] = (1,), spec_id: int = 1) -> DataFile:
    return DataFile(path, FileFormat.PARQUET, 10, 100, partition=partition, spec_id=spec_id)


def positions(path: str, partition: tuple[Any, ...] = (1,), spec_id: int = 1, **fields: Any) -> DeleteFile:
    return DeleteFile(
        path,
        FileFormat.PARQUET,
        1,
        10,
        partition=partition,
        spec_id=spec_id,
        content=FileContent.POSITION_DELETES,
        **fields,
    )


def equality(path: str, partition: tuple[Any, ...] = (1,), spec_id: int = 1) -> DeleteFile:
    return DeleteFile(
        path,
        FileFormat.PARQUET,
        1,
        10,
        partition=partition,
        spec_id=spec_id,
        content=FileContent.EQUALITY_DELETES,
        equality_ids=(1,),
    )


def vector(path: str, referenced: str, partition: tuple[Any, ...] = (1,)) -> DeleteFile:
    return DeleteFile(
        path,
        FileFormat.PUFFIN,
        1,
        10,
        partition=partition,
        spec_id=1,
        content=FileContent.POSITION_DELETES,
        referenced_data_file=referenced,
        content_offset=4,
        content_size_in_bytes=40,
    )


def paths(files: tuple[DeleteFile, ...]) -> list[str]:
    return [f.file_path for f in files]


def test_empty_index() -> None:
    index = DeleteFileIndex(SPECS)
    assert len(index) == 0
    assert index.for_data_file(data("d"), 1) == ()


def test_position_deletes_apply_to_older_or_same_sequence_in_the_partition() -> None:
    index = DeleteFileIndex(SPECS)
    index.add(positions("p2"), 2)
    index.add(positions("p4"), 4)
    index.add(positions("other-day", partition=(2,)), 9)
    index.add(positions("other-spec", partition=(1,), spec_id=2), 9)
    assert len(index) == 4
    assert paths(index.for_data_file(data("d"), 1)) == ["p2", "p4"]
    assert paths(index.for_data_file(data("d"), 2)) == ["p2", "p4"]  # the same sequence number applies
    assert paths(index.for_data_file(data("d"), 3)) == ["p4"]
    assert paths(index.for_data_file(data("d"), 5)) == []
    assert paths(index.for_data_file(data("d", partition=(2,)), 1)) == ["other-day"]


def test_referenced_data_file_and_path_bounds() -> None:
    index = DeleteFileIndex(SPECS)
    index.add(positions("for-a", referenced_data_file="s3://b/a.parquet"), 5)
    exact = b"s3://b/c.parquet"
    index.add(
        positions(
            "bounded-c", lower_bounds={DELETE_FILE_PATH_ID: exact}, upper_bounds={DELETE_FILE_PATH_ID: exact}
        ),
        5,
    )
    index.add(positions("any"), 5)
    assert paths(index.for_data_file(data("s3://b/a.parquet"), 1)) == ["for-a", "any"]
    assert paths(index.for_data_file(data("s3://b/c.parquet"), 1)) == ["bounded-c", "any"]
    assert paths(index.for_data_file(data("s3://b/z.parquet"), 1)) == ["any"]


def test_deletion_vectors_replace_position_deletes() -> None:
    index = DeleteFileIndex(SPECS)
    index.add(positions("old-positions"), 2)
    index.add(vector("dv", "a.parquet"), 3)
    assert paths(index.for_data_file(data("a.parquet"), 1)) == ["dv"]
    assert paths(index.for_data_file(data("b.parquet"), 1)) == ["old-positions"]
    assert paths(index.for_data_file(data("a.parquet"), 4)) == []  # newer than the vector


def test_equality_deletes_apply_to_strictly_older_data() -> None:
    index = DeleteFileIndex(SPECS)
    index.add(equality("eq3"), 3)
    index.add(equality("eq-other-day", partition=(2,)), 3)
    index.add(equality("global", partition=(), spec_id=0), 5)
    assert paths(index.for_data_file(data("d"), 2)) == ["eq3", "global"]
    assert paths(index.for_data_file(data("d"), 3)) == ["global"]  # same sequence: not deleted
    assert paths(index.for_data_file(data("d"), 5)) == []
    assert paths(index.for_data_file(data("u", partition=(), spec_id=0), 1)) == ["global"]


def test_positions_come_before_equality_deletes() -> None:
    index = DeleteFileIndex(SPECS)
    index.add(equality("eq"), 4)
    index.add(positions("pos"), 4)
    assert paths(index.for_data_file(data("d"), 1)) == ["pos", "eq"]


def test_float_partition_values_compare_by_bits() -> None:
    index = DeleteFileIndex(SPECS)
    index.add(positions("nan", partition=(float("nan"),), spec_id=2), 5)
    index.add(positions("zero", partition=(0.0,), spec_id=2), 5)
    assert paths(index.for_data_file(data("d", partition=(float("nan"),), spec_id=2), 1)) == ["nan"]
    assert paths(index.for_data_file(data("d", partition=(0.0,), spec_id=2), 1)) == ["zero"]
    assert paths(index.for_data_file(data("d", partition=(-0.0,), spec_id=2), 1)) == []


def test_deletion_vectors_apply_at_equal_sequence_numbers_within_their_partition() -> None:
    index = DeleteFileIndex(SPECS)
    index.add(vector("dv", "a.parquet"), 3)
    index.add(vector("dv-wrong-partition", "b.parquet", partition=(2,)), 3)
    index.add(equality("eq"), 3)
    # Same commit: the vector applies (positions), the equality delete does not (strictly older).
    assert paths(index.for_data_file(data("a.parquet"), 3)) == ["dv"]
    assert paths(index.for_data_file(data("a.parquet"), 2)) == ["dv", "eq"]
    # A vector whose partition differs from its data file's does not apply (spec: partition equal).
    assert paths(index.for_data_file(data("b.parquet"), 1)) == ["eq"]
