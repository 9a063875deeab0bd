"""``table.append(data)``: every input kind, write properties, empty input, failures."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icefloe import Catalog, Snapshot
from icefloe.errors import ValidationError
from support.catalogs import ARROW_SCHEMA, avro_files, data_files, local, rows, sorted_rows


def _reader(data: pa.Table, chunk: int) -> pa.RecordBatchReader:
    return pa.RecordBatchReader.from_batches(data.schema, data.to_batches(max_chunksize=chunk))


INPUTS = {
    "arrow-table": lambda d: d,
    "record-batch": lambda d: d.combine_chunks().to_batches()[0],
    "record-batch-reader": lambda d: _reader(d, 3),
    "pandas": lambda d: d.to_pandas(),
    "polars": lambda d: pl.from_arrow(d),
    "list-of-dicts": lambda d: d.to_pylist(),
}


@pytest.mark.parametrize("kind", list(INPUTS))
def test_append_input_kinds(catalog: Catalog, kind: str) -> None:
    table = catalog.create_table("db.t", ARROW_SCHEMA, partition_by=["day"])
    data = rows(10)
    snapshot = table.append(INPUTS[kind](data))
    assert isinstance(snapshot, Snapshot)
    assert snapshot == table.current_snapshot()
    assert snapshot.summary["added-records"] == "10"
    assert snapshot.summary["added-data-files"] == "3"
    assert sorted_rows(table.new_scan().to_arrow()) == sorted_rows(data)
    assert sorted_rows(catalog.load_table("db.t").new_scan().to_arrow()) == sorted_rows(data)


def test_append_by_column_name_in_any_order_with_missing_optional_columns(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA)
    table.append(pa.table({"score": [1.5], "id": pa.array([7], pa.int32())}))  # int32 widened to long
    assert table.new_scan().to_arrow().to_pylist() == [
        {"id": 7, "name": None, "ts": None, "day": None, "amount": None, "score": 1.5}
    ]


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (pa.table({"id": [1], "bogus": [2]}), "bogus"),
        (pa.table({"name": ["x"]}), "id"),  # required column missing
        (pa.table({"id": pa.array([1, None], pa.int64())}), "id"),  # null in a required column
    ],
)
def test_append_rejects_data_not_fitting_the_schema(
    memory_catalog: Catalog, data: pa.Table, needle: str
) -> None:
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA)
    with pytest.raises(ValidationError, match=needle):
        table.append(data)
    assert table.current_snapshot() is None
    assert data_files(table) == set()


def test_append_rejects_other_objects(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA)
    with pytest.raises(ValidationError, match="int"):
        table.append(42)


@pytest.mark.parametrize(
    "empty",
    [
        rows(0),
        _reader(rows(0), 3),
        pd.DataFrame({"id": pd.Series([], dtype="int64")}),
        [],
    ],
    ids=["arrow", "reader", "pandas", "list"],
)
def test_empty_data_commits_nothing(catalog: Catalog, empty: object) -> None:
    table = catalog.create_table("db.t", ARROW_SCHEMA)
    before = table.metadata_location
    assert table.append(empty) is None
    assert table.current_snapshot() is None
    assert table.metadata_location == before
    assert catalog.load_table("db.t").metadata_location == before
    assert data_files(table) == set()
    assert avro_files(table) == set()


def test_streamed_reader_is_consumed_lazily_and_rolls_files(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table(
        "db.t", ARROW_SCHEMA, properties={"write.target-file-size-bytes": "20000"}
    )
    pulled = []

    def batches() -> Iterator[pa.RecordBatch]:
        for i in range(40):
            pulled.append(i)
            yield rows(500, start=i * 500).to_batches()[0]

    reader = pa.RecordBatchReader.from_batches(ARROW_SCHEMA, batches())
    assert pulled == []  # nothing read before the append
    snapshot = table.append(reader)
    assert snapshot is not None
    assert pulled == list(range(40))
    files = snapshot.added_data_files(table.io())
    assert len(files) > 3
    assert sum(f.record_count for f in files) == 20_000
    assert snapshot.summary["added-data-files"] == str(len(files))
    assert table.new_scan().count() == 20_000


def test_failing_stream_commits_nothing_and_leaves_no_files(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table(
        "db.t", ARROW_SCHEMA, properties={"write.target-file-size-bytes": "20000"}
    )

    def batches() -> Iterator[pa.RecordBatch]:
        for i in range(10):
            yield rows(500, start=i * 500).to_batches()[0]
        raise RuntimeError("source went away")

    with pytest.raises(RuntimeError, match="source went away"):
        table.append(pa.RecordBatchReader.from_batches(ARROW_SCHEMA, batches()))
    assert table.current_snapshot() is None
    assert data_files(table) == set()
    assert avro_files(table) == set()


def test_target_file_size_rolls_files(catalog: Catalog) -> None:
    table = catalog.create_table("db.t", ARROW_SCHEMA, properties={"write.target-file-size-bytes": "30000"})
    data = rows(20_000)
    snapshot = table.append(data)
    assert snapshot is not None
    files = snapshot.added_data_files(table.io())
    assert len(files) >= 3
    assert sum(f.record_count for f in files) == 20_000
    assert int(snapshot.summary["added-files-size"]) == sum(f.file_size_in_bytes for f in files)
    # Each file's size is what the catalog records and what is on disk.
    for file in files:
        assert local(file.file_path).stat().st_size == file.file_size_in_bytes
    assert table.new_scan().count() == 20_000
    assert sorted(table.new_scan().select("id").to_arrow().column("id").to_pylist()) == list(range(20_000))

    one = catalog.create_table("db.one", ARROW_SCHEMA)  # the default (512 MiB): one file
    one_snapshot = one.append(data)
    assert one_snapshot is not None and one_snapshot.summary["added-data-files"] == "1"


@pytest.mark.parametrize(
    ("codec", "parquet_name"),
    [
        (None, "ZSTD"),
        ("snappy", "SNAPPY"),
        ("gzip", "GZIP"),
        ("zstd", "ZSTD"),
        ("uncompressed", "UNCOMPRESSED"),
    ],
)
def test_parquet_compression_codec(memory_catalog: Catalog, codec: str | None, parquet_name: str) -> None:
    properties = {"write.parquet.compression-codec": codec} if codec else {}
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA, properties=properties)
    snapshot = table.append(rows(50))
    assert snapshot is not None
    (file,) = snapshot.added_data_files(table.io())
    metadata = pq.read_metadata(local(file.file_path))
    codecs = {metadata.row_group(0).column(i).compression for i in range(metadata.num_columns)}
    assert codecs == {parquet_name}


def test_codec_changed_by_property_update(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA)
    table.update_properties().set("write.parquet.compression-codec", "snappy").commit()
    snapshot = table.append(rows(5))
    assert snapshot is not None
    (file,) = snapshot.added_data_files(table.io())
    assert pq.read_metadata(local(file.file_path)).row_group(0).column(0).compression == "SNAPPY"


def test_written_files_carry_field_ids_and_metrics(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA)
    snapshot = table.append(rows(10))
    assert snapshot is not None
    (file,) = snapshot.added_data_files(table.io())
    arrow_schema = pq.read_schema(local(file.file_path))
    assert [f.metadata[b"PARQUET:field_id"] for f in arrow_schema] == [b"1", b"2", b"3", b"4", b"5", b"6"]
    assert file.record_count == 10
    assert file.value_counts is not None and file.value_counts[1] == 10
    assert file.null_value_counts is not None and file.null_value_counts[2] == 1  # id 6's name
    assert file.lower_bounds is not None and file.lower_bounds[1] == (0).to_bytes(8, "little")
    assert file.upper_bounds is not None and file.upper_bounds[1] == (9).to_bytes(8, "little")


def test_append_files_go_under_the_table_data_folder(catalog: Catalog, warehouse: Path) -> None:
    table = catalog.create_table("db.t", ARROW_SCHEMA, partition_by=["day"])
    table.append(rows(3))
    folder = warehouse / "db" / "t" / "data"
    assert {p.parent.name for p in folder.rglob("*.parquet")} == {
        "day=2024-01-01",
        "day=2024-01-02",
        "day=2024-01-03",
    }
