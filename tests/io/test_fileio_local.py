"""LocalFileIO on real files: paths and file: URIs, errors, atomic publishing, listing."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import threading
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icefloe.errors import (
    FileAlreadyExistsError,
    FileIOError,
    NoSuchFileError,
    NotFoundError,
    ValidationError,
)
from icefloe.io import FileInfo, LocalFileIO, local_path


@pytest.fixture
def io() -> LocalFileIO:
    return LocalFileIO()


def _all_entries(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


# ---- locations ----


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("/tmp/t/x.json", "/tmp/t/x.json"),
        ("warehouse/t/x.json", "warehouse/t/x.json"),
        ("file:/tmp/t/x.json", "/tmp/t/x.json"),
        ("file:///tmp/t/x.json", "/tmp/t/x.json"),
        ("file://localhost/tmp/t/x.json", "/tmp/t/x.json"),
        ("FILE:/tmp/t/x.json", "/tmp/t/x.json"),
        ("file:/tmp/my table/x%20y.json", "/tmp/my table/x%20y.json"),  # taken literally, like Java
    ],
)
def test_local_path_forms(location: str, expected: str) -> None:
    assert local_path(location) == expected


@pytest.mark.parametrize("location", ["s3://bucket/key", "file://otherhost/tmp/x", "gs://b/k"])
def test_local_path_rejects_non_local(location: str) -> None:
    with pytest.raises(ValidationError, match="://"):
        local_path(location)


def test_all_uri_forms_address_the_same_file(io: LocalFileIO, tmp_path: Path) -> None:
    plain = f"{tmp_path}/t/metadata/v1.metadata.json"
    io.write_bytes(f"file:{plain}", b"{}")
    for form in (plain, f"file:{plain}", f"file://{plain}", f"file://localhost{plain}"):
        assert io.exists(form)
        assert io.read_bytes(form) == b"{}"
        assert io.new_input(form).length() == 2
    assert (tmp_path / "t" / "metadata" / "v1.metadata.json").read_bytes() == b"{}"


def test_relative_paths_resolve_against_cwd(io: LocalFileIO, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    io.write_bytes("warehouse/db/t/data/f.bin", b"abc")
    assert (tmp_path / "warehouse/db/t/data/f.bin").read_bytes() == b"abc"
    _, path = io.arrow_filesystem("warehouse/db/t/data/f.bin")
    assert path == str(tmp_path / "warehouse/db/t/data/f.bin")


# ---- reading ----


def test_input_file(io: LocalFileIO, tmp_path: Path) -> None:
    (tmp_path / "f.bin").write_bytes(b"0123456789")
    location = f"file:{tmp_path}/f.bin"
    input_file = io.new_input(location)
    assert input_file.location == location
    assert input_file.exists()
    assert input_file.length() == 10
    assert input_file.read() == b"0123456789"
    with input_file.open() as stream:
        assert stream.seekable()
        stream.seek(4)
        assert stream.read(3) == b"456"
        stream.seek(-2, os.SEEK_END)
        assert stream.read() == b"89"


def test_known_length_is_trusted_without_stat(io: LocalFileIO, tmp_path: Path) -> None:
    # A length from a manifest saves a request on object stores; it is returned as given.
    assert io.new_input(f"{tmp_path}/not-there", length=42).length() == 42


def test_missing_file_errors_name_the_location(io: LocalFileIO, tmp_path: Path) -> None:
    location = f"file:{tmp_path}/missing/v1.metadata.json"
    input_file = io.new_input(location)
    assert not input_file.exists()
    assert not io.exists(location)
    for call in (input_file.length, input_file.open, input_file.read, lambda: io.read_bytes(location)):
        with pytest.raises(NoSuchFileError) as info:
            call()
        error = info.value
        assert isinstance(error, FileNotFoundError)
        assert isinstance(error, NotFoundError)
        assert isinstance(error, FileIOError)
        assert error.location == location
        assert location in str(error)


def test_directory_is_not_a_file(io: LocalFileIO, tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    assert not io.exists(str(tmp_path / "d"))
    with pytest.raises(FileIOError, match=str(tmp_path / "d")):
        io.read_bytes(str(tmp_path / "d"))


# ---- writing ----


def test_write_creates_parent_directories(io: LocalFileIO, tmp_path: Path) -> None:
    io.write_bytes(f"{tmp_path}/a/b/c/d.bin", b"x")
    assert (tmp_path / "a/b/c/d.bin").read_bytes() == b"x"


def test_create_refuses_existing_file_unless_overwrite(io: LocalFileIO, tmp_path: Path) -> None:
    location = f"file://{tmp_path}/v.bin"
    io.write_bytes(location, b"first")
    with pytest.raises(FileAlreadyExistsError) as info:
        io.new_output(location).create()
    assert isinstance(info.value, FileExistsError)
    assert info.value.location == location
    assert location in str(info.value)
    with pytest.raises(FileAlreadyExistsError):
        io.write_bytes(location, b"second")
    assert io.read_bytes(location) == b"first"
    io.write_bytes(location, b"second", overwrite=True)
    assert io.read_bytes(location) == b"second"


def test_file_is_invisible_until_the_stream_closes(io: LocalFileIO, tmp_path: Path) -> None:
    location = f"{tmp_path}/out.bin"
    output = io.new_output(location)
    assert output.location == location
    with output.create() as stream:
        stream.write(b"abc")
        stream.write(memoryview(b"defg"))
        assert stream.tell() == 7
        assert not io.exists(location)
    assert output.to_input_file().read() == b"abcdefg"
    assert _all_entries(tmp_path) == ["out.bin"]  # no temp file left


def test_overwrite_replaces_atomically(io: LocalFileIO, tmp_path: Path) -> None:
    location = f"{tmp_path}/hint.txt"
    io.write_bytes(location, b"1")
    with io.new_output(location).create(overwrite=True) as stream:
        stream.write(b"2")
        assert io.read_bytes(location) == b"1"  # readers see the old file until close
    assert io.read_bytes(location) == b"2"


def test_failed_write_leaves_nothing(io: LocalFileIO, tmp_path: Path) -> None:
    location = f"{tmp_path}/data/f.parquet"
    with pytest.raises(RuntimeError, match="boom"), io.new_output(location).create() as stream:
        stream.write(b"partial")
        raise RuntimeError("boom")
    assert not io.exists(location)
    assert _all_entries(tmp_path) == ["data"]


def test_failed_overwrite_keeps_the_old_file(io: LocalFileIO, tmp_path: Path) -> None:
    location = f"{tmp_path}/f.bin"
    io.write_bytes(location, b"old")
    with pytest.raises(RuntimeError), io.new_output(location).create(overwrite=True) as stream:
        stream.write(b"new but incomplete")
        raise RuntimeError("writer crashed")
    assert io.read_bytes(location) == b"old"
    assert _all_entries(tmp_path) == ["f.bin"]


def test_unclosed_stream_is_discarded(io: LocalFileIO, tmp_path: Path) -> None:
    location = f"{tmp_path}/f.bin"
    stream = io.new_output(location).create()
    stream.write(b"never finished")
    del stream
    assert not io.exists(location)
    assert _all_entries(tmp_path) == []


def test_losing_a_create_race_at_close_raises(io: LocalFileIO, tmp_path: Path) -> None:
    location = f"{tmp_path}/f.bin"
    stream = io.new_output(location).create()  # the file does not exist yet
    stream.write(b"mine")
    io.write_bytes(location, b"theirs")
    with pytest.raises(FileAlreadyExistsError):
        stream.close()
    assert io.read_bytes(location) == b"theirs"
    assert _all_entries(tmp_path) == ["f.bin"]


def test_write_to_closed_stream_raises(io: LocalFileIO, tmp_path: Path) -> None:
    stream = io.new_output(f"{tmp_path}/f.bin").create()
    stream.close()
    with pytest.raises(FileIOError, match="closed"):
        stream.write(b"late")


def test_new_files_get_umask_permissions(io: LocalFileIO, tmp_path: Path) -> None:
    io.write_bytes(f"{tmp_path}/a.bin", b"x")
    io.write_exclusive(f"{tmp_path}/b.bin", b"x")
    (tmp_path / "c.bin").write_bytes(b"x")  # what a plain open() gives
    expected = (tmp_path / "c.bin").stat().st_mode
    assert (tmp_path / "a.bin").stat().st_mode == expected
    assert (tmp_path / "b.bin").stat().st_mode == expected


# ---- exclusive writes ----


def test_write_exclusive(io: LocalFileIO, tmp_path: Path) -> None:
    location = f"file:{tmp_path}/t/metadata/v1.metadata.json"
    io.write_exclusive(location, b'{"v": 1}')
    assert io.read_bytes(location) == b'{"v": 1}'
    with pytest.raises(FileAlreadyExistsError) as info:
        io.write_exclusive(location, b'{"v": 2}')
    assert info.value.location == location
    assert io.read_bytes(location) == b'{"v": 1}'
    assert _all_entries(tmp_path / "t" / "metadata") == ["v1.metadata.json"]


_PAYLOAD_SIZE = 2 * 1024 * 1024


def _payload(writer: int) -> bytes:
    return bytes([writer]) * _PAYLOAD_SIZE


def _race_in_process(location: str, writer: int, barrier, results) -> None:  # in a child process
    barrier.wait()
    try:
        LocalFileIO().write_exclusive(location, _payload(writer))
    except FileAlreadyExistsError:
        results.put((writer, "lost"))
    else:
        results.put((writer, "won"))


def _watch_for_partial_files(location: str, stop: threading.Event, seen: list[bytes]) -> None:
    path = local_path(location)
    while not stop.is_set():
        try:
            with open(path, "rb") as stream:
                seen.append(stream.read())
        except FileNotFoundError:
            pass


def _race_threads(io: LocalFileIO, location: str, writers: int) -> list[int | None]:
    """Each writer tries write_exclusive at once; the winner's number, or None per loser."""
    barrier = threading.Barrier(writers)
    outcomes: list[int | None] = []

    def race(writer: int) -> None:
        barrier.wait()
        try:
            io.write_exclusive(location, _payload(writer))
            outcomes.append(writer)
        except FileAlreadyExistsError:
            outcomes.append(None)

    threads = [threading.Thread(target=race, args=(w,)) for w in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def test_exclusive_write_race_between_threads(io: LocalFileIO, tmp_path: Path) -> None:
    for round_ in range(10):
        location = f"{tmp_path}/v{round_}.metadata.json"
        stop = threading.Event()
        seen: list[bytes] = []
        watcher = threading.Thread(target=_watch_for_partial_files, args=(location, stop, seen))
        watcher.start()
        try:
            outcomes = _race_threads(io, location, writers=8)
        finally:
            stop.set()
            watcher.join()
        winners = [o for o in outcomes if o is not None]
        assert len(winners) == 1, outcomes
        assert outcomes.count(None) == 7
        assert io.read_bytes(location) == _payload(winners[0])
        assert all(content == _payload(winners[0]) for content in seen)  # never a partial file
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"v{i}.metadata.json" for i in range(10))


@pytest.mark.slow
def test_exclusive_write_race_between_processes(tmp_path: Path) -> None:
    location = f"file:{tmp_path}/t/metadata/v7.metadata.json"
    context = multiprocessing.get_context("spawn")
    writers = 6
    barrier = context.Barrier(writers)
    results = context.Queue()
    stop = threading.Event()
    seen: list[bytes] = []
    watcher = threading.Thread(target=_watch_for_partial_files, args=(location, stop, seen))
    watcher.start()
    processes = [
        context.Process(target=_race_in_process, args=(location, w, barrier, results)) for w in range(writers)
    ]
    try:
        for process in processes:
            process.start()
        outcomes = dict(results.get(timeout=60) for _ in range(writers))
        for process in processes:
            process.join(timeout=60)
    finally:
        stop.set()
        watcher.join()
    assert sorted(outcomes.values()) == ["lost"] * (writers - 1) + ["won"]
    (winner,) = [w for w, outcome in outcomes.items() if outcome == "won"]
    assert LocalFileIO().read_bytes(location) == _payload(winner)
    assert all(content == _payload(winner) for content in seen)
    assert _all_entries(tmp_path / "t" / "metadata") == ["v7.metadata.json"]


# ---- deleting and listing ----


def test_delete(io: LocalFileIO, tmp_path: Path) -> None:
    location = f"file:{tmp_path}/f.bin"
    io.write_bytes(location, b"x")
    io.delete(location)
    assert not io.exists(location)
    io.delete(location)  # missing: not an error
    io.delete(f"{tmp_path}/never/existed")


def test_delete_many(io: LocalFileIO, tmp_path: Path) -> None:
    locations = [f"{tmp_path}/d/{i}.bin" for i in range(5)]
    for location in locations:
        io.write_bytes(location, b"x")
    io.delete_many([*locations, f"{tmp_path}/missing.bin"])
    assert _all_entries(tmp_path) == ["d"]


def test_delete_many_reports_failures_after_trying_all(io: LocalFileIO, tmp_path: Path) -> None:
    (tmp_path / "a-directory").mkdir()
    io.write_bytes(f"{tmp_path}/f.bin", b"x")
    with pytest.raises(FileIOError, match="a-directory"):
        io.delete_many([f"{tmp_path}/a-directory", f"{tmp_path}/f.bin"])
    assert not io.exists(f"{tmp_path}/f.bin")


def test_list_prefix(io: LocalFileIO, tmp_path: Path) -> None:
    before_ms = int(time.time() * 1000) - 5_000
    io.write_bytes(f"{tmp_path}/t/data/a=1/f1.parquet", b"1")
    io.write_bytes(f"{tmp_path}/t/data/a=2/f2.parquet", b"22")
    io.write_bytes(f"{tmp_path}/t/metadata/v1.metadata.json", b"333")
    (tmp_path / "t" / "empty-dir").mkdir()

    for prefix in (f"file:{tmp_path}/t", f"file:{tmp_path}/t/"):
        found = list(io.list_prefix(prefix))
        assert [(f.location, f.size) for f in found] == [
            (f"file:{tmp_path}/t/data/a=1/f1.parquet", 1),
            (f"file:{tmp_path}/t/data/a=2/f2.parquet", 2),
            (f"file:{tmp_path}/t/metadata/v1.metadata.json", 3),
        ]
        assert all(isinstance(f, FileInfo) and f.modified_ms >= before_ms for f in found)

    plain = [f.location for f in io.list_prefix(f"{tmp_path}/t/data")]
    assert plain == [f"{tmp_path}/t/data/a=1/f1.parquet", f"{tmp_path}/t/data/a=2/f2.parquet"]


def test_list_prefix_of_a_file_and_of_nothing(io: LocalFileIO, tmp_path: Path) -> None:
    io.write_bytes(f"{tmp_path}/one.bin", b"1234")
    assert [(f.location, f.size) for f in io.list_prefix(f"{tmp_path}/one.bin")] == [
        (f"{tmp_path}/one.bin", 4)
    ]
    assert list(io.list_prefix(f"{tmp_path}/missing")) == []


# ---- pyarrow on the same storage ----


def test_arrow_filesystem_round_trip(io: LocalFileIO, tmp_path: Path) -> None:
    table = pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"]})
    location = f"file:{tmp_path}/t/data/f1.parquet"

    with io.new_output(location).create() as stream:
        pq.write_table(table, stream)
    fs, path = io.arrow_filesystem(location)
    assert path == f"{tmp_path}/t/data/f1.parquet"
    assert pq.read_table(path, filesystem=fs).equals(table)

    second = f"file:{tmp_path}/t/data/f2.parquet"
    fs, path = io.arrow_filesystem(second)
    pq.write_table(table, path, filesystem=fs)
    with io.new_input(second).open() as stream:
        assert pq.read_table(stream).equals(table)


# ---- pickling ----


def test_pickles(io: LocalFileIO, tmp_path: Path) -> None:
    io.write_bytes(f"{tmp_path}/f.bin", b"x")
    copy = pickle.loads(pickle.dumps(io))
    assert isinstance(copy, LocalFileIO)
    assert copy.read_bytes(f"{tmp_path}/f.bin") == b"x"
