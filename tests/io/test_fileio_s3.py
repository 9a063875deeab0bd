"""ArrowFileIO against a real S3 API (moto's server on 127.0.0.1)."""

from __future__ import annotations

import multiprocessing
import pickle
import threading

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icefloe.errors import (
    FileAlreadyExistsError,
    FileIOError,
    NoSuchFileError,
    ValidationError,
)
from icefloe.io import ArrowFileIO, FileIO, ResolvingFileIO, S3Config, load_file_io


@pytest.fixture
def io(s3_properties: dict[str, str]) -> ArrowFileIO:
    return ArrowFileIO(s3_properties)


@pytest.fixture
def bucket(s3_properties: dict[str, str]) -> str:
    return s3_properties["test.bucket"]


def test_config_from_iceberg_properties() -> None:
    config = S3Config.from_properties(
        {
            "s3.endpoint": "http://127.0.0.1:9000",
            "s3.access-key-id": "id",
            "s3.secret-access-key": "secret",
            "s3.session-token": "token",
            "client.region": "eu-west-1",
            "s3.path-style-access": "TRUE",
        }
    )
    assert config == S3Config("http://127.0.0.1:9000", "id", "secret", "token", "eu-west-1", True)
    assert config.num_retries == 5
    assert S3Config.from_properties({"s3.retry.num-retries": "2"}).num_retries == 2
    with pytest.raises(ValidationError, match=r"s3\.retry\.num-retries"):
        S3Config.from_properties({"s3.retry.num-retries": "-1"})
    assert config.arrow_options() == {
        "endpoint_override": "http://127.0.0.1:9000",
        "access_key": "id",
        "secret_key": "secret",
        "session_token": "token",
        "region": "eu-west-1",
        "force_virtual_addressing": False,
    }
    assert S3Config.from_properties({"s3.region": "a", "client.region": "b"}).region == "a"
    assert S3Config.from_properties({"s3.path-style-access": "false"}).arrow_options() == {
        "force_virtual_addressing": True
    }
    assert S3Config.from_properties({}).arrow_options() == {}
    with pytest.raises(ValidationError, match=r"s3\.path-style-access"):
        S3Config.from_properties({"s3.path-style-access": "yes please"})


def test_rejects_non_s3_locations(io: ArrowFileIO) -> None:
    for location in ("/tmp/x", "gs://b/k", "s3://"):
        with pytest.raises(ValidationError):
            io.new_input(location)


def test_round_trip(io: ArrowFileIO, bucket: str) -> None:
    location = f"s3://{bucket}/wh/db/t/metadata/v1.metadata.json"
    assert not io.exists(location)
    io.write_bytes(location, b'{"format-version": 2}')
    assert io.exists(location)
    input_file = io.new_input(location)
    assert input_file.length() == 21
    assert input_file.read() == b'{"format-version": 2}'
    with input_file.open() as stream:
        assert stream.seekable()
        stream.seek(2)
        assert stream.read(6) == b"format"


@pytest.mark.parametrize("scheme", ["s3a", "s3n"])
def test_hadoop_schemes_address_the_same_objects(io: ArrowFileIO, bucket: str, scheme: str) -> None:
    io.write_bytes(f"s3://{bucket}/k/f.bin", b"same")
    assert io.read_bytes(f"{scheme}://{bucket}/k/f.bin") == b"same"
    assert [f.location for f in io.list_prefix(f"{scheme}://{bucket}/k")] == [f"{scheme}://{bucket}/k/f.bin"]


def test_missing_object(io: ArrowFileIO, bucket: str) -> None:
    location = f"s3://{bucket}/missing/f.bin"
    input_file = io.new_input(location)
    assert not input_file.exists()
    for call in (input_file.length, input_file.open, input_file.read):
        with pytest.raises(NoSuchFileError) as info:
            call()
        assert isinstance(info.value, FileNotFoundError)
        assert location in str(info.value)


def test_missing_bucket_names_the_location(io: ArrowFileIO) -> None:
    location = "s3://no-such-bucket-icefloe/f.bin"
    with pytest.raises(FileIOError, match="no-such-bucket-icefloe"):
        io.read_bytes(location)


def test_create_without_overwrite(io: ArrowFileIO, bucket: str) -> None:
    location = f"s3://{bucket}/f.bin"
    io.write_bytes(location, b"first")
    with pytest.raises(FileAlreadyExistsError) as info:
        io.write_bytes(location, b"second")
    assert info.value.location == location
    io.write_bytes(location, b"second", overwrite=True)
    assert io.read_bytes(location) == b"second"


def test_object_appears_only_when_the_stream_closes(io: ArrowFileIO, bucket: str) -> None:
    location = f"s3://{bucket}/data/big.bin"
    chunk = b"x" * (1024 * 1024)
    with io.new_output(location).create() as stream:
        for _ in range(6):
            stream.write(chunk)
        assert not io.exists(location)
        assert stream.tell() == 6 * len(chunk)
    assert io.new_input(location).length() == 6 * len(chunk)


def test_failed_write_removes_the_object(io: ArrowFileIO, bucket: str) -> None:
    location = f"s3://{bucket}/data/f.parquet"
    with pytest.raises(RuntimeError), io.new_output(location).create() as stream:
        stream.write(b"partial")
        raise RuntimeError("task killed")
    assert not io.exists(location)
    assert list(io.list_prefix(f"s3://{bucket}/data")) == []


def test_delete_and_delete_many(io: ArrowFileIO, bucket: str) -> None:
    locations = [f"s3://{bucket}/t/data/{i}.parquet" for i in range(12)]
    for location in locations:
        io.write_bytes(location, b"x")
    io.delete(locations[0])
    assert not io.exists(locations[0])
    io.delete(locations[0])  # missing: not an error
    io.delete_many([*locations[1:], f"s3://{bucket}/t/never-written"])
    assert list(io.list_prefix(f"s3://{bucket}/t")) == []


def test_list_prefix(io: ArrowFileIO, bucket: str) -> None:
    io.write_bytes(f"s3://{bucket}/t/data/a=1/f1.parquet", b"1")
    io.write_bytes(f"s3://{bucket}/t/data/a=2/f2.parquet", b"22")
    io.write_bytes(f"s3://{bucket}/t/metadata/v1.metadata.json", b"333")
    io.write_bytes(f"s3://{bucket}/t2/other.bin", b"4444")  # a sibling, not under t/

    for prefix in (f"s3://{bucket}/t", f"s3://{bucket}/t/"):
        found = list(io.list_prefix(prefix))
        assert [(f.location, f.size) for f in found] == [
            (f"s3://{bucket}/t/data/a=1/f1.parquet", 1),
            (f"s3://{bucket}/t/data/a=2/f2.parquet", 2),
            (f"s3://{bucket}/t/metadata/v1.metadata.json", 3),
        ]
        assert all(f.modified_ms > 1_600_000_000_000 for f in found)
    assert len(list(io.list_prefix(f"s3://{bucket}"))) == 4
    assert [f.location for f in io.list_prefix(f"s3://{bucket}/t/metadata/v1.metadata.json")] == [
        f"s3://{bucket}/t/metadata/v1.metadata.json"
    ]
    assert list(io.list_prefix(f"s3://{bucket}/nothing-here")) == []


def test_write_exclusive(io: ArrowFileIO, bucket: str) -> None:
    location = f"s3://{bucket}/t/metadata/v1.metadata.json"
    io.write_exclusive(location, b"one")
    with pytest.raises(FileAlreadyExistsError) as info:
        io.write_exclusive(location, b"two")
    assert info.value.location == location
    assert io.read_bytes(location) == b"one"


def _race_threads(io: ArrowFileIO, location: str, writers: int) -> list[int | None]:
    """Each writer tries write_exclusive at once; the winner's number, or None per loser."""
    barrier = threading.Barrier(writers)
    outcomes: list[int | None] = []

    def race(writer: int) -> None:
        barrier.wait()
        try:
            io.write_exclusive(location, f"writer {writer} ".encode() * 10_000)
            outcomes.append(writer)
        except FileAlreadyExistsError:
            outcomes.append(None)

    threads = [threading.Thread(target=race, args=(w,)) for w in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def test_write_exclusive_race(io: ArrowFileIO, bucket: str) -> None:
    for round_ in range(5):
        location = f"s3://{bucket}/t/metadata/v{round_}.metadata.json"
        outcomes = _race_threads(io, location, writers=6)
        winners = [o for o in outcomes if o is not None]
        assert len(winners) == 1, outcomes
        assert io.read_bytes(location) == f"writer {winners[0]} ".encode() * 10_000


def test_parquet_through_arrow_filesystem(io: ArrowFileIO, bucket: str) -> None:
    table = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "s": ["x", "y", "z"]})

    written_by_io = f"s3://{bucket}/t/data/f1.parquet"
    with io.new_output(written_by_io).create() as stream:
        pq.write_table(table, stream)
    fs, path = io.arrow_filesystem(written_by_io)
    assert path == f"{bucket}/t/data/f1.parquet"
    assert pq.read_table(path, filesystem=fs).equals(table)
    assert pq.ParquetFile(io.new_input(written_by_io).open()).metadata.num_rows == 3

    written_by_arrow = f"s3a://{bucket}/t/data/f2.parquet"
    fs, path = io.arrow_filesystem(written_by_arrow)
    pq.write_table(table, path, filesystem=fs)
    with io.new_input(written_by_arrow).open() as stream:
        assert pq.read_table(stream).equals(table)


def test_pickles_without_clients(io: ArrowFileIO, bucket: str) -> None:
    location = f"s3://{bucket}/f.bin"
    io.write_bytes(location, b"x")
    io.write_exclusive(f"s3://{bucket}/g.bin", b"y")  # creates the botocore client too
    payload = pickle.dumps(io)
    assert b"S3FileSystem" not in payload
    copy = pickle.loads(payload)
    assert isinstance(copy, ArrowFileIO)
    assert copy.properties == io.properties
    assert copy.read_bytes(location) == b"x"


def _read_in_child(file_io: FileIO, location: str, results) -> None:  # runs in a spawned process
    results.put(file_io.read_bytes(location))


def test_file_io_travels_to_another_process(s3_properties: dict[str, str], bucket: str) -> None:
    file_io = load_file_io(s3_properties, f"s3://{bucket}/wh")
    assert isinstance(file_io, ResolvingFileIO)
    location = f"s3://{bucket}/wh/t/data/f.bin"
    file_io.write_bytes(location, b"from the driver")
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    child = context.Process(target=_read_in_child, args=(file_io, location, results))
    child.start()
    try:
        assert results.get(timeout=60) == b"from the driver"
    finally:
        child.join(timeout=60)
    assert child.exitcode == 0
