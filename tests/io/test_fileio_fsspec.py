"""FsspecFileIO on fsspec's in-memory file system, and its dependency errors."""

from __future__ import annotations

import importlib.util
import pickle
import uuid

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icefloe.errors import (
    FileAlreadyExistsError,
    MissingDependencyError,
    NoSuchFileError,
    UnsupportedFeatureError,
    ValidationError,
)
from icefloe.io import FsspecFileIO


@pytest.fixture
def io() -> FsspecFileIO:
    return FsspecFileIO()


@pytest.fixture
def root() -> str:
    # fsspec's memory file system is global to the process: a fresh folder per test.
    return f"memory://icefloe-{uuid.uuid4().hex}"


def test_round_trip(io: FsspecFileIO, root: str) -> None:
    location = f"{root}/t/metadata/v1.metadata.json"
    assert not io.exists(location)
    io.write_bytes(location, b"{}")
    assert io.exists(location)
    assert io.new_input(location).length() == 2
    assert io.read_bytes(location) == b"{}"
    with io.new_input(location).open() as stream:
        stream.seek(1)
        assert stream.read() == b"}"
    with pytest.raises(FileAlreadyExistsError):
        io.write_bytes(location, b"[]")
    io.write_bytes(location, b"[]", overwrite=True)
    assert io.read_bytes(location) == b"[]"


def test_missing_file(io: FsspecFileIO, root: str) -> None:
    location = f"{root}/missing.bin"
    with pytest.raises(NoSuchFileError, match=r"missing\.bin"):
        io.read_bytes(location)
    with pytest.raises(NoSuchFileError, match=r"missing\.bin"):
        io.new_input(location).length()


def test_failed_write_leaves_nothing(io: FsspecFileIO, root: str) -> None:
    location = f"{root}/f.bin"
    with pytest.raises(RuntimeError), io.new_output(location).create() as stream:
        stream.write(b"partial")
        raise RuntimeError("boom")
    assert not io.exists(location)


def test_list_and_delete(io: FsspecFileIO, root: str) -> None:
    for name, data in (("t/data/a.parquet", b"1"), ("t/data/b.parquet", b"22"), ("t/v1.json", b"333")):
        io.write_bytes(f"{root}/{name}", data)
    found = list(io.list_prefix(f"{root}/t"))
    assert [(f.location, f.size) for f in found] == [
        (f"{root}/t/data/a.parquet", 1),
        (f"{root}/t/data/b.parquet", 2),
        (f"{root}/t/v1.json", 3),
    ]
    assert all(f.modified_ms > 1_600_000_000_000 for f in found)
    assert [f.location for f in io.list_prefix(f"{root}/t/v1.json")] == [f"{root}/t/v1.json"]
    assert list(io.list_prefix(f"{root}/nothing")) == []
    io.delete(f"{root}/t/v1.json")
    io.delete(f"{root}/t/v1.json")  # missing: not an error
    io.delete_many([f.location for f in found])
    assert list(io.list_prefix(f"{root}/t")) == []


def test_parquet_through_arrow_filesystem(io: FsspecFileIO, root: str) -> None:
    table = pa.table({"id": [1, 2]})
    location = f"{root}/t/data/f.parquet"
    with io.new_output(location).create() as stream:
        pq.write_table(table, stream)
    fs, path = io.arrow_filesystem(location)
    assert pq.read_table(path, filesystem=fs).equals(table)


def test_exclusive_write_refused_where_not_atomic(io: FsspecFileIO, root: str) -> None:
    with pytest.raises(UnsupportedFeatureError, match="memory"):
        io.write_exclusive(f"{root}/v1.json", b"{}")


def test_location_needs_a_scheme(io: FsspecFileIO) -> None:
    with pytest.raises(ValidationError):
        io.new_input("/tmp/plain/path")


def test_unknown_scheme(io: FsspecFileIO) -> None:
    with pytest.raises(UnsupportedFeatureError, match="nosuchscheme"):
        io.read_bytes("nosuchscheme://bucket/key")


@pytest.mark.skipif(importlib.util.find_spec("gcsfs") is not None, reason="gcsfs is installed")
def test_missing_backend_package(io: FsspecFileIO) -> None:
    with pytest.raises(MissingDependencyError, match="gcsfs"):
        io.read_bytes("gs://bucket/key")
    with pytest.raises(MissingDependencyError):
        FsspecFileIO.check_scheme("gs")


def test_pickles_without_file_systems(io: FsspecFileIO, root: str) -> None:
    io.write_bytes(f"{root}/f.bin", b"x")
    copy = pickle.loads(pickle.dumps(io))
    assert copy.read_bytes(f"{root}/f.bin") == b"x"  # the memory store is process-global
