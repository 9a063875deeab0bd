"""FaultInjectingFileIO: chosen writes fail, nothing else changes."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from icefloe.errors import FileIOError
from icefloe.io import FaultInjectingFileIO, LocalFileIO


def test_fails_only_the_kth_write(tmp_path: Path) -> None:
    io = FaultInjectingFileIO(LocalFileIO(), fail_on_write=3)
    io.write_bytes(f"{tmp_path}/1.bin", b"1")
    with io.new_output(f"{tmp_path}/2.bin").create() as stream:
        stream.write(b"2")
    with pytest.raises(FileIOError, match=r"3\.bin") as info:
        io.write_exclusive(f"{tmp_path}/3.bin", b"3")
    assert "Injected" in str(info.value)
    io.write_bytes(f"{tmp_path}/4.bin", b"4")
    assert io.writes == 4
    assert io.failed == [f"{tmp_path}/3.bin"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["1.bin", "2.bin", "4.bin"]


def test_predicate_on_location(tmp_path: Path) -> None:
    io = FaultInjectingFileIO(
        LocalFileIO(), fail_on_write=lambda location: location.endswith(".metadata.json")
    )
    io.write_bytes(f"{tmp_path}/data/f.parquet", b"d")
    with pytest.raises(FileIOError):
        io.write_bytes(f"{tmp_path}/metadata/v2.metadata.json", b"m")
    with pytest.raises(FileIOError):
        io.new_output(f"{tmp_path}/metadata/v3.metadata.json").create()
    assert not io.exists(f"{tmp_path}/metadata/v2.metadata.json")
    assert io.failed == [f"{tmp_path}/metadata/v2.metadata.json", f"{tmp_path}/metadata/v3.metadata.json"]


def test_reads_lists_and_deletes_pass_through(tmp_path: Path) -> None:
    inner = LocalFileIO()
    inner.write_bytes(f"{tmp_path}/f.bin", b"x")
    io = FaultInjectingFileIO(inner, fail_on_write=1)
    assert io.read_bytes(f"{tmp_path}/f.bin") == b"x"
    assert [f.location for f in io.list_prefix(str(tmp_path))] == [f"{tmp_path}/f.bin"]
    io.delete(f"{tmp_path}/f.bin")
    assert io.writes == 0
    assert not inner.exists(f"{tmp_path}/f.bin")


def test_pickles_with_its_counters(tmp_path: Path) -> None:
    io = FaultInjectingFileIO(LocalFileIO(), fail_on_write=2)
    io.write_bytes(f"{tmp_path}/1.bin", b"1")
    copy = pickle.loads(pickle.dumps(io))
    assert copy.writes == 1
    with pytest.raises(FileIOError):
        copy.write_bytes(f"{tmp_path}/2.bin", b"2")
