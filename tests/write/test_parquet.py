"""The Parquet data-file writer: layout, sizes, names, partitions, order, failures, S3."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from icefloe.arrow.schema import to_requested_schema
from icefloe.errors import DataWriteError, UnsupportedFeatureError, ValidationError
from icefloe.io import LocalFileIO, load_file_io
from icefloe.spec.manifest import DataFile, FileFormat
from icefloe.spec.partitioning import PartitionSpec, build_spec
from icefloe.spec.schema import Schema
from icefloe.spec.sorting import build_sort_order
from icefloe.spec.types import (
    DoubleType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    UnknownType,
)
from icefloe.write import file_name_prefix, write_data_files
from write._cases import nested_schema, nested_table

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "v", DoubleType()),
    NestedField(3, "s", StringType()),
    NestedField(4, "ts", TimestampType()),
)
JAVA_NAME = re.compile(
    r"^\d{5}-\d+-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-\d{5}\.parquet$"
)


def make_table(rows: int, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    return to_requested_schema(
        pa.table(
            {
                "id": np.arange(rows, dtype=np.int64),
                "v": rng.normal(size=rows),
                "s": [f"name-{x}" for x in rng.integers(0, 10**6, rows)],
                "ts": pa.array(rng.integers(0, 2**50, rows)).cast(pa.timestamp("us")),
            }
        ),
        SCHEMA,
    )


def write(
    location: Path | str,
    data: Any,
    *,
    schema: Schema = SCHEMA,
    spec: PartitionSpec | None = None,
    properties: dict[str, str] | None = None,
    io: Any = None,
    **kwargs: Any,
) -> list[DataFile]:
    return write_data_files(
        io or load_file_io({}, str(location)),
        table_location=str(location),
        properties=properties or {},
        schema=schema,
        spec=spec or PartitionSpec(),
        data=data,
        **kwargs,
    )


def files_under(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob("*") if p.is_file())


def read(data_file: DataFile) -> pa.Table:
    return pq.read_table(data_file.file_path)


# ---------------------------------------------------------------------------------------------
# one file


def test_writes_one_described_file(tmp_path: Path) -> None:
    table = make_table(1000)
    [data_file] = write(tmp_path / "t", table)
    assert data_file.file_format == FileFormat.PARQUET
    assert data_file.file_path.startswith(str(tmp_path / "t" / "data") + "/")
    assert JAVA_NAME.match(os.path.basename(data_file.file_path))
    assert data_file.record_count == 1000
    assert data_file.file_size_in_bytes == os.path.getsize(data_file.file_path)
    assert data_file.partition == ()
    assert data_file.spec_id == 0
    assert data_file.sort_order_id is None
    assert read(data_file).equals(table)


def test_split_offsets_are_the_row_group_offsets(tmp_path: Path) -> None:
    [data_file] = write(tmp_path / "t", make_table(1000), properties={"write.parquet.row-group-limit": "300"})
    metadata = pq.ParquetFile(data_file.file_path).metadata
    assert metadata.num_row_groups == 4
    starts = []
    for index in range(metadata.num_row_groups):
        row_group = metadata.row_group(index)
        # a row group starts where its first column chunk starts
        first = min(
            min(c.data_page_offset, c.dictionary_page_offset or c.data_page_offset)
            for c in (row_group.column(i) for i in range(row_group.num_columns))
        )
        starts.append(first)
    assert data_file.split_offsets == tuple(starts)
    assert list(data_file.split_offsets) == sorted(data_file.split_offsets)
    assert data_file.split_offsets[0] == 4  # just after the "PAR1" magic
    assert data_file.file_size_in_bytes == os.path.getsize(data_file.file_path)


def test_field_ids_on_every_parquet_node(tmp_path: Path) -> None:
    schema = nested_schema()
    [data_file] = write(tmp_path / "t", nested_table(), schema=schema)
    parquet_schema = str(pq.ParquetFile(data_file.file_path).schema)
    ids_by_name: dict[str, list[int]] = {}
    for field_id, name in re.findall(r"field_id=(-?\d+) (\w+)", parquet_schema):
        ids_by_name.setdefault(name, []).append(int(field_id))
    expected = {f.name: f.field_id for f in _walk(schema)}
    lst, lst_st, m = (schema.field(n).field_type for n in ("lst", "lst_st", "m"))
    assert isinstance(lst, ListType) and isinstance(lst_st, ListType) and isinstance(m, MapType)
    # list elements and map keys/values carry their ids ...
    assert sorted(ids_by_name["element"]) == sorted([lst.element_id, lst_st.element_id])
    assert ids_by_name["key"] == [m.key_id]
    assert ids_by_name["value"] == [m.value_id]
    # ... as does every other Iceberg field; only the root and the repeated levels have none
    for name in ("id", "st", "x", "y", "inner", "z", "w", "lst", "m", "lst_st", "q"):
        assert ids_by_name[name] == [expected[name]]
    assert ids_by_name["schema"] == [-1]
    assert ids_by_name["list"] == [-1, -1] and ids_by_name["key_value"] == [-1]
    # pyarrow reads them back as PARQUET:field_id metadata
    arrow_schema = pq.read_schema(data_file.file_path)
    element = arrow_schema.field("lst").type.value_field
    assert element.metadata[b"PARQUET:field_id"] == str(lst.element_id).encode()
    assert arrow_schema.field("m").type.item_field.metadata[b"PARQUET:field_id"] == str(m.value_id).encode()


def _walk(schema: Schema) -> Iterator[NestedField]:
    stack = list(schema.fields)
    while stack:
        field = stack.pop()
        yield field
        stack.extend(getattr(field.field_type, "fields", ()))


@pytest.mark.parametrize(
    ("codec", "recorded"),
    [
        (None, "ZSTD"),
        ("zstd", "ZSTD"),
        ("snappy", "SNAPPY"),
        ("gzip", "GZIP"),
        ("lz4", "LZ4"),  # the LZ4_RAW codec (pyarrow names it LZ4; DuckDB reports LZ4_RAW)
        ("brotli", "BROTLI"),
        ("uncompressed", "UNCOMPRESSED"),
        ("none", "UNCOMPRESSED"),
        ("ZSTD", "ZSTD"),
    ],
)
def test_compression_codec_recorded(tmp_path: Path, codec: str | None, recorded: str) -> None:
    properties = {} if codec is None else {"write.parquet.compression-codec": codec}
    [data_file] = write(tmp_path / "t", make_table(100), properties=properties)
    metadata = pq.ParquetFile(data_file.file_path).metadata
    row_group = metadata.row_group(0)
    assert {row_group.column(i).compression for i in range(row_group.num_columns)} == {recorded}


def test_compression_level(tmp_path: Path) -> None:
    table = make_table(20_000)
    sizes = []
    for level in ("1", "19"):
        [data_file] = write(
            tmp_path / level,
            table,
            properties={"write.parquet.compression-codec": "zstd", "write.parquet.compression-level": level},
        )
        sizes.append(data_file.file_size_in_bytes)
    assert sizes[1] < sizes[0]
    # a level for a codec without levels is ignored, as Java does
    write(
        tmp_path / "snappy",
        table,
        properties={"write.parquet.compression-codec": "snappy", "write.parquet.compression-level": "3"},
    )


@pytest.mark.parametrize(
    ("properties", "error"),
    [
        ({"write.parquet.compression-codec": "zip"}, ValidationError),
        ({"write.parquet.compression-codec": "lzo"}, UnsupportedFeatureError),
        ({"write.parquet.compression-level": "high"}, ValidationError),
        ({"write.target-file-size-bytes": "0"}, ValidationError),
        ({"write.parquet.row-group-size-bytes": "big"}, ValidationError),
    ],
)
def test_invalid_write_properties(tmp_path: Path, properties: dict[str, str], error: type[Exception]) -> None:
    with pytest.raises(error, match=re.escape(next(iter(properties)))):
        write(tmp_path / "t", make_table(10), properties=properties)
    assert files_under(tmp_path) == []


def test_page_and_dictionary_settings_apply(tmp_path: Path) -> None:
    [small_pages] = write(
        tmp_path / "a",
        make_table(50_000),
        properties={"write.parquet.page-size-bytes": "4096", "write.parquet.dict-size-bytes": "1024"},
    )
    [default] = write(tmp_path / "b", make_table(50_000))
    # more, smaller pages and dictionary fallbacks cost bytes: the settings reached the writer
    assert small_pages.file_size_in_bytes != default.file_size_in_bytes
    column = pq.ParquetFile(small_pages.file_path).metadata.row_group(0).column(2)  # s
    assert "PLAIN" in column.encodings  # the 1 KiB dictionary overflowed


def test_empty_input_writes_nothing(tmp_path: Path) -> None:
    assert write(tmp_path / "t", make_table(0)) == []
    assert write(tmp_path / "t", iter([])) == []
    assert write(tmp_path / "t", iter(make_table(0).to_batches())) == []
    assert files_under(tmp_path) == []


def test_data_is_conformed_to_the_table_schema(tmp_path: Path) -> None:
    plain = pa.table(
        {"id": [1, 2], "v": [1.0, None], "s": pa.array(["a", "b"], pa.large_string()), "ts": [None, None]}
    )
    [data_file] = write(tmp_path / "t", plain)
    arrow_schema = pq.read_schema(data_file.file_path)
    assert [f.metadata[b"PARQUET:field_id"] for f in arrow_schema] == [b"1", b"2", b"3", b"4"]
    with pytest.raises(ValidationError, match="id"):
        write(tmp_path / "u", pa.table({"id": [1, None]}))


def test_unknown_columns_are_not_stored(tmp_path: Path) -> None:
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "gone", UnknownType()),
        NestedField(
            3, "st", StructType(NestedField(4, "a", IntegerType()), NestedField(5, "u", UnknownType()))
        ),
    )
    table = to_requested_schema(pa.table({"id": [1, 2], "st": [{"a": 1}, None]}), schema)
    [data_file] = write(tmp_path / "t", table, schema=schema)
    stored = pq.read_table(data_file.file_path)
    assert stored.column_names == ["id", "st"]
    assert stored.schema.field("st").type.names == ["a"]
    assert stored.to_pylist() == [{"id": 1, "st": {"a": 1}}, {"id": 2, "st": None}]
    assert set(data_file.column_sizes or {}) == {1, 4}


# ---------------------------------------------------------------------------------------------
# rolling


@pytest.mark.parametrize("streamed", [False, True])
def test_rolls_files_at_the_target_size(tmp_path: Path, streamed: bool) -> None:
    table = make_table(200_000)
    target = 512 * 1024
    data = iter(table.to_batches(max_chunksize=7_000)) if streamed else table
    files = write(tmp_path / "t", data, target_file_size_bytes=target)
    assert len(files) >= 4
    assert sum(f.record_count for f in files) == 200_000
    for data_file in files[:-1]:
        # closed once the target is reached, never far beyond it
        assert target * 0.9 <= data_file.file_size_in_bytes <= target * 1.15
    assert files[-1].file_size_in_bytes <= target * 1.15
    for data_file in files:
        assert data_file.file_size_in_bytes == os.path.getsize(data_file.file_path)
    counters = [int(os.path.basename(f.file_path)[-13:-8]) for f in files]
    assert counters == list(range(1, len(files) + 1))
    prefixes = {os.path.basename(f.file_path)[:-14] for f in files}
    assert len(prefixes) == 1  # one operation id per call
    assert pa.concat_tables(read(f) for f in files).equals(table)


def test_target_from_table_properties(tmp_path: Path) -> None:
    files = write(
        tmp_path / "t", make_table(100_000), properties={"write.target-file-size-bytes": str(256 * 1024)}
    )
    assert len(files) > 2


def test_row_group_size_bytes(tmp_path: Path) -> None:
    [data_file] = write(
        tmp_path / "t",
        make_table(100_000),
        properties={"write.parquet.row-group-size-bytes": str(256 * 1024)},
    )
    metadata = pq.ParquetFile(data_file.file_path).metadata
    assert metadata.num_row_groups > 3
    sizes = [metadata.row_group(i).total_byte_size for i in range(metadata.num_row_groups)]
    assert len(data_file.split_offsets or ()) == metadata.num_row_groups
    assert max(sizes) < 4 * 256 * 1024


def test_file_name_prefix(tmp_path: Path) -> None:
    prefix = file_name_prefix(7, 3, "op-1")
    assert prefix == "00007-3-op-1"
    files = write(tmp_path / "t", make_table(10), file_name_prefix=prefix)
    assert os.path.basename(files[0].file_path) == "00007-3-op-1-00001.parquet"
    assert JAVA_NAME.match(os.path.basename(write(tmp_path / "u", make_table(1))[0].file_path))


# ---------------------------------------------------------------------------------------------
# partitions and order


def test_partitioned_write(tmp_path: Path) -> None:
    table = make_table(5_000)
    table = table.set_column(2, "s", pa.array([f"c{i % 3}" for i in range(5_000)]))
    spec = build_spec(SCHEMA, ["s", "bucket(4, id)"], spec_id=3)
    files = write(tmp_path / "t", table, spec=spec)
    assert len(files) == 12
    seen = 0
    for data_file in files:
        s_value, bucket = data_file.partition
        assert data_file.spec_id == 3
        assert data_file.file_path.startswith(f"{tmp_path}/t/data/s={s_value}/id_bucket={bucket}/")
        rows = read(data_file)
        assert set(rows.column("s").to_pylist()) == {s_value}
        assert all(
            spec.fields[1].transform.apply(LongType(), i) == bucket for i in rows.column("id").to_pylist()
        )
        seen += rows.num_rows
    assert seen == 5_000
    assert len({f.file_path for f in files}) == 12


def test_partitioned_streamed_write_with_few_open_files(tmp_path: Path) -> None:
    table = make_table(3_000)
    table = table.set_column(2, "s", pa.array([f"c{i % 5}" for i in range(3_000)]))
    spec = build_spec(SCHEMA, ["s"])
    batches = table.to_batches(max_chunksize=100)  # every batch holds every partition
    files = write(tmp_path / "t", iter(batches), spec=spec, max_open_files=2)
    assert len(files) > 5  # files were closed early to respect the bound
    assert sum(f.record_count for f in files) == 3_000
    for data_file in files:
        assert set(read(data_file).column("s").to_pylist()) == {data_file.partition[0]}
    everything = pa.concat_tables(read(f) for f in files).sort_by("id")
    assert everything.equals(table.sort_by("id"))


def test_known_partition(tmp_path: Path) -> None:
    spec = build_spec(SCHEMA, ["s"])
    files = write(tmp_path / "t", make_table(10), spec=spec, partition=("given",))
    assert [f.partition for f in files] == [("given",)]
    assert "/data/s=given/" in files[0].file_path
    with pytest.raises(ValidationError, match="partition"):
        write(tmp_path / "t", make_table(10), spec=spec, partition=("a", "b"))


def test_object_storage_locations(tmp_path: Path) -> None:
    spec = build_spec(SCHEMA, ["s"])
    table = make_table(10).set_column(2, "s", pa.array(["x"] * 10))
    [data_file] = write(tmp_path / "t", table, spec=spec, properties={"write.object-storage.enabled": "true"})
    relative = data_file.file_path[len(f"{tmp_path}/t/data/") :]
    assert re.match(r"^[01]{4}/[01]{4}/[01]{4}/[01]{8}/s=x/[^/]+\.parquet$", relative)


def test_sort_order_applied_within_files(tmp_path: Path) -> None:
    table = to_requested_schema(
        pa.table(
            {
                "id": [5, 3, 9, 1, 7, 2],
                "v": [1.0, None, 3.0, None, 2.0, 3.0],
                "s": list("abcdef"),
                "ts": [None] * 6,
            }
        ),
        SCHEMA,
    )
    order = build_sort_order(SCHEMA, ["v DESC NULLS FIRST", "id"], order_id=4)
    [data_file] = write(tmp_path / "t", table, sort_order=order)
    rows = read(data_file)
    assert rows.column("v").to_pylist() == [None, None, 3.0, 3.0, 2.0, 1.0]
    assert rows.column("id").to_pylist() == [1, 3, 2, 9, 7, 5]
    assert data_file.sort_order_id == 4


def test_sort_by_transform_per_file(tmp_path: Path) -> None:
    table = make_table(2_000)
    order = build_sort_order(SCHEMA, ["bucket(8, id)", "id DESC"], order_id=2)
    files = write(
        tmp_path / "t",
        iter(table.to_batches(max_chunksize=300)),
        sort_order=order,
        target_file_size_bytes=20_000,
    )
    assert len(files) > 1
    transform = order.fields[0].transform
    previous_last: tuple[int, int] | None = None
    for data_file in files:
        ids = read(data_file).column("id").to_pylist()
        keys = [(transform.apply(LongType(), i), -i) for i in ids]
        assert keys == sorted(keys)
        if previous_last is not None:  # the files split one sorted run
            assert previous_last <= keys[0]
        previous_last = keys[-1]
        assert data_file.sort_order_id == 2


def test_sort_with_nulls_last_ascending(tmp_path: Path) -> None:
    table = to_requested_schema(
        pa.table(
            {"id": [1, 2, 3, 4], "v": [None, 2.0, None, 1.0], "s": ["a", None, "c", "b"], "ts": [None] * 4}
        ),
        SCHEMA,
    )
    order = build_sort_order(SCHEMA, ["s NULLS LAST"])
    [data_file] = write(tmp_path / "t", table, sort_order=order)
    assert read(data_file).column("s").to_pylist() == ["a", "b", "c", None]


def test_sort_puts_nan_above_numbers(tmp_path: Path) -> None:
    table = to_requested_schema(
        pa.table(
            {
                "id": [1, 2, 3, 4, 5],
                "v": [2.0, float("nan"), None, -1.0, 7.0],
                "s": ["a"] * 5,
                "ts": [None] * 5,
            }
        ),
        SCHEMA,
    )
    [descending] = write(tmp_path / "d", table, sort_order=build_sort_order(SCHEMA, ["v DESC"]))
    assert read(descending).column("id").to_pylist() == [2, 5, 1, 4, 3]  # NaN first, nulls last
    [ascending] = write(tmp_path / "a", table, sort_order=build_sort_order(SCHEMA, ["v"]))
    assert read(ascending).column("id").to_pylist() == [3, 4, 1, 5, 2]  # nulls first, NaN last


def test_unsorted_order_records_no_id(tmp_path: Path) -> None:
    [data_file] = write(tmp_path / "t", make_table(5), sort_order=build_sort_order(SCHEMA, None))
    assert data_file.sort_order_id is None


# ---------------------------------------------------------------------------------------------
# failures


def test_failing_input_deletes_what_was_written(tmp_path: Path) -> None:
    table = make_table(50_000)

    def batches() -> Iterator[pa.RecordBatch]:
        yield from table.to_batches(max_chunksize=10_000)[:3]
        raise RuntimeError("source went away")

    spec = build_spec(SCHEMA, ["bucket(3, id)"])
    with pytest.raises(RuntimeError, match="source went away"):
        write(tmp_path / "t", batches(), spec=spec, target_file_size_bytes=50_000)
    assert files_under(tmp_path) == []


class _Budget:
    """Bytes left before every stream of a file system fails."""

    def __init__(self, limit: int):
        self.left = limit


class _FailingStream:
    """A writable raw stream that fails once its file system's budget is spent."""

    def __init__(self, target: Any, budget: _Budget):
        self.target = target
        self.budget = budget
        self.written = 0
        self.closed = False

    def write(self, data: bytes) -> int:
        if len(data) > self.budget.left:
            raise OSError("disk full (injected)")
        self.budget.left -= len(data)
        self.written += len(data)
        self.target.write(data)
        return len(data)

    def flush(self) -> None:
        self.target.flush()

    def close(self) -> None:
        self.closed = True
        self.target.close()

    def tell(self) -> int:
        return self.written

    def writable(self) -> bool:
        return True


class _FailingHandler(pafs.FileSystemHandler):
    """The local file system, whose output streams fail after ``budget`` bytes in all."""

    def __init__(self, budget: _Budget):
        self.local = pafs.LocalFileSystem()
        self.budget = budget

    def get_type_name(self) -> str:
        return "failing-local"

    def normalize_path(self, path: str) -> str:
        return path

    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        return self.local.get_file_info(paths)

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        return self.local.get_file_info(selector)

    def create_dir(self, path: str, recursive: bool) -> None:
        self.local.create_dir(path, recursive=recursive)

    def delete_dir(self, path: str) -> None:
        self.local.delete_dir(path)

    def delete_dir_contents(self, path: str, missing_dir_ok: bool = False) -> None:
        self.local.delete_dir_contents(path, missing_dir_ok=missing_dir_ok)

    def delete_root_dir_contents(self) -> None:
        raise NotImplementedError

    def delete_file(self, path: str) -> None:
        self.local.delete_file(path)

    def move(self, src: str, dest: str) -> None:
        self.local.move(src, dest)

    def copy_file(self, src: str, dest: str) -> None:
        self.local.copy_file(src, dest)

    def open_input_stream(self, path: str) -> Any:
        return self.local.open_input_stream(path)

    def open_input_file(self, path: str) -> Any:
        return self.local.open_input_file(path)

    def open_output_stream(self, path: str, metadata: Any) -> Any:
        return pa.PythonFile(_FailingStream(open(path, "wb"), self.budget), mode="w")

    def open_append_stream(self, path: str, metadata: Any) -> Any:
        raise NotImplementedError

    def equals(self, other: Any) -> bool:
        return self is other


class _FailingFileIO(LocalFileIO):
    """Local files, written through a pyarrow file system that fails after ``limit`` bytes in all."""

    def __init__(self, limit: int):
        super().__init__({})
        self.budget = _Budget(limit)

    def arrow_filesystem(self, location: str) -> tuple[pafs.FileSystem, str]:
        _, path = super().arrow_filesystem(location)
        return pafs.PyFileSystem(_FailingHandler(self.budget)), path


def test_storage_failure_deletes_partial_files_and_names_the_file(tmp_path: Path) -> None:
    table = make_table(100_000)
    spec = build_spec(SCHEMA, ["bucket(2, id)"])
    io = _FailingFileIO(limit=600_000)
    with pytest.raises(DataWriteError, match="disk full") as failure:
        write(tmp_path / "t", table, spec=spec, io=io, target_file_size_bytes=200_000)
    assert failure.value.location is not None
    assert failure.value.location.endswith(".parquet")
    assert failure.value.location in str(failure.value)
    assert isinstance(failure.value.__cause__, OSError)
    assert files_under(tmp_path) == []


def test_storage_failure_before_any_byte(tmp_path: Path) -> None:
    with pytest.raises(DataWriteError):
        write(tmp_path / "t", make_table(10), io=_FailingFileIO(limit=0))
    assert files_under(tmp_path) == []


# ---------------------------------------------------------------------------------------------
# S3


def test_write_to_s3(s3_properties: dict[str, str]) -> None:
    bucket = s3_properties["test.bucket"]
    location = f"s3://{bucket}/db/t"
    io = load_file_io(s3_properties, location)
    table = make_table(30_000)
    spec = build_spec(SCHEMA, ["bucket(2, id)"])
    files = write(location, table, spec=spec, io=io, properties={}, target_file_size_bytes=200_000)
    assert len(files) > 2
    total = 0
    for data_file in files:
        assert data_file.file_path.startswith(f"s3://{bucket}/db/t/data/id_bucket=")
        assert io.new_input(data_file.file_path).length() == data_file.file_size_in_bytes
        fs, path = io.arrow_filesystem(data_file.file_path)
        rows = pq.read_table(path, filesystem=fs)
        assert rows.num_rows == data_file.record_count
        metadata = pq.ParquetFile(fs.open_input_file(path)).metadata
        firsts = [metadata.row_group(i).column(0) for i in range(metadata.num_row_groups)]
        assert data_file.split_offsets == tuple(
            c.dictionary_page_offset if c.has_dictionary_page else c.data_page_offset for c in firsts
        )
        total += rows.num_rows
    assert total == 30_000


def test_s3_failure_leaves_no_objects(s3_properties: dict[str, str]) -> None:
    bucket = s3_properties["test.bucket"]
    location = f"s3://{bucket}/db/t"
    io = load_file_io(s3_properties, location)
    table = make_table(20_000)

    def batches() -> Iterator[pa.RecordBatch]:
        yield from table.to_batches(max_chunksize=5_000)
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        write(location, batches(), io=io, target_file_size_bytes=50_000)
    assert list(io.list_prefix(f"s3://{bucket}/db/")) == []


def test_float_partitions_keep_signed_zeros_apart_and_nans_together(tmp_path: Path) -> None:
    # Python's == merges 0.0 with -0.0 and keeps NaNs apart; Iceberg compares bit patterns.
    schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "x", DoubleType()))
    spec = build_spec(schema, ["x"])
    batches = [
        to_requested_schema(pa.table({"id": [i], "x": [value]}), schema)
        for i, value in enumerate([-0.0, 0.0, float("nan"), float("nan"), float("nan")])
    ]
    files = write_data_files(
        LocalFileIO(),
        table_location=str(tmp_path),
        properties={},
        schema=schema,
        spec=spec,
        data=(b for t in batches for b in t.to_batches()),
    )
    zeros = sorted((f.partition[0], read(f).column("x").to_pylist()) for f in files if f.partition[0] == 0.0)
    assert [(str(p), [str(v) for v in rows]) for p, rows in zeros] in (
        [("-0.0", ["-0.0"]), ("0.0", ["0.0"])],
        [("0.0", ["0.0"]), ("-0.0", ["-0.0"])],
    )
    nan_files = [f for f in files if f.partition[0] != f.partition[0]]
    assert len(nan_files) == 1 and nan_files[0].record_count == 3


def test_chunks_without_min_max_make_the_file_bounds_unknown(tmp_path: Path) -> None:
    # parquet-cpp drops min/max of a row group holding a value longer than 4 KiB; bounds built
    # from the other row groups alone would exclude that value and prune it from scans.
    schema = Schema(NestedField(1, "s", StringType()))
    data = to_requested_schema(pa.table({"s": ["z" * 5000, "a"]}), schema)
    (file,) = write_data_files(
        LocalFileIO(),
        table_location=str(tmp_path),
        properties={"write.parquet.row-group-limit": "1"},
        schema=schema,
        spec=PartitionSpec(),
        data=data,
    )
    assert pq.ParquetFile(file.file_path).metadata.num_row_groups == 2
    assert 1 not in (file.lower_bounds or {}) and 1 not in (file.upper_bounds or {})
    assert file.value_counts == {1: 2} and file.null_value_counts == {1: 0}


def test_buffered_rows_over_all_open_partitions_stay_within_the_budget(tmp_path: Path) -> None:
    # 40 partitions interleaved in small batches: each open file would buffer a whole row group;
    # with a small budget the writer flushes the largest buffers early instead.
    schema = Schema(NestedField(1, "p", LongType()), NestedField(2, "payload", StringType()))
    spec = build_spec(schema, ["p"])
    batches = [
        to_requested_schema(pa.table({"p": [i % 40] * 50, "payload": ["x" * 200] * 50}), schema).to_batches()[
            0
        ]
        for i in range(400)
    ]
    budget = 200_000  # bytes; each batch is ~10 KB in Arrow
    files = write_data_files(
        LocalFileIO(),
        table_location=str(tmp_path),
        properties={},
        schema=schema,
        spec=spec,
        data=iter(batches),
        max_buffered_bytes=budget,
    )
    assert sum(f.record_count for f in files) == 400 * 50
    assert len(files) == 40
    # Flushing early shows as several row groups per file (each file holds 10 batches).
    assert all(pq.ParquetFile(f.file_path).metadata.num_row_groups > 1 for f in files)
