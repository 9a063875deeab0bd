"""A read of one column of many fetches that column's chunks and the footer, not the file.

Bytes are counted where they are read: through a pyarrow filesystem that counts what its files
hand out (as an object store would serve them: such reads are pre-buffered, and coalescing must
not pull in the other columns), and from the local disk by the kernel's count of the bytes the
process read (``/proc/self/io``), for one file and for a scan's files read concurrently.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from icefloe.arrow.reader import read_parquet
from icefloe.arrow.schema import schema_to_arrow, to_requested_schema
from icefloe.io import LocalFileIO
from icefloe.scan import read_batches
from icefloe.spec.schema import Schema
from icefloe.spec.types import DoubleType, IntegerType, LongType, NestedField, StringType
from support.catalogs import make_catalog

SCHEMA = Schema(
    NestedField(1, "id", LongType()),
    NestedField(2, "qty", IntegerType()),
    NestedField(3, "amount", DoubleType()),
    NestedField(4, "note", StringType()),
    NestedField(5, "a", DoubleType()),
    NestedField(6, "b", DoubleType()),
)
ROWS = 40_000
ROW_GROUP_ROWS = 10_000
#: pyarrow's first read of a file's tail (its footer, when no larger)
FOOTER_READ = 64 << 10


def _data(seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table(
        {
            "id": pa.array(rng.integers(0, 1 << 62, ROWS), pa.int64()),
            "qty": pa.array(rng.integers(0, 100, ROWS).astype(np.int32), pa.int32()),
            "amount": pa.array(rng.random(ROWS), pa.float64()),
            "note": pa.array([f"note-{v}" for v in rng.integers(0, 1 << 40, ROWS)], pa.string()),
            "a": pa.array(rng.random(ROWS), pa.float64()),
            "b": pa.array(rng.random(ROWS), pa.float64()),
        },
        schema=schema_to_arrow(SCHEMA, include_field_ids=False),
    )


def _write(path: Path, seed: int = 1) -> str:
    table = to_requested_schema(_data(seed), SCHEMA, include_field_ids=True)
    pq.write_table(table, path, row_group_size=ROW_GROUP_ROWS, compression="zstd")
    return str(path)


def _chunk_bytes(path: str, column: str) -> int:
    """The stored size of ``column``'s chunks in every row group of the file."""
    metadata = pq.ParquetFile(path).metadata
    index = metadata.schema.names.index(column)
    return sum(
        metadata.row_group(g).column(index).total_compressed_size for g in range(metadata.num_row_groups)
    )


class _CountingHandler(pafs.FileSystemHandler):
    """The local file system, counting the bytes and the reads its input files serve."""

    def __init__(self) -> None:
        self.local = pafs.LocalFileSystem()
        self.lock = threading.Lock()
        self.bytes: dict[str, int] = {}
        self.reads: dict[str, int] = {}

    def count(self, path: str, size: int) -> None:
        with self.lock:
            self.bytes[path] = self.bytes.get(path, 0) + size
            self.reads[path] = self.reads.get(path, 0) + 1

    def get_type_name(self) -> str:
        return "counting"

    def normalize_path(self, path: str) -> str:
        return path

    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        return self.local.get_file_info(paths)

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        return self.local.get_file_info(selector)

    def open_input_file(self, path: str) -> pa.NativeFile:
        return pa.PythonFile(_CountedFile(self, path, self.local.open_input_file(path)), mode="r")

    def open_input_stream(self, path: str) -> pa.NativeFile:
        return self.open_input_file(path)

    def create_dir(self, path: str, recursive: bool) -> None:
        raise NotImplementedError

    def delete_dir(self, path: str) -> None:
        raise NotImplementedError

    def delete_dir_contents(self, path: str, missing_dir_ok: bool = False) -> None:
        raise NotImplementedError

    def delete_root_dir_contents(self) -> None:
        raise NotImplementedError

    def delete_file(self, path: str) -> None:
        raise NotImplementedError

    def move(self, src: str, dest: str) -> None:
        raise NotImplementedError

    def copy_file(self, src: str, dest: str) -> None:
        raise NotImplementedError

    def open_output_stream(self, path: str, metadata: dict[str, str] | None = None) -> pa.NativeFile:
        raise NotImplementedError

    def open_append_stream(self, path: str, metadata: dict[str, str] | None = None) -> pa.NativeFile:
        raise NotImplementedError


class _CountedFile:
    """A file object over a pyarrow file that reports each read to its handler."""

    closed = False

    def __init__(self, handler: _CountingHandler, path: str, inner: pa.NativeFile):
        self.handler, self.path, self.inner = handler, path, inner

    def size(self) -> int:
        return int(self.inner.size())

    def seek(self, offset: int, whence: int = 0) -> int:
        return int(self.inner.seek(offset, whence))

    def tell(self) -> int:
        return int(self.inner.tell())

    def read(self, nbytes: int = -1) -> bytes:
        data = self.inner.read(nbytes if nbytes >= 0 else None)
        self.handler.count(self.path, len(data))
        return bytes(data)

    def read_at(self, nbytes: int, offset: int) -> bytes:
        data = self.inner.read_at(nbytes, offset)
        self.handler.count(self.path, len(data))
        return bytes(data)

    def close(self) -> None:
        self.inner.close()
        self.closed = True


class _CountingFileIO(LocalFileIO):
    """Local files, read through a counting pyarrow filesystem (which is not a local one)."""

    def __init__(self) -> None:
        super().__init__()
        self.handler = _CountingHandler()

    def arrow_filesystem(self, location: str) -> tuple[pafs.FileSystem, str]:
        _, path = super().arrow_filesystem(location)
        return pafs.PyFileSystem(self.handler), path


def _one_column(name: str) -> Schema:
    return SCHEMA.select(name)


@pytest.mark.parametrize("column", ["id", "qty", "amount", "note"])
def test_a_narrow_read_of_a_remote_file_fetches_only_that_columns_chunks(tmp_path: Path, column: str) -> None:
    path = _write(tmp_path / "f.parquet")
    io = _CountingFileIO()
    batches = list(read_parquet(io, path, projected=_one_column(column), for_table=True))
    assert sum(b.num_rows for b in batches) == ROWS
    chunks = _chunk_bytes(path, column)
    read = io.handler.bytes[path]
    size = Path(path).stat().st_size
    assert chunks <= read <= FOOTER_READ + chunks, (column, read, chunks, size)
    assert read < size / 2


def test_a_whole_remote_file_is_fetched_in_few_requests(tmp_path: Path) -> None:
    # pre-buffered: the row groups' column chunks coalesced, not one request per chunk
    path = _write(tmp_path / "f.parquet")
    io = _CountingFileIO()
    table = pa.Table.from_batches(read_parquet(io, path, projected=SCHEMA, for_table=True))
    assert table.num_rows == ROWS
    chunks = pq.ParquetFile(path).metadata.num_row_groups * len(SCHEMA.fields)
    assert io.handler.reads[path] <= 4 < chunks


def test_a_narrow_scan_of_many_files_reads_only_their_column_chunks(tmp_path: Path) -> None:
    catalog = make_catalog("sql", tmp_path / "warehouse")
    table = catalog.create_table(
        "db.t", SCHEMA, properties={"write.parquet.row-group-limit": str(ROW_GROUP_ROWS)}
    )
    for seed in range(5):
        table.append(_data(seed))
    tasks = table.new_scan().plan_files()
    assert len(tasks) == 5
    io = _CountingFileIO()
    schema = _one_column("amount")
    result = pa.Table.from_batches(read_batches(io, table.metadata, tasks, schema, eager=True))
    assert result.num_rows == 5 * ROWS
    for task in tasks:
        path = task.file.file_path.removeprefix("file://")
        chunks = _chunk_bytes(path, "amount")
        assert chunks <= io.handler.bytes[path] <= FOOTER_READ + chunks


def _process_bytes_read() -> int:
    with open("/proc/self/io") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("rchar:"))


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="the kernel's per-process I/O counts")
def test_a_narrow_read_of_a_local_file_reads_only_that_columns_chunks(tmp_path: Path) -> None:
    path = _write(tmp_path / "f.parquet")
    projected = _one_column("qty")
    list(read_parquet(LocalFileIO(), path, projected=projected, for_table=True))  # first use: imports
    before = _process_bytes_read()
    rows = sum(b.num_rows for b in read_parquet(LocalFileIO(), path, projected=projected, for_table=True))
    read = _process_bytes_read() - before
    assert rows == ROWS
    chunks = _chunk_bytes(path, "qty")
    assert chunks <= read <= FOOTER_READ + chunks + (8 << 10), (read, chunks, Path(path).stat().st_size)
