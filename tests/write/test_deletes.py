"""Position and equality delete file writers: layout, order, metrics, names, failures."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icefloe.errors import DataWriteError, ValidationError
from icefloe.io import LocalFileIO
from icefloe.spec.conversions import to_bytes
from icefloe.spec.manifest import DataFile, FileContent, FileFormat
from icefloe.spec.partitioning import PartitionSpec, build_spec
from icefloe.spec.schema import Schema
from icefloe.spec.sorting import build_sort_order
from icefloe.spec.types import (
    DoubleType,
    ListType,
    LongType,
    NestedField,
    StringType,
    StructType,
)
from icefloe.write import write_equality_deletes, write_position_deletes, write_position_deletes_for
from icefloe.write.deletes import position_delete_metrics_config, position_delete_schema
from write.test_parquet import _FailingFileIO

PATH_ID, POS_ID, ROW_ID = 2147483546, 2147483545, 2147483544
SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "country", StringType()),
    NestedField(3, "v", DoubleType()),
    NestedField(4, "s", StructType(NestedField(5, "x", LongType()), NestedField(6, "tag", StringType()))),
    NestedField(7, "l", ListType(8, LongType())),
)
BY_COUNTRY = build_spec(SCHEMA, ["country"])
DELETES_NAME = re.compile(r"^\d{5}-\d+-[0-9a-f-]{36}-\d{5}-deletes\.parquet$")


def _position_kwargs(tmp_path: Path, **overrides: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "table_location": str(tmp_path / "t"),
        "properties": {},
        "schema": SCHEMA,
        "spec": BY_COUNTRY,
        "partition": ("CN",),
    }
    kwargs.update(overrides)
    return kwargs


def _data_file(path: str, country: str, spec: PartitionSpec = BY_COUNTRY) -> DataFile:
    return DataFile(path, FileFormat.PARQUET, 100, 1000, partition=(country,), spec_id=spec.spec_id)


# ---- position deletes ------------------------------------------------------------------------


def test_position_deletes_sorted_deduplicated_and_described(tmp_path: Path) -> None:
    deletes = {"s3://b/data/b.parquet": [5, 1, 5], "s3://b/data/a.parquet": np.array([9, 0])}
    (file,) = write_position_deletes(LocalFileIO(), deletes=deletes, **_position_kwargs(tmp_path))
    rows = pq.read_table(file.file_path).to_pylist()
    assert rows == [
        {"file_path": "s3://b/data/a.parquet", "pos": 0},
        {"file_path": "s3://b/data/a.parquet", "pos": 9},
        {"file_path": "s3://b/data/b.parquet", "pos": 1},
        {"file_path": "s3://b/data/b.parquet", "pos": 5},
    ]
    schema = pq.read_schema(file.file_path)
    assert [(f.name, f.metadata[b"PARQUET:field_id"], f.nullable) for f in schema] == [
        ("file_path", b"2147483546", False),
        ("pos", b"2147483545", False),
    ]
    assert file.content == FileContent.POSITION_DELETES
    assert file.file_format == FileFormat.PARQUET
    assert (file.partition, file.spec_id, file.record_count) == (("CN",), BY_COUNTRY.spec_id, 4)
    assert file.file_size_in_bytes == Path(file.file_path).stat().st_size
    assert file.split_offsets == (4,)
    assert file.sort_order_id is None and file.equality_ids is None
    assert Path(file.file_path).parent == tmp_path / "t" / "data" / "country=CN"
    assert DELETES_NAME.match(Path(file.file_path).name)
    # Java's metrics for a file referencing several data files: sizes only for file_path / pos.
    assert set(file.column_sizes or {}) == {PATH_ID, POS_ID}
    assert file.value_counts is None and file.null_value_counts is None and file.nan_value_counts is None
    assert file.lower_bounds is None and file.upper_bounds is None
    assert file.referenced_data_file is None


def test_single_referenced_data_file_keeps_bounds(tmp_path: Path) -> None:
    (file,) = write_position_deletes(
        LocalFileIO(), deletes={"s3://b/data/a.parquet": range(3, 10)}, **_position_kwargs(tmp_path)
    )
    assert file.referenced_data_file == "s3://b/data/a.parquet"
    assert file.lower_bounds == {PATH_ID: b"s3://b/data/a.parquet", POS_ID: to_bytes(LongType(), 3)}
    assert file.upper_bounds == {PATH_ID: b"s3://b/data/a.parquet", POS_ID: to_bytes(LongType(), 9)}
    assert file.value_counts is None and file.null_value_counts is None
    assert file.record_count == 7


def test_long_paths_keep_full_bounds(tmp_path: Path) -> None:
    # file_path is "full" in Java's position delete metrics config: never truncated.
    path = "s3://bucket/" + "x" * 300 + ".parquet"
    (file,) = write_position_deletes(LocalFileIO(), deletes={path: [1]}, **_position_kwargs(tmp_path))
    assert (file.lower_bounds or {})[PATH_ID] == path.encode()
    assert file.referenced_data_file == path


def test_deleted_rows_with_metrics_of_the_table_config(tmp_path: Path) -> None:
    row_schema = SCHEMA.select("id", "country")
    rows = pa.table(
        {
            "file_path": ["f1", "f1", "f1"],
            "pos": [2, 0, 1],
            "row": [
                {"id": 12, "country": "CN"},
                {"id": 10, "country": "a-long-country-name-over-16"},
                {"id": 11, "country": None},
            ],
        }
    )
    properties = {"write.metadata.metrics.column.id": "counts"}
    (file,) = write_position_deletes(
        LocalFileIO(),
        deletes=rows,
        row_schema=row_schema,
        **_position_kwargs(tmp_path, properties=properties),
    )
    read = pq.read_table(file.file_path)
    assert read.column("pos").to_pylist() == [0, 1, 2]
    assert [r["id"] for r in read.column("row").to_pylist()] == [10, 11, 12]
    row_field = pq.read_schema(file.file_path).field("row")
    assert row_field.metadata[b"PARQUET:field_id"] == b"2147483544" and not row_field.nullable
    # row.id: counts only (the table's column mode); row.country: truncate(16) (the default).
    assert (file.value_counts or {}) == {1: 3, 2: 3}
    assert (file.null_value_counts or {}) == {1: 0, 2: 1}
    assert 1 not in (file.lower_bounds or {})
    assert (file.lower_bounds or {})[2] == b"CN"
    assert (file.upper_bounds or {})[2] == b"a-long-country-o"  # truncated, last char rounded up
    assert PATH_ID in (file.lower_bounds or {})  # one referenced data file


def test_metrics_config_is_javas_for_position_deletes() -> None:
    properties = {
        "write.metadata.metrics.default": "counts",
        "write.metadata.metrics.column.country": "full",
    }
    config = position_delete_metrics_config(properties, SCHEMA)
    assert str(config.column_mode("file_path")) == "full"
    assert str(config.column_mode("pos")) == "full"
    assert str(config.column_mode("row.country")) == "full"
    assert str(config.column_mode("row.id")) == "counts"


def test_rolls_at_the_delete_target_size_and_uses_delete_codec(tmp_path: Path) -> None:
    deletes = {f"s3://b/data/f{i:04d}.parquet": np.arange(0, 2000, 3) for i in range(40)}
    properties = {
        "write.delete.target-file-size-bytes": "20000",
        "write.target-file-size-bytes": "1",  # data files' setting: not used for deletes
        "write.delete.parquet.compression-codec": "gzip",
    }
    files = write_position_deletes(
        LocalFileIO(), deletes=deletes, **_position_kwargs(tmp_path, properties=properties)
    )
    assert len(files) > 1
    assert sum(f.record_count for f in files) == 40 * len(range(0, 2000, 3))
    counters = [int(Path(f.file_path).name.split("-")[-2]) for f in files]
    assert counters == list(range(1, len(files) + 1))
    metadata = pq.ParquetFile(files[0].file_path).metadata
    assert metadata.row_group(0).column(0).compression == "GZIP"
    # Sorted across files: each file's paths come after the previous file's.
    lasts = [pq.read_table(f.file_path).column("file_path")[-1].as_py() for f in files]
    assert lasts == sorted(lasts)


def test_grouping_by_data_file_partition(tmp_path: Path) -> None:
    unpartitioned = PartitionSpec((), spec_id=0)
    by_country = build_spec(SCHEMA, ["country"], spec_id=1)
    specs = {0: unpartitioned, 1: by_country}
    deletes = {
        _data_file("s3://b/cn-1.parquet", "CN", by_country): [1, 2],
        _data_file("s3://b/us-1.parquet", "US", by_country): [0],
        _data_file("s3://b/cn-2.parquet", "CN", by_country): [7],
        DataFile("s3://b/old.parquet", FileFormat.PARQUET, 10, 100, spec_id=0): [3],
    }
    files = write_position_deletes_for(
        LocalFileIO(),
        table_location=str(tmp_path / "t"),
        properties={},
        schema=SCHEMA,
        specs=specs,
        deletes=deletes,
        file_name_prefix="00007-3-op",
    )
    described = sorted((f.spec_id, f.partition, f.record_count, f.referenced_data_file) for f in files)
    assert described == [
        (0, (), 1, "s3://b/old.parquet"),
        (1, ("CN",), 3, None),
        (1, ("US",), 1, "s3://b/us-1.parquet"),
    ]
    names = sorted(Path(f.file_path).name for f in files)
    assert len(set(names)) == 3 and all(n.startswith("00007-3-op") for n in names)
    with pytest.raises(ValidationError, match="spec 9"):
        write_position_deletes_for(
            LocalFileIO(),
            table_location=str(tmp_path / "t"),
            properties={},
            schema=SCHEMA,
            specs=specs,
            deletes={DataFile("x", FileFormat.PARQUET, 1, 1, spec_id=9): [0]},
        )


def test_invalid_position_deletes(tmp_path: Path) -> None:
    io = LocalFileIO()
    with pytest.raises(ValidationError, match="negative"):
        write_position_deletes(io, deletes={"f": [1, -1]}, **_position_kwargs(tmp_path))
    with pytest.raises(ValidationError, match="partition"):
        write_position_deletes(io, deletes={"f": [1]}, **_position_kwargs(tmp_path, partition=()))
    with pytest.raises(ValidationError, match="row_schema"):
        write_position_deletes(
            io,
            deletes=pa.table({"file_path": ["f"], "pos": [1], "row": [{"id": 1}]}),
            **_position_kwargs(tmp_path),
        )
    with pytest.raises(ValidationError, match="null 'pos'"):
        write_position_deletes(
            io,
            deletes=pa.table({"file_path": ["f"], "pos": pa.array([None], pa.int64())}),
            **_position_kwargs(tmp_path),
        )
    assert write_position_deletes(io, deletes={}, **_position_kwargs(tmp_path)) == []
    assert not (tmp_path / "t").exists()


def test_position_delete_schema() -> None:
    assert [f.field_id for f in position_delete_schema().fields] == [PATH_ID, POS_ID]
    with_rows = position_delete_schema(SCHEMA.select("id"))
    row = with_rows.find_field(ROW_ID)
    assert row is not None and row.required and row.name == "row"


def test_storage_failure_leaves_no_delete_files(tmp_path: Path) -> None:
    deletes = {f"s3://b/f{i}.parquet": np.arange(5000) for i in range(20)}
    with pytest.raises(DataWriteError, match="disk full") as failure:
        write_position_deletes(
            _FailingFileIO(limit=20_000),
            deletes=deletes,
            **_position_kwargs(tmp_path, properties={"write.delete.target-file-size-bytes": "8000"}),
        )
    assert failure.value.location is not None and failure.value.location.endswith("-deletes.parquet")
    assert "position delete file" in str(failure.value)
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


# ---- equality deletes ------------------------------------------------------------------------


def _eq_kwargs(tmp_path: Path, **overrides: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "table_location": str(tmp_path / "t"),
        "properties": {},
        "schema": SCHEMA,
        "spec": PartitionSpec((), spec_id=0),
    }
    kwargs.update(overrides)
    return kwargs


def test_equality_deletes_of_the_delete_columns(tmp_path: Path) -> None:
    data = pa.table({"id": [3, 1], "country": ["x", "y"], "v": [0.5, None]})
    (file,) = write_equality_deletes(LocalFileIO(), equality_ids=["id"], data=data, **_eq_kwargs(tmp_path))
    assert file.content == FileContent.EQUALITY_DELETES
    assert file.equality_ids == (1,)
    assert file.sort_order_id is None
    assert (file.partition, file.spec_id, file.record_count) == ((), 0, 2)
    read = pq.read_table(file.file_path)
    assert read.column_names == ["id"]
    assert read.schema.field("id").metadata[b"PARQUET:field_id"] == b"1"
    assert read.column("id").to_pylist() == [3, 1]
    assert file.value_counts == {1: 2} and file.null_value_counts == {1: 0}
    assert file.lower_bounds == {1: to_bytes(LongType(), 1)}
    assert file.upper_bounds == {1: to_bytes(LongType(), 3)}
    assert DELETES_NAME.match(Path(file.file_path).name)


def test_equality_deletes_with_full_rows_nested_columns_and_metrics_config(tmp_path: Path) -> None:
    row_schema = SCHEMA.select("id", "country", "s")
    data = pa.table(
        {
            "id": [1, 2],
            "country": ["CN", None],
            "s": [{"x": 5, "tag": "t"}, None],
        }
    )
    properties = {"write.metadata.metrics.default": "counts", "write.metadata.metrics.column.s.x": "full"}
    (file,) = write_equality_deletes(
        LocalFileIO(),
        equality_ids=[5, "country"],
        data=data,
        row_schema=row_schema,
        **_eq_kwargs(tmp_path, properties=properties),
    )
    assert file.equality_ids == (5, 2)
    assert pq.read_table(file.file_path).column_names == ["id", "country", "s"]
    assert set(file.value_counts or {}) == {1, 2, 5, 6}
    assert set(file.lower_bounds or {}) == {5}  # only s.x is "full"; the rest counts
    assert (file.null_value_counts or {})[2] == 1


def test_equality_deletes_partitioned_from_their_rows(tmp_path: Path) -> None:
    data = pa.table({"id": [1, 2, 3], "country": ["CN", "US", "CN"]})
    files = write_equality_deletes(
        LocalFileIO(),
        equality_ids=["id"],
        data=data,
        row_schema=SCHEMA.select("id", "country"),
        **_eq_kwargs(tmp_path, spec=BY_COUNTRY),
    )
    assert sorted((f.partition, f.record_count) for f in files) == [(("CN",), 2), (("US",), 1)]
    assert all(f"country={f.partition[0]}" in f.file_path for f in files)
    with pytest.raises(ValidationError, match="partition"):
        write_equality_deletes(
            LocalFileIO(),
            equality_ids=["id"],
            data=data.select(["id"]),
            **_eq_kwargs(tmp_path, spec=BY_COUNTRY),
        )
    (given,) = write_equality_deletes(
        LocalFileIO(),
        equality_ids=["id"],
        data=data.select(["id"]),
        partition=("BR",),
        **_eq_kwargs(tmp_path, spec=BY_COUNTRY),
    )
    assert given.partition == ("BR",) and given.record_count == 3


def test_sorted_equality_deletes_record_the_order(tmp_path: Path) -> None:
    order = build_sort_order(SCHEMA, ["id DESC"], order_id=3)
    (file,) = write_equality_deletes(
        LocalFileIO(),
        equality_ids=["id"],
        data=pa.table({"id": [1, 5, 3]}),
        sort_order=order,
        **_eq_kwargs(tmp_path),
    )
    assert file.sort_order_id == 3
    assert pq.read_table(file.file_path).column("id").to_pylist() == [5, 3, 1]


@pytest.mark.parametrize(
    ("columns", "message"),
    [([], "at least one"), (["nope"], "not in the table"), (["s"], "not a primitive"), ([8], "list or map")],
)
def test_invalid_equality_columns(tmp_path: Path, columns: list[Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        write_equality_deletes(
            LocalFileIO(), equality_ids=columns, data=pa.table({"id": [1]}), **_eq_kwargs(tmp_path)
        )


def test_row_schema_must_hold_the_delete_columns(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="field ids"):
        write_equality_deletes(
            LocalFileIO(),
            equality_ids=["id", "country"],
            data=pa.table({"id": [1]}),
            row_schema=SCHEMA.select("id"),
            **_eq_kwargs(tmp_path),
        )


def test_no_rows_write_nothing(tmp_path: Path) -> None:
    empty = pa.table({"id": pa.array([], pa.int64())})
    assert (
        write_equality_deletes(LocalFileIO(), equality_ids=["id"], data=empty, **_eq_kwargs(tmp_path)) == []
    )
    assert not (tmp_path / "t").exists()
