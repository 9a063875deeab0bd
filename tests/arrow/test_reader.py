"""Reading Parquet data files projected to an Iceberg schema by field id."""

from __future__ import annotations

import datetime as dt
import io
import math
import uuid
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from icefloe.arrow import reader
from icefloe.arrow.reader import ROW_POSITION_ID, Layouts, read_parquet, read_position_deletes
from icefloe.arrow.schema import schema_to_arrow, to_requested_schema
from icefloe.errors import InvalidDataFileError
from icefloe.io import LocalFileIO
from icefloe.spec.name_mapping import MappedField, NameMapping
from icefloe.spec.schema import Schema
from icefloe.spec.types import (
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    UnknownType,
    UUIDType,
)


def write(path: Path, schema: Schema, rows: list[dict] | pa.Table, *, ids: bool = True, **options) -> str:
    """Write rows (dicts by column name) as a Parquet file of ``schema``; returns the path."""
    table = (
        rows
        if isinstance(rows, pa.Table)
        else pa.Table.from_pylist(rows, schema_to_arrow(schema, include_field_ids=False))
    )
    table = to_requested_schema(table, schema, include_field_ids=ids)
    pq.write_table(table, path, **options)
    return str(path)


def read(path: str, projected: Schema, **options) -> pa.Table:
    batches = list(read_parquet(pafs.LocalFileSystem(), path, projected=projected, **options))
    for batch in batches:
        assert batch.schema.equals(schema_to_arrow(projected), check_metadata=True)
    return pa.Table.from_batches(batches, schema=schema_to_arrow(projected))


SIMPLE = Schema(
    NestedField(1, "a", IntegerType()),
    NestedField(2, "b", StringType()),
    NestedField(3, "c", DoubleType()),
)
SIMPLE_ROWS = [{"a": 1, "b": "x", "c": 1.5}, {"a": None, "b": "y", "c": None}, {"a": 3, "b": None, "c": -2.0}]


def test_reads_every_column(tmp_path):
    path = write(tmp_path / "f.parquet", SIMPLE, SIMPLE_ROWS)
    assert read(path, SIMPLE).to_pylist() == SIMPLE_ROWS


def test_projection_is_by_id_renamed_reordered_and_added_columns(tmp_path):
    # the spec's example: file 1: a, 2: b, 3: c read as 3: measurement, 2: name, 4: a
    path = write(tmp_path / "f.parquet", SIMPLE, SIMPLE_ROWS)
    projected = Schema(
        NestedField(3, "measurement", DoubleType()),
        NestedField(2, "name", StringType()),
        NestedField(4, "a", IntegerType()),
    )
    result = read(path, projected)
    assert result.column_names == ["measurement", "name", "a"]
    assert result.to_pylist() == [
        {"measurement": 1.5, "name": "x", "a": None},
        {"measurement": None, "name": "y", "a": None},
        {"measurement": -2.0, "name": None, "a": None},
    ]


def test_dropped_columns_are_not_read(tmp_path):
    path = write(tmp_path / "f.parquet", SIMPLE, SIMPLE_ROWS)
    assert read(path, Schema(NestedField(2, "b", StringType()))).to_pylist() == [
        {"b": "x"},
        {"b": "y"},
        {"b": None},
    ]


def test_added_columns_use_initial_default(tmp_path):
    path = write(tmp_path / "f.parquet", SIMPLE, SIMPLE_ROWS)
    u = uuid.UUID(int=42)
    projected = Schema(
        NestedField(1, "a", IntegerType()),
        NestedField(10, "n", LongType(), required=True, initial_default=7, write_default=7),
        NestedField(11, "d", DateType(), initial_default=19_000),
        NestedField(12, "p", DecimalType(6, 2), initial_default=Decimal("12.30")),
        NestedField(13, "u", UUIDType(), initial_default=u),
        NestedField(
            14,
            "point",
            StructType(
                NestedField(15, "x", IntegerType(), initial_default=0), NestedField(16, "y", IntegerType())
            ),
            initial_default={},
        ),
        NestedField(17, "nullpoint", StructType(NestedField(18, "x", IntegerType(), initial_default=0))),
    )
    rows = read(path, projected).to_pylist()
    assert rows[0] == {
        "a": 1,
        "n": 7,
        "d": dt.date(2022, 1, 8),
        "p": Decimal("12.30"),
        "u": u,
        "point": {"x": 0, "y": None},
        "nullpoint": None,
    }
    assert len(rows) == 3 and all(r["n"] == 7 for r in rows)


def test_constants_fill_columns_the_file_lacks(tmp_path):
    path = write(tmp_path / "f.parquet", SIMPLE, SIMPLE_ROWS)
    projected = Schema(
        NestedField(1, "a", IntegerType()),
        NestedField(20, "region", StringType()),
        NestedField(2147483646, "_file", StringType()),
    )
    rows = read(path, projected, constants={20: "eu", 2147483646: path, 1: 99})
    # a constant never overrides a column the file has
    assert rows.to_pylist()[0] == {"a": 1, "region": "eu", "_file": path}


def test_type_promotion(tmp_path):
    schema = Schema(
        NestedField(1, "i", IntegerType()),
        NestedField(2, "f", FloatType()),
        NestedField(3, "dec", DecimalType(5, 2)),
        NestedField(4, "d", DateType()),
    )
    path = write(
        tmp_path / "f.parquet",
        schema,
        [{"i": 2**31 - 1, "f": 1.5, "dec": Decimal("-123.45"), "d": dt.date(1969, 12, 31)}, {}],
    )
    promoted = Schema(
        NestedField(1, "i", LongType()),
        NestedField(2, "f", DoubleType()),
        NestedField(3, "dec", DecimalType(12, 2)),
        NestedField(4, "d", TimestampType()),
    )
    assert read(path, promoted).to_pylist() == [
        {"i": 2**31 - 1, "f": 1.5, "dec": Decimal("-123.45"), "d": dt.datetime(1969, 12, 31)},
        {"i": None, "f": None, "dec": None, "d": None},
    ]


def test_an_incompatible_file_type_names_file_and_column(tmp_path):
    path = write(tmp_path / "f.parquet", SIMPLE, SIMPLE_ROWS)
    with pytest.raises(InvalidDataFileError, match=r"column 'b'.*f\.parquet") as info:
        read(path, Schema(NestedField(2, "b", IntegerType())))
    assert info.value.location == path


def test_unknown_columns_read_as_nulls(tmp_path):
    path = write(tmp_path / "f.parquet", SIMPLE, SIMPLE_ROWS)
    result = read(path, Schema(NestedField(2, "b", UnknownType())))
    assert result.column("b").type == pa.null() and result.column("b").null_count == 3


NESTED = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(
        2, "loc", StructType(NestedField(3, "lat", DoubleType()), NestedField(4, "lon", DoubleType()))
    ),
    NestedField(
        5,
        "pts",
        ListType(
            6,
            StructType(NestedField(7, "x", IntegerType(), required=True), NestedField(8, "y", StringType())),
        ),
    ),
    NestedField(9, "m", MapType(10, StringType(), 11, StructType(NestedField(12, "v", LongType())), False)),
)
NESTED_ROWS = [
    {
        "id": 1,
        "loc": {"lat": 1.0, "lon": 2.0},
        "pts": [{"x": 1, "y": "p"}, {"x": 2, "y": None}],
        "m": [("k", {"v": 5}), ("j", None)],
    },
    {"id": 2, "loc": None, "pts": None, "m": None},
    {"id": 3, "loc": {"lat": None, "lon": 4.0}, "pts": [], "m": []},
]


def test_nested_round_trip(tmp_path):
    path = write(tmp_path / "n.parquet", NESTED, NESTED_ROWS)
    assert read(path, NESTED).to_pylist() == NESTED_ROWS


def test_nested_projection_renames_adds_and_drops_subfields(tmp_path):
    path = write(tmp_path / "n.parquet", NESTED, NESTED_ROWS)
    projected = Schema(
        NestedField(
            2,
            "location",
            StructType(
                NestedField(4, "longitude", DoubleType()),
                NestedField(30, "alt", DoubleType(), initial_default=0.5),
            ),
        ),
        NestedField(
            5,
            "points",
            ListType(
                6,
                StructType(NestedField(8, "label", StringType()), NestedField(31, "z", IntegerType())),
            ),
        ),
        NestedField(
            9,
            "m",
            MapType(
                10,
                StringType(),
                11,
                StructType(NestedField(12, "v", LongType()), NestedField(32, "w", LongType())),
                False,
            ),
        ),
    )
    assert read(path, projected).to_pylist() == [
        {
            "location": {"longitude": 2.0, "alt": 0.5},
            "points": [{"label": "p", "z": None}, {"label": None, "z": None}],
            "m": [("k", {"v": 5, "w": None}), ("j", None)],
        },
        {"location": None, "points": None, "m": None},
        {"location": {"longitude": 4.0, "alt": 0.5}, "points": [], "m": []},
    ]


def test_a_struct_whose_subfields_were_all_added_keeps_the_files_nulls(tmp_path):
    path = write(tmp_path / "n.parquet", NESTED, NESTED_ROWS)
    projected = Schema(NestedField(2, "loc", StructType(NestedField(40, "new", IntegerType()))))
    assert read(path, projected).to_pylist() == [
        {"loc": {"new": None}},
        {"loc": None},
        {"loc": {"new": None}},
    ]


def test_nested_promotion(tmp_path):
    schema = Schema(
        NestedField(1, "l", ListType(2, IntegerType())),
        NestedField(3, "m", MapType(4, IntegerType(), 5, FloatType())),
    )
    path = write(tmp_path / "p.parquet", schema, [{"l": [1, 2], "m": [(1, 0.5)]}])
    promoted = Schema(
        NestedField(1, "l", ListType(2, LongType())),
        NestedField(3, "m", MapType(4, LongType(), 5, DoubleType())),
    )
    result = read(path, promoted)
    assert result.to_pylist() == [{"l": [1, 2], "m": [(1, 0.5)]}]


def test_batches_of_different_files_concatenate(tmp_path):
    old = Schema(
        NestedField(1, "a", IntegerType()), NestedField(2, "s", StructType(NestedField(3, "x", FloatType())))
    )
    new = Schema(
        NestedField(1, "a", LongType()),
        NestedField(2, "s", StructType(NestedField(3, "x", DoubleType()), NestedField(4, "y", StringType()))),
    )
    first = write(tmp_path / "1.parquet", old, [{"a": 1, "s": {"x": 1.0}}])
    second = write(tmp_path / "2.parquet", new, [{"a": 2, "s": {"x": 2.0, "y": "q"}}])
    table = pa.Table.from_batches([*read(first, new).to_batches(), *read(second, new).to_batches()])
    assert table.to_pylist() == [{"a": 1, "s": {"x": 1.0, "y": None}}, {"a": 2, "s": {"x": 2.0, "y": "q"}}]


def test_large_types_in_the_file_read_as_the_canonical_types(tmp_path):
    table = pa.table(
        {
            "s": pa.array(["a", None], pa.large_string()),
            "l": pa.array([[1], None], pa.large_list(pa.int32())),
        }
    )
    schema = Schema(NestedField(1, "s", StringType()), NestedField(2, "l", ListType(3, IntegerType(), False)))
    ids = pa.schema(
        [
            pa.field("s", pa.large_string(), metadata={b"PARQUET:field_id": b"1"}),
            pa.field("l", pa.large_list(pa.int32()), metadata={b"PARQUET:field_id": b"2"}),
        ]
    )
    path = str(tmp_path / "large.parquet")
    pq.write_table(table.cast(ids), path)  # stores the Arrow schema: reads back as large types
    assert pq.read_schema(path).field("s").type == pa.large_string()
    assert read(path, schema).to_pylist() == [{"s": "a", "l": [1]}, {"s": None, "l": None}]


# ---------------------------------------------------------------------------------------------
# name mapping


def test_a_scans_files_share_layouts_only_for_the_same_ids(tmp_path):
    # column x dropped and added again: the files' Arrow schemas differ only in the field ids
    old = Schema(NestedField(1, "a", IntegerType()), NestedField(2, "x", StringType()))
    new = Schema(NestedField(1, "a", IntegerType()), NestedField(7, "x", StringType()))
    files = [
        write(tmp_path / "old.parquet", old, [{"a": 1, "x": "dropped"}]),
        write(tmp_path / "new.parquet", new, [{"a": 2, "x": "added"}]),
        write(tmp_path / "old2.parquet", old, [{"a": 3, "x": "dropped"}]),
        write(tmp_path / "noids.parquet", new, [{"a": 4, "x": "mapped"}], ids=False),
    ]
    mapping = NameMapping((MappedField(1, ("a",)), MappedField(7, ("x",))))
    layouts = Layouts()
    rows = [
        row
        for path in files
        for batch in read_parquet(
            pafs.LocalFileSystem(), path, projected=new, name_mapping=mapping, layouts=layouts
        )
        for row in batch.to_pylist()
    ]
    assert rows == [
        {"a": 1, "x": None},
        {"a": 2, "x": "added"},
        {"a": 3, "x": None},
        {"a": 4, "x": "mapped"},
    ]


def test_files_without_ids_need_a_name_mapping(tmp_path):
    path = write(tmp_path / "noids.parquet", SIMPLE, SIMPLE_ROWS, ids=False)
    with pytest.raises(InvalidDataFileError, match="no field ids"):
        read(path, SIMPLE)
    mapping = NameMapping((MappedField(1, ("a",)), MappedField(2, ("b", "old_b")), MappedField(3, ("c",))))
    projected = Schema(NestedField(2, "name", StringType()), NestedField(1, "a", IntegerType()))
    assert read(path, projected, name_mapping=mapping).to_pylist() == [
        {"name": "x", "a": 1},
        {"name": "y", "a": None},
        {"name": None, "a": 3},
    ]
    # the file's schema, when known, is a mapping by its names
    assert read(path, projected, file_schema_hint=SIMPLE).column("name").to_pylist() == ["x", "y", None]


def test_name_mapping_of_nested_fields_and_aliases(tmp_path):
    path = write(tmp_path / "noids.parquet", NESTED, NESTED_ROWS, ids=False)
    mapping = NameMapping(
        (
            MappedField(1, ("id",)),
            MappedField(
                2, ("location", "loc"), (MappedField(3, ("latitude", "lat")), MappedField(4, ("lon",)))
            ),
            MappedField(
                5,
                ("pts",),
                (MappedField(6, ("element",), (MappedField(7, ("x",)), MappedField(8, ("y",)))),),
            ),
            MappedField(
                9,
                ("m",),
                (MappedField(10, ("key",)), MappedField(11, ("value",), (MappedField(12, ("v",)),))),
            ),
        )
    )
    assert read(path, NESTED, name_mapping=mapping).to_pylist() == NESTED_ROWS
    # a column the mapping does not name reads as null (no id: not a column of the table)
    partial = NameMapping((MappedField(1, ("id",)),))
    assert read(path, NESTED, name_mapping=partial).column("loc").null_count == 3


# ---------------------------------------------------------------------------------------------
# positions, deletes, filters


@pytest.fixture
def many_groups(tmp_path) -> str:
    schema = Schema(NestedField(1, "n", LongType(), required=True), NestedField(2, "s", StringType()))
    rows = pa.table({"n": np.arange(1000, dtype=np.int64), "s": [f"r{i}" for i in range(1000)]})
    return write(tmp_path / "groups.parquet", schema, rows, row_group_size=100)


N_SCHEMA = Schema(NestedField(1, "n", LongType(), required=True))
POS_SCHEMA = Schema(
    NestedField(1, "n", LongType(), required=True), NestedField(ROW_POSITION_ID, "_pos", LongType())
)


def test_row_positions(many_groups):
    result = read(many_groups, POS_SCHEMA, batch_size=64)
    assert result.column("_pos").to_pylist() == list(range(1000))


def test_batch_size_bounds_batches(many_groups):
    batches = list(read_parquet(pafs.LocalFileSystem(), many_groups, projected=N_SCHEMA, batch_size=64))
    assert max(b.num_rows for b in batches) <= 64
    assert sum(b.num_rows for b in batches) == 1000


def test_a_read_for_a_table_makes_batches_of_table_batch_bytes(many_groups, monkeypatch):
    """A caller that keeps every row gets batches of up to ``TABLE_BATCH_BYTES`` of the file's
    rows, across row groups and whatever ``batch_size`` says, and the same rows, positions
    and deletes included."""
    fs = pafs.LocalFileSystem()
    metadata = pq.ParquetFile(many_groups).metadata
    per_row = sum(metadata.row_group(g).total_byte_size for g in range(metadata.num_row_groups)) / 1000
    monkeypatch.setattr(reader, "TABLE_BATCH_BYTES", math.ceil(per_row * 450))  # 450 rows
    options = {"projected": POS_SCHEMA, "positions_to_delete": [3, 600], "batch_size": 64}
    streamed = list(read_parquet(fs, many_groups, **options))
    for_table = list(read_parquet(fs, many_groups, for_table=True, **options))
    assert max(b.num_rows for b in streamed) <= 64
    assert [b.num_rows for b in for_table] == [449, 449, 100]  # 450, 450, 100 rows read, a row deleted in two
    assert pa.Table.from_batches(for_table).equals(pa.Table.from_batches(streamed))
    monkeypatch.setattr(reader, "TABLE_BATCH_BYTES", 1)  # never below batch_size
    assert max(b.num_rows for b in read_parquet(fs, many_groups, for_table=True, **options)) == 64


@pytest.mark.parametrize("as_type", [set, list, np.array, pa.array])
def test_position_deletes(many_groups, as_type):
    deleted = [0, 1, 99, 100, 101, 555, 999, 5000]
    result = read(many_groups, POS_SCHEMA, positions_to_delete=as_type(deleted), batch_size=70)
    expected = [i for i in range(1000) if i not in deleted]
    assert result.column("n").to_pylist() == expected
    assert result.column("_pos").to_pylist() == expected


def test_position_deletes_with_row_group_pruning(many_groups):
    deleted = {150, 640, 641, 700, 899}
    row_filter = (pc.field("n") >= 600) & (pc.field("n") < 900) & (pc.field("n") != 650)
    result = read(many_groups, POS_SCHEMA, positions_to_delete=deleted, row_filter=row_filter, batch_size=33)
    expected = [i for i in range(600, 900) if i not in deleted and i != 650]
    assert result.column("n").to_pylist() == expected
    assert result.column("_pos").to_pylist() == expected


def test_row_filter_prunes_row_groups(many_groups, monkeypatch):
    seen: list[list[int]] = []
    original = pq.ParquetFile.iter_batches

    def spy(self, *args, **kwargs):
        seen.append(list(kwargs["row_groups"]))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", spy)
    result = read(many_groups, N_SCHEMA, row_filter=pc.field("n").isin([5, 250, 251]))
    assert result.column("n").to_pylist() == [5, 250, 251]
    assert seen == [[0, 2]]


def test_fully_deleted_row_groups_are_skipped(many_groups):
    deleted = np.arange(100, 300)
    result = read(many_groups, POS_SCHEMA, positions_to_delete=deleted)
    assert result.column("_pos").to_pylist() == [*range(100), *range(300, 1000)]
    assert read(many_groups, N_SCHEMA, positions_to_delete=np.arange(1000)).num_rows == 0


def test_row_filter_on_a_renamed_column_is_applied_without_pruning(tmp_path):
    path = write(tmp_path / "f.parquet", SIMPLE, SIMPLE_ROWS)
    projected = Schema(NestedField(2, "name", StringType()), NestedField(1, "b", IntegerType()))
    # "b" is now column 1 (file's "a"); the file's own "b" is column 2 (now "name")
    result = read(path, projected, row_filter=pc.field("b") == 3)
    assert result.to_pylist() == [{"name": None, "b": 3}]


def test_row_filter_on_an_added_column_with_a_default(tmp_path):
    path = write(tmp_path / "f.parquet", SIMPLE, SIMPLE_ROWS, row_group_size=1)
    projected = Schema(
        NestedField(1, "a", IntegerType()), NestedField(9, "k", IntegerType(), initial_default=5)
    )
    assert read(path, projected, row_filter=pc.field("k") == 5).num_rows == 3
    assert read(path, projected, row_filter=pc.field("k").is_null()).num_rows == 0


def test_empty_projection_counts_rows(many_groups):
    batches = list(
        read_parquet(pafs.LocalFileSystem(), many_groups, projected=Schema(), positions_to_delete={1, 2})
    )
    assert sum(b.num_rows for b in batches) == 998
    assert all(b.num_columns == 0 for b in batches)


# ---------------------------------------------------------------------------------------------
# file access and errors


def test_reads_through_a_file_io_and_a_plain_path(tmp_path):
    path = write(tmp_path / "f.parquet", SIMPLE, SIMPLE_ROWS)
    via_io = pa.Table.from_batches(list(read_parquet(LocalFileIO(), path, projected=SIMPLE)))
    via_path = pa.Table.from_batches(list(read_parquet(None, path, projected=SIMPLE)))
    assert via_io.to_pylist() == via_path.to_pylist() == SIMPLE_ROWS


def test_missing_file(tmp_path):
    path = str(tmp_path / "nope.parquet")
    with pytest.raises(InvalidDataFileError, match=r"nope\.parquet") as info:
        list(read_parquet(pafs.LocalFileSystem(), path, projected=SIMPLE))
    assert info.value.location == path
    with pytest.raises(InvalidDataFileError, match=r"nope\.parquet"):
        list(read_parquet(LocalFileIO(), path, projected=SIMPLE))


@pytest.mark.parametrize("keep", [0, 3, 100, -8, -1])
def test_truncated_file(tmp_path, keep):
    path = write(tmp_path / "f.parquet", SIMPLE, SIMPLE_ROWS * 100)
    data = Path(path).read_bytes()
    Path(path).write_bytes(data[:keep] if keep >= 0 else data[: len(data) + keep])
    with pytest.raises(InvalidDataFileError, match=r"f\.parquet"):
        list(read_parquet(pafs.LocalFileSystem(), path, projected=SIMPLE))


def test_corrupt_pages(tmp_path):
    path = write(tmp_path / "f.parquet", SIMPLE, SIMPLE_ROWS * 1000, compression="snappy")
    data = bytearray(Path(path).read_bytes())
    data[100:2000] = bytes(1900)  # zero the first pages, keep the footer
    Path(path).write_bytes(bytes(data))
    with pytest.raises(InvalidDataFileError, match=r"f\.parquet"):
        list(read_parquet(pafs.LocalFileSystem(), path, projected=SIMPLE))


# ---------------------------------------------------------------------------------------------
# position delete files


def write_deletes(path: Path, rows: list[tuple[str, int]], *, ids: bool = True) -> str:
    schema = Schema(
        NestedField(2147483546, "file_path", StringType(), required=True),
        NestedField(2147483545, "pos", LongType(), required=True),
    )
    return write(path, schema, [{"file_path": f, "pos": p} for f, p in rows], ids=ids, row_group_size=2)


@pytest.mark.parametrize("ids", [True, False])
def test_read_position_deletes(tmp_path, ids):
    path = write_deletes(
        tmp_path / "d.parquet",
        [("s3://b/a.parquet", 3), ("s3://b/a.parquet", 1), ("s3://b/b.parquet", 0), ("s3://b/a.parquet", 3)],
        ids=ids,
    )
    result = read_position_deletes(pafs.LocalFileSystem(), path)
    assert set(result) == {"s3://b/a.parquet", "s3://b/b.parquet"}
    assert result["s3://b/a.parquet"].tolist() == [1, 3]
    assert result["s3://b/a.parquet"].dtype == np.int64
    assert result["s3://b/b.parquet"].tolist() == [0]


def test_read_position_deletes_for_some_data_files(tmp_path):
    rows = [(f"f{i // 10}", i) for i in range(100)]
    path = write_deletes(tmp_path / "d.parquet", rows)
    result = read_position_deletes(pafs.LocalFileSystem(), path, data_files={"f3", "f9", "nope"})
    assert {k: v.tolist() for k, v in result.items()} == {
        "f3": list(range(30, 40)),
        "f9": list(range(90, 100)),
    }
    assert read_position_deletes(pafs.LocalFileSystem(), write_deletes(tmp_path / "e.parquet", [])) == {}


def test_read_position_deletes_errors(tmp_path):
    with pytest.raises(InvalidDataFileError, match=r"gone\.parquet"):
        read_position_deletes(pafs.LocalFileSystem(), str(tmp_path / "gone.parquet"))


def test_row_lineage_is_inherited(tmp_path):
    schema = Schema(
        NestedField(1, "n", LongType()),
        NestedField(2147483540, "_row_id", LongType()),
        NestedField(2147483539, "_last_updated_sequence_number", LongType()),
    )
    rows = [
        {"n": 0, "_row_id": None, "_last_updated_sequence_number": None},
        {"n": 1, "_row_id": 500, "_last_updated_sequence_number": 3},
        {"n": 2, "_row_id": None, "_last_updated_sequence_number": None},
    ]
    with_lineage = write(tmp_path / "l.parquet", schema, rows)
    without = write(
        tmp_path / "n.parquet", Schema(NestedField(1, "n", LongType())), [{"n": 0}, {"n": 1}, {"n": 2}]
    )
    options = {"first_row_id": 100, "data_sequence_number": 7, "positions_to_delete": {0}}
    assert read(with_lineage, schema, **options).to_pylist() == [
        {"n": 1, "_row_id": 500, "_last_updated_sequence_number": 3},
        {"n": 2, "_row_id": 102, "_last_updated_sequence_number": 7},
    ]
    assert read(without, schema, **options).to_pylist() == [
        {"n": 1, "_row_id": 101, "_last_updated_sequence_number": 7},
        {"n": 2, "_row_id": 102, "_last_updated_sequence_number": 7},
    ]
    # a filter on an inherited column must not prune by the file's (missing) statistics
    assert read(without, schema, row_filter=pc.field("_row_id") == 101, **options).column(
        "n"
    ).to_pylist() == [1]
    # without inheritance information the values stay null
    assert read(without, schema).column("_row_id").null_count == 3


def test_struct_constants_are_whole_values(tmp_path):
    path = write(tmp_path / "f.parquet", SIMPLE, SIMPLE_ROWS)
    partition = StructType(NestedField(1000, "a_bucket", IntegerType()), NestedField(1001, "day", DateType()))
    projected = Schema(NestedField(1, "a", IntegerType()), NestedField(2147483642, "_partition", partition))
    rows = read(path, projected, constants={2147483642: {"a_bucket": 3, "day": 19_000}}).to_pylist()
    assert rows[0] == {"a": 1, "_partition": {"a_bucket": 3, "day": dt.date(2022, 1, 8)}}


def test_a_missing_required_column_without_default_is_an_error(tmp_path):
    path = write(tmp_path / "f.parquet", SIMPLE, SIMPLE_ROWS)
    projected = Schema(NestedField(1, "a", IntegerType()), NestedField(9, "must", LongType(), required=True))
    with pytest.raises(InvalidDataFileError, match=r"required column 'must' \(id 9\) is missing.*f\.parquet"):
        read(path, projected)


class _BytesInput:
    def __init__(self, data: bytes):
        self.data = data

    def open(self) -> io.BytesIO:
        return io.BytesIO(self.data)


class _InMemoryFiles:
    """Something with ``new_input(location).open()`` and nothing else."""

    def __init__(self, files: dict[str, bytes]):
        self.files = files

    def new_input(self, location: str) -> _BytesInput:
        return _BytesInput(self.files[location])


def test_reads_through_new_input_streams(many_groups):
    files = _InMemoryFiles({"mem://f": Path(many_groups).read_bytes()})
    batches = read_parquet(
        files, "mem://f", projected=POS_SCHEMA, row_filter=pc.field("n") >= 990, positions_to_delete={995}
    )
    assert pa.Table.from_batches(list(batches)).column("_pos").to_pylist() == [
        990,
        991,
        992,
        993,
        994,
        996,
        997,
        998,
        999,
    ]


def test_nothing_is_opened_until_iteration(tmp_path):
    batches = read_parquet(pafs.LocalFileSystem(), str(tmp_path / "later.parquet"), projected=SIMPLE)
    write(tmp_path / "later.parquet", SIMPLE, SIMPLE_ROWS)
    assert pa.Table.from_batches(list(batches)).num_rows == 3
