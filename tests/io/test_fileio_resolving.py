"""load_file_io and the scheme-dispatching ResolvingFileIO."""

from __future__ import annotations

import importlib.util
import pickle
import uuid
from pathlib import Path

import pytest

from icefloe.errors import MissingDependencyError, UnsupportedFeatureError, ValidationError
from icefloe.io import (
    ArrowFileIO,
    FsspecFileIO,
    LocalFileIO,
    ResolvingFileIO,
    load_file_io,
)


def test_default_is_resolving() -> None:
    io = load_file_io({"warehouse": "/tmp/wh"})
    assert isinstance(io, ResolvingFileIO)
    assert io.properties == {"warehouse": "/tmp/wh"}
    assert isinstance(load_file_io(), ResolvingFileIO)


def test_dispatch_by_scheme() -> None:
    io = ResolvingFileIO({"s3.region": "us-east-1"})
    assert isinstance(io.io_for("/tmp/x"), LocalFileIO)
    assert isinstance(io.io_for("file:/tmp/x"), LocalFileIO)
    assert isinstance(io.io_for("file:///tmp/x"), LocalFileIO)
    for location in ("s3://b/k", "s3a://b/k", "S3N://b/k"):
        delegate = io.io_for(location)
        assert isinstance(delegate, ArrowFileIO)
        assert delegate.properties == {"s3.region": "us-east-1"}
    assert io.io_for("s3://b/k") is io.io_for("s3a://b/k")  # one client per kind
    assert isinstance(io.io_for("memory://x"), FsspecFileIO)


def test_mixed_schemes_in_one_table(tmp_path: Path) -> None:
    io = load_file_io({})
    memory = f"memory://icefloe-{uuid.uuid4().hex}/data/f.bin"
    local = f"file:{tmp_path}/metadata/v1.metadata.json"
    io.write_bytes(memory, b"data")
    io.write_bytes(local, b"meta")
    assert io.read_bytes(memory) == b"data"
    assert io.read_bytes(local) == b"meta"
    io.delete_many([memory, local])
    assert not io.exists(memory)
    assert not io.exists(local)


def test_py_io_impl() -> None:
    io = load_file_io({"py-io-impl": "icefloe.io.LocalFileIO", "k": "v"})
    assert type(io) is LocalFileIO
    assert io.properties["k"] == "v"
    with pytest.raises(ValidationError, match="py-io-impl"):
        load_file_io({"py-io-impl": "icefloe.io.NoSuchFileIO"})
    with pytest.raises(ValidationError, match="py-io-impl"):
        load_file_io({"py-io-impl": "no_such_module_icefloe.FileIO"})
    with pytest.raises(ValidationError, match="not a FileIO"):
        load_file_io({"py-io-impl": "icefloe.io.S3Config"})


@pytest.mark.parametrize(
    ("java_class", "expected"),
    [
        ("org.apache.iceberg.aws.s3.S3FileIO", ArrowFileIO),
        ("org.apache.iceberg.io.ResolvingFileIO", ResolvingFileIO),
        ("org.apache.iceberg.hadoop.HadoopFileIO", ResolvingFileIO),
        ("org.apache.iceberg.gcp.gcs.GCSFileIO", FsspecFileIO),
        ("org.apache.iceberg.azure.adlsv2.ADLSFileIO", FsspecFileIO),
        ("com.example.CustomFileIO", ResolvingFileIO),  # unknown Java class: ignored
        ("icefloe.io.LocalFileIO", LocalFileIO),  # a Python path works here too
    ],
)
def test_io_impl(java_class: str, expected: type) -> None:
    assert type(load_file_io({"io-impl": java_class})) is expected


def test_py_io_impl_wins_over_io_impl() -> None:
    io = load_file_io(
        {"py-io-impl": "icefloe.io.LocalFileIO", "io-impl": "org.apache.iceberg.aws.s3.S3FileIO"}
    )
    assert type(io) is LocalFileIO


def test_location_scheme_is_checked_up_front() -> None:
    load_file_io({}, "s3://bucket/wh")
    load_file_io({}, "/tmp/wh")
    with pytest.raises(UnsupportedFeatureError, match="nosuchscheme"):
        load_file_io({}, "nosuchscheme://bucket/wh")


@pytest.mark.skipif(importlib.util.find_spec("adlfs") is not None, reason="adlfs is installed")
def test_missing_dependency_is_reported_up_front() -> None:
    with pytest.raises(MissingDependencyError, match="adlfs"):
        load_file_io({}, "abfs://container@account.dfs.core.windows.net/wh")


def test_pickles_after_use(tmp_path: Path) -> None:
    io = load_file_io({"s3.region": "us-east-1"})
    io.write_bytes(f"{tmp_path}/f.bin", b"x")
    io.io_for("s3://bucket/key")
    copy = pickle.loads(pickle.dumps(io))
    assert isinstance(copy, ResolvingFileIO)
    assert copy.properties == {"s3.region": "us-east-1"}
    assert copy.read_bytes(f"{tmp_path}/f.bin") == b"x"
