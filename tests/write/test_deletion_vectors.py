"""The deletion vector writer: one Puffin file, one blob and one DeleteFile per data file."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from icefloe.errors import ValidationError
from icefloe.io import LocalFileIO
from icefloe.io.deletion_vector import deserialize_deletion_vector
from icefloe.io.puffin import PuffinReader
from icefloe.spec.manifest import DataFile, FileContent, FileFormat
from icefloe.write import DeletionVectorWriter, write_deletion_vectors

DV_NAME = re.compile(r"^\d{5}-\d+-[0-9a-f-]{36}-00001-deletes\.puffin$")


def _data(path: str, partition: tuple[object, ...] = ("CN",), spec_id: int = 1) -> DataFile:
    return DataFile(path, FileFormat.PARQUET, 1_000_000, 10_000, partition=partition, spec_id=spec_id)


def test_vectors_of_many_data_files_in_one_puffin_file(tmp_path: Path) -> None:
    a, b = _data("s3://b/t/data/country=CN/a.parquet"), _data("s3://b/t/data/country=US/b.parquet", ("US",))
    dvs = write_deletion_vectors(
        LocalFileIO(),
        table_location=str(tmp_path / "t"),
        properties={},
        deletes={a: [7, 3, 3, 2**32 + 1], b: np.arange(0, 100_000, 2)},
    )
    assert [dv.referenced_data_file for dv in dvs] == [a.file_path, b.file_path]
    (location,) = {dv.file_path for dv in dvs}
    assert Path(location).parent == tmp_path / "t" / "data"  # no partition directory
    assert DV_NAME.match(Path(location).name)
    size = Path(location).stat().st_size
    for dv, data_file, cardinality in zip(dvs, (a, b), (3, 50_000)):
        assert dv.file_format == FileFormat.PUFFIN
        assert dv.content == FileContent.POSITION_DELETES
        assert (dv.partition, dv.spec_id) == (data_file.partition, data_file.spec_id)
        assert dv.record_count == cardinality
        assert dv.file_size_in_bytes == size
        assert dv.column_sizes is None and dv.lower_bounds is None and dv.split_offsets is None
    reader = PuffinReader(LocalFileIO(), location)
    metadata = reader.metadata
    assert metadata.properties["created-by"].startswith("icefloe")
    for dv, blob in zip(dvs, metadata.blobs):
        assert (blob.offset, blob.length) == (dv.content_offset, dv.content_size_in_bytes)
        assert blob.type == "deletion-vector-v1"
        assert blob.fields == (2147483645,)
        assert (blob.snapshot_id, blob.sequence_number) == (-1, -1)
        assert blob.compression_codec is None
        assert dict(blob.properties) == {
            "referenced-data-file": dv.referenced_data_file,
            "cardinality": str(dv.record_count),
        }
    first = deserialize_deletion_vector(reader.read_blob(metadata.blobs[0]))
    assert first.tolist() == [3, 7, 2**32 + 1]
    second = deserialize_deletion_vector(reader.read_blob(metadata.blobs[1]))
    np.testing.assert_array_equal(second, np.arange(0, 100_000, 2))


def test_repeated_deletes_of_one_file_make_one_vector(tmp_path: Path) -> None:
    location = str(tmp_path / "dv.puffin")
    writer = DeletionVectorWriter(
        LocalFileIO(), table_location=str(tmp_path), properties={}, location=location
    )
    writer.delete("s3://b/a.parquet", [1, 2], spec_id=0, partition=())
    writer.delete("s3://b/a.parquet", pa.array([2, 9]), spec_id=0, partition=())
    (dv,) = writer.close()
    assert writer.close() == [dv]  # closing again returns the same result
    assert dv.file_path == location and dv.record_count == 3
    blob = PuffinReader(LocalFileIO(), location).read_blob(
        (dv.content_offset or 0, dv.content_size_in_bytes or 0)
    )
    assert deserialize_deletion_vector(blob).tolist() == [1, 2, 9]
    with pytest.raises(ValidationError, match="closed"):
        writer.delete("s3://b/a.parquet", [3])


def test_conflicting_partitions_and_bad_positions(tmp_path: Path) -> None:
    writer = DeletionVectorWriter(LocalFileIO(), table_location=str(tmp_path), properties={})
    writer.delete(_data("a.parquet"), [1])
    with pytest.raises(ValidationError, match="partition"):
        writer.delete(_data("a.parquet", ("US",)), [2])
    writer.delete(_data("b.parquet"), [-4])
    with pytest.raises(ValidationError, match="-4"):
        writer.close()
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_no_deletes_write_no_file(tmp_path: Path) -> None:
    assert (
        write_deletion_vectors(LocalFileIO(), table_location=str(tmp_path), properties={}, deletes={}) == []
    )
    assert (
        write_deletion_vectors(
            LocalFileIO(), table_location=str(tmp_path), properties={}, deletes=[(_data("a.parquet"), [])]
        )
        == []
    )
    assert list(tmp_path.iterdir()) == []


def test_data_path_property_places_the_file(tmp_path: Path) -> None:
    (dv,) = write_deletion_vectors(
        LocalFileIO(),
        table_location=str(tmp_path / "t"),
        properties={"write.data.path": str(tmp_path / "elsewhere")},
        deletes={_data("a.parquet"): [0]},
        file_name_prefix="00001-2-op",
    )
    assert dv.file_path == str(tmp_path / "elsewhere" / "00001-2-op-00001-deletes.puffin")
